//===- ApproximateMath.cpp - kiln-approximate-math ------------------------===//
//
// libm has no vector entry points LLVM 22 would use for AVX-512, so every
// math.exp / math.tanh / math.erf left as is becomes one scalar call per
// element. Polynomial approximations are plain arith, which vectorizes.
//
// exp and exp2 get kiln's own expansion, the hottest transcendental of
// softmax, sigmoid and GELU: 2^x = 2^n * p(r) with n = round(x), r = x - n in
// [-1/2, 1/2] and p a degree-5 polynomial (exp's relative error 2.9e-7
// evaluated in f32). exp(x) reduces x by n * ln 2 in two parts (Cody-Waite)
// so that r stays exact for large |x|. The 2^n scaling is one ldexp where
// the target lowers a vector ldexp natively (AVX-512: vscalefps); elsewhere
// it adds n to p's exponent bits. Either way overflow gives inf; results
// below 2^-125.5 are flushed to zero (not made subnormal: each subnormal
// costs Intel cores a microcode assist).
// Everything else goes to MLIR's polynomial approximation patterns.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "kiln/Support/Polynomial.h"
#include "kiln/Transforms/KernelEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// p(r) = 1 + r * q(r) ~ 2^r on [-1/2, 1/2], lowest degree first: q is the
/// degree-4 Chebyshev interpolant of (2^r - 1) / r
/// (numpy.polynomial.chebyshev.Chebyshev.interpolate, converted to monomials
/// and rounded to f32), so that p(0) = 1 exactly. Max relative error 2.6e-7
/// evaluated in f32 by Horner's rule, 2.9e-7 for exp by `polynomial`.
constexpr double kExp2Polynomial[] = {1.0,           0x1.62e43p-1,
                                      0x1.ebfa4cp-3, 0x1.c6afeep-5,
                                      0x1.3cbf6p-7,  0x1.5ec866p-10};
constexpr int kDegree = 5;

/// n beyond which 2^n * p is inf in f32 whatever p in [2^-1/2, 2^1/2]: the
/// clamp of the ldexp path, whose scaling overflows to inf by itself.
constexpr double kMaxExponent = 151;

/// The least w whose 2^w is inf in f32: the clamp of the bits path, which
/// adds n to p's exponent field and selects inf from here on. Below it n is
/// at most 128, and 128 only for w - n < 0, where p < 1: the sum is at most
/// the largest finite exponent.
constexpr double kOverflowExponent = 128;

/// The least w whose 2^w is computed; smaller results are flushed to zero
/// rather than made subnormal: an Intel core takes a microcode assist of
/// ~100 cycles for each operation that produces or reads a subnormal, and a
/// matmul epilogue's GELU (tanh form) over large activations ran 3x slower
/// for it (128 x 768 x 3072 + GELU: 11% over the bias alone, 4% with small
/// activations). From w >= -125.5 on, 2^w >= 2^-125.5 is normal, and so is
/// every intermediate: n = round(w) is -126 only for w - n near +1/2,
/// where p is near 2^1/2, so the bits path's exponent sum is at least 1.
constexpr double kMinExponent = -125.5;

/// ln 2 split so that n * kLn2High is exact for |n| < 2^11 (Cody-Waite).
constexpr double kLn2High = 0.693145751953125;
constexpr double kLn2Low = 1.42860682030941723212e-6;

/// f32 arithmetic on scalars or vectors of the type of `like`.
class F32Emitter {
public:
  F32Emitter(PatternRewriter &b, Location loc, Type type)
      : b(b), loc(loc), type(type) {}

