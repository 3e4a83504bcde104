// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @constants
// CHECK: arith.constant dense<[1, 2]> : tensor<2xi8>
// CHECK: arith.constant dense_resource<blob> : tensor<2xf32>
func.func @constants() -> (tensor<2xui8>, tensor<2xf32>) {
  %0 = kiln.constant dense<[1, 2]> : tensor<2xui8>
  %1 = kiln.constant dense_resource<blob> : tensor<2xf32>
  return %0, %1 : tensor<2xui8>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @reshape_transpose
// CHECK: %[[SHAPE:.*]] = arith.constant dense<[3, 2]> : tensor<2xi64>
// CHECK: %[[R:.*]] = tensor.reshape %arg0(%[[SHAPE]]) : (tensor<6xf32>, tensor<2xi64>) -> tensor<3x2xf32>
// CHECK: linalg.transpose ins(%[[R]] : tensor<3x2xf32>) outs(%{{.*}} : tensor<2x3xf32>) permutation = [1, 0]
func.func @reshape_transpose(%x: tensor<6xf32>) -> tensor<2x3xf32> {
  %0 = kiln.reshape %x to [3, -1] : tensor<6xf32> -> tensor<3x2xf32>
  %1 = kiln.transpose %0 perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_split
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x5xf32>
// CHECK: %[[A:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [2, 2] [1, 1]
// CHECK: %[[C:.*]] = tensor.insert_slice %arg1 into %[[A]][0, 2] [2, 3] [1, 1]
// CHECK: tensor.extract_slice %[[C]][0, 0] [2, 4] [1, 1]
// CHECK: tensor.extract_slice %[[C]][0, 4] [2, 1] [1, 1]
func.func @concat_split(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>) {
  %0 = kiln.concat %a, %b axis = 1 : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %1:2 = kiln.split %0 axis = -1 sizes = [4, 1] : tensor<2x5xf32> -> tensor<2x4xf32>, tensor<2x1xf32>
  return %1#0, %1#1 : tensor<2x4xf32>, tensor<2x1xf32>
}

// -----

// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1) -> (d0 + 1, -d1 + 7)>
// CHECK-LABEL: func.func @slices
// CHECK: tensor.extract_slice %arg0[1, 0] [3, 4] [2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[REV]], #{{.*}}]
func.func @slices(%x: tensor<8x8xf32>) -> (tensor<3x4xf32>, tensor<2x8xf32>) {
  %0 = kiln.slice %x starts = [1, 0] ends = [7, 8] steps = [2, 2] : tensor<8x8xf32> -> tensor<3x4xf32>
  %1 = kiln.slice %x starts = [1, 7] ends = [3, -1] steps = [1, -1] : tensor<8x8xf32> -> tensor<2x8xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<2x8xf32>
}

// -----

// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @expand
// CHECK: linalg.generic {indexing_maps = [#[[BCAST]], #{{.*}}]
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
func.func @expand(%x: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.expand %x to [4, 3] : tensor<1x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Gather reads the indices through the map and the data with tensor.extract,
// wrapping negative indices and clamping to the axis.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2x3xi64>)
// CHECK: arith.index_cast
// CHECK: arith.select
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: %[[D:.*]] = linalg.index 2 : index
// CHECK: tensor.extract %arg0[%{{.*}}, %[[D]]] : tensor<5x4xf32>
func.func @gather(%table: tensor<5x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = kiln.gather %table[%ids] axis = 0 : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Constant padding crops negative pads, then pads the positive ones.
// CHECK-LABEL: func.func @pad_constant
// CHECK: %[[CROP:.*]] = tensor.extract_slice %arg0[0, 1] [4, 4] [1, 1]
// CHECK: tensor.pad %[[CROP]] low[1, 0] high[2, 0]
// CHECK: tensor.yield %{{.*}} : f32
func.func @pad_constant(%x: tensor<4x5xf32>) -> tensor<7x4xf32> {
  %0 = kiln.pad %x pads = [1, -1, 2, 0] mode = constant {value = 1.5 : f64} : tensor<4x5xf32> -> tensor<7x4xf32>
  return %0 : tensor<7x4xf32>
}

// -----

// Reflect: i < 0 reads -i, i > n - 1 reads 2 (n - 1) - i.
// CHECK-LABEL: func.func @pad_reflect
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %arg0
func.func @pad_reflect(%x: tensor<5xf32>) -> tensor<8xf32> {
  %0 = kiln.pad %x pads = [1, 2] mode = reflect : tensor<5xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
