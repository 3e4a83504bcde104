//===- Utils.cpp - helpers shared by the kiln-to-linalg patterns ----------===//

#include "Utils.h"

#include "kiln/Transforms/KernelEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

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

Value fillSlice(OpBuilder &b, Location loc, Value tensor,
                ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                Value value) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> unitSteps(sizes.size(), 1);
  auto boxType = RankedTensorType::get(sizes, type.getElementType());
  Value box = tensor::ExtractSliceOp::create(
      b, loc, boxType, tensor, ValueRange{}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
      b.getDenseI64ArrayAttr(unitSteps));
  Value filled = linalg::FillOp::create(b, loc, value, box).getResult(0);
  return tensor::InsertSliceOp::create(
      b, loc, filled, tensor, ValueRange{}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
      b.getDenseI64ArrayAttr(unitSteps));
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

double identityOf(Combiner combiner, Type type, bool isUnsigned) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  bool isFloat = isa<FloatType>(type);
  unsigned width = isFloat ? 0 : type.getIntOrFloatBitWidth();
  switch (combiner) {
  case Combiner::Sum:
    return 0;
  case Combiner::Prod:
    return 1;
  case Combiner::Max:
  case Combiner::MaxNum:
    if (isFloat)
      return -inf;
    return isUnsigned ? 0 : -std::ldexp(1.0, width - 1);
  case Combiner::Min:
    if (isFloat)
      return inf;
    return isUnsigned ? std::ldexp(1.0, width) - 1
                      : std::ldexp(1.0, width - 1) - 1;
  }
  llvm_unreachable("unknown combiner");
}

Value combine(OpBuilder &b, Location loc, Combiner combiner, Value acc, Value x,
              bool isUnsigned) {
  bool isFloat = isa<FloatType>(x.getType());
  // Reassociation lets a float sum or product be vectorized (partial sums
  // per lane); without it LLVM keeps the ordered, serial chain.
  auto reassoc = arith::FastMathFlagsAttr::get(b.getContext(),
                                               arith::FastMathFlags::reassoc);
  switch (combiner) {
  case Combiner::Sum:
    return isFloat ? arith::AddFOp::create(b, loc, acc, x, reassoc).getResult()
                   : arith::AddIOp::create(b, loc, acc, x).getResult();
  case Combiner::Prod:
    return isFloat ? arith::MulFOp::create(b, loc, acc, x, reassoc).getResult()
                   : arith::MulIOp::create(b, loc, acc, x).getResult();
  case Combiner::MaxNum:
    // Softmax's row max. Whatever a NaN input makes of it, that row's
    // result is NaN throughout (the NaN reaches the sum), so it may assume
    // no NaN: a plain vmaxps per vector, where NaN-aware maxnum costs three
    // instructions and a NaN check that stops LLVM's vectorized reduction.
    // Nor does the sign of a zero maximum matter (exp(x - 0) either way);
    // without nsz LLVM 22 still tests each pair of vectors for NaN and
    // leaves the loop on one (softmax [1536, 128] ~2% slower).
    if (isFloat)
      return arith::MaxNumFOp::create(
          b, loc, acc, x,
          arith::FastMathFlagsAttr::get(b.getContext(),
                                        arith::FastMathFlags::nnan |
                                            arith::FastMathFlags::nsz));
    [[fallthrough]];
  case Combiner::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, x);
    return isUnsigned ? arith::MaxUIOp::create(b, loc, acc, x).getResult()
                      : arith::MaxSIOp::create(b, loc, acc, x).getResult();
  case Combiner::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, x);
    return isUnsigned ? arith::MinUIOp::create(b, loc, acc, x).getResult()
                      : arith::MinSIOp::create(b, loc, acc, x).getResult();
  }
  llvm_unreachable("unknown combiner");
}

void multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  bool isFloat = isa<FloatType>(args[2].getType());
  Value product =
      isFloat ? arith::MulFOp::create(b, loc, args[0], args[1]).getResult()
              : arith::MulIOp::create(b, loc, args[0], args[1]).getResult();
  Value sum = isFloat
                  ? arith::AddFOp::create(b, loc, args[2], product).getResult()
                  : arith::AddIOp::create(b, loc, args[2], product).getResult();
  linalg::YieldOp::create(b, loc, sum);
}

Value nonPositiveExp(OpBuilder &b, Location loc, Value x) {
  auto exp = math::ExpOp::create(b, loc, x);
  exp->setAttr(kNonPositiveOperandAttrName, b.getUnitAttr());
  return exp;
}

} // namespace kiln::detail
