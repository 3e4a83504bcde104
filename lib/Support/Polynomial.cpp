//===- Polynomial.cpp - polynomial evaluation in arith/math ops -----------===//

#include "kiln/Support/Polynomial.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {

/// `v` as a constant of `x`'s type (a splat for a vector).
static Value constantLike(OpBuilder &b, Location loc, Value x, double v) {
  Type type = x.getType();
  auto attr = b.getFloatAttr(getElementTypeOrSelf(type), v);
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(shaped, attr));
  return arith::ConstantOp::create(b, loc, attr);
}

Value emitPolynomial(OpBuilder &b, Location loc, Value x,
                     ArrayRef<double> coefficients) {
  assert(!coefficients.empty() && "a polynomial has a coefficient");
  SmallVector<Value> pairs;
  for (size_t i = 0; i < coefficients.size(); i += 2) {
    Value pair = constantLike(b, loc, x, coefficients[i]);
    if (i + 1 < coefficients.size())
      pair = math::FmaOp::create(
          b, loc, constantLike(b, loc, x, coefficients[i + 1]), x, pair);
    pairs.push_back(pair);
  }
  if (pairs.size() == 1)
    return pairs.front();
  Value square = arith::MulFOp::create(b, loc, x, x);
  Value p = pairs.back();
  for (Value pair : llvm::reverse(ArrayRef(pairs).drop_back()))
    p = math::FmaOp::create(b, loc, p, square, pair);
  return p;
}

} // namespace kiln
