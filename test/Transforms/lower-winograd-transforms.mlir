// RUN: kiln-opt %s --kiln-lower-winograd-transforms -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-winograd-transforms="lanes=8" -split-input-file | FileCheck %s --check-prefix=AVX2

#tile = affine_map<(a, b, c, n, ty, tx, i, j) -> (n, c, ty * 2 + i, tx * 2 + j)>
#rows = affine_map<(a, b, c, n, ty, tx, i, j) -> (a, i)>
#cols = affine_map<(a, b, c, n, ty, tx, i, j) -> (b, j)>
#v = affine_map<(a, b, c, n, ty, tx, i, j) -> (a, b, c, n, ty, tx)>

// The input transform, 18 tiles per row: one loop over (channel, image,
// tile row); 16 tiles at a time, each input row loaded as two pairs of
// vectors (from column 2 tx and 2 tx + 2) split into even and odd columns;
// B^T applied with adds and subtractions only; the last 2 tiles read
// masked (the padded row ends 38 floats in) and stored masked. The zero
// fill goes: every value is written.
// CHECK-LABEL: func.func @input_transform
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel (%[[Q:.*]]) = (%c0{{.*}}) to (%c64{{.*}}) step (%c1{{.*}})
// CHECK: scf.for %[[TX:.*]] = %c0{{.*}} to %c16{{.*}} step %c16
// CHECK: %[[LOW:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x16x10x38xf32>, vector<16xf32>
// CHECK: %[[HIGH:.*]] = vector.load %arg0
// CHECK: vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.shuffle %[[LOW]], %[[HIGH]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK-NOT: arith.mulf
// CHECK: arith.subf
// CHECK: vector.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TX]]] : memref<4x4x16x1x4x18xf32>, vector<16xf32>
// The last 2 tiles: row columns 32.. (6 left), 34.. (4 left), 48.. and 50..
// (none: zeros).
// CHECK: %[[SIX:.*]] = vector.constant_mask [6] : vector<16xi1>
// CHECK: vector.maskedload %arg0[{{.*}}], %[[SIX]]
// CHECK: %[[TWO:.*]] = vector.constant_mask [2] : vector<16xi1>
// CHECK: vector.maskedstore %arg1[{{.*}}], %[[TWO]]
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @input_transform
// AVX2: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c8
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// With 8 lanes the partial vectors are narrower plain accesses (AVX2's
// masked ones are microcoded on AMD cores): 6 and 4 columns loaded, the 2
// transformed tiles stored as 2 lanes.
// AVX2: vector.load %arg0[{{.*}}] : memref<1x16x10x38xf32>, vector<6xf32>
// AVX2: vector.insert_strided_slice %{{.*}} : vector<6xf32> into vector<8xf32>
// AVX2: vector.load %arg0[{{.*}}] : memref<1x16x10x38xf32>, vector<4xf32>
// AVX2: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [2], strides = [1]} : vector<8xf32> to vector<2xf32>
// AVX2: vector.store %{{.*}}, %arg1[{{.*}}] : memref<4x4x16x1x4x18xf32>, vector<2xf32>
memref.global "private" constant @__constant_bt : memref<4x4xf32> = dense<[[1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, -1.0, 1.0, 0.0], [0.0, 1.0, 0.0, -1.0]]>
func.func @input_transform(%x: memref<1x16x10x38xf32>, %v: memref<4x4x16x1x4x18xf32>) {
  %zero = arith.constant 0.0 : f32
  %bt = memref.get_global @__constant_bt : memref<4x4xf32>
  linalg.fill ins(%zero : f32) outs(%v : memref<4x4x16x1x4x18xf32>)
  linalg.generic {indexing_maps = [#tile, #rows, #cols, #v],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %bt, %bt : memref<1x16x10x38xf32>, memref<4x4xf32>, memref<4x4xf32>) outs(%v : memref<4x4x16x1x4x18xf32>) attrs = {kiln.winograd = "input"} {
  ^bb0(%in: f32, %r: f32, %c: f32, %acc: f32):
    %w = arith.mulf %r, %c : f32
    %s = math.fma %in, %w, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#m = affine_map<(n, o, ty, i, tx, j, a, b) -> (a, b, o, n, ty, tx)>
#rows = affine_map<(n, o, ty, i, tx, j, a, b) -> (i, a)>
#cols = affine_map<(n, o, ty, i, tx, j, a, b) -> (j, b)>
#y = affine_map<(n, o, ty, i, tx, j, a, b) -> (n, o, ty, i, tx, j)>
#id = affine_map<(n, o, h, w) -> (n, o, h, w)>
#per_channel = affine_map<(n, o, h, w) -> (o, 0, 0)>

// The output transform, then a bias and ReLU: 16 tiles' products loaded,
// combined along the columns and the rows with A^T's adds, each output
// row's two columns interleaved into 2 vectors (tile tx's outputs are
// columns 2 tx and 2 tx + 1), the bias and ReLU applied on them, stored
// into the epilogue's output viewed as [image and channel, plane] (the bias
// is one value per row); the last 2 tiles are 4 columns, stored masked. The transform and the epilogue ops are gone.
// CHECK-LABEL: func.func @output_transform
// CHECK: scf.parallel
// CHECK: vector.load %arg0[{{.*}}] : memref<4x4x8x1x4x18xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<8x288xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31]
// CHECK: vector.constant_mask [4] : vector<16xi1>
// CHECK: vector.maskedstore %{{.*}} : memref<8x288xf32>, vector<16xi1>, vector<16xf32>
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @output_transform
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 1, 9, 2, 10, 3, 11]
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [4, 12, 5, 13, 6, 14, 7, 15]
memref.global "private" constant @__constant_at : memref<2x4xf32> = dense<[[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, -1.0, -1.0]]>
func.func @output_transform(%m: memref<4x4x8x1x4x18xf32>, %bias: memref<8x1x1xf32>, %out: memref<1x8x8x36xf32>) {
  %zero = arith.constant 0.0 : f32
  %at = memref.get_global @__constant_at : memref<2x4xf32>
  %y = memref.alloc() : memref<1x8x4x2x18x2xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x8x4x2x18x2xf32>)
  linalg.generic {indexing_maps = [#m, #rows, #cols, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%m, %at, %at : memref<4x4x8x1x4x18xf32>, memref<2x4xf32>, memref<2x4xf32>) outs(%y : memref<1x8x4x2x18x2xf32>) attrs = {kiln.winograd = "output"} {
  ^bb0(%in: f32, %r: f32, %c: f32, %acc: f32):
    %w = arith.mulf %r, %c : f32
    %s = math.fma %in, %w, %acc : f32
    linalg.yield %s : f32
  }
  %image = memref.collapse_shape %y [[0], [1], [2, 3], [4, 5]] : memref<1x8x4x2x18x2xf32> into memref<1x8x8x36xf32>
  linalg.generic {indexing_maps = [#id, #per_channel, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%image, %bias : memref<1x8x8x36xf32>, memref<8x1x1xf32>) outs(%out : memref<1x8x8x36xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}
