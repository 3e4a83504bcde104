// RUN: kiln-opt %s --kiln-lower-window-ops --canonicalize -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-window-ops="lanes=8" --canonicalize -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --kiln-lower-window-ops="prefetch-min-bytes=0" --canonicalize -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: kiln-opt %s --kiln-lower-window-ops="prefetch-min-bytes=8388608" --canonicalize -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: kiln-opt %s --kiln-lower-matmul -split-input-file | FileCheck %s --check-prefix=PRODUCER
// RUN: kiln-opt %s --kiln-lower-matmul --kiln-lower-window-ops -split-input-file | FileCheck %s --check-prefix=INTERLEAVE
// RUN: kiln-opt %s --kiln-lower-matmul --kiln-lower-window-ops="prefetch-min-bytes=1024" -split-input-file | FileCheck %s --check-prefix=BANDED-INPUT

// 7x7 planes, 3x3, stride 1, the input zero-padded by a tensor.pad (alloc,
// fill, copy into a subview): the copy goes, each plane is copied from the
// unpadded input into a stack buffer with a row pitch of 9 (84 floats: 81
// and the last vector's reach). All 7 rows are one group of 4 vectors; the
// first keeps lanes 0-6 and 9-15 (row 0 and row 1), moved together by a
// shuffle and stored with a 14-lane mask at output 0. Taps are loads at
// constant offsets (0, 1, 2, 9, ...), the first multiplied, the others
// FMAs. The bias (one value per plane) and ReLU6 are applied on the
// register.
// CHECK-LABEL: func.func @narrow_planes
// CHECK-NOT: memref.copy
// CHECK: %[[OUT:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1], [2, 3]] : memref<1x2x7x7xf32> into memref<2x49xf32>
// CHECK: %[[BIAS:.*]] = memref.collapse_shape %arg1
// CHECK: %[[IN:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]] : memref<1x2x7x7xf32> into memref<2x49xf32>
// CHECK: scf.parallel (%[[TASK:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<84xf32>
// The padding around the interior (rows 1-7, columns 1-7 of the 9x9 plane)
// is written once per task: 10 floats up to (1, 1), the 2 between each
// row's end and the next row's start, 10 from (7, 8) on, the 3 past it.
// CHECK: %[[M10:.*]] = vector.constant_mask [10]
// CHECK: vector.maskedstore %[[BUF]][%c0{{.*}}], %[[M10]]
// CHECK: scf.for %{{.*}} = %c1{{.*}} to %c7
// CHECK: vector.maskedstore %[[BUF]]
// CHECK: vector.maskedstore %[[BUF]][%c71{{.*}}]
// CHECK: %[[M3:.*]] = vector.constant_mask [3]
// CHECK: vector.maskedstore %[[BUF]][%c81{{.*}}], %[[M3]]
// Rows 0-3 store their 7 floats as a whole vector (the 9 lanes past the row
// hold the pad value and land on padding or rows copied later); rows 4-6,
// whose vector could reach past the buffer, store masked.
// CHECK: scf.for %[[PLANE:.*]] =
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c4
// CHECK: %[[ROW:.*]] = vector.maskedload %[[IN]][%[[PLANE]], %{{.*}}]
// CHECK-NEXT: vector.store %[[ROW]], %[[BUF]]
// CHECK: scf.for %{{.*}} = %c4{{.*}} to %c7
// CHECK: vector.maskedload %[[IN]][%[[PLANE]], %{{.*}}]
// CHECK: vector.maskedstore %[[BUF]]
// CHECK: %[[T0:.*]] = vector.load %[[BUF]][%c0{{.*}}]
// CHECK: arith.mulf %[[T0]]
// CHECK: vector.load %[[BUF]][%c1{{.*}}]
// CHECK: vector.fma
// CHECK: vector.load %[[BUF]][%c9{{.*}}]
// CHECK: vector.load %[[BUF]][%c20{{.*}}]
// CHECK-NEXT: %[[ACC:.*]] = vector.fma
// CHECK-NEXT: %[[KEPT:.*]] = vector.shuffle %[[ACC]], %[[ACC]] [0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15, 7, 8]
// CHECK: memref.load %[[BIAS]][%[[PLANE]]]
// CHECK: arith.addf %[[KEPT]]
// CHECK: arith.maximumf
// CHECK: %[[Y:.*]] = arith.minimumf
// CHECK: %[[MASK:.*]] = vector.constant_mask [14]
// CHECK: vector.maskedstore %[[OUT]][%[[PLANE]], %c0{{.*}}], %[[MASK]], %[[Y]]
// CHECK-COUNT-3: vector.maskedstore %[[OUT]]
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @narrow_planes
// With 8 lanes, a row's 7 outputs fill all of a vector but one lane, fewer
// lanes than a pitch of 9 spanning rows: rows of whole vectors (pitch 16), 4
// rows per group sharing their window rows' loads. Partial vectors are
// narrower plain accesses (AVX2's masked ones are microcoded on AMD cores):
// the pad's 1 float between rows, each row's 7 outputs.
// AVX2: memref.alloca() {alignment = 64 : i64} : memref<146xf32>
// AVX2: vector.store %{{.*}} : memref<146xf32>, vector<1xf32>
// AVX2: vector.fma {{.*}} : vector<8xf32>
// AVX2: vector.store %{{.*}} : memref<2x49xf32>, vector<7xf32>
// AVX2-NOT: linalg.depthwise_conv_2d_nchw_chw
memref.global "private" constant @__constant_filters : memref<2x3x3xf32> = dense<1.0>
func.func @narrow_planes(%x: memref<1x2x7x7xf32>, %bias: memref<2x1x1xf32>, %y: memref<1x2x7x7xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %w = memref.get_global @__constant_filters : memref<2x3x3xf32>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x2x9x9xf32>
  linalg.map outs(%padded : memref<1x2x9x9xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 2, 7, 7] [1, 1, 1, 1] : memref<1x2x9x9xf32> to memref<1x2x7x7xf32, strided<[162, 81, 9, 1], offset: 10>>
  memref.copy %x, %interior : memref<1x2x7x7xf32> to memref<1x2x7x7xf32, strided<[162, 81, 9, 1], offset: 10>>
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x2x7x7xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : memref<1x2x9x9xf32>, memref<2x3x3xf32>) outs(%c : memref<1x2x7x7xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : memref<1x2x7x7xf32>, memref<2x1x1xf32>) outs(%y : memref<1x2x7x7xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %lo = arith.maximumf %s, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  }
  return
}

