// RUN: kiln-opt %s --kiln-fuse-kernels -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse-kernels="max-ops=2" -split-input-file | FileCheck %s --check-prefix=SMALL

// An elementwise chain with a broadcast bias is one kernel; the scalar
// constant is cloned in, the bias vector is an input.
// CHECK-LABEL: func.func @chain
// CHECK: %[[K:.*]] = kiln.kernel "elementwise"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[C:.*]] = kiln.constant dense<5.000000e-01>
// CHECK-NEXT: %[[M:.*]] = kiln.mul %[[X]], %[[C]]
// CHECK-NEXT: %[[T:.*]] = kiln.tanh %[[M]]
// CHECK-NEXT: %[[A:.*]] = kiln.add %[[T]], %[[B]]
// CHECK-NEXT: %[[R:.*]] = kiln.relu %[[A]]
// CHECK-NEXT: kiln.yield %[[R]]
// CHECK: return %[[K]]
// SMALL-LABEL: func.func @chain
// SMALL-COUNT-2: kiln.kernel "elementwise"
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.mul %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.add %1, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = kiln.relu %2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// A matmul absorbs its epilogue: bias, activation, residual add.
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[K:.*]] = kiln.kernel "contraction"(%arg0, %arg1, %arg2) :
// CHECK: kiln.matmul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.gelu
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.kernel
func.func @epilogue(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = kiln.matmul %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %1 = kiln.add %0, %b : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = kiln.gelu %1 approximation = none : tensor<16x32xf32> -> tensor<16x32xf32>
  %3 = kiln.add %2, %x : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  return %3 : tensor<16x32xf32>
}

// -----

