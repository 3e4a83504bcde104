// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg="implicit-gemm-convs=true winograd-convs=true" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg="implicit-gemm-convs=true" | FileCheck %s --check-prefix=OFF

// A 3x3 / 1 convolution with constant filters, 16 -> 32 channels at 16x16,
// as Winograd F(2x2, 3x3): the input padded to the 8 x 8 tiles' extent
// (18 x 18), its tiles transformed into V [4, 4, C, N, 8, 8] (a generic
// tagged for kiln-lower-winograd-transforms, reducing over the tile's 4 x 4
// values), 16 matmuls against the filters transformed at compile time
// (U [16, O, C], a dense resource), then the output transform into [N, O,
// 8, 2, 8, 2], viewed as the 16 x 16 output, and the bias. V's 16
// matrices (16 channels x 64 tiles, 4 KiB each) would all start in the same
// L1 set: V is written into a buffer with a spare channel, 17 x 64 floats a
// matrix.
// CHECK-DAG: #[[TILE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d2, d4 * 2 + d6, d5 * 2 + d7)>
// CHECK-DAG: #[[UMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[VMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[M:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d6, d7, d1, d0, d2, d4)>
// CHECK-LABEL: func.func @winograd
// CHECK: %[[PADDED:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor<1x16x18x18xf32>
// CHECK: %[[U:.*]] = arith.constant dense_resource<winograd_filters> : tensor<16x32x16xf32>
// CHECK: %[[SPACED:.*]] = tensor.empty() : tensor<4x4x17x1x8x8xf32>
// CHECK: tensor.extract_slice %[[SPACED]][0, 0, 0, 0, 0, 0] [4, 4, 16, 1, 8, 8] [1, 1, 1, 1, 1, 1]
// CHECK: %[[V:.*]] = linalg.generic {indexing_maps = [#[[TILE]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[PADDED]], %{{.*}}, %{{.*}} : tensor<1x16x18x18xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4x16x1x8x8xf32>) attrs = {kiln.winograd = "input"}
// CHECK: %[[VM:.*]] = tensor.collapse_shape %[[V]] {{.*}} into tensor<16x16x64xf32>
// CHECK: %[[PRODUCT:.*]] = linalg.generic {indexing_maps = [#[[UMAP]], #[[VMAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[U]], %[[VM]] : tensor<16x32x16xf32>, tensor<16x16x64xf32>) outs(%{{.*}} : tensor<16x32x64xf32>)
// CHECK: %[[MV:.*]] = tensor.expand_shape %[[PRODUCT]] {{.*}} output_shape [4, 4, 32, 1, 8, 8]
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[M]], {{.*}}]{{.*}} ins(%[[MV]], %{{.*}}, %{{.*}} : tensor<4x4x32x1x8x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<1x32x8x2x8x2xf32>) attrs = {kiln.winograd = "output"}
// CHECK: tensor.collapse_shape %[[Y]] {{.*}} into tensor<1x32x16x16xf32>
// CHECK: arith.addf
// OFF-LABEL: func.func @winograd
// OFF-NOT: kiln.winograd
func.func @winograd(%x: tensor<1x16x16x16xf32>, %b: tensor<32xf32>) -> tensor<1x32x16x16xf32> {
  %w = kiln.constant dense<1.0> : tensor<32x16x3x3xf32>
  %0 = kiln.conv %x, %w, %b strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x16x16x16xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
  return %0 : tensor<1x32x16x16xf32>
}

// -----

// An odd output (15 x 13, no padding): 8 x 7 tiles, whose extent needs one
// more row and column of zeros; the last row and column of outputs are
// computed and dropped by a slice.
// CHECK-LABEL: func.func @odd_output
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: kiln.winograd = "input"
// CHECK: kiln.winograd = "output"
// CHECK: tensor.collapse_shape %{{.*}} into tensor<2x24x16x14xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 24, 15, 13] [1, 1, 1, 1] : tensor<2x24x16x14xf32> to tensor<2x24x15x13xf32>
func.func @odd_output(%x: tensor<2x16x17x15xf32>) -> tensor<2x24x15x13xf32> {
  %w = kiln.constant dense<1.0> : tensor<24x16x3x3xf32>
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<2x16x17x15xf32>, tensor<24x16x3x3xf32>) -> tensor<2x24x15x13xf32>
  return %0 : tensor<2x24x15x13xf32>
}

