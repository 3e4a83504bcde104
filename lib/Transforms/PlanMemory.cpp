//===- PlanMemory.cpp - kiln-plan-memory ----------------------------------===//
//
// All shapes are static, so every intermediate buffer's size and lifetime are
// known at compile time: one arena, allocated once per execution context,
// holds them all at fixed offsets, and an inference allocates nothing.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Lanes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORY
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// One buffer to place: it is live over the top-level ops [first, last];
/// a lane's buffer (kiln-form-lanes) over the ops [laneFirst, laneLast] of
/// lane `lane` of the `kiln.lanes` loop `lanes`.
struct Interval {
  memref::AllocOp alloc;
  int64_t bytes;
  unsigned first, last;
  int64_t offset = 0;
  Operation *lanes = nullptr;
  int64_t lane = 0;
  unsigned laneFirst = 0, laneLast = 0;
};

/// Whether `a` and `b` may be live at once: lanes run concurrently, so two
/// buffers of different lanes of one loop always may.
bool overlaps(const Interval &a, const Interval &b) {
  if (a.first > b.last || b.first > a.last)
    return false;
  if (!a.lanes || a.lanes != b.lanes)
    return true;
  return a.lane != b.lane ||
         (a.laneFirst <= b.laneLast && b.laneFirst <= a.laneLast);
}

/// The nearest scf.parallel or scf.forall around `op`, or null.
Operation *enclosingParallelLoop(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<scf::ParallelOp, scf::ForallOp>(parent))
      return parent;
  return nullptr;
}

/// The lane of `op` in the `kiln.lanes` loop `lanes` (kiln-form-lanes: its
/// body is an scf.index_switch on the lane) and the lane's block, or
/// nullopt when the loop is not shaped so or `op` is in no case.
std::optional<std::pair<int64_t, Block *>> laneOf(Operation *op,
                                                  Operation *lanes) {
  while (op->getParentOp() && op->getParentOp()->getParentOp() != lanes)
    op = op->getParentOp();
  auto lanesSwitch = dyn_cast_or_null<scf::IndexSwitchOp>(op->getParentOp());
  if (!lanesSwitch || op->getParentRegion() == &lanesSwitch.getDefaultRegion())
    return std::nullopt;
  unsigned caseIndex = op->getParentRegion()->getRegionNumber() - 1;
  return std::make_pair(lanesSwitch.getCases()[caseIndex], op->getBlock());
}

/// Bytes of a dense, statically shaped buffer, or nullopt if the planner
/// cannot place it (dynamic shape, non-identity layout, odd element type).
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return std::nullopt;
  // i1 is stored one per byte once lowered to LLVM.
  int64_t elementBytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  return std::max<int64_t>(type.getNumElements() * elementBytes, 1);
}

/// Index of the op of `body` that contains `op`, or nullopt if none does.
std::optional<unsigned>
topLevelIndex(Operation *op, Block &body,
              const DenseMap<Operation *, unsigned> &order) {
  while (op && op->getBlock() != &body)
    op = op->getParentOp();
  if (!op)
    return std::nullopt;
  return order.lookup(op);
}

/// The last op of `body` that uses `alloc` or any value derived from it
/// (views, casts, results of the ops whose regions yield it): any op
/// producing a memref from the buffer is conservatively taken as an alias.
/// Nullopt if an op outside `body` uses it.
std::optional<unsigned> lastUse(memref::AllocOp alloc, Block &body,
                                const DenseMap<Operation *, unsigned> &order,
                                SmallVectorImpl<Operation *> &deallocs) {
  std::optional<unsigned> last = topLevelIndex(alloc, body, order);
  SmallVector<Value> worklist = {alloc.getResult()};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp>(user)) {
        deallocs.push_back(user);
        continue;
      }
      // A region yielding the buffer: the results of the op that holds it
      // may be the buffer (a function's return is the last use).
      if (user->hasTrait<OpTrait::IsTerminator>() &&
          !isa<FunctionOpInterface>(user->getParentOp()))
        user = user->getParentOp();
      std::optional<unsigned> index = topLevelIndex(user, body, order);
      if (!index || !last)
        return std::nullopt;
      last = std::max(*last, *index);
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return last;
}

