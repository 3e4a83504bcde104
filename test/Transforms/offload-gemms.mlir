// RUN: kiln-opt %s --kiln-offload-gemms -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-offload-gemms=emulate=true -split-input-file | FileCheck %s --check-prefix=EMULATE

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

// A matmul after a zero fill becomes kiln_gemm_0(A, B, C) with beta = 0;
// the bias add and ReLU after it (kiln's x < 0 ? 0 : x) become its cuBLASLt
// epilogue: the call writes the epilogue's output and takes the bias, and
// C, its fill and the epilogue's kernel are gone.
// CHECK-LABEL: module attributes {kiln.gemms = [{accumulate = 0 : i64, batch = 1 : i64, epilogue = 3 : i64, in_dtype = 1 : i64, k = 16 : i64, lda = 16 : i64, ldb = 32 : i64, ldc = 32 : i64, m = 8 : i64, n = 32 : i64
// CHECK-LABEL: func.func @bias_relu
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg
// CHECK: call @kiln_gemm_0(%arg0, %arg1, %arg3, %arg2) : (memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>, memref<32xf32>) -> ()
// CHECK-NOT: linalg
// EMULATE-LABEL: func.func private @kiln_gemm_0
// EMULATE: scf.for
// EMULATE: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// EMULATE: %[[BIAS:.*]] = memref.load %arg3
// EMULATE: %[[BIASED:.*]] = arith.addf %{{.*}}, %[[BIAS]]
// EMULATE: arith.cmpf olt, %[[BIASED]]
// EMULATE: arith.select
func.func @bias_relu(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %bias: memref<32xf32>, %out: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<8x32xf32>, memref<32xf32>) outs(%out : memref<8x32xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    %neg = arith.cmpf olt, %s, %zero : f32
    %r = arith.select %neg, %zero, %s : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<8x32xf32>
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#rowbias = affine_map<(m, n) -> (m)>

// What the epilogue cannot do stays a kernel reading C: a residual add
// (a third input), a bias per row, a product read again later, a GELU.
// CHECK-LABEL: module attributes {kiln.gemms = [{{.*}}epilogue = 0{{.*}}epilogue = 0{{.*}}epilogue = 0{{.*}}epilogue = 0
// CHECK-LABEL: func.func @not_fused
// CHECK: call @kiln_gemm_0({{.*}}) : (memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>) -> ()
// CHECK: linalg.generic
// CHECK: call @kiln_gemm_1({{.*}}) : (memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>) -> ()
// CHECK: linalg.generic
// CHECK: call @kiln_gemm_2({{.*}}) : (memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>) -> ()
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: call @kiln_gemm_3({{.*}}) : (memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>) -> ()
// CHECK: linalg.generic
// CHECK: math.erf
func.func @not_fused(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %bias: memref<32xf32>, %rbias: memref<8xf32>, %res: memref<8x32xf32>, %o1: memref<8x32xf32>, %o2: memref<8x32xf32>, %o3: memref<8x32xf32>, %o4: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c1 = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c1 : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c1 : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#row, #col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c1, %bias, %res : memref<8x32xf32>, memref<32xf32>, memref<8x32xf32>) outs(%o1 : memref<8x32xf32>) {
  ^bb0(%v: f32, %w: f32, %r: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    %t = arith.addf %s, %r : f32
    linalg.yield %t : f32
  }
  %c2 = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c2 : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#row, #rowbias, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %rbias : memref<8x32xf32>, memref<8xf32>) outs(%o2 : memref<8x32xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  }
  %c3 = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c3 : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c3 : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c3, %bias : memref<8x32xf32>, memref<32xf32>) outs(%o3 : memref<8x32xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c3 : memref<8x32xf32>) outs(%o4 : memref<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  %c4 = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c4 : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c4 : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c4, %bias : memref<8x32xf32>, memref<32xf32>) outs(%o4 : memref<8x32xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    %e = math.erf %s : f32
    linalg.yield %e : f32
  }
  return
}
