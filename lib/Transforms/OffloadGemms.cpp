//===- OffloadGemms.cpp - kiln-offload-gemms ------------------------------===//
//
// On a GPU a matrix product belongs on the tensor cores, and the vendor
// library's kernels for them are tuned per architecture and shape; a loop
// nest mapped to threads reaches a few percent of that. Matmul-shaped
// contractions therefore become calls into the runtime, which runs them with
// cuBLAS. A bias per column and a ReLU that fusion put after one are applied
// by cuBLASLt's epilogue as the product is stored (no kernel reading and
// writing it again); anything else after it (a residual, GELU) stays a
// generated kernel reading the product.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/RuntimeDtype.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_OFFLOADGEMMS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A row-major (batched) GEMM: C[b] = A[b] * B[b] (+ C[b] if accumulating).
struct Gemm {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0, ldc = 0, strideA = 0, strideB = 0, strideC = 0;
  int32_t inType = 0, outType = 0;
};

/// The kiln_dtype of a GEMM operand's element type, if cuBLAS takes it.
std::optional<int32_t> gemmDtype(Type type) {
  std::optional<int32_t> dtype = kiln::runtimeDtype(type);
  if (dtype && kiln::isGemmDtype(*dtype))
    return dtype;
  return std::nullopt;
}

/// A group of loop dims of one operand flattened into one matrix (or batch)
/// dimension: `size` elements `stride` apart (stride 0: the operand does not
/// depend on these dims, or the group is a single element).
struct Flat {
  int64_t size = 1, stride = 0;
};

/// The element stride of each loop dim in an operand indexed by `map` whose
/// buffer is dense row-major (0 for dims it does not use), or nullopt if a
/// result is not a plain dim.
std::optional<SmallVector<int64_t>> loopStrides(AffineMap map,
                                                MemRefType type) {
  SmallVector<int64_t> strides(map.getNumDims(), 0);
  int64_t stride = 1;
  for (int i = map.getNumResults() - 1; i >= 0; --i) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
    if (!dim || strides[dim.getPosition()] != 0)
      return std::nullopt;
    strides[dim.getPosition()] = type.getDimSize(i) == 1 ? 0 : stride;
    stride *= type.getDimSize(i);
  }
  return strides;
}

/// `dims` (outermost first) as one dimension, if each is `stride x size`
/// of the next; dims of size 1 do not count.
std::optional<Flat> flatten(ArrayRef<unsigned> dims, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> ranges) {
  Flat flat;
  std::optional<int64_t> inner;
  for (unsigned d : llvm::reverse(dims)) {
    if (ranges[d] == 1)
      continue;
    if (!inner)
      flat.stride = strides[d];
    else if (strides[d] != *inner)
      return std::nullopt;
    flat.size *= ranges[d];
    inner = strides[d] * ranges[d];
  }
  return flat;
}

/// A row-major matrix operand with rows and cols flattened: its leading
/// dimension and whether it is stored transposed (cols outer).
std::optional<std::pair<int64_t, bool>> matrixLayout(Flat rows, Flat cols) {
  if ((cols.size == 1 || cols.stride == 1) &&
      (rows.size == 1 || rows.stride >= cols.size))
    return std::make_pair(rows.size == 1 ? cols.size : rows.stride, false);
  if ((rows.size == 1 || rows.stride == 1) &&
      (cols.size == 1 || cols.stride >= rows.size))
    return std::make_pair(cols.size == 1 ? rows.size : cols.stride, true);
  return std::nullopt;
}

