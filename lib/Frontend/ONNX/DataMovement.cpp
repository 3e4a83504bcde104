//===- DataMovement.cpp - ONNX shape and layout ops to kiln ---------------===//
//
// Flatten, Squeeze, Unsqueeze and Reshape all become kiln.reshape with a
// resolved target; Slice is normalized to one (start, end, step) per dim;
// Tile is written as reshape -> expand -> reshape.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <numeric>

using namespace mlir;

namespace kiln::frontend {
namespace {

using Result = FailureOr<Value>;

int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Axes from the `axes` attribute (before `inputFromOpset`) or from the
/// optional input `inputIndex` (from then on).
FailureOr<SmallVector<int64_t>> axesOf(NodeContext &ctx, int64_t inputFromOpset,
                                       size_t inputIndex = 1) {
  if (ctx.opset() < inputFromOpset)
    return ctx.intsAttr("axes").value_or(SmallVector<int64_t>());
  if (!ctx.hasInput(inputIndex))
    return SmallVector<int64_t>();
  return ctx.constantInts(inputIndex, "axes");
}

LogicalResult convertFlatten(NodeContext &ctx) {
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t rank = shape.size();
  int64_t axis = ctx.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.emitError() << "axis " << axis << " is out of range for rank "
                           << rank;
  if (axis < 0)
    axis += rank;
  return ctx.setResult(
      ctx.reshape(ctx.input(0), {product(shape.take_front(axis)),
                                 product(shape.drop_front(axis))}));
}

LogicalResult convertReshape(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> target = ctx.constantInts(1, "shape");
  if (failed(target))
    return failure();
  ArrayRef<int64_t> input = ctx.inputType(0).getShape();
  bool allowZero = ctx.intAttr("allowzero", 0) != 0;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim != 0 || allowZero)
      continue;
    if (i >= input.size())
      return ctx.emitError() << "shape dim " << i << " is 0 (copy the input "
                             << "dim) but the input has rank " << input.size();
    dim = input[i];
  }
  return ctx.setResult(ctx.create<ReshapeOp>(
      ctx.input(0), Value(), ctx.b().getDenseI64ArrayAttr(*target)));
}

LogicalResult convertTranspose(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> given = ctx.intsAttr("perm"))
    perm = *given;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  return ctx.setResult(ctx.create<TransposeOp>(ctx.input(0), perm));
}

LogicalResult convertSqueeze(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> axes = axesOf(ctx, 13);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t rank = shape.size();
  SmallVector<bool> drop(rank, false);
  if (axes->empty()) {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = shape[i] == 1;
  }
  for (int64_t axis : *axes) {
    FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank);
    if (failed(normalized))
      return failure();
    if (shape[*normalized] != 1)
      return ctx.emitError() << "cannot squeeze dim " << *normalized
                             << " of size " << shape[*normalized];
    drop[*normalized] = true;
  }
  SmallVector<int64_t> result;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      result.push_back(shape[i]);
  return ctx.setResult(ctx.reshape(ctx.input(0), result));
}

LogicalResult convertUnsqueeze(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> axes = axesOf(ctx, 13);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t outRank = shape.size() + axes->size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t axis : *axes) {
    FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, outRank);
    if (failed(normalized))
      return failure();
    if (inserted[*normalized])
      return ctx.emitError() << "axis " << axis << " appears twice";
    inserted[*normalized] = true;
  }
  SmallVector<int64_t> result;
  const int64_t *next = shape.begin();
  for (int64_t i = 0; i < outRank; ++i)
    result.push_back(inserted[i] ? 1 : *next++);
  return ctx.setResult(ctx.reshape(ctx.input(0), result));
}

LogicalResult convertConcat(NodeContext &ctx) {
  std::optional<int64_t> axis = ctx.intAttr("axis");
  if (!axis)
    return ctx.emitError() << "needs the 'axis' attribute";
  SmallVector<Value> inputs;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i))
      inputs.push_back(ctx.input(i));
  return ctx.setResult(ctx.create<ConcatOp>(inputs, *axis));
}

LogicalResult convertSplit(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t dim = ctx.inputType(0).getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (ctx.opset() < 13) {
    sizes = ctx.intsAttr("split").value_or(SmallVector<int64_t>());
  } else if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  }
  if (sizes.empty()) {
    // Equal pieces; from opset 18 the last may be smaller (num_outputs).
    int64_t pieces = ctx.intAttr("num_outputs", ctx.proto().output_size());
    if (pieces <= 0)
      return ctx.emitError() << "needs at least one output";
    int64_t size = (dim + pieces - 1) / pieces;
    for (int64_t i = 0; i < pieces; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(size, dim - i * size)));
  }
  auto results = ctx.createMulti<SplitOp>(ctx.input(0), *axis, sizes);
  if (failed(results))
    return failure();
  return ctx.setResults(*results);
}

