"""Writes a BERT-style encoder and a ResNet-style CNN as ONNX models, shaped
the way torch.onnx.export writes them: symbolic batch/sequence dims, shape
subgraphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) for the
attention head split, LayerNorm written out as ReduceMean/Sub/Pow/Sqrt/Div,
GELU in its Erf form, Conv + BatchNormalization + Relu blocks with residual
adds. Random weights with a fixed seed.

Usage: make_models.py OUT_DIR [--hidden H --layers L --heads N --vocab V]
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    def __init__(self, seed):
        self.nodes, self.initializers = [], []
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def name(self, hint):
        self.count += 1
        return f"{hint}_{self.count}"

    def weight(self, hint, shape, scale=0.02):
        name = self.name(hint)
        data = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.initializers.append(numpy_helper.from_array(data, name))
        return name

    def const(self, hint, value, dtype=np.int64):
        name = self.name(hint)
        self.initializers.append(
            numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def op(self, op_type, inputs, outputs=1, **attrs):
        names = [self.name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names,
                                           name=self.name(op_type), **attrs))
        return names[0] if outputs == 1 else names


def layer_norm(g, x, hidden):
    mean = g.op("ReduceMean", [x], axes=[-1])
    centered = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Pow", [centered, g.const("two", 2.0, np.float32)])],
               axes=[-1])
    std = g.op("Sqrt", [g.op("Add", [var, g.const("eps", 1e-12, np.float32)])])
    normed = g.op("Div", [centered, std])
    scaled = g.op("Mul", [normed, g.weight("ln_gamma", [hidden], 1.0)])
    return g.op("Add", [scaled, g.weight("ln_beta", [hidden])])


def gelu(g, x):
    scaled = g.op("Div", [x, g.const("sqrt2", 1.4142135, np.float32)])
    erf = g.op("Erf", [scaled])
    one_plus = g.op("Add", [erf, g.const("one", 1.0, np.float32)])
    return g.op("Mul", [g.op("Mul", [x, one_plus]), g.const("half", 0.5, np.float32)])


def linear(g, x, fan_in, fan_out):
    return g.op("Add", [g.op("MatMul", [x, g.weight("w", [fan_in, fan_out])]),
                        g.weight("b", [fan_out])])


def dim_of(g, x, index):
    """Unsqueezed dim `index` of x's runtime shape (an exporter idiom)."""
    shape = g.op("Shape", [x])
    dim = g.op("Gather", [shape, g.const("idx", index)], axis=0)
    return g.op("Unsqueeze", [dim, g.const("axes", [0])])


def encoder_layer(g, x, mask, hidden, heads):
    head_dim = hidden // heads
    batch, seq = dim_of(g, x, 0), dim_of(g, x, 1)
    split_shape = g.op("Concat", [batch, seq, g.const("h", [heads]),
                                  g.const("d", [head_dim])], axis=0)

    def heads_of(t, perm):
        return g.op("Transpose", [g.op("Reshape", [t, split_shape])], perm=perm)

    q = heads_of(linear(g, x, hidden, hidden), [0, 2, 1, 3])
    k = heads_of(linear(g, x, hidden, hidden), [0, 2, 3, 1])
    v = heads_of(linear(g, x, hidden, hidden), [0, 2, 1, 3])
    scores = g.op("Div", [g.op("MatMul", [q, k]),
                          g.const("scale", float(np.sqrt(head_dim)), np.float32)])
    probs = g.op("Softmax", [g.op("Add", [scores, mask])], axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    merge_shape = g.op("Concat", [batch, seq, g.const("hid", [hidden])], axis=0)
    context = g.op("Reshape", [context, merge_shape])
    x = layer_norm(g, g.op("Add", [linear(g, context, hidden, hidden), x]), hidden)
    ffn = linear(g, gelu(g, linear(g, x, hidden, 4 * hidden)), 4 * hidden, hidden)
    return layer_norm(g, g.op("Add", [ffn, x]), hidden)


def bert(args):
    g = GraphBuilder(seed=0)
    ids, mask = "input_ids", "attention_mask"
    seq_len = g.op("Gather", [g.op("Shape", [ids]), g.const("one", 1)], axis=0)
    positions = g.op("Unsqueeze", [g.op("Range", [g.const("zero", 0), seq_len,
                                                   g.const("step", 1)]),
                                   g.const("axes", [0])])
    x = g.op("Add", [g.op("Gather", [g.weight("word_emb", [args.vocab, args.hidden]), ids]),
                     g.op("Gather", [g.weight("pos_emb", [512, args.hidden]), positions])])
    x = layer_norm(g, x, args.hidden)
    extended = g.op("Cast", [g.op("Unsqueeze", [mask, g.const("axes", [1, 2])])],
                    to=TensorProto.FLOAT)
    additive = g.op("Mul", [g.op("Sub", [g.const("one_f", 1.0, np.float32), extended]),
                            g.const("neg", -10000.0, np.float32)])
    for _ in range(args.layers):
        x = encoder_layer(g, x, additive, args.hidden, args.heads)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(
        g.nodes, "bert_encoder",
        [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       ["batch", "seq", args.hidden])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def conv_bn(g, x, cin, cout, kernel, stride, relu=True):
    y = g.op("Conv", [x, g.weight("conv", [cout, cin, kernel, kernel], 0.1)],
             kernel_shape=[kernel, kernel], strides=[stride, stride],
             pads=[kernel // 2] * 4)
    y = g.op("BatchNormalization",
             [y, g.weight("bn_scale", [cout], 1.0), g.weight("bn_bias", [cout]),
              g.weight("bn_mean", [cout]),
              g.const("bn_var", np.ones(cout), np.float32)], epsilon=1e-5)
    return g.op("Relu", [y]) if relu else y


def resnet(args):
    g = GraphBuilder(seed=1)
    x = conv_bn(g, "pixel_values", 3, 16, 7, 2)
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    channels = 16
    for stage, width in enumerate([16, 32, 64]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            shortcut = x
            if stride != 1 or width != channels:
                shortcut = conv_bn(g, x, channels, width, 1, stride, relu=False)
            y = conv_bn(g, x, channels, width, 3, stride)
            y = conv_bn(g, y, width, width, 3, 1, relu=False)
            x = g.op("Relu", [g.op("Add", [y, shortcut])])
            channels = width
    pooled = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    logits = g.op("Gemm", [pooled, g.weight("fc", [10, channels]), g.weight("fc_b", [10])],
                  transB=1)
    g.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
    graph = helper.make_graph(
        g.nodes, "resnet",
        [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT,
                                       ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=1000)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, model in (("bert.onnx", bert(args)), ("resnet.onnx", resnet(args))):
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(args.out_dir, name))


if __name__ == "__main__":
    main()
