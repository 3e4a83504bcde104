//===- MapLoopsToGPU.cpp - kiln-map-loops-to-gpu --------------------------===//
//
// After memory planning, a model function is a sequence of loop nests over
// device buffers, one per fused kernel (or a few: a matmul's zero fill, a
// copy). Each becomes one gpu.launch whose threads split the loop nest's
// parallel iterations; what each iteration does (a reduction loop, an
// epilogue) runs unchanged in its thread.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_MAPLOOPSTOGPU
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Ops that read or write no memory and have no body: they run on the host
/// (or are recomputed in kernels), never as kernels of their own.
bool isHostComputation(Operation *op) {
  return op->getNumRegions() == 0 && isPure(op);
}

/// Calls into the runtime (kiln_gemm_I from kiln-offload-gemms): the host
/// makes them; they enqueue their own device work.
bool isRuntimeCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with(kiln::kGemmCallPrefix);
}

/// Trip count of dimension `dim` of `loop`, ceil((ub - lb) / step).
Value tripCount(OpBuilder &b, scf::ParallelOp loop, unsigned dim) {
  Location loc = loop.getLoc();
  Value span = arith::SubIOp::create(b, loc, loop.getUpperBound()[dim],
                                     loop.getLowerBound()[dim]);
  return arith::CeilDivUIOp::create(b, loc, span, loop.getStep()[dim]);
}

/// Clones the pure ops defining values that `launch`'s body uses from above
/// into the body, until only buffers and scalars that are block arguments
/// (or results of impure ops) cross into the kernel.
void sinkPureProducers(gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  bool changed = true;
  while (changed) {
    changed = false;
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(body, above);
    for (Value value : above) {
      Operation *producer = value.getDefiningOp();
      if (!producer || !isHostComputation(producer))
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&body.front());
      Operation *clone = b.clone(*producer);
      for (auto [from, to] :
           llvm::zip(producer->getResults(), clone->getResults()))
        replaceAllUsesInRegionWith(from, to, body);
      changed = true;
    }
  }
}

