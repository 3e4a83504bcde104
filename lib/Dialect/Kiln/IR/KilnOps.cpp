//===- KilnOps.cpp - kiln op type inference and verification --------------===//
//
// Result-type inference for every op (the shape arithmetic itself lives in
// kiln/Support/ShapeUtils) and the verifiers for what inference cannot see.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Support/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

namespace {

/// Reports a shape error at `loc` (when verification asked for diagnostics)
/// and turns it into a failure.
LogicalResult reportShapeError(std::optional<Location> loc, llvm::Error err) {
  return emitOptionalError(loc, llvm::toString(std::move(err)));
}

/// Pushes `tensor<shape x elementType>` or reports why the shape is invalid.
LogicalResult pushTensor(std::optional<Location> loc,
                         llvm::Expected<shape::Shape> result, Type elementType,
                         SmallVectorImpl<Type> &types) {
  if (!result)
    return reportShapeError(loc, result.takeError());
  types.push_back(RankedTensorType::get(*result, elementType));
  return success();
}

RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The static target shape of a reshape/expand: the attribute, or the value
/// of a constant shape operand. std::nullopt when only the rank is known.
std::optional<SmallVector<int64_t>> knownTargetShape(Value shapeTensor,
                                                     DenseI64ArrayAttr attr) {
  if (attr)
    return SmallVector<int64_t>(attr.asArrayRef());
  DenseIntElementsAttr constant;
  if (shapeTensor && matchPattern(shapeTensor, m_Constant(&constant)))
    return llvm::to_vector(
        llvm::map_range(constant.getValues<APInt>(),
                        [](const APInt &v) { return v.getSExtValue(); }));
  return std::nullopt;
}

} // namespace

LogicalResult kiln::detail::verifyShapedByOp(Operation *op, Value shapeTensor,
                                             DenseI64ArrayAttr shape) {
  if (static_cast<bool>(shapeTensor) == static_cast<bool>(shape))
    return op->emitOpError("needs exactly one of a shape operand (`by`) or a "
                           "shape attribute (`to`)");
  if (shapeTensor && tensorTypeOf(shapeTensor).isDynamicDim(0))
    return op->emitOpError("shape operand must have a static length, got ")
           << shapeTensor.getType();
  return success();
}

bool kiln::detail::areRefinableTypes(TypeRange inferred, TypeRange declared) {
  if (inferred.size() != declared.size())
    return false;
  for (auto [a, b] : llvm::zip_equal(inferred, declared)) {
    auto x = dyn_cast<RankedTensorType>(a);
    auto y = dyn_cast<RankedTensorType>(b);
    if (!x || !y) {
      if (a != b)
        return false;
      continue;
    }
    if (x.getElementType() != y.getElementType() ||
        !shape::areCompatible(x.getShape(), y.getShape()))
      return false;
  }
  return true;
}

LogicalResult kiln::detail::inferBroadcastResult(std::optional<Location> loc,
                                                 ArrayRef<Value> operands,
                                                 Type elementType,
                                                 SmallVectorImpl<Type> &types) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value operand : operands)
    shapes.push_back(tensorTypeOf(operand).getShape());
  if (!elementType)
    elementType = getElementTypeOrSelf(operands.front());
  return pushTensor(loc, shape::broadcast(shapes), elementType, types);
}

LogicalResult kiln::detail::inferPoolResult(
    std::optional<Location> loc, Type input, ArrayRef<int64_t> kernel,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
    ArrayRef<int64_t> pads, bool ceilMode, SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(input);
  shape::Window window{kernel, strides, dilations, pads, ceilMode};
  return pushTensor(loc, shape::pool(type.getShape(), window),
                    type.getElementType(), types);
}

LogicalResult kiln::detail::inferReduceResult(std::optional<Location> loc,
                                              Type input,
                                              ArrayRef<int64_t> axes,
                                              bool keepDims, Type elementType,
                                              SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(input);
  return pushTensor(loc, shape::reduce(type.getShape(), axes, keepDims),
                    elementType ? elementType : type.getElementType(), types);
}

LogicalResult
kiln::detail::inferSameTypeAlongAxis(std::optional<Location> loc, Type input,
                                     int64_t axis,
                                     SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(input);
  llvm::Expected<int64_t> normalized =
      shape::normalizeAxis(axis, type.getRank());
  if (!normalized)
    return reportShapeError(loc, normalized.takeError());
  types.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Per-op inference
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getValue().getType());
  return success();
}

LogicalResult CastOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  types.push_back(input.clone(adaptor.getTo()));
  return success();
}

LogicalResult CastOp::verify() {
  Type to = getTo();
  if (!isa<FloatType, IntegerType>(to))
    return emitOpError("can only cast to a float or integer element type, "
                       "got ")
           << to;
  return success();
}

