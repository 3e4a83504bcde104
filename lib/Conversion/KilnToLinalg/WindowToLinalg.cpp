//===- WindowToLinalg.cpp - kiln conv and pooling to linalg ---------------===//
//
// Convolution and pooling over N spatial dims. A dense 2-D f32 convolution on
// the CPU target is an implicit GEMM over its input laid out with one row
// pitch (convAsShiftedMatmul), where that wastes little, or, with constant
// filters, a matmul whose rows are the output pixels' windows read in place
// from the padded input (convAsWindowedRows). Otherwise the input
// is padded first (with 0 or -inf, plus the extra trailing rows ceil_mode
// needs), and when the window strides along the row with several taps, split
// into phases so every tap reads consecutive elements (WindowInput). A dense
// f32 (or f16/bf16: the CUDA target's autocast) convolution then becomes
// im2col + a matmul per image (the matmul kernel or cuBLAS does the work),
// with the output channels or, when that pays, the output pixels as the
// matmul's rows; a 2-D f32 depthwise convolution or pool becomes linalg's named
// op (kiln-lower-window-ops runs it on the CPU); any other convolution and
// pooling are linalg.generic reductions where every output element reduces over
// its window, reading input[.., o * stride + k * dilation]. Grouped convolution
// picks the input channel (o / outPerGroup) * inPerGroup + c. Average pooling
// divides by a compile-time table of window counts.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "Winograd.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/ConstantData.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

/// The input of a window op as its loops read it. Always padded; and when
/// the window strides along the last spatial dim with several taps there
/// (a stride-2 3x3 pool or depthwise convolution), that dim is split into
/// its `stride` phases, [..., W] -> [..., phases, ceil(W / stride)], padded
/// column w going to (w mod stride, w floordiv stride). A tap then reads
/// consecutive elements for consecutive outputs and the output-row loop
/// vectorizes; read with a stride of 2, LLVM's cost model leaves it scalar.
struct WindowInput {
  Value value;
  /// Phase slots of the last dim: 0 when it is not split; 1 when every tap
  /// reads phase 0 (only that phase is kept).
  int64_t phases = 0;
};

/// Whether every tap along a dim reads phase 0: (k * dilation) mod stride.
bool onlyPhaseZero(int64_t kernel, int64_t stride, int64_t dilation) {
  for (int64_t k = 0; k < kernel; ++k)
    if ((k * dilation) % stride)
      return false;
  return true;
}

/// `input` padded (`low` leading pads, `padded` the padded shape) with its
/// last dim split into `phases` of `stride`: each phase's input columns
/// (every stride-th one) copied to its slot, and only the padding around
/// them filled (filling the whole buffer first would write it twice).
Value splitPhases(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int64_t> low, ArrayRef<int64_t> padded,
                  int64_t stride, int64_t phases, Value padValue) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank(), width = type.getShape().back();
  int64_t lowW = low.back();
  SmallVector<int64_t> shape(padded.drop_back());
  shape.push_back(phases);
  shape.push_back(llvm::divideCeil(padded.back(), stride));
  auto splitType = RankedTensorType::get(shape, type.getElementType());
  Value result = detail::emptyTensor(b, loc, splitType);
  SmallVector<OpFoldResult> unitSteps =
      getAsIndexOpFoldResult(b.getContext(), SmallVector<int64_t>(rank + 1, 1));
  // Fills [begin, end) of dim `dim` (all of the others) with the pad value.
  auto fillRange = [&](int64_t dim, int64_t begin, int64_t end,
                       std::optional<int64_t> phase = std::nullopt) {
    if (begin >= end)
      return;
    SmallVector<int64_t> at(rank + 1, 0), extent(shape);
    at[dim] = begin;
    extent[dim] = end - begin;
    if (phase) {
      at[rank - 1] = *phase;
      extent[rank - 1] = 1;
    }
    result = detail::fillSlice(b, loc, result, at, extent, padValue);
  };
  // The padding rows of the other spatial dims.
  for (int64_t d = 2; d + 1 < rank; ++d) {
    fillRange(d, 0, low[d]);
    fillRange(d, low[d] + type.getDimSize(d), shape[d]);
  }
  for (int64_t phase = 0; phase < phases; ++phase) {
    // Padded column j * stride + phase is input column that - lowW.
    int64_t first = ((phase - lowW) % stride + stride) % stride;
    int64_t count = first < width ? llvm::divideCeil(width - first, stride) : 0;
    int64_t firstColumn = count ? (first + lowW - phase) / stride : 0;
    fillRange(rank, 0, firstColumn, phase);
    fillRange(rank, firstColumn + count, shape.back(), phase);
    if (!count)
      continue;
    SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
        steps(rank, 1);
    offsets.back() = first;
    sizes.back() = count;
    steps.back() = stride;
    Value columns = tensor::ExtractSliceOp::create(
        b, loc, input, getAsIndexOpFoldResult(b.getContext(), offsets),
        getAsIndexOpFoldResult(b.getContext(), sizes),
        getAsIndexOpFoldResult(b.getContext(), steps));
    SmallVector<int64_t> at(low.drop_back()), extent(sizes);
    at.push_back(phase);
    at.push_back(firstColumn);
    extent.insert(extent.end() - 1, 1);
    result = tensor::InsertSliceOp::create(
        b, loc, columns, result, getAsIndexOpFoldResult(b.getContext(), at),
        getAsIndexOpFoldResult(b.getContext(), extent), unitSteps);
  }
  return result;
}

/// Pads the spatial dims of `input` ([N, C, D...]) with `value` (the
/// leading pads, and trailing pads grown so every window of the output
/// fits), splitting the last one into phases when that pays (above).
WindowInput prepareWindowInput(OpBuilder &b, Location loc, Value input,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations,
                               ArrayRef<int64_t> pads,
                               ArrayRef<int64_t> outSpatial, double value,
                               bool splitStridedRows = true) {
  auto type = cast<RankedTensorType>(input.getType());
  size_t n = kernel.size();
  SmallVector<int64_t> low(type.getRank(), 0), high(type.getRank(), 0);
  SmallVector<int64_t> shape(type.getShape());
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    int64_t in = type.getDimSize(i + 2);
    int64_t needed =
        (outSpatial[i] - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1;
    low[i + 2] = pads[i];
    high[i + 2] = std::max<int64_t>(0, needed - in - pads[i]);
    shape[i + 2] = in + low[i + 2] + high[i + 2];
    any |= low[i + 2] || high[i + 2];
  }
  Value padValue = detail::scalarConstant(b, loc, type.getElementType(), value);
  int64_t stride = strides.back();
  if (splitStridedRows && stride > 1 && kernel.back() > 1) {
    int64_t phases =
        onlyPhaseZero(kernel.back(), stride, dilations.back()) ? 1 : stride;
    return {splitPhases(b, loc, input, low, shape, stride, phases, padValue),
            phases};
  }
  if (!any)
    return {input, 0};
  return {tensor::PadOp::create(b, loc, type.clone(shape), input,
                                getAsIndexOpFoldResult(b.getContext(), low),
                                getAsIndexOpFoldResult(b.getContext(), high),
                                padValue),
          0};
}

