//===- KilnToLinalg.cpp - convert-kiln-to-linalg --------------------------===//

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Transforms/DialectConversion.h"

#include <map>

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

KilnToLinalgTypeConverter::KilnToLinalgTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    auto integer = dyn_cast<IntegerType>(type.getElementType());
    if (!integer || integer.isSignless())
      return type;
    return type.clone(IntegerType::get(type.getContext(), integer.getWidth()));
  });
}

namespace {

/// Whether the patterns of this pass lower `op` (a kiln op).
bool hasLinalgLowering(Operation *op) {
  if (op->hasTrait<OpTrait::Elementwise>())
    return true;
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return !reshape.getShapeTensor();
  if (auto expand = dyn_cast<ExpandOp>(op))
    return !expand.getShapeTensor();
  return isa<ConstantOp, MatmulOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp,
             ReduceMinOp, ReduceProdOp, SoftmaxOp, LogSoftmaxOp, TransposeOp,
             ConcatOp, SplitOp, SliceOp, GatherOp, ConvOp, MaxPoolOp, ArgMaxOp,
             ArgMinOp, PadOp>(op) ||
         (isa<AvgPoolOp, ResizeOp>(op) &&
          getElementTypeOrSelf(op->getResult(0)).isF32());
}

/// Kernel regions survive the lowering: their signatures become signless and
/// their bodies are lowered in place.
struct KernelOpTypeConversion : public OpConversionPattern<KernelOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(KernelOp kernel, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> outputTypes;
    if (failed(getTypeConverter()->convertTypes(kernel.getResultTypes(),
                                                outputTypes)))
      return failure();
    auto converted =
        KernelOp::create(rewriter, kernel.getLoc(), kernel.getKind(),
                         adaptor.getInputs(), outputTypes);
    converted->setDiscardableAttrs(kernel->getDiscardableAttrDictionary());
    rewriter.eraseBlock(&converted.getBody().front());
    rewriter.inlineRegionBefore(kernel.getBody(), converted.getBody(),
                                converted.getBody().end());
    if (failed(rewriter.convertRegionTypes(&converted.getBody(),
                                           *getTypeConverter())))
      return failure();
    rewriter.replaceOp(kernel, converted.getResults());
    return success();
  }
};

struct YieldOpTypeConversion : public OpConversionPattern<YieldOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(YieldOp yield, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<YieldOp>(yield, adaptor.getValues());
    return success();
  }
};

/// Names every kiln op the pass cannot lower yet, in one error.
LogicalResult checkLowerable(ModuleOp module) {
  std::map<std::string, int> missing;
  module.walk([&](Operation *op) {
    if (isa<KilnDialect>(op->getDialect()) && !isa<KernelOp, YieldOp>(op) &&
        !hasLinalgLowering(op))
      ++missing[op->getName().getStringRef().str()];
  });
  if (missing.empty())
    return success();
  InFlightDiagnostic diag = module.emitError()
                            << "no lowering to linalg yet for: ";
  for (auto [i, entry] : llvm::enumerate(missing))
    diag << (i ? ", " : "") << entry.first << " (" << entry.second << ")";
  return diag;
}

struct ConvertKilnToLinalgPass
    : public impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  using ConvertKilnToLinalgBase::ConvertKilnToLinalgBase;

  void runOnOperation() override {
    if (failed(checkLowerable(getOperation())))
      return signalPassFailure();
    MLIRContext *context = &getContext();
    KilnToLinalgTypeConverter converter;
    ConversionTarget target(*context);
    target.addIllegalDialect<KilnDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType()) &&
             converter.isLegal(&func.getBody());
    });
    target.addDynamicallyLegalOp<KernelOp>([&](KernelOp kernel) {
      return converter.isLegal(kernel) && converter.isLegal(&kernel.getBody());
    });
    target.addDynamicallyLegalOp<YieldOp>(
        [&](YieldOp yield) { return converter.isLegal(yield); });
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(context);
    populateElementwiseToLinalgPatterns(converter, patterns);
    populateContractionToLinalgPatterns(converter, patterns);
    populateReductionToLinalgPatterns(converter, patterns);
    populateDataMovementToLinalgPatterns(converter, patterns);
    populateWindowToLinalgPatterns(converter, patterns,
                                   ConvLowering{implicitGemmConvs,
                                                winogradConvs, matmulTileRows,
                                                vectorLanes});
    populateResizeToLinalgPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    patterns.add<KernelOpTypeConversion, YieldOpTypeConversion>(converter,
                                                                context);

    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
