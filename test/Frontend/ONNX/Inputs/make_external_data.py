"""Writes small ONNX models whose weights live in external data files, some
valid and some trying to read outside their folder or past a file's end.

Usage: make_external_data.py OUT_DIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def write_model(folder, location, offset=None, length=None, raw=None):
    os.makedirs(folder, exist_ok=True)
    weights = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[64, 64])
    if raw is not None:
        weights.raw_data = raw
    else:
        weights.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", offset),
                           ("length", length)):
            if value is not None:
                entry = weights.external_data.add()
                entry.key, entry.value = key, str(value)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], "external",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 64])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 64])],
        [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def main(out):
    data = np.arange(64 * 64, dtype=np.float32).tobytes()
    good = os.path.join(out, "good")
    os.makedirs(good, exist_ok=True)
    with open(os.path.join(good, "weights.bin"), "wb") as f:
        f.write(b"\0" * 128 + data)
    write_model(good, "weights.bin", offset=128, length=len(data))
    write_model(os.path.join(out, "absolute"), os.path.abspath(
        os.path.join(good, "weights.bin")))
    write_model(os.path.join(out, "dotdot"), "../good/weights.bin")
    link = os.path.join(out, "link")
    os.makedirs(link, exist_ok=True)
    if not os.path.lexists(os.path.join(link, "escape.bin")):
        os.symlink(os.path.join("..", "good", "weights.bin"),
                   os.path.join(link, "escape.bin"))
    write_model(link, "escape.bin")
    short = os.path.join(out, "short")
    os.makedirs(short, exist_ok=True)
    with open(os.path.join(short, "weights.bin"), "wb") as f:
        f.write(data[:1000])
    write_model(short, "weights.bin")
    length = os.path.join(out, "length")
    os.makedirs(length, exist_ok=True)
    with open(os.path.join(length, "weights.bin"), "wb") as f:
        f.write(data)
    write_model(length, "weights.bin", length=12)
    write_model(os.path.join(out, "missing"), "nothere.bin")
    write_model(os.path.join(out, "rawsize"), None, raw=b"\0" * 100)


if __name__ == "__main__":
    main(sys.argv[1])