/// Input map of a window's spatial dims: (..., out_i, ..., k_i, ...) ->
/// out * s + k * d; for a last dim split into phases (WindowInput), the
/// phase (k * d) mod s and the column out + (k * d) floordiv s.
SmallVector<AffineExpr> windowExprs(MLIRContext *context, unsigned firstOut,
                                    unsigned firstKernel,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> dilations,
                                    int64_t phases) {
  SmallVector<AffineExpr> exprs;
  size_t n = strides.size();
  for (size_t i = 0; i < n; ++i) {
    AffineExpr out = getAffineDimExpr(firstOut + i, context);
    AffineExpr tap = getAffineDimExpr(firstKernel + i, context) * dilations[i];
    if (i + 1 < n || !phases) {
      exprs.push_back(out * strides[i] + tap);
      continue;
    }
    exprs.push_back(phases == 1 ? getAffineConstantExpr(0, context)
                                : tap % strides[i]);
    exprs.push_back(out + tap.floorDiv(strides[i]));
  }
  return exprs;
}

/// The fewest input channels of a strided convolution that runs as windowed
/// rows rather than as an implicit GEMM over the input's pitch
/// (ConvToLinalg::stridedOverManyChannels).
constexpr int64_t kWindowedRowsChannels = 16;

/// Reductions at least this long run as windowed rows, whatever the tiles'
/// fill (ConvToLinalg::windowedRowsPay).
constexpr int64_t kWindowedRowsReduction = 512;

/// `value` with its leading dim split into [parts, size / parts].
Value splitLeadingDim(OpBuilder &b, Location loc, Value value, int64_t parts) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape = {parts, type.getDimSize(0) / parts};
  llvm::append_range(shape, type.getShape().drop_front());
  SmallVector<ReassociationIndices> reassociation = {{0, 1}};
  for (int64_t d = 1; d < type.getRank(); ++d)
    reassociation.push_back({d + 1});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      reassociation);
}

/// `value` ([1, C, rest...] of one image) as [groups, C / groups, rest...]:
/// a grouped convolution's groups as the batch of its matmul. Unchanged for
/// one group.
Value groupsAsBatchDim(OpBuilder &b, Location loc, Value value,
                       int64_t groups) {
  if (groups == 1)
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<ReassociationIndices> reassociation = {{0, 1}};
  for (int64_t d = 2; d < type.getRank(); ++d)
    reassociation.push_back({d});
  return splitLeadingDim(
      b, loc, tensor::CollapseShapeOp::create(b, loc, value, reassociation),
      groups);
}

/// The filters [O, C / groups, K...] as [groups, O / groups, C / groups,
/// K...] (unchanged for one group).
Value filtersPerGroup(OpBuilder &b, Location loc, Value filter,
                      int64_t groups) {
  return groups == 1 ? filter : splitLeadingDim(b, loc, filter, groups);
}

/// Whether a convolution's matmul runs faster with the output pixels as
/// rows than with the output channels as rows. The target's register tile
/// has (at most) `tileRows` rows (AVX-512: 8 x 2 vectors of 16; AVX2: 4 x 3
/// vectors of 8), and a ragged panel takes whole vectors, so on AVX-512 a
/// 7 x 7 output (49 pixels) as columns fills 49 of 64 lanes, and as rows 49
/// of 56. With the pixels as rows, kiln-lower-matmul transposes each
/// tile in registers and stores it as [channels, pixels] (about 3 FMA lanes
/// per element: shuffles and 8-wide stores), a cost a short reduction does
/// not amortize. Measured on Zen 4 (1 thread), pixels as rows: 1x1 160 ->
/// 960 at 7x7 169 -> 138 us, 1x1/2 256 -> 512 at 14x14 146 -> 120, 1x1/2
/// 128 -> 256 at 28x28 122 -> 117, 96 -> 576 at 14x14 199 -> 193; 32 -> 192
/// at 28x28 (no lanes saved, K = 32) 85 -> 95 us slower. On AVX2 (Zen 3),
/// a grouped convolution's 24 x 216 x 49 per group (888 -> 888 in 37 groups
/// at 7x7), which AVX-512's tile would keep as columns: 0.67 -> 0.38 ms;
/// MobileNetV2's 1x1 96 -> 576 at 14x14, now as columns, alike (0.25 ms).
/// `copiesSaved`: the elements of an im2col matrix that the rows' form does
/// without (windowed rows), about 2 FMA lanes each (a vector store per 8 or
/// 16, then read back).
bool pixelsAsRowsPays(int64_t channels, int64_t pixels, int64_t reduction,
                      const ConvLowering &target, int64_t copiesSaved = 0) {
  constexpr int64_t kTransposedStoreCostInLanes = 3;
  constexpr int64_t kCopyCostInLanes = 2;
  auto padded = [](int64_t x, int64_t to) { return llvm::alignTo(x, to); };
  int64_t asRows =
      padded(pixels, target.tileRows) * padded(channels, target.lanes);
  int64_t asColumns =
      padded(channels, target.tileRows) * padded(pixels, target.lanes);
  return (asColumns - asRows) * reduction + copiesSaved * kCopyCostInLanes >
         channels * pixels * kTransposedStoreCostInLanes;
}

/// Y ([N, O, spatial...]) from a convolution's product [N, O, P], or
/// [groups, O / groups, P] for one image of a grouped convolution.
Value batchAsOutput(OpBuilder &b, Location loc, Value product,
                    RankedTensorType type) {
  ReassociationIndices spatial =
      llvm::to_vector<2>(llvm::seq<int64_t>(2, type.getRank()));
  auto productType = cast<RankedTensorType>(product.getType());
  if (productType.getDimSize(0) == type.getDimSize(0))
    return tensor::ExpandShapeOp::create(
        b, loc, type, product,
        SmallVector<ReassociationIndices>{{0}, {1}, spatial});
  Value channels = tensor::CollapseShapeOp::create(
      b, loc, product, SmallVector<ReassociationIndices>{{0, 1}, {2}});
  return tensor::ExpandShapeOp::create(
      b, loc, type, channels,
      SmallVector<ReassociationIndices>{{0, 1}, spatial});
}

/// Y ([N, O, spatial...]) from a convolution's matmul with the output
/// pixels as rows, T[n][p][o]: Y[n][o][p] = T[n][p][o], a copy
/// kiln-lower-matmul folds into the kernel (transposed stores), the bias and
/// activation applied on them.
Value pixelRowsAsOutput(OpBuilder &b, Location loc, Value product,
                        RankedTensorType type) {
  MLIRContext *context = b.getContext();
  auto productType = cast<RankedTensorType>(product.getType());
  auto resultType = RankedTensorType::get({productType.getDimSize(0),
                                           productType.getDimSize(2),
                                           productType.getDimSize(1)},
                                          productType.getElementType());
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  SmallVector<AffineMap> transposeMaps = {
      AffineMap::get(3, 0, {dim(0), dim(2), dim(1)}, context),
      AffineMap::getMultiDimIdentityMap(3, context)};
  Value transposed =
      linalg::GenericOp::create(
          b, loc, resultType, product, detail::emptyTensor(b, loc, resultType),
          transposeMaps,
          SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(nb, l, args[0]);
          })
          .getResult(0);
  return batchAsOutput(b, loc, transposed, type);
}