LogicalResult ClampOp::verify() {
  if (getMin().convertToDouble() > getMax().convertToDouble())
    return emitOpError("min (")
           << getMin().convertToDouble() << ") is greater than max ("
           << getMax().convertToDouble() << ")";
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhs = tensorTypeOf(adaptor.getLhs());
  auto rhs = tensorTypeOf(adaptor.getRhs());
  return pushTensor(loc, shape::matmul(lhs.getShape(), rhs.getShape()),
                    lhs.getElementType(), types);
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  auto filter = tensorTypeOf(adaptor.getFilter());
  if (Value bias = adaptor.getBias()) {
    auto biasType = tensorTypeOf(bias);
    int64_t outChannels = filter.getRank() ? filter.getDimSize(0) : 0;
    if (biasType.getRank() != 1 ||
        !shape::areCompatible(biasType.getShape(), {outChannels}))
      return emitOptionalError(loc, "conv bias must be [", outChannels,
                               "] (one per output channel), got ", biasType);
  }
  return pushTensor(loc,
                    shape::conv(input.getShape(), filter.getShape(),
                                adaptor.getStrides(), adaptor.getDilations(),
                                adaptor.getPads(), adaptor.getGroups()),
                    input.getElementType(), types);
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  return pushTensor(loc, shape::transpose(input.getShape(), adaptor.getPerm()),
                    input.getElementType(), types);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value input : adaptor.getInputs())
    shapes.push_back(tensorTypeOf(input).getShape());
  if (shapes.empty())
    return emitOptionalError(loc, "concat needs at least one input");
  return pushTensor(loc, shape::concat(shapes, adaptor.getAxis()),
                    getElementTypeOrSelf(adaptor.getInputs().front()), types);
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  auto pieces =
      shape::split(input.getShape(), adaptor.getAxis(), adaptor.getSizes());
  if (!pieces)
    return reportShapeError(loc, pieces.takeError());
  for (const shape::Shape &piece : *pieces)
    types.push_back(RankedTensorType::get(piece, input.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  return pushTensor(loc,
                    shape::slice(input.getShape(), adaptor.getStarts(),
                                 adaptor.getEnds(), adaptor.getSteps()),
                    input.getElementType(), types);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto data = tensorTypeOf(adaptor.getData());
  auto indices = tensorTypeOf(adaptor.getIndices());
  return pushTensor(
      loc,
      shape::gather(data.getShape(), indices.getShape(), adaptor.getAxis()),
      data.getElementType(), types);
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  if (adaptor.getMode() != PadMode::Constant &&
      llvm::any_of(adaptor.getPads(), [](int64_t p) { return p < 0; }))
    return emitOptionalError(loc, "negative pads (cropping) are only allowed "
                                  "in constant mode");
  return pushTensor(loc, shape::pad(input.getShape(), adaptor.getPads()),
                    input.getElementType(), types);
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  ArrayRef<float> scales = adaptor.getScales();
  if (static_cast<int64_t>(sizes.size()) != input.getRank() ||
      static_cast<int64_t>(scales.size()) != input.getRank())
    return emitOptionalError(loc, "resize of a rank-", input.getRank(),
                             " tensor needs that many sizes and scales, got ",
                             sizes.size(), " and ", scales.size());
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      llvm::any_of(scales, [](float s) { return !(s > 0); }))
    return emitOptionalError(loc, "resize sizes must be >= 0 and scales > 0");
  types.push_back(input.clone(sizes));
  return success();
}

LogicalResult ShapeOfOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  int64_t rank = tensorTypeOf(adaptor.getInput()).getRank();
  types.push_back(RankedTensorType::get({rank}, IntegerType::get(context, 64)));
  return success();
}

/// Result type of a reshape/expand: `resolve` computes it from a known
/// target shape; with a non-constant shape operand only the rank is known.
template <typename Adaptor>
static LogicalResult inferShapedByResult(
    std::optional<Location> loc, Adaptor adaptor, int64_t unknownTargetRank,
    llvm::function_ref<llvm::Expected<shape::Shape>(ArrayRef<int64_t>,
                                                    ArrayRef<int64_t>)>
        resolve,
    SmallVectorImpl<Type> &types) {
  auto input = tensorTypeOf(adaptor.getInput());
  std::optional<SmallVector<int64_t>> target =
      knownTargetShape(adaptor.getShapeTensor(), adaptor.getShapeAttr());
  if (target)
    return pushTensor(loc, resolve(input.getShape(), *target),
                      input.getElementType(), types);
  if (!adaptor.getShapeTensor())
    return emitOptionalError(loc, "needs a target shape");
  types.push_back(input.clone(
      SmallVector<int64_t>(unknownTargetRank, ShapedType::kDynamic)));
  return success();
}

/// Static length of a reshape/expand shape operand (0 when absent).
static int64_t shapeOperandLength(Value shapeTensor) {
  return shapeTensor ? tensorTypeOf(shapeTensor).getDimSize(0) : 0;
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferShapedByResult(loc, adaptor,
                             shapeOperandLength(adaptor.getShapeTensor()),
                             shape::reshape, types);
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  // Broadcasting against an unknown target keeps the larger rank.
  int64_t rank = std::max(tensorTypeOf(adaptor.getInput()).getRank(),
                          shapeOperandLength(adaptor.getShapeTensor()));
  auto broadcastTo =
      [](ArrayRef<int64_t> input,
         ArrayRef<int64_t> target) -> llvm::Expected<shape::Shape> {
    if (llvm::any_of(target, [](int64_t d) { return d < 0; }))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "expand target dims must be >= 0");
    return shape::broadcast({input, target});
  };
  return inferShapedByResult(loc, adaptor, rank, broadcastTo, types);
}

//===----------------------------------------------------------------------===//
// Kernel regions
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef kind,
                     ValueRange inputs, TypeRange outputTypes) {
  state.addAttribute(getKindAttrName(state.name), builder.getStringAttr(kind));
  state.addOperands(inputs);
  state.addTypes(outputTypes);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("block arguments must match the kernel inputs");
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getOutputs().getTypes())
    return emitOpError("yielded values must match the kernel outputs");
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnOps.cpp.inc"
