//===- SplitGroupedConvs.cpp - kiln-split-grouped-convs -------------------===//
//
// A grouped convolution (ResNeXt's and RegNet's 3x3 layers, AlexNet's two
// towers) is `groups` independent convolutions, each over its slice of the
// input channels. linalg has no named op for it, so it had been lowered as
// one loop nest over output channels and pixels (convAsLoops), which
// vectorizes along the pixels but packs and tiles nothing: 3x3 256 -> 256
// in 4 groups at 14x14 ran 10x slower than ONNX Runtime. Here each group
// becomes a dense convolution of its own, on a `kiln.split` piece of the
// input, with its slice of the filters and bias as new constants, so it gets
// the dense kernels (implicit GEMM, filters packed at compile time,
// Winograd); `kiln.concat` joins the groups' results along the channels.
// Each group is a kernel of its own, compiled apart, so convolutions of
// more than `max-groups` groups are left as they are (WindowToLinalg runs
// one f32 image of them as a matmul batched over the groups; a batch stays a
// loop nest).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/ConstantData.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/IR/KilnTraits.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Transforms/Lanes.h"
#include "kiln/Transforms/ParallelImages.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITGROUPEDCONVS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Constants of at most this many elements are kept as dense attributes
/// (printed inline), larger ones as resource blobs, like the frontend's.
constexpr size_t kInlineElements = 16;

/// The elements of `value` when it is a constant of f32 data.
std::optional<SmallVector<float>> constantFloats(Value value) {
  auto constant = value ? value.getDefiningOp<ConstantOp>() : nullptr;
  if (!constant)
    return std::nullopt;
  return readFloatData(constant.getValue());
}

Value floatConstant(OpBuilder &b, Location loc, RankedTensorType type,
                    ArrayRef<float> data) {
  ElementsAttr value;
  if (data.size() <= kInlineElements)
    value = DenseElementsAttr::get(type, data);
  else
    value = DenseResourceElementsAttr::get(
        type, "grouped_conv",
        HeapAsmResourceBlob::allocateAndCopyInferAlign(data));
  return ConstantOp::create(b, loc, value);
}

/// `type` with dim `dim` of size `size`.
RankedTensorType withDim(RankedTensorType type, int64_t dim, int64_t size) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  return type.clone(shape);
}

/// Group `group`'s bias: a slice of the constant `data`, or of the
/// (non-constant) `bias` value.
Value groupBias(OpBuilder &b, Location loc, Value bias,
                const std::optional<SmallVector<float>> &data, int64_t group,
                int64_t outPerGroup) {
  auto type = withDim(cast<RankedTensorType>(bias.getType()), 0, outPerGroup);
  int64_t first = group * outPerGroup;
  if (data)
    return floatConstant(b, loc, type,
                         ArrayRef(*data).slice(first, outPerGroup));
  return SliceOp::create(b, loc, type, bias, ArrayRef<int64_t>{first},
                         ArrayRef<int64_t>{first + outPerGroup},
                         ArrayRef<int64_t>{1});
}

/// Whether `op` is an elementwise op of one operand, with the same shape.
bool isUnaryElementwise(Operation *op) {
  if (!op->hasTrait<kiln::OpTrait::Elementwise>() ||
      op->getNumOperands() != 1 || op->getNumResults() != 1)
    return false;
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto output = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return input && output && input.getShape() == output.getShape();
}

/// Gives every op a builder inserts the lane (kiln-split-batch) of the op
/// it replaces, so that the lane's kernels stay one run.
struct InheritLane : public OpBuilder::Listener {
  explicit InheritLane(Operation *replaced)
      : lane(replaced->getAttr(kLaneAttrName)) {}
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (lane)
      op->setAttr(kLaneAttrName, lane);
  }
  Attribute lane;
};

