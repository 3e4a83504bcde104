//===- WinogradConv.cpp - 3x3 convolutions as Winograd F(2x2, 3x3) --------===//
//
// A 3x3 stride-1 convolution computes each 2x2 block of outputs from a 4x4
// block of its input with 16 multiplies per (input, output) channel pair
// instead of 36 (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2016):
//
//   Y = A^T [ (G g G^T) . (B^T d B) ] A
//
// where g is a 3x3 filter, d a 4x4 input tile, . the elementwise product,
// and B^T, G, A^T small constant matrices. Summed over the input channels,
// the elementwise products are 16 matmuls, one per point of the 4x4 tile:
//
//   M[xi] (O x T) = U[xi] (O x C) @ V[xi] (C x T)
//
// with U = G g G^T the filters transformed at compile time and V = B^T d B
// the input tiles transformed at run time (T tiles). The matmuls, 2.25x
// fewer multiplies than the direct convolution, run on kiln-lower-matmul's
// kernel; the transforms are linalg.generic ops tagged for
// kiln-lower-winograd-transforms, which emits them as vector code (16
// tiles per vector, the transform matrices' zeros and ones folded away).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "Winograd.h"

#include "kiln/Transforms/KernelEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace kiln::detail {
namespace {

constexpr int64_t kTile = 4;   // input tile: m + r - 1
constexpr int64_t kOutput = 2; // output tile m

// The transform matrices of F(2x2, 3x3), row-major.
constexpr float kBT[4][4] = {
    {1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr float kG[4][3] = {
    {1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
constexpr float kAT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/// Largest transformed input (16 x C x T floats) a group of images is
/// transformed into at once, so that it and the matmuls' products stay in
/// the caches between the transforms and the matmuls. ResNet's 56x56 layer
/// at batch 8: the whole batch (25.7 MB) 19.7 ms, slower than direct (17.6);
/// groups of 4 (12.8 MB) 15.8 ms; one image at a time (3.2 MB) 11.9 ms.
constexpr int64_t kMaxTransformedBytes = 4 << 20;

/// Bytes of one way of an x86 L1 data cache (64 sets of 64-byte lines, at
/// 8 or 12 ways): addresses this far apart share a set.
constexpr int64_t kL1WayBytes = 4096, kLineBytes = 64;
/// Matrices of the transformed input written at once: one store per point
/// of the tile.
constexpr int64_t kMatrices = kTile * kTile;

/// Rows of `rowFloats` floats to leave unused after each of the 16 [rows,
/// rowFloats] matrices of the transformed input, so that the input
/// transform's 16 stores of a vector of tiles, a matrix apart, fall in
/// different L1 sets: the fewest rows (up to 15) for which no set takes
/// more than two of them. Unspaced, a matrix's bytes are often a multiple
/// of 4 KiB (64 channels x 784 tiles: ResNet's 56x56 layer), and all 16
/// stores go to one set of 8 or 12 ways: lines are evicted half-written and
/// read back. That layer on a Zen 5 core: its input transform 190 -> 51 us,
/// the layer 0.71 -> 0.56 ms on 1 thread, 0.41 -> 0.31 on 2, AVX2 1.47 ->
/// 1.14 (a loop of its stores alone: 110 -> 35 us).
int64_t spareRows(int64_t rows, int64_t rowFloats) {
  auto crowding = [&](int64_t spare) {
    int64_t matrixBytes = (rows + spare) * rowFloats * 4;
    llvm::SmallDenseMap<int64_t, int64_t> perSet;
    int64_t most = 0;
    for (int64_t matrix = 0; matrix < kMatrices; ++matrix)
      most = std::max(
          most, ++perSet[matrix * matrixBytes % kL1WayBytes / kLineBytes]);
    return most;
  };
  int64_t best = 0, bestCrowding = crowding(0);
  for (int64_t spare = 1; spare < 16 && bestCrowding > 2; ++spare)
    if (int64_t c = crowding(spare); c < bestCrowding) {
      best = spare;
      bestCrowding = c;
    }
  return best;
}

/// A constant tensor of `shape` holding `data`.
Value constantTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                     ArrayRef<float> data, StringRef name) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  auto attr = DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyInferAlign(data));
  return arith::ConstantOp::create(b, loc, attr);
}

/// A small constant matrix (a transform) as a dense attribute.
template <size_t Rows, size_t Cols>
Value transformMatrix(OpBuilder &b, Location loc,
                      const float (&matrix)[Rows][Cols]) {
  SmallVector<float> values;
  for (const auto &row : matrix)
    values.append(std::begin(row), std::end(row));
  auto type =
      RankedTensorType::get({int64_t(Rows), int64_t(Cols)}, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

/// U[a][b][o][c] = (G g[o][c] G^T)[a][b], for filters [O][C][3][3].
SmallVector<float> transformFilters(ArrayRef<float> filters, int64_t outputs,
                                    int64_t inputs) {
  int64_t pairs = outputs * inputs;
  SmallVector<float> u(kTile * kTile * pairs);
  for (int64_t pair = 0; pair < pairs; ++pair) {
    const float *g = filters.data() + pair * 9;
    float gt[4][3]; // G g
    for (int a = 0; a < 4; ++a)
      for (int l = 0; l < 3; ++l)
        gt[a][l] = kG[a][0] * g[l] + kG[a][1] * g[3 + l] + kG[a][2] * g[6 + l];
    for (int a = 0; a < 4; ++a)
      for (int bb = 0; bb < 4; ++bb)
        u[(a * kTile + bb) * pairs + pair] =
            gt[a][0] * kG[bb][0] + gt[a][1] * kG[bb][1] + gt[a][2] * kG[bb][2];
  }
  return u;
}

/// A transform `out[dims] = sum_{s,t} T1[d1][s] T2[d2][t] in[...]` as a
/// linalg.generic with the two reduction dims (s, t) last, tagged
/// kWinogradAttr = `kind` so that kiln-lower-winograd-transforms emits it as
/// vector code (as a plain generic it is correct, and slow).
Value transformGeneric(OpBuilder &b, Location loc, StringRef kind,
                       Value operand, AffineMap operandMap, Value first,
                       AffineMap firstMap, Value second, AffineMap secondMap,
                       Value init) {
  auto outType = cast<RankedTensorType>(init.getType());
  MLIRContext *context = b.getContext();
  unsigned rank = outType.getRank();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  SmallVector<AffineMap> maps = {
      operandMap, firstMap, secondMap,
      AffineMap::getMultiDimIdentityMap(rank + 2, context)
          .getMajorSubMap(rank)};
  init = linalg::FillOp::create(
             b, loc, scalarConstant(b, loc, outType.getElementType(), 0), init)
             .getResult(0);
  auto generic = linalg::GenericOp::create(
      b, loc, outType, ValueRange{operand, first, second}, init, maps,
      iterators, [](OpBuilder &nb, Location l, ValueRange args) {
        Value weight = arith::MulFOp::create(nb, l, args[1], args[2]);
        Value sum = math::FmaOp::create(nb, l, args[0], weight, args[3]);
        linalg::YieldOp::create(nb, l, sum);
      });
  generic->setAttr(kWinogradAttrName, b.getStringAttr(kind));
  return generic.getResult(0);
}

} // namespace

WinogradShape::WinogradShape(RankedTensorType input, RankedTensorType output)
    : batch(output.getDimSize(0)), channels(input.getDimSize(1)),
      outputs(output.getDimSize(1)),
      tileRows(llvm::divideCeil(output.getDimSize(2), kOutput)),
      tileCols(llvm::divideCeil(output.getDimSize(3), kOutput)) {}

int64_t WinogradShape::imagesPerGroup() const {
  int64_t perImage = 16 * channels * tileRows * tileCols * 4;
  for (int64_t group = batch; group > 0; --group)
    if (batch % group == 0 && group * perImage <= kMaxTransformedBytes)
      return group;
  return 0;
}

std::optional<double> winogradShare(ArrayRef<int64_t> kernel,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> dilations,
                                    RankedTensorType input,
                                    RankedTensorType output) {
  if (kernel != ArrayRef<int64_t>{3, 3} ||
      llvm::any_of(strides, [](int64_t s) { return s != 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d != 1; }) ||
      !input.hasStaticShape() || !output.hasStaticShape())
    return std::nullopt;
  WinogradShape shape(input, output);
  int64_t group = shape.imagesPerGroup();
  if (shape.channels < 16 || shape.outputs < 16 || !group)
    return std::nullopt;
  // Multiplies per (input, output) channel pair and group of images: the
  // direct convolution's 9 per output pixel against 16 per tile, with the
  // matmul's columns (the group's tiles) in panels of 32; the transforms
  // cost about a third more.
  int64_t pixels = group * output.getDimSize(2) * output.getDimSize(3);
  int64_t direct = 9 * pixels;
  int64_t winograd =
      16 * llvm::alignTo(group * shape.tileRows * shape.tileCols, 32);
  if (3 * direct <= 4 * winograd)
    return std::nullopt;
  return double(winograd) / double(direct);
}

namespace {

/// The constants every group of images uses: the transformed filters `u`
/// [16, O, C] and the transform matrices B^T and A^T.
struct WinogradConstants {
  Value u, bt, at;
};

/// The convolution of one group of images: `padded` [g, C, ...] into `init`
/// [g, O, 2 * tileRows, 2 * tileCols] (its values unused).
Value winogradGroup(OpBuilder &b, Location loc, Value padded, Value init,
                    const WinogradConstants &constants,
                    const WinogradShape &shape) {
  MLIRContext *context = b.getContext();
  int64_t n = cast<RankedTensorType>(padded.getType()).getDimSize(0),
          c = shape.channels, o = shape.outputs, th = shape.tileRows,
          tw = shape.tileCols, tiles = n * th * tw;
  Type f32 = b.getF32Type();
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  auto [u, bt, at] = constants;

  // V[a][b][c][n][ty][tx] = sum_{i,j} BT[a][i] BT[b][j]
  //                           X[n][c][2 ty + i][2 tx + j].
  // Loops (a, b, c, n, ty, tx, i, j). Written into a buffer with spare
  // channels, whose matrices start in different L1 sets (spareRows); the
  // matmul reads them in place.
  int64_t spare = spareRows(c, tiles);
  Value vInit = emptyTensor(
      b, loc, RankedTensorType::get({kTile, kTile, c + spare, n, th, tw}, f32));
  if (spare) {
    SmallVector<int64_t> sizes = {kTile, kTile, c, n, th, tw};
    vInit = tensor::ExtractSliceOp::create(
        b, loc, vInit,
        getAsIndexOpFoldResult(context, SmallVector<int64_t>(6, 0)),
        getAsIndexOpFoldResult(context, sizes),
        getAsIndexOpFoldResult(context, SmallVector<int64_t>(6, 1)));
  }
  Value v = transformGeneric(
      b, loc, kWinogradInput, padded,
      AffineMap::get(8, 0,
                     {dim(3), dim(2), dim(4) * kOutput + dim(6),
                      dim(5) * kOutput + dim(7)},
                     context),
      bt, AffineMap::get(8, 0, {dim(0), dim(6)}, context), bt,
      AffineMap::get(8, 0, {dim(1), dim(7)}, context), vInit);
  v = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({kTile * kTile, c, tiles}, f32), v,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});

  // M[xi][o][t] = sum_c U[xi][o][c] V[xi][c][t].
  auto productType = RankedTensorType::get({kTile * kTile, o, tiles}, f32);
  SmallVector<AffineMap> matmulMaps = {
      AffineMap::get(4, 0, {dim(0), dim(1), dim(3)}, context),
      AffineMap::get(4, 0, {dim(0), dim(3), dim(2)}, context),
      AffineMap::get(4, 0, {dim(0), dim(1), dim(2)}, context)};
  Value m =
      linalg::GenericOp::create(
          b, loc, productType, ValueRange{u, v},
          filledTensor(b, loc, productType, scalarConstant(b, loc, f32, 0)),
          matmulMaps,
          {utils::IteratorType::parallel, utils::IteratorType::parallel,
           utils::IteratorType::parallel, utils::IteratorType::reduction},
          multiplyAccumulate)
          .getResult(0);
  m = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({kTile, kTile, o, n, th, tw}, f32), m,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});

