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
// masked store). A row read with a stride of 2 (one phase of a strided
// convolution's input, through a strided subview) loads two vectors per
// vector it stores and keeps their even lanes with one shuffle. A row that
// repeats each element r times (nearest-neighbour upsampling by r, a power
// of two up to the vector's lanes) loads lanes / r elements per vector it
// stores and spreads them with one shuffle. A copy that
// transposes (the output's rows read down the input's columns: attention's
// K^T) moves blocks of lanes x lanes elements, transposed in registers.
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

/// A copy's source as the copy reads it: `buffer` at `map` of the loop
/// indices, where `map`'s last result is `stride * d_last + f(other dims)`,
/// or with a `repeat` above 1 `d_last floordiv repeat + f(other dims)`, and
/// no other result uses d_last.
struct RowSource {
  Value buffer;
  AffineMap map;
  int64_t stride = 0;
  int64_t repeat = 1;
};

/// `source` read at `map`, seen through the static subviews it is taken
/// from (a strided slice becomes a strided read of the sliced buffer).
std::pair<Value, AffineMap> throughSubviews(Value source, AffineMap map) {
  MLIRContext *context = map.getContext();
  while (auto view = source.getDefiningOp<memref::SubViewOp>()) {
    ArrayRef<int64_t> offsets = view.getStaticOffsets();
    ArrayRef<int64_t> strides = view.getStaticStrides();
    if (llvm::any_of(offsets, ShapedType::isDynamic) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      break;
    llvm::SmallBitVector dropped = view.getDroppedDims();
    SmallVector<AffineExpr> results;
    unsigned next = 0;
    for (unsigned d = 0; d < offsets.size(); ++d) {
      AffineExpr at = dropped[d] ? getAffineConstantExpr(0, context)
                                 : map.getResult(next++) * strides[d];
      results.push_back(at + offsets[d]);
    }
    map = AffineMap::get(map.getNumDims(), 0, results, context);
    source = view.getSource();
  }
  return {source, map};
}

/// The copy's source, when its rows are read in order with a stride of 1
/// or 2 (a stride-2 row is two vectors deinterleaved per vector), or each
/// element repeated a power of two up to `lanes` times.
std::optional<RowSource> rowSource(Value source, AffineMap map, int64_t lanes) {
  std::tie(source, map) = throughSubviews(source, map);
  if (!hasContiguousRows(source.getType()) || map.getNumResults() == 0 ||
      map.getNumSymbols() != 0)
    return std::nullopt;
  unsigned last = map.getNumDims() - 1;
  for (AffineExpr result : map.getResults().drop_back())
    if (result.isFunctionOfDim(last))
      return std::nullopt;
  MLIRContext *context = map.getContext();
  AffineExpr row = map.getResults().back();
  AffineExpr dim = getAffineDimExpr(last, context);
  AffineExpr rest = row.replace(dim, getAffineConstantExpr(0, context));
  if (rest.isFunctionOfDim(last))
    return std::nullopt;
  auto reads = [&](AffineExpr expr) {
    return simplifyAffineExpr(rest + expr, map.getNumDims(), 0) ==
           simplifyAffineExpr(row, map.getNumDims(), 0);
  };
  for (int64_t stride : {1, 2})
    if (reads(dim * stride))
      return RowSource{source, map, stride};
  for (int64_t repeat = 2; repeat <= lanes; repeat *= 2)
    if (reads(dim.floorDiv(repeat)))
      return RowSource{source, map, 1, repeat};
  return std::nullopt;
}

/// The source of `op` when it is a copy this pass vectorizes (see the pass
/// description).
std::optional<RowSource> rowCopySource(linalg::LinalgOp op, int64_t lanes) {
  if (!kiln::isBufferCopy(op))
    return std::nullopt;
  Value source = op.getDpsInputOperand(0)->get();
  Value target = op.getDpsInitOperand(0)->get();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!hasContiguousRows(target.getType()) || !maps[1].isIdentity() ||
      getElementTypeOrSelf(source) != getElementTypeOrSelf(target) ||
      op.getStaticLoopRanges().back() < 2 ||
      llvm::is_contained(op.getStaticLoopRanges(), 0))
    return std::nullopt;
  return rowSource(source, maps[0], lanes);
}

