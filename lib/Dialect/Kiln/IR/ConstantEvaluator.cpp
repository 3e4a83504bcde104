//===- ConstantEvaluator.cpp - evaluate kiln ops on integer constants -----===//

#include "kiln/Dialect/Kiln/IR/ConstantEvaluator.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Support/ShapeUtils.h"

#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;

namespace kiln {
namespace {

/// A small integer tensor in row-major order, values widened to int64_t.
struct IntTensor {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> values;
};

std::optional<IntTensor> readIntTensor(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(attr);
  if (!dense || !dense.getType().hasStaticShape())
    return std::nullopt;
  auto elementType = cast<IntegerType>(dense.getElementType());
  bool zeroExtend = elementType.isUnsigned() || elementType.getWidth() == 1;
  IntTensor tensor;
  tensor.shape.assign(dense.getType().getShape().begin(),
                      dense.getType().getShape().end());
  for (const APInt &value : dense.getValues<APInt>())
    tensor.values.push_back(zeroExtend ? value.getZExtValue()
                                       : value.getSExtValue());
  return tensor;
}

/// The result type of `op` when it is a static integer tensor no larger than
/// `maxElements`.
RankedTensorType evaluableResultType(Operation *op, int64_t maxElements) {
  if (op->getNumResults() != 1)
    return {};
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() ||
      !isa<IntegerType>(type.getElementType()) ||
      type.getNumElements() > maxElements)
    return {};
  return type;
}

Attribute writeIntTensor(ArrayRef<int64_t> values, RankedTensorType type) {
  auto elementType = cast<IntegerType>(type.getElementType());
  SmallVector<APInt> bits;
  for (int64_t value : values)
    bits.push_back(APInt(elementType.getWidth(), value,
                         /*isSigned=*/!elementType.isUnsigned(),
                         /*implicitTrunc=*/true));
  return DenseIntElementsAttr::get(type, bits);
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Calls `visit(outputIndex)` for every multi-index of `shape`, row-major.
void forEachIndex(ArrayRef<int64_t> shape,
                  llvm::function_ref<void(ArrayRef<int64_t>)> visit) {
  if (shape::numElements(shape) == 0)
    return;
  SmallVector<int64_t> index(shape.size(), 0);
  while (true) {
    visit(index);
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Value of `tensor` at the broadcast position of an output multi-index.
int64_t broadcastRead(const IntTensor &tensor, ArrayRef<int64_t> outIndex) {
  size_t offset = outIndex.size() - tensor.shape.size();
  SmallVector<int64_t> strides = stridesOf(tensor.shape);
  int64_t linear = 0;
  for (size_t d = 0; d < tensor.shape.size(); ++d)
    if (tensor.shape[d] != 1)
      linear += outIndex[offset + d] * strides[d];
  return tensor.values[linear];
}

using Combine = std::function<std::optional<int64_t>(ArrayRef<int64_t>)>;

/// Elementwise evaluation with numpy broadcasting; `combine` returns
/// std::nullopt where the op is undefined (division by zero).
Attribute evaluateElementwise(ArrayRef<IntTensor> operands,
                              RankedTensorType type, const Combine &combine) {
  SmallVector<int64_t> results;
  bool defined = true;
  forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t, 3> args;
    for (const IntTensor &operand : operands)
      args.push_back(broadcastRead(operand, index));
    std::optional<int64_t> value = combine(args);
    defined &= value.has_value();
    results.push_back(value.value_or(0));
  });
  return defined ? writeIntTensor(results, type) : Attribute();
}

std::optional<int64_t> integerPow(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return std::nullopt;
  int64_t result = 1;
  while (exponent-- > 0)
    result *= base;
  return result;
}

bool compare(CompareDirection direction, int64_t a, int64_t b) {
  switch (direction) {
  case CompareDirection::EQ:
    return a == b;
  case CompareDirection::NE:
    return a != b;
  case CompareDirection::LT:
    return a < b;
  case CompareDirection::LE:
    return a <= b;
  case CompareDirection::GT:
    return a > b;
  case CompareDirection::GE:
    return a >= b;
  }
  llvm_unreachable("unknown compare direction");
}

/// The elementwise function an op computes, or null for other ops.
Combine elementwiseFunction(Operation *op) {
  using Args = ArrayRef<int64_t>;
  auto binary = [](auto fn) -> Combine {
    return [fn](Args a) -> std::optional<int64_t> { return fn(a[0], a[1]); };
  };
  return llvm::TypeSwitch<Operation *, Combine>(op)
      .Case<AddOp>([&](auto) { return binary(std::plus<int64_t>()); })
      .Case<SubOp>([&](auto) { return binary(std::minus<int64_t>()); })
      .Case<MulOp>([&](auto) { return binary(std::multiplies<int64_t>()); })
      .Case<DivOp>([&](auto) {
        return binary([](int64_t a, int64_t b) -> std::optional<int64_t> {
          if (b == 0)
            return std::nullopt;
          return a / b;
        });
      })
      .Case<PowOp>([&](auto) { return binary(integerPow); })
      .Case<MaxOp>([&](auto) {
        return binary([](int64_t a, int64_t b) { return std::max(a, b); });
      })
      .Case<MinOp>([&](auto) {
        return binary([](int64_t a, int64_t b) { return std::min(a, b); });
      })
      .Case<AndOp>([&](auto) { return binary(std::bit_and<int64_t>()); })
      .Case<OrOp>([&](auto) { return binary(std::bit_or<int64_t>()); })
      .Case<XorOp>([&](auto) { return binary(std::bit_xor<int64_t>()); })
      .Case<CompareOp>([&](CompareOp cmp) {
        CompareDirection direction = cmp.getDirection();
        return binary([direction](int64_t a, int64_t b) -> int64_t {
          return compare(direction, a, b);
        });
      })
      .Case<SelectOp>([&](auto) -> Combine {
        return
            [](Args a) -> std::optional<int64_t> { return a[0] ? a[1] : a[2]; };
      })
      .Case<NegOp>([&](auto) -> Combine {
        return [](Args a) -> std::optional<int64_t> { return -a[0]; };
      })
      .Case<AbsOp>([&](auto) -> Combine {
        return [](Args a) -> std::optional<int64_t> {
          return a[0] < 0 ? -a[0] : a[0];
        };
      })
      .Case<NotOp>([&](auto) -> Combine {
        return [](Args a) -> std::optional<int64_t> { return !a[0]; };
      })
      .Case<CastOp>([&](CastOp cast) -> Combine {
        // Integer -> integer only; bool results are `x != 0` (ONNX Cast).
        if (cast.getTo().isInteger(1))
          return [](Args a) -> std::optional<int64_t> { return a[0] != 0; };
        return [](Args a) -> std::optional<int64_t> { return a[0]; };
      })
      .Default([](Operation *) { return Combine(); });
}

/// Data movement: each output element is one input element.
using SourceIndex = std::function<int64_t(ArrayRef<int64_t>)>;

Attribute gatherElements(const IntTensor &input, RankedTensorType type,
                         const SourceIndex &source) {
  SmallVector<int64_t> results;
  forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index) {
    results.push_back(input.values[source(index)]);
  });
  return writeIntTensor(results, type);
}

