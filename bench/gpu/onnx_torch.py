"""A small ONNX interpreter on PyTorch: the GPU baselines (PyTorch eager and
torch.compile) for kiln's CUDA benchmark run the very graph kiln compiled,
with the same weights, rather than a hand-written twin of it.

    fn = OnnxTorch(onnx.load(path), device="cuda", dtype=torch.float32)
    outputs = fn(*inputs)                  # eager
    compiled = torch.compile(fn)           # inductor

Covers the ops of bench/models.py (transformer blocks, MLPs, CNNs).
"""

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class OnnxTorch(torch.nn.Module):
    def __init__(self, model: onnx.ModelProto, device="cuda", dtype=torch.float32):
        super().__init__()
        self.graph = model.graph
        self.dtype = dtype
        self.consts = {}
        for init in self.graph.initializer:
            array = numpy_helper.to_array(init)
            tensor = torch.from_numpy(np.ascontiguousarray(array)).to(device)
            if tensor.is_floating_point():
                tensor = tensor.to(dtype)
            self.consts[init.name] = tensor
        # Integer constants (shapes, axes, slice bounds) as Python lists, so
        # torch.compile sees them as constants rather than tensor reads.
        self.int_lists = {init.name: numpy_helper.to_array(init).reshape(-1).tolist()
                          for init in self.graph.initializer
                          if init.data_type == onnx.TensorProto.INT64}
        self.inputs = [i.name for i in self.graph.input if i.name not in self.consts]
        self.outputs = [o.name for o in self.graph.output]
        # Plain Python data, read once: torch.compile then traces the whole
        # graph as one frame (protobuf objects in forward break it into one
        # recompiled frame per op).
        self.nodes = [(n.op_type, list(n.input), list(n.output), _attrs(n))
                      for n in self.graph.node]

    def forward(self, *args):
        env = dict(self.consts)
        env.update(zip(self.inputs, args))
        for op, input_names, output_names, attrs in self.nodes:
            values = [env[name] if name else None for name in input_names]
            results = self._op(op, input_names, values, attrs)
            if not isinstance(results, (tuple, list)):
                results = (results,)
            env.update(zip(output_names, results))
        return tuple(env[name] for name in self.outputs)

    def _ints(self, names, x, i):
        """Input i as a list of ints: a constant's from __init__."""
        if i >= len(x) or x[i] is None:
            return None
        return self.int_lists.get(names[i]) or [int(v) for v in x[i].tolist()]

    def _op(self, op, names, x, a):
        if op in ("Add", "Sub", "Mul", "Div", "Pow"):
            fn = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul,
                  "Div": torch.div, "Pow": torch.pow}[op]
            return fn(x[0], x[1])
        if op in ("Relu", "Tanh", "Erf", "Sqrt", "Exp", "Sigmoid", "Identity"):
            fn = {"Relu": torch.relu, "Tanh": torch.tanh, "Erf": torch.erf,
                  "Sqrt": torch.sqrt, "Exp": torch.exp, "Sigmoid": torch.sigmoid,
                  "Identity": lambda t: t}[op]
            return fn(x[0])
        if op == "MatMul":
            return torch.matmul(x[0], x[1])
        if op == "Gemm":
            A = x[0].t() if a.get("transA", 0) else x[0]
            B = x[1].t() if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * (A @ B)
            return y + a.get("beta", 1.0) * x[2] if len(x) > 2 and x[2] is not None else y
        if op == "Softmax":
            return torch.softmax(x[0], dim=a.get("axis", -1))
        if op == "LayerNormalization":
            axis = a.get("axis", -1) % x[0].dim()
            shape = x[0].shape[axis:]
            return F.layer_norm(x[0], shape, x[1], x[2] if len(x) > 2 else None,
                                a.get("epsilon", 1e-5))
        if op == "ReduceMean":
            axes = a.get("axes") or self._ints(names, x, 1)
            return torch.mean(x[0], dim=axes, keepdim=bool(a.get("keepdims", 1)))
        if op == "Reshape":
            shape = self._ints(names, x, 1)
            shape = [x[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
            return torch.reshape(x[0], shape)
        if op == "Transpose":
            return x[0].permute(*a["perm"])
        if op == "Flatten":
            return torch.flatten(x[0], a.get("axis", 1))
        if op == "Clip":
            low = x[1] if len(x) > 1 and x[1] is not None else None
            high = x[2] if len(x) > 2 and x[2] is not None else None
            return torch.clamp(x[0], low, high)
        if op == "Where":
            return torch.where(x[0], x[1], x[2])
        if op == "Gather":
            return torch.index_select(x[0], a.get("axis", 0), x[1].reshape(-1)).reshape(
                *x[0].shape[:a.get("axis", 0)], *x[1].shape,
                *x[0].shape[a.get("axis", 0) + 1:])
        if op == "Slice":
            starts, ends = self._ints(names, x, 1), self._ints(names, x, 2)
            axes = self._ints(names, x, 3) or range(len(starts))
            steps = self._ints(names, x, 4) or [1] * len(starts)
            index = [slice(None)] * x[0].dim()
            for s, e, ax, st in zip(starts, ends, axes, steps):
                index[ax] = slice(s, min(e, x[0].shape[ax]), st)
            return x[0][tuple(index)]
        if op == "Conv":
            pads = a.get("pads", [0, 0, 0, 0])
            return F.conv2d(x[0], x[1], x[2] if len(x) > 2 else None,
                            stride=a.get("strides", [1, 1]),
                            padding=(pads[0], pads[1]),
                            dilation=a.get("dilations", [1, 1]),
                            groups=a.get("group", 1))
        if op == "MaxPool":
            pads = a.get("pads", [0, 0, 0, 0])
            return F.max_pool2d(x[0], a["kernel_shape"], a.get("strides", 1),
                                padding=(pads[0], pads[1]))
        if op == "GlobalAveragePool":
            return torch.mean(x[0], dim=(2, 3), keepdim=True)
        raise NotImplementedError(f"onnx_torch: no translation for {op}")
