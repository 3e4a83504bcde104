#!/usr/bin/env python3
"""Accuracy of kiln's vectorized transcendentals (kiln-approximate-math and
the GELU formulas) against float64 references, for the AVX-512 build (exp and
exp2 scaled with ldexp = vscalefps) and the AVX2 build (2^n from exponent
bits): a dense sweep of each function's range plus special values.

Each function runs twice: as an elementwise loop (vectorized by LLVM) and
as the epilogue of a matmul (X @ I, computed on the matmul's vector
registers; only finite special values there). Checked per function: the largest relative error where the exact result is
a normal f32 of at least 2^-125.5 (the bound documented in docs/backend.md;
exp and exp2 flush smaller results to zero instead of making them
subnormal: below 0.99 * 2^-125.5 exp's result must be exactly 0, and no
output of exp may be subnormal), absolute error for
GELU (whose relative error near its zero crossing is meaningless), and the
special values: exp(0) = 1, exp(-inf) = 0, exp(+inf) = +inf, exp(large) =
+inf, NaN stays NaN.

Usage: math_accuracy.py BIN_DIR
"""

import itertools
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

CPUS = ["native", "x86-64-v3"]
TINY = np.finfo(np.float32).tiny
# Results below 2^-125.5 are flushed to zero (kiln-approximate-math).
FLUSHED = TINY * math.sqrt(2)
FLUSHING = {"exp"}
HUGE = np.finfo(np.float32).max


def unary_model(build):
    """A model y = build(graph, "X") over a 1-D f32 input of any length."""
    nodes = []

    def op(kind, inputs, **attrs):
        name = f"t{len(nodes)}"
        nodes.append(helper.make_node(kind, inputs, [name], **attrs))
        return name

    def const(value):
        name = f"c{len(nodes)}"
        nodes.append(helper.make_node(
            "Constant", [], [name],
            value=helper.make_tensor(name, TensorProto.FLOAT, [], [value])))
        return name

    y = build(op, const, "X")
    nodes.append(helper.make_node("Identity", [y], ["Y"]))
    graph = helper.make_graph(
        nodes, "math", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["n"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def epilogue_model(build):
    """The same function applied to X @ I (16 x 16 identity) over X [m, 16]:
    kiln fuses it into the matmul's epilogue, which computes it on vector
    registers (AVX-512: the ldexp of vector exponents) rather than through
    the loop vectorizer. X @ I is X exactly."""
    model = unary_model(build)
    graph = model.graph
    identity = helper.make_tensor("eye", TensorProto.FLOAT, [16, 16],
                                  np.eye(16, dtype=np.float32).flatten().tolist())
    graph.initializer.append(identity)
    product = helper.make_node("MatMul", ["X", "eye"], ["XI"])
    for node in graph.node:
        node.input[:] = ["XI" if name == "X" else name for name in node.input]
    graph.node.insert(0, product)
    for value in (graph.input[0], graph.output[0]):
        value.type.tensor_type.shape.ClearField("dim")
        value.type.tensor_type.shape.dim.add().dim_param = "m"
        value.type.tensor_type.shape.dim.add().dim_value = 16
    return model


def gelu_tanh(op, const, x):
    cube = op("Mul", [op("Mul", [x, x]), x])
    inner = op("Mul", [op("Add", [x, op("Mul", [cube, const(0.044715)])]),
                       const(math.sqrt(2 / math.pi))])
    return op("Mul", [op("Mul", [x, op("Add", [op("Tanh", [inner]), const(1.0)])]),
                      const(0.5)])


def gelu_erf(op, const, x):
    erf = op("Erf", [op("Div", [x, const(math.sqrt(2.0))])])
    return op("Mul", [op("Mul", [x, op("Add", [erf, const(1.0)])]), const(0.5)])


def exact_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def exact_gelu_erf(x):
    return np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])


def sweep(lo, hi, count=200_003):
    return np.linspace(lo, hi, count, dtype=np.float64).astype(np.float32)


def around(center, steps=400):
    """The f32 values within `steps` representable steps of `center`: the
    edges where a result turns inf or zero."""
    below = up = np.float32(center)
    values = [below]
    for _ in range(steps):
        below = np.nextafter(below, np.float32(-np.inf))
        up = np.nextafter(up, np.float32(np.inf))
        values += [below, up]
    return np.sort(np.array(values, np.float32))


