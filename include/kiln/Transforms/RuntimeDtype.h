//===- RuntimeDtype.h - MLIR element types as kiln_dtype ------*- C++ -*-===//
//
// The runtime ABI (kiln/runtime.h) names element types with kiln_dtype:
// the model signature and the CUDA GEMM descriptors both translate MLIR
// types through this one table.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_RUNTIMEDTYPE_H
#define KILN_TRANSFORMS_RUNTIMEDTYPE_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace kiln {

/// The kiln_dtype of `type`, or nothing for a type the runtime has no name
/// for.
std::optional<int32_t> runtimeDtype(mlir::Type type);

/// Whether `dtype` is a floating-point kiln_dtype cuBLAS computes with
/// (f32, f16, bf16).
bool isGemmDtype(int32_t dtype);

} // namespace kiln

#endif // KILN_TRANSFORMS_RUNTIMEDTYPE_H
