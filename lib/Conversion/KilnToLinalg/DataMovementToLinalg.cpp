//===- DataMovementToLinalg.cpp - kiln layout ops to linalg and tensor ----===//
//
// Constants become arith.constant (weights stay dense_resource blobs),
// reshape becomes tensor.reshape, transpose linalg.transpose, expand a
// broadcasting copy, concat and split tensor.insert_slice /
// tensor.extract_slice, and slice an extract_slice (positive steps) or a
// generic reading start + i * step (negative steps).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace kiln {
namespace {

struct ConstantToArith : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    TypedAttr value;
    if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue()))
      value = dense.getType() == type ? dense
                                      : dense.bitcast(type.getElementType());
    else if (auto blob = dyn_cast<DenseResourceElementsAttr>(op.getValue()))
      value = DenseResourceElementsAttr::get(type, blob.getRawHandle());
    else
      return rewriter.notifyMatchFailure(op, "unsupported constant attribute");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, value);
    return success();
  }
};

struct ReshapeToTensor : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs a static result shape");
    auto shapeType =
        RankedTensorType::get({type.getRank()}, rewriter.getI64Type());
    Value shape = arith::ConstantOp::create(
        rewriter, op.getLoc(),
        DenseIntElementsAttr::get(shapeType, type.getShape()));
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, type, adaptor.getInput(),
                                                   shape);
    return success();
  }
};

struct TransposeToLinalg : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value init = detail::emptyTensor(rewriter, op.getLoc(), type);
    rewriter.replaceOpWithNewOp<linalg::TransposeOp>(op, adaptor.getInput(),
                                                     init, op.getPerm());
    return success();
  }
};

struct ExpandToGeneric : public OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOp(op, detail::elementwiseGeneric(
                               rewriter, op.getLoc(), adaptor.getInput(), type,
                               [](OpBuilder &, Location, ValueRange args) {
                                 return args[0];
                               }));
    return success();
  }
};

/// Static offsets/sizes/strides of a slice of `type` along `axis`.
struct SliceAlongAxis {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SliceAlongAxis(OpBuilder &b, RankedTensorType pieceType, int64_t axis,
                 int64_t offset) {
    for (int64_t d = 0; d < pieceType.getRank(); ++d) {
      offsets.push_back(b.getIndexAttr(d == axis ? offset : 0));
      sizes.push_back(b.getIndexAttr(pieceType.getDimSize(d)));
      strides.push_back(b.getIndexAttr(1));
    }
  }
};

struct ConcatToInsertSlices : public OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    int64_t axis = detail::normalizedAxis(op.getAxis(), type.getRank());
    Value result = detail::emptyTensor(rewriter, op.getLoc(), type);
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      auto pieceType = cast<RankedTensorType>(input.getType());
      // An empty piece adds nothing (and its offset may be the end).
      if (pieceType.getDimSize(axis) == 0)
        continue;
      SliceAlongAxis slice(rewriter, pieceType, axis, offset);
      result = tensor::InsertSliceOp::create(rewriter, op.getLoc(), input,
                                             result, slice.offsets, slice.sizes,
                                             slice.strides);
      offset += pieceType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitToExtractSlices : public OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t axis = detail::normalizedAxis(
        op.getAxis(),
        cast<RankedTensorType>(op.getInput().getType()).getRank());
    SmallVector<Value> pieces;
    int64_t offset = 0;
    for (Value output : op.getOutputs()) {
      auto pieceType = cast<RankedTensorType>(
          getTypeConverter()->convertType(output.getType()));
      if (pieceType.getDimSize(axis) == 0) {
        // An empty piece reads nothing (and its offset may be the end).
        pieces.push_back(detail::emptyTensor(rewriter, op.getLoc(), pieceType));
        continue;
      }
      SliceAlongAxis slice(rewriter, pieceType, axis, offset);
      pieces.push_back(tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), pieceType, adaptor.getInput(), slice.offsets,
          slice.sizes, slice.strides));
      offset += pieceType.getDimSize(axis);
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

