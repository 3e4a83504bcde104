#!/usr/bin/env python3
"""Builds the GPU kit: everything the GPU check needs, compiled on a machine
with kiln's toolchain, for a machine that has a GPU but no toolchain.

    bench/gpu/prepare_kit.py BUILD_DIR KIT_DIR [--arch sm_90] [--part all]

KIT_DIR/ gets
  bin/kiln-run, lib/libkiln_runtime.so      the runtime (no MLIR/LLVM needed)
  lib/*.so.*                                 what kiln-run links beyond libc and
                                             libstdc++ (libonnx_proto, libprotobuf)
  node/NAME.so + node/NAME/*.pb + NAME.args  ONNX node tests on the native
                                             expected-to-pass list
  e2e/NAME.so + NAME.input.*.npy + NAME.ref.*.npy  the e2e models, with ONNX
                                             Runtime's (CPU) outputs
  bench/NAME.so + NAME.json                  benchmark models (their ONNX is
                                             rebuilt on the GPU machine from
                                             bench/models.py, same seeds)
  manifest.json
--part conformance|bench|all chooses what goes in (the device tool carries
at most 64 MiB per call: the BERT-layer model alone is 28 MB).
"""

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "Integration"))
sys.path.insert(0, os.path.join(ROOT, "test", "Frontend", "ONNX"))

NODE_DIR = "/usr/share/libonnx-testdata/data/node"
# (bench/models.py name, batch, precision). The memory-bound models are
# sized at several times the H200's 60 MB L2 (256, 201 and 201 MB per
# tensor), so they measure HBM rather than L2 bandwidth. The transformer
# blocks run their products in bf16, as the targets are stated
# (14 MB each in bf16: three of them fit the device tool's 64 MiB with the
# rest).
BENCH_MODELS = [("gelu-bias-relu", 16, "fp32"), ("softmax", 256, "fp32"),
                ("layernorm", 512, "fp32"), ("softmax", 1, "fp32"),
                ("layernorm", 1, "fp32"), ("gemm-128x768x3072", 1, "fp32"),
                ("bert-layer", 1, "bf16"), ("bert-layer", 8, "bf16"),
                ("gpt2-block", 8, "bf16")]
# Libraries every Linux machine has; kiln-run's other dependencies (the ONNX
# protobuf messages it reads .pb tensors with) travel in the kit.
SYSTEM_LIBRARIES = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libstdc++", "libgcc_s",
                    "libz.so", "libpthread", "libdl.so", "librt.so")


def copy_shared_libraries(binary, lib_dir):
    """Copies the shared libraries `binary` needs beyond SYSTEM_LIBRARIES
    (resolved by ldd) into lib_dir: the GPU machine has another
    distribution, without libonnx or this protobuf."""
    listing = subprocess.run(["ldd", binary], capture_output=True, text=True,
                             check=True).stdout
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and \
                not parts[0].startswith(SYSTEM_LIBRARIES):
            shutil.copy(os.path.realpath(parts[2]), os.path.join(lib_dir, parts[0]))


def compile_cuda(bin_dir, model, out, arch, extra=()):
    run = subprocess.run([os.path.join(bin_dir, "kiln-compile"), model, "--target=cuda",
                          f"--gpu={arch}", "-o", out] + list(extra),
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip()[-500:])


def add_node_tests(bin_dir, kit, arch, manifest):
    from node_import_sweep import frozen_inputs
    expected = os.path.join(ROOT, "test", "Integration", "node-native-expected.txt")
    with open(expected) as f:
        tests = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    os.makedirs(os.path.join(kit, "node"), exist_ok=True)
    for name in tests:
        test_dir = os.path.join(NODE_DIR, name)
        frozen = frozen_inputs(test_dir)
        try:
            compile_cuda(bin_dir, os.path.join(test_dir, "model.onnx"),
                         os.path.join(kit, "node", name + ".so"), arch, frozen)
        except RuntimeError as e:
            manifest["node_compile_failures"].append(f"{name}: {e}")
            continue
        data = os.path.join(kit, "node", name)
        shutil.copytree(os.path.join(test_dir, "test_data_set_0"), data, dirs_exist_ok=True)
        model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
        initializers = {i.name for i in model.graph.initializer}
        frozen_names = {a.split("=", 1)[1].split("=")[0] for a in frozen}
        inputs = [(value.name, f"input_{k}.pb")
                  for k, value in enumerate(i for i in model.graph.input
                                            if i.name not in initializers)
                  if value.name not in frozen_names]
        manifest["node"].append({"name": name, "inputs": inputs})