/// The kiln.constant `filter` is, directly or as the kernel region's
/// argument that one is passed to; null if it is computed.
ConstantOp constantFilter(Value filter) {
  if (auto arg = dyn_cast<BlockArgument>(filter)) {
    auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp());
    if (!kernel || arg.getArgNumber() >= kernel->getNumOperands())
      return nullptr;
    filter = kernel->getOperand(arg.getArgNumber());
  }
  return filter.getDefiningOp<ConstantOp>();
}

bool isConstantFilter(Value filter) { return bool(constantFilter(filter)); }

/// Dense f32 convolution as a matmul per image, which kiln-lower-matmul
/// runs near peak: Y[n] (O x P) = W (O x CK) @ Col[n] (CK x P), where
/// Col[n][(c, k...)][(p...)] = X[n][c][p * stride + k * dilation] (im2col,
/// skipped for 1x1 windows with unit strides) and P is the output pixels;
/// or, when that fills the register tiles better and W is a constant
/// (packed transposed at compile time), Y[n]^T = Col[n]^T @ W^T.
/// A grouped convolution of one image (`groups` > 1) is the same matmul
/// batched over the groups, whose channels are consecutive: the input read
/// as `groups` images of C / groups channels (their Col [groups, C / groups
/// * K, P] made image by image, as a batch's is), W [O, C / groups, K...] as
/// [groups, O / groups, C / groups * K] and the product [groups, O /
/// groups, P] as Y's [O, P]. It
/// had been one loop nest (convAsLoops), which packs and tiles nothing: 3x3
/// 256 -> 256 in 4 groups at 14x14 ran 6.9 ms, 11x ONNX Runtime's time.
Value convAsMatmul(OpBuilder &b, Location loc, WindowInput input, Value filter,
                   RankedTensorType type, ArrayRef<int64_t> strides,
                   ArrayRef<int64_t> dilations, bool pixelsAsRows,
                   int64_t groups = 1) {
  MLIRContext *context = b.getContext();
  // The groups as images: each group's im2col matrix made on its own, which
  // kiln-lower-matmul then does group by group (stagePerImage).
  input.value = groupsAsBatchDim(b, loc, input.value, groups);
  auto inputType = cast<RankedTensorType>(input.value.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  ArrayRef<int64_t> kernel = filterType.getShape().drop_front(2);
  ArrayRef<int64_t> outSpatial = type.getShape().drop_front(2);
  size_t n = kernel.size();
  int64_t batch = type.getDimSize(0) * groups;
  int64_t outChannels = type.getDimSize(1);
  int64_t channels = inputType.getDimSize(1);
  int64_t windowSize = 1, pixels = 1;
  for (int64_t k : kernel)
    windowSize *= k;
  for (int64_t p : outSpatial)
    pixels *= p;
  Type elementType = type.getElementType();
  auto allDims = [](int64_t from, int64_t to) -> ReassociationIndices {
    return llvm::to_vector<2>(llvm::seq<int64_t>(from, to));
  };

  // Col as [N, C, K..., P...], then [N, C*K, P].
  Value columns = input.value;
  bool identityWindow = windowSize == 1 &&
                        llvm::all_of(strides, [](int64_t s) { return s == 1; });
  if (!identityWindow) {
    SmallVector<int64_t> shape = {batch, channels};
    llvm::append_range(shape, kernel);
    llvm::append_range(shape, outSpatial);
    auto colType = RankedTensorType::get(shape, elementType);
    unsigned rank = shape.size();
    unsigned firstKernel = 2, firstOut = 2 + n;
    SmallVector<AffineExpr> inputExprs = {getAffineDimExpr(0, context),
                                          getAffineDimExpr(1, context)};
    llvm::append_range(inputExprs,
                       windowExprs(context, firstOut, firstKernel, strides,
                                   dilations, input.phases));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, inputExprs, context),
        AffineMap::getMultiDimIdentityMap(rank, context)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    columns = linalg::GenericOp::create(
                  b, loc, colType, input.value,
                  detail::emptyTensor(b, loc, colType), maps, iterators,
                  [](OpBuilder &nb, Location l, ValueRange args) {
                    linalg::YieldOp::create(nb, l, args[0]);
                  })
                  .getResult(0);
  }
  int64_t rank = cast<RankedTensorType>(columns.getType()).getRank();
  SmallVector<ReassociationIndices> colGroups = {
      {0},
      identityWindow ? ReassociationIndices{1} : allDims(1, 2 + n),
      allDims(identityWindow ? 2 : 2 + n, rank)};
  columns = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({batch, channels * windowSize, pixels},
                            elementType),
      columns, colGroups);
  int64_t reduction = channels * windowSize;
  Value weights = filtersPerGroup(
      b, loc,
      tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({outChannels, reduction}, elementType),
          filter, SmallVector<ReassociationIndices>{{0}, allDims(1, 2 + n)}),
      groups);
  outChannels /= groups;

  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  // Loops (n, o, p, ck): the shared filters are A, Col[n] the batched B, a
  // form kiln-lower-matmul recognizes. With the pixels as rows, loops (n, p,
  // o, ck) compute T[n][p][o] = Col[n]^T @ W^T instead: Col read in place as
  // a transposed A, the filters packed transposed at compile time as B.
  int64_t rows = pixelsAsRows ? pixels : outChannels;
  int64_t cols = pixelsAsRows ? outChannels : pixels;
  auto productType = RankedTensorType::get({batch, rows, cols}, elementType);
  AffineMap columnsMap = AffineMap::get(
      4, 0, {dim(0), dim(3), dim(pixelsAsRows ? 1 : 2)}, context);
  AffineMap weightsMap =
      groups > 1
          ? AffineMap::get(4, 0, {dim(0), dim(1), dim(3)}, context)
          : AffineMap::get(4, 0, {dim(pixelsAsRows ? 2 : 1), dim(3)}, context);
  SmallVector<Value, 2> operands = {weights, columns};
  SmallVector<AffineMap> maps = {weightsMap, columnsMap};
  if (pixelsAsRows) {
    std::swap(operands[0], operands[1]);
    std::swap(maps[0], maps[1]);
  }
  maps.push_back(AffineMap::get(4, 0, {dim(0), dim(1), dim(2)}, context));
  Value init = detail::filledTensor(
      b, loc, productType, detail::scalarConstant(b, loc, elementType, 0));
  Value product =
      linalg::GenericOp::create(b, loc, productType, operands, init, maps,
                                iterators, detail::multiplyAccumulate)
          .getResult(0);
  if (pixelsAsRows)
    return pixelRowsAsOutput(b, loc, product, type);
  return batchAsOutput(b, loc, product, type);
}

