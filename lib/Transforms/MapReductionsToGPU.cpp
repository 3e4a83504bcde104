//===- MapReductionsToGPU.cpp - kiln-map-reductions-to-gpu ----------------===//
//
// A reduction mapped one thread per output walks its row alone, and the
// threads of a warp read addresses a row apart: few rows leave the GPU
// idle, and every load is its own memory transaction. A block per row reads
// the row with all its threads side by side and combines their partial
// results in shared memory.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_MAPREDUCTIONSTOGPU
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

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

/// What a row reduction needs: the combiner of its body and its identity.
struct RowReduction {
  linalg::GenericOp op;
  Operation *combiner;
  TypedAttr identity;
  int64_t rows, length;
};

/// Each map result is a loop dim or a constant.
bool isSimpleMap(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    return isa<AffineDimExpr, AffineConstantExpr>(e);
  });
}

std::optional<RowReduction> matchRowReduction(linalg::GenericOp op,
                                              int64_t minLength) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  if (!op.getBody()->getOps<linalg::IndexOp>().empty())
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
  for (AffineMap map : op.getIndexingMapsArray())
    if (!isSimpleMap(map))
      return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  int64_t rows = 1;
  for (int64_t r : ArrayRef(ranges).drop_back())
    rows *= r;
  if (ranges.back() < minLength || rows > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  return RowReduction{op, combiners.front(), identity, rows, ranges.back()};
}

struct MapReductionsToGPUPass
    : public kiln::impl::MapReductionsToGPUBase<MapReductionsToGPUPass> {
  using MapReductionsToGPUBase::MapReductionsToGPUBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      SmallVector<RowReduction> reductions;
      for (auto op : func.getBody().front().getOps<linalg::GenericOp>())
        if (std::optional<RowReduction> r = matchRowReduction(op, minLength))
          reductions.push_back(*r);
      for (RowReduction &r : reductions) {
        mapToBlocks(r);
        r.op.erase();
      }
    }
  }

  /// The indices of `map` at loop indices `ivs`.
  SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                               ArrayRef<Value> ivs) {
    SmallVector<Value> indices;
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        indices.push_back(ivs[dim.getPosition()]);
      else
        indices.push_back(arith::ConstantIndexOp::create(
            b, loc, cast<AffineConstantExpr>(e).getValue()));
    }
    return indices;
  }

  /// `combiner(lhs, rhs)`, a copy of the reduction's combining op.
  Value combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs) {
    Operation *copy = b.clone(*combiner);
    copy->setOperands({lhs, rhs});
    return copy->getResult(0);
  }

  void mapToBlocks(RowReduction &r) {
    linalg::GenericOp op = r.op;
    OpBuilder b(op);
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    int64_t threads =
        std::min<int64_t>(blockSize, llvm::PowerOf2Ceil(r.length));
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto shared = MemRefType::get(
        {threads}, r.identity.getType(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    Value one = index(1);
    auto launch = gpu::LaunchOp::create(b, loc, index(r.rows), one, one,
                                        index(threads), one, one,
                                        /*dynamicSharedMemorySize=*/nullptr,
                                        /*asyncTokenType=*/nullptr,
                                        /*asyncDependencies=*/{},
                                        /*workgroupAttributions=*/{shared});
    launch.setModuleAttr(FlatSymbolRefAttr::get(ctx, kiln::kGPUKernelModule));
    launch.setFunctionAttr(
        FlatSymbolRefAttr::get(ctx, "reduce_" + std::to_string(nextKernel++)));
    Block &body = launch.getBody().front();
    b.setInsertionPointToEnd(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPoint(body.getTerminator());
    Value partials = launch.getWorkgroupAttributions()[0];
    Value thread = launch.getThreadIds().x;

    // The row's loop indices, last dimension varying fastest.
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<Value> ivs(ranges.size());
    Value rest = launch.getBlockIds().x;
    for (int d = int(ranges.size()) - 2; d >= 0; --d) {
      Value size = index(ranges[d]);
      ivs[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, size);
      if (d > 0)
        rest = arith::DivUIOp::create(b, loc, rest, size);
    }

    // Each thread folds elements thread, thread + B, ... of the row with the
    // generic's own body (its output argument as the accumulator).
    Value identity = arith::ConstantOp::create(b, loc, r.identity);
    auto fold = scf::ForOp::create(b, loc, thread, index(r.length),
                                   index(threads), identity);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(fold.getBody());
      ivs.back() = fold.getInductionVar();
      IRMapping mapping;
      for (auto [i, input] : llvm::enumerate(op.getDpsInputs())) {
        AffineMap map = op.getIndexingMapsArray()[i];
        mapping.map(
            op.getBody()->getArgument(i),
            memref::LoadOp::create(b, loc, input, indicesAt(b, loc, map, ivs)));
      }
      mapping.map(op.getRegionOutputArgs()[0], fold.getRegionIterArg(0));
      for (Operation &bodyOp : op.getBody()->without_terminator())
        b.clone(bodyOp, mapping);
      auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
      scf::YieldOp::create(b, loc, mapping.lookup(yield.getValues()[0]));
    }
    ivs.back() = index(0); // outside the fold; the output does not use it
    memref::StoreOp::create(b, loc, fold.getResult(0), partials, thread);
    gpu::BarrierOp::create(b, loc);

    // Tree combination in shared memory.
    for (int64_t stride = threads / 2; stride >= 1; stride /= 2) {
      Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           thread, index(stride));
      auto ifActive = scf::IfOp::create(b, loc, active, false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifActive.thenBlock());
        Value other = arith::AddIOp::create(b, loc, thread, index(stride));
        Value mine = memref::LoadOp::create(b, loc, partials, thread);
        Value theirs = memref::LoadOp::create(b, loc, partials, other);
        memref::StoreOp::create(b, loc, combine(b, r.combiner, mine, theirs),
                                partials, thread);
      }
      gpu::BarrierOp::create(b, loc);
    }

    // Thread 0 combines the row's total into the output's initial value.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        thread, index(0));
    auto ifFirst = scf::IfOp::create(b, loc, first, false);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value output = op.getDpsInits()[0];
    SmallVector<Value> outIndices =
        indicesAt(b, loc, op.getIndexingMapsArray().back(), ivs);
    Value total = memref::LoadOp::create(b, loc, partials, index(0));
    Value init = memref::LoadOp::create(b, loc, output, outIndices);
    memref::StoreOp::create(b, loc, combine(b, r.combiner, init, total), output,
                            outIndices);
  }

  int64_t nextKernel = 0;
};

} // namespace