int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides = stridesOf(shape);
  int64_t linear = 0;
  for (size_t d = 0; d < index.size(); ++d)
    linear += index[d] * strides[d];
  return linear;
}

/// `axis` in [0, rank); callers only evaluate verified ops, so it is valid.
int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

Attribute evaluateTranspose(TransposeOp op, const IntTensor &input,
                            RankedTensorType type) {
  ArrayRef<int64_t> perm = op.getPerm();
  return gatherElements(input, type, [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> source(index.size());
    for (size_t d = 0; d < perm.size(); ++d)
      source[perm[d]] = index[d];
    return linearize(source, input.shape);
  });
}

Attribute evaluateSlice(SliceOp op, const IntTensor &input,
                        RankedTensorType type) {
  ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
  return gatherElements(input, type, [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> source(index.size());
    for (size_t d = 0; d < index.size(); ++d)
      source[d] = starts[d] + index[d] * steps[d];
    return linearize(source, input.shape);
  });
}

Attribute evaluateGather(GatherOp op, const IntTensor &data,
                         const IntTensor &indices, RankedTensorType type) {
  // I64Attr getters return uint64_t: read the axis back as signed.
  int64_t axis = normalizedAxis(op.getAxis(), data.shape.size());
  int64_t indexRank = indices.shape.size();
  int64_t axisSize = data.shape[axis];
  for (int64_t i : indices.values)
    if (i < -axisSize || i >= axisSize)
      return {}; // Out of range: leave it for the run-time check.
  return gatherElements(data, type, [&](ArrayRef<int64_t> index) {
    ArrayRef<int64_t> indexPart = index.slice(axis, indexRank);
    int64_t i = indices.values[linearize(indexPart, indices.shape)];
    SmallVector<int64_t> source(index.take_front(axis));
    source.push_back(i < 0 ? i + axisSize : i);
    llvm::append_range(source, index.drop_front(axis + indexRank));
    return linearize(source, data.shape);
  });
}

