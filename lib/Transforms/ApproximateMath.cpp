//===- ApproximateMath.cpp - kiln-approximate-math ------------------------===//
//
// libm has no vector entry points LLVM 22 would use for AVX-512, so every
// math.exp / math.tanh / math.erf left as is becomes one scalar call per
// element. Polynomial approximations are plain arith, which vectorizes.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct ApproximateMathPass
    : public kiln::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Computes f16/bf16 in f32 and approximates the f32 forms.
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
