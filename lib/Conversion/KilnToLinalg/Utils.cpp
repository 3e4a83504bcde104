//===- Utils.cpp - helpers shared by the kiln-to-linalg patterns ----------===//

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::detail {

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value value) {
  return linalg::FillOp::create(b, loc, value, emptyTensor(b, loc, type))
      .getResult(0);
}

AffineMap broadcastMap(MLIRContext *context, ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> loopShape) {
  size_t offset = loopShape.size() - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, dim] : llvm::enumerate(operandShape)) {
    bool broadcast = dim == 1 && loopShape[offset + i] != 1;
    exprs.push_back(broadcast ? getAffineConstantExpr(0, context)
                              : getAffineDimExpr(offset + i, context));
  }
  return AffineMap::get(loopShape.size(), 0, exprs, context);
}

Value elementwiseGeneric(OpBuilder &b, Location loc, ValueRange operands,
                         RankedTensorType resultType, ScalarBody body) {
  MLIRContext *context = b.getContext();
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(broadcastMap(
        context, cast<RankedTensorType>(operand.getType()).getShape(), shape));
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, operands, emptyTensor(b, loc, resultType), maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

} // namespace kiln::detail
