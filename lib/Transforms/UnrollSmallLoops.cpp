//===- UnrollSmallLoops.cpp - kiln-unroll-small-loops ---------------------===//
//
// LLVM vectorizes innermost loops only, and kiln's pipeline turns LLVM's
// unroller off (it would scalarize 56-pixel rows before the vectorizer sees
// them). A short reduction loop innermost (a convolution's window taps) then
// leaves the vectorizer a tiny loop per tap; unrolled here, the taps become
// straight-line code in the pixel loop around them, which vectorizes.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"

namespace kiln {
#define GEN_PASS_DEF_UNROLLSMALLLOOPS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct UnrollSmallLoopsPass
    : public kiln::impl::UnrollSmallLoopsBase<UnrollSmallLoopsPass> {
  using UnrollSmallLoopsBase::UnrollSmallLoopsBase;

  /// An innermost loop inside another loop, short, with a small body.
  bool qualifies(scf::ForOp loop) {
    if (!isa<scf::ForOp, scf::ParallelOp>(loop->getParentOp()))
      return false;
    std::optional<APInt> count = loop.getStaticTripCount();
    if (!count || count->getZExtValue() < 1 ||
        count->getZExtValue() > uint64_t(maxTrip))
      return false;
    int64_t trips = count->getZExtValue();
    int64_t ops = 0;
    bool nested = false;
    loop.getBody()->walk([&](Operation *op) {
      // Address arithmetic folds once the induction variable is a constant
      // (a strided window's phase and column), so it does not count.
      bool indexMath = op->getNumResults() == 1 &&
                       op->getResult(0).getType().isIndex() && isPure(op);
      ops += !indexMath;
      nested |= isa<LoopLikeOpInterface>(op);
    });
    return !nested && ops * trips <= maxOps;
  }

  void runOnOperation() override {
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<scf::ForOp> loops;
      getOperation().walk([&](scf::ForOp loop) {
        if (qualifies(loop))
          loops.push_back(loop);
      });
      for (scf::ForOp loop : loops)
        changed |= succeeded(loopUnrollFull(loop));
    }
  }
};

} // namespace
