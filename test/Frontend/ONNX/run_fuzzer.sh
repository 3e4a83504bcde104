#!/usr/bin/env bash
# Runs kiln-fuzz-import for a bounded time, seeded with real models.
# Usage: run_fuzzer.sh FUZZER NODE_TEST_DIR SECONDS
set -euo pipefail
fuzzer=$1 node_dir=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/seeds"
cp "$(dirname "$0")/Inputs/add.onnx" "$work/seeds/"
for t in test_conv_with_strides_padding test_reshape_negative_dim \
         test_slice_neg_steps test_batchnorm_example test_gemm_all_attributes \
         test_layer_normalization_2d_axis0 test_einsum_batch_matmul \
         test_maxpool_2d_ceil test_softmax_axis_1 test_split_equal_parts_1d; do
  [[ -f "$node_dir/$t/model.onnx" ]] && cp "$node_dir/$t/model.onnx" "$work/seeds/$t.onnx"
done
cd "$work"
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 \
  -print_final_stats=1 corpus seeds
