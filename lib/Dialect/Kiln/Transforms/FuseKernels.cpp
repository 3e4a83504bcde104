//===- FuseKernels.cpp - kiln-fuse-kernels --------------------------------===//
//
// Groups the graph's ops into kernel regions (kiln.kernel), one generated
// kernel each. Memory-bound ops are cheap in FLOPs and expensive in bytes, so
// every op that can share a pass over memory with its producer joins its
// producer's kernel:
//  * elementwise ops (and broadcasts/transposes, which become index maps)
//    chain together;
//  * a matmul or convolution is a root that absorbs its elementwise
//    epilogue (bias, activation, residual add, scale) of the same shape;
//  * a reduction or softmax absorbs its elementwise producers, and its
//    elementwise consumers join it (softmax, layernorm and friends become one
//    kernel); reductions merge only over the same axes;
//  * everything else (gather, pad, pooling, ...) is a kernel of its own;
//    constants, shape_of and reshapes (free views) stay outside kernels.
// A multi-use value stays one computation: the kernel that computes it also
// yields it to its other users. Groups never merge when that would create a
// cycle between kernels, and a group stops growing at `max-ops` ops or
// `max-inputs` inputs (register pressure: each input is a live pointer and a
// stream of loads in the fused loop).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Transforms/Lanes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/IRMapping.h"

#include <deque>

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEKERNELS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// What an op contributes to a kernel; the order is the root priority.
enum class Role { Free, Elementwise, Reduction, Contraction, Opaque };

Role roleOf(Operation *op) {
  if (isa<ConstantOp, ShapeOfOp, ReshapeOp>(op))
    return Role::Free;
  if (op->hasTrait<OpTrait::Elementwise>() || isa<ExpandOp, TransposeOp>(op))
    return Role::Elementwise;
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
          SoftmaxOp, LogSoftmaxOp>(op))
    return Role::Reduction;
  if (isa<MatmulOp, ConvOp>(op))
    return Role::Contraction;
  return Role::Opaque;
}

/// The reduced axes of a reduction or softmax, as (input rank, axes).
std::pair<int64_t, SmallVector<int64_t>> reductionAxes(Operation *op) {
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  auto normalize = [rank](int64_t axis) { return axis < 0 ? axis + rank : axis; };
  SmallVector<int64_t> axes;
  if (auto attr = op->getAttrOfType<DenseI64ArrayAttr>("axes"))
    llvm::transform(attr.asArrayRef(), std::back_inserter(axes), normalize);
  else if (auto axis = op->getAttrOfType<IntegerAttr>("axis"))
    axes.push_back(normalize(axis.getInt()));
  llvm::sort(axes);
  return {rank, axes};
}

int64_t numElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : -1;
}

struct Group {
  Role root;
  SmallVector<Operation *> ops;
  bool dead = false;
};

class KernelFormation {
public:
  KernelFormation(Block &block, int64_t maxOps, int64_t maxInputs)
      : block(block), maxOps(maxOps), maxInputs(maxInputs) {
    for (auto [i, op] : llvm::enumerate(block))
      order[&op] = i;
  }

  void formGroups() {
    for (Operation &op : block) {
      Role role = roleOf(&op);
      if (role == Role::Free || op.hasTrait<mlir::OpTrait::IsTerminator>() ||
          !isa_and_nonnull<KilnDialect>(op.getDialect()))
        continue;
      if (Group *producer = bestProducerGroup(&op, role)) {
        add(producer, &op);
        absorbSideProducers(producer, &op);
      } else {
        groups.push_back({role, {&op}});
        groupOf[&op] = &groups.back();
      }
    }
  }

  void materialize(OpBuilder &builder) {
    for (Group &group : groups)
      if (!group.dead)
        materializeGroup(group, builder);
    sortTopologically(&block);
  }

private:
  Group *groupOfValue(Value value) const {
    Operation *def = value.getDefiningOp();
    return def ? groupOf.lookup(def) : nullptr;
  }

