//===- LowerMatmul.cpp - kiln-lower-matmul --------------------------------===//
//
// Matmuls are the compute-bound work of a model. A register-tiled kernel
// keeps an MR x NR tile of C in vector registers (MR x NR/lanes
// accumulators) and, per step of k, loads NR/lanes vectors of B, broadcasts
// MR scalars of A and issues MR x NR/lanes FMAs, which saturates both FMA
// pipes. Operands are packed so every load in the k loop is contiguous:
//  * B into panels Bp[N/NR][K][NR] (zero-padded), at compile time when B is
//    a constant (the weights), and a constant A (a convolution's filters)
//    into row tiles Ap[M/MR][K][MR];
//  * a B computed at run time, and A, are packed on every call (into an
//    arena buffer) only when reading them in place would hurt: a row pitch
//    that is a multiple of 2 KiB puts the rows a tile reads in the same L1
//    sets (K = 1024 shapes fall to half speed). Otherwise the tile reads
//    them in place, saving the copy (attention's small matmuls, im2col).
// C stays row-major. The tiles are computed by one parallel loop over
// (panel of B, block of row tiles whose packed A fits in L2) items, which
// kiln-outline-parallel-loops hands to the thread pool.
// (With a short K, items sweep one row tile along several panels instead,
// so C is written along its rows.)
// Ragged M gets a tile with fewer rows, ragged N a panel whose last vector is
// stored with a mask. Batched matmuls loop over the batch; a batch of A
// against an unbatched B is one matmul with batch * M rows.
// A convolution as an implicit GEMM (WindowToLinalg's convAsShiftedMatmul)
// is the same kernel whose B row for k = (channel, tap) is the channel's
// laid-out input shifted by the tap's constant offset, read in place; with
// the output pixels as rows (convAsWindowedRows), A's row for a pixel is
// its window in the padded input, each step of k a broadcast from it.
// Elementwise work after the matmul (bias, activation, residual) is applied
// on the registers before the store (kiln::Epilogue).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/ConstantData.h"
#include "kiln/Transforms/Epilogue.h"
#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/ParallelImages.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <functional>
#include <limits>
#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_LOWERMATMUL
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The most taps of an implicit GEMM's window unrolled in its k loop.
constexpr int64_t kMaxUnrolledTaps = 16;

/// Reductions this short make work items sweep a row tile along C's rows
/// (emitTiles), each over this many panels.
constexpr int64_t kShortReduction = 64;
constexpr int64_t kPanelsPerSweep = 16;

/// The fewest work items a matmul's parallel loop is split into, where it
/// has the tiles for them: few items split unevenly over the threads.
constexpr int64_t kMinWorkItems = 16;

/// Below this many panels (a batch's each), an odd count whose row tiles
/// would be one item each splits them in two groups: an odd count of equal
/// items leaves 2 threads 1/items of the work apart (64 x 1024 x 1000, 21
/// panels of 8 row tiles: 4.8%), which stealing cannot even out.
constexpr int64_t kEvenItemsBelow = 64;

/// The largest panel of B a work item packs into a stack slot of its own
/// (packsPanelsInItems: about an L1, and the most a task function's frame
/// adds to the stack of the thread that calls kiln_run, which runs a share
/// of each parallel loop), and the fewest rows of C the item's tiles must
/// have where the panel's rows are split in groups, each of which copies it
/// again (fewer would read each copy too few times to pay for it).
constexpr int64_t kMaxPanelSlotBytes = 32 * 1024;
constexpr int64_t kMinRowsPerPackedPanel = 32;

/// Bytes of packed A one block of rows may take (stays in L2).
constexpr int64_t kRowBlockBytes = 256 * 1024;

/// The fewest steps of k a slice of the reduction may have
/// (reductionSliceSteps), and what its length is rounded down to (a cache
/// line of A's row).
constexpr int64_t kMinSliceSteps = 512;
constexpr int64_t kSliceAlignment = 16;

/// Numbered swept-major with B beyond L2, every block of row tiles reads
/// all of B again: 4 bytes per 2 x rows FLOPs. A block holds the rows whose
/// A fits in kRowBlockBytes, fewer than kMinBlockRows when k is long, and k
/// is then cut into slices of about kSweptSliceSteps (sweptSliceSteps).
constexpr int64_t kMinBlockRows = 64;
constexpr int64_t kSweptSliceSteps = 768;

/// L1 ways a tile needs besides its rows of A (tileRowsCollide): B's panel
/// streaming through, the next panel's prefetched lines, C. L1s with at
/// most kNarrowL1Ways ways (32 KiB) always pack a colliding A.
constexpr int64_t kL1WaysForStreams = 4;
constexpr int64_t kNarrowL1Ways = 8;

/// Over a batch, an operand read one row per step is packed per call in a
/// loop over the images only for images of at least this many multiply-adds
/// (imagesPayForPackLoop).
constexpr int64_t kMinPackedImageWork = int64_t(1) << 21;

/// A batch of at least kMinParallelImages (ParallelImages.h) images of at
/// most kMaxParallelImageWork multiply-adds each, whose operands are written
/// per image (stagePerImage), runs its images in parallel: each task writes
/// an image's operand and runs its tiles, rather than one thread-pool
/// dispatch per image for a few microseconds of tiles.
constexpr int64_t kMaxParallelImageWork = int64_t(1) << 22;

/// How many of a tile's vectors its epilogue's ops are emitted for in turn
/// (applyEpilogue): a GELU is ~35 dependent vector ops per vector, and one
/// vector after the other ran at 27 cycles per vector on Zen 3, the core
/// overlapping about two chains. An AVX2 tile's 12 in turn: 128 x 768 x
/// 3072 + bias + GELU 6.56 -> 6.41 ms (6.23 without the GELU); groups of 2,
/// 3, 4 or 6 gained nothing measurable. AVX-512 tiles of 16 or 24 vectors
/// (not measured) take groups of 12, against the register spills of more.
constexpr size_t kEpilogueChains = 12;

/// A tile that reads each panel of compile-time packed B once, from beyond
/// L2 (a batch-1 classifier), runs k in up to kMaxKRuns runs at once
/// (kRunsFor), each of at least kMinKRunSteps steps.
constexpr int64_t kMaxKRuns = 4;
constexpr int64_t kMinKRunSteps = 64;

/// The fewest groups of row tiles a transposed A's pack splits into
/// (packTransposedA) where it has the tiles, so that threads share it
/// evenly: 960 -> 160 at 7x7 (12 tiles), 1 thread on Zen 3, ran 4% faster
/// in 3 groups of 4 than tile by tile, but 2 threads 4-10% slower (2 groups
/// against 1); in 6 groups of 2, within noise either way. 8 groups keep it
/// tile by tile; 14x14 planes (49 tiles) take groups of 4.
constexpr int64_t kMinPackGroups = 8;

/// How far ahead (in panels) a tile prefetches a B it reads in place
/// (prefetchAhead): 1 to 3 measured alike, 8 too far.
constexpr int64_t kPrefetchPanels = 2;

/// How far ahead (in steps of k) a tile prefetches a transposed A it reads
/// in place (prefetchRowsAhead), and the shortest rows of A^T it does so
/// for: shorter rows, a few cache lines apart, the L2 streamer follows.
constexpr int64_t kPrefetchSteps = 16;
constexpr int64_t kPrefetchRowBytes = 512;

/// f32 values in a cache line.
constexpr int64_t kFloatsPerLine = 16;

/// How far ahead (in floats: 4 KiB) a tile prefetches A packed at compile
/// time (prefetchPackedA). Zen 5, six 3x3 256 -> 256 Winograd layers at
/// 14x14 (4 MB of transformed filters each), ms per run: none 5.13-5.43,
/// 256 floats 4.12, 512 3.81-4.15, 1024 3.82, 2048 3.81-3.84.
constexpr int64_t kPackedAPrefetchFloats = 1024;

/// How many times A's bytes B's must exceed, both staying in L2, for a
/// thread's range of items to be a range of B's panels (sweptMajor).
constexpr int64_t kSplitBFactor = 2;

/// The locality hint of the next panel's prefetch (streamNextPanel): into
/// L2 only (x86's prefetcht2). The next panel is read a whole panel later,
/// after its lines would have left L1, so prefetcht0's L1 fills only took
/// L1 from the operands in use. Granite Rapids-class host, interleaved
/// rounds: BERT layer b1 9.36 -> 9.20 ms on 1 thread (4.81 -> 4.73 on 2);
/// the MLP, GPT-2 block, MobileNetV2, ResNet-style b1 and the FFN GEMMs
/// alone within 1%. (AMD's optimization guides treat the hints alike; not
/// measured there.)
constexpr int kNextPanelLocality = 1;

/// Cycles from one FMA to the next on the same accumulator (Zen 4, Intel
/// since Skylake: 4).
constexpr int64_t kFMALatency = 4;

/// Cycles a tile's step of k takes beyond its FMAs' (tileCycles): a short
/// tile does not run at the FMA latency's bound. A Zen 3 core (AVX2, 4 x 24
/// tiles), 1 thread, M x 3072 x 768 with B packed at compile time: the
/// second row tile of M = 6 (2 rows, 6 accumulators: 4 cycles a step by
/// the latency) added 137 us to M = 4's 250, 85% of what a full second
/// tile adds (M = 8: 155-168 us), not 67%.
constexpr int64_t kTileStepOverhead = 1;

/// A matmul as convert-kiln-to-linalg writes it, on dense f32 buffers:
/// out[b, m, n] += lhs[b?, m, k] * rhs[b?, k, n], where lhs may be stored
/// transposed ([b?, k, m]: a convolution's im2col matrix when the output
/// pixels are the rows) and a constant rhs too ([n, k]: filters, Gemm's
/// transB weights), which compile-time packing reads either way.
struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool lhsBatched = false, rhsBatched = false;
  bool lhsTransposed = false, rhsTransposed = false;
  /// A convolution as an implicit GEMM (WindowToLinalg's
  /// convAsShiftedMatmul): k runs over (channel, tap), and B's row for it is
  /// the channel's laid-out input shifted by the tap's offset, read in place
  /// (B is [batch, channels, length]; tapOffsets has k / channels entries).
  SmallVector<int64_t> tapOffsets;
  int64_t channels = 0, tapsPerRow = 0;
  /// The floats of each channel of the shifted operand.
  int64_t channelLength = 0;
  /// A convolution with the output pixels as rows (WindowToLinalg's
  /// convAsWindowedRows): the taps shift A instead, [batch, channels,
  /// length] (the padded input), whose row for pixel p starts at
  /// pixelStart(p) in each channel; B is the filters [n, k].
  AffineMap pixelStart;
  bool windowedRows() const { return bool(pixelStart); }
  /// Whether B's rows are the shifted ones (convAsShiftedMatmul).
  bool shiftsB() const { return !tapOffsets.empty() && !windowedRows(); }
};

/// The name in `loc` (the ONNX node's, which the importer gives each op),
/// if any; the diagnostics printer shows only the file.
std::optional<StringRef> nodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().strref();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::optional<StringRef> name = nodeName(part))
        return name;
  return std::nullopt;
}

/// Whether `map` is (d_0, ..., d_{batchRank-1})? followed by (x, y).
std::optional<bool> batchedOperand(AffineMap map, unsigned batchRank,
                                   unsigned x, unsigned y) {
  unsigned rank = map.getNumResults();
  if (rank != 2 && rank != batchRank + 2)
    return std::nullopt;
  for (unsigned i = 0; i + 2 < rank; ++i)
    if (map.getResult(i) != getAffineDimExpr(i, map.getContext()))
      return std::nullopt;
  if (map.getResult(rank - 2) != getAffineDimExpr(x, map.getContext()) ||
      map.getResult(rank - 1) != getAffineDimExpr(y, map.getContext()))
    return std::nullopt;
  return batchRank > 0 && rank == batchRank + 2;
}

/// The constant global `value` reads, or null.
memref::GlobalOp constantGlobal(Value value, SymbolTable &symbols) {
  // A reshaped view (a convolution's filters as [O, C*KH*KW], a grouped
  // one's as [groups, O / groups, C / groups * KH * KW]) has the same data
  // in the same order.
  while (isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp>(
      value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  auto getGlobal = value.getDefiningOp<memref::GetGlobalOp>();
  if (!getGlobal)
    return nullptr;
  auto global = symbols.lookup<memref::GlobalOp>(getGlobal.getName());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return nullptr;
  return global;
}

/// The float data of a constant global, or nothing.
std::optional<SmallVector<float>> constantData(Value value,
                                               SymbolTable &symbols) {
  memref::GlobalOp global = constantGlobal(value, symbols);
  if (!global)
    return std::nullopt;
  return kiln::readFloatData(*global.getInitialValue());
}

/// Whether `value` is a statically shaped f32 buffer, dense unless
/// `strided` allows any layout.
bool isF32Buffer(Value value, bool strided) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return strided
             ? type && type.hasStaticShape() && type.getElementType().isF32()
             : kiln::isDenseF32Buffer(value);
}

/// Whether `op` is out += lhs * rhs on f32 buffers, dense (the inputs may be
/// strided views with `stridedInputs`).
bool isF32Contraction(linalg::GenericOp op, bool stridedInputs = false) {
  return op.hasPureBufferSemantics() && op.getNumDpsInputs() == 2 &&
         op.getNumDpsInits() == 1 && kiln::isMultiplyAccumulate(op) &&
         isF32Buffer(op.getDpsInputs()[0], stridedInputs) &&
         isF32Buffer(op.getDpsInputs()[1], stridedInputs) &&
         kiln::isDenseF32Buffer(op.getDpsInits()[0]);
}

/// Rows apart that the matrices of `value`, a [batch, rows, cols] f32 view
/// with dense rows, start, when that is a whole number of rows more than
/// `rows`: the matmul reads such a B in place through a view of its rows
/// (a Winograd convolution's transformed input, its matrices spaced so
/// that they start in different L1 sets).
std::optional<int64_t> batchRowPitch(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || type.getRank() != 3 || !type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  int64_t rows = type.getDimSize(1), cols = type.getDimSize(2);
  if (strides[2] != 1 || strides[1] != cols ||
      ShapedType::isDynamic(strides[0]) || strides[0] % cols ||
      strides[0] / cols <= rows)
    return std::nullopt;
  return strides[0] / cols;
}

/// Whether the emitter reads `op`'s B in place although it is strided: a
/// batched B whose matrices are whole rows apart (batchRowPitch).
bool readsSpacedB(linalg::GenericOp op, const MatmulShape &shape) {
  return shape.rhsBatched && !shape.rhsTransposed &&
         batchRowPitch(op.getDpsInputs()[1]);
}

/// A matmul whose input is a strided f32 view (a MatMul on a column slice
/// of its input: rows further apart than they are long) reads a dense copy
/// of it instead, made right before, so it takes the tiled kernel (which
/// reads dense rows) rather than scalar loops: 64 x 4096 x 1024 as four
/// MatMuls on column slices, 850 ms -> 4.9 ms. The copy is one pass over
/// the slice. Windowed rows copy a strided input (a slice of channels) the
/// same way; other contractions, such as window ops, keep their views. With
/// `keepSpacedB`, B stays as it is (readsSpacedB).
void copyStridedInputs(linalg::GenericOp op, bool keepSpacedB) {
  // Before the output's zero fill, if any: the emitter finds it (and a
  // transposing copy) right before the matmul.
  Operation *before = op;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
      fill && fill.getDpsInits()[0] == op.getDpsInits()[0])
    before = fill;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = cast<MemRefType>(input->get().getType());
    if (type.getLayout().isIdentity() ||
        (input->getOperandNumber() == 1 && keepSpacedB))
      continue;
    OpBuilder b(before);
    auto dense = MemRefType::get(type.getShape(), type.getElementType());
    Value copy =
        memref::AllocOp::create(b, op.getLoc(), dense, b.getI64IntegerAttr(64));
    memref::CopyOp::create(b, op.getLoc(), input->get(), copy);
    input->set(copy);
  }
}

/// The matmul `op` is, if any; with `stridedInputs`, its inputs may be
/// strided views (copyStridedInputs makes them dense).
std::optional<MatmulShape>
matchMatmul(linalg::GenericOp op, SymbolTable &symbols, bool stridedInputs) {
  if (!isF32Contraction(op, stridedInputs))
    return std::nullopt;
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1],
        out = op.getDpsInits()[0];
  unsigned loops = op.getNumLoops();
  if (loops < 3)
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < loops; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return std::nullopt;
  if (iterators.back() != utils::IteratorType::reduction)
    return std::nullopt;
  unsigned batchRank = loops - 3, m = loops - 3, n = loops - 2, k = loops - 1;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // out[d0, ..., d_{loops-2}]: every loop but k.
  if (maps[2] != AffineMap::getMultiDimIdentityMap(loops, op.getContext())
                     .getMajorSubMap(loops - 1))
    return std::nullopt;
  MatmulShape shape;
  std::optional<bool> lhsBatched = batchedOperand(maps[0], batchRank, m, k);
  if (!lhsBatched) {
    lhsBatched = batchedOperand(maps[0], batchRank, k, m);
    shape.lhsTransposed = true;
  }
  std::optional<bool> rhsBatched = batchedOperand(maps[1], batchRank, k, n);
  // A transposed B is only read packed at compile time (the emitter leaves
  // the op alone if its data cannot be read).
  if (!rhsBatched && constantGlobal(rhs, symbols)) {
    rhsBatched = batchedOperand(maps[1], batchRank, n, k);
    shape.rhsTransposed = true;
  }
  if (!lhsBatched || !rhsBatched)
    return std::nullopt;
  ArrayRef<int64_t> outShape = cast<MemRefType>(out.getType()).getShape();
  for (int64_t d : outShape.drop_back(2))
    shape.batch *= d;
  shape.m = outShape[outShape.size() - 2];
  shape.n = outShape.back();
  ArrayRef<int64_t> lhsShape = cast<MemRefType>(lhs.getType()).getShape();
  shape.k = lhsShape[lhsShape.size() - (shape.lhsTransposed ? 2 : 1)];
  shape.lhsBatched = *lhsBatched;
  shape.rhsBatched = *rhsBatched;
  // An unbatched B: the whole batch of A is one tall matmul (unless A is
  // transposed: its rows are then not evenly spaced across the batch).
  if (!shape.rhsBatched && shape.lhsBatched && !shape.lhsTransposed) {
    shape.m *= shape.batch;
    shape.batch = 1;
    shape.lhsBatched = false;
  }
  if (shape.m == 0 || shape.n == 0 || shape.k == 0 ||
      (!shape.lhsBatched && !shape.rhsBatched && shape.batch != 1))
    return std::nullopt;
  return shape;
}

