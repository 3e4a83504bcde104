#!/usr/bin/env python3
"""The benchmark models, generated with onnx.helper (random weights, fixed seeds).

Every model is pinned to static shapes, uses opset 18 and only ops that kiln
imports and lowers. Each one is described by a `BenchModel`: its name and
batch, a builder, and a tolerance for comparing kiln with ONNX Runtime.

The generated files are a cache (build/bench/models/<key>.onnx plus
<key>.json with the FLOP and byte counts); they are rebuilt when this file
changes. Run this file directly to (re)generate them:

    python3 bench/models.py [--filter REGEX] [--list]
"""

import argparse
import hashlib
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CACHE_DIR = os.path.join(REPO_ROOT, "build", "bench", "models")


# --------------------------------------------------------------------------
# Graph building
# --------------------------------------------------------------------------

class GraphBuilder:
    """Accumulates nodes and initializers; every value gets a fresh name."""

    def __init__(self, name: str, seed: int):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._counter = 0

    def fresh(self, hint: str) -> str:
        self._counter += 1
        return f"{hint}_{self._counter}"

    def input(self, name: str, shape, elem_type=TensorProto.FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    def const(self, value, dtype=np.float32, hint="const") -> str:
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def weight(self, shape, fan_in: int, gain: float = 1.0, hint="w") -> str:
        """Normal weights with variance gain/fan_in, so activations keep a
        unit scale through deep stacks (no overflow, no vanishing outputs
        that would make the comparison with ONNX Runtime meaningless)."""
        std = math.sqrt(gain / fan_in)
        return self.const(self.rng.normal(0.0, std, shape), hint=hint)

    def bias(self, size: int, hint="b") -> str:
        return self.const(self.rng.normal(0.0, 0.02, [size]), hint=hint)

    def op(self, op_type: str, inputs, **attrs) -> str:
        output = self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attrs))
        return output

    def output(self, value: str, name: str) -> None:
        """Marks `value` as a graph output called `name` (type from shape
        inference when the model is built)."""
        self.nodes.append(helper.make_node("Identity", [value], [name]))
        self.outputs.append(name)

    def build(self) -> onnx.ModelProto:
        # Output types are filled in by shape inference; start untyped.
        outputs = [helper.make_empty_tensor_value_info(name) for name in self.outputs]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, outputs,
                                  self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="kiln-bench")
        model.ir_version = 8  # readable by every onnxruntime of the last years
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        declared = {value.name: value for value in inferred.graph.value_info}
        for output in model.graph.output:
            output.CopyFrom(declared[output.name])
        onnx.checker.check_model(model, full_check=True)
        return model


# --------------------------------------------------------------------------
# Layers
# --------------------------------------------------------------------------

def linear(g: GraphBuilder, x: str, fan_in: int, fan_out: int) -> str:
    """x @ W + b on the last axis (MatMul + Add, as exporters write it)."""
    return g.op("Add", [g.op("MatMul", [x, g.weight([fan_in, fan_out], fan_in)]),
                        g.bias(fan_out)])


def gemm(g: GraphBuilder, x: str, fan_in: int, fan_out: int) -> str:
    """A rank-2 linear layer as one Gemm node."""
    return g.op("Gemm", [x, g.weight([fan_in, fan_out], fan_in, gain=2.0), g.bias(fan_out)])


def layer_norm(g: GraphBuilder, x: str, hidden: int) -> str:
    scale = g.const(1.0 + 0.1 * g.rng.standard_normal(hidden), hint="gamma")
    return g.op("LayerNormalization", [x, scale, g.bias(hidden, hint="beta")],
                axis=-1, epsilon=1e-5)


def gelu_erf(g: GraphBuilder, x: str) -> str:
    """BERT's GELU written out: 0.5 * x * (1 + erf(x / sqrt(2)))."""
    erf = g.op("Erf", [g.op("Div", [x, g.const(math.sqrt(2.0))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [erf, g.const(1.0)])]), g.const(0.5)])


