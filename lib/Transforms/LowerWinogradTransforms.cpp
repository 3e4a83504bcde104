//===- LowerWinogradTransforms.cpp - kiln-lower-winograd-transforms -------===//
//
// A Winograd F(2x2, 3x3) convolution (convert-kiln-to-linalg's
// WinogradConv.cpp) transforms its input tiles before 16 matmuls and their
// products after, as linalg.generic ops tagged kiln.winograd: as loops they
// are scalar (stride-2 reads, 16 terms each). Here each becomes a parallel
// loop over rows of tiles (one channel, image and tile row per iteration)
// computing 16 tiles per vector:
//  * input: V = B^T d B. The 4 input rows of a tile row are loaded as pairs
//    of vectors and split into their even and odd columns (columns 2 tx + j
//    of 16 tiles, j = 0..3, are 4 vectors), then combined along the rows and
//    the columns with B^T's coefficients (its zeros skipped, its ones
//    adds): 16 loads, 16 shuffles and 32 adds for 256 values.
//  * output: Y = A^T M A. The 16 products of 16 tiles are combined along
//    the columns, then the rows, into the 2x2 outputs of each tile, whose
//    column pairs are interleaved into 2 vectors per output row; the
//    elementwise epilogue (bias, activation, residual: kiln::Epilogue) is
//    applied on them before the store.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/ConstantData.h"
#include "kiln/Transforms/Epilogue.h"
#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {
#define GEN_PASS_DEF_LOWERWINOGRADTRANSFORMS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr int64_t kTile = 4, kOutput = 2;

/// A transform matrix's coefficients (row-major), read from the constant
/// global `value` is loaded from.
std::optional<SmallVector<float>> matrixData(Value value,
                                             SymbolTable &symbols) {
  auto get = value.getDefiningOp<memref::GetGlobalOp>();
  auto global = get ? symbols.lookup<memref::GlobalOp>(get.getName()) : nullptr;
  if (!global || !global.getConstant() || !global.getInitialValue())
    return std::nullopt;
  return kiln::readFloatData(*global.getInitialValue());
}

class TransformEmitter {
public:
  TransformEmitter(linalg::GenericOp op, ArrayRef<float> matrix, int64_t lanes)
      : op(op), matrix(matrix), lanes(lanes), b(op), loc(op.getLoc()) {
    vectorType = VectorType::get({lanes}, b.getF32Type());
  }

  void emitInput() {
    Value input = op.getDpsInputs()[0], output = op.getDpsInits()[0];
    ArrayRef<int64_t> shape = cast<MemRefType>(output.getType()).getShape();
    int64_t channels = shape[2], images = shape[3], tileRows = shape[4],
            tileCols = shape[5];
    int64_t width = cast<MemRefType>(input.getType()).getDimSize(3);
    eraseZeroFill(output);
    rowsOfTiles(
        {channels, images, tileRows}, tileCols, 256,
        [&](Value c, Value n, Value ty, Value tx0, int64_t count) {
          // d[i][j]: column 2 tx + j of input row 2 ty + i.
          Value d[kTile][kTile];
          for (int64_t i = 0; i < kTile; ++i) {
            Value row = add(mul(ty, kOutput), i);
            for (int64_t shift : {0, 2}) {
              Value start = add(mul(tx0, kOutput), shift);
              // Valid values of the row from `start` on, for the
              // last, partial vector (its first tile is tileCols -
              // count); the whole vectors stay inside the row.
              std::optional<int64_t> left;
              if (count < lanes)
                left = width - (tileCols - count) * kOutput - shift;
              Value low = loadRow(input, {n, c, row}, start, left);
              Value high = loadRow(input, {n, c, row}, add(start, lanes),
                                   left ? std::optional<int64_t>(*left - lanes)
                                        : std::nullopt);
              d[i][shift] = deinterleave(low, high, 0);
              d[i][shift + 1] = deinterleave(low, high, 1);
            }
          }
          Value t[kTile][kTile]; // B^T d
          for (int64_t a = 0; a < kTile; ++a)
            for (int64_t j = 0; j < kTile; ++j)
              t[a][j] = combine(a, kTile, [&](int64_t i) { return d[i][j]; });
          for (int64_t a = 0; a < kTile; ++a)
            for (int64_t bb = 0; bb < kTile; ++bb) {
              Value v = combine(bb, kTile, [&](int64_t j) { return t[a][j]; });
              store(v, output, {index(a), index(bb), c, n, ty, tx0}, count);
            }
        });
    op.erase();
  }

