// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// Nearest: output index -> coordinate (asymmetric: o / scale) -> rounded
// (round_prefer_ceil: floor(x + 0.5), so output 1 reads input 1, not a run
// of 2) -> clamped index -> one tensor.extract.
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
  %0 = kiln.resize %x sizes = [1, 1, 4, 4] scales = [1.0, 1.0, 2.0, 2.0] mode = nearest coordinate_transform = asymmetric nearest_mode = round_prefer_ceil : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Nearest upsampling that repeats each input element a whole number of
// times (half_pixel with round_prefer_floor, ONNX's defaults, by 2; and
// asymmetric with floor by 3 and by 2): a copy whose input map divides the
// output index, no coordinates computed.
// CHECK-DAG: #[[RUNS2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
// CHECK-DAG: #[[RUNS32:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 3, d3 floordiv 2)>
// CHECK-LABEL: func.func @nearest_runs
// CHECK: linalg.generic {indexing_maps = [#[[RUNS2]], #{{.*}}], {{.*}} ins(%arg0
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
// CHECK: linalg.generic {indexing_maps = [#[[RUNS32]], #{{.*}}], {{.*}} ins(%arg1
// CHECK-NOT: tensor.extract
func.func @nearest_runs(%x: tensor<1x3x2x2xf32>, %y: tensor<1x1x2x2xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x1x6x4xf32>) {
  %0 = kiln.resize %x sizes = [1, 3, 4, 4] scales = [1.0, 1.0, 2.0, 2.0] mode = nearest coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x3x2x2xf32> -> tensor<1x3x4x4xf32>
  %1 = kiln.resize %y sizes = [1, 1, 6, 4] scales = [1.0, 1.0, 3.0, 2.0] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x1x2x2xf32> -> tensor<1x1x6x4xf32>
  return %0, %1 : tensor<1x3x4x4xf32>, tensor<1x1x6x4xf32>
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

// -----

// Nearest downsampling by 2 (half_pixel, round_prefer_floor: output o reads
// input 2o) is a strided copy; so is align_corners from 7 to 4 (inputs 0,
// 2, 4 and 6).
// CHECK-DAG: #[[EVERY2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2, d3 * 2)>
// CHECK-LABEL: func.func @nearest_strided
// CHECK: linalg.generic {indexing_maps = [#[[EVERY2]], #{{.*}}], {{.*}} ins(%arg0
// CHECK: linalg.generic {indexing_maps = [#[[EVERY2]], #{{.*}}], {{.*}} ins(%arg1
// CHECK-NOT: tensor.extract
func.func @nearest_strided(%x: tensor<1x2x8x8xf32>, %y: tensor<1x2x7x7xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %0 = kiln.resize %x sizes = [1, 2, 4, 4] scales = [1.0, 1.0, 0.5, 0.5] mode = nearest coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  %1 = kiln.resize %y sizes = [1, 2, 4, 4] scales = [1.0, 1.0, 0.571428597, 0.571428597] mode = nearest coordinate_transform = align_corners nearest_mode = round_prefer_floor : tensor<1x2x7x7xf32> -> tensor<1x2x4x4xf32>
  return %0, %1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
