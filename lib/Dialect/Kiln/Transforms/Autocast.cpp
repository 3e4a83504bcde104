//===- Autocast.cpp - kiln-autocast ---------------------------------------===//
//
// Half-precision matrix products with f32 everywhere else: tensor cores run
// f16/bf16 products many times faster than f32 ones and halve the bytes of
// weights and of the activations they read, while reductions, softmax and
// normalizations keep f32's range and precision.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/ConstantData.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_KILNAUTOCAST
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// f32 -> bf16 bits, rounding to nearest even (NaN stays a quiet NaN).
uint16_t toBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

/// f32 -> IEEE half bits, rounding to nearest even; overflow becomes inf,
/// tiny values become subnormals or zero.
uint16_t toHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000, mantissa = bits & 0x7fffff;
  int exponent = int((bits >> 23) & 0xff);
  if (exponent == 0xff)
    return uint16_t(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  int halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f)
    return uint16_t(sign | 0x7c00);
  // Bits of the 24-bit significand that do not fit, and what is kept.
  int shift = 13;
  uint32_t significand = mantissa;
  if (halfExponent <= 0) {
    if (halfExponent < -10)
      return uint16_t(sign);
    significand |= 0x800000;
    shift = 14 - halfExponent;
    halfExponent = 0;
  }
  uint32_t kept = significand >> shift;
  uint32_t rest = significand & ((1u << shift) - 1),
           halfway = 1u << (shift - 1);
  uint32_t half = (uint32_t(halfExponent) << 10) + kept;
  // A carry out of the mantissa correctly bumps the exponent.
  if (rest > halfway || (rest == halfway && (kept & 1)))
    ++half;
  return uint16_t(sign | half);
}

struct AutocastPass : public kiln::impl::KilnAutocastBase<AutocastPass> {
  using KilnAutocastBase::KilnAutocastBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Type half;
    if (type == "f16")
      half = Float16Type::get(ctx);
    else if (type == "bf16")
      half = BFloat16Type::get(ctx);
    else {
      emitError(getOperation().getLoc())
          << "kiln-autocast: type must be f16 or bf16, got '" << type << "'";
      return signalPassFailure();
    }
    SmallVector<Operation *> products;
    getOperation().walk([&](Operation *op) {
      if (auto matmul = dyn_cast<MatmulOp>(op);
          matmul && matmul.getType().getElementType().isF32())
        products.push_back(op);
      if (auto conv = dyn_cast<ConvOp>(op); conv && isMatrixProduct(conv))
        products.push_back(op);
    });
    for (Operation *op : products) {
      OpBuilder b(op);
      Value result;
      if (auto matmul = dyn_cast<MatmulOp>(op))
        result = toF32(b, MatmulOp::create(b, op->getLoc(),
                                           matmul.getType().clone(half),
                                           toHalf(b, matmul.getLhs(), half),
                                           toHalf(b, matmul.getRhs(), half)));
      else
        result = autocastConv(b, cast<ConvOp>(op), half);
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }

  /// A dense f32 convolution is a matrix product per image (im2col, then a
  /// GEMM on tensor cores); grouped and depthwise ones are loops, and a
  /// computed bias would need a reshape at run time: those stay f32.
  static bool isMatrixProduct(ConvOp conv) {
    if (!conv.getType().getElementType().isF32() || conv.getGroups() != 1)
      return false;
    if (!conv.getBias())
      return true;
    auto bias = conv.getBias().getDefiningOp<ConstantOp>();
    return bias && readFloatData(bias.getValue());
  }

  /// The half-precision `product` converted to f32.
  static Value toF32(OpBuilder &b, Value product) {
    auto type = cast<RankedTensorType>(product.getType());
    Type f32 = b.getF32Type();
    return CastOp::create(b, product.getLoc(), type.clone(f32), product,
                          TypeAttr::get(f32));
  }

  /// The convolution without its bias in half precision, converted to f32;
  /// the bias, an f32 constant [O] reshaped to [O, 1, ...] to broadcast over
  /// the pixels, added to that (in the epilogue kernel fusion makes).
  Value autocastConv(OpBuilder &b, ConvOp conv, Type half) {
    Location loc = conv.getLoc();
    auto type = cast<RankedTensorType>(conv.getType());
    Value result =
        toF32(b, ConvOp::create(
                     b, loc, type.clone(half), toHalf(b, conv.getInput(), half),
                     toHalf(b, conv.getFilter(), half), /*bias=*/Value(),
                     conv.getStridesAttr(), conv.getDilationsAttr(),
                     conv.getPadsAttr(), conv.getGroupsAttr()));
    if (!conv.getBias())
      return result;
    SmallVector<int64_t> shape(type.getRank() - 1, 1);
    shape.front() = type.getDimSize(1);
    auto biasType = RankedTensorType::get(shape, type.getElementType());
    SmallVector<float> bias =
        *readFloatData(conv.getBias().getDefiningOp<ConstantOp>().getValue());
    Value broadcast = ConstantOp::create(
        b, loc, DenseElementsAttr::get(biasType, ArrayRef<float>(bias)));
    return AddOp::create(b, loc, type, result, broadcast);
  }

  /// `value` in the half type: a converted copy of a constant, else a cast.
  Value toHalf(OpBuilder &b, Value value, Type half) {
    auto type = cast<RankedTensorType>(value.getType()).clone(half);
    if (auto constant = value.getDefiningOp<ConstantOp>())
      if (std::optional<SmallVector<float>> data =
              readFloatData(constant.getValue())) {
        SmallVector<uint16_t> bits;
        bits.reserve(data->size());
        for (float v : *data)
          bits.push_back(half.isF16() ? ::toHalf(v) : toBFloat16(v));
        ElementsAttr converted;
        if (bits.size() <= 16)
          converted = DenseElementsAttr::getFromRawBuffer(
              type, ArrayRef(reinterpret_cast<const char *>(bits.data()),
                             bits.size() * sizeof(uint16_t)));
        else
          converted = DenseResourceElementsAttr::get(
              type, "autocast",
              HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(bits)));
        return ConstantOp::create(b, value.getLoc(), converted);
      }
    return CastOp::create(b, value.getLoc(), type, value, TypeAttr::get(half));
  }
};

} // namespace
