// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Round trip of every elementwise op: parse, print, parse again.

// CHECK-LABEL: func.func @abs
// CHECK: kiln.abs %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @abs(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.abs %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @neg
// CHECK: kiln.neg %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @neg(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.neg %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @exp
// CHECK: kiln.exp %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @exp(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.exp %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @log
// CHECK: kiln.log %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @log(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.log %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @sqrt
// CHECK: kiln.sqrt %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @sqrt(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.sqrt %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @rsqrt
// CHECK: kiln.rsqrt %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @rsqrt(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.rsqrt %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @reciprocal
// CHECK: kiln.reciprocal %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @reciprocal(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.reciprocal %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @tanh
// CHECK: kiln.tanh %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @tanh(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.tanh %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @sigmoid
// CHECK: kiln.sigmoid %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @sigmoid(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.sigmoid %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @erf
// CHECK: kiln.erf %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @erf(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.erf %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK: kiln.relu %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @relu(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.relu %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @floor
// CHECK: kiln.floor %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @floor(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.floor %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @ceil
// CHECK: kiln.ceil %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @ceil(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.ceil %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @round
// CHECK: kiln.round %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @round(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.round %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @sign
// CHECK: kiln.sign %{{.*}} : tensor<2x?xf32> -> tensor<2x?xf32>
func.func @sign(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = kiln.sign %x : tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @abs_i32
// CHECK: kiln.abs %{{.*}} : tensor<4xi32> -> tensor<4xi32>
func.func @abs_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.abs %x : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @neg_i64
// CHECK: kiln.neg %{{.*}} : tensor<4xi64> -> tensor<4xi64>
func.func @neg_i64(%x: tensor<4xi64>) -> tensor<4xi64> {
  %0 = kiln.neg %x : tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// CHECK-LABEL: func.func @relu_i8
// CHECK: kiln.relu %{{.*}} : tensor<4xi8> -> tensor<4xi8>
func.func @relu_i8(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = kiln.relu %x : tensor<4xi8> -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// CHECK-LABEL: func.func @sign_i32
// CHECK: kiln.sign %{{.*}} : tensor<4xi32> -> tensor<4xi32>
func.func @sign_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.sign %x : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @not
// CHECK: kiln.not %{{.*}} : tensor<3xi1> -> tensor<3xi1>
func.func @not(%x: tensor<3xi1>) -> tensor<3xi1> {
  %0 = kiln.not %x : tensor<3xi1> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// CHECK-LABEL: func.func @unrefined_result
// CHECK: kiln.exp %{{.*}} : tensor<2x3xf32> -> tensor<?x?xf32>
func.func @unrefined_result(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = kiln.exp %x : tensor<2x3xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @leaky_relu
// CHECK: kiln.leaky_relu %{{.*}} alpha = 1.000000e-01 : tensor<8xf32> -> tensor<8xf32>
func.func @leaky_relu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.leaky_relu %x alpha = 1.000000e-01 : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @clamp
// CHECK: kiln.clamp %{{.*}} min = 0.000000e+00 max = 6.000000e+00 : tensor<8xf32> -> tensor<8xf32>
func.func @clamp(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.clamp %x min = 0.000000e+00 max = 6.000000e+00 : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @gelu
// CHECK: kiln.gelu %{{.*}} approximation = tanh : tensor<8xf32> -> tensor<8xf32>
func.func @gelu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.gelu %x approximation = tanh : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @gelu_exact
// CHECK: kiln.gelu %{{.*}} approximation = none : tensor<8xf32> -> tensor<8xf32>
func.func @gelu_exact(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.gelu %x approximation = none : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @cast
// CHECK: kiln.cast %{{.*}} to i32 : tensor<8xf32> -> tensor<8xi32>
// CHECK: kiln.cast %{{.*}} to i1 : tensor<8xi32> -> tensor<8xi1>
func.func @cast(%x: tensor<8xf32>) -> tensor<8xi1> {
  %0 = kiln.cast %x to i32 : tensor<8xf32> -> tensor<8xi32>
  %1 = kiln.cast %0 to i1 : tensor<8xi32> -> tensor<8xi1>
  return %1 : tensor<8xi1>
}

// CHECK-LABEL: func.func @add
// CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @add(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.add %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @sub
// CHECK: kiln.sub %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @sub(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.sub %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @mul
// CHECK: kiln.mul %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @mul(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.mul %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @div
// CHECK: kiln.div %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @div(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.div %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @pow
// CHECK: kiln.pow %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @pow(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.pow %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @max
// CHECK: kiln.max %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @max(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.max %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @min
// CHECK: kiln.min %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @min(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.min %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @and
// CHECK: kiln.and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
func.func @and(%a: tensor<2x3xi1>, %b: tensor<1x3xi1>) -> tensor<2x3xi1> {
  %0 = kiln.and %a, %b : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @or
// CHECK: kiln.or %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
func.func @or(%a: tensor<2x3xi1>, %b: tensor<1x3xi1>) -> tensor<2x3xi1> {
  %0 = kiln.or %a, %b : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @xor
// CHECK: kiln.xor %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
func.func @xor(%a: tensor<2x3xi1>, %b: tensor<1x3xi1>) -> tensor<2x3xi1> {
  %0 = kiln.xor %a, %b : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @compare
// CHECK: kiln.compare eq, %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
// CHECK: kiln.compare ne, %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
// CHECK: kiln.compare lt, %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
// CHECK: kiln.compare le, %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
// CHECK: kiln.compare gt, %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
// CHECK: kiln.compare ge, %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
func.func @compare(%a: tensor<4xf32>, %b: tensor<1xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.compare eq, %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %1 = kiln.compare ne, %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %2 = kiln.compare lt, %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %3 = kiln.compare le, %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %4 = kiln.compare gt, %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %5 = kiln.compare ge, %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: func.func @select
// CHECK: kiln.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
func.func @select(%c: tensor<2x1xi1>, %a: tensor<3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %0 = kiln.select %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
