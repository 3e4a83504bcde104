// RUN: kiln-opt %s --kiln-map-reductions-to-gpu -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-map-reductions-to-gpu=block-size=64 -split-input-file | FileCheck %s --check-prefix=B64

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>

// A max over rows of 1000: one block of 256 threads per row (96 rows),
// each thread folding every 256th element from its own index with the
// generic's body, then a shared-memory tree of 8 steps between barriers,
// and thread 0 combining the total into the output's initial value.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[C96:.*]] = arith.constant 96 : index
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C96]], {{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], {{.*}}) module(@kiln_kernels) function(@reduce_0) workgroup(%[[SHARED:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PARTIAL:.*]] = scf.for %[[J:.*]] = %[[T]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[NEG_INF]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[J]]]
// CHECK: arith.maxnumf %[[ACC]], %[[X]]
// CHECK: memref.store %[[PARTIAL]], %[[SHARED]][%[[T]]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: gpu.barrier
// CHECK: arith.cmpi eq, %[[T]]
// CHECK: memref.load %arg1[%[[ROW]], %{{.*}}]
// CHECK: arith.maxnumf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
// B64-LABEL: func.func @row_max
// B64: workgroup(%{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>)
// B64-COUNT-7: gpu.barrier
func.func @row_max(%in: memref<96x1000xf32>, %out: memref<96x1xf32>) {
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<96x1000xf32>) outs(%out : memref<96x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maxnumf %acc, %x : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0, d1) -> (d0)>

// A sum of exp(x - max) over rows of 100: 128 threads (the next power of
// two), the body's producer ops folded in; a 3-D case delinearizes rows.
// CHECK-LABEL: func.func @sum_exp
// CHECK: workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-COUNT-7: gpu.barrier
func.func @sum_exp(%in: memref<8x100xf32>, %max: memref<8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#row, #vec, #vec], iterator_types = ["parallel", "reduction"]}
      ins(%in, %max : memref<8x100xf32>, memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%x: f32, %m: f32, %acc: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>

// Short rows, and reductions that are not over the last loop, stay.
// CHECK-LABEL: func.func @not_mapped
// CHECK-NOT: gpu.launch
// CHECK-COUNT-2: linalg.generic
func.func @not_mapped(%a: memref<4x4x16xf32>, %b: memref<4x4xf32>, %c: memref<64x4xf32>, %d: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<4x4x16xf32>) outs(%b : memref<4x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%c : memref<64x4xf32>) outs(%d : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}