  /// The producer group `op` may join, preferring a contraction (epilogue),
  /// then a reduction, then the latest elementwise group.
  Group *bestProducerGroup(Operation *op, Role role) {
    Group *best = nullptr;
    for (Value operand : op->getOperands()) {
      Group *group = groupOfValue(operand);
      if (!group || group == best || !canJoin(group, op, operand, role))
        continue;
      if (!best || group->root > best->root ||
          (group->root == best->root &&
           order.lookup(group->ops.back()) > order.lookup(best->ops.back())))
        best = group;
    }
    return best;
  }

  bool canJoin(Group *group, Operation *op, Value operand, Role role) {
    if (group->root == Role::Opaque || role == Role::Contraction ||
        role == Role::Opaque)
      return false;
    if (!withinLimits(*group, {op}))
      return false;
    int64_t produced = numElements(operand);
    int64_t result = numElements(op->getResult(0));
    if (role == Role::Elementwise) {
      // An epilogue works on the contraction's output tile: same size.
      if (group->root == Role::Contraction && result != produced)
        return false;
      // A broadcast that grows the tensor repeats the producer's work for
      // every copy; only plain elementwise producers are cheap enough.
      if (group->root == Role::Reduction && result > maxElements(*group))
        return false;
    }
    if (role == Role::Reduction) {
      if (group->root == Role::Contraction)
        return false;
      for (Operation *member : group->ops)
        if (roleOf(member) == Role::Reduction &&
            reductionAxes(member) != reductionAxes(op))
          return false;
    }
    return !createsCycle(*group, {op});
  }

  /// The largest tensor a group's ops read or write: a reduction's
  /// consumers may broadcast its result back up to its input's size.
  int64_t maxElements(const Group &group) const {
    int64_t most = 0;
    for (Operation *op : group.ops) {
      for (Value operand : op->getOperands())
        most = std::max(most, numElements(operand));
      for (Value result : op->getResults())
        most = std::max(most, numElements(result));
    }
    return most;
  }

  /// Whether `group` plus `extra` stays within the op and input limits.
  bool withinLimits(const Group &group, ArrayRef<Operation *> extra) const {
    if (int64_t(group.ops.size() + extra.size()) > maxOps)
      return false;
    DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
    members.insert(extra.begin(), extra.end());
    DenseSet<Value> inputs;
    for (Operation *op : members)
      for (Value operand : op->getOperands())
        if (!members.contains(operand.getDefiningOp()) &&
            !isa_and_nonnull<ConstantOp>(operand.getDefiningOp()))
          inputs.insert(operand);
    return int64_t(inputs.size()) <= maxInputs;
  }

