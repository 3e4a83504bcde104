// RUN: kiln-opt %s --kiln-map-reductions-to-gpu -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-map-reductions-to-gpu=block-size=64 -split-input-file | FileCheck %s --check-prefix=B64

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>

// A max over rows of 1000: one block of 256 threads per row (96 rows),
// each thread folding every 256th element from its own index with the
// generic's body; the warp combines its partials with 5 xor shuffles, lane
// 0 of each of the 8 warps writes one to shared memory, and after a
// barrier thread 0 combines them into the output's initial value.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[C96:.*]] = arith.constant 96 : index
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C96]], {{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], {{.*}}) module(@kiln_kernels) function(@reduce_0) workgroup(%[[SHARED:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PARTIAL:.*]] = scf.for %[[J:.*]] = %[[T]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[NEG_INF]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[J]]]
// CHECK: arith.maxnumf %[[ACC]], %[[X]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: %[[LANE:.*]] = arith.remui %[[T]]
// CHECK: arith.cmpi eq, %[[LANE]]
// CHECK: memref.store %{{.*}}, %[[SHARED]]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: arith.cmpi eq, %[[T]]
// CHECK-COUNT-7: arith.maxnumf
// CHECK: memref.load %arg1[%[[ROW]], %{{.*}}]
// CHECK: arith.maxnumf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
// B64-LABEL: func.func @row_max
// B64: workgroup(%{{.*}} : memref<2xf32, #gpu.address_space<workgroup>>)
// B64-COUNT-1: gpu.barrier
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
// two, 4 warps), the body's producer ops folded in.
// CHECK-LABEL: func.func @sum_exp
// CHECK: workgroup(%{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
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

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>

// Softmax over rows of 128 after a scale: the scale, max, exp, sum and
// divide are stages of one kernel (one block of 128 threads per row, 4
// warps). A barrier goes only where a thread reads what another wrote:
// after each reduction's warp partials, before the stages that read the
// row's max or sum (written by thread 0), and before the sum's fill
// overwrites the max the exp stage read; none between the scale and the
// max, whose threads read the elements they wrote. The buffer freed
// between the stages is freed after the kernel.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = memref.alloc() : memref<16x1xf32>
// CHECK: gpu.launch {{.*}} function(@rows_0) workgroup(%[[W0:.*]] : memref<4xf32, #gpu.address_space<workgroup>>, %[[W1:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: memref.store
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[MAX]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.for
// CHECK: arith.maxnumf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[W0]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[MAX]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: math.exp
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: arith.divf
// CHECK: gpu.terminator
// CHECK: memref.dealloc
// CHECK-NOT: linalg
func.func @softmax(%x: memref<16x128xf32>, %y: memref<16x128xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %s = memref.alloc() : memref<16x128xf32>
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x128xf32>) outs(%s : memref<16x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  }
  %max = memref.alloc() : memref<16x1xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<16x1xf32>)
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<16x128xf32>) outs(%max : memref<16x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maxnumf %acc, %a : f32
    linalg.yield %m : f32
  }
  %e = memref.alloc() : memref<16x128xf32>
  linalg.generic {indexing_maps = [#row, #out, #row], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : memref<16x128xf32>, memref<16x1xf32>) outs(%e : memref<16x128xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %x2 = math.exp %d : f32
    linalg.yield %x2 : f32
  }
  memref.dealloc %s : memref<16x128xf32>
  linalg.fill ins(%zero : f32) outs(%max : memref<16x1xf32>)
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%e : memref<16x128xf32>) outs(%max : memref<16x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.addf %acc, %a : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#row, #out, #row], iterator_types = ["parallel", "parallel"]}
      ins(%e, %max : memref<16x128xf32>, memref<16x1xf32>) outs(%y : memref<16x128xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %q = arith.divf %a, %t : f32
    linalg.yield %q : f32
  }
  memref.dealloc %e : memref<16x128xf32>
  memref.dealloc %max : memref<16x1xf32>
  return
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>
#scalar = affine_map<(d0) -> (d0, 0)>

// Stages that would let one block touch another's rows fall back to a
// kernel per reduction: a buffer written by one stage sharing bytes with
// one another reads (an arena reused) ...
// CHECK-LABEL: func.func @shared_bytes
// CHECK: gpu.launch {{.*}} function(@reduce_0)
// CHECK: linalg.generic
// CHECK-NOT: gpu.launch
func.func @shared_bytes(%arena: memref<32768xi8>) {
  %c0 = arith.constant 0 : index
  %c16384 = arith.constant 16384 : index
  %a = memref.view %arena[%c0][] : memref<32768xi8> to memref<64x64xf32>
  %sum = memref.view %arena[%c16384][] : memref<32768xi8> to memref<64x1xf32>
  %reused = memref.view %arena[%c0][] : memref<32768xi8> to memref<64x1xf32>
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x64xf32>) outs(%sum : memref<64x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = ["parallel"]}
      ins(%sum : memref<64x1xf32>) outs(%reused : memref<64x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1, d0)>

// ... or a buffer written by one stage and read by another through a map
// that is not the row's (a transpose).
// CHECK-LABEL: func.func @transposed_read
// CHECK: gpu.launch {{.*}} function(@reduce_0)
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: gpu.launch
func.func @transposed_read(%x: memref<64x64xf32>, %sum: memref<64x1xf32>, %y: memref<64x64xf32>) {
  %t = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%sum : memref<64x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<64x64xf32>) outs(%t : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}
