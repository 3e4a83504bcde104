# -*- Python -*-
# lit configuration for kiln: FileCheck tests of kiln-opt and friends.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "kiln"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs",
                   "node_import_sweep.py", "node-import-expected.txt",
                   "run_fuzzer.sh", "sweep_pip_node_tests.sh",
                   "write_pip_node_tests.py", "pip-node-import-expected.txt",
                   "run_node_tests_linalg.py", "node-linalg-expected.txt",
                   "run_node_tests_native.py", "node-native-expected.txt",
                   "e2e_vs_onnxruntime.py", "run_pip_node_tests_native.sh",
                   "pip-node-native-expected.txt", "expected_list.py",
                   "matmul_shapes_vs_onnxruntime.py", "cuda_ptx_sweep.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["kiln-opt", "kiln-compile", "kiln-run", "runtime-api-test",
     "kiln-embed-example", "count-allocations", "runtime-cpp-test",
     "runtime-cuda-test"],
    [config.kiln_tools_dir, config.llvm_tools_dir])
# A stand-in libcuda.so.1 for the runtime's CUDA path (test/Runtime).
config.substitutions.append(
    ("%fake_cuda", os.path.join(config.kiln_obj_root, "lib", "libkiln_fake_cuda.so")))
config.substitutions.append(
    ("%fake_cublas", os.path.join(config.kiln_obj_root, "lib", "libkiln_fake_cublas.so")))
# The python3 with the pip wheels (lit itself may run under another one).
config.substitutions.append(("%kiln_python", config.python_executable))
config.substitutions.append(
    ("%inputs", os.path.join(config.test_source_root, "Frontend", "ONNX", "Inputs")))
