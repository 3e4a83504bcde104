//===- Generators.cpp - ONNX ops that make tensors from shapes ------------===//
//
// Constant, Shape, Size, ConstantOfShape and Range produce constants at
// import (every shape is static by then). Trilu becomes a select with a
// constant mask; CumSum a matmul with a constant triangular matrix.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;

namespace kiln::frontend {
namespace {

using Result = FailureOr<Value>;

LogicalResult setConstant(NodeContext &ctx, ElementsAttr value) {
  return ctx.setResult(ConstantOp::create(ctx.b(), ctx.loc(), value));
}

/// Largest tensor Range/ConstantOfShape may materialize.
constexpr int64_t kMaxGeneratedElements = int64_t(1) << 28;

LogicalResult convertConstant(NodeContext &ctx) {
  Builder &b = ctx.b();
  auto vector = [&](Type type, int64_t n) {
    return RankedTensorType::get({n}, type);
  };
  if (ctx.attribute("value")) {
    FailureOr<ElementsAttr> value = ctx.tensorAttr("value");
    return failed(value) ? failure() : setConstant(ctx, *value);
  }
  if (std::optional<float> f = ctx.floatAttr("value_float"))
    return setConstant(ctx, DenseElementsAttr::get(
                                RankedTensorType::get({}, b.getF32Type()), *f));
  if (std::optional<int64_t> i = ctx.intAttr("value_int"))
    return setConstant(ctx, DenseElementsAttr::get(
                                RankedTensorType::get({}, b.getI64Type()), *i));
  if (ctx.attribute("value_floats")) {
    SmallVector<float> values = *ctx.floatsAttr("value_floats");
    return setConstant(
        ctx, DenseElementsAttr::get(vector(b.getF32Type(), values.size()),
                                    ArrayRef<float>(values)));
  }
  if (ctx.attribute("value_ints")) {
    SmallVector<int64_t> values = *ctx.intsAttr("value_ints");
    return setConstant(
        ctx, DenseElementsAttr::get(vector(b.getI64Type(), values.size()),
                                    ArrayRef<int64_t>(values)));
  }
  return ctx.emitError() << "only tensor, float(s) and int(s) values are "
                            "supported (not strings or sparse tensors)";
}

/// Shape (with opset 15's start/end), known at import.
LogicalResult convertShape(NodeContext &ctx) {
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t rank = shape.size();
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t start = clampIndex(ctx.intAttr("start", 0));
  int64_t end = clampIndex(ctx.intAttr("end", rank));
  return ctx.setResult(
      ctx.i64Vector(shape.slice(start, std::max<int64_t>(end - start, 0))));
}

LogicalResult convertSize(NodeContext &ctx) {
  auto type = RankedTensorType::get({}, ctx.b().getI64Type());
  return setConstant(
      ctx, DenseElementsAttr::get(type, ctx.inputType(0).getNumElements()));
}

LogicalResult convertConstantOfShape(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  FailureOr<int64_t> count = checkedElementCount(*shape, ctx.loc());
  if (failed(count))
    return failure();
  if (*count > kMaxGeneratedElements)
    return ctx.emitError() << "would create " << *count << " elements";
  Attribute element = ctx.b().getF32FloatAttr(0.0f);
  if (ctx.attribute("value")) {
    FailureOr<ElementsAttr> value = ctx.tensorAttr("value");
    if (failed(value))
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(*value);
    if (!dense || dense.getNumElements() != 1)
      return ctx.emitError() << "value must hold exactly one element";
    element = dense.getSplatValue<Attribute>();
  }
  Type elementType = cast<TypedAttr>(element).getType();
  return setConstant(
      ctx, DenseElementsAttr::get(RankedTensorType::get(*shape, elementType),
                                  element));
}

LogicalResult convertRange(NodeContext &ctx) {
  FailureOr<double> start = ctx.constantScalar(0, "start");
  FailureOr<double> limit = ctx.constantScalar(1, "limit");
  FailureOr<double> delta = ctx.constantScalar(2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (*delta == 0)
    return ctx.emitError() << "delta must not be 0";
  double steps = std::ceil((*limit - *start) / *delta);
  if (!(steps <= static_cast<double>(kMaxGeneratedElements)))
    return ctx.emitError() << "would create too many elements";
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(steps));
  Type type = ctx.inputElementType(0);
  auto resultType = RankedTensorType::get({n}, type);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i) {
    double v = *start + i * *delta;
    values.push_back(isa<FloatType>(type)
                         ? Attribute(FloatAttr::get(type, v))
                         : Attribute(IntegerAttr::get(
                               type, static_cast<int64_t>(std::llround(v)))));
  }
  return setConstant(ctx, DenseElementsAttr::get(resultType, values));
}

/// Keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last
/// two dims, zeroing the rest.
LogicalResult convertTrilu(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  if (rank < 2)
    return ctx.emitError() << "needs rank >= 2";
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    FailureOr<double> given = ctx.constantScalar(1, "k");
    if (failed(given))
      return failure();
    k = static_cast<int64_t>(*given);
  }
  bool upper = ctx.intAttr("upper", 1) != 0;
  int64_t rows = ctx.inputType(0).getDimSize(rank - 2);
  int64_t cols = ctx.inputType(0).getDimSize(rank - 1);
  SmallVector<bool> mask;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.push_back(upper ? j - i >= k : j - i <= k);
  Value maskValue = ConstantOp::create(
      ctx.b(), ctx.loc(),
      DenseElementsAttr::get(
          RankedTensorType::get({rows, cols}, ctx.b().getI1Type()), mask));
  Value zero = ctx.scalar(ctx.inputElementType(0), 0.0);
  return ctx.setResult(ctx.create<SelectOp>(maskValue, ctx.input(0), zero));
}

