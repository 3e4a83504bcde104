//===- SplitBatch.cpp - kiln-split-batch ----------------------------------===//
//
// A batched convolutional network's kernels each write all N images'
// activations before the next kernel reads them: where one image's
// activations are megabytes (MobileNetV2's 112 x 112 layers), N of them go
// to L3 and memory between every two layers, while one image's stay in L2
// (and, larger still, in the bands the window ops interleave with the 1x1
// convolution before them, docs/backend.md). This pass runs the large first
// layers image by image: their ops are cloned per image on `kiln.split`
// pieces of the batched arguments, and the values used after them are
// joined by `kiln.concat`. A batch of more than `max-pieces` images is cut
// into that many pieces of a few images each, which bounds the code. With
// lanes, each clone is tagged with the lane its piece runs in
// (include/kiln/Transforms/Lanes.h).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/IR/KilnTraits.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Transforms/Lanes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITBATCH
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The ops that run image by image (in program order), the op that ends
/// them, and the batch.
struct Region {
  int64_t batch = 0;
  llvm::SetVector<Operation *> ops;
  /// The function arguments the region reads per image.
  llvm::SetVector<Value> arguments;
  /// The first op after the region that reads it or a batched argument
  /// (the function's return at least).
  Operation *end = nullptr;
};

/// A static tensor type whose dim 0 is `batch`.
bool isBatched(Value value, int64_t batch) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getRank() >= 1 &&
         type.getDimSize(0) == batch;
}

/// Bytes one image's share of `value` takes.
int64_t bytesPerImage(Value value, int64_t batch) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() / batch * llvm::divideCeil(bits, 8);
}

/// A convolution or pool: the ops whose size decides the region, and whose
/// operand 0 alone is per image.
bool isWindowOp(Operation *op) { return isa<ConvOp, MaxPoolOp, AvgPoolOp>(op); }

/// The batch: dim 0 of the first argument of rank 2 or more whose dim 0 is
/// static and above 1 (0 when none is).
int64_t batchOf(func::FuncOp func) {
  for (Value argument : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (type && type.getRank() >= 2 && !type.isDynamicDim(0) &&
        type.getDimSize(0) > 1)
      return type.getDimSize(0);
  }
  return 0;
}

class RegionFinder {
public:
  RegionFinder(int64_t batch, int64_t minImageBytes)
      : minImageBytes(minImageBytes) {
    region.batch = batch;
  }

  /// The region of `func`'s body, or nullopt when it holds no convolution
  /// or pool (splitting elementwise ops alone gains nothing).
  std::optional<Region> find(func::FuncOp func) {
    bool hasWindowOp = false;
    for (Operation &op : func.getBody().front()) {
      if (!readsPerImageValues(&op))
        continue;
      if (!joins(&op)) {
        region.end = &op;
        break;
      }
      region.ops.insert(&op);
      hasWindowOp |= isWindowOp(&op);
      for (Value operand : op.getOperands())
        if (isa<BlockArgument>(operand) && isPerImage(operand))
          region.arguments.insert(operand);
    }
    if (!hasWindowOp || !region.end)
      return std::nullopt;
    return region;
  }

private:
  /// A value each image has its own piece of: a batched argument or a
  /// result of the region.
  bool isPerImage(Value value) const {
    if (isa<BlockArgument>(value))
      return isBatched(value, region.batch);
    return region.ops.contains(value.getDefiningOp());
  }

  bool readsPerImageValues(Operation *op) const {
    return llvm::any_of(op->getOperands(),
                        [&](Value operand) { return isPerImage(operand); });
  }

  /// Whether `op` can run per image: every result batched, and its
  /// per-image operands (a window op's input; an elementwise op's batched
  /// operands) available per image.
  bool joins(Operation *op) const {
    if (op->getNumResults() == 0 || op->getNumRegions() != 0 ||
        !llvm::all_of(op->getResults(), [&](Value result) {
          return isBatched(result, region.batch);
        }))
      return false;
    if (isWindowOp(op)) {
      // Only the input is per image: a filter or bias that is (an argument
      // whose dim 0 happens to be N) would be cut into images with it.
      Value input = op->getOperand(0);
      if (!isPerImage(input) ||
          llvm::any_of(op->getOperands().drop_front(),
                       [&](Value operand) { return isPerImage(operand); }))
        return false;
      int64_t in = bytesPerImage(input, region.batch);
      int64_t out = bytesPerImage(op->getResult(0), region.batch);
      // One that shrinks a result of the region joins too: the batch's
      // activations are joined after it, smaller.
      return std::max(in, out) >= minImageBytes ||
             (!isa<BlockArgument>(input) && out < in);
    }
    // Layout changes that leave the batch dim alone (an NHWC input
    // transposed to NCHW, an explicit spatial pad) move each image's data
    // within the image.
    if (auto transpose = dyn_cast<TransposeOp>(op))
      return transpose.getPerm().front() == 0 &&
             isPerImage(transpose.getInput());
    if (auto pad = dyn_cast<PadOp>(op)) {
      ArrayRef<int64_t> pads = pad.getPads();
      return pads.front() == 0 && pads[pads.size() / 2] == 0 &&
             isPerImage(pad.getInput());
    }
    if (!op->hasTrait<kiln::OpTrait::Elementwise>())
      return false;
    // Operands of the result's rank with dim 0 = N hold per-image data;
    // the others broadcast over the batch.
    auto rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    return llvm::all_of(op->getOperands(), [&](Value operand) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      bool broadcasts =
          type && (type.getRank() < rank ||
                   (type.hasStaticShape() && type.getDimSize(0) == 1));
      return broadcasts || isPerImage(operand);
    });
  }

  int64_t minImageBytes;
  Region region;
};

