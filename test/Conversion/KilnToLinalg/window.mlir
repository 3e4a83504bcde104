// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s
// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg="implicit-gemm-convs=true" | FileCheck %s --check-prefix=IGEMM
// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg="implicit-gemm-convs=true matmul-tile-rows=4 vector-lanes=8" | FileCheck %s --check-prefix=AVX2

// A grouped convolution is one loop nest: a reduction over (c, kh, kw) for 2
// groups of 2 channels; the window loops (kh, kw) innermost, for
// kiln-unroll-small-loops to unroll into the output-pixel loop. The window
// strides by 2 along the row, so the padded input's last dim is split into
// its 2 phases ([.., 9] -> [.., 2, 5]): tap kw reads phase kw mod 2 at column
// ow + kw floordiv 2, consecutive for consecutive outputs.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 2) * 2 + d2, d3 * 2 + d5, d6 mod 2, d4 + d6 floordiv 2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d5, d6)>
// CHECK-LABEL: func.func @grouped_conv
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SPLIT:.*]] = tensor.empty() : tensor<1x4x9x2x5xf32>
// Only the padding is filled: the leading row...
// CHECK: %[[ROW:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x4x1x2x5xf32>)
// CHECK: %[[S0:.*]] = tensor.insert_slice %[[ROW]] into %[[SPLIT]][0, 0, 0, 0, 0] [1, 4, 1, 2, 5]
// ...the leading column of phase 0 (padded column 0)...
// CHECK: %[[S1:.*]] = tensor.insert_slice %{{.*}} into %[[S0]][0, 0, 0, 0, 0] [1, 4, 9, 1, 1]
// ...then phase 0 holds input columns 1, 3, 5, 7 from its column 1...
// CHECK: %[[ODD:.*]] = tensor.extract_slice %arg0[0, 0, 0, 1] [1, 4, 8, 4] [1, 1, 1, 2]
// CHECK: %[[S2:.*]] = tensor.insert_slice %[[ODD]] into %[[S1]][0, 0, 1, 0, 1] [1, 4, 8, 1, 4]
// ...and phase 1 input columns 0, 2, 4, 6, then padding.
// CHECK: %[[S3:.*]] = tensor.insert_slice %{{.*}} into %[[S2]][0, 0, 0, 1, 4] [1, 4, 9, 1, 1]
// CHECK: %[[EVEN:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 4, 8, 4] [1, 1, 1, 2]
// CHECK: %[[S4:.*]] = tensor.insert_slice %[[EVEN]] into %[[S3]][0, 0, 1, 1, 0] [1, 4, 8, 1, 4]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%[[S4]], %arg1
// CHECK: arith.mulf
// CHECK: arith.addf
// The bias is added afterwards, broadcast over the spatial dims.
// CHECK: tensor.expand_shape %arg2
// CHECK: arith.addf
// With implicit-gemm-convs (the CPU target), one image's grouped convolution
// is a matmul batched over the groups: the (phase-split) input read as 2
// images of 2 channels, each one's im2col matrix [18, 16] made as a batch's
// is ([2, 18, 16], which kiln-lower-matmul can make image by image), times
// the filters [4, 2, 3, 3] as [2 groups, 2, 18]; the product [2, 2, 16] is
// the output's 4 channels.
// IGEMM-DAG: #[[GW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// IGEMM-DAG: #[[GC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// IGEMM-DAG: #[[GO:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// IGEMM-LABEL: func.func @grouped_conv
// IGEMM: %[[CHANNELS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3], [4]] : tensor<1x4x9x2x5xf32> into tensor<4x9x2x5xf32>
// IGEMM: %[[GROUPS:.*]] = tensor.expand_shape %[[CHANNELS]] {{.*}} output_shape [2, 2, 9, 2, 5]
// IGEMM: %[[COL:.*]] = linalg.generic {{.*}} ins(%[[GROUPS]] : tensor<2x2x9x2x5xf32>) outs(%{{.*}} : tensor<2x2x3x3x4x4xf32>)
// IGEMM: %[[COLS:.*]] = tensor.collapse_shape %[[COL]] {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<2x2x3x3x4x4xf32> into tensor<2x18x16xf32>
// IGEMM: %[[W:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 2, 18] : tensor<4x18xf32> into tensor<2x2x18xf32>
// IGEMM: %[[PRODUCT:.*]] = linalg.generic {indexing_maps = [#[[GW]], #[[GC]], #[[GO]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %[[COLS]] : tensor<2x2x18xf32>, tensor<2x18x16xf32>)
// IGEMM: tensor.collapse_shape %[[PRODUCT]] {{\[\[}}0, 1], [2]] : tensor<2x2x16xf32> into tensor<4x16xf32>
func.func @grouped_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w, %b strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 2 : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// A grouped convolution whose dense convolutions would be implicit GEMMs
// (rows 16 wide) is one, batched over the groups: the input [1, 4, 16, 16]
// as 2 images of 2 channels, laid out like a batch (one fill of all of
// it, which kiln-lower-matmul's per-image writes expect) into [2, 2, 323],
// the filters [8, 2, 3, 3] as [2, 4, 2, 3, 3] (read with the group), the
// product [2, 4, 272] the output's 8 channels of 16 rows of 17.
// IGEMM-DAG: #[[GW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4, d5)>
// IGEMM-DAG: #[[GX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d2 + d4 * 17 + d5)>
// IGEMM-DAG: #[[GO:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>
// IGEMM-LABEL: func.func @grouped_implicit_gemm
// IGEMM: %[[CHANNELS:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
// IGEMM: %[[GROUPS:.*]] = tensor.expand_shape %[[CHANNELS]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 2, 16, 16]
// IGEMM: linalg.fill {{.*}} -> tensor<2x2x1x1x19x17xf32>
// IGEMM: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0, 1, 1] [2, 2, 1, 1, 16, 16]
// IGEMM: %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} into tensor<2x2x323xf32>
// IGEMM: %[[W:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 4, 2, 3, 3]
// IGEMM: %[[T:.*]] = linalg.generic {indexing_maps = [#[[GW]], #[[GX]], #[[GO]]], {{.*}} ins(%[[W]], %[[ROWS]] : tensor<2x4x2x3x3xf32>, tensor<2x2x323xf32>) outs(%{{.*}} : tensor<2x4x272xf32>)
// IGEMM: %[[Y:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2]] : tensor<2x4x272xf32> into tensor<8x272xf32>
// IGEMM: %[[LINES:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 8, 16, 17]
// IGEMM: tensor.extract_slice %[[LINES]][0, 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1]
func.func @grouped_implicit_gemm(%x: tensor<1x4x16x16xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 2 : (tensor<1x4x16x16xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// Constant filters of 2 groups of 32 channels at 7x7 (K = 288 a group):
// windowed rows batched over the groups, each pixel's window read from the
// padded planes [1, 64, 81] as [2, 32, 81], the filters as [2, 32, 32, 3,
// 3]; the product [2, 49, 32] transposed to [2, 32, 49] is the output.
// IGEMM-DAG: #[[WX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, (d1 floordiv 7) * 9 + d1 mod 7 + d4 * 9 + d5)>
// IGEMM-DAG: #[[WW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d4, d5)>
// IGEMM-LABEL: func.func @grouped_windowed_rows
// IGEMM: %[[PLANES:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 32, 81] : tensor<64x81xf32> into tensor<2x32x81xf32>
// IGEMM: %[[W:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 32, 32, 3, 3]
// IGEMM: %[[T:.*]] = linalg.generic {indexing_maps = [#[[WX]], #[[WW]], #{{.*}}], {{.*}} ins(%[[PLANES]], %[[W]] : tensor<2x32x81xf32>, tensor<2x32x32x3x3xf32>) outs(%{{.*}} : tensor<2x49x32xf32>)
// IGEMM: %[[C:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<2x49x32xf32>) outs(%{{.*}} : tensor<2x32x49xf32>)
// IGEMM: %[[Y:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1], [2]] : tensor<2x32x49xf32> into tensor<64x49xf32>
// IGEMM: tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 64, 7, 7]
func.func @grouped_windowed_rows(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = kiln.constant dense<1.0> : tensor<64x32x3x3xf32>
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 2 : (tensor<1x64x7x7xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}

// -----

// A 2-D f32 depthwise convolution (one filter per channel) is linalg's
// named op over the zero-padded input, not split into phases even at
// stride 2: kiln-lower-depthwise lays each plane out for its taps.
// CHECK-LABEL: func.func @depthwise_conv
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3]] : tensor<6x1x3x3xf32> into tensor<6x3x3xf32>
// CHECK: linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PAD]], %[[W]] : tensor<1x6x9x9xf32>, tensor<6x3x3xf32>)
// CHECK: tensor.expand_shape %arg2
// CHECK: arith.addf
func.func @depthwise_conv(%x: tensor<1x6x8x8xf32>, %w: tensor<6x1x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %0 = kiln.conv %x, %w, %b strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 6 : (tensor<1x6x8x8xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

// A dense f32 convolution is im2col + a matmul per image:
// Col[n, c, kh, kw, oh, ow] = X[n, c, oh * 2 + kh, ow * 2 + kw] (here from
// the input split into phases, so the copy along ow is contiguous), viewed
// as [n, c*kh*kw, oh*ow], multiplied by the filter viewed as [o, c*kh*kw].
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d3 mod 2, d5 + d3 floordiv 2)>
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

// A 2-D f32 max pool is linalg's named op over the input padded with -inf
// (here: the extra trailing row and column ceil_mode needs), starting from
// -inf; kiln-lower-window-ops runs it on the CPU.
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEG]]
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x2x2xf32>)
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PAD]], %[[WINDOW]] : tensor<1x1x5x5xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x1x2x2xf32>)
func.func @max_pool_ceil(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = kiln.max_pool %x kernel = [3, 3] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] {ceil_mode} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Other pools are loop nests over an input split into phases when the
// window strides along the row: an i32 max pool pads with the lowest i32
// (the extra trailing row and column ceil_mode needs, in the split input).
// CHECK-LABEL: func.func @max_pool_ceil_integer
// CHECK: %[[LOWEST:.*]] = arith.constant -2147483648 : i32
// CHECK: tensor.empty() : tensor<1x1x5x2x3xi32>
// CHECK: linalg.fill ins(%[[LOWEST]] : i32) outs(%{{.*}} : tensor<1x1x1x2x3xi32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 4, 0, 0] [1, 1, 1, 2, 3]
// CHECK: linalg.fill ins(%[[LOWEST]] : i32) outs(%{{.*}} : tensor<1x1x5x1x1xi32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0, 2] [1, 1, 5, 1, 1]
// CHECK: arith.maxsi
func.func @max_pool_ceil_integer(%x: tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32> {
  %0 = kiln.max_pool %x kernel = [3, 3] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] {ceil_mode} : tensor<1x1x4x4xi32> -> tensor<1x1x2x2xi32>
  return %0 : tensor<1x1x2x2xi32>
}

