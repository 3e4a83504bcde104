// RUN: kiln-opt %s --kiln-vectorize-row-copies --canonicalize -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-vectorize-row-copies="lanes=8" --canonicalize -split-input-file | FileCheck %s --check-prefix=AVX2

// im2col of a 3x3 convolution at 14x14 (input padded to 16x16): loops (c,
// kh, kw, oh, ow), each row of 14 output pixels read from input row oh + kh
// at column kw. The unit batch loop is dropped; the rows are a parallel loop
// over (c, kh, kw) and, in order, over oh: each row one masked load of 14
// lanes (2 ymm vectors with 8 lanes: one whole, one of 6 lanes) stored
// whole, its last lanes spilling into the next row, which is written after
// it. The last row, whose spill would reach the next (c, kh, kw) (another
// thread's), keeps a masked store.
#input = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#output = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, kh, kw, oh, ow)>
// CHECK-LABEL: func.func @im2col
// CHECK-SAME: (%[[IN:.*]]: memref<1x4x16x16xf32>, %[[OUT:.*]]: memref<1x4x3x3x14x14xf32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[C:.*]], %[[KH:.*]], %[[KW:.*]]) = (%c0, %c0, %c0) to (%c4, %c3, %c3)
// CHECK: scf.for %[[OH:.*]] = %c0 to %c13 step %c1
// CHECK: %[[ROW:.*]] = arith.addi %[[KH]], %[[OH]] : index
// CHECK: %[[MASK:.*]] = vector.constant_mask [14] : vector<16xi1>
// CHECK: %[[V:.*]] = vector.maskedload %[[IN]][%c0, %[[C]], %[[ROW]], %[[KW]]], %[[MASK]]
// CHECK: vector.store %[[V]], %[[OUT]][%c0, %[[C]], %[[KH]], %[[KW]], %[[OH]], %c0]
// CHECK: }
// CHECK: %[[LAST:.*]] = arith.addi %[[KH]], %c13 : index
// CHECK: %[[T:.*]] = vector.maskedload %[[IN]][%c0, %[[C]], %[[LAST]], %[[KW]]]
// CHECK: vector.maskedstore %[[OUT]][%c0, %[[C]], %[[KH]], %[[KW]], %c13, %c0], %{{.*}}, %[[T]]
// CHECK: } {kiln.work = 7056 : i64}
// AVX2-LABEL: func.func @im2col
// AVX2: scf.parallel
// AVX2: scf.for %[[OH:.*]] = %c0 to %c13 step %c1
// AVX2: %[[V:.*]] = vector.load %{{.*}} : memref<1x4x16x16xf32>, vector<8xf32>
// AVX2: vector.store %[[V]], %{{.*}}[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %[[OH]], %c0] : memref<1x4x3x3x14x14xf32>, vector<8xf32>
// AVX2: %[[MASK:.*]] = vector.constant_mask [6] : vector<8xi1>
// AVX2: %[[T:.*]] = vector.maskedload %{{.*}}, %[[MASK]]
// AVX2: vector.store %[[T]], %{{.*}}[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %[[OH]], %c8] : memref<1x4x3x3x14x14xf32>, vector<8xf32>
// AVX2: }
// AVX2: vector.maskedstore %{{.*}}[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %c13, %c8], %{{.*}}, %{{.*}}
func.func @im2col(%in: memref<1x4x16x16xf32>, %out: memref<1x4x3x3x14x14xf32>) {
  linalg.generic {indexing_maps = [#input, #output],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%in : memref<1x4x16x16xf32>) outs(%out : memref<1x4x3x3x14x14xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Rows of 3 (a 3-wide output's im2col) spill over more than the next row:
// with 16 lanes, rows 0 and 1 of 7 store whole vectors (row 1 reaches
// element 18 of the 21), rows 2 to 6 keep masked stores.
// CHECK-LABEL: func.func @short_rows
// CHECK: scf.parallel (%[[C:.*]]) = (%c0) to (%c2)
// CHECK: scf.for %[[R:.*]] = %c0 to %c2 step %c1
// CHECK: vector.store %{{.*}}, %arg1[%[[C]], %[[R]], %c0]
// CHECK: }
// CHECK-COUNT-5: vector.maskedstore
// CHECK-NOT: vector.store
// CHECK: } {kiln.work = 42 : i64}
func.func @short_rows(%in: memref<2x7x5xf32>, %out: memref<2x7x3xf32>) {
  %view = memref.subview %in[0, 0, 1] [2, 7, 3] [1, 1, 1]
      : memref<2x7x5xf32> to memref<2x7x3xf32, strided<[35, 5, 1], offset: 1>>
  linalg.copy ins(%view : memref<2x7x3xf32, strided<[35, 5, 1], offset: 1>>)
              outs(%out : memref<2x7x3xf32>)
  return
}

// -----

// Two rows of 7 are 14 floats, less than one vector of 16: a whole vector
// stored at the first row would reach the next outer iteration's rows
// (another thread's), so every row keeps a masked store, all rows in
// parallel.
// CHECK-LABEL: func.func @rows_shorter_than_a_vector
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c2)
// CHECK-NOT: vector.store
// CHECK: vector.maskedstore
// CHECK-NOT: vector.store
// CHECK: return
func.func @rows_shorter_than_a_vector(%in: memref<4x2x9xf32>, %out: memref<4x2x7xf32>) {
  %view = memref.subview %in[0, 0, 1] [4, 2, 7] [1, 1, 1]
      : memref<4x2x9xf32> to memref<4x2x7xf32, strided<[18, 9, 1], offset: 1>>
  linalg.copy ins(%view : memref<4x2x7xf32, strided<[18, 9, 1], offset: 1>>)
              outs(%out : memref<4x2x7xf32>)
  return
}

// -----

// A pad's interior: linalg.copy into a strided subview (rows of 56 with a
// pitch of 58). Rows over 4 whole vectors loop over them, then the masked
// rest (56 = 3 x 16 + 8), masked in every row: a spill would write the
// padding between the rows.
// CHECK-LABEL: func.func @copy_into_subview
// CHECK: scf.parallel (%[[C:.*]], %[[H:.*]]) = (%c0, %c0) to (%c8, %c56)
// CHECK: vector.load %arg0[%c0, %[[C]], %[[H]], %c0]
// CHECK: vector.store
// CHECK: vector.load %arg0[%c0, %[[C]], %[[H]], %c16]
// CHECK: vector.load %arg0[%c0, %[[C]], %[[H]], %c32]
// CHECK: %[[MASK:.*]] = vector.constant_mask [8] : vector<16xi1>
// CHECK: vector.maskedload %arg0[%c0, %[[C]], %[[H]], %c48], %[[MASK]]
// CHECK: vector.maskedstore %{{.*}}[%c0, %[[C]], %[[H]], %c48], %[[MASK]]
// CHECK: } {kiln.work = 25088 : i64}
func.func @copy_into_subview(%in: memref<1x8x56x56xf32>, %padded: memref<1x8x58x58xf32>) {
  %view = memref.subview %padded[0, 0, 1, 1] [1, 8, 56, 56] [1, 1, 1, 1]
      : memref<1x8x58x58xf32> to memref<1x8x56x56xf32, strided<[26912, 3364, 58, 1], offset: 59>>
  linalg.copy ins(%in : memref<1x8x56x56xf32>)
              outs(%view : memref<1x8x56x56xf32, strided<[26912, 3364, 58, 1], offset: 59>>)
  return
}

// -----

// Long rows loop over their whole vectors (100 = 6 x 16 + 4).
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.parallel (%[[R:.*]]) = (%c0) to (%c3)
// CHECK: scf.for %[[J:.*]] = %c0 to %c96 step %c16
// CHECK: %[[V:.*]] = vector.load %arg0[%[[R]], %[[J]]]
// CHECK: vector.store %[[V]], %arg1[%[[R]], %[[J]]]
// CHECK: vector.maskedload %arg0[%[[R]], %c96]
func.func @long_rows(%in: memref<3x100xf32>, %out: memref<3x100xf32>) {
  linalg.copy ins(%in : memref<3x100xf32>) outs(%out : memref<3x100xf32>)
  return
}

// -----

// One phase of a stride-2 split (a strided convolution's input layout):
// the copy reads a stride-2 subview, seen through to the buffer it slices,
// so each row reads columns 2j + 1. A vector of 16 is two loads (the second
// of 15 lanes: the row's last element read is 2 * 15 + 1 past the first)
// whose even lanes one shuffle keeps; the 4-element rest reads 7 elements.
// CHECK-LABEL: func.func @stride_two
// CHECK: scf.parallel (%[[R:.*]]) = (%c0) to (%c8)
// CHECK: %[[LOW:.*]] = vector.load %arg0[%[[R]], %c1] : memref<8x41xf32>, vector<16xf32>
// CHECK: %[[M15:.*]] = vector.constant_mask [15]
// CHECK: %[[HIGH:.*]] = vector.maskedload %arg0[%[[R]], %c17], %[[M15]]
// CHECK: %[[EVEN:.*]] = vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.store %[[EVEN]], %arg1[%[[R]], %c0]
// CHECK: %[[M7:.*]] = vector.constant_mask [7]
// CHECK: %[[REST:.*]] = vector.maskedload %arg0[%[[R]], %c33], %[[M7]]
// CHECK: %[[EVEN2:.*]] = vector.shuffle %[[REST]], %{{.*}} [0, 2, 4
// CHECK: %[[M4:.*]] = vector.constant_mask [4]
// CHECK: vector.maskedstore %arg1[%[[R]], %c16], %[[M4]], %[[EVEN2]]
func.func @stride_two(%in: memref<8x41xf32>, %out: memref<8x20xf32>) {
  %phase = memref.subview %in[0, 1] [8, 20] [1, 2]
      : memref<8x41xf32> to memref<8x20xf32, strided<[41, 2], offset: 1>>
  linalg.copy ins(%phase : memref<8x20xf32, strided<[41, 2], offset: 1>>)
              outs(%out : memref<8x20xf32>)
  return
}

// -----

// Rows that repeat each element twice (nearest-neighbour upsampling by 2,
// as convert-kiln-to-linalg writes a kiln.resize that repeats elements:
// out[i][j] = in[i floordiv 2][j floordiv 2]): a vector of 16 outputs is 8
// elements loaded and spread by one shuffle; the 8-element rest reads 4.
// On AVX2's 8 lanes each vector is a plain load of 4 elements.
// CHECK-LABEL: func.func @repeat_two
// CHECK: scf.parallel (%[[R:.*]]) = (%c0) to (%c8)
// CHECK: %[[M8:.*]] = vector.constant_mask [8] : vector<16xi1>
// CHECK: %[[IN:.*]] = vector.maskedload %arg0[%{{.*}}, %c0], %[[M8]]
// CHECK: %[[SPREAD:.*]] = vector.shuffle %[[IN]], %[[IN]] [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]
// CHECK: vector.store %[[SPREAD]], %arg1[%[[R]], %c0]
// CHECK: vector.maskedload %arg0[%{{.*}}, %c8]
// CHECK: vector.store %{{.*}}, %arg1[%[[R]], %c16]
// CHECK: %[[M4:.*]] = vector.constant_mask [4] : vector<16xi1>
// CHECK: vector.maskedload %arg0[%{{.*}}, %c16], %[[M4]]
// CHECK: vector.maskedstore %arg1[%[[R]], %c32]
// AVX2-LABEL: func.func @repeat_two
// AVX2: scf.for %[[C:.*]] = %c0 to %c40 step %c8
// AVX2: %[[IN:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<4x20xf32>, vector<4xf32>
// AVX2: %[[WIDE:.*]] = vector.insert_strided_slice %[[IN]]
// AVX2: vector.shuffle %[[WIDE]], %[[WIDE]] [0, 0, 1, 1, 2, 2, 3, 3]
#up = affine_map<(i, j) -> (i floordiv 2, j floordiv 2)>
#id = affine_map<(i, j) -> (i, j)>
func.func @repeat_two(%in: memref<4x20xf32>, %out: memref<8x40xf32>) {
  linalg.generic {indexing_maps = [#up, #id], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x20xf32>) outs(%out : memref<8x40xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// Not row copies, left alone: a transpose of 3x3 (too small for a block of
// vectors), a stride-3 read, a copy that computes, an innermost dim of 1, a
// diagonal read (out[i][j] = in[i][i]: one loop read twice, not a
// transpose).
#transpose = affine_map<(i, j) -> (j, i)>
#diagonal = affine_map<(i, j) -> (i, i)>
#strided = affine_map<(i, j) -> (i, j * 3)>
#identity = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @not_row_copies
// CHECK-NOT: vector.
// CHECK-COUNT-3: linalg.generic
// CHECK: linalg.copy
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @not_row_copies(%a: memref<8x8xf32>, %b: memref<8x8xf32>,
                          %c: memref<8x24xf32>, %d: memref<8x1xf32>,
                          %e: memref<8x1xf32>, %f: memref<3x3xf32>,
                          %g: memref<3x3xf32>, %h: memref<24x24xf32>,
                          %k: memref<24x24xf32>) {
  linalg.generic {indexing_maps = [#transpose, #identity],
                  iterator_types = ["parallel", "parallel"]}
      ins(%f : memref<3x3xf32>) outs(%g : memref<3x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#strided, #identity],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x24xf32>) outs(%b : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#identity, #identity],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %z = arith.negf %x : f32
    linalg.yield %z : f32
  }
  linalg.copy ins(%d : memref<8x1xf32>) outs(%e : memref<8x1xf32>)
  linalg.generic {indexing_maps = [#diagonal, #identity],
                  iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<24x24xf32>) outs(%k : memref<24x24xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A transposing copy (attention's K^T: out[h][d][t] = in[t][h][d]): the
// output's rows (d) are the input's innermost dim, its columns (t) a row
// stride apart in the input. Blocks of 16 x 16: 16 rows of the input (one
// per t) loaded whole, transposed by 4 stages of 16 shuffles, stored as 16
// rows of the output. 40 d's: two full blocks of rows (a parallel loop over
// h and the blocks) and a tail of 8 (another, its loads masked to 8 lanes);
// 36 t's: two full blocks of columns swept by a loop, then a block of 4
// (4 loads, its stores masked to 4 lanes).
#kt_in = affine_map<(h, d, t) -> (t, h, d)>
#kt_out = affine_map<(h, d, t) -> (h, d, t)>
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[IN:.*]]: memref<36x2x40xf32>, %[[OUT:.*]]: memref<2x40x36xf32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[H:.*]], %[[BLOCK:.*]]) = (%c0, %c0) to (%c2, %c2)
// CHECK: %[[D0:.*]] = arith.muli %[[BLOCK]], %c16
// CHECK: scf.for %[[T:.*]] = %c0 to %c32 step %c16
// CHECK-COUNT-16: vector.load %[[IN]][%{{.*}}, %[[H]], %[[D0]]] : memref<36x2x40xf32>, vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK-COUNT-16: vector.store %{{.*}}, %[[OUT]][%[[H]], %{{.*}}, %[[T]]] : memref<2x40x36xf32>, vector<16xf32>
// CHECK: }
// CHECK-COUNT-4: vector.load %[[IN]][%{{.*}}, %[[H]], %[[D0]]]
// CHECK: vector.maskedstore %[[OUT]][%[[H]], %{{.*}}, %c32], %{{.*}} : memref<2x40x36xf32>, vector<16xi1>, vector<16xf32>
// CHECK: } {kiln.work = 2304 : i64}
// CHECK: scf.parallel (%[[H2:.*]]) = (%c0) to (%c2)
// CHECK: vector.maskedload %[[IN]][%{{.*}}, %[[H2]], %c32]
// CHECK: } {kiln.work = 576 : i64}
// AVX2-LABEL: func.func @transpose
// AVX2: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c2, %c5)
// AVX2-COUNT-8: vector.load %{{.*}} : memref<36x2x40xf32>, vector<8xf32>
// AVX2-COUNT-24: vector.shuffle
func.func @transpose(%in: memref<36x2x40xf32>, %out: memref<2x40x36xf32>) {
  linalg.generic {indexing_maps = [#kt_in, #kt_out],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%in : memref<36x2x40xf32>) outs(%out : memref<2x40x36xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
