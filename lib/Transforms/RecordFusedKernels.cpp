//===- RecordFusedKernels.cpp - kiln-record-fused-kernels -----------------===//
//
// The kernel report describes the kernels fusion formed; lowering then merges
// some of them (a matmul storing through the transpose after it, a 1x1
// convolution run band by band inside the depthwise layer after it), and a
// merged kernel's intermediate never reaches memory. Those rewrites remove the
// profile calls between the kernels they merge (kiln::fuseProfiledKernels), so
// the calls left say which kernels still run apart.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_RECORDFUSEDKERNELS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct RecordFusedKernelsPass
    : public kiln::impl::RecordFusedKernelsBase<RecordFusedKernelsPass> {
  using RecordFusedKernelsBase::RecordFusedKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<int32_t> separate;
    SmallVector<Operation *> hooks;
    WalkResult walk = module.walk([&](func::CallOp call) {
      if (!kiln::isProfileHook(call))
        return WalkResult::advance();
      hooks.push_back(call);
      if (!kiln::isProfileHook(call, kiln::kProfileBegin))
        return WalkResult::advance();
      IntegerAttr index;
      if (call.getNumOperands() != 1 ||
          !matchPattern(call.getOperand(0), m_Constant(&index))) {
        call.emitError("kiln_profile_begin without a constant kernel index");
        return WalkResult::interrupt();
      }
      separate.push_back(int32_t(index.getInt()));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    module->setAttr(kiln::kSeparateKernelsAttrName,
                    DenseI32ArrayAttr::get(module.getContext(), separate));
    if (!stripHooks)
      return;
    for (Operation *hook : hooks)
      hook->erase();
    // The declarations go with the calls (and the index constants, unused
    // now, with the next canonicalization).
    for (StringRef name : {kiln::kProfileBegin, kiln::kProfileEnd})
      if (auto declaration = module.lookupSymbol<func::FuncOp>(name))
        declaration.erase();
  }
};

} // namespace
