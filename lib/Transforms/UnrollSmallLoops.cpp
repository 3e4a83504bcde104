//===- UnrollSmallLoops.cpp - kiln-unroll-small-loops ---------------------===//
//
// LLVM vectorizes innermost loops only, and kiln's pipeline turns LLVM's
// unroller off (it would scalarize 56-pixel rows before the vectorizer sees
// them). A short reduction loop innermost (a convolution's window taps) then
// leaves the vectorizer a tiny loop per tap; unrolled here, the taps become
// straight-line code in the pixel loop around them, which vectorizes.
// A parallel loop whose innermost dim is that short (a resize's phases,
// `out[r * q + p]` for p < r) first sinks that dim into an scf.for of its
// own, unrolled likewise: the dim around it becomes the innermost loop, and
// LLVM vectorizes it with the phases' stores interleaved by shuffles.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_UNROLLSMALLLOOPS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct UnrollSmallLoopsPass
    : public kiln::impl::UnrollSmallLoopsBase<UnrollSmallLoopsPass> {
  using UnrollSmallLoopsBase::UnrollSmallLoopsBase;

  /// Whether a loop body of `trips` iterations is small enough to unroll
  /// and has no loop inside.
  bool smallBody(Block *body, int64_t trips) {
    int64_t ops = 0;
    bool nested = false;
    body->walk([&](Operation *op) {
      // Address arithmetic folds once the induction variable is a constant
      // (a strided window's phase and column), so it does not count.
      bool indexMath = op->getNumResults() == 1 &&
                       op->getResult(0).getType().isIndex() && isPure(op);
      ops += !indexMath;
      nested |= isa<LoopLikeOpInterface>(op);
    });
    return !nested && ops * trips <= maxOps;
  }

  /// A constant trip count in [1, max-trip].
  std::optional<int64_t> shortTripCount(std::optional<APInt> count) {
    if (!count || count->getZExtValue() < 1 ||
        count->getZExtValue() > uint64_t(maxTrip))
      return std::nullopt;
    return count->getZExtValue();
  }

  /// An innermost loop inside another loop, short, with a small body.
  bool qualifies(scf::ForOp loop) {
    if (!isa<scf::ForOp, scf::ParallelOp>(loop->getParentOp()))
      return false;
    std::optional<int64_t> trips = shortTripCount(loop.getStaticTripCount());
    return trips && smallBody(loop.getBody(), *trips);
  }

  /// A parallel loop of several dims without reductions whose innermost
  /// dim is short and whose body is small: sinks that dim into an scf.for
  /// (which `qualifies`).
  bool sinkShortInnerDim(scf::ParallelOp loop) {
    unsigned dims = loop.getNumLoops();
    if (dims < 2 || !loop.getInitVals().empty())
      return false;
    std::optional<int64_t> lower =
        getConstantIntValue(loop.getLowerBound()[dims - 1]);
    std::optional<int64_t> upper =
        getConstantIntValue(loop.getUpperBound()[dims - 1]);
    std::optional<int64_t> step = getConstantIntValue(loop.getStep()[dims - 1]);
    if (!lower || !upper || !step || *step <= 0 || *upper <= *lower)
      return false;
    std::optional<int64_t> trips =
        shortTripCount(APInt(64, (*upper - *lower + *step - 1) / *step));
    if (!trips || !smallBody(loop.getBody(), *trips))
      return false;
    OpBuilder b(loop);
    auto outer = scf::ParallelOp::create(
        b, loop.getLoc(), loop.getLowerBound().drop_back(),
        loop.getUpperBound().drop_back(), loop.getStep().drop_back());
    outer->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
    b.setInsertionPointToStart(outer.getBody());
    auto inner = scf::ForOp::create(
        b, loop.getLoc(), loop.getLowerBound()[dims - 1],
        loop.getUpperBound()[dims - 1], loop.getStep()[dims - 1]);
    IRMapping mapping;
    for (unsigned d = 0; d + 1 < dims; ++d)
      mapping.map(loop.getInductionVars()[d], outer.getInductionVars()[d]);
    mapping.map(loop.getInductionVars()[dims - 1], inner.getInductionVar());
    b.setInsertionPoint(inner.getBody()->getTerminator());
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    loop.erase();
    return true;
  }

  void runOnOperation() override {
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<scf::ParallelOp> parallelLoops;
      getOperation().walk(
          [&](scf::ParallelOp loop) { parallelLoops.push_back(loop); });
      for (scf::ParallelOp loop : parallelLoops)
        changed |= sinkShortInnerDim(loop);
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