  Value constant(double v) {
    auto attr = b.getF32FloatAttr(static_cast<float>(v));
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(vector, attr));
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value intConstant(int32_t v) {
    auto attr = b.getI32IntegerAttr(v);
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vector.clone(b.getI32Type()), attr));
    return arith::ConstantOp::create(b, loc, attr);
  }
  Type intType() {
    if (auto vector = dyn_cast<VectorType>(type))
      return vector.clone(b.getI32Type());
    return b.getI32Type();
  }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z);
  }
  Value select(arith::CmpFPredicate predicate, Value x, double bound,
               Value ifTrue, Value ifFalse) {
    Value condition =
        arith::CmpFOp::create(b, loc, predicate, x, constant(bound));
    return arith::SelectOp::create(b, loc, condition, ifTrue, ifFalse);
  }
  /// 0 where x < bound, else `value` (NaN compares false).
  Value zeroBelow(Value x, double bound, Value value) {
    return select(arith::CmpFPredicate::OLT, x, bound, constant(0), value);
  }
  /// inf where x >= bound, else `value` (NaN compares false).
  Value infFrom(Value x, double bound, Value value) {
    return select(arith::CmpFPredicate::OGE, x, bound,
                  constant(std::numeric_limits<double>::infinity()), value);
  }
  /// x raised to at least lo; a NaN x stays NaN (the compare is ordered),
  /// and x86 does the select in one max instruction.
  Value atLeast(Value x, double lo) {
    return select(arith::CmpFPredicate::OLT, x, lo, constant(lo), x);
  }
  /// x clamped to [lo, hi], as atLeast.
  Value clamp(Value x, double lo, double hi) {
    Value low = atLeast(x, lo);
    return select(arith::CmpFPredicate::OGT, low, hi, constant(hi), low);
  }
  Value polynomial(Value r, ArrayRef<double> coefficients) {
    return kiln::emitPolynomial(b, loc, r, coefficients);
  }
  /// p * 2^n for an integral-valued n in [-126, kMaxExponent] (normal or
  /// inf for the w >= kMinExponent it is used on). Without ldexp, n in
  /// [-126, 128] added to p's exponent field: right while the sum is a
  /// normal exponent (kMinExponent, kOverflowExponent).
  Value scale(Value p, Value n, bool useLdexp, Value k = {}) {
    if (useLdexp && isZmmOfF32())
      return scaleByScalef(p, n);
    Value exponent = k ? k : arith::FPToSIOp::create(b, loc, intType(), n);
    if (useLdexp && !isa<VectorType>(type))
      return LLVM::LoadExpOp::create(b, loc, type, p, exponent);
    // MLIR's llvm.intr.ldexp takes a scalar exponent only, but the LLVM
    // intrinsic takes a vector: vector code (matmul epilogues) calls it by
    // name. On AVX-512 3 instructions (two conversions and vscalefps) in
    // place of the bits' 8: a 128 x 768 x 3072 matmul's tanh-form GELU
    // epilogue cost ~88 -> ~40 us on a Granite Rapids-class core.
    if (useLdexp)
      return LLVM::CallIntrinsicOp::create(b, loc, type,
                                           b.getStringAttr("llvm.ldexp"),
                                           ValueRange{p, exponent})
          .getResult(0);
    // One integer add where p * 2^(n/2) * 2^(n - n/2) took two multiplies
    // and two more powers of two: 4 instructions fewer, and 5 cycles fewer
    // on the latency chain.
    Value bits = arith::BitcastOp::create(b, loc, intType(), p);
    Value shifted = arith::ShLIOp::create(b, loc, exponent, intConstant(23));
    Value sum = arith::AddIOp::create(b, loc, bits, shifted);
    return arith::BitcastOp::create(b, loc, type, sum);
  }
  /// x rounded to the nearest integer (ties to even), as a float, and as
  /// an i32 where `asInteger` (else null). The i32 is llvm.lrint, one
  /// cvtps2dq once LLVM's loop vectorizer widens it, and the float its
  /// conversion back, which LLVM then shares with ldexp's own conversion
  /// of the exponent: 3 instructions for round, ldexp's exponent and
  /// vscalefps where roundeven, fptosi and ldexp took 4. (x is clamped:
  /// the integer fits.)
  std::pair<Value, Value> roundToInteger(Value x, bool asInteger) {
    if (!asInteger)
      return {math::RoundEvenOp::create(b, loc, x), Value()};
    Value k = LLVM::LrintOp::create(b, loc, intType(), x);
    return {arith::SIToFPOp::create(b, loc, type, k), k};
  }
  /// Whether the values are 16 x f32, one zmm register.
  bool isZmmOfF32() const {
    auto vector = dyn_cast<VectorType>(type);
    return vector && vector.getRank() == 1 && vector.getDimSize(0) == 16 &&
           vector.getElementType().isF32();
  }
  /// p * 2^n by vscalefps, which takes n as a float (an integral one here:
  /// 2^floor(n) is 2^n): ldexp's two conversions of n to an integer and
  /// back are gone (LLVM cannot drop them, not knowing n is integral): 1
  /// instruction instead of 3 in every exp of a matmul epilogue. (Scalar
  /// code that LLVM's loop vectorizer widens, a softmax's exp, keeps
  /// ldexp.)
  Value scaleByScalef(Value p, Value n) {
    Value allLanes = LLVM::ConstantOp::create(b, loc, b.getI16Type(),
                                              b.getI16IntegerAttr(-1));
    Value currentRounding = LLVM::ConstantOp::create(
        b, loc, b.getI32Type(), b.getI32IntegerAttr(kCurrentRounding));
    return LLVM::CallIntrinsicOp::create(
               b, loc, type,
               b.getStringAttr("llvm.x86.avx512.mask.scalef.ps.512"),
               ValueRange{p, n, p, allLanes, currentRounding})
        .getResult(0);
  }
  /// _MM_FROUND_CUR_DIRECTION: the rounding of MXCSR.
  static constexpr int32_t kCurrentRounding = 4;

  PatternRewriter &b;
  Location loc;
  Type type;
};

