//===- EmulateGPULaunches.cpp - kiln-emulate-gpu-launches -----------------===//
//
// The CUDA target's loop-to-thread mapping is kiln's own code; the lowering
// below it (NVVM, PTX) is upstream's. Running the mapped kernels as plain
// loops on the CPU checks the mapping against every reference the CPU
// backend is checked against, on machines with no GPU.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_EMULATEGPULAUNCHES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Ops whose meaning needs threads running together.
bool needsConcurrentThreads(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::AllReduceOp,
             gpu::SubgroupReduceOp>(op);
}

struct EmulateGPULaunchesPass
    : public kiln::impl::EmulateGPULaunchesBase<EmulateGPULaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::LaunchOp> launches;
    module.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch)))
        return signalPassFailure();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  LogicalResult emulate(gpu::LaunchOp launch) {
    Region &body = launch.getBody();
    if (!body.hasOneBlock() || !launch.getWorkgroupAttributions().empty() ||
        !launch.getPrivateAttributions().empty() || launch.getAsyncToken())
      return launch.emitOpError("kiln-emulate-gpu-launches: only synchronous "
                                "single-block launches without attributions");
    WalkResult concurrent = body.walk([](Operation *op) {
      return needsConcurrentThreads(op) ? WalkResult::interrupt()
                                        : WalkResult::advance();
    });
    if (concurrent.wasInterrupted())
      return launch.emitOpError("kiln-emulate-gpu-launches: the kernel needs "
                                "threads running together");

    OpBuilder b(launch);
    Location loc = launch.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    gpu::KernelDim3 gridSize = launch.getGridSizeOperandValues();
    gpu::KernelDim3 blockSize = launch.getBlockSizeOperandValues();
    IRMapping mapping;
    auto mapDims = [&](gpu::KernelDim3 from, gpu::KernelDim3 to) {
      mapping.map(from.x, to.x);
      mapping.map(from.y, to.y);
      mapping.map(from.z, to.z);
    };
    mapDims(launch.getGridSize(), gridSize);
    mapDims(launch.getBlockSize(), blockSize);
    // Loops outermost first: blocks z, y, x, then threads z, y, x.
    Value bounds[] = {gridSize.z,  gridSize.y,  gridSize.x,
                      blockSize.z, blockSize.y, blockSize.x};
    SmallVector<Value> ids;
    for (Value bound : bounds) {
      auto loop = scf::ForOp::create(b, loc, zero, bound, one);
      b.setInsertionPointToStart(loop.getBody());
      ids.push_back(loop.getInductionVar());
    }
    mapDims(launch.getBlockIds(), {ids[2], ids[1], ids[0]});
    mapDims(launch.getThreadIds(), {ids[5], ids[4], ids[3]});
    for (Operation &op : body.front().without_terminator())
      b.clone(op, mapping);
    launch.erase();
    return success();
  }
};

} // namespace
