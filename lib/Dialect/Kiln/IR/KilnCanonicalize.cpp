//===- KilnCanonicalize.cpp - kiln canonicalization patterns --------------===//
//
// Patterns that move ops toward the one canonical form passes expect:
// non-negative sorted axes, and target shapes as attributes rather than
// operands once those operands are constant.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Support/ShapeUtils.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;

namespace {

/// Rewrites a negative `axis` or unsorted/negative `axes` attribute of any op
/// to the normalized form, counting the rank of operand 0.
struct NormalizeAxes : public RewritePattern {
  NormalizeAxes(StringRef opName, MLIRContext *context)
      : RewritePattern(opName, /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumOperands() == 0)
      return failure();
    auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (!type)
      return failure();
    int64_t rank = type.getRank();
    if (auto axis = op->getAttrOfType<IntegerAttr>("axis")) {
      llvm::Expected<int64_t> normalized =
          shape::normalizeAxis(axis.getInt(), rank);
      if (!normalized) {
        llvm::consumeError(normalized.takeError());
        return rewriter.notifyMatchFailure(op, "axis out of range");
      }
      if (*normalized == axis.getInt())
        return failure();
      rewriter.modifyOpInPlace(op, [&] {
        op->setAttr("axis", rewriter.getI64IntegerAttr(*normalized));
      });
      return success();
    }
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (!axes)
      return failure();
    llvm::Expected<shape::Shape> normalized =
        shape::normalizeAxes(axes.asArrayRef(), rank);
    if (!normalized) {
      llvm::consumeError(normalized.takeError());
      return rewriter.notifyMatchFailure(op, "invalid axes");
    }
    if (llvm::equal(*normalized, axes.asArrayRef()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op->setAttr("axes", rewriter.getDenseI64ArrayAttr(*normalized));
    });
    return success();
  }
};

/// `kiln.reshape %x by %c` with a constant %c becomes `kiln.reshape %x to
/// [...]` (likewise expand), the form later passes expect.
template <typename OpTy>
struct ConstantShapeOperandToAttr : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    DenseIntElementsAttr constant;
    if (!op.getShapeTensor() ||
        !matchPattern(op.getShapeTensor(), m_Constant(&constant)))
      return failure();
    SmallVector<int64_t> shape = llvm::to_vector(
        llvm::map_range(constant.getValues<APInt>(),
                        [](const APInt &v) { return v.getSExtValue(); }));
    auto replacement = OpTy::create(rewriter, op.getLoc(), op.getInput(),
                                    ArrayRef<int64_t>(shape));
    // Keep the declared type when it is less refined: shape inference, not
    // canonicalization, changes types seen by users.
    Value result = replacement.getResult();
    if (result.getType() != op.getType())
      replacement.getResult().setType(op.getType());
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::detail::populateNormalizeAxesPatterns(StringRef opName,
                                                 RewritePatternSet &patterns,
                                                 MLIRContext *context) {
  patterns.add<NormalizeAxes>(opName, context);
}

/// x ^ c for a constant c in {2, 3, 4, 0.5, -1}: multiplications, sqrt or
/// reciprocal instead of a pow per element.
struct PowByConstant : public OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PowOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getLhs();
    if (x.getType() != op.getType())
      return failure(); // the exponent broadcasts x to a larger shape
    auto constant = op.getRhs().getDefiningOp<ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                          : DenseElementsAttr();
    if (!dense || !dense.isSplat())
      return failure();
    std::optional<double> exponent;
    if (isa<FloatType>(dense.getElementType()))
      exponent = dense.getSplatValue<APFloat>().convertToDouble();
    else if (dense.getElementType().isSignlessInteger() ||
             dense.getElementType().isSignedInteger())
      exponent = double(dense.getSplatValue<APInt>().getSExtValue());
    if (!exponent)
      return failure();
    bool isFloat = isa<FloatType>(getElementTypeOrSelf(x));
    Location loc = op.getLoc();
    auto mul = [&](Value a, Value b) {
      return MulOp::create(rewriter, loc, op.getType(), a, b).getResult();
    };
    Value result;
    if (*exponent == 2) {
      result = mul(x, x);
    } else if (*exponent == 3) {
      result = mul(mul(x, x), x);
    } else if (*exponent == 4) {
      Value square = mul(x, x);
      result = mul(square, square);
    } else if (*exponent == 0.5 && isFloat) {
      result = SqrtOp::create(rewriter, loc, op.getType(), x);
    } else if (*exponent == -1 && isFloat) {
      result = ReciprocalOp::create(rewriter, loc, op.getType(), x);
    } else {
      return failure();
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

void PowOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<PowByConstant>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ConstantShapeOperandToAttr<ReshapeOp>>(context);
}

void ExpandOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<ConstantShapeOperandToAttr<ExpandOp>>(context);
}

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  kiln::detail::populateNormalizeAxesPatterns<ConcatOp>(patterns, context);
}

void SplitOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  kiln::detail::populateNormalizeAxesPatterns<SplitOp>(patterns, context);
}

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  kiln::detail::populateNormalizeAxesPatterns<GatherOp>(patterns, context);
}
