// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @reductions
// CHECK: kiln.reduce_sum %{{.*}} axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK: kiln.reduce_mean %{{.*}} axes = [-1] : tensor<2x3x4xf32> -> tensor<2x3xf32>
// CHECK: kiln.reduce_max %{{.*}} axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK: kiln.reduce_min %{{.*}} axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// CHECK: kiln.reduce_prod %{{.*}} axes = [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
func.func @reductions(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x4xf32>) {
  %0 = kiln.reduce_sum %x axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %1 = kiln.reduce_mean %x axes = [-1] : tensor<2x3x4xf32> -> tensor<2x3xf32>
  %2 = kiln.reduce_max %x axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %3 = kiln.reduce_min %x axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %4 = kiln.reduce_prod %x axes = [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %0, %1, %2, %3, %4 : tensor<2x1x4xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @integer_reduction
// CHECK: kiln.reduce_sum %{{.*}} axes = [0] : tensor<5xi64> -> tensor<i64>
func.func @integer_reduction(%x: tensor<5xi64>) -> tensor<i64> {
  %0 = kiln.reduce_sum %x axes = [0] : tensor<5xi64> -> tensor<i64>
  return %0 : tensor<i64>
}

// CHECK-LABEL: func.func @arg_reductions
// CHECK: kiln.argmax %{{.*}} axis = 1 keepdims : tensor<2x3xf32> -> tensor<2x1xi64>
// CHECK: kiln.argmin %{{.*}} axis = -1 {select_last_index} : tensor<2x3xf32> -> tensor<2xi64>
func.func @arg_reductions(%x: tensor<2x3xf32>) -> (tensor<2x1xi64>, tensor<2xi64>) {
  %0 = kiln.argmax %x axis = 1 keepdims : tensor<2x3xf32> -> tensor<2x1xi64>
  %1 = kiln.argmin %x axis = -1 {select_last_index} : tensor<2x3xf32> -> tensor<2xi64>
  return %0, %1 : tensor<2x1xi64>, tensor<2xi64>
}

// CHECK-LABEL: func.func @softmax
// CHECK: kiln.softmax %{{.*}} axis = -1 : tensor<8x128xf32> -> tensor<8x128xf32>
// CHECK: kiln.log_softmax %{{.*}} axis = 0 : tensor<8x128xf32> -> tensor<8x128xf32>
func.func @softmax(%x: tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>) {
  %0 = kiln.softmax %x axis = -1 : tensor<8x128xf32> -> tensor<8x128xf32>
  %1 = kiln.log_softmax %x axis = 0 : tensor<8x128xf32> -> tensor<8x128xf32>
  return %0, %1 : tensor<8x128xf32>, tensor<8x128xf32>
}