/// Opens an scf.parallel over [0, bound) for each of `bounds` (all above
/// 1: canonicalization would drop a unit loop and the attribute with it),
/// stating `work` (the scalar loops' iterations it replaces, which the
/// outliner's threshold is set for), and leaves `b` in its body. Returns
/// its induction variables; none, and `b` where it was, without bounds.
SmallVector<Value> openParallelLoop(OpBuilder &b, Location loc,
                                    ArrayRef<int64_t> bounds, int64_t work) {
  if (bounds.empty())
    return {};
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  SmallVector<Value> lbs(bounds.size(), index(0)),
      steps(bounds.size(), index(1)), ubs;
  for (int64_t bound : bounds)
    ubs.push_back(index(bound));
  auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  loop->setAttr(kiln::kWorkAttrName, b.getI64IntegerAttr(work));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  return SmallVector<Value>(loop.getInductionVars());
}

/// Replaces one row copy (rowCopySource) by its vector loops.
class RowCopyEmitter {
public:
  RowCopyEmitter(linalg::LinalgOp op, const RowSource &source, int64_t lanes32)
      : op(op), b(op), loc(op.getLoc()), source(source),
        target(op.getDpsInitOperand(0)->get()),
        ranges(op.getStaticLoopRanges()) {
    Type element = getElementTypeOrSelf(target);
    lanes = std::max<int64_t>(1, lanes32 * 32 /
                                     int64_t(element.getIntOrFloatBitWidth()));
    vectorType = VectorType::get({lanes}, element);
  }