  // Y[n][o][ty][i][tx][j] = sum_{a,b} AT[i][a] AT[j][b] M[a][b][o][n][ty][tx].
  // Loops (n, o, ty, i, tx, j, a, b).
  auto tiledType = RankedTensorType::get({n, o, th, kOutput, tw, kOutput}, f32);
  SmallVector<ReassociationIndices> planes = {{0}, {1}, {2, 3}, {4, 5}};
  Value y = transformGeneric(
      b, loc, kWinogradOutput, m,
      AffineMap::get(8, 0, {dim(6), dim(7), dim(1), dim(0), dim(2), dim(4)},
                     context),
      at, AffineMap::get(8, 0, {dim(3), dim(6)}, context), at,
      AffineMap::get(8, 0, {dim(5), dim(7)}, context),
      tensor::ExpandShapeOp::create(b, loc, tiledType, init, planes));
  return tensor::CollapseShapeOp::create(b, loc, init.getType(), y, planes);
}

/// The slice of images [`first`, `first` + `count`) of an [N, ...] tensor of
/// `shape`, whole along the other dims.
struct ImageSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;

  ImageSlice(OpBuilder &b, ArrayRef<int64_t> shape, OpFoldResult first,
             int64_t count)
      : offsets(shape.size(), b.getIndexAttr(0)),
        strides(shape.size(), b.getIndexAttr(1)) {
    offsets[0] = first;
    for (int64_t size : shape)
      sizes.push_back(b.getIndexAttr(size));
    sizes[0] = b.getIndexAttr(count);
  }
};