/// CumSum along `axis` as x' @ T with T[i][j] = 1 where i contributes to j,
/// x' the input with that axis moved last.
LogicalResult convertCumSum(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  FailureOr<double> axisValue = ctx.constantScalar(1, "axis");
  if (failed(axisValue))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, static_cast<int64_t>(*axisValue), rank);
  if (failed(axis))
    return failure();
  bool exclusive = ctx.intAttr("exclusive", 0) != 0;
  bool reverse = ctx.intAttr("reverse", 0) != 0;
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t n = shape[*axis];
  Type type = ctx.inputElementType(0);
  SmallVector<Attribute> triangle;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      bool contributes = (reverse ? i >= j : i <= j) && !(exclusive && i == j);
      double v = contributes ? 1.0 : 0.0;
      triangle.push_back(isa<FloatType>(type)
                             ? Attribute(FloatAttr::get(type, v))
                             : Attribute(IntegerAttr::get(type, int64_t(v))));
    }
  Value weights = ConstantOp::create(
      ctx.b(), ctx.loc(),
      DenseElementsAttr::get(RankedTensorType::get({n, n}, type), triangle));
  // Move the axis last, view as [rows, n], multiply, and undo both.
  SmallVector<int64_t> perm, movedShape;
  for (int64_t i = 0; i < rank; ++i)
    if (i != *axis)
      perm.push_back(i);
  perm.push_back(*axis);
  for (int64_t p : perm)
    movedShape.push_back(shape[p]);
  Result moved = ctx.create<TransposeOp>(ctx.input(0), perm);
  if (failed(moved))
    return failure();
  int64_t rowCount = n ? ctx.inputType(0).getNumElements() / n : 0;
  Result matrix = ctx.reshape(*moved, {rowCount, n});
  if (failed(matrix))
    return failure();
  Result summed = ctx.create<MatmulOp>(*matrix, weights);
  if (failed(summed))
    return failure();
  Result unflattened = ctx.reshape(*summed, movedShape);
  if (failed(unflattened))
    return failure();
  SmallVector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i)
    inverse[perm[i]] = i;
  return ctx.setResult(ctx.create<TransposeOp>(*unflattened, inverse));
}

} // namespace

void registerGeneratorConverters(ConverterRegistry &r) {
  r.add("Constant", convertConstant, 0);
  r.add("Shape", convertShape);
  r.add("Size", convertSize);
  r.add("ConstantOfShape", convertConstantOfShape);
  r.add("Range", convertRange, 3);
  r.add("Trilu", convertTrilu);
  r.add("CumSum", convertCumSum, 2);
}

} // namespace kiln::frontend