// -----

// Small planes of one phase are laid out one plane ahead (layOutAhead) when
// a task has two planes or more (66 planes over 64 tasks: two tasks of 2),
// alternately into a second buffer (with its own padding) and the first:
// the task's first plane before a loop over pairs of planes, and in each
// pair the next plane before this one's taps; then the plane after next
// into the second buffer, and the next plane's taps from the first.
// CHECK-LABEL: func.func @planes_laid_out_ahead
// CHECK: %[[IN:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]] : memref<1x66x7x7xf32> into memref<66x49xf32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c64{{.*}}) step
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<84xf32>
// CHECK: vector.maskedstore %[[BUF]][%c81{{.*}}], %{{.*}}
// CHECK: %[[BUF2:.*]] = memref.alloca() {alignment = 64 : i64} : memref<84xf32>
// CHECK: vector.maskedstore %[[BUF2]][%c81{{.*}}], %{{.*}}
// CHECK: %[[FIRST:.*]] = arith.divui
// CHECK: scf.if
// CHECK: vector.maskedload %[[IN]][%[[FIRST]], %{{.*}}]
// CHECK: vector.store %{{.*}}, %[[BUF2]][
// CHECK: scf.for %[[PAIR:.*]] =
// CHECK: %[[TWICE:.*]] = arith.muli %[[PAIR]], %c2
// CHECK: %[[PLANE:.*]] = arith.addi %[[FIRST]], %[[TWICE]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[PLANE]], %c1
// CHECK: scf.if
// CHECK: vector.maskedload %[[IN]][%[[NEXT]], %{{.*}}]
// CHECK: vector.store %{{.*}}, %[[BUF]][
// CHECK: vector.load %[[BUF2]][%c0{{.*}}]
// CHECK: vector.fma
// CHECK: vector.maskedstore %{{.*}}[%[[PLANE]], %c0{{.*}}]
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[BUF2]][
// CHECK: scf.if
// CHECK: vector.load %[[BUF]][%c0{{.*}}]
// CHECK: vector.maskedstore %{{.*}}[%[[NEXT]], %c0{{.*}}]
// With 8 lanes (rows of whole vectors, pitch 16), two buffers too.
// AVX2-LABEL: func.func @planes_laid_out_ahead
// AVX2-COUNT-2: memref.alloca() {alignment = 64 : i64} : memref<146xf32>
// AVX2-NOT: memref.alloca
memref.global "private" constant @__constant_filters_66 : memref<66x3x3xf32> = dense<1.0>
func.func @planes_laid_out_ahead(%x: memref<1x66x7x7xf32>, %y: memref<1x66x7x7xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @__constant_filters_66 : memref<66x3x3xf32>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x66x9x9xf32>
  linalg.map outs(%padded : memref<1x66x9x9xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 66, 7, 7] [1, 1, 1, 1] : memref<1x66x9x9xf32> to memref<1x66x7x7xf32, strided<[5346, 81, 9, 1], offset: 10>>
  memref.copy %x, %interior : memref<1x66x7x7xf32> to memref<1x66x7x7xf32, strided<[5346, 81, 9, 1], offset: 10>>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x66x7x7xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : memref<1x66x9x9xf32>, memref<66x3x3xf32>) outs(%y : memref<1x66x7x7xf32>)
  return
}
// -----

