// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// Padded input, then a reduction over (c, kh, kw) reading
// input[n, g * 2 + c, oh * 2 + kh, ow * 2 + kw] for 2 groups of 2 channels.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 2) * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @grouped_conv
// Only padding some window reads is materialized: the last window ends at
// row 8 of the leading-padded input, so the trailing pad is dropped.
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// The bias is added afterwards, broadcast over the spatial dims.
// CHECK: tensor.expand_shape %arg2
// CHECK: arith.addf
func.func @grouped_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w, %b strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 2 : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Max pooling pads with -inf (here: the extra trailing row ceil_mode needs).
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tensor.yield %[[NEG]]
// CHECK: arith.maximumf
func.func @max_pool_ceil(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = kiln.max_pool %x kernel = [3, 3] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] {ceil_mode} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Average pooling divides by the number of real (unpadded) elements in each
// window: corners 4, edges 6, the middle 9 for a 3x3 window with pad 1.
// CHECK-LABEL: func.func @avg_pool_excludes_pads
// CHECK: arith.constant dense<{{\[\[\[\[}}4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]]]> : tensor<1x1x3x3xf32>
// CHECK: arith.divf
func.func @avg_pool_excludes_pads(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %0 = kiln.avg_pool %x kernel = [3, 3] strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] : tensor<1x1x3x3xf32> -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// Unsigned max pooling pads with 0 and compares unsigned.
// CHECK-LABEL: func.func @max_pool_unsigned
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK: tensor.pad
// CHECK: tensor.yield %[[ZERO]] : i8
// CHECK: arith.maxui
func.func @max_pool_unsigned(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8> {
  %0 = kiln.max_pool %x kernel = [2, 2] strides = [2, 2] dilations = [1, 1] pads = [1, 1, 0, 0] : tensor<1x1x4x4xui8> -> tensor<1x1x2x2xui8>
  return %0 : tensor<1x1x2x2xui8>
}
