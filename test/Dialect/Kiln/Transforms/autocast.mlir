// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-autocast))" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-autocast{type=bf16}))" -split-input-file | FileCheck %s --check-prefix=BF16

// An f32 matmul reads half-precision operands (a constant weight converted
// at compile time, an activation through a cast) and its result goes back
// to f32; the elementwise consumer stays f32.
// CHECK-LABEL: func.func @linear
// CHECK-DAG: %[[W:.*]] = kiln.constant dense<{{\[}}[1.000000e+00, -2.000000e+00], [5.000000e-01, 6.550400e+04], [0.000000e+00, 3.000000e+00]]> : tensor<3x2xf16>
// CHECK-DAG: %[[X:.*]] = kiln.cast %arg0 to f16 : tensor<4x3xf32> -> tensor<4x3xf16>
// CHECK: %[[P:.*]] = kiln.matmul %[[X]], %[[W]] : (tensor<4x3xf16>, tensor<3x2xf16>) -> tensor<4x2xf16>
// CHECK: %[[Y:.*]] = kiln.cast %[[P]] to f32 : tensor<4x2xf16> -> tensor<4x2xf32>
// CHECK: kiln.relu %[[Y]] : tensor<4x2xf32>
// BF16-LABEL: func.func @linear
// BF16: kiln.constant {{.*}} : tensor<3x2xbf16>
// BF16: kiln.matmul {{.*}} -> tensor<4x2xbf16>
func.func @linear(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = kiln.constant dense<[[1.0, -2.0], [0.5, 65504.0], [0.0, 3.0]]> : tensor<3x2xf32>
  %p = kiln.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = kiln.relu %p : tensor<4x2xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Rounding to nearest even (1 + 2^-11 and 1 + 3 * 2^-11 are halfway cases),
// overflow to inf, NaN kept, the smallest subnormal.
// CHECK-LABEL: func.func @rounding
// CHECK: kiln.constant dense<{{\[}}[1.000000e+00], [1.001950e+00], [0x7C00], [0x7E00], [5.960460e-08]]> : tensor<5x1xf16>
func.func @rounding(%x: tensor<2x5xf32>) -> tensor<2x1xf32> {
  %w = kiln.constant dense<[[1.00048828125], [1.00146484375], [70000.0], [0x7FC00000], [5.96046447753906e-08]]> : tensor<5x1xf32>
  %p = kiln.matmul %x, %w : (tensor<2x5xf32>, tensor<5x1xf32>) -> tensor<2x1xf32>
  return %p : tensor<2x1xf32>
}

// -----

// Products that are already half precision, and everything else, stay.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: kiln.cast
// CHECK: kiln.matmul %arg0, %arg1 : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
func.func @untouched(%a: tensor<2x2xf16>, %b: tensor<2x2xf16>) -> tensor<2x2xf16> {
  %p = kiln.matmul %a, %b : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  return %p : tensor<2x2xf16>
}

// -----

// A dense convolution is a matrix product too (im2col + a GEMM on tensor
// cores): input and filters in half precision, no bias; its result back in
// f32, the bias added there, reshaped to [O, 1, 1] to broadcast over pixels.
// CHECK-LABEL: func.func @conv
// CHECK-DAG: %[[W:.*]] = kiln.constant {{.*}} : tensor<2x1x1x1xf16>
// CHECK-DAG: %[[X:.*]] = kiln.cast %arg0 to f16 : tensor<1x1x3x3xf32> -> tensor<1x1x3x3xf16>
// CHECK: %[[P:.*]] = kiln.conv %[[X]], %[[W]] strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x1x3x3xf16>, tensor<2x1x1x1xf16>) -> tensor<1x2x3x3xf16>
// CHECK: %[[Y:.*]] = kiln.cast %[[P]] to f32
// CHECK: %[[B:.*]] = kiln.constant dense<{{\[}}{{\[}}[5.000000e-01]], {{\[}}[-1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK: %[[S:.*]] = kiln.add %[[Y]], %[[B]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK: return %[[S]]
func.func @conv(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = kiln.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = kiln.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = kiln.conv %x, %w, %b strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// Grouped convolutions run as loops, and a computed bias would need a
// reshape at run time: both stay f32.
// CHECK-LABEL: func.func @conv_stays_f32
// CHECK-NOT: kiln.cast
// CHECK: kiln.conv %arg0, {{.*}} groups = 2 : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK: kiln.conv %arg0, {{.*}}, %arg1 {{.*}} groups = 1 : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
func.func @conv_stays_f32(%x: tensor<1x2x3x3xf32>, %b: tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = kiln.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %g = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %w2 = kiln.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = kiln.conv %x, %w2, %b strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %g, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