// Stride 2 without padding, 2 images of 3 channels (6 planes, channel =
// plane mod 3): each input row (39 of its 40 columns read) is deinterleaved
// into the two column phases by even/odd shuffles (one full chunk of 32,
// then 7 columns),
// rows going to the row phase plane (row mod 2). Without an epilogue, the
// output is stored as is.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %[[PLANE:.*]] =
// CHECK: arith.remui %{{.*}}, %c2
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK: arith.remui %[[PLANE]], %c3
// CHECK: vector.fma
// CHECK: vector.maskedstore %{{.*}}[%[[PLANE]],
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// With 8 lanes, a full chunk of 16 columns is read as four quarters, paired
// (0, 2) and (1, 3) so that in-lane shuffles (vshufps, no cross-lane
// vpermpd) give the even and the odd columns in order; the last 7 columns
// are one vector shuffled with zeros.
// AVX2-LABEL: func.func @strided
// AVX2: scf.for
// AVX2: %[[Q0:.*]] = vector.load %{{.*}}[%{{.*}}, %[[AT:.*]]] : memref<6x1600xf32>, vector<4xf32>
// AVX2: %[[AT4:.*]] = arith.addi %[[AT]], %c4
// AVX2-NEXT: %[[Q1:.*]] = vector.load %{{.*}}[%{{.*}}, %[[AT4]]] : memref<6x1600xf32>, vector<4xf32>
// AVX2: %[[AT8:.*]] = arith.addi %[[AT]], %c8
// AVX2-NEXT: %[[Q2:.*]] = vector.load %{{.*}}[%{{.*}}, %[[AT8]]] : memref<6x1600xf32>, vector<4xf32>
// AVX2: %[[AT12:.*]] = arith.addi %[[AT]], %c12
// AVX2-NEXT: %[[Q3:.*]] = vector.load %{{.*}}[%{{.*}}, %[[AT12]]] : memref<6x1600xf32>, vector<4xf32>
// AVX2-NEXT: %[[LOW:.*]] = vector.shuffle %[[Q0]], %[[Q2]] [0, 1, 2, 3, 4, 5, 6, 7]
// AVX2-NEXT: %[[HIGH:.*]] = vector.shuffle %[[Q1]], %[[Q3]] [0, 1, 2, 3, 4, 5, 6, 7]
// AVX2: vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 8, 10, 4, 6, 12, 14]
// AVX2: vector.shuffle %[[LOW]], %[[HIGH]] [1, 3, 9, 11, 5, 7, 13, 15]
// AVX2: vector.load %{{.*}} : memref<6x1600xf32>, vector<7xf32>
// AVX2: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// AVX2: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15]
func.func @strided(%x: memref<2x3x40x40xf32>, %w: memref<3x3x3xf32>, %y: memref<2x3x19x19xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x3x19x19xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x3x40x40xf32>, memref<3x3x3xf32>) outs(%y : memref<2x3x19x19xf32>)
  return
}

