// RUN: kiln-opt %s --kiln-plan-memory="max-stack-buffer-bytes=0" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-plan-memory="max-stack-buffer-bytes=64 max-stack-bytes=128" -split-input-file | FileCheck %s --check-prefix=STACK

// Three buffers in a chain: %a dies when %c is allocated, so %c reuses its
// bytes; %b overlaps both.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[IN:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<16xf32>, %[[ARENA:.*]]: memref<128xi8>)
// CHECK-SAME: kiln.arena_bytes = 128 : i64
// CHECK-SAME: kiln.intermediate_bytes = 192 : i64
// CHECK-NOT: memref.alloc
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<128xi8> to memref<16xf32>
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%c64{{.*}}][] : memref<128xi8> to memref<16xf32>
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<128xi8> to memref<16xf32>
// CHECK-NOT: memref.dealloc
// Small buffers go on the stack, at the top of the function, until the
// stack budget is spent: %a and %b (64 bytes each), then %c in the arena.
// STACK-LABEL: func.func @chain
// STACK-SAME: memref<64xi8>
// STACK-SAME: kiln.arena_bytes = 64 : i64
// STACK-SAME: kiln.stack_bytes = 128 : i64
// STACK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// STACK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// STACK: memref.view
func.func @chain(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  memref.copy %b, %c : memref<16xf32> to memref<16xf32>
  memref.copy %c, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A view keeps its buffer alive: %a is read through %v after %b is
// allocated, so they must not share bytes.
// CHECK-LABEL: func.func @alias
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<128xi8> to memref<4x4xf32>
// CHECK: memref.view %{{.*}}[%c64{{.*}}][] : memref<128xi8> to memref<16xf32>
func.func @alias(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<4x4xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.copy %in, %v : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %in, %b : memref<16xf32> to memref<16xf32>
  memref.copy %v, %out : memref<16xf32> to memref<16xf32>
  memref.copy %b, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A buffer allocated inside a loop lives for the whole loop; largest first,
// the odd-sized one is padded to the 64-byte alignment. i1 takes a byte.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: kiln.arena_bytes = 192 : i64
// CHECK: scf.for
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<192xi8> to memref<100xi1>
// CHECK: memref.view %{{.*}}[%c128{{.*}}][] : memref<192xi8> to memref<3xf32>
func.func @loop(%in: memref<3xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %flags = memref.alloc() : memref<100xi1>
    %t = memref.alloc() : memref<3xf32>
    memref.copy %in, %t : memref<3xf32> to memref<3xf32>
  }
  return
}

// -----

// Private functions and dynamic shapes are left alone.
// CHECK-LABEL: func.func private @helper
// CHECK: memref.alloc
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: memref<1xi8>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
func.func private @helper() {
  %a = memref.alloc() : memref<4xf32>
  return
}
func.func @dynamic(%n: index) {
  %a = memref.alloc(%n) : memref<?xf32>
  return
}


// -----

// A row tile's temporary inside a parallel loop is a stack slot of the
// iteration (each thread its own), not an arena slot.
// CHECK-LABEL: func.func @tile_temporary
// CHECK-SAME: kiln.arena_bytes = 0 : i64
// CHECK: scf.forall
// CHECK-NEXT: %[[T:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32xf32>
// CHECK: memref.copy %{{.*}}, %[[T]]
// CHECK-NOT: memref.alloc()
func.func @tile_temporary(%in: memref<64x32xf32>, %out: memref<64x32xf32>) {
  scf.forall (%i) in (64) {
    %t = memref.alloc() : memref<32xf32>
    %row = memref.subview %in[%i, 0] [1, 32] [1, 1] : memref<64x32xf32> to memref<32xf32, strided<[1], offset: ?>>
    memref.copy %row, %t : memref<32xf32, strided<[1], offset: ?>> to memref<32xf32>
    %dst = memref.subview %out[%i, 0] [1, 32] [1, 1] : memref<64x32xf32> to memref<32xf32, strided<[1], offset: ?>>
    memref.copy %t, %dst : memref<32xf32> to memref<32xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// The lanes of a kiln.lanes loop (kiln-form-lanes) run at once, each on
// its own thread: a lane's buffers get bytes of their own against every
// other lane's, and reuse their own lane's by its order (%c takes %a's
// bytes); a buffer live across the loop (%shared, which lane 0 writes and
// the copy after the loop reads) overlaps them all. Small or not, a lane's
// buffers stay in the arena (as stack slots, every lane's would take the
// frame of the task that runs them).
// CHECK-LABEL: func.func @lanes
// CHECK-SAME: kiln.arena_bytes = 256 : i64
// CHECK: %[[SHARED:.*]] = memref.view %{{.*}}[%c0{{.*}}][]
// CHECK: scf.index_switch
// CHECK-NEXT: case 0 {
// CHECK: memref.view %{{.*}}[%c64{{.*}}][]
// CHECK: memref.view %{{.*}}[%c128{{.*}}][]
// CHECK: memref.view %{{.*}}[%c64{{.*}}][]
// CHECK: case 1 {
// CHECK: memref.view %{{.*}}[%c192{{.*}}][]
// STACK-LABEL: func.func @lanes
// STACK-SAME: kiln.arena_bytes = 192 : i64
// STACK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// STACK-NOT: memref.alloca
// STACK: return
func.func @lanes(%in: memref<16xf32>, %out: memref<16xf32>, %out1: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %shared = memref.alloc() : memref<16xf32>
  scf.parallel (%lane) = (%c0) to (%c2) step (%c1) {
    scf.index_switch %lane
    case 0 {
      %a = memref.alloc() : memref<16xf32>
      memref.copy %in, %a : memref<16xf32> to memref<16xf32>
      %b = memref.alloc() : memref<16xf32>
      memref.copy %a, %b : memref<16xf32> to memref<16xf32>
      %c = memref.alloc() : memref<16xf32>
      memref.copy %b, %c : memref<16xf32> to memref<16xf32>
      memref.copy %c, %shared : memref<16xf32> to memref<16xf32>
      scf.yield
    }
    case 1 {
      %d = memref.alloc() : memref<16xf32>
      memref.copy %in, %d : memref<16xf32> to memref<16xf32>
      memref.copy %d, %out1 : memref<16xf32> to memref<16xf32>
      scf.yield
    }
    default {
    }
    scf.reduce
  } {kiln.lanes}
  memref.copy %shared, %out : memref<16xf32> to memref<16xf32>
  return
}
