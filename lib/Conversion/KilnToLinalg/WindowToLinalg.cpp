//===- WindowToLinalg.cpp - kiln conv and pooling to linalg ---------------===//
//
// Convolution and pooling over N spatial dims as linalg.generic reductions:
// the input is padded first (tensor.pad with 0 or -inf, plus the extra
// trailing rows ceil_mode needs), then every output element reduces over
// its window, reading input[.., o * stride + k * dilation]. Grouped
// convolution picks the input channel (o / outPerGroup) * inPerGroup + c.
// Average pooling divides by a compile-time table of window counts.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

/// Pads the spatial dims of `input` ([N, C, D...]) with `value`: the
/// leading pads, and trailing pads grown so every window of the output fits.
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> outSpatial, double value) {
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
  if (!any)
    return input;
  Value padValue = detail::scalarConstant(b, loc, type.getElementType(), value);
  auto asFoldResults = [&](ArrayRef<int64_t> values) {
    return llvm::to_vector(llvm::map_range(
        values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); }));
  };
  return tensor::PadOp::create(b, loc, type.clone(shape), input,
                               asFoldResults(low), asFoldResults(high),
                               padValue);
}

/// Input map of a window: (..., out_i, ..., k_i, ...) -> out * s + k * d.
SmallVector<AffineExpr> windowExprs(MLIRContext *context, unsigned firstOut,
                                    unsigned firstKernel,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> dilations) {
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < strides.size(); ++i)
    exprs.push_back(getAffineDimExpr(firstOut + i, context) * strides[i] +
                    getAffineDimExpr(firstKernel + i, context) * dilations[i]);
  return exprs;
}

struct ConvToGeneric : public OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = getContext();
    auto type = cast<RankedTensorType>(op.getType());
    auto filterType = cast<RankedTensorType>(op.getFilter().getType());
    ArrayRef<int64_t> kernel = filterType.getShape().drop_front(2);
    size_t n = kernel.size();
    Value input = padSpatial(rewriter, loc, adaptor.getInput(), kernel,
                             op.getStrides(), op.getDilations(), op.getPads(),
                             type.getShape().drop_front(2), 0.0);
    int64_t groups = static_cast<int64_t>(op.getGroups());
    int64_t outPerGroup = type.getDimSize(1) / groups;
    int64_t inPerGroup = filterType.getDimSize(1);
    // Loops: n, o, out_0..out_{n-1}, c, k_0..k_{n-1}.
    unsigned rank = 2 + n + 1 + n;
    unsigned firstOut = 2, channel = 2 + n, firstKernel = 3 + n;
    AffineExpr o = getAffineDimExpr(1, context);
    AffineExpr c = getAffineDimExpr(channel, context);
    SmallVector<AffineExpr> inputExprs = {getAffineDimExpr(0, context)};
    inputExprs.push_back(
        groups == 1 ? c : o.floorDiv(outPerGroup) * inPerGroup + c);
    llvm::append_range(inputExprs,
                       windowExprs(context, firstOut, firstKernel,
                                   op.getStrides(), op.getDilations()));
    SmallVector<AffineExpr> filterExprs = {o, c};
    SmallVector<AffineExpr> outExprs = {getAffineDimExpr(0, context), o};
    for (size_t i = 0; i < n; ++i) {
      filterExprs.push_back(getAffineDimExpr(firstKernel + i, context));
      outExprs.push_back(getAffineDimExpr(firstOut + i, context));
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, inputExprs, context),
        AffineMap::get(rank, 0, filterExprs, context),
        AffineMap::get(rank, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    for (unsigned d = channel; d < rank; ++d)
      iterators[d] = utils::IteratorType::reduction;
    Type elementType = type.getElementType();
    Value init = detail::filledTensor(
        rewriter, loc, type,
        detail::scalarConstant(rewriter, loc, elementType, 0));
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, ValueRange{input, adaptor.getFilter()}, init,
            maps, iterators,
            [](OpBuilder &b, Location l, ValueRange args) {
              Value product = arith::MulFOp::create(b, l, args[0], args[1]);
              Value sum = arith::AddFOp::create(b, l, args[2], product);
              linalg::YieldOp::create(b, l, sum);
            })
            .getResult(0);
    if (Value bias = adaptor.getBias()) {
      // [O] -> [O, 1, ..., 1] so it broadcasts over the spatial dims.
      SmallVector<int64_t> biasShape(n + 1, 1);
      biasShape[0] = type.getDimSize(1);
      auto biasType = RankedTensorType::get(biasShape, elementType);
      SmallVector<ReassociationIndices> reassociation = {
          llvm::to_vector(llvm::seq<int64_t>(0, n + 1))};
      Value shaped = tensor::ExpandShapeOp::create(rewriter, loc, biasType,
                                                   bias, reassociation);
      result = detail::elementwiseGeneric(
          rewriter, loc, ValueRange{result, shaped}, type,
          [](OpBuilder &b, Location l, ValueRange args) -> Value {
            return arith::AddFOp::create(b, l, args[0], args[1]);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
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

template <typename OpTy, bool isMax>
struct PoolToGeneric : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = this->getContext();
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
    Value input = padSpatial(rewriter, loc, adaptor.getInput(), kernel,
                             op.getStrides(), op.getDilations(), op.getPads(),
                             type.getShape().drop_front(2), padValue);
    // Loops: n, c, out..., k...; the kernel dims are reductions.
    unsigned rank = 2 + 2 * n;
    SmallVector<AffineExpr> inputExprs = {getAffineDimExpr(0, context),
                                          getAffineDimExpr(1, context)};
    llvm::append_range(
        inputExprs,
        windowExprs(context, 2, 2 + n, op.getStrides(), op.getDilations()));
    SmallVector<AffineExpr> outExprs;
    for (unsigned d = 0; d < 2 + n; ++d)
      outExprs.push_back(getAffineDimExpr(d, context));
    // The kernel itself is only a shape: iterate it through a dummy input.
    auto kernelType = RankedTensorType::get(kernel, elementType);
    Value window = detail::emptyTensor(rewriter, loc, kernelType);
    SmallVector<AffineExpr> kernelExprs;
    for (size_t i = 0; i < n; ++i)
      kernelExprs.push_back(getAffineDimExpr(2 + n + i, context));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, inputExprs, context),
        AffineMap::get(rank, 0, kernelExprs, context),
        AffineMap::get(rank, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    for (unsigned d = 2 + n; d < rank; ++d)
      iterators[d] = utils::IteratorType::reduction;
    Value init = detail::filledTensor(
        rewriter, loc, type,
        detail::scalarConstant(rewriter, loc, elementType, padValue));
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, ValueRange{input, window}, init, maps,
            iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l,
                                      detail::combine(b, l, combiner, args[2],
                                                      args[0], isUnsigned));
            })
            .getResult(0);
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

void populateWindowToLinalgPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns) {
  patterns.add<ConvToGeneric, PoolToGeneric<MaxPoolOp, true>,
               PoolToGeneric<AvgPoolOp, false>>(converter,
                                                patterns.getContext());
}

} // namespace kiln