/// `value`'s images [`first`, `first` + `count`).
Value images(OpBuilder &b, Location loc, Value value, OpFoldResult first,
             int64_t count) {
  ImageSlice slice(b, cast<RankedTensorType>(value.getType()).getShape(), first,
                   count);
  return tensor::ExtractSliceOp::create(b, loc, value, slice.offsets,
                                        slice.sizes, slice.strides);
}

} // namespace

Value convAsWinograd(OpBuilder &b, Location loc, Value padded,
                     ArrayRef<float> filters, RankedTensorType type,
                     StringRef name) {
  MLIRContext *context = b.getContext();
  auto paddedType = cast<RankedTensorType>(padded.getType());
  WinogradShape shape(paddedType, type);
  int64_t n = shape.batch, group = shape.imagesPerGroup();
  WinogradConstants constants{
      constantTensor(b, loc, {kTile * kTile, shape.outputs, shape.channels},
                     transformFilters(filters, shape.outputs, shape.channels),
                     name),
      transformMatrix(b, loc, kBT), transformMatrix(b, loc, kAT)};
  auto tiledType = RankedTensorType::get(
      {n, shape.outputs, shape.tileRows * kOutput, shape.tileCols * kOutput},
      b.getF32Type());
  Value y = emptyTensor(b, loc, tiledType);
  if (group == n) {
    y = winogradGroup(b, loc, padded, y, constants, shape);
  } else {
    // Groups of images in turn, each one's transformed tiles and products
    // in the caches; every group writes its part of the result in place.
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, n),
        arith::ConstantIndexOp::create(b, loc, group), ValueRange{y});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = loop.getInductionVar();
    Value part =
        winogradGroup(b, loc, images(b, loc, padded, first, group),
                      images(b, loc, loop.getRegionIterArgs()[0], first, group),
                      constants, shape);
    ImageSlice slice(b, tiledType.getShape(), first, group);
    Value whole = tensor::InsertSliceOp::create(
        b, loc, part, loop.getRegionIterArgs()[0], slice.offsets, slice.sizes,
        slice.strides);
    scf::YieldOp::create(b, loc, whole);
    y = loop.getResult(0);
  }
  if (tiledType.getShape() == type.getShape())
    return y;
  SmallVector<int64_t> zeros(4, 0), ones(4, 1);
  return tensor::ExtractSliceOp::create(
      b, loc, type, y, getAsIndexOpFoldResult(context, zeros),
      getAsIndexOpFoldResult(context, type.getShape()),
      getAsIndexOpFoldResult(context, ones));
}

} // namespace kiln::detail