/// `expr` of one dim at `x`, without the context's uniqued constants that
/// composing the map would make (a large output has many pixels); nothing
/// for a symbol, a division by a non-positive constant or an overflow.
std::optional<int64_t> evaluateAt(AffineExpr expr, int64_t x) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return constant.getValue();
  if (isa<AffineDimExpr>(expr))
    return x;
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return std::nullopt;
  std::optional<int64_t> lhs = evaluateAt(binary.getLHS(), x),
                         rhs = evaluateAt(binary.getRHS(), x);
  if (!lhs || !rhs)
    return std::nullopt;
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return llvm::checkedAdd(*lhs, *rhs);
  case AffineExprKind::Mul:
    return llvm::checkedMul(*lhs, *rhs);
  default:
    if (*rhs <= 0)
      return std::nullopt;
    if (expr.getKind() == AffineExprKind::Mod)
      return llvm::mod(*lhs, *rhs);
    if (expr.getKind() == AffineExprKind::FloorDiv)
      return llvm::divideFloorSigned(*lhs, *rhs);
    return llvm::divideCeilSigned(*lhs, *rhs);
  }
}

/// A convolution as an implicit GEMM, as WindowToLinalg writes it, in one
/// of two orientations:
///  * convAsShiftedMatmul, the filters as rows: out[b, o, f] += W[o, c,
///    t...] * X[b, c, f + G(t...)] over loops (b, o, f, c, t...), f the
///    output's position in a plane of the input's row pitch. B's row for k =
///    (c, t...) is X's channel c shifted by the tap's constant G(t...).
///  * convAsWindowedRows, the output pixels as rows (`pixelsAsRows`):
///    out[b, p, o] += X[b, c, R(p) + G(t...)] * W[o, c, t...] over loops
///    (b, p, o, c, t...), X the padded input with each channel's plane
///    flattened and R(p) where pixel p's window starts in it. A's row p is
///    read in place, each step of k one scalar (a broadcast) at R(p) + G.
/// Either way k = (c, t...), W is the packed operand and X is read in
/// place; `tapOffsets` holds G per tap. W may have the batch dim too, W[b,
/// o, c, t...]: one image of a grouped convolution, its groups the batch.
std::optional<MatmulShape> matchConvMatmul(linalg::GenericOp op,
                                           bool pixelsAsRows) {
  // Windowed rows read the input where it is, which may be a view (a slice
  // of its channels): the pass copies such an input first.
  if (!isF32Contraction(op, /*stridedInputs=*/pixelsAsRows))
    return std::nullopt;
  Value filter = op.getDpsInputs()[pixelsAsRows ? 1 : 0],
        input = op.getDpsInputs()[pixelsAsRows ? 0 : 1],
        out = op.getDpsInits()[0];
  auto outType = cast<MemRefType>(out.getType());
  auto filterType = cast<MemRefType>(filter.getType());
  auto inputType = cast<MemRefType>(input.getType());
  // Loops: b (unless a unit batch was dropped), m, n, then c and the taps.
  unsigned batchRank = outType.getRank() - 2;
  unsigned loops = op.getNumLoops(), first = batchRank + 2;
  // The filters may have the batch dim too: a grouped convolution's groups
  // are its batch (one image).
  bool filtersBatched = batchRank && filterType.getRank() == loops - 1;
  if (batchRank > 1 || inputType.getRank() != batchRank + 2 ||
      loops < first + 2 ||
      (!filtersBatched && filterType.getRank() != loops - batchRank - 1))
    return std::nullopt;
  unsigned taps = loops - first - 1;
  auto iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i < loops; ++i)
    if ((iterators[i] == utils::IteratorType::parallel) != (i < first))
      return std::nullopt;
  MLIRContext *context = op.getContext();
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, context); };
  unsigned m = batchRank, n = batchRank + 1, channel = first;
  unsigned pixel = pixelsAsRows ? m : n, outChannel = pixelsAsRows ? n : m;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<AffineExpr> filterExprs = {dim(outChannel)}, outExprs;
  if (filtersBatched)
    filterExprs.insert(filterExprs.begin(), dim(0));
  for (unsigned i = channel; i < loops; ++i)
    filterExprs.push_back(dim(i));
  for (unsigned i = 0; i < first; ++i)
    outExprs.push_back(dim(i));
  if (maps[pixelsAsRows ? 1 : 0] !=
          AffineMap::get(loops, 0, filterExprs, context) ||
      maps[2] != AffineMap::get(loops, 0, outExprs, context))
    return std::nullopt;
  ArrayRef<AffineExpr> inputExprs = maps[pixelsAsRows ? 0 : 1].getResults();
  if ((batchRank && inputExprs[0] != dim(0)) ||
      inputExprs[batchRank] != dim(channel))
    return std::nullopt;
  // The column: R(pixel) + G(taps), G evaluated per tap (row-major).
  AffineExpr column = inputExprs.back(),
             zero = getAffineConstantExpr(0, context);
  AffineExpr shift = column.replace(dim(pixel), zero);
  for (unsigned i = 0; i <= channel; ++i)
    if (shift.isFunctionOfDim(i))
      return std::nullopt;
  AffineExpr start = simplifyAffineExpr(column - shift, loops, 0);
  for (unsigned i = 0; i < loops; ++i)
    if (i != pixel && start.isFunctionOfDim(i))
      return std::nullopt;
  // The filters as rows read the input over whole rows of the pitch.
  if (!pixelsAsRows && start != dim(pixel))
    return std::nullopt;
  ArrayRef<int64_t> filterDims =
      filterType.getShape().drop_front(filtersBatched ? 1 : 0);
  ArrayRef<int64_t> tapSizes = filterDims.drop_front(2);
  MatmulShape shape;
  shape.batch = batchRank ? outType.getDimSize(0) : 1;
  shape.m = outType.getDimSize(m);
  shape.n = outType.getDimSize(n);
  shape.channels = filterDims[1];
  int64_t tapCount = 1;
  for (int64_t size : tapSizes)
    tapCount *= size;
  shape.k = shape.channels * tapCount;
  shape.tapsPerRow = tapSizes.back();
  (pixelsAsRows ? shape.lhsBatched : shape.rhsBatched) = true;
  (pixelsAsRows ? shape.rhsBatched : shape.lhsBatched) = filtersBatched;
  shape.rhsTransposed = pixelsAsRows;
  if (pixelsAsRows)
    shape.pixelStart =
        AffineMap::get(1, 0, start.replace(dim(pixel), dim(0)), context);
  // Every column read stays within the channel's row: the last pixel's
  // window (R is monotonic in the layouts WindowToLinalg writes; checked).
  int64_t pixels = outType.getDimSize(pixel), lastStart = 0;
  if (pixelsAsRows)
    for (int64_t p = 0; p < pixels; ++p) {
      std::optional<int64_t> at = evaluateAt(shape.pixelStart.getResult(0), p);
      if (!at || *at < lastStart)
        return std::nullopt;
      lastStart = *at;
    }
  int64_t reach = pixelsAsRows ? lastStart + 1 : pixels;
  SmallVector<int64_t> position(taps, 0);
  int64_t rowLength = shape.channelLength = inputType.getShape().back();
  for (int64_t t = 0; t < tapCount; ++t) {
    int64_t rest = t;
    for (int64_t i = int64_t(taps) - 1; i >= 0; --i) {
      position[i] = rest % tapSizes[i];
      rest /= tapSizes[i];
    }
    SmallVector<int64_t> point(loops, 0);
    llvm::copy(position, point.begin() + channel + 1);
    int64_t offset = AffineMap::get(loops, 0, shift).compose(point).front();
    if (offset < 0 || offset + reach > rowLength)
      return std::nullopt;
    shape.tapOffsets.push_back(offset);
  }
  if (inputType.getDimSize(batchRank) != shape.channels || shape.m == 0 ||
      shape.n == 0 || (batchRank && inputType.getDimSize(0) != shape.batch))
    return std::nullopt;
  return shape;
}

/// What the kernels are built for: the pass options.
struct KernelTarget {
  /// f32 lanes of a vector, the register tile's rows (MR) and vectors per
  /// row (NR / lanes).
  int64_t lanes, rows, vectors;
  bool useFMA, halfRateVectors;
  /// Steps of k from which an operand read one row per step is packed
  /// (stepsOutrunRows).
  int64_t longReduction;
  int64_t l1Ways, l2Bytes;
  /// Steps of k per iteration of a tile's k loop.
  int64_t kUnroll;
  /// Emit a remark describing each lowered matmul (explainPlan).
  bool explain;
  /// Whether a matmul's shape and operands may change the tile
  /// (widerPanelPays, tallerTilePays).
  bool shapeTiles;
};

/// A register tile's most rows (tileRows picks its rows up to these) and its
/// vectors per row.
struct TileShape {
  int64_t rows, vectors;
};

class MatmulEmitter {
public:
  MatmulEmitter(linalg::GenericOp op, const MatmulShape &shape,
                const KernelTarget &target, SymbolTable &symbols)
      : MatmulEmitter(op, shape, target, symbols,
                      tileShape(shape, target, streamsB(op, shape, symbols))) {}

  MatmulEmitter(linalg::GenericOp op, const MatmulShape &shape,
                const KernelTarget &target, SymbolTable &symbols,
                TileShape tile)
      : op(op), shape(shape), lanes(target.lanes), nrVectors(tile.vectors),
        mr(tileRows(shape.m, tile.rows, nrVectors)), nr(lanes * nrVectors),
        useFMA(target.useFMA), halfRateVectors(target.halfRateVectors),
        longReduction(target.longReduction), l1Ways(target.l1Ways),
        l2Bytes(target.l2Bytes), kUnroll(std::max<int64_t>(1, target.kUnroll)),
        accumulators(target.rows * target.vectors), explain(target.explain),
        symbols(symbols), b(op), loc(op.getLoc()) {
    mTiles = llvm::divideCeil(shape.m, this->mr);
    nPanels = llvm::divideCeil(shape.n, nr);
    f32 = b.getF32Type();
    vectorType = VectorType::get({lanes}, f32);
    reductionSlice = ReductionSlice{0, shape.k};
  }

  void emit() {
    readConstantOperands();
    // A transposed B is only read packed.
    if (shape.rhsTransposed && !rhsData)
      return;
    for (unsigned operand : {0u, 1u})
      staged[operand] = findStagedOperand(operand);
    transposeCopy = findTransposingCopy();
    planOperandPacking();
    // C, or with a transposing copy after it, C^T: [batch * rows, cols].
    Operation *producer = transposeCopy ? transposeCopy : op;
    Value result = producer->getOperand(producer->getNumOperands() - 1);
    int64_t resultRows = transposeCopy ? shape.n : shape.m;
    int64_t resultColumns = transposeCopy ? shape.m : shape.n;
    epilogue = kiln::Epilogue::find(producer, result, shape.batch * resultRows,
                                    resultColumns,
                                    /*allowSlicedLines=*/shape.shiftsB());
    zeroInit = eraseZeroFill();
    permuted = findPermutedTarget(resultColumns);
    for (std::optional<StagedOperand> &operand : staged)
      if (operand)
        stagePerImage(*operand);
    // [batch * rows, cols] views (free).
    lhs = shape.shiftsB() ? filterMatrix(op.getDpsInputs()[0])
                          : flatten(operandView(0), 2);
    if (!stagedImage(1) && readsSpacedB(op, shape)) {
      rhsPitch = *batchRowPitch(op.getDpsInputs()[1]);
      rhs = rowsView(op.getDpsInputs()[1], rhsPitch);
    } else {
      rhs = flatten(operandView(1), 2);
    }
    out = flatten(result, 2);
    if (permuted && permuted->movedDims)
      permuted->rowsLastView = rowsLastView();
    if (epilogue)
      epilogue->prepare(b, loc);
    if (lhsData)
      packedA = compileTimePacked(op.getDpsInputs()[0], *lhsData, shape.m, mr,
                                  /*kMajor=*/shape.lhsTransposed, matrices(0));
    else if (packsAPerCall)
      packedA = allocPacked(mTiles, mr);
    if (rhsData)
      packedB = compileTimePacked(op.getDpsInputs()[1], *rhsData, shape.n, nr,
                                  /*kMajor=*/!shape.rhsTransposed, matrices(1));
    if (!shape.tapOffsets.empty())
      tapRowTable = createTapRowTable();
    if (packsBInLoop) {
      packedB = allocPacked(nPanels, nr);
      if (!shape.rhsBatched)
        packB(index(0));
    }
    emitBatch();
    explainPlan();
    eraseReplaced();
  }

private:
  /// The tiles of every batch element, with the per-call copies they read.
  void emitBatch() {
    // Without per-batch copies, the batch's tiles are one parallel loop (a
    // Winograd convolution's 16 matmuls of 50 us each: one thread-pool
    // dispatch and one wait, not 16).
    bool copiesPerBatch =
        copiesOperandsPerImage() || (packsBInLoop && shape.rhsBatched);
    if (shape.batch > 1 && !copiesPerBatch) {
      emitTiles(Value(), shape.batch);
      return;
    }
    auto stageImages = [&](Value batch) {
      for (std::optional<StagedOperand> &operand : staged)
        if (operand)
          stageImage(*operand, batch);
    };
    if (parallelImages) {
      // Each task writes its images' operands and runs their tiles (an
      // inner parallel loop, run in order within the task).
      parallelLoop(shape.batch, shape.batch * shape.m * shape.n * shape.k,
                   [&](Value batch) {
                     stageImages(batch);
                     emitTiles(batch);
                   });
      return;
    }
    forLoop(0, shape.batch, 1, [&](Value batch) {
      stageImages(batch);
      if (packsAPerCall)
        packA(batch);
      if (packsBInLoop && shape.rhsBatched)
        packB(batch);
      emitTiles(batch);
    });
  }

  /// lhsData and rhsData: A's and B's values where they are constants the
  /// tiles read packed at compile time.
  void readConstantOperands() {
    // A constant A may be batched (a Winograd convolution's transformed
    // filters, one matrix per point of the tile): packed per matrix.
    if (!shape.windowedRows())
      lhsData = constantData(op.getDpsInputs()[0], symbols);
    if (lhsData && int64_t(lhsData->size()) != matrices(0) * shape.m * shape.k)
      lhsData.reset();
    // So may a constant B of windowed rows (a grouped convolution's filters,
    // one matrix per group).
    if (!shape.rhsBatched || shape.windowedRows())
      rhsData = constantData(op.getDpsInputs()[1], symbols);
    if (rhsData && int64_t(rhsData->size()) != matrices(1) * shape.k * shape.n)
      rhsData.reset();
  }

  /// Whether operand `operand` (0: A, 1: B) has a matrix per batch element.
  bool batched(unsigned operand) const {
    return operand == 0 ? shape.lhsBatched : shape.rhsBatched;
  }

  /// The matrices operand `operand` holds.
  int64_t matrices(unsigned operand) const {
    return batched(operand) ? shape.batch : 1;
  }

  /// Which operands that are not constants are packed per call and how
  /// (packsAPerCall, packsBInLoop, packsBPerItem), and whether a batch's
  /// images run in parallel (parallelImages): decided before any IR is
  /// written, from the shape, the constant operands, the operands staged
  /// per image (findStagedOperand) and the transposing copy C is stored
  /// through (findTransposingCopy: it takes C in one slice of k).
  void planOperandPacking() {
    // Operands packed per call when reading them in place would collide in
    // L1 (constant ones are packed at compile time).
    // (Windowed rows are read in place: their steps are broadcasts.)
    // (An implicit GEMM's B rows overlap: always read in place.)
    packsAPerCall =
        !lhsData && !shape.windowedRows() &&
        (shape.lhsTransposed ? (needsPacking(shape.m) ||
                                (stepsOutrunRows() && imagesPayForPackLoop()))
                             : tileRowsCollide(shape.k));
    bool packsB = !rhsData && (needsPacking(shape.n) || stepsOutrunRows()) &&
                  shape.tapOffsets.empty();
    // Packed for its long steps alone, the B of a batch of small images is
    // packed only by the work items of one loop over all of them, else read
    // in place.
    bool packsBOnlyInItems =
        packsB && !needsPacking(shape.n) && !imagesPayForPackLoop();
    packsBPerItem = packsB && packsPanelsInItems(packsBOnlyInItems);
    packsBInLoop = packsB && !packsBPerItem && !packsBOnlyInItems;
    // Images in parallel pack nothing per image: neither A nor a batched B
    // that would be packed per image whether or not its items pack it.
    parallelImages = imagesPayInParallel() && !packsAPerCall &&
                     !(packsB && shape.rhsBatched && !packsBOnlyInItems);
  }

  /// With `explain`, a remark at the matmul's location that says what its
  /// kernel does: the shape and kind, the register tile and its k loop, how
  /// A and B are read, and how the work is split (emitTiles' plan). For
  /// --explain-matmuls, and for tuning: the choices are spread over this
  /// file's heuristics, and a layer's speed is easier to read with them in
  /// one line.
  void explainPlan() const {
    if (!explain || !explained)
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "matmul";
    if (std::optional<StringRef> name = nodeName(loc))
      os << " '" << *name << "'";
    os << ": ";
    describeShape(os);
    os << "; ";
    describeOperands(os);
    os << "; ";
    describeItems(os);
    emitRemark(loc) << text;
  }

  /// "1 panel", "2 panels".
  static void countOf(llvm::raw_ostream &os, int64_t n, StringRef one,
                      StringRef many) {
    os << n << " " << (n == 1 ? one : many);
  }

