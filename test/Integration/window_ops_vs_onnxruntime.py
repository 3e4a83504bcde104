#!/usr/bin/env python3
"""Convolution and pooling code generation on each of its paths, for the
AVX-512 (--mcpu=native on an AVX-512 host) and AVX2 (--mcpu=x86-64-v3)
tiles, checked against ONNX Runtime:

- dense convolutions as implicit GEMMs over the input laid out with one row
  pitch (no im2col; the pitch's extra columns dropped when the epilogue
  stores), with 9 taps unrolled and 49 in a loop over the window's rows;
- dense convolutions as windowed rows: the output pixels as the matmul's
  rows, read in place from the padded input (each step of k a broadcast of
  the pixel's window value at its tap), the filters packed transposed at
  compile time, each tile transposed in registers and stored with bias,
  residual and ReLU applied; ragged row tiles (1 row; 3 rows stored masked),
  ragged panels, 9 taps unrolled and 25 or 144 in a loop over the window's
  rows, strides and dilations per dim, one image (the unit batch dropped)
  and two (the padded input staged per image), one input channel, one
  filter, a 1x1 output, an input that is a slice of channels;
- strided 1x1 convolutions and short reductions as im2col + matmul, with
  the output channels as rows and with the output pixels as rows (the
  transposed im2col matrix read in place);
- windows that stride along the row with several taps (a stride-2 3x3
  convolution, depthwise convolution, max and average pool), whose input is
  split into phases, including ceil_mode's extra padding and a dilated
  window whose taps all read one phase;
- a strided 1x1 convolution (one tap per row: not split);
- patch stems (4x4 / 4, 3x3 / 3): implicit GEMMs over phase planes of
  stride 3 or 4;
- 1x1 convolutions over long reductions (128 channels in or more, with
  --long-reduction=128), the input packed per call (per image over a batch
  of large images) with the pixels as rows (the row tiles sharing cache
  lines copied together, with the tiles left over and a ragged one) and
  with the channels as rows;
- a 1x1 convolution's groups of pixels run band by band ahead of the
  banded depthwise convolution that reads them;
- depthwise convolutions (kiln-lower-depthwise): narrow planes whose rows
  share vectors, wide rows with a tail group, stride 2 deinterleaved with
  ragged chunks, a 5x5 window with asymmetric pads and row-only stride,
  dilation, no padding; bias, ReLU6 and a residual add on the registers;
  5x5 and 7x7 windows whose taps the FMAs read from memory (8 rows a group);
- 3x3 / 1 dense convolutions as Winograd F(2x2, 3x3): whole and masked
  vectors of tiles, the epilogue on the output transform, odd outputs, a
  batch in groups of images;
- grouped convolutions: split into one dense convolution per group, and
  (more groups, or small groups of one image) as a matmul batched over the
  groups, an implicit GEMM or windowed rows where a dense one would be;
- 2-D f32 max and average pools through the same kernels (-inf padding,
  the window counts' division on the registers, ceil_mode).

Each case runs with a batch of 2, on 1 and 2 threads. With --emulate-gpu,
the same cases go through the CUDA target's mapping, run on the CPU. With
--split-batch, every batched case runs image by image (kiln-split-batch down
to 1 byte an image), so each lowering path also sees its ops per image; with
--lanes too, each image on a lane of its own (kiln-form-lanes: on 2 threads
the two images at once, each on one thread).

Usage: window_ops_vs_onnxruntime.py BIN_DIR [--emulate-gpu | --split-batch [--lanes]]
"""

import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from e2e_vs_onnxruntime import check  # noqa: E402

RTOL, ATOL = 1e-4, 2e-4
CPUS = ["native", "x86-64-v3"]
BATCH = 2