// -----

// An output not zero-filled right before (accumulating into it) and a
// stride of 3 along the row are left to the generic loop lowering.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.depthwise_conv_2d_nchw_chw
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @left_alone(%x: memref<1x2x9x9xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x7x7xf32>, %z: memref<1x2x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x2x9x9xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x7x7xf32>)
  linalg.fill ins(%zero : f32) outs(%z : memref<1x2x3x3xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>} ins(%x, %w : memref<1x2x9x9xf32>, memref<2x3x3xf32>) outs(%z : memref<1x2x3x3xf32>)
  return
}

// -----

// Max pooling 3x3 / 2 with pad 1 (ResNet's): the padded copy (filled with
// -inf) goes, the buffer's padding is -inf, and the taps combine with
// maximumf (signed zeros unordered) starting from the first (no multiply,
// no filters).
// CHECK-LABEL: func.func @max_pool
// CHECK-DAG: %[[LOWEST:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: %[[BUF:.*]] = memref.alloca()
// CHECK: vector.maskedstore %[[BUF]][%{{.*}}], %{{.*}}, %[[LOWEST]]
// CHECK: vector.shuffle
// CHECK: %[[T0:.*]] = vector.load %[[BUF]]
// CHECK-NEXT: %[[T1:.*]] = vector.load %[[BUF]]
// CHECK-NEXT: arith.maximumf %[[T0]], %[[T1]] fastmath<nsz>
// CHECK-NOT: vector.fma
// CHECK-NOT: linalg.pooling_nchw_max
func.func @max_pool(%x: memref<1x4x20x20xf32>, %y: memref<1x4x10x10xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x4x21x21xf32>
  linalg.map outs(%padded : memref<1x4x21x21xf32>)
    (%init: f32) {
      linalg.yield %lowest : f32
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 4, 20, 20] [1, 1, 1, 1] : memref<1x4x21x21xf32> to memref<1x4x20x20xf32, strided<[1764, 441, 21, 1], offset: 22>>
  memref.copy %x, %interior : memref<1x4x20x20xf32> to memref<1x4x20x20xf32, strided<[1764, 441, 21, 1], offset: 22>>
  %window = memref.alloc() : memref<3x3xf32>
  linalg.fill ins(%lowest : f32) outs(%y : memref<1x4x10x10xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%padded, %window : memref<1x4x21x21xf32>, memref<3x3xf32>) outs(%y : memref<1x4x10x10xf32>)
  return
}

// -----

