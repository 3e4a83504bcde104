// RUN: kiln-opt %s -split-input-file --kiln-approximate-math="ldexp=true" | FileCheck %s --check-prefix=LDEXP
// RUN: kiln-opt %s -split-input-file --kiln-approximate-math | FileCheck %s --check-prefix=BITS

// exp: clamp, n = round(x log2 e), r = x - n ln 2 in two parts, a degree-5
// polynomial (three pairs c_2i + c_2i+1 r, then Horner's rule in r^2: five
// FMAs and r^2), then 2^n: one ldexp, or n added to the polynomial's
// exponent bits (the clamp's top is then ln(2^128), from which the result
// is inf); below -125.5 ln 2 the result is 0 (never subnormal).
// With ldexp, n is rounded to an integer by lrint and converted back (once
// vectorized, ldexp's own conversion of the exponent is the same one).
// LDEXP-LABEL: func.func @exp
// LDEXP-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// LDEXP-DAG: %[[LOW:.*]] = arith.constant -86.9899673 : f32
// LDEXP: arith.cmpf olt, %arg0, %[[LOW]]
// LDEXP: arith.cmpf ogt
// LDEXP: %[[K:.*]] = llvm.intr.lrint(%{{.*}}) : (f32) -> i32
// LDEXP: %[[N:.*]] = arith.sitofp %[[K]] : i32 to f32
// LDEXP: math.fma %[[N]]
// LDEXP-COUNT-6: math.fma
// LDEXP-NOT: math.roundeven
// LDEXP-NOT: arith.fptosi
// LDEXP: %[[SCALED:.*]] = llvm.intr.ldexp(%{{.*}}, %[[K]]) : (f32, i32) -> f32
// LDEXP: %[[SMALL:.*]] = arith.cmpf olt, %arg0, %[[LOW]]
// LDEXP: arith.select %[[SMALL]], %[[ZERO]], %[[SCALED]]
// LDEXP-NOT: math.exp
// BITS-LABEL: func.func @exp
// BITS-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// BITS-DAG: %[[TOP:.*]] = arith.constant 88.7228394 : f32
// BITS-NOT: llvm.intr.lrint
// BITS: arith.cmpf ogt, %{{.*}}, %[[TOP]]
// BITS: math.roundeven
// BITS-COUNT-5: math.fma
// BITS: %[[SQUARE:.*]] = arith.mulf %[[R:.*]], %[[R]]
// BITS: math.fma %{{.*}}, %[[SQUARE]]
// BITS: %[[P:.*]] = math.fma %{{.*}}, %[[SQUARE]]
// BITS: %[[K:.*]] = arith.fptosi
// BITS: %[[PBITS:.*]] = arith.bitcast %[[P]] : f32 to i32
// BITS: %[[SHIFTED:.*]] = arith.shli %[[K]]
// BITS: %[[SUM:.*]] = arith.addi %[[PBITS]], %[[SHIFTED]] : i32
// BITS: %[[SCALED:.*]] = arith.bitcast %[[SUM]] : i32 to f32
// BITS: %[[HUGE:.*]] = arith.cmpf oge, %arg0, %[[TOP]]
// BITS: %[[CAPPED:.*]] = arith.select %[[HUGE]], %[[INF]], %[[SCALED]]
// BITS: %[[SMALL:.*]] = arith.cmpf olt, %arg0
// BITS: arith.select %[[SMALL]], %{{.*}}, %[[CAPPED]]
// BITS-NOT: arith.mulf
// BITS-NOT: llvm.intr.ldexp
// BITS-NOT: math.exp
func.func @exp(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// -----

// An exp whose operand is never positive (softmax's x - max) cannot
// overflow: the clamp keeps its lower bound only, and no select makes inf.
// LDEXP-LABEL: func.func @exp_nonpositive
// LDEXP: arith.cmpf olt
// LDEXP-NOT: arith.cmpf ogt
// LDEXP: llvm.intr.ldexp
// BITS-LABEL: func.func @exp_nonpositive
// BITS-NOT: 0x7F800000
// BITS: arith.cmpf olt
// BITS-NOT: arith.cmpf ogt
// BITS-NOT: arith.cmpf oge
// BITS: arith.addi
// BITS: %[[SMALL:.*]] = arith.cmpf olt, %arg0
// BITS: arith.select %[[SMALL]]
// BITS-NOT: arith.select
func.func @exp_nonpositive(%x: f32) -> f32 {
  %0 = math.exp %x {kiln.nonpositive_operand} : f32
  return %0 : f32
}

// -----

// exp2 on a zmm vector (a matmul epilogue): the reduction is a
// subtraction; 2^n is one vscalefps, which takes the integral n as a float
// (no conversions to an integer and back, no bits); below 2^-125.5 the
// result is 0 (never subnormal).
// LDEXP-LABEL: func.func @exp2_vector
// LDEXP-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// LDEXP-DAG: %[[LOW:.*]] = arith.constant dense<-1.255000e+02> : vector<16xf32>
// LDEXP-DAG: %[[ALL:.*]] = llvm.mlir.constant(-1 : i16) : i16
// LDEXP-DAG: %[[ROUNDING:.*]] = llvm.mlir.constant(4 : i32) : i32
// LDEXP: arith.cmpf olt, %arg0, %[[LOW]]
// LDEXP: %[[N:.*]] = math.roundeven %{{.*}} : vector<16xf32>
// LDEXP: arith.subf %{{.*}}, %[[N]] : vector<16xf32>
// LDEXP-COUNT-5: math.fma
// LDEXP-NOT: arith.fptosi
// LDEXP: %[[SCALED:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[P:.*]], %[[N]], %[[P]], %[[ALL]], %[[ROUNDING]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>, i16, i32) -> vector<16xf32>
// LDEXP: %[[SMALL:.*]] = arith.cmpf olt, %arg0, %[[LOW]]
// LDEXP-NEXT: arith.select %[[SMALL]], %[[ZERO]], %[[SCALED]] : vector<16xi1>, vector<16xf32>
// LDEXP-NOT: arith.shrsi
// LDEXP-NOT: math.exp2
// BITS-LABEL: func.func @exp2_vector
// BITS: arith.addi %{{.*}} : vector<16xi32>
// BITS-NOT: llvm.call_intrinsic
// BITS-NOT: math.exp2
func.func @exp2_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp2 %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// Other vector widths call LLVM's vector ldexp by name (MLIR's
// llvm.intr.ldexp takes no vector exponent): an integer exponent.
// LDEXP-LABEL: func.func @exp2_ymm_vector
// LDEXP: %[[K:.*]] = arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// LDEXP: llvm.call_intrinsic "llvm.ldexp"(%{{.*}}, %[[K]]) : (vector<8xf32>, vector<8xi32>) -> vector<8xf32>
// LDEXP-NOT: scalef
// BITS-LABEL: func.func @exp2_ymm_vector
// BITS-NOT: llvm.call_intrinsic
func.func @exp2_ymm_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp2 %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// f16 is computed in f32; f64 is left to libm.
// LDEXP-LABEL: func.func @other_types
// LDEXP: arith.extf %{{.*}} : f16 to f32
// LDEXP: llvm.intr.ldexp
// LDEXP: arith.truncf %{{.*}} : f32 to f16
// LDEXP: math.exp %{{.*}} : f64
// BITS-LABEL: func.func @other_types
// BITS: arith.addi
// BITS: math.exp %{{.*}} : f64
func.func @other_types(%h: f16, %d: f64) -> (f16, f64) {
  %0 = math.exp %h : f16
  %1 = math.exp %d : f64
  return %0, %1 : f16, f64
}