  void emit() {
    // Rows in parallel over the outer loops that have more than one
    // iteration (the thread pool splits the first of them), but for the
    // one whose rows spill (spilledRows).
    int64_t spilled = spilledRows();
    SmallVector<unsigned> outer;
    SmallVector<int64_t> bounds;
    int64_t rows = 1;
    for (unsigned d = 0; d + 1 < ranges.size(); ++d) {
      rows *= ranges[d];
      if (ranges[d] > 1 && !(spilled && d + 2 == ranges.size())) {
        outer.push_back(d);
        bounds.push_back(ranges[d]);
      }
    }
    SmallVector<Value> indices(ranges.size(), index(0));
    {
      OpBuilder::InsertionGuard guard(b);
      SmallVector<Value> ivs =
          openParallelLoop(b, loc, bounds, rows * ranges.back());
      for (auto [d, iv] : llvm::zip(outer, ivs))
        indices[d] = iv;
      if (spilled)
        copySpillingRows(indices, spilled);
      else
        copyRow(indices, /*spills=*/false);
    }
    op->erase();
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// How many of the rows of one iteration of the outer loops store their
  /// partial last vector whole, its lanes past the row spilling into the
  /// next rows, which are written after it; 0 when none do. Masked stores
  /// are slow on AVX2 (vmaskmovps is microcoded on AMD): the im2col of 3x3
  /// 2048 -> 2048 in 64 groups at 7x7 (7-float rows, one masked store
  /// each) took a third of the layer. The target's rows along the innermost
  /// outer loop must be back to back, and a row's spill must stay within
  /// that loop's rows: other rows may be another thread's.
  int64_t spilledRows() const {
    int64_t length = ranges.back();
    if (length % lanes == 0 || ranges.size() < 3 ||
        ranges[ranges.size() - 2] < 2)
      return 0;
    // Another outer loop remains parallel.
    if (llvm::none_of(ArrayRef(ranges).drop_back(2),
                      [](int64_t range) { return range > 1; }))
      return 0;
    auto [strides, offset] =
        cast<MemRefType>(target.getType()).getStridesAndOffset();
    if (strides[strides.size() - 2] != length)
      return 0;
    int64_t rowsInLoop = ranges[ranges.size() - 2];
    int64_t end = llvm::alignTo(length, lanes);
    // Row r writes up to r * length + end, within rowsInLoop * length.
    if (rowsInLoop * length < end)
      return 0;
    return std::min((rowsInLoop * length - end) / length + 1, rowsInLoop - 1);
  }

  /// The rows of the innermost outer loop at `indices`: the first `spilled`
  /// with whole vectors, in order, the rest as copyRow does.
  void copySpillingRows(SmallVector<Value> indices, int64_t spilled) {
    unsigned d = ranges.size() - 2;
    auto loop = scf::ForOp::create(b, loc, index(0), index(spilled), index(1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      indices[d] = loop.getInductionVar();
      copyRow(indices, /*spills=*/true);
    }
    for (int64_t row = spilled; row < ranges[d]; ++row) {
      indices[d] = index(row);
      copyRow(indices, /*spills=*/false);
    }
  }

  /// Copies the row at `indices` (the innermost one ignored): whole
  /// vectors, unrolled when few, then the masked rest, or when it `spills`
  /// the rest's vector stored whole.
  void copyRow(SmallVector<Value> indices, bool spills) {
    int64_t length = ranges.back();
    int64_t whole = length / lanes;
    if (whole <= kMaxUnrolledVectors) {
      for (int64_t v = 0; v < whole; ++v) {
        indices.back() = index(v * lanes);
        copyVector(indices, lanes);
      }
    } else {
      auto loop = scf::ForOp::create(b, loc, index(0), index(whole * lanes),
                                     index(lanes));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> at(indices);
      at.back() = loop.getInductionVar();
      copyVector(at, lanes);
    }
    if (length % lanes == 0)
      return;
    indices.back() = index(whole * lanes);
    copyVector(indices, length % lanes, spills);
  }

  /// The `count` elements of a row that repeats each source element
  /// `source.repeat` times, from the one at `from` (the vector starts a
  /// run: it starts at a multiple of `lanes`, which the repeat divides): the
  /// ceil(count / repeat) source elements loaded as a prefix, lane p of the
  /// result their lane p / repeat (one single-source shuffle).
  Value repeatLanes(ValueRange from, int64_t count) {
    int64_t repeat = source.repeat;
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(vectorType));
    Value elements = kiln::loadPrefix(b, loc, vectorType, source.buffer, from,
                                      llvm::divideCeil(count, repeat), zero);
    SmallVector<int64_t> spread;
    for (int64_t p = 0; p < lanes; ++p)
      spread.push_back(p / repeat);
    return vector::ShuffleOp::create(b, loc, elements, elements, spread);
  }

  /// The mask of the first `count` lanes (made once per vector copied).
  Value mask(int64_t count) {
    count = std::clamp<int64_t>(count, 0, lanes);
    Value &mask = masks[count];
    if (!mask)
      mask = vector::ConstantMaskOp::create(
          b, loc, VectorType::get({lanes}, b.getI1Type()),
          ArrayRef<int64_t>{count});
    return mask;
  }

  /// The source's `count` elements from `from` (count < lanes: masked).
  Value load(ValueRange from, int64_t count) {
    if (count >= lanes)
      return vector::LoadOp::create(b, loc, vectorType, source.buffer, from);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(vectorType));
    return vector::MaskedLoadOp::create(b, loc, vectorType, source.buffer, from,
                                        mask(count), zero);
  }

  /// One vector of the row from loop position `at`, of which `count` lanes
  /// are stored (all when `count` is lanes; the rest, zeros, too when it
  /// `spills` into the next row). A stride-2 row reads the
  /// 2 * count - 1 elements from the first in two vectors and keeps their
  /// even lanes (one two-source shuffle).
  void copyVector(SmallVector<Value> at, int64_t count, bool spills = false) {
    masks.clear();
    SmallVector<Value> from;
    for (AffineExpr result : source.map.getResults())
      from.push_back(affine::expandAffineExpr(b, loc, result, at, {}));
    Value value;
    if (source.repeat > 1) {
      value = repeatLanes(from, count);
    } else if (source.stride == 1) {
      value = load(from, count);
    } else {
      int64_t span = 2 * count - 1;
      Value low = load(from, span);
      from.back() = arith::AddIOp::create(
          b, loc, from.back(), arith::ConstantIndexOp::create(b, loc, lanes));
      Value high =
          span > lanes
              ? load(from, span - lanes)
              : arith::ConstantOp::create(b, loc, b.getZeroAttr(vectorType));
      SmallVector<int64_t> even;
      for (int64_t i = 0; i < lanes; ++i)
        even.push_back(2 * i);
      value = vector::ShuffleOp::create(b, loc, low, high, even);
    }
    if (count == lanes || spills) {
      vector::StoreOp::create(b, loc, value, target, at);
      return;
    }
    vector::MaskedStoreOp::create(b, loc, target, at, mask(count), value);
  }

