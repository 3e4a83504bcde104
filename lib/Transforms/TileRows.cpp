//===- TileRows.cpp - kiln-tile-rows --------------------------------------===//
//
// A softmax or layernorm kernel after kiln-fuse-elementwise is a few loop
// nests over the whole tensor (a max, an exp, a sum, a scale): each sweep
// streams the tensor through the caches again and the exp values go through
// a tensor-sized buffer. Rows are independent, though: tiled by rows, with
// every op of the kernel fused into one parallel loop over row tiles, each
// tile's sweeps run over data that stays in L1, and the per-tile
// temporaries are small enough for the stack (kiln-plan-memory).
//
// A kernel qualifies when it holds a reduction but no contraction (matmuls
// and convolutions are kiln-lower-matmul's), every op is a linalg.generic
// over the same number of loops (or a fill of an accumulator), and the
// leading loops (before the first reduced one) are parallel in all of them;
// those are the row loops. Keep-dims reductions write through constant-0
// maps the tiling interface cannot slice, so unit dims are dropped first.
// The tile takes whole rows: as many as fit `tile-bytes`, dividing the row
// count so that every tile has the same static shape.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_TILEROWS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The number of leading loops that are parallel in every linalg op of the
/// kernel (which holds a reduction), when the kernel qualifies (see the file
/// comment); 0 otherwise.
unsigned rowLoops(kiln::KernelOp kernel, linalg::GenericOp consumer) {
  unsigned loops = consumer.getNumLoops();
  unsigned rows = loops;
  for (Operation &op : kernel.getBody().getOps()) {
    // A fill initializes a reduction's accumulator: it is sliced along.
    // Reshapes are the unit dims dropped at the kernel's boundary.
    if (isa<tensor::EmptyOp, arith::ConstantOp, kiln::YieldOp,
            tensor::ExpandShapeOp, tensor::CollapseShapeOp, linalg::FillOp>(op))
      continue;
    auto linalgOp = dyn_cast<linalg::GenericOp>(op);
    if (!linalgOp || linalgOp.getNumLoops() != loops ||
        !linalgOp.hasPureTensorSemantics())
      return 0;
    // The row loops must index every output the same way, or the tiles of
    // two ops would not be the same rows.
    for (AffineMap map : linalgOp.getIndexingMapsArray())
      if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
        return 0;
    for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
      AffineMap map = linalgOp.getMatchingIndexingMap(&init);
      for (unsigned i = 0; i < std::min(rows, map.getNumResults()); ++i)
        if (map.getResult(i) != getAffineDimExpr(i, op.getContext()))
          rows = std::min(rows, i);
    }
    for (auto [i, type] : llvm::enumerate(linalgOp.getIteratorTypesArray()))
      if (type == utils::IteratorType::reduction) {
        rows = std::min<unsigned>(rows, i);
        break;
      }
  }
  return rows;
}

/// The largest divisor of `n` that is at most `limit` (at least 1).
int64_t largestDivisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, std::max<int64_t>(limit, 1)); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

