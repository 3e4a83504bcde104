//===- FormLanes.cpp - kiln-form-lanes ------------------------------------===//
//
// kiln-split-batch deals a batch's pieces out to lanes, and
// kiln-inline-kernels brackets each lane's kernels by lane markers. On the
// bufferized code, each lane's ops become one case of an scf.index_switch
// in the body of an scf.parallel over the lanes: the thread pool then runs
// whole pieces on each thread, one lane per iteration, with every kernel
// inside on that thread alone, instead of splitting each piece's kernels
// across the threads (whose cores would then hand each other the piece's
// activations between every two kernels).
//
// Bufferization and canonicalization leave ops in a lane that another lane
// or the code after the lanes uses: a view of a weight shared by CSE, the
// buffer holding a piece's result until the concatenation copies it. Such
// ops are moved before the lanes when they are allocations or free of
// memory effects (after the ops defining their operands). The lanes must
// then touch disjoint memory but for what they all only read: a buffer
// one lane writes and another reads or writes, an op of the span that
// writes memory outside every lane, or one whose effects are unknown
// leaves the code as it was, the lanes one after another, with a warning.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Lanes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_FORMLANES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr int64_t kNoLane = -1;

bool isMarker(Operation *op) {
  return kiln::isCallTo(op, kiln::kLaneBegin) ||
         kiln::isCallTo(op, kiln::kLaneEnd);
}

/// The lane argument of a lane marker named `name`, or nullopt.
std::optional<int64_t> markerLane(Operation *op, StringRef name) {
  if (!kiln::isCallTo(op, name) || op->getNumOperands() != 1)
    return std::nullopt;
  return getConstantIntValue(op->getOperand(0));
}

/// The buffer `value` is a view of (through any chain of views): a function
/// argument, an allocation or another op's result.
Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// How the lanes use one buffer: the first lane that did, whether another
/// did too, and the last op that wrote it (null if none).
struct BufferAccesses {
  std::optional<int64_t> lane;
  bool shared = false;
  Operation *writer = nullptr;
};

/// The lanes of one block: the ops from the first lane marker to the last
/// (the span), each op's lane (kNoLane between runs), and the number of
/// lanes. A failed step leaves in `blocker` the op that made it fail.
class LaneSpan {
public:
  /// Reads the markers of `block`; fails unless each lane is one run of
  /// ops bracketed by its begin and end markers, the lanes numbered from 0.
  LogicalResult read(Block &block) {
    int64_t current = kNoLane;
    DenseSet<int64_t> seen;
    for (Operation &op : block) {
      laneOf[&op] = current;
      if (!isMarker(&op))
        continue;
      first = first ? first : &op;
      last = &op;
      blocker = &op;
      if (std::optional<int64_t> lane = markerLane(&op, kiln::kLaneBegin)) {
        if (current != kNoLane || *lane < 0 || !seen.insert(*lane).second)
          return failure();
        current = *lane;
        lanes = std::max(lanes, *lane + 1);
      } else if (std::optional<int64_t> lane =
                     markerLane(&op, kiln::kLaneEnd)) {
        if (current != *lane)
          return failure();
        current = kNoLane;
      } else {
        return failure(); // a marker whose lane is not a constant
      }
    }
    if (current != kNoLane || static_cast<int64_t>(seen.size()) != lanes)
      return failure();
    return success();
  }

  /// Hoists every op of the span that no lane owns, and every op of a lane
  /// whose results another lane or the code after the span uses.
  LogicalResult hoistSharedOps() {
    for (Operation *op : spanOps()) {
      int64_t own = laneOf.lookup(op);
      bool shared = own == kNoLane && !isMarker(op);
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          shared |= lane(user) != own;
      if (shared && failed(hoist(op)))
        return failure();
    }
    return success();
  }

  /// Fails when a lane writes a buffer that another lane reads or writes,
  /// or an op's effects on memory are unknown.
  LogicalResult checkDisjointMemory() {
    DenseMap<Value, BufferAccesses> accesses;
    for (Operation *top : spanOps()) {
      if (isMarker(top))
        continue;
      int64_t own = laneOf.lookup(top);
      WalkResult walk = top->walk([&](Operation *op) {
        if (succeeded(recordAccesses(op, own, accesses)))
          return WalkResult::advance();
        blocker = op;
        return WalkResult::interrupt();
      });
      if (walk.wasInterrupted())
        return failure();
    }
    for (auto &[buffer, access] : accesses)
      if (access.writer && access.shared) {
        blocker = access.writer;
        return failure();
      }
    return success();
  }

