// RUN: kiln-opt %s --kiln-emulate-gpu-launches -split-input-file -verify-diagnostics | FileCheck %s

// A launch becomes loops over blocks (z, y, x) and then threads (z, y, x);
// the body reads the loop indices as its ids and the launch's sizes as its
// dimensions.
// CHECK-LABEL: func.func @emulated
// CHECK-NOT: gpu.container_module
// CHECK: scf.for %[[BZ:.*]] = %c0 to %c1
// CHECK: scf.for %[[BY:.*]] = %c0 to %c1
// CHECK: scf.for %[[BX:.*]] = %c0 to %c3
// CHECK: scf.for %[[TZ:.*]] = %c0 to %c1
// CHECK: scf.for %[[TY:.*]] = %c0 to %c1
// CHECK: scf.for %[[TX:.*]] = %c0 to %c4
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %c4
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[ID]]]
// CHECK-NOT: gpu.
module attributes {gpu.container_module} {
  func.func @emulated(%buf: memref<12xf32>) {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %one = arith.constant 1.0 : f32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %base = arith.muli %bx, %sx : index
      %id = arith.addi %base, %tx : index
      memref.store %one, %buf[%id] : memref<12xf32>
      gpu.terminator
    }
    return
  }
}

// -----

// A barrier splits the kernel into phases: every thread of the block runs
// the first phase before any runs the second; shared memory is one stack
// buffer per block; the thread's pure index math is recomputed per phase.
// CHECK-LABEL: func.func @phases
// CHECK: scf.for %[[B:.*]] = %c0 to %c2
// CHECK: %[[SHARED:.*]] = memref.alloca() : memref<4xf32>
// CHECK: scf.for %[[T1:.*]] = %c0 to %c4
// CHECK: memref.store %{{.*}}, %[[SHARED]][%[[T1]]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.for %[[T2:.*]] = %c0 to %c4
// CHECK: %[[MIRROR:.*]] = arith.subi %c3{{.*}}, %[[T2]]
// CHECK: memref.load %[[SHARED]][%[[MIRROR]]]
module attributes {gpu.container_module} {
  func.func @phases(%in: memref<8xf32>, %out: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) workgroup(%shared : memref<4xf32, #gpu.address_space<workgroup>>) {
      %base = arith.muli %bx, %c4 : index
      %id = arith.addi %base, %tx : index
      %x = memref.load %in[%id] : memref<8xf32>
      memref.store %x, %shared[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %mirror = arith.subi %c3, %tx : index
      %y = memref.load %shared[%mirror] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %y, %out[%id] : memref<8xf32>
      gpu.terminator
    }
    return
  }
}

// -----

// A value loaded before a barrier cannot be used after it: each thread's
// copy would be gone.
func.func @crosses_barrier(%buf: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %buf[%tx] : memref<4xf32>
    gpu.barrier
    // expected-error @+1 {{a value computed before a barrier is used after it}}
    memref.store %x, %buf[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Warp shuffles need threads in lockstep.
func.func @shuffle(%v: f32) {
  %c1 = arith.constant 1 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{needs threads running together}}
    %r, %ok = gpu.shuffle xor %v, %c1_i32, %c32_i32 : f32
    gpu.terminator
  }
  return
}