// An elementwise op that grows the matmul's output (a broadcast) is not an
// epilogue: it starts its own kernel. Two matmuls never share a kernel.
// CHECK-LABEL: func.func @not_epilogue
// CHECK: kiln.kernel "contraction"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.yield
// CHECK: kiln.kernel "elementwise"
// CHECK: kiln.kernel "contraction"
func.func @not_epilogue(%x: tensor<1x32xf32>, %w: tensor<32x32xf32>, %y: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = kiln.matmul %x, %w : (tensor<1x32xf32>, tensor<32x32xf32>) -> tensor<1x32xf32>
  %1 = kiln.add %0, %y : (tensor<1x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = kiln.matmul %1, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// -----

// Softmax written out: max, subtract, exp, sum, divide is one kernel.
// CHECK-LABEL: func.func @softmax
// CHECK: kiln.kernel "reduction"(%arg0)
// CHECK: kiln.reduce_max
// CHECK: kiln.sub
// CHECK: kiln.exp
// CHECK: kiln.reduce_sum
// CHECK: kiln.div
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.kernel
func.func @softmax(%x: tensor<6x128xf32>) -> tensor<6x128xf32> {
  %0 = kiln.reduce_max %x axes = [1] keepdims : tensor<6x128xf32> -> tensor<6x1xf32>
  %1 = kiln.sub %x, %0 : (tensor<6x128xf32>, tensor<6x1xf32>) -> tensor<6x128xf32>
  %2 = kiln.exp %1 : tensor<6x128xf32> -> tensor<6x128xf32>
  %3 = kiln.reduce_sum %2 axes = [1] keepdims : tensor<6x128xf32> -> tensor<6x1xf32>
  %4 = kiln.div %2, %3 : (tensor<6x128xf32>, tensor<6x1xf32>) -> tensor<6x128xf32>
  return %4 : tensor<6x128xf32>
}

// -----

// LayerNorm written out (ReduceMean/Sub/Pow/Sqrt/Div, scale and shift) is one
// kernel.
// CHECK-LABEL: func.func @layernorm
// CHECK: kiln.kernel "reduction"
// CHECK-NOT: kiln.kernel
// CHECK: return
func.func @layernorm(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %0 = kiln.reduce_mean %x axes = [1] keepdims : tensor<8x64xf32> -> tensor<8x1xf32>
  %1 = kiln.sub %x, %0 : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  %2 = kiln.pow %1, %two : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  %3 = kiln.reduce_mean %2 axes = [1] keepdims : tensor<8x64xf32> -> tensor<8x1xf32>
  %4 = kiln.add %3, %eps : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32>
  %5 = kiln.sqrt %4 : tensor<8x1xf32> -> tensor<8x1xf32>
  %6 = kiln.div %1, %5 : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  %7 = kiln.mul %6, %g : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %8 = kiln.add %7, %b : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %8 : tensor<8x64xf32>
}

// -----

// Reductions over different axes do not share a kernel.
// CHECK-LABEL: func.func @different_axes
// CHECK: kiln.kernel "reduction"
// CHECK: kiln.reduce_sum {{.*}} axes = [1]
// CHECK: kiln.kernel "reduction"
// CHECK: kiln.reduce_sum {{.*}} axes = [0]
func.func @different_axes(%x: tensor<8x64xf32>) -> tensor<1x1xf32> {
  %0 = kiln.reduce_sum %x axes = [1] keepdims : tensor<8x64xf32> -> tensor<8x1xf32>
  %1 = kiln.reduce_sum %0 axes = [0] keepdims : tensor<8x1xf32> -> tensor<1x1xf32>
  return %1 : tensor<1x1xf32>
}

// -----

// A value used inside and outside its kernel is computed once and yielded;
// the matmul that also reads it is its own kernel.
// CHECK-LABEL: func.func @multi_use
// CHECK: %[[K:.*]]:2 = kiln.kernel "elementwise"
// CHECK: %[[E:.*]] = kiln.exp
// CHECK: %[[N:.*]] = kiln.neg %[[E]]
// CHECK: kiln.yield %[[E]], %[[N]]
// CHECK: kiln.kernel "contraction"(%[[K]]#0
func.func @multi_use(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = kiln.exp %x : tensor<8x8xf32> -> tensor<8x8xf32>
  %1 = kiln.neg %0 : tensor<8x8xf32> -> tensor<8x8xf32>
  %2 = kiln.matmul %0, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Merging %2 into the kernel of %0 would need %1 (a gather of %0, its own
// kernel) inside it: a cycle between kernels, refused.
// CHECK-LABEL: func.func @cycle
// CHECK: kiln.kernel "elementwise"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.yield
// CHECK: kiln.kernel "gather"
// CHECK: kiln.kernel "elementwise"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.add
func.func @cycle(%x: tensor<8x8xf32>, %i: tensor<8xi64>) -> tensor<8x8xf32> {
  %0 = kiln.exp %x : tensor<8x8xf32> -> tensor<8x8xf32>
  %1 = kiln.gather %0[%i] axis = 0 : (tensor<8x8xf32>, tensor<8xi64>) -> tensor<8x8xf32>
  %2 = kiln.add %0, %1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

// -----

// Ops without a fusion rule are single-op kernels named after the op;
// reshapes and constants stay outside kernels.
// CHECK-LABEL: func.func @opaque
// CHECK: kiln.kernel "gather"
// CHECK: kiln.reshape
// CHECK-NOT: kiln.kernel
func.func @opaque(%x: tensor<4x8xf32>, %i: tensor<2xi64>) -> tensor<16xf32> {
  %0 = kiln.gather %x[%i] axis = 0 : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %1 = kiln.reshape %0 to [16] : tensor<2x8xf32> -> tensor<16xf32>
  return %1 : tensor<16xf32>
}

// -----

// Side producers that feed only the chain join it: both operands of the
// add are computed in the same kernel.
// CHECK-LABEL: func.func @side_producers
// CHECK: kiln.kernel "elementwise"(%arg0, %arg1)
// CHECK-DAG: kiln.exp
// CHECK-DAG: kiln.tanh
// CHECK: kiln.add
// CHECK-NOT: kiln.kernel
func.func @side_producers(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = kiln.tanh %y : tensor<8xf32> -> tensor<8xf32>
  %2 = kiln.add %0, %1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// A kernel whose ops all run in one lane (kiln-split-batch) runs in it
// too; one that mixes lanes and batch-wide ops (the second matmul with the
// add of both lanes' results; the subtraction with the tanh) is in none.
// CHECK-LABEL: func.func @lanes
// CHECK: %[[K0:.*]] = kiln.kernel "contraction"(%arg0, %arg2) {kiln.lane = 0 : i64} :
// CHECK: kiln.kernel "elementwise"(%arg3) :
// CHECK: kiln.kernel "contraction"(%arg1, %arg2, %[[K0]]) :
func.func @lanes(%x0: tensor<16x32xf32>, %x1: tensor<16x32xf32>, %w: tensor<32x32xf32>, %y: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %0 = kiln.matmul %x0, %w {kiln.lane = 0 : i64} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %1 = kiln.relu %0 {kiln.lane = 0 : i64} : tensor<16x32xf32> -> tensor<16x32xf32>
  %2 = kiln.matmul %x1, %w {kiln.lane = 1 : i64} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %3 = kiln.relu %2 {kiln.lane = 1 : i64} : tensor<16x32xf32> -> tensor<16x32xf32>
  %4 = kiln.sub %y, %y {kiln.lane = 0 : i64} : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %5 = kiln.tanh %4 : tensor<16x32xf32> -> tensor<16x32xf32>
  %6 = kiln.add %1, %3 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  return %6, %5 : tensor<16x32xf32>, tensor<16x32xf32>
}