  /// The shape, the kind of matmul, the register tile and its k loop.
  void describeShape(llvm::raw_ostream &os) const {
    os << shape.m << " x " << shape.k << " x " << shape.n << " (M x K x N";
    if (shape.batch > 1)
      os << ", batch " << shape.batch;
    os << ")";
    if (shape.shiftsB())
      os << ", implicit GEMM (B: the input shifted per tap)";
    else if (shape.windowedRows())
      os << ", pixels as rows (A: each pixel's window in the padded input)";
    else if (shape.lhsTransposed)
      os << ", A transposed";
    os << "; tile " << mr << " x " << nr << " (" << nrVectors << " x " << lanes
       << " lanes), ";
    // Implicit GEMMs loop over channels with the taps unrolled
    // (channelSteps), not over k in kUnroll steps (emitReduction).
    if (shape.tapOffsets.empty()) {
      countOf(os, kUnroll, "step", "steps");
      os << " of k an iteration";
      if (kRunsTaken > 1)
        os << " of each of up to " << kRunsTaken << " runs of k at once";
    } else if (tapRowTable) {
      countOf(os, shape.tapsPerRow, "tap", "taps");
      os << " (a window row) an iteration";
    } else {
      countOf(os, shape.tapOffsets.size(), "tap", "taps");
      os << " (a channel) an iteration";
    }
  }

  /// How A and B are read, and what happens at the store.
  void describeOperands(llvm::raw_ostream &os) const {
    auto reading = [&](bool constant, Value packed) {
      if (constant)
        return "packed at compile time";
      return packed ? "packed per call" : "read in place";
    };
    os << "A " << reading(lhsData.has_value(), packedA) << ", B "
       << (packsBPerItem ? "packed per call, each panel by its work item"
                         : reading(rhsData.has_value(), packedB));
    if (epilogue)
      os << "; epilogue on the tile";
    if (transposeCopy)
      os << "; stored transposed";
    if (permuted)
      os << "; stored permuted (the transpose after it)";
  }

  /// The work items of the parallel loop (per image when the batch is a
  /// loop around it), their numbering and the slices of k.
  void describeItems(llvm::raw_ostream &os) const {
    const ItemPlan &plan = explained->plan;
    StringRef fixed = plan.alongRows ? "row tile" : "panel";
    StringRef fixedMany = plan.alongRows ? "row tiles" : "panels";
    StringRef swept = plan.alongRows ? "panel" : "row tile";
    StringRef sweptMany = plan.alongRows ? "panels" : "row tiles";
    countOf(os, explained->batches * plan.fixedUnits * plan.groups, "work item",
            "work items");
    if (shape.batch > 1 && explained->batches == 1)
      os << (parallelImages ? " per image (the images in parallel, each "
                              "task writing its images' operands)"
                            : " per image (a loop over the batch)");
    os << ": ";
    if (explained->batches > 1)
      os << explained->batches << " batches x ";
    countOf(os, plan.fixedUnits, fixed, fixedMany);
    os << " x ";
    countOf(os, plan.groups, "group", "groups");
    os << " of up to ";
    countOf(os, std::min(plan.perItem, plan.sweptUnits), swept, sweptMany);
    // The pool gives each thread a contiguous range of items: a range of
    // the major unit.
    bool rowTileMajor = plan.sweptFirst != plan.alongRows;
    os << ", " << (rowTileMajor ? "row-tile-major" : "panel-major");
    int64_t steps = explained->sliceSteps, slices = shape.k / steps;
    if (slices > 1) {
      os << "; k in " << slices << " slices of " << steps;
      if (int64_t last = shape.k - (slices - 1) * steps; last != steps)
        os << " (the last " << last << ")";
    }
  }

  /// The matmul and what its kernel now does (the transposing copy, the
  /// epilogue, the batch's staged buffers).
  void eraseReplaced() {
    if (transposeCopy)
      kiln::fuseProfiledKernels(op, transposeCopy);
    if (permuted)
      kiln::fuseProfiledKernels(op, permuted->transpose);
    op.erase();
    if (transposeCopy)
      transposeCopy.erase();
    if (epilogue)
      epilogue->erase();
    if (permuted) {
      permuted->transpose.erase();
      if (permuted->reshape)
        permuted->reshape->erase();
    }
    for (std::optional<StagedOperand> &operand : staged)
      if (operand)
        eraseBatchBuffer(*operand);
  }

  /// A batched operand computed by copies (an im2col matrix, an implicit
  /// GEMM's laid-out input), made one image at a time inside the batch loop
  /// (stagePerImage).
  struct StagedOperand {
    /// The batch's buffer and the ops that write it, in order: copies into
    /// it or a view of it, after at most one fill of all of it.
    Value buffer;
    /// The view of the buffer the matmul reads, if it collapses it.
    memref::CollapseShapeOp collapse;
    SmallVector<Operation *> writers;
    /// One image's buffer: the batch's with a unit batch dim; and as the
    /// matmul reads it (collapsed as the batch was). Null when the images
    /// run in parallel (parallelImages), each written into the batch's
    /// buffer.
    Value image, view;
  };

  /// A batched operand whose buffer is written right before the matmul by
  /// copies that read image n for image n (an im2col matrix: Col[n] from
  /// X[n]; an implicit GEMM's padded, phase-split input), after at most
  /// one fill, is instead written one image at a time inside the batch
  /// loop, into a buffer of one image; the fill (the padding, the same for
  /// every image) once before the loop. Written for the whole batch, the
  /// buffer leaves the cache before the matmul reads it back: ResNet's 3x3
  /// 256ch layer at 14x14, batch 8, writes a 14 MB matrix and ran at 96
  /// GFLOP/s, 110 at batch 1.
  std::optional<StagedOperand> findStagedOperand(unsigned operand) {
    if (matrices(operand) == 1)
      return std::nullopt;
    Value view = op.getDpsInputs()[operand];
    auto collapse = view.getDefiningOp<memref::CollapseShapeOp>();
    Value buffer = collapse ? collapse.getSrc() : view;
    // (A buffer that is both A and B, X @ X, is read as it is: staged as
    // one operand, the other would read the batch's buffer, no longer
    // written; as both, its writers would be erased twice.)
    if (!buffer.getDefiningOp<memref::AllocOp>() ||
        op.getDpsInputs()[0] == op.getDpsInputs()[1] ||
        !kiln::isDenseF32Buffer(buffer) ||
        (collapse && (collapse.getReassociationIndices()[0].size() != 1 ||
                      !collapse->hasOneUse())) ||
        cast<MemRefType>(buffer.getType()).getDimSize(0) != shape.batch)
      return std::nullopt;
    StagedOperand staged{buffer, collapse, {}, {}, {}};
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      if (user == op || user == collapse)
        continue;
      Operation *writer = writerOf(use);
      if (!writer)
        return std::nullopt;
      staged.writers.push_back(writer);
    }
    llvm::sort(staged.writers, [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
    if (staged.writers.empty() ||
        !onlyWritersBetween(staged.writers, op.getOperation()))
      return std::nullopt;
    for (Operation *writer : llvm::drop_begin(staged.writers))
      if (isa<linalg::FillOp>(writer))
        return std::nullopt;
    return staged;
  }

  /// Writes `staged` one image at a time (findStagedOperand): into a buffer
  /// of one image, its fill copied before the batch loop, or with the
  /// images in parallel into the batch's buffer, its fill kept.
  void stagePerImage(StagedOperand &staged) {
    // The writers' kernels (a concatenation's copies) now run in the batch
    // loop.
    kiln::fuseProfiledKernels(staged.writers.front(), op);
    if (parallelImages)
      return;
    auto type = cast<MemRefType>(staged.buffer.getType());
    SmallVector<int64_t> imageShape(type.getShape());
    imageShape[0] = 1;
    staged.image = memref::AllocOp::create(
        b, loc, MemRefType::get(imageShape, f32), b.getI64IntegerAttr(64));
    staged.view = staged.collapse
                      ? memref::CollapseShapeOp::create(
                            b, loc, staged.image,
                            staged.collapse.getReassociationIndices())
                            .getResult()
                      : staged.image;
    if (auto fill = dyn_cast<linalg::FillOp>(staged.writers.front())) {
      IRMapping mapping;
      mapping.map(staged.buffer, staged.image);
      b.clone(*fill, mapping);
    }
  }

  /// The op that writes the batch's buffer through `use` when it is one
  /// stageImage can redo per image: a fill of all of it, or a copy of
  /// image n into image n of it or of a view keeping its batch dim whole.
  static Operation *writerOf(OpOperand &use) {
    Value buffer = use.get();
    int64_t batch = cast<MemRefType>(buffer.getType()).getDimSize(0);
    Operation *user = use.getOwner();
    if (auto fill = dyn_cast<linalg::FillOp>(user))
      return fill.getDpsInits()[0] == buffer ? fill : nullptr;
    Value target = buffer;
    if (auto view = dyn_cast<memref::SubViewOp>(user)) {
      // (Unit dims may be dropped, the batch's not: a layout's phase plane.)
      if (!view->hasOneUse() || view.getDroppedDims()[0] ||
          view.getStaticOffsets()[0] != 0 ||
          view.getStaticSizes()[0] != batch ||
          view.getStaticStrides()[0] != 1 || !view.getType().hasStaticShape())
        return nullptr;
      target = view.getResult();
      user = *view->getUsers().begin();
    }
    if (auto copy = dyn_cast<memref::CopyOp>(user))
      return copy.getTarget() == target &&
                     cast<MemRefType>(copy.getSource().getType())
                             .getDimSize(0) == batch
                 ? copy
                 : nullptr;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || !kiln::isBufferCopy(generic) ||
        generic.getDpsInits()[0] != target)
      return nullptr;
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    AffineExpr image = getAffineDimExpr(0, generic.getContext());
    auto input = cast<MemRefType>(generic.getDpsInputs()[0].getType());
    if (!maps[1].isIdentity() || maps[0].getNumResults() == 0 ||
        maps[0].getResult(0) != image || !input.hasStaticShape() ||
        input.getDimSize(0) != batch ||
        llvm::any_of(maps[0].getResults().drop_front(),
                     [&](AffineExpr e) { return e.isFunctionOfDim(0); }))
      return nullptr;
    return generic;
  }

  /// Whether nothing from the first of `writers` to `last` (one block)
  /// writes memory but the writers and the zero fill of the matmul's
  /// output: the copies' inputs still hold the same values where the batch
  /// loop reads them.
  bool onlyWritersBetween(ArrayRef<Operation *> writers, Operation *last) {
    Operation *first = writers.front();
    if (first->getBlock() != last->getBlock() || !first->isBeforeInBlock(last))
      return false;
    linalg::FillOp fill = zeroFill();
    for (Operation *between = first; between != last;
         between = between->getNextNode())
      if (between != fill && !llvm::is_contained(writers, between) &&
          !kiln::isProfileHook(between) &&
          !isa<memref::AllocOp, memref::GetGlobalOp, arith::ConstantOp,
               ViewLikeOpInterface>(between))
        return false;
    return true;
  }

  /// Writes image `batch` of the staged operand into its buffer: each copy
  /// again, reading that image of its input.
  void stageImage(StagedOperand &staged, Value batch) {
    for (Operation *writer : staged.writers) {
      if (isa<linalg::FillOp>(writer))
        continue;
      Value source = writer->getOperand(0), target = writer->getOperand(1);
      IRMapping mapping;
      mapping.map(source, slice(source, batch, 1));
      auto view = target.getDefiningOp<memref::SubViewOp>();
      if (!staged.image)
        mapping.map(target, view ? imageView(view, staged.buffer, batch)
                                 : slice(staged.buffer, batch, 1));
      else
        mapping.map(target,
                    view ? imageView(view, staged.image, b.getIndexAttr(0))
                         : staged.image);
      b.clone(*writer, mapping);
    }
  }