class Case:
    def __init__(self, name, channels, size, batch=BATCH):
        self.name = name
        self.rng = np.random.default_rng(len(name))
        self.shape = [batch, channels, size, size]
        self.nodes, self.initializers = [], []
        self.value = "X"
        self.channels = {"X": channels}
        # Graph inputs besides X: filters given at run time.
        self.inputs = []
        # Extra kiln-compile flags (to keep a case on the path it tests).
        self.flags = []

    def constant(self, name, array):
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def op(self, op_type, inputs, channels=None, **attrs):
        out = f"t{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        self.channels[out] = channels or self.channels[inputs[0]]
        self.value = out
        return out

    def conv(self, out_channels, kernel, stride=1, pad=0, dilation=1, group=1,
             bias=True, source=None, runtime_filters=False):
        """A square convolution; `stride` and `pad` may be lists (per dim,
        ONNX's [top, left, bottom, right] pads); `runtime_filters`: the
        filters are a graph input."""
        source = source or self.value
        strides = stride if isinstance(stride, list) else [stride, stride]
        pads = pad if isinstance(pad, list) else [pad] * 4
        # Unit-variance outputs (weights scaled by 1/sqrt(fan-in)), so that
        # stacked convolutions compare at the same relative tolerance.
        fan_in = self.channels[source] // group * kernel * kernel
        shape = (out_channels, self.channels[source] // group, kernel, kernel)
        if runtime_filters:
            w = f"w{len(self.nodes)}"
            self.inputs.append(helper.make_tensor_value_info(
                w, TensorProto.FLOAT, list(shape)))
        else:
            w = self.constant(f"w{len(self.nodes)}",
                              self.rng.standard_normal(shape) / np.sqrt(fan_in))
        inputs = [source, w]
        if bias:
            inputs.append(self.constant(f"b{len(self.nodes)}",
                                        self.rng.standard_normal(out_channels)))
        return self.op("Conv", inputs, out_channels, kernel_shape=[kernel, kernel],
                       strides=strides, pads=pads,
                       dilations=[dilation, dilation], group=group)

    def model(self):
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, self.shape)]
            + self.inputs,
            [helper.make_tensor_value_info(self.value, TensorProto.FLOAT, None)],
            self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def pixels_as_rows():
    # 64 channels x 49 pixels, 576 steps of reduction: windowed rows (7 tiles
    # of 7 rows), stored transposed by the kernel with bias, a residual add
    # (a 1x1 convolution, pixels as rows read in place) and ReLU applied on
    # the registers.
    case = Case("pixels_as_rows", 64, 7)
    case.flags = ["--winograd=false"]  # a 3x3 / 1 that Winograd would take
    skip = case.conv(64, 1)
    case.conv(64, 3, pad=1, source="X")
    case.op("Relu", [case.op("Add", [case.value, skip])])
    return case


def windowed_rows_k_slices():
    # Windowed rows whose panels outgrow the L2 budget (--l2-bytes) compute
    # k in slices of whole channels: 3x3 203 -> 40 at 7x7 (AVX2: panels of
    # 24 and 16 columns, 2 slices of 101 and 102 channels; AVX-512: panels
    # of 32 and a masked 8, 3 slices, the last of 69), the partial sums in
    # the product's temporary, the last slice storing C^T with bias and
    # ReLU; both images' tiles in each slice's parallel loop. Then 3x3 203
    # -> 40 over the unpadded input (25 pixels: a ragged row tile of 1).
    case = Case("windowed_rows_k_slices", 203, 7)
    case.flags = ["--winograd=false", "--l2-bytes=524288"]
    case.conv(40, 3, pad=1)
    padded = case.op("Relu", [case.value])
    unpadded = case.conv(40, 3, source="X")
    case.op("Add", [unpadded, case.op("MaxPool", [padded], kernel_shape=[3, 3])])
    return case


def pixels_as_rows_ragged_panel():
    # 72 channels (two panels and a masked third) x 49 pixels, strided, 144
    # steps of reduction.
    case = Case("pixels_as_rows_ragged_panel", 16, 13)
    case.conv(72, 3, stride=2, pad=1)
    return case


def pixels_as_rows_masked_tile():
    # 5 x 7 = 35 pixels (pads only left and right): 4 tiles of 8 and one of
    # 3 rows, transposed as 4 and stored masked to 3 pixels (on AVX2, every
    # 6-row tile is transposed as 8 and stored masked); 64 channels, 288
    # steps of reduction, ReLU.
    case = Case("pixels_as_rows_masked_tile", 32, 7)
    case.op("Relu", [case.conv(64, 3, pad=[0, 1, 0, 1])])
    return case


