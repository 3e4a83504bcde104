// RUN: kiln-opt %s --kiln-form-lanes -split-input-file -verify-diagnostics | FileCheck %s

// Two lanes, each a run of ops between its markers, become the cases of
// an scf.index_switch in a parallel loop over the lanes. The weight's view,
// which CSE left in lane 0 and lane 1 reads too, and the buffers of the
// lanes' results, which the copies after the lanes read (one through a
// view), move before the loop; lane 1's temporary stays in its lane. The
// markers and their declarations are erased.
// CHECK-LABEL: func.func @lanes
// CHECK-DAG: %[[W:.*]] = memref.subview %arg1[0, 0] [4, 4] [1, 1]
// CHECK-DAG: %[[A0:.*]] = memref.alloc() : memref<1x4xf32>
// CHECK-DAG: %[[V0:.*]] = memref.expand_shape %[[A0]]
// CHECK-DAG: %[[A1:.*]] = memref.alloc() : memref<1x4xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%[[LANE:.*]]) = (%[[C0]]) to (%[[C2]]) step (%[[C1]]) {
// CHECK-NEXT: scf.index_switch %[[LANE]]
// CHECK-NEXT: case 0 {
// CHECK-NEXT: linalg.matmul ins(%{{.*}}, %[[W]] : {{.*}}) outs(%[[A0]] :
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: case 1 {
// CHECK-NEXT: %[[T1:.*]] = memref.alloc() : memref<1x4xf32>
// CHECK-NEXT: memref.copy %{{.*}}, %[[T1]]
// CHECK-NEXT: linalg.matmul ins(%[[T1]], %[[W]] : {{.*}}) outs(%[[A1]] :
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {kiln.lanes}
// CHECK-NEXT: memref.copy %[[V0]]
// CHECK-NEXT: memref.copy %[[A1]]
// CHECK-NOT: kiln_lane
func.func @lanes(%in: memref<2x4xf32>, %w: memref<4x4xf32>, %out0: memref<1x1x4xf32>, %out1: memref<1x4xf32>) {
  %l0 = arith.constant 0 : i32
  %l1 = arith.constant 1 : i32
  %x0 = memref.subview %in[0, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<1x4xf32, strided<[4, 1]>>
  %x1 = memref.subview %in[1, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 4>>
  call @kiln_lane_begin(%l0) : (i32) -> ()
  %wv = memref.subview %w[0, 0] [4, 4] [1, 1] : memref<4x4xf32> to memref<4x4xf32, strided<[4, 1]>>
  %a0 = memref.alloc() : memref<1x4xf32>
  linalg.matmul ins(%x0, %wv : memref<1x4xf32, strided<[4, 1]>>, memref<4x4xf32, strided<[4, 1]>>) outs(%a0 : memref<1x4xf32>)
  %v0 = memref.expand_shape %a0 [[0, 1], [2]] output_shape [1, 1, 4] : memref<1x4xf32> into memref<1x1x4xf32>
  call @kiln_lane_end(%l0) : (i32) -> ()
  call @kiln_lane_begin(%l1) : (i32) -> ()
  %t1 = memref.alloc() : memref<1x4xf32>
  memref.copy %x1, %t1 : memref<1x4xf32, strided<[4, 1], offset: 4>> to memref<1x4xf32>
  %a1 = memref.alloc() : memref<1x4xf32>
  linalg.matmul ins(%t1, %wv : memref<1x4xf32>, memref<4x4xf32, strided<[4, 1]>>) outs(%a1 : memref<1x4xf32>)
  call @kiln_lane_end(%l1) : (i32) -> ()
  memref.copy %v0, %out0 : memref<1x1x4xf32> to memref<1x1x4xf32>
  memref.copy %a1, %out1 : memref<1x4xf32> to memref<1x4xf32>
  return
}
func.func private @kiln_lane_begin(i32)
func.func private @kiln_lane_end(i32)

// -----

// An op that writes memory between the lanes (lane 1 reads what it
// writes): the lanes stay one after another, the markers go.
// CHECK-LABEL: func.func @write_between_lanes
// CHECK-NOT: scf.parallel
// CHECK-NOT: kiln_lane
// CHECK: memref.copy %arg0, %arg1
// CHECK-NEXT: memref.copy %arg1, %arg2
// CHECK-NEXT: memref.copy %arg1, %arg3
// CHECK-NOT: kiln_lane
func.func @write_between_lanes(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>) {
  %l0 = arith.constant 0 : i32
  %l1 = arith.constant 1 : i32
  call @kiln_lane_begin(%l0) : (i32) -> ()
  call @kiln_lane_end(%l0) : (i32) -> ()
  // expected-warning @+1 {{an op that writes memory is shared between lanes}}
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  call @kiln_lane_begin(%l1) : (i32) -> ()
  memref.copy %b, %c : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l1) : (i32) -> ()
  memref.copy %b, %d : memref<4xf32> to memref<4xf32>
  return
}
func.func private @kiln_lane_begin(i32)
func.func private @kiln_lane_end(i32)

// -----

// A lane whose ops come in two runs: left in order, the markers erased.
// CHECK-LABEL: func.func @lane_in_two_runs
// CHECK-NOT: scf.parallel
// CHECK-NOT: kiln_lane
func.func @lane_in_two_runs(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  %l0 = arith.constant 0 : i32
  %l1 = arith.constant 1 : i32
  call @kiln_lane_begin(%l0) : (i32) -> ()
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l0) : (i32) -> ()
  call @kiln_lane_begin(%l1) : (i32) -> ()
  memref.copy %a, %c : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l1) : (i32) -> ()
  // expected-warning @+1 {{the lane markers do not bracket one run of ops per lane}}
  call @kiln_lane_begin(%l0) : (i32) -> ()
  memref.copy %c, %b : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l0) : (i32) -> ()
  return
}
func.func private @kiln_lane_begin(i32)
func.func private @kiln_lane_end(i32)

