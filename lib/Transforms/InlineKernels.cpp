//===- InlineKernels.cpp - kiln-inline-kernels ----------------------------===//
//
// Once each kernel region's ops are fused into their loops, the region has
// served its purpose: its body is spliced into the enclosing block, in
// order, so the ops of one kernel stay contiguous.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Transforms/KernelEmitters.h"
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