  void emitOutput() {
    Value products = op.getDpsInputs()[0], result = op.getDpsInits()[0];
    ArrayRef<int64_t> shape = cast<MemRefType>(result.getType()).getShape();
    int64_t images = shape[0], outputs = shape[1], tileRows = shape[2],
            tileCols = shape[4];
    // The result as [image and channel, plane] (a bias is one value per
    // row).
    int64_t rows = images * outputs,
            columns = tileRows * kOutput * tileCols * kOutput;
    eraseZeroFill(result);
    std::optional<kiln::Epilogue> epilogue =
        kiln::Epilogue::find(op, result, rows, columns);
    if (epilogue)
      epilogue->prepare(b, loc);
    Value target =
        epilogue ? epilogue->output()
                 : memref::CollapseShapeOp::create(
                       b, loc, result,
                       SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4, 5}});
    rowsOfTiles(
        {outputs, images, tileRows}, tileCols, 64,
        [&](Value o, Value n, Value ty, Value tx0, int64_t count) {
          Value m[kTile][kTile];
          for (int64_t a = 0; a < kTile; ++a)
            for (int64_t bb = 0; bb < kTile; ++bb)
              m[a][bb] =
                  load(products, {index(a), index(bb), o, n, ty, tx0}, count);
          Value p[kTile][kOutput]; // M A
          for (int64_t a = 0; a < kTile; ++a)
            for (int64_t j = 0; j < kOutput; ++j)
              p[a][j] = combine(j, kTile, [&](int64_t bb) { return m[a][bb]; });
          Value row = add(mul(n, outputs), o);
          int64_t lineLength = tileCols * kOutput;
          for (int64_t i = 0; i < kOutput; ++i) {
            Value y[kOutput];
            for (int64_t j = 0; j < kOutput; ++j)
              y[j] = combine(i, kTile, [&](int64_t a) { return p[a][j]; });
            Value line = mul(add(mul(ty, kOutput), i), lineLength);
            // Tile tx's outputs are columns 2 tx and 2 tx + 1.
            for (int64_t half = 0; half < 2; ++half) {
              int64_t valid =
                  std::clamp<int64_t>(2 * count - half * lanes, 0, lanes);
              if (!valid)
                continue;
              Value values = interleave(y[0], y[1], half);
              Value column =
                  add(add(line, mul(tx0, kOutput)), index(half * lanes));
              Value mask = valid < lanes ? constantMask(valid) : Value();
              if (epilogue)
                values = epilogue->apply(b, loc, values, row, column, mask);
              store(values, target, {row, column}, valid);
            }
          }
        });
    op.erase();
    if (epilogue)
      epilogue->erase();
  }

private:
  /// A parallel loop over the rows of tiles of every (channel, image,
  /// `extents`), each `tiles` long: `body` (channel, image, tile row, first
  /// tile, tiles in the vector) runs for every whole vector of tiles in a
  /// loop and once for the partial last one. `work`: the scalar iterations
  /// each tile replaces (for kiln-outline-parallel-loops).
  void rowsOfTiles(
      std::array<int64_t, 3> extents, int64_t tiles, int64_t work,
      function_ref<void(Value, Value, Value, Value, int64_t)> tileBody) {
    auto [channels, images, tileRows] = extents;
    int64_t rows = channels * images * tileRows;
    auto loop =
        scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                ValueRange{index(rows)}, ValueRange{index(1)});
    loop->setAttr(kiln::kWorkAttrName,
                  b.getI64IntegerAttr(rows * tiles * work));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value q = loop.getInductionVars()[0];
    Value channel = div(q, images * tileRows);
    Value image = rem(div(q, tileRows), images);
    Value row = rem(q, tileRows);
    auto body = [&](Value tx0, int64_t count) {
      tileBody(channel, image, row, tx0, count);
    };
    int64_t whole = tiles / lanes * lanes;
    if (whole) {
      auto vectors =
          scf::ForOp::create(b, loc, index(0), index(whole), index(lanes));
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(vectors.getBody()->getTerminator());
      body(vectors.getInductionVar(), lanes);
    }
    if (whole < tiles)
      body(index(whole), tiles - whole);
  }

  /// sum_k matrix[row][k] * values(k) over `terms` terms, with the
  /// coefficients 0 skipped and +-1 as adds and subtractions.
  Value combine(int64_t row, int64_t terms,
                function_ref<Value(int64_t)> values) {
    Value sum;
    for (int64_t k = 0; k < terms; ++k) {
      float weight = matrix[row * terms + k];
      if (weight == 0)
        continue;
      Value x = values(k);
      if (weight != 1 && weight != -1)
        x = arith::MulFOp::create(b, loc, x, splat(std::abs(weight)));
      bool negative = weight < 0;
      if (!sum)
        sum = negative ? arith::NegFOp::create(b, loc, x).getResult() : x;
      else if (negative)
        sum = arith::SubFOp::create(b, loc, sum, x);
      else
        sum = arith::AddFOp::create(b, loc, sum, x);
    }
    return sum ? sum : splat(0);
  }

  /// Lanes 2 l + `phase` of the 2 x lanes values (low, high).
  Value deinterleave(Value low, Value high, int64_t phase) {
    SmallVector<int64_t> picks;
    for (int64_t l = 0; l < lanes; ++l)
      picks.push_back(2 * l + phase);
    return vector::ShuffleOp::create(b, loc, low, high, picks);
  }

  /// The `half`th `lanes` values of (even[0], odd[0], even[1], odd[1], ...).
  Value interleave(Value even, Value odd, int64_t half) {
    SmallVector<int64_t> picks;
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t pair = half * lanes / 2 + l / 2;
      picks.push_back(l % 2 ? lanes + pair : pair);
    }
    return vector::ShuffleOp::create(b, loc, even, odd, picks);
  }

  /// `lanes` values of `buffer` from [prefix..., column], `valid` of them
  /// (all when unset) and 0 for the rest.
  Value loadRow(Value buffer, ValueRange prefix, Value column,
                std::optional<int64_t> valid) {
    SmallVector<Value> at(prefix);
    at.push_back(column);
    if (!valid || *valid >= lanes)
      return vector::LoadOp::create(b, loc, vectorType, buffer, at);
    if (*valid <= 0)
      return splat(0);
    return kiln::loadPrefix(b, loc, vectorType, buffer, at, *valid, splat(0));
  }

  Value load(Value buffer, ValueRange at, int64_t count) {
    SmallVector<Value> prefix(at.drop_back());
    return loadRow(buffer, prefix, at.back(),
                   count < lanes ? std::optional<int64_t>(count)
                                 : std::nullopt);
  }

  void store(Value values, Value buffer, ValueRange at, int64_t count) {
    if (count < lanes)
      kiln::storePrefix(b, loc, values, buffer, at, count);
    else
      vector::StoreOp::create(b, loc, values, buffer, at);
  }

  /// The zero fill of `buffer` the generic accumulates into: every element
  /// is written here, so it goes.
  void eraseZeroFill(Value buffer) {
    for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
      if (auto fill = dyn_cast<linalg::FillOp>(user))
        if (fill->getBlock() == op->getBlock() && fill->isBeforeInBlock(op))
          fill.erase();
  }

  Value constantMask(int64_t count) {
    return vector::ConstantMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        ArrayRef<int64_t>{count});
  }
  Value splat(float value) {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(vectorType, value));
  }
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t c) { return add(x, index(c)); }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, index(c));
  }
  Value div(Value x, int64_t c) {
    return arith::DivUIOp::create(b, loc, x, index(c));
  }
  Value rem(Value x, int64_t c) {
    return arith::RemUIOp::create(b, loc, x, index(c));
  }

  linalg::GenericOp op;
  ArrayRef<float> matrix;
  int64_t lanes;
  OpBuilder b;
  Location loc;
  VectorType vectorType;
};

