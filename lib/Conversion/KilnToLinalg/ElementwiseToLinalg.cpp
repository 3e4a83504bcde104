//===- ElementwiseToLinalg.cpp - kiln elementwise ops to linalg.generic ---===//
//
// Every op with the kiln Elementwise trait becomes one parallel
// linalg.generic whose indexing maps express the numpy broadcast; the body
// is the op's scalar computation, signed or unsigned as the kiln type says.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Support/Polynomial.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using detail::scalarConstant;

/// Scalar arithmetic for one element type, picking float, signed or unsigned
/// integer ops.
class ScalarEmitter {
public:
  ScalarEmitter(OpBuilder &b, Location loc, Type kilnElementType)
      : b(b), loc(loc), isFloat(isa<FloatType>(kilnElementType)),
        // bool (i1) orders false < true: compare it unsigned.
        isUnsigned(kilnElementType.isUnsignedInteger() ||
                   kilnElementType.isInteger(1)) {}

  Value constant(Value like, double v) {
    return scalarConstant(b, loc, like.getType(), v);
  }
  Value add(Value x, Value y) {
    return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult()
                   : arith::AddIOp::create(b, loc, x, y).getResult();
  }
  Value sub(Value x, Value y) {
    return isFloat ? arith::SubFOp::create(b, loc, x, y).getResult()
                   : arith::SubIOp::create(b, loc, x, y).getResult();
  }
  Value mul(Value x, Value y) {
    return isFloat ? arith::MulFOp::create(b, loc, x, y).getResult()
                   : arith::MulIOp::create(b, loc, x, y).getResult();
  }
  Value div(Value x, Value y) {
    if (isFloat)
      return arith::DivFOp::create(b, loc, x, y);
    return isUnsigned ? arith::DivUIOp::create(b, loc, x, y).getResult()
                      : arith::DivSIOp::create(b, loc, x, y).getResult();
  }
  Value max(Value x, Value y) {
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, x, y);
    return isUnsigned ? arith::MaxUIOp::create(b, loc, x, y).getResult()
                      : arith::MaxSIOp::create(b, loc, x, y).getResult();
  }
  /// max(x, bound) for a constant bound, keeping a NaN x: x86 does
  /// `x < bound ? bound : x` in one max instruction, where maximumf needs
  /// three to propagate a NaN from either side.
  Value maxWithConstant(Value x, double bound) {
    if (!isFloat)
      return max(x, constant(x, bound));
    Value c = constant(x, bound);
    return select(compare(CompareDirection::LT, x, c), c, x);
  }
  /// min(x, bound) for a constant bound, keeping a NaN x.
  Value minWithConstant(Value x, double bound) {
    if (!isFloat)
      return min(x, constant(x, bound));
    Value c = constant(x, bound);
    return select(compare(CompareDirection::GT, x, c), c, x);
  }
  Value min(Value x, Value y) {
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, x, y);
    return isUnsigned ? arith::MinUIOp::create(b, loc, x, y).getResult()
                      : arith::MinSIOp::create(b, loc, x, y).getResult();
  }
  Value compare(CompareDirection direction, Value x, Value y) {
    if (isFloat) {
      static constexpr arith::CmpFPredicate predicates[] = {
          arith::CmpFPredicate::OEQ, arith::CmpFPredicate::UNE,
          arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE,
          arith::CmpFPredicate::OGT, arith::CmpFPredicate::OGE};
      return arith::CmpFOp::create(
          b, loc, predicates[static_cast<int>(direction)], x, y);
    }
    static constexpr arith::CmpIPredicate signedPredicates[] = {
        arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
        arith::CmpIPredicate::slt, arith::CmpIPredicate::sle,
        arith::CmpIPredicate::sgt, arith::CmpIPredicate::sge};
    static constexpr arith::CmpIPredicate unsignedPredicates[] = {
        arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
        arith::CmpIPredicate::ult, arith::CmpIPredicate::ule,
        arith::CmpIPredicate::ugt, arith::CmpIPredicate::uge};
    auto predicate =
        (isUnsigned ? unsignedPredicates
                    : signedPredicates)[static_cast<int>(direction)];
    return arith::CmpIOp::create(b, loc, predicate, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// -1, 0 or 1.
  Value sign(Value x) {
    Value zero = constant(x, 0);
    Value positive = compare(CompareDirection::GT, x, zero);
    Value negative = compare(CompareDirection::LT, x, zero);
    return select(positive, constant(x, 1),
                  select(negative, constant(x, -1), zero));
  }
  /// Element type conversion with ONNX Cast semantics.
  Value cast(Value x, Type to, bool toUnsigned) {
    Type from = x.getType();
    if (from == to)
      return x;
    if (to.isInteger(1)) // x != 0
      return compare(CompareDirection::NE, x, constant(x, 0));
    auto fromFloat = dyn_cast<FloatType>(from);
    auto toFloat = dyn_cast<FloatType>(to);
    if (fromFloat && toFloat)
      return fromFloat.getWidth() < toFloat.getWidth()
                 ? arith::ExtFOp::create(b, loc, to, x).getResult()
                 : arith::TruncFOp::create(b, loc, to, x).getResult();
    if (toFloat)
      return isUnsigned || from.isInteger(1)
                 ? arith::UIToFPOp::create(b, loc, to, x).getResult()
                 : arith::SIToFPOp::create(b, loc, to, x).getResult();
    if (fromFloat)
      return toUnsigned ? arith::FPToUIOp::create(b, loc, to, x).getResult()
                        : arith::FPToSIOp::create(b, loc, to, x).getResult();
    unsigned fromWidth = from.getIntOrFloatBitWidth();
    unsigned toWidth = to.getIntOrFloatBitWidth();
    if (fromWidth > toWidth)
      return arith::TruncIOp::create(b, loc, to, x);
    return isUnsigned || from.isInteger(1)
               ? arith::ExtUIOp::create(b, loc, to, x).getResult()
               : arith::ExtSIOp::create(b, loc, to, x).getResult();
  }

  OpBuilder &b;
  Location loc;
  bool isFloat, isUnsigned;
};

/// ln(erfc(a / sqrt(2)) / 2) for a in [0, kGeluTailEnd], lowest degree
/// first: the degree-9 Chebyshev interpolant (numpy, converted to monomials
/// and rounded to f32). Beyond kGeluTailEnd the tail is below 7.7e-9.
constexpr double kGeluLogTail[] = {
    -0x1.62e40ep-1,  -0x1.98892ap-1,  -0x1.45b95ap-2,  -0x1.2de57cp-5,
    0x1.62713ep-8,   -0x1.a60ef8p-12, -0x1.cef1c8p-16, 0x1.62548ap-17,
    -0x1.1f8f18p-20, 0x1.5a8d8cp-25};
constexpr double kGeluTailEnd = 4 * M_SQRT2;

/// x * Phi(x), Phi the standard normal CDF, for f32: with the tail T =
/// (1 - Phi(|x|)) = e^q(|x|) (kGeluLogTail), Phi(x) = 1 - T for x >= 0 and
/// T below, so GELU is x - x T or x T. One exp and a polynomial, no erf: MLIR's
/// erf is a rational function whose three intervals' coefficients are
/// selected per element, then divided (about 40 vector instructions and a
/// vdivps per 16 outputs). The largest error over all f32 inputs is 2.4e-7
/// (absolute); GELU(+inf) = +inf, GELU(-inf) = 0, NaN stays NaN.
Value geluErf(ScalarEmitter &e, Value x) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Value a = math::AbsFOp::create(b, loc, x);
  Value q = emitPolynomial(b, loc, a, kGeluLogTail);
  // q <= ln(1/2) where the tail is used (and x T is 0 elsewhere).
  Value tail = e.mul(x, detail::nonPositiveExp(b, loc, q));
  // Past the fitted range (and for inf, whose x * T would be NaN) x T is 0.
  Value far = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, a,
                                    e.constant(x, kGeluTailEnd));
  tail = e.select(far, e.constant(x, 0), tail);
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                         e.constant(x, 0));
  return e.select(positive, e.sub(x, tail), tail);
}

