#!/usr/bin/env python3
"""Imports every ONNX backend node test model with kiln-compile --emit=kiln.

Each model must either import or fail with a clean diagnostic; a crash (a
signal, a timeout, or an exit without an `error:` line) fails the test, as
does a model on the expected-to-import list that no longer imports. Inputs
that kiln needs at compile time (a Reshape's shape, a Slice's starts, a
Resize's scales, ...: the inputs ONNX ops take as attributes in spirit) are
frozen to the values of test_data_set_0 with --const-input, as a deployment
pins them.

Usage: node_import_sweep.py KILN_COMPILE NODE_DIR EXPECTED_LIST [--update]
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys

import onnx

# Per op, the input positions kiln needs as constants.
COMPILE_TIME_INPUTS = {
    "Reshape": {1}, "Expand": {1}, "Tile": {1}, "Slice": {1, 2, 3, 4},
    "Pad": {1, 2, 3}, "Resize": {1, 2, 3}, "Squeeze": {1}, "Unsqueeze": {1},
    "Split": {1}, "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1},
    "ReduceMin": {1}, "ReduceProd": {1}, "ReduceL1": {1}, "ReduceL2": {1},
    "ReduceLogSum": {1}, "ReduceLogSumExp": {1}, "ReduceSumSquare": {1},
    "Range": {0, 1, 2}, "ConstantOfShape": {0}, "CumSum": {1}, "Trilu": {1},
    "Clip": {1, 2}, "TopK": {1}, "OneHot": {1}, "Dropout": {1, 2},
}


def frozen_inputs(test_dir):
    """--const-input arguments for the shape-like inputs of a test model."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    initializers = {init.name for init in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    needed = {node.input[i] for node in model.graph.node
              for i in COMPILE_TIME_INPUTS.get(node.op_type, ())
              if i < len(node.input)}
    args = []
    for index, value in enumerate(inputs):
        data = os.path.join(test_dir, "test_data_set_0", f"input_{index}.pb")
        if value.name in needed and os.path.exists(data):
            args.append(f"--const-input={value.name}={data}")
    return args


def classify(kiln_compile, test_dir):
    name = os.path.basename(test_dir)
    try:
        args = frozen_inputs(test_dir)
    except Exception:  # A model the reference parser rejects: import plainly.
        args = []
    command = [kiln_compile, "--emit=kiln", os.path.join(test_dir, "model.onnx"), "-o",
               os.devnull]
    try:
        run = subprocess.run(command + args, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return name, "crash", "timed out after 120 s"
    if run.returncode == 0:
        return name, "imported", ""
    first_error = next((l for l in run.stderr.splitlines() if "error:" in l), None)
    if run.returncode != 1 or first_error is None:
        return name, "crash", f"exit {run.returncode}: {run.stderr[-400:]}"
    kind = "unsupported-op" if "unsupported op" in first_error else "other-error"
    return name, kind, first_error


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kiln_compile")
    parser.add_argument("node_dir")
    parser.add_argument("expected")
    parser.add_argument("--update", action="store_true",
                        help="rewrite the expected-to-import list")
    options = parser.parse_args()

    tests = sorted(d for d in os.listdir(options.node_dir)
                   if os.path.isfile(os.path.join(options.node_dir, d, "model.onnx")))
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda t: classify(options.kiln_compile,
                                                   os.path.join(options.node_dir, t)),
                                tests))

    by_kind = {}
    for name, kind, detail in results:
        by_kind.setdefault(kind, []).append((name, detail))
    imported = {name for name, _ in by_kind.get("imported", [])}

    if options.update:
        with open(options.expected, "w") as f:
            f.write("# ONNX node tests kiln must import (node_import_sweep.py --update)\n")
            f.writelines(f"{name}\n" for name in sorted(imported))
    with open(options.expected) as f:
        expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}

    failures = 0
    for name, detail in by_kind.get("crash", []):
        print(f"CRASH {name}: {detail}")
        failures += 1
    for name in sorted(expected - imported):
        detail = next(d for n, _, d in results if n == name) if name in {
            r[0] for r in results} else "missing from the test data"
        print(f"REGRESSION {name} no longer imports: {detail}")
        failures += 1
    for name in sorted(imported - expected):
        print(f"NEW {name} imports now (add it with --update)")

    print(f"{len(tests)} node models: {len(imported)} imported, "
          f"{len(by_kind.get('unsupported-op', []))} unsupported op, "
          f"{len(by_kind.get('other-error', []))} other clean errors, "
          f"{len(by_kind.get('crash', []))} crashes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