// -----

// With dilation 2 and stride 2, every tap reads phase 0: only that phase is
// kept (input columns 0, 2, 4, 6, 8), nothing to pad.
// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2 * 2, 0, d3 + d5)>
// CHECK-LABEL: func.func @dilated_pool
// CHECK-NOT: linalg.fill
// CHECK: %[[EVEN:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 1, 9, 5] [1, 1, 1, 2]
// CHECK: %[[SPLIT:.*]] = tensor.insert_slice %[[EVEN]] into %{{.*}}[0, 0, 0, 0, 0] [1, 1, 9, 1, 5] {{.*}} into tensor<1x1x9x1x5xi32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], {{.*}} ins(%[[SPLIT]],
func.func @dilated_pool(%x: tensor<1x1x9x9xi32>) -> tensor<1x1x3x3xi32> {
  %0 = kiln.max_pool %x kernel = [3, 3] strides = [2, 2] dilations = [2, 2] pads = [0, 0, 0, 0] : tensor<1x1x9x9xi32> -> tensor<1x1x3x3xi32>
  return %0 : tensor<1x1x3x3xi32>
}

// -----

// One tap per row (a strided 1x1 convolution): nothing to split, the im2col
// copy reads the input in place.
// CHECK: #[[COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-LABEL: func.func @strided_pointwise
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #{{.*}}], {{.*}} ins(%arg0
func.func @strided_pointwise(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Average pooling divides by the number of real (unpadded) elements in each
// window: corners 4, edges 6, the middle 9 for a 3x3 window with pad 1.
// Unit strides: the input is padded whole (tensor.pad), not split.
// CHECK-LABEL: func.func @avg_pool_excludes_pads
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
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
// CHECK: linalg.fill ins(%[[ZERO]] : i8)
// CHECK: arith.maxui
func.func @max_pool_unsigned(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8> {
  %0 = kiln.max_pool %x kernel = [2, 2] strides = [2, 2] dilations = [1, 1] pads = [1, 1, 0, 0] : tensor<1x1x4x4xui8> -> tensor<1x1x2x2xui8>
  return %0 : tensor<1x1x2x2xui8>
}

// -----

// 64 output channels over 7 x 7 = 49 pixels fill the 8 x 32 register tiles
// better with the pixels as rows (49 of 56 rows used) than as columns (49 of
// 64 lanes), and with 576 = 64 x 3 x 3 steps of reduction that saving pays
// for the transposed stores: with constant filters, the matmul is T[n][p][o]
// = Col[n]^T @ W^T, reading the im2col matrix and the filters transposed
// (loops n, p, o, ck), then a transposed copy gives [n][o][p] (which
// kiln-lower-matmul folds into its stores).
// CHECK-DAG: #[[COL_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[W_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @pixels_as_rows
// CHECK: %[[COL:.*]] = tensor.collapse_shape %{{.*}} into tensor<1x576x49xf32>
// CHECK: %[[W:.*]] = tensor.collapse_shape %{{.*}} into tensor<64x576xf32>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[COL_T]], #[[W_T]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[COL]], %[[W]] : {{.*}}) outs(%{{.*}} : tensor<1x49x64xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[SWAP]], #{{.*}}], {{.*}} ins(%[[T]] : tensor<1x49x64xf32>) outs(%{{.*}} : tensor<1x64x49xf32>)
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 64, 7, 7]
func.func @pixels_as_rows(%x: tensor<1x64x7x7xf32>, %b: tensor<64xf32>) -> tensor<1x64x7x7xf32> {
  %w = kiln.constant dense<1.0> : tensor<64x64x3x3xf32>
  %0 = kiln.conv %x, %w, %b strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}

// -----

// With only 18 = 2 x 3 x 3 steps of reduction, the tiles' saving (512
// lanes a step) does not pay for the transposed stores (3 lanes for each of
// the 64 x 49 outputs): the channels stay the rows.
// CHECK-LABEL: func.func @short_reduction_keeps_channels_as_rows
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<64x18xf32>, tensor<1x18x49xf32>)
// CHECK-NOT: tensor<1x49x64xf32>
// With implicit-gemm-convs, windowed rows also save the im2col matrix's 18
// x 49 copies (2 lanes each), which tips it: the pixels are the rows, read
// in place from the padded input.
// IGEMM-LABEL: func.func @short_reduction_keeps_channels_as_rows
// IGEMM-NOT: tensor<1x18x49xf32>
// IGEMM: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x81xf32>, tensor<64x2x3x3xf32>) outs(%{{.*}} : tensor<1x49x64xf32>)
func.func @short_reduction_keeps_channels_as_rows(%x: tensor<1x2x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = kiln.constant dense<1.0> : tensor<64x2x3x3xf32>
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x2x7x7xf32>, tensor<64x2x3x3xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}