/// 0.5 * x * (1 + erf(x / sqrt(2))) (geluErf for f32), or its tanh
/// approximation 0.5 * x * (1 + tanh(z)), z = sqrt(2/pi) * (x + 0.044715
/// x^3), computed as x / (1 + 2^w) with w = -2z / ln 2 = x * (a + b x^2):
/// 0.5 (1 + tanh(z)) is 1 / (1 + e^(-2z)) exactly, so one exp2 and one
/// division replace the tanh and the products around it.
Value gelu(ScalarEmitter &e, Value x, GeluApproximation approximation) {
  if (approximation == GeluApproximation::None && x.getType().isF32())
    return geluErf(e, x);
  if (approximation == GeluApproximation::None) {
    Value inner =
        math::ErfOp::create(e.b, e.loc, e.mul(x, e.constant(x, M_SQRT1_2)));
    return e.mul(e.mul(e.constant(x, 0.5), x),
                 e.add(e.constant(x, 1.0), inner));
  }
  double a = -2.0 * std::sqrt(2.0 / M_PI) / M_LN2;
  double b = a * 0.044715;
  Value w = e.mul(x, math::FmaOp::create(e.b, e.loc, e.mul(x, x),
                                         e.constant(x, b), e.constant(x, a)));
  Value pow2 = math::Exp2Op::create(e.b, e.loc, w);
  return e.div(x, e.add(e.constant(x, 1.0), pow2));
}