def add_e2e(bin_dir, kit, arch, manifest):
    import onnxruntime as ort
    import e2e_vs_onnxruntime as e2e
    out = os.path.join(kit, "e2e")
    os.makedirs(out, exist_ok=True)
    for name, build in (("mlp", e2e.mlp), ("resnet_cnn", e2e.resnet_cnn),
                        ("bert_layer", e2e.bert_layer), ("gpt_block", e2e.gpt_block)):
        model, dims = build()
        path = os.path.join(out, name + ".onnx")
        onnx.save(model, path)
        compile_cuda(bin_dir, path, os.path.join(out, name + ".so"), arch,
                     [f"--dim={k}={v}" for k, v in dims.items()])
        inputs = e2e.random_inputs(model, dims, np.random.default_rng(0))
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        references = session.run(None, inputs)
        os.remove(path)
        entry = {"name": name, "inputs": [], "outputs": []}
        for input_name, array in inputs.items():
            file = f"{name}.input.{input_name}.npy"
            np.save(os.path.join(out, file), array)
            entry["inputs"].append([input_name, file])
        for output, array in zip(model.graph.output, references):
            file = f"{name}.ref.{output.name}.npy"
            np.save(os.path.join(out, file), array)
            entry["outputs"].append([output.name, file])
        manifest["e2e"].append(entry)


ROW_KERNEL_MODELS = ("softmax", "layernorm")


def add_bench(bin_dir, kit, arch, manifest, models_dir, row_elements=(), only=""):
    """The benchmark models; with `row_elements`, the row-kernel models
    (softmax, layer norm) once per elements-per-thread value as well, for a
    sweep of kiln-map-reductions-to-gpu's default in one device run (kiln
    alone: the baselines are the plain rows'). `only`: keys matching it."""
    from models import MODELS, ensure_model
    out = os.path.join(kit, "bench")
    os.makedirs(out, exist_ok=True)
    by_name = {m.name: m for m in MODELS}
    builds = [(name, batch, precision, None) for name, batch, precision in BENCH_MODELS]
    builds += [(name, batch, precision, n) for name, batch, precision in BENCH_MODELS
               if name in ROW_KERNEL_MODELS for n in row_elements]
    for name, batch, precision, elements in builds:
        spec = dataclasses.replace(by_name[name], batch=batch)
        key = f"{spec.key}-{precision}" + (f"-e{elements}" if elements else "")
        if not re.search(only, key):
            continue
        meta = ensure_model(spec, models_dir)
        flags = [f"--precision={precision}"]
        if elements:
            flags.append(f"--gpu-row-elements={elements}")
        compile_cuda(bin_dir, meta["onnx"], os.path.join(out, key + ".so"), arch, flags)
        manifest["bench"].append({**{k: v for k, v in meta.items()
                                     if k not in ("onnx", "fingerprint")},
                                  "key": key, "precision": precision,
                                  "kiln_only": bool(elements)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("kit_dir")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--part", choices=["conformance", "bench", "all"], default="all")
    parser.add_argument("--row-elements", default="",
                        help="comma-separated elements-per-thread values: the "
                             "row-kernel benchmark models once per value too")
    parser.add_argument("--only", default="",
                        help="benchmark models whose key matches this regex")
    options = parser.parse_args()
    bin_dir = os.path.join(options.build_dir, "bin")
    kit = options.kit_dir
    if os.path.exists(kit):
        shutil.rmtree(kit)
    os.makedirs(os.path.join(kit, "bin"))
    os.makedirs(os.path.join(kit, "lib"))
    shutil.copy(os.path.join(bin_dir, "kiln-run"), os.path.join(kit, "bin"))
    shutil.copy(os.path.join(options.build_dir, "lib", "libkiln_runtime.so"),
                os.path.join(kit, "lib"))
    copy_shared_libraries(os.path.join(bin_dir, "kiln-run"), os.path.join(kit, "lib"))
    manifest = {"arch": options.arch, "node": [], "node_compile_failures": [], "e2e": [],
                "bench": []}
    if options.part in ("conformance", "all"):
        add_node_tests(bin_dir, kit, options.arch, manifest)
        add_e2e(bin_dir, kit, options.arch, manifest)
    if options.part in ("bench", "all"):
        add_bench(bin_dir, kit, options.arch, manifest,
                  os.path.join(options.build_dir, "bench", "models"),
                  [int(n) for n in options.row_elements.split(",") if n],
                  options.only)
    with open(os.path.join(kit, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(kit) for f in fs)
    print(f"kit {kit}: {len(manifest['node'])} node tests "
          f"({len(manifest['node_compile_failures'])} did not compile), "
          f"{len(manifest['e2e'])} e2e models, {len(manifest['bench'])} bench models, "
          f"{size / 2**20:.1f} MiB")
    return 1 if manifest["node_compile_failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
