//===- OutlineParallelLoops.cpp - kiln-outline-parallel-loops -------------===//
//
// The runtime's thread pool runs parallel loops as tasks: a function called
// with a range [begin, end) of one dimension of the loop (the first with more
// than one iteration). Every outermost
// scf.parallel with enough work becomes such a task, `kiln_task_N(begin,
// end, captures...)`, and a call `kiln_parallel_N(rt, count, captures...)`
// that the backend defines to pack the captures and hand the task to
// rt->parallel_for (the kiln_parallel_runtime of runtime.h, a new trailing
// argument of the model function). Values the loop uses from outside are
// rematerialized inside the task when they are constants, globals or views
// of other values; the rest (function arguments, stack buffers, loop
// indices) are passed. The lanes of a batch's image-by-image layers
// (kiln-form-lanes) are always such a task.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Lanes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kTaskPrefix = "kiln_task_";
constexpr StringLiteral kParallelPrefix = "kiln_parallel_";

std::optional<int64_t> tripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb),
                         u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return *u > *l ? llvm::divideCeil(*u - *l, *s) : 0;
}

/// Iterations of the deepest loop nest inside `op` (a static estimate of its
/// work; unknown trip counts count as 1).
int64_t estimatedIterations(Operation *op) {
  int64_t inner = 1;
  for (Region &region : op->getRegions())
    for (Operation &child : region.getOps())
      inner = std::max(inner, estimatedIterations(&child));
  int64_t own = 1;
  if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
    for (auto [lb, ub, step] :
         llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                   parallel.getStep()))
      own *= tripCount(lb, ub, step).value_or(1);
  } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
    own = tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())
              .value_or(1);
  }
  return own * inner;
}

/// Whether `value` can be recomputed inside the task: a constant, a global,
/// or a view (subview, reshape, arena view, ...) of values that can be
/// recomputed or passed.
bool isRematerializable(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (def->hasTrait<OpTrait::ConstantLike>() || isa<memref::GetGlobalOp>(def))
    return true;
  return isa<ViewLikeOpInterface, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::CastOp>(def) &&
         def->getNumRegions() == 0 && isPure(def);
}

/// Whether the backend can pass `value` as a task argument.
bool isPassable(Value value) {
  Type type = value.getType();
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.hasStaticShape() && memref.getLayout().isIdentity();
  return type.isIntOrIndexOrFloat();
}

/// How an outlined loop is run.
enum class Launch {
  /// On the thread pool: kiln_parallel_N(rt, count, captures...).
  Pool,
  /// On the calling thread, the whole loop: kiln_lane_kernel_N(0, count,
  /// captures...), a function of its own that LLVM does not inline.
  Direct,
};

class Outliner {
public:
  Outliner(func::FuncOp func, Value runtime, int64_t minIterations,
           unsigned &counter, Launch launch = Launch::Pool)
      : func(func), runtime(runtime), minIterations(minIterations),
        counter(counter), launch(launch) {}

  LogicalResult run() {
    SmallVector<scf::ParallelOp> loops;
    func.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      // Called directly, the loops inside the lanes are the outermost.
      if (launch == Launch::Direct && isLanes(loop))
        return WalkResult::advance();
      loops.push_back(loop);
      return WalkResult::skip(); // outermost parallel loops only
    });
    for (scf::ParallelOp loop : loops) {
      bool lanes = isLanes(loop);
      std::optional<unsigned> dim = splitDimension(loop);
      if (!dim || !worthParallelizing(loop)) {
        if (lanes)
          return loop.emitError("kiln-outline-parallel-loops: the lanes "
                                "(kiln.lanes) are not a loop of at least 2 "
                                "constant iterations");
        continue;
      }
      FailureOr<func::FuncOp> task = outline(loop, *dim);
      // A lanes loop run sequentially would run every kernel of its lanes
      // on one thread.
      if (failed(task) && lanes)
        return loop.emitError("kiln-outline-parallel-loops: the lanes "
                              "(kiln.lanes) use a value a task cannot be "
                              "passed");
      // Each kernel of the lanes a function of its own, as it would be
      // outside them: one function holding them all takes LLVM minutes
      // to optimize (MobileNetV2 b8's first layers, 2 lanes: 102 s of -O3
      // instead of 18).
      if (succeeded(task) && lanes &&
          failed(
              Outliner(*task, Value(), minIterations, counter, Launch::Direct)
                  .run()))
        return failure();
    }
    return success();
  }

