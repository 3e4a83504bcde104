// RUN: kiln-opt %s --kiln-record-fused-kernels -split-input-file -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --kiln-record-fused-kernels=strip-hooks=true -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=STRIP

// Kernel 1's calls went when lowering merged it into kernel 0 (the end call
// after them now counts for 0): 0 and 2 run apart. Without strip-hooks the
// calls stay (a --profile build's timers); with it they and their
// declarations go (a --report build), and the kernels' code is left alone.
// CHECK-LABEL: module attributes {kiln.separate_kernels = array<i32: 0, 2>}
// CHECK: func.func @graph
// CHECK-COUNT-2: call @kiln_profile_begin
// CHECK-NOT: call @kiln_profile_begin
// STRIP-LABEL: module attributes {kiln.separate_kernels = array<i32: 0, 2>}
// STRIP-NOT: kiln_profile
// STRIP: func.func @graph
// STRIP: linalg.fill
// STRIP-NEXT: linalg.fill
// STRIP-NEXT: return
// STRIP-NOT: kiln_profile
module {
  func.func private @kiln_profile_begin(i32)
  func.func private @kiln_profile_end(i32)
  func.func @graph(%a: memref<4xf32>, %b: memref<4xf32>) {
    %k0 = arith.constant 0 : i32
    %k2 = arith.constant 2 : i32
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    call @kiln_profile_begin(%k0) : (i32) -> ()
    linalg.fill ins(%one : f32) outs(%a : memref<4xf32>)
    call @kiln_profile_end(%k0) : (i32) -> ()
    call @kiln_profile_begin(%k2) : (i32) -> ()
    linalg.fill ins(%two : f32) outs(%b : memref<4xf32>)
    call @kiln_profile_end(%k2) : (i32) -> ()
    return
  }
}

// -----

// A build without kernels: the list is empty.
// CHECK-LABEL: module attributes {kiln.separate_kernels = array<i32>}
// STRIP-LABEL: module attributes {kiln.separate_kernels = array<i32>}
module {
  func.func @empty() {
    return
  }
}

// -----

// The index must be a constant: the report and the timers are indexed by it.
module {
  func.func private @kiln_profile_begin(i32)
  func.func @dynamic(%i: i32) {
    // expected-error @+1 {{kiln_profile_begin without a constant kernel index}}
    call @kiln_profile_begin(%i) : (i32) -> ()
    return
  }
}
