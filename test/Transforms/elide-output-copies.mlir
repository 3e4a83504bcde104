// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-elide-output-copies))' -split-input-file | FileCheck %s

// A bias-free 1x1 convolution's [C, H * W] result, expanded to the output's
// [1, C, H, W]: the matmul writes the output argument, seen as [1, C, H * W].
// CHECK-LABEL: func.func @expanded
// CHECK-SAME: (%[[X:[^ :]+]]: memref<1x4x6xf32>, %[[OUT:[^ :]+]]: memref<1x4x2x3xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1, 2, 3]] : memref<1x4x2x3xf32> into memref<24xf32>
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[FLAT]] {{\[}}[0, 1, 2]] output_shape [1, 4, 6] : memref<24xf32> into memref<1x4x6xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : memref<1x4x6xf32>)
// CHECK: linalg.copy ins(%[[X]] : memref<1x4x6xf32>) outs(%[[VIEW]] : memref<1x4x6xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @expanded(%x: memref<1x4x6xf32>, %out: memref<1x4x2x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x4x6xf32>
  linalg.fill ins(%zero : f32) outs(%alloc : memref<1x4x6xf32>)
  linalg.copy ins(%x : memref<1x4x6xf32>) outs(%alloc : memref<1x4x6xf32>)
  %view = memref.expand_shape %alloc [[0], [1], [2, 3]] output_shape [1, 4, 2, 3] : memref<1x4x6xf32> into memref<1x4x2x3xf32>
  memref.copy %view, %out : memref<1x4x2x3xf32> to memref<1x4x2x3xf32>
  return
}

// -----

// Flatten (a memref.reshape by a constant shape) after a chain of views.
// CHECK-LABEL: func.func @flattened
// CHECK-SAME: %[[OUT:[^ :]+]]: memref<2x12xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1]] : memref<2x12xf32> into memref<24xf32>
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[FLAT]] {{\[}}[0, 1, 2, 3]] output_shape [2, 3, 2, 2] : memref<24xf32> into memref<2x3x2x2xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<2x3x2x2xf32>) outs(%[[VIEW]] : memref<2x3x2x2xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @flattened(%x: memref<2x3x2x2xf32>, %out: memref<2x12xf32>) {
  %shape = memref.get_global @shape : memref<2xi64>
  %alloc = memref.alloc() : memref<2x3x2x2xf32>
  linalg.copy ins(%x : memref<2x3x2x2xf32>) outs(%alloc : memref<2x3x2x2xf32>)
  %rows = memref.collapse_shape %alloc [[0], [1, 2, 3]] : memref<2x3x2x2xf32> into memref<2x12xf32>
  %flat = memref.reshape %rows(%shape) : (memref<2x12xf32>, memref<2xi64>) -> memref<2x12xf32>
  memref.copy %flat, %out : memref<2x12xf32> to memref<2x12xf32>
  return
}
memref.global "private" constant @shape : memref<2xi64> = dense<[2, 12]>

// -----

// The same value as two outputs: the reshaped copy reads the allocation
// before the other copy does, so only the later copy's output takes its
// place; the first is then copied from that output.
// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[X:[^ :]+]]: memref<4x6xf32>, %[[OUT0:[^ :]+]]: memref<24xf32>, %[[OUT1:[^ :]+]]: memref<4x6xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.copy ins(%[[X]] : memref<4x6xf32>) outs(%[[OUT1]] : memref<4x6xf32>)
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[OUT1]]
// CHECK: memref.copy %[[VIEW]], %[[OUT0]]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @twice(%x: memref<4x6xf32>, %out0: memref<24xf32>, %out1: memref<4x6xf32>) {
  %alloc = memref.alloc() : memref<4x6xf32>
  linalg.copy ins(%x : memref<4x6xf32>) outs(%alloc : memref<4x6xf32>)
  %flat = memref.collapse_shape %alloc [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  memref.copy %flat, %out0 : memref<24xf32> to memref<24xf32>
  memref.copy %alloc, %out1 : memref<4x6xf32> to memref<4x6xf32>
  return
}

// -----

// Written after the copy: the output must keep the copied values.
// CHECK-LABEL: func.func @written_after
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK: linalg.fill
func.func @written_after(%x: memref<4x6xf32>, %out: memref<24xf32>) {
  %zero = arith.constant 0.0 : f32
  %alloc = memref.alloc() : memref<4x6xf32>
  linalg.copy ins(%x : memref<4x6xf32>) outs(%alloc : memref<4x6xf32>)
  %flat = memref.collapse_shape %alloc [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  memref.copy %flat, %out : memref<24xf32> to memref<24xf32>
  linalg.fill ins(%zero : f32) outs(%alloc : memref<4x6xf32>)
  return
}

// -----

// Copies that stay: from an input (not an allocation), from a slice of an
// allocation (not all of it), and into an argument with other uses.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: memref.copy
func.func @kept(%x: memref<4x6xf32>, %out0: memref<24xf32>, %out1: memref<2x6xf32>, %out2: memref<24xf32>) {
  %input = memref.collapse_shape %x [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  memref.copy %input, %out0 : memref<24xf32> to memref<24xf32>
  %alloc = memref.alloc() : memref<4x6xf32>
  linalg.copy ins(%x : memref<4x6xf32>) outs(%alloc : memref<4x6xf32>)
  %rows = memref.subview %alloc[0, 0] [2, 6] [1, 1] : memref<4x6xf32> to memref<2x6xf32, strided<[6, 1]>>
  memref.copy %rows, %out1 : memref<2x6xf32, strided<[6, 1]>> to memref<2x6xf32>
  %other = memref.alloc() : memref<4x6xf32>
  linalg.copy ins(%x : memref<4x6xf32>) outs(%other : memref<4x6xf32>)
  %flat = memref.collapse_shape %other [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  memref.copy %flat, %out2 : memref<24xf32> to memref<24xf32>
  linalg.copy ins(%out2 : memref<24xf32>) outs(%out0 : memref<24xf32>)
  return
}

// -----

// Written after the copy inside a loop, and passed out of a region by a
// yield: both copies stay.
// CHECK-LABEL: func.func @nested
// CHECK-COUNT-2: memref.copy
func.func @nested(%x: memref<4x6xf32>, %c: i1, %out0: memref<24xf32>, %out1: memref<24xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %alloc = memref.alloc() : memref<4x6xf32>
  linalg.copy ins(%x : memref<4x6xf32>) outs(%alloc : memref<4x6xf32>)
  %flat = memref.collapse_shape %alloc [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  memref.copy %flat, %out0 : memref<24xf32> to memref<24xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    linalg.fill ins(%zero : f32) outs(%alloc : memref<4x6xf32>)
  }
  %other = memref.alloc() : memref<4x6xf32>
  %chosen = scf.if %c -> memref<4x6xf32> {
    scf.yield %other : memref<4x6xf32>
  } else {
    scf.yield %other : memref<4x6xf32>
  }
  linalg.copy ins(%x : memref<4x6xf32>) outs(%chosen : memref<4x6xf32>)
  %flat1 = memref.collapse_shape %other [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  memref.copy %flat1, %out1 : memref<24xf32> to memref<24xf32>
  return
}
