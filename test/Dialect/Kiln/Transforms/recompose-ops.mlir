// RUN: kiln-opt %s --kiln-recompose-ops -split-input-file | FileCheck %s

// GPT-2's GELU as exported: 0.5 * (x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))),
// with x^3 already expanded to products by canonicalization.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT: %[[G:.*]] = kiln.gelu %arg0 approximation = tanh : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %k = kiln.constant dense<4.471500e-02> : tensor<f32>
  %c = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %0 = kiln.mul %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = kiln.mul %0, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = kiln.mul %1, %k : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = kiln.add %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = kiln.mul %3, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %5 = kiln.tanh %4 : tensor<2x8xf32> -> tensor<2x8xf32>
  %6 = kiln.add %5, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %7 = kiln.mul %x, %6 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %8 = kiln.mul %7, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %8 : tensor<2x8xf32>
}

// -----

// The other association and operand order: (0.5 * x) * (1 + tanh(...)),
// x^3 as a Pow, the constants on the left, and x itself a product (which
// must stay whole rather than be flattened into the monomials).
// CHECK-LABEL: func.func @gelu_tanh_reassociated
// CHECK: %[[X:.*]] = kiln.mul %arg0, %arg1
// CHECK-NEXT: %[[G:.*]] = kiln.gelu %[[X]] approximation = tanh
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh_reassociated(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %three = kiln.constant dense<3.000000e+00> : tensor<f32>
  %k = kiln.constant dense<4.471500e-02> : tensor<f32>
  %c = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %x = kiln.mul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %0 = kiln.pow %x, %three : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = kiln.mul %k, %0 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = kiln.add %1, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = kiln.mul %c, %2 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = kiln.tanh %3 : tensor<8xf32> -> tensor<8xf32>
  %5 = kiln.add %one, %4 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %6 = kiln.mul %half, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %7 = kiln.mul %6, %5 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %7 : tensor<8xf32>
}

// -----

// BERT's GELU: x * 0.5 * (1 + erf(x / sqrt(2))) and the same with a
// multiplication by 1/sqrt(2).
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NEXT: %[[G0:.*]] = kiln.gelu %arg0 approximation = none
// CHECK-NEXT: %[[G1:.*]] = kiln.gelu %arg0 approximation = none
// CHECK-NEXT: return %[[G0]], %[[G1]]
func.func @gelu_erf(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %rsqrt2 = kiln.constant dense<0.707106769> : tensor<f32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %0 = kiln.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = kiln.erf %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = kiln.add %1, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = kiln.mul %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %4 = kiln.mul %3, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %5 = kiln.mul %x, %rsqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = kiln.erf %5 : tensor<8xf32> -> tensor<8xf32>
  %7 = kiln.add %one, %6 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %8 = kiln.mul %x, %7 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %9 = kiln.mul %8, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %4, %9 : tensor<8xf32>, tensor<8xf32>
}

// -----

// An intermediate used elsewhere stays; the GELU is still recognized.
// CHECK-LABEL: func.func @gelu_intermediate_used
// CHECK: %[[ERF:.*]] = kiln.erf
// CHECK: %[[G:.*]] = kiln.gelu %arg0 approximation = none
// CHECK: return %[[G]], %[[ERF]]
func.func @gelu_intermediate_used(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %0 = kiln.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = kiln.erf %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = kiln.add %1, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = kiln.mul %x, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = kiln.mul %3, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %4, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Not GELU: a wrong constant (0.04 instead of 0.044715), a different x in
// the two places, and a constant that broadcasts x to a larger shape.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: kiln.gelu
// CHECK: return
func.func @not_gelu(%x: tensor<8xf32>, %y: tensor<8xf32>, %s: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>) {
  %k = kiln.constant dense<4.000000e-02> : tensor<f32>
  %c = kiln.constant dense<0.797884583> : tensor<f32>
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %halves = kiln.constant dense<5.000000e-01> : tensor<2x8xf32>
  %0 = kiln.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = kiln.mul %0, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = kiln.mul %1, %k : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = kiln.add %x, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = kiln.mul %3, %c : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %5 = kiln.tanh %4 : tensor<8xf32> -> tensor<8xf32>
  %6 = kiln.add %5, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %7 = kiln.mul %x, %6 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %8 = kiln.mul %7, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %10 = kiln.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %11 = kiln.erf %10 : tensor<8xf32> -> tensor<8xf32>
  %12 = kiln.add %11, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %13 = kiln.mul %y, %12 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %14 = kiln.mul %13, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %15 = kiln.mul %x, %12 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %16 = kiln.mul %15, %halves : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %8, %14, %16 : tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>
}
