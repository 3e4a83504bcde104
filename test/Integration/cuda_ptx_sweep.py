#!/usr/bin/env python3
"""Every model the CPU backend runs, compiled for CUDA and assembled.

Each ONNX node test on the native expected-to-pass list and each end-to-end
model (MLP, ResNet-style CNN, BERT layer, GPT block) is compiled with
`kiln-compile --target=cuda --gpu=ARCH --emit=ptx` for every architecture
given, and the PTX is assembled by `ptxas -arch=ARCH -v`. The sweep fails if
any model does not compile, any PTX does not assemble, or any kernel spills
registers to local memory (kiln's kernels are elementwise, reduction and
simple contraction loops: a spill means a codegen bug, not a hard kernel).

Usage: cuda_ptx_sweep.py BIN_DIR NODE_DIR EXPECTED [--arch sm_80,sm_90]
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Frontend", "ONNX"))
from node_import_sweep import frozen_inputs  # noqa: E402
import e2e_vs_onnxruntime  # noqa: E402


def find_ptxas():
    """ptxas where kiln-compile looks for the toolkit."""
    for variable in ("KILN_CUDA_PATH", "CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(variable)
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return os.path.join(root, "bin", "ptxas")
    if os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
        return "/usr/local/cuda/bin/ptxas"
    return shutil.which("ptxas")


SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
FUNCTION = re.compile(r"Compiling entry function '(\w+)'")
REGISTERS = re.compile(r"Used (\d+) registers")


def assemble(ptxas, arch, ptx):
    """Assembles `ptx`; returns (error, kernels, spilling kernels, max regs)."""
    run = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", os.devnull],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return run.stderr.strip()[-400:], 0, [], 0
    kernels, spilling, registers, current = 0, [], 0, "?"
    for line in run.stderr.splitlines():
        if m := FUNCTION.search(line):
            current, kernels = m.group(1), kernels + 1
        if (m := SPILL.search(line)) and (int(m.group(1)) or int(m.group(2))):
            spilling.append(current)
        if m := REGISTERS.search(line):
            registers = max(registers, int(m.group(1)))
    return "", kernels, spilling, registers


def compile_and_assemble(bin_dir, ptxas, arch, name, model_path, args, work):
    ptx = os.path.join(work, f"{name}.{arch}.ptx")
    compiled = subprocess.run(
        [os.path.join(bin_dir, "kiln-compile"), model_path, "--target=cuda",
         f"--gpu={arch}", "--emit=ptx", "-o", ptx] + args,
        capture_output=True, text=True, timeout=600)
    if compiled.returncode != 0:
        lines = compiled.stderr.strip().splitlines()
        return name, arch, "kiln-compile: " + (lines[0] if lines else "failed"), 0, 0
    with open(ptx) as f:
        empty = not f.read().strip()
    if empty:  # nothing to compute: no kernels
        os.remove(ptx)
        return name, arch, "", 0, 0
    error, kernels, spilling, registers = assemble(ptxas, arch, ptx)
    os.remove(ptx)
    if error:
        return name, arch, "ptxas: " + error, kernels, registers
    if spilling:
        return name, arch, "spills in " + ", ".join(spilling), kernels, registers
    return name, arch, "", kernels, registers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("node_dir")
    parser.add_argument("expected")
    parser.add_argument("--arch", default="sm_80,sm_90")
    options = parser.parse_args()
    ptxas = find_ptxas()
    if not ptxas:
        print("FAIL: ptxas not found (set KILN_CUDA_PATH or install the CUDA "
              "toolkit; scripts/install-deps.sh does)")
        return 1
    with open(options.expected) as f:
        tests = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    with tempfile.TemporaryDirectory() as work:
        jobs = []
        for test in tests:
            test_dir = os.path.join(options.node_dir, test)
            jobs.append((test, os.path.join(test_dir, "model.onnx"), frozen_inputs(test_dir)))
        for name, build in (("mlp", e2e_vs_onnxruntime.mlp),
                            ("resnet_cnn", e2e_vs_onnxruntime.resnet_cnn),
                            ("bert_layer", e2e_vs_onnxruntime.bert_layer),
                            ("gpt_block", e2e_vs_onnxruntime.gpt_block)):
            model, dims = build()
            path = os.path.join(work, name + ".onnx")
            onnx.save(model, path)
            jobs.append((name, path, [f"--dim={k}={v}" for k, v in dims.items()]))
        archs = options.arch.split(",")
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            futures = [pool.submit(compile_and_assemble, options.bin_dir, ptxas, arch,
                                   name, path, args, work)
                       for name, path, args in jobs for arch in archs]
            results = [f.result() for f in futures]
    failures = [r for r in results if r[2]]
    for name, arch, problem, _, _ in failures:
        print(f"FAIL {name} ({arch}): {problem}")
    kernels = sum(r[3] for r in results)
    registers = max((r[4] for r in results), default=0)
    print(f"{len(results)} model x architecture builds ({len(jobs)} models, "
          f"{', '.join(archs)}): {len(results) - len(failures)} assembled without "
          f"spills, {len(failures)} failed; {kernels} kernels, at most "
          f"{registers} registers per thread")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
