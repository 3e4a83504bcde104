//===- KilnOps.h - kiln dialect ops -----------------------------*- C++ -*-===//

#ifndef KILN_DIALECT_KILN_IR_KILNOPS_H
#define KILN_DIALECT_KILN_IR_KILNOPS_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/IR/KilnTraits.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Kiln/IR/KilnEnums.h.inc"

namespace kiln::detail {

/// Whether `declared` result types are the same as `inferred` ones or less
/// refined (a `?` where inference knows the size).
bool areRefinableTypes(mlir::TypeRange inferred, mlir::TypeRange declared);

/// Result of numpy broadcasting over `operands`; `elementType` null keeps the
/// first operand's element type.
llvm::LogicalResult inferBroadcastResult(
    std::optional<mlir::Location> loc, llvm::ArrayRef<mlir::Value> operands,
    mlir::Type elementType, llvm::SmallVectorImpl<mlir::Type> &types);

llvm::LogicalResult
inferPoolResult(std::optional<mlir::Location> loc, mlir::Type input,
                llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
                llvm::ArrayRef<int64_t> dilations, llvm::ArrayRef<int64_t> pads,
                bool ceilMode, llvm::SmallVectorImpl<mlir::Type> &types);

/// Reduction result; `elementType` null keeps the input's element type.
llvm::LogicalResult inferReduceResult(std::optional<mlir::Location> loc,
                                      mlir::Type input,
                                      llvm::ArrayRef<int64_t> axes,
                                      bool keepDims, mlir::Type elementType,
                                      llvm::SmallVectorImpl<mlir::Type> &types);

/// The input type, after checking that `axis` is valid for it.
llvm::LogicalResult
inferSameTypeAlongAxis(std::optional<mlir::Location> loc, mlir::Type input,
                       int64_t axis, llvm::SmallVectorImpl<mlir::Type> &types);

/// Reshape/expand take their target either as a `by` operand of static
/// length or as a `to` attribute, never both.
llvm::LogicalResult verifyShapedByOp(mlir::Operation *op,
                                     mlir::Value shapeTensor,
                                     mlir::DenseI64ArrayAttr shape);

/// A reduction over no axes is the identity.
mlir::OpFoldResult foldEmptyReduction(mlir::Operation *op);

/// Rewrites the `axis` / `axes` attribute of an op to its non-negative form
/// (and sorts `axes`), counting the rank of operand 0.
void populateNormalizeAxesPatterns(llvm::StringRef opName,
                                   mlir::RewritePatternSet &patterns,
                                   mlir::MLIRContext *context);
template <typename OpTy>
void populateNormalizeAxesPatterns(mlir::RewritePatternSet &patterns,
                                   mlir::MLIRContext *context) {
  populateNormalizeAxesPatterns(OpTy::getOperationName(), patterns, context);
}

} // namespace kiln::detail

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnOps.h.inc"

#endif // KILN_DIALECT_KILN_IR_KILNOPS_H