  linalg::LinalgOp op;
  OpBuilder b;
  Location loc;
  RowSource source;
  Value target;
  SmallVector<int64_t> ranges;
  int64_t lanes = 1;
  VectorType vectorType;
  llvm::SmallDenseMap<int64_t, Value> masks;
};

/// A copy that transposes two dims: the output's innermost loop `columns`
/// reads along a dim of the source other than its innermost one, which
/// loop `rows` reads (attention's K^T: out[h][d][t] = in[t][h][d], rows d,
/// columns t). As scalar loops, consecutive outputs are a source row's
/// stride apart.
struct TransposeSource {
  Value buffer;
  AffineMap map;
  unsigned rows, columns;
};

/// The source of `op` when it is a copy of 32-bit elements whose input
/// map, through static subviews at offset 0, reads each loop at most once
/// (a permutation; constant indices for dropped dims), and whose innermost
/// output loop is read, but not as the input's innermost dim; both
/// transposed loops at least half a vector long.
std::optional<TransposeSource> transposeCopySource(linalg::LinalgOp op,
                                                   int64_t lanes) {
  if (!kiln::isBufferCopy(op))
    return std::nullopt;
  Value target = op.getDpsInitOperand(0)->get();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto [source, map] =
      throughSubviews(op.getDpsInputOperand(0)->get(), maps[0]);
  Type element = getElementTypeOrSelf(target);
  if (!hasContiguousRows(target.getType()) || !maps[1].isIdentity() ||
      !hasContiguousRows(source.getType()) ||
      getElementTypeOrSelf(source) != element || !element.isIntOrFloat() ||
      element.getIntOrFloatBitWidth() != 32 || map.getNumSymbols() != 0 ||
      map.getNumResults() == 0)
    return std::nullopt;
  for (AffineExpr result : map.getResults())
    if (!isa<AffineDimExpr, AffineConstantExpr>(result))
      return std::nullopt;
  auto innermost = dyn_cast<AffineDimExpr>(map.getResults().back());
  unsigned columns = map.getNumDims() - 1;
  if (!innermost || innermost.getPosition() == columns)
    return std::nullopt;
  unsigned rows = innermost.getPosition();
  // Each loop read at most once (a permutation, some loops broadcast), the
  // two transposed ones exactly once.
  SmallVector<int64_t> uses(map.getNumDims(), 0);
  for (AffineExpr result : map.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      ++uses[dim.getPosition()];
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(uses, [](int64_t n) { return n > 1; }) ||
      uses[columns] != 1 || llvm::is_contained(ranges, 0) ||
      !llvm::isPowerOf2_64(lanes) || ranges[rows] < lanes / 2 ||
      ranges[columns] < lanes / 2)
    return std::nullopt;
  return TransposeSource{source, map, rows, columns};
}

/// Replaces one transposing copy (transposeCopySource) by blocks of
/// `lanes` x `lanes` elements: `lanes` vectors loaded along the source's
/// rows, transposed in registers (kiln::transposeBlock), stored along the
/// output's rows; partial blocks masked. A parallel loop over the other
/// loops and the blocks of rows, each sweeping the blocks of columns.
class TransposeCopyEmitter {
public:
  TransposeCopyEmitter(linalg::LinalgOp op, const TransposeSource &source,
                       int64_t lanes)
      : op(op), b(op), loc(op.getLoc()), source(source),
        target(op.getDpsInitOperand(0)->get()),
        ranges(op.getStaticLoopRanges()), lanes(lanes),
        vectorType(VectorType::get({lanes}, getElementTypeOrSelf(target))) {}

