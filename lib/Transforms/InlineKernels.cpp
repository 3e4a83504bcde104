//===- InlineKernels.cpp - kiln-inline-kernels ----------------------------===//
//
// Once each kernel region's ops are fused into their loops, the region has
// served its purpose: its body is spliced into the enclosing block, in
// order, so the ops of one kernel stay contiguous. The kernels of a lane
// of the image-by-image region (kiln-split-batch) are bracketed by lane
// markers, which kiln-form-lanes reads once the code is bufferized.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Lanes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_INLINEKERNELS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
/// `void name(i32)`, declared once in the module.
void declareHook(ModuleOp module, StringRef name) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto type = builder.getFunctionType({builder.getI32Type()}, {});
  auto hook = func::FuncOp::create(builder, module.getLoc(), name, type);
  hook.setPrivate();
}

void callHook(OpBuilder &builder, Location loc, StringRef name,
              int32_t index) {
  Value id = arith::ConstantIntOp::create(builder, loc, index, 32);
  func::CallOp::create(builder, loc, name, TypeRange(), ValueRange(id));
}

/// The lane a kernel runs in (kiln.lane), or -1.
int64_t laneOf(kiln::KernelOp kernel) {
  auto lane = kernel->getAttrOfType<IntegerAttr>(kiln::kLaneAttrName);
  return lane ? lane.getInt() : -1;
}

/// Brackets each run of consecutive kernels of one lane, in one block, by
/// kiln_lane_begin(lane) and kiln_lane_end(lane).
void markLanes(ModuleOp module, ArrayRef<kiln::KernelOp> kernels) {
  if (llvm::all_of(kernels,
                   [](kiln::KernelOp kernel) { return laneOf(kernel) < 0; }))
    return;
  declareHook(module, kiln::kLaneBegin);
  declareHook(module, kiln::kLaneEnd);
  OpBuilder builder(module.getContext());
  kiln::KernelOp previous;
  auto closePrevious = [&] {
    if (!previous || laneOf(previous) < 0)
      return;
    builder.setInsertionPointAfter(previous);
    callHook(builder, previous.getLoc(), kiln::kLaneEnd, laneOf(previous));
  };
  for (kiln::KernelOp kernel : kernels) {
    bool continues = previous && laneOf(previous) == laneOf(kernel) &&
                     previous->getBlock() == kernel->getBlock();
    if (!continues) {
      closePrevious();
      if (laneOf(kernel) >= 0) {
        builder.setInsertionPoint(kernel);
        callHook(builder, kernel.getLoc(), kiln::kLaneBegin, laneOf(kernel));
      }
    }
    previous = kernel;
  }
  closePrevious();
}

struct InlineKernelsPass
    : public kiln::impl::InlineKernelsBase<InlineKernelsPass> {
  using InlineKernelsBase::InlineKernelsBase;

  void runOnOperation() override {
    SmallVector<kiln::KernelOp> kernels;
    getOperation().walk([&](kiln::KernelOp kernel) { kernels.push_back(kernel); });
    if (profile && !kernels.empty()) {
      declareHook(getOperation(), kiln::kProfileBegin);
      declareHook(getOperation(), kiln::kProfileEnd);
    }
    // Outside the profiling calls, which go right around each kernel.
    markLanes(getOperation(), kernels);
    IRRewriter rewriter(&getContext());
    for (auto [index, kernel] : llvm::enumerate(kernels)) {
      if (profile) {
        rewriter.setInsertionPoint(kernel);
        callHook(rewriter, kernel.getLoc(), kiln::kProfileBegin, index);
        rewriter.setInsertionPointAfter(kernel);
        callHook(rewriter, kernel.getLoc(), kiln::kProfileEnd, index);
      }
      Block &body = kernel.getBody().front();
      auto yield = cast<kiln::YieldOp>(body.getTerminator());
      // A kernel may yield an input unchanged (an op that folded away).
      SmallVector<Value> results;
      for (Value value : yield.getValues()) {
        auto argument = dyn_cast<BlockArgument>(value);
        results.push_back(argument && argument.getOwner() == &body
                              ? kernel.getInputs()[argument.getArgNumber()]
                              : value);
      }
      rewriter.eraseOp(yield);
      rewriter.inlineBlockBefore(&body, kernel, kernel.getInputs());
      rewriter.replaceOp(kernel, results);
    }
  }
};

} // namespace
