// RUN: not kiln-opt %s --convert-kiln-to-linalg 2>&1 | FileCheck %s

// Ops without a lowering yet are all named in one error, with counts.
// CHECK: error: no lowering to linalg yet for: kiln.argmax (1), kiln.pad (1), kiln.resize (2)
func.func @not_lowered(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x10x10xf32>, tensor<1x8x8xi64>, tensor<1x3x16x16xf32>, tensor<1x3x4x4xf32>) {
  %0 = kiln.pad %x pads = [0, 0, 1, 1, 0, 0, 1, 1] mode = reflect : tensor<1x3x8x8xf32> -> tensor<1x3x10x10xf32>
  %1 = kiln.argmax %x axis = 1 : tensor<1x3x8x8xf32> -> tensor<1x8x8xi64>
  %2 = kiln.resize %x sizes = [1, 3, 16, 16] scales = [1.0, 1.0, 2.0, 2.0] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  %3 = kiln.resize %x sizes = [1, 3, 4, 4] scales = [1.0, 1.0, 0.5, 0.5] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0, %1, %2, %3 : tensor<1x3x10x10xf32>, tensor<1x8x8xi64>, tensor<1x3x16x16xf32>, tensor<1x3x4x4xf32>
}