  /// Images [from, from + count) of `buffer`, all of the other dims.
  Value slice(Value buffer, Value from, int64_t count) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    offsets[0] = from;
    SmallVector<OpFoldResult> sizes;
    for (int64_t size : type.getShape())
      sizes.push_back(b.getIndexAttr(size));
    sizes[0] = b.getIndexAttr(count);
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
  }

  /// The part of image `at` of `buffer` (the batch's buffer, or one with a
  /// unit batch) that `view` of the batch's buffer takes of each image, its
  /// unit dims dropped alike.
  Value imageView(memref::SubViewOp view, Value buffer, OpFoldResult at) {
    SmallVector<OpFoldResult> offsets = view.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = view.getMixedSizes();
    offsets[0] = at;
    sizes[0] = b.getIndexAttr(1);
    SmallVector<int64_t> shape(view.getType().getShape());
    shape[0] = 1;
    auto type = memref::SubViewOp::inferRankReducedResultType(
        shape, cast<MemRefType>(buffer.getType()), offsets, sizes,
        view.getMixedStrides());
    return memref::SubViewOp::create(b, loc, type, buffer, offsets, sizes,
                                     view.getMixedStrides());
  }

  /// The batch's writers and buffer, now unread.
  static void eraseBatchBuffer(StagedOperand &staged) {
    for (Operation *writer : llvm::reverse(staged.writers)) {
      // Images in parallel still read the buffer, filled once.
      if (!staged.image && isa<linalg::FillOp>(writer))
        continue;
      Value target = writer->getOperands().back();
      writer->erase();
      if (Operation *view = target.getDefiningOp<memref::SubViewOp>())
        if (view->use_empty())
          view->erase();
    }
    SmallVector<Operation *> views(staged.buffer.getUsers());
    for (Operation *view : views)
      if (view->getNumResults() && view->use_empty())
        view->erase();
    if (staged.buffer.use_empty())
      staged.buffer.getDefiningOp()->erase();
  }

  /// The tile of packed A that row tile `tile` of batch element `batch`
  /// reads: a batched constant A has every matrix's tiles.
  Value packedATile(Value batch, Value tile) {
    return lhsData && shape.lhsBatched ? add(mul(batch, mTiles), tile) : tile;
  }

  /// The panel of packed B that panel `panel` of batch element `batch`
  /// reads (the same for a batched constant B).
  Value packedBPanel(Value batch, Value panel) {
    return rhsData && shape.rhsBatched ? add(mul(batch, nPanels), panel)
                                       : panel;
  }

  /// Where batch element `batch` starts in operand `operand`'s [batch *
  /// rows, cols] view (B's rows: rhsPitch a matrix when its matrices are
  /// spaced): 0 when it is unbatched or staged into a buffer of one image.
  Value operandBase(unsigned operand, Value batch, int64_t rows) {
    if (operand == 1 && rhsPitch)
      rows = rhsPitch;
    return batched(operand) && !stagedImage(operand) ? mul(batch, rows)
                                                     : index(0);
  }

  /// Whether operand `operand` is staged into a buffer of one image.
  bool stagedImage(unsigned operand) const {
    return staged[operand] && staged[operand]->image;
  }

  /// Operand `operand` as the matmul reads it: its staged image or itself.
  Value operandView(unsigned operand) {
    return stagedImage(operand) ? staged[operand]->view
                                : op.getDpsInputs()[operand];
  }

  /// Whether a batch staged per image runs its images in parallel
  /// (kMinParallelImages).
  bool imagesPayInParallel() const {
    return shape.batch >= kiln::kMinParallelImages &&
           shape.m * shape.n * shape.k <= kMaxParallelImageWork;
  }

  /// Whether emitTiles numbers its items swept-major (block by block of
  /// swept units, each block over every fixed unit; `groups` blocks per
  /// fixed unit): a thread's share of the items is then a
  /// range of the swept operand (A's rows; along rows, C's columns), read
  /// once, while it reads the fixed one (B's panels; along rows, A's tiles)
  /// again for each block. Numbered fixed-major it reads A again for each
  /// panel instead. Reading an operand again costs little while it stays
  /// in L2 (half of `l2Bytes`), so the order is the one that reads the
  /// fewest bytes again from further away. When neither is read again, a
  /// thread reads its share of the operand its range splits and all of the
  /// other, from L3 or the other core's L2: the ranges split B when it is
  /// more than kSplitBFactor times A's size, else A's rows (a 1x1
  /// convolution at 7x7 or 14x14 whose filters outweigh its input:
  /// MobileNetV2 b1 on a Granite Rapids-class host, 2 threads, 2.60 -> 2.53
  /// ms; its 960 -> 160 at 7x7 65 -> 58 us, and the 3x3 after a 96 -> 576
  /// at 14x14, now reading the channels its thread wrote, 26 -> 19). When
  /// A does not stay in L2 either way, swept-major too, whatever B's bytes:
  /// B's panels are prefetched a panel ahead by the tiles before them
  /// (streamNextPanel), A's blocks are not, and the k loop waited on them
  /// (Zen 4, 1 thread: 1024 x 3072 x 768, A 12 MB, B 9 MB, 55.9 -> 45.7
  /// ms, 2 threads 27.0 -> 23.8; BERT layer b8 162 -> 142 ms; 128 x 3072
  /// x 768, swept-major rather than panel-major in slices of k, 6.02 ->
  /// 5.87 ms). In a
  /// convolutional network (filters and activations small enough, the
  /// activations the larger) each
  /// thread's range is then its share of the pixels, the share the layers
  /// before and after it read and write too: the threads' data stays in
  /// their own L2 between layers (MobileNetV2 at batch 1, 2 threads, with
  /// the window ops' bands: 3.53 -> 3.33 ms; its 1x1 convolution 32 -> 16
  /// at 112x112 110 -> 70 us). A 512^3 GEMM at 2 threads: 0.90 -> 0.82 ms
  /// (each thread packs and reads its half of A, not all of it).
  bool sweptMajor(bool alongRows, int64_t groups) const {
    // Along rows, A's tiles are read again by every item when they take a
    // quarter of L2 (measured so on MobileNetV2's 1x1 convolutions).
    if (alongRows)
      return 4 * shape.k * mTiles * mr <= l2Bytes / 4;
    auto readAgain = [&](int64_t bytes, int64_t times) {
      return bytes <= l2Bytes / 2 ? 0 : bytes * (times - 1);
    };
    // (Windowed rows read the input's planes: each value for several taps.)
    int64_t aBytes = shape.windowedRows()
                         ? 4 * shape.channels * shape.channelLength
                         : 4 * shape.m * shape.k;
    int64_t bBytes = 4 * shape.k * nPanels * nr;
    if (readAgain(aBytes, nPanels) > 0)
      return true;
    if (readAgain(bBytes, groups) > 0)
      return false;
    // Neither is read again: a thread then reads its share of the operand
    // its range splits and all of the other (from L3, or the other core's
    // L2), so the range splits B when it is the larger by far. Near a tie
    // swept-major still wins: 512^3 (B's padded panels 3% larger than A)
    // ran 5% slower panel-major on 1 thread and 7% on 2. A single group
    // splits the panels either way.
    return groups == 1 || bBytes <= kSplitBFactor * aBytes;
  }

  /// Bytes a panel-major tile's working set takes per step of k: its rows
  /// of A and two panels of `nr` columns (the one read and the next one
  /// streaming in). Past half of the L2 budget (a core's L2), the panel
  /// being read loses lines to the next one and its tiles reread them from
  /// memory (reductionSliceSteps).
  static int64_t panelWorkingSetBytes(const MatmulShape &shape, int64_t nr) {
    return 4 * (shape.m + 2 * nr) * shape.k;
  }

  /// Vectors per row of the register tile: the target's, but 2 for an
  /// implicit GEMM with pixels as rows whose A and two panels of the
  /// target's width outgrow half of the L2 budget (a core's L2) and of 2
  /// vectors do not. (Measured before windowed rows took slices of k,
  /// windowedSliceSteps, which then cut what still outgrows it.)
  /// ResNet-style's 3x3 512 -> 512 at 7x7 (49 x 4608 x 512: panels of 885
  /// KB, 590 KB with 2 vectors) streams its 9.4 MB of filters from memory:
  /// in the model on a Granite Rapids-class core (2 MiB L2), 1 thread,
  /// 1.87-1.91 -> 1.78-1.83 ms in a busy period, 1.39-1.68 -> 1.39-1.47 in
  /// a quieter one; alone, its filters in L3, the same.
  static int64_t tileVectors(const MatmulShape &shape,
                             const KernelTarget &target) {
    int64_t vectors = target.vectors;
    if (!shape.windowedRows() || vectors <= 2)
      return vectors;
    int64_t half = target.l2Bytes / 2;
    bool outgrows = panelWorkingSetBytes(shape, vectors * target.lanes) > half;
    bool narrowFits = panelWorkingSetBytes(shape, 2 * target.lanes) <= half;
    return outgrows && narrowFits ? 2 : vectors;
  }

  /// Vectors per row of the wide tile that a narrow matmul takes instead of
  /// the full-rate AVX-512 one (8 x 48): 6 x 64, the same 24 accumulators.
  static constexpr int64_t kWidePanelVectors = 4;

  /// Whether a plain matmul at most two 64-column panels wide needs fewer
  /// of them than of the target's 48 columns: attention's P V (N = 64, the
  /// head size) and Q K^T (N = 128, the sequence), whose 48-column panels
  /// leave a last one of 16 or 32 columns. Each panel reads all of A again
  /// and, with k only 64 or 128 steps, a narrow panel's tiles pay their
  /// fixed cost for a third of the FMAs. BERT layer b8, 1 thread (Granite
  /// Rapids-class core, `--profile`): Q K^T 1416 -> 1282 us, P V 1702 ->
  /// 1524. Wider matmuls gain nothing (512^3, 1024^3, 64 x 1024 x 4096:
  /// within noise or slower in 6 x 64 tiles), and only a 32-register
  /// target with 3 vectors a row has the registers (24 accumulators, 4 B
  /// vectors and a broadcast).
  static bool widerPanelPays(const MatmulShape &shape,
                             const KernelTarget &target) {
    int64_t wide = kWidePanelVectors * target.lanes;
    if (!target.shapeTiles || target.vectors != 3 || target.lanes != 16 ||
        shape.windowedRows() || !shape.tapOffsets.empty() || shape.n > 2 * wide)
      return false;
    return llvm::divideCeil(shape.n, wide) <
           llvm::divideCeil(shape.n, target.vectors * target.lanes);
  }

  /// The target's tile, or the one that a matmul's shape and operands take
  /// instead (widerPanelPays, tallerTilePays, tileVectors). A wide or tall
  /// tile keeps the target's accumulator count.
  static TileShape tileShape(const MatmulShape &shape,
                             const KernelTarget &target, bool streamsB) {
    auto sameAccumulators = [&](int64_t vectors) {
      int64_t rows = target.rows * target.vectors / vectors;
      return TileShape{std::max<int64_t>(1, rows), vectors};
    };
    if (widerPanelPays(shape, target))
      return sameAccumulators(kWidePanelVectors);
    if (tallerTilePays(shape, target, streamsB) ||
        narrowerPanelsPay(shape, target))
      return sameAccumulators(kTallTileVectors);
    return {target.rows, tileVectors(shape, target)};
  }

  /// Estimated cycles per step of k of all of C's tiles of `rows` x
  /// `vectors` (at most): each tile's accumulators take one FMA a step, two
  /// FMAs a cycle (AVX2 on Zen 3 and 4), but at least kFMALatency cycles,
  /// and the step kTileStepOverhead more (its B loads and broadcasts).
  static int64_t tileCycles(const MatmulShape &shape, int64_t rows,
                            int64_t vectors, int64_t lanes) {
    rows = tileRows(shape.m, rows, vectors);
    auto cycles = [](int64_t accumulators) {
      return std::max<int64_t>(llvm::divideCeil(accumulators, 2), kFMALatency) +
             kTileStepOverhead;
    };
    int64_t panelVectors = llvm::divideCeil(shape.n, lanes);
    int64_t total = 0;
    for (int64_t v = 0; v < panelVectors; v += vectors) {
      int64_t width = std::min(vectors, panelVectors - v);
      total += shape.m / rows * cycles(rows * width) +
               (shape.m % rows ? cycles(shape.m % rows * width) : 0);
    }
    return total;
  }

  /// Whether a 16-register target (AVX2's 4 x 24 tiles) takes 6 x 16 tiles
  /// because a ragged last panel of one vector, or a ragged row tile, would
  /// leave its accumulators waiting on the FMA latency: at least 5% fewer
  /// cycles (tileCycles). 1 thread on Zen 3: a grouped convolution of 32
  /// output channels a group as pixels as rows (3x3 2048 -> 2048 in 64
  /// groups at 7x7, 49 x 288 x 32 a group) 0.96 -> 0.74 ms; 6 rows through
  /// a linear layer (6 x 3072 x 768, 6 x 768 x 3072: tiles of 4 and 2 rows
  /// against one of 6) 387 -> 300 and 350 -> 281 us; by 5-7% fewer cycles,
  /// 10 rows (tiles of 4, 4 and 2 against 6 and 4) 5-13% faster and
  /// ResNet's 3x3 / 2 convolutions (784 x 576 x 128, 784 x 1152 x 128, 196
  /// x 2304 x 256 as pixels as rows: 5 panels and a vector against 8) 6-8%.
  /// 512^3 (21 panels and a vector, 1% fewer cycles) keeps 4 x 24, faster
  /// there (tallerTilePays), as do 20 rows (more cycles in 6 x 16; 10-15%
  /// slower).
  static bool narrowerPanelsPay(const MatmulShape &shape,
                                const KernelTarget &target) {
    if (!target.shapeTiles || target.vectors != 3 || target.lanes != 8 ||
        target.rows != 4)
      return false;
    int64_t tall = target.rows * target.vectors / kTallTileVectors;
    return tileCycles(shape, tall, kTallTileVectors, target.lanes) * 20 <
           tileCycles(shape, target.rows, target.vectors, target.lanes) * 19;
  }

  /// Vectors per row of the tall tile that a 16-register target (AVX2's 4 x
  /// 24) takes when B streams: 6 x 16, the same 12 accumulators.
  static constexpr int64_t kTallTileVectors = 2;

  /// Whether `op`'s B is an activation: not a constant (packed at compile
  /// time) nor an implicit GEMM's shifted input.
  static bool streamsB(linalg::GenericOp op, const MatmulShape &shape,
                       SymbolTable &symbols) {
    return shape.tapOffsets.empty() && !shape.windowedRows() &&
           !constantGlobal(op.getDpsInputs()[1], symbols);
  }

  /// Whether a 16-register target (AVX2: 4 x 24 tiles, 12 accumulators, 3 B
  /// vectors and a broadcast) takes 6 x 16 tiles instead: when B is an
  /// activation (a 1x1 convolution's input with the pixels as columns,
  /// attention's K^T and V), not packed at compile time, each B row of a
  /// panel comes from L2 or beyond once per tile, and 6 rows a B vector
  /// need a third fewer B loads per FMA than 4. On a Zen 3 core (1 thread,
  /// `--profile`, best of 6) MobileNetV2 b1's 1x1 convolutions 144 -> 24
  /// at 56x56 with the residual 349 -> 252 us, 192 -> 32 at 28x28 154 ->
  /// 113, 64 -> 384 at 14x14 125 -> 111; the expansions with k = 16-32
  /// within 3%. With B packed at compile time the 4 x 24 tile keeps it
  /// (512^3 92.6 -> 89.2 GFLOP/s in 6 x 16).
  static bool tallerTilePays(const MatmulShape &shape,
                             const KernelTarget &target, bool streamsB) {
    return target.shapeTiles && streamsB && target.vectors == 3 &&
           target.lanes == 8 && target.rows == 4;
  }

  /// The rows of C's tiles for M rows, at most `maxRows`: the count whose
  /// tiles take the fewest cycles per step of k, where a tile of r rows
  /// takes r x `vectors` FMAs but at least kFMALatency cycles (each
  /// accumulator is one chain of dependent FMAs). 49 rows (a 7x7 output as
  /// rows) are 7 tiles of 7, not 6 of 8 and a 1-row tile that waits on
  /// the FMA latency for 2 FMAs a step.
  static int64_t tileRows(int64_t m, int64_t maxRows, int64_t vectors) {
    auto cycles = [&](int64_t rows) {
      return std::max(rows * vectors, kFMALatency);
    };
    int64_t best = maxRows, bestCost = std::numeric_limits<int64_t>::max();
    for (int64_t rows = maxRows; rows >= std::max<int64_t>(1, maxRows / 2);
         --rows) {
      int64_t cost =
          m / rows * cycles(rows) + (m % rows ? cycles(m % rows) : 0);
      if (cost < bestCost) {
        best = rows;
        bestCost = cost;
      }
    }
    return best;
  }

  /// Whether an operand read in place, `cols` floats per row, would have
  /// the tile's loads of consecutive rows collide in the same L1 sets (a row
  /// pitch that is a multiple of 2 KiB), so copying it is worth the pass.
  static bool needsPacking(int64_t cols) { return (cols * 4) % 2048 == 0; }

  /// Whether the MR rows of A a tile reads in place, `cols` floats per row,
  /// would evict each other from L1: their pitch puts them in the same sets
  /// (needsPacking) and, with the lines of B's panel streaming through and
  /// of C, they take more than the sets' ways (`l1Ways`). Zen 4 (8 ways):
  /// K = 1024 shapes ran at half speed in place; an 8-way L1 packs A for
  /// any such pitch, whatever the tile's rows, as it was measured. An
  /// Emerald Rapids core (12 ways) reads them in place faster than it packs
  /// them, even with all 8 rows in one set: 128 x K x 768 for K = 512,
  /// 1024, 2048 1-2% (1 thread) and 4-5% (2 threads, which read each
  /// other's packed rows), 512^3 4% / 3%, 1024^3 2% / 1%.
  bool tileRowsCollide(int64_t cols) const {
    if (!needsPacking(cols))
      return false;
    return l1Ways <= kNarrowL1Ways || mr + kL1WaysForStreams > l1Ways;
  }

  /// Whether an operand read in place one row per step of k (B, or a
  /// transposed A: an im2col matrix, or a 1x1 convolution's input in NCHW)
  /// is better packed because the steps are too short to hide its reads:
  /// each step touches one or two new cache lines, which a tile's step
  /// covers when its vector FMAs run at half rate (Zen 4's AVX-512: 16
  /// FMAs, 16 cycles) but not at full rate (AVX2: 12 FMAs, 6 cycles on two
  /// pipes; Intel's AVX-512: 16 FMAs, 8 cycles), from `longReduction` steps
  /// on (the target's). AVX2, 3x3 512 -> 512 at 7x7 (K = 4608, the im2col
  /// matrix as a transposed A): 3.6 -> 2.45 ms with it packed, 3x3 256 ->
  /// 256 at 14x14 (K = 2304) 2.4-2.7 -> 2.4; on Emerald Rapids the 7x7
  /// layer runs 2.54 -> 1.65 ms (1 thread); AVX-512 on Zen 4 gains nothing.
  /// Over a batch of small images, see imagesPayForPackLoop.
  bool stepsOutrunRows() const {
    return !halfRateVectors && shape.k >= longReduction;
  }

  /// Whether a batch's images are large enough for a loop over them that
  /// packs an operand per image (each image's tiles a parallel loop, a
  /// dispatch and a wait each) where the operand is packed only because its
  /// steps outrun the rows (stepsOutrunRows); a B whose work items pack it
  /// needs no such loop (packsPanelsInItems). On Zen 3 (long-reduction
  /// 128), MobileNetV2 and the ResNet-style CNN at batch 8 (and the
  /// latter's Winograd matmuls, 16 of 128 x 128 x 196) ran 3-5% faster
  /// packed per image; attention's P V (12 heads of 128 x 128 x 64) 1-3%
  /// slower on 2 threads packed in a loop per head, 9% (1 thread) and 19%
  /// (2) faster with its panels packed by the items of one loop over all
  /// heads, paired runs.
  bool imagesPayForPackLoop() const {
    return shape.batch == 1 ||
           shape.m * shape.n * shape.k >= kMinPackedImageWork;
  }

  /// Whether the batch runs one image at a time for copies made per image:
  /// operands staged per image (findStagedOperand) or A packed per call.
  bool copiesOperandsPerImage() const {
    return packsAPerCall || llvm::any_of(staged, [](auto &operand) {
             return operand.has_value();
           });
  }

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, index(c));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t c) { return add(x, index(c)); }

  void forLoop(int64_t lb, int64_t ub, int64_t step,
               function_ref<void(Value)> body) {
    forLoop(index(lb), index(ub), step, body);
  }
  void forLoop(Value lb, Value ub, int64_t step,
               function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, index(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  /// The linalg.fill of 0 right before the matmul that initializes its
  /// output, if any.
  linalg::FillOp zeroFill() {
    auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
    if (!fill || !fill.hasPureBufferSemantics() ||
        fill.getDpsInits()[0] != op.getDpsInits()[0])
      return nullptr;
    auto zero = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
    if (!value || !value.getValue().isZero())
      return nullptr;
    return fill;
  }

  /// The zero fill is dropped: the accumulators start at zero instead.
  bool eraseZeroFill() {
    linalg::FillOp fill = zeroFill();
    if (fill)
      fill.erase();
    return bool(fill);
  }

  /// With the output pixels as rows (WindowToLinalg's pixelsAsRowsPays), a
  /// convolution's matmul T[b][p][o] (zero-filled) is followed by the copy
  /// Y[b][o][p] = T[b][p][o], T's only reader. The tiles then store C^T
  /// straight into Y (storeTransposed), and the copy and T go. Returns the
  /// copy.
  /// A transpose the kernel's final stores replace (findPermutedTarget).
  struct PermutedTarget {
    linalg::TransposeOp transpose;
    /// The view the transpose reads the result through (its only user), or
    /// null.
    Operation *reshape;
    /// The transpose's input shape: C (or the epilogue's output) reshaped.
    SmallVector<int64_t> shape;
    /// C's columns as the kernel stores them.
    int64_t columns;
    /// 0 when the transpose keeps the last dim last; else how many of C's
    /// row dims it moves last (attention's K^T: [B, S, H, D] -> [B, H, D,
    /// S], 1), whose product, `innerRows` (S), is how many consecutive rows
    /// of C form each row of its output.
    int64_t movedDims = 0, innerRows = 1;
    /// With movedDims, the transpose's output as [rows / innerRows *
    /// columns, innerRows]: row (r / innerRows) * columns + c holds C's
    /// column c of that block of rows.
    Value rowsLastView;
  };

  /// How many of C's row dims `permutation` moves last when `shape` is C's
  /// result reshaped (rows then `columns`) and the permutation reads [row
  /// dims before a, the column dims from p in order, row dims a to p] (K^T:
  /// [B, S, H, D] with perm [0, 2, 3, 1] moves 1); 0 if it does not.
  static int64_t rowDimsMovedLast(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> permutation,
                                  int64_t columns) {
    int64_t rank = shape.size(), p = rank, trailing = 1;
    while (p > 0 && trailing < columns)
      trailing *= shape[--p];
    if (trailing != columns || p == 0)
      return 0;
    for (int64_t a = 0; a < p; ++a) {
      SmallVector<int64_t> expected;
      for (int64_t d = 0; d < a; ++d)
        expected.push_back(d);
      for (int64_t d = p; d < rank; ++d)
        expected.push_back(d);
      for (int64_t d = a; d < p; ++d)
        expected.push_back(d);
      if (ArrayRef(expected) == permutation)
        return p - a;
    }
    return 0;
  }

  /// The linalg.transpose that reads the kernel's final result (C, or the
  /// epilogue's output), directly or reshaped, when nothing else reads that
  /// result and either
  /// - the transpose keeps the last dim last in whole vectors: a head split
  ///   [B, S, H, D] -> [B, H, S, D] after attention's Q and V projections,
  ///   or the merge back after P V. Each stored vector then lies in one line
  ///   of D values of the transpose's output, and the kernel stores it there
  ///   (storePermuted) instead of the transpose copying it; or
  /// - it moves C's rows last, each tile's rows within one row of its
  ///   output (rowDimsMovedLast): attention's K^T. The kernel transposes
  ///   the tile in registers, as for a convolution's pixels as rows, and
  ///   stores each column's rows in that row (storeRowsLast).
  std::optional<PermutedTarget> findPermutedTarget(int64_t columns) {
    if (transposeCopy || shape.shiftsB() || (epilogue && epilogue->getPitch()))
      return std::nullopt;
    Operation *last = epilogue ? epilogue->getOp().getOperation() : op;
    Value result =
        epilogue ? epilogue->getOp().getDpsInits()[0] : op.getDpsInits()[0];
    auto transpose =
        dyn_cast_or_null<linalg::TransposeOp>(kiln::nextComputeOp(last));
    if (!transpose)
      return std::nullopt;
    Value input = transpose.getInput();
    Operation *reshape = input == result ? nullptr : input.getDefiningOp();
    if (reshape && !(isa<memref::ReshapeOp, memref::ExpandShapeOp>(reshape) &&
                     reshape->getOperand(0) == result && reshape->hasOneUse()))
      return std::nullopt;
    // A temporary: a function's output buffer is read by its caller.
    if (!result.getDefiningOp<memref::AllocOp>())
      return std::nullopt;
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    auto inputType = cast<MemRefType>(input.getType());
    Value output = transpose.getInit();
    if (!inputType.hasStaticShape() || !kiln::isDenseF32Buffer(output) ||
        !kiln::isDenseF32Buffer(result))
      return std::nullopt;
    // Whole vectors of C's rows land in whole vectors of the last dim when
    // both are a whole number of vectors long.
    bool keepsLast = permutation.back() == int64_t(permutation.size()) - 1;
    if (keepsLast && (inputType.getShape().back() % lanes || columns % lanes))
      return std::nullopt;
    // Moving the rows last: every tile full (M a whole number of them) and
    // within one output row, its transposed columns at most a vector.
    ArrayRef<int64_t> inputShape = inputType.getShape();
    int64_t movedDims =
        keepsLast ? 0 : rowDimsMovedLast(inputShape, permutation, columns);
    int64_t innerRows = std::accumulate(
        permutation.end() - movedDims, permutation.end(), int64_t(1),
        [&](int64_t size, int64_t d) { return size * inputShape[d]; });
    if (!keepsLast && (!movedDims || innerRows % mr || shape.m % mr ||
                       int64_t(llvm::PowerOf2Ceil(mr)) > lanes))
      return std::nullopt;
    for (Operation *user : result.getUsers())
      if (user != last && user != op && user != transpose && user != reshape &&
          !isa<linalg::FillOp>(user))
        return std::nullopt;
    // The kernel is emitted before the transpose's output is allocated.
    if (Operation *definition = output.getDefiningOp()) {
      auto alloc = dyn_cast<memref::AllocOp>(definition);
      if (!alloc || alloc->getNumOperands() ||
          alloc->getBlock() != op->getBlock())
        return std::nullopt;
      if (!alloc->isBeforeInBlock(op))
        alloc->moveBefore(op);
    }
    return PermutedTarget{transpose, reshape,   llvm::to_vector(inputShape),
                          columns,   movedDims, innerRows,
                          Value()};
  }

  /// The transpose's output as [rows / innerRows * columns, innerRows]
  /// (PermutedTarget::rowsLastView): its leading dims (the row blocks and
  /// C's columns) collapsed, then the moved rows.
  Value rowsLastView() {
    Value output = permuted->transpose.getInit();
    int64_t rank = cast<MemRefType>(output.getType()).getRank();
    SmallVector<ReassociationIndices> groups(2);
    for (int64_t d = 0; d < rank; ++d)
      groups[d < rank - permuted->movedDims ? 0 : 1].push_back(d);
    return memref::CollapseShapeOp::create(b, loc, output, groups);
  }

  /// Stores `acc`, the values from (`row`, `column`) of the kernel's final
  /// result, where the transpose after it would have copied them (whole
  /// vectors: findPermutedTarget wants C's rows a whole number of them).
  void storePermuted(Value acc, Value row, Value column) {
    // The index into the reshaped result, last dim first (divisions and
    // remainders by 1 fold away).
    Value linear = add(mul(row, permuted->columns), column);
    ArrayRef<int64_t> sizes = permuted->shape;
    SmallVector<Value> indices(sizes.size());
    for (size_t d = sizes.size() - 1; d > 0; --d) {
      indices[d] = arith::RemUIOp::create(b, loc, linear, index(sizes[d]));
      linear = arith::DivUIOp::create(b, loc, linear, index(sizes[d]));
    }
    indices[0] = linear;
    SmallVector<Value> at;
    for (int64_t d : permuted->transpose.getPermutation())
      at.push_back(indices[d]);
    vector::StoreOp::create(b, loc, acc, permuted->transpose.getInit(), at);
  }

  linalg::GenericOp findTransposingCopy() {
    Value product = op.getDpsInits()[0];
    auto productType = cast<MemRefType>(product.getType());
    linalg::FillOp fill = zeroFill();
    // (A unit batch may have been dropped: [p][o] -> [o][p].)
    int64_t rank = productType.getRank();
    if (shape.shiftsB() || llvm::PowerOf2Ceil(mr) > uint64_t(lanes) ||
        (rank != 3 && (rank != 2 || shape.batch != 1)) || !fill)
      return nullptr;
    auto copy = dyn_cast_or_null<linalg::GenericOp>(kiln::nextComputeOp(op));
    if (!copy || !kiln::isBufferCopy(copy) || copy.getDpsInputs()[0] != product)
      return nullptr;
    SmallVector<int64_t> swapLast = {0, 2, 1};
    if (rank == 2)
      swapLast = {1, 0};
    SmallVector<AffineMap> maps = copy.getIndexingMapsArray();
    if (maps[0] != AffineMap::getPermutationMap(swapLast, op.getContext()) ||
        !maps[1].isIdentity())
      return nullptr;
    Value transposed = copy.getDpsInits()[0];
    SmallVector<int64_t> transposedShape = {shape.batch, shape.n, shape.m};
    if (!kiln::isDenseF32Buffer(transposed) ||
        cast<MemRefType>(transposed.getType()).getShape() !=
            ArrayRef(transposedShape).take_back(rank))
      return nullptr;
    // A temporary, which only the copy reads: a function's output buffer
    // (or a view of one) is read by its caller, and the kernel would store
    // only the transposed copy.
    if (!product.getDefiningOp<memref::AllocOp>())
      return nullptr;
    for (Operation *user : product.getUsers())
      if (user != op && user != copy && user != fill)
        return nullptr;
    // The kernel goes where the copy is, after Y's allocation.
    b.setInsertionPoint(copy);
    return copy;
  }

  /// `buffer` as a rank-`rank` view (2: [rows, last dim], 1: [elements],
  /// 0: a scalar), collapsing leading dims; unit dims only for rank 0.
  Value flatten(Value buffer, int64_t rank) {
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getRank() == rank)
      return buffer;
    SmallVector<ReassociationIndices> groups(rank);
    if (rank > 0) {
      for (int64_t d = 0; d + 1 < type.getRank(); ++d)
        groups[0].push_back(d);
      groups.back().push_back(type.getRank() - 1);
    }
    return memref::CollapseShapeOp::create(b, loc, buffer, groups);
  }

  /// An implicit GEMM's filters [(groups,) O, C, taps...] as its A, the
  /// [(groups *) O, C * taps] matrix (read in place when computed at run
  /// time; constant ones are packed from their data).
  Value filterMatrix(Value filters) {
    auto type = cast<MemRefType>(filters.getType());
    int64_t rowDims = shape.lhsBatched ? 2 : 1;
    ReassociationIndices rows, columns;
    for (int64_t d = 0; d < type.getRank(); ++d)
      (d < rowDims ? rows : columns).push_back(d);
    return memref::CollapseShapeOp::create(
        b, loc, filters, SmallVector<ReassociationIndices>{rows, columns});
  }

  /// `buffer` [batch, rows, cols], its matrices `pitch` rows apart, as
  /// the [(batch - 1) * pitch + rows, cols] view of its rows: matrix b's
  /// row r is row b * pitch + r.
  Value rowsView(Value buffer, int64_t pitch) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t rows = (type.getDimSize(0) - 1) * pitch + type.getDimSize(1),
            cols = type.getDimSize(2);
    auto [strides, offset] = type.getStridesAndOffset();
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    OpFoldResult start = ShapedType::isDynamic(offset)
                             ? OpFoldResult(metadata.getOffset())
                             : OpFoldResult(b.getIndexAttr(offset));
    auto viewType = MemRefType::get(
        {rows, cols}, f32,
        StridedLayoutAttr::get(b.getContext(), offset, {cols, 1}));
    return memref::ReinterpretCastOp::create(
        b, loc, viewType, metadata.getBaseBuffer(), start,
        {b.getIndexAttr(rows), b.getIndexAttr(cols)},
        {b.getIndexAttr(cols), b.getIndexAttr(1)});
  }

  Value allocPacked(int64_t tiles, int64_t width) {
    auto type = MemRefType::get({tiles, shape.k, width}, f32);
    return memref::AllocOp::create(b, loc, type, b.getI64IntegerAttr(64));
  }

  Value zero() {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  }

  /// A[row][k] of batch element `batch`, read in place (from the [batch *
  /// M, K] view of A, or the [batch * K, M] view of a transposed A).
  Value loadA(Value batch, Value row, Value k) {
    if (shape.lhsTransposed) {
      Value base = operandBase(0, batch, shape.k);
      return memref::LoadOp::create(b, loc, lhs, ValueRange{add(base, k), row});
    }
    Value base = operandBase(0, batch, shape.m);
    return memref::LoadOp::create(b, loc, lhs, ValueRange{add(base, row), k});
  }

  /// Ap[t][k][r] = A[t * MR + r][k] of batch element `batch`, and 0 in the
  /// rows of the last tile past M (rewritten on every call: the arena bytes
  /// under the padding may have held another buffer in between). Vector
  /// code: a transposed A's MR values of one k are consecutive, a copy
  /// (packTransposedA); an A stored by rows is transposed by blocks of MR
  /// rows x `lanes` k's in registers (kiln::transposeBlock).
  void packA(Value batch) {
    Value packed = packedA;
    Value base = operandBase(0, batch, shape.lhsTransposed ? shape.k : shape.m);
    int64_t block = llvm::PowerOf2Ceil(mr);
    bool vectorized = block <= lanes;
    if (vectorized && shape.lhsTransposed) {
      packTransposedA(base, block);
      return;
    }
    auto copyTile = [&](Value tile, int64_t rows) {
      Value row0 = mul(tile, mr);
      if (vectorized) {
        auto packBlock = [&](Value k, int64_t count) {
          SmallVector<Value> columns;
          for (int64_t r = 0; r < block; ++r)
            columns.push_back(
                r < rows ? loadMasked(lhs, {add(base, add(row0, r)), k}, count,
                                      lanes)
                         : zeroVector(lanes));
          kiln::transposeBlock(b, loc, columns);
          // k + i's MR values: vector i mod block, from lane (i / block) *
          // block.
          for (int64_t i = 0; i < count; ++i)
            storeMasked(lanesOf(columns[i % block], (i / block) * block, block),
                        packed, {tile, add(k, i), index(0)}, mr);
        };
        int64_t whole = shape.k / lanes * lanes;
        forLoop(0, whole, lanes, [&](Value k) { packBlock(k, lanes); });
        if (whole < shape.k)
          packBlock(index(whole), shape.k - whole);
        return;
      }
      forLoop(0, shape.k, 1, [&](Value k) {
        for (int64_t r = 0; r < mr; ++r) {
          Value v = r < rows ? loadA(batch, add(row0, r), k) : zero();
          memref::StoreOp::create(b, loc, v, packed,
                                  ValueRange{tile, k, index(r)});
        }
      });
    };
    int64_t fullTiles = shape.m / mr;
    parallelLoop(fullTiles, fullTiles * shape.k * mr,
                 [&](Value tile) { copyTile(tile, mr); });
    if (shape.m % mr)
      copyTile(index(fullTiles), shape.m % mr);
  }

  /// packA of a transposed A (A^T[k][m], a 1x1 convolution's input with the
  /// pixels as rows) from `base`, the tiles' MR values of each k loaded as
  /// `block` lanes: groups of tiles that cover up to a cache line's worth of
  /// a row of A^T (4 of 4 rows, 3 of 5, 2 of 6 to 8) are copied together, k
  /// by k (at least kMinPackGroups groups), so a line comes into L1 once or
  /// twice (twice where a group straddles lines: rows not 64-byte aligned,
  /// or tiles of 3, 5, 6 or 7 rows), not once per tile (a row of A^T is a
  /// plane: 784 bytes at 14 x 14, and a tile's K lines of 576 channels
  /// outgrow L1 before the next tile reads the rest of them). MobileNetV2's
  /// 576 -> 96 projection at 14 x 14, 1 thread on Zen 3: the pack took 10%
  /// of the matmul's time, 8.5% in groups.
  void packTransposedA(Value base, int64_t block) {
    int64_t fullTiles = shape.m / mr;
    int64_t perGroup =
        std::clamp<int64_t>(fullTiles / kMinPackGroups, 1, kFloatsPerLine / mr);
    auto copyTiles = [&](Value firstTile, int64_t tiles, int64_t lastRows) {
      forLoop(0, shape.k, 1, [&](Value k) {
        for (int64_t t = 0; t < tiles; ++t) {
          Value tile = t ? add(firstTile, t) : firstTile;
          int64_t rows = t + 1 == tiles ? lastRows : mr;
          Value values =
              loadMasked(lhs, {add(base, k), mul(tile, mr)}, rows, block);
          storeMasked(values, packedA, {tile, k, index(0)}, mr);
        }
      });
    };
    int64_t groups = fullTiles / perGroup;
    if (groups)
      parallelLoop(groups, groups * perGroup * shape.k * mr, [&](Value group) {
        copyTiles(mul(group, perGroup), perGroup, mr);
      });
    // The tiles left over and the ragged last tile: one group.
    int64_t left = fullTiles - groups * perGroup, ragged = shape.m % mr;
    if (left || ragged)
      copyTiles(index(groups * perGroup), left + (ragged ? 1 : 0),
                ragged ? ragged : mr);
  }

  /// Bp[p][k][c] = B[batch * K + k][p * NR + c], and 0 in the columns of
  /// the last panel past N: a copy of whole vectors, the last masked.
  void packB(Value batch) {
    Value base = operandBase(1, batch, shape.k);
    int64_t fullPanels = shape.n / nr;
    parallelLoop(fullPanels, fullPanels * shape.k * nr, [&](Value panel) {
      packBPanel(base, panel, nr, packedB, panel);
    });
    if (shape.n % nr)
      packBPanel(base, index(fullPanels), shape.n % nr, packedB,
                 index(fullPanels));
  }

  /// Copies panel `panel` of B (`width` of its NR columns, the rest zeros)
  /// from the rows at `base` on into panel `slot` of the [tiles, K, NR]
  /// buffer `packed`.
  void packBPanel(Value base, Value panel, int64_t width, Value packed,
                  Value slot) {
    Value col0 = mul(panel, nr);
    forLoop(0, shape.k, 1, [&](Value k) {
      for (int64_t j = 0; j < nrVectors; ++j) {
        int64_t count = std::clamp<int64_t>(width - j * lanes, 0, lanes);
        Value values =
            count ? loadMasked(rhs, {add(base, k), add(col0, j * lanes)}, count,
                               lanes)
                  : zeroVector(lanes);
        vector::StoreOp::create(b, loc, values, packed,
                                ValueRange{slot, k, index(j * lanes)});
      }
    });
  }

  /// Whether each work item packs its panel of B (packBPanel) into a stack
  /// slot of its own, read by the item's row tiles from L1, rather than
  /// all of B being packed into an arena buffer first (by a parallel loop
  /// of its own, per image over a batch), from where the tiles read it
  /// back from L3 or memory. Where each item covers one panel (a single
  /// image, or each image's items in one loop) and either all of its rows
  /// or, split in groups that each copy it, at least kMinRowsPerPackedPanel
  /// rows, the panel fits kMaxPanelSlotBytes, and there are at least 2
  /// items (one panel is packed once either way), so that the loop has the
  /// work to be a task function's (the slot on a worker's stack, or for the
  /// caller's share one frame at a time). Items that pack their panels are
  /// not split in two groups for an even count (planItems): 49 panels of a
  /// 1x1 144 -> 32 at 28x28 split in groups of 18 rows copied each panel
  /// twice. Zen 3, paired runs: 1x1 256 -> 128 at 56x56 10-11% faster (1
  /// and 2 threads), 128 -> 256 12% / 8%; Winograd's 16 matmuls of 128 x
  /// 128 x 196 1% slower on 1 thread, 25-27% faster on 2 (one loop, not
  /// 16); MobileNetV2's 1x1s at 28x28 and 56x56 (24 or 32 rows) 9-12%
  /// faster on 1 thread, 14-22% on 2, and a 12-row one 14% / 28%.
  ///
  /// `elseReadInPlace`: B is packed only if its items pack it
  /// (planOperandPacking's packsBOnlyInItems), so the alternative is no copy at
  /// all: the items must then be of one loop over all images and have
  /// kMinRowsPerPackedPanel rows even as one group.
  bool packsPanelsInItems(bool elseReadInPlace) const {
    bool imageLoop = copiesOperandsPerImage();
    if ((shape.batch != 1 && !shape.rhsBatched) ||
        4 * shape.k * nr > kMaxPanelSlotBytes || (elseReadInPlace && imageLoop))
      return false;
    // The batches emitTiles takes at once: all of them, unless other
    // per-image copies make the batch a loop.
    int64_t batches = imageLoop ? 1 : shape.batch;
    ItemPlan plan = planItems(batches, shape.k, /*itemsPackPanels=*/true);
    if (plan.alongRows || reductionSliceSteps(plan) != shape.k ||
        plan.fixedUnits * batches < 2)
      return false;
    return (plan.groups == 1 && !elseReadInPlace) ||
           std::min(shape.m, plan.perItem * mr) >= kMinRowsPerPackedPanel;
  }

  Value zeroVector(int64_t size) {
    auto type = VectorType::get({size}, f32);
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  }

  /// `count` values of `buffer` from `at` along its last dim, as a vector
  /// of `size` (masked, zeros past `count`, when count < size).
  Value loadMasked(Value buffer, ArrayRef<Value> at, int64_t count,
                   int64_t size) {
    if (count >= size)
      return loadVector(buffer, at, size, Value(), Value());
    Value mask = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({size}, b.getI1Type()),
        ArrayRef<int64_t>{count});
    return loadVector(buffer, at, size, mask, zeroVector(size));
  }

  /// `size` floats of `buffer` from `at` along its last dim: with `mask`,
  /// the masked-off lanes from `passThru`.
  Value loadVector(Value buffer, ArrayRef<Value> at, int64_t size, Value mask,
                   Value passThru) {
    auto type = VectorType::get({size}, f32);
    if (!mask)
      return vector::LoadOp::create(b, loc, type, buffer, at);
    return vector::MaskedLoadOp::create(b, loc, type, buffer, at, mask,
                                        passThru);
  }

  /// Stores the first `count` lanes of `values` at `at` (all: unmasked).
  void storeMasked(Value values, Value buffer, ArrayRef<Value> at,
                   int64_t count) {
    int64_t size = cast<VectorType>(values.getType()).getNumElements();
    if (count >= size) {
      vector::StoreOp::create(b, loc, values, buffer, at);
      return;
    }
    Value mask = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({size}, b.getI1Type()),
        ArrayRef<int64_t>{count});
    vector::MaskedStoreOp::create(b, loc, buffer, at, mask, values);
  }

  /// Lanes [offset, offset + size) of `vector`.
  Value lanesOf(Value vector, int64_t offset, int64_t size) {
    if (offset == 0 &&
        cast<VectorType>(vector.getType()).getNumElements() == size)
      return vector;
    return vector::ExtractStridedSliceOp::create(
        b, loc, vector, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{size},
        ArrayRef<int64_t>{1});
  }

  /// An scf.parallel over [0, count) the thread pool may split (packing
  /// copies are independent per tile or panel); `work` is its innermost
  /// iterations, for kiln-outline-parallel-loops.
  void parallelLoop(int64_t count, int64_t work,
                    function_ref<void(Value)> body) {
    auto loop =
        scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                ValueRange{index(count)}, ValueRange{index(1)});
    loop->setAttr(kiln::kWorkAttrName, b.getI64IntegerAttr(work));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVars()[0]);
  }

  /// A constant operand packed now into a new read-only global
  /// [ceil(count / width), K, width] (zeros past `count`): `data` holds
  /// `count` x K floats, K-major ([K, count]) or not ([count, K]); a batched
  /// one, `matrices` of them, packed one after the other.
  Value compileTimePacked(Value operand, ArrayRef<float> data, int64_t count,
                          int64_t width, bool kMajor, int64_t matrices = 1) {
    int64_t groups = llvm::divideCeil(count, width);
    SmallVector<float> packed(matrices * groups * shape.k * width, 0.0f);
    for (int64_t m = 0; m < matrices; ++m) {
      ArrayRef<float> matrix = data.slice(m * count * shape.k);
      float *into = packed.data() + m * groups * shape.k * width;
      for (int64_t k = 0; k < shape.k; ++k)
        for (int64_t i = 0; i < count; ++i)
          into[((i / width) * shape.k + k) * width + i % width] =
              matrix[kMajor ? k * count + i : i * shape.k + k];
    }
    auto type = MemRefType::get({matrices * groups, shape.k, width}, f32);
    auto tensorType = RankedTensorType::get(type.getShape(), f32);
    auto name = (constantGlobal(operand, symbols).getSymName() +
                 kiln::kPackedWeightSuffix)
                    .str();
    auto init = DenseResourceElementsAttr::get(
        tensorType, name,
        HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(packed)));
    auto module = op->getParentOfType<ModuleOp>();
    OpBuilder moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
    auto global = memref::GlobalOp::create(
        moduleBuilder, loc, name, moduleBuilder.getStringAttr("private"), type,
        init, /*constant=*/true, moduleBuilder.getI64IntegerAttr(64));
    symbols.insert(global);
    return memref::GetGlobalOp::create(b, loc, type, global.getSymName());
  }

  /// Every MR x NR tile of C for one batch, as one parallel loop over work
  /// items. Usually an item is (panel of B, block of row tiles whose packed
  /// A fits in L2), numbered panel-major, so the items one thread runs in a
  /// row share their B panel in cache. When the reduction is short (K <=
  /// kShortReduction: a 1x1 convolution over 16 or 32 channels), a tile is
  /// mostly its stores, and those items would write C in pieces of MR rows x
  /// NR columns N * 4 bytes apart (a page per row and item): an item is then
  /// (row tile, kPanelsPerSweep panels), written along C's rows, with B (K x
  /// NR per panel) staying in L2 between the row tiles.
  /// When reading the operand an item fixes (B's panels, or along rows A's
  /// tiles) again costs less than reading the other one again (sweptMajor),
  /// the items are numbered the other way round: a thread's share of them
  /// is then a range of the other operand, read once.
  void emitTiles(Value batch, int64_t batches = 1) {
    ItemPlan plan = planItems(batches, shape.k, packsBPerItem);
    // The last slice also takes the remainder.
    int64_t sliceSteps = reductionSliceSteps(plan);
    if (sliceSteps < shape.k && plan.sweptFirst)
      plan = planItems(batches, sliceSteps, packsBPerItem);
    explained = ExplainedPlan{plan, batches, sliceSteps};
    int64_t slices = shape.k / sliceSteps;
    if (transposeCopy && slices > 1 && !partialSums)
      partialSums = flatten(op.getDpsInits()[0], 2);
    for (int64_t slice = 0; slice < slices; ++slice) {
      int64_t begin = slice * sliceSteps;
      reductionSlice = ReductionSlice{
          begin, slice + 1 < slices ? sliceSteps : shape.k - begin};
      emitItems(batch, batches, plan);
    }
    reductionSlice = ReductionSlice{0, shape.k};
  }

  /// How emitTiles shares the tiles out: each item fixes one unit (a panel,
  /// or along rows a row tile) and sweeps `perItem` of the other, in
  /// `groups` groups per fixed unit, numbered swept-major or not.
  struct ItemPlan {
    bool alongRows, sweptFirst;
    int64_t fixedUnits, fixedFull, fixedRagged;
    int64_t sweptUnits, sweptFull, sweptRagged;
    int64_t perItem, groups;
  };

  /// A matmul's work items and slices of k (emitTiles), for explainPlan.
  struct ExplainedPlan {
    ItemPlan plan;
    int64_t batches, sliceSteps;
  };

  /// `blockSteps`: the steps of k a block of row tiles holds (a slice's);
  /// `itemsPackPanels`: each item packs its panel of B (packsBPerItem).
  ItemPlan planItems(int64_t batches, int64_t blockSteps,
                     bool itemsPackPanels) const {
    ItemPlan plan;
    plan.alongRows = shape.k <= kShortReduction;
    bool alongRows = plan.alongRows;
    // The last unit of each kind may be ragged.
    plan.fixedUnits = alongRows ? mTiles : nPanels;
    plan.fixedFull = alongRows ? shape.m / mr : shape.n / nr;
    plan.fixedRagged = alongRows ? shape.m % mr : shape.n % nr;
    plan.sweptUnits = alongRows ? nPanels : mTiles;
    plan.sweptFull = alongRows ? shape.n / nr : shape.m / mr;
    plan.sweptRagged = alongRows ? shape.n % nr : shape.m % mr;
    int64_t perItem =
        alongRows
            ? kPanelsPerSweep
            : std::max<int64_t>(1, kRowBlockBytes / (blockSteps * mr * 4));
    // Enough items to share out evenly: a 1x1 convolution 960 -> 160 at
    // 7x7 (5 panels of 7 row tiles) was 5 items, 3 on one thread and 2 on
    // the other; now 20 (the row tiles split in groups of 2, each group
    // reading its panel from L2 after the first). Along rows, an item's
    // sweep stays whole: its stores along C's rows are the point.
    if (!alongRows) {
      int64_t fixedItems = plan.fixedUnits * batches;
      int64_t groupsWanted = llvm::divideCeil(kMinWorkItems, fixedItems);
      if (groupsWanted == 1 && fixedItems % 2 && fixedItems < kEvenItemsBelow &&
          !itemsPackPanels)
        groupsWanted = 2;
      perItem = std::min(perItem,
                         std::max<int64_t>(1, llvm::divideCeil(plan.sweptUnits,
                                                               groupsWanted)));
      // As many groups, of even sizes: 16 row tiles in groups of up to 10
      // were 10 and 6, and on 2 threads, swept-major, one thread ran the
      // 10 (128 x 3072 x 768 in slices of k: 1.55 -> 1.43 ms).
      perItem = llvm::divideCeil(plan.sweptUnits,
                                 llvm::divideCeil(plan.sweptUnits, perItem));
    }
    plan.perItem = perItem;
    plan.groups =
        std::max<int64_t>(1, llvm::divideCeil(plan.sweptUnits, perItem));
    plan.sweptFirst = sweptMajor(alongRows, plan.groups);
    return plan;
  }

  /// The steps of k in each slice the tiles are computed in (K: one), one
  /// parallel loop after the other, each adding its part of the sum to C;
  /// a whole number of A's cache lines. Numbered
  /// panel-major, the items read all of A for every panel: when A and two
  /// panels of B (the one being read and the one streaming in) outgrow
  /// half of L2, A is read again from L3 for each panel and the k loop
  /// waits on it. Sliced, the working set is A's and the panels' slice of
  /// k. 128 x 3072 x 768 (BERT's second FFN matmul, 3 slices of 1024, A
  /// read in place, when it was panel-major; sweptMajor now numbers it
  /// swept-major): 3.78 -> 3.62 ms on 1 thread, 2.07 -> 1.84 on 2; 128 x
  /// 4608 x 768 5.86 -> 5.41 and 3.20 -> 2.76. Slices shorter than
  /// kMinSliceSteps are not made: a tall A would need them, and 1024 x 3072
  /// x 768 in six slices of 512 ran 13% slower (GEMMs that tall are mostly
  /// swept-major anyway).
  int64_t reductionSliceSteps(const ItemPlan &plan) const {
    if (shape.windowedRows())
      return windowedSliceSteps(plan);
    if (plan.alongRows || !shape.tapOffsets.empty() || transposeCopy)
      return shape.k;
    if (plan.sweptFirst)
      return sweptSliceSteps(plan);
    int64_t slices = llvm::divideCeil(panelWorkingSetBytes(shape, nr),
                                      std::max<int64_t>(1, l2Bytes / 2));
    if (slices <= 1 || shape.k / slices < kMinSliceSteps)
      return shape.k;
    return llvm::alignDown(shape.k / slices, kSliceAlignment);
  }

  /// The steps of k in each slice of windowed rows numbered panel-major: a
  /// whole number of channels (a channel's taps are one iteration of the k
  /// loop), so that the input planes and two panels of B (the one read and
  /// the next streaming in) take at most the L2 budget's half, as
  /// panel-major matmuls' slices do. Over the whole of k every row tile of
  /// a panel reads the panel again, from L3 when it outgrows L2. The slices
  /// before the last keep their partial sums in C (with the output stored
  /// transposed, C's temporary: sumsBuffer). ResNet-style's 3x3 512 -> 512
  /// at 7x7 (49 x 4608 x 512: 442 KB panels beside 166 KB of planes, 13 row
  /// tiles a panel) on Zen 3 (512 KB L2), 3 slices, kiln runs alternated
  /// 300-400 times: 7-10% faster on 1 thread, 7-8% on 2 (5 or 6 slices
  /// alike); the ResNet-style CNN b1 3% on 1 thread and 2.5% on 2, b8 (3x3
  /// 256 -> 512 / 2 batched over 8 images, 2 slices) within 1%.
  int64_t windowedSliceSteps(const ItemPlan &plan) const {
    int64_t taps = shape.tapOffsets.size();
    if (plan.alongRows || plan.sweptFirst || taps == 0)
      return shape.k;
    int64_t planeBytes = 4 * shape.channels * shape.channelLength;
    int64_t workingSet = planeBytes + 4 * 2 * nr * shape.k;
    int64_t slices =
        llvm::divideCeil(workingSet, std::max<int64_t>(1, l2Bytes / 2));
    int64_t channelsPerSlice = shape.channels / slices;
    if (slices <= 1 || channelsPerSlice * taps < kMinSliceSteps)
      return shape.k;
    return channelsPerSlice * taps;
  }

  /// The steps of k in each slice of a swept-major matmul: slices of about
  /// kSweptSliceSteps when B does not stay in L2 and is read again (more
  /// than one block of row tiles) and a block over the whole of k holds
  /// fewer than kMinBlockRows rows, so that a block (planned for the slice)
  /// holds more of them and B is read again fewer times. C is read and written
  /// again per slice, a fraction of B's re-reads. 1024 x 3072 x 768 (BERT's
  /// second FFN matmul at batch 8; A 12 MB, B 9.4 MB) on a Granite Rapids-class
  /// core, whose L3 serves one core at ~20 GB/s: blocks of 2 row tiles over the
  /// whole of k read B 64 times, 32.3 ms (1 thread) and 15.7 (2); 4 slices of
  /// 768, blocks of 10 row tiles: 22.9 and 11.6 (slices of 512: 22.9 and 12.0;
  /// of 1024: 23.2 and 12.3; whole k in blocks of 5 or 10 tiles: 24.7 and
  /// 12.4). 1024^3 (blocks of 8 tiles) sliced in 2 ran 3% slower.
  int64_t sweptSliceSteps(const ItemPlan &plan) const {
    int64_t bBytes = 4 * shape.k * nPanels * nr;
    bool shortBlocks = kRowBlockBytes / (4 * shape.k) < kMinBlockRows;
    if (bBytes <= l2Bytes / 2 || plan.groups == 1 || !shortBlocks ||
        shape.windowedRows())
      return shape.k;
    int64_t slices = llvm::divideCeil(shape.k, kSweptSliceSteps);
    return llvm::alignDown(shape.k / slices, kSliceAlignment);
  }

  /// Whether the items of `plan` write C in groups of its columns, each
  /// group's items together (kiln::kColumnGroupsAttrName): numbered
  /// swept-major along rows, over one [M, N] matrix, in the matmul's only
  /// parallel loop (no per-call packing beside it, no slices of k), C
  /// stored as it is computed.
  bool writesColumnGroups(const ItemPlan &plan, int64_t batches) const {
    bool packsPerCall = packsAPerCall || packsBInLoop || packsBPerItem;
    return plan.alongRows && plan.sweptFirst && batches == 1 &&
           shape.batch == 1 && reductionSlice.steps == shape.k &&
           shape.tapOffsets.empty() && !shape.windowedRows() &&
           !transposeCopy && !packsPerCall && !staged[0] && !staged[1];
  }

  /// One parallel loop over the items of `plan` for the current slice of
  /// k.
  void emitItems(Value batch, int64_t batches, const ItemPlan &plan) {
    bool alongRows = plan.alongRows;
    int64_t fixedUnits = plan.fixedUnits, groups = plan.groups;
    // With `batches`, the items of every batch element (`batch` unset).
    int64_t itemsPerBatch = fixedUnits * groups;
    auto items = scf::ParallelOp::create(
        b, loc, ValueRange{index(0)},
        ValueRange{index(batches * itemsPerBatch)}, ValueRange{index(1)});
    // The tile loops have dynamic bounds, so tell the outliner the work, in
    // the unit its threshold is set for: the iterations of the scalar loop
    // nest this replaces, one per multiply-add (M x N x K). (Counting vector
    // FMAs instead kept a batch-1 classifier, a 2 MB weight stream, on one
    // thread.)
    items->setAttr(kiln::kWorkAttrName,
                   b.getI64IntegerAttr(batches * shape.m *
                                       reductionSlice.steps * nPanels * nr));
    if (writesColumnGroups(plan, batches))
      items->setAttr(kiln::kColumnGroupsAttrName,
                     b.getDenseI64ArrayAttr(
                         {fixedUnits, plan.perItem * nr, shape.n, shape.m}));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(items.getBody()->getTerminator());
    Value item = items.getInductionVars()[0];
    if (batches > 1) {
      batch = arith::DivUIOp::create(b, loc, item, index(itemsPerBatch));
      item = arith::RemUIOp::create(b, loc, item, index(itemsPerBatch));
    }
    Value rowBase =
        shape.lhsBatched || shape.rhsBatched ? mul(batch, shape.m) : index(0);
    Value fixed, group;
    if (plan.sweptFirst) {
      group = arith::DivUIOp::create(b, loc, item, index(fixedUnits));
      fixed = arith::RemUIOp::create(b, loc, item, index(fixedUnits));
    } else {
      fixed = arith::DivUIOp::create(b, loc, item, index(groups));
      group = arith::RemUIOp::create(b, loc, item, index(groups));
    }
    Value first = mul(group, plan.perItem);
    Value end = arith::MinSIOp::create(b, loc, add(first, plan.perItem),
                                       index(plan.sweptFull));
    // The item's panel of B, packed by the item (packsPanelsInItems): one
    // slot, whether the panel is full or ragged.
    Value panelSlot;
    if (packsBPerItem)
      panelSlot = memref::AllocOp::create(
          b, loc, MemRefType::get({1, shape.k, nr}, f32),
          b.getI64IntegerAttr(64));
    auto tile = [&](Value fixedUnit, int64_t fixedSize, Value sweptUnit,
                    int64_t sweptSize) {
      if (alongRows)
        emitTile(fixedUnit, fixedSize, sweptUnit, sweptSize, batch, rowBase,
                 panelSlot);
      else
        emitTile(sweptUnit, sweptSize, fixedUnit, fixedSize, batch, rowBase,
                 panelSlot);
    };
    auto sweep = [&](int64_t fixedSize) {
      int64_t sweptSize = alongRows ? nr : mr;
      // Tiles of a full panel of compile-time packed B stream the next
      // panel in, each its share (streamNextPanel): all the panel's tiles,
      // or swept-major the item's (the next item reads the next panel; a
      // last group of fewer tiles brings in only part of it); a lone full
      // tile all of it (the MLP at batch 6 on AVX2, weights from memory:
      // 17% faster).
      bool streams = !alongRows && rhsData && !shape.rhsBatched &&
                     fixedSize == nr && plan.sweptFull >= 1 && nPanels > 1;
      int64_t sharers = plan.sweptFirst ? std::min(plan.perItem, plan.sweptFull)
                                        : plan.sweptFull;
      if (panelSlot)
        packBPanel(operandBase(1, batch, shape.k), fixed, fixedSize, panelSlot,
                   index(0));
      forLoop(first, end, 1, [&](Value unit) {
        if (streams)
          nextPanelShare = NextPanelShare{
              fixed,
              plan.sweptFirst ? arith::SubIOp::create(b, loc, unit, first)
                              : unit,
              sharers};
        tile(fixed, fixedSize, unit, sweptSize);
        nextPanelShare.reset();
      });
      if (!plan.sweptRagged)
        return;
      // The ragged last unit belongs to the last group.
      Value lastGroup = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              group, index(groups - 1));
      auto tail = scf::IfOp::create(b, loc, lastGroup, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(tail.thenBlock()->getTerminator());
      tile(fixed, fixedSize, index(plan.sweptFull), plan.sweptRagged);
    };
    int64_t fixedSize = alongRows ? mr : nr;
    if (!plan.fixedRagged) {
      sweep(fixedSize);
      return;
    }
    Value isFull = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         fixed, index(plan.fixedFull));
    auto choice = scf::IfOp::create(b, loc, isFull, /*withElse=*/true);
    b.setInsertionPoint(choice.thenBlock()->getTerminator());
    sweep(fixedSize);
    b.setInsertionPoint(choice.elseBlock()->getTerminator());
    sweep(plan.fixedRagged);
  }

  /// C[rows of tile][cols of panel] += Ap[tile] * Bp[panel], the tile held
  /// in rows x ceil(width / lanes) vector registers over the k loop; B's
  /// panel from `panelSlot` when its work item packed it there.
  void emitTile(Value tile, int64_t rows, Value panel, int64_t width,
                Value batch, Value rowBase, Value panelSlot) {
    int64_t vectors = llvm::divideCeil(width, lanes);
    int64_t lastLanes = width - (vectors - 1) * lanes;
    Value row0 = add(rowBase, mul(tile, mr));
    Value col0 = mul(panel, nr);
    Value mask;
    if (lastLanes != lanes)
      mask = vector::ConstantMaskOp::create(
          b, loc, VectorType::get({lanes}, b.getI1Type()),
          ArrayRef<int64_t>{lastLanes});
    auto column = [&](int64_t j) { return add(col0, j * lanes); };
    auto partial = [&](int64_t j) { return mask && j == vectors - 1; };
    // Slices of k before the last add into C; the last one finishes it.
    bool finishes = lastSlice();
    if (epilogue && !transposeCopy && finishes)
      for (int64_t r = 0; r < rows; ++r)
        epilogue->prefetch(b, loc, add(row0, r), col0, width);

    SmallVector<Value> init;
    Value zero = zeroVector(lanes);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < vectors; ++j) {
        if (zeroInit && firstSlice()) {
          init.push_back(zero);
          continue;
        }
        SmallVector<Value, 2> at{add(row0, r), column(j)};
        init.push_back(loadVector(sumsBuffer(), at, lanes,
                                  partial(j) ? mask : Value(), zero));
      }

    bool prefetchesRows = !packedA && !shape.windowedRows() &&
                          shape.lhsTransposed &&
                          shape.m * 4 >= kPrefetchRowBytes;
    // Windowed rows: where each row's window starts in a channel's plane.
    Value aRow0 = mul(tile, mr);
    SmallVector<Value> pixelStarts;
    if (shape.windowedRows())
      for (int64_t r = 0; r < rows; ++r)
        pixelStarts.push_back(
            affine::expandAffineExpr(b, loc, shape.pixelStart.getResult(0),
                                     ValueRange{add(aRow0, r)}, ValueRange{}));

    // B's packed panels (null: read in place) and the one the tile reads.
    Value packedPanels = panelSlot ? panelSlot : packedB;
    Value bPanel = panelSlot ? index(0)
                   : packedB ? packedBPanel(batch, panel)
                             : panel;
    // One step of k: B's vectors (from the packed panel, or row `row` at
    // `shift` columns to the right) times A's column k of the tile (or,
    // windowed rows, each row's value in row `row` at its start + `shift`).
    // `streams`: it prefetches its share of the next panel.
    auto step = [&](Value k, Value row, Value shift, ValueRange acc,
                    bool streams = true) {
      SmallVector<Value> bVectors;
      if (nextPanelShare && streams)
        streamNextPanel(*nextPanelShare, k);
      for (int64_t j = 0; j < vectors; ++j) {
        if (packedPanels) {
          bVectors.push_back(
              vector::LoadOp::create(b, loc, vectorType, packedPanels,
                                     ValueRange{bPanel, k, index(j * lanes)}));
          continue;
        }
        SmallVector<Value, 2> at{row,
                                 shift ? add(column(j), shift) : column(j)};
        if (!shift)
          prefetchAhead(row, column(j));
        bVectors.push_back(
            loadVector(rhs, at, lanes, partial(j) ? mask : Value(), zero));
      }
      SmallVector<Value> next;
      if (prefetchesRows)
        prefetchRowsAhead(batch, k, aRow0, rows);
      for (int64_t r = 0; r < rows; ++r) {
        Value a;
        if (packedA)
          a = memref::LoadOp::create(
              b, loc, packedA,
              ValueRange{packedATile(batch, tile), k, index(r)});
        else if (shape.windowedRows())
          a = memref::LoadOp::create(
              b, loc, lhs, ValueRange{row, add(pixelStarts[r], shift)});
        else
          a = loadA(batch, add(aRow0, r), k);
        Value broadcast = vector::BroadcastOp::create(b, loc, vectorType, a);
        for (int64_t j = 0; j < vectors; ++j) {
          Value sum = acc[r * vectors + j];
          next.push_back(
              useFMA
                  ? vector::FMAOp::create(b, loc, broadcast, bVectors[j], sum)
                        .getResult()
                  : arith::AddFOp::create(
                        b, loc, sum,
                        arith::MulFOp::create(b, loc, broadcast, bVectors[j]))
                        .getResult());
        }
      }
      return next;
    };
    // k in loops of kUnroll steps and of single steps, or (implicit GEMM)
    // a loop over channels whose taps are unrolled, each reading the
    // channel's row at its constant shift.
    SmallVector<Value> sums;
    if (shape.tapOffsets.empty()) {
      if (packedA && lhsData)
        packedABlock = mul(packedATile(batch, tile), shape.k * mr);
      sums = emitReduction(init, kRunsFor(rows, vectors),
                           [&](Value k, ValueRange acc, bool streams) {
                             Value bRow =
                                 add(operandBase(1, batch, shape.k), k);
                             return step(k, bRow, Value(), acc, streams);
                           });
      packedABlock.reset();
    } else {
      int64_t taps = shape.tapOffsets.size();
      auto loop = scf::ForOp::create(
          b, loc, index(reductionSlice.begin / taps),
          index((reductionSlice.begin + reductionSlice.steps) / taps), index(1),
          init);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      unsigned tapped = shape.windowedRows() ? 0 : 1;
      Value channelRow = add(operandBase(tapped, batch, shape.channels), i);
      scf::YieldOp::create(
          b, loc, channelSteps(i, channelRow, loop.getRegionIterArgs(), step));
      sums = loop.getResults();
    }
    if (transposeCopy && finishes) {
      storeTransposed(sums, rows, width, batch, mul(tile, mr), col0);
      return;
    }
    bool applies = epilogue && finishes;
    // (Sliced lines apply the epilogue as they store.)
    SmallVector<Value> applied =
        applies && !epilogue->getPitch()
            ? applyEpilogue(sums, rows, vectors, row0, column, partial, mask)
            : SmallVector<Value>(sums);
    if (finishes && permuted && permuted->movedDims) {
      storeRowsLast(applied, rows, width, row0, col0);
      return;
    }
    if (applies && epilogue->getPitch()) {
      storeSlicedTile(applied, rows, vectors, row0, col0, mask);
      return;
    }
    Value target = applies ? epilogue->output() : sumsBuffer();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < vectors; ++j) {
        Value acc = applied[r * vectors + j];
        Value row = add(row0, r);
        SmallVector<Value, 2> at{row, column(j)};
        Value mask_ = partial(j) ? mask : Value();
        if (finishes && permuted) {
          storePermuted(acc, row, column(j));
          continue;
        }
        if (mask_)
          vector::MaskedStoreOp::create(b, loc, target, at, mask_, acc);
        else
          vector::StoreOp::create(b, loc, acc, target, at);
      }
  }

  /// The epilogue on every vector of a rows x vectors tile, its ops emitted
  /// for up to kEpilogueChains of the tile's vectors in turn
  /// (Epilogue::applyEach).
  SmallVector<Value> applyEpilogue(ArrayRef<Value> sums, int64_t rows,
                                   int64_t vectors, Value row0,
                                   function_ref<Value(int64_t)> column,
                                   function_ref<bool(int64_t)> partial,
                                   Value mask) {
    SmallVector<kiln::Epilogue::Place> places;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < vectors; ++j)
        places.push_back({sums[r * vectors + j], add(row0, r), column(j),
                          partial(j) ? mask : Value()});
    SmallVector<Value> applied;
    for (size_t first = 0; first < places.size(); first += kEpilogueChains) {
      size_t count = std::min(kEpilogueChains, places.size() - first);
      llvm::append_range(
          applied,
          epilogue->applyEach(b, loc, ArrayRef(places).slice(first, count)));
    }
    return applied;
  }

  /// Runs of k a tile of `rows` x `vectors` takes at once (emitReduction):
  /// more than one where the tile reads each panel of compile-time packed B
  /// once (one row tile: a batch-1 classifier), B does not stay in L2, and
  /// the tile leaves accumulators of the target's tile free. Such a tile
  /// runs at the speed one stream of reads comes from memory, which one
  /// core's prefetchers keep short of the memory's: a panel read at 2-4
  /// places at once came 20 -> 25-27 GB/s on a Zen 3 core (a C loop of
  /// MobileNetV2's classifier, 1280 x 1000, evicted before each run), as
  /// did 3 panels at once.
  int64_t kRunsFor(int64_t rows, int64_t vectors) {
    int64_t bBytes = 4 * shape.k * nPanels * nr;
    if (!rhsData || lhsData || mTiles != 1 || shape.batch != 1 ||
        nextPanelShare || bBytes <= l2Bytes / 2)
      return 1;
    int64_t runs = std::min({kMaxKRuns, accumulators / (rows * vectors),
                             reductionSlice.steps / kMinKRunSteps});
    runs = std::max<int64_t>(1, runs);
    kRunsTaken = std::max(kRunsTaken, runs);
    return runs;
  }

  /// The steps of k of the current slice (reductionSlice) from the
  /// accumulators `init`: a loop whose iterations run kUnroll steps each,
  /// then a loop of single steps for the rest. `step(k, acc, streams)`
  /// emits step k; within an iteration only the steps whose share of the
  /// next panel starts a new cache line stream it (streamNextPanel: a tile
  /// of 6 rows among 85 on a 512-row panel streams one float per step).
  /// AVX2 (6 x 16 tile: 12 FMAs, 6 cycles a step), 4 steps per iteration,
  /// 1 thread on Zen 3: 512^3 59 -> 70 GFLOP/s, 128 x 768 x 3072 66 -> 74;
  /// 8 steps ran slower than 4.
  /// With `runs` > 1 (kRunsFor), the loop's iterations advance `runs`
  /// equal runs of k, each on accumulators of its own (zeros past the
  /// first), which are then added; the steps left over are single steps.
  SmallVector<Value> emitReduction(
      ValueRange init, int64_t runs,
      llvm::function_ref<SmallVector<Value>(Value, ValueRange, bool)> step) {
    int64_t begin = reductionSlice.begin, steps = reductionSlice.steps;
    int64_t runSteps = llvm::alignDown(steps / runs, kUnroll);
    int64_t floatsPerStep =
        nextPanelShare ? streamedFloatsPerStep(*nextPanelShare) : 0;
    auto startsLine = [&](int64_t u) {
      return u == 0 || (u * floatsPerStep) / kFloatsPerLine !=
                           ((u - 1) * floatsPerStep) / kFloatsPerLine;
    };
    auto startsALine = [&](int64_t u) {
      return u == 0 ||
             (u * mr) / kFloatsPerLine != ((u - 1) * mr) / kFloatsPerLine;
    };
    size_t tileSize = init.size();
    SmallVector<Value> acc(init);
    if (runs > 1)
      acc.append((runs - 1) * tileSize, zeroVector(lanes));
    auto loop = [&](int64_t from, int64_t to, int64_t stride,
                    int64_t loopRuns) {
      if (from == to)
        return;
      auto forOp = scf::ForOp::create(b, loc, index(from), index(to),
                                      index(stride), acc);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      SmallVector<Value> sums(forOp.getRegionIterArgs());
      for (int64_t u = 0; u < stride; ++u) {
        Value k = forOp.getInductionVar();
        if (packedABlock && startsALine(u))
          prefetchPackedA(u ? add(k, u) : k);
        for (int64_t run = 0; run < loopRuns; ++run) {
          int64_t offset = u + run * runSteps;
          auto runSums =
              MutableArrayRef<Value>(sums).slice(run * tileSize, tileSize);
          SmallVector<Value> next =
              step(offset ? add(k, offset) : k, runSums, startsLine(u));
          llvm::copy(next, runSums.begin());
        }
      }
      scf::YieldOp::create(b, loc, sums);
      acc.assign(forOp.getResults().begin(), forOp.getResults().end());
    };
    loop(begin, begin + runSteps, kUnroll, runs);
    for (int64_t run = 1; run < runs; ++run)
      for (size_t i = 0; i < tileSize; ++i)
        acc[i] = arith::AddFOp::create(b, loc, acc[i], acc[run * tileSize + i]);
    acc.truncate(tileSize);
    loop(begin + runs * runSteps, begin + steps, 1, 1);
    return acc;
  }

  /// Prefetches the compile-time packed A (weights, often streamed from
  /// memory) kPackedAPrefetchFloats ahead of step `k` of the current tile's
  /// block (packedABlock), clamped to the packed data: the blocks of
  /// consecutive tiles follow each other, so the stream runs on into the
  /// next tile's.
  void prefetchPackedA(Value k) {
    prefetchPackedFloat(
        packedA, add(add(*packedABlock, mul(k, mr)), kPackedAPrefetchFloats),
        /*locality=*/3);
  }

  /// A slice of the reduction: steps [begin, begin + steps) of k.
  struct ReductionSlice {
    int64_t begin, steps;
  };
  /// Where a tile's sums are read from and stored, [batch * M, N], before
  /// the last slice of k: C (`out`), or where the tiles store C^T through
  /// a transposing copy, the product's temporary that the copy read (the
  /// last slice stores C^T).
  Value sumsBuffer() const { return partialSums ? partialSums : out; }

  bool firstSlice() const { return reductionSlice.begin == 0; }
  bool lastSlice() const {
    return reductionSlice.begin + reductionSlice.steps == shape.k;
  }

  /// A share of the next panel of packed B, for tile `tile` of the `tiles`
  /// full tiles that run on panel `panel` before the next panel is read
  /// (all of its tiles, or swept-major one item's).
  struct NextPanelShare {
    Value panel, tile;
    int64_t tiles;
  };

  /// Floats of the next panel each step of a tile with `share` streams:
  /// the tiles on a panel bring in its NR floats a step between them.
  int64_t streamedFloatsPerStep(const NextPanelShare &share) const {
    return llvm::divideCeil(nr, share.tiles);
  }

  /// Step `k` of tile `share.tile` of the `share.tiles` full tiles that
  /// read panel `share.panel` of compile-time packed B prefetches its share
  /// of the next panel, so the tiles on a panel bring in all of the next
  /// one, evenly. Without it the first tile on each panel reads its B from
  /// memory at the rate the FMAs consume it (a 16-lane 8 x 32 tile: 128
  /// bytes per 16 cycles, ~30 GB/s), which one core does not sustain, while
  /// the other tiles read it from L2. A weight stream from memory: MLP
  /// b64's 64 x 1024 x 4096 Gemm 110 -> 114 GFLOP/s (of 117), its 64 x
  /// 4096 x 1024 110 -> 112; ResNet-style b1 13.7 -> 13.4 ms, the BERT
  /// layer ~1-2%.
  void streamNextPanel(const NextPanelShare &share, Value k) {
    // Each step covers ceil(NR / tiles) floats of the next panel, tile t
    // from t * K steps' worth on: an offset linear in k, which LLVM turns
    // into a pointer increment (a division per step cost AVX2's 6-cycle
    // steps 10% of their speed). With slices of k (reductionSliceSteps), the
    // next panel's slice, counted from the slice's first step.
    int64_t perStep = streamedFloatsPerStep(share);
    int64_t panelFloats = shape.k * nr;
    Value next =
        arith::MinUIOp::create(b, loc, add(share.panel, 1), index(nPanels - 1));
    int64_t begin = reductionSlice.begin;
    Value base = mul(next, panelFloats), step = k;
    if (begin) {
      base = add(base, begin * nr);
      step = arith::SubIOp::create(b, loc, k, index(begin));
    }
    // A share of more than a cache line a step (one tile on a panel of 24
    // or more floats, two on 48) takes a prefetch per line: one a step
    // left every third line of 24 floats unfetched.
    Value offset = add(
        base, mul(add(mul(share.tile, reductionSlice.steps), step), perStep));
    for (int64_t line = 0; line < perStep; line += kFloatsPerLine)
      prefetchPackedFloat(packedB, line ? add(offset, line) : offset,
                          kNextPanelLocality);
  }

  /// Prefetches float `offset` of the [tiles, K, width] buffer `packed`
  /// (clamped to its last float), with `memref.prefetch`'s locality hint
  /// `locality` (3: into L1, x86's prefetcht0; 1: into L2, prefetcht2).
  void prefetchPackedFloat(Value packed, Value offset, int locality) {
    auto type = cast<MemRefType>(packed.getType());
    Value clamped = arith::MinUIOp::create(b, loc, offset,
                                           index(type.getNumElements() - 1));
    Value floats = memref::CollapseShapeOp::create(
        b, loc, packed, SmallVector<ReassociationIndices>{{0, 1, 2}});
    memref::PrefetchOp::create(b, loc, floats, ValueRange{clamped},
                               /*isWrite=*/false, locality,
                               /*isDataCache=*/true);
  }

  /// Prefetches B's row `row` kPrefetchPanels panels to the right of
  /// `column` (clamped to the row), for a B read in place: a tile reads K
  /// rows of B one after another, each a separate stream (a 1x1
  /// convolution's input channels, 50 KB apart at 112x112), more than the
  /// hardware prefetchers follow. MobileNetV2 at batch 8: 59.3 -> 57.0 ms;
  /// neutral on its batch 1, ResNet and BERT.
  void prefetchAhead(Value row, Value column) {
    Value ahead = arith::MinUIOp::create(
        b, loc, add(column, kPrefetchPanels * nr), index(shape.n - 1));
    memref::PrefetchOp::create(b, loc, rhs, ValueRange{row, ahead},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }

  /// Prefetches the tile's `rows` values of a transposed A read in place
  /// (A^T[k][m], a 1x1 convolution's input with the pixels as rows)
  /// kPrefetchSteps steps of k ahead of `k` (clamped to K): its first and
  /// last row, which may lie in two cache lines. Each step reads one
  /// channel row of the input a plane's length after the last, a stride the
  /// hardware prefetchers do not run ahead on, and in a model that input
  /// was just written, half of it by the other core. An inverted-residual
  /// block of MobileNetV2 at 14 x 14 (96 -> 576 -> 96 channels, twice):
  /// +14% on 2 threads, +2% on 1; at 7 x 7 (rows of 196 bytes) +3% on 2
  /// threads but -2% on 1, hence kPrefetchRowBytes.
  void prefetchRowsAhead(Value batch, Value k, Value row0, int64_t rows) {
    Value ahead = arith::MinUIOp::create(b, loc, add(k, kPrefetchSteps),
                                         index(shape.k - 1));
    Value kRow = add(operandBase(0, batch, shape.k), ahead);
    for (Value row : {row0, add(row0, rows - 1)})
      memref::PrefetchOp::create(b, loc, lhs, ValueRange{kRow, row},
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
  }

  /// Stores the tile (`rows` pixels x `width` channels from `pixel0` and
  /// `channel0`, accumulators row-major) transposed, into Y[batch][channel]
  /// [pixel]: each vector's column of the tile, padded to `block` (rows
  /// rounded up to a power of 2) pixels, is transposed in registers
  /// (kiln::transposeBlock); then every channel is `block` consecutive pixels,
  /// stored (masked to `rows`) after the epilogue is applied on them.
  void storeTransposed(ValueRange acc, int64_t rows, int64_t width, Value batch,
                       Value pixel0, Value channel0) {
    Value target = epilogue ? epilogue->output() : out;
    Value row0 = add(mul(batch, shape.n), channel0);
    Value mask = rowsMask(rows);
    forEachColumn(acc, rows, width, [&](int64_t column, Value pixels) {
      Value row = add(row0, column);
      if (epilogue)
        pixels = epilogue->apply(b, loc, pixels, row, pixel0, mask);
      storeColumn(pixels, rows, mask, target, row, pixel0);
    });
  }

  /// Stores a tile whose rows the transpose after the kernel moves last
  /// (PermutedTarget::movedDims): each of C's columns `col0 + c` holds the
  /// tile's `rows` values in one row of the transpose's output, from
  /// column `row0 mod innerRows` (findPermutedTarget keeps a tile within
  /// one block of innerRows).
  void storeRowsLast(ValueRange acc, int64_t rows, int64_t width, Value row0,
                     Value col0) {
    Value inner = index(permuted->innerRows);
    Value block = arith::DivUIOp::create(b, loc, row0, inner);
    Value first = arith::RemUIOp::create(b, loc, row0, inner);
    Value rowOfColumn0 = add(mul(block, permuted->columns), col0);
    Value mask = rowsMask(rows);
    forEachColumn(acc, rows, width, [&](int64_t column, Value values) {
      storeColumn(values, rows, mask, permuted->rowsLastView,
                  add(rowOfColumn0, column), first);
    });
  }

  /// A mask of the first `rows` lanes of PowerOf2Ceil(rows), or null when
  /// that is all of them.
  Value rowsMask(int64_t rows) {
    int64_t block = llvm::PowerOf2Ceil(rows);
    if (rows == block)
      return Value();
    return vector::ConstantMaskOp::create(
        b, loc, VectorType::get({block}, b.getI1Type()),
        ArrayRef<int64_t>{rows});
  }

  /// Transposes a tile in registers (`acc`: `rows` x ceil(width / lanes)
  /// vectors, row-major) and hands each of its `width` columns to `use`
  /// as one vector of PowerOf2Ceil(rows) lanes, the first `rows` its
  /// values.
  void forEachColumn(ValueRange acc, int64_t rows, int64_t width,
                     function_ref<void(int64_t, Value)> use) {
    int64_t vectors = llvm::divideCeil(width, lanes);
    int64_t block = llvm::PowerOf2Ceil(rows);
    Value zero = zeroVector(lanes);
    for (int64_t j = 0; j < vectors; ++j) {
      SmallVector<Value> columns;
      for (int64_t r = 0; r < block; ++r)
        columns.push_back(r < rows ? acc[r * vectors + j] : zero);
      kiln::transposeBlock(b, loc, columns);
      // Column i of this vector: vector i mod block, lanes from
      // (i / block) * block.
      for (int64_t i = 0; i < lanes && j * lanes + i < width; ++i)
        use(j * lanes + i,
            lanesOf(columns[i % block], (i / block) * block, block));
    }
  }

  /// Stores the first `rows` lanes of `values` (`mask`: rowsMask) at
  /// target[row][col...].
  void storeColumn(Value values, int64_t rows, Value mask, Value target,
                   Value row, Value col) {
    // A full tile of AVX2's 6 rows stores its first 6 lanes as a plain
    // 4- and 2-lane store, not a masked one (microcoded on AMD cores):
    // MobileNetV2 b1 on AVX2 ~8.2 -> ~8.0 ms. Ragged tails keep the
    // masked store (narrow plain stores measured 1-2% slower there).
    if (mask && rows != mr) {
      vector::MaskedStoreOp::create(b, loc, target, ValueRange{row, col}, mask,
                                    values);
      return;
    }
    if (mask)
      values = vector::ExtractStridedSliceOp::create(
          b, loc, values, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{rows},
          ArrayRef<int64_t>{1});
    vector::StoreOp::create(b, loc, values, target, ValueRange{row, col});
  }

  /// An implicit GEMM's steps of k for channel `channel` (row
  /// `tappedRow` of the operand the taps shift: B, or with windowed rows
  /// A): one per tap, unrolled, each reading the row at the tap's constant
  /// shift. Beyond kMaxUnrolledTaps (a 7x7 window: 49 steps of 16 FMAs
  /// would spill registers), a loop over the window's rows with each row's
  /// taps unrolled, the row's shift read from a constant table.
  SmallVector<Value> channelSteps(
      Value channel, Value tappedRow, ValueRange acc,
      function_ref<SmallVector<Value>(Value, Value, Value, ValueRange)> step) {
    int64_t taps = shape.tapOffsets.size();
    Value firstK = mul(channel, taps);
    if (!tapRowTable) {
      SmallVector<Value> next(acc);
      for (auto [t, offset] : llvm::enumerate(shape.tapOffsets))
        next = step(add(firstK, t), tappedRow, index(offset), next);
      return next;
    }
    int64_t perRow = shape.tapsPerRow;
    auto rows = scf::ForOp::create(b, loc, index(0), index(taps / perRow),
                                   index(1), acc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rows.getBody());
    Value row = rows.getInductionVar();
    Value rowShift = memref::LoadOp::create(b, loc, tapRowTable, row);
    Value rowK = add(firstK, mul(row, perRow));
    SmallVector<Value> next(rows.getRegionIterArgs());
    for (int64_t t = 0; t < perRow; ++t)
      next =
          step(add(rowK, t), tappedRow,
               add(rowShift, shape.tapOffsets[t] - shape.tapOffsets[0]), next);
    scf::YieldOp::create(b, loc, next);
    return rows.getResults();
  }

  /// The shift of each row of an implicit GEMM's window, as a constant
  /// global, when the window has too many taps to unroll and every tap's
  /// shift is its row's plus its column's.
  Value createTapRowTable() {
    int64_t taps = shape.tapOffsets.size(), perRow = shape.tapsPerRow;
    if (taps <= kMaxUnrolledTaps || perRow <= 0 || taps % perRow)
      return nullptr;
    ArrayRef<int64_t> offsets = shape.tapOffsets;
    SmallVector<int64_t> rowShifts;
    for (int64_t t = 0; t < taps; ++t) {
      int64_t rowShift = offsets[t - t % perRow];
      if (offsets[t] - rowShift != offsets[t % perRow] - offsets[0])
        return nullptr;
      if (t % perRow == 0)
        rowShifts.push_back(rowShift);
    }
    auto type = MemRefType::get({int64_t(rowShifts.size())}, b.getIndexType());
    auto init = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getIndexType()),
        ArrayRef(rowShifts));
    auto module = op->getParentOfType<ModuleOp>();
    OpBuilder moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
    auto global = memref::GlobalOp::create(
        moduleBuilder, loc, "__kiln_tap_rows",
        moduleBuilder.getStringAttr("private"), type, init,
        /*constant=*/true, IntegerAttr());
    symbols.insert(global);
    return memref::GetGlobalOp::create(b, loc, type, global.getSymName());
  }

  /// Stores a rows x vectors tile of C at (row0, col0) through an epilogue
  /// that keeps the first `width` of each `pitch`-long line (an implicit
  /// GEMM's output over the input's row pitch). Most tiles lie inside one
  /// line's kept part (79% of the 4 x 24 AVX2 tiles of MobileNetV2's stem,
  /// whose lines keep 112 of each 113 columns): one test for the whole tile
  /// and plain stores, rather than each vector's line, test and branch
  /// (storeSlicedLines), which took a quarter of that stem's time (its K is
  /// 27). Tiles wider than a line's kept part, and a ragged panel's masked
  /// tiles (whose last vector reaches past the last line), take the
  /// per-vector path.
  void storeSlicedTile(ArrayRef<Value> sums, int64_t rows, int64_t vectors,
                       Value row0, Value col0, Value mask) {
    auto storeEachVector = [&] {
      for (int64_t r = 0; r < rows; ++r) {
        Value row = add(row0, r);
        for (int64_t j = 0; j < vectors; ++j)
          storeSlicedLines(sums[r * vectors + j], row, add(col0, j * lanes));
      }
    };
    int64_t pitch = epilogue->getPitch(), width = epilogue->getWidth();
    if (mask || vectors * lanes > width) {
      storeEachVector();
      return;
    }
    Value line = arith::DivUIOp::create(b, loc, col0, index(pitch));
    Value at = arith::RemUIOp::create(b, loc, col0, index(pitch));
    Value inLine =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                              add(at, vectors * lanes), index(width));
    auto split = scf::IfOp::create(b, loc, inLine, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(split.thenBlock()->getTerminator());
    Value outColumn0 = add(mul(line, width), at);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < vectors; ++j) {
        Value row = add(row0, r), outColumn = add(outColumn0, j * lanes);
        vector::StoreOp::create(b, loc,
                                epilogue->apply(b, loc, sums[r * vectors + j],
                                                row, outColumn, Value()),
                                epilogue->output(), ValueRange{row, outColumn});
      }
    b.setInsertionPoint(split.elseBlock()->getTerminator());
    storeEachVector();
  }

  /// Stores the vector of C at (row, column) through an epilogue that keeps
  /// the first `width` of each `pitch`-long line (an implicit GEMM's output
  /// over the input's row pitch): a vector spans at most two lines (width >=
  /// lanes), so its kept lanes are two runs, [0, width - ow) of line `line`
  /// and [pitch - ow, pitch - ow + width) of the next, each stored with a
  /// mask where the line's kept part is in the output; a vector inside one
  /// line's kept part is one plain store.
  void storeSlicedLines(Value acc, Value row, Value column) {
    int64_t pitch = epilogue->getPitch(), width = epilogue->getWidth();
    int64_t lines = shape.n / pitch;
    Value line = arith::DivUIOp::create(b, loc, column, index(pitch));
    Value at = arith::RemUIOp::create(b, loc, column, index(pitch));
    // Most vectors lie inside one line's kept part: one plain store (masked
    // stores cost more, a lot more on AVX2).
    Value inLine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                         add(at, lanes), index(width));
    auto split = scf::IfOp::create(b, loc, inLine, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(split.thenBlock()->getTerminator());
    Value inLineColumn = add(mul(line, width), at);
    vector::StoreOp::create(
        b, loc, epilogue->apply(b, loc, acc, row, inLineColumn, Value()),
        epilogue->output(), ValueRange{row, inLineColumn});
    b.setInsertionPoint(split.elseBlock()->getTerminator());
    auto maskBelow = [&](Value count) {
      return vector::CreateMaskOp::create(
          b, loc, VectorType::get({lanes}, b.getI1Type()), ValueRange{count});
    };
    auto clampLanes = [&](Value x) {
      return arith::MaxSIOp::create(
          b, loc, index(0), arith::MinSIOp::create(b, loc, x, index(lanes)));
    };
    auto sub = [&](Value x, Value y) {
      return arith::SubIOp::create(b, loc, x, y);
    };
    // An epilogue that reads nothing along the columns (a bias per channel,
    // an activation) is applied once for both parts.
    Value applied;
    if (epilogue->isColumnInvariant())
      applied = epilogue->apply(b, loc, acc, row, index(0), Value());
    auto storePart = [&](Value valid, Value outColumn, Value mask) {
      // An empty part stores nothing, at a column that is in bounds.
      outColumn = arith::SelectOp::create(b, loc, valid, outColumn, index(0));
      Value value = applied
                        ? applied
                        : epilogue->apply(b, loc, acc, row, outColumn, mask);
      vector::MaskedStoreOp::create(b, loc, epilogue->output(),
                                    ValueRange{row, outColumn}, mask, value);
    };
    auto positive = [&](Value x) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x,
                                   index(0));
    };
    // This line's kept lanes.
    Value first = clampLanes(sub(index(width), at));
    storePart(positive(first), add(mul(line, width), at), maskBelow(first));
    // The next line's: lanes [pitch - at, pitch - at + width).
    Value start = clampLanes(sub(index(pitch), at));
    Value end = clampLanes(add(sub(index(pitch), at), width));
    Value nextLine = add(line, 1);
    Value valid = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, nextLine,
                              index(lines)),
        positive(sub(end, start)));
    Value mask = arith::AndIOp::create(
        b, loc, maskBelow(end),
        arith::XOrIOp::create(b, loc, maskBelow(start),
                              vector::ConstantMaskOp::create(
                                  b, loc,
                                  VectorType::get({lanes}, b.getI1Type()),
                                  ArrayRef<int64_t>{lanes})));
    Value noLanes = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()), ArrayRef<int64_t>{0});
    mask = arith::SelectOp::create(b, loc, valid, mask, noLanes);
    // Output column of lane 0: the next line's lane `start` is its column 0.
    Value outColumn = sub(add(mul(nextLine, width), at), index(pitch));
    storePart(valid, outColumn, mask);
  }

  /// The share of the next panel the tile being emitted prefetches, if
  /// any.
  std::optional<NextPanelShare> nextPanelShare;
  /// Where the current tile's block of compile-time packed A starts (in
  /// floats), while its reduction prefetches it (prefetchPackedA).
  std::optional<Value> packedABlock;
  /// The steps of k the tiles being emitted compute (reductionSliceSteps).
  ReductionSlice reductionSlice;
  linalg::GenericOp op;
  MatmulShape shape;
  int64_t lanes, nrVectors, mr, nr, mTiles, nPanels;
  bool useFMA;
  bool halfRateVectors;
  int64_t longReduction, l1Ways, l2Bytes, kUnroll;
  /// The target tile's accumulator registers (kRunsFor).
  int64_t accumulators;
  /// The most runs of k a tile of this matmul took (kRunsFor: a ragged
  /// panel's narrower tiles may take more), for explainPlan.
  int64_t kRunsTaken = 1;
  bool explain;
  SymbolTable &symbols;
  OpBuilder b;
  Location loc;
  Type f32;
  VectorType vectorType;
  bool zeroInit = false;
  Value lhs, rhs, out;
  /// Rows apart that B's matrices start in `rhs` when they are spaced
  /// (batchRowPitch), else 0.
  int64_t rhsPitch = 0;
  /// A's and B's data when they are unbatched constants (read once, packed
  /// now).
  std::optional<SmallVector<float>> lhsData, rhsData;
  /// The packed copies, or null where the tiles read the operand in place.
  Value packedA, packedB;
  /// Whether the images of a batch staged per image run in parallel
  /// (imagesPayInParallel), their operands written into the batch's buffer.
  bool parallelImages = false;
  /// The copy C^T the tiles are stored through, transposed
  /// (findTransposingCopy), or null.
  linalg::GenericOp transposeCopy;
  /// How the operands that are not constants are packed per call
  /// (planOperandPacking): A into an arena buffer before the tiles (per
  /// image over a batch); B likewise (packsBInLoop), or a panel per work
  /// item into the item's stack slot (packsBPerItem, packsPanelsInItems).
  bool packsAPerCall = false, packsBInLoop = false, packsBPerItem = false;
  /// With a transposing copy and slices of k, the partial sums (sumsBuffer).
  Value partialSums;
  /// The transpose after the kernel whose copy its final stores make
  /// (findPermutedTarget).
  std::optional<PermutedTarget> permuted;
  /// The elementwise work applied on the tiles before they are stored.
  std::optional<kiln::Epilogue> epilogue;
  /// An implicit GEMM's shift per row of its window (createTapRowTable).
  Value tapRowTable;
  /// A and B when staged one image at a time: found by findStagedOperand,
  /// written by stagePerImage (and stageImage, per image).
  std::optional<StagedOperand> staged[2];
  /// What emitTiles chose, for explainPlan.
  std::optional<ExplainedPlan> explained;
};