/// A 2-D f32 convolution as a matmul with the output pixels as rows whose A
/// is read in place from the padded input ([N, C, PH, PW]): no im2col
/// matrix. (One image of a grouped one: the same matmul batched over the
/// groups, n the group, X [groups, C / groups, PH * PW] and the filters
/// [groups, O / groups, C / groups, KH, KW].) T[n][p][o] = sum W[o][c][kh][kw]
/// * X[n][c][R(p) + G(kh, kw)] over each channel's plane flattened, where
/// output pixel p = (oh, ow) starts its window at R(p) = oh * sh * PW + ow * sw
/// and the tap is G = kh * dh * PW + kw * dw on. kiln-lower-matmul broadcasts
/// A's values one at a time, so the stride costs nothing, and stores T
/// transposed into Y.
Value convAsWindowedRows(OpBuilder &b, Location loc, Value padded, Value filter,
                         RankedTensorType type, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dilations, int64_t groups) {
  MLIRContext *context = b.getContext();
  auto paddedType = cast<RankedTensorType>(padded.getType());
  int64_t batch = type.getDimSize(0) * groups;
  int64_t outChannels = type.getDimSize(1) / groups;
  int64_t outWidth = type.getDimSize(3), pitch = paddedType.getDimSize(3);
  int64_t pixels = type.getDimSize(2) * outWidth;
  Type elementType = type.getElementType();
  Value planes = groupsAsBatchDim(
      b, loc,
      tensor::CollapseShapeOp::create(
          b, loc, padded, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}),
      groups);
  // Loops: n (or the group), p, o, c, kh, kw.
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  AffineExpr start = d(1).floorDiv(outWidth) * (strides[0] * pitch) +
                     d(1) % outWidth * strides[1];
  AffineExpr tap = d(4) * (dilations[0] * pitch) + d(5) * dilations[1];
  SmallVector<AffineExpr> filterExprs = {d(2), d(3), d(4), d(5)};
  if (groups > 1)
    filterExprs.insert(filterExprs.begin(), d(0));
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {d(0), d(3), start + tap}, context),
      AffineMap::get(6, 0, filterExprs, context),
      AffineMap::get(6, 0, {d(0), d(1), d(2)}, context)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  auto productType =
      RankedTensorType::get({batch, pixels, outChannels}, elementType);
  Value zero = detail::scalarConstant(b, loc, elementType, 0);
  Value product =
      linalg::GenericOp::create(
          b, loc, productType,
          ValueRange{planes, filtersPerGroup(b, loc, filter, groups)},
          detail::filledTensor(b, loc, productType, zero), maps, iterators,
          detail::multiplyAccumulate)
          .getResult(0);
  return pixelRowsAsOutput(b, loc, product, type);
}

/// The layout convAsShiftedMatmul reads a 2-D convolution's input in: per
/// channel, the padded plane split into strideH x strideW phase planes of
/// `rows` x `pitch` (one row more than the window reads, so every shifted
/// read of a whole output plane stays inside), flattened.
struct ShiftedLayout {
  int64_t strideH, strideW, dilationH, dilationW, rows, pitch;

  /// `width` and `left`: the input's width and left padding.
  ShiftedLayout(ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> dilations, ArrayRef<int64_t> outSpatial,
                int64_t width, int64_t left)
      : strideH(strides[0]), strideW(strides[1]), dilationH(dilations[0]),
        dilationW(dilations[1]) {
    int64_t paddedH =
        (outSpatial[0] - 1) * strideH + (kernel[0] - 1) * dilationH + 1;
    int64_t paddedW =
        (outSpatial[1] - 1) * strideW + (kernel[1] - 1) * dilationW + 1;
    rows = llvm::divideCeil(paddedH, strideH) + 1;
    pitch = llvm::divideCeil(paddedW, strideW);
    // At stride 1, a row's right padding can be the next row's left
    // padding: the zeros between two rows' pixels only need to be as many
    // as the larger of the two (a 3x3 'same' window: pitch W + 1, not W +
    // 2, so 1/57 of a 56-wide output is computed and dropped, not 2/58).
    if (strideW == 1)
      pitch = std::max(width + left, paddedW - left);
  }
  int64_t length() const { return strideH * strideW * rows * pitch; }
  /// The offset tap (kh, kw) reads at, from the output's position f = oh *
  /// pitch + ow: its phase plane, then (kh * dh / sh) rows and (kw * dw /
  /// sw) columns on.
  AffineExpr tapOffset(AffineExpr kh, AffineExpr kw) const {
    AffineExpr r = kh * dilationH, c = kw * dilationW;
    return r % strideH * (strideW * rows * pitch) +
           c % strideW * (rows * pitch) + r.floorDiv(strideH) * pitch +
           c.floorDiv(strideW);
  }
};

/// Whether a 2-D convolution computed over the input's row pitch (the
/// columns past the output's width computed and dropped) wastes little:
/// at most 1/8 more columns than the output has, and rows at least 16 wide
/// (kiln-lower-matmul stores a vector's kept lanes as two runs).
bool shiftedMatmulPays(ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations,
                       ArrayRef<int64_t> outSpatial, int64_t width,
                       int64_t left) {
  if (kernel.size() != 2 || kernel[0] * kernel[1] == 1 || outSpatial[1] < 16)
    return false;
  ShiftedLayout layout(kernel, strides, dilations, outSpatial, width, left);
  return layout.pitch * 8 <= outSpatial[1] * 9;
}