def gelu_tanh(g: GraphBuilder, x: str) -> str:
    """GPT-2's GELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""
    cube = g.op("Pow", [x, g.const(3.0)])
    inner = g.op("Add", [x, g.op("Mul", [cube, g.const(0.044715)])])
    tanh = g.op("Tanh", [g.op("Mul", [inner, g.const(math.sqrt(2.0 / math.pi))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [tanh, g.const(1.0)])]), g.const(0.5)])


def self_attention(g: GraphBuilder, x: str, batch: int, seq: int, hidden: int, heads: int,
                   causal: bool) -> str:
    """Multi-head self-attention over x: [batch, seq, hidden]."""
    head_dim = hidden // heads
    split_heads = g.const([batch, seq, heads, head_dim], np.int64, hint="split_heads")

    def project_to_heads(perm):
        projected = g.op("Reshape", [linear(g, x, hidden, hidden), split_heads])
        return g.op("Transpose", [projected], perm=perm)

    q = project_to_heads([0, 2, 1, 3])   # [b, h, s, d]
    k = project_to_heads([0, 2, 3, 1])   # [b, h, d, s]: K already transposed
    v = project_to_heads([0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [q, k]), g.const(1.0 / math.sqrt(head_dim))])
    if causal:
        # Position i attends to j <= i, as GPT-2 exports do it: Where with a
        # constant lower-triangular mask.
        mask = g.const(np.tril(np.ones((seq, seq))), np.bool_, hint="causal_mask")
        scores = g.op("Where", [mask, scores, g.const(-1e9)])
    probs = g.op("Softmax", [scores], axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    merged = g.op("Reshape", [context, g.const([batch, seq, hidden], np.int64,
                                               hint="merge_heads")])
    return linear(g, merged, hidden, hidden)


def bert_encoder_layer(g: GraphBuilder, x: str, batch: int, seq: int, hidden: int,
                       heads: int, ffn: int) -> str:
    """Post-LN BERT layer: LN(x + attn(x)), then LN(h + FFN(h)) with erf GELU."""
    h = layer_norm(g, g.op("Add", [x, self_attention(g, x, batch, seq, hidden, heads,
                                                       causal=False)]), hidden)
    ffn_out = linear(g, gelu_erf(g, linear(g, h, hidden, ffn)), ffn, hidden)
    return layer_norm(g, g.op("Add", [h, ffn_out]), hidden)


def gpt2_block(g: GraphBuilder, x: str, batch: int, seq: int, hidden: int,
               heads: int) -> str:
    """Pre-LN GPT-2 block: x + attn(LN(x)) with a causal mask, then
    h + MLP(LN(h)) with tanh GELU."""
    h = g.op("Add", [x, self_attention(g, layer_norm(g, x, hidden), batch, seq, hidden,
                                       heads, causal=True)])
    mlp = linear(g, gelu_tanh(g, linear(g, layer_norm(g, h, hidden), hidden, 4 * hidden)),
                 4 * hidden, hidden)
    return g.op("Add", [h, mlp])


def conv(g: GraphBuilder, x: str, c_in: int, c_out: int, kernel: int, stride: int = 1,
         groups: int = 1) -> str:
    """Conv with 'same'-style padding and a bias (batch norm folded in, as
    inference exports have it)."""
    fan_in = c_in // groups * kernel * kernel
    w = g.weight([c_out, c_in // groups, kernel, kernel], fan_in, gain=2.0)
    pad = kernel // 2
    return g.op("Conv", [x, w, g.bias(c_out)], kernel_shape=[kernel, kernel],
                strides=[stride, stride], pads=[pad] * 4, group=groups)


def relu6(g: GraphBuilder, x: str) -> str:
    return g.op("Clip", [x, g.const(0.0), g.const(6.0)])


def classifier_head(g: GraphBuilder, x: str, channels: int, classes: int = 1000) -> str:
    pooled = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    return gemm(g, pooled, channels, classes)


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------

BERT_BASE = dict(seq=128, hidden=768, heads=12, ffn=3072)


def mlp(batch: int) -> onnx.ModelProto:
    g = GraphBuilder("mlp", seed=1)
    x = g.input("x", [batch, 1024])
    for fan_in, fan_out in ((1024, 4096), (4096, 1024)):
        x = g.op("Relu", [gemm(g, x, fan_in, fan_out)])
    g.output(gemm(g, x, 1024, 1000), "logits")
    return g.build()


def bert_stack(batch: int, layers: int, seed: int) -> onnx.ModelProto:
    """`layers` BERT-base encoder layers over hidden states [batch, 128, 768]."""
    p = BERT_BASE
    g = GraphBuilder(f"bert_{layers}_layers", seed=seed)
    x = g.input("hidden_states", [batch, p["seq"], p["hidden"]])
    for _ in range(layers):
        x = bert_encoder_layer(g, x, batch, p["seq"], p["hidden"], p["heads"], p["ffn"])
    g.output(x, "output")
    return g.build()


def bert_base(batch: int) -> onnx.ModelProto:
    """Full BERT-base: word + position + token-type embeddings, embedding
    LayerNorm, 12 encoder layers, the pooler (tanh dense on the first token).
    No attention mask (every token attends to every token)."""
    p = BERT_BASE
    seq, hidden, vocab = p["seq"], p["hidden"], 30522
    g = GraphBuilder("bert_base", seed=4)
    ids = g.input("input_ids", [batch, seq], TensorProto.INT64)
    words = g.op("Gather", [g.const(g.rng.normal(0, 0.02, (vocab, hidden)), hint="word_emb"),
                            ids], axis=0)
    positions = g.const(g.rng.normal(0, 0.02, (1, seq, hidden)), hint="pos_emb")
    token_type = g.const(g.rng.normal(0, 0.02, (hidden,)), hint="type_emb")
    x = layer_norm(g, g.op("Add", [g.op("Add", [words, positions]), token_type]), hidden)
    for _ in range(12):
        x = bert_encoder_layer(g, x, batch, seq, hidden, p["heads"], p["ffn"])
    g.output(x, "last_hidden_state")
    first_token = g.op("Reshape", [
        g.op("Slice", [x, g.const([0], np.int64), g.const([1], np.int64),
                       g.const([1], np.int64)]),
        g.const([batch, hidden], np.int64)])
    g.output(g.op("Tanh", [gemm(g, first_token, hidden, hidden)]), "pooler_output")
    return g.build()


def gpt2_decoder_block(batch: int) -> onnx.ModelProto:
    g = GraphBuilder("gpt2_block", seed=5)
    x = g.input("hidden_states", [batch, 128, 768])
    g.output(gpt2_block(g, x, batch, seq=128, hidden=768, heads=12), "output")
    return g.build()


def resnet_cnn(batch: int) -> onnx.ModelProto:
    """ResNet-style: conv7x7/s2, maxpool 3x3/s2, one basic block per stage
    (64, 128, 256, 512 channels; 1x1/s2 projection when the shape changes),
    global average pool, FC 1000."""
    g = GraphBuilder("resnet_cnn", seed=6)
    x = g.input("image", [batch, 3, 224, 224])
    x = g.op("Relu", [conv(g, x, 3, 64, 7, stride=2)])
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    channels = 64
    for width, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        shortcut = x if (stride, width) == (1, channels) else conv(g, x, channels, width, 1,
                                                                  stride)
        h = g.op("Relu", [conv(g, x, channels, width, 3, stride)])
        x = g.op("Relu", [g.op("Add", [conv(g, h, width, width, 3), shortcut])])
        channels = width
    g.output(classifier_head(g, x, channels), "logits")
    return g.build()


def mobilenet_v2(batch: int) -> onnx.ModelProto:
    """MobileNetV2 (width 1.0): inverted residuals (1x1 expand, 3x3 depthwise
    group conv, 1x1 linear projection), ReLU6 as Clip."""
    g = GraphBuilder("mobilenet_v2", seed=7)
    x = g.input("image", [batch, 3, 224, 224])
    x = relu6(g, conv(g, x, 3, 32, 3, stride=2))
    channels = 32
    # (expansion t, output channels c, repeats n, first stride s), from the paper.
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = channels * t
            h = relu6(g, conv(g, x, channels, hidden, 1)) if t != 1 else x
            h = relu6(g, conv(g, h, hidden, hidden, 3, stride, groups=hidden))
            h = conv(g, h, hidden, c, 1)
            x = g.op("Add", [x, h]) if stride == 1 and channels == c else h
            channels = c
    x = relu6(g, conv(g, x, channels, 1280, 1))
    g.output(classifier_head(g, x, 1280), "logits")
    return g.build()


def resnext_block(batch: int) -> onnx.ModelProto:
    """A ResNeXt-50 bottleneck block of its first stage (32x4d): 1x1 256 ->
    128, 3x3 128 -> 128 in 32 groups of 4 channels, 1x1 128 -> 256, the
    residual add; ReLUs between, at 56x56."""
    g = GraphBuilder("resnext_block", seed=9)
    x = g.input("x", [batch, 256, 56, 56])
    h = g.op("Relu", [conv(g, x, 256, 128, 1)])
    h = g.op("Relu", [conv(g, h, 128, 128, 3, groups=32)])
    h = conv(g, h, 128, 256, 1)
    g.output(g.op("Relu", [g.op("Add", [x, h])]), "y")
    return g.build()


def gelu_bias_relu(batch: int) -> onnx.ModelProto:
    """Memory-bound elementwise chain over [4096 * batch, 1024]:
    Relu(GELU_tanh(x + b))."""
    g = GraphBuilder("gelu_bias_relu", seed=8)
    x = g.input("x", [4096 * batch, 1024])
    g.output(g.op("Relu", [gelu_tanh(g, g.op("Add", [x, g.bias(1024)]))]), "y")
    return g.build()


def softmax(batch: int) -> onnx.ModelProto:
    """Attention-probability softmax: 12 heads x 128 rows of 128 scores, per
    batch item."""
    g = GraphBuilder("softmax", seed=9)
    g.output(g.op("Softmax", [g.input("x", [1536 * batch, 128])], axis=-1), "y")
    return g.build()


def upsample(mode: str):
    """A feature pyramid's top-down step: [256, 32, 32] upsampled by 2
    (`mode` nearest or linear, ONNX's default coordinate transform and
    rounding) and added to the lateral [256, 64, 64]."""
    def build(batch: int) -> onnx.ModelProto:
        g = GraphBuilder(f"upsample_{mode}", seed=13)
        coarse = g.input("coarse", [batch, 256, 32, 32])
        lateral = g.input("lateral", [batch, 256, 64, 64])
        up = g.op("Resize", [coarse, "", g.const([1, 1, 2, 2])], mode=mode)
        g.output(g.op("Add", [up, lateral]), "y")
        return g.build()
    return build


def layernorm(batch: int) -> onnx.ModelProto:
    """Layer norm over [128 * batch, 768] (BERT-base's hidden size)."""
    g = GraphBuilder("layernorm", seed=10)
    g.output(layer_norm(g, g.input("x", [128 * batch, 768]), 768), "y")
    return g.build()


def matmul(m: int, k: int, n: int) -> Callable[[int], onnx.ModelProto]:
    """[m, k] input times a constant [k, n] weight (a linear layer without
    bias: the weight is known at compile time, as in a real model)."""
    def build(batch: int) -> onnx.ModelProto:
        g = GraphBuilder(f"gemm_{m}x{k}x{n}", seed=11)
        g.output(g.op("MatMul", [g.input("a", [m, k]), g.weight([k, n], k)]), "c")
        return g.build()
    return build


def batched_matmul(heads: int, m: int, k: int, n: int) -> Callable[[int], onnx.ModelProto]:
    """[batch, heads, m, k] times [batch, heads, k, n], both inputs:
    attention's activation x activation matmuls (Q K^T, P V)."""
    def build(batch: int) -> onnx.ModelProto:
        g = GraphBuilder(f"attention_{heads}x{m}x{k}x{n}", seed=13)
        a = g.input("a", [batch, heads, m, k])
        b = g.input("b", [batch, heads, k, n])
        g.output(g.op("MatMul", [a, b]), "c")
        return g.build()
    return build


def conv_layer(c_in: int, c_out: int, kernel: int, stride: int, groups: int,
               size: int) -> Callable[[int], onnx.ModelProto]:
    """One convolution with bias over [batch, c_in, size, size] ('same'
    padding), as the CNNs above have it: a layer class for the
    microbenchmarks."""
    def build(batch: int) -> onnx.ModelProto:
        g = GraphBuilder(f"conv_{c_in}x{c_out}_k{kernel}s{stride}g{groups}_{size}", seed=12)
        x = g.input("x", [batch, c_in, size, size])
        g.output(conv(g, x, c_in, c_out, kernel, stride, groups), "y")
        return g.build()
    return build


@dataclass(frozen=True)
class BenchModel:
    name: str
    batch: int
    build: Callable[[int], onnx.ModelProto] = field(repr=False, compare=False)
    description: str = ""
    # Tolerances for |kiln - ort| <= atol + rtol * |ort|.
    rtol: float = 1e-3
    atol: float = 1e-4
    # Included in --smoke runs (small enough to compile and run fast naive).
    smoke: bool = False

    @property
    def key(self) -> str:
        return f"{self.name}-b{self.batch}"


def _batched(name, builder, batches, description, smoke_batch=None, **kwargs):
    return [BenchModel(name, b, builder, description, smoke=(b == smoke_batch), **kwargs)
            for b in batches]


MODELS = [
    # At batch 1 the MLP streams its 36 MB of weights from memory (runs of k
    # at once, docs/backend.md under Packing); at batch 6 too, each panel
    # in one tile of all 6 rows (AVX2's 6 x 16).
    *_batched("mlp", mlp, (64, 6, 1), "MLP 1024-4096-1024-1000 (Gemm+Relu)",
              smoke_batch=64),
    *_batched("bert-layer", lambda b: bert_stack(b, 1, seed=2), (1, 8),
              "BERT-base encoder layer, seq 128", smoke_batch=1),
    *_batched("bert-4layer", lambda b: bert_stack(b, 4, seed=3), (1, 8),
              "4 BERT-base encoder layers, seq 128"),
    *_batched("bert-base", bert_base, (1, 8),
              "BERT-base: embeddings, 12 layers, pooler; seq 128"),
    *_batched("gpt2-block", gpt2_decoder_block, (1, 8),
              "GPT-2 decoder block, causal mask, seq 128", smoke_batch=1),
    *_batched("resnet-cnn", resnet_cnn, (1, 8),
              "ResNet-style CNN, 224x224, 4 basic blocks", smoke_batch=1),
    *_batched("mobilenet-v2", mobilenet_v2, (1, 8),
              "MobileNetV2, 224x224, depthwise convs", smoke_batch=1),
    BenchModel("resnext-block", 1, resnext_block,
               "ResNeXt bottleneck block, 56x56, 3x3 in 32 groups"),
    BenchModel("gelu-bias-relu", 1, gelu_bias_relu, "Relu(GELU_tanh(x + b)), 4096x1024",
               smoke=True),
    BenchModel("softmax", 1, softmax, "Softmax over [1536, 128]", smoke=True),
    BenchModel("layernorm", 1, layernorm, "LayerNormalization over [128, 768]",
               smoke=True),
    BenchModel("upsample-nearest", 1, upsample("nearest"),
               "Resize nearest x2 of [256, 32, 32] + lateral add (FPN)"),
    BenchModel("upsample-bilinear", 1, upsample("linear"),
               "Resize bilinear x2 of [256, 32, 32] + lateral add (FPN)"),
    # Depthwise windows whose filter taps do not fit in AVX2's registers.
    BenchModel("convnext-dw7x7", 1, conv_layer(96, 96, 7, 1, 96, 56),
               "ConvNeXt depthwise 7x7, 96 channels at 56"),
    BenchModel("efficientnet-dw5x5", 1, conv_layer(144, 144, 5, 1, 144, 56),
               "EfficientNet depthwise 5x5, 144 channels at 56"),
    *[BenchModel(f"gemm-{m}x{k}x{n}", 1, matmul(m, k, n), f"MatMul M={m} K={k} N={n}",
                 smoke=(m * k * n <= 128 * 768 * 768))
      for m, k, n in ((128, 768, 768), (128, 768, 3072), (128, 3072, 768),
                      (64, 1024, 4096), (512, 512, 512), (1024, 1024, 1024))],
]


# The convolution layer classes of the CNNs above and the attention
# matmuls of BERT's and GPT-2's layers (seq 128, 12 heads of 64), for the
# microbenchmarks (bench/micro.sh); not part of the side-by-side run.
LAYERS = [
    BenchModel(f"conv-{name}", 1, conv_layer(c_in, c_out, k, s, g, size), description)
    for name, c_in, c_out, k, s, g, size, description in (
        ("resnet-stem", 3, 64, 7, 2, 1, 224, "ResNet stem 7x7/2, 3 -> 64 at 224"),
        ("resnet-3x3-56", 64, 64, 3, 1, 1, 56, "ResNet 3x3, 64 -> 64 at 56"),
        ("resnet-3x3s2-56", 64, 128, 3, 2, 1, 56, "ResNet 3x3/2, 64 -> 128 at 56"),
        ("resnet-3x3-14", 256, 256, 3, 1, 1, 14, "ResNet 3x3, 256 -> 256 at 14"),
        ("resnet-3x3-7", 512, 512, 3, 1, 1, 7, "ResNet 3x3, 512 -> 512 at 7"),
        ("mobilenet-1x1-112", 16, 96, 1, 1, 1, 112, "MobileNetV2 1x1, 16 -> 96 at 112"),
        ("mobilenet-dw-s2-112", 96, 96, 3, 2, 96, 112,
         "MobileNetV2 depthwise 3x3/2, 96 channels at 112"),
        ("mobilenet-dw-14", 384, 384, 3, 1, 384, 14,
         "MobileNetV2 depthwise 3x3, 384 channels at 14"),
        ("mobilenet-1x1-7", 960, 160, 1, 1, 1, 7, "MobileNetV2 1x1, 960 -> 160 at 7"),
        ("resnext-3x3-56", 128, 128, 3, 1, 32, 56,
         "ResNeXt 3x3, 128 -> 128 in 32 groups at 56"),
        ("grouped-3x3-14", 256, 256, 3, 1, 4, 14, "3x3, 256 -> 256 in 4 groups at 14"),
    )
] + [
    BenchModel(f"attention-{name}", 1, batched_matmul(12, m, k, n), description)
    for name, m, k, n, description in (
        ("qk", 128, 64, 128, "attention Q K^T, 12 heads x 128 x 64 x 128"),
        ("pv", 128, 128, 64, "attention P V, 12 heads x 128 x 128 x 64"),
    )
]


# --------------------------------------------------------------------------
# Cost model: FLOPs and minimum bytes, from the graph
# --------------------------------------------------------------------------

# Ops that only move or reinterpret data: no arithmetic.
DATA_MOVEMENT = {"Reshape", "Transpose", "Flatten", "Identity", "Gather", "Slice",
                 "Concat", "Split", "Squeeze", "Unsqueeze", "Expand", "Cast"}
# Arithmetic per output element of ops that are more than one operation:
# softmax = max, subtract, exp, sum, divide; layer norm = mean, subtract,
# square, mean, rsqrt, multiply, scale, shift.
FLOPS_PER_ELEMENT = {"Softmax": 5, "LayerNormalization": 8}
ELEM_BYTES = {TensorProto.FLOAT: 4, TensorProto.INT64: 8, TensorProto.BOOL: 1,
              TensorProto.INT32: 4, TensorProto.FLOAT16: 2, TensorProto.DOUBLE: 8}


def _shapes(model: onnx.ModelProto) -> dict:
    """Static shape of every value of the (shape-inferred) model."""
    graph = model.graph
    shapes = {init.name: list(init.dims) for init in graph.initializer}
    for value in [*graph.input, *graph.value_info, *graph.output]:
        shapes[value.name] = [d.dim_value for d in value.type.tensor_type.shape.dim]
    return shapes


def node_flops(node: onnx.NodeProto, shapes: dict) -> int:
    """Floating-point operations of one node: 2*M*N*K for a contraction,
    2 * outputs * (C_in/groups * kernel area) for a convolution, the window
    size per output for pooling, one per input element for reductions,
    FLOPS_PER_ELEMENT or one per output element for the rest."""
    out = math.prod(shapes[node.output[0]])
    op = node.op_type
    if op == "MatMul":
        return 2 * out * shapes[node.input[0]][-1]
    if op == "Gemm":
        trans_a = next((a.i for a in node.attribute if a.name == "transA"), 0)
        k = shapes[node.input[0]][0 if trans_a else 1]
        return 2 * out * k + (out if len(node.input) > 2 else 0)
    if op == "Conv":
        weight = shapes[node.input[1]]
        return 2 * out * math.prod(weight[1:]) + (out if len(node.input) > 2 else 0)
    if op in ("MaxPool", "AveragePool"):
        kernel = next(a.ints for a in node.attribute if a.name == "kernel_shape")
        return out * math.prod(kernel)
    if op.startswith("Reduce") or op.startswith("Global"):
        return math.prod(shapes[node.input[0]])
    if op in DATA_MOVEMENT:
        return 0
    return FLOPS_PER_ELEMENT.get(op, 1) * out


def model_costs(model: onnx.ModelProto) -> dict:
    """FLOPs of the graph and the minimum bytes any implementation moves:
    read inputs and weights once, write outputs once."""
    graph = model.graph
    shapes = _shapes(onnx.shape_inference.infer_shapes(model))
    flops = sum(node_flops(node, shapes) for node in graph.node)

    def nbytes(values):
        return sum(math.prod(shapes[v.name]) * ELEM_BYTES[v.type.tensor_type.elem_type]
                   for v in values)

    weights = sum(numpy_helper.to_array(init).nbytes for init in graph.initializer)
    return {"flops": flops, "bytes": nbytes(graph.input) + weights + nbytes(graph.output),
            "weight_bytes": weights}


def io_signature(model: onnx.ModelProto) -> dict:
    def describe(values):
        return [{"name": v.name,
                 "dtype": onnx.helper.tensor_dtype_to_np_dtype(
                     v.type.tensor_type.elem_type).name,
                 "shape": [d.dim_value for d in v.type.tensor_type.shape.dim]}
                for v in values]
    return {"inputs": describe(model.graph.input), "outputs": describe(model.graph.output)}


# --------------------------------------------------------------------------
# Cache
# --------------------------------------------------------------------------

def _generator_fingerprint() -> str:
    """Changes whenever this file does, so edited generators rebuild."""
    with open(os.path.abspath(__file__), "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()[:16]


def ensure_model(spec: BenchModel, cache_dir: str = DEFAULT_CACHE_DIR) -> dict:
    """Generates spec's model into the cache unless an up-to-date copy is
    there. Returns its metadata: paths, FLOPs, bytes, signature, tolerance."""
    os.makedirs(cache_dir, exist_ok=True)
    onnx_path = os.path.join(cache_dir, spec.key + ".onnx")
    meta_path = os.path.join(cache_dir, spec.key + ".json")
    fingerprint = _generator_fingerprint()
    if os.path.exists(onnx_path) and os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("fingerprint") == fingerprint:
            return meta
    model = spec.build(spec.batch)
    onnx.save(model, onnx_path)
    meta = {"key": spec.key, "name": spec.name, "batch": spec.batch,
            "description": spec.description, "onnx": onnx_path,
            "rtol": spec.rtol, "atol": spec.atol, "fingerprint": fingerprint,
            **model_costs(model), **io_signature(model)}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def select_layers(pattern: str = "") -> list:
    """The microbenchmarks' convolution layers whose key matches `pattern`."""
    regex = re.compile(pattern)
    return [m for m in LAYERS if regex.search(m.key)]


def select_models(pattern: str = "", smoke: bool = False) -> list:
    """Models whose key matches `pattern` (re.search), smoke models only if
    `smoke`."""
    regex = re.compile(pattern or "")
    return [m for m in MODELS if regex.search(m.key) and (m.smoke or not smoke)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--filter", default="", help="regex over model keys")
    parser.add_argument("--smoke", action="store_true", help="only the smoke models")
    parser.add_argument("--list", action="store_true", help="list, do not generate")
    parser.add_argument("--cache-dir", default=DEFAULT_CACHE_DIR)
    args = parser.parse_args()
    for spec in select_models(args.filter, args.smoke):
        if args.list:
            print(f"{spec.key:24} {spec.description}")
            continue
        meta = ensure_model(spec, args.cache_dir)
        print(f"{spec.key:24} {meta['flops'] / 1e9:9.3f} GFLOP "
              f"{meta['bytes'] / 1e6:9.1f} MB  {meta['onnx']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
