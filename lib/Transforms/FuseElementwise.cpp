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
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct FuseElementwisePass
    : public kiln::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *) { return true; });
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
