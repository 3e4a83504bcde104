// RUN: not kiln-opt %s --convert-kiln-to-linalg 2>&1 | FileCheck %s

// Ops without a lowering yet are all named in one error, with counts.
// CHECK: error: no lowering to linalg yet for: kiln.expand (1), kiln.resize (2)
func.func @not_lowered(%x: tensor<1x3x8x8xf32>, %s: tensor<4xi64>) -> (tensor<1x3x16x16xf32>, tensor<1x3x4x4xf32>, tensor<?x?x?x?xf32>) {
  %0 = kiln.resize %x sizes = [1, 3, 16, 16] scales = [1.0, 1.0, 2.0, 2.0] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  %1 = kiln.resize %x sizes = [1, 3, 4, 4] scales = [1.0, 1.0, 0.5, 0.5] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  // A run-time target shape (only constant ones are lowered).
  %2 = kiln.expand %x by %s : tensor<1x3x8x8xf32>, tensor<4xi64> -> tensor<?x?x?x?xf32>
  return %0, %1, %2 : tensor<1x3x16x16xf32>, tensor<1x3x4x4xf32>, tensor<?x?x?x?xf32>
}
