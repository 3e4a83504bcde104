// RUN: kiln-opt %s --kiln-outline-parallel-loops="min-iterations=64" -split-input-file | FileCheck %s

// A parallel loop with enough work becomes a task over a range of its first
// dimension; the arena view it writes is recomputed inside the task from the
// passed arena, the constant bound is cloned, and the call hands the
// function's new runtime argument and the trip count to the launcher.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[IN:.*]]: memref<64x32xf32>, %[[ARENA:.*]]: memref<8192xi8>, %[[RT:.*]]: memref<1xi8>)
// CHECK: memref.view
// CHECK-NEXT: %[[COUNT:.*]] = arith.constant 64 : index
// CHECK-NEXT: call @kiln_parallel_0(%[[RT]], %[[COUNT]], %[[IN]], %[[ARENA]])
// CHECK-NOT: scf.parallel
// CHECK: func.func private @kiln_task_0(%[[BEGIN:.*]]: index, %[[END:.*]]: index, %[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<8192xi8>)
// CHECK: memref.view %[[B]]
// CHECK: %[[LB:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[UB:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%[[LB]], %{{.*}}) to (%[[UB]], %{{.*}})
// CHECK: func.func private @kiln_parallel_0(memref<1xi8>, index, memref<64x32xf32>, memref<8192xi8>)
func.func @rows(%in: memref<64x32xf32>, %arena: memref<8192xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %out = memref.view %arena[%c0][] : memref<8192xi8> to memref<64x32xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c32) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<64x32xf32>
    memref.store %x, %out[%i, %j] : memref<64x32xf32>
    scf.reduce
  }
  return
}

// -----

// Too little work: the loop stays where it is (the runtime argument is still
// added). A first dimension of one iteration (a batch of 1) is not split: the
// next one is.
// CHECK-LABEL: func.func @small
// CHECK-SAME: %{{.*}}: memref<1xi8>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c4)
// CHECK: call @kiln_parallel_0
// CHECK: func.func private @kiln_task_0
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}, %{{.*}}) to (%c1{{.*}}, %{{.*}})
func.func @small(%in: memref<4x4xf32>, %big: memref<1x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<4x4xf32>
    memref.store %x, %in[%j, %i] : memref<4x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c4096) step (%c1, %c1) {
    %x = memref.load %big[%i, %j] : memref<1x4096xf32>
    memref.store %x, %big[%i, %j] : memref<1x4096xf32>
    scf.reduce
  }
  return
}

// -----

// A parallel loop inside a sequential one (a batch): the enclosing index is
// passed to the task.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for %[[B:.*]] =
// CHECK: call @kiln_parallel_0(%{{.*}}, %{{.*}}, %arg0, %[[B]])
// CHECK: func.func private @kiln_task_0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<4x64x64xf32>, %{{.*}}: index)
func.func @nested(%data: memref<4x64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.for %b = %c0 to %c4 step %c1 {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
      %x = memref.load %data[%b, %i, %j] : memref<4x64x64xf32>
      memref.store %x, %data[%b, %j, %i] : memref<4x64x64xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A stack slot of the loop body (a row tile's temporary) moves to the entry
// of the task function: one per call, not one more per iteration.
// CHECK-LABEL: func.func @tile_temporary
// CHECK: call @kiln_parallel_{{[0-9]+}}
// CHECK: func.func private @kiln_task_{{[0-9]+}}
// CHECK-NEXT: %[[T:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32xf32>
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[T]]
func.func @tile_temporary(%in: memref<64x32xf32>, %out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %t = memref.alloca() {alignment = 64 : i64} : memref<32xf32>
    scf.for %j = %c0 to %c32 step %c1 {
      %x = memref.load %in[%i, %j] : memref<64x32xf32>
      memref.store %x, %t[%j] : memref<32xf32>
    }
    scf.for %j = %c0 to %c32 step %c1 {
      %x = memref.load %t[%j] : memref<32xf32>
      memref.store %x, %out[%i, %j] : memref<64x32xf32>
    }
    scf.reduce
  }
  return
}

// -----

// The lanes (kiln-form-lanes) are a task whatever their work. The kernels'
// loops inside them with enough work become functions of their own,
// kiln_lane_kernel_N, called on the whole loop by the lane that runs them
// (no second level of tasks); the small one stays in the lane.
// CHECK-LABEL: func.func @lanes
// CHECK: call @kiln_parallel_0(%{{.*}}, %{{.*}}, %arg0)
// CHECK: func.func private @kiln_task_0(%{{.*}}: index, %{{.*}}: index, %[[BUF:.*]]: memref<2x4096xf32>)
// CHECK: scf.parallel
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: %[[COUNT:.*]] = arith.constant 4096 : index
// CHECK: call @kiln_lane_kernel_1(%{{.*}}, %[[COUNT]], %[[BUF]])
// CHECK: case 1 {
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK-NOT: call
// CHECK: default
// CHECK: } {kiln.lanes}
// CHECK: func.func private @kiln_lane_kernel_1(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<2x4096xf32>)
// CHECK-NOT: func.func private @kiln_parallel_1
func.func @lanes(%buf: memref<2x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%lane) = (%c0) to (%c2) step (%c1) {
    scf.index_switch %lane
    case 0 {
      scf.parallel (%j) = (%c0) to (%c4096) step (%c1) {
        %x = memref.load %buf[%c0, %j] : memref<2x4096xf32>
        memref.store %x, %buf[%c0, %j] : memref<2x4096xf32>
        scf.reduce
      }
      scf.yield
    }
    case 1 {
      scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
        %x = memref.load %buf[%c1, %j] : memref<2x4096xf32>
        memref.store %x, %buf[%c1, %j] : memref<2x4096xf32>
        scf.reduce
      }
      scf.yield
    }
    default {
    }
    scf.reduce
  } {kiln.lanes}
  return
}
