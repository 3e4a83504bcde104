//===- Pipeline.h - kiln's compilation pipeline -----------------*- C++ -*-===//
//
// The stages `kiln-compile` runs, shared with tests and future drivers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINE_H
#define KILN_COMPILER_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace kiln {

/// Graph-level cleanup after import: shape inference, constant folding of
/// shape subgraphs, shape inference again, canonicalization and CSE.
void buildGraphPipeline(mlir::OpPassManager &pm);

/// Fails with an error naming the first kiln value whose shape is not
/// fully static; code generation needs every shape.
mlir::LogicalResult verifyStaticShapes(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_H