// -----

// 16 channels x 100 tiles (6400 bytes a matrix): the 16 matrices already
// start in different L1 sets, and V has no spare channel.
// CHECK-LABEL: func.func @unspaced
// CHECK: %[[V:.*]] = tensor.empty() : tensor<4x4x16x1x10x10xf32>
// CHECK-NOT: tensor.extract_slice %[[V]]
// CHECK: kiln.winograd = "input"
func.func @unspaced(%x: tensor<1x16x20x20xf32>) -> tensor<1x16x20x20xf32> {
  %w = kiln.constant dense<1.0> : tensor<16x16x3x3xf32>
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x16x20x20xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x20x20xf32>
  return %0 : tensor<1x16x20x20xf32>
}

// -----

// Not Winograd: a stride of 2, fewer than 16 input channels, filters
// computed at run time, and a 7x7 output at batch 1 (16 tiles: a matmul of
// half a panel does not save the multiplies).
// CHECK-LABEL: func.func @not_winograd
// CHECK-NOT: kiln.winograd
// CHECK: return
func.func @not_winograd(%x: tensor<1x16x16x16xf32>, %y: tensor<1x8x16x16xf32>, %w: tensor<16x16x3x3xf32>, %z: tensor<1x64x7x7xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>, tensor<1x64x7x7xf32>) {
  %w1 = kiln.constant dense<1.0> : tensor<16x16x3x3xf32>
  %w2 = kiln.constant dense<1.0> : tensor<16x8x3x3xf32>
  %w3 = kiln.constant dense<1.0> : tensor<64x64x3x3xf32>
  %0 = kiln.conv %x, %w1 strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.conv %y, %w2 strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x16x16xf32>
  %2 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  %3 = kiln.conv %z, %w3 strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32>
  return %0, %1, %2, %3 : tensor<1x16x8x8xf32>, tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>, tensor<1x64x7x7xf32>
}

// -----

// A batch whose transformed input would not stay in the caches (16 x 64 x
// 784 floats, 3.2 MB, per image; at most 4 MB at once): a loop over groups
// of images (here one image each), every group transformed, multiplied and
// transformed back into its part of the result in place.
// CHECK-LABEL: func.func @groups_of_images
// CHECK: %[[PADDED:.*]] = tensor.pad %arg0
// CHECK: %[[RESULT:.*]] = scf.for %[[FIRST:.*]] = %c0 to %c2 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x64x56x56xf32>)
// CHECK: %[[IMAGE:.*]] = tensor.extract_slice %[[PADDED]][%[[FIRST]], 0, 0, 0] [1, 64, 58, 58] [1, 1, 1, 1]
// CHECK: %[[PART:.*]] = tensor.extract_slice %[[ACC]][%[[FIRST]], 0, 0, 0] [1, 64, 56, 56] [1, 1, 1, 1]
// CHECK: kiln.winograd = "input"
// CHECK: tensor<16x64x784xf32>
// CHECK: %[[TILED:.*]] = tensor.expand_shape %[[PART]]
// CHECK: linalg.fill {{.*}} outs(%[[TILED]] : tensor<1x64x28x2x28x2xf32>)
// CHECK: kiln.winograd = "output"
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%[[FIRST]], 0, 0, 0] [1, 64, 56, 56] [1, 1, 1, 1]
// CHECK: scf.yield
func.func @groups_of_images(%x: tensor<2x64x56x56xf32>) -> tensor<2x64x56x56xf32> {
  %w = kiln.constant dense<1.0> : tensor<64x64x3x3xf32>
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<2x64x56x56xf32>
  return %0 : tensor<2x64x56x56xf32>
}