// Average pooling: a sum pool, then the division by each output's window
// count (one table over the output plane, [1, 1, OH, OW]: the same columns
// for every plane) applied on the register before the store. The 4x4 plane
// has no padding and a pitch of 4: one full vector, stored as is.
// CHECK-LABEL: func.func @average_pool
// CHECK-DAG: %[[COUNTS:.*]] = memref.collapse_shape %{{.*}} into memref<16xf32>
// CHECK: scf.parallel
// CHECK: arith.addf
// CHECK: %[[N:.*]] = vector.load %[[COUNTS]]
// CHECK: arith.divf %{{.*}}, %[[N]]
// CHECK: vector.store
// CHECK-NOT: linalg.pooling_nchw_sum
// CHECK-NOT: linalg.generic
memref.global "private" constant @__constant_counts : memref<1x1x4x4xf32> = dense<4.0>
func.func @average_pool(%x: memref<1x3x8x8xf32>, %y: memref<1x3x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %counts = memref.get_global @__constant_counts : memref<1x1x4x4xf32>
  %window = memref.alloc() : memref<2x2xf32>
  %sum = memref.alloc() {alignment = 64 : i64} : memref<1x3x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<1x3x4x4xf32>)
  linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %window : memref<1x3x8x8xf32>, memref<2x2xf32>) outs(%sum : memref<1x3x4x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, 0, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sum, %counts : memref<1x3x4x4xf32>, memref<1x1x4x4xf32>) outs(%y : memref<1x3x4x4xf32>) {
  ^bb0(%s: f32, %n: f32, %o: f32):
    %q = arith.divf %s, %n : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// 56 x 56 output planes, stride 1, take row-aligned vectors: a pitch of 64
// (4 vectors a row, 1/8 more lanes at most than the 3.6 of vectors spanning
// rows of 58), 8 output rows per group (7 groups). The planes are split into
// 4 bands of rows: each task lays out and computes one band of its planes,
// with the band's bounds static (one case of an index switch per band):
// bands of groups [0, 1), [1, 3), [3, 5), [5, 7). Band 0 lays out input rows
// 0-9 and computes output rows 0-7: a loop over the 3 full columns of
// vectors, where the 8 rows' 72 taps are 30 loads (each window row loaded
// once for the 3 output rows it serves: 9 for the first row, 3 new for each
// next) feeding the 8 accumulators, then 8 stores; then the last 8 outputs
// of each row, stored masked. Band 1 lays out
// input rows 8-25 for groups 1-2; band 3 input rows 40-57 (the last 2 with
// masked stores). The 4 input rows past a band are filled with zeros (4
// vectors each). 2 planes: 8 tasks.
// CHECK-LABEL: func.func @banded
// CHECK: scf.parallel (%[[TASK:.*]]) = (%c0{{.*}}) to (%c8{{.*}}) step
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<3714xf32>
// CHECK: %[[BAND:.*]] = arith.divui %[[TASK]], %c2
// CHECK: scf.index_switch %[[BAND]]
// CHECK: case 0 {
// CHECK-COUNT-4: scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c10{{.*}} step
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c3{{.*}} step
// CHECK-COUNT-30: vector.load %[[BUF]]
// CHECK-NOT: vector.load %[[BUF]]
// CHECK-COUNT-8: vector.store %{{.*}} : memref<2x3136xf32>, vector<16xf32>
// CHECK-NEXT: }
// CHECK: vector.load %[[BUF]][%c48]
// CHECK-COUNT-8: vector.maskedstore %{{.*}} : memref<2x3136xf32>
// CHECK: case 1 {
// CHECK: scf.for %{{.*}} = %c8{{.*}} to %c26{{.*}} step
// CHECK: scf.for %{{.*}} = %c1{{.*}} to %c3{{.*}} step
// CHECK: case 3 {
// CHECK: scf.for %{{.*}} = %c40{{.*}} to %c56{{.*}} step
// CHECK: scf.for %{{.*}} = %c56{{.*}} to %c58{{.*}} step
// CHECK: scf.for %{{.*}} = %c5{{.*}} to %c7{{.*}} step
// CHECK: default {
// AVX2-LABEL: func.func @banded
// With 8 lanes, 16 registers: 4 rows per group (4 accumulators, the 9
// broadcast filter taps), 7 full columns of 8 lanes; 18 loads per column.
// AVX2: memref.alloca() {alignment = 64 : i64} : memref<3714xf32>
// AVX2: case 0 {
// AVX2: scf.for %{{.*}} = %c0{{.*}} to %c7{{.*}} step
// AVX2-COUNT-18: vector.load %{{.*}} : memref<3714xf32>, vector<8xf32>
// AVX2-NOT: vector.load %{{.*}} : memref<3714xf32>
// AVX2-COUNT-4: vector.store %{{.*}} : memref<2x3136xf32>, vector<8xf32>
// AVX2-NEXT: }
func.func @banded(%x: memref<1x2x58x58xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x56x56xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x2x56x56xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x2x58x58xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x56x56xf32>)
  return
}

