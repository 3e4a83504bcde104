// RUN: kiln-opt %s --kiln-lower-matmul -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-matmul="lanes=8 rows=6" -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --kiln-lower-matmul="half-rate-vectors=true" -split-input-file | FileCheck %s --check-prefix=HALF
// RUN: kiln-opt %s --kiln-lower-matmul="l2-bytes=32768" -split-input-file | FileCheck %s --check-prefix=L2SMALL
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true l2-bytes=32768" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=RUNS-EXPLAIN
// RUN: kiln-opt %s --kiln-lower-matmul="lanes=8 rows=4 long-reduction=128" -split-input-file | FileCheck %s --check-prefix=FEWTILES
// RUN: kiln-opt %s --kiln-lower-matmul="l2-bytes=1048576 l1-ways=12" -split-input-file | FileCheck %s --check-prefix=SLICE
// RUN: kiln-opt %s --kiln-lower-matmul="l2-bytes=409600" -split-input-file | FileCheck %s --check-prefix=SLICEB
// RUN: kiln-opt %s --kiln-lower-matmul="l2-bytes=524288" -split-input-file | FileCheck %s --check-prefix=WSLICE
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true l2-bytes=524288" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=WSLICE-EXPLAIN
// RUN: kiln-opt %s --kiln-lower-matmul="vectors=3" -split-input-file | FileCheck %s --check-prefix=WIDE
// RUN: kiln-opt %s --kiln-lower-matmul="lanes=8 rows=6 k-unroll=4 l2-bytes=32768" -split-input-file | FileCheck %s --check-prefix=UNROLL
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true lanes=8 rows=4 vectors=3 k-unroll=4 l2-bytes=1048576 l1-ways=12 shape-tiles=false" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN-SLICE
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true vectors=3 l2-bytes=131072" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=NARROW
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true vectors=3 l2-bytes=262144" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOT-NARROW
// RUN: kiln-opt %s --kiln-lower-matmul="vectors=3" -split-input-file | FileCheck %s --check-prefix=WIDE-PANEL
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true vectors=3" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDE-PANEL-EXPLAIN
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true lanes=8 rows=4 vectors=3" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDE-PANEL-AVX2
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true vectors=3 shape-tiles=false" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDE-PANEL-OFF
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true lanes=8 rows=6" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2-EXPLAIN
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true lanes=8 rows=6 long-reduction=128" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACK128
// RUN: kiln-opt %s --kiln-lower-matmul="lanes=8 rows=6 long-reduction=128" -split-input-file | FileCheck %s --check-prefix=ITEMPACK
// RUN: kiln-opt %s --kiln-lower-matmul="explain=true half-rate-vectors=true long-reduction=128" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=HALF-EXPLAIN

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Constant weights are packed at compile time into 32-wide panels (the 40
// columns pad to 2 panels); A, 512 floats (2 KiB) per row, is packed per
// call; the zero fill becomes
// zero accumulators; 10 rows = one full 8-row tile + a 2-row tail; the
// 8-column panel tail is one masked vector. Packing writes the zero padding
// itself; nothing else is filled.
// CHECK-LABEL: memref.global "private" constant @__constant_w_packed : memref<2x512x32xf32> = dense_resource<__constant_w_packed> {alignment = 64 : i64}
// CHECK-LABEL: func.func @weights
// CHECK-NOT: linalg.fill
// CHECK: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x512x8xf32>
// CHECK: %[[BP:.*]] = memref.get_global @__constant_w_packed : memref<2x512x32xf32>
// A is packed by blocks of 8 rows x 16 k's, transposed in registers: 8
// loads, 3 stages of shuffles, each k's 8 values one 8-wide store.
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c512{{.*}} step %c16
// CHECK-COUNT-8: vector.load %arg0
// CHECK-COUNT-24: vector.shuffle
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [8], strides = [1]}
// CHECK: vector.store %{{.*}}, %[[AP]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x512x8xf32>, vector<8xf32>
// The one full row tile streams all of the next panel in (clamped to the
// last), 32 floats a step from float k * 32 of it: two prefetches a step,
// one per cache line. The ragged tile after it streams nothing.
// CHECK: scf.for
// CHECK: %[[NEXT:.*]] = arith.minui %{{.*}}, %c1
// CHECK: %[[BASE:.*]] = arith.muli %[[NEXT]], %c16384
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %c32
// CHECK: %[[OFFSET:.*]] = arith.addi %[[BASE]], %[[STEP]]
// CHECK: %[[FIRST:.*]] = arith.minui %[[OFFSET]], %c32767
// CHECK: memref.prefetch %{{.*}}[%[[FIRST]]], read, locality<1>, data : memref<32768xf32>
// CHECK-NOT: memref.prefetch
// CHECK: %[[LINE:.*]] = arith.addi %[[OFFSET]], %c16
// CHECK: %[[SECOND:.*]] = arith.minui %[[LINE]], %c32767
// CHECK: memref.prefetch %{{.*}}[%[[SECOND]]], read, locality<1>, data : memref<32768xf32>
// CHECK-NOT: memref.prefetch
// CHECK: vector.load %[[BP]]
// CHECK: scf.yield
// CHECK-NOT: memref.prefetch
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK: vector.constant_mask [8] : vector<16xi1>
// CHECK: vector.maskedstore
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @weights
// AVX2: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x512x6xf32>
// AVX2: %[[SIX:.*]] = vector.constant_mask [6] : vector<8xi1>
// AVX2: vector.maskedstore %[[AP]][%{{.*}}, %{{.*}}, %{{.*}}], %[[SIX]]
// AVX2: vector.fma {{.*}} : vector<8xf32>
memref.global "private" constant @__constant_w : memref<512x40xf32> = dense<1.0>
// explain=true: one remark per lowered matmul, at the matmul.
// AVX2 keeps its 4 x 24 tile for compile-time packed B (tallerTilePays).
// WIDE-PANEL-AVX2: remark: matmul: 10 x 512 x 40 (M x K x N); tile 4 x 24 (3 x 8 lanes)
// EXPLAIN: lower-matmul.mlir:[[@LINE+6]]:3: remark: matmul: 10 x 512 x 40 (M x K x N); tile 8 x 32 (2 x 16 lanes), 1 step of k an iteration; A packed per call, B packed at compile time; 4 work items: 2 panels x 2 groups of up to 1 row tile, panel-major
// EXPLAIN-SLICE: remark: matmul: 10 x 512 x 40 (M x K x N); tile 4 x 24 (3 x 8 lanes), 4 steps of k an iteration; A read in place, B packed at compile time;
func.func @weights(%a: memref<10x512xf32>, %c: memref<10x40xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_w : memref<512x40xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<10x40xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<10x512xf32>, memref<512x40xf32>) outs(%c : memref<10x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Compile-time packed B in 2 panels under 2 full row tiles: at step k, tile
// t prefetches its share of the next panel (clamped to the last), ceil(32 /
// 2) = 16 floats a step from float (t * 128 + k) * 16 of it, so the two
// tiles bring in all of it, into L2 (locality 1: it is read a panel
// later, after it would have left L1). The 2
// panels would be 2 work items; the row tiles are split so there are 4 (as
// close to kMinWorkItems, 16, as the tiles allow). This is panel-major
// order: with a 32 KiB L2, B (32 KB) would not stay in it; with 2 MiB both
// operands would, and B is the larger one, which a thread's range of
// panels then reads only its share of.
// CHECK-LABEL: func.func @streams_next_panel
// CHECK: arith.muli %{{.*}}, %c32
// CHECK: memref.prefetch %{{.*}}, read, locality<1>, data : memref<8192xf32>
// L2SMALL-LABEL: func.func @streams_next_panel
// L2SMALL: %[[BP:.*]] = memref.get_global @__constant_w2_packed : memref<2x128x32xf32>
// L2SMALL: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c4{{.*}})
// L2SMALL: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step
// L2SMALL: scf.for %[[K:.*]] = %{{.*}} to %c128
// L2SMALL: %[[NEXT:.*]] = arith.minui %{{.*}}, %c1
// L2SMALL: %[[BASE:.*]] = arith.muli %[[NEXT]], %c4096
// L2SMALL: %[[SHARE:.*]] = arith.muli %[[TILE]], %c128
// L2SMALL: %[[STEP:.*]] = arith.addi %[[SHARE]], %[[K]]
// L2SMALL: %[[SCALED:.*]] = arith.muli %[[STEP]], %c16
// L2SMALL: %[[OFFSET:.*]] = arith.addi %[[BASE]], %[[SCALED]]
// L2SMALL: %[[CLAMPED:.*]] = arith.minui %[[OFFSET]], %c8191
// L2SMALL: %[[FLAT:.*]] = memref.collapse_shape %[[BP]] {{\[}}[0, 1, 2]] : memref<2x128x32xf32> into memref<8192xf32>
// L2SMALL: memref.prefetch %[[FLAT]][%[[CLAMPED]]], read, locality<1>, data
// L2SMALL: vector.load %[[BP]]
// On AVX2 (2 MiB L2), 16-float panels under 2 full row tiles of 6 (and one
// of 4, which does not stream), one tile an item, 4 panels x 3 groups,
// panel-major: the 2 full tiles share the next panel, 8 floats a step.
// AVX2-LABEL: func.func @streams_next_panel
// AVX2: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c12{{.*}}) step
// AVX2: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step
// AVX2: arith.muli %{{.*}}, %c2048
// AVX2: %[[SHARE:.*]] = arith.muli %[[TILE]], %c128
// AVX2: %[[STEP:.*]] = arith.addi %[[SHARE]]
// AVX2: arith.muli %[[STEP]], %c8
// AVX2: memref.prefetch %{{.*}}, read, locality<1>, data : memref<8192xf32>
memref.global "private" constant @__constant_w2 : memref<128x64xf32> = dense<1.0>
func.func @streams_next_panel(%a: memref<16x128xf32>, %c: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_w2 : memref<128x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<16x128xf32>, memref<128x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// Both operands batched (attention), with short rows: the tiles read A and
// B in place (no copies per batch element), so the tiles of the whole batch
// are one parallel loop (3 elements x 1 item); without a zero fill, the
// accumulators start from C.
// CHECK-LABEL: func.func @batched
// CHECK: %[[A:.*]] = memref.collapse_shape %arg0 {{.*}} into memref<24x16xf32>
// CHECK: %[[B:.*]] = memref.collapse_shape %arg1 {{.*}} into memref<48x32xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[ITEM:.*]]) = (%c0{{.*}}) to (%c3{{.*}})
// CHECK: %[[BATCH:.*]] = arith.divui %[[ITEM]], %c1
// CHECK: arith.muli %[[BATCH]], %c8
// CHECK: vector.load %{{.*}} : memref<24x32xf32>, vector<16xf32>
// B read in place: each row prefetched 2 panels (64 columns) ahead,
// clamped to the row's last column.
// CHECK: %[[AHEAD:.*]] = arith.addi %{{.*}}, %c64
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[AHEAD]], %c31
// CHECK: memref.prefetch %[[B]][%{{.*}}, %[[CLAMPED]]], read, locality<3>, data
// CHECK: vector.load %[[B]]
// CHECK: memref.load %[[A]]
// CHECK: vector.fma
// CHECK: vector.store
// EXPLAIN: remark: matmul: 8 x 16 x 32 (M x K x N, batch 3); {{.*}}; A read in place, B read in place; 3 work items: 3 batches x 1 row tile x 1 group of up to 1 panel, panel-major
func.func @batched(%a: memref<3x8x16xf32>, %b: memref<3x16x32xf32>, %c: memref<3x8x32xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<3x8x16xf32>, memref<3x16x32xf32>) outs(%c : memref<3x8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A batched B whose matrices are 17 rows apart, one more than they have (a
// Winograd convolution's transformed input, spaced so that its matrices
// start in different L1 sets): not copied, but read in place through the
// view of its rows [(3 - 1) * 17 + 16, 32], matrix b's rows from row
// b * 17.
// CHECK-LABEL: func.func @spaced_b
// CHECK-NOT: memref.copy
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %arg1
// CHECK: %[[ROWS:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [50, 32], strides: [32, 1] : memref<f32> to memref<50x32xf32, strided<[32, 1]>>
// CHECK: scf.parallel
// CHECK: %[[BATCH:.*]] = arith.divui
// CHECK: %[[FIRST:.*]] = arith.muli %[[BATCH]], %c17
// CHECK: %[[ROW:.*]] = arith.addi %[[FIRST]], %{{.*}}
// CHECK: vector.load %[[ROWS]][%[[ROW]], %{{.*}}] : memref<50x32xf32, strided<[32, 1]>>, vector<16xf32>
// CHECK: vector.fma
// EXPLAIN: remark: matmul: 8 x 16 x 32 (M x K x N, batch 3); {{.*}}; A read in place, B read in place;
func.func @spaced_b(%a: memref<3x8x16xf32>, %b: memref<3x16x32xf32, strided<[544, 32, 1]>>, %c: memref<3x8x32xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<3x8x16xf32>, memref<3x16x32xf32, strided<[544, 32, 1]>>) outs(%c : memref<3x8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A spaced B (matrices 1025 rows apart) with a long reduction (1024 steps),
// 8 lanes, images of 2M multiply-adds: the tiles read B packed per call,
// and the copy reads each matrix from row b * 1025 of the view of its
// rows.
// AVX2-LABEL: func.func @spaced_b_packed
// AVX2-NOT: memref.copy
// AVX2: %[[ROWS:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2049, 16], strides: [16, 1]
// AVX2: %[[PACKED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x1024x16xf32>
// AVX2: arith.muli %{{.*}}, %c1025
// AVX2: vector.load %[[ROWS]]
// AVX2: vector.store %{{.*}}, %[[PACKED]]
func.func @spaced_b_packed(%a: memref<2x128x1024xf32>, %b: memref<2x1024x16xf32, strided<[16400, 16, 1]>>, %c: memref<2x128x16xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x128x1024xf32>, memref<2x1024x16xf32, strided<[16400, 16, 1]>>) outs(%c : memref<2x128x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Integer matmuls are left to the loop lowering.
// CHECK-LABEL: func.func @integers
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
func.func @integers(%a: memref<4x4xi32>, %b: memref<4x4xi32>, %c: memref<4x4xi32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x4xi32>, memref<4x4xi32>) outs(%c : memref<4x4xi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %p = arith.muli %x, %y : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, k, m)>
#rhs = affine_map<(b, m, n, k) -> (n, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A convolution with its output pixels as rows: A is the im2col matrix
// stored transposed ([batch, K, M], read in place: row k of one image holds
// the k-th value of every pixel) and B the filters, a constant stored
// transposed ([N, K], viewed from [N, C, KH, KW]), packed at compile time
// into panels. The batch of a transposed A is not folded into its rows (they
// are not evenly spaced across images): one parallel loop over the 2
// images' items (7 row tiles of 7 each, the reduction short enough that an
// item sweeps the panels along a row tile).
// CHECK-LABEL: memref.global "private" constant @__constant_filters_packed : memref<2x18x32xf32>
// CHECK-LABEL: func.func @pixels_as_rows
// CHECK: %[[A:.*]] = memref.collapse_shape %arg0 {{.*}} into memref<36x49xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[BP:.*]] = memref.get_global @__constant_filters_packed
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c14{{.*}})
// CHECK: vector.load %[[BP]]
// CHECK-NOT: memref.prefetch
// CHECK: memref.load %[[A]]
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
memref.global "private" constant @__constant_filters : memref<40x2x3x3xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 49 x 18 x 40 (M x K x N, batch 2), A transposed; tile 7 x 32 {{.*}}; 14 work items: 2 batches x 7 row tiles x 1 group of up to 2 panels, panel-major
func.func @pixels_as_rows(%a: memref<2x18x49xf32>, %c: memref<2x49x40xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_filters : memref<40x2x3x3xf32>
  %filters = memref.collapse_shape %w [[0], [1, 2, 3]] : memref<40x2x3x3xf32> into memref<40x18xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x49x40xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %filters : memref<2x18x49xf32>, memref<40x18xf32>) outs(%c : memref<2x49x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, k, m)>
#rhs = affine_map<(b, m, n, k) -> (n, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A transposed A read in place whose rows are 640 bytes apart (a 1x1
// convolution's input channels, 160 pixels each): each step of k
// prefetches the tile's first and last value 16 steps ahead (clamped to
// the last row), the stride being one the hardware prefetchers do not run
// ahead on. (@pixels_as_rows' rows of 196 bytes are not prefetched.)
// CHECK-LABEL: func.func @transposed_a_prefetched
// CHECK: %[[A:.*]] = memref.collapse_shape %arg0 {{.*}} into memref<96x160xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c96
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %c16
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[AHEAD]], %c95
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[CLAMPED]]
// CHECK: %[[LAST:.*]] = arith.addi %[[FIRST:.*]], %c7
// CHECK: memref.prefetch %[[A]][%[[ROW]], %[[FIRST]]], read, locality<3>, data
// CHECK: memref.prefetch %[[A]][%[[ROW]], %[[LAST]]], read, locality<3>, data
// CHECK: memref.load %[[A]]
// CHECK: vector.fma
memref.global "private" constant @__constant_wide_filters : memref<32x96xf32> = dense<1.0>
func.func @transposed_a_prefetched(%a: memref<1x96x160xf32>, %c: memref<1x160x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wide_filters : memref<32x96xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x160x32xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<1x96x160xf32>, memref<32x96xf32>) outs(%c : memref<1x160x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// A transposed A whose rows (here the M = 512 floats of one k) are 2 KiB
// apart is packed per call like any other A: a tile's 8 values of one k
// are consecutive, one vector copy. The tiles whose values share a cache
// line (2 of 8 rows) are copied together, k by k.
// CHECK-LABEL: func.func @transposed_a_packed
// CHECK: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x4x8xf32>
// CHECK: scf.parallel (%[[G:.*]]) = (%{{.*}}) to (%c32
// CHECK: %[[T0:.*]] = arith.muli %[[G]], %c2
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c4
// CHECK: %[[V0:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<4x512xf32>, vector<8xf32>
// CHECK: vector.store %[[V0]], %[[AP]][%[[T0]], %[[K]], %{{.*}}]
// CHECK: %[[T1:.*]] = arith.addi %[[T0]], %c1
// CHECK: %[[V1:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<4x512xf32>, vector<8xf32>
// CHECK: vector.store %[[V1]], %[[AP]][%[[T1]], %[[K]], %{{.*}}]
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK: vector.fma
// 6-row tiles (AVX2): 42 groups of 2 tiles, then tile 84 and the ragged
// tile 85 (2 of its 6 rows loaded, 6 stored: zeros past M) together.
// AVX2-LABEL: func.func @transposed_a_packed
// AVX2: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<86x4x6xf32>
// AVX2: scf.parallel ({{.*}}) = ({{.*}}) to (%c42
// AVX2: } {kiln.work
// AVX2: scf.for %[[K:.*]] = %{{.*}} to %c4
// AVX2: %[[WHOLE:.*]] = vector.constant_mask [6]
// AVX2: %[[V0:.*]] = vector.maskedload %arg0[{{.*}}], %[[WHOLE]]
// AVX2: vector.maskedstore %[[AP]][%c84, %[[K]], %{{.*}}], %{{.*}}, %[[V0]]
// AVX2: %[[T1:.*]] = arith.addi %c84, %c1
// AVX2: %[[RAGGED:.*]] = vector.constant_mask [2]
// AVX2: %[[V1:.*]] = vector.maskedload %arg0[{{.*}}], %[[RAGGED]]
// AVX2: %[[STORED:.*]] = vector.constant_mask [6]
// AVX2: vector.maskedstore %[[AP]][%[[T1]], %[[K]], %{{.*}}], %[[STORED]], %[[V1]]
// AVX2-NEXT: }
func.func @transposed_a_packed(%a: memref<4x512xf32>, %b: memref<4x16xf32>, %c: memref<512x16xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x512xf32>, memref<4x16xf32>) outs(%c : memref<512x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

// A transposed B is only read packed at compile time: one computed at run
// time stays a loop nest.
// CHECK-LABEL: func.func @transposed_runtime_b
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
func.func @transposed_runtime_b(%a: memref<8x16xf32>, %b: memref<32x16xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<32x16xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A convolution with its output channels as rows: A is the filters, a
// constant, packed at compile time into 8-row tiles (k-major within a tile,
// zeros in the rows past M = 3), and no copy of it is made per call. Weights
// often come from memory: each step prefetches the packed A 1024 floats
// (4 KiB) ahead of the tile's block, clamped to its last float.
// CHECK-LABEL: memref.global "private" constant @__constant_small_filters_packed : memref<1x2x8xf32> = dense_resource<__constant_small_filters_packed>
// CHECK-LABEL: func.func @constant_a_packed
// CHECK-NOT: memref.alloc
// CHECK: %[[AP:.*]] = memref.get_global @__constant_small_filters_packed
// CHECK: scf.for
// CHECK: %[[AHEAD:.*]] = arith.addi %{{.*}}, %c1024
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[AHEAD]], %c15
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[AP]] {{\[}}[0, 1, 2]] : memref<1x2x8xf32> into memref<16xf32>
// CHECK: memref.prefetch %[[FLAT]][%[[CLAMPED]]], read, locality<3>, data
// CHECK: memref.load %[[AP]]
// CHECK: vector.fma
// CHECK: __constant_small_filters_packed: "0x040000000000803F000040400000A040000000000000000000000000000000000000000000000040000080400000C0400000000000000000000000000000000000000000"
// AVX2-LABEL: memref.global "private" constant @__constant_small_filters_packed : memref<1x2x6xf32>
memref.global "private" constant @__constant_small_filters : memref<3x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]>
func.func @constant_a_packed(%b: memref<2x2x16xf32>, %c: memref<2x3x16xf32>) {
  %w = memref.get_global @__constant_small_filters : memref<3x2xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %b : memref<3x2xf32>, memref<2x2x16xf32>) outs(%c : memref<2x3x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#glhs = affine_map<(g, m, n, k) -> (g, m, k)>
#grhs = affine_map<(g, m, n, k) -> (g, k, n)>
#gout = affine_map<(g, m, n, k) -> (g, m, n)>

// A grouped convolution's filters [4, 2, 1, 1] as [2 groups, 2, 2] (a
// collapse, then an expand: the same data in the same order) are still the
// constant, packed at compile time one matrix per group: group 0's rows (1,
// 2) and (3, 4) as k-major columns of an 8-row tile, then group 1's.
// CHECK-LABEL: memref.global "private" constant @__constant_grouped_filters_packed : memref<2x2x8xf32>
// CHECK-LABEL: func.func @grouped_filters_packed
// CHECK: memref.get_global @__constant_grouped_filters_packed
// CHECK: vector.fma
// CHECK: __constant_grouped_filters_packed: "0x040000000000803F0000404000000000000000000000000000000000000000000000000000000040000080400000000000000000000000000000000000000000000000000000A0400000E0400000000000000000000000000000000000000000000000000000C04000000041000000000000000000000000000000000000000000000000"
memref.global "private" constant @__constant_grouped_filters : memref<4x2x1x1xf32> = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]]]>
func.func @grouped_filters_packed(%b: memref<2x2x16xf32>, %c: memref<2x2x16xf32>) {
  %w = memref.get_global @__constant_grouped_filters : memref<4x2x1x1xf32>
  %rows = memref.collapse_shape %w [[0], [1, 2, 3]] : memref<4x2x1x1xf32> into memref<4x2xf32>
  %groups = memref.expand_shape %rows [[0, 1], [2]] output_shape [2, 2, 2] : memref<4x2xf32> into memref<2x2x2xf32>
  linalg.generic {indexing_maps = [#glhs, #grhs, #gout],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%groups, %b : memref<2x2x2xf32>, memref<2x2x16xf32>) outs(%c : memref<2x2x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>

// Attention's head split after the Q projection: C + bias, viewed [8, 4,
// 16] (tokens, heads, head dim), transposed to [4, 8, 16]. The transpose
// keeps the last dim last, so each stored vector lies in one head's line
// of Y: the kernel stores it there (C's row and column give the head and
// the position by division) and the transpose is gone.
// CHECK-LABEL: func.func @head_split
// CHECK: vector.fma
// CHECK: %[[D:.*]] = arith.remui %{{.*}}, %c16
// CHECK: %[[HEAD:.*]] = arith.divui %{{.*}}, %c16
// CHECK: %[[HEADS:.*]] = arith.remui %[[HEAD]], %c4
// CHECK: %[[TOKEN:.*]] = arith.divui %[[HEAD]], %c4
// CHECK: vector.store %{{.*}}, %arg3[%[[HEADS]], %[[TOKEN]], %[[D]]] : memref<4x8x16xf32>, vector<16xf32>
// CHECK-NOT: linalg.transpose
// EXPLAIN: remark: matmul: 8 x 32 x 64 (M x K x N); {{.*}}; epilogue on the tile; stored permuted (the transpose after it);
memref.global "private" constant @__constant_wq : memref<32x64xf32> = dense<1.0>
func.func @head_split(%x: memref<8x32xf32>, %b: memref<64xf32>, %unused: memref<1xf32>, %y: memref<4x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wq : memref<32x64xf32>
  %c = memref.alloc() : memref<8x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x32xf32>, memref<32x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %e = memref.alloc() : memref<8x64xf32>
  linalg.generic {indexing_maps = [#id, #bias, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x64xf32>, memref<64xf32>) outs(%e : memref<8x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }
  %heads = memref.expand_shape %e [[0], [1, 2]] output_shape [8, 4, 16] : memref<8x64xf32> into memref<8x4x16xf32>
  linalg.transpose ins(%heads : memref<8x4x16xf32>) outs(%y : memref<4x8x16xf32>) permutation = [1, 0, 2]
  return
}

// The same in a --profile build, the matmul and its bias one kernel (0)
// and the transpose another (1), between kiln-inline-kernels' timer calls:
// the kernel still stores through the transpose, and the two are one
// profiled kernel, 0's end call after what was the transpose's place.
// CHECK-LABEL: func.func @head_split_profiled
// CHECK: %[[K0:.*]] = arith.constant 0 : i32
// CHECK: call @kiln_profile_begin(%[[K0]])
// CHECK-NOT: call @kiln_profile
// CHECK: vector.store %{{.*}}, %arg3[
// CHECK-NOT: call @kiln_profile
// CHECK: call @kiln_profile_end(%[[K0]])
// CHECK-NEXT: return
// EXPLAIN: remark: matmul: 8 x 32 x 64 (M x K x N); {{.*}}; epilogue on the tile; stored permuted (the transpose after it);
func.func private @kiln_profile_begin(i32)
func.func private @kiln_profile_end(i32)
memref.global "private" constant @__constant_wq_profiled : memref<32x64xf32> = dense<1.0>
func.func @head_split_profiled(%x: memref<8x32xf32>, %b: memref<64xf32>, %unused: memref<1xf32>, %y: memref<4x8x16xf32>) {
  %k0 = arith.constant 0 : i32
  %k1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  call @kiln_profile_begin(%k0) : (i32) -> ()
  %w = memref.get_global @__constant_wq_profiled : memref<32x64xf32>
  %c = memref.alloc() : memref<8x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x32xf32>, memref<32x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %e = memref.alloc() : memref<8x64xf32>
  linalg.generic {indexing_maps = [#id, #bias, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x64xf32>, memref<64xf32>) outs(%e : memref<8x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }
  call @kiln_profile_end(%k0) : (i32) -> ()
  call @kiln_profile_begin(%k1) : (i32) -> ()
  %heads = memref.expand_shape %e [[0], [1, 2]] output_shape [8, 4, 16] : memref<8x64xf32> into memref<8x4x16xf32>
  linalg.transpose ins(%heads : memref<8x4x16xf32>) outs(%y : memref<4x8x16xf32>) permutation = [1, 0, 2]
  call @kiln_profile_end(%k1) : (i32) -> ()
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>

// The result is a function's output (its caller reads it): the kernel
// stores it, and the transpose stays.
// CHECK-LABEL: func.func @head_split_of_an_output
// CHECK: vector.store %{{.*}}, %arg2[
// CHECK: linalg.transpose
// EXPLAIN-NOT: stored permuted
memref.global "private" constant @__constant_wo : memref<32x64xf32> = dense<1.0>
func.func @head_split_of_an_output(%x: memref<8x32xf32>, %y: memref<4x8x16xf32>, %c: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wo : memref<32x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x32xf32>, memref<32x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %heads = memref.expand_shape %c [[0], [1, 2]] output_shape [8, 4, 16] : memref<8x64xf32> into memref<8x4x16xf32>
  linalg.transpose ins(%heads : memref<8x4x16xf32>) outs(%y : memref<4x8x16xf32>) permutation = [1, 0, 2]
  return
}

// C's rows (24 columns) are not whole vectors: reshaped to [2, 6, 16], a
// row's second vector would straddle two lines of 16. The transpose stays.
// CHECK-LABEL: func.func @permuted_lines_straddle_rows
// CHECK: linalg.transpose
// EXPLAIN-NOT: stored permuted
memref.global "private" constant @__constant_w24 : memref<32x24xf32> = dense<1.0>
func.func @permuted_lines_straddle_rows(%x: memref<8x32xf32>, %shape: memref<3xi64>, %y: memref<6x2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_w24 : memref<32x24xf32>
  %c = memref.alloc() : memref<8x24xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x24xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x32xf32>, memref<32x24xf32>) outs(%c : memref<8x24xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %lines = memref.reshape %c(%shape) : (memref<8x24xf32>, memref<3xi64>) -> memref<2x6x16xf32>
  linalg.transpose ins(%lines : memref<2x6x16xf32>) outs(%y : memref<6x2x16xf32>) permutation = [1, 0, 2]
  return
}

// Attention's K^T after the K projection: C + bias viewed [2, 8, 4, 16]
// (images, tokens, heads, head dim), transposed to [2, 4, 16, 8]: the
// tokens, C's rows within an image, go last. Each tile (8 rows, all in one
// image) is transposed in registers and each of its columns stored as 8
// tokens in one row of Y viewed [2 * 64, 8]: row image * 64 + column, from
// token (first row mod 8). The bias is added before the transposition; the
// transpose is gone.
// CHECK-LABEL: func.func @k_transposed
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %arg3 {{\[}}[0, 1, 2], [3]] : memref<2x4x16x8xf32> into memref<128x8xf32>
// CHECK: vector.fma
// CHECK: arith.addf
// CHECK: %[[IMAGE:.*]] = arith.divui %{{.*}}, %c8
// CHECK: %[[TOKEN:.*]] = arith.remui %{{.*}}, %c8
// CHECK: %[[FIRST:.*]] = arith.muli %[[IMAGE]], %c64
// CHECK: vector.shuffle
// CHECK: vector.store %{{.*}}, %[[ROWS]][%{{.*}}, %[[TOKEN]]] : memref<128x8xf32>, vector<8xf32>
// CHECK-NOT: linalg.transpose
// EXPLAIN: remark: matmul: 16 x 32 x 64 (M x K x N); {{.*}}; epilogue on the tile; stored permuted (the transpose after it);
memref.global "private" constant @__constant_wk : memref<32x64xf32> = dense<1.0>
func.func @k_transposed(%x: memref<16x32xf32>, %b: memref<64xf32>, %unused: memref<1xf32>, %y: memref<2x4x16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wk : memref<32x64xf32>
  %c = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x32xf32>, memref<32x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %e = memref.alloc() : memref<16x64xf32>
  linalg.generic {indexing_maps = [#id, #bias, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<16x64xf32>, memref<64xf32>) outs(%e : memref<16x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }
  %heads = memref.expand_shape %e [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : memref<16x64xf32> into memref<2x8x4x16xf32>
  linalg.transpose ins(%heads : memref<2x8x4x16xf32>) outs(%y : memref<2x4x16x8xf32>) permutation = [0, 2, 3, 1]
  return
}

// 10 rows in tiles of 8: the second tile would straddle two rows of Y's
// [4, 16, 10] (and a partial tile). The transpose stays.
// CHECK-LABEL: func.func @k_transposed_ragged_rows
// CHECK: linalg.transpose
// EXPLAIN-NOT: stored permuted
memref.global "private" constant @__constant_wk10 : memref<32x64xf32> = dense<1.0>
func.func @k_transposed_ragged_rows(%x: memref<10x32xf32>, %y: memref<4x16x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wk10 : memref<32x64xf32>
  %c = memref.alloc() : memref<10x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<10x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<10x32xf32>, memref<32x64xf32>) outs(%c : memref<10x64xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %heads = memref.expand_shape %c [[0], [1, 2]] output_shape [10, 4, 16] : memref<10x64xf32> into memref<10x4x16xf32>
  linalg.transpose ins(%heads : memref<10x4x16xf32>) outs(%y : memref<4x16x10xf32>) permutation = [1, 2, 0]
  return
}

// A transpose that mixes C's columns with its rows ([8, 4, 16] to
// [16, 8, 4]: heads last) is neither form: it stays.
// CHECK-LABEL: func.func @heads_last
// CHECK: linalg.transpose
// EXPLAIN-NOT: stored permuted
memref.global "private" constant @__constant_wh : memref<32x64xf32> = dense<1.0>
func.func @heads_last(%x: memref<8x32xf32>, %y: memref<16x8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wh : memref<32x64xf32>
  %c = memref.alloc() : memref<8x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x32xf32>, memref<32x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %heads = memref.expand_shape %c [[0], [1, 2]] output_shape [8, 4, 16] : memref<8x64xf32> into memref<8x4x16xf32>
  linalg.transpose ins(%heads : memref<8x4x16xf32>) outs(%y : memref<16x8x4xf32>) permutation = [2, 0, 1]
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
#id = affine_map<(b, m, n) -> (b, m, n)>
#mask = affine_map<(b, m, n) -> (m, n)>

// Attention scores with a causal mask (GPT-2): scale, then a constant bool
// [16, 32] mask selects the score or -1e9, the same mask for every head
// (a full tensor of 16 rows, repeating). The mask is read from an i8 copy
// (memory holds an i1 per byte; a vector<16xi1> load would read bits) at
// the row modulo 16, compared with 0, and the select runs on the registers.
// CHECK-LABEL: memref.global "private" constant @__constant_causal_i8 : memref<16x32xi8>
// CHECK-LABEL: func.func @masked_scores
// CHECK: %[[MASK8:.*]] = memref.get_global @__constant_causal_i8 : memref<16x32xi8>
// CHECK: vector.fma
// CHECK: %[[ROW:.*]] = arith.remui %{{.*}}, %c16
// CHECK: %[[BYTES:.*]] = vector.load %[[MASK8]][%[[ROW]], %{{.*}}] : memref<16x32xi8>, vector<16xi8>
// CHECK: %[[KEEP:.*]] = arith.cmpi ne, %[[BYTES]], %{{.*}} : vector<16xi8>
// CHECK: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NOT: linalg.generic
// EXPLAIN: remark: matmul: 16 x 8 x 32 (M x K x N, batch 3); {{.*}}; epilogue on the tile;
memref.global "private" constant @__constant_causal : memref<16x32xi1> = dense<true>
func.func @masked_scores(%q: memref<3x16x8xf32>, %k: memref<3x8x32xf32>, %y: memref<3x16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %masked = arith.constant -1.0e9 : f32
  %mask = memref.get_global @__constant_causal : memref<16x32xi1>
  %c = memref.alloc() : memref<3x16x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<3x16x32xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<3x16x8xf32>, memref<3x8x32xf32>) outs(%c : memref<3x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mask, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %c : memref<16x32xi1>, memref<3x16x32xf32>) outs(%y : memref<3x16x32xf32>) {
  ^bb0(%m: i1, %v: f32, %o: f32):
    %s = arith.mulf %v, %scale : f32
    %r = arith.select %m, %s, %masked : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#per_channel = affine_map<(n, c, h, w) -> (c, 0, 0)>

// A convolution's epilogue over [N, C, H, W] (the matmul's result viewed
// through expand_shape): rows (n, c), columns (h, w). Its bias is one value
// per row (repeating every 4 rows: per channel of each image, a remainder),
// the residual a full tensor; both are applied on the registers and the
// matmul's result is never stored. The residual is prefetched per tile.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK: %[[OUT_FLAT:.*]] = memref.collapse_shape %arg3
// CHECK: %[[OUT:.*]] = memref.expand_shape %[[OUT_FLAT]] {{.*}} output_shape [8, 16]
// CHECK: %[[BIAS:.*]] = memref.collapse_shape %arg1 {{.*}} into memref<4xf32>
// CHECK: %[[RES_FLAT:.*]] = memref.collapse_shape %arg2
// CHECK: %[[RES:.*]] = memref.expand_shape %[[RES_FLAT]] {{.*}} output_shape [8, 16]
// The tile's residual rows are prefetched before its reduction.
// CHECK: memref.prefetch %[[RES]][%{{.*}}, %{{.*}}], read, locality<3>, data
// CHECK: vector.fma
// CHECK: arith.remui %{{.*}}, %c4
// CHECK: memref.load %[[BIAS]]
// CHECK: vector.load %[[RES]]
// Each op runs for all of the tile's vectors before the next (applyEach):
// the 4 rows' maxima come before the first store.
// CHECK: arith.maximumf
// CHECK-NOT: vector.store
// CHECK: arith.maximumf
// CHECK-NOT: vector.store
// CHECK: arith.maximumf
// CHECK-NOT: vector.store
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}}, %[[OUT]]
// CHECK-NOT: linalg.generic
memref.global "private" constant @__constant_conv_w : memref<4x8xf32> = dense<1.0>
func.func @conv_epilogue(%x: memref<2x8x16xf32>, %bias: memref<4x1x1xf32>, %residual: memref<2x4x4x4xf32>, %y: memref<2x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_conv_w : memref<4x8xf32>
  %c = memref.alloc() : memref<2x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x16xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %x : memref<4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %image = memref.expand_shape %c [[0], [1], [2, 3]] output_shape [2, 4, 4, 4] : memref<2x4x16xf32> into memref<2x4x4x4xf32>
  linalg.generic {indexing_maps = [#id, #per_channel, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%image, %bias, %residual : memref<2x4x4x4xf32>, memref<4x1x1xf32>, memref<2x4x4x4xf32>) outs(%y : memref<2x4x4x4xf32>) {
  ^bb0(%v: f32, %b: f32, %r: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %t = arith.addf %s, %r : f32
    %m = arith.maximumf %t, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// A result another op also reads is stored: the elementwise op after it
// stays a separate loop nest.
// CHECK-LABEL: func.func @result_read_twice
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[C:.*]][
// CHECK: linalg.generic
// CHECK: memref.copy
func.func @result_read_twice(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %y: memref<8x32xf32>, %z: memref<8x32xf32>) {
  %c = memref.alloc() : memref<8x32xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x32xf32>) outs(%y : memref<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  memref.copy %c, %z : memref<8x32xf32> to memref<8x32xf32>
  return
}

// -----

#w = affine_map<(n, o, f, c, kh, kw) -> (o, c, kh, kw)>
#x = affine_map<(n, o, f, c, kh, kw) -> (n, c, f + kh * 18 + kw)>
#t = affine_map<(n, o, f, c, kh, kw) -> (n, o, f)>
#id = affine_map<(n, o, h, w) -> (n, o, h, w)>
#per_channel = affine_map<(n, o, h, w) -> (o, 0, 0)>

// An implicit GEMM (WindowToLinalg's convAsShiftedMatmul): k = (c, kh, kw),
// B's row for it is channel c's row of X shifted by kh * 18 + kw, read in
// place: a loop over the 2 channels with the 9 taps unrolled (shifts 0, 1,
// 2, 18, ... 38). The epilogue reads the first 16 of each 18 columns: each
// vector is stored as two runs (this line's kept lanes, the next line's),
// with masks made at run time, the bias added on the registers.
// With 8 lanes, a tile's 2 vectors fit in a line's kept part: a tile inside
// one line (one test) is stored with plain stores at line * 16 + its column
// in the line, the bias added first; the others vector by vector as above.
// Full tiles of 6 rows (none here: M = 4), then the 4-row tiles.
// AVX2-LABEL: func.func @implicit_gemm
// AVX2: %[[SUMS:.*]]:12 = scf.for
// AVX2: %[[LINE:.*]] = arith.divui %[[COL:.*]], %c18
// AVX2: %[[AT:.*]] = arith.remui %[[COL]], %c18
// AVX2: %[[END:.*]] = arith.addi %[[AT]], %c16
// AVX2: %[[IN:.*]] = arith.cmpi ule, %[[END]], %c16
// AVX2: scf.if %[[IN]] {
// AVX2: %[[LINE0:.*]] = arith.muli %[[LINE]], %c16
// AVX2: %[[OUT:.*]] = arith.addi %[[LINE0]], %[[AT]]
// AVX2: %[[OUT0:.*]] = arith.addi %[[OUT]], %c0
// AVX2: %[[V:.*]] = arith.addf %[[SUMS]]#0,
// AVX2: vector.store %[[V]], %{{.*}}[%{{.*}}, %[[OUT0]]]
// AVX2: %[[OUT1:.*]] = arith.addi %[[OUT]], %c8
// AVX2: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[OUT1]]]
// AVX2-NOT: maskedstore
// AVX2-COUNT-10: vector.store
// AVX2-NOT: maskedstore
// AVX2: } else {
// AVX2: vector.maskedstore
// AVX2: %{{.*}}:8 = scf.for
// AVX2: arith.cmpi ule, %{{.*}}, %c16
// AVX2: scf.if
// AVX2-NOT: maskedstore
// AVX2-COUNT-8: vector.store
// AVX2-NOT: maskedstore
// AVX2: } else {
// With 3 vectors per row (AVX-512 on full-rate cores), 8 x 48 tiles: 24
// accumulators, 3 B loads a step.
// WIDE-LABEL: func.func @implicit_gemm
// WIDE: %{{.*}}:24 = scf.for
// WIDE-COUNT-3: vector.load %{{.*}} : memref<2x342xf32>, vector<16xf32>
// WIDE-COUNT-24: vector.fma
// CHECK-LABEL: func.func @implicit_gemm
// CHECK: %[[X:.*]] = memref.collapse_shape %arg0 {{.*}} into memref<2x342xf32>
// CHECK: %[[Y:.*]] = memref.expand_shape %{{.*}} output_shape [4, 256]
// CHECK: %[[AP:.*]] = memref.get_global @__constant_shift_w_packed : memref<1x18x8xf32>
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c2{{.*}} step
// CHECK-COUNT-9: vector.fma
// CHECK: scf.yield
// CHECK: vector.create_mask
// CHECK: vector.maskedstore %[[Y]]
// CHECK: vector.create_mask
// CHECK: vector.maskedstore %[[Y]]
// CHECK-NOT: linalg.generic
memref.global "private" constant @__constant_shift_w : memref<4x2x3x3xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 4 x 18 x 288 (M x K x N), implicit GEMM (B: the input shifted per tap); tile 8 x 32 (2 x 16 lanes), 9 taps (a channel) an iteration; A packed at compile time, B read in place; epilogue on the tile; 1 work item: 1 row tile x 1 group of up to 9 panels, panel-major{{$}}
func.func @implicit_gemm(%x: memref<1x2x342xf32>, %bias: memref<4x1x1xf32>, %y: memref<1x4x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_shift_w : memref<4x2x3x3xf32>
  %t = memref.alloc() : memref<1x4x288xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<1x4x288xf32>)
  linalg.generic {indexing_maps = [#w, #x, #t],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<4x2x3x3xf32>, memref<1x2x342xf32>) outs(%t : memref<1x4x288xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %lines = memref.expand_shape %t [[0], [1], [2, 3]] output_shape [1, 4, 16, 18] : memref<1x4x288xf32> into memref<1x4x16x18xf32>
  %kept = memref.subview %lines[0, 0, 0, 0] [1, 4, 16, 16] [1, 1, 1, 1] : memref<1x4x16x18xf32> to memref<1x4x16x16xf32, strided<[1152, 288, 18, 1]>>
  linalg.generic {indexing_maps = [#id, #per_channel, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kept, %bias : memref<1x4x16x16xf32, strided<[1152, 288, 18, 1]>>, memref<4x1x1xf32>) outs(%y : memref<1x4x16x16xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#w = affine_map<(o, f, c, kh, kw) -> (o, c, kh, kw)>
#x = affine_map<(o, f, c, kh, kw) -> (c, f + kh * 22 + kw)>
#t = affine_map<(o, f, c, kh, kw) -> (o, f)>

// A 7x7 window (49 taps, too many to unroll: they would spill registers),
// without a batch dim: a loop over the window's 7 rows, each row's shift
// (a multiple of the pitch, 22) read from a constant table, its 7 taps
// unrolled. Without an epilogue, C is stored as computed.
// CHECK: memref.global "private" constant @__kiln_tap_rows : memref<7xindex> = dense<[0, 22, 44, 66, 88, 110, 132]>
// CHECK-LABEL: func.func @wide_window
// CHECK: %[[ROWS:.*]] = memref.get_global @__kiln_tap_rows
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c3{{.*}} step
// CHECK: scf.for %[[ROW:.*]] = %c0{{.*}} to %c7{{.*}} step
// CHECK: memref.load %[[ROWS]][%[[ROW]]]
// CHECK-COUNT-7: vector.fma
// CHECK-NOT: linalg.generic
// 49 taps: a loop over the window's rows, 7 taps unrolled in each.
// EXPLAIN: remark: matmul: 8 x 147 x 330 (M x K x N), implicit GEMM (B: the input shifted per tap); tile 8 x 32 (2 x 16 lanes), 7 taps (a window row) an iteration;
func.func @wide_window(%w: memref<8x3x7x7xf32>, %x: memref<3x500xf32>, %t: memref<8x330xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #t],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<8x3x7x7xf32>, memref<3x500xf32>) outs(%t : memref<8x330xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// A short reduction (K = 16 <= 64): each work item sweeps one row tile
// along 16 panels, so C is written along its rows. 20 rows are 3 tiles (the
// last of 4 rows), 600 columns 19 panels (the last of 24) in 2 groups: 6
// items; the ragged panel belongs to the last group. A (1.3 KB) is read
// again by every group, so the items are numbered group-major: a thread's
// share is a range of C's columns.
// CHECK-LABEL: func.func @short_reduction
// CHECK: scf.parallel (%[[ITEM:.*]]) = (%c0{{.*}}) to (%c6{{.*}}) step
// CHECK: %[[GROUP:.*]] = arith.divui %[[ITEM]], %c3
// CHECK: %[[TILE:.*]] = arith.remui %[[ITEM]], %c3
// CHECK: arith.cmpi ult, %[[TILE]], %c2
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: arith.cmpi eq, %[[GROUP]], %c1
// CHECK: vector.maskedstore
memref.global "private" constant @__constant_short_w : memref<16x600xf32> = dense<1.0>
func.func @short_reduction(%a: memref<20x16xf32>, %c: memref<20x600xf32>) {
  %w = memref.get_global @__constant_short_w : memref<16x600xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<20x16xf32>, memref<16x600xf32>) outs(%c : memref<20x600xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// The same with an A of 8200 x 16 (525 KB, more than is read again from
// L2): the items are numbered tile-major, each row tile's groups in a row.
// CHECK-LABEL: func.func @short_reduction_large_a
// CHECK: scf.parallel (%[[ITEM:.*]]) = (%c0{{.*}}) to (%c2050{{.*}}) step
// CHECK: %[[TILE:.*]] = arith.divui %[[ITEM]], %c2
// CHECK: %[[GROUP:.*]] = arith.remui %[[ITEM]], %c2
memref.global "private" constant @__constant_short_w2 : memref<16x600xf32> = dense<1.0>
func.func @short_reduction_large_a(%a: memref<8200x16xf32>, %c: memref<8200x600xf32>) {
  %w = memref.get_global @__constant_short_w2 : memref<16x600xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<8200x16xf32>, memref<16x600xf32>) outs(%c : memref<8200x600xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// A long reduction: items are (panel, block of row tiles), 256 rows in 32
// tiles, 2 panels, blocks of 4 tiles (ceil(16 / 2) blocks wanted): 16
// items. With a 2 MiB L2, A (128 KB) and B (32 KB) both stay in L2, so the
// items are numbered block-major (a thread's share is a range of A's and
// C's rows), and each item's 4 tiles prefetch the next panel (the next
// item's) between them: 8 floats a step each, from float (t * 128 + k) * 8
// for tile t of the item. With a 32 KiB L2 neither stays, and the items
// stay block-major: panel-major would read A once more (128 KB) against B 7
// more times (224 KB), but B's panels are prefetched a panel ahead by the
// tiles before them, and A's blocks are not.
// CHECK-LABEL: func.func @item_order
// CHECK: scf.parallel (%[[ITEM:.*]]) = (%c0{{.*}}) to (%c16{{.*}}) step
// CHECK: %[[GROUP:.*]] = arith.divui %[[ITEM]], %c2
// CHECK: %[[PANEL:.*]] = arith.remui %[[ITEM]], %c2
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %c4
// CHECK: scf.for %[[TILE:.*]] = %[[FIRST]] to %{{.*}} step
// CHECK: %[[INITEM:.*]] = arith.subi %[[TILE]], %[[FIRST]]
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c128
// CHECK: arith.muli %[[INITEM]], %c128
// CHECK: arith.muli %{{.*}}, %c8
// CHECK: memref.prefetch
// L2SMALL-LABEL: func.func @item_order
// L2SMALL: scf.parallel (%[[ITEM:.*]]) = (%c0{{.*}}) to (%c16{{.*}}) step
// L2SMALL: %[[GROUP:.*]] = arith.divui %[[ITEM]], %c2
// L2SMALL: %[[PANEL:.*]] = arith.remui %[[ITEM]], %c2
// L2SMALL: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step
// L2SMALL: scf.for %[[K:.*]] = %{{.*}} to %c128
// L2SMALL: memref.prefetch
memref.global "private" constant @__constant_w_order : memref<128x64xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 256 x 128 x 64 (M x K x N); {{.*}}; 16 work items: 2 panels x 8 groups of up to 4 row tiles, row-tile-major
func.func @item_order(%a: memref<256x128xf32>, %c: memref<256x64xf32>) {
  %w = memref.get_global @__constant_w_order : memref<128x64xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<256x128xf32>, memref<128x64xf32>) outs(%c : memref<256x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Both operands stay in L2 (2 MiB), and B (128 KB) is more than twice A
// (32 KB): each thread reads all of the operand its range does not split,
// so the range is one of B's panels (panel-major): 8 panels x 2 groups of 4
// row tiles (a 1x1 convolution at 7x7 or 14x14 whose filters outweigh its
// input). @item_order above, A the larger, is block-major.
// CHECK-LABEL: func.func @item_order_larger_b
// CHECK: scf.parallel (%[[ITEM:.*]]) = (%c0{{.*}}) to (%c16{{.*}}) step
// CHECK: %[[PANEL:.*]] = arith.divui %[[ITEM]], %c2
// CHECK: %[[GROUP:.*]] = arith.remui %[[ITEM]], %c2
memref.global "private" constant @__constant_w_larger : memref<128x256xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 64 x 128 x 256 (M x K x N); {{.*}}; 16 work items: 8 panels x 2 groups of up to 4 row tiles, panel-major
func.func @item_order_larger_b(%a: memref<64x128xf32>, %c: memref<64x256xf32>) {
  %w = memref.get_global @__constant_w_larger : memref<128x256xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x128xf32>, memref<128x256xf32>) outs(%c : memref<64x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// B (48 KB in 3 panels) larger than A (32 KB) but not twice as large
// (kSplitBFactor): near a tie the items stay block-major.
// CHECK-LABEL: func.func @item_order_near_tie
memref.global "private" constant @__constant_w_near_tie : memref<128x96xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 64 x 128 x 96 (M x K x N); {{.*}}, row-tile-major{{$}}
func.func @item_order_near_tie(%a: memref<64x128xf32>, %c: memref<64x96xf32>) {
  %w = memref.get_global @__constant_w_near_tie : memref<128x96xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x128xf32>, memref<128x96xf32>) outs(%c : memref<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// 17 panels (N = 544), enough for 16 items, but an odd count of equal
// items splits unevenly over 2 threads (kEvenItemsBelow): each panel's 8
// row tiles are split in 2 groups, 34 items. 16 panels keep one group each.
// CHECK-LABEL: func.func @odd_panels_split_rows
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c34{{.*}}) step
memref.global "private" constant @__constant_w_odd : memref<128x544xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 64 x 128 x 544 (M x K x N); {{.*}}; 34 work items: 17 panels x 2 groups of up to 4 row tiles, panel-major
func.func @odd_panels_split_rows(%a: memref<64x128xf32>, %c: memref<64x544xf32>) {
  %w = memref.get_global @__constant_w_odd : memref<128x544xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x128xf32>, memref<128x544xf32>) outs(%c : memref<64x544xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @even_panels_one_group
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c16{{.*}}) step
memref.global "private" constant @__constant_w_even : memref<128x512xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 64 x 128 x 512 (M x K x N); {{.*}}; 16 work items: 16 panels x 1 group of up to 8 row tiles
func.func @even_panels_one_group(%a: memref<64x128xf32>, %c: memref<64x512xf32>) {
  %w = memref.get_global @__constant_w_even : memref<128x512xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x128xf32>, memref<128x512xf32>) outs(%c : memref<64x512xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, k, m)>
#rhs = affine_map<(b, m, n, k) -> (n, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
#swap = affine_map<(b, o, p) -> (b, p, o)>
#id3 = affine_map<(b, o, p) -> (b, o, p)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#per_channel = affine_map<(n, c, h, w) -> (c, 0, 0)>

// Pixels as rows followed by the copy Y[b][o][p] = T[b][p][o] (T's only
// reader) and a bias + ReLU over Y: the tiles are transposed in registers
// (3 stages of shuffles for 8 pixel rows) and each channel's 8 pixels are
// stored into Y (viewed [20, 11]) after the epilogue; the copy is gone
// (T's allocation, now unused, goes at the next canonicalization). 11
// pixels: a tile of 8 and one of 3 (transposed as 4, stores masked to 3
// lanes); 20 channels: one panel, its second vector 4 wide (channels past
// 20 are not stored).
// CHECK-LABEL: func.func @pixels_as_rows_stored_transposed
// CHECK: %[[Y:.*]] = memref.expand_shape %{{.*}} output_shape [20, 11]
// CHECK: vector.fma
// CHECK: vector.shuffle
// CHECK: %[[PIXELS:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK: memref.load %{{.*}}
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] : memref<20x11xf32>, vector<8xf32>
// CHECK: %[[THREE:.*]] = vector.constant_mask [3] : vector<4xi1>
// CHECK: vector.maskedstore %[[Y]][%{{.*}}, %{{.*}}], %[[THREE]], %{{.*}} : memref<20x11xf32>, vector<4xi1>, vector<4xf32>
// CHECK-NOT: linalg.generic
// AVX2's full tiles of 6 pixels store their 6 lanes plainly (a 4- and a
// 2-lane store once lowered), not masked; the 5-pixel tail stays masked.
// AVX2-LABEL: func.func @pixels_as_rows_stored_transposed
// AVX2: %[[SIX:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [6], strides = [1]} : vector<8xf32> to vector<6xf32>
// AVX2: vector.store %[[SIX]], %{{.*}} : memref<20x11xf32>, vector<6xf32>
// AVX2: vector.maskedstore %{{.*}} : memref<20x11xf32>, vector<8xi1>, vector<8xf32>
memref.global "private" constant @__constant_tfilters : memref<20x4xf32> = dense<1.0>
func.func @pixels_as_rows_stored_transposed(%a: memref<1x4x11xf32>, %bias: memref<20x1x1xf32>, %y: memref<1x20x11x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_tfilters : memref<20x4xf32>
  %t = memref.alloc() : memref<1x11x20xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<1x11x20xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<1x4x11xf32>, memref<20x4xf32>) outs(%t : memref<1x11x20xf32>) {
  ^bb0(%x: f32, %f: f32, %acc: f32):
    %p = arith.mulf %x, %f : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %c = memref.alloc() : memref<1x20x11xf32>
  linalg.generic {indexing_maps = [#swap, #id3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : memref<1x11x20xf32>) outs(%c : memref<1x20x11xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  %image = memref.expand_shape %c [[0], [1], [2, 3]] output_shape [1, 20, 11, 1] : memref<1x20x11xf32> into memref<1x20x11x1xf32>
  linalg.generic {indexing_maps = [#id4, #per_channel, #id4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%image, %bias : memref<1x20x11x1xf32>, memref<20x1x1xf32>) outs(%y : memref<1x20x11x1xf32>) {
  ^bb0(%v: f32, %bb: f32, %o: f32):
    %s = arith.addf %v, %bb : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, k, m)>
#rhs = affine_map<(b, m, n, k) -> (n, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
#swap = affine_map<(b, o, p) -> (b, p, o)>
#id3 = affine_map<(b, o, p) -> (b, o, p)>

// The same product, but a function's output (a view of the argument, as
// kiln-elide-output-copies leaves a reshaped output): its caller reads it,
// so the kernel stores it and the transposing copy stays.
// CHECK-LABEL: func.func @pixels_as_rows_product_is_output
// CHECK: %[[T:.*]] = memref.expand_shape %arg2
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<11x20xf32>
// CHECK: linalg.generic {{.*}} ins(%[[T]] : memref<1x11x20xf32>) outs(%arg3 : memref<1x20x11xf32>)
memref.global "private" constant @__constant_ofilters : memref<20x4xf32> = dense<1.0>
func.func @pixels_as_rows_product_is_output(%a: memref<1x4x11xf32>, %unused: memref<1xf32>, %out: memref<220xf32>, %y: memref<1x20x11xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_ofilters : memref<20x4xf32>
  %t = memref.expand_shape %out [[0, 1, 2]] output_shape [1, 11, 20] : memref<220xf32> into memref<1x11x20xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<1x11x20xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<1x4x11xf32>, memref<20x4xf32>) outs(%t : memref<1x11x20xf32>) {
  ^bb0(%x: f32, %f: f32, %acc: f32):
    %p = arith.mulf %x, %f : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#swap, #id3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : memref<1x11x20xf32>) outs(%y : memref<1x20x11xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, k, m)>
#rhs = affine_map<(b, m, n, k) -> (n, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// An im2col matrix as a transposed A with a long reduction (K = 1024): a
// tile whose FMAs run at half rate (Zen 4's AVX-512) reads it in place, one
// row per step of k; at full rate (Intel's AVX-512, AVX2) the steps are too
// short to hide those reads, so it packs A per call (stepsOutrunRows).
// CHECK-LABEL: func.func @long_reduction_transposed_a
// CHECK: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1024x8xf32>
// CHECK: vector.fma
// HALF-LABEL: func.func @long_reduction_transposed_a
// HALF-NOT: memref.alloc
// HALF: vector.fma
// AVX2-LABEL: func.func @long_reduction_transposed_a
// AVX2: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1024x6xf32>
// AVX2: vector.maskedstore %[[AP]]
// AVX2: vector.fma
memref.global "private" constant @__constant_long_filters : memref<16x1024xf32> = dense<1.0>
func.func @long_reduction_transposed_a(%a: memref<1x1024x10xf32>, %c: memref<1x10x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_long_filters : memref<16x1024xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x10x16xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<1x1024x10xf32>, memref<16x1024xf32>) outs(%c : memref<1x10x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, k, m)>
#rhs = affine_map<(b, m, n, k) -> (n, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// 1x1 convolutions at 7x7 in NCHW (49 pixels, A transposed): from
// long-reduction steps of k on (128: Zen 1-3's), a full-rate tile packs A
// per call, where reading it in place a tile's lines of A and its panel of
// B outgrow L1 (MobileNetV2's 160 -> 960 on Zen 3: 0.22 -> 0.17 ms); a
// shorter reduction's lines stay in L1 for the next row tiles, and
// half-rate FMAs hide the reads. By default (1024) both read A in place.
// PACK128: remark: matmul: 49 x 160 x 16 (M x K x N), A transposed; {{.*}}; A packed per call, B packed at compile time;
// PACK128: remark: matmul: 49 x 96 x 16 (M x K x N), A transposed; {{.*}}; A read in place, B packed at compile time;
// HALF-EXPLAIN: remark: matmul: 49 x 160 x 16 (M x K x N), A transposed; {{.*}}; A read in place, B packed at compile time;
// AVX2-EXPLAIN: remark: matmul: 49 x 160 x 16 (M x K x N), A transposed; {{.*}}; A read in place, B packed at compile time;
memref.global "private" constant @__constant_filters_160 : memref<16x160xf32> = dense<1.0>
memref.global "private" constant @__constant_filters_96 : memref<16x96xf32> = dense<1.0>
func.func @pointwise_at_7x7(%a: memref<1x160x49xf32>, %c: memref<1x49x16xf32>,
                            %a2: memref<1x96x49xf32>, %c2: memref<1x49x16xf32>) {
  %w = memref.get_global @__constant_filters_160 : memref<16x160xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<1x160x49xf32>, memref<16x160xf32>) outs(%c : memref<1x49x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %w2 = memref.get_global @__constant_filters_96 : memref<16x96xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a2, %w2 : memref<1x96x49xf32>, memref<16x96xf32>) outs(%c2 : memref<1x49x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// Over a batch of images of fewer than kMinPackedImageWork (2M)
// multiply-adds, a B packed per call for its long steps alone is packed only
// by the work items of one parallel loop over all images, a panel each:
// attention's P V (12 heads of 128 x 128 x 64, 1M each). Where the items
// cannot pack it, B is read in place rather than packed per image: 12 heads
// of 1 panel, its 60 rows split in 2 groups of 30 (under
// kMinRowsPerPackedPanel); 4 images of 32 x 1024 x 32 (a panel of 64 KiB,
// over kMaxPanelSlotBytes; A packed per call); 12 heads of 24 rows, one
// group (reading B in place copies nothing, so the floor holds even here).
// PACK128: remark: matmul: 128 x 128 x 64 (M x K x N, batch 12); {{.*}}; A read in place, B packed per call, each panel by its work item; 48 work items: 12 batches x 4 panels
// PACK128: remark: matmul: 256 x 128 x 64 (M x K x N, batch 2); {{.*}}; A read in place, B packed per call, each panel by its work item; 16 work items: 2 batches x 4 panels
// PACK128: remark: matmul: 60 x 128 x 16 (M x K x N, batch 12); {{.*}}; A read in place, B read in place; 24 work items: 12 batches x 1 panel x 2 groups of up to 5 row tiles
// PACK128: remark: matmul: 32 x 1024 x 32 (M x K x N, batch 4); {{.*}}; A packed per call, B read in place; {{[0-9]+}} work items per image (a loop over the batch)
// PACK128: remark: matmul: 24 x 128 x 64 (M x K x N, batch 12); {{.*}}; A read in place, B read in place; 48 work items: 12 batches x 4 panels x 1 group
func.func @batched_long_reduction(%a: memref<12x128x128xf32>, %b: memref<12x128x64xf32>, %c: memref<12x128x64xf32>,
                                  %a2: memref<2x256x128xf32>, %b2: memref<2x128x64xf32>, %c2: memref<2x256x64xf32>,
                                  %a3: memref<12x60x128xf32>, %b3: memref<12x128x16xf32>, %c3: memref<12x60x16xf32>,
                                  %a4: memref<4x32x1024xf32>, %b4: memref<4x1024x32xf32>, %c4: memref<4x32x32xf32>,
                                  %a5: memref<12x24x128xf32>, %b5: memref<12x128x64xf32>, %c5: memref<12x24x64xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<12x128x128xf32>, memref<12x128x64xf32>) outs(%c : memref<12x128x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a2, %b2 : memref<2x256x128xf32>, memref<2x128x64xf32>) outs(%c2 : memref<2x256x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a3, %b3 : memref<12x60x128xf32>, memref<12x128x16xf32>) outs(%c3 : memref<12x60x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a4, %b4 : memref<4x32x1024xf32>, memref<4x1024x32xf32>) outs(%c4 : memref<4x32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a5, %b5 : memref<12x24x128xf32>, memref<12x128x64xf32>) outs(%c5 : memref<12x24x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// B packed per call (a 1x1 convolution's input, its pixels as columns) is
// packed by the work items, each its panel into a [1, K, NR] buffer of its
// own (a stack slot after kiln-plan-memory), which its row tiles then read:
// 160 x 200 in 13 panels of 16 columns, one slot for the full panels and
// the ragged last one, whose second vector is zeros. A panel of more than
// kMaxPanelSlotBytes (2048 x 16 floats) is packed into an arena buffer
// first, by its own parallel loop.
// ITEMPACK-LABEL: func.func @packs_panels_in_items
// ITEMPACK: scf.parallel
// ITEMPACK: %[[SLOT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x160x16xf32>
// ITEMPACK: scf.for %[[K:.*]] = %c0{{.*}} to %c160
// ITEMPACK: vector.store %{{.*}}, %[[SLOT]][%c0{{.*}}, %[[K]], %c0{{.*}}] : memref<1x160x16xf32>, vector<8xf32>
// ITEMPACK: vector.store %{{.*}}, %[[SLOT]][%c0{{.*}}, %[[K]], %c8{{.*}}] : memref<1x160x16xf32>, vector<8xf32>
// ITEMPACK: vector.load %[[SLOT]][%c0{{.*}}, %{{.*}}, %c0{{.*}}] : memref<1x160x16xf32>, vector<8xf32>
// ITEMPACK-NOT: memref.alloc() {{.*}} : memref<1x160x16xf32>
// ITEMPACK: vector.store %cst{{.*}}, %[[SLOT]][%c0{{.*}}, %{{.*}}, %c8{{.*}}] : memref<1x160x16xf32>, vector<8xf32>
// ITEMPACK: memref.alloc() {alignment = 64 : i64} : memref<13x2048x16xf32>
// PACK128: remark: matmul: 96 x 160 x 200 (M x K x N); {{.*}}; A read in place, B packed per call, each panel by its work item; 26 work items: 13 panels x 2 groups of up to 8 row tiles
// PACK128: remark: matmul: 96 x 2048 x 200 (M x K x N); {{.*}}; A packed per call, B packed per call; 52 work items
// An item that covers all rows of its panel packs it whatever their count
// (12: the panel is copied once either way), and items that pack panels are
// not split in 2 groups for an even count (17 panels: split, each panel
// would be copied twice, for 6 rows each).
// PACK128: remark: matmul: 12 x 160 x 270 (M x K x N); {{.*}}; A read in place, B packed per call, each panel by its work item; 17 work items: 17 panels x 1 group of up to 2 row tiles
func.func @packs_panels_in_items(%a: memref<96x160xf32>, %b: memref<1x160x200xf32>, %c: memref<1x96x200xf32>,
                                 %b2: memref<1x2048x200xf32>, %a2: memref<96x2048xf32>,
                                 %a3: memref<12x160xf32>, %b3: memref<1x160x270xf32>, %c3: memref<1x12x270xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<96x160xf32>, memref<1x160x200xf32>) outs(%c : memref<1x96x200xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a2, %b2 : memref<96x2048xf32>, memref<1x2048x200xf32>) outs(%c : memref<1x96x200xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a3, %b3 : memref<12x160xf32>, memref<1x160x270xf32>) outs(%c3 : memref<1x12x270xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#window = affine_map<(n, c, kh, kw, h, w) -> (n, c, h + kh, w + kw)>
#id6 = affine_map<(n, c, kh, kw, h, w) -> (n, c, kh, kw, h, w)>
#lhs = affine_map<(b, m, n, k) -> (m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A batched im2col matrix (B, written by a copy that reads image n for
// image n) is made one image at a time inside the batch loop, into a
// buffer of one image, right before that image's tiles: the whole batch's
// matrix would leave the cache before the matmul reads it back. The
// batch's buffer and copy are gone.
// CHECK-LABEL: func.func @im2col_per_image
// CHECK-NOT: memref<2x2x3x3x4x4xf32>
// CHECK: %[[IMAGE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x3x3x4x4xf32>
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[IMAGE]] {{\[}}[0], [1, 2, 3], [4, 5]] : memref<1x2x3x3x4x4xf32> into memref<1x18x16xf32>
// CHECK: %[[B:.*]] = memref.collapse_shape %[[VIEW]] {{\[}}[0, 1], [2]] : memref<1x18x16xf32> into memref<18x16xf32>
// CHECK: scf.for %[[N:.*]] = %c0{{.*}} to %c2{{.*}}
// CHECK: %[[X:.*]] = memref.subview %arg0[%[[N]], 0, 0, 0] [1, 2, 6, 6] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[X]] : {{.*}}) outs(%[[IMAGE]] : memref<1x2x3x3x4x4xf32>)
// CHECK: scf.parallel
// CHECK: vector.load %[[B]]
// CHECK: vector.fma
// CHECK-NOT: memref<2x2x3x3x4x4xf32>
memref.global "private" constant @__constant_im2col_filters : memref<8x18xf32> = dense<1.0>
// The batch is a loop around the parallel loop (im2col per image).
// EXPLAIN: remark: matmul: 8 x 18 x 16 (M x K x N, batch 2); {{.*}}; 1 work item per image (a loop over the batch): 1 row tile x 1 group of up to 1 panel, panel-major{{$}}
func.func @im2col_per_image(%x: memref<2x2x6x6xf32>, %c: memref<2x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_im2col_filters : memref<8x18xf32>
  %col = memref.alloc() {alignment = 64 : i64} : memref<2x2x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#window, #id6],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x2x6x6xf32>) outs(%col : memref<2x2x3x3x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  %b = memref.collapse_shape %col [[0], [1, 2, 3], [4, 5]] : memref<2x2x3x3x4x4xf32> into memref<2x18x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x8x16xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %b : memref<8x18xf32>, memref<2x18x16xf32>) outs(%c : memref<2x8x16xf32>) {
  ^bb0(%f: f32, %v: f32, %acc: f32):
    %p = arith.mulf %f, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#window = affine_map<(n, c, kh, kw, h, w) -> (n, c, h + kh, w + kw)>
#id6 = affine_map<(n, c, kh, kw, h, w) -> (n, c, kh, kw, h, w)>
#lhs = affine_map<(b, m, n, k) -> (m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// The same matmul when the copy's input is written between the copy and
// the matmul: copied later, an image would read the new values. The batch
// matrix stays.
// CHECK-LABEL: func.func @im2col_input_overwritten
// CHECK: linalg.generic {{.*}} outs(%[[COL:.*]] : memref<2x2x3x3x4x4xf32>)
// CHECK: linalg.fill
// CHECK: scf.for
// CHECK-NOT: linalg.generic
// CHECK: vector.fma
memref.global "private" constant @__constant_im2col_filters2 : memref<8x18xf32> = dense<1.0>
func.func @im2col_input_overwritten(%x: memref<2x2x6x6xf32>, %c: memref<2x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_im2col_filters2 : memref<8x18xf32>
  %col = memref.alloc() {alignment = 64 : i64} : memref<2x2x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#window, #id6],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x2x6x6xf32>) outs(%col : memref<2x2x3x3x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.fill ins(%zero : f32) outs(%x : memref<2x2x6x6xf32>)
  %b = memref.collapse_shape %col [[0], [1, 2, 3], [4, 5]] : memref<2x2x3x3x4x4xf32> into memref<2x18x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x8x16xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %b : memref<8x18xf32>, memref<2x18x16xf32>) outs(%c : memref<2x8x16xf32>) {
  ^bb0(%f: f32, %v: f32, %acc: f32):
    %p = arith.mulf %f, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// X @ X over a batch, where X is a buffer copied image by image: a buffer
// that is both operands is not staged per image (staged as A, B would read
// the batch's buffer, its copy gone; as both, the copy would be erased
// twice, which crashed). The copy stays before the matmul.
// CHECK-LABEL: func.func @same_buffer_both_operands
// CHECK: %[[X:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x8x8xf32>
// CHECK-NEXT: memref.copy %arg0, %[[X]]
// CHECK-NOT: memref<1x8x8xf32>
// CHECK: scf.parallel
// CHECK: vector.fma
func.func @same_buffer_both_operands(%x: memref<2x8x8xf32>, %c: memref<2x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() {alignment = 64 : i64} : memref<2x8x8xf32>
  memref.copy %x, %buf : memref<2x8x8xf32> to memref<2x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x8x8xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%buf, %buf : memref<2x8x8xf32>, memref<2x8x8xf32>) outs(%c : memref<2x8x8xf32>) {
  ^bb0(%a: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#w = affine_map<(n, o, f, c, kh, kw) -> (o, c, kh, kw)>
#x = affine_map<(n, o, f, c, kh, kw) -> (n, c, f + kh * 18 + kw)>
#t = affine_map<(n, o, f, c, kh, kw) -> (n, o, f)>

// An implicit GEMM's laid-out input for a batch of 2 (zero padding, then
// the images copied inside it) is written one image at a time: the padding
// once before the batch loop, each image's copy inside it, reading that
// image; B's rows are then the image's channels (no batch offset).
// CHECK-LABEL: func.func @implicit_gemm_per_image
// CHECK-NOT: memref<2x2x19x18xf32>
// CHECK: %[[IMAGE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x19x18xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[IMAGE]] : memref<1x2x19x18xf32>)
// CHECK: scf.for %[[N:.*]] = %c0{{.*}} to %c2{{.*}}
// CHECK: %[[X:.*]] = memref.subview %arg0[%[[N]], 0, 0, 0] [1, 2, 16, 16] [1, 1, 1, 1]
// CHECK: %[[INTERIOR:.*]] = memref.subview %[[IMAGE]][0, 0, 1, 1] [1, 2, 16, 16] [1, 1, 1, 1]
// CHECK: memref.copy %[[X]], %[[INTERIOR]]
// CHECK: scf.parallel
// CHECK-COUNT-9: vector.fma
// CHECK-NOT: memref<2x2x19x18xf32>
memref.global "private" constant @__constant_shift_w2 : memref<4x2x3x3xf32> = dense<1.0>
func.func @implicit_gemm_per_image(%in: memref<2x2x16x16xf32>, %t: memref<2x4x288xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_shift_w2 : memref<4x2x3x3xf32>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<2x2x19x18xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x2x19x18xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 2, 16, 16] [1, 1, 1, 1] : memref<2x2x19x18xf32> to memref<2x2x16x16xf32, strided<[684, 342, 18, 1], offset: 19>>
  memref.copy %in, %interior : memref<2x2x16x16xf32> to memref<2x2x16x16xf32, strided<[684, 342, 18, 1], offset: 19>>
  %x = memref.collapse_shape %padded [[0], [1], [2, 3]] : memref<2x2x19x18xf32> into memref<2x2x342xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x4x288xf32>)
  linalg.generic {indexing_maps = [#w, #x, #t],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<4x2x3x3xf32>, memref<2x2x342xf32>) outs(%t : memref<2x4x288xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#w = affine_map<(n, o, f, c, kh, kw) -> (n, o, c, kh, kw)>
#x = affine_map<(n, o, f, c, kh, kw) -> (n, c, f + kh * 18 + kw)>
#t = affine_map<(n, o, f, c, kh, kw) -> (n, o, f)>

// 16 images of a few thousand multiply-adds each (a grouped convolution's
// groups, each with its filters) run in parallel: the padding is written
// once for all of them, then each task copies its image into the batch's
// buffer and runs that image's tiles (their own loop, run in order within
// the task), rather than one thread-pool dispatch per image. The layout is
// WindowToLinalg's, [16, 2, 1, 1, 19, 18] with one phase plane, its
// interior a view that drops the unit phase dims (the batch's kept): each
// image's is the same view of its slice.
// CHECK-LABEL: func.func @implicit_gemm_images_in_parallel
// CHECK: %[[PADDED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x2x1x1x19x18xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PADDED]] : memref<16x2x1x1x19x18xf32>)
// CHECK-NOT: memref.copy
// CHECK: scf.parallel (%[[N:.*]]) = (%c0{{.*}}) to (%c16{{.*}})
// CHECK: %[[X:.*]] = memref.subview %arg0[%[[N]], 0, 0, 0] [1, 2, 16, 16] [1, 1, 1, 1]
// CHECK: %[[INTERIOR:.*]] = memref.subview %[[PADDED]][%[[N]], 0, 0, 0, 1, 1] [1, 2, 1, 1, 16, 16] [1, 1, 1, 1, 1, 1] : memref<16x2x1x1x19x18xf32> to memref<1x2x16x16xf32, strided<[684, 342, 18, 1], offset: ?>>
// CHECK: memref.copy %[[X]], %[[INTERIOR]]
// CHECK: scf.parallel
// CHECK: vector.fma
// CHECK: } {kiln.work = 331776 : i64}
// EXPLAIN: remark: matmul: 4 x 18 x 288 (M x K x N, batch 16), implicit GEMM {{.*}} work item per image (the images in parallel, each task writing its images' operands)
memref.global "private" constant @__constant_group_w : memref<16x4x2x3x3xf32> = dense<1.0>
func.func @implicit_gemm_images_in_parallel(%in: memref<16x2x16x16xf32>, %t: memref<16x4x288xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_group_w : memref<16x4x2x3x3xf32>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<16x2x1x1x19x18xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<16x2x1x1x19x18xf32>)
  %interior = memref.subview %padded[0, 0, 0, 0, 1, 1] [16, 2, 1, 1, 16, 16] [1, 1, 1, 1, 1, 1] : memref<16x2x1x1x19x18xf32> to memref<16x2x16x16xf32, strided<[684, 342, 18, 1], offset: 19>>
  memref.copy %in, %interior : memref<16x2x16x16xf32> to memref<16x2x16x16xf32, strided<[684, 342, 18, 1], offset: 19>>
  %x = memref.collapse_shape %padded [[0], [1], [2, 3, 4, 5]] : memref<16x2x1x1x19x18xf32> into memref<16x2x342xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<16x4x288xf32>)
  linalg.generic {indexing_maps = [#w, #x, #t],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<16x4x2x3x3xf32>, memref<16x2x342xf32>) outs(%t : memref<16x4x288xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// A is a column slice of a wider buffer (rows 96 floats apart, 64 long):
// copied into a dense buffer first, which the tiles then read.
// CHECK-LABEL: func.func @strided_a
// CHECK: %[[DENSE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x64xf32>
// CHECK: memref.copy %{{.*}}, %[[DENSE]] : memref<4x64xf32, strided<[96, 1], offset: 16>> to memref<4x64xf32>
// CHECK: memref.load %[[DENSE]]
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
memref.global "private" constant @__constant_w3 : memref<64x32xf32> = dense<1.0>
func.func @strided_a(%x: memref<4x96xf32>, %c: memref<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_w3 : memref<64x32xf32>
  %a = memref.subview %x[0, 16] [4, 64] [1, 1] : memref<4x96xf32> to memref<4x64xf32, strided<[96, 1], offset: 16>>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x32xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<4x64xf32, strided<[96, 1], offset: 16>>, memref<64x32xf32>) outs(%c : memref<4x32xf32>) {
  ^bb0(%x0: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x0, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#cols = affine_map<(m, n) -> (n)>

// With a 1 MiB L2, A (512 KiB) and two panels of B (2 x 256 KiB) outgrow
// half of it, and the items are panel-major (B, 2 MiB, would be read
// again per block of rows): k is computed in 2 slices of 1024, one parallel
// loop each. The first starts from zero and stores its sums into C; the
// second starts from C and applies the bias before its stores. With 12 L1
// ways, A (8 KiB a row) is read in place; with 8 (the default) it is packed.
// SLICE-LABEL: func.func @reduction_slices
// SLICE: %[[C:.*]] = memref.alloc() : memref<64x256xf32>
// SLICE-NOT: memref<8x2048x8xf32>
// SLICE: scf.parallel
// SLICE: scf.for %{{.*}} = %c0{{.*}} to %c1024{{.*}} step %{{.*}} iter_args
// SLICE: memref.load %arg0
// SLICE: vector.store %{{.*}}, %[[C]]
// SLICE: scf.reduce
// SLICE: scf.parallel
// SLICE: vector.load %[[C]]
// SLICE: scf.for %{{.*}} = %c1024{{.*}} to %c2048{{.*}} step %{{.*}} iter_args
// SLICE: arith.addf
// SLICE: vector.store %{{.*}}, %arg3
// SLICE: scf.reduce
// SLICE-NOT: scf.parallel
// CHECK-LABEL: func.func @reduction_slices
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<8x2048x8xf32>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2048{{.*}} step %{{.*}} iter_args
// CHECK-NOT: scf.parallel
// EXPLAIN: remark: matmul: 64 x 2048 x 256 (M x K x N); {{.*}}; A packed per call, B packed per call; epilogue on the tile; 16 work items: 8 panels x 2 groups of up to 4 row tiles, panel-major{{$}}
// EXPLAIN-SLICE: remark: matmul: 64 x 2048 x 256 (M x K x N); tile 4 x 24 {{.*}}; k in 2 slices of 1024{{$}}
func.func @reduction_slices(%a: memref<64x2048xf32>, %w: memref<2048x256xf32>,
                            %bias: memref<256xf32>, %y: memref<64x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x256xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x256xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x2048xf32>, memref<2048x256xf32>) outs(%c : memref<64x256xf32>) {
  ^bb0(%x: f32, %v: f32, %acc: f32):
    %p = arith.mulf %x, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #cols, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x256xf32>, memref<256xf32>) outs(%y : memref<64x256xf32>) {
  ^bb0(%x: f32, %v: f32, %o: f32):
    %s = arith.addf %x, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Slices of k over compile-time packed B, without a zero fill: with a 400
// KiB L2, A (64 KiB) stays but B (256 KiB) does not, so panel-major, and A
// plus two panels (320 KiB) take 2 slices of 512. Both slices start from C.
// Each slice's 2 tiles of a panel stream in the next panel's slice: the
// second from float 512 * 32 of the next panel, tile t from (t * 512 + k -
// 512) * 16 on.
// SLICEB-LABEL: func.func @sliced_streams
// SLICEB: scf.parallel
// SLICEB: vector.load %arg1
// SLICEB: scf.for %{{.*}} = %c0{{.*}} to %c512{{.*}} step %{{.*}} iter_args
// SLICEB: memref.prefetch
// SLICEB: scf.parallel
// SLICEB: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step
// SLICEB: vector.load %arg1
// SLICEB: scf.for %[[K:.*]] = %c512{{.*}} to %c1024{{.*}} step %{{.*}} iter_args
// SLICEB: %[[NEXT:.*]] = arith.minui %{{.*}}, %c1
// SLICEB: %[[BASE:.*]] = arith.muli %[[NEXT]], %c32768
// SLICEB: %[[FROM:.*]] = arith.addi %[[BASE]], %c16384
// SLICEB: %[[STEP:.*]] = arith.subi %[[K]], %c512
// SLICEB: %[[SHARE:.*]] = arith.muli %[[TILE]], %c512
// SLICEB: %[[AT:.*]] = arith.addi %[[SHARE]], %[[STEP]]
// SLICEB: %[[SCALED:.*]] = arith.muli %[[AT]], %c16
// SLICEB: arith.addi %[[FROM]], %[[SCALED]]
// SLICEB: memref.prefetch
// SLICEB-NOT: scf.parallel
// With 2 MiB or 1 MiB, one slice.
// SLICE-LABEL: func.func @sliced_streams
// SLICE: scf.for %{{.*}} = %c0{{.*}} to %c1024{{.*}} step %{{.*}} iter_args
// CHECK-LABEL: func.func @sliced_streams
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c1024{{.*}} step %{{.*}} iter_args
// CHECK-NOT: scf.parallel
memref.global "private" constant @__constant_w_sliced : memref<1024x64xf32> = dense<1.0>
func.func @sliced_streams(%a: memref<16x1024xf32>, %c: memref<16x64xf32>) {
  %w = memref.get_global @__constant_w_sliced : memref<1024x64xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<16x1024xf32>, memref<1024x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Slices of k numbered swept-major: with a 1 MiB L2 neither A (768 KiB)
// nor B (768 KiB) stays in it, so every block of row tiles reads all of B
// again, and a block over the whole of k (1536) would hold 5 row tiles
// (256 KiB of A): k is cut into 2 slices of 768, the blocks planned for a
// slice (up to 10 tiles; 4 groups of 4 for enough work items), each slice
// one parallel loop whose item is (group = item / 4 panels, panel = item
// mod 4). With 2 MiB both stay: one loop over the whole of k.
// SLICEB-LABEL: func.func @swept_slices
// SLICEB: scf.for %{{.*}} = %c768{{.*}} to %c1536{{.*}} step %{{.*}} iter_args
// SLICE-LABEL: func.func @swept_slices
// SLICE: scf.parallel (%[[ITEM:.*]]) = (%{{.*}}) to (%c16{{.*}})
// SLICE: arith.divui %[[ITEM]], %c4
// SLICE: arith.remui %[[ITEM]], %c4
// SLICE: scf.for %{{.*}} = %c0{{.*}} to %c768{{.*}} step %{{.*}} iter_args
// SLICE: scf.parallel
// SLICE: scf.for %{{.*}} = %c768{{.*}} to %c1536{{.*}} step %{{.*}} iter_args
// CHECK-LABEL: func.func @swept_slices
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c1536{{.*}} step %{{.*}} iter_args
// CHECK-NOT: scf.for %{{.*}} = %c768
// EXPLAIN: remark: matmul: 128 x 1536 x 128 (M x K x N); {{.*}}; 16 work items: 4 panels x 4 groups of up to 4 row tiles, row-tile-major{{$}}
// EXPLAIN-SLICE: remark: matmul: 128 x 1536 x 128 (M x K x N); tile 4 x 24 {{.*}}; 18 work items: 6 panels x 3 groups of up to 11 row tiles, row-tile-major; k in 2 slices of 768{{$}}
func.func @swept_slices(%a: memref<128x1536xf32>, %w: memref<1536x128xf32>,
                        %c: memref<128x128xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<128x1536xf32>, memref<1536x128xf32>) outs(%c : memref<128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(p, o, c, kh, kw) -> (c, (p floordiv 3) * 14 + (p mod 3) * 2 + kh * 7 + kw)>
#w = affine_map<(p, o, c, kh, kw) -> (o, c, kh, kw)>
#t = affine_map<(p, o, c, kh, kw) -> (p, o)>
#swap = affine_map<(o, p) -> (p, o)>
#id = affine_map<(o, p) -> (o, p)>

// (Each tile row's window start is (p floordiv 3) * 14 + (p mod 3) * 2,
// computed once per tile.)
// Windowed rows (WindowToLinalg's convAsWindowedRows) for one image, whose
// unit batch was dropped: a 3x3 / 2 window over 7 x 7 padded planes (49
// floats per channel), 9 output pixels as rows (a tile of 7 and one of 2),
// 20 filters (one panel, packed at compile time as B [1][18][32]). The
// input is read in place: each step of k broadcasts every row's value at
// its window's start (computed per tile) plus the tap's shift, in a loop
// over the 2 channels with the 9 taps unrolled; nothing is packed per
// call. The product [9][20] is stored transposed into Y [20][9] (the copy
// goes): each channel's 7 pixels one store.
// SLICEB-LABEL: func.func @windowed_rows
// CHECK-LABEL: memref.global "private" constant @__constant_wfilters_packed : memref<1x18x32xf32>
// CHECK-LABEL: func.func @windowed_rows
// CHECK-NOT: memref.alloc() {alignment = 64 : i64}
// CHECK: memref.get_global @__constant_wfilters_packed
// CHECK: arith.divsi %{{.*}}, %c3
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c2{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[C]] : index
// CHECK: %[[A:.*]] = memref.load %arg0[%[[ROW]], %{{.*}}] : memref<2x49xf32>
// CHECK: %[[BROADCAST:.*]] = vector.broadcast %[[A]] : f32 to vector<16xf32>
// CHECK-COUNT-2: vector.fma %[[BROADCAST]]
// The last tap, (2, 2): 2 * 7 + 2 = 16 floats on from a row's start.
// CHECK: %[[LAST:.*]] = arith.addi %{{.*}}, %c16{{.*}} : index
// CHECK-NEXT: memref.load %arg0[%[[ROW]], %[[LAST]]] : memref<2x49xf32>
// CHECK-COUNT-14: vector.fma
// CHECK: scf.yield
// CHECK: vector.shuffle
// CHECK: vector.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}] : memref<20x9xf32>, vector<7xf32>
// CHECK-NOT: linalg.generic
memref.global "private" constant @__constant_wfilters : memref<20x2x3x3xf32> = dense<1.0>
// EXPLAIN: remark: matmul: 9 x 18 x 20 (M x K x N), pixels as rows (A: each pixel's window in the padded input); {{.*}}; stored transposed;
func.func @windowed_rows(%x: memref<2x49xf32>, %y: memref<20x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wfilters : memref<20x2x3x3xf32>
  %t = memref.alloc() : memref<9x20xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<9x20xf32>)
  linalg.generic {indexing_maps = [#x, #w, #t],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x49xf32>, memref<20x2x3x3xf32>) outs(%t : memref<9x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<9x20xf32>) outs(%y : memref<20x9xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#x = affine_map<(p, o, c, kh, kw) -> (c, (p floordiv 3) * 14 + (p mod 3) * 2 + kh * 7 + kw)>
#w = affine_map<(p, o, c, kh, kw) -> (o, c, kh, kw)>
#t = affine_map<(p, o, c, kh, kw) -> (p, o)>
#swap = affine_map<(o, p) -> (p, o)>
#id = affine_map<(o, p) -> (o, p)>

// Windowed rows whose k (20 channels x 9 taps) is too short for slices
// (windowed-rows-k-slices below): when A and two panels of 3 vectors (4 x
// (9 + 96) x 180 = 75600 bytes) outgrow half of the L2 budget (65536) and
// two of 2 vectors (52560) do not, the panel narrows to 32 columns. With a
// 262144-byte budget it stays 48 wide.
// NARROW: remark: matmul: 9 x 180 x 40 (M x K x N), pixels as rows (A: each pixel's window in the padded input); tile 7 x 32 (2 x 16 lanes)
// NOT-NARROW: remark: matmul: 9 x 180 x 40 (M x K x N), pixels as rows (A: each pixel's window in the padded input); tile 7 x 48 (3 x 16 lanes)
memref.global "private" constant @__constant_wide_filters : memref<40x20x3x3xf32> = dense<1.0>
func.func @windowed_rows_narrow_panel(%x: memref<20x49xf32>, %y: memref<40x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_wide_filters : memref<40x20x3x3xf32>
  %t = memref.alloc() : memref<9x40xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<9x40xf32>)
  linalg.generic {indexing_maps = [#x, #w, #t],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<20x49xf32>, memref<40x20x3x3xf32>) outs(%t : memref<9x40xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<9x40xf32>) outs(%y : memref<40x9xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#x = affine_map<(p, o, c, kh, kw) -> (c, (p floordiv 3) * 14 + (p mod 3) * 2 + kh * 7 + kw)>
#w = affine_map<(p, o, c, kh, kw) -> (o, c, kh, kw)>
#t = affine_map<(p, o, c, kh, kw) -> (p, o)>
#swap = affine_map<(o, p) -> (p, o)>
#id = affine_map<(o, p) -> (o, p)>

// Windowed rows whose planes (128 x 49 floats) and two panels of B (2 x 32
// x 1152 floats, 320 KB in all) outgrow half of the L2 budget (256 KB)
// compute k in slices of whole channels, one parallel loop each: channels
// 0-63, their sums stored into the product's temporary T (kept for them,
// the ragged second panel masked), then 64-127 from T's sums, stored
// transposed into Y. The default budget takes k whole. The full panel's
// one row tile of 7 pixels streams the next panel's slice in, 32 floats a
// tap: two prefetches.
// WSLICE-LABEL: func.func @windowed_rows_k_slices
// WSLICE: %[[T:.*]] = memref.alloc() : memref<9x40xf32>
// WSLICE: scf.parallel
// WSLICE: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c1{{.*}} iter_args
// WSLICE-COUNT-2: memref.prefetch %{{.*}}, read, locality<1>, data : memref<73728xf32>
// WSLICE: vector.store %{{.*}}, %[[T]][%{{.*}}, %{{.*}}] : memref<9x40xf32>, vector<16xf32>
// WSLICE: vector.maskedstore %[[T]][%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<9x40xf32>
// WSLICE: scf.parallel
// WSLICE: vector.load %[[T]][%{{.*}}, %{{.*}}] : memref<9x40xf32>, vector<16xf32>
// WSLICE: scf.for %{{.*}} = %c64{{.*}} to %c128{{.*}} step %c1{{.*}} iter_args
// WSLICE: vector.shuffle
// WSLICE-NOT: memref<9x40xf32>, vector<16xf32>
// WSLICE: vector.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}] : memref<40x9xf32>, vector<7xf32>
// WSLICE-EXPLAIN: remark: matmul: 9 x 1152 x 40 (M x K x N), pixels as rows {{.*}}; k in 2 slices of 576
// EXPLAIN: remark: matmul: 9 x 1152 x 40 (M x K x N), pixels as rows {{.*}}; 4 work items: 2 panels x 2 groups of up to 1 row tile, panel-major{{$}}
memref.global "private" constant @__constant_long_filters : memref<40x128x3x3xf32> = dense<1.0>
func.func @windowed_rows_k_slices(%x: memref<128x49xf32>, %y: memref<40x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_long_filters : memref<40x128x3x3xf32>
  %t = memref.alloc() : memref<9x40xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<9x40xf32>)
  linalg.generic {indexing_maps = [#x, #w, #t],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<128x49xf32>, memref<40x128x3x3xf32>) outs(%t : memref<9x40xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<9x40xf32>) outs(%y : memref<40x9xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#x = affine_map<(p, o, c, kh, kw) -> (c, (p floordiv 3) * 14 + (p mod 3) * 2 + kh * 7 + kw)>
#w = affine_map<(p, o, c, kh, kw) -> (o, c, kh, kw)>
#t = affine_map<(p, o, c, kh, kw) -> (p, o)>
#swap = affine_map<(o, p) -> (p, o)>
#id = affine_map<(o, p) -> (o, p)>

// Windowed rows over a strided view of the input (a slice of its channels)
// read a dense copy of it, made right before the kernel.
// SLICEB-LABEL: func.func @windowed_rows_strided_input
// CHECK-LABEL: func.func @windowed_rows_strided_input
// CHECK: %[[VIEW:.*]] = memref.subview %arg0
// CHECK: %[[DENSE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x49xf32>
// CHECK: memref.copy %[[VIEW]], %[[DENSE]]
// CHECK: memref.load %[[DENSE]]
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
memref.global "private" constant @__constant_sfilters : memref<20x2x3x3xf32> = dense<1.0>
func.func @windowed_rows_strided_input(%in: memref<4x49xf32>, %y: memref<20x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = memref.subview %in[2, 0] [2, 49] [1, 1] : memref<4x49xf32> to memref<2x49xf32, strided<[49, 1], offset: 98>>
  %w = memref.get_global @__constant_sfilters : memref<20x2x3x3xf32>
  %t = memref.alloc() : memref<9x20xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<9x20xf32>)
  linalg.generic {indexing_maps = [#x, #w, #t],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x49xf32, strided<[49, 1], offset: 98>>, memref<20x2x3x3xf32>) outs(%t : memref<9x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<9x20xf32>) outs(%y : memref<20x9xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// k-unroll=4: K = 130 runs as 32 iterations of 4 steps, then 2 single
// steps, the accumulators carried from the first loop into the second. The
// AVX2 tile's 16-float panels, 4 of them, panel-major (a 32 KiB L2): the 2
// full row tiles of 6 stream 8 floats of the next panel a step, so in an
// iteration of 4 steps only steps 0 and 2 start a new cache line and
// prefetch; a single step prefetches its own share. The 4-row tail tile
// (no stream) is unrolled the same way.
// UNROLL-LABEL: func.func @unrolled_steps
// UNROLL: %[[SUMS:.*]]:12 = scf.for %{{.*}} = %{{.*}} to %c128 step %c4
// UNROLL: memref.prefetch
// UNROLL-COUNT-12: vector.fma
// UNROLL-NOT: memref.prefetch
// UNROLL-COUNT-12: vector.fma
// UNROLL: memref.prefetch
// UNROLL-COUNT-12: vector.fma
// UNROLL-NOT: memref.prefetch
// UNROLL-COUNT-12: vector.fma
// UNROLL-NOT: {{memref.prefetch|vector.fma}}
// UNROLL: scf.yield
// UNROLL: scf.for %{{.*}} = %c128{{.*}} to %c130 step %c1{{.*}} iter_args(%{{.*}} = %[[SUMS]]#0,
// UNROLL-COUNT-1: memref.prefetch
// UNROLL-COUNT-12: vector.fma
// UNROLL-NOT: vector.fma
// UNROLL: scf.yield
// UNROLL: scf.for %{{.*}} step %c4
// UNROLL-NOT: memref.prefetch
// UNROLL-COUNT-32: vector.fma
// UNROLL: scf.for %{{.*}} = %c128{{.*}} to %c130 step %c1
memref.global "private" constant @__constant_w_unrolled : memref<130x64xf32> = dense<1.0>
func.func @unrolled_steps(%a: memref<16x130xf32>, %c: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_w_unrolled : memref<130x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<16x130xf32>, memref<130x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// With 3 vectors a row (full-rate AVX-512), a matmul at most 128 columns
// wide that fits fewer 64-column panels than 48-column ones (attention's
// P V, N = 64; Q K^T, N = 128) takes 6 x 64 tiles: 24 accumulators, each
// step 4 B vectors and 6 broadcasts. 13 rows: tiles of 6, 6 and 1.
// WIDE-PANEL-LABEL: func.func @wide_panel
// WIDE-PANEL: %{{.*}}:24 = scf.for
// WIDE-PANEL-COUNT-4: vector.load %{{.*}} : memref<32x64xf32>, vector<16xf32>
// WIDE-PANEL-COUNT-24: vector.fma
// WIDE-PANEL-EXPLAIN: remark: matmul: 13 x 16 x 64 (M x K x N, batch 2); tile 6 x 64 (4 x 16 lanes)
// A 16-lane target with 2 vectors a row keeps its tile. AVX2 (8 lanes, 4
// x 24 tiles) takes 6 x 16 for a B that is not a constant (tallerTilePays):
// 13 rows in tiles of 5, 5 and 3 (tileRows: 2 x 3 FMAs still fill the
// FMA latency, where 6, 6 and 1 would wait on it for 2).
// EXPLAIN: remark: matmul: 13 x 16 x 64 (M x K x N, batch 2); tile 8 x 32 (2 x 16 lanes)
// WIDE-PANEL-AVX2: remark: matmul: 13 x 16 x 64 (M x K x N, batch 2); tile 5 x 16 (2 x 8 lanes)
// Without shape-tiles (kiln-compile --matmul-tile), the target's tile.
// WIDE-PANEL-OFF: remark: matmul: 13 x 16 x 64 (M x K x N, batch 2); tile 8 x 48 (3 x 16 lanes)
func.func @wide_panel(%a: memref<2x13x16xf32>, %b: memref<2x16x64xf32>, %c: memref<2x13x64xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x13x16xf32>, memref<2x16x64xf32>) outs(%c : memref<2x13x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// 100 columns: 2 panels of 64 (the second 36 wide, its last vector
// masked) against 3 of 48. 144 columns are 3 whole 48-column panels: the tile stays.
// WIDE-PANEL-EXPLAIN: remark: matmul: 8 x 16 x 100 (M x K x N); tile 6 x 64 (4 x 16 lanes)
// WIDE-PANEL-EXPLAIN: remark: matmul: 8 x 16 x 144 (M x K x N); tile 8 x 48 (3 x 16 lanes)
// WIDE-PANEL-LABEL: func.func @wide_panel_ragged
// WIDE-PANEL: vector.maskedstore
func.func @wide_panel_ragged(%a: memref<8x16xf32>, %b: memref<16x100xf32>, %c: memref<8x100xf32>,
                             %b2: memref<16x144xf32>, %c2: memref<8x144xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x100xf32>) outs(%c : memref<8x100xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b2 : memref<8x16xf32>, memref<16x144xf32>) outs(%c2 : memref<8x144xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#gx = affine_map<(g, p, o, c, kh, kw) -> (g, c, (p floordiv 3) * 14 + (p mod 3) * 2 + kh * 7 + kw)>
#gw = affine_map<(g, p, o, c, kh, kw) -> (g, o, c, kh, kw)>
#gt = affine_map<(g, p, o, c, kh, kw) -> (g, p, o)>
#gswap = affine_map<(g, o, p) -> (g, p, o)>
#gid = affine_map<(g, o, p) -> (g, o, p)>

// Windowed rows of a grouped convolution (2 groups of 2 channels and 3
// filters), the groups the batch: the filters [6, 2, 3, 3] as [2, 3, 2, 3,
// 3] (the group read with the batch) are packed at compile time one
// matrix per group, [2 groups x 1 panel][18][32] (W[o][c][kh][kw] = 18 o +
// 9 c + 3 kh + kw + 1: group 0's first step is filters 0-2's first taps, 1,
// 19 and 37; group 1's, 55, 73 and 91), and each group's tiles read its
// panel.
// CHECK-LABEL: memref.global "private" constant @__constant_gfilters_packed : memref<2x18x32xf32>
// CHECK-LABEL: func.func @grouped_windowed_rows
// CHECK: %[[PACKED:.*]] = memref.get_global @__constant_gfilters_packed
// CHECK: scf.parallel (%[[ITEM:.*]]) =
// CHECK: %[[GROUP:.*]] = arith.divui %[[ITEM]], %c2
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[PANEL:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
// CHECK: vector.load %[[PACKED]][%[[PANEL]], %{{.*}}, %c0{{.*}}] : memref<2x18x32xf32>, vector<16xf32>
// CHECK: __constant_gfilters_packed: "0x040000000000803F0000984100001442{{(00000000){29}()}}{{([0-9A-F]{8}){200}()}}{{([0-9A-F]{8}){200}()}}{{([0-9A-F]{8}){144}()}}00005C42000092420000B642
// EXPLAIN: remark: matmul: 9 x 18 x 3 (M x K x N, batch 2), pixels as rows (A: each pixel's window in the padded input); {{.*}}; A read in place, B packed at compile time; {{.*}}stored transposed;
// On AVX2's 4 x 24 tiles, the 3 filters' one vector would leave each
// tile's accumulators waiting on the FMA latency: the 9 rows take 6 x 16
// tiles instead (tiles of 6 and 3 rows, 10 cycles a step against 3 tiles
// of 3 rows' 15).
// WIDE-PANEL-AVX2: remark: matmul: 9 x 18 x 3 (M x K x N, batch 2), pixels as rows {{.*}}; tile 6 x 16 (2 x 8 lanes)
memref.global "private" constant @__constant_gfilters : memref<6x2x3x3xf32> = dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[10.0, 11.0, 12.0], [13.0, 14.0, 15.0], [16.0, 17.0, 18.0]]], [[[19.0, 20.0, 21.0], [22.0, 23.0, 24.0], [25.0, 26.0, 27.0]], [[28.0, 29.0, 30.0], [31.0, 32.0, 33.0], [34.0, 35.0, 36.0]]], [[[37.0, 38.0, 39.0], [40.0, 41.0, 42.0], [43.0, 44.0, 45.0]], [[46.0, 47.0, 48.0], [49.0, 50.0, 51.0], [52.0, 53.0, 54.0]]], [[[55.0, 56.0, 57.0], [58.0, 59.0, 60.0], [61.0, 62.0, 63.0]], [[64.0, 65.0, 66.0], [67.0, 68.0, 69.0], [70.0, 71.0, 72.0]]], [[[73.0, 74.0, 75.0], [76.0, 77.0, 78.0], [79.0, 80.0, 81.0]], [[82.0, 83.0, 84.0], [85.0, 86.0, 87.0], [88.0, 89.0, 90.0]]], [[[91.0, 92.0, 93.0], [94.0, 95.0, 96.0], [97.0, 98.0, 99.0]], [[100.0, 101.0, 102.0], [103.0, 104.0, 105.0], [106.0, 107.0, 108.0]]]]>
func.func @grouped_windowed_rows(%x: memref<2x2x49xf32>, %y: memref<2x3x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_gfilters : memref<6x2x3x3xf32>
  %groups = memref.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : memref<6x2x3x3xf32> into memref<2x3x2x3x3xf32>
  %t = memref.alloc() : memref<2x9x3xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x9x3xf32>)
  linalg.generic {indexing_maps = [#gx, #gw, #gt],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %groups : memref<2x2x49xf32>, memref<2x3x2x3x3xf32>) outs(%t : memref<2x9x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#gswap, #gid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : memref<2x9x3xf32>) outs(%y : memref<2x3x9xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Six rows against compile-time packed B (a batch of 6 through a linear
// layer): AVX2's 4 x 24 tiles would take each panel in a tile of 4 rows and
// one of 2, whose 6 accumulators wait on the FMA latency (12 cycles a step
// over the 2 panels, with a cycle each for the tile's loads), where 6 x 16
// tiles take the 6 rows at once (3 panels of 7 cycles: 21). So do 10 rows
// (tiles of 4, 4 and 2 rows: 38 cycles, against 36 in tiles of 6 and 4 rows:
// over the 5% the taller tile has to win by), while 20 rows keep 4 x 24 (5
// tiles of 4 rows: 70 cycles, against 78 in tiles of 6, 6, 6 and 2 rows).
// WIDE-PANEL-AVX2: remark: matmul: 6 x 8 x 48 (M x K x N); tile 6 x 16 (2 x 8 lanes)
// WIDE-PANEL-AVX2: remark: matmul: 10 x 8 x 48 (M x K x N); tile 6 x 16 (2 x 8 lanes)
// WIDE-PANEL-AVX2: remark: matmul: 20 x 8 x 48 (M x K x N); tile 4 x 24 (3 x 8 lanes)
memref.global "private" constant @__constant_w6 : memref<8x48xf32> = dense<1.0>
func.func @six_rows_tall_tile(%a: memref<6x8xf32>, %a10: memref<10x8xf32>,
                              %a20: memref<20x8xf32>, %c: memref<6x48xf32>,
                              %c10: memref<10x48xf32>, %c20: memref<20x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_w6 : memref<8x48xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x48xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<6x8xf32>, memref<8x48xf32>) outs(%c : memref<6x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%c10 : memref<10x48xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a10, %w : memref<10x8xf32>, memref<8x48xf32>) outs(%c10 : memref<10x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%c20 : memref<20x48xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a20, %w : memref<20x8xf32>, memref<8x48xf32>) outs(%c20 : memref<20x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// One row against compile-time packed B (a batch-1 classifier): each panel
// is read once, by one tile. Where B (64 KB) outgrows half of L2 (a 32 KiB
// L2), it streams from memory and the tile reads its panel at 4 places at
// once: 4 runs of k (of the 16 accumulators the target's tile has, this
// tile takes 2), each 64 steps of its own accumulators, added after the
// loop. With B in a 2 MiB L2 the tile takes one run of 256 steps.
// L2SMALL-LABEL: func.func @gemv_runs_of_k
// L2SMALL: %[[BP:.*]] = memref.get_global @__constant_gemv_w_packed : memref<2x256x32xf32>
// L2SMALL: %[[SUMS:.*]]:8 = scf.for %[[K:.*]] = %c0{{.*}} to %c64{{.*}} step %c1{{.*}} iter_args
// L2SMALL: vector.load %[[BP]][%{{.*}}, %[[K]], %c0{{.*}}]
// L2SMALL: %[[K1:.*]] = arith.addi %[[K]], %c64
// L2SMALL: vector.load %[[BP]][%{{.*}}, %[[K1]], %c0{{.*}}]
// L2SMALL: %[[K2:.*]] = arith.addi %[[K]], %c128
// L2SMALL: vector.load %[[BP]][%{{.*}}, %[[K2]], %c0{{.*}}]
// L2SMALL: %[[K3:.*]] = arith.addi %[[K]], %c192
// L2SMALL: vector.load %[[BP]][%{{.*}}, %[[K3]], %c0{{.*}}]
// L2SMALL: scf.yield
// L2SMALL: %[[S0:.*]] = arith.addf %[[SUMS]]#0, %[[SUMS]]#2
// L2SMALL: %[[S1:.*]] = arith.addf %[[SUMS]]#1, %[[SUMS]]#3
// L2SMALL: %[[S2:.*]] = arith.addf %[[S0]], %[[SUMS]]#4
// L2SMALL: %[[S3:.*]] = arith.addf %[[S1]], %[[SUMS]]#5
// L2SMALL: %[[S4:.*]] = arith.addf %[[S2]], %[[SUMS]]#6
// L2SMALL: %[[S5:.*]] = arith.addf %[[S3]], %[[SUMS]]#7
// L2SMALL: vector.store %[[S4]]
// L2SMALL: vector.store %[[S5]]
// CHECK-LABEL: func.func @gemv_runs_of_k
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c256{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>)
// CHECK-NOT: scf.for
// CHECK: return
// RUNS-EXPLAIN: remark: matmul: 1 x 256 x 64 (M x K x N); tile 8 x 32 (2 x 16 lanes), 1 step of k an iteration of each of up to 4 runs of k at once; A read in place, B packed at compile time;
// EXPLAIN: remark: matmul: 1 x 256 x 64 (M x K x N); tile 8 x 32 (2 x 16 lanes), 1 step of k an iteration; A read in place,
memref.global "private" constant @__constant_gemv_w : memref<256x64xf32> = dense<1.0>
func.func @gemv_runs_of_k(%a: memref<1x256xf32>, %c: memref<1x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_gemv_w : memref<256x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x64xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<1x256xf32>, memref<256x64xf32>) outs(%c : memref<1x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Runs of k in iterations of 4 steps, with steps left over: 270 steps in 4
// runs of 64 (67 rounded down to whole iterations), each iteration steps
// k..k+3 of every run, each run's FMAs on its own accumulator (the 8
// columns are one vector of a 16-column panel: B packed is 17 KB, more than
// half of the 32 KiB L2); after the loop the runs' sums are added and the
// 14 steps left over run singly on them.
// UNROLL-LABEL: func.func @runs_of_k_left_over
// UNROLL: %[[SUMS:.*]]:4 = scf.for %[[K:.*]] = %c0{{.*}} to %c64{{.*}} step %c4{{.*}} iter_args(%[[R0:.*]] = %{{.*}}, %[[R1:.*]] = %{{.*}}, %[[R2:.*]] = %{{.*}}, %[[R3:.*]] = %{{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// UNROLL: %[[F0:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R0]]
// UNROLL: %[[K64:.*]] = arith.addi %[[K]], %c64
// UNROLL: %[[F1:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R1]]
// UNROLL: %[[K128:.*]] = arith.addi %[[K]], %c128
// UNROLL: %[[F2:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R2]]
// UNROLL: %[[K192:.*]] = arith.addi %[[K]], %c192
// UNROLL: %[[F3:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[R3]]
// UNROLL: arith.addi %[[K]], %c1
// UNROLL: vector.fma %{{.*}}, %{{.*}}, %[[F0]]
// UNROLL: arith.addi %[[K]], %c195
// UNROLL: scf.yield
// UNROLL: %[[SUM:.*]] = arith.addf %[[SUMS]]#0, %[[SUMS]]#1
// UNROLL: %[[SUM2:.*]] = arith.addf %[[SUM]], %[[SUMS]]#2
// UNROLL: %[[SUM3:.*]] = arith.addf %[[SUM2]], %[[SUMS]]#3
// UNROLL: scf.for %{{.*}} = %c256{{.*}} to %c270{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %[[SUM3]]) -> (vector<8xf32>)
// UNROLL-NOT: scf.for
// UNROLL: return
memref.global "private" constant @__constant_runs_w : memref<270x8xf32> = dense<1.0>
func.func @runs_of_k_left_over(%a: memref<1x270xf32>, %c: memref<1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_runs_w : memref<270x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<1x270xf32>, memref<270x8xf32>) outs(%c : memref<1x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// A transposed A of only 12 row tiles (4 rows, packed from K = 256 with
// long-reduction=128) keeps kMinPackGroups groups: 3 groups of 4 tiles
// would leave 2 threads unevenly loaded, so it packs tile by tile, one
// vector copy per k.
// FEWTILES-LABEL: func.func @transposed_a_few_tiles
// FEWTILES: %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12x256x4xf32>
// FEWTILES: scf.parallel (%[[G:.*]]) = (%{{.*}}) to (%c12
// FEWTILES: %[[T:.*]] = arith.muli %[[G]], %c1
// FEWTILES: scf.for %[[K:.*]] = %{{.*}} to %c256
// FEWTILES: %[[V:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<256x48xf32>, vector<4xf32>
// FEWTILES: vector.store %[[V]], %[[AP]][%[[T]], %[[K]], %{{.*}}]
// FEWTILES-NEXT: }
// FEWTILES-NEXT: scf.reduce
func.func @transposed_a_few_tiles(%a: memref<256x48xf32>, %b: memref<256x16xf32>, %c: memref<48x16xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<256x48xf32>, memref<256x16xf32>) outs(%c : memref<48x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
