//===- FuseElementwise.cpp - kiln-fuse-elementwise ------------------------===//
//
// kiln-fuse-kernels decides which ops share a kernel; this pass makes each
// kernel region's linalg ops share loops. Inside a kiln.kernel every
// producer linalg.generic of a parallel (elementwise/broadcast/transpose)
// kind is fused into its consumers, so an elementwise chain becomes one loop
// nest and a reduction reads its elementwise producers' inputs directly.
// Fusion never crosses a kernel boundary: the kernel is isolated from above.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Fusing a producer into one of several consumers duplicates its work in
/// each: fine for cheap arithmetic (memory is the bottleneck), not for a
/// transcendental (exp in softmax feeds both the sum and the division), which
/// is computed once and kept in a buffer instead.
bool worthFusing(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || producer->getResult(0).hasOneUse())
    return true;
  bool expensive = false;
  producer->walk([&](Operation *op) {
    expensive |= isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
                     math::Log1pOp, math::Log2Op, math::TanhOp, math::ErfOp,
                     math::PowFOp, math::SinOp, math::CosOp>(op);
  });
  return !expensive;
}

struct FuseElementwisePass
    : public kiln::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, worthFusing);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));
    WalkResult result = getOperation().walk([&](kiln::KernelOp kernel) {
      if (failed(applyPatternsGreedily(kernel.getBody(), frozen)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
