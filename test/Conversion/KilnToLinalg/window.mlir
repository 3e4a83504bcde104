// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// A grouped convolution is one loop nest: padded input, then a reduction over
// (c, kh, kw) reading input[n, g * 2 + c, oh * 2 + kh, ow * 2 + kw] for 2
// groups of 2 channels; the window loops (kh, kw) innermost, for
// kiln-unroll-small-loops to unroll into the output-pixel loop.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 2) * 2 + d2, d3 * 2 + d5, d4 * 2 + d6)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d5, d6)>
// CHECK-LABEL: func.func @grouped_conv
// Only padding some window reads is materialized: the last window ends at
// row 8 of the leading-padded input, so the trailing pad is dropped.
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction", "reduction"]}
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

// A dense f32 convolution is im2col + a matmul per image:
// Col[n, c, kh, kw, oh, ow] = X[n, c, oh * 2 + kh, ow * 2 + kw], viewed as
// [n, c*kh*kw, oh*ow], multiplied by the filter viewed as [o, c*kh*kw].
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: func.func @dense_conv
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #{{.*}}]
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x4xf32> into tensor<1x27x16xf32>
// CHECK: tensor.collapse_shape %arg1 {{\[\[}}0], [1, 2, 3]] : tensor<8x3x3x3xf32> into tensor<8x27xf32>
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [1, 8, 4, 4] : tensor<1x8x16xf32> into tensor<1x8x4x4xf32>
func.func @dense_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// A 1x1 convolution with unit strides needs no im2col: the input viewed as
// [n, c, h*w] is the matmul's B.
// CHECK-LABEL: func.func @pointwise_conv
// CHECK-NOT: tensor.pad
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<1x16x7x7xf32> into tensor<1x16x49xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
func.func @pointwise_conv(%x: tensor<1x16x7x7xf32>, %w: tensor<32x16x1x1xf32>) -> tensor<1x32x7x7xf32> {
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x16x7x7xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x7x7xf32>
  return %0 : tensor<1x32x7x7xf32>
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