private:
  /// The dimension to split across threads: the first with at least 2
  /// iterations (a batch of 1 leads many loop nests).
  static std::optional<unsigned> splitDimension(scf::ParallelOp loop) {
    for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
      std::optional<int64_t> count = tripCount(
          loop.getLowerBound()[d], loop.getUpperBound()[d], loop.getStep()[d]);
      if (!count)
        return std::nullopt;
      if (*count >= 2)
        return d;
    }
    return std::nullopt;
  }

  static bool isLanes(scf::ParallelOp loop) {
    return loop->hasAttr(kiln::kLanesAttrName);
  }

  bool worthParallelizing(scf::ParallelOp loop) {
    if (isLanes(loop))
      return true;
    // A loop whose inner bounds are dynamic states its work (kiln.work).
    auto work = loop->getAttrOfType<IntegerAttr>(kiln::kWorkAttrName);
    int64_t iterations = work ? work.getInt() : estimatedIterations(loop);
    return iterations >= minIterations;
  }

  /// The values a task needs from outside, in order: those it recomputes
  /// (with everything they depend on) and those it is passed.
  LogicalResult collectCaptures(scf::ParallelOp loop,
                                SetVector<Value> &rematerialized,
                                SetVector<Value> &passed) {
    SetVector<Value> used;
    getUsedValuesDefinedAbove(loop->getRegions(), used);
    for (Value bound : loop->getOperands())
      used.insert(bound);
    SmallVector<Value> worklist(used.begin(), used.end());
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (rematerialized.contains(value) || passed.contains(value))
        continue;
      if (isRematerializable(value)) {
        rematerialized.insert(value);
        llvm::append_range(worklist, value.getDefiningOp()->getOperands());
      } else if (isPassable(value)) {
        passed.insert(value);
      } else {
        return failure();
      }
    }
    // A stable order: function arguments in order, then the rest as found.
    SmallVector<Value> ordered(passed.begin(), passed.end());
    auto rank = [&](Value value) -> int64_t {
      auto argument = dyn_cast<BlockArgument>(value);
      return argument && argument.getOwner() == &func.getBody().front()
                 ? argument.getArgNumber()
                 : std::numeric_limits<int64_t>::max();
    };
    llvm::stable_sort(ordered,
                      [&](Value x, Value y) { return rank(x) < rank(y); });
    passed = SetVector<Value>(ordered.begin(), ordered.end());
    return success();
  }

  /// Moves `loop` into a task over ranges of dimension `dim`, and returns
  /// it; fails, and leaves the loop, when it needs a value that cannot be
  /// recomputed or passed.
  FailureOr<func::FuncOp> outline(scf::ParallelOp loop, unsigned dim) {
    SetVector<Value> rematerialized, passed;
    if (failed(collectCaptures(loop, rematerialized, passed)))
      return failure();
    unsigned id = counter++;
    MLIRContext *ctx = func.getContext();
    auto module = func->getParentOfType<ModuleOp>();
    Location loc = loop.getLoc();
    Type indexType = IndexType::get(ctx);

    // kiln_task_N(begin, end, passed...).
    SmallVector<Type> taskInputs = {indexType, indexType};
    for (Value value : passed)
      taskInputs.push_back(value.getType());
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
    StringRef prefix =
        launch == Launch::Pool ? kTaskPrefix : kiln::kLaneKernelPrefix;
    auto task =
        func::FuncOp::create(moduleBuilder, loc, (prefix + Twine(id)).str(),
                             FunctionType::get(ctx, taskInputs, {}));
    task.setPrivate();
    Block *body = task.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockEnd(body);
    IRMapping mapping;
    for (auto [value, argument] :
         llvm::zip(passed, body->getArguments().drop_front(2)))
      mapping.map(value, argument);
    // Recompute each defining op once, operands first.
    SetVector<Operation *> uniqueDefs;
    for (Value value : rematerialized)
      uniqueDefs.insert(value.getDefiningOp());
    SmallVector<Operation *> defs(uniqueDefs.begin(), uniqueDefs.end());
    sortByDependences(defs);
    for (Operation *def : defs)
      b.clone(*def, mapping);
    auto clone = cast<scf::ParallelOp>(b.clone(*loop, mapping));
    // The split dimension runs iterations [begin, end) of the original.
    Value step = clone.getStep()[dim];
    Value lb = clone.getLowerBound()[dim];
    auto bound = [&](Value iteration) {
      Value offset = arith::MulIOp::create(b, loc, iteration, step);
      return arith::AddIOp::create(b, loc, lb, offset).getResult();
    };
    b.setInsertionPoint(clone);
    Value newLb = bound(body->getArgument(0));
    Value newUb = bound(body->getArgument(1));
    clone.getLowerBoundMutable().slice(dim, 1).assign(newLb);
    clone.getUpperBoundMutable().slice(dim, 1).assign(newUb);
    b.setInsertionPointToEnd(body);
    func::ReturnOp::create(b, loc);

    OpBuilder callBuilder(loop);
    int64_t count = *tripCount(loop.getLowerBound()[dim],
                               loop.getUpperBound()[dim], loop.getStep()[dim]);
    Value countValue = arith::ConstantIndexOp::create(callBuilder, loc, count);
    if (launch == Launch::Direct) {
      SmallVector<Value> operands = {
          arith::ConstantIndexOp::create(callBuilder, loc, 0), countValue};
      llvm::append_range(operands, passed);
      func::CallOp::create(callBuilder, loc, task, operands);
      loop.erase();
      return task;
    }
    // kiln_parallel_N(rt, count, passed...), defined by the backend.
    SmallVector<Type> callInputs = {runtime.getType(), indexType};
    for (Value value : passed)
      callInputs.push_back(value.getType());
    auto launcher = func::FuncOp::create(
        moduleBuilder, loc, (kParallelPrefix + Twine(id)).str(),
        FunctionType::get(ctx, callInputs, {}));
    launcher.setPrivate();
    SmallVector<Value> operands = {runtime, countValue};
    llvm::append_range(operands, passed);
    func::CallOp::create(callBuilder, loc, launcher, operands);
    loop.erase();
    return task;
  }

  /// Orders `ops` so each comes after the ops defining its operands (they
  /// may come from different blocks of nested loops).
  static void sortByDependences(SmallVectorImpl<Operation *> &ops) {
    DenseSet<Operation *> members(ops.begin(), ops.end()), placed;
    SmallVector<Operation *> ordered;
    std::function<void(Operation *)> place = [&](Operation *op) {
      if (!placed.insert(op).second)
        return;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (members.contains(def))
            place(def);
      ordered.push_back(op);
    };
    for (Operation *op : ops)
      place(op);
    ops.assign(ordered.begin(), ordered.end());
  }

  func::FuncOp func;
  Value runtime;
  int64_t minIterations;
  unsigned &counter;
  Launch launch;
};

