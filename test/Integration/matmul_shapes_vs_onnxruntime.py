#!/usr/bin/env python3
"""Matmul code generation (kiln-lower-matmul) on every tail path, for the
host's tile (--mcpu=native), the AVX2 tile (--mcpu=x86-64-v3, and with
--long-reduction=128 as on Zen 1-3: operands packed per call), both
AVX-512 tiles (8 x 3 vectors, 2 steps of k per iteration; 8 x 2, 1 step)
and a 6 x 4-vector tile (64-column panels, so other ragged-N paths; 3 steps
of k per iteration) whatever the host takes, and the host's tile with a
4 KiB L2 (--l2-bytes=4096: the work items in the other order), a 512 KiB
L2 (slices of k) and an 8- and a 12-way L1 (A packed per call or read in
place), checked
against ONNX Runtime: ragged M and N (fewer rows
than the tile, a masked last vector, a panel narrower than one vector),
K = 1, weights packed at compile time and B packed per call, a batch of A
against shared weights (one tall matmul), batched A x batched B (attention)
and a shared A against batched B, a matmul with a fused epilogue, a short
reduction whose work items sweep along C's rows, matmuls big enough to run
on the thread pool (each case runs on 1 and 2 threads), A a column slice
of the input (a strided view, copied dense first), and attention scores
against a transposed K (the transposing copy's whole and ragged blocks),
one or two rows against large constant weights (runs of k at once), and
six rows in AVX2's 6 x 16 tiles.

Usage: matmul_shapes_vs_onnxruntime.py BIN_DIR
"""

import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from e2e_vs_onnxruntime import check  # noqa: E402

# Summation order differs from ONNX Runtime's: allow a few ulps of the
# largest partial sums.
RTOL, ATOL = 1e-4, 2e-4
# (name, kiln-compile flags): the host's tile, AVX2's, and others.
TARGETS = [
    ("native", ["--mcpu=native"]),
    ("x86-64-v3", ["--mcpu=x86-64-v3"]),
    # AVX2 as Zen 1-3 take it, whatever the host: operands read one row per
    # step packed per call from 128 steps of k (attention_items_pack_b's
    # panels packed by its work items).
    ("x86-64-v3-long-128", ["--mcpu=x86-64-v3", "--long-reduction=128"]),
    # Both AVX-512 tiles whatever the host's: full-rate cores' 8 x 48 with 2
    # steps of k per iteration (odd K leaves single steps) and Zen 4's 8 x 32
    # with 1; and a 6 x 4 (64-column panels, so other ragged-N paths) with 3.
    ("native-8x3-unroll-2", ["--mcpu=native", "--matmul-tile=8x3", "--matmul-k-unroll=2"]),
    ("native-8x2-unroll-1", ["--mcpu=native", "--matmul-tile=8x2", "--matmul-k-unroll=1"]),
    ("native-6x4-unroll-3", ["--mcpu=native", "--matmul-tile=6x4", "--matmul-k-unroll=3"]),
    # A 4 KiB L2: no operand stays in it, so where reading A again per
    # panel costs less than B per block of rows (packed_a, the short-K row
    # sweeps), the work items are numbered panel-major, an order these small
    # matrices do not take by default.
    ("native-l2-4k", ["--mcpu=native", "--l2-bytes=4096"]),
    # A 512 KiB L2: the long-K cases are computed in slices of k
    # (reductionSlices), which the default 2 MiB does not need.
    ("native-l2-512k", ["--mcpu=native", "--l2-bytes=524288"]),
    # An L1 of 8 ways (Zen 4's): A is packed when its rows are 2 KiB apart
    # (packed_a); with 12 (Intel's since Ice Lake) it is read in place,
    # whatever the host.
    ("native-l1-8", ["--mcpu=native", "--l1-ways=8"]),
    ("native-l1-12", ["--mcpu=native", "--l1-ways=12"]),
]


