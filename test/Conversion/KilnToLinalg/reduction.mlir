// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[KEEP:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-LABEL: func.func @reduce_sum_keepdims
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x1x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[KEEP]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%[[FILL]] : tensor<2x1x4xf32>)
// CHECK: arith.addf %out, %in
func.func @reduce_sum_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = kiln.reduce_sum %x axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Identities: -inf for max, +inf for min, 1 for prod; mean divides by 12.
// CHECK-LABEL: func.func @identities
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: arith.minimumf
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.mulf
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: arith.divf
func.func @identities(%x: tensor<3x4xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = kiln.reduce_max %x axes = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %1 = kiln.reduce_min %x axes = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %2 = kiln.reduce_prod %x axes = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %3 = kiln.reduce_mean %x axes = [-1, 0] : tensor<3x4xf32> -> tensor<f32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Innermost reduced dims (a global average pool's H x W) are reduced as rows
// of their product: one contiguous reduction loop, keepdims' unit dim
// of the row expanded into the run's (static shapes).
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROWOUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @reduce_trailing_dims_as_rows
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<2x8x7x7xf32> into tensor<2x8x49xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ROWOUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]] : tensor<2x8x49xf32>) outs(%{{.*}} : tensor<2x8x1xf32>)
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 1, 1] : tensor<2x8x1xf32> into tensor<2x8x1x1xf32>
// CHECK: linalg.generic {{.*}} ins(%[[KEPT]] : tensor<2x8x1x1xf32>)
// CHECK: arith.constant 4.900000e+01 : f32
// CHECK: arith.divf
func.func @reduce_trailing_dims_as_rows(%x: tensor<2x8x7x7xf32>) -> tensor<2x8x1x1xf32> {
  %0 = kiln.reduce_mean %x axes = [2, 3] keepdims : tensor<2x8x7x7xf32> -> tensor<2x8x1x1xf32>
  return %0 : tensor<2x8x1x1xf32>
}

// -----

// An outer reduced axis stays a reduction dim beside the row; without
// keepdims the row reduction's result is the result.
// CHECK-DAG: #[[OUTER:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @reduce_outer_axis_and_rows
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<2x8x3x5xf32> into tensor<2x8x15xf32>
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[OUTER]]], iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[ROWS]] : tensor<2x8x15xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[MAX]]
func.func @reduce_outer_axis_and_rows(%x: tensor<2x8x3x5xf32>) -> tensor<8xf32> {
  %0 = kiln.reduce_max %x axes = [0, 2, 3] : tensor<2x8x3x5xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Reducing every dim with keepdims: one row of all the elements, its unit
// dim expanded into the result's.
// CHECK-LABEL: func.func @reduce_all_keepdims
// CHECK: %[[ROW:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ROW]] : tensor<12xf32>) outs(%{{.*}} : tensor<1xf32>)
// CHECK: tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
func.func @reduce_all_keepdims(%x: tensor<3x4xf32>) -> tensor<1x1xf32> {
  %0 = kiln.reduce_sum %x axes = [0, 1] keepdims : tensor<3x4xf32> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// Integer max starts from the type's minimum (signed) or 0 (unsigned).
// CHECK-LABEL: func.func @integer_max
// CHECK: arith.constant -128 : i8
// CHECK: arith.maxsi
// CHECK: arith.constant 0 : i8
// CHECK: arith.maxui
func.func @integer_max(%a: tensor<4xi8>, %b: tensor<4xui8>) -> (tensor<i8>, tensor<ui8>) {
  %0 = kiln.reduce_max %a axes = [0] : tensor<4xi8> -> tensor<i8>
  %1 = kiln.reduce_max %b axes = [0] : tensor<4xui8> -> tensor<ui8>
  return %0, %1 : tensor<i8>, tensor<ui8>
}

// -----

// Softmax: max (NaN-ignoring: a NaN makes its row NaN through x - max
// anyway; the sign of a zero maximum does not matter to exp(x - max)),
// exp(x - max), sum, divide. x - max is never positive: the exp says so
// (kiln-approximate-math then leaves out its overflow check).
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maxnumf {{.*}} fastmath<nnan,nsz>
// CHECK: arith.subf
// CHECK: math.exp %{{.*}} {kiln.nonpositive_operand} : f32
// CHECK: arith.addf
// CHECK: arith.divf
// Log-softmax subtracts the log of the sum instead.
// CHECK: math.log
// CHECK: arith.subf
func.func @softmax(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = kiln.softmax %x axis = -1 : tensor<2x5xf32> -> tensor<2x5xf32>
  %1 = kiln.log_softmax %x axis = 1 : tensor<2x5xf32> -> tensor<2x5xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Argmax keeps (value, index) pairs; a strict comparison keeps the first
// index, select_last_index a non-strict one. Unordered compares let NaN win.
// CHECK-LABEL: func.func @argmax
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2x5xf32>) outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: arith.cmpf ugt
// CHECK: linalg.index 1
// CHECK: arith.select
// CHECK: linalg.yield
// CHECK: arith.cmpf ule
func.func @argmax(%x: tensor<2x5xf32>) -> (tensor<2xi64>, tensor<2x1xi64>) {
  %0 = kiln.argmax %x axis = 1 : tensor<2x5xf32> -> tensor<2xi64>
  %1 = kiln.argmin %x axis = -1 keepdims {select_last_index} : tensor<2x5xf32> -> tensor<2x1xi64>
  return %0, %1 : tensor<2xi64>, tensor<2x1xi64>
}
