//===- MapReductionsToGPU.cpp - kiln-map-reductions-to-gpu ----------------===//
//
// A reduction mapped one thread per output walks its row alone, and the
// threads of a warp read addresses a row apart: few rows leave the GPU
// idle, and every load is its own memory transaction. A block per row reads
// the row with all its threads side by side and combines their partial
// results with warp shuffles and one step through shared memory.
//
// Softmax and layer norm are several such ops over the same rows (max, exp,
// sum, divide; mean, variance, normalize) with the elementwise ops around
// them. One kernel per op would launch four or five kernels and pass the
// row through DRAM between them; a row kernel runs all of them in one
// block per row, each op a stage, with barriers only where a thread reads
// what another wrote.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_MAPREDUCTIONSTOGPU
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr int64_t kWarpSize = 32;

/// The identity of a combiner (the value every thread's partial starts
/// from), or null for one kiln does not know.
TypedAttr identityOf(Operation *combiner, FloatType type) {
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  if (isa<arith::AddFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getZero(sem));
  if (isa<arith::MulFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getOne(sem));
  if (isa<arith::MaxNumFOp, arith::MaximumFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/true));
  if (isa<arith::MinNumFOp, arith::MinimumFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getInf(sem));
  return nullptr;
}

/// Each map result is a loop dim or a constant.
bool isSimpleMap(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    return isa<AffineDimExpr, AffineConstantExpr>(e);
  });
}

/// A generic on buffers whose maps a block per row can follow.
bool isMappableGeneric(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() &&
         llvm::all_of(op.getIndexingMapsArray(), isSimpleMap) &&
         !llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

/// What a row reduction needs: the combiner of its body and its identity.
struct RowReduction {
  Operation *combiner;
  TypedAttr identity;
};

/// A reduction over the last loop only, into one f32 output, with a known
/// combiner.
std::optional<RowReduction> matchRowReduction(linalg::GenericOp op) {
  if (!isMappableGeneric(op) || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  auto outType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  auto element =
      outType ? dyn_cast<FloatType>(outType.getElementType()) : FloatType();
  if (!element || !element.isF32())
    return std::nullopt;
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return std::nullopt;
  TypedAttr identity = identityOf(combiners.front(), element);
  if (!identity)
    return std::nullopt;
  return RowReduction{combiners.front(), identity};
}

/// How the threads of a row's block share a stage's work.
enum class StageKind {
  /// Thread t takes elements t, t + T, t + 2T, ... of the row.
  Elements,
  /// One value per row: thread 0 alone.
  RowScalar,
  /// Elements as above, then combined across the block into one value.
  Reduction,
};

struct Stage {
  Operation *op;
  StageKind kind;
  std::optional<RowReduction> reduction;
};

/// The rows a stage runs over: loops (rows..., length), or the rows alone.
struct RowSpace {
  SmallVector<int64_t> rows;
  int64_t length;

  int64_t rowCount() const {
    int64_t count = 1;
    for (int64_t r : rows)
      count *= r;
    return count;
  }

  /// How `op` fits these rows, if it does.
  std::optional<Stage> stageOf(Operation *op) const {
    SmallVector<int64_t> ranges;
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      auto type = dyn_cast<MemRefType>(fill.getOutputs()[0].getType());
      if (!fill.hasPureBufferSemantics() || !type || !type.hasStaticShape() ||
          !type.getLayout().isIdentity())
        return std::nullopt;
      ranges = llvm::to_vector(type.getShape());
    } else if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
      if (!isMappableGeneric(generic))
        return std::nullopt;
      ranges = generic.getStaticLoopRanges();
      if (generic.getNumReductionLoops() != 0) {
        std::optional<RowReduction> reduction = matchRowReduction(generic);
        if (!reduction || !isRowWithElements(ranges))
          return std::nullopt;
        return Stage{op, StageKind::Reduction, reduction};
      }
    } else {
      return std::nullopt;
    }
    if (isRowWithElements(ranges))
      return Stage{op, StageKind::Elements, std::nullopt};
    if (ArrayRef(ranges) == ArrayRef(rows) ||
        (ranges.size() == rows.size() + 1 && ranges.back() == 1 &&
         ArrayRef(ranges).drop_back() == ArrayRef(rows)))
      return Stage{op, StageKind::RowScalar, std::nullopt};
    return std::nullopt;
  }

  bool isRowWithElements(ArrayRef<int64_t> ranges) const {
    return ranges.size() == rows.size() + 1 && ranges.back() == length &&
           ranges.drop_back() == ArrayRef(rows);
  }
};