  /// Replaces the span by an scf.parallel over the lanes whose body runs
  /// lane i's ops, in order, as case i of an scf.index_switch.
  void buildParallelLoop() {
    OpBuilder builder(first);
    Location loc = first->getLoc();
    Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
    Value count = arith::ConstantIndexOp::create(builder, loc, lanes);
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    auto loop = scf::ParallelOp::create(builder, loc, zero, count, one);
    loop->setAttr(kiln::kLanesAttrName, builder.getUnitAttr());
    builder.setInsertionPoint(loop.getBody()->getTerminator());
    SmallVector<int64_t> cases = llvm::to_vector(llvm::seq<int64_t>(0, lanes));
    auto lanesSwitch = scf::IndexSwitchOp::create(
        builder, loc, TypeRange(), loop.getInductionVars().front(), cases,
        cases.size());
    // blocks[0] is the default region's, then the cases' in order.
    SmallVector<Block *> blocks;
    for (Region &region : lanesSwitch->getRegions()) {
      blocks.push_back(builder.createBlock(&region));
      scf::YieldOp::create(builder, loc);
    }
    SmallVector<Operation *> ops = spanOps();
    ops.push_back(last);
    for (Operation *op : ops) {
      if (isMarker(op))
        op->erase();
      else
        op->moveBefore(blocks[1 + laneOf.lookup(op)]->getTerminator());
    }
  }

  Operation *first = nullptr, *last = nullptr;
  /// The op that made the last step fail.
  Operation *blocker = nullptr;
  int64_t lanes = 0;

private:
  /// The ops of the span but its last marker, in order.
  SmallVector<Operation *> spanOps() const {
    SmallVector<Operation *> ops;
    for (Operation *op = first; op != last; op = op->getNextNode())
      ops.push_back(op);
    return ops;
  }

  bool inSpan(Operation *op) const {
    return op == first || op == last ||
           (first->isBeforeInBlock(op) && op->isBeforeInBlock(last));
  }

  /// The lane of the op of the span's block that holds `op`; kNoLane
  /// outside the span.
  int64_t lane(Operation *op) const {
    while (op && op->getBlock() != first->getBlock())
      op = op->getParentOp();
    if (!op || !inSpan(op))
      return kNoLane;
    return laneOf.lookup(op);
  }

  /// Moves `op` before the span, after the ops of the span defining its
  /// operands; fails on an op that is neither an allocation nor free of
  /// memory effects.
  LogicalResult hoist(Operation *op) {
    if (!inSpan(op) || isMarker(op))
      return success();
    if (op->getNumRegions() != 0 ||
        !(isa<memref::AllocOp>(op) || isMemoryEffectFree(op))) {
      blocker = op;
      return failure();
    }
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def->getBlock() == op->getBlock() && failed(hoist(def)))
          return failure();
    op->moveBefore(first);
    laneOf[op] = kNoLane;
    return success();
  }

  /// Records which buffers `op`, run by lane `lane`, reads and writes;
  /// fails when its effects are unknown or outside every lane.
  static LogicalResult
  recordAccesses(Operation *op, int64_t lane,
                 DenseMap<Value, BufferAccesses> &accesses) {
    // The walk visits the ops inside the latter; a prefetch (which states
    // no effects) changes no memory.
    if (kiln::isProfileHook(op) || isa<memref::PrefetchOp>(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return success();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return failure();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &instance : instances) {
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(
              instance.getEffect()))
        continue;
      Value value = instance.getValue();
      bool write = isa<MemoryEffects::Write>(instance.getEffect());
      if (!value || (write && lane == kNoLane))
        return failure();
      BufferAccesses &access = accesses[rootBuffer(value)];
      access.shared |= access.lane && *access.lane != lane;
      access.lane = access.lane.value_or(lane);
      if (write)
        access.writer = op;
    }
    return success();
  }

  DenseMap<Operation *, int64_t> laneOf;
};

struct FormLanesPass : public kiln::impl::FormLanesBase<FormLanesPass> {
  using FormLanesBase::FormLanesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        formLanes(func);
    // Markers anywhere else (no pass puts them there) go too.
    module.walk([](Operation *op) {
      if (isMarker(op))
        op->erase();
    });
    for (StringRef name : {kiln::kLaneBegin, kiln::kLaneEnd})
      if (Operation *decl = module.lookupSymbol(name))
        decl->erase();
  }

  /// Forms the lanes of `func`'s body, or warns why they stay one after
  /// another.
  static void formLanes(func::FuncOp func) {
    LaneSpan span;
    if (failed(span.read(func.getBody().front()))) {
      span.blocker->emitWarning(
          "kiln-form-lanes: the lane markers do not bracket one run of ops "
          "per lane, numbered from 0; the lanes run one after another");
      return;
    }
    if (!span.first || span.lanes < 2)
      return;
    if (failed(span.hoistSharedOps())) {
      span.blocker->emitWarning(
          "kiln-form-lanes: an op that writes memory is shared between "
          "lanes; the lanes run one after another");
      return;
    }
    if (failed(span.checkDisjointMemory())) {
      span.blocker->emitWarning(
          "kiln-form-lanes: lanes share memory one of them writes, or an "
          "op's effects on memory are unknown; the lanes run one after "
          "another");
      return;
    }
    span.buildParallelLoop();
  }
};

} // namespace
