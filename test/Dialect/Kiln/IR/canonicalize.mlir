// RUN: kiln-opt %s -split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @add_zero
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @add_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = kiln.constant dense<0.0> : tensor<3xf32>
  %0 = kiln.add %zero, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @mul_one_sub_zero_div_one_pow_one
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @mul_one_sub_zero_div_one_pow_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<1xf32>
  %0 = kiln.mul %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = kiln.sub %0, %zero : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %2 = kiln.div %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = kiln.pow %2, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Multiplying by a broadcast 1 changes the shape: not an identity.
// CHECK-LABEL: func.func @mul_one_broadcasts
// CHECK: kiln.mul
func.func @mul_one_broadcasts(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %one = kiln.constant dense<1.0> : tensor<2x1xf32>
  %0 = kiln.mul %x, %one : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @sub_zero_on_left_is_kept
// CHECK: kiln.sub
func.func @sub_zero_on_left_is_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.sub %zero, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @involutions
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xi1>)
// CHECK-NEXT: return %[[X]], %[[B]]
func.func @involutions(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0 = kiln.neg %x : tensor<4xf32> -> tensor<4xf32>
  %1 = kiln.neg %0 : tensor<4xf32> -> tensor<4xf32>
  %2 = kiln.not %b : tensor<4xi1> -> tensor<4xi1>
  %3 = kiln.not %2 : tensor<4xi1> -> tensor<4xi1>
  return %1, %3 : tensor<4xf32>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @max_min_self
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @max_min_self(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.max %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.min %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = kiln.reshape %[[X]] to [4, 6] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = kiln.reshape %x to [24] : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = kiln.reshape %0 to [4, 6] : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.reshape %x to [2, -1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant_shape_operand
// CHECK: kiln.reshape %{{.*}} to [3, -1] : tensor<6xf32> -> tensor<?x?xf32>
// CHECK-NOT: kiln.constant
func.func @reshape_constant_shape_operand(%x: tensor<6xf32>) -> tensor<?x?xf32> {
  %s = kiln.constant dense<[3, -1]> : tensor<2xi64>
  %0 = kiln.reshape %x by %s : tensor<6xf32>, tensor<2xi64> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @expand_constant_shape_operand
// CHECK: kiln.expand %{{.*}} to [4, 1] : tensor<1x3xf32> -> tensor<4x3xf32>
func.func @expand_constant_shape_operand(%x: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %s = kiln.constant dense<[4, 1]> : tensor<2xi64>
  %0 = kiln.expand %x by %s : tensor<1x3xf32>, tensor<2xi64> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @expand_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @expand_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.expand %x to [1, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = kiln.transpose %[[X]] perm = [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = kiln.transpose %x perm = [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = kiln.transpose %0 perm = [1, 0, 2] : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_roundtrip
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_roundtrip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = kiln.transpose %0 perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @identity_slice_concat_cast_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identity_slice_concat_cast_reduce(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = kiln.slice %x starts = [0, 0] ends = [2, 3] steps = [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = kiln.concat %x axis = 0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = kiln.cast %x to f32 : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = kiln.reduce_sum %x axes = [] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @normalize_axes
// CHECK: kiln.reduce_sum %{{.*}} axes = [0, 2] keepdims
// CHECK: kiln.argmax %{{.*}} axis = 2
// CHECK: kiln.softmax %{{.*}} axis = 2
// CHECK: kiln.log_softmax %{{.*}} axis = 1
// CHECK: kiln.concat %{{.*}}, %{{.*}} axis = 1
// CHECK: kiln.split %{{.*}} axis = 2
// CHECK: kiln.gather %{{.*}}[%{{.*}}] axis = 1
func.func @normalize_axes(%x: tensor<2x3x4xf32>, %i: tensor<2xi64>) -> (tensor<1x3x1xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x6x4xf32>, tensor<2x3x2xf32>, tensor<2x2x4xf32>) {
  %0 = kiln.reduce_sum %x axes = [-1, 0] keepdims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %1 = kiln.argmax %x axis = -1 : tensor<2x3x4xf32> -> tensor<2x3xi64>
  %2 = kiln.softmax %x axis = -1 : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %3 = kiln.log_softmax %x axis = -2 : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %4 = kiln.concat %x, %x axis = -2 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  %5:2 = kiln.split %x axis = -1 sizes = [2, 2] : tensor<2x3x4xf32> -> tensor<2x3x2xf32>, tensor<2x3x2xf32>
  %6 = kiln.gather %x[%i] axis = -2 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x2x4xf32>
  return %0, %1, %2, %3, %4, %5#0, %6 : tensor<1x3x1xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x6x4xf32>, tensor<2x3x2xf32>, tensor<2x2x4xf32>
}

// -----

// Small integer arithmetic folds to constants; the compare too.
// CHECK-LABEL: func.func @integer_constant_folding
// CHECK-DAG: %[[A:.*]] = kiln.constant dense<[7, 13]> : tensor<2xi64>
// CHECK-DAG: %[[B:.*]] = kiln.constant dense<true> : tensor<2xi1>
// CHECK: return %[[A]], %[[B]]
func.func @integer_constant_folding() -> (tensor<2xi64>, tensor<2xi1>) {
  %a = kiln.constant dense<[3, 4]> : tensor<2xi64>
  %b = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %c = kiln.constant dense<1> : tensor<i64>
  %0 = kiln.mul %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = kiln.add %0, %c : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %2 = kiln.compare lt, %1, %0 : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %3 = kiln.not %2 : tensor<2xi1> -> tensor<2xi1>
  %4 = kiln.neg %1 : tensor<2xi64> -> tensor<2xi64>
  %5 = kiln.neg %4 : tensor<2xi64> -> tensor<2xi64>
  %6 = kiln.max %5, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %6, %3 : tensor<2xi64>, tensor<2xi1>
}

// -----

// Float arithmetic is never evaluated at compile time.
// CHECK-LABEL: func.func @no_float_folding
// CHECK: kiln.add
func.func @no_float_folding() -> tensor<2xf32> {
  %a = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Constant exponents 2, 3, 4, 0.5 and -1 need no pow; others keep it, and
// so does an exponent that broadcasts the base to a larger shape.
// CHECK-LABEL: func.func @pow_by_constant
// CHECK-DAG: %[[SQ:.*]] = kiln.mul %arg0, %arg0
// CHECK-DAG: %[[CUBE:.*]] = kiln.mul %[[SQ]], %arg0
// CHECK-DAG: %[[ROOT:.*]] = kiln.sqrt %arg0
// CHECK-DAG: %[[INV:.*]] = kiln.reciprocal %arg0
// CHECK-DAG: %[[SEVEN:.*]] = kiln.pow %arg0, %{{.*}} : (tensor<8xf32>, tensor<f32>)
// CHECK-DAG: %[[GROWN:.*]] = kiln.pow %arg0, %{{.*}} : (tensor<8xf32>, tensor<2x8xf32>)
// CHECK: return %[[CUBE]], %[[ROOT]], %[[INV]], %[[SEVEN]], %[[GROWN]]
func.func @pow_by_constant(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>) {
  %c3 = kiln.constant dense<3.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %minus1 = kiln.constant dense<-1.0> : tensor<f32>
  %c7 = kiln.constant dense<7.0> : tensor<f32>
  %c2 = kiln.constant dense<2.0> : tensor<2x8xf32>
  %0 = kiln.pow %x, %c3 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = kiln.pow %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = kiln.pow %x, %minus1 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = kiln.pow %x, %c7 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %4 = kiln.pow %x, %c2 : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>
}