def im2col_large_window():
    # 3 -> 24 channels, 7x7 / 2 at 28x28 (14-wide rows: no implicit GEMM
    # over the pitch): a short reduction (147) whose pixels as rows would
    # not fill the tiles better keeps im2col, split into phases, with the
    # channels as rows; 196 pixels (a ragged last panel).
    case = Case("im2col_large_window", 3, 28)
    case.op("Relu", [case.conv(24, 7, stride=2, pad=3)])
    return case


def windowed_rows_strided():
    # 64 channels at 34x34: a strided 3x3 over 16+ channels (K = 576) takes
    # windowed rows although its 17-wide rows would suit the implicit GEMM:
    # 289 pixels (ragged row tiles), 40 channels (a panel and a masked
    # one), ReLU. Then 5x5 / 2 with asymmetric pads (25 taps: a
    # loop over the window's rows; 9 x 8 pixels), 3x3 strided along the
    # columns only, dilated 2, no bias, and 3x3 / 2 without padding (the
    # batch's input read where it is, not staged per image).
    case = Case("windowed_rows_strided", 64, 34)
    case.op("Relu", [case.conv(40, 3, stride=2, pad=1)])
    case.conv(40, 5, stride=2, pad=[2, 1, 2, 2])
    case.conv(24, 3, stride=[1, 2], pad=2, dilation=2, bias=False)
    case.conv(16, 3, stride=2)
    return case


def windowed_rows_single_image():
    # One image: the matmul and its transposing copy lose the unit batch dim
    # (a [pixels, channels] product, still stored transposed by the tiles).
    # 32 -> 64 channels, 3x3 / 2 at 14x14 (49 pixels) with a residual (a
    # strided 1x1 convolution, im2col with the pixels as rows) and ReLU.
    case = Case("windowed_rows_single_image", 32, 14, batch=1)
    skip = case.conv(64, 1, stride=2)
    case.conv(64, 3, stride=2, pad=1, source="X")
    case.op("Relu", [case.op("Add", [case.value, skip])])
    return case


def unit_dims():
    # One image of one channel (unit dims kept for kiln-lower-matmul): 3x3
    # over 28x28 as the implicit GEMM over the pitch (C = 1); then windowed
    # rows: 3x3 / 2 (K = 576), and 5x5 / 2 with one filter (O = 1, 25 taps
    # in a loop over the window's rows).
    case = Case("unit_dims", 1, 28, batch=1)
    case.op("Relu", [case.conv(64, 3, pad=1)])
    case.conv(32, 3, stride=2, pad=1)
    case.conv(1, 5, stride=2, pad=2)
    return case


def one_pixel():
    # A 12x12 window over the whole 12x12 plane: windowed rows for a 1x1
    # output (a tile of one row), 144 taps in a loop over the window's rows.
    case = Case("one_pixel", 32, 12, batch=1)
    case.conv(4, 12)
    return case


def windowed_rows_sliced_input():
    # A convolution over a slice of its input's channels, unpadded: windowed
    # rows read a dense copy of the strided view (read in place, it ran as
    # scalar loops).
    case = Case("windowed_rows_sliced_input", 64, 14)
    for name, value in (("starts", [16]), ("ends", [48]), ("axes", [1])):
        case.initializers.append(numpy_helper.from_array(np.array(value, np.int64), name))
    case.op("Slice", ["X", "starts", "ends", "axes"], channels=32)
    case.conv(64, 3, stride=2)
    return case


def channels_as_rows():
    # A strided 1x1 convolution as im2col (the subsampled input) + matmul:
    # 24 channels x 196 pixels, the channels as rows, a ragged last panel
    # (196 = 6 x 32 + 4).
    case = Case("channels_as_rows", 16, 28)
    case.op("Relu", [case.conv(24, 1, stride=2)])
    return case


