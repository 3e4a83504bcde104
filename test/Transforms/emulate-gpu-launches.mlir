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

// Threads that wait for each other cannot run one after another.
func.func @barrier() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{needs threads running together}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}