/// Replaces `conv` by one convolution per group joined along the channels;
/// `filters` holds its filter's elements.
void splitGroups(ConvOp conv, ArrayRef<float> filters) {
  InheritLane inheritLane(conv);
  OpBuilder b(conv, &inheritLane);
  Location loc = conv.getLoc();
  auto type = cast<RankedTensorType>(conv.getType());
  auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
  auto inputType = cast<RankedTensorType>(conv.getInput().getType());
  int64_t groups = conv.getGroups();
  int64_t outPerGroup = type.getDimSize(1) / groups;
  int64_t inPerGroup = filterType.getDimSize(1);
  // Filters [O, C / groups, K...]: a group's are consecutive.
  int64_t filtersPerGroup = filters.size() / groups;
  SmallVector<Type> pieceTypes(groups, withDim(inputType, 1, inPerGroup));
  auto pieces = SplitOp::create(b, loc, pieceTypes, conv.getInput(), /*axis=*/1,
                                SmallVector<int64_t>(groups, inPerGroup));
  std::optional<SmallVector<float>> bias = constantFloats(conv.getBias());
  if (bias && int64_t(bias->size()) != type.getDimSize(1))
    bias.reset();
  SmallVector<Value> results;
  for (int64_t g = 0; g < groups; ++g) {
    Value filter =
        floatConstant(b, loc, withDim(filterType, 0, outPerGroup),
                      filters.slice(g * filtersPerGroup, filtersPerGroup));
    Value slicedBias =
        conv.getBias() ? groupBias(b, loc, conv.getBias(), bias, g, outPerGroup)
                       : Value();
    results.push_back(ConvOp::create(
        b, loc, withDim(type, 1, outPerGroup), pieces.getResult(g), filter,
        slicedBias, conv.getStrides(), conv.getDilations(), conv.getPads(),
        /*groups=*/1));
  }
  // Unary elementwise ops that only the convolution's result feeds (its
  // ReLU or ReLU6) run on each group's result, where fusion applies them on
  // the group's tiles, rather than as a pass of their own over the joined
  // result (in ResNeXt's block at 56x56, a ReLU kernel of 0.13 ms of the
  // block's 5.8).
  Value joined = conv.getResult();
  SmallVector<Operation *> moved;
  while (joined.hasOneUse()) {
    Operation *user = *joined.getUsers().begin();
    if (!isUnaryElementwise(user))
      break;
    auto userType = cast<RankedTensorType>(user->getResult(0).getType());
    for (Value &result : results) {
      IRMapping groupInput;
      groupInput.map(joined, result);
      Operation *clone = b.clone(*user, groupInput);
      clone->getResult(0).setType(withDim(userType, 1, outPerGroup));
      result = clone->getResult(0);
    }
    moved.push_back(user);
    joined = user->getResult(0);
  }
  joined.replaceAllUsesWith(
      ConcatOp::create(b, loc, joined.getType(), results, /*axis=*/1)
          .getResult());
  for (Operation *op : llvm::reverse(moved))
    op->erase();
  conv.erase();
}

struct SplitGroupedConvsPass
    : public kiln::impl::KilnSplitGroupedConvsBase<SplitGroupedConvsPass> {
  using KilnSplitGroupedConvsBase::KilnSplitGroupedConvsBase;

  void runOnOperation() override {
    SmallVector<std::pair<ConvOp, SmallVector<float>>> convs;
    getOperation().walk([&](ConvOp conv) {
      if (std::optional<SmallVector<float>> filters = splitFilters(conv))
        convs.emplace_back(conv, std::move(*filters));
    });
    for (auto &[conv, filters] : convs)
      splitGroups(conv, filters);
  }

private:
  /// Whether `conv` is left to the matmul batched over its groups, as fast
  /// as the split (see the pass description): one image, at most
  /// batchedGroupChannels input channels a group, and unit strides or
  /// enough groups that kiln-lower-matmul lays them out in parallel
  /// (kMinParallelImages; fewer are laid out one at a time, each a
  /// thread-pool dispatch).
  bool runsBatched(ConvOp conv) const {
    auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
    bool unitStrides =
        llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; });
    return cast<RankedTensorType>(conv.getType()).getDimSize(0) == 1 &&
           filterType.getDimSize(1) <= batchedGroupChannels &&
           (unitStrides || int64_t(conv.getGroups()) >= kMinParallelImages);
  }

  /// The filters of `conv` if it is split: grouped (at most maxGroups),
  /// more than one input channel a group (depthwise convolutions have
  /// kernels of their own), at least minGroupChannels output channels a
  /// group, not left to the batched matmul (runsBatched), static f32 shapes
  /// and constant filters (sliced here, so that each group's are packed at
  /// compile time).
  std::optional<SmallVector<float>> splitFilters(ConvOp conv) const {
    auto type = cast<RankedTensorType>(conv.getType());
    auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
    auto inputType = cast<RankedTensorType>(conv.getInput().getType());
    int64_t groups = conv.getGroups();
    if (groups < 2 || groups > maxGroups || !type.hasStaticShape() ||
        !inputType.hasStaticShape() || !filterType.hasStaticShape() ||
        !type.getElementType().isF32() || filterType.getDimSize(1) < 2 ||
        type.getDimSize(1) % groups ||
        type.getDimSize(1) / groups < minGroupChannels || runsBatched(conv))
      return std::nullopt;
    std::optional<SmallVector<float>> filters =
        constantFloats(conv.getFilter());
    if (!filters || int64_t(filters->size()) != filterType.getNumElements())
      return std::nullopt;
    return filters;
  }
};

} // namespace
