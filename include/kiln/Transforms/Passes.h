//===- Passes.h - kiln code generation passes -------------------*- C++ -*-===//

#ifndef KILN_TRANSFORMS_PASSES_H
#define KILN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// The one gpu.module the CUDA target's kernels are outlined into
/// (kiln-map-loops-to-gpu, kiln-map-reductions-to-gpu).
constexpr llvm::StringLiteral kGPUKernelModule = "kiln_kernels";
/// The prefix of the runtime GEMM calls kiln-offload-gemms makes:
/// kiln_gemm_I runs descriptor I of the module's kiln.gemms.
constexpr llvm::StringLiteral kGemmCallPrefix = "kiln_gemm_";
/// The suffix of the weights kiln-lower-matmul packs at compile time (the
/// operands its tiles stream): the CPU backend gathers them in one section.
constexpr llvm::StringLiteral kPackedWeightSuffix = "_packed";

#define GEN_PASS_DECL
#include "kiln/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Transforms/Passes.h.inc"

} // namespace kiln

#endif // KILN_TRANSFORMS_PASSES_H
