//===- Elementwise.cpp - ONNX elementwise ops to kiln ---------------------===//
//
// Unary and binary arithmetic, comparisons, logic, casts and activations.
// Activations kiln has no op for are written out in kiln ops (ONNX defines
// them that way), so fusion sees plain elementwise chains.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <limits>

using namespace mlir;

namespace kiln::frontend {
namespace {

using Result = FailureOr<Value>;

template <typename OpTy> LogicalResult convertUnary(NodeContext &ctx) {
  Result result = ctx.create<OpTy>(ctx.input(0));
  return ctx.setResult(result);
}

template <typename OpTy> LogicalResult convertBinary(NodeContext &ctx) {
  Result result = ctx.create<OpTy>(ctx.input(0), ctx.input(1));
  return ctx.setResult(result);
}

/// Sum/Max/Min/Mean of any number of inputs, folded left.
template <typename OpTy> Result foldInputs(NodeContext &ctx) {
  Value accumulated = ctx.input(0);
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      continue;
    Result next = ctx.create<OpTy>(accumulated, ctx.input(i));
    if (failed(next))
      return failure();
    accumulated = *next;
  }
  return accumulated;
}

template <typename OpTy> LogicalResult convertVariadic(NodeContext &ctx) {
  Result result = foldInputs<OpTy>(ctx);
  return ctx.setResult(result);
}

LogicalResult convertMean(NodeContext &ctx) {
  Result sum = foldInputs<AddOp>(ctx);
  if (failed(sum))
    return failure();
  Value count = ctx.scalar(ctx.inputElementType(0), ctx.numInputs());
  Result mean = ctx.create<DivOp>(*sum, count);
  return ctx.setResult(mean);
}

ConvertFn compare(CompareDirection direction) {
  return [direction](NodeContext &ctx) -> LogicalResult {
    Result result =
        ctx.create<CompareOp>(direction, ctx.input(0), ctx.input(1));
    return ctx.setResult(result);
  };
}

LogicalResult convertPow(NodeContext &ctx) {
  Value exponent = ctx.input(1);
  Type baseType = ctx.inputElementType(0);
  if (ctx.inputElementType(1) != baseType) {
    Result cast = ctx.create<CastOp>(exponent, baseType);
    if (failed(cast))
      return failure();
    exponent = *cast;
  }
  Result result = ctx.create<PowOp>(ctx.input(0), exponent);
  return ctx.setResult(result);
}

LogicalResult convertWhere(NodeContext &ctx) {
  Result result =
      ctx.create<SelectOp>(ctx.input(0), ctx.input(1), ctx.input(2));
  return ctx.setResult(result);
}

LogicalResult convertCast(NodeContext &ctx) {
  std::optional<int64_t> to = ctx.intAttr("to");
  if (!to)
    return ctx.emitError() << "needs the 'to' attribute";
  FailureOr<Type> type = importElementType(*to, ctx.context(), ctx.loc());
  if (failed(type))
    return failure();
  Result result = ctx.create<CastOp>(ctx.input(0), *type);
  return ctx.setResult(result);
}

LogicalResult convertCastLike(NodeContext &ctx) {
  Result result = ctx.create<CastOp>(ctx.input(0), ctx.inputElementType(1));
  return ctx.setResult(result);
}

LogicalResult convertIdentity(NodeContext &ctx) {
  return ctx.setResult(ctx.input(0));
}

/// Inference-mode dropout: the identity, and an all-true mask. Training mode
/// (opset 12's training_mode input) drops random elements, which kiln does
/// not do: it is refused unless the ratio is 0.
LogicalResult convertDropout(NodeContext &ctx) {
  if (ctx.hasInput(2)) {
    FailureOr<double> training = ctx.constantScalar(2, "training_mode");
    if (failed(training))
      return failure();
    FailureOr<double> ratio =
        ctx.hasInput(1) ? ctx.constantScalar(1, "ratio") : 0.5;
    if (failed(ratio))
      return failure();
    if (*training != 0 && *ratio != 0)
      return ctx.emitError() << "training mode with a non-zero ratio is not "
                                "supported (inference only)";
  }
  auto maskType = ctx.inputType(0).clone(ctx.b().getI1Type());
  Value mask = ConstantOp::create(
      ctx.b(), ctx.loc(),
      DenseElementsAttr::get(maskType, ctx.b().getBoolAttr(true)));
  return ctx.setResults({ctx.input(0), mask});
}

LogicalResult convertLeakyRelu(NodeContext &ctx) {
  Result result = ctx.create<LeakyReluOp>(
      ctx.input(0), ctx.b().getF64FloatAttr(ctx.floatAttr("alpha", 0.01f)));
  return ctx.setResult(result);
}

/// clamp(x) with f64 bounds (infinite where a side is open). Like
/// numpy.clip, min > max makes every element max.
Result clamp(NodeContext &ctx, Value x, double lo, double hi) {
  return ctx.create<ClampOp>(x, ctx.b().getF64FloatAttr(std::min(lo, hi)),
                             ctx.b().getF64FloatAttr(hi));
}

/// Clip: bounds from attributes before opset 11, from optional inputs after.
/// Constant bounds become one kiln.clamp; others become max/min.
LogicalResult convertClip(NodeContext &ctx) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  Value x = ctx.input(0);
  if (ctx.opset() < 11) {
    Result result =
        clamp(ctx, x, ctx.floatAttr("min", -inf), ctx.floatAttr("max", inf));
    return ctx.setResult(result);
  }
  double bounds[2] = {-inf, inf};
  bool constantBounds = true;
  for (size_t i = 1; i <= 2; ++i) {
    if (!ctx.hasInput(i))
      continue;
    DenseElementsAttr value;
    if (matchPattern(ctx.input(i), m_Constant(&value))) {
      FailureOr<double> bound = ctx.constantScalar(i, "Clip bound");
      if (failed(bound))
        return failure();
      bounds[i - 1] = *bound;
    } else {
      constantBounds = false;
    }
  }
  if (constantBounds) {
    Result result = clamp(ctx, x, bounds[0], bounds[1]);
    return ctx.setResult(result);
  }
  if (ctx.hasInput(1)) {
    Result lower = ctx.create<MaxOp>(x, ctx.input(1));
    if (failed(lower))
      return failure();
    x = *lower;
  }
  if (ctx.hasInput(2)) {
    Result upper = ctx.create<MinOp>(x, ctx.input(2));
    if (failed(upper))
      return failure();
    x = *upper;
  }
  return ctx.setResult(x);
}

