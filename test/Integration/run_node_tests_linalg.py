#!/usr/bin/env python3
"""Runs ONNX backend node tests through kiln's linalg lowering and checks the
results against the tests' reference outputs.

This checks the lowering on its own, independent of kiln's backend and
runtime, by executing the lowered IR with MLIR's JIT runner: kiln-compile -> kiln-opt --convert-kiln-to-linalg ->
mlir-opt (bufferize, lower to LLVM) -> mlir-runner, with the test inputs
embedded as constants and the outputs printed. A test whose model does not
import or lower is skipped (reported); one that runs must match within
rtol 1e-4 / atol 1e-5 (floats) or exactly (integers). Tests on the
expected-to-pass list must pass.

Usage: run_node_tests_linalg.py BIN_DIR LLVM_BIN_DIR NODE_DIR EXPECTED [--update]
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Frontend", "ONNX"))
from expected_list import check_against_expected  # noqa: E402
from node_import_sweep import frozen_inputs  # noqa: E402

LOWER_TO_LLVM = [
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--convert-memref-copy-to-linalg", "--convert-linalg-to-loops", "--expand-strided-metadata", "--lower-affine",
    "--convert-scf-to-cf", "--math-expand-ops=ops=rsqrt", "--convert-math-to-funcs",
    "--convert-math-to-libm", "--convert-math-to-llvm",
    "--convert-arith-to-llvm", "--finalize-memref-to-llvm",
    "--convert-func-to-llvm", "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts"]

PRINTERS = {np.dtype("float32"): ("f32", "printMemrefF32"),
            np.dtype("float64"): ("f64", "printMemrefF64"),
            np.dtype("int32"): ("i32", "printMemrefI32"),
            np.dtype("int64"): ("i64", "printMemrefI64")}

MLIR_TYPES = {np.dtype("float32"): "f32", np.dtype("float64"): "f64",
              np.dtype("float16"): "f16", np.dtype("int8"): "i8",
              np.dtype("uint8"): "ui8", np.dtype("int16"): "i16",
              np.dtype("int32"): "i32", np.dtype("int64"): "i64",
              np.dtype("bool"): "i1"}


def tensor_type(array):
    dims = "".join(f"{d}x" for d in array.shape)
    return f"tensor<{dims}{MLIR_TYPES[array.dtype]}>"


def dense(array):
    if array.dtype == np.bool_:
        values = ", ".join("true" if v else "false" for v in array.flatten())
        if array.ndim == 0:
            return f"dense<{values}>"
        return f"dense<[{values}]> : tensor<{array.size}xi1>"  # reshaped below
    return f'dense<"0x{np.ascontiguousarray(array).tobytes().hex().upper()}">'


def entry_function(inputs, outputs):
    """MLIR text of @entry: constant inputs, call @main, print each output."""
    lines = ["func.func @entry() {"]
    args = []
    for i, array in enumerate(inputs):
        if array.dtype == np.bool_ and array.ndim > 0:
            flat = np.ascontiguousarray(array).reshape(-1)
            lines.append(f"  %f{i} = arith.constant {dense(flat)}")
            shape = ", ".join(str(d) for d in array.shape)
            lines.append(f"  %s{i} = arith.constant dense<[{shape}]> : tensor<{array.ndim}xi64>")
            lines.append(f"  %in{i} = tensor.reshape %f{i}(%s{i}) : (tensor<{array.size}xi1>, "
                         f"tensor<{array.ndim}xi64>) -> {tensor_type(array)}")
        else:
            lines.append(f"  %in{i} = arith.constant {dense(array)} : {tensor_type(array)}")
        args.append(f"%in{i}")
    in_types = ", ".join(tensor_type(a) for a in inputs)
    out_types = ", ".join(tensor_type(a) for a in outputs)
    results = f"%r:{len(outputs)}" if len(outputs) > 1 else "%r"
    lines.append(f"  {results} = call @main({', '.join(args)}) : ({in_types}) -> ({out_types})")
    for k, array in enumerate(outputs):
        ref = f"%r#{k}" if len(outputs) > 1 else "%r"
        elem, printer = PRINTERS[array.dtype]
        lines.append(f"  %m{k} = bufferization.to_buffer {ref} : {tensor_type(array)} to "
                     f"memref<{''.join(f'{d}x' for d in array.shape)}{elem}>")
        lines.append(f"  %u{k} = memref.cast %m{k} : memref<{''.join(f'{d}x' for d in array.shape)}"
                     f"{elem}> to memref<*x{elem}>")
        lines.append(f"  call @{printer}(%u{k}) : (memref<*x{elem}>) -> ()")
    lines.append("  return")
    lines.append("}")
    for printer in sorted({PRINTERS[a.dtype] for a in outputs}):
        lines.append(f"func.func private @{printer[1]}(memref<*x{printer[0]}>)")
    return "\n".join(lines)


NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", re.IGNORECASE)


def parse_printed(text, count):
    """The data of each printed memref, as flat float arrays."""
    blocks = text.split("Unranked Memref")[1:]
    if len(blocks) != count:
        raise ValueError(f"expected {count} printed outputs, got {len(blocks)}")
    arrays = []
    for block in blocks:
        header, values = block.split("data =", 1)
        sizes = re.search(r"sizes = \[([^\]]*)\]", header).group(1)
        empty = any(s.strip() == "0" for s in sizes.split(","))
        arrays.append(np.array([] if empty else
                               [float(v) for v in NUMBER.findall(values)]))
    return arrays


def load_pb(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def run_test(bin_dir, llvm_bin, test_dir):
    name = os.path.basename(test_dir)
    data = os.path.join(test_dir, "test_data_set_0")
    frozen = frozen_inputs(test_dir)
    compiled = subprocess.run([os.path.join(bin_dir, "kiln-compile"), "--emit=kiln",
                               os.path.join(test_dir, "model.onnx")] + frozen,
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        return name, "skipped", "does not import"
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    frozen_names = {a.split("=", 1)[1].split("=")[0] for a in frozen}
    inputs = [load_pb(os.path.join(data, f"input_{k}.pb"))
              for k, n in enumerate(graph_inputs) if n not in frozen_names]
    outputs = [load_pb(os.path.join(data, f"output_{k}.pb"))
               for k in range(len(model.graph.output))]
    if any(a.dtype not in MLIR_TYPES for a in inputs) or \
            any(a.dtype not in PRINTERS for a in outputs):
        return name, "skipped", "input or output element type not handled"
    lowered = subprocess.run([os.path.join(bin_dir, "kiln-opt"), "--convert-kiln-to-linalg"],
                             input=compiled.stdout, capture_output=True, text=True)
    if lowered.returncode != 0:
        return name, "skipped", "not lowered: " + lowered.stderr.strip().splitlines()[0][-120:]
    # @entry goes inside the module, before any resource section.
    body, resources = (lowered.stdout.split("{-#", 1) + [""])[:2]
    close = body.rfind("}")
    program = (body[:close] + entry_function(inputs, outputs) + "\n}\n" +
               ("{-#" + resources if resources else ""))
    llvm = subprocess.run([os.path.join(bin_dir, "kiln-opt")] + LOWER_TO_LLVM,
                          input=program, capture_output=True, text=True)
    if llvm.returncode != 0:
        return name, "failed", "kiln-opt: " + llvm.stderr[:400]
    lib = os.path.join(os.path.dirname(llvm_bin), "lib")
    run = subprocess.run(
        [os.path.join(llvm_bin, "mlir-runner"), "-e", "entry", "-entry-point-result=void",
         f"-shared-libs={lib}/libmlir_runner_utils.so,{lib}/libmlir_c_runner_utils.so"],
        input=llvm.stdout, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        return name, "failed", f"runner exit {run.returncode}: {run.stderr[:300]}"
    try:
        got = parse_printed(run.stdout, len(outputs))
    except ValueError as e:
        return name, "failed", str(e)
    for k, (actual, expected) in enumerate(zip(got, outputs)):
        expected = expected.astype(np.float64).reshape(-1)
        if actual.shape != expected.shape:
            return name, "failed", f"output {k}: {actual.size} values, expected {expected.size}"
        if not np.allclose(actual, expected, rtol=1e-4, atol=1e-5, equal_nan=True):
            worst = int(np.argmax(np.abs(actual - expected)))
            return name, "failed", (f"output {k}[{worst}] = {actual[worst]}, "
                                    f"expected {expected[worst]}")
    return name, "passed", ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("llvm_bin")
    parser.add_argument("node_dir")
    parser.add_argument("expected")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    options = parser.parse_args()
    tests = sorted(d for d in os.listdir(options.node_dir)
                   if os.path.isfile(os.path.join(options.node_dir, d, "model.onnx")))

    def run(t):
        try:
            return run_test(options.bin_dir, options.llvm_bin, os.path.join(options.node_dir, t))
        except Exception as e:  # A broken test case is a failure, not a crash.
            return t, "failed", f"{type(e).__name__}: {e}"

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(run, tests))
    failures = check_against_expected(results, options.expected, options.update,
                                      options.verbose, "through linalg", "run_node_tests_linalg.py")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
