// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// Nearest: output index -> coordinate (asymmetric: o / scale) -> floor ->
// clamped index -> one tensor.extract.
// CHECK-LABEL: func.func @nearest
// CHECK: linalg.generic
// CHECK: linalg.index 2
// CHECK: arith.divf
// CHECK: math.floor
// CHECK: arith.minimumf
// CHECK: tensor.extract %arg0
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @nearest(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = kiln.resize %x sizes = [1, 1, 4, 4] scales = [1.0, 1.0, 2.0, 2.0] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Linear over the two resized dims: four neighbours, weighted.
// CHECK-LABEL: func.func @bilinear
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @bilinear(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %0 = kiln.resize %x sizes = [1, 3, 4, 4] scales = [1.0, 1.0, 2.0, 2.0] mode = linear coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x3x2x2xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}