/// alpha * x + beta, elementwise with scalar constants.
Result affine(NodeContext &ctx, Value x, double alpha, double beta) {
  Type type = getElementTypeOrSelf(x);
  Result scaled = ctx.create<MulOp>(x, ctx.scalar(type, alpha));
  if (failed(scaled))
    return failure();
  return ctx.create<AddOp>(*scaled, ctx.scalar(type, beta));
}

LogicalResult convertHardSigmoid(NodeContext &ctx) {
  Result linear = affine(ctx, ctx.input(0), ctx.floatAttr("alpha", 0.2f),
                         ctx.floatAttr("beta", 0.5f));
  if (failed(linear))
    return failure();
  Result result = clamp(ctx, *linear, 0.0, 1.0);
  return ctx.setResult(result);
}

/// x * hard_sigmoid(x) with alpha = 1/6, beta = 0.5.
LogicalResult convertHardSwish(NodeContext &ctx) {
  Result linear = affine(ctx, ctx.input(0), 1.0 / 6.0, 0.5);
  if (failed(linear))
    return failure();
  Result gate = clamp(ctx, *linear, 0.0, 1.0);
  if (failed(gate))
    return failure();
  Result result = ctx.create<MulOp>(ctx.input(0), *gate);
  return ctx.setResult(result);
}

/// x < 0 ? alpha * (exp(x) - 1) : x, optionally scaled by gamma (Selu).
Result expLinear(NodeContext &ctx, double alpha, double gamma) {
  Value x = ctx.input(0);
  Type type = ctx.inputElementType(0);
  Result e = ctx.create<ExpOp>(x);
  if (failed(e))
    return failure();
  Result negative = affine(ctx, *e, alpha, -alpha);
  if (failed(negative))
    return failure();
  Result isNegative =
      ctx.create<CompareOp>(CompareDirection::LE, x, ctx.scalar(type, 0.0));
  if (failed(isNegative))
    return failure();
  Result selected = ctx.create<SelectOp>(*isNegative, *negative, x);
  if (failed(selected) || gamma == 1.0)
    return selected;
  return ctx.create<MulOp>(*selected, ctx.scalar(type, gamma));
}

LogicalResult convertElu(NodeContext &ctx) {
  Result result = expLinear(ctx, ctx.floatAttr("alpha", 1.0f), 1.0);
  return ctx.setResult(result);
}

LogicalResult convertSelu(NodeContext &ctx) {
  Result result =
      expLinear(ctx, ctx.floatAttr("alpha", 1.67326319217681884765625f),
                ctx.floatAttr("gamma", 1.05070102214813232421875f));
  return ctx.setResult(result);
}

/// log(exp(x) + 1).
LogicalResult convertSoftplus(NodeContext &ctx) {
  Result e = ctx.create<ExpOp>(ctx.input(0));
  if (failed(e))
    return failure();
  Result shifted =
      ctx.create<AddOp>(*e, ctx.scalar(ctx.inputElementType(0), 1.0));
  if (failed(shifted))
    return failure();
  Result result = ctx.create<LogOp>(*shifted);
  return ctx.setResult(result);
}

