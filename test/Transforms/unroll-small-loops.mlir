// RUN: kiln-opt %s --kiln-unroll-small-loops -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-unroll-small-loops=max-trip=2 -split-input-file | FileCheck %s --check-prefix=TRIP2
// RUN: kiln-opt %s --kiln-unroll-small-loops=max-ops=20 -split-input-file | FileCheck %s --check-prefix=OPS20

// A 3 x 3 window inside the pixel loop: both window loops unroll (the inner
// one first, then the outer one, now innermost), leaving 9 taps of
// straight-line code in the pixel loop for LLVM to vectorize.
// CHECK-LABEL: func.func @window
// CHECK: scf.parallel
// CHECK-NOT: scf.for
// CHECK-COUNT-9: arith.mulf
// CHECK-NOT: arith.mulf
// TRIP2-LABEL: func.func @window
// TRIP2-COUNT-2: scf.for
func.func @window(%in: memref<10x10xf32>, %w: memref<3x3xf32>, %out: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    scf.for %kh = %c0 to %c3 step %c1 {
      scf.for %kw = %c0 to %c3 step %c1 {
        %r = arith.addi %i, %kh : index
        %c = arith.addi %j, %kw : index
        %x = memref.load %in[%r, %c] : memref<10x10xf32>
        %y = memref.load %w[%kh, %kw] : memref<3x3xf32>
        %acc = memref.load %out[%i, %j] : memref<8x8xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        memref.store %s, %out[%i, %j] : memref<8x8xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// Long loops, loops at the top of a function (nothing to vectorize around
// them) and loops whose unrolled body would be too big stay.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: scf.for
func.func @kept(%buf: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %one, %buf[%i] : memref<64xf32>
  }
  scf.parallel (%p) = (%c0) to (%c4) step (%c1) {
    scf.for %i = %c0 to %c64 step %c1 {
      memref.store %one, %buf[%i] : memref<64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Index arithmetic does not count towards the body size: it folds once the
// induction variable is a constant (a stride-2 window's phase and column,
// kw mod 2 and ow + kw floordiv 2). Here 3 trips x 4 counted ops (two loads,
// mulf, addf: the store's and the yield's too) fit in max-ops=20, though
// the body holds 10 ops.
// OPS20-LABEL: func.func @strided_taps
// OPS20-NOT: scf.for
// OPS20-COUNT-3: arith.mulf
func.func @strided_taps(%in: memref<2x9xf32>, %w: memref<3xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
    %sum = scf.for %kw = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> f32 {
      %phase = affine.apply affine_map<(d0) -> (d0 mod 2)>(%kw)
      %col = affine.apply affine_map<(d0, d1) -> (d0 + d1 floordiv 2)>(%j, %kw)
      %x = memref.load %in[%phase, %col] : memref<2x9xf32>
      %y = memref.load %w[%kw] : memref<3xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      scf.yield %s : f32
    }
    memref.store %sum, %out[%j] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// A parallel loop whose innermost dim is short (a resize's 2 phases,
// out[2q + p]): the dim sinks into an scf.for, which unrolls, so the
// periods' loop is innermost and both phases are straight-line code in it.
// CHECK-LABEL: func.func @phases
// CHECK: scf.parallel (%[[Q:.*]]) = (%c0) to (%c8) step (%c1)
// CHECK-NOT: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[Q]], %c0]
// CHECK-NOT: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[Q]], %{{.*}}]
// CHECK-NOT: memref.store
// TRIP2-LABEL: func.func @phases
// TRIP2: scf.parallel (%{{.*}}) = (%c0) to (%c8)
// OPS20-LABEL: func.func @phases
// OPS20: scf.parallel (%{{.*}}) = (%c0) to (%c8)
func.func @phases(%in: memref<9xf32>, %w: memref<2xf32>, %out: memref<8x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%q, %p) = (%c0, %c0) to (%c8, %c2) step (%c1, %c1) {
    %i = arith.addi %q, %p : index
    %x = memref.load %in[%i] : memref<9xf32>
    %y = memref.load %w[%p] : memref<2xf32>
    %v = arith.mulf %x, %y : f32
    memref.store %v, %out[%q, %p] : memref<8x2xf32>
    scf.reduce
  }
  return
}

// -----

// Kept: a short dim alone (nothing around it to vectorize), an innermost
// dim longer than max-trip, a loop inside the body.
// CHECK-LABEL: func.func @kept_parallel
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c4)
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c16)
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c16, %c4)
// CHECK: scf.for
func.func @kept_parallel(%buf: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %buf[%i, %i] : memref<16x16xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    memref.store %one, %buf[%i, %j] : memref<16x16xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c16, %c4) step (%c1, %c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      memref.store %one, %buf[%k, %j] : memref<16x16xf32>
    }
    scf.reduce
  }
  return
}
