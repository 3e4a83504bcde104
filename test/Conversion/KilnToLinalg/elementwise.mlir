// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck %s

// Broadcasting lives in the indexing maps: [3] reads d1, [2x1] reads (d0, 0).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @broadcast_add
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x1xf32>, tensor<3xf32>) outs(%[[EMPTY]] : tensor<2x3xf32>)
// CHECK: arith.addf
func.func @broadcast_add(%a: tensor<2x1xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @float_unary
// CHECK: math.absf
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: arith.divf
// CHECK: math.tanh
// CHECK: math.erf
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: math.roundeven
// Relu is `x < 0 ? 0 : x`: a NaN stays NaN and x86 needs one max for it.
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[V:.*]], %[[ZERO:.*]] : f32
// CHECK: arith.select %[[NEG]], %[[ZERO]], %[[V]] : f32
// CHECK-NOT: arith.maximumf
func.func @float_unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.abs %x : tensor<4xf32> -> tensor<4xf32>
  %1 = kiln.neg %0 : tensor<4xf32> -> tensor<4xf32>
  %2 = kiln.exp %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = kiln.log %2 : tensor<4xf32> -> tensor<4xf32>
  %4 = kiln.sqrt %3 : tensor<4xf32> -> tensor<4xf32>
  %5 = kiln.rsqrt %4 : tensor<4xf32> -> tensor<4xf32>
  %6 = kiln.reciprocal %5 : tensor<4xf32> -> tensor<4xf32>
  %7 = kiln.tanh %6 : tensor<4xf32> -> tensor<4xf32>
  %8 = kiln.erf %7 : tensor<4xf32> -> tensor<4xf32>
  %9 = kiln.floor %8 : tensor<4xf32> -> tensor<4xf32>
  %10 = kiln.ceil %9 : tensor<4xf32> -> tensor<4xf32>
  %11 = kiln.round %10 : tensor<4xf32> -> tensor<4xf32>
  %12 = kiln.relu %11 : tensor<4xf32> -> tensor<4xf32>
  return %12 : tensor<4xf32>
}

// -----

// Unsigned kiln types become signless tensors with unsigned arithmetic.
// CHECK-LABEL: func.func @unsigned(%arg0: tensor<4xi8>, %arg1: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi1>, tensor<4xf32>)
// CHECK: arith.divui
// CHECK: arith.maxui
// CHECK: arith.cmpi ult
// CHECK: arith.uitofp
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>) {
  %0 = kiln.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kiln.max %0, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = kiln.compare lt, %1, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %3 = kiln.cast %1 to f32 : tensor<4xui8> -> tensor<4xf32>
  return %1, %2, %3 : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @signed_integers
// CHECK: arith.divsi
// CHECK: arith.cmpi sgt
// CHECK: arith.sitofp
// CHECK: arith.fptosi
// CHECK: arith.trunci
// CHECK: arith.cmpi ne
func.func @signed_integers(%a: tensor<4xi32>, %f: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>, tensor<4xi8>, tensor<4xi1>) {
  %0 = kiln.div %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.compare gt, %0, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = kiln.cast %0 to f32 : tensor<4xi32> -> tensor<4xf32>
  %3 = kiln.cast %f to i64 : tensor<4xf32> -> tensor<4xi64>
  %4 = kiln.cast %a to i8 : tensor<4xi32> -> tensor<4xi8>
  %5 = kiln.cast %a to i1 : tensor<4xi32> -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>, tensor<4xi8>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @activations
// Sigmoid: 1 / (1 + exp(-x)).
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// Clamp with an open upper bound only takes the max (`x < 0 ? 0 : x`).
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK-NOT: arith.cmpf ogt
// CHECK: linalg.yield
// GELU (erf form, @gelu_erf below) and leaky relu.
// CHECK: math.exp
// CHECK: arith.cmpf olt
// CHECK: arith.select
func.func @activations(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.sigmoid %x : tensor<4xf32> -> tensor<4xf32>
  %1 = kiln.clamp %x min = 0.0 max = 0x7FF0000000000000 : tensor<4xf32> -> tensor<4xf32>
  %2 = kiln.gelu %x approximation = none : tensor<4xf32> -> tensor<4xf32>
  %3 = kiln.leaky_relu %x alpha = 0.1 : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @select_and_logic
// CHECK: arith.select
// CHECK: arith.andi
// CHECK: arith.xori
func.func @select_and_logic(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f32>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0 = kiln.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = kiln.and %c, %c : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = kiln.not %1 : tensor<4xi1> -> tensor<4xi1>
  return %0, %2 : tensor<4xf32>, tensor<4xi1>
}

// -----

// GELU, erf form, f32: with the tail T = e^q(|x|) (q a degree-9
// polynomial: five pairs c_2i + c_2i+1 |x|, then Horner's rule in x^2), x -
// x T for x >= 0, x T below; x T is 0 past |x| = 4 sqrt(2). No erf (a
// rational function), no division.
// CHECK-LABEL: func.func @gelu_erf
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK-COUNT-5: math.fma %{{.*}}, %[[A]], %{{.*}} : f32
// CHECK: %[[SQUARE:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-COUNT-4: math.fma %{{.*}}, %[[SQUARE]], %{{.*}} : f32
// CHECK: %[[E:.*]] = math.exp %{{.*}} {kiln.nonpositive_operand} : f32
// CHECK: %[[XT:.*]] = arith.mulf %[[X]], %[[E]] : f32
// CHECK: %[[FAR:.*]] = arith.cmpf ogt, %[[A]], %{{.*}} : f32
// CHECK: %[[T:.*]] = arith.select %[[FAR]], %{{.*}}, %[[XT]] : f32
// CHECK: %[[POS:.*]] = arith.cmpf oge, %[[X]], %{{.*}} : f32
// CHECK: %[[REST:.*]] = arith.subf %[[X]], %[[T]] : f32
// CHECK: %[[Y:.*]] = arith.select %[[POS]], %[[REST]], %[[T]] : f32
// CHECK: linalg.yield %[[Y]]
// CHECK-NOT: math.erf
func.func @gelu_erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.gelu %x approximation = none : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// GELU, erf form, f16: 0.5 x (1 + erf(x / sqrt(2))) (erf computed in f32 by
// kiln-approximate-math).
// CHECK-LABEL: func.func @gelu_erf_f16
// CHECK: math.erf %{{.*}} : f16
func.func @gelu_erf_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kiln.gelu %x approximation = none : tensor<4xf16> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// GELU, tanh form: x / (1 + 2^w), w = x * (a + b x^2) = -2z / ln 2.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SQUARE:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-DAG: %[[B:.*]] = arith.constant -0.102943242 : f32
// CHECK-DAG: %[[A:.*]] = arith.constant -2.30220819 : f32
// CHECK: %[[POLY:.*]] = math.fma %[[SQUARE]], %[[B]], %[[A]] : f32
// CHECK: %[[W:.*]] = arith.mulf %[[X]], %[[POLY]] : f32
// CHECK: %[[POW2:.*]] = math.exp2 %[[W]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[DEN:.*]] = arith.addf %[[ONE]], %[[POW2]] : f32
// CHECK: %[[Y:.*]] = arith.divf %[[X]], %[[DEN]] : f32
// CHECK: linalg.yield %[[Y]]
// CHECK-NOT: math.tanh
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.gelu %x approximation = tanh : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