/// x < 0 ? slope * x : x, slope broadcast to x.
LogicalResult convertPRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  Result scaled = ctx.create<MulOp>(x, ctx.input(1));
  Result isNegative = ctx.create<CompareOp>(
      CompareDirection::LT, x, ctx.scalar(ctx.inputElementType(0), 0.0));
  if (failed(scaled) || failed(isNegative))
    return failure();
  Result result = ctx.create<SelectOp>(*isNegative, *scaled, x);
  return ctx.setResult(result);
}

/// x / (1 + |x|).
LogicalResult convertSoftsign(NodeContext &ctx) {
  Result magnitude = ctx.create<AbsOp>(ctx.input(0));
  if (failed(magnitude))
    return failure();
  Result denominator =
      ctx.create<AddOp>(*magnitude, ctx.scalar(ctx.inputElementType(0), 1.0));
  if (failed(denominator))
    return failure();
  Result result = ctx.create<DivOp>(ctx.input(0), *denominator);
  return ctx.setResult(result);
}

/// x > alpha ? x : 0.
LogicalResult convertThresholdedRelu(NodeContext &ctx) {
  Type type = ctx.inputElementType(0);
  Result above =
      ctx.create<CompareOp>(CompareDirection::GT, ctx.input(0),
                            ctx.scalar(type, ctx.floatAttr("alpha", 1.0f)));
  if (failed(above))
    return failure();
  Result result =
      ctx.create<SelectOp>(*above, ctx.input(0), ctx.scalar(type, 0.0));
  return ctx.setResult(result);
}

LogicalResult convertGelu(NodeContext &ctx) {
  std::string approximate = ctx.stringAttr("approximate").value_or("none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.emitError() << "unknown approximate '" << approximate << "'";
  Result result = ctx.create<GeluOp>(
      ctx.input(0), approximate == "tanh" ? GeluApproximation::Tanh
                                          : GeluApproximation::None);
  return ctx.setResult(result);
}

} // namespace

void registerElementwiseConverters(ConverterRegistry &r) {
  r.add("Abs", convertUnary<AbsOp>);
  r.add("Neg", convertUnary<NegOp>);
  r.add("Exp", convertUnary<ExpOp>);
  r.add("Log", convertUnary<LogOp>);
  r.add("Sqrt", convertUnary<SqrtOp>);
  r.add("Reciprocal", convertUnary<ReciprocalOp>);
  r.add("Tanh", convertUnary<TanhOp>);
  r.add("Sigmoid", convertUnary<SigmoidOp>);
  r.add("Erf", convertUnary<ErfOp>);
  r.add("Relu", convertUnary<ReluOp>);
  r.add("Floor", convertUnary<FloorOp>);
  r.add("Ceil", convertUnary<CeilOp>);
  r.add("Round", convertUnary<RoundOp>);
  r.add("Sign", convertUnary<SignOp>);
  r.add("Not", convertUnary<NotOp>);
  r.add("Add", convertBinary<AddOp>, 2);
  r.add("Sub", convertBinary<SubOp>, 2);
  r.add("Mul", convertBinary<MulOp>, 2);
  r.add("Div", convertBinary<DivOp>, 2);
  r.add("Pow", convertPow, 2);
  r.add("And", convertBinary<AndOp>, 2);
  r.add("Or", convertBinary<OrOp>, 2);
  r.add("Xor", convertBinary<XorOp>, 2);
  r.add("Sum", convertVariadic<AddOp>);
  r.add("Max", convertVariadic<MaxOp>);
  r.add("Min", convertVariadic<MinOp>);
  r.add("Mean", convertMean);
  r.add("Equal", compare(CompareDirection::EQ), 2);
  r.add("Less", compare(CompareDirection::LT), 2);
  r.add("LessOrEqual", compare(CompareDirection::LE), 2);
  r.add("Greater", compare(CompareDirection::GT), 2);
  r.add("GreaterOrEqual", compare(CompareDirection::GE), 2);
  r.add("Where", convertWhere, 3);
  r.add("Cast", convertCast);
  r.add("CastLike", convertCastLike, 2);
  r.add("Identity", convertIdentity);
  r.add("Dropout", convertDropout);
  r.add("LeakyRelu", convertLeakyRelu);
  r.add("Clip", convertClip);
  r.add("HardSigmoid", convertHardSigmoid);
  r.add("HardSwish", convertHardSwish);
  r.add("Elu", convertElu);
  r.add("Selu", convertSelu);
  r.add("Softplus", convertSoftplus);
  r.add("PRelu", convertPRelu, 2);
  r.add("Gelu", convertGelu);
  r.add("Softsign", convertSoftsign);
  r.add("ThresholdedRelu", convertThresholdedRelu);
}

} // namespace kiln::frontend