def strided_windows():
    case = Case("strided_windows", 6, 15)
    case.op("Relu", [case.conv(6, 3, stride=2, pad=1, group=6)])
    case.op("MaxPool", [case.value], kernel_shape=[3, 3], strides=[2, 2],
            pads=[1, 1, 1, 1], ceil_mode=1)
    return case


def average_pool():
    case = Case("average_pool", 4, 11)
    case.op("AveragePool", [case.value], kernel_shape=[3, 3], strides=[2, 2],
            pads=[1, 1, 1, 1], count_include_pad=0)
    return case


def dilated_and_pointwise():
    # Dilation 2 at stride 2: every tap reads phase 0. Then a strided 1x1
    # convolution (not split).
    case = Case("dilated_and_pointwise", 4, 13)
    case.conv(8, 3, stride=2, dilation=2, pad=2, bias=False)
    case.conv(16, 1, stride=2)
    return case


def pointwise_long_reductions():
    # 1x1 convolutions over at least 128 input channels, whose operand read
    # one row per step of k is packed per call on full-rate FMAs (AVX2,
    # Intel's AVX-512) from --long-reduction steps on (Zen 1-3's 128, given
    # here so that every host takes the path): pixels as rows at 7x7 (A,
    # the input read transposed), 160 -> 200 with ReLU6 (49 pixels: a last
    # row tile of 1), then 200 -> 130 (a ragged last panel).
    case = Case("pointwise_long_reductions", 160, 7, batch=1)
    case.flags = ["--long-reduction=128"]
    case.conv(200, 1)
    relu6(case)
    case.conv(130, 1)
    return case


def pointwise_long_reductions_batch():
    # The same over a batch of 2: 256 -> 200 (2.5M multiply-adds an image)
    # packs A per image, in a loop over the batch; 200 -> 40 (0.4M, the
    # channels as rows) reads B in place, the batch's tiles one parallel
    # loop.
    case = Case("pointwise_long_reductions_batch", 256, 7)
    case.flags = ["--long-reduction=128"]
    case.conv(200, 1)
    relu6(case)
    case.conv(40, 1)
    return case


def pointwise_long_reductions_channels():
    # Channels as rows at 28x28: 144 -> 24 packs B (the input, 784 pixels a
    # row) per call.
    case = Case("pointwise_long_reductions_channels", 144, 28, batch=1)
    case.flags = ["--long-reduction=128"]
    case.conv(24, 1)
    return case


def pointwise_long_reductions_ragged_groups():
    # Pixels as rows at 13x13 (169 pixels), 128 -> 48 with ReLU: A (the
    # input read transposed) packed per call with the row tiles whose values
    # share a cache line copied together; on AVX2 (4-row tiles) 10 groups
    # of 4 tiles, then the 2 tiles left over and the ragged tile of 1 row
    # together.
    case = Case("pointwise_long_reductions_ragged_groups", 128, 13, batch=1)
    case.flags = ["--long-reduction=128"]
    case.conv(48, 1)
    case.op("Relu", [case.value])
    return case


def pointwise_relu_packed_by_items(name, size, out_channels):
    # A 1x1 convolution from 144 channels with its channels as rows and B
    # (the input, its pixels as columns) packed per call on full-rate FMAs
    # (--long-reduction=128), bias and ReLU on the tile.
    case = Case(name, 144, size)
    case.flags = ["--long-reduction=128"]
    case.conv(out_channels, 1)
    case.op("Relu", [case.value])
    return case


def pointwise_panels_packed_by_items():
    # Each work item packs its panel of B into a stack slot of its own.
    # 144 -> 96 at 30x30 (900 pixels: 56 panels of 16 and a ragged one of 4
    # on AVX2), 2 images in one parallel loop.
    return pointwise_relu_packed_by_items("pointwise_panels_packed_by_items", 30, 96)


def pointwise_few_rows_packed_by_items():
    # As above with 10 output channels at 39x39 (2.2M multiply-adds an
    # image, so B is otherwise packed whole per call): each item covers all
    # rows (a full tile and a ragged one of 4) of one of 96 panels (the last
    # 1 column wide) and packs its panel whatever the rows.
    return pointwise_relu_packed_by_items("pointwise_few_rows_packed_by_items", 39, 10)