// -----

// Stride 2 over 28 output columns: the phase planes' pitch of 29 becomes 32
// (rows of whole vectors), 7 output rows per group (4 groups). A column's 7
// rows read row phase 0's rows 0-7 and row phase 1's rows 0-6, each at 3
// offsets (column phases 0 and 1, and column phase 0 one further): 45 loads
// for 63 taps. One full column of vectors, then one of 12 lanes, stored
// masked.
// CHECK-LABEL: func.func @strided_rows
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<3712xf32>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step
// CHECK-COUNT-45: vector.load %[[BUF]]
// CHECK-NOT: vector.load %[[BUF]]
// CHECK-COUNT-7: vector.store %{{.*}} : memref<2x784xf32>, vector<16xf32>
// CHECK-COUNT-45: vector.load %[[BUF]]
// CHECK-NOT: vector.load %[[BUF]]
// CHECK-COUNT-7: vector.maskedstore %{{.*}} : memref<2x784xf32>
// AVX2-LABEL: func.func @strided_rows
func.func @strided_rows(%x: memref<1x2x58x58xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x28x28xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x2x28x28xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x2x58x58xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x28x28xf32>)
  return
}

// -----

// Two images: no bands, even for 56 output rows (each task takes whole
// planes; one case of code).
// CHECK-LABEL: func.func @images_not_banded
// CHECK: scf.parallel
// CHECK-NOT: scf.index_switch
// CHECK: return
// AVX2-LABEL: func.func @images_not_banded
// AVX2-NOT: scf.index_switch
func.func @images_not_banded(%x: memref<2x2x58x58xf32>, %w: memref<2x3x3xf32>, %y: memref<2x2x56x56xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x2x56x56xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<2x2x58x58xf32>, memref<2x3x3xf32>) outs(%y : memref<2x2x56x56xf32>)
  return
}

// -----

// An input of 4.8 MB (2 x 48 planes of 112 x 112), larger than the 2 MiB
// from which it is likely read from memory: every load of the layout first
// prefetches the input 2048 floats (8 KiB) further on, into the planes the
// task lays out next, clamped to the input's last float.
// CHECK-LABEL: func.func @large_input_prefetched
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : memref<2x48x112x112xf32> into memref<1204224xf32>
// CHECK: scf.parallel
// CHECK: %[[AHEAD:.*]] = arith.addi %{{.*}}, %c2048
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[AHEAD]], %c1204223
// CHECK: memref.prefetch %[[FLAT]][%[[CLAMPED]]], read, locality<3>, data
// CHECK: vector.load
// CHECK: vector.shuffle
// AVX2-LABEL: func.func @large_input_prefetched
// AVX2: memref.prefetch
// With prefetch-min-bytes=0 (Intel's cores) or above its 4.8 MB, none.
// BANDED-INPUT-LABEL: func.func @large_input_prefetched
// BANDED-INPUT: memref.prefetch {{.*}} : memref<1204224xf32>
// NONE-LABEL: func.func @large_input_prefetched
// NONE-NOT: memref.prefetch
// NONE: vector.shuffle
// NONE-NOT: memref.prefetch
func.func @large_input_prefetched(%x: memref<2x48x112x112xf32>, %w: memref<48x3x3xf32>, %y: memref<2x48x55x55xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x48x55x55xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<2x48x112x112xf32>, memref<48x3x3xf32>) outs(%y : memref<2x48x55x55xf32>)
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#per_channel = affine_map<(n, c, h, w) -> (c, 0, 0)>