/// ONNX Slice parameters clamped into kiln's normalized per-dim form.
LogicalResult convertSlice(NodeContext &ctx) {
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.intsAttr("starts").value_or(SmallVector<int64_t>());
    ends = ctx.intsAttr("ends").value_or(SmallVector<int64_t>());
    axes = ctx.intsAttr("axes").value_or(SmallVector<int64_t>());
  } else {
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "starts");
    FailureOr<SmallVector<int64_t>> e = ctx.constantInts(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    for (auto [index, out] :
         {std::pair<size_t, SmallVector<int64_t> *>{3, &axes}, {4, &steps}}) {
      if (!ctx.hasInput(index))
        continue;
      FailureOr<SmallVector<int64_t>> values =
          ctx.constantInts(index, index == 3 ? "axes" : "steps");
      if (failed(values))
        return failure();
      *out = *values;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.emitError() << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> fullStarts(rank, 0), fullEnds(shape), fullSteps(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(ctx, axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t dim = shape[*axis], step = steps[i];
    if (step == 0)
      return ctx.emitError() << "slice step must not be 0";
    auto wrap = [&](int64_t v) { return v < 0 ? v + dim : v; };
    int64_t start = wrap(starts[i]), end = wrap(ends[i]);
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, start, dim);
    } else if (dim == 0) {
      start = end = -1;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, start);
    }
    fullStarts[*axis] = start;
    fullEnds[*axis] = end;
    fullSteps[*axis] = step;
  }
  return ctx.setResult(
      ctx.create<SliceOp>(ctx.input(0), fullStarts, fullEnds, fullSteps));
}

LogicalResult convertGather(NodeContext &ctx) {
  return ctx.setResult(
      ctx.create<GatherOp>(ctx.input(0), ctx.input(1), ctx.intAttr("axis", 0)));
}

LogicalResult convertExpand(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  return ctx.setResult(ctx.create<ExpandOp>(
      ctx.input(0), Value(), ctx.b().getDenseI64ArrayAttr(*shape)));
}

/// Tile as [d0, d1] -> [1, d0, 1, d1] -> expand [r0, d0, r1, d1] ->
/// [r0 * d0, r1 * d1].
LogicalResult convertTile(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> repeats = ctx.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  if (repeats->size() != shape.size())
    return ctx.emitError() << "has " << repeats->size() << " repeats for "
                           << "rank " << shape.size();
  SmallVector<int64_t> interleaved, expanded, result;
  for (auto [dim, repeat] : llvm::zip_equal(shape, *repeats)) {
    if (repeat < 0)
      return ctx.emitError() << "repeats must be >= 0";
    interleaved.append({1, dim});
    expanded.append({repeat, dim});
    result.push_back(repeat * dim);
  }
  Result spread = ctx.reshape(ctx.input(0), interleaved);
  if (failed(spread))
    return failure();
  Result copies = ctx.create<ExpandOp>(*spread, Value(),
                                       ctx.b().getDenseI64ArrayAttr(expanded));
  if (failed(copies))
    return failure();
  return ctx.setResult(ctx.reshape(*copies, result));
}

LogicalResult convertPad(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  std::string modeName = ctx.stringAttr("mode").value_or("constant");
  std::optional<PadMode> mode =
      llvm::StringSwitch<std::optional<PadMode>>(modeName)
          .Case("constant", PadMode::Constant)
          .Case("reflect", PadMode::Reflect)
          .Case("edge", PadMode::Edge)
          .Default(std::nullopt);
  if (!mode)
    return ctx.emitError() << "pad mode '" << modeName << "' is not supported";
  SmallVector<int64_t> pads;
  double value = 0.0;
  if (ctx.opset() < 11) {
    pads = ctx.intsAttr("pads").value_or(SmallVector<int64_t>());
    value = ctx.floatAttr("value", 0.0f);
  } else {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "pads");
    if (failed(given))
      return failure();
    pads = *given;
    if (ctx.hasInput(2)) {
      FailureOr<double> constant = ctx.constantScalar(2, "constant_value");
      if (failed(constant))
        return failure();
      value = *constant;
    }
    if (ctx.hasInput(3)) {
      // Pads for a subset of axes (opset 18): spread them over all dims.
      FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(3, "axes");
      if (failed(axes))
        return failure();
      if (pads.size() != 2 * axes->size())
        return ctx.emitError() << "needs two pads per axis";
      SmallVector<int64_t> full(2 * rank, 0);
      for (auto [i, axis] : llvm::enumerate(*axes)) {
        FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank);
        if (failed(normalized))
          return failure();
        full[*normalized] = pads[i];
        full[*normalized + rank] = pads[i + axes->size()];
      }
      pads = full;
    }
  }
  return ctx.setResult(
      ctx.create<PadOp>(ctx.input(0), pads, *mode, llvm::APFloat(value)));
}