struct LowerMatmulPass : public kiln::impl::LowerMatmulBase<LowerMatmulPass> {
  using LowerMatmulBase::LowerMatmulBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<linalg::GenericOp, MatmulShape>> matmuls;
    module.walk([&](linalg::GenericOp op) {
      if (std::optional<MatmulShape> shape =
              matchMatmul(op, symbols, /*stridedInputs=*/true)) {
        copyStridedInputs(op, /*keepSpacedB=*/readsSpacedB(op, *shape));
        matmuls.push_back({op, *shape});
      } else if (std::optional<MatmulShape> shape =
                     matchConvMatmul(op, /*pixelsAsRows=*/false)) {
        matmuls.push_back({op, *shape});
      } else if (std::optional<MatmulShape> shape =
                     matchConvMatmul(op, /*pixelsAsRows=*/true)) {
        copyStridedInputs(op, /*keepSpacedB=*/false);
        matmuls.push_back({op, *shape});
      }
    });
    KernelTarget target{lanes,           rows,          vectors,   fma,
                        halfRateVectors, longReduction, l1Ways,    l2Bytes,
                        kUnroll,         explain,       shapeTiles};
    for (auto &[op, shape] : matmuls)
      MatmulEmitter(op, shape, target, symbols).emit();
  }
};

} // namespace
