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
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_EMULATEGPULAUNCHES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Ops whose meaning needs threads running in lockstep (a barrier at the
/// top level of the kernel is emulated; these are not).
bool needsLockstep(Operation *op) {
  return isa<gpu::ShuffleOp, gpu::AllReduceOp, gpu::SubgroupReduceOp>(op);
}

bool isRecomputable(Operation *op) {
  return op->getNumRegions() == 0 && isPure(op);
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

  /// The kernel's top-level ops split at its barriers. Every thread of a
  /// block finishes a phase before any starts the next, which is what the
  /// barrier guarantees; values cross phases only through memory or as
  /// pure computations that each phase repeats.
  FailureOr<SmallVector<SmallVector<Operation *>>>
  splitAtBarriers(gpu::LaunchOp launch) {
    Block &body = launch.getBody().front();
    SmallVector<SmallVector<Operation *>> phases(1);
    DenseMap<Operation *, unsigned> phaseOf;
    for (Operation &op : body.without_terminator()) {
      if (isa<gpu::BarrierOp>(op)) {
        phases.emplace_back();
        continue;
      }
      phaseOf[&op] = phases.size() - 1;
      phases.back().push_back(&op);
    }
    WalkResult result = body.walk([&](Operation *op) {
      if (needsLockstep(op) ||
          (isa<gpu::BarrierOp>(op) && op->getBlock() != &body)) {
        op->emitOpError("kiln-emulate-gpu-launches: the kernel needs threads "
                        "running together");
        return WalkResult::interrupt();
      }
      Operation *top = body.findAncestorOpInBlock(*op);
      for (Value operand : op->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || producer->getBlock() != &body || !top ||
            phaseOf.lookup(producer) == phaseOf.lookup(top) ||
            isRecomputable(producer))
          continue;
        op->emitOpError("kiln-emulate-gpu-launches: a value computed before "
                        "a barrier is used after it");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    return phases;
  }

  LogicalResult emulate(gpu::LaunchOp launch) {
    Region &body = launch.getBody();
    if (!body.hasOneBlock() || !launch.getPrivateAttributions().empty() ||
        launch.getAsyncToken())
      return launch.emitOpError("kiln-emulate-gpu-launches: only synchronous "
                                "single-block launches without private "
                                "attributions");
    FailureOr<SmallVector<SmallVector<Operation *>>> phases =
        splitAtBarriers(launch);
    if (failed(phases))
      return failure();

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
    auto loops = [&](ArrayRef<Value> bounds) {
      SmallVector<Value> ids;
      for (Value bound : bounds) {
        auto loop = scf::ForOp::create(b, loc, zero, bound, one);
        b.setInsertionPointToStart(loop.getBody());
        ids.push_back(loop.getInductionVar());
      }
      return ids;
    };
    // Blocks z, y, x; the block's shared memory; then per phase the
    // threads z, y, x.
    SmallVector<Value> block = loops({gridSize.z, gridSize.y, gridSize.x});
    mapDims(launch.getBlockIds(), {block[2], block[1], block[0]});
    for (BlockArgument shared : launch.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(shared.getType());
      mapping.map(
          shared,
          memref::AllocaOp::create(
              b, loc, MemRefType::get(type.getShape(), type.getElementType())));
    }
    OpBuilder::InsertPoint blockBody = b.saveInsertionPoint();
    for (auto [i, phase] : llvm::enumerate(*phases)) {
      b.restoreInsertionPoint(blockBody);
      SmallVector<Value> thread =
          loops({blockSize.z, blockSize.y, blockSize.x});
      mapDims(launch.getThreadIds(), {thread[2], thread[1], thread[0]});
      for (ArrayRef<Operation *> earlier : ArrayRef(*phases).take_front(i))
        for (Operation *op : earlier)
          if (isRecomputable(op))
            b.clone(*op, mapping);
      for (Operation *op : phase)
        b.clone(*op, mapping);
    }
    launch.erase();
    return success();
  }
};

} // namespace