  /// Whether some op outside `group` and `extra` lies on a path between
  /// them, so that merging them would make two kernels depend on each other.
  bool createsCycle(const Group &group, ArrayRef<Operation *> extra) const {
    DenseSet<Operation *> merged(group.ops.begin(), group.ops.end());
    merged.insert(extra.begin(), extra.end());
    unsigned first = order.lookup(group.ops.front());
    for (Operation *op : extra)
      first = std::min(first, order.lookup(op));
    // Walk backwards from the merged ops' operands through outside ops; an
    // outside op that reaches back into the merged set closes a cycle.
    SmallVector<Operation *> worklist;
    DenseSet<Operation *> visited;
    auto pushOperands = [&](Operation *op) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (def->getBlock() == &block && order.lookup(def) >= first &&
              visited.insert(def).second)
            worklist.push_back(def);
    };
    for (Operation *op : merged)
      pushOperands(op);
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (merged.contains(op))
        continue;
      for (Value operand : op->getOperands())
        if (merged.contains(operand.getDefiningOp()))
          return true;
      pushOperands(op);
    }
    return false;
  }

  void add(Group *group, Operation *op) {
    group->ops.push_back(op);
    group->root = std::max(group->root, roleOf(op));
    groupOf[op] = group;
  }

  /// Pulls in elementwise groups that feed only `op` (the other side of an
  /// add, a scale computed beside the chain), so they share its pass.
  void absorbSideProducers(Group *group, Operation *op) {
    for (Value operand : op->getOperands()) {
      Group *side = groupOfValue(operand);
      if (!side || side == group || side->root != Role::Elementwise)
        continue;
      bool feedsOnlyGroup = llvm::all_of(side->ops, [&](Operation *member) {
        return llvm::all_of(member->getUsers(), [&](Operation *user) {
          return groupOf.lookup(user) == group ||
                 groupOf.lookup(user) == side;
        });
      });
      if (!feedsOnlyGroup || !withinLimits(*group, side->ops) ||
          createsCycle(*group, side->ops))
        continue;
      for (Operation *member : side->ops)
        add(group, member);
      llvm::sort(group->ops, [&](Operation *a, Operation *b) {
        return order.lookup(a) < order.lookup(b);
      });
      side->dead = true;
    }
  }

  static StringRef kindOf(const Group &group) {
    switch (group.root) {
    case Role::Contraction:
      return "contraction";
    case Role::Reduction:
      return "reduction";
    case Role::Elementwise:
      return "elementwise";
    default:
      return group.ops.front()->getName().stripDialect();
    }
  }

  /// Small constants (scalars, shapes) are cloned into the kernel so they
  /// become immediates; weights stay kernel inputs.
  static bool cloneIntoKernel(Value value) {
    auto constant = value.getDefiningOp<ConstantOp>();
    return constant && numElements(value) >= 0 && numElements(value) <= 16;
  }

  /// The lane (kiln-split-batch) all of `group`'s ops run in, or null.
  static Attribute commonLane(const Group &group) {
    Attribute lane = group.ops.front()->getAttr(kLaneAttrName);
    bool common = llvm::all_of(group.ops, [&](Operation *op) {
      return op->getAttr(kLaneAttrName) == lane;
    });
    return common ? lane : Attribute();
  }

  void materializeGroup(Group &group, OpBuilder &builder) {
    DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
    SetVector<Value> inputs, cloned;
    SmallVector<Value> outputs;
    for (Operation *op : group.ops) {
      for (Value operand : op->getOperands())
        if (!members.contains(operand.getDefiningOp()))
          (cloneIntoKernel(operand) ? cloned : inputs).insert(operand);
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !members.contains(user);
            }))
          outputs.push_back(result);
    }
    builder.setInsertionPointAfter(group.ops.back());
    auto kernel = KernelOp::create(builder, group.ops.front()->getLoc(),
                                   kindOf(group), inputs.getArrayRef(),
                                   ValueRange(outputs).getTypes());
    if (Attribute lane = commonLane(group))
      kernel->setAttr(kLaneAttrName, lane);
    Block &body = kernel.getBody().front();
    IRMapping mapping;
    for (auto [input, argument] : llvm::zip(inputs, body.getArguments()))
      mapping.map(input, argument);
    OpBuilder bodyBuilder = OpBuilder::atBlockEnd(&body);
    for (Value constant : cloned)
      bodyBuilder.clone(*constant.getDefiningOp(), mapping);
    for (Operation *op : group.ops)
      bodyBuilder.clone(*op, mapping);
    SmallVector<Value> yielded;
    for (Value output : outputs)
      yielded.push_back(mapping.lookup(output));
    YieldOp::create(bodyBuilder, kernel.getLoc(), yielded);
    for (auto [output, result] : llvm::zip(outputs, kernel.getResults()))
      output.replaceUsesWithIf(result, [&](OpOperand &use) {
        return !members.contains(use.getOwner());
      });
    for (Operation *op : llvm::reverse(group.ops))
      op->erase();
  }

  Block &block;
  int64_t maxOps, maxInputs;
  DenseMap<Operation *, unsigned> order;
  std::deque<Group> groups;
  DenseMap<Operation *, Group *> groupOf;
};

struct KilnFuseKernelsPass
    : public impl::KilnFuseKernelsBase<KilnFuseKernelsPass> {
  using KilnFuseKernelsBase::KilnFuseKernelsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    bool alreadyFused = false;
    func.walk([&](KernelOp) { alreadyFused = true; });
    if (alreadyFused)
      return;
    KernelFormation formation(func.getBody().front(), maxOps, maxInputs);
    formation.formGroups();
    OpBuilder builder(func.getContext());
    formation.materialize(builder);
  }
};

} // namespace
} // namespace kiln