/// Constant float values of input `i` (Resize's scales).
FailureOr<SmallVector<float>> constantFloats(NodeContext &ctx, size_t i,
                                             llvm::StringRef what) {
  DenseFPElementsAttr values;
  if (!matchPattern(ctx.input(i), m_Constant(&values)))
    return ctx.emitError() << what << " (input " << i
                           << ") must be known at compile time";
  return llvm::to_vector(
      llvm::map_range(values.getValues<APFloat>(), [](const APFloat &v) {
        return static_cast<float>(v.convertToDouble());
      }));
}

/// Resize (and its opset-10 form): sizes and scales resolved to constants,
/// nearest and linear modes.
LogicalResult convertResize(NodeContext &ctx) {
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  size_t rank = shape.size();
  bool opset10 = ctx.opset() < 11;
  std::string modeName = ctx.stringAttr("mode").value_or("nearest");
  std::optional<ResizeMode> mode =
      llvm::StringSwitch<std::optional<ResizeMode>>(modeName)
          .Case("nearest", ResizeMode::Nearest)
          .Case("linear", ResizeMode::Linear)
          .Default(std::nullopt);
  if (!mode)
    return ctx.emitError() << "mode '" << modeName << "' is not supported";
  std::string transformName =
      ctx.stringAttr("coordinate_transformation_mode")
          .value_or(opset10 ? "asymmetric" : "half_pixel");
  std::optional<CoordinateTransform> transform =
      llvm::StringSwitch<std::optional<CoordinateTransform>>(transformName)
          .Case("half_pixel", CoordinateTransform::HalfPixel)
          .Case("pytorch_half_pixel", CoordinateTransform::PytorchHalfPixel)
          .Case("align_corners", CoordinateTransform::AlignCorners)
          .Case("asymmetric", CoordinateTransform::Asymmetric)
          .Cases({"tf_half_pixel_for_nearest", "tf_half_pixel_for_nn"},
                 CoordinateTransform::TfHalfPixelForNearest)
          .Default(std::nullopt);
  if (!transform)
    return ctx.emitError() << "coordinate_transformation_mode '"
                           << transformName << "' is not supported";
  std::string nearestName =
      ctx.stringAttr("nearest_mode")
          .value_or(opset10 ? "floor" : "round_prefer_floor");
  std::optional<NearestMode> nearest =
      llvm::StringSwitch<std::optional<NearestMode>>(nearestName)
          .Case("round_prefer_floor", NearestMode::RoundPreferFloor)
          .Case("round_prefer_ceil", NearestMode::RoundPreferCeil)
          .Case("floor", NearestMode::Floor)
          .Case("ceil", NearestMode::Ceil)
          .Default(std::nullopt);
  if (!nearest)
    return ctx.emitError() << "nearest_mode '" << nearestName
                           << "' is not supported";
  if (ctx.intAttr("antialias", 0) || ctx.intsAttr("axes") ||
      ctx.stringAttr("keep_aspect_ratio_policy").value_or("stretch") !=
          "stretch" ||
      ctx.intAttr("exclude_outside", 0))
    return ctx.emitError() << "antialias, axes, exclude_outside and "
                              "keep_aspect_ratio_policy are not supported";

  size_t scalesInput = opset10 ? 1 : 2, sizesInput = 3;
  SmallVector<int64_t> sizes;
  SmallVector<float> scales;
  if (!opset10 && ctx.hasInput(sizesInput)) {
    FailureOr<SmallVector<int64_t>> given =
        ctx.constantInts(sizesInput, "sizes");
    if (failed(given))
      return failure();
    sizes = *given;
    if (sizes.size() != rank)
      return ctx.emitError() << "needs " << rank << " sizes";
    for (size_t d = 0; d < rank; ++d)
      scales.push_back(shape[d] ? float(sizes[d]) / float(shape[d]) : 1.0f);
  } else {
    if (!ctx.hasInput(scalesInput))
      return ctx.emitError() << "needs scales or sizes";
    FailureOr<SmallVector<float>> given =
        constantFloats(ctx, scalesInput, "scales");
    if (failed(given))
      return failure();
    scales = *given;
    if (scales.size() != rank)
      return ctx.emitError() << "needs " << rank << " scales";
    for (size_t d = 0; d < rank; ++d)
      sizes.push_back(static_cast<int64_t>(std::floor(shape[d] * scales[d])));
  }
  return ctx.setResult(ctx.create<ResizeOp>(ctx.input(0), sizes, scales, *mode,
                                            *transform, *nearest));
}

} // namespace

void registerDataMovementConverters(ConverterRegistry &r) {
  r.add("Resize", convertResize, 1, 10);
  r.add("Flatten", convertFlatten);
  r.add("Reshape", convertReshape, 2, 5);
  r.add("Transpose", convertTranspose);
  r.add("Squeeze", convertSqueeze);
  r.add("Unsqueeze", convertUnsqueeze);
  r.add("Concat", convertConcat);
  r.add("Split", convertSplit);
  r.add("Slice", convertSlice);
  r.add("Gather", convertGather, 2);
  r.add("Expand", convertExpand, 2);
  r.add("Tile", convertTile, 2, 6);
  r.add("Pad", convertPad);
}

} // namespace kiln::frontend
