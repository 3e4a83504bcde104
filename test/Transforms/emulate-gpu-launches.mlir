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

// A value loaded before a barrier and used after it: each thread keeps it
// in its own slot of a buffer (the phases run every thread in turn).
// CHECK-LABEL: func.func @crosses_barrier
// CHECK: %[[SLOTS:.*]] = memref.alloca() : memref<4xf32>
// CHECK: scf.for
// CHECK: scf.for %[[T:.*]] =
// CHECK: %[[X:.*]] = memref.load %arg0
// CHECK: memref.store %[[X]], %[[SLOTS]]
// CHECK: scf.for %[[T2:.*]] =
// CHECK: %[[KEPT:.*]] = memref.load %[[SLOTS]]
// CHECK: memref.store %[[KEPT]], %arg0
func.func @crosses_barrier(%buf: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %x = memref.load %buf[%tx] : memref<4xf32>
    gpu.barrier
    memref.store %x, %buf[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// An xor shuffle: the thread's value goes to its slot, a barrier, then the
// partner's (thread ^ offset) is read; the value shuffled and the sum made
// after it cross that barrier in slots of their own.
// CHECK-LABEL: func.func @shuffle
// CHECK-DAG: %[[EXCHANGE:.*]] = memref.alloca() : memref<64xf32>
// CHECK: scf.for
// CHECK: scf.for %[[T:.*]] =
// CHECK: memref.store %{{.*}}, %[[EXCHANGE]]
// CHECK: scf.for %[[T2:.*]] =
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[PARTNER:.*]] = arith.xori %{{.*}}, %[[ONE]] : index
// CHECK: memref.load %[[EXCHANGE]][%[[PARTNER]]]
// CHECK: arith.addf
func.func @shuffle(%buf: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %buf[%tx] : memref<64xf32>
    %r, %ok = gpu.shuffle xor %v, %c1_i32, %c32_i32 : f32
    %s = arith.addf %v, %r : f32
    gpu.barrier
    memref.store %s, %buf[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Other shuffles, and shuffles inside control flow, need threads in
// lockstep.
func.func @shuffle_down(%v: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{only xor shuffles}}
    %r, %ok = gpu.shuffle down %v, %c1_i32, %c32_i32 : f32
    gpu.terminator
  }
  return
}

// -----

func.func @nested_shuffle(%v: f32, %c: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    scf.if %c {
      // expected-error @+1 {{needs threads running together}}
      %r, %ok = gpu.shuffle xor %v, %c1_i32, %c32_i32 : f32
    }
    gpu.terminator
  }
  return
}
