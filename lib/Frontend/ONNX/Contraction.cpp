//===- Contraction.cpp - ONNX MatMul, Gemm, Conv and Einsum to kiln -------===//
//
// Gemm's alpha/beta/transposes and MatMul's 1-D operands are normalized
// away so kiln.matmul always sees [..., M, K] x [..., K, N]. Einsum is
// supported for the forms that are a (batched) matmul up to transposes,
// reshapes and sums over indices only one operand has.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::frontend {
namespace {

using Result = FailureOr<Value>;

Result swapLastTwo(NodeContext &ctx, Value x) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return ctx.create<TransposeOp>(x, perm);
}

/// ONNX MatMul (numpy matmul): a 1-D lhs is a row, a 1-D rhs a column, and
/// the added dim is dropped from the result.
LogicalResult convertMatMul(NodeContext &ctx) {
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  auto lhsShape = ctx.inputType(0).getShape();
  auto rhsShape = ctx.inputType(1).getShape();
  if (lhsShape.empty() || rhsShape.empty())
    return ctx.emitError() << "MatMul operands must have rank >= 1";
  bool lhsVector = lhsShape.size() == 1, rhsVector = rhsShape.size() == 1;
  if (lhsVector) {
    Result row = ctx.reshape(lhs, {1, lhsShape[0]});
    if (failed(row))
      return failure();
    lhs = *row;
  }
  if (rhsVector) {
    Result column = ctx.reshape(rhs, {rhsShape[0], 1});
    if (failed(column))
      return failure();
    rhs = *column;
  }
  Result product = ctx.create<MatmulOp>(lhs, rhs);
  if (failed(product) || (!lhsVector && !rhsVector))
    return ctx.setResult(product);
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(product->getType()).getShape());
  shape.erase(shape.end() - (rhsVector ? 1 : 2));
  if (lhsVector && rhsVector)
    shape.pop_back();
  return ctx.setResult(ctx.reshape(*product, shape));
}

/// alpha * A' B' + beta * C.
LogicalResult convertGemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (ctx.inputRank(0) != 2 || ctx.inputRank(1) != 2)
    return ctx.emitError() << "Gemm operands must be matrices";
  if (ctx.intAttr("transA", 0)) {
    Result t = swapLastTwo(ctx, a);
    if (failed(t))
      return failure();
    a = *t;
  }
  if (ctx.intAttr("transB", 0)) {
    Result t = swapLastTwo(ctx, b);
    if (failed(t))
      return failure();
    b = *t;
  }
  Result y = ctx.create<MatmulOp>(a, b);
  if (failed(y))
    return failure();
  Type type = ctx.inputElementType(0);
  double alpha = ctx.floatAttr("alpha", 1.0f);
  if (alpha != 1.0)
    y = ctx.create<MulOp>(*y, ctx.scalar(type, alpha));
  if (failed(y) || !ctx.hasInput(2))
    return ctx.setResult(y);
  Value c = ctx.input(2);
  double beta = ctx.floatAttr("beta", 1.0f);
  if (beta != 1.0) {
    Result scaled = ctx.create<MulOp>(c, ctx.scalar(type, beta));
    if (failed(scaled))
      return failure();
    c = *scaled;
  }
  return ctx.setResult(ctx.create<AddOp>(*y, c));
}

