//===- KilnFold.cpp - kiln op folders -------------------------------------===//
//
// Trivial algebraic identities (x * 1, reshape of reshape, transpose of
// transpose, ...) and evaluation of small integer constants. An identity only
// folds when the operand has exactly the result type, so no shape
// information is lost.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/ConstantEvaluator.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;

namespace {

/// `value` when it can replace `op`'s result without changing its type.
OpFoldResult sameTypeOrNull(Operation *op, Value value) {
  return value.getType() == op->getResult(0).getType() ? OpFoldResult(value)
                                                       : OpFoldResult();
}

/// Whether `attr` is a splat whose every element equals `expected`.
bool isSplatOf(Attribute attr, int64_t expected) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  if (isa<FloatType>(splat.getElementType()))
    return splat.getSplatValue<APFloat>().isExactlyValue(
        static_cast<double>(expected));
  return splat.getSplatValue<APInt>().getSExtValue() == expected;
}

/// `lhs` when `rhs` is the splat identity element `identity`, otherwise the
/// evaluated integer constant, if any.
OpFoldResult foldRightIdentity(Operation *op, ArrayRef<Attribute> operands,
                               int64_t identity) {
  if (isSplatOf(operands[1], identity))
    if (OpFoldResult folded = sameTypeOrNull(op, op->getOperand(0)))
      return folded;
  return evaluateIntegerOp(op, operands, kDefaultFoldElementLimit);
}

OpFoldResult evaluate(Operation *op, ArrayRef<Attribute> operands) {
  return evaluateIntegerOp(op, operands, kDefaultFoldElementLimit);
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getOperands(), 0);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getOperands(), 0);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getOperands(), 1);
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getOperands(), 1);
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getOperands(), 1);
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return sameTypeOrNull(*this, getLhs());
  return evaluate(*this, adaptor.getOperands());
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return sameTypeOrNull(*this, getLhs());
  return evaluate(*this, adaptor.getOperands());
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  return evaluate(*this, adaptor.getOperands());
}

/// neg(neg(x)) -> x and not(not(x)) -> x.
template <typename OpTy>
static OpFoldResult foldInvolution(OpTy op, ArrayRef<Attribute> operands) {
  if (auto inner = op.getInput().template getDefiningOp<OpTy>())
    if (OpFoldResult folded = sameTypeOrNull(op, inner.getInput()))
      return folded;
  return evaluate(op, operands);
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldInvolution(*this, adaptor.getOperands());
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  return foldInvolution(*this, adaptor.getOperands());
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult folded = sameTypeOrNull(*this, getInput()))
    return folded;
  return evaluate(*this, adaptor.getOperands());
}

OpFoldResult kiln::detail::foldEmptyReduction(Operation *op) {
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  if (axes && axes.empty())
    return sameTypeOrNull(op, op->getOperand(0));
  return {};
}

/// reshape(reshape(x)) -> reshape(x); a reshape to the input's own static
/// type is the identity.
OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().set(inner.getInput());
    return getResult();
  }
  return evaluate(*this, adaptor.getOperands());
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  return evaluate(*this, adaptor.getOperands());
}

/// transpose(transpose(x, p), q) -> transpose(x, p o q); the identity
/// permutation folds away.
OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return sameTypeOrNull(*this, getInput());
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPerm();
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(innerPerm[p]);
    getInputMutable().set(inner.getInput());
    setPerm(composed);
    return getResult();
  }
  return evaluate(*this, adaptor.getOperands());
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return sameTypeOrNull(*this, getInputs().front());
  return evaluate(*this, adaptor.getOperands());
}

/// A slice that takes every element in order is the identity.
OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  auto type = getInput().getType();
  bool whole = type.hasStaticShape();
  for (int64_t d = 0; whole && d < type.getRank(); ++d)
    whole = getStarts()[d] == 0 && getEnds()[d] == type.getDimSize(d) &&
            getSteps()[d] == 1;
  if (whole)
    return sameTypeOrNull(*this, getInput());
  return evaluate(*this, adaptor.getOperands());
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  return evaluate(*this, adaptor.getOperands());
}

OpFoldResult ShapeOfOp::fold(FoldAdaptor adaptor) {
  return evaluate(*this, adaptor.getOperands());
}
