//===- RecomposeOps.cpp - kiln-recompose-ops ------------------------------===//
//
// Exporters write GELU out in primitive ops (BERT's erf form, GPT-2's tanh
// form). Seen as one `kiln.gelu` the code generator can pick a cheaper but
// equivalent formula (docs/fusion.md): for the tanh form, x / (1 + 2^w)
// replaces a tanh and four products. The patterns look through the
// association and operand order of the products, so `0.5 * x * (...)`,
// `x * (...) * 0.5` and `x * 0.5 * (...)` all match.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_KILNRECOMPOSEOPS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The value of a float splat constant.
std::optional<double> splatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool isClose(double value, double expected) {
  return std::abs(value - expected) <= 1e-5 * std::abs(expected);
}

/// A product seen as coefficient * leaf_1 * ... * leaf_n: mul trees and
/// x^2, x^3 are flattened and constant factors (and divisions by constants)
/// multiplied into the coefficient. Flattening stops at the given atoms, which
/// may themselves be products.
struct Monomial {
  double coefficient = 1.0;
  SmallVector<Value, 4> leaves;

  Monomial(Value value, ArrayRef<Value> atoms) { collect(value, atoms, 3); }

  bool isPowerOf(Value x, unsigned power) const {
    return leaves.size() == power &&
           llvm::all_of(leaves, [&](Value leaf) { return leaf == x; });
  }

private:
  void collect(Value value, ArrayRef<Value> atoms, unsigned depth) {
    if (std::optional<double> constant = splatValue(value)) {
      coefficient *= *constant;
      return;
    }
    if (depth > 0 && !llvm::is_contained(atoms, value)) {
      if (auto mul = value.getDefiningOp<MulOp>()) {
        collect(mul.getLhs(), atoms, depth - 1);
        collect(mul.getRhs(), atoms, depth - 1);
        return;
      }
      if (auto pow = value.getDefiningOp<PowOp>()) {
        std::optional<double> exponent = splatValue(pow.getRhs());
        if (exponent && (*exponent == 2 || *exponent == 3) &&
            pow.getLhs().getType() == pow.getType()) {
          for (int i = 0; i < int(*exponent); ++i)
            collect(pow.getLhs(), atoms, depth - 1);
          return;
        }
      }
      if (auto div = value.getDefiningOp<DivOp>()) {
        std::optional<double> divisor = splatValue(div.getRhs());
        if (divisor && *divisor != 0) {
          coefficient /= *divisor;
          collect(div.getLhs(), atoms, depth - 1);
          return;
        }
      }
    }
    leaves.push_back(value);
  }
};

/// For `1 + f(y)` with f an OpTy (in either order): y.
template <typename OpTy> Value matchOnePlus(Value value) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return {};
  for (auto [one, other] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<double> constant = splatValue(one);
    auto op = other.template getDefiningOp<OpTy>();
    if (constant && *constant == 1.0 && op)
      return op->getOperand(0);
  }
  return {};
}

/// For z = sqrt(2/pi) * (x + 0.044715 * x^3): x.
Value matchTanhGeluArgument(Value z) {
  Monomial outer(z, {});
  if (!isClose(outer.coefficient, std::sqrt(2.0 / M_PI)) ||
      outer.leaves.size() != 1)
    return {};
  auto sum = outer.leaves.front().getDefiningOp<AddOp>();
  if (!sum)
    return {};
  for (auto [x, cubic] : {std::pair(sum.getLhs(), sum.getRhs()),
                          std::pair(sum.getRhs(), sum.getLhs())}) {
    Monomial term(cubic, {x});
    if (term.isPowerOf(x, 3) && isClose(term.coefficient, 0.044715))
      return x;
  }
  return {};
}

/// For y = x / sqrt(2) (or x * (1 / sqrt(2))): x.
Value matchErfGeluArgument(Value y) {
  Operation *op = y.getDefiningOp();
  if (!isa_and_nonnull<MulOp, DivOp>(op))
    return {};
  for (Value x : op->getOperands()) {
    Monomial argument(y, {x});
    if (argument.isPowerOf(x, 1) && isClose(argument.coefficient, M_SQRT1_2))
      return x;
  }
  return {};
}

/// 0.5 * x * (1 + erf(x / sqrt(2)))                      -> kiln.gelu none
/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) -> kiln.gelu tanh
/// Anchored at the product; `1 + erf/tanh(...)` is one of its operands or
/// of its operands' operands.
struct RecomposeGelu : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(getElementTypeOrSelf(op.getType())))
      return failure();
    SmallVector<Value, 6> candidates;
    for (Value operand : op->getOperands()) {
      candidates.push_back(operand);
      if (auto mul = operand.getDefiningOp<MulOp>())
        candidates.append({mul.getLhs(), mul.getRhs()});
    }
    for (Value factor : candidates) {
      Value x;
      GeluApproximation approximation;
      if (Value z = matchOnePlus<TanhOp>(factor)) {
        x = matchTanhGeluArgument(z);
        approximation = GeluApproximation::Tanh;
      } else if (Value y = matchOnePlus<ErfOp>(factor)) {
        x = matchErfGeluArgument(y);
        approximation = GeluApproximation::None;
      }
      // The constants must not broadcast x to a larger shape.
      if (!x || x.getType() != op.getType())
        continue;
      Monomial product(op.getResult(), {x, factor});
      if (!isClose(product.coefficient, 0.5) || product.leaves.size() != 2 ||
          !llvm::is_contained(product.leaves, x) ||
          !llvm::is_contained(product.leaves, factor))
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(op, op.getType(), x, approximation);
      return success();
    }
    return failure();
  }
};

struct KilnRecomposeOpsPass
    : public kiln::impl::KilnRecomposeOpsBase<KilnRecomposeOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RecomposeGelu>(&getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
