// RUN: kiln-opt %s -split-input-file --kiln-fuse-kernels --convert-kiln-to-linalg --kiln-fuse-elementwise --kiln-tile-rows | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-fuse-kernels --convert-kiln-to-linalg="implicit-gemm-convs=true" --kiln-fuse-elementwise --kiln-tile-rows | FileCheck %s --check-prefix=CONV

// Softmax over rows of 128 floats (512 bytes): 32 rows (16 KiB) per tile,
// the max, exp, sum and scale of a tile all inside one scf.forall, the exp
// computed once, the keep-dims [64 x 1] accumulators reduced to [32]. The
// exp is written into the tile of the output, and the scale updates it in
// place (no tile-sized temporary).
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[I:.*]]) = (0) to (64) step (32) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<64x128xf32>)
// CHECK: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0] [32, 128] [1, 1]
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<32x128xf32>) outs(%{{.*}} : tensor<32xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [32, 128] [1, 1]
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<32x128xf32>, tensor<32xf32>) outs(%[[TILE]] : tensor<32x128xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<32x128xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<32x128xf32>, tensor<32xf32>) outs(%[[EXP]] : tensor<32x128xf32>)
// CHECK: tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[I]], 0] [32, 128] [1, 1]
// CHECK-NOT: math.exp
// CHECK: return
func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = kiln.softmax %x axis = -1 : tensor<64x128xf32> -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// Softmax over the last axis of attention scores [1, 4, 16, 128]: the unit
// batch dim is dropped, the head dim tiled by 1 and the query rows by 16
// (all of them: 8 KiB), and the result reshaped back.
// CHECK-LABEL: func.func @attention_softmax
// CHECK: scf.forall (%[[H:.*]], %[[R:.*]]) = (0, 0) to (4, 16) step (1, 16)
// CHECK: tensor.extract_slice %{{.*}}[%[[H]], %[[R]], 0] [1, 16, 128] [1, 1, 1]
// CHECK: tensor.expand_shape
func.func @attention_softmax(%x: tensor<1x4x16x128xf32>) -> tensor<1x4x16x128xf32> {
  %0 = kiln.softmax %x axis = 3 : tensor<1x4x16x128xf32> -> tensor<1x4x16x128xf32>
  return %0 : tensor<1x4x16x128xf32>
}

// -----

// Left as whole-tensor sweeps: a row of 32 KiB (more than a tile), a
// kernel that would be a single tile, a reduction as the kernel's result,
// and an elementwise kernel.
// CHECK-LABEL: func.func @not_tiled
// CHECK-NOT: scf.forall
// CHECK: return
func.func @not_tiled(%wide: tensor<4x8192xf32>, %one: tensor<1x64xf32>, %x: tensor<64x128xf32>) -> (tensor<4x8192xf32>, tensor<1x64xf32>, tensor<64x1xf32>, tensor<64x128xf32>) {
  %0 = kiln.softmax %wide axis = -1 : tensor<4x8192xf32> -> tensor<4x8192xf32>
  %1 = kiln.softmax %one axis = -1 : tensor<1x64xf32> -> tensor<1x64xf32>
  %2 = kiln.reduce_sum %x axes = [1] keepdims : tensor<64x128xf32> -> tensor<64x1xf32>
  %3 = kiln.exp %x : tensor<64x128xf32> -> tensor<64x128xf32>
  return %0, %1, %2, %3 : tensor<4x8192xf32>, tensor<1x64xf32>, tensor<64x1xf32>, tensor<64x128xf32>
}

// -----

// A batch-1 matmul with its epilogue keeps its unit M dimension (and its
// three loops): contractions are kiln-lower-matmul's, which would not
// recognize the vector-matrix loop nest that dropping M leaves.
// CHECK-LABEL: func.func @batch_one_matmul
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x64xf32>, tensor<64x32xf32>)
func.func @batch_one_matmul(%x: tensor<1x64xf32>, %w: tensor<64x32xf32>) -> tensor<1x32xf32> {
  %0 = kiln.matmul %x, %w : (tensor<1x64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
  %1 = kiln.relu %0 : tensor<1x32xf32> -> tensor<1x32xf32>
  return %1 : tensor<1x32xf32>
}

// -----

// A convolution over one input channel (an implicit GEMM over the pitch:
// its input map reads a shifted row, not a projected permutation) keeps its
// unit batch and channel dims: its multiply-accumulate body marks it
// kiln-lower-matmul's, which matches the conv only in this form (without,
// it ran as scalar loops).
// CONV-LABEL: func.func @grayscale_conv
// CONV-NOT: scf.forall
// CONV: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CONV-SAME: ins(%{{.*}}, %{{.*}} : tensor<8x1x3x3xf32>, tensor<1x1x{{[0-9]+}}xf32>) outs(%{{.*}} : tensor<1x8x{{[0-9]+}}xf32>)
func.func @grayscale_conv(%x: tensor<1x1x28x28xf32>) -> tensor<1x8x28x28xf32> {
  %w = kiln.constant dense<1.0> : tensor<8x1x3x3xf32>
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x28x28xf32>
  %1 = kiln.relu %0 : tensor<1x8x28x28xf32> -> tensor<1x8x28x28xf32>
  return %1 : tensor<1x8x28x28xf32>
}