def relu6(case):
    if not any(i.name == "relu6_low" for i in case.initializers):
        case.constant("relu6_low", np.array(0.0))
        case.constant("relu6_high", np.array(6.0))
    return case.op("Clip", [case.value, "relu6_low", "relu6_high"])


def depthwise_narrow():
    # 7x7 planes: with 16 lanes the 9-wide pitch puts all 7 rows in one
    # group of 4 vectors, lanes dropped at every row end; with 8 lanes
    # (x86-64-v3) rows of whole vectors, a group of 4 rows and a tail group
    # of 3; bias and ReLU6 on registers.
    case = Case("depthwise_narrow", 12, 7)
    case.conv(12, 3, pad=1, group=12)
    relu6(case)
    return case


def depthwise_laid_out_ahead():
    # 7x7 planes at stride 1 with 3x3 windows are laid out one plane ahead,
    # alternately into two buffers, the planes of a task in pairs: 2 x 100
    # planes over 64 tasks gives tasks of 3 and 4 planes (an odd one left
    # after the pairs; 1 and 2 with --split-batch): a 3x3 max pool at stride
    # 1 on the input (negative values: the -inf padding of both buffers
    # matters), a 3x3 depthwise with bias and ReLU6, then a 5x5 depthwise
    # (one buffer).
    case = Case("depthwise_laid_out_ahead", 100, 7)
    case.op("MaxPool", [case.value], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    case.conv(100, 3, pad=1, group=100)
    relu6(case)
    case.conv(100, 5, pad=2, group=100, bias=False)
    return case


def depthwise_wide_residual():
    # 30-wide rows: rows of whole vectors (pitch 32), 6 rows per group (3
    # with 8 lanes) sharing their window rows' loads, a partial last vector
    # per row (14 of 16 lanes); a residual add of the input after the bias.
    case = Case("depthwise_wide_residual", 5, 30)
    case.conv(5, 3, pad=1, group=5)
    case.op("Add", [case.value, "X"])
    return case


def depthwise_strided():
    # Stride 2 on 70-wide rows: two full deinterleaved chunks (AVX-512) and a
    # ragged one; odd height; no bias (the plain store).
    case = Case("depthwise_strided", 4, 70)
    case.conv(4, 3, stride=2, pad=1, group=4, bias=False)
    return case


def depthwise_odd_windows():
    # A 5x5 window, stride 2 by rows only, asymmetric pads; then a dilated
    # 3x3 at stride 2 whose taps all read the even phase; then a 3x3 with no
    # padding at all (the input read in place).
    case = Case("depthwise_odd_windows", 6, 23)
    case.conv(6, 5, stride=[2, 1], pad=[2, 1, 1, 2], group=6)
    case.conv(6, 3, stride=2, pad=2, dilation=2, group=6)
    case.conv(6, 3, group=6)
    return case


def depthwise_large_windows():
    # Windows whose filter taps do not fit in registers (7x7 on AVX-512 and
    # AVX2, 5x5 on AVX2): groups of 8 output rows sharing each load, the
    # taps read from memory. ConvNeXt's 7x7 with padding 3 at 32 x 32 (4
    # groups of 8 rows), with the bias and a ReLU on the registers; then 5x5
    # / 1 with padding 2 at 32 x 32, then 5x5 / 2 (16 x 16 out: 2 groups).
    case = Case("depthwise_large_windows", 8, 32)
    case.conv(8, 7, pad=3, group=8)
    case.op("Relu", [case.value])
    case.conv(8, 5, pad=2, group=8)
    case.conv(8, 5, stride=2, pad=2, group=8)
    return case


def depthwise_banded():
    # Planes of >= 56 output rows are split into 4 bands of rows, each task
    # laying out the input rows its band's windows read (overlapping the
    # next band's): 3x3 / 1 with a residual add, then a dilated 3x3 whose
    # bands share 4 input rows. One image (several are not banded).
    case = Case("depthwise_banded", 3, 60, batch=1)
    case.conv(3, 3, pad=1, group=3)
    case.op("Add", [case.value, "X"])
    case.conv(3, 3, pad=2, dilation=2, group=3)
    return case


def banded_strided():
    # Bands at stride 2: ResNet's max pool (3x3 / 2, pad 1) from 115 rows to
    # 58, each band's input rows split between the two row phases; a 3x3 / 1
    # over its 58 rows in rows of whole vectors (8 rows per group, a tail
    # group of 2, a partial vector of 10 lanes per row); then a 5x5
    # depthwise convolution (stride 2, pad 2, no bias) from 116 rows to 58.
    case = Case("banded_strided", 2, 115, batch=1)
    case.op("MaxPool", [case.value], kernel_shape=[3, 3], strides=[2, 2],
            pads=[1, 1, 1, 1])
    case.conv(2, 3, pad=1, group=2)
    case.conv(2, 5, stride=2, pad=2, group=2, bias=False, source="X")
    return case


def large_inputs():
    # Inputs of 2.4 MB (2 x 24 planes of 112 x 112), which window ops
    # prefetch 8 KiB ahead of their layout (into the next planes, clamped at
    # the input's end): a depthwise 3x3 / 1 (copied rows) and ReLU6, then a
    # 3x3 / 2 (deinterleaved rows) over its result, added to a max pool of
    # the input.
    case = Case("large_inputs", 24, 112)
    case.conv(24, 3, pad=1, group=24)
    relu6(case)
    strided = case.conv(24, 3, stride=2, pad=1, group=24)
    pooled = case.op("MaxPool", ["X"], kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1])
    case.op("Add", [strided, pooled])
    return case