LogicalResult convertConv(NodeContext &ctx) {
  int64_t spatial = ctx.inputRank(0) - 2;
  if (spatial < 1 || ctx.inputRank(1) != spatial + 2)
    return ctx.emitError() << "needs input [N, C, D...] and weights "
                              "[M, C/group, K...] of the same rank";
  SmallVector<int64_t> kernel(ctx.inputType(1).getShape().drop_front(2));
  if (auto given = ctx.intsAttr("kernel_shape"); given && *given != kernel)
    return ctx.emitError() << "kernel_shape does not match the weights";
  SmallVector<int64_t> strides =
      ctx.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations =
      ctx.intsAttr("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial)
    return ctx.emitError() << "strides and dilations need " << spatial
                           << " entries";
  FailureOr<SmallVector<int64_t>> pads =
      resolveWindowPads(ctx, ctx.inputType(0).getShape().drop_front(2), kernel,
                        strides, dilations);
  if (failed(pads))
    return failure();
  return ctx.setResult(ctx.create<ConvOp>(ctx.input(0), ctx.input(1),
                                          ctx.input(2), strides, dilations,
                                          *pads, ctx.intAttr("group", 1)));
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// One operand of an einsum: its index letters, after summing away the
/// indices that appear nowhere else.
struct EinsumOperand {
  Value value;
  std::string indices;
};

/// Sums `operand` over the indices not in `keep`.
LogicalResult sumOutIndices(NodeContext &ctx, EinsumOperand &operand,
                            llvm::StringRef keep) {
  SmallVector<int64_t> axes;
  std::string remaining;
  for (auto [i, c] : llvm::enumerate(operand.indices)) {
    if (keep.contains(c))
      remaining += c;
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return success();
  Result summed = ctx.create<ReduceSumOp>(operand.value, axes, false);
  if (failed(summed))
    return failure();
  operand = {*summed, remaining};
  return success();
}

/// Transposes `operand` so its indices read `order`.
LogicalResult permuteTo(NodeContext &ctx, EinsumOperand &operand,
                        llvm::StringRef order) {
  if (operand.indices == order)
    return success();
  SmallVector<int64_t> perm;
  for (char c : order)
    perm.push_back(operand.indices.find(c));
  Result moved = ctx.create<TransposeOp>(operand.value, perm);
  if (failed(moved))
    return failure();
  operand = {*moved, order.str()};
  return success();
}

int64_t sizeOf(const EinsumOperand &operand, llvm::StringRef group) {
  auto shape = cast<RankedTensorType>(operand.value.getType()).getShape();
  int64_t size = 1;
  for (char c : group)
    size *= shape[operand.indices.find(c)];
  return size;
}

SmallVector<int64_t> dimsOf(const EinsumOperand &operand,
                            llvm::StringRef group) {
  auto shape = cast<RankedTensorType>(operand.value.getType()).getShape();
  SmallVector<int64_t> dims;
  for (char c : group)
    dims.push_back(shape[operand.indices.find(c)]);
  return dims;
}

LogicalResult convertEinsum(NodeContext &ctx) {
  std::string equation = ctx.stringAttr("equation").value_or("");
  equation.erase(llvm::remove_if(equation, llvm::isSpace), equation.end());
  auto unsupported = [&](llvm::StringRef why) {
    return ctx.emitError() << "equation '" << equation
                           << "' is not supported: " << why;
  };
  if (equation.find("...") != std::string::npos)
    return unsupported("ellipsis ('...') is not implemented");
  size_t arrow = equation.find("->");
  SmallVector<llvm::StringRef> terms;
  llvm::StringRef(equation).take_front(arrow).split(terms, ',');
  std::string out;
  if (arrow != std::string::npos) {
    out = equation.substr(arrow + 2);
  } else {
    // Implicit output: the indices used exactly once, in alphabetical order.
    std::string all = llvm::join(terms, "");
    for (char c = 'A'; c <= 'z'; ++c)
      if (llvm::count(all, c) == 1)
        out += c;
  }
  if (terms.size() != ctx.numInputs() || terms.empty() || terms.size() > 2)
    return unsupported("only one or two operands are implemented");
  SmallVector<EinsumOperand> operands;
  for (auto [i, term] : llvm::enumerate(terms)) {
    if (static_cast<int64_t>(term.size()) != ctx.inputRank(i))
      return unsupported("a term's length differs from its operand's rank");
    for (char c : term)
      if (term.count(c) != 1)
        return unsupported("repeated indices (diagonals) are not implemented");
    operands.push_back({ctx.input(i), term.str()});
  }
  // Indices each operand shares with the output or the other operand stay.
  for (auto [i, operand] : llvm::enumerate(operands)) {
    std::string keep = out;
    if (operands.size() == 2)
      keep += operands[1 - i].indices;
    if (failed(sumOutIndices(ctx, operand, keep)))
      return failure();
  }
  if (operands.size() == 1) {
    if (failed(permuteTo(ctx, operands[0], out)))
      return failure();
    return ctx.setResult(operands[0].value);
  }
  EinsumOperand &lhs = operands[0], &rhs = operands[1];
  std::string batch, contract, lhsFree, rhsFree;
  for (char c : lhs.indices) {
    bool inRhs = rhs.indices.find(c) != std::string::npos;
    bool inOut = out.find(c) != std::string::npos;
    (inRhs ? (inOut ? batch : contract) : lhsFree) += c;
  }
  for (char c : rhs.indices)
    if (lhs.indices.find(c) == std::string::npos)
      rhsFree += c;
  for (char c : out)
    if (lhs.indices.find(c) == std::string::npos &&
        rhs.indices.find(c) == std::string::npos)
      return unsupported("an output index appears in no operand");
  // [batch, M, K] x [batch, K, N] -> [batch, M, N].
  if (failed(permuteTo(ctx, lhs, batch + lhsFree + contract)) ||
      failed(permuteTo(ctx, rhs, batch + contract + rhsFree)))
    return failure();
  SmallVector<int64_t> batchDims = dimsOf(lhs, batch);
  SmallVector<int64_t> lhsMatrix(batchDims), rhsMatrix(batchDims);
  lhsMatrix.append({sizeOf(lhs, lhsFree), sizeOf(lhs, contract)});
  rhsMatrix.append({sizeOf(rhs, contract), sizeOf(rhs, rhsFree)});
  Result a = ctx.reshape(lhs.value, lhsMatrix);
  Result b = ctx.reshape(rhs.value, rhsMatrix);
  if (failed(a) || failed(b))
    return failure();
  Result product = ctx.create<MatmulOp>(*a, *b);
  if (failed(product))
    return failure();
  SmallVector<int64_t> resultDims(batchDims);
  llvm::append_range(resultDims, dimsOf(lhs, lhsFree));
  llvm::append_range(resultDims, dimsOf(rhs, rhsFree));
  Result unpacked = ctx.reshape(*product, resultDims);
  if (failed(unpacked))
    return failure();
  EinsumOperand result{*unpacked, batch + lhsFree + rhsFree};
  if (failed(permuteTo(ctx, result, out)))
    return failure();
  return ctx.setResult(result.value);
}

} // namespace

void registerContractionConverters(ConverterRegistry &r) {
  r.add("MatMul", convertMatMul, 2);
  r.add("Gemm", convertGemm, 2);
  r.add("Conv", convertConv, 2);
  r.add("Einsum", convertEinsum);
}

} // namespace kiln::frontend