bool isDenseStatic(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

/// `dims` sorted by decreasing stride in `strides` (outermost first).
SmallVector<unsigned> outerFirst(ArrayRef<unsigned> dims,
                                 ArrayRef<int64_t> strides) {
  SmallVector<unsigned> sorted(dims);
  llvm::stable_sort(
      sorted, [&](unsigned a, unsigned b) { return strides[a] > strides[b]; });
  return sorted;
}

std::optional<Gemm> matchGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return std::nullopt;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  if (!isDenseStatic(a) || !isDenseStatic(b) || !isDenseStatic(c))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto typeOf = [](Value v) { return cast<MemRefType>(v.getType()); };
  auto aStrides = loopStrides(maps[0], typeOf(a));
  auto bStrides = loopStrides(maps[1], typeOf(b));
  auto cStrides = loopStrides(maps[2], typeOf(c));
  if (!aStrides || !bStrides || !cStrides)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Group orders: batch, m and n as C stores them, k as A stores it.
  SmallVector<unsigned> batch = outerFirst(dims->batch, *cStrides);
  SmallVector<unsigned> mDims = outerFirst(dims->m, *cStrides);
  SmallVector<unsigned> nDims = outerFirst(dims->n, *cStrides);
  SmallVector<unsigned> kDims = outerFirst(dims->k, *aStrides);
  auto aM = flatten(mDims, *aStrides, ranges);
  auto aK = flatten(kDims, *aStrides, ranges);
  auto bK = flatten(kDims, *bStrides, ranges);
  auto bN = flatten(nDims, *bStrides, ranges);
  auto cM = flatten(mDims, *cStrides, ranges);
  auto cN = flatten(nDims, *cStrides, ranges);
  auto aBatch = flatten(batch, *aStrides, ranges);
  auto bBatch = flatten(batch, *bStrides, ranges);
  auto cBatch = flatten(batch, *cStrides, ranges);
  if (!aM || !aK || !bK || !bN || !cM || !cN || !aBatch || !bBatch || !cBatch)
    return std::nullopt;
  auto aLayout = matrixLayout(*aM, *aK), bLayout = matrixLayout(*bK, *bN),
       cLayout = matrixLayout(*cM, *cN);
  // C is written row-major (cuBLAS writes one layout; the other would need
  // the operands swapped).
  if (!aLayout || !bLayout || !cLayout || cLayout->second)
    return std::nullopt;

  auto elementType = [&](Value v) { return typeOf(v).getElementType(); };
  std::optional<int32_t> aType = gemmDtype(elementType(a)),
                         bType = gemmDtype(elementType(b)),
                         cType = gemmDtype(elementType(c));
  if (!aType || aType != bType || !cType ||
      (cType != aType && cType != KILN_DTYPE_F32))
    return std::nullopt;
  Gemm gemm;
  gemm.m = aM->size;
  gemm.n = bN->size;
  gemm.k = aK->size;
  gemm.batch = cBatch->size;
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (gemm.m > kIntMax || gemm.n > kIntMax || gemm.k > kIntMax ||
      gemm.batch > kIntMax || gemm.m * gemm.n * gemm.k == 0)
    return std::nullopt;
  std::tie(gemm.lda, gemm.transA) = *aLayout;
  std::tie(gemm.ldb, gemm.transB) = *bLayout;
  gemm.ldc = cLayout->first;
  gemm.strideA = aBatch->stride;
  gemm.strideB = bBatch->stride;
  gemm.strideC = cBatch->stride;
  gemm.inType = *aType;
  gemm.outType = *cType;
  return gemm;
}

/// The zero fill of `output` right before `op` (nothing in between uses
/// it), if there is one.
linalg::FillOp zeroFillBefore(Operation *op, Value output) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.getOutputs()[0] == output)
      return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ? fill
                                                                 : nullptr;
    if (llvm::is_contained(prev->getOperands(), output))
      return nullptr;
  }
  return nullptr;
}

/// An offloaded GEMM: its shape, whether it accumulates into C, its
/// epilogue (kiln_gemm_epilogue flags).
struct Described {
  Gemm gemm;
  bool accumulate;
  int32_t epilogue;
};

/// The kernel after a GEMM that cuBLASLt's epilogue can do instead: D =
/// act(C + bias), bias a vector along C's rows (one value per column), act
/// a ReLU or nothing; C read by nothing else.
struct Epilogue {
  linalg::GenericOp op;
  Value bias, output;
  int32_t flags = KILN_GEMM_EPILOGUE_NONE;
};