// -----

// One lane: nothing to run in parallel; the markers go.
// CHECK-LABEL: func.func @one_lane
// CHECK-NOT: scf.parallel
// CHECK-NOT: kiln_lane
// CHECK: memref.copy %arg0, %arg1
// CHECK-NEXT: return
func.func @one_lane(%a: memref<4xf32>, %b: memref<4xf32>) {
  %l0 = arith.constant 0 : i32
  call @kiln_lane_begin(%l0) : (i32) -> ()
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l0) : (i32) -> ()
  return
}
func.func private @kiln_lane_begin(i32)
func.func private @kiln_lane_end(i32)

// -----

// Lane 0 writes a buffer of the caller that lane 1 reads: run at once, lane
// 1 could read it before lane 0 wrote it. The lanes stay one after another.
// CHECK-LABEL: func.func @lanes_share_an_argument
// CHECK-NOT: scf.parallel
// CHECK: memref.copy %arg0, %arg1
// CHECK-NEXT: memref.copy %arg1, %arg2
func.func @lanes_share_an_argument(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  %l0 = arith.constant 0 : i32
  %l1 = arith.constant 1 : i32
  call @kiln_lane_begin(%l0) : (i32) -> ()
  // expected-warning @+1 {{lanes share memory one of them writes}}
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l0) : (i32) -> ()
  call @kiln_lane_begin(%l1) : (i32) -> ()
  memref.copy %b, %c : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l1) : (i32) -> ()
  return
}
func.func private @kiln_lane_begin(i32)
func.func private @kiln_lane_end(i32)

// -----

// An allocation of lane 0 that lane 1 writes through a view: hoisting it
// would leave both lanes on one buffer, so the lanes stay one after
// another. Both lanes only reading the input is fine (the case above).
// CHECK-LABEL: func.func @lanes_share_a_buffer
// CHECK-NOT: scf.parallel
func.func @lanes_share_a_buffer(%a: memref<4xf32>, %out: memref<4xf32>) {
  %l0 = arith.constant 0 : i32
  %l1 = arith.constant 1 : i32
  call @kiln_lane_begin(%l0) : (i32) -> ()
  %t = memref.alloc() : memref<4xf32>
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  call @kiln_lane_end(%l0) : (i32) -> ()
  call @kiln_lane_begin(%l1) : (i32) -> ()
  %v = memref.subview %t[0] [4] [1] : memref<4xf32> to memref<4xf32, strided<[1]>>
  // expected-warning @+1 {{lanes share memory one of them writes}}
  memref.copy %a, %v : memref<4xf32> to memref<4xf32, strided<[1]>>
  call @kiln_lane_end(%l1) : (i32) -> ()
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func private @kiln_lane_begin(i32)
func.func private @kiln_lane_end(i32)