/// The scalar computation of a kiln elementwise op.
Value emitScalar(Operation *op, ScalarEmitter &e, ValueRange args,
                 Type resultElementType) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Value x = args.empty() ? Value() : args[0];
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<AbsOp>([&](auto) -> Value {
        if (e.isFloat)
          return math::AbsFOp::create(b, loc, x);
        return e.isUnsigned ? x : math::AbsIOp::create(b, loc, x).getResult();
      })
      .Case<NegOp>([&](auto) -> Value {
        return e.isFloat ? arith::NegFOp::create(b, loc, x).getResult()
                         : e.sub(e.constant(x, 0), x);
      })
      .Case<ExpOp>([&](auto) { return math::ExpOp::create(b, loc, x); })
      .Case<LogOp>([&](auto) { return math::LogOp::create(b, loc, x); })
      .Case<SqrtOp>([&](auto) { return math::SqrtOp::create(b, loc, x); })
      .Case<RsqrtOp>([&](auto) { return math::RsqrtOp::create(b, loc, x); })
      .Case<ReciprocalOp>([&](auto) { return e.div(e.constant(x, 1), x); })
      .Case<TanhOp>([&](auto) { return math::TanhOp::create(b, loc, x); })
      .Case<ErfOp>([&](auto) { return math::ErfOp::create(b, loc, x); })
      .Case<SigmoidOp>([&](auto) {
        Value expNeg =
            math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
        return e.div(e.constant(x, 1), e.add(e.constant(x, 1), expNeg));
      })
      .Case<ReluOp>([&](auto) { return e.maxWithConstant(x, 0); })
      .Case<FloorOp>([&](auto) { return math::FloorOp::create(b, loc, x); })
      .Case<CeilOp>([&](auto) { return math::CeilOp::create(b, loc, x); })
      .Case<RoundOp>([&](auto) { return math::RoundEvenOp::create(b, loc, x); })
      .Case<SignOp>([&](auto) { return e.sign(x); })
      .Case<NotOp>([&](auto) {
        return arith::XOrIOp::create(b, loc, x, e.constant(x, 1));
      })
      .Case<LeakyReluOp>([&](LeakyReluOp leaky) {
        Value scaled =
            e.mul(x, e.constant(x, leaky.getAlpha().convertToDouble()));
        return e.select(e.compare(CompareDirection::LT, x, e.constant(x, 0)),
                        scaled, x);
      })
      .Case<ClampOp>([&](ClampOp clamp) {
        double lo = clamp.getMin().convertToDouble();
        double hi = clamp.getMax().convertToDouble();
        Value result = x;
        if (!std::isinf(lo))
          result = e.maxWithConstant(result, lo);
        if (!std::isinf(hi))
          result = e.minWithConstant(result, hi);
        return result;
      })
      .Case<GeluOp>(
          [&](GeluOp op) { return gelu(e, x, op.getApproximation()); })
      .Case<CastOp>([&](CastOp cast) {
        return e.cast(x, resultElementType, cast.getTo().isUnsignedInteger());
      })
      .Case<AddOp>([&](auto) { return e.add(args[0], args[1]); })
      .Case<SubOp>([&](auto) { return e.sub(args[0], args[1]); })
      .Case<MulOp>([&](auto) { return e.mul(args[0], args[1]); })
      .Case<DivOp>([&](auto) { return e.div(args[0], args[1]); })
      .Case<PowOp>([&](auto) -> Value {
        if (e.isFloat)
          return math::PowFOp::create(b, loc, args[0], args[1]);
        return math::IPowIOp::create(b, loc, args[0], args[1]);
      })
      .Case<MaxOp>([&](auto) { return e.max(args[0], args[1]); })
      .Case<MinOp>([&](auto) { return e.min(args[0], args[1]); })
      .Case<AndOp>(
          [&](auto) { return arith::AndIOp::create(b, loc, args[0], args[1]); })
      .Case<OrOp>(
          [&](auto) { return arith::OrIOp::create(b, loc, args[0], args[1]); })
      .Case<XorOp>(
          [&](auto) { return arith::XOrIOp::create(b, loc, args[0], args[1]); })
      .Case<CompareOp>([&](CompareOp cmp) {
        return e.compare(cmp.getDirection(), args[0], args[1]);
      })
      .Case<SelectOp>([&](auto) { return e.select(args[0], args[1], args[2]); })
      .Default([](Operation *op) -> Value {
        llvm::report_fatal_error("kiln op with the Elementwise trait but no "
                                 "scalar lowering: " +
                                 op->getName().getStringRef());
      });
}

/// Matches every op with the kiln Elementwise trait.
struct ElementwiseToGeneric : public ConversionPattern {
  ElementwiseToGeneric(TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchTraitOpTypeTag(),
                          TypeID::get<OpTrait::Elementwise>(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    if (!resultType || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs a static result type");
    // The kiln element type that decides signedness: the last operand's
    // (select's condition is i1; its branches carry the type).
    Type kilnElementType = getElementTypeOrSelf(op->getOperands().back());
    Value result = detail::elementwiseGeneric(
        rewriter, op->getLoc(), operands, resultType,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          ScalarEmitter emitter(b, loc, kilnElementType);
          return emitScalar(op, emitter, args, resultType.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateElementwiseToLinalgPatterns(TypeConverter &converter,
                                         RewritePatternSet &patterns) {
  patterns.add<ElementwiseToGeneric>(converter, patterns.getContext());
}

} // namespace kiln