/// Consecutive ops over the same rows, run by one block per row.
struct RowKernel {
  RowSpace space;
  SmallVector<Stage> stages;
};

/// Ops that may sit between a row kernel's stages: the launch goes where
/// the last stage was, after them (views, constants, the allocations of
/// buffers the later stages write), except deallocations, which move after
/// the launch.
bool isMovable(Operation *op) {
  return op->getNumRegions() == 0 &&
         (isPure(op) ||
          isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op));
}

/// Every buffer a stage reads or writes, with the map it uses (a fill: its
/// output, identity).
struct Access {
  Value buffer;
  AffineMap map;
  bool write;
};

SmallVector<Access> accessesOf(Operation *op) {
  SmallVector<Access> accesses;
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    Value out = fill.getOutputs()[0];
    accesses.push_back(
        {out,
         AffineMap::getMultiDimIdentityMap(
             cast<MemRefType>(out.getType()).getRank(), op->getContext()),
         true});
    return accesses;
  }
  auto generic = cast<linalg::GenericOp>(op);
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    bool isInit = generic.isDpsInit(&operand);
    if (!isInit || generic.payloadUsesValueFromOperand(&operand))
      accesses.push_back({operand.get(), map, false});
    if (isInit)
      accesses.push_back({operand.get(), map, true});
  }
  return accesses;
}

/// Where a buffer's bytes are: a root allocation (a function argument, a
/// global, the arena) and a byte range in it, when known.
struct Extent {
  Value root;
  int64_t begin = 0, end = std::numeric_limits<int64_t>::max();
};

Extent extentOf(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t bytes = std::numeric_limits<int64_t>::max();
  if (type.hasStaticShape() && type.getLayout().isIdentity())
    bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  Operation *def = buffer.getDefiningOp();
  if (auto view = dyn_cast_if_present<memref::ViewOp>(def)) {
    Extent source = extentOf(view.getSource());
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    if (!shift || source.begin != 0 ||
        bytes == std::numeric_limits<int64_t>::max())
      return {source.root};
    return {source.root, *shift, *shift + bytes};
  }
  if (isa_and_present<memref::ReshapeOp, memref::ExpandShapeOp,
                      memref::CollapseShapeOp, memref::CastOp>(def)) {
    Extent source = extentOf(def->getOperand(0));
    if (bytes == std::numeric_limits<int64_t>::max())
      return {source.root};
    return {source.root, source.begin, source.begin + bytes};
  }
  return {buffer, 0, bytes};
}

bool overlap(const Extent &a, const Extent &b) {
  return a.root == b.root && a.begin < b.end && b.begin < a.end;
}

/// Whether blocks never touch each other's rows: every buffer a stage
/// writes has the rows' shape (with the elements, one element or none per
/// row) and is read and written through maps that keep the row, and no
/// other buffer of the kernel shares its bytes.
bool keepsRowsApart(const RowKernel &kernel) {
  size_t rank = kernel.space.rows.size();
  llvm::SetVector<Value> written, accessed;
  for (const Stage &stage : kernel.stages)
    for (const Access &access : accessesOf(stage.op)) {
      accessed.insert(access.buffer);
      if (access.write)
        written.insert(access.buffer);
    }
  for (Value buffer : written) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.getLayout().isIdentity() || type.getRank() < int64_t(rank) ||
        type.getRank() > int64_t(rank) + 1)
      return false;
    Extent extent = extentOf(buffer);
    for (Value other : accessed)
      if (other != buffer && overlap(extent, extentOf(other)))
        return false;
  }
  for (const Stage &stage : kernel.stages)
    for (const Access &access : accessesOf(stage.op)) {
      if (!written.contains(access.buffer))
        continue;
      ArrayRef<AffineExpr> results = access.map.getResults();
      for (size_t d = 0; d < rank; ++d)
        if (results[d] != getAffineDimExpr(d, access.map.getContext()))
          return false;
    }
  return true;
}

/// Which threads touch a buffer's row in a stage, to place barriers.
enum class Threads {
  /// Element j by thread j mod T: the same thread in every such stage.
  Aligned,
  /// Thread 0 alone.
  First,
  /// Every thread, the same element (a row's scalar read by all).
  All,
};