/// First-fit packing, largest buffers first: each buffer goes at the lowest
/// aligned offset that no buffer with an overlapping lifetime occupies.
int64_t packIntervals(MutableArrayRef<Interval> intervals, int64_t alignment) {
  SmallVector<Interval *> bySize;
  for (Interval &interval : intervals)
    bySize.push_back(&interval);
  // Ties broken by program order, so the plan is deterministic.
  llvm::sort(bySize, [](const Interval *a, const Interval *b) {
    return std::make_tuple(-a->bytes, a->first, a->lane, a->laneFirst) <
           std::make_tuple(-b->bytes, b->first, b->lane, b->laneFirst);
  });
  SmallVector<Interval *> placed;
  int64_t arenaBytes = 0;
  for (Interval *interval : bySize) {
    SmallVector<Interval *> conflicts;
    for (Interval *other : placed)
      if (overlaps(*interval, *other))
        conflicts.push_back(other);
    llvm::sort(conflicts, [](const Interval *a, const Interval *b) {
      return a->offset < b->offset;
    });
    int64_t offset = 0;
    for (Interval *other : conflicts) {
      if (offset + interval->bytes <= other->offset)
        break;
      offset = std::max<int64_t>(
          offset, llvm::alignTo(other->offset + other->bytes, alignment));
    }
    interval->offset = offset;
    arenaBytes = std::max(arenaBytes, offset + interval->bytes);
    placed.push_back(interval);
  }
  return llvm::alignTo(arenaBytes, alignment);
}

