//===- Passes.td - kiln code generation passes -------------*- tablegen -*-===//
//
// Passes that run after lowering out of the kiln dialect: on linalg, on
// bufferized memrefs, on math.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PASSES_TD
#define KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanMemory : Pass<"kiln-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Give every intermediate buffer a static offset in one arena";
  let description = [{
    Runs on bufferized code. In every public function with a body, each
    `memref.alloc` of a static shape becomes a `memref.view` into a new
    trailing argument, the arena (`memref<Nxi8>`). Offsets come from
    liveness over the function's top-level ops (a buffer lives from its
    allocation to the last top-level op that uses it or any view of it) and
    first-fit interval packing, largest buffers first, each aligned to 64
    bytes. The pass records `kiln.arena_bytes` (the arena size) and
    `kiln.intermediate_bytes` (the sum of all planned buffers, what one
    allocation per buffer would need) on the function. Deallocations of
    planned buffers are removed; nothing is allocated at run time.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer in the arena">,
  ];
}

def ApproximateMath : Pass<"kiln-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace transcendental math ops by polynomial approximations";
  let description = [{
    exp, expm1, log, log1p, log2, tanh, erf, sin, cos, atan, atan2, asin,
    acos, cbrt and rsqrt become arith-only polynomial or rational
    approximations (MLIR's math polynomial approximation patterns), so they
    vectorize instead of calling libm once per element. f32 only; f16/bf16
    are computed in f32. Max relative error about 1e-6 (see docs/backend.md).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def FuseElementwise : Pass<"kiln-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse the linalg ops inside each kernel region into shared loops";
  let description = [{
    Runs after `convert-kiln-to-linalg`. Within each `kiln.kernel` (never
    across two), elementwise `linalg.generic` producers are fused into their
    consumers, so an elementwise chain is one loop nest and a reduction reads
    its producers' inputs directly; unused operands and results are dropped.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def InlineKernels : Pass<"kiln-inline-kernels", "::mlir::ModuleOp"> {
  let summary = "Splice each kernel region's body into its parent block";
  let description = [{
    Replaces every `kiln.kernel` by its body (block arguments by the kernel's
    inputs, results by the yielded values), keeping each kernel's ops
    contiguous and in order. With `profile`, the body is bracketed by calls
    to `kiln_profile_begin(i)` and `kiln_profile_end(i)` (i32 kernel index in
    program order; declared as private functions), which the backend
    defines as per-kernel timers.
  }];
  let options = [
    Option<"profile", "profile", "bool", /*default=*/"false",
           "Bracket each kernel with profiling calls">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // KILN_TRANSFORMS_PASSES_TD
