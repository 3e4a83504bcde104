//===- OffloadGemms.cpp - kiln-offload-gemms ------------------------------===//
//
// On a GPU a matrix product belongs on the tensor cores, and the vendor
// library's kernels for them are tuned per architecture and shape; a loop
// nest mapped to threads reaches a few percent of that. Matmul-shaped
// contractions therefore become calls into the runtime, which runs them with
// cuBLAS; what fusion put after them (bias, activation, residual) stays a
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
        gemms.push_back({gemm, accumulate});
        replaceWithCall(module, op, gemms.size() - 1);
      }
    }
    SmallVector<Attribute> descriptors;
    for (auto [gemm, accumulate] : gemms)
      descriptors.push_back(describe(b, gemm, accumulate));
    module->setAttr("kiln.gemms", b.getArrayAttr(descriptors));
  }

  /// The body of `decl`: the descriptor's GEMM as loops over the flattened
  /// buffers, with cuBLAS' addressing (a test of the descriptor, not a fast
  /// GEMM): C[b*sc + i*ldc + j] = sum_p opA(i, p) * opB(p, j) (+ C).
  void defineEmulation(func::FuncOp decl, std::pair<Gemm, bool> described) {
    auto [g, accumulate] = described;
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
    if (cType != f32)
      sum = arith::TruncFOp::create(b, loc, cType, sum);
    memref::StoreOp::create(b, loc, sum, c, cAt);
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc);
  }

  DictionaryAttr describe(Builder &b, const Gemm &g, bool accumulate) {
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
        b.getNamedAttr("accumulate", i64(accumulate)),
        b.getNamedAttr("tf32", i64(tf32 && g.inType == KILN_DTYPE_F32)),
    });
  }

  /// The offloaded GEMMs by index, and whether each accumulates into C.
  SmallVector<std::pair<Gemm, bool>> gemms;

  void replaceWithCall(ModuleOp module, linalg::LinalgOp op, size_t index) {
    SmallVector<Value> operands = {op.getDpsInputs()[0], op.getDpsInputs()[1],
                                   op.getDpsInits()[0]};
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto decl = func::FuncOp::create(
        b, op.getLoc(), "kiln_gemm_" + std::to_string(index),
        FunctionType::get(module.getContext(), ValueRange(operands).getTypes(),
                          {}));
    decl.setPrivate();
    if (emulate)
      defineEmulation(decl, gemms[index]);
    b.setInsertionPoint(op);
    func::CallOp::create(b, op.getLoc(), decl, operands);
    op->erase();
  }
};

} // namespace