/// `type` with dim 0 = `images`.
RankedTensorType withImages(Type type, int64_t images) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[0] = images;
  return ranked.clone(shape);
}

/// Images per piece of a batch of `batch` cut into at most `maxPieces`
/// pieces: as even as whole pieces allow, the last one smaller.
SmallVector<int64_t> pieceSizes(int64_t batch, int64_t maxPieces) {
  int64_t size = llvm::divideCeil(batch, std::max<int64_t>(maxPieces, 1));
  SmallVector<int64_t> sizes;
  for (int64_t first = 0; first < batch; first += size)
    sizes.push_back(std::min(size, batch - first));
  return sizes;
}

/// The lane of each of `pieces` pieces dealt out in order to at most
/// `lanes` lanes: contiguous runs, as even as whole pieces allow.
SmallVector<int64_t> laneOfPieces(int64_t pieces, int64_t lanes) {
  lanes = std::clamp<int64_t>(lanes, 1, pieces);
  return llvm::to_vector(
      llvm::map_range(llvm::seq<int64_t>(0, pieces),
                      [&](int64_t piece) { return piece * lanes / pieces; }));
}

/// Clones `region`'s ops once per piece of the batch (`sizes` images
/// each) before its end, each clone tagged with its piece's lane when
/// there are several, and replaces the uses of its values after it by the
/// pieces' results joined along dim 0.
void splitImages(const Region &region, ArrayRef<int64_t> sizes, int64_t lanes) {
  Operation *end = region.end;
  OpBuilder b(end);
  SmallVector<IRMapping> pieces(sizes.size());
  for (Value argument : region.arguments) {
    auto types = llvm::map_to_vector(sizes, [&](int64_t size) -> Type {
      return withImages(argument.getType(), size);
    });
    auto split = SplitOp::create(b, argument.getLoc(), types, argument,
                                 /*axis=*/0, sizes);
    for (auto [piece, result] : llvm::zip(pieces, split.getResults()))
      piece.map(argument, result);
  }
  SmallVector<int64_t> laneOf = laneOfPieces(sizes.size(), lanes);
  bool tagLanes = lanes > 1 && sizes.size() > 1;
  for (auto [piece, size, lane] : llvm::zip(pieces, sizes, laneOf))
    for (Operation *op : region.ops) {
      Operation *copy = b.clone(*op, piece);
      for (OpResult result : copy->getResults())
        result.setType(withImages(result.getType(), size));
      if (tagLanes)
        copy->setAttr(kLaneAttrName, b.getI64IntegerAttr(lane));
    }
  for (Operation *op : region.ops)
    for (Value result : op->getResults()) {
      bool usedAfter = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !region.ops.contains(user);
      });
      if (!usedAfter)
        continue;
      auto parts = llvm::map_to_vector(
          pieces, [&](const IRMapping &piece) { return piece.lookup(result); });
      auto joined = ConcatOp::create(b, result.getLoc(), result.getType(),
                                     parts, /*axis=*/0);
      result.replaceUsesWithIf(joined, [&](OpOperand &use) {
        return !region.ops.contains(use.getOwner());
      });
    }
  for (Operation *op : llvm::reverse(region.ops))
    op->erase();
}

struct SplitBatchPass : public kiln::impl::KilnSplitBatchBase<SplitBatchPass> {
  using KilnSplitBatchBase::KilnSplitBatchBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    int64_t batch = batchOf(func);
    if (batch < 2 || maxPieces < 2)
      return;
    if (std::optional<Region> region =
            RegionFinder(batch, minImageBytes).find(func))
      splitImages(*region, pieceSizes(batch, maxPieces), lanes);
  }
};

} // namespace
