//===- ReductionToLinalg.cpp - kiln reductions and softmax to linalg ------===//
//
// A reduction is one linalg.generic with reduction iterators over the
// reduced dims, accumulating into an output filled with the combiner's
// identity (innermost reduced dims collapsed into one row first);
// reduce_mean divides afterwards. Softmax and log-softmax are
// max, exp-sum (and log) written out.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Support/ShapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using detail::combine;
using detail::Combiner;
using detail::identityOf;

/// The number of innermost dims, at least two, that are all reduced (a
/// global pool's H and W), or 0.
int64_t trailingReducedRun(RankedTensorType type, ArrayRef<int64_t> axes) {
  int64_t rank = type.getRank(), run = 0;
  while (run < rank && llvm::is_contained(axes, rank - 1 - run))
    ++run;
  return run >= 2 ? run : 0;
}

/// One generic over `input`'s dims, reducing the (normalized) `axes` into
/// `resultType`.
Value reduceGeneric(OpBuilder &b, Location loc, Value input,
                    ArrayRef<int64_t> axes, bool keepDims,
                    RankedTensorType resultType, Combiner combiner,
                    bool isUnsigned) {
  MLIRContext *context = b.getContext();
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced)
      outExprs.push_back(getAffineDimExpr(d, context));
    else if (keepDims)
      outExprs.push_back(getAffineConstantExpr(0, context));
  }
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, outExprs, context)};
  Type elementType = resultType.getElementType();
  Value identity = detail::scalarConstant(
      b, loc, elementType, identityOf(combiner, elementType, isUnsigned));
  Value init = detail::filledTensor(b, loc, resultType, identity);
  return linalg::GenericOp::create(
             b, loc, resultType, input, init, maps, iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       combine(nested, nestedLoc, combiner,
                                               args[1], args[0], isUnsigned));
             })
      .getResult(0);
}

/// Reduces a row-major `input` whose innermost `run` dims are reduced as
/// rows of their product: the reduction loop is then one contiguous loop,
/// which LLVM vectorizes along the row, instead of nested loops short enough
/// to be unrolled (7 x 7), leaving the outer loop to be vectorized with
/// gathers.
Value reduceTrailingRows(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> axes, int64_t run, bool keepDims,
                         RankedTensorType resultType, Combiner combiner,
                         bool isUnsigned) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t outer = inputType.getRank() - run;
  // [outer dims..., row]: the reduced run as one dim.
  SmallVector<ReassociationIndices> rows;
  for (int64_t d = 0; d < outer; ++d)
    rows.push_back({d});
  rows.push_back(llvm::to_vector(llvm::seq<int64_t>(outer, outer + run)));
  Value collapsed = tensor::CollapseShapeOp::create(b, loc, input, rows);
  SmallVector<int64_t> rowAxes;
  for (int64_t axis : axes)
    if (axis < outer)
      rowAxes.push_back(axis);
  rowAxes.push_back(outer);
  if (!keepDims)
    return reduceGeneric(b, loc, collapsed, rowAxes, /*keepDims=*/false,
                         resultType, combiner, isUnsigned);
  // With keepdims, the row's unit dim becomes the run's unit dims.
  SmallVector<int64_t> rowResultShape(resultType.getShape().take_front(outer));
  rowResultShape.push_back(1);
  Value reduced =
      reduceGeneric(b, loc, collapsed, rowAxes, /*keepDims=*/true,
                    resultType.clone(rowResultShape), combiner, isUnsigned);
  return tensor::ExpandShapeOp::create(b, loc, resultType, reduced, rows);
}

/// Reduces `input` over the (normalized) `axes` into `resultType`.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             bool keepDims, RankedTensorType resultType, Combiner combiner,
             bool isUnsigned) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (inputType.hasStaticShape())
    if (int64_t run = trailingReducedRun(inputType, axes))
      return reduceTrailingRows(b, loc, input, axes, run, keepDims, resultType,
                                combiner, isUnsigned);
  return reduceGeneric(b, loc, input, axes, keepDims, resultType, combiner,
                       isUnsigned);
}

