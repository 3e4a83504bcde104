//===- Utils.h - helpers shared by the kiln-to-linalg patterns --*- C++ -*-===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_UTILS_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_UTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace kiln::detail {

/// Whether a kiln element type is an unsigned integer (`ui8` ...).
inline bool isUnsignedInteger(mlir::Type type) {
  return type.isUnsignedInteger();
}

/// A kiln axis attribute (I64Attr getters return uint64_t; the value may be
/// negative) as an index in [0, rank).
inline int64_t normalizedAxis(uint64_t axis, int64_t rank) {
  int64_t value = static_cast<int64_t>(axis);
  return value < 0 ? value + rank : value;
}

/// `tensor.empty` of `type`.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);

/// A scalar arith constant of `type` (float or signless integer).
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// `tensor.empty` of `type` filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value value);

/// `tensor` with its box at `offsets` of `sizes` (unit strides) filled with
/// `value` in place: an extract_slice, a fill and an insert_slice, which
/// bufferize to a fill of a subview (a new filled tensor inserted instead
/// would be a buffer of its own, filled and then copied).
mlir::Value fillSlice(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value tensor, llvm::ArrayRef<int64_t> offsets,
                      llvm::ArrayRef<int64_t> sizes, mlir::Value value);

/// The indexing map that reads an operand of `operandShape` at each point of
/// an iteration space of `loopRank` dims whose trailing dims the operand's
/// dims align with (numpy broadcasting: size-1 dims read index 0).
mlir::AffineMap broadcastMap(mlir::MLIRContext *context,
                             llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> loopShape);

/// How a reduction or a pooling window combines elements.
/// MaxNum ignores NaN operands (one vmaxps instead of a NaN-propagating
/// sequence); only for reductions whose result propagates NaN anyway, like
/// softmax's max shift.
enum class Combiner { Sum, Prod, Max, Min, MaxNum };

/// The identity element of `combiner` for `type`: 0, 1, -inf/+inf, or the
/// integer type's limits (signed or unsigned).
double identityOf(Combiner combiner, mlir::Type type, bool isUnsigned);

/// acc (+, *, max, min) x, float, signed or unsigned.
mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, Combiner combiner,
                    mlir::Value acc, mlir::Value x, bool isUnsigned);

using ScalarBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// One parallel `linalg.generic` over `resultType` reading `operands` with
/// broadcasting; `body` computes an element from the operands' elements.
mlir::Value elementwiseGeneric(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::ValueRange operands,
                               mlir::RankedTensorType resultType,
                               ScalarBody body);

/// The linalg payload `out + a * b` (float or integer) of matmuls and
/// convolutions; args are (a, b, out).
void multiplyAccumulate(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::ValueRange args);

/// e^x for an `x` known never to be positive (softmax's x - max, GELU's log
/// tail), tagged so that kiln-approximate-math leaves out the overflow check.
mlir::Value nonPositiveExp(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value x);

} // namespace kiln::detail

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_UTILS_H
