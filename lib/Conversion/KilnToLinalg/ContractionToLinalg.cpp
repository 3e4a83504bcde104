//===- ContractionToLinalg.cpp - kiln.matmul to linalg --------------------===//
//
// A batched matmul with broadcast batch dims is one linalg.generic over
// (batch..., m, n, k) accumulating into a zero-filled output; tiling,
// packing and vectorization (issue 7) start from this form.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace kiln {
namespace {

/// Map of an operand [..., X, Y] whose last two dims are loop dims `x`, `y`
/// and whose batch dims broadcast against the result's `batch` dims.
AffineMap operandMap(MLIRContext *context, ArrayRef<int64_t> operandShape,
                     ArrayRef<int64_t> batchShape, unsigned x, unsigned y,
                     unsigned loopRank) {
  AffineMap batch =
      detail::broadcastMap(context, operandShape.drop_back(2), batchShape);
  SmallVector<AffineExpr> exprs;
  for (AffineExpr e : batch.getResults())
    exprs.push_back(e);
  exprs.push_back(getAffineDimExpr(x, context));
  exprs.push_back(getAffineDimExpr(y, context));
  return AffineMap::get(loopRank, 0, exprs, context);
}

struct MatmulToGeneric : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    MLIRContext *context = getContext();
    Location loc = op.getLoc();
    int64_t batchRank = resultType.getRank() - 2;
    unsigned m = batchRank, n = batchRank + 1, k = batchRank + 2;
    unsigned loopRank = batchRank + 3;
    ArrayRef<int64_t> batchShape = resultType.getShape().drop_back(2);
    auto lhsType = cast<RankedTensorType>(adaptor.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(adaptor.getRhs().getType());
    SmallVector<AffineMap> maps = {
        operandMap(context, lhsType.getShape(), batchShape, m, k, loopRank),
        operandMap(context, rhsType.getShape(), batchShape, k, n, loopRank)};
    SmallVector<AffineExpr> outExprs;
    for (unsigned d = 0; d < static_cast<unsigned>(batchRank) + 2; ++d)
      outExprs.push_back(getAffineDimExpr(d, context));
    maps.push_back(AffineMap::get(loopRank, 0, outExprs, context));
    SmallVector<utils::IteratorType> iterators(loopRank,
                                               utils::IteratorType::parallel);
    iterators[k] = utils::IteratorType::reduction;

    Type elementType = resultType.getElementType();
    Value zero = detail::scalarConstant(rewriter, loc, elementType, 0);
    Value init = detail::filledTensor(rewriter, loc, resultType, zero);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType,
        ValueRange{adaptor.getLhs(), adaptor.getRhs()}, init, maps, iterators,
        detail::multiplyAccumulate);
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void populateContractionToLinalgPatterns(TypeConverter &converter,
                                         RewritePatternSet &patterns) {
  patterns.add<MatmulToGeneric>(converter, patterns.getContext());
}

} // namespace kiln