/// A memref.reshape to a static shape reads its shape operand from memory
/// (on the device, now); with a dense source it is a pure reinterpretation.
void makeStaticReshapesPure(func::FuncOp func) {
  func.walk([](memref::ReshapeOp reshape) {
    auto source = dyn_cast<MemRefType>(reshape.getSource().getType());
    auto result = dyn_cast<MemRefType>(reshape.getResult().getType());
    if (!source || !result)
      return;
    if (!result.hasStaticShape() || !result.getLayout().isIdentity() ||
        !source.getLayout().isIdentity())
      return;
    SmallVector<int64_t> strides(result.getRank(), 1);
    for (int64_t d = result.getRank() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * result.getDimSize(d + 1);
    OpBuilder b(reshape);
    Value cast = memref::ReinterpretCastOp::create(
        b, reshape.getLoc(), result, reshape.getSource(), /*offset=*/0,
        result.getShape(), strides);
    reshape.replaceAllUsesWith(cast);
    reshape.erase();
  });
}

struct MapLoopsToGPUPass
    : public kiln::impl::MapLoopsToGPUBase<MapLoopsToGPUPass> {
  using MapLoopsToGPUBase::MapLoopsToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      makeStaticReshapesPure(func);
      if (failed(mapFunction(func)))
        return signalPassFailure();
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
  }

  /// Each parallel loop becomes a kernel of its own; each run of other ops
  /// that touch memory, with the pure ops that compute on their results
  /// (a scalar loaded, combined and stored back), becomes one single-thread
  /// kernel.
  LogicalResult mapFunction(func::FuncOp func) {
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
    for (size_t i = 0; i < ops.size();) {
      Operation *op = ops[i];
      if (isHostComputation(op) || isRuntimeCall(op)) {
        ++i;
        continue;
      }
      // Kernels mapped already (kiln-map-reductions-to-gpu).
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        sinkPureProducers(launch);
        ++i;
        continue;
      }
      if (auto loop = dyn_cast<scf::ParallelOp>(op);
          loop && loop.getNumResults() == 0) {
        sinkPureProducers(mapParallelLoop(loop));
        loop.erase();
        ++i;
        continue;
      }
      llvm::SetVector<Operation *> group;
      group.insert(op);
      for (++i;
           i < ops.size() && !isa<scf::ParallelOp, gpu::LaunchOp>(ops[i]) &&
           !isRuntimeCall(ops[i]);
           ++i) {
        bool usesGroup = llvm::any_of(ops[i]->getOperands(), [&](Value v) {
          return group.contains(v.getDefiningOp());
        });
        if (isHostComputation(ops[i]) && !usesGroup)
          break;
        group.insert(ops[i]);
      }
      if (failed(mapSingleThread(group.getArrayRef())))
        return failure();
    }
    return success();
  }

  /// A launch with `blocks` x `threads` threads, named for outlining, whose
  /// body gets a terminator; the builder is left at the start of the body.
  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value blocks,
                             Value threads) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch =
        gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one, one);
    MLIRContext *ctx = b.getContext();
    launch.setModuleAttr(FlatSymbolRefAttr::get(ctx, kiln::kGPUKernelModule));
    launch.setFunctionAttr(
        FlatSymbolRefAttr::get(ctx, "kernel_" + std::to_string(nextKernel++)));
    Block &body = launch.getBody().front();
    b.setInsertionPointToEnd(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&body);
    return launch;
  }

  /// One thread per iteration of `loop`'s flattened iteration space.
  /// How many consecutive iterations of the last dimension each thread
  /// runs: `vector-width` when the last trip count and lower bound are
  /// multiples of it and every store writes along the last dimension (so the
  /// thread's stores, and the loads beside them, become 128-bit accesses),
  /// else 1.
  int64_t iterationsPerThread(scf::ParallelOp loop) {
    unsigned last = loop.getNumLoops() - 1;
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[last]);
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[last]);
    std::optional<int64_t> step = getConstantIntValue(loop.getStep()[last]);
    // A lower bound that is a multiple too keeps each thread's first
    // element aligned to the width (the vector accesses say so).
    if (vectorWidth <= 1 || !lb || !ub || step != 1 ||
        (*ub - *lb) % vectorWidth != 0 || *lb % vectorWidth != 0)
      return 1;
    Value iv = loop.getInductionVars()[last];
    WalkResult stores = loop.getBody()->walk([&](memref::StoreOp store) {
      ValueRange indices = store.getIndices();
      return !indices.empty() && indices.back() == iv ? WalkResult::advance()
                                                      : WalkResult::interrupt();
    });
    return stores.wasInterrupted() ? 1 : vectorWidth;
  }

  /// The first of a thread's `width` accesses along the last dimension of
  /// a dense buffer is `width` elements aligned when the row length is a
  /// multiple of `width`: kernel buffers start 256-byte aligned (device
  /// allocations, arena and weight offsets; kiln-mark-kernel-buffers), so
  /// say it, and LLVM merges the thread's accesses into vector ones.
  void markAlignedAccesses(Operation *root, Value firstIndex, int64_t width) {
    root->walk([&](Operation *op) {
      Value memref;
      ValueRange indices;
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        memref = load.getMemRef();
        indices = load.getIndices();
      } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
        memref = store.getMemRef();
        indices = store.getIndices();
      } else {
        return;
      }
      std::optional<int64_t> bytes =
          rowAlignment(cast<MemRefType>(memref.getType()), width);
      if (indices.empty() || indices.back() != firstIndex || !bytes)
        return;
      op->setAttr(
          "alignment",
          IntegerAttr::get(IntegerType::get(op->getContext(), 64), *bytes));
    });
  }

  /// The byte alignment of `width` consecutive elements of a row of `type`
  /// starting at a multiple of `width`, when that makes one vector access
  /// of at most 16 bytes: the buffer is dense with rows a multiple of
  /// `width` (kernel buffers start 16-byte aligned).
  static std::optional<int64_t> rowAlignment(MemRefType type, int64_t width) {
    Type element = type.getElementType();
    if (type.getRank() == 0 || !type.getLayout().isIdentity() ||
        !type.hasStaticShape() || type.getShape().back() % width != 0 ||
        !element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
      return std::nullopt;
    int64_t bytes = width * element.getIntOrFloatBitWidth() / 8;
    if (!llvm::isPowerOf2_64(bytes) || bytes > 16)
      return std::nullopt;
    return bytes;
  }

  gpu::LaunchOp mapParallelLoop(scf::ParallelOp loop) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    int64_t width = iterationsPerThread(loop);
    SmallVector<Value> counts;
    Value total = arith::ConstantIndexOp::create(b, loc, 1);
    for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
      counts.push_back(tripCount(b, loop, d));
      if (d + 1 == loop.getNumLoops() && width > 1)
        counts.back() = arith::DivUIOp::create(
            b, loc, counts.back(),
            arith::ConstantIndexOp::create(b, loc, width));
      total = arith::MulIOp::create(b, loc, total, counts.back());
    }
    Value blockSizeValue = arith::ConstantIndexOp::create(b, loc, blockSize);
    Value threads = arith::MinUIOp::create(b, loc, total, blockSizeValue);
    // An empty loop still launches one (idle) block: a grid of zero blocks
    // is a launch error.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value blocks = arith::MaxUIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, total, threads), one);
    threads = arith::MaxUIOp::create(b, loc, threads, one);
    gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads);

    gpu::KernelDim3 blockIds = launch.getBlockIds();
    gpu::KernelDim3 threadIds = launch.getThreadIds();
    gpu::KernelDim3 blockDims = launch.getBlockSize();
    Value id = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blockIds.x, blockDims.x),
        threadIds.x);
    Value inBounds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, total);
    auto guard = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
    b.setInsertionPointToStart(guard.thenBlock());

    // Delinearize, last dimension fastest.
    IRMapping mapping;
    Value rest = id;
    unsigned last = loop.getNumLoops() - 1;
    SmallVector<Value> indices(loop.getNumLoops());
    for (int d = last; d >= 0; --d) {
      indices[d] =
          d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, counts[d]);
      if (d > 0)
        rest = arith::DivUIOp::create(b, loc, rest, counts[d]);
    }
    auto mapIndex = [&](unsigned d, Value index) {
      Value scaled = arith::MulIOp::create(b, loc, index, loop.getStep()[d]);
      mapping.map(
          loop.getInductionVars()[d],
          arith::AddIOp::create(b, loc, loop.getLowerBound()[d], scaled));
    };
    for (unsigned d = 0; d < last; ++d)
      mapIndex(d, indices[d]);
    // The thread's `width` consecutive iterations of the last dimension,
    // unrolled so that LLVM can merge their accesses.
    Value first = arith::MulIOp::create(
        b, loc, indices[last], arith::ConstantIndexOp::create(b, loc, width));
    // The copies' indices cannot wrap (they are below the loop's extent).
    auto noWrap = arith::IntegerOverflowFlagsAttr::get(
        b.getContext(),
        arith::IntegerOverflowFlags::nsw | arith::IntegerOverflowFlags::nuw);
    // Each copy gets its own mapping: cloning a region records its block
    // arguments in the mapping, and a second clone with them recorded would
    // create blocks without arguments.
    SmallVector<IRMapping> copies(width, mapping);
    for (auto [u, copy] : llvm::enumerate(copies)) {
      mapping = copy;
      mapIndex(last,
               u == 0 ? first
                      : arith::AddIOp::create(
                            b, loc, first,
                            arith::ConstantIndexOp::create(b, loc, u), noWrap)
                            .getResult());
      copy = mapping;
    }
    Block *body = loop.getBody();
    // LLVM merges accesses within a basic block only, and a transcendental
    // from libdevice brings branches: every copy's loads go first, the
    // stores last, when no load could read what a store wrote.
    // The copies' accesses of consecutive elements along a row become one
    // vector load or store each (also what LLVM's vectorizer cannot prove
    // consecutive).
    bool grouped = width > 1 && loadsCanGoFirst(body);
    Value lastIV = loop.getInductionVars()[last];
    // The stores made one vector store each, with their alignment.
    llvm::MapVector<Operation *, int64_t> vectorStores;
    if (grouped) {
      for (auto load : body->getOps<memref::LoadOp>()) {
        std::optional<int64_t> alignment = vectorAlignment(
            load.getMemRef(), load.getIndices(), lastIV, body, width);
        if (!alignment) {
          for (IRMapping &copy : copies)
            cloneWithOperands(b, load, body, copy);
          continue;
        }
        Value vector = vector::LoadOp::create(
            b, loc, VectorType::get({width}, load.getType()), load.getMemRef(),
            mappedIndices(load.getIndices(), copies[0]),
            /*nontemporal=*/false, llvm::Align(*alignment));
        for (auto [u, copy] : llvm::enumerate(copies))
          copy.map(load.getResult(),
                   vector::ExtractOp::create(b, loc, vector, int64_t(u)));
      }
      for (auto store : body->getOps<memref::StoreOp>())
        if (std::optional<int64_t> alignment = vectorAlignment(
                store.getMemRef(), store.getIndices(), lastIV, body, width))
          vectorStores[store] = *alignment;
    }
    for (IRMapping &copy : copies)
      for (Operation &op : body->without_terminator())
        if ((op.getNumResults() == 0 || !copy.contains(op.getResult(0))) &&
            !vectorStores.contains(&op))
          b.clone(op, copy);
    Block *thread = guard.thenBlock();
    if (width > 1)
      markAlignedAccesses(guard, copies.front().lookup(lastIV), width);
    if (grouped)
      for (auto store : llvm::to_vector(thread->getOps<memref::StoreOp>()))
        store->moveBefore(thread->getTerminator());
    for (auto [op, alignment] : vectorStores) {
      auto store = cast<memref::StoreOp>(op);
      SmallVector<Value> elements;
      for (IRMapping &copy : copies)
        elements.push_back(copy.lookupOrDefault(store.getValueToStore()));
      Value vector = vector::FromElementsOp::create(
          b, loc, VectorType::get({width}, elements.front().getType()),
          elements);
      vector::StoreOp::create(b, loc, vector, store.getMemRef(),
                              mappedIndices(store.getIndices(), copies[0]),
                              /*nontemporal=*/false, llvm::Align(alignment));
    }
    return launch;
  }

  /// Whether a copy's loads may run before the other copies' stores: every
  /// load from a buffer the body stores to reads the element it stores
  /// (the copies' elements are distinct), and the loads sit in the body
  /// itself with operands from pure ops or other loads.
  static bool loadsCanGoFirst(Block *body) {
    for (auto store : body->getOps<memref::StoreOp>())
      for (auto load : body->getOps<memref::LoadOp>())
        if (load.getMemRef() == store.getMemRef() &&
            load.getIndices() != store.getIndices())
          return false;
    WalkResult nested = body->walk([&](memref::LoadOp load) {
      return load->getBlock() == body ? WalkResult::advance()
                                      : WalkResult::interrupt();
    });
    if (nested.wasInterrupted())
      return false;
    return llvm::all_of(body->getOps<memref::LoadOp>(), [&](auto load) {
      return llvm::all_of(load->getOperands(), [&](Value operand) {
        Operation *producer = operand.getDefiningOp();
        return !producer || producer->getBlock() != body ||
               isa<memref::LoadOp>(producer) ||
               (isPure(producer) && producer->getNumRegions() == 0);
      });
    });
  }

  /// The byte alignment of a vector access to `width` consecutive elements
  /// of `memref` at `indices`, if the copies' accesses are that: the last
  /// index is `lastIV`, the others do not change between copies (other
  /// loop indices, values from outside), and the row allows it
  /// (rowAlignment).
  static std::optional<int64_t> vectorAlignment(Value memref,
                                                ValueRange indices,
                                                Value lastIV, Block *body,
                                                int64_t width) {
    if (indices.empty() || indices.back() != lastIV)
      return std::nullopt;
    for (Value index : indices.drop_back()) {
      bool invariant = index != lastIV && (isa<BlockArgument>(index) ||
                                           index.getParentBlock() != body);
      if (!invariant)
        return std::nullopt;
    }
    return rowAlignment(cast<MemRefType>(memref.getType()), width);
  }

  static SmallVector<Value> mappedIndices(ValueRange indices,
                                          const IRMapping &copy) {
    return llvm::map_to_vector(
        indices, [&](Value index) { return copy.lookupOrDefault(index); });
  }

  /// Clones `op` after the ops of `body` it needs (pure index math, loads),
  /// each once per copy.
  static void cloneWithOperands(OpBuilder &b, Operation *op, Block *body,
                                IRMapping &copy) {
    if (copy.contains(op->getResult(0)))
      return;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp();
          producer && producer->getBlock() == body)
        cloneWithOperands(b, producer, body, copy);
    b.clone(*op, copy);
  }

  /// Work with no parallel dimension (a reduction to a scalar, a copy): one
  /// thread runs `ops` as they are.
  LogicalResult mapSingleThread(ArrayRef<Operation *> ops) {
    Block *body = ops.front()->getBlock();
    for (Operation *op : ops) {
      if (isa<memref::AllocOp, memref::AllocaOp>(op))
        return op->emitOpError("kiln-map-loops-to-gpu: cannot allocate on "
                               "the device inside a kernel");
      for (Operation *user : op->getUsers())
        if (!llvm::is_contained(ops, body->findAncestorOpInBlock(*user)))
          return op->emitOpError("kiln-map-loops-to-gpu: cannot run on the "
                                 "device: the host uses its result");
    }
    OpBuilder b(ops.front());
    Value one = arith::ConstantIndexOp::create(b, ops.front()->getLoc(), 1);
    gpu::LaunchOp launch = createLaunch(b, ops.front()->getLoc(), one, one);
    IRMapping mapping;
    for (Operation *op : ops)
      b.clone(*op, mapping);
    sinkPureProducers(launch);
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    return success();
  }

  int64_t nextKernel = 0;
};

} // namespace
