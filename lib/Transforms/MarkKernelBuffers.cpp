//===- MarkKernelBuffers.cpp - kiln-mark-kernel-buffers -------------------===//
//
// What kiln knows about its device buffers and LLVM cannot see: each is its
// own allocation, aligned, and written through no other argument. Without
// it, a thread's four neighbouring loads and stores stay four scalar
// accesses each (a store could alias the next load).
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace kiln {
#define GEN_PASS_DEF_MARKKERNELBUFFERS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The alignment every kernel buffer has: cuMemAlloc's 256 bytes, and
/// kiln_run_device checks the caller's buffers for this much.
constexpr int64_t kBufferAlignment = 16;

struct MarkKernelBuffersPass
    : public kiln::impl::MarkKernelBuffersBase<MarkKernelBuffersPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return;
      // The function's own arguments, not its shared-memory attributions
      // (block arguments too).
      FunctionType type = func.getFunctionType();
      for (unsigned i = 0; i < type.getNumInputs(); ++i) {
        if (!isa<MemRefType>(type.getInput(i)))
          continue;
        func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                        b.getUnitAttr());
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kBufferAlignment));
      }
    });
  }
};

} // namespace