// -----

// The same shape as @pixels_as_rows with filters computed at run time keeps
// the channels as rows (only constant filters are packed transposed).
// CHECK-LABEL: func.func @runtime_filters
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<64x576xf32>, tensor<1x576x49xf32>)
func.func @runtime_filters(%x: tensor<1x64x7x7xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32> {
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}

// -----

// With implicit-gemm-convs (the CPU target), a dense 3x3 convolution whose
// rows are 16 wide is an implicit GEMM: the input is laid out per channel
// with a row pitch of 17 (16 + 1: one column of zeros is both a row's right
// pad and the next row's left pad) and one spare row (19 x 17 = 323), and
// tap (kh, kw) of channel c reads X[n][c][f + kh * 17 + kw] for the output
// at position f = oh * 17 + ow; the output is the first 16 columns of each
// of the 16 rows of 17, the bias added after.
// IGEMM-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4, d5)>
// IGEMM-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d2 + d4 * 17 + d5)>
// IGEMM-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>
// Only the zeros around the pixels are written, in place: the top row, the
// bottom two and the left column (the pitch leaves no right one).
// IGEMM-LABEL: func.func @implicit_gemm
// IGEMM-NOT: linalg.fill {{.*}} -> tensor<1x4x1x1x19x17xf32>
// IGEMM: %[[EMPTY:.*]] = tensor.empty() : tensor<1x4x1x1x19x17xf32>
// IGEMM: %[[TOP:.*]] = tensor.insert_slice %{{.*}} into %[[EMPTY]][0, 0, 0, 0, 0, 0] [1, 4, 1, 1, 1, 17]
// IGEMM: %[[BOTTOM:.*]] = tensor.insert_slice %{{.*}} into %[[TOP]][0, 0, 0, 0, 17, 0] [1, 4, 1, 1, 2, 17]
// IGEMM: %[[LEFT:.*]] = tensor.insert_slice %{{.*}} into %[[BOTTOM]][0, 0, 0, 0, 1, 0] [1, 4, 1, 1, 16, 1]
// IGEMM: %[[LAID:.*]] = tensor.insert_slice %{{.*}} into %[[LEFT]][0, 0, 0, 0, 1, 1] [1, 4, 1, 1, 16, 16]
// IGEMM: %[[ROWS:.*]] = tensor.collapse_shape %[[LAID]] {{.*}} into tensor<1x4x323xf32>
// IGEMM: %[[T:.*]] = linalg.generic {indexing_maps = [#[[W]], #[[X]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1, %[[ROWS]] : tensor<8x4x3x3xf32>, tensor<1x4x323xf32>) outs(%{{.*}} : tensor<1x8x272xf32>)
// IGEMM: %[[LINES:.*]] = tensor.expand_shape %[[T]] {{.*}} output_shape [1, 8, 16, 17]
// IGEMM: %[[Y:.*]] = tensor.extract_slice %[[LINES]][0, 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1]
// IGEMM: linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<1x8x16x16xf32>, tensor<8x1x1xf32>)
func.func @implicit_gemm(%x: tensor<1x4x16x16xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x16x16xf32> {
  %0 = kiln.conv %x, %w, %b strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x4x16x16xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// At stride 2 the input is split into 2 x 2 phase planes of 18 x 17 (row
// and column parities, each filled from a strided slice of the input), and
// a tap reads its phase plane: ((kh mod 2) * 2 + kw mod 2) * 306 + (kh / 2)
// * 17 + kw / 2 on from f.
// IGEMM-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d2 + (d4 mod 2) * 612 + (d5 mod 2) * 306 + (d4 floordiv 2) * 17 + d5 floordiv 2)>
// IGEMM-LABEL: func.func @implicit_gemm_strided
// The odd columns' plane: its spare row and its last column are zeroed.
// IGEMM: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 1, 17, 0] [1, 2, 1, 1, 1, 17]
// IGEMM: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 1, 0, 16] [1, 2, 1, 1, 17, 1]
// IGEMM: %[[ODD_COLUMNS:.*]] = tensor.extract_slice %arg0[0, 0, 0, 1] [1, 2, 17, 16] [1, 1, 2, 2]
// IGEMM: tensor.insert_slice %[[ODD_COLUMNS]] into %{{.*}}[0, 0, 0, 1, 0, 0] [1, 2, 1, 1, 17, 16]
// IGEMM: tensor.collapse_shape {{.*}} into tensor<1x2x1224xf32>
// IGEMM: linalg.generic {indexing_maps = [#{{.*}}, #[[X]], #{{.*}}]
// IGEMM: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1] : tensor<1x8x16x17xf32> to tensor<1x8x16x16xf32>
func.func @implicit_gemm_strided(%x: tensor<1x2x33x33xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x2x33x33xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// A batch keeps one zero fill of the whole layout, which kiln-lower-matmul's
// per-image staging (stagePerImage) expects before the copies.
// IGEMM-LABEL: func.func @implicit_gemm_batch
// IGEMM: %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<2x4x1x1x19x17xf32>
// IGEMM-NEXT: %[[PIXELS:.*]] = tensor.extract_slice %arg0
// IGEMM-NEXT: tensor.insert_slice %[[PIXELS]] into %[[ZEROS]][0, 0, 0, 0, 1, 1] [2, 4, 1, 1, 16, 16]
func.func @implicit_gemm_batch(%x: tensor<2x4x16x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x16x16xf32> {
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x4x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x16x16xf32>
  return %0 : tensor<2x8x16x16xf32>
}

// -----

// Rows narrower than 16 (here 7) keep im2col + matmul.
// IGEMM-LABEL: func.func @narrow_rows_keep_im2col
// IGEMM-NOT: "reduction", "reduction", "reduction"
// IGEMM: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
func.func @narrow_rows_keep_im2col(%x: tensor<1x4x7x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32> {
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  return %0 : tensor<1x8x7x7xf32>
}

// -----

// With constant filters, a convolution whose rows are too narrow for the
// implicit GEMM over the pitch runs as windowed rows: the output pixels as
// the matmul's rows, read in place from the padded input (15 x 15 = 225 per
// channel): pixel p = (oh, ow) of the 7-wide output starts its window at
// (p / 7) * 2 * 15 + (p mod 7) * 2, and tap (kh, kw) is kh * 15 + kw on. No
// im2col matrix; the product [n][p][o] is copied transposed into the output
// (the copy kiln-lower-matmul folds into its stores).
// IGEMM-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, (d1 floordiv 7) * 30 + (d1 mod 7) * 2 + d4 * 15 + d5)>
// IGEMM-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3, d4, d5)>
// IGEMM-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>
// IGEMM-DAG: #[[SWAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// IGEMM-LABEL: func.func @windowed_rows
// IGEMM: %[[PADDED:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 0, 0]
// IGEMM: %[[PLANES:.*]] = tensor.collapse_shape %[[PADDED]] {{.*}} into tensor<1x16x225xf32>
// IGEMM: %[[T:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PLANES]], %{{.*}} : tensor<1x16x225xf32>, tensor<32x16x3x3xf32>) outs(%{{.*}} : tensor<1x49x32xf32>)
// IGEMM: linalg.generic {indexing_maps = [#[[SWAP]], #{{.*}}], {{.*}} ins(%[[T]] : tensor<1x49x32xf32>) outs(%{{.*}} : tensor<1x32x49xf32>)
// IGEMM: tensor.expand_shape %{{.*}} output_shape [1, 32, 7, 7]
func.func @windowed_rows(%x: tensor<1x16x14x14xf32>, %b: tensor<32xf32>) -> tensor<1x32x7x7xf32> {
  %w = kiln.constant dense<1.0> : tensor<32x16x3x3xf32>
  %0 = kiln.conv %x, %w, %b strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x16x14x14xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x7x7xf32>
  return %0 : tensor<1x32x7x7xf32>
}

// -----

// A strided window over 16 or more channels takes windowed rows even where
// the implicit GEMM over the pitch would fit (16-wide rows): no phase
// planes; the unpadded 33 x 33 input is read as it is. (With 8 filters over
// 256 pixels, pixels as rows do not fill the tiles better; the reduction,
// 576 steps, covers the transposed stores.)
// IGEMM-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, (d1 floordiv 16) * 66 + (d1 mod 16) * 2 + d4 * 33 + d5)>
// IGEMM-LABEL: func.func @windowed_rows_over_pitch
// IGEMM-NOT: tensor.insert_slice
// IGEMM: %[[PLANES:.*]] = tensor.collapse_shape %arg0 {{.*}} into tensor<2x64x1089xf32>
// IGEMM: linalg.generic {indexing_maps = [#[[X]], #{{.*}}, #{{.*}}], {{.*}} ins(%[[PLANES]], %{{.*}} : tensor<2x64x1089xf32>, tensor<8x64x3x3xf32>) outs(%{{.*}} : tensor<2x256x8xf32>)
func.func @windowed_rows_over_pitch(%x: tensor<2x64x33x33xf32>) -> tensor<2x8x16x16xf32> {
  %w = kiln.constant dense<1.0> : tensor<8x64x3x3xf32>
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<2x64x33x33xf32>, tensor<8x64x3x3xf32>) -> tensor<2x8x16x16xf32>
  return %0 : tensor<2x8x16x16xf32>
}

// -----

// A short reduction (16 channels x 9 taps = 144 steps) where pixels as rows
// do not fill the tiles better (8 filters over 256 pixels) does not cover
// the transposed stores: the implicit GEMM over the pitch, in phase planes.
// IGEMM-LABEL: func.func @short_reduction_keeps_pitch
// IGEMM: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 1, 0, 0] [2, 16, 1, 1, 17, 16]
// IGEMM: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x16x3x3xf32>, tensor<2x16x1224xf32>) outs(%{{.*}} : tensor<2x8x272xf32>)
func.func @short_reduction_keeps_pitch(%x: tensor<2x16x33x33xf32>) -> tensor<2x8x16x16xf32> {
  %w = kiln.constant dense<1.0> : tensor<8x16x3x3xf32>
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<2x16x33x33xf32>, tensor<8x16x3x3xf32>) -> tensor<2x8x16x16xf32>
  return %0 : tensor<2x8x16x16xf32>
}

// -----

// Over fewer channels (a stem: a short reduction that does not amortize the
// transposed stores) the strided window keeps the implicit GEMM over the
// pitch, in phase planes.
// IGEMM-LABEL: func.func @strided_few_channels_keep_pitch
// IGEMM: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 1, 0, 0] [2, 3, 1, 1, 17, 16]
// IGEMM: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x3x3x3xf32>, tensor<2x3x1224xf32>) outs(%{{.*}} : tensor<2x8x272xf32>)
func.func @strided_few_channels_keep_pitch(%x: tensor<2x3x33x33xf32>) -> tensor<2x8x16x16xf32> {
  %w = kiln.constant dense<1.0> : tensor<8x3x3x3xf32>
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<2x3x33x33xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x16x16xf32>
  return %0 : tensor<2x8x16x16xf32>
}

// -----

// The target's register tile decides the orientation: a 1x1 96 -> 576 at
// 14x14 (MobileNetV2) pads 196 pixels as rows to 200 and 576 channels as
// columns to 576 in AVX-512's 8 x 16 model, saving enough lanes over the
// channels as rows (576 x 208) to pay for the transposed stores; AVX2's 4 x
// 8 pads the pixels only to 196 / 200, and the channels stay the rows.
// IGEMM-LABEL: func.func @tile_decides_orientation
// IGEMM: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x196x576xf32>)
// AVX2-LABEL: func.func @tile_decides_orientation
// AVX2-NOT: tensor<1x196x576xf32>
// AVX2: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x576x196xf32>)
// AVX2-NOT: tensor<1x196x576xf32>
func.func @tile_decides_orientation(%x: tensor<1x96x14x14xf32>) -> tensor<1x576x14x14xf32> {
  %w = kiln.constant dense<1.0> : tensor<576x96x1x1xf32>
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x96x14x14xf32>, tensor<576x96x1x1xf32>) -> tensor<1x576x14x14xf32>
  return %0 : tensor<1x576x14x14xf32>
}