struct SliceToTensor : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
    if (type.getNumElements() == 0) { // No data; offsets may equal the dim.
      rewriter.replaceOp(op, detail::emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, type, adaptor.getInput(), ValueRange(), ValueRange(),
          ValueRange(), starts, type.getShape(), steps);
      return success();
    }
    // Negative steps: output index i reads input index start + i * step.
    MLIRContext *context = getContext();
    SmallVector<AffineExpr> exprs;
    for (auto [d, start, step] : llvm::enumerate(starts, steps))
      exprs.push_back(getAffineConstantExpr(start, context) +
                      getAffineDimExpr(d, context) * step);
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, context),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), type, adaptor.getInput(),
        detail::emptyTensor(rewriter, op.getLoc(), type), maps, iterators,
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// out[p, j..., q] = data[p, clamp(indices[j...]), q]: a generic over the
/// output reading the indices through its map and the data with
/// tensor.extract. Negative indices count from the end; indices out of range
/// are clamped so bad run-time data cannot read outside the tensor.
struct GatherToGeneric : public OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
    auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
    int64_t axis = detail::normalizedAxis(op.getAxis(), dataType.getRank());
    int64_t indexRank = indicesType.getRank();
    int64_t rank = type.getRank();
    MLIRContext *context = getContext();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < indexRank; ++d)
      indexExprs.push_back(getAffineDimExpr(axis + d, context));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, indexExprs, context),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value data = adaptor.getData();
    int64_t axisSize = dataType.getDimSize(axis);
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), type, adaptor.getIndices(),
        detail::emptyTensor(rewriter, op.getLoc(), type), maps, iterators,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value index =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
          Value size = arith::ConstantIndexOp::create(b, loc, axisSize);
          Value zero = arith::ConstantIndexOp::create(b, loc, 0);
          Value negative = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, index, zero);
          index = arith::SelectOp::create(
              b, loc, negative, arith::AddIOp::create(b, loc, index, size),
              index);
          Value last = arith::ConstantIndexOp::create(b, loc, axisSize - 1);
          index = arith::MaxSIOp::create(
              b, loc, zero, arith::MinSIOp::create(b, loc, index, last));
          SmallVector<Value> coordinates;
          for (int64_t d = 0; d < axis; ++d)
            coordinates.push_back(linalg::IndexOp::create(b, loc, d));
          coordinates.push_back(index);
          for (int64_t d = axis + indexRank; d < rank; ++d)
            coordinates.push_back(linalg::IndexOp::create(b, loc, d));
          Value element = tensor::ExtractOp::create(b, loc, data, coordinates);
          linalg::YieldOp::create(b, loc, element);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Constant padding: negative pads crop first (extract_slice), then
/// tensor.pad adds the positive ones. Reflect and edge padding: a generic
/// over the output that reads the input at the reflected or clamped index.
struct PadToTensor : public OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank();
    ArrayRef<int64_t> pads = op.getPads();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, detail::emptyTensor(rewriter, loc, type));
      return success();
    }
    if (op.getMode() != PadMode::Constant) {
      rewriter.replaceOp(
          op, reflectOrEdge(rewriter, loc, input, type, pads, op.getMode()));
      return success();
    }
    // Crop negative pads.
    SmallVector<int64_t> offsets(rank), sizes(inputType.getShape()),
        strides(rank, 1);
    bool crop = false;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t low = std::min<int64_t>(pads[d], 0);
      int64_t high = std::min<int64_t>(pads[d + rank], 0);
      offsets[d] = -low;
      sizes[d] += low + high;
      crop |= low || high;
    }
    if (crop)
      input = tensor::ExtractSliceOp::create(
          rewriter, loc, inputType.clone(sizes), input, ValueRange(),
          ValueRange(), ValueRange(), offsets, sizes, strides);
    SmallVector<OpFoldResult> low, high;
    for (int64_t d = 0; d < rank; ++d) {
      low.push_back(rewriter.getIndexAttr(std::max<int64_t>(pads[d], 0)));
      high.push_back(
          rewriter.getIndexAttr(std::max<int64_t>(pads[d + rank], 0)));
    }
    Value value = detail::scalarConstant(rewriter, loc, type.getElementType(),
                                         op.getValue().convertToDouble());
    rewriter.replaceOpWithNewOp<tensor::PadOp>(op, type, input, low, high,
                                               value);
    return success();
  }

  static Value reflectOrEdge(OpBuilder &b, Location loc, Value input,
                             RankedTensorType type, ArrayRef<int64_t> pads,
                             PadMode mode) {
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank();
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, type, ValueRange(), detail::emptyTensor(b, loc, type),
               ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)}, iterators,
               [&](OpBuilder &nb, Location l, ValueRange) {
                 SmallVector<Value> coordinates;
                 for (int64_t d = 0; d < rank; ++d) {
                   int64_t n = inputType.getDimSize(d);
                   auto c = [&](int64_t v) -> Value {
                     return arith::ConstantIndexOp::create(nb, l, v);
                   };
                   Value i = arith::SubIOp::create(
                       nb, l, linalg::IndexOp::create(nb, l, d), c(pads[d]));
                   if (mode == PadMode::Reflect) {
                     // i < 0 -> -i;  i > n - 1 -> 2 (n - 1) - i.
                     Value negated = arith::SubIOp::create(nb, l, c(0), i);
                     i = arith::MaxSIOp::create(nb, l, i, negated);
                     Value mirrored =
                         arith::SubIOp::create(nb, l, c(2 * (n - 1)), i);
                     i = arith::MinSIOp::create(nb, l, i, mirrored);
                   }
                   // Edge, and any reflection larger than the dim: clamp.
                   i = arith::MaxSIOp::create(
                       nb, l, c(0), arith::MinSIOp::create(nb, l, i, c(n - 1)));
                   coordinates.push_back(i);
                 }
                 linalg::YieldOp::create(nb, l,
                                         ValueRange{tensor::ExtractOp::create(
                                             nb, l, input, coordinates)});
               })
        .getResult(0);
  }
};

} // namespace

void populateDataMovementToLinalgPatterns(TypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<ConstantToArith, ReshapeToTensor, TransposeToLinalg,
               ExpandToGeneric, ConcatToInsertSlices, SplitToExtractSlices,
               SliceToTensor, GatherToGeneric, PadToTensor>(
      converter, patterns.getContext());
}

} // namespace kiln
