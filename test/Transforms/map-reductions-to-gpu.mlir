// RUN: kiln-opt %s --kiln-map-reductions-to-gpu -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-map-reductions-to-gpu=block-size=64 -split-input-file | FileCheck %s --check-prefix=B64
// RUN: not kiln-opt %s --kiln-map-reductions-to-gpu=block-size=48 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --kiln-map-reductions-to-gpu=elements-per-thread=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: block-size must be a power of two from 32 to 1024 and elements-per-thread at least 1

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>

// A max over rows of 1000: 64 threads per row (16 elements each, the
// default), 4 rows per block of 256 (24 blocks), threadIdx.y picking the
// block's row. Each thread folds every 64th element from its own index
// with the generic's body; the warp combines its partials with 5 xor
// shuffles, lane 0 of each of the row's 2 warps writes one to shared
// memory (the row's slot), and after a barrier the row's thread 0
// combines them into the output's initial value.
// CHECK-LABEL: func.func @row_max
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C24]], {{.*}}) threads(%[[T:.*]], %[[Y:.*]], %{{.*}}) in (%{{.*}} = %[[C64]], %{{.*}} = %[[C4]], {{.*}}) module(@kiln_kernels) function(@reduce_0) workgroup(%[[SHARED:.*]] : memref<4x2xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %{{.*}}
// CHECK: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[Y]]
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PARTIAL:.*]] = scf.for %[[J:.*]] = %[[T]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[NEG_INF]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[J]]]
// CHECK: arith.maxnumf %[[ACC]], %[[X]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: %[[WARP:.*]] = arith.divui %[[T]]
// CHECK: %[[LANE:.*]] = arith.remui %[[T]]
// CHECK: arith.cmpi eq, %[[LANE]]
// CHECK: memref.store %{{.*}}, %[[SHARED]][%[[Y]], %[[WARP]]]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: arith.cmpi eq, %[[T]]
// CHECK: memref.load %[[SHARED]][%[[Y]], %{{.*}}]
// CHECK: memref.load %[[SHARED]][%[[Y]], %{{.*}}]
// CHECK: arith.maxnumf
// CHECK: memref.load %arg1[%[[ROW]], %{{.*}}]
// CHECK: arith.maxnumf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
// With blocks of 64 threads, a row per block.
// B64-LABEL: func.func @row_max
// B64: workgroup(%{{.*}} : memref<1x2xf32, #gpu.address_space<workgroup>>)
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

// A sum of exp(x - max) over rows of 100: a warp per row (8 rows a
// block), the body's producer ops folded in. The shuffles leave the row's
// total in every lane: no shared memory, no barrier.
// CHECK-LABEL: func.func @sum_exp
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c32{{(_[0-9]+)?}}, %{{.*}} = %c8{{(_[0-9]+)?}}, {{.*}}) module(@kiln_kernels) function(@reduce_0) {
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: arith.addf
// CHECK: memref.store
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
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
// divide are stages of one kernel, a warp per row and 8 rows per block.
// The scaled rows, the exponentials and the row's max and sum are the
// kernel's alone: they live in shared memory (a slot per row of the block)
// instead of DRAM, and their allocations go. A barrier goes only where a
// thread reads what another wrote: before the stages that read the row's
// max or sum (written by the row's thread 0), and before the sum's fill
// overwrites the max the exp stage read; none between the scale and the
// max, whose threads read the elements they wrote, and none after the
// shuffles, which leave a row's total in all its lanes.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch {{.*}} threads(%[[T:.*]], %[[Y:.*]], %{{.*}}) in {{.*}} function(@rows_0) workgroup(%[[S:.*]] : memref<8x128xf32, #gpu.address_space<workgroup>>, %[[MAX:.*]] : memref<8x1xf32, #gpu.address_space<workgroup>>, %[[E:.*]] : memref<8x128xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[Y]]
// CHECK: scf.for %[[J:.*]] = %[[T]]
// CHECK: memref.load %arg0[%[[ROW]], %[[J]]]
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[S]][%[[Y]], %[[J]]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[MAX]][%[[Y]], %{{.*}}]
// CHECK-NOT: gpu.barrier
// CHECK: scf.for
// CHECK: arith.maxnumf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[MAX]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[E]][%[[Y]], %{{.*}}]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %arg1[%[[ROW]], %{{.*}}]
// CHECK: gpu.terminator
// CHECK-NOT: memref.dealloc
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

// An intermediate the function reads after the kernel stays in DRAM; the
// row sums, only freed after it, go to shared memory.
// CHECK-LABEL: func.func @escaping_intermediate
// CHECK: %[[E:.*]] = memref.alloc() : memref<16x128xf32>
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<8x1xf32, #gpu.address_space<workgroup>>)
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[E]]
// CHECK: gpu.terminator
// CHECK: memref.copy %[[E]]
// CHECK-NEXT: memref.dealloc %[[E]]
// CHECK-NEXT: return
func.func @escaping_intermediate(%x: memref<16x128xf32>, %y: memref<16x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = memref.alloc() : memref<16x128xf32>
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x128xf32>) outs(%e : memref<16x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  }
  %sum = memref.alloc() : memref<16x1xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<16x1xf32>)
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%e : memref<16x128xf32>) outs(%sum : memref<16x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  memref.copy %e, %y : memref<16x128xf32> to memref<16x128xf32>
  memref.dealloc %sum : memref<16x1xf32>
  memref.dealloc %e : memref<16x128xf32>
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