/// Whether `value` is a statically shaped f32 buffer with contiguous rows
/// (a group of images is a view with a dynamic offset).
bool hasF32Rows(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return false;
  auto [strides, offset] = type.getStridesAndOffset();
  return strides.back() == 1;
}

/// Whether `op` is a transform this pass emits: the shapes WinogradConv.cpp
/// gives them, on f32 buffers with contiguous rows.
bool isLowerable(linalg::GenericOp op, StringRef kind) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 3 ||
      op.getNumDpsInits() != 1 || !hasF32Rows(op.getDpsInputs()[0]) ||
      !hasF32Rows(op.getDpsInits()[0]))
    return false;
  auto input = cast<MemRefType>(op.getDpsInputs()[0].getType());
  ArrayRef<int64_t> out =
      cast<MemRefType>(op.getDpsInits()[0].getType()).getShape();
  if (kind == kiln::kWinogradInput)
    return input.getRank() == 4 && out.size() == 6 && out[0] == kTile &&
           out[1] == kTile && input.getDimSize(0) == out[3] &&
           input.getDimSize(1) == out[2] &&
           input.getDimSize(2) >= out[4] * kOutput + 2 &&
           input.getDimSize(3) >= out[5] * kOutput + 2;
  return kind == kiln::kWinogradOutput && input.getRank() == 6 &&
         out.size() == 6 && input.getDimSize(0) == kTile &&
         input.getDimSize(1) == kTile && out[3] == kOutput &&
         out[5] == kOutput && input.getDimSize(2) == out[1] &&
         input.getDimSize(3) == out[0] && input.getDimSize(4) == out[2] &&
         input.getDimSize(5) == out[4];
}

struct LowerWinogradTransformsPass
    : public kiln::impl::LowerWinogradTransformsBase<
          LowerWinogradTransformsPass> {
  using LowerWinogradTransformsBase::LowerWinogradTransformsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<linalg::GenericOp> ops;
    module.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kiln::kWinogradAttrName))
        ops.push_back(op);
    });
    for (linalg::GenericOp op : ops) {
      auto kind = op->getAttrOfType<StringAttr>(kiln::kWinogradAttrName);
      std::optional<SmallVector<float>> matrix =
          matrixData(op.getDpsInputs()[1], symbols);
      bool input = kind && kind.getValue() == kiln::kWinogradInput;
      int64_t expected = (input ? kTile : kOutput) * kTile;
      if (!kind || !isLowerable(op, kind.getValue()) || !matrix ||
          int64_t(matrix->size()) != expected)
        continue;
      TransformEmitter emitter(op, *matrix, lanes);
      if (input)
        emitter.emitInput();
      else
        emitter.emitOutput();
    }
  }
};

} // namespace