Attribute evaluateConcat(ConcatOp op, ArrayRef<IntTensor> inputs,
                         RankedTensorType type) {
  int64_t axis = normalizedAxis(op.getAxis(), type.getRank());
  SmallVector<int64_t> results;
  forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> source(index);
    for (const IntTensor &input : inputs) {
      if (source[axis] < input.shape[axis]) {
        results.push_back(input.values[linearize(source, input.shape)]);
        return;
      }
      source[axis] -= input.shape[axis];
    }
  });
  return writeIntTensor(results, type);
}

} // namespace

Attribute evaluateIntegerOp(Operation *op, ArrayRef<Attribute> operands,
                            int64_t maxElements) {
  RankedTensorType type = evaluableResultType(op, maxElements);
  if (!type)
    return {};
  if (auto shapeOf = dyn_cast<ShapeOfOp>(op)) {
    auto input = cast<RankedTensorType>(shapeOf.getInput().getType());
    if (!input.hasStaticShape())
      return {};
    return writeIntTensor(input.getShape(), type);
  }
  SmallVector<IntTensor> inputs;
  for (Attribute attr : operands) {
    std::optional<IntTensor> tensor = readIntTensor(attr);
    if (!tensor)
      return {};
    inputs.push_back(std::move(*tensor));
  }
  if (inputs.empty())
    return {};
  if (Combine combine = elementwiseFunction(op)) {
    if (isa<CastOp>(op) &&
        !isa<IntegerType>(getElementTypeOrSelf(op->getOperand(0).getType())))
      return {};
    return evaluateElementwise(inputs, type, combine);
  }
  return llvm::TypeSwitch<Operation *, Attribute>(op)
      .Case<ReshapeOp>(
          [&](auto) { return writeIntTensor(inputs.front().values, type); })
      .Case<ExpandOp>([&](auto) {
        return evaluateElementwise(
            inputs.front(), type,
            [](ArrayRef<int64_t> a) { return std::optional<int64_t>(a[0]); });
      })
      .Case<TransposeOp>([&](TransposeOp transpose) {
        return evaluateTranspose(transpose, inputs.front(), type);
      })
      .Case<SliceOp>([&](SliceOp slice) {
        return evaluateSlice(slice, inputs.front(), type);
      })
      .Case<GatherOp>([&](GatherOp gather) {
        return evaluateGather(gather, inputs[0], inputs[1], type);
      })
      .Case<ConcatOp>(
          [&](ConcatOp concat) { return evaluateConcat(concat, inputs, type); })
      .Default([](Operation *) { return Attribute(); });
}

} // namespace kiln