// A 1x1 convolution (4 -> 8 channels at 56 x 56, bias and ReLU on its
// tile) feeding a banded 3x3 depthwise convolution. kiln-lower-matmul's
// items sweep one row tile (all 8 channels) along 16 panels of 32 pixels
// (a group of 512 columns: 7 groups) and are tagged with that
// (kiln.column_groups = [units per group, columns per group, columns,
// rows]). kiln-lower-window-ops then runs the matmul band by band ahead of
// the depthwise layer's 4 bands (output rows 0-7, 8-23, 24-39, 40-55, which
// read input rows up to 8, 24, 40, 55): group 0 (pixels 0-511), band 0,
// groups 1-2, band 1, groups 3-4, band 2, groups 5-6, band 3. A copy of the
// matmul's loop covers its groups unit-major: item = (first + iv mod
// groups) * units + iv / groups.
// CHECK-LABEL: func.func @expansion_then_depthwise
// AVX2-LABEL: func.func @expansion_then_depthwise
// NONE-LABEL: func.func @expansion_then_depthwise
// PRODUCER-LABEL: func.func @expansion_then_depthwise
// PRODUCER: scf.parallel
// PRODUCER: {kiln.column_groups = array<i64: 1, 512, 3136, 8>, kiln.work = 100352 : i64}
// PRODUCER: linalg.depthwise_conv_2d_nchw_chw
// INTERLEAVE-LABEL: func.func @expansion_then_depthwise
// INTERLEAVE: scf.parallel (%[[IV0:.*]]) = (%{{.*}}) to (%c1{{.*}}) step
// INTERLEAVE: %[[UNIT0:.*]] = arith.divui %[[IV0]], %c1
// INTERLEAVE: %[[REM0:.*]] = arith.remui %[[IV0]], %c1
// INTERLEAVE: vector.fma
// INTERLEAVE: } {kiln.work = 14336 : i64}
// INTERLEAVE: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8{{.*}}) step
// INTERLEAVE: memref.alloca
// INTERLEAVE: } {kiln.work = 32256 : i64}
// INTERLEAVE: scf.parallel (%[[IV1:.*]]) = (%{{.*}}) to (%c2{{.*}}) step
// INTERLEAVE: %[[UNIT1:.*]] = arith.divui %[[IV1]], %c2
// INTERLEAVE: %[[REM1:.*]] = arith.remui %[[IV1]], %c2
// INTERLEAVE: %[[GROUP1:.*]] = arith.addi %[[REM1]], %c1
// INTERLEAVE: %[[SCALED1:.*]] = arith.muli %[[GROUP1]], %c1
// INTERLEAVE: arith.addi %[[SCALED1]], %[[UNIT1]]
// INTERLEAVE: } {kiln.work = 28672 : i64}
// INTERLEAVE: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8{{.*}}) step
// INTERLEAVE: } {kiln.work = 64512 : i64}
// INTERLEAVE: scf.parallel (%[[IV2:.*]]) = (%{{.*}}) to (%c2{{.*}}) step
// INTERLEAVE: arith.addi %{{.*}}, %c3
// INTERLEAVE: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8{{.*}}) step
// INTERLEAVE: scf.parallel (%[[IV3:.*]]) = (%{{.*}}) to (%c2{{.*}}) step
// INTERLEAVE: arith.addi %{{.*}}, %c5
// INTERLEAVE: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8{{.*}}) step
// INTERLEAVE-NOT: scf.parallel
// INTERLEAVE-NOT: linalg.depthwise_conv_2d_nchw_chw
// INTERLEAVE: return
// Each band's input was just written by the matmul's groups (still in the
// caches): it is not prefetched as it is laid out, however large (here
// above the RUN line's 1 KiB, which @large_input_prefetched takes; the
// matmul's own prefetches of its B stay).
// BANDED-INPUT-LABEL: func.func @expansion_then_depthwise
// BANDED-INPUT-NOT: memref.prefetch {{.*}} : memref<25088xf32>
// BANDED-INPUT: memref.prefetch {{.*}} : memref<4x3136xf32>
// BANDED-INPUT-NOT: memref.prefetch {{.*}} : memref<25088xf32>
// BANDED-INPUT: return
memref.global "private" constant @__constant_expand_w : memref<8x4xf32> = dense<0.5>
func.func @expansion_then_depthwise(%x: memref<1x4x56x56xf32>, %bias: memref<8x1x1xf32>, %w: memref<8x3x3xf32>, %y: memref<1x8x56x56xf32>) {
  %zero = arith.constant 0.0 : f32
  %filters = memref.get_global @__constant_expand_w : memref<8x4xf32>
  %pixels = memref.collapse_shape %x [[0], [1], [2, 3]] : memref<1x4x56x56xf32> into memref<1x4x3136xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x8x3136xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8x3136xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%filters, %pixels : memref<8x4xf32>, memref<1x4x3136xf32>) outs(%c : memref<1x8x3136xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %planes = memref.expand_shape %c [[0], [1], [2, 3]] output_shape [1, 8, 56, 56] : memref<1x8x3136xf32> into memref<1x8x56x56xf32>
  %relu = memref.alloc() {alignment = 64 : i64} : memref<1x8x56x56xf32>
  linalg.generic {indexing_maps = [#id, #per_channel, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%planes, %bias : memref<1x8x56x56xf32>, memref<8x1x1xf32>) outs(%relu : memref<1x8x56x56xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %t = arith.addf %v, %b : f32
    %neg = arith.cmpf olt, %t, %zero : f32
    %r = arith.select %neg, %zero, %t : f32
    linalg.yield %r : f32
  }
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x8x58x58xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x8x58x58xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 8, 56, 56] [1, 1, 1, 1] : memref<1x8x58x58xf32> to memref<1x8x56x56xf32, strided<[26912, 3364, 58, 1], offset: 59>>
  memref.copy %relu, %interior : memref<1x8x56x56xf32> to memref<1x8x56x56xf32, strided<[26912, 3364, 58, 1], offset: 59>>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x8x56x56xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : memref<1x8x58x58xf32>, memref<8x3x3xf32>) outs(%y : memref<1x8x56x56xf32>)
  return
}