/// `input` ([N, C, H, W]) laid out as `layout` says: [N, C, sh, sw, rows,
/// pitch], each phase plane's input pixels and zeros around them. For one
/// image only the zeros around the pixels are written: filling the whole
/// buffer first writes it twice, on one thread (a stride-2 stem's 600 KB
/// memset). A batch keeps one fill of all of it: kiln-lower-matmul then lays
/// the images out one at a time into a buffer of one image, filled once per
/// call (stagePerImage), or, many small images (a grouped convolution's
/// groups), in parallel into their slices of the batch's buffer.
Value layOutPhasePlanes(OpBuilder &b, Location loc, Value input,
                        const ShiftedLayout &layout, ArrayRef<int64_t> pads) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t strides[2] = {layout.strideH, layout.strideW};
  int64_t batch = inputType.getDimSize(0), channels = inputType.getDimSize(1);
  Type elementType = inputType.getElementType();
  Value zero = detail::scalarConstant(b, loc, elementType, 0);
  SmallVector<int64_t> split = {batch,          channels,    layout.strideH,
                                layout.strideW, layout.rows, layout.pitch};
  auto splitType = RankedTensorType::get(split, elementType);
  bool fillAround = batch == 1;
  Value laidOut = fillAround ? detail::emptyTensor(b, loc, splitType)
                             : detail::filledTensor(b, loc, splitType, zero);
  SmallVector<int64_t> unitSteps(split.size(), 1);
  // Zeros rows [row, row + rowCount) x columns [column, column + columnCount)
  // of phase plane (ph, pw).
  auto fillBox = [&](int64_t ph, int64_t pw, int64_t row, int64_t rowCount,
                     int64_t column, int64_t columnCount) {
    if (fillAround && rowCount > 0 && columnCount > 0)
      laidOut = detail::fillSlice(
          b, loc, laidOut, {0, 0, ph, pw, row, column},
          {batch, channels, 1, 1, rowCount, columnCount}, zero);
  };
  int64_t limits[2] = {layout.strideH * (layout.rows - 1),
                       layout.strideW * layout.pitch};
  for (int64_t ph = 0; ph < strides[0]; ++ph)
    for (int64_t pw = 0; pw < strides[1]; ++pw) {
      // Input rows y with (y + top) mod sh == ph, within the padded extent
      // the window reads; the same for columns.
      int64_t phase[2] = {ph, pw}, first[2], count[2], at[2];
      for (int d = 0; d < 2; ++d) {
        int64_t in = inputType.getDimSize(2 + d);
        int64_t used = std::min(in, limits[d] - pads[d]);
        first[d] =
            ((phase[d] - pads[d]) % strides[d] + strides[d]) % strides[d];
        count[d] =
            used > first[d] ? llvm::divideCeil(used - first[d], strides[d]) : 0;
        at[d] = (first[d] + pads[d]) / strides[d];
      }
      if (!count[0] || !count[1]) {
        fillBox(ph, pw, 0, layout.rows, 0, layout.pitch);
        continue;
      }
      // The rows above and below the pixels, then the columns beside them.
      fillBox(ph, pw, 0, at[0], 0, layout.pitch);
      fillBox(ph, pw, at[0] + count[0], layout.rows - at[0] - count[0], 0,
              layout.pitch);
      fillBox(ph, pw, at[0], count[0], 0, at[1]);
      fillBox(ph, pw, at[0], count[0], at[1] + count[1],
              layout.pitch - at[1] - count[1]);
      SmallVector<int64_t> sliceShape = {batch, channels, count[0], count[1]};
      Value pixels = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get(sliceShape, elementType), input,
          ValueRange{}, ValueRange{}, ValueRange{},
          b.getDenseI64ArrayAttr({0, 0, first[0], first[1]}),
          b.getDenseI64ArrayAttr(sliceShape),
          b.getDenseI64ArrayAttr({1, 1, strides[0], strides[1]}));
      laidOut = tensor::InsertSliceOp::create(
          b, loc, pixels, laidOut, ValueRange{}, ValueRange{}, ValueRange{},
          b.getDenseI64ArrayAttr({0, 0, ph, pw, at[0], at[1]}),
          b.getDenseI64ArrayAttr({batch, channels, 1, 1, count[0], count[1]}),
          b.getDenseI64ArrayAttr(unitSteps));
    }
  return laidOut;
}

/// A 2-D f32 convolution as an implicit GEMM: no im2col matrix (one image
/// of a grouped one: batched over the groups, as convAsWindowedRows). The
/// input is laid out per channel (ShiftedLayout) so that, with the output
/// computed at positions f = oh * pitch + ow, the tap (kh, kw) of channel c
/// reads X[n][c][f + G(kh, kw)]: row (c, kh, kw) of the GEMM's B is the
/// channel's row shifted by a constant, which kiln-lower-matmul reads in
/// place. T[n][o][f] = sum W[o][c][kh][kw] * X[n][c][f + G(kh, kw)]; the
/// output is T's first OW columns of each row of the pitch.
Value convAsShiftedMatmul(OpBuilder &b, Location loc, Value input, Value filter,
                          RankedTensorType type, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads,
                          int64_t groups) {
  MLIRContext *context = b.getContext();
  auto inputType = cast<RankedTensorType>(input.getType());
  ArrayRef<int64_t> kernel =
      cast<RankedTensorType>(filter.getType()).getShape().drop_front(2);
  ArrayRef<int64_t> outSpatial = type.getShape().drop_front(2);
  ShiftedLayout layout(kernel, strides, dilations, outSpatial,
                       inputType.getDimSize(3), pads[1]);
  // The groups as images: each group's input laid out on its own, which
  // kiln-lower-matmul then does one group at a time (stagePerImage).
  Value laidOut = layOutPhasePlanes(
      b, loc, groupsAsBatchDim(b, loc, input, groups), layout, pads);
  int64_t batch = type.getDimSize(0) * groups;
  int64_t outChannels = type.getDimSize(1) / groups;
  Type elementType = type.getElementType();
  Value zero = detail::scalarConstant(b, loc, elementType, 0);
  Value rows = tensor::CollapseShapeOp::create(
      b, loc, laidOut,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4, 5}});
  // Loops: n (or the group), o, f, c, kh, kw.
  int64_t positions = outSpatial[0] * layout.pitch;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> filterExprs = {d(1), d(3), d(4), d(5)};
  if (groups > 1)
    filterExprs.insert(filterExprs.begin(), d(0));
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, filterExprs, context),
      AffineMap::get(6, 0, {d(0), d(3), d(2) + layout.tapOffset(d(4), d(5))},
                     context),
      AffineMap::get(6, 0, {d(0), d(1), d(2)}, context)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  auto productType =
      RankedTensorType::get({batch, outChannels, positions}, elementType);
  Value product = linalg::GenericOp::create(
                      b, loc, productType,
                      ValueRange{filtersPerGroup(b, loc, filter, groups), rows},
                      detail::filledTensor(b, loc, productType, zero), maps,
                      iterators, detail::multiplyAccumulate)
                      .getResult(0);
  // The output: the first OW columns of each row of the pitch.
  SmallVector<int64_t> pitched = {type.getDimSize(0), type.getDimSize(1),
                                  outSpatial[0], layout.pitch};
  Value planes = batchAsOutput(b, loc, product,
                               RankedTensorType::get(pitched, elementType));
  return tensor::ExtractSliceOp::create(b, loc, type, planes, ValueRange{},
                                        ValueRange{}, ValueRange{},
                                        b.getDenseI64ArrayAttr({0, 0, 0, 0}),
                                        b.getDenseI64ArrayAttr(type.getShape()),
                                        b.getDenseI64ArrayAttr({1, 1, 1, 1}));
}

/// The maps of a window op's loop nest over `n` spatial dims: the input's,
/// the filter's (or the window's) `kernelPrefix` then the kernel dims from
/// `firstKernel`, the output's `outPrefix` then its spatial dims from
/// `firstOut`.
SmallVector<AffineMap> windowMaps(MLIRContext *context, unsigned rank, size_t n,
                                  unsigned firstKernel, unsigned firstOut,
                                  ArrayRef<AffineExpr> inputExprs,
                                  ArrayRef<AffineExpr> kernelPrefix,
                                  ArrayRef<AffineExpr> outPrefix) {
  SmallVector<AffineExpr> kernelExprs(kernelPrefix), outExprs(outPrefix);
  for (size_t i = 0; i < n; ++i) {
    kernelExprs.push_back(getAffineDimExpr(firstKernel + i, context));
    outExprs.push_back(getAffineDimExpr(firstOut + i, context));
  }
  return {AffineMap::get(rank, 0, inputExprs, context),
          AffineMap::get(rank, 0, kernelExprs, context),
          AffineMap::get(rank, 0, outExprs, context)};
}

