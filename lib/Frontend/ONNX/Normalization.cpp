//===- Normalization.cpp - ONNX normalizations and softmax to kiln --------===//
//
// BatchNormalization (inference) becomes x * scale + shift with per-channel
// scale = gamma / sqrt(var + eps) and shift = beta - mean * scale.
// LayerNormalization and InstanceNormalization are written out as reductions
// and elementwise ops that fusion recognizes as one kernel. Softmax before
// opset 13 (coerced to 2-D) is rewritten to the single-axis form.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <numeric>

using namespace mlir;

namespace kiln::frontend {
namespace {

using Result = FailureOr<Value>;

/// A per-channel [C] vector reshaped to [C, 1, ..., 1] for an input of
/// `rank` dims in [N, C, D...] layout.
Result channelVector(NodeContext &ctx, Value vector, int64_t rank) {
  auto type = cast<RankedTensorType>(vector.getType());
  if (type.getRank() != 1)
    return ctx.emitError() << "per-channel parameters must be 1-D, got "
                           << type;
  SmallVector<int64_t> shape(std::max<int64_t>(rank - 1, 1), 1);
  shape[0] = type.getDimSize(0);
  return ctx.reshape(vector, shape);
}

/// 1 / sqrt(variance + epsilon).
Result inverseStdDev(NodeContext &ctx, Value variance, double epsilon) {
  Result shifted = ctx.create<AddOp>(
      variance, ctx.scalar(getElementTypeOrSelf(variance), epsilon));
  if (failed(shifted))
    return failure();
  return ctx.create<RsqrtOp>(*shifted);
}

LogicalResult convertBatchNormalization(NodeContext &ctx) {
  if (ctx.intAttr("training_mode", 0))
    return ctx.emitError() << "training_mode is not supported (inference "
                              "only)";
  int64_t rank = ctx.inputRank(0);
  if (rank < 2)
    return ctx.emitError() << "needs an [N, C, ...] input";
  Result inv =
      inverseStdDev(ctx, ctx.input(4), ctx.floatAttr("epsilon", 1e-5f));
  if (failed(inv))
    return failure();
  Result scale = ctx.create<MulOp>(ctx.input(1), *inv);
  if (failed(scale))
    return failure();
  Result meanScaled = ctx.create<MulOp>(ctx.input(3), *scale);
  if (failed(meanScaled))
    return failure();
  Result shift = ctx.create<SubOp>(ctx.input(2), *meanScaled);
  if (failed(shift))
    return failure();
  Result scale4 = channelVector(ctx, *scale, rank);
  Result shift4 = channelVector(ctx, *shift, rank);
  if (failed(scale4) || failed(shift4))
    return failure();
  Result scaled = ctx.create<MulOp>(ctx.input(0), *scale4);
  if (failed(scaled))
    return failure();
  return ctx.setResult(ctx.create<AddOp>(*scaled, *shift4));
}

/// Mean and 1/stddev over `axes` (kept as size-1 dims), and the normalized
/// input.
struct Normalized {
  Value mean, invStdDev, output;
};

FailureOr<Normalized> normalize(NodeContext &ctx, Value x,
                                ArrayRef<int64_t> axes, double epsilon) {
  Result mean = ctx.create<ReduceMeanOp>(x, axes, true);
  if (failed(mean))
    return failure();
  Result centered = ctx.create<SubOp>(x, *mean);
  if (failed(centered))
    return failure();
  Result squared = ctx.create<MulOp>(*centered, *centered);
  if (failed(squared))
    return failure();
  Result variance = ctx.create<ReduceMeanOp>(*squared, axes, true);
  if (failed(variance))
    return failure();
  Result inv = inverseStdDev(ctx, *variance, epsilon);
  if (failed(inv))
    return failure();
  Result output = ctx.create<MulOp>(*centered, *inv);
  if (failed(output))
    return failure();
  return Normalized{*mean, *inv, *output};
}

/// normalized * scale (+ bias).
Result scaleAndShift(NodeContext &ctx, Value normalized, Value scale,
                     Value bias) {
  Result scaled = ctx.create<MulOp>(normalized, scale);
  if (failed(scaled) || !bias)
    return scaled;
  return ctx.create<AddOp>(*scaled, bias);
}

LogicalResult convertLayerNormalization(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t i = *axis; i < rank; ++i)
    axes.push_back(i);
  FailureOr<Normalized> n =
      normalize(ctx, ctx.input(0), axes, ctx.floatAttr("epsilon", 1e-5f));
  if (failed(n))
    return failure();
  Result y = scaleAndShift(ctx, n->output, ctx.input(1), ctx.input(2));
  if (failed(y))
    return failure();
  return ctx.setResults({*y, n->mean, n->invStdDev});
}

LogicalResult convertInstanceNormalization(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  FailureOr<SmallVector<int64_t>> axes = spatialAxes(ctx);
  if (failed(axes))
    return failure();
  FailureOr<Normalized> n =
      normalize(ctx, ctx.input(0), *axes, ctx.floatAttr("epsilon", 1e-5f));
  if (failed(n))
    return failure();
  Result scale = channelVector(ctx, ctx.input(1), rank);
  Result bias = channelVector(ctx, ctx.input(2), rank);
  if (failed(scale) || failed(bias))
    return failure();
  return ctx.setResult(scaleAndShift(ctx, n->output, *scale, *bias));
}

/// Softmax/LogSoftmax: one axis from opset 13; before, the input is viewed
/// as 2-D [prod(dims < axis), prod(dims >= axis)] and normalized per row.
template <typename OpTy> LogicalResult convertSoftmax(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  bool singleAxis = ctx.opset() >= 13;
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", singleAxis ? -1 : 1), rank);
  if (failed(axis))
    return failure();
  if (singleAxis)
    return ctx.setResult(ctx.create<OpTy>(ctx.input(0), *axis));
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  auto product = [](ArrayRef<int64_t> dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                           std::multiplies<int64_t>());
  };
  Result rows = ctx.reshape(ctx.input(0), {product(shape.take_front(*axis)),
                                           product(shape.drop_front(*axis))});
  if (failed(rows))
    return failure();
  Result normalized = ctx.create<OpTy>(*rows, 1);
  if (failed(normalized))
    return failure();
  return ctx.setResult(ctx.reshape(*normalized, shape));
}

} // namespace

void registerNormalizationConverters(ConverterRegistry &r) {
  r.add("BatchNormalization", convertBatchNormalization, 5);
  r.add("LayerNormalization", convertLayerNormalization, 2);
  r.add("InstanceNormalization", convertInstanceNormalization, 3);
  r.add("Softmax", convertSoftmax<SoftmaxOp>);
  r.add("LogSoftmax", convertSoftmax<LogSoftmaxOp>);
}

} // namespace kiln::frontend