// -----

// A 5x5 window: AVX2's 16 registers cannot keep its 25 broadcast filter
// taps, so the FMAs read them from memory and the rows take the registers:
// 8 output rows a group (2 groups), each column of vectors 60 loads (the 12
// window rows the 8 output rows read, 5 vectors each), not 25 for each row
// on its own, then 8 stores. AVX-512's 32 registers keep the 25 taps and 4
// rows' accumulators: 40 loads (8 window rows) for 4 rows.
// AVX2-LABEL: func.func @five_by_five
// AVX2: memref.alloca() {alignment = 64 : i64} : memref<484xf32>
// AVX2-COUNT-60: vector.load %{{.*}} : memref<484xf32>, vector<8xf32>
// AVX2-NOT: vector.load %{{.*}} : memref<484xf32>
// AVX2-COUNT-8: vector.store %{{.*}} : memref<2x256xf32>, vector<8xf32>
// CHECK-LABEL: func.func @five_by_five
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<644xf32>
// CHECK-COUNT-40: vector.load %{{.*}} : memref<644xf32>, vector<16xf32>
// CHECK-NOT: vector.load %{{.*}} : memref<644xf32>
// CHECK-COUNT-4: vector.store %{{.*}} : memref<2x256xf32>, vector<16xf32>
func.func @five_by_five(%x: memref<1x2x20x20xf32>, %w: memref<2x5x5xf32>, %y: memref<1x2x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x2x16x16xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x2x20x20xf32>, memref<2x5x5xf32>) outs(%y : memref<1x2x16x16xf32>)
  return
}
