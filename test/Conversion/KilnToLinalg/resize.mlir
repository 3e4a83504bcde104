// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// Nearest, indices not affine (asymmetric with round_prefer_ceil: output
// 1 reads input 1, not a run of 2): per-dim index tables computed at
// compile time, read as operands along their dim, one tensor.extract.
// CHECK-DAG: #[[ALONG_H:.*]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-DAG: #[[ALONG_W:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @nearest
// CHECK: %[[ROWS:.*]] = arith.constant dense<[0, 1, 1, 1]> : tensor<4xi32>
// CHECK: %[[COLS:.*]] = arith.constant dense<[0, 1, 1, 1]> : tensor<4xi32>
// CHECK: linalg.generic {indexing_maps = [#[[ALONG_H]], #[[ALONG_W]], #{{.*}}], {{.*}} ins(%[[ROWS]], %[[COLS]]
// CHECK-NEXT: ^bb0(%[[ROW:.*]]: i32, %[[COL:.*]]: i32, %{{.*}}: f32):
// CHECK-DAG: %[[R:.*]] = arith.index_cast %[[ROW]]
// CHECK-DAG: %[[C:.*]] = arith.index_cast %[[COL]]
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}, %[[R]], %[[C]]]
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

// Linear over the two resized dims, one dim at a time (the innermost
// first: both grow alike), each from tables of the two neighbours and
// their weights (output 0 is clamped to input 0; rows of 4 outputs are too
// short for periods).
// CHECK-DAG: #[[ALONG_W:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[ALONG_H:.*]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-LABEL: func.func @bilinear
// CHECK: %[[LO:.*]] = arith.constant dense<[0, 0, 0, 1]> : tensor<4xi32>
// CHECK: %[[HI:.*]] = arith.constant dense<1> : tensor<4xi32>
// CHECK: %[[W0:.*]] = arith.constant dense<[1.000000e+00, 7.500000e-01, 2.500000e-01, 1.000000e+00]> : tensor<4xf32>
// CHECK: %[[W1:.*]] = arith.constant dense<[0.000000e+00, 2.500000e-01, 7.500000e-01, 0.000000e+00]> : tensor<4xf32>
// CHECK: %[[COLS:.*]] = linalg.generic {indexing_maps = [#[[ALONG_W]], #[[ALONG_W]], #[[ALONG_W]], #[[ALONG_W]], #{{.*}}], {{.*}} ins(%[[LO]], %[[HI]], %[[W0]], %[[W1]] : {{.*}}) outs(%{{.*}} : tensor<1x3x2x4xf32>)
// CHECK-COUNT-2: tensor.extract %arg0
// CHECK: linalg.yield
// CHECK: linalg.generic {indexing_maps = [#[[ALONG_H]], #[[ALONG_H]], #[[ALONG_H]], #[[ALONG_H]], #{{.*}}], {{.*}} outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK-COUNT-2: tensor.extract %[[COLS]]
// CHECK-NOT: tensor.extract
func.func @bilinear(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %0 = kiln.resize %x sizes = [1, 3, 4, 4] scales = [1.0, 1.0, 2.0, 2.0] mode = linear coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x3x2x2xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Linear upsampling by 2 along rows of 16: output 2q + p reads inputs
// q + shift[p] and q + shift[p] + 1 with the weights of phase p, for the
// periods q in [1, 7); the output laid out [..., 8 periods, 2 phases], the
// run one generic over it with tables of 2 phases (shift [-1, 0] plus the
// first period: [0, 1]), the clamped periods 0 and 7 from tables of their
// own, each written into its box of the result; then the rows' blend.
// CHECK-DAG: #[[PERIOD_PHASE:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
// CHECK-DAG: #[[PHASE:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-LABEL: func.func @bilinear_periods
// CHECK: %[[PERIODS:.*]] = tensor.empty() : tensor<1x3x8x8x2xf32>
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[PERIODS]][0, 0, 0, 0, 0] [1, 3, 8, 1, 2]
// CHECK: linalg.generic {indexing_maps = [#[[PERIOD_PHASE]], {{.*}} outs(%[[FIRST]] :
// CHECK: %[[EDGE:.*]] = tensor.insert_slice
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant dense<[0, 1]> : tensor<2xi32>
// CHECK-DAG: %[[W0:.*]] = arith.constant dense<[2.500000e-01, 7.500000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[W1:.*]] = arith.constant dense<[7.500000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %[[EDGE]][0, 0, 0, 1, 0] [1, 3, 8, 6, 2]
// CHECK: linalg.generic {indexing_maps = [#[[PHASE]], #[[PHASE]], #[[PHASE]], #{{.*}}], {{.*}} ins(%[[SHIFT]], %[[W0]], %[[W1]] : {{.*}}) outs(%[[INTERIOR]] :
// CHECK-NEXT: ^bb0(%[[S:.*]]: i32, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[Q:.*]] = linalg.index 3
// CHECK: %[[SI:.*]] = arith.index_cast %[[S]]
// CHECK: %[[LO:.*]] = arith.addi %[[Q]], %[[SI]]
// CHECK: %[[HI:.*]] = arith.addi %[[LO]], %c1
// CHECK: %[[X0:.*]] = tensor.extract %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %[[LO]]]
// CHECK: arith.mulf %[[A]], %[[X0]]
// CHECK: %[[X1:.*]] = tensor.extract %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %[[HI]]]
// CHECK: arith.mulf %[[B]], %[[X1]]
// CHECK: tensor.insert_slice
// CHECK: tensor.extract_slice {{.*}}[0, 0, 0, 7, 0] [1, 3, 8, 1, 2]
// CHECK: %[[LAST:.*]] = tensor.insert_slice
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[LAST]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x3x8x8x2xf32> into tensor<1x3x8x16xf32>
// CHECK: linalg.generic
// CHECK: tensor.extract %[[COLS]]
func.func @bilinear_periods(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32> {
  %0 = kiln.resize %x sizes = [1, 3, 16, 16] scales = [1.0, 1.0, 2.0, 2.0] mode = linear coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

// Linear downsampling by 2 along rows: output q reads inputs 2q and 2q + 1,
// half each, everywhere (no clamped edge): one run of periods of one
// output, a stride of 2 inputs a period.
// CHECK-LABEL: func.func @linear_down2
// CHECK: %[[PERIODS:.*]] = tensor.empty() : tensor<1x1x16x8x1xf32>
// CHECK: linalg.generic {{.*}} outs(%[[PERIODS]] :
// CHECK: %[[Q:.*]] = linalg.index 3
// CHECK: %[[FIRST:.*]] = arith.muli %[[Q]], %c2
// CHECK: %[[LO:.*]] = arith.addi %[[FIRST]],
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %[[LO]]]
// CHECK: tensor.collapse_shape
// CHECK-NOT: linalg.generic
func.func @linear_down2(%x: tensor<1x1x16x16xf32>) -> tensor<1x1x16x8xf32> {
  %0 = kiln.resize %x sizes = [1, 1, 16, 8] scales = [1.0, 1.0, 1.0, 0.5] mode = linear coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x1x16x16xf32> -> tensor<1x1x16x8xf32>
  return %0 : tensor<1x1x16x8xf32>
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