# name, graph builder, float64 reference, inputs, kind of bound, bound.
CASES = [
    # Up to and past overflow: ln(f32 max) = 88.72283905.
    ("exp", lambda op, c, x: op("Exp", [x]), np.exp,
     np.concatenate([sweep(-103, 88.7), around(88.7228390)]), "rel", 1e-6),
    ("sigmoid", lambda op, c, x: op("Sigmoid", [x]), lambda x: 1 / (1 + np.exp(-x)),
     sweep(-80, 80), "rel", 2e-6),
    ("tanh", lambda op, c, x: op("Tanh", [x]), np.tanh, sweep(-10, 10), "rel", 2e-6),
    ("gelu_tanh", gelu_tanh, exact_gelu_tanh, sweep(-12, 12), "abs", 2e-6),
    ("gelu_erf", gelu_erf, exact_gelu_erf, sweep(-12, 12, 40_001), "abs", 2e-6),
]

# (function, input, expected): exact special values.
SPECIAL = {
    "exp": [(-np.inf, 0.0), (np.inf, np.inf), (-200.0, 0.0), (100.0, np.inf),
            (0.0, 1.0), (np.nan, np.nan)],
    "sigmoid": [(-np.inf, 0.0), (np.inf, 1.0), (np.nan, np.nan)],
    # -inf * (1 + tanh(-inf)) is NaN in the written-out formula as well.
    "gelu_tanh": [(-np.inf, np.nan), (np.inf, np.inf), (-100.0, 0.0), (np.nan, np.nan)],
}


def run(bin_dir, work, name, model, cpu, x, epilogue):
    """y = model(x) for the 1-D x, as [n] or (epilogue) as rows of 16,
    zero-padded."""
    import onnx
    name = f"{name}-epilogue" if epilogue else name
    if epilogue:
        x = np.concatenate([x, np.zeros(-x.size % 16, np.float32)]).reshape(-1, 16)
    path = os.path.join(work, f"{name}.onnx")
    onnx.save(model, path)
    library = os.path.join(work, f"{name}-{cpu}.so")
    dim = f"--dim=m={x.shape[0]}" if epilogue else f"--dim=n={x.size}"
    subprocess.run([os.path.join(bin_dir, "kiln-compile"), path, "-o", library, dim,
                    f"--mcpu={cpu}"], check=True)
    npy = os.path.join(work, f"{name}.x.npy")
    np.save(npy, x)
    out_dir = os.path.join(work, f"{name}-{cpu}.out")
    os.makedirs(out_dir, exist_ok=True)
    subprocess.run([os.path.join(bin_dir, "kiln-run"), library, "--output-dir", out_dir,
                    f"--input=X={npy}"], check=True, stdout=subprocess.DEVNULL)
    return np.load(os.path.join(out_dir, "Y.npy")).reshape(-1)


def main():
    bin_dir = sys.argv[1]
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for cpu, epilogue in itertools.product(CPUS, (False, True)):
            for name, build, exact, x, kind, bound in CASES:
                # (X @ I turns a row with an inf or a NaN into NaNs: 0 * inf.)
                specials = [(value, expected) for value, expected in SPECIAL.get(name, [])
                            if not epilogue or np.isfinite(value)]
                inputs = np.concatenate([x, np.array([s for s, _ in specials], np.float32)])
                model = epilogue_model(build) if epilogue else unary_model(build)
                y = run(bin_dir, work, name, model, cpu, inputs, epilogue)
                actual = y[:x.size].astype(np.float64)
                reference = exact(x.astype(np.float64))
                if kind == "rel":
                    least = FLUSHED * 1.01 if name in FLUSHING else TINY
                    normal = np.abs(reference) >= least
                    normal &= np.abs(reference) <= HUGE
                    error = np.abs(actual - reference)[normal] / np.abs(reference[normal])
                else:
                    error = np.abs(actual - reference)
                worst = float(error.max())
                # Finite wherever the exact result is (a hair below f32 max
                # may round up); inf from 2^128 up.
                finite = np.abs(reference) <= HUGE * (1 - 1e-6)
                overflows = np.abs(reference) >= 2.0**128
                passed = (worst <= bound and np.all(np.isfinite(actual[finite]))
                          and np.all(np.isinf(actual[overflows])))
                if not np.all(np.isinf(actual[overflows])):
                    print(f"  {name}: a result past f32 max is not inf")
                flushed = np.abs(reference) < FLUSHED * 0.99
                if name in FLUSHING and not np.all(actual[flushed] == 0):
                    print(f"  {name}: a result below 2^-125.5 is not flushed to 0")
                    passed = False
                if name in FLUSHING and np.any((actual != 0) & (np.abs(actual) < TINY)):
                    print(f"  {name}: a subnormal result")
                    passed = False
                for (value, expected), got in zip(specials, y[x.size:]):
                    same = (np.isnan(expected) and np.isnan(got)) or got == expected
                    if not same:
                        print(f"  {name}({value}) = {got}, expected {expected}")
                    passed &= bool(same)
                ok &= passed
                where = "epilogue" if epilogue else "loop"
                print(f"{cpu:10} {where:8} {name:10} max {kind} error {worst:.3g} (bound {bound:g}) "
                      f"{'ok' if passed else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