/// Any convolution (grouped, depthwise, integer) as one loop nest: batch,
/// output channel, input channel, the output's spatial dims, then the
/// window's. kiln-unroll-small-loops unrolls the window loops into the
/// output-pixel loop, which vectorizes along contiguous memory with the
/// accumulator in a register.
Value convAsLoops(OpBuilder &b, Location loc, WindowInput input, Value filter,
                  RankedTensorType type, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, int64_t groups) {
  MLIRContext *context = b.getContext();
  auto filterType = cast<RankedTensorType>(filter.getType());
  size_t n = filterType.getRank() - 2;
  int64_t outPerGroup = type.getDimSize(1) / groups;
  int64_t inPerGroup = filterType.getDimSize(1);
  // Loops: n, o, c, out_0..out_{n-1}, k_0..k_{n-1}.
  unsigned rank = 3 + 2 * n;
  unsigned channel = 2, firstOut = 3, firstKernel = 3 + n;
  AffineExpr o = getAffineDimExpr(1, context);
  AffineExpr c = getAffineDimExpr(channel, context);
  SmallVector<AffineExpr> inputExprs = {getAffineDimExpr(0, context)};
  inputExprs.push_back(groups == 1 ? c
                                   : o.floorDiv(outPerGroup) * inPerGroup + c);
  llvm::append_range(inputExprs, windowExprs(context, firstOut, firstKernel,
                                             strides, dilations, input.phases));
  SmallVector<AffineMap> maps =
      windowMaps(context, rank, n, firstKernel, firstOut, inputExprs, {o, c},
                 {getAffineDimExpr(0, context), o});
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[channel] = utils::IteratorType::reduction;
  for (unsigned d = firstKernel; d < rank; ++d)
    iterators[d] = utils::IteratorType::reduction;
  Value init = detail::filledTensor(
      b, loc, type, detail::scalarConstant(b, loc, type.getElementType(), 0));
  return linalg::GenericOp::create(b, loc, type,
                                   ValueRange{input.value, filter}, init, maps,
                                   iterators, detail::multiplyAccumulate)
      .getResult(0);
}

/// Whether a convolution is a 2-D f32 depthwise one (one filter per
/// channel), which linalg's named op describes and kiln-lower-depthwise runs
/// as a direct vector kernel on the CPU.
bool isDepthwise2D(RankedTensorType type, RankedTensorType inputType,
                   RankedTensorType filterType, int64_t groups) {
  return type.getRank() == 4 && type.getElementType().isF32() &&
         filterType.getDimSize(1) == 1 && groups == inputType.getDimSize(1) &&
         groups == type.getDimSize(1);
}

/// Whether a grouped convolution runs as a matmul batched over its groups
/// (on the CPU target), in the form a dense convolution of one group would
/// take (implicit GEMM, windowed rows, im2col): f32, one image, and several
/// input channels a group (a depthwise convolution has its own kernel; one
/// with a channel multiplier stays a loop nest). A loop nest packs and
/// tiles nothing: 3x3 2048 -> 2048 in 64 groups at 7x7 9.2 ms, 0.82 as
/// windowed rows batched over the groups (1.6 through im2col).
/// kiln-split-grouped-convs makes the others of up to 32 groups dense ones.
bool groupsAsBatch(RankedTensorType type, RankedTensorType filterType,
                   int64_t groups) {
  return groups > 1 && type.getElementType().isF32() &&
         type.getDimSize(0) == 1 && filterType.getDimSize(1) > 1;
}