/// If `value` is `max(x, 0)`, as kiln writes a ReLU (x < 0 ? 0 : x, which
/// keeps NaN) or as a max: x and the number of ops that make it.
std::pair<Value, int> reluInput(Value value) {
  auto isZero = [](Value v) { return matchPattern(v, m_AnyZeroFloat()); };
  Operation *op = value.getDefiningOp();
  if (isa_and_present<arith::MaxNumFOp, arith::MaximumFOp>(op) &&
      isZero(op->getOperand(1)))
    return {op->getOperand(0), 1};
  auto select = dyn_cast_if_present<arith::SelectOp>(op);
  if (!select || !isZero(select.getTrueValue()))
    return {};
  Value x = select.getFalseValue();
  auto less = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (less && less.getPredicate() == arith::CmpFPredicate::OLT &&
      less.getLhs() == x && isZero(less.getRhs()))
    return {x, 2};
  return {};
}

std::optional<Epilogue> matchEpilogue(linalg::LinalgOp gemmOp,
                                      const Gemm &gemm) {
  Value c = gemmOp.getDpsInits()[0];
  auto cType = cast<MemRefType>(c.getType());
  if (gemm.outType != KILN_DTYPE_F32 || cType.getShape().back() != gemm.n ||
      !c.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  // The first op after the GEMM that touches C must be the epilogue, and
  // only deallocations may touch C after it.
  linalg::GenericOp op;
  for (Operation *next = gemmOp->getNextNode(); next && !op;
       next = next->getNextNode())
    if (llvm::is_contained(next->getOperands(), c))
      op = dyn_cast<linalg::GenericOp>(next);
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  for (Operation *user : c.getUsers())
    if (user != gemmOp && user != op && !isa<memref::DeallocOp>(user))
      return std::nullopt;
  Value output = op.getDpsInits()[0];
  if (output.getType() != c.getType() || !isDenseStatic(output) ||
      !op.getIndexingMapsArray().back().isIdentity())
    return std::nullopt;
  // The GEMM moves to the epilogue's place: nothing in between may use its
  // operands or the output it now writes.
  Value a = gemmOp.getDpsInputs()[0], b = gemmOp.getDpsInputs()[1];
  for (Operation *between = gemmOp->getNextNode(); between != op;
       between = between->getNextNode())
    for (Value used : {a, b, output})
      if (llvm::is_contained(between->getOperands(), used))
        return std::nullopt;
  Epilogue epilogue{op, Value(), output};
  unsigned rank = cType.getRank();
  Block *body = op.getBody();
  Value product, bias;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (input->get() == c && map.isIdentity())
      product = body->getArgument(input->getOperandNumber());
    else if (map.getNumResults() == 1 &&
             map.getResult(0) == getAffineDimExpr(rank - 1, op.getContext()) &&
             isDenseStatic(input->get()) &&
             input->get().getType() ==
                 MemRefType::get({gemm.n}, cType.getElementType())) {
      bias = body->getArgument(input->getOperandNumber());
      epilogue.bias = input->get();
    }
  }
  if (!product || !bias)
    return std::nullopt;
  Value result = cast<linalg::YieldOp>(body->getTerminator()).getValues()[0];
  auto isBiasAdd = [&](Value v) {
    auto sum = v.getDefiningOp<arith::AddFOp>();
    return sum && ((sum.getLhs() == product && sum.getRhs() == bias) ||
                   (sum.getLhs() == bias && sum.getRhs() == product));
  };
  // The body is exactly the pattern: the add, then the ReLU's ops if any.
  int ops = int(body->getOperations().size()) - 1;
  auto [reluOf, reluOps] = reluInput(result);
  if (isBiasAdd(result) && ops == 1)
    epilogue.flags = KILN_GEMM_EPILOGUE_BIAS;
  else if (reluOf && isBiasAdd(reluOf) && ops == 1 + reluOps)
    epilogue.flags = KILN_GEMM_EPILOGUE_BIAS | KILN_GEMM_EPILOGUE_RELU;
  else
    return std::nullopt;
  return epilogue;
}

