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
    SmallVector<MatmulOp> matmuls;
    getOperation().walk([&](MatmulOp op) {
      if (op.getType().getElementType().isF32())
        matmuls.push_back(op);
    });
    for (MatmulOp op : matmuls) {
      OpBuilder b(op);
      Value lhs = toHalf(b, op.getLhs(), half);
      Value rhs = toHalf(b, op.getRhs(), half);
      auto type = cast<RankedTensorType>(op.getType());
      Value product =
          MatmulOp::create(b, op.getLoc(), type.clone(half), lhs, rhs);
      Value result = CastOp::create(b, op.getLoc(), type, product,
                                    TypeAttr::get(type.getElementType()));
      op.replaceAllUsesWith(result);
      op.erase();
    }
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