/// linalg.depthwise_conv_2d_nchw_chw over the padded input (not split into
/// phases: kiln-lower-depthwise reads the unpadded input and lays each
/// channel out for its taps itself).
Value depthwiseConv2D(OpBuilder &b, Location loc, Value padded, Value filter,
                      RankedTensorType type, ArrayRef<int64_t> strides,
                      ArrayRef<int64_t> dilations) {
  Value filters = tensor::CollapseShapeOp::create(
      b, loc, filter, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  Value init = detail::filledTensor(
      b, loc, type, detail::scalarConstant(b, loc, type.getElementType(), 0));
  SmallVector<NamedAttribute> attributes = {
      b.getNamedAttr("strides", b.getI64TensorAttr(strides)),
      b.getNamedAttr("dilations", b.getI64TensorAttr(dilations))};
  return linalg::DepthwiseConv2DNchwChwOp::create(b, loc, TypeRange{type},
                                                  ValueRange{padded, filters},
                                                  ValueRange{init}, attributes)
      .getResult(0);
}

struct ConvToLinalg : public OpConversionPattern<ConvOp> {
  ConvToLinalg(TypeConverter &converter, MLIRContext *context,
               const ConvLowering &target)
      : OpConversionPattern(converter, context), target(target) {}

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    auto filterType = cast<RankedTensorType>(op.getFilter().getType());
    ArrayRef<int64_t> kernel = filterType.getShape().drop_front(2);
    int64_t groups = static_cast<int64_t>(op.getGroups());
    bool depthwise =
        isDepthwise2D(type, cast<RankedTensorType>(op.getInput().getType()),
                      filterType, groups);
    Type elementType = type.getElementType();
    ArrayRef<int64_t> outSpatial = type.getShape().drop_front(2);
    if (std::optional<Value> result =
            asWinograd(rewriter, op, adaptor, kernel)) {
      rewriter.replaceOp(op,
                         addBias(rewriter, loc, *result, adaptor.getBias()));
      return success();
    }
    // A grouped convolution's groups are the batch of the same matmuls.
    bool matmulGroups = groups == 1 || groupsAsBatch(type, filterType, groups);
    bool shiftedPays =
        target.implicitGemm && matmulGroups && elementType.isF32() &&
        shiftedMatmulPays(
            kernel, op.getStrides(), op.getDilations(), outSpatial,
            cast<RankedTensorType>(op.getInput().getType()).getDimSize(3),
            op.getPads()[1]);
    // Windowed rows save an im2col matrix only where the implicit GEMM over
    // the pitch does not pay.
    bool windowed = !depthwise && matmulGroups &&
                    windowedRowsPay(op, kernel, /*savesIm2col=*/!shiftedPays);
    bool shifted = shiftedPays && !(windowed && stridedOverManyChannels(op));
    if (shifted) {
      Value result = convAsShiftedMatmul(
          rewriter, loc, adaptor.getInput(), adaptor.getFilter(), type,
          op.getStrides(), op.getDilations(), op.getPads(), groups);
      rewriter.replaceOp(op, addBias(rewriter, loc, result, adaptor.getBias()));
      return success();
    }
    if (windowed) {
      WindowInput padded = prepareWindowInput(
          rewriter, loc, adaptor.getInput(), kernel, op.getStrides(),
          op.getDilations(), op.getPads(), outSpatial, 0.0,
          /*splitStridedRows=*/false);
      Value result =
          convAsWindowedRows(rewriter, loc, padded.value, adaptor.getFilter(),
                             type, op.getStrides(), op.getDilations(), groups);
      rewriter.replaceOp(op, addBias(rewriter, loc, result, adaptor.getBias()));
      return success();
    }
    WindowInput input = prepareWindowInput(
        rewriter, loc, adaptor.getInput(), kernel, op.getStrides(),
        op.getDilations(), op.getPads(), outSpatial, 0.0,
        /*splitStridedRows=*/!depthwise);
    Value result;
    if (depthwise)
      result = depthwiseConv2D(rewriter, loc, input.value, adaptor.getFilter(),
                               type, op.getStrides(), op.getDilations());
    else if (groups == 1 && (elementType.isF32() || elementType.isF16() ||
                             elementType.isBF16()))
      result =
          convAsMatmul(rewriter, loc, input, adaptor.getFilter(), type,
                       op.getStrides(), op.getDilations(), pixelsAsRowsPay(op));
    else if (target.implicitGemm && groupsAsBatch(type, filterType, groups))
      result = convAsMatmul(rewriter, loc, input, adaptor.getFilter(), type,
                            op.getStrides(), op.getDilations(),
                            /*pixelsAsRows=*/false, groups);
    else
      result = convAsLoops(rewriter, loc, input, adaptor.getFilter(), type,
                           op.getStrides(), op.getDilations(), groups);
    rewriter.replaceOp(op, addBias(rewriter, loc, result, adaptor.getBias()));
    return success();
  }

private:
  /// The convolution as Winograd F(2x2, 3x3), without bias, when that is
  /// enabled and pays (winogradShareOfWork) and the filters are readable.
  std::optional<Value> asWinograd(OpBuilder &b, ConvOp op, OpAdaptor adaptor,
                                  ArrayRef<int64_t> kernel) const {
    auto type = cast<RankedTensorType>(op.getType());
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    if (!target.winograd || !winogradShareOfWork(op))
      return std::nullopt;
    std::optional<SmallVector<float>> filters =
        readFloatData(constantFilter(op.getFilter()).getValue());
    if (!filters ||
        int64_t(filters->size()) !=
            cast<RankedTensorType>(op.getFilter().getType()).getNumElements())
      return std::nullopt;
    detail::WinogradShape shape(inputType, type);
    SmallVector<int64_t> tiled = {2 * shape.tileRows, 2 * shape.tileCols};
    WindowInput padded = prepareWindowInput(
        b, op.getLoc(), adaptor.getInput(), kernel, op.getStrides(),
        op.getDilations(), op.getPads(), tiled, 0.0,
        /*splitStridedRows=*/false);
    return detail::convAsWinograd(b, op.getLoc(), padded.value, *filters, type,
                                  "winograd_filters");
  }

  /// Whether a 2-D f32 convolution (dense, or a group of a grouped one)
  /// that is not an implicit GEMM over the input's pitch
  /// (shiftedMatmulPays) runs with its output pixels as rows read in place
  /// (convAsWindowedRows) rather than through an im2col matrix: constant
  /// filters (packed at compile time as B), a window of several taps, and
  /// pixels as rows paying (pixelsAsRowsPays, credited with the im2col
  /// copies saved when `savesIm2col`) or a reduction of at least
  /// kWindowedRowsReduction steps, which covers the tiles' transposed
  /// stores (ResNet's 3x3 / 2 64 -> 128 at 56x56, K = 576, runs faster so
  /// than as any other form; its 7x7 / 2 stem, K = 147, slower). A strided
  /// 1x1 convolution reads a quarter of its input, which im2col copies into
  /// a quarter of the lines: 1x1 / 2 128 -> 256 at 28x28 ran 10% slower
  /// read in place (prefetching the next channels' lines did not help).
  /// Grouped, per group: 32 groups of 16 channels at 14x14 (196 x 144 x 16
  /// a group), whose tiles fill alike either way, 0.56 ms through im2col,
  /// 0.37 as windowed rows (Zen 3, 1 thread).
  bool windowedRowsPay(ConvOp op, ArrayRef<int64_t> kernel,
                       bool savesIm2col) const {
    auto type = cast<RankedTensorType>(op.getType());
    if (!target.implicitGemm || kernel.size() != 2 ||
        kernel[0] * kernel[1] == 1 || !type.getElementType().isF32() ||
        !isConstantFilter(op.getFilter()))
      return false;
    // Per group: the filters' input channels, a group's output channels.
    int64_t groups = static_cast<int64_t>(op.getGroups());
    int64_t reduction =
        cast<RankedTensorType>(op.getFilter().getType()).getDimSize(1) *
        kernel[0] * kernel[1];
    int64_t pixels = type.getDimSize(2) * type.getDimSize(3);
    return reduction >= kWindowedRowsReduction ||
           pixelsAsRowsPays(type.getDimSize(1) / groups, pixels, reduction,
                            target, savesIm2col ? reduction * pixels : 0);
  }

  /// Whether a dense convolution's im2col matmul (convAsMatmul) takes the
  /// output pixels as rows: its filters are constant (packed transposed at
  /// compile time) and that fills the register tiles better.
  bool pixelsAsRowsPay(ConvOp op) const {
    auto type = cast<RankedTensorType>(op.getType());
    auto filterType = cast<RankedTensorType>(op.getFilter().getType());
    int64_t pixels = 1;
    for (int64_t size : type.getShape().drop_front(2))
      pixels *= size;
    return isConstantFilter(op.getFilter()) &&
           pixelsAsRowsPays(type.getDimSize(1), pixels,
                            filterType.getNumElements() / type.getDimSize(1),
                            target);
  }

  /// Whether a convolution strides over at least kWindowedRowsChannels
  /// input channels, where windowed rows run faster than the implicit GEMM
  /// over the input's pitch, which lays the input out in phase planes and
  /// reads B's rows unaligned: ResNet's 3x3 / 2 64 -> 128 at 56x56 0.84 ->
  /// 0.80 ms (batch 1, 1 thread), 3.73 -> 3.31 (batch 8, 2 threads). A few
  /// channels and a large window (the 7x7 / 2 stem, 3 channels, K = 147)
  /// do not amortize the tile's transposed stores: 1.78 -> 2.24 ms. At
  /// stride 1 the two measured alike (3x3 at 56x56 and 28x28: +-4%).
  static bool stridedOverManyChannels(ConvOp op) {
    auto filterType = cast<RankedTensorType>(op.getFilter().getType());
    return filterType.getDimSize(1) >= kWindowedRowsChannels &&
           llvm::any_of(op.getStrides(), [](int64_t s) { return s > 1; });
  }

  /// `result` plus the bias [O], broadcast over the spatial dims.
  static Value addBias(OpBuilder &b, Location loc, Value result, Value bias) {
    if (!bias)
      return result;
    auto type = cast<RankedTensorType>(result.getType());
    size_t n = type.getRank() - 2;
    SmallVector<int64_t> biasShape(n + 1, 1);
    biasShape[0] = type.getDimSize(1);
    auto biasType = RankedTensorType::get(biasShape, type.getElementType());
    SmallVector<ReassociationIndices> reassociation = {
        llvm::to_vector(llvm::seq<int64_t>(0, n + 1))};
    Value shaped =
        tensor::ExpandShapeOp::create(b, loc, biasType, bias, reassociation);
    return detail::elementwiseGeneric(
        b, loc, ValueRange{result, shaped}, type,
        [](OpBuilder &nb, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(nb, l, args[0], args[1]);
        });
  }

  ConvLowering target;
};