def expansion_interleaved():
    # 1x1 convolutions over few channels (K <= 64: each item sweeps one row
    # tile of channels along a group of pixels) feeding banded depthwise
    # layers: kiln-lower-window-ops runs each matmul's groups of pixels band
    # by band, ahead of the bands that read them. 12 -> 40 at 116 x 116 (the
    # last group ragged) into a 3x3 / 2; then 40 -> 56 at 58 x 58 into a
    # 3x3 / 1, and the expansion's output (ReLU6 on its tile) read again
    # after the depthwise layer by an Add.
    case = Case("expansion_interleaved", 12, 116, batch=1)
    case.conv(40, 1)
    relu6(case)
    case.conv(40, 3, stride=2, pad=1, group=40)
    case.conv(56, 1)
    expanded = relu6(case)
    case.conv(56, 3, pad=1, group=56)
    case.op("Add", [case.value, expanded])
    return case


def implicit_gemm():
    # Dense convolutions as implicit GEMMs (rows >= 16 wide): 3x3 / 1 with a
    # residual add and ReLU on the registers (stored as two runs per vector
    # across the pitch's dropped columns); 3x3 / 2 on odd sizes (a ragged
    # last panel); a dilated 3x3; then 7x7 / 2 (49 taps: a loop over the
    # window's rows) without bias, the model's output. At stride 1 the pitch
    # is the width plus the larger pad (a row's right padding is the next
    # row's left padding).
    case = Case("implicit_gemm", 5, 36)
    skip = case.value
    case.conv(5, 3, pad=1)
    case.op("Relu", [case.op("Add", [case.value, skip])])
    case.conv(12, 3, stride=2, pad=1)
    case.conv(12, 3, pad=2, dilation=2)
    # Asymmetric pads (left 2, right 0): the zeros between rows serve both.
    case.conv(12, 3, pad=[1, 2, 1, 0])
    case.conv(7, 7, stride=2, pad=3, bias=False)
    return case


def patch_stems():
    # Implicit GEMMs whose input is laid out in phase planes of stride 4: a
    # 4x4 / 4 patch stem (ConvNeXt's, Swin's) at 66 x 66 (the last two
    # columns and rows unread; 16 x 16 out), then 3x3 / 3 with padding to
    # 6 x 6 (pixels as rows).
    case = Case("patch_stems", 3, 66)
    case.conv(24, 4, stride=4)
    case.op("Relu", [case.value])
    case.conv(8, 3, stride=3, pad=1)
    return case