struct TileRowsPass : public kiln::impl::TileRowsBase<TileRowsPass> {
  using TileRowsBase::TileRowsBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](kiln::KernelOp kernel) {
      if (failed(tileKernel(rewriter, kernel)))
        signalPassFailure();
    });
  }

  /// Tile sizes for the consumer, or nothing when tiling would not pay.
  std::optional<SmallVector<int64_t>> tileSizes(linalg::GenericOp consumer,
                                                unsigned rows) {
    SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
    if (rows == 0 || ShapedType::isDynamicShape(ranges))
      return std::nullopt;
    int64_t elementBytes = 4;
    if (auto type = dyn_cast<ShapedType>(consumer->getResult(0).getType()))
      elementBytes = std::max<int64_t>(
          1, type.getElementType().getIntOrFloatBitWidth() / 8);
    int64_t rowBytes = elementBytes;
    for (int64_t range : ArrayRef(ranges).drop_front(rows))
      rowBytes *= range;
    // A row too big for the stack stays a whole-tensor sweep.
    if (rowBytes > tileBytes)
      return std::nullopt;
    SmallVector<int64_t> sizes(ranges.size(), 0);
    for (unsigned i = 0; i + 1 < rows; ++i)
      sizes[i] = 1;
    sizes[rows - 1] =
        largestDivisorAtMost(ranges[rows - 1], tileBytes / rowBytes);
    int64_t tiles = 1;
    for (unsigned i = 0; i < rows; ++i)
      tiles *= ranges[i] / sizes[i];
    if (tiles < 2)
      return std::nullopt;
    return sizes;
  }

  /// Keep-dims reductions write [rows x 1] through a constant-0 map, which
  /// the tiling interface cannot slice: drops unit dims everywhere in the
  /// kernel (reshapes at its boundary keep its types).
  LogicalResult dropUnitDims(kiln::KernelOp kernel) {
    MLIRContext *context = &getContext();
    linalg::ControlDropUnitDims control;
    RewritePatternSet dropPatterns(context);
    linalg::populateFoldUnitExtentDimsPatterns(dropPatterns, control);
    // These patterns are not meant for the greedy driver: one walk.
    walkAndApplyPatterns(kernel, std::move(dropPatterns));
    RewritePatternSet cleanup(context);
    linalg::populateFoldUnitExtentDimsCanonicalizationPatterns(cleanup,
                                                               control);
    linalg::FillOp::getCanonicalizationPatterns(cleanup, context);
    tensor::EmptyOp::getCanonicalizationPatterns(cleanup, context);
    return applyPatternsGreedily(kernel.getBody(), std::move(cleanup));
  }

  LogicalResult tileKernel(IRRewriter &rewriter, kiln::KernelOp kernel) {
    auto yield = cast<kiln::YieldOp>(kernel.getBody().front().getTerminator());
    if (yield->getNumOperands() != 1)
      return success();
    // Contractions (matmul, conv) are kiln-lower-matmul's: dropping a
    // unit M would turn a batch-1 matmul into a vector-matrix loop nest it
    // does not lower, and a convolution's unit channel or output dims
    // (grayscale input, one filter, a 1x1 output) the form it matches (its
    // window maps are not the projected permutations of linalg's
    // contraction interface, so its body tells).
    bool hasReduction = false, hasContraction = false;
    kernel.walk([&](linalg::GenericOp op) {
      hasReduction |= op.getNumReductionLoops() != 0;
      hasContraction |=
          linalg::isaContractionOpInterface(op) ||
          (op.getNumReductionLoops() != 0 && kiln::isMultiplyAccumulate(op));
    });
    if (!hasReduction || hasContraction)
      return success();
    if (failed(dropUnitDims(kernel)))
      return kernel.emitError("kiln-tile-rows: dropping unit dims failed");
    Value yielded = yield->getOperand(0);
    if (auto expand = yielded.getDefiningOp<tensor::ExpandShapeOp>())
      yielded = expand.getSrc();
    auto consumer = yielded.getDefiningOp<linalg::GenericOp>();
    if (!consumer || consumer->getNumResults() != 1 ||
        consumer.getNumReductionLoops() != 0)
      return success();
    std::optional<SmallVector<int64_t>> sizes =
        tileSizes(consumer, rowLoops(kernel, consumer));
    if (!sizes)
      return success();

    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(&getContext(), *sizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    rewriter.setInsertionPoint(consumer);
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(consumer.getOperation()), options);
    if (failed(result))
      return consumer.emitError("kiln-tile-rows: tiling by rows failed");
    rewriter.replaceAllUsesWith(consumer->getResult(0),
                                result->replacements[consumer->getResult(0)]);
    // A producer with two consumers in the tile (the exp of softmax feeds
    // the sum and the scale) was fused once per consumer: keep one.
    DominanceInfo dominance;
    eliminateCommonSubExpressions(rewriter, dominance, kernel);
    // The untiled ops are dead now.
    for (Operation &op : llvm::make_early_inc_range(
             llvm::reverse(kernel.getBody().front().getOperations())))
      if (isOpTriviallyDead(&op))
        rewriter.eraseOp(&op);
    DominanceInfo tiledDominance;
    for (auto loop : kernel.getBody().getOps<scf::ForallOp>())
      writeProducerIntoOutput(rewriter, tiledDominance, loop);
    return success();
  }

  /// In a tile, an elementwise producer read by the last op (softmax's exp,
  /// read by the sum and then by the scale that writes the output) writes
  /// a tile-sized temporary, and the last op reads it back while its own
  /// stores miss L1 on the output's lines. With the producer writing the
  /// output tile itself and the last op updating it in place, those misses
  /// come during the producer's arithmetic and the last op's stores hit L1.
  void writeProducerIntoOutput(IRRewriter &rewriter, DominanceInfo &dominance,
                               scf::ForallOp loop) {
    auto yielding = loop.getTerminator().getYieldingOps();
    if (!llvm::hasSingleElement(yielding))
      return;
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(*yielding.begin());
    auto last = insert ? insert.getSource().getDefiningOp<linalg::GenericOp>()
                       : linalg::GenericOp();
    if (!writesElementwise(last))
      return;
    OpOperand &lastInit = last.getDpsInitsMutable()[0];
    Value output = lastInit.get();
    auto slice = output.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !output.hasOneUse() ||
        last.payloadUsesValueFromOperand(&lastInit))
      return;
    for (OpOperand *input : last.getDpsInputOperands()) {
      auto producer = input->get().getDefiningOp<linalg::GenericOp>();
      if (!last.getMatchingIndexingMap(input).isIdentity() ||
          !writesElementwise(producer) ||
          producer->getBlock() != last->getBlock() ||
          producer->getResult(0).getType() != output.getType() ||
          !producer.getDpsInits()[0].hasOneUse() ||
          producer.payloadUsesValueFromOperand(
              &producer.getDpsInitsMutable()[0]) ||
          !llvm::all_of(slice->getOperands(), [&](Value operand) {
            return dominance.properlyDominates(operand, producer);
          }))
        continue;
      rewriter.modifyOpInPlace(slice, [&] { slice->moveBefore(producer); });
      rewriter.modifyOpInPlace(
          producer, [&] { producer.getDpsInitsMutable()[0].assign(output); });
      rewriter.modifyOpInPlace(
          last, [&] { lastInit.assign(producer->getResult(0)); });
      return;
    }
  }

  /// All-parallel with one result, written at the loops' index (its inputs
  /// may be broadcast, as softmax's row maximum and sum).
  static bool writesElementwise(linalg::GenericOp op) {
    return op && op.getNumReductionLoops() == 0 && op->getNumResults() == 1 &&
           op.getMatchingIndexingMap(&op.getDpsInitsMutable()[0]).isIdentity();
  }
};

} // namespace