/// The number of input (or padded-input) elements each output window of a
/// pooling op covers, as a [1, 1, out...] constant.
DenseElementsAttr windowCounts(RankedTensorType inputType,
                               RankedTensorType outType, AvgPoolOp op) {
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    dilations = op.getDilations(), pads = op.getPads();
  size_t n = kernel.size();
  ArrayRef<int64_t> outSpatial = outType.getShape().drop_front(2);
  // Per spatial dim, the count for each output position.
  SmallVector<SmallVector<int64_t>> perDim(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = inputType.getDimSize(i + 2);
    int64_t lo = op.getCountIncludePad() ? -pads[i] : 0;
    int64_t hi = op.getCountIncludePad() ? in + pads[i + n] : in;
    for (int64_t o = 0; o < outSpatial[i]; ++o) {
      int64_t count = 0;
      for (int64_t k = 0; k < kernel[i]; ++k) {
        int64_t x = o * strides[i] + k * dilations[i] - pads[i];
        count += x >= lo && x < hi;
      }
      perDim[i].push_back(count);
    }
  }
  SmallVector<float> counts;
  SmallVector<int64_t> index(n, 0);
  int64_t total = 1;
  for (int64_t d : outSpatial)
    total *= d;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, count = 1;
    for (int64_t i = n - 1; i >= 0; --i) {
      count *= perDim[i][rest % outSpatial[i]];
      rest /= outSpatial[i];
    }
    counts.push_back(static_cast<float>(std::max<int64_t>(count, 1)));
  }
  SmallVector<int64_t> shape = {1, 1};
  llvm::append_range(shape, outSpatial);
  return DenseElementsAttr::get(
      RankedTensorType::get(shape, Float32Type::get(op.getContext())),
      ArrayRef<float>(counts));
}

/// Pooling as one loop nest: n, c, k..., out...: the kernel dims are
/// reductions, and the output's spatial dims are innermost so each window
/// offset is one vectorizable sweep along output rows. `window` is an empty
/// tensor of the kernel's shape (only its dims are iterated).
Value poolAsLoops(OpBuilder &b, Location loc, WindowInput input, Value window,
                  Value init, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, detail::Combiner combiner,
                  bool isUnsigned) {
  MLIRContext *context = b.getContext();
  size_t n = strides.size();
  unsigned rank = 2 + 2 * n;
  unsigned firstKernel = 2, firstOut = 2 + n;
  SmallVector<AffineExpr> inputExprs = {getAffineDimExpr(0, context),
                                        getAffineDimExpr(1, context)};
  llvm::append_range(inputExprs, windowExprs(context, firstOut, firstKernel,
                                             strides, dilations, input.phases));
  SmallVector<AffineMap> maps =
      windowMaps(context, rank, n, firstKernel, firstOut, inputExprs, {},
                 {getAffineDimExpr(0, context), getAffineDimExpr(1, context)});
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  for (unsigned d = firstKernel; d < firstOut; ++d)
    iterators[d] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{input.value, window}, init,
             maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l,
                                       detail::combine(nb, l, combiner, args[2],
                                                       args[0], isUnsigned));
             })
      .getResult(0);
}

/// A 2-D f32 pool as linalg.pooling_nchw_max or linalg.pooling_nchw_sum
/// over the padded input.
Value namedPool(OpBuilder &b, Location loc, bool isMax, Value padded,
                Value window, Value init, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> dilations) {
  SmallVector<NamedAttribute> attributes = {
      b.getNamedAttr("strides", b.getI64TensorAttr(strides)),
      b.getNamedAttr("dilations", b.getI64TensorAttr(dilations))};
  SmallVector<Value> inputs = {padded, window};
  Type types = init.getType();
  if (isMax)
    return linalg::PoolingNchwMaxOp::create(b, loc, types, inputs, init,
                                            attributes)
        .getResult(0);
  return linalg::PoolingNchwSumOp::create(b, loc, types, inputs, init,
                                          attributes)
      .getResult(0);
}

template <typename OpTy, bool isMax>
struct PoolToGeneric : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(
        this->getTypeConverter()->convertType(op.getType()));
    Type elementType = type.getElementType();
    if (!isMax && !elementType.isF32())
      return rewriter.notifyMatchFailure(op, "average pooling needs f32");
    ArrayRef<int64_t> kernel = op.getKernel();
    size_t n = kernel.size();
    // Max pools pad (and start) with the type's lowest value, average pools
    // with 0; unsigned kiln types compare unsigned.
    bool isUnsigned = cast<RankedTensorType>(op.getInput().getType())
                          .getElementType()
                          .isUnsignedInteger();
    detail::Combiner combiner =
        isMax ? detail::Combiner::Max : detail::Combiner::Sum;
    double padValue = detail::identityOf(combiner, elementType, isUnsigned);
    // 2-D f32 pools are linalg's named ops, which kiln-lower-window-ops
    // runs as direct vector kernels on the CPU (reading the unpadded input,
    // so it is not split into phases here).
    bool named = n == 2 && elementType.isF32();
    WindowInput input = prepareWindowInput(
        rewriter, loc, adaptor.getInput(), kernel, op.getStrides(),
        op.getDilations(), op.getPads(), type.getShape().drop_front(2),
        padValue, /*splitStridedRows=*/!named);
    // The kernel itself is only a shape: iterate it through a dummy input.
    auto kernelType = RankedTensorType::get(kernel, elementType);
    Value window = detail::emptyTensor(rewriter, loc, kernelType);
    Value init = detail::filledTensor(
        rewriter, loc, type,
        detail::scalarConstant(rewriter, loc, elementType, padValue));
    Value result =
        named ? namedPool(rewriter, loc, isMax, input.value, window, init,
                          op.getStrides(), op.getDilations())
              : poolAsLoops(rewriter, loc, input, window, init, op.getStrides(),
                            op.getDilations(), combiner, isUnsigned);
    if constexpr (!isMax) {
      Value counts = arith::ConstantOp::create(
          rewriter, loc,
          windowCounts(cast<RankedTensorType>(op.getInput().getType()), type,
                       op));
      result = detail::elementwiseGeneric(
          rewriter, loc, ValueRange{result, counts}, type,
          [](OpBuilder &b, Location l, ValueRange args) -> Value {
            return arith::DivFOp::create(b, l, args[0], args[1]);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

std::optional<double> winogradShareOfWork(Operation *op) {
  auto conv = dyn_cast<ConvOp>(op);
  if (!conv || conv.getGroups() != 1 || !constantFilter(conv.getFilter()))
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(conv.getType());
  auto inputType = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto filterType = dyn_cast<RankedTensorType>(conv.getFilter().getType());
  if (!type || !inputType || !filterType || !type.getElementType().isF32())
    return std::nullopt;
  return detail::winogradShare(filterType.getShape().drop_front(2),
                               conv.getStrides(), conv.getDilations(),
                               inputType, type);
}

void populateWindowToLinalgPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    const ConvLowering &convs) {
  patterns.add<ConvToLinalg>(converter, patterns.getContext(), convs);
  patterns.add<PoolToGeneric<MaxPoolOp, true>, PoolToGeneric<AvgPoolOp, false>>(
      converter, patterns.getContext());
}

} // namespace kiln