def matmul_model(a_shape, b_shape, constant_b, epilogue=False, slice_at=None):
    """With `slice_at`, A is columns [slice_at, slice_at + K) of a wider input
    X (K + 2 * slice_at columns): the matmul reads a strided view."""
    rng = np.random.default_rng(1)
    initializers = []
    nodes = []
    if slice_at is None:
        inputs = [helper.make_tensor_value_info("A", TensorProto.FLOAT, a_shape)]
    else:
        k = a_shape[-1]
        wide = a_shape[:-1] + [k + 2 * slice_at]
        inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, wide)]
        for name, value in (("starts", slice_at), ("ends", slice_at + k), ("axes", -1)):
            initializers.append(numpy_helper.from_array(np.array([value], np.int64), name))
        nodes.append(helper.make_node("Slice", ["X", "starts", "ends", "axes"], ["A"]))
    if constant_b:
        b = rng.standard_normal(b_shape).astype(np.float32)
        initializers.append(numpy_helper.from_array(b, "B"))
    else:
        inputs.append(helper.make_tensor_value_info("B", TensorProto.FLOAT, b_shape))
    out_shape = list(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))) + [
        a_shape[-2], b_shape[-1]]
    nodes.append(helper.make_node("MatMul", ["A", "B"], ["C" if epilogue else "Y"]))
    if epilogue:
        bias = rng.standard_normal(b_shape[-1]).astype(np.float32)
        initializers.append(numpy_helper.from_array(bias, "bias"))
        nodes += [helper.make_node("Add", ["C", "bias"], ["D"]),
                  helper.make_node("Relu", ["D"], ["Y"])]
    graph = helper.make_graph(
        nodes, "matmul", inputs,
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# (name, A shape, B shape, B constant, epilogue)
CASES = [
    ("row_vector", [1, 16], [16, 16], True, False),
    ("k_one", [5, 1], [1, 9], True, False),
    ("tiny_ragged", [3, 5], [5, 7], True, False),
    ("exact_tile", [8, 32], [32, 32], True, False),
    ("ragged_m_n", [9, 33], [33, 47], True, False),
    ("ragged_bert", [197, 96], [96, 77], True, False),
    ("wide", [13, 64], [64, 100], False, False),
    ("runtime_b", [24, 64], [64, 64], False, False),
    ("batch_of_a", [2, 3, 5, 17], [17, 40], True, False),
    ("attention", [2, 3, 9, 17], [2, 3, 17, 33], False, False),
    ("shared_a", [9, 17], [4, 17, 20], False, False),
    ("epilogue", [16, 128], [128, 31], True, True),
    # Row pitches of 2 KiB: A (K = 512) and a run-time B (N = 512) are packed
    # per call; the other cases read them in place.
    ("packed_a", [20, 512], [512, 40], True, False),
    ("packed_a_batched", [2, 10, 1024], [2, 1024, 24], False, True),
    ("packed_runtime_b", [2, 12, 64], [2, 64, 520], False, False),
    # Enough work for the tile loop to be split across the thread pool.
    ("threaded", [100, 256], [256, 200], True, False),
    ("threaded_runtime_b", [2, 40, 256], [2, 256, 72], False, False),
    # Attention's P V over small heads (fewer than 2M multiply-adds each) with
    # a long k (>= 128: packed on full-rate FMAs, x86-64-v3-long-128): B's
    # panels packed by the work items of one loop over the 6 heads, a ragged
    # panel (20 columns) and a ragged row tile (70 rows).
    ("attention_items_pack_b", [2, 3, 70, 130], [2, 3, 130, 20], False, False),
    # A short reduction (K <= 64): work items sweep a row tile along 16
    # panels; 35 panels make 3 groups, the last with the ragged panel, and
    # 21 rows a ragged tile; with a fused epilogue, on the thread pool.
    ("short_k_row_sweeps", [21, 24], [24, 1100], True, True),
    # Long reductions: with a 512 KiB L2, slices of k (AVX-512: 4 of 512,
    # constant B, each slice's tiles streaming in the next panel's slice,
    # the bias on the last; AVX2's narrower panels: 3, the last 704 long),
    # and per batch element 3 (the last 704 long).
    ("long_k_slices", [40, 2048], [2048, 100], True, True),
    ("long_k_slices_runtime_b", [2, 24, 2048], [2, 2048, 72], False, False),
    # Long reductions numbered swept-major (with a 512 KiB or a 4 KiB L2
    # neither A nor B stays in it): 2 slices of k (544, the last 556), the
    # blocks of row tiles planned for a slice, the ragged row tile in the
    # last block; with the epilogue on the last slice, and per batch element.
    ("long_k_swept_slices", [200, 1100], [1100, 100], True, True),
    ("long_k_swept_slices_runtime_b", [2, 96, 1100], [2, 1100, 72], False, False),
    # One or two rows against constant B beyond half of L2 (a batch-1
    # classifier): each tile runs 2-4 runs of k at once, their sums added
    # after the loop; runs that leave steps over (300 / 4 = 75 steps a run
    # in whole iterations of 2 or 4: 4 or 12 single steps after), a ragged
    # last panel, the epilogue after the runs' sums; with a 4 KiB L2 the
    # small B too, else the large ones where B outgrows half of the target's
    # L2 (the 512 KiB configuration's; a host's L2 of 512 KiB or 1 MiB).
    ("row_runs_of_k", [1, 300], [300, 100], True, True),
    ("row_runs_of_k_large_b", [1, 1030], [1030, 130], True, False),
    ("two_rows_runs_of_k", [2, 520], [520, 300], True, True),
    # Six rows (a batch of 6 through a linear layer): AVX2 takes 6 x 16
    # tiles, all the rows in one tile, where 4 x 24 would leave a tile of 2
    # rows (narrowerPanelsPay); a ragged last panel (100 = 6 x 16 + 4).
    ("six_rows_tall_tile", [6, 200], [200, 100], True, True),
]

# (name, A shape, B shape, B constant, first column of A in the wider input):
# A a column slice of the input, copied to a dense buffer before the tiles.
SLICED_CASES = [
    ("column_slice", [24, 64], [64, 40], True, 16),
    ("column_slice_batched", [2, 12, 48], [2, 48, 24], False, 5),
]


def transposed_k_model(batch, heads, queries, keys, dims):
    """Attention scores Q K^T with K given as [batch, keys, heads, dims] and
    transposed to [batch, heads, dims, keys] (a transposing copy: blocks of
    vectors transposed in registers), then multiplied."""
    q = helper.make_tensor_value_info("Q", TensorProto.FLOAT, [batch, heads, queries, dims])
    k = helper.make_tensor_value_info("K", TensorProto.FLOAT, [batch, keys, heads, dims])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [batch, heads, queries, keys])
    nodes = [helper.make_node("Transpose", ["K"], ["KT"], perm=[0, 2, 3, 1]),
             helper.make_node("MatMul", ["Q", "KT"], ["Y"])]
    graph = helper.make_graph(nodes, "transposed_k", [q, k], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# (name, batch, heads, queries, keys, dims): K^T's rows (dims) and columns
# (keys) whole blocks of 16 lanes, and ragged (and 8-lane blocks on AVX2).
TRANSPOSED_K_CASES = [
    ("transposed_k", 1, 2, 8, 32, 16),
    ("transposed_k_ragged", 2, 3, 9, 37, 20),
]


def projected_k_model(batch, seq, heads, dims):
    """Attention's K projection (a constant weight and bias) viewed [batch,
    seq, heads, dims] and transposed to K^T, [batch, heads, dims, seq]: the
    kernel stores its tiles transposed into K^T when each tile's rows lie in
    one of its rows (seq a whole number of tiles), else the transpose is a
    kernel of its own."""
    hidden = heads * dims
    rng = np.random.default_rng(seq * 100 + hidden)
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [batch, seq, 24])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [batch, heads, dims, seq])
    initializers = [
        numpy_helper.from_array(rng.standard_normal((24, hidden)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(hidden).astype(np.float32), "bias"),
        numpy_helper.from_array(np.array([batch, seq, heads, dims], np.int64), "shape")]
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Add", ["P", "bias"], ["B"]),
             helper.make_node("Reshape", ["B", "shape"], ["R"]),
             helper.make_node("Transpose", ["R"], ["Y"], perm=[0, 2, 3, 1])]
    graph = helper.make_graph(nodes, "projected_k", [x], [y], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# (name, batch, seq, heads, dims): stored transposed with whole vectors of
# columns, with a ragged panel (30 columns; on the 6 x 4 tile, 6-row tiles
# in 8-lane blocks), and a seq of 10 (not a whole number of tiles): the
# transpose stays.
PROJECTED_K_CASES = [
    ("projected_k", 2, 16, 2, 16),
    ("projected_k_ragged", 2, 24, 3, 10),
    ("projected_k_ragged_seq", 1, 10, 2, 16),
]


def main():
    bin_dir = sys.argv[1]
    results = []
    with tempfile.TemporaryDirectory() as work:
        for target, flags in TARGETS:
            for name, a_shape, b_shape, constant_b, epilogue in CASES:
                model = matmul_model(a_shape, b_shape, constant_b, epilogue)
                results.append(check(f"{name}.{target}", model, {}, bin_dir, work,
                                     flags, RTOL, ATOL))
            for name, a_shape, b_shape, constant_b, slice_at in SLICED_CASES:
                model = matmul_model(a_shape, b_shape, constant_b, slice_at=slice_at)
                results.append(check(f"{name}.{target}", model, {}, bin_dir, work,
                                     flags, RTOL, ATOL))
            for name, *dims in TRANSPOSED_K_CASES:
                results.append(check(f"{name}.{target}", transposed_k_model(*dims), {},
                                     bin_dir, work, flags, RTOL, ATOL))
            for name, *dims in PROJECTED_K_CASES:
                results.append(check(f"{name}.{target}", projected_k_model(*dims), {},
                                     bin_dir, work, flags, RTOL, ATOL))
    print(f"{sum(results)} of {len(results)} matmuls match ONNX Runtime "
          f"(rtol {RTOL}, atol {ATOL})")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
