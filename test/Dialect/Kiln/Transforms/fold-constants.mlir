// RUN: kiln-opt %s -split-input-file --kiln-shape-inference --kiln-fold-constants --kiln-shape-inference | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-fold-constants=max-elements=1 | FileCheck %s --check-prefix=LIMIT

// The exporter idiom Shape -> Gather -> Unsqueeze/Concat -> Reshape folds
// away, and the reshape becomes fully static.
// CHECK-LABEL: func.func @flatten_shape_subgraph
// CHECK-SAME: -> tensor<2x12xf32>
// CHECK-NOT: kiln.shape_of
// CHECK-NOT: kiln.gather
// CHECK-NOT: kiln.concat
// CHECK: kiln.reshape %{{.*}} to [2, -1] : tensor<2x3x4xf32> -> tensor<2x12xf32>
// CHECK-NEXT: return
// LIMIT-LABEL: func.func @flatten_shape_subgraph
// LIMIT: kiln.shape_of
func.func @flatten_shape_subgraph(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %shape = kiln.shape_of %x : tensor<2x3x4xf32> -> tensor<3xi64>
  %zero = kiln.constant dense<0> : tensor<1xi64>
  %batch = kiln.gather %shape[%zero] axis = 0 : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %minus_one = kiln.constant dense<-1> : tensor<1xi64>
  %target = kiln.concat %batch, %minus_one axis = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %0 = kiln.reshape %x by %target : tensor<2x3x4xf32>, tensor<2xi64> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Arithmetic on shapes, slices, casts and expand of shape data.
// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-DAG: kiln.constant dense<[4, 6]> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<[3, 2]> : tensor<2xi32>
// CHECK-DAG: kiln.constant dense<{{\[}}[2, 3], [2, 3]]> : tensor<2x2xi64>
// CHECK-DAG: kiln.constant dense<4> : tensor<2xi64>
// CHECK-NOT: kiln.mul
// CHECK-NOT: kiln.slice
func.func @shape_arithmetic(%x: tensor<2x3x4xf32>) -> (tensor<2xi64>, tensor<2xi32>, tensor<2x2xi64>, tensor<2xi64>) {
  %shape = kiln.shape_of %x : tensor<2x3x4xf32> -> tensor<3xi64>
  %tail = kiln.slice %shape starts = [0] ends = [2] steps = [1] : tensor<3xi64> -> tensor<2xi64>
  %two = kiln.constant dense<2> : tensor<i64>
  %0 = kiln.mul %tail, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %rev = kiln.slice %shape starts = [1] ends = [-1] steps = [-1] : tensor<3xi64> -> tensor<2xi64>
  %1 = kiln.cast %rev to i32 : tensor<2xi64> -> tensor<2xi32>
  %2 = kiln.expand %tail to [2, 1] : tensor<2xi64> -> tensor<2x2xi64>
  %3 = kiln.div %0, %tail : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %4 = kiln.transpose %2 perm = [1, 0] : tensor<2x2xi64> -> tensor<2x2xi64>
  %5 = kiln.reduce_sum %4 axes = [] : tensor<2x2xi64> -> tensor<2x2xi64>
  %6 = kiln.add %3, %3 : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %7 = kiln.reshape %6 to [2] : tensor<2xi64> -> tensor<2xi64>
  %8 = kiln.max %7, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %9 = kiln.sub %8, %3 : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %10 = kiln.mul %9, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %0, %1, %2, %10 : tensor<2xi64>, tensor<2xi32>, tensor<2x2xi64>, tensor<2xi64>
}

// -----

// Dynamic dims and float data are left alone; so is division by zero.
// CHECK-LABEL: func.func @not_foldable
// CHECK: kiln.shape_of
// CHECK: kiln.add
// CHECK: kiln.div
func.func @not_foldable(%x: tensor<?x4xf32>) -> (tensor<2xi64>, tensor<2xf32>, tensor<2xi64>) {
  %0 = kiln.shape_of %x : tensor<?x4xf32> -> tensor<2xi64>
  %f = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = kiln.add %f, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %a = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %z = kiln.constant dense<0> : tensor<i64>
  %2 = kiln.div %a, %z : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %0, %1, %2 : tensor<2xi64>, tensor<2xf32>, tensor<2xi64>
}

// -----

// Negative axes in evaluated gather and concat.
// CHECK-LABEL: func.func @negative_axes
// CHECK: kiln.constant dense<[4, 3, 2, 4]> : tensor<4xi64>
func.func @negative_axes(%x: tensor<2x3x4xf32>) -> tensor<4xi64> {
  %shape = kiln.shape_of %x : tensor<2x3x4xf32> -> tensor<3xi64>
  %idx = kiln.constant dense<[-1, 1]> : tensor<2xi64>
  %picked = kiln.gather %shape[%idx] axis = -1 : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %head = kiln.slice %shape starts = [0] ends = [1] steps = [1] : tensor<3xi64> -> tensor<1xi64>
  %last = kiln.slice %shape starts = [2] ends = [3] steps = [1] : tensor<3xi64> -> tensor<1xi64>
  %0 = kiln.concat %picked, %head, %last axis = -1 : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
