// RUN: kiln-opt %s --kiln-inline-kernels -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-inline-kernels="profile=true" -split-input-file | FileCheck %s --check-prefix=PROFILE

// Each kernel's body takes its place, in order. The kernels of a lane
// (kiln-split-batch) are bracketed, run by run, by kiln_lane_begin and
// kiln_lane_end with the lane; the kernel of no lane after them is not.
// With profile, each kernel is bracketed by the profiling calls, inside
// the lane markers.
// CHECK-LABEL: func.func @lanes
// CHECK: %[[L0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: call @kiln_lane_begin(%[[L0]]) : (i32) -> ()
// CHECK-NEXT: %[[R0:.*]] = kiln.relu %arg0
// CHECK-NEXT: %[[T0:.*]] = kiln.tanh %[[R0]]
// CHECK-NEXT: %[[E0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: call @kiln_lane_end(%[[E0]])
// CHECK-NEXT: %[[L1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: call @kiln_lane_begin(%[[L1]])
// CHECK-NEXT: %[[R1:.*]] = kiln.relu %arg1
// CHECK-NEXT: %[[E1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: call @kiln_lane_end(%[[E1]])
// CHECK-NEXT: %[[S:.*]] = kiln.add %[[T0]], %[[R1]]
// CHECK-NEXT: return %[[S]]
// CHECK-DAG: func.func private @kiln_lane_begin(i32)
// CHECK-DAG: func.func private @kiln_lane_end(i32)
// PROFILE-LABEL: func.func @lanes
// PROFILE: call @kiln_lane_begin
// PROFILE-NEXT: arith.constant 0 : i32
// PROFILE-NEXT: call @kiln_profile_begin
// PROFILE-NEXT: kiln.relu
// PROFILE: call @kiln_profile_end
// PROFILE: call @kiln_profile_begin
// PROFILE-NEXT: kiln.tanh
// PROFILE-NEXT: arith.constant 1 : i32
// PROFILE-NEXT: call @kiln_profile_end
// PROFILE-NEXT: arith.constant 0 : i32
// PROFILE-NEXT: call @kiln_lane_end
func.func @lanes(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.kernel "elementwise"(%a) {kiln.lane = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kiln.relu %x : tensor<4xf32> -> tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  %1 = kiln.kernel "elementwise"(%0) {kiln.lane = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %t = kiln.tanh %x : tensor<4xf32> -> tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  %2 = kiln.kernel "elementwise"(%b) {kiln.lane = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kiln.relu %x : tensor<4xf32> -> tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  %3 = kiln.kernel "elementwise"(%1, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = kiln.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %s : tensor<4xf32>
  }
  return %3 : tensor<4xf32>
}

// -----

// Without lanes, no marker is declared.
// CHECK-LABEL: func.func @no_lanes
// CHECK-NOT: kiln_lane
func.func @no_lanes(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.kernel "elementwise"(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kiln.relu %x : tensor<4xf32> -> tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