struct OffloadGemmsPass
    : public kiln::impl::OffloadGemmsBase<OffloadGemmsPass> {
  using OffloadGemmsBase::OffloadGemmsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.isPublic())
        continue;
      SmallVector<std::pair<linalg::LinalgOp, Gemm>> matches;
      func.walk([&](linalg::LinalgOp op) {
        if (std::optional<Gemm> gemm = matchGemm(op))
          matches.push_back({op, *gemm});
      });
      for (auto [op, gemm] : matches) {
        Value c = op.getDpsInits()[0];
        bool accumulate = true;
        if (linalg::FillOp fill = zeroFillBefore(op, c)) {
          fill.erase();
          accumulate = false;
        }
        std::optional<Epilogue> epilogue;
        if (!accumulate)
          epilogue = matchEpilogue(op, gemm);
        gemms.push_back({gemm, accumulate,
                         epilogue ? epilogue->flags : KILN_GEMM_EPILOGUE_NONE});
        replaceWithCall(module, op, gemms.size() - 1, epilogue);
      }
    }
    SmallVector<Attribute> descriptors;
    for (const Described &gemm : gemms)
      descriptors.push_back(describe(b, gemm));
    module->setAttr("kiln.gemms", b.getArrayAttr(descriptors));
  }

  /// The body of `decl`: the descriptor's GEMM as loops over the flattened
  /// buffers, with cuBLAS' addressing (a test of the descriptor, not a fast
  /// GEMM): C[b*sc + i*ldc + j] = sum_p opA(i, p) * opB(p, j) (+ C).
  void defineEmulation(func::FuncOp decl, const Described &described) {
    const Gemm &g = described.gemm;
    bool accumulate = described.accumulate;
    decl.setPrivate();
    Block *entry = decl.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    Location loc = decl.getLoc();
    auto flat = [&](Value buffer) -> Value {
      auto type = cast<MemRefType>(buffer.getType());
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      if (type.getRank() == 1)
        return buffer;
      return memref::CollapseShapeOp::create(
          b, loc, buffer, ArrayRef<ReassociationIndices>{all});
    };
    Value a = flat(entry->getArgument(0)), bm = flat(entry->getArgument(1)),
          c = flat(entry->getArgument(2));
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    Value zero = index(0), one = index(1);
    Type cType = cast<MemRefType>(c.getType()).getElementType();
    Type f32 = b.getF32Type();
    auto toF32 = [&](Value v) -> Value {
      return v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v);
    };
    // offset = base + x * sx + y * sy
    auto offset = [&](Value base, Value x, int64_t sx, Value y, int64_t sy) {
      Value ox = arith::MulIOp::create(b, loc, x, index(sx));
      Value oy = arith::MulIOp::create(b, loc, y, index(sy));
      return arith::AddIOp::create(b, loc, base,
                                   arith::AddIOp::create(b, loc, ox, oy));
    };
    auto loop = [&](int64_t n) {
      auto l = scf::ForOp::create(b, loc, zero, index(n), one);
      b.setInsertionPointToStart(l.getBody());
      return l.getInductionVar();
    };
    Value batch = loop(g.batch);
    Value aBase = arith::MulIOp::create(b, loc, batch, index(g.strideA));
    Value bBase = arith::MulIOp::create(b, loc, batch, index(g.strideB));
    Value cBase = arith::MulIOp::create(b, loc, batch, index(g.strideC));
    Value i = loop(g.m);
    Value j = loop(g.n);
    Value cAt = offset(cBase, i, g.ldc, j, 1);
    Value init = accumulate
                     ? toF32(memref::LoadOp::create(b, loc, c, cAt))
                     : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0))
                           .getResult();
    auto kLoop = scf::ForOp::create(b, loc, zero, index(g.k), one, init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value p = kLoop.getInductionVar();
      Value aAt = g.transA ? offset(aBase, p, g.lda, i, 1)
                           : offset(aBase, i, g.lda, p, 1);
      Value bAt = g.transB ? offset(bBase, j, g.ldb, p, 1)
                           : offset(bBase, p, g.ldb, j, 1);
      Value product = arith::MulFOp::create(
          b, loc, toF32(memref::LoadOp::create(b, loc, a, aAt)),
          toF32(memref::LoadOp::create(b, loc, bm, bAt)));
      scf::YieldOp::create(b, loc,
                           ValueRange{arith::AddFOp::create(
                               b, loc, kLoop.getRegionIterArg(0), product)});
    }
    Value sum = kLoop.getResult(0);
    if (described.epilogue & KILN_GEMM_EPILOGUE_BIAS)
      sum = arith::AddFOp::create(
          b, loc, sum,
          memref::LoadOp::create(b, loc, entry->getArgument(3), j));
    if (described.epilogue & KILN_GEMM_EPILOGUE_RELU) {
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      Value negative =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, sum, zero);
      sum = arith::SelectOp::create(b, loc, negative, zero, sum);
    }
    if (cType != f32)
      sum = arith::TruncFOp::create(b, loc, cType, sum);
    memref::StoreOp::create(b, loc, sum, c, cAt);
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc);
  }

  DictionaryAttr describe(Builder &b, const Described &described) {
    const Gemm &g = described.gemm;
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    return b.getDictionaryAttr({
        b.getNamedAttr("m", i64(g.m)),
        b.getNamedAttr("n", i64(g.n)),
        b.getNamedAttr("k", i64(g.k)),
        b.getNamedAttr("batch", i64(g.batch)),
        b.getNamedAttr("trans_a", i64(g.transA)),
        b.getNamedAttr("trans_b", i64(g.transB)),
        b.getNamedAttr("lda", i64(g.lda)),
        b.getNamedAttr("ldb", i64(g.ldb)),
        b.getNamedAttr("ldc", i64(g.ldc)),
        b.getNamedAttr("stride_a", i64(g.strideA)),
        b.getNamedAttr("stride_b", i64(g.strideB)),
        b.getNamedAttr("stride_c", i64(g.strideC)),
        b.getNamedAttr("in_dtype", i64(g.inType)),
        b.getNamedAttr("out_dtype", i64(g.outType)),
        b.getNamedAttr("accumulate", i64(described.accumulate)),
        b.getNamedAttr("tf32", i64(tf32 && g.inType == KILN_DTYPE_F32)),
        b.getNamedAttr("epilogue", i64(described.epilogue)),
    });
  }

  /// The offloaded GEMMs by index.
  SmallVector<Described> gemms;

  /// `op` as `kiln_gemm_I(A, B, C)`; with an epilogue, as
  /// `kiln_gemm_I(A, B, D, bias)` writing the epilogue's output, which
  /// replaces the epilogue's kernel and C.
  void replaceWithCall(ModuleOp module, linalg::LinalgOp op, size_t index,
                       std::optional<Epilogue> epilogue) {
    Value c = op.getDpsInits()[0];
    SmallVector<Value> operands = {op.getDpsInputs()[0], op.getDpsInputs()[1],
                                   epilogue ? epilogue->output : c};
    if (epilogue)
      operands.push_back(epilogue->bias);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto decl = func::FuncOp::create(
        b, op.getLoc(), kiln::kGemmCallPrefix.str() + std::to_string(index),
        FunctionType::get(module.getContext(), ValueRange(operands).getTypes(),
                          {}));
    decl.setPrivate();
    if (emulate)
      defineEmulation(decl, gemms[index]);
    b.setInsertionPoint(epilogue ? epilogue->op : op);
    func::CallOp::create(b, op.getLoc(), decl, operands);
    op->erase();
    if (!epilogue)
      return;
    epilogue->op->erase();
    // C is no longer written or read: its allocation and deallocations go.
    for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
      user->erase();
    c.getDefiningOp()->erase();
  }
};

} // namespace