/// Rewrites one f32 (or f16/bf16, computed in f32) math op with `expand`.
template <typename OpTy> struct F32Expansion : public OpRewritePattern<OpTy> {
  F32Expansion(MLIRContext *context, bool useLdexp)
      // Above MLIR's own patterns for the same ops.
      : OpRewritePattern<OpTy>(context, /*benefit=*/2), useLdexp(useLdexp) {}

  /// `op`'s result computed from its operand `x` (in f32).
  virtual Value expand(F32Emitter &e, Value x, OpTy op) const = 0;

  /// Whether 2^n is a scalar ldexp (which LLVM's loop vectorizer may widen),
  /// so that n is wanted as an integer too.
  bool scalarLdexp(const F32Emitter &e) const {
    return useLdexp && !isa<VectorType>(e.type);
  }

  /// The top of the clamp of w (x / ln 2 for exp): above it the ldexp path
  /// overflows to inf by itself; from it on the bits path selects inf.
  double highestExponent() const {
    return useLdexp ? kMaxExponent : kOverflowExponent;
  }

  /// `input` (w times `inputPerW`) clamped to the w it computes: below it
  /// the result is flushed to 0 and above it inf (by the ldexp itself, or by
  /// scaleAndBound's select). Where it never `mayOverflow`, only raised.
  Value clampInput(F32Emitter &e, Value input, double inputPerW,
                   bool mayOverflow = true) const {
    double lowest = kMinExponent * inputPerW;
    if (!mayOverflow)
      return e.atLeast(input, lowest);
    return e.clamp(input, lowest, highestExponent() * inputPerW);
  }

  /// e.scale's p * 2^n, then inf (where it `mayOverflow`) and 0 where the
  /// input is beyond what it computes. `input` is w times `inputPerW` (x =
  /// w ln 2 for exp).
  Value scaleAndBound(F32Emitter &e, Value p, Value n, Value k, Value input,
                      double inputPerW, bool mayOverflow = true) const {
    Value result = e.scale(p, n, useLdexp, k);
    if (!useLdexp && mayOverflow)
      result = e.infFrom(input, kOverflowExponent * inputPerW, result);
    return e.zeroBelow(input, kMinExponent * inputPerW, result);
  }

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto elementType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
    if (!elementType || elementType.getWidth() > 32 ||
        (isa<VectorType>(type) && cast<VectorType>(type).isScalable()))
      return failure();
    Type f32Type = rewriter.getF32Type();
    if (auto vector = dyn_cast<VectorType>(type))
      f32Type = vector.clone(f32Type);
    Location loc = op.getLoc();
    Value x = op.getOperand();
    if (!elementType.isF32())
      x = arith::ExtFOp::create(rewriter, loc, f32Type, x);
    F32Emitter e(rewriter, loc, f32Type);
    Value result = expand(e, x, op);
    if (!elementType.isF32())
      result = arith::TruncFOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }

  bool useLdexp;
};

/// 2^w = 2^n * p(w - n), n = round(w).
struct Exp2Expansion : public F32Expansion<math::Exp2Op> {
  using F32Expansion::F32Expansion;

  Value expand(F32Emitter &e, Value w, math::Exp2Op) const override {
    Value clamped = clampInput(e, w, 1);
    auto [n, k] = e.roundToInteger(clamped, scalarLdexp(e));
    Value p = e.polynomial(e.sub(clamped, n), kExp2Polynomial);
    return scaleAndBound(e, p, n, k, w, 1);
  }
};

/// e^x = 2^n * e^r, n = round(x / ln 2), r = x - n ln 2 (two parts).
struct ExpExpansion : public F32Expansion<math::ExpOp> {
  using F32Expansion::F32Expansion;

  Value expand(F32Emitter &e, Value x, math::ExpOp op) const override {
    // e^r = 2^(r / ln 2): the same polynomial with the coefficients scaled.
    SmallVector<double, kDegree + 1> coefficients;
    for (int i = 0; i <= kDegree; ++i)
      coefficients.push_back(kExp2Polynomial[i] / std::pow(M_LN2, i));
    // Softmax's exp(x - max): an overflow check per element costs it ~12%
    // on AVX2 (a compare and a blend on the FMA pipes, its bottleneck).
    bool mayOverflow = !op->hasAttr(kiln::kNonPositiveOperandAttrName);
    Value clamped = clampInput(e, x, M_LN2, mayOverflow);
    auto [n, k] =
        e.roundToInteger(e.mul(clamped, e.constant(M_LOG2E)), scalarLdexp(e));
    Value r = e.fma(n, e.constant(-kLn2High), clamped);
    r = e.fma(n, e.constant(-kLn2Low), r);
    return scaleAndBound(e, e.polynomial(r, coefficients), n, k, x, M_LN2,
                         mayOverflow);
  }
};

struct ApproximateMathPass
    : public kiln::impl::ApproximateMathBase<ApproximateMathPass> {
  using ApproximateMathBase::ApproximateMathBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpExpansion, Exp2Expansion>(&getContext(), useLdexp);
    // Computes f16/bf16 in f32 and approximates the f32 forms.
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