struct PlanMemoryPass : public kiln::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.isPublic())
        if (failed(planFunction(func)))
          return signalPassFailure();
  }

  /// Static stack slots at the top of the function (entry-block allocas).
  void moveToStack(Block &body, ArrayRef<memref::AllocOp> buffers) {
    OpBuilder builder = OpBuilder::atBlockBegin(&body);
    SmallVector<Value> slots;
    for (memref::AllocOp alloc : buffers)
      slots.push_back(
          memref::AllocaOp::create(builder, alloc.getLoc(), alloc.getType(),
                                   builder.getI64IntegerAttr(alignment)));
    // Erased only now: the builder's insertion point may be one of them.
    for (auto [i, slot] : llvm::enumerate(slots)) {
      memref::AllocOp alloc = buffers[i];
      alloc.replaceAllUsesWith(slot);
      alloc.erase();
    }
  }

  /// The interval of `alloc`, allocated in a lane of the `kiln.lanes`
  /// loop `lanes`; nullopt if it is used outside the lane.
  static std::optional<Interval>
  laneInterval(memref::AllocOp alloc, int64_t bytes, Operation *lanes,
               Block &body, const DenseMap<Operation *, unsigned> &order,
               SmallVectorImpl<Operation *> &deallocs) {
    std::optional<std::pair<int64_t, Block *>> lane = laneOf(alloc, lanes);
    if (!lane)
      return std::nullopt;
    Block *block = lane->second;
    std::optional<unsigned> last = lastUse(alloc, *block, order, deallocs);
    if (!last)
      return std::nullopt;
    unsigned at = *topLevelIndex(lanes, body, order);
    Interval interval{alloc, bytes, at, at};
    interval.lanes = lanes;
    interval.lane = lane->first;
    interval.laneFirst = *topLevelIndex(alloc, *block, order);
    interval.laneLast = *last;
    return interval;
  }

  LogicalResult planFunction(func::FuncOp func) {
    Block &body = func.getBody().front();
    // The position of each op in its block: the function's, and each lane's.
    DenseMap<Operation *, unsigned> order;
    auto number = [&](Block &block) {
      for (auto [i, op] : llvm::enumerate(block))
        order[&op] = i;
    };
    number(body);
    func.walk([&](scf::IndexSwitchOp lanesSwitch) {
      Operation *parent = lanesSwitch->getParentOp();
      if (parent && parent->hasAttr(kiln::kLanesAttrName))
        for (Region &region : lanesSwitch->getRegions())
          if (!region.empty())
            number(region.front());
    });

    SmallVector<Interval> intervals;
    SmallVector<Operation *> deallocs;
    SmallVector<memref::AllocOp> stackBuffers, loopStackBuffers;
    int64_t stackBytes = 0;
    WalkResult result = func.walk([&](memref::AllocOp alloc) {
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (!bytes)
        return WalkResult::advance();
      Operation *loop = enclosingParallelLoop(alloc);
      // A lane's buffers all go to the arena: as stack slots, every lane's
      // would take the frame of the one task that runs them.
      if (loop && loop->hasAttr(kiln::kLanesAttrName)) {
        std::optional<Interval> interval =
            laneInterval(alloc, *bytes, loop, body, order, deallocs);
        if (!interval) {
          alloc.emitError("kiln-plan-memory: a buffer allocated in a lane "
                          "of a kiln.lanes loop is used outside it, or the "
                          "loop's body is not an scf.index_switch on the "
                          "lane");
          return WalkResult::interrupt();
        }
        intervals.push_back(*interval);
        return WalkResult::advance();
      }
      // One arena slot per buffer: a buffer allocated in each iteration of
      // a parallel loop would be shared by the threads running it. One of
      // at most max-stack-bytes (a row tile's temporaries, kiln-tile-rows)
      // is a stack slot of the iteration instead; kiln-outline-parallel-loops
      // hoists it to the entry of the function that runs the loop, one per
      // thread.
      if (loop) {
        int64_t limit = maxStackBytes;
        if (*bytes <= limit) {
          loopStackBuffers.push_back(alloc);
          return WalkResult::advance();
        }
        alloc.emitError("kiln-plan-memory: a buffer of ")
            << *bytes << " bytes allocated inside a parallel loop can have "
            << "neither one arena slot nor a stack slot (at most " << limit
            << " bytes)";
        return WalkResult::interrupt();
      }
      unsigned first = *topLevelIndex(alloc, body, order);
      unsigned last = *lastUse(alloc, body, order, deallocs);
      // Small buffers allocated at the top level go on the stack: a stack
      // slot is a distinct object, so LLVM can tell that a reduction's
      // accumulator does not alias the arena data it reads and keep it in a
      // register (an arena view and another arena view look alike to it).
      if (alloc->getBlock() == &body && *bytes <= maxStackBufferBytes &&
          stackBytes + *bytes <= maxStackBytes) {
        stackBuffers.push_back(alloc);
        stackBytes += llvm::alignTo(*bytes, alignment);
        return WalkResult::advance();
      }
      intervals.push_back({alloc, *bytes, first, last});
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    moveToStack(body, stackBuffers);
    for (memref::AllocOp alloc : loopStackBuffers) {
      OpBuilder builder(alloc);
      Value slot =
          memref::AllocaOp::create(builder, alloc.getLoc(), alloc.getType(),
                                   builder.getI64IntegerAttr(alignment));
      alloc.replaceAllUsesWith(slot);
      alloc.erase();
    }
    int64_t arenaBytes = packIntervals(intervals, alignment);
    int64_t intermediateBytes = 0;
    for (const Interval &interval : intervals)
      intermediateBytes += interval.bytes;

    MLIRContext *ctx = func.getContext();
    auto arenaType = MemRefType::get({std::max<int64_t>(arenaBytes, 1)},
                                     IntegerType::get(ctx, 8));
    if (failed(func.insertArgument(func.getNumArguments(), arenaType,
                                   DictionaryAttr::get(ctx), func.getLoc())))
      return failure();
    Value arena = func.getArgument(func.getNumArguments() - 1);

    for (Operation *dealloc : deallocs)
      dealloc->erase();
    Builder attrs(func.getContext());
    func->setAttr("kiln.stack_bytes", attrs.getI64IntegerAttr(stackBytes));
    for (Interval &interval : intervals) {
      OpBuilder builder(interval.alloc);
      Location loc = interval.alloc.getLoc();
      Value offset =
          arith::ConstantIndexOp::create(builder, loc, interval.offset);
      Value view = memref::ViewOp::create(
          builder, loc, interval.alloc.getType(), arena, offset, ValueRange());
      interval.alloc.replaceAllUsesWith(view);
      interval.alloc.erase();
    }
    Builder b(ctx);
    func->setAttr("kiln.arena_bytes", b.getI64IntegerAttr(arenaBytes));
    func->setAttr("kiln.intermediate_bytes",
                  b.getI64IntegerAttr(intermediateBytes));
    return success();
  }
};

} // namespace