template <typename OpTy, Combiner combiner>
struct ReduceToGeneric : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(
        this->getTypeConverter()->convertType(op.getType()));
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    llvm::Expected<shape::Shape> axes =
        shape::normalizeAxes(op.getAxes(), inputType.getRank());
    if (!axes) {
      llvm::consumeError(axes.takeError());
      return rewriter.notifyMatchFailure(op, "invalid axes");
    }
    // bool (i1) orders false < true: compare it unsigned.
    bool isUnsigned = inputType.getElementType().isUnsignedInteger() ||
                      inputType.getElementType().isInteger(1);
    Location loc = op.getLoc();
    Value result = reduce(rewriter, loc, adaptor.getInput(), *axes,
                          op.getKeepdims(), resultType, combiner, isUnsigned);
    if constexpr (std::is_same_v<OpTy, ReduceMeanOp>) {
      int64_t count = 1;
      for (int64_t axis : *axes)
        count *= inputType.getDimSize(axis);
      Type elementType = resultType.getElementType();
      result = detail::elementwiseGeneric(
          rewriter, loc, result, resultType,
          [&](OpBuilder &b, Location nestedLoc, ValueRange args) -> Value {
            Value n = detail::scalarConstant(b, nestedLoc, elementType, count);
            if (isa<FloatType>(elementType))
              return arith::DivFOp::create(b, nestedLoc, args[0], n);
            return isUnsigned ? arith::DivUIOp::create(b, nestedLoc, args[0], n)
                                    .getResult()
                              : arith::DivSIOp::create(b, nestedLoc, args[0], n)
                                    .getResult();
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Softmax and log-softmax along one axis, max-shifted for stability:
/// softmax = exp(x - max) / sum(exp(x - max)),
/// log_softmax = (x - max) - log(sum(exp(x - max))).
template <typename OpTy, bool isLog>
struct SoftmaxToGenerics : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t axis = detail::normalizedAxis(op.getAxis(), type.getRank());
    SmallVector<int64_t> keptShape(type.getShape());
    keptShape[axis] = 1;
    auto keptType = type.clone(keptShape);
    // A NaN in a row makes x - max NaN there, and the sum and every output
    // of the row NaN, whichever max it picks: NaN-ignoring max is exact.
    Value max = reduce(rewriter, loc, x, {axis}, true, keptType,
                       Combiner::MaxNum, false);
    Value shifted = detail::elementwiseGeneric(
        rewriter, loc, ValueRange{x, max}, type,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::SubFOp::create(b, l, a[0], a[1]);
        });
    Value exps = detail::elementwiseGeneric(
        rewriter, loc, shifted, type,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return detail::nonPositiveExp(b, l, a[0]);
        });
    Value sum = reduce(rewriter, loc, exps, {axis}, true, keptType,
                       Combiner::Sum, false);
    // One log, or one reciprocal, per row; then a subtraction or a
    // multiplication per element (a division per element costs several
    // times a multiplication).
    Value perRow = detail::elementwiseGeneric(
        rewriter, loc, sum, keptType,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (isLog)
            return math::LogOp::create(b, l, a[0]);
          Value one = detail::scalarConstant(b, l, a[0].getType(), 1.0);
          return arith::DivFOp::create(b, l, one, a[0]);
        });
    Value result = detail::elementwiseGeneric(
        rewriter, loc, ValueRange{isLog ? shifted : exps, perRow}, type,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (isLog)
            return arith::SubFOp::create(b, l, a[0], a[1]);
          return arith::MulFOp::create(b, l, a[0], a[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// argmax/argmin: a reduction generic with two outputs, the best value and
/// its index (i64), comparing strictly (first index wins) or not
/// (select_last_index). NaN counts as the extreme, as numpy does.
template <typename OpTy, bool isMax>
struct ArgReduceToGeneric : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto resultType = cast<RankedTensorType>(
        this->getTypeConverter()->convertType(op.getType()));
    int64_t rank = inputType.getRank();
    int64_t axis = detail::normalizedAxis(op.getAxis(), rank);
    Type elementType = inputType.getElementType();
    bool isUnsigned = cast<RankedTensorType>(op.getInput().getType())
                          .getElementType()
                          .isUnsignedInteger();
    auto valueType = resultType.clone(elementType);
    Value identity =
        detail::scalarConstant(rewriter, loc, elementType,
                               identityOf(isMax ? Combiner::Max : Combiner::Min,
                                          elementType, isUnsigned));
    Value values = detail::filledTensor(rewriter, loc, valueType, identity);
    Value indices = detail::filledTensor(
        rewriter, loc, resultType,
        detail::scalarConstant(rewriter, loc, rewriter.getI64Type(), 0));
    MLIRContext *context = this->getContext();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < rank; ++d) {
      iterators.push_back(d == axis ? utils::IteratorType::reduction
                                    : utils::IteratorType::parallel);
      if (d != axis)
        outExprs.push_back(getAffineDimExpr(d, context));
      else if (op.getKeepdims())
        outExprs.push_back(getAffineConstantExpr(0, context));
    }
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, context);
    bool lastIndex = op.getSelectLastIndex();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valueType, resultType}, adaptor.getInput(),
        ValueRange{values, indices},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank), outMap,
                            outMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIndex = args[2];
          Value better;
          if (isa<FloatType>(elementType)) {
            using P = arith::CmpFPredicate;
            // Unordered predicates make a NaN candidate win.
            P strict = isMax ? P::UGT : P::ULT, loose = isMax ? P::UGE : P::ULE;
            better = arith::CmpFOp::create(b, l, lastIndex ? loose : strict, x,
                                           best);
          } else {
            using P = arith::CmpIPredicate;
            P strict = isMax ? (isUnsigned ? P::ugt : P::sgt)
                             : (isUnsigned ? P::ult : P::slt);
            P loose = isMax ? (isUnsigned ? P::uge : P::sge)
                            : (isUnsigned ? P::ule : P::sle);
            better = arith::CmpIOp::create(b, l, lastIndex ? loose : strict, x,
                                           best);
          }
          Value index = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          // The first element always replaces the identity.
          Value first =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, index,
                                    arith::ConstantIntOp::create(b, l, 0, 64));
          better = arith::OrIOp::create(b, l, better, first);
          linalg::YieldOp::create(
              b, l,
              ValueRange{
                  arith::SelectOp::create(b, l, better, x, best),
                  arith::SelectOp::create(b, l, better, index, bestIndex)});
        });
    rewriter.replaceOp(op, generic.getResult(1));
    return success();
  }
};

} // namespace

void populateReductionToLinalgPatterns(TypeConverter &converter,
                                       RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ReduceToGeneric<ReduceSumOp, Combiner::Sum>,
               ReduceToGeneric<ReduceMeanOp, Combiner::Sum>,
               ReduceToGeneric<ReduceProdOp, Combiner::Prod>,
               ReduceToGeneric<ReduceMaxOp, Combiner::Max>,
               ReduceToGeneric<ReduceMinOp, Combiner::Min>,
               SoftmaxToGenerics<SoftmaxOp, false>,
               SoftmaxToGenerics<LogSoftmaxOp, true>,
               ArgReduceToGeneric<ArgMaxOp, true>,
               ArgReduceToGeneric<ArgMinOp, false>>(converter, context);
}

} // namespace kiln
