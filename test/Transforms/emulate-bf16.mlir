// RUN: kiln-opt %s --kiln-emulate-bf16 -split-input-file | FileCheck %s

// bf16 arithmetic runs in f32: both operands widened (a shift of their
// bits), the f32 op, and one rounding back to bf16 as integer ops (round to
// nearest even: add 0x7fff plus the kept part's lowest bit; a NaN becomes
// the quiet NaN 0x7fc0).
// CHECK-LABEL: func.func @add
// CHECK-DAG: %[[NAN:.*]] = arith.constant 32704 : i16
// CHECK-DAG: %[[HALF:.*]] = arith.constant 32767 : i32
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i32
// CHECK: %[[BBITS:.*]] = arith.bitcast %arg1 : bf16 to i16
// CHECK: %[[BWIDE:.*]] = arith.extui %[[BBITS]] : i16 to i32
// CHECK: %[[BSHIFT:.*]] = arith.shli %[[BWIDE]], %[[C16]] : i32
// CHECK: %[[B:.*]] = arith.bitcast %[[BSHIFT]] : i32 to f32
// CHECK: %[[A:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: %[[ISNAN:.*]] = arith.cmpf une, %[[SUM]], %[[SUM]] : f32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK: arith.addi %{{.*}}, %[[HALF]] : i32
// CHECK: %[[ROUNDED:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: %[[OUT:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[ROUNDED]] : i16
// CHECK: %[[RESULT:.*]] = arith.bitcast %[[OUT]] : i16 to bf16
// CHECK: return %[[RESULT]] : bf16
// CHECK-NOT: arith.truncf
func.func @add(%a: bf16, %b: bf16) -> bf16 {
  %0 = arith.addf %a, %b : bf16
  return %0 : bf16
}

// -----

// Vector conversions stay vector integer ops, which LLVM emits as ymm/zmm
// shifts and adds instead of a __truncsfbf2 call per lane.
// CHECK-LABEL: func.func @truncate_vector
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %arg0 : vector<8xf32> to vector<8xi32>
// CHECK: arith.trunci %{{.*}} : vector<8xi32> to vector<8xi16>
// CHECK: arith.bitcast %{{.*}} : vector<8xi16> to vector<8xbf16>
func.func @truncate_vector(%a: vector<8xf32>) -> vector<8xbf16> {
  %0 = arith.truncf %a : vector<8xf32> to vector<8xbf16>
  return %0 : vector<8xbf16>
}

// -----

// CHECK-LABEL: func.func @extend_vector
// CHECK-NOT: arith.extf
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : vector<8xbf16> to vector<8xi16>
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : vector<8xi16> to vector<8xi32>
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %{{.*}} : vector<8xi32>
// CHECK: arith.bitcast %[[SHIFTED]] : vector<8xi32> to vector<8xf32>
func.func @extend_vector(%a: vector<8xbf16>) -> vector<8xf32> {
  %0 = arith.extf %a : vector<8xbf16> to vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// f32 and f16 arithmetic is left alone.
// CHECK-LABEL: func.func @other_types
// CHECK: arith.addf %arg0, %arg0 : f32
// CHECK: arith.mulf %arg1, %arg1 : f16
// CHECK-NOT: arith.bitcast
func.func @other_types(%a: f32, %h: f16) -> (f32, f16) {
  %0 = arith.addf %a, %a : f32
  %1 = arith.mulf %h, %h : f16
  return %0, %1 : f32, f16
}

// -----

// Math ops run in f32 only from bf16; f64 and f16 math stays as it is
// (ReduceLogSumExp computes in f64).
// CHECK-LABEL: func.func @math_ops
// CHECK: %[[X:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[EXP:.*]] = math.exp %[[X]] : f32
// CHECK: math.log %arg1 : f64
// CHECK: math.sqrt %arg2 : f16
func.func @math_ops(%a: bf16, %d: f64, %h: f16) -> (bf16, f64, f16) {
  %0 = math.exp %a : bf16
  %1 = math.log %d : f64
  %2 = math.sqrt %h : f16
  return %0, %1, %2 : bf16, f64, f16
}
