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

/// Ops whose meaning needs threads running in lockstep (barriers and xor
/// shuffles at the top level of the kernel are emulated; these are not).
bool needsLockstep(Operation *op) {
  return isa<gpu::ShuffleOp, gpu::AllReduceOp, gpu::SubgroupReduceOp>(op);
}

/// The block's thread count, when its sizes are constants.
std::optional<int64_t> threadsPerBlock(gpu::LaunchOp launch) {
  gpu::KernelDim3 size = launch.getBlockSizeOperandValues();
  int64_t threads = 1;
  for (Value dim : {size.x, size.y, size.z}) {
    std::optional<int64_t> value = getConstantIntValue(dim);
    if (!value)
      return std::nullopt;
    threads *= *value;
  }
  return threads;
}

/// The thread's index in its block, x fastest.
Value linearThreadId(OpBuilder &b, Location loc, gpu::KernelDim3 id,
                     gpu::KernelDim3 size) {
  Value yz = arith::AddIOp::create(b, loc, id.y,
                                   arith::MulIOp::create(b, loc, size.y, id.z));
  return arith::AddIOp::create(b, loc, id.x,
                               arith::MulIOp::create(b, loc, size.x, yz));
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
  /// barrier guarantees. Values cross phases as pure computations that each
  /// phase repeats, or (a thread's registers) through one slot per thread
  /// in `kept`.
  FailureOr<SmallVector<SmallVector<Operation *>>>
  splitAtBarriers(gpu::LaunchOp launch, llvm::SetVector<Value> &kept) {
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
            phaseOf.lookup(producer) == phaseOf.lookup(top))
          continue;
        keepAcross(operand, body, kept);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    return phases;
  }

  /// Each xor shuffle at the top level of the kernel as a store of the
  /// thread's value to its slot, a barrier, and a load of the partner's.
  LogicalResult exchangeThroughMemory(gpu::LaunchOp launch,
                                      std::optional<int64_t> threads) {
    SmallVector<gpu::ShuffleOp> shuffles(
        launch.getBody().front().getOps<gpu::ShuffleOp>());
    for (gpu::ShuffleOp shuffle : shuffles) {
      std::optional<int64_t> offset = getConstantIntValue(shuffle.getOffset());
      std::optional<int64_t> width = getConstantIntValue(shuffle.getWidth());
      if (shuffle.getMode() != gpu::ShuffleMode::XOR || !threads || !offset ||
          !width || *offset >= *width || *threads % *width != 0)
        return shuffle.emitOpError(
            "kiln-emulate-gpu-launches: only xor shuffles with constant "
            "offsets within whole warps of a constant block are emulated");
      OpBuilder b(launch);
      Location loc = shuffle.getLoc();
      Value slots = memref::AllocaOp::create(
          b, loc, MemRefType::get({*threads}, shuffle.getValue().getType()));
      b.setInsertionPoint(shuffle);
      Value me =
          linearThreadId(b, loc, launch.getThreadIds(), launch.getBlockSize());
      memref::StoreOp::create(b, loc, shuffle.getValue(), slots, me);
      gpu::BarrierOp::create(b, loc);
      Value partner = arith::XOrIOp::create(
          b, loc, me, arith::ConstantIndexOp::create(b, loc, *offset));
      Value theirs = memref::LoadOp::create(b, loc, slots, partner);
      Value valid = arith::ConstantIntOp::create(b, loc, 1, 1);
      shuffle.replaceAllUsesWith(ValueRange{theirs, valid});
      shuffle.erase();
    }
    return success();
  }

  /// `value`, used after a barrier, is recomputed there if it is pure
  /// arithmetic; what it cannot recompute is kept.
  static void keepAcross(Value value, Block &body,
                         llvm::SetVector<Value> &kept) {
    Operation *producer = value.getDefiningOp();
    if (!producer || producer->getBlock() != &body || kept.contains(value))
      return;
    if (!isRecomputable(producer)) {
      kept.insert(value);
      return;
    }
    for (Value operand : producer->getOperands())
      keepAcross(operand, body, kept);
  }

  LogicalResult emulate(gpu::LaunchOp launch) {
    Region &body = launch.getBody();
    if (!body.hasOneBlock() || !launch.getPrivateAttributions().empty() ||
        launch.getAsyncToken())
      return launch.emitOpError("kiln-emulate-gpu-launches: only synchronous "
                                "single-block launches without private "
                                "attributions");
    std::optional<int64_t> threads = threadsPerBlock(launch);
    if (failed(exchangeThroughMemory(launch, threads)))
      return failure();
    llvm::SetVector<Value> kept;
    FailureOr<SmallVector<SmallVector<Operation *>>> phases =
        splitAtBarriers(launch, kept);
    if (failed(phases))
      return failure();
    if (!kept.empty() && !threads)
      return launch.emitOpError(
          "kiln-emulate-gpu-launches: values kept across a barrier need a "
          "constant block size");

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
    // A slot per thread for each value a thread keeps across a barrier;
    // blocks run one after another, so they can share them.
    DenseMap<Value, Value> slots;
    for (Value value : kept)
      slots[value] = memref::AllocaOp::create(
          b, loc, MemRefType::get({*threads}, value.getType()));
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
      // The phase maps what it computes or loads on top of the block's
      // values, and drops it after: each phase has its own thread loops.
      IRMapping blockMapping = mapping;
      mapDims(launch.getThreadIds(), {thread[2], thread[1], thread[0]});
      Value me = slots.empty()
                     ? Value()
                     : linearThreadId(b, loc, {thread[2], thread[1], thread[0]},
                                      blockSize);
      auto available = [&](Value v) {
        Operation *producer = v.getDefiningOp();
        return mapping.contains(v) || !producer ||
               producer->getBlock() != &body.front();
      };
      for (ArrayRef<Operation *> earlier : ArrayRef(*phases).take_front(i))
        for (Operation *op : earlier) {
          for (Value result : op->getResults())
            if (Value slot = slots.lookup(result))
              mapping.map(result, memref::LoadOp::create(b, loc, slot, me));
          if (isRecomputable(op) && llvm::all_of(op->getOperands(), available))
            b.clone(*op, mapping);
        }
      for (Operation *op : phase) {
        b.clone(*op, mapping);
        for (Value result : op->getResults())
          if (Value slot = slots.lookup(result))
            memref::StoreOp::create(b, loc, mapping.lookup(result), slot, me);
      }
      mapping = blockMapping;
    }
    launch.erase();
    return success();
  }
};

} // namespace
