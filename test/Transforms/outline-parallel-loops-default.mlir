// RUN: kiln-opt %s --kiln-outline-parallel-loops -split-input-file | FileCheck %s

// The default threshold: a loop nest of 32768 innermost iterations (a
// stride-2 convolution's phase copy is ~50000 elements) goes to the thread
// pool.
// CHECK-LABEL: func.func @at_threshold
// CHECK: call @kiln_parallel_0
// CHECK-NOT: scf.parallel
// CHECK: func.func private @kiln_task_0
func.func @at_threshold(%in: memref<64x512xf32>, %out: memref<64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<64x512xf32>
    memref.store %x, %out[%i, %j] : memref<64x512xf32>
    scf.reduce
  }
  return
}

// -----

// One row fewer stays on the calling thread.
// CHECK-LABEL: func.func @below_threshold
// CHECK-NOT: call @kiln_parallel
// CHECK: scf.parallel
func.func @below_threshold(%in: memref<63x512xf32>, %out: memref<63x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c63, %c512) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<63x512xf32>
    memref.store %x, %out[%i, %j] : memref<63x512xf32>
    scf.reduce
  }
  return
}