def stride_three_stem():
    # 3x3 / 3 over 50 x 50 (16 x 16 out, an implicit GEMM over phase planes
    # of stride 3), one image.
    case = Case("stride_three_stem", 4, 50, batch=1)
    case.conv(8, 3, stride=3)
    return case


def winograd():
    # 3x3 / 1 convolutions as Winograd F(2x2, 3x3) (input and output tiles
    # transformed by kiln-lower-winograd-transforms, 16 matmuls with the
    # filters transformed at compile time): 32 -> 48 channels at 36x36 (18
    # tiles per row: one whole vector and a masked one), ReLU on the output
    # transform's registers; 48 -> 48 with a residual add (a 1x1
    # convolution) and ReLU; no padding, 34x34 (17 tiles per row; 48
    # channels of 256 tiles, 48 KiB a transformed matrix: written with a
    # spare channel, which the matmul skips); then asymmetric pads and an
    # odd output (33x33: the last tile row and column computed and dropped,
    # the epilogue as its own pass).
    case = Case("winograd", 32, 36)
    skip = case.conv(48, 1)
    case.op("Relu", [case.conv(48, 3, pad=1, source="X")])
    case.conv(48, 3, pad=1)
    case.op("Relu", [case.op("Add", [case.value, skip])])
    case.conv(40, 3)
    case.conv(24, 3, pad=[1, 0, 0, 1])
    return case


def winograd_groups():
    # 64 channels at 56x56: one image's transformed tiles are 3.2 MB, so the
    # batch goes one image at a time (a loop writing each image's part of
    # the result in place; a spare channel after each transformed matrix);
    # the residual add and ReLU after the loop.
    case = Case("winograd_groups", 64, 56)
    case.conv(64, 3, pad=1)
    case.op("Relu", [case.op("Add", [case.value, "X"])])
    return case


def grouped_split():
    # Grouped convolutions of up to 32 groups run as one dense convolution
    # per group (kiln-split-grouped-convs): 3x3 / 1 16 -> 24 in 4 groups
    # (4 channels in, 6 out each) with ReLU (run per group), then 1x1 24 ->
    # 8 in 2 groups without bias, whose result a ReLU6 and the next
    # convolution both read, then 3x3 / 2 8 -> 8 in 4 groups (2 channels
    # each), added to the ReLU6.
    case = Case("grouped_split", 16, 20)
    case.conv(24, 3, pad=1, group=4)
    case.op("Relu", [case.value])
    pointwise = case.conv(8, 1, group=2, bias=False)
    clipped = relu6(case)
    case.conv(8, 3, stride=2, pad=1, group=4, source=pointwise)
    case.op("Add", [case.value, case.op("MaxPool", [clipped], kernel_shape=[2, 2],
                                         strides=[2, 2])])
    return case


def grouped_batched():
    # More groups than kiln-split-grouped-convs splits (40 of 2 channels):
    # one image as im2col and a matmul batched over the groups, the filters
    # packed at compile time one matrix per group; 3x3 / 2 with bias, then
    # 3x3 / 1 with dilation 2.
    case = Case("grouped_batched", 80, 15, batch=1)
    case.conv(80, 3, stride=2, pad=1, group=40)
    case.conv(80, 3, pad=2, dilation=2, group=40)
    return case


def grouped_batched_kernels():
    # One image of groups of at most 16 input channels at unit strides is
    # not split: its matmul batched over the groups takes the dense
    # convolutions' kernels. 3x3 / 1 48 -> 48 in 6 groups at 20x20 (an
    # implicit GEMM over the laid-out input), a ReLU on its tiles, then 3x3 /
    # 3 to 7x7 (split: strided), 3x3 / 1 32 -> 64 in 2 groups at 7x7 (16
    # channels a group: windowed rows, each group's filters packed at
    # compile time as B), and 1x1 64 -> 64 in 4 groups (a matmul per group
    # reading the input in place).
    case = Case("grouped_batched_kernels", 48, 20, batch=1)
    case.conv(48, 3, pad=1, group=6)
    case.op("Relu", [case.value])
    case.conv(32, 3, stride=3, pad=1, group=2)
    case.conv(64, 3, pad=1, group=2)
    case.conv(64, 1, group=4, bias=False)
    return case


