//===- FoldConstants.cpp - kiln-fold-constants ----------------------------===//
//
// Evaluates small integer/bool subgraphs (the shape arithmetic of exported
// models) into constants, then turns constant shape operands into
// attributes. Weights are never touched: only integer results up to
// `max-elements` elements are created.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/ConstantEvaluator.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDCONSTANTS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The constant operands of `op` (null where an operand is not constant).
SmallVector<Attribute> constantOperands(Operation *op) {
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    Attribute value;
    matchPattern(operand, m_Constant(&value));
    operands.push_back(value);
  }
  return operands;
}

struct KilnFoldConstantsPass
    : public kiln::impl::KilnFoldConstantsBase<KilnFoldConstantsPass> {
  using Base::Base;

  void runOnOperation() override {
    evaluateInOrder();
    // Constant shape operands -> attributes, and drop what became dead.
    RewritePatternSet patterns(&getContext());
    ReshapeOp::getCanonicalizationPatterns(patterns, &getContext());
    ExpandOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }

  /// Replaces every evaluable op by a constant. Ops are visited in program
  /// order, so a whole chain folds in one sweep.
  void evaluateInOrder() {
    SmallVector<Operation *> candidates;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<KilnDialect>(op->getDialect()) &&
          !op->hasTrait<mlir::OpTrait::ConstantLike>())
        candidates.push_back(op);
    });
    for (Operation *op : candidates) {
      Attribute value =
          evaluateIntegerOp(op, constantOperands(op), maxElements);
      if (!value)
        continue;
      OpBuilder builder(op);
      auto constant =
          ConstantOp::create(builder, op->getLoc(), cast<ElementsAttr>(value));
      op->getResult(0).replaceAllUsesWith(constant.getResult());
      op->erase();
    }
  }
};

} // namespace