/// Accesses since the last barrier; a barrier goes before an access that
/// could meet one by another thread with a write on either side.
class BarrierPlan {
public:
  bool conflicts(Value buffer, Threads threads, bool write) const {
    auto it = touched.find(buffer);
    if (it == touched.end())
      return false;
    return llvm::any_of(it->second, [&](const Touch &t) {
      return (t.write || write) &&
             !(t.threads == threads && threads != Threads::All);
    });
  }
  void record(Value buffer, Threads threads, bool write) {
    touched[buffer].push_back({threads, write});
  }
  void clear() { touched.clear(); }

private:
  struct Touch {
    Threads threads;
    bool write;
  };
  DenseMap<Value, SmallVector<Touch>> touched;
};

struct MapReductionsToGPUPass
    : public kiln::impl::MapReductionsToGPUBase<MapReductionsToGPUPass> {
  using MapReductionsToGPUBase::MapReductionsToGPUBase;

  void runOnOperation() override {
    // Whole warps per row (the shuffles), at most a block's 1024 threads.
    if (!llvm::isPowerOf2_64(blockSize) || blockSize < kWarpSize ||
        blockSize > 1024 || elementsPerThread < 1) {
      getOperation().emitError()
          << "kiln-map-reductions-to-gpu: block-size must be a power of two "
             "from 32 to 1024 and elements-per-thread at least 1 (got "
          << blockSize << " and " << elementsPerThread << ")";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (RowKernel &kernel : findRowKernels(func.getBody().front())) {
        if (kernel.stages.size() > 1 && !keepsRowsApart(kernel)) {
          // Each reduction alone still gets its block per row.
          for (Stage &stage : kernel.stages)
            if (stage.kind == StageKind::Reduction)
              emit(RowKernel{kernel.space, {stage}});
          continue;
        }
        emit(kernel);
      }
    }
  }

  /// Around each row reduction long enough, the ops over the same rows
  /// before and after it (only movable ops between them).
  SmallVector<RowKernel> findRowKernels(Block &body) {
    SmallVector<Operation *> ops =
        llvm::map_to_vector(body, [](Operation &op) { return &op; });
    SmallVector<RowKernel> kernels;
    size_t taken = 0; // ops before this belong to a kernel already
    for (size_t i = 0; i < ops.size(); ++i) {
      auto anchor = dyn_cast<linalg::GenericOp>(ops[i]);
      if (!anchor || !matchRowReduction(anchor))
        continue;
      SmallVector<int64_t> ranges = anchor.getStaticLoopRanges();
      RowSpace space{llvm::to_vector(ArrayRef(ranges).drop_back()),
                     ranges.back()};
      if (space.length < minLength ||
          space.rowCount() > std::numeric_limits<int32_t>::max())
        continue;
      // The stages before the anchor (collected backwards), then it and
      // those after it.
      SmallVector<Stage> before, after;
      for (size_t j = i; j-- > taken;) {
        if (std::optional<Stage> stage = space.stageOf(ops[j]))
          before.push_back(*stage);
        else if (!isMovable(ops[j]))
          break;
      }
      size_t last = i;
      for (size_t j = i; j < ops.size(); ++j) {
        if (std::optional<Stage> stage = space.stageOf(ops[j])) {
          after.push_back(*stage);
          last = j;
        } else if (!isMovable(ops[j])) {
          break;
        }
      }
      RowKernel kernel{space, llvm::to_vector(llvm::reverse(before))};
      kernel.stages.append(after);
      kernels.push_back(std::move(kernel));
      taken = last + 1;
      i = last;
    }
    return kernels;
  }

  void emit(const RowKernel &kernel) {
    KernelBuilder builder(kernel, blockSize, elementsPerThread, nextKernel++);
    gpu::LaunchOp launch = builder.build();
    // The launch is right before the last stage.
    Operation *last = kernel.stages.back().op;
    SmallVector<Operation *> deallocs;
    for (Operation *op = kernel.stages.front().op; op != last;
         op = op->getNextNode())
      if (isa<memref::DeallocOp>(op))
        deallocs.push_back(op);
    for (Operation *dealloc : llvm::reverse(deallocs))
      dealloc->moveAfter(launch);
    for (const Stage &stage : kernel.stages)
      stage.op->erase();
    // Buffers now in the kernel's shared memory: only their frees are left.
    for (Value buffer : builder.localBuffers()) {
      for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
        user->erase();
      buffer.getDefiningOp()->erase();
    }
  }

  /// Writes one row kernel's gpu.launch where its last stage is.
  class KernelBuilder {
  public:
    KernelBuilder(const RowKernel &kernel, int64_t blockThreads,
                  int64_t elementsPerThread, int64_t id)
        : kernel(kernel), b(kernel.stages.back().op),
          loc(kernel.stages.back().op->getLoc()), id(id) {
      // Enough threads per row for `elementsPerThread` elements each (a
      // power of two, a warp at least), and as many rows per block as fill
      // it: short rows then keep a whole SM's worth of threads busy instead
      // of the few blocks per SM the hardware allows.
      blockThreads = std::max(blockThreads, kWarpSize);
      threads = std::clamp<int64_t>(
          llvm::PowerOf2Ceil(llvm::divideCeil(
              kernel.space.length, std::max<int64_t>(elementsPerThread, 1))),
          kWarpSize, blockThreads);
      rowsPerBlock = 1;
      while (rowsPerBlock * 2 * threads <= blockThreads &&
             kernel.space.rowCount() % (rowsPerBlock * 2) == 0)
        rowsPerBlock *= 2;
    }

    gpu::LaunchOp build() {
      findLocalBuffers();
      gpu::LaunchOp launch = createLaunch();
      Block &body = launch.getBody().front();
      b.setInsertionPointToEnd(&body);
      gpu::TerminatorOp::create(b, loc);
      b.setInsertionPoint(body.getTerminator());
      thread = launch.getThreadIds().x;
      rowInBlock = launch.getThreadIds().y;
      Value firstRow = arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                             index(rowsPerBlock));
      rowIvs =
          delinearizeRow(arith::AddIOp::create(b, loc, firstRow, rowInBlock));
      // The shared memory, in createLaunch's order.
      auto attribution = launch.getWorkgroupAttributions().begin();
      SmallVector<Value> partials;
      for (const Stage &stage : kernel.stages)
        if (stage.kind == StageKind::Reduction && sharesPartials())
          partials.push_back(*attribution++);
      for (Value buffer : locals)
        local[buffer] = *attribution++;
      auto partial = partials.begin();
      for (const Stage &stage : kernel.stages) {
        if (stage.kind == StageKind::Reduction)
          emitReduction(stage, sharesPartials() ? *partial++ : Value());
        else
          emitStage(stage);
      }
      return launch;
    }

    /// The buffers the kernel keeps in shared memory (their allocations
    /// and frees are for the caller to erase once the stages are gone).
    ArrayRef<Value> localBuffers() const { return locals; }

  private:
    /// Whether a row's warps combine their partials through shared memory
    /// (a row of one warp has its total in every lane after the shuffles).
    bool sharesPartials() const { return threads > kWarpSize; }

    /// rowCount / rowsPerBlock blocks of (threads, rowsPerBlock) threads.
    /// Shared memory: per reduction one partial per warp of each row (when
    /// shared), then a row slot per local buffer.
    gpu::LaunchOp createLaunch() {
      MLIRContext *ctx = b.getContext();
      auto workgroup =
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
      auto rowSlots = [&](int64_t size, Type element) {
        return MemRefType::get({rowsPerBlock, size}, element,
                               MemRefLayoutAttrInterface(), workgroup);
      };
      SmallVector<Type> shared;
      for (const Stage &stage : kernel.stages)
        if (stage.kind == StageKind::Reduction && sharesPartials())
          shared.push_back(rowSlots(threads / kWarpSize,
                                    stage.reduction->identity.getType()));
      for (Value buffer : locals) {
        auto type = cast<MemRefType>(buffer.getType());
        shared.push_back(rowSlots(slotOf(type), type.getElementType()));
      }
      Value one = index(1);
      auto launch = gpu::LaunchOp::create(
          b, loc, index(kernel.space.rowCount() / rowsPerBlock), one, one,
          index(threads), index(rowsPerBlock), one,
          /*dynamicSharedMemorySize=*/nullptr,
          /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
          /*workgroupAttributions=*/shared);
      launch.setModuleAttr(FlatSymbolRefAttr::get(ctx, kiln::kGPUKernelModule));
      bool single = kernel.stages.size() == 1;
      launch.setFunctionAttr(FlatSymbolRefAttr::get(
          ctx, (single ? "reduce_" : "rows_") + std::to_string(id)));
      return launch;
    }

    /// Elements of a row a buffer holds: the row's length, or one.
    int64_t slotOf(MemRefType type) const {
      return type.getRank() > int64_t(kernel.space.rows.size())
                 ? type.getShape().back()
                 : 1;
    }

    /// Whether `map` reaches each row's own elements: the row dims in order,
    /// then the element or element 0.
    bool isRowSlotMap(AffineMap map) const {
      size_t rank = kernel.space.rows.size();
      ArrayRef<AffineExpr> results = map.getResults();
      if (results.size() < rank || results.size() > rank + 1)
        return false;
      for (size_t i = 0; i < results.size(); ++i) {
        if (results[i] == getAffineDimExpr(i, map.getContext()))
          continue;
        auto constant = dyn_cast<AffineConstantExpr>(results[i]);
        if (i < rank || !constant || constant.getValue() != 0)
          return false;
      }
      return true;
    }

    /// Buffers only this kernel uses (allocated in the function, read and
    /// written by its stages alone, through row-slot maps, then freed): an
    /// intermediate like softmax's exponentials. Kept in shared memory, a
    /// slot per row of the block, they never pass through DRAM. Up to
    /// kLocalBytes per block.
    void findLocalBuffers() {
      static constexpr int64_t kLocalBytes = 32 * 1024;
      size_t rank = kernel.space.rows.size();
      DenseSet<Operation *> stageOps;
      SetVector<Value> accessed;
      DenseSet<Value> elsewhere;
      for (const Stage &stage : kernel.stages) {
        stageOps.insert(stage.op);
        for (const Access &access : accessesOf(stage.op)) {
          accessed.insert(access.buffer);
          if (!isRowSlotMap(access.map))
            elsewhere.insert(access.buffer);
        }
      }
      int64_t bytes = 0;
      for (Value buffer : accessed) {
        auto alloc = buffer.getDefiningOp<memref::AllocOp>();
        if (!alloc || elsewhere.contains(buffer))
          continue;
        MemRefType type = alloc.getType();
        ArrayRef<int64_t> shape = type.getShape();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
            !type.getElementType().isIntOrFloat() || shape.size() < rank ||
            shape.size() > rank + 1 ||
            shape.take_front(rank) != ArrayRef<int64_t>(kernel.space.rows))
          continue;
        int64_t slot = slotOf(type);
        if (slot != 1 && slot != kernel.space.length)
          continue;
        if (!llvm::all_of(buffer.getUsers(), [&](Operation *user) {
              return stageOps.contains(user) || isa<memref::DeallocOp>(user);
            }))
          continue;
        int64_t size = rowsPerBlock * slot *
                       llvm::divideCeil(type.getElementTypeBitWidth(), 8);
        if (bytes + size > kLocalBytes)
          continue;
        bytes += size;
        locals.push_back(buffer);
      }
    }

    Value index(int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    }

    /// The row loops' indices of block `row`, the last row dim fastest.
    SmallVector<Value> delinearizeRow(Value row) {
      ArrayRef<int64_t> rows = kernel.space.rows;
      SmallVector<Value> ivs(rows.size());
      for (int d = int(rows.size()) - 1; d >= 0; --d) {
        Value size = index(rows[d]);
        ivs[d] = d == 0 ? row : arith::RemUIOp::create(b, loc, row, size);
        if (d > 0)
          row = arith::DivUIOp::create(b, loc, row, size);
      }
      return ivs;
    }

    /// Which threads touch `access` in a stage of `kind`.
    Threads threadsOf(StageKind kind, const Access &access) const {
      if (kind == StageKind::RowScalar)
        return Threads::First;
      size_t rank = kernel.space.rows.size();
      ArrayRef<AffineExpr> results = access.map.getResults();
      bool alongRow =
          results.size() > rank &&
          results[rank] == getAffineDimExpr(rank, access.map.getContext());
      return alongRow ? Threads::Aligned : Threads::All;
    }

    /// A barrier first if `accesses`, made by `kind`'s threads, could meet
    /// another thread's since the last one; then they are recorded.
    void syncBefore(StageKind kind, ArrayRef<Access> accesses) {
      bool conflict = llvm::any_of(accesses, [&](const Access &a) {
        return plan.conflicts(a.buffer, threadsOf(kind, a), a.write);
      });
      if (conflict)
        barrier();
      for (const Access &a : accesses)
        plan.record(a.buffer, threadsOf(kind, a), a.write);
    }

    void barrier() {
      gpu::BarrierOp::create(b, loc);
      plan.clear();
    }

    /// Element `indices` of `buffer`: in the kernel's shared memory when
    /// the buffer is local to it (the row's slot; the last index stays).
    std::pair<Value, SmallVector<Value>> locate(Value buffer,
                                                ArrayRef<Value> indices) {
      auto it = local.find(buffer);
      if (it == local.end())
        return {buffer, SmallVector<Value>(indices)};
      size_t rank = kernel.space.rows.size();
      Value last = indices.size() > rank ? indices.back() : index(0);
      return {it->second, {rowInBlock, last}};
    }

    Value load(Value buffer, ArrayRef<Value> indices) {
      auto [memref, at] = locate(buffer, indices);
      return memref::LoadOp::create(b, loc, memref, at);
    }

    void store(Value value, Value buffer, ArrayRef<Value> indices) {
      auto [memref, at] = locate(buffer, indices);
      memref::StoreOp::create(b, loc, value, memref, at);
    }

    /// The indices of `map` at loop indices `ivs`.
    SmallVector<Value> indicesAt(AffineMap map, ArrayRef<Value> ivs) {
      SmallVector<Value> indices;
      for (AffineExpr e : map.getResults()) {
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          indices.push_back(ivs[dim.getPosition()]);
        else
          indices.push_back(index(cast<AffineConstantExpr>(e).getValue()));
      }
      return indices;
    }

    /// `generic`'s body at loop indices `ivs`: its inputs loaded (and the
    /// outputs it reads, unless `accumulator` stands for the only one);
    /// returns the yielded values.
    SmallVector<Value> inlineBody(linalg::GenericOp generic,
                                  ArrayRef<Value> ivs,
                                  Value accumulator = Value()) {
      IRMapping mapping;
      for (OpOperand &operand : generic->getOpOperands()) {
        BlockArgument arg = generic.getMatchingBlockArgument(&operand);
        if (accumulator && generic.isDpsInit(&operand)) {
          mapping.map(arg, accumulator);
          continue;
        }
        if (arg.use_empty())
          continue;
        AffineMap map = generic.getMatchingIndexingMap(&operand);
        mapping.map(arg, load(operand.get(), indicesAt(map, ivs)));
      }
      for (Operation &op : generic.getBody()->without_terminator()) {
        if (auto dim = dyn_cast<linalg::IndexOp>(op)) {
          mapping.map(dim.getResult(), ivs[dim.getDim()]);
          continue;
        }
        b.clone(op, mapping);
      }
      auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
      return llvm::map_to_vector(yield.getValues(), [&](Value v) {
        return mapping.lookupOrDefault(v);
      });
    }

    /// A stage's work at loop indices `ivs`: a fill's store, or a parallel
    /// generic's body and stores.
    void emitAt(Operation *op, ArrayRef<Value> ivs) {
      if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        Value out = fill.getOutputs()[0];
        store(fill.getInputs()[0], out,
              ivs.take_front(cast<MemRefType>(out.getType()).getRank()));
        return;
      }
      auto generic = cast<linalg::GenericOp>(op);
      SmallVector<Value> values = inlineBody(generic, ivs);
      for (auto [value, out] : llvm::zip(values, generic.getDpsInitsMutable()))
        store(value, out.get(),
              indicesAt(generic.getMatchingIndexingMap(&out), ivs));
    }

    /// Loop indices (rows..., element `j`), or the rows alone (and a 0 for
    /// a unit last loop) for a row scalar.
    SmallVector<Value> ivsWith(Value j) {
      SmallVector<Value> ivs = rowIvs;
      ivs.push_back(j);
      return ivs;
    }

    void emitStage(const Stage &stage) {
      syncBefore(stage.kind, accessesOf(stage.op));
      if (stage.kind == StageKind::RowScalar) {
        auto ifFirst = scf::IfOp::create(b, loc, isFirstThread(), false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifFirst.thenBlock());
        emitAt(stage.op, ivsWith(index(0)));
        return;
      }
      auto loop = scf::ForOp::create(b, loc, thread, index(kernel.space.length),
                                     index(threads));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      emitAt(stage.op, ivsWith(loop.getInductionVar()));
    }

    Value isFirstThread() {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                                   index(0));
    }

    /// `combiner(lhs, rhs)`, a copy of the reduction's combining op.
    Value combine(Operation *combiner, Value lhs, Value rhs) {
      Operation *copy = b.clone(*combiner);
      copy->setOperands({lhs, rhs});
      return copy->getResult(0);
    }

    /// Each thread folds its elements with the generic's own body (so a
    /// producer fused into it is computed on the way); the warp combines
    /// its 32 partials with xor shuffles, lane 0 of each warp writes one to
    /// shared memory (`partials`; null for rows of one warp), and after a
    /// barrier the row's thread 0 combines those into the output's initial
    /// value.
    void emitReduction(const Stage &stage, Value partials) {
      auto generic = cast<linalg::GenericOp>(stage.op);
      Value output = generic.getDpsInits()[0];
      syncBefore(
          StageKind::Elements,
          llvm::filter_to_vector(accessesOf(stage.op), [&](const Access &a) {
            return a.buffer != output;
          }));
      const RowReduction &r = *stage.reduction;
      Value partial = warpPartial(generic, r);
      if (sharesPartials()) {
        storeWarpPartial(partial, partials);
        barrier();
      }
      // Thread 0: the warps' partials, then the output's initial value.
      AffineMap outMap = generic.getIndexingMapsArray().back();
      syncBefore(StageKind::RowScalar,
                 {{output, outMap, false}, {output, outMap, true}});
      auto ifFirst = scf::IfOp::create(b, loc, isFirstThread(), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      auto partialOf = [&](int64_t w) {
        return memref::LoadOp::create(b, loc, partials,
                                      ValueRange{rowInBlock, index(w)})
            .getResult();
      };
      Value total = sharesPartials() ? partialOf(0) : partial;
      for (int64_t w = 1; w < threads / kWarpSize; ++w)
        total = combine(r.combiner, total, partialOf(w));
      SmallVector<Value> outIndices = indicesAt(outMap, ivsWith(index(0)));
      Value init = load(output, outIndices);
      store(combine(r.combiner, init, total), output, outIndices);
    }

    /// The thread's fold of its elements, combined across its warp with
    /// xor shuffles (every lane ends with the warp's value).
    Value warpPartial(linalg::GenericOp generic, const RowReduction &r) {
      Value identity = arith::ConstantOp::create(b, loc, r.identity);
      auto fold = scf::ForOp::create(b, loc, thread, index(kernel.space.length),
                                     index(threads), identity);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(fold.getBody());
        SmallVector<Value> values = inlineBody(
            generic, ivsWith(fold.getInductionVar()), fold.getRegionIterArg(0));
        scf::YieldOp::create(b, loc, values.front());
      }
      Value partial = fold.getResult(0);
      for (int32_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
        Value other = gpu::ShuffleOp::create(b, loc, partial, offset, kWarpSize,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        partial = combine(r.combiner, partial, other);
      }
      return partial;
    }

    /// Lane 0 of each warp writes the warp's partial to its row's slot.
    void storeWarpPartial(Value partial, Value partials) {
      Value warp = arith::DivUIOp::create(b, loc, thread, index(kWarpSize));
      Value lane = arith::RemUIOp::create(b, loc, thread, index(kWarpSize));
      Value firstLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              lane, index(0));
      auto ifFirstLane = scf::IfOp::create(b, loc, firstLane, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirstLane.thenBlock());
      memref::StoreOp::create(b, loc, partial, partials,
                              ValueRange{rowInBlock, warp});
    }

    const RowKernel &kernel;
    OpBuilder b;
    Location loc;
    int64_t id, threads, rowsPerBlock;
    /// Buffers in shared memory, and their memref there.
    SmallVector<Value> locals;
    DenseMap<Value, Value> local;
    /// The thread's index along its row, and its row's in the block.
    Value thread, rowInBlock;
    SmallVector<Value> rowIvs;
    BarrierPlan plan;
  };

  int64_t nextKernel = 0;
};

} // namespace