  void emit() {
    int64_t rowCount = ranges[source.rows];
    int64_t fullBlocks = rowCount / lanes;
    if (fullBlocks)
      blocksInParallel(fullBlocks, lanes, 0);
    if (rowCount % lanes)
      blocksInParallel(1, rowCount % lanes, fullBlocks * lanes);
    op->erase();
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// `blocks` blocks of `height` rows from row `firstRow`, for every value
  /// of the other loops, in parallel.
  void blocksInParallel(int64_t blocks, int64_t height, int64_t firstRow) {
    SmallVector<unsigned> outer;
    SmallVector<int64_t> bounds;
    int64_t elements = blocks * height * ranges[source.columns];
    for (unsigned d = 0; d < ranges.size(); ++d)
      if (d != source.rows && d != source.columns && ranges[d] > 1) {
        outer.push_back(d);
        bounds.push_back(ranges[d]);
        elements *= ranges[d];
      }
    if (blocks > 1)
      bounds.push_back(blocks);
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> ivs = openParallelLoop(b, loc, bounds, elements);
    SmallVector<Value> at(ranges.size(), index(0));
    for (auto [d, iv] : llvm::zip(outer, ivs))
      at[d] = iv;
    at[source.rows] = index(firstRow);
    if (blocks > 1)
      at[source.rows] = arith::AddIOp::create(
          b, loc, at[source.rows],
          arith::MulIOp::create(b, loc, ivs.back(), index(lanes)));
    int64_t columnCount = ranges[source.columns];
    int64_t fullColumns = columnCount / lanes * lanes;
    if (fullColumns) {
      auto sweep = scf::ForOp::create(b, loc, index(0), index(fullColumns),
                                      index(lanes));
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(sweep.getBody());
      at[source.columns] = sweep.getInductionVar();
      block(at, height, lanes);
    }
    if (columnCount % lanes) {
      at[source.columns] = index(fullColumns);
      block(at, height, columnCount % lanes);
    }
  }

  /// The block of `height` rows x `width` columns at loop position `at`.
  void block(SmallVector<Value> at, int64_t height, int64_t width) {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(vectorType));
    // Vector i: `height` elements of the source's row for column at + i.
    SmallVector<Value> vectors;
    Value column0 = at[source.columns];
    for (int64_t i = 0; i < lanes; ++i) {
      if (i >= width) {
        vectors.push_back(zero);
        continue;
      }
      SmallVector<Value> position(at);
      position[source.columns] =
          arith::AddIOp::create(b, loc, column0, index(i));
      SmallVector<Value> from;
      for (AffineExpr result : source.map.getResults())
        from.push_back(affine::expandAffineExpr(b, loc, result, position, {}));
      vectors.push_back(
          height == lanes
              ? vector::LoadOp::create(b, loc, vectorType, source.buffer, from)
                    .getResult()
              : kiln::loadPrefix(b, loc, vectorType, source.buffer, from,
                                 height, zero));
    }
    kiln::transposeBlock(b, loc, vectors);
    // Vector r now holds output row at + r: `width` elements.
    Value row0 = at[source.rows];
    for (int64_t r = 0; r < height; ++r) {
      SmallVector<Value> to(at);
      to[source.rows] = arith::AddIOp::create(b, loc, row0, index(r));
      if (width == lanes)
        vector::StoreOp::create(b, loc, vectors[r], target, to);
      else
        kiln::storePrefix(b, loc, vectors[r], target, to, width);
    }
  }

  linalg::LinalgOp op;
  OpBuilder b;
  Location loc;
  TransposeSource source;
  Value target;
  SmallVector<int64_t> ranges;
  int64_t lanes;
  VectorType vectorType;
};

struct VectorizeRowCopiesPass
    : public kiln::impl::VectorizeRowCopiesBase<VectorizeRowCopiesPass> {
  using VectorizeRowCopiesBase::VectorizeRowCopiesBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, RowSource>> copies;
    SmallVector<std::pair<linalg::LinalgOp, TransposeSource>> transposes;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<RowSource> source = rowCopySource(op, lanes))
        copies.push_back({op, *source});
      else if (std::optional<TransposeSource> source =
                   transposeCopySource(op, lanes))
        transposes.push_back({op, *source});
    });
    for (auto &[op, source] : copies)
      RowCopyEmitter(op, source, lanes).emit();
    for (auto &[op, source] : transposes)
      TransposeCopyEmitter(op, source, lanes).emit();
  }
};

} // namespace