/// Moves the static stack slots of loop bodies (kiln-plan-memory's per-tile
/// temporaries) to the entry block of `func`: LLVM would otherwise grow the
/// stack on every iteration. Each slot is dead at the end of its iteration,
/// and a task function runs on one thread, so one slot per call suffices.
void hoistLoopStackSlots(func::FuncOp func) {
  Block &entry = func.getBody().front();
  SmallVector<memref::AllocaOp> slots;
  func.walk([&](memref::AllocaOp alloca) {
    if (alloca->getBlock() != &entry && alloca.getType().hasStaticShape() &&
        alloca->getNumOperands() == 0)
      slots.push_back(alloca);
  });
  for (memref::AllocaOp alloca : slots)
    alloca->moveBefore(&entry, entry.begin());
}

struct OutlineParallelLoopsPass
    : public kiln::impl::OutlineParallelLoopsBase<OutlineParallelLoopsPass> {
  using OutlineParallelLoopsBase::OutlineParallelLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    unsigned counter = 0;
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.isPublic())
        functions.push_back(func);
    for (func::FuncOp func : functions) {
      auto runtimeType = MemRefType::get({1}, IntegerType::get(ctx, 8));
      if (failed(func.insertArgument(func.getNumArguments(), runtimeType,
                                     DictionaryAttr::get(ctx), func.getLoc())))
        return signalPassFailure();
      Value runtime = func.getArgument(func.getNumArguments() - 1);
      if (failed(Outliner(func, runtime, minIterations, counter).run()))
        return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        hoistLoopStackSlots(func);
  }
};

} // namespace
