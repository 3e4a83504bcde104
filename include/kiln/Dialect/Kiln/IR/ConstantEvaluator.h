//===- ConstantEvaluator.h - evaluate kiln ops on constants -----*- C++ -*-===//
//
// Evaluates kiln ops whose operands are small integer/bool constants, as the
// shape subgraphs of exported models need (Shape -> Gather -> Concat ->
// Reshape, integer arithmetic, Cast). Op folders use it with a fixed size
// limit; `kiln-fold-constants` with a configurable one. Floats are never
// evaluated here: that is the job of the backend, and weights must not be
// expanded at compile time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_CONSTANTEVALUATOR_H
#define KILN_DIALECT_KILN_IR_CONSTANTEVALUATOR_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Operation.h"

namespace kiln {

/// Largest result (in elements) an op folder creates.
constexpr int64_t kDefaultFoldElementLimit = 4096;

/// The constant value of `op`'s single result given its constant operands
/// (null entries are non-constant), or null when `op` cannot be evaluated:
/// an operand is not constant, an element type is not integer/bool, or the
/// result has more than `maxElements` elements.
mlir::Attribute evaluateIntegerOp(mlir::Operation *op,
                                  llvm::ArrayRef<mlir::Attribute> operands,
                                  int64_t maxElements);

} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_CONSTANTEVALUATOR_H
