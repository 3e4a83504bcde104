// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// Batch dims broadcast through the maps (lhs batch 1 reads 0); k is the
// reduction dim. Loops: (batch, m, n, k).
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched_matmul
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<3x4x6xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x4x5xf32>, tensor<3x5x6xf32>) outs(%[[FILL]] : tensor<3x4x6xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @batched_matmul(%a: tensor<1x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<3x4x6xf32> {
  %0 = kiln.matmul %a, %b : (tensor<1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}

// -----

// CHECK-LABEL: func.func @integer_matmul
// CHECK: arith.muli
// CHECK: arith.addi
func.func @integer_matmul(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x2xi32> {
  %0 = kiln.matmul %a, %b : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}
