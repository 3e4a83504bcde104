//===- EmulateBF16.cpp - kiln-emulate-bf16 --------------------------------===//
//
// f32 -> bf16 rounding has no instruction on x86 CPUs before AVX512-BF16
// (Zen 3, Intel before Cooper Lake): LLVM computes bf16 arithmetic in f32
// and rounds each result with a call of compiler-rt's __truncsfbf2, which
// model.so cannot resolve (it links libc and libm alone). Here the
// arithmetic and math are made explicit f32 ops between extf and truncf
// (upstream's emulation of unsupported floats and its extension of math ops
// to supported types), then upstream's bf16 expansion computes those
// conversions with integer ops, which also vectorize.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_EMULATEBF16
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct EmulateBF16Pass : public kiln::impl::EmulateBF16Base<EmulateBF16Pass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    if (failed(computeInF32()))
      return signalPassFailure();
    RewritePatternSet expansions(context);
    arith::populateExpandBFloat16Patterns(expansions);
    if (failed(applyPatternsGreedily(getOperation(), std::move(expansions))))
      signalPassFailure();
  }

  /// bf16 arith, vector and math ops become their f32 op between extf and
  /// truncf.
  LogicalResult computeInF32() {
    MLIRContext *context = &getContext();
    Type bf16 = BFloat16Type::get(context), f32 = Float32Type::get(context);
    TypeConverter arithConverter;
    arith::populateEmulateUnsupportedFloatsConversions(arithConverter, {bf16},
                                                       f32);
    RewritePatternSet arithPatterns(context);
    arith::populateEmulateUnsupportedFloatsPatterns(arithPatterns,
                                                    arithConverter);
    ConversionTarget arithTarget(*context);
    arith::populateEmulateUnsupportedFloatsLegality(arithTarget,
                                                    arithConverter);
    if (failed(applyPartialConversion(getOperation(), arithTarget,
                                      std::move(arithPatterns))))
      return failure();
    // Math ops are extended from the types not named here (the pattern
    // takes f32, the target, as supported; f64 it would narrow to f32): f16
    // and f64 math are left as they were.
    SetVector<Type> supported;
    supported.insert(Float16Type::get(context));
    supported.insert(Float64Type::get(context));
    TypeConverter mathConverter;
    math::populateExtendToSupportedTypesTypeConverter(mathConverter, supported,
                                                      f32);
    RewritePatternSet mathPatterns(context);
    math::populateExtendToSupportedTypesPatterns(mathPatterns, mathConverter);
    ConversionTarget mathTarget(*context);
    math::populateExtendToSupportedTypesConversionTarget(mathTarget,
                                                         mathConverter);
    return applyPartialConversion(getOperation(), mathTarget,
                                  std::move(mathPatterns));
  }
};

} // namespace
