// RUN: not kiln-opt %s --convert-kiln-to-linalg 2>&1 | FileCheck %s

// Ops without a lowering yet are all named in one error, with counts.
// CHECK: error: no lowering to linalg yet for: kiln.conv (1), kiln.max_pool (1), kiln.resize (2)
func.func @not_lowered(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x3x4x4xf32>, tensor<1x3x16x16xf32>, tensor<1x3x4x4xf32>) {
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = kiln.max_pool %x kernel = [2, 2] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  %2 = kiln.resize %x sizes = [1, 3, 16, 16] scales = [1.0, 1.0, 2.0, 2.0] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  %3 = kiln.resize %x sizes = [1, 3, 4, 4] scales = [1.0, 1.0, 0.5, 0.5] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0, %1, %2, %3 : tensor<1x4x6x6xf32>, tensor<1x3x4x4xf32>, tensor<1x3x16x16xf32>, tensor<1x3x4x4xf32>
}
