#!/usr/bin/env python3
"""ONNX backend node tests through the native backend: kiln-compile builds
model.so, kiln-run runs it on test_data_set_0 and compares every output with
the reference (rtol 1e-4, atol 1e-5). Models that do not import or lower are
skipped (and counted); tests on the expected-to-pass list must pass.

Usage: run_node_tests_native.py BIN_DIR NODE_DIR EXPECTED [--update] [--verbose]
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Frontend", "ONNX"))
from node_import_sweep import frozen_inputs  # noqa: E402


def run_test(bin_dir, test_dir, work):
    name = os.path.basename(test_dir)
    data = os.path.join(test_dir, "test_data_set_0")
    frozen = frozen_inputs(test_dir)
    library = os.path.join(work, name + ".so")
    compiled = subprocess.run(
        [os.path.join(bin_dir, "kiln-compile"), os.path.join(test_dir, "model.onnx"),
         "-o", library] + frozen, capture_output=True, text=True, timeout=300)
    if compiled.returncode != 0:
        message = compiled.stderr.strip().splitlines()
        reason = message[0] if message else f"exit {compiled.returncode}"
        if compiled.returncode != 1:
            return name, "failed", "kiln-compile crashed: " + reason
        if "no lowering to linalg" in reason:
            return name, "skipped", "not lowered: " + reason[-150:]
        imported = subprocess.run(
            [os.path.join(bin_dir, "kiln-compile"), "--emit=kiln",
             os.path.join(test_dir, "model.onnx"), "-o", os.devnull] + frozen,
            capture_output=True, text=True, timeout=300)
        if imported.returncode != 0:
            return name, "skipped", "does not import"
        # It imports and lowers, so the backend itself failed.
        return name, "failed", "backend: " + " | ".join(message)[-300:]
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    frozen_names = {a.split("=", 1)[1].split("=")[0] for a in frozen}
    inputs = [f"--input={value.name}={data}/input_{k}.pb"
              for k, value in enumerate(i for i in model.graph.input
                                        if i.name not in initializers)
              if value.name not in frozen_names]
    run = subprocess.run([os.path.join(bin_dir, "kiln-run"), library, "--compare", data]
                         + inputs, capture_output=True, text=True, timeout=300)
    os.remove(library)
    if run.returncode != 0:
        lines = (run.stderr or run.stdout).strip().splitlines()
        return name, "failed", lines[-1] if lines else f"exit {run.returncode}"
    return name, "passed", ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("node_dir")
    parser.add_argument("expected")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    options = parser.parse_args()
    tests = sorted(d for d in os.listdir(options.node_dir)
                   if os.path.isfile(os.path.join(options.node_dir, d, "model.onnx")))
    with tempfile.TemporaryDirectory() as work:
        def run(t):
            try:
                return run_test(options.bin_dir, os.path.join(options.node_dir, t), work)
            except Exception as e:
                return t, "failed", f"{type(e).__name__}: {e}"
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            results = list(pool.map(run, tests))
    passed = {n for n, k, _ in results if k == "passed"}
    if options.update:
        with open(options.expected, "w") as f:
            f.write("# ONNX node tests that must pass through model.so "
                    "(run_node_tests_native.py --update)\n")
            f.writelines(f"{n}\n" for n in sorted(passed))
    with open(options.expected) as f:
        expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    failures = 0
    for name, kind, detail in results:
        if kind == "failed" and (name in expected or options.verbose):
            print(f"FAIL {name}: {detail}")
        if options.verbose and kind == "skipped":
            print(f"SKIP {name}: {detail}")
        if name in expected and kind != "passed":
            failures += 1
            if kind != "failed":
                print(f"REGRESSION {name}: {detail}")
    counts = {k: sum(1 for _, kind, _ in results if kind == k)
              for k in ("passed", "failed", "skipped")}
    print(f"{len(tests)} node tests through model.so: {counts['passed']} passed, "
          f"{counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
