//===- FoldTransposes.cpp - kiln-fold-transposes --------------------------===//
//
// A transpose is pure data movement: a kernel that reads its result can as
// well read its input in permuted order, saving a write and a read of the
// whole tensor (and, in attention, a kernel per head split).
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDTRANSPOSES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// generic(transpose(x)) -> generic(x) with the operand's map permuted:
/// transposed dim k is input dim perm[k], so the input's map has result
/// perm[k] equal to the old map's result k.
struct FoldTransposeOperand : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    SmallVector<Value> inputs(op.getDpsInputs());
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto transpose = input.getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      AffineMap map = maps[i];
      ArrayRef<int64_t> perm = transpose.getPermutation();
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [k, p] : llvm::enumerate(perm))
        results[p] = map.getResult(k);
      maps[i] = AffineMap::get(map.getNumDims(), 0, results, op.getContext());
      inputs[i] = transpose.getInput();
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable().assign(inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct EraseDeadTranspose : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->getResult(0).use_empty())
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

struct FoldTransposesPass
    : public kiln::impl::FoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeOperand, EraseDeadTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
