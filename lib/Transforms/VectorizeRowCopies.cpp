//===- VectorizeRowCopies.cpp - kiln-vectorize-row-copies -----------------===//
//
// Data movement between kernels is copies of rows: im2col (a convolution's
// input windows laid out as a matrix, one row of output pixels per channel
// and tap), a pad's interior, slices, concatenation pieces. As loops from
// convert-linalg-to-parallel-loops, the innermost loop walks one row, and
// LLVM's loop vectorizer leaves a short row scalar: the im2col of a 3x3
// convolution at 14x14 (14-element rows) copied 1.8 MB one float at a time,
// 11% of the layer. Here such a copy is emitted as vector code directly: a
// parallel loop over its rows, each row copied by whole vectors and one
// masked vector for the rest (a 14-element row is one masked load and one
// masked store).
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {
#define GEN_PASS_DEF_VECTORIZEROWCOPIES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Whole vectors per row up to which the row's copy is unrolled.
constexpr int64_t kMaxUnrolledVectors = 4;

/// Whether `type` is a statically shaped buffer whose innermost dim is
/// contiguous, of an element type vector loads take.
bool hasContiguousRows(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() || memref.getRank() == 0)
    return false;
  Type element = memref.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8 ||
      !llvm::isPowerOf2_32(element.getIntOrFloatBitWidth()))
    return false;
  auto [strides, offset] = memref.getStridesAndOffset();
  return strides.back() == 1;
}

/// Whether `map`'s results read consecutive elements as its last dim steps:
/// the last result is `d_last + f(other dims)`, and no other result uses
/// d_last.
bool readsRowsInOrder(AffineMap map) {
  if (map.getNumResults() == 0 || map.getNumSymbols() != 0)
    return false;
  unsigned last = map.getNumDims() - 1;
  for (AffineExpr result : map.getResults().drop_back())
    if (result.isFunctionOfDim(last))
      return false;
  AffineExpr row = map.getResults().back();
  AffineExpr dim = getAffineDimExpr(last, map.getContext());
  AffineExpr rest =
      row.replace(dim, getAffineConstantExpr(0, map.getContext()));
  return !rest.isFunctionOfDim(last) &&
         simplifyAffineExpr(rest + dim, map.getNumDims(), 0) ==
             simplifyAffineExpr(row, map.getNumDims(), 0);
}

/// Whether `op` is a copy this pass vectorizes (see the pass description).
bool isRowCopy(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() == 0 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (body->getOperations().size() != 1 || !yield ||
      yield.getNumOperands() != 1 ||
      yield.getOperand(0) != body->getArgument(0))
    return false;
  Value source = op.getDpsInputOperand(0)->get();
  Value target = op.getDpsInitOperand(0)->get();
  if (!hasContiguousRows(source.getType()) ||
      !hasContiguousRows(target.getType()) ||
      getElementTypeOrSelf(source) != getElementTypeOrSelf(target))
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return maps[1].isIdentity() && readsRowsInOrder(maps[0]) &&
         ranges.back() >= 2;
}

/// Replaces one row copy (isRowCopy) by its vector loops.
class RowCopyEmitter {
public:
  RowCopyEmitter(linalg::LinalgOp op, int64_t lanes32)
      : op(op), b(op), loc(op.getLoc()),
        source(op.getDpsInputOperand(0)->get()),
        target(op.getDpsInitOperand(0)->get()),
        sourceMap(op.getIndexingMapsArray()[0]),
        ranges(op.getStaticLoopRanges()) {
    Type element = getElementTypeOrSelf(source);
    lanes = std::max<int64_t>(1, lanes32 * 32 /
                                     int64_t(element.getIntOrFloatBitWidth()));
    vectorType = VectorType::get({lanes}, element);
  }

  void emit() {
    // Rows in parallel over the outer loops that have more than one
    // iteration (the thread pool splits the first of them).
    SmallVector<unsigned> outer;
    for (unsigned d = 0; d + 1 < ranges.size(); ++d)
      if (ranges[d] > 1)
        outer.push_back(d);
    int64_t rows = 1;
    for (unsigned d : outer)
      rows *= ranges[d];
    SmallVector<Value> indices(ranges.size(), index(0));
    if (outer.empty()) {
      copyRow(indices);
    } else {
      SmallVector<Value> lbs(outer.size(), index(0)),
          steps(lbs.size(), index(1));
      SmallVector<Value> ubs;
      for (unsigned d : outer)
        ubs.push_back(index(ranges[d]));
      auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
      // The work of the scalar loops it replaces, which the outliner's
      // threshold is set for: one iteration per element.
      loop->setAttr(kiln::kWorkAttrName,
                    b.getI64IntegerAttr(rows * ranges.back()));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      for (auto [d, iv] : llvm::zip(outer, loop.getInductionVars()))
        indices[d] = iv;
      copyRow(indices);
    }
    op->erase();
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// Copies the row at `indices` (the innermost one ignored): whole
  /// vectors, unrolled when few, then the masked rest.
  void copyRow(SmallVector<Value> indices) {
    int64_t length = ranges.back();
    int64_t whole = length / lanes;
    if (whole <= kMaxUnrolledVectors) {
      for (int64_t v = 0; v < whole; ++v) {
        indices.back() = index(v * lanes);
        copyVector(indices, Value());
      }
    } else {
      auto loop = scf::ForOp::create(b, loc, index(0), index(whole * lanes),
                                     index(lanes));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> at(indices);
      at.back() = loop.getInductionVar();
      copyVector(at, Value());
    }
    if (length % lanes == 0)
      return;
    indices.back() = index(whole * lanes);
    Value mask = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        ArrayRef<int64_t>{length % lanes});
    copyVector(indices, mask);
  }

  /// One vector of the row from loop position `at` (masked when `mask`).
  void copyVector(ValueRange at, Value mask) {
    SmallVector<Value> from;
    for (AffineExpr result : sourceMap.getResults())
      from.push_back(affine::expandAffineExpr(b, loc, result, at, {}));
    if (!mask) {
      Value value = vector::LoadOp::create(b, loc, vectorType, source, from);
      vector::StoreOp::create(b, loc, value, target, at);
      return;
    }
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(vectorType));
    Value value = vector::MaskedLoadOp::create(b, loc, vectorType, source, from,
                                               mask, zero);
    vector::MaskedStoreOp::create(b, loc, target, at, mask, value);
  }

  linalg::LinalgOp op;
  OpBuilder b;
  Location loc;
  Value source, target;
  AffineMap sourceMap;
  SmallVector<int64_t> ranges;
  int64_t lanes = 1;
  VectorType vectorType;
};

struct VectorizeRowCopiesPass
    : public kiln::impl::VectorizeRowCopiesBase<VectorizeRowCopiesPass> {
  using VectorizeRowCopiesBase::VectorizeRowCopiesBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> copies;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isRowCopy(op))
        copies.push_back(op);
    });
    for (linalg::LinalgOp op : copies)
      RowCopyEmitter(op, lanes).emit();
  }
};

} // namespace
