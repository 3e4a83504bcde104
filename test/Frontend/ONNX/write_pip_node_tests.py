#!/usr/bin/env python3
"""Writes the ONNX backend node tests of the installed pip `onnx` package in
the layout of Debian's libonnx-testdata (NAME/model.onnx and
NAME/test_data_set_N/{input,output}_K.pb). Recent onnx releases build these
tests in memory instead of shipping the files.

Usage: write_pip_node_tests.py OUT_DIR
"""

import os
import sys
import warnings

import onnx
import onnx.backend.test.loader as loader
from onnx import numpy_helper


def write_tensor(path, array, name):
    if isinstance(array, onnx.TensorProto):
        # Types numpy cannot hold (bfloat16, float8, ...) come as protos.
        tensor = onnx.TensorProto()
        tensor.CopyFrom(array)
        tensor.name = name
    else:
        try:
            tensor = numpy_helper.from_array(array, name)
        except Exception:  # Sequences, optionals, maps: no TensorProto form.
            return
    with open(path, "wb") as f:
        f.write(tensor.SerializeToString())


def main(out):
    warnings.simplefilter("ignore")
    for case in loader.load_node_model_tests():
        if case.model is None:
            continue
        folder = os.path.join(out, case.name)
        os.makedirs(folder, exist_ok=True)
        onnx.save(case.model, os.path.join(folder, "model.onnx"))
        graph = case.model.graph
        initializers = {i.name for i in graph.initializer}
        inputs = [i.name for i in graph.input if i.name not in initializers]
        outputs = [o.name for o in graph.output]
        for n, (ins, outs) in enumerate(case.data_sets or []):
            data = os.path.join(folder, f"test_data_set_{n}")
            os.makedirs(data, exist_ok=True)
            for k, array in enumerate(ins):
                write_tensor(os.path.join(data, f"input_{k}.pb"), array,
                             inputs[k] if k < len(inputs) else f"input_{k}")
            for k, array in enumerate(outs):
                write_tensor(os.path.join(data, f"output_{k}.pb"), array,
                             outputs[k] if k < len(outputs) else f"output_{k}")
    print(f"onnx {onnx.__version__}: node tests written to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