def grouped_parallel_images():
    # 16 groups of 2 channels, one image: implicit GEMMs whose groups are
    # laid out and run in parallel, each task writing its group's phase
    # planes (3x3 / 2 at 34x34 -> 17x17), then its padded rows (3x3 / 1).
    case = Case("grouped_parallel_images", 32, 34, batch=1)
    case.conv(32, 3, stride=2, pad=1, group=16)
    case.op("Relu", [case.value])
    case.conv(32, 3, pad=1, group=16)
    return case


def runtime_filters():
    # Filters computed at run time (here: graph inputs) are not packed: an
    # implicit GEMM reads them in place as A, the [O, C * 9] matrix of the
    # [O, C, 3, 3] filters (it had read them as [O * C * 3, 3]). Dense 8 ->
    # 8 at 20x20, then in 2 groups (the groups the batch, A [2 * 4, 4 * 9]).
    case = Case("runtime_filters", 8, 20, batch=1)
    case.conv(8, 3, pad=1, runtime_filters=True)
    case.conv(8, 3, pad=1, group=2, runtime_filters=True)
    return case


def pools():
    # ResNet's max pool (3x3 / 2, pad 1) on 40-wide rows (a full 32-column
    # deinterleave chunk and a ragged one), then average pools 2x2 / 2 and
    # 3x3 / 1 with padding counted, then one 5x5 window over the whole plane.
    case = Case("pools", 3, 40)
    case.op("MaxPool", [case.value], kernel_shape=[3, 3], strides=[2, 2],
            pads=[1, 1, 1, 1])
    case.op("AveragePool", [case.value], kernel_shape=[2, 2], strides=[2, 2])
    case.op("AveragePool", [case.value], kernel_shape=[3, 3], strides=[1, 1],
            pads=[1, 1, 1, 1], count_include_pad=1)
    case.op("AveragePool", [case.value], kernel_shape=[5, 5])
    return case


CASES = [pixels_as_rows, windowed_rows_k_slices, pixels_as_rows_ragged_panel, pixels_as_rows_masked_tile,
         im2col_large_window, windowed_rows_strided,
         windowed_rows_single_image, unit_dims, one_pixel,
         windowed_rows_sliced_input, channels_as_rows,
         strided_windows, average_pool, dilated_and_pointwise,
         pointwise_long_reductions, pointwise_long_reductions_batch,
         pointwise_long_reductions_channels,
         pointwise_long_reductions_ragged_groups, pointwise_panels_packed_by_items,
         pointwise_few_rows_packed_by_items,
         depthwise_narrow, depthwise_laid_out_ahead,
         depthwise_wide_residual, depthwise_strided, depthwise_odd_windows,
         depthwise_large_windows,
         depthwise_banded, banded_strided, large_inputs, expansion_interleaved,
         implicit_gemm, patch_stems, stride_three_stem, winograd,
         winograd_groups, grouped_split, grouped_batched,
         grouped_batched_kernels, grouped_parallel_images, runtime_filters,
         pools]


def main():
    bin_dir = sys.argv[1]
    targets = ([("gpu", ["--emulate-gpu"])] if "--emulate-gpu" in sys.argv[2:]
               else [(cpu, [f"--mcpu={cpu}"]) for cpu in CPUS])
    if "--split-batch" in sys.argv[2:]:
        lanes = 2 if "--lanes" in sys.argv[2:] else 1
        targets = [(f"{target}.split", flags + ["--split-batch-bytes=1",
                                                 f"--split-batch-lanes={lanes}"])
                   for target, flags in targets]
    results = []
    with tempfile.TemporaryDirectory() as work:
        for target, flags in targets:
            for build in CASES:
                case = build()
                results.append(check(f"{case.name}.{target}", case.model(), {}, bin_dir,
                                     work, flags + case.flags, RTOL, ATOL))
    print(f"{sum(results)} of {len(results)} window ops match ONNX Runtime "
          f"(rtol {RTOL}, atol {ATOL})")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
