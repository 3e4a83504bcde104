//===- LowerWindowOps.cpp - kiln-lower-window-ops -------------------------===//
//
// Depthwise convolution and pooling do a handful of operations per output
// (9 FMAs or maxima for 3x3) over planes of 7x7 to 112x112: memory-bound,
// and slow as loop nests over rows, which waste most of a vector on 7- or
// 14-wide rows, keep the accumulator in memory (or sweep the output once
// per tap) and run the padding, the bias and the activation as passes of
// their own.
//
// Here each channel plane is laid out once, in a stack buffer that stays in
// L1, so that every tap of the window is one contiguous vector load:
//  * the padded plane, split into stride_h x stride_w phase planes (padded
//    row i, column j at phase (i mod sh, j mod sw), position (i / sh, j /
//    sw)), all with the row pitch Q = ceil(padded width / sw). Output
//    (oh, ow) then reads, for tap (kh, kw), the phase of (kh * dh, kw * dw)
//    at (oh + kh * dh / sh) * Q + ow + kw * dw / sw = f + a constant, where
//    f = oh * Q + ow is the output's position in a plane of pitch Q;
//  * narrow planes are computed over f in whole vectors spanning several
//    rows (the lanes with ow >= OW, in the pitch's slack, are computed and
//    dropped), so a 7x7 plane takes 4 vectors rather than 7 mostly empty
//    ones; each vector's kept lanes are moved together by a constant
//    shuffle and stored with one masked store at their place in the dense
//    output;
//  * wide planes, where rounding the pitch up to whole vectors adds at most
//    1/8 of the lanes, take rows of whole vectors: output row r's tap
//    (kh, kw) is then row r + 1's tap (kh - 1, kw), and a column of vectors
//    over a group of rows loads each window row once for all the rows it
//    serves (3x3 over 8 rows: 30 loads, not 72);
//  * the epilogue (bias, ReLU6, residual, an average pool's division:
//    kiln::Epilogue) is applied on the register before the store.
// Small planes of one phase (7x7, up to 3x3 windows) are laid out one plane
// ahead, alternately into two buffers, so that a plane's taps do not wait
// on the stores of its own layout (layOutAhead).
// The buffer's padding (0, or -inf for max pooling) is written once per
// task; only the plane's interior is rewritten per channel (a copy for
// stride 1, a deinterleave by shuffles for stride 2 along the row; with one
// phase, a row's tail is stored as a whole vector holding the pad value
// past the row). The tensor.pad that fed the op is no longer needed and is
// erased.
//
// Large planes of one image are computed in bands of rows. When the input
// was just written by a 1x1 convolution's items in groups of pixels
// (kiln::kColumnGroupsAttrName: MobileNetV2's expansions), that loop is
// split by groups and run band by band, each band's pixels right before the
// band's tasks read them, while they are still in L2 (emitInterleaved).
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Epilogue.h"
#include "kiln/Transforms/KernelEmitters.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>
#include <map>

namespace kiln {
#define GEN_PASS_DEF_LOWERWINDOWOPS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// How far ahead (in floats: 8 KiB) the layout of a plane prefetches its
/// input (prefetchInput; the smallest input it does so for is the pass
/// option prefetch-min-bytes).
constexpr int64_t kLayoutPrefetchFloats = 2048;

/// Most vectors one group of output rows may take (unrolled code).
constexpr int64_t kMaxGroupVectors = 16;

/// Output rows at most that one column of row-aligned vectors computes
/// together, sharing the loads of their overlapping window rows.
constexpr int64_t kMaxSharedRows = 8;

/// Registers a group of rows needs besides the filter taps it keeps in
/// registers: an accumulator and a loaded vector, and room for the
/// compiler's temporaries (alignedGroupRows).
constexpr int64_t kMinFreeRegisters = 4;

/// Thread-pool tasks at most (each takes a range of channel planes and
/// writes its buffers' padding once).
constexpr int64_t kTasks = 64;

/// Planes of one phase (stride 1) with at most this many outputs and taps
/// are laid out one plane ahead, into a second buffer (layOutAhead).
constexpr int64_t kMaxLaidOutAheadOutputs = 64;
constexpr size_t kMaxLaidOutAheadTaps = 9;

/// Output planes with at least this many rows are split into kBands bands
/// of rows (bandCount).
constexpr int64_t kMinBandedRows = 56;
constexpr int64_t kBands = 4;

/// The window ops lowered here, by what they do with each tap.
enum class WindowKind { DepthwiseConv, MaxPool, SumPool };

/// The value the op's padding and accumulator start from.
double padValueOf(WindowKind kind) {
  return kind == WindowKind::MaxPool ? -std::numeric_limits<double>::infinity()
                                     : 0.0;
}

/// Whether `op` sets all of `buffer` to `value` (a linalg.fill, or the
/// linalg.map a tensor.pad's padding becomes).
bool isFillOf(Operation *op, Value buffer, double value) {
  auto isValue = [&](Value scalar) {
    auto constant = scalar.getDefiningOp<arith::ConstantOp>();
    auto attr = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
    return attr && attr.getValueAsDouble() == value;
  };
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureBufferSemantics() && fill.getDpsInits()[0] == buffer &&
           isValue(fill.getDpsInputs()[0]);
  auto map = dyn_cast<linalg::MapOp>(op);
  if (!map || map.getDpsInits()[0] != buffer || map.getNumDpsInputs() != 0)
    return false;
  auto yield = cast<linalg::YieldOp>(map.getMapper().front().getTerminator());
  return yield.getNumOperands() == 1 && isValue(yield.getOperand(0));
}

/// The unpadded input of a window op: when its input is the buffer a
/// tensor.pad became (an allocation filled with the pad value, the source
/// copied into a subview of it), the source and the leading pads, so the
/// padded copy can go; otherwise the input itself.
struct PaddedInput {
  Value source;
  int64_t top = 0, left = 0;
  /// The fill (the first of them to run), copy, subview and allocation of
  /// the padded buffer.
  SmallVector<Operation *> padOps;
};

PaddedInput findUnpaddedInput(Value input, Operation *conv, double padValue) {
  PaddedInput plain{input, 0, 0, {}};
  auto alloc = input.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return plain;
  Operation *fill = nullptr;
  memref::SubViewOp subview;
  memref::CopyOp copy;
  for (Operation *user : alloc->getUsers()) {
    if (user == conv)
      continue;
    if (auto view = dyn_cast<memref::SubViewOp>(user);
        view && !subview && view->hasOneUse()) {
      copy = dyn_cast<memref::CopyOp>(*view->getUsers().begin());
      if (!copy || copy.getTarget() != view.getResult())
        return plain;
      subview = view;
      continue;
    }
    if (!fill && isFillOf(user, input, padValue)) {
      fill = user;
      continue;
    }
    return plain;
  }
  if (!subview || !fill || fill->getBlock() != conv->getBlock() ||
      copy->getBlock() != conv->getBlock() || !fill->isBeforeInBlock(copy) ||
      !copy->isBeforeInBlock(conv) || !kiln::isDenseF32Buffer(copy.getSource()))
    return plain;
  // Nothing between the copy and the convolution may write memory (the
  // source is read where the convolution is); a kernel boundary's profile
  // calls do not (a Pad is a kernel of its own).
  for (Operation *op = copy->getNextNode(); op != conv; op = op->getNextNode())
    if (!isMemoryEffectFree(op) && !kiln::isProfileHook(op) &&
        !isa<memref::AllocOp, ViewLikeOpInterface, linalg::FillOp>(op))
      return plain;
  ArrayRef<int64_t> offsets = subview.getStaticOffsets();
  auto sourceType = cast<MemRefType>(copy.getSource().getType());
  if (ShapedType::isDynamicShape(offsets) || offsets[0] != 0 ||
      offsets[1] != 0 || subview.getStaticSizes() != sourceType.getShape() ||
      !llvm::all_of(subview.getStaticStrides(),
                    [](int64_t s) { return s == 1; }))
    return plain;
  return {
      copy.getSource(), offsets[2], offsets[3], {fill, copy, subview, alloc}};
}

/// The static layout of one channel plane in the stack buffer, and the
/// output's groups of rows.
struct PlaneLayout {
  int64_t images, height, width, outHeight, outWidth;
  int64_t strideH, strideW, top, left;
  /// Padded rows and columns the window reads, phase plane rows, pitch.
  int64_t paddedHeight, paddedWidth, phaseRows, pitch;
  /// Buffer offset of each tap relative to the output's position f.
  SmallVector<int64_t> taps;
  /// Output rows per group, and the buffer's length in floats.
  int64_t groupRows, length;
  /// Whether each output row starts a vector (a pitch of whole vectors),
  /// rather than vectors spanning several rows.
  bool rowAligned;
  /// The window's rows and their dilation.
  int64_t windowRows, dilationH;

  /// Groups of output rows, the last perhaps with fewer rows.
  int64_t groupCount() const { return llvm::divideCeil(outHeight, groupRows); }

  int64_t phaseOffset(int64_t phaseH, int64_t phaseW) const {
    return (phaseH * strideW + phaseW) * phaseRows * pitch;
  }
};

/// One vector of a group: which lanes are kept, in order, and where the
/// first of them goes in the dense output (relative to the group's).
struct GroupVector {
  SmallVector<int64_t> keptLanes;
  int64_t firstOutput;
};

class WindowEmitter {
public:
  WindowEmitter(linalg::LinalgOp op, WindowKind kind,
                DenseIntElementsAttr strides, DenseIntElementsAttr dilations,
                int64_t lanes, int64_t prefetchMinBytes)
      : op(op), kind(kind), strides(strides), dilations(dilations),
        lanes(lanes), prefetchMinBytes(prefetchMinBytes), b(op),
        loc(op.getLoc()) {}

  /// Replaces the op with the vector kernel, or leaves it (to the generic
  /// loop lowering) when it is not a case the kernel handles.
  void run() {
    // Inputs: the padded input and the filters (or the pool's window, only
    // a shape).
    if (!op.hasPureBufferSemantics() ||
        !kiln::isDenseF32Buffer(op.getDpsInputs()[0]) ||
        !kiln::isDenseF32Buffer(op.getDpsInits()[0]))
      return;
    auto strideValues = llvm::to_vector(strides.getValues<int64_t>());
    auto dilationValues = llvm::to_vector(dilations.getValues<int64_t>());
    // The row deinterleave handles strides 1 and 2 along the row.
    if (strideValues[1] > 2)
      return;
    // The output starts at the accumulator's identity, which the vectors
    // start from instead.
    auto init = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
    Value output = op.getDpsInits()[0];
    if (!init || !isFillOf(init, output, padValueOf(kind)))
      return;
    if (kind == WindowKind::DepthwiseConv &&
        !kiln::isDenseF32Buffer(op.getDpsInputs()[1]))
      return;
    input = findUnpaddedInput(op.getDpsInputs()[0], op, padValueOf(kind));
    computeLayout(strideValues, dilationValues);
    init.erase();
    emit();
  }

private:
  void computeLayout(ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
    auto inType = cast<MemRefType>(input.source.getType());
    auto outType = cast<MemRefType>(op.getDpsInits()[0].getType());
    // [C, KH, KW] filters or the [KH, KW] window.
    ArrayRef<int64_t> window = cast<MemRefType>(op.getDpsInputs()[1].getType())
                                   .getShape()
                                   .take_back(2);
    PlaneLayout &l = layout;
    l.height = inType.getDimSize(2);
    l.width = inType.getDimSize(3);
    l.outHeight = outType.getDimSize(2);
    l.outWidth = outType.getDimSize(3);
    l.images = outType.getDimSize(0);
    l.strideH = strides[0];
    l.strideW = strides[1];
    l.top = input.top;
    l.left = input.left;
    int64_t kh = window[0], kw = window[1];
    l.windowRows = kh;
    l.dilationH = dilations[0];
    l.paddedHeight =
        (l.outHeight - 1) * l.strideH + (kh - 1) * dilations[0] + 1;
    l.paddedWidth = (l.outWidth - 1) * l.strideW + (kw - 1) * dilations[1] + 1;
    l.phaseRows = llvm::divideCeil(l.paddedHeight, l.strideH);
    l.pitch = llvm::divideCeil(l.paddedWidth, l.strideW);
    // Rows of whole vectors, when that computes at most 1/8 more lanes than
    // vectors spanning rows (wide planes): a tap of one output row is then
    // the tap a window row lower of the row above, loaded once for both.
    l.rowAligned = int64_t(llvm::alignTo(l.outWidth, lanes)) * 8 <= l.pitch * 9;
    if (l.rowAligned)
      l.pitch = llvm::alignTo(l.pitch, lanes);
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        int64_t r = i * dilations[0], c = j * dilations[1];
        l.taps.push_back(l.phaseOffset(r % l.strideH, c % l.strideW) +
                         (r / l.strideH) * l.pitch + c / l.strideW);
      }
    l.groupRows = l.rowAligned ? alignedGroupRows() : spanningGroupRows();
    // The last vector may read past the phase planes: zeros.
    int64_t groups = l.outHeight / l.groupRows;
    int64_t tailRows = l.outHeight % l.groupRows;
    int64_t lastRow = groups * l.groupRows;
    int64_t end =
        std::max(groups ? (groups - 1) * l.groupRows * l.pitch +
                              llvm::alignTo(l.groupRows * l.pitch, lanes)
                        : 0,
                 lastRow * l.pitch + llvm::alignTo(tailRows * l.pitch, lanes));
    l.length = std::max(l.strideH * l.strideW * l.phaseRows * l.pitch,
                        end + *llvm::max_element(l.taps));
  }

  /// Rows per group of vectors spanning rows: the fewest vectors per
  /// output row.
  int64_t spanningGroupRows() const {
    const PlaneLayout &l = layout;
    int64_t groupRows = 1;
    for (int64_t rows = 2; rows <= l.outHeight; ++rows) {
      int64_t vectors = llvm::divideCeil(rows * l.pitch, lanes);
      int64_t best = llvm::divideCeil(groupRows * l.pitch, lanes);
      if (vectors > kMaxGroupVectors)
        break;
      if (vectors * groupRows < best * rows)
        groupRows = rows;
    }
    return groupRows;
  }

  /// Rows per group of row-aligned vectors: as many as keep one accumulator
  /// per row, the broadcast filter taps and a few loaded vectors in
  /// registers (32 with 16 lanes, else 16), at most kMaxSharedRows; a
  /// divisor of the output's rows in the upper half of that, when there is
  /// one, so that no group is short. Taps that cannot all stay in registers
  /// (5x5 and 7x7 windows on AVX2, 7x7 on AVX-512) are each read from
  /// memory by the FMAs that use them, so the rows take the registers
  /// instead: with the taps counted, a group had one row, which loaded each
  /// input vector once per tap; 8 rows share each load among up to 7 (Zen 3,
  /// AVX2, 1 thread: ConvNeXt's 7x7 over 96 x 56 x 56 1.02 -> 0.49 ms,
  /// 5x5 over 144 x 56 x 56 0.58 -> 0.40, over 672 x 14 x 14 0.22 -> 0.13,
  /// 5x5 / 2 over 240 x 28 x 28 95 -> 55 us).
  int64_t alignedGroupRows() const {
    const PlaneLayout &l = layout;
    int64_t registers = lanes >= 16 ? 32 : 16;
    // The broadcast filter taps held in registers: all or none.
    int64_t taps =
        kind == WindowKind::DepthwiseConv ? int64_t(l.taps.size()) : 0;
    int64_t keptTaps = taps + kMinFreeRegisters <= registers ? taps : 0;
    int64_t most = std::clamp<int64_t>(registers - keptTaps - 3, 1,
                                       std::min(kMaxSharedRows, l.outHeight));
    for (int64_t rows = most; rows > most / 2; --rows)
      if (l.outHeight % rows == 0)
        return rows;
    return most;
  }

  /// The vectors of a group of `rows` output rows.
  SmallVector<GroupVector> groupVectors(int64_t rows) const {
    SmallVector<GroupVector> vectors;
    int64_t positions = rows * layout.pitch;
    for (int64_t start = 0; start < positions; start += lanes) {
      GroupVector group{{}, -1};
      for (int64_t lane = 0; lane < lanes && start + lane < positions; ++lane) {
        int64_t f = start + lane;
        int64_t row = f / layout.pitch, column = f % layout.pitch;
        if (column >= layout.outWidth)
          continue;
        if (group.firstOutput < 0)
          group.firstOutput = row * layout.outWidth + column;
        group.keptLanes.push_back(lane);
      }
      vectors.push_back(std::move(group));
    }
    return vectors;
  }

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, int64_t c) {
    return c ? arith::AddIOp::create(b, loc, x, index(c)).getResult() : x;
  }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, index(c));
  }
  Value mask(int64_t count) {
    return vector::ConstantMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        ArrayRef<int64_t>{count});
  }
  Value zeroVector() {
    return arith::ConstantOp::create(b, loc, vectorType,
                                     b.getZeroAttr(vectorType));
  }
  /// `count` floats of `buffer` at `at`, the other lanes 0 (all lanes: a
  /// plain load).
  Value load(Value buffer, ValueRange at, int64_t count) {
    if (count == lanes)
      return vector::LoadOp::create(b, loc, vectorType, buffer, at);
    return kiln::loadPrefix(b, loc, vectorType, buffer, at, count,
                            zeroVector());
  }
  void store(Value value, Value buffer, ValueRange at, int64_t count) {
    if (count == lanes)
      vector::StoreOp::create(b, loc, value, buffer, at);
    else
      kiln::storePrefix(b, loc, value, buffer, at, count);
  }

  void forLoop(int64_t lb, int64_t ub, function_ref<void(Value)> body) {
    if (lb >= ub)
      return;
    forLoop(index(lb), index(ub), body);
  }
  void forLoop(Value lb, Value ub, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  /// A band of the output: groups [firstGroup, endGroup) of output rows
  /// (`outputRows` of them), and the input rows [firstRow, endRow) their
  /// windows read.
  struct BandRange {
    int64_t firstGroup, endGroup, firstRow, endRow, outputRows;
  };

  /// Bands the output rows are split into: planes of at least
  /// kMinBandedRows output rows are split into kBands bands of whole
  /// groups, and each task takes one band of its planes. The threads then
  /// each take rows of the image, the pixels kiln-lower-matmul's items give
  /// them in the convolutions before and after (MobileNetV2 at batch 1, 2
  /// threads: 3.53 -> 3.33 ms with both), and a 112 x 112 plane's band
  /// stays in L1 between its layout and its outputs (1 thread: 5.64 -> 5.44
  /// ms). Smaller planes lose more to the bands' overlapping input rows
  /// than they gain (14 x 14 in 2 bands: 28 -> 34 us on 1 thread). Several
  /// images are not banded: their planes are many, the matmuls' items split
  /// them by image, and a band's few KB of each plane, read in sweeps over
  /// all planes, stream from memory at a third of the speed whole planes do
  /// (Zen 4, 1 thread, MobileNetV2 b8: 73.0 -> 64.0 ms without bands, 3x3
  /// over 8 x 144 x 56 x 56 alone 3.67 -> 2.08 ms; 2 threads 36.3 -> 32.6;
  /// at batch 1 on 2 threads bands still take 5.42 -> 4.27 ms).
  int64_t bandCount() const {
    if (layout.outHeight < kMinBandedRows || layout.images > 1)
      return 1;
    return std::min(layout.groupCount(), kBands);
  }

  /// Band `band` of `bands`.
  BandRange bandRange(int64_t band, int64_t bands) const {
    const PlaneLayout &l = layout;
    int64_t groups = l.groupCount();
    BandRange range;
    range.firstGroup = band * groups / bands;
    range.endGroup = (band + 1) * groups / bands;
    // Output rows [oh0, oh1) read padded rows [oh0 * sh, (oh1 - 1) * sh +
    // (kh - 1) * dh + 1), input rows less the top padding.
    int64_t oh0 = range.firstGroup * l.groupRows;
    int64_t oh1 = std::min(range.endGroup * l.groupRows, l.outHeight);
    auto clampRow = [&](int64_t row) {
      return std::clamp<int64_t>(row, 0, inputRows());
    };
    range.firstRow = clampRow(oh0 * l.strideH - l.top);
    range.endRow = clampRow((oh1 - 1) * l.strideH +
                            (l.windowRows - 1) * l.dilationH + 1 - l.top);
    range.outputRows = oh1 - oh0;
    return range;
  }

  void emit() {
    f32 = b.getF32Type();
    vectorType = VectorType::get({lanes}, f32);
    epilogue = kiln::Epilogue::find(op, op.getDpsInits()[0], planeCount(),
                                    layout.outHeight * layout.outWidth);
    if (epilogue)
      epilogue->prepare(b, loc);
    auto planeView = [&](Value buffer) {
      return memref::CollapseShapeOp::create(
          b, loc, buffer, SmallVector<ReassociationIndices>{{0, 1}, {2, 3}});
    };
    source = planeView(input.source);
    // Tasks of a band of output rows (bandRanges) over consecutive planes,
    // each with its own buffer (two when planes are laid out ahead), whose
    // padding is written once per task (a static stack slot, which
    // kiln-outline-parallel-loops moves to the task's entry). Tasks are
    // numbered band-major.
    int64_t bands = bandCount();
    int64_t planeTasks =
        std::min(planeCount(), std::max<int64_t>(1, kTasks / bands));
    std::optional<BandedProducer> producer;
    if (bands > 1)
      producer = findBandedProducer();
    setUpInputPrefetch(/*writtenByBands=*/producer.has_value());
    target = epilogue ? epilogue->output() : planeView(op.getDpsInits()[0]);
    if (kind == WindowKind::DepthwiseConv)
      filters = memref::CollapseShapeOp::create(
          b, loc, op.getDpsInputs()[1],
          SmallVector<ReassociationIndices>{{0}, {1, 2}});

    if (producer) {
      emitInterleaved(*producer, bands, planeTasks);
    } else {
      emitTaskLoop(planeTasks,
                   bands == 1 ? std::optional<int64_t>(0) : std::nullopt);
    }
    // The padded copy goes: the pad's kernel, if it was one, now runs in
    // this one.
    if (!input.padOps.empty())
      kiln::fuseProfiledKernels(input.padOps.front(), op);
    op.erase();
    if (epilogue)
      epilogue->erase();
    for (Operation *padOp : input.padOps)
      if (padOp->use_empty() ||
          isa<memref::CopyOp, linalg::FillOp, linalg::MapOp>(padOp))
        padOp->erase();
  }

  /// One parallel loop over tasks of `planeTasks` ranges of planes: band
  /// `band`'s, or without one, every band's, band-major.
  void emitTaskLoop(int64_t planeTasks, std::optional<int64_t> band) {
    int64_t bands = bandCount();
    int64_t tasks = band ? planeTasks : bands * planeTasks;
    int64_t rows = band ? bandRange(*band, bands).outputRows : layout.outHeight;
    auto parallel =
        scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                ValueRange{index(tasks)}, ValueRange{index(1)});
    parallel->setAttr(
        kiln::kWorkAttrName,
        b.getI64IntegerAttr(planeCount() * rows * layout.outWidth *
                            layout.taps.size()));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(parallel.getBody()->getTerminator());
    Value task = parallel.getInductionVars()[0];
    Value planeTask =
        band ? task : arith::RemUIOp::create(b, loc, task, index(planeTasks));
    // `buffer` is the one padded last: the first plane's (and, laid out
    // ahead, every other plane's).
    auto paddedBuffer = [&] {
      buffer = memref::AllocaOp::create(b, loc,
                                        MemRefType::get({layout.length}, f32),
                                        b.getI64IntegerAttr(64));
      fillPadding();
      return buffer;
    };
    Value aheadBuffer = layOutAhead(planeTasks) ? paddedBuffer() : Value();
    paddedBuffer();
    int64_t planes = planeCount();
    Value first = arith::DivUIOp::create(b, loc, mul(planeTask, planes),
                                         index(planeTasks));
    Value last = arith::DivUIOp::create(b, loc, mul(add(planeTask, 1), planes),
                                        index(planeTasks));
    // Each band's code has static bounds (its short loops are unrolled).
    auto emitBand = [&](int64_t which) {
      BandRange range = bandRange(which, bands);
      if (bands > 1)
        fillRowsPastBand(range);
      if (aheadBuffer) {
        emitPlanesLaidOutAhead(first, last, range, aheadBuffer);
        return;
      }
      forLoop(first, last, [&](Value plane) {
        layOutPlane(plane, range);
        computePlane(plane, channelOf(plane), range);
      });
    };
    if (band) {
      emitBand(*band);
      return;
    }
    Value which = arith::DivUIOp::create(b, loc, task, index(planeTasks));
    auto cases = llvm::to_vector(llvm::seq<int64_t>(0, bands));
    auto perBand = scf::IndexSwitchOp::create(b, loc, TypeRange{}, which, cases,
                                              cases.size());
    b.setInsertionPointToStart(&perBand.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(b, loc);
    for (int64_t i = 0; i < bands; ++i) {
      b.setInsertionPointToStart(&perBand.getCaseRegions()[i].emplaceBlock());
      emitBand(i);
      scf::YieldOp::create(b, loc);
    }
  }

  /// Whether planes are laid out one ahead (emitPlanesLaidOutAhead): small
  /// planes of one phase with at most a 3x3 window, whose layout and taps
  /// (~220 instructions for 7x7) fit in the out-of-order window, when some
  /// task of `planeTasks` has two planes or more. Their taps' vector loads
  /// are not contained in one of the layout's stores just made, which store
  /// forwarding cannot serve: they wait for those stores to reach L1, and
  /// with one buffer those stores follow the previous plane's work in
  /// program order, so the planes run one after the other. MobileNetV2's
  /// 3x3 over 960 x 7 x 7, Zen 3, 1 thread, in the model: 33.3 -> 24.3 us
  /// (each of 3 layers). Larger planes, and stride 2's phases, have enough
  /// work of their own: 14 x 14, 28 x 28 and stride-2 planes ran 3-11%
  /// slower laid out ahead (larger windows were not measured).
  bool layOutAhead(int64_t planeTasks) {
    return layout.strideH == 1 && layout.strideW == 1 && bandCount() == 1 &&
           layout.outHeight * layout.outWidth <= kMaxLaidOutAheadOutputs &&
           layout.taps.size() <= kMaxLaidOutAheadTaps &&
           planeCount() > planeTasks;
  }

  /// Planes [first, last) of `range` in pairs, the next plane laid out
  /// before this one's taps, alternately into `buffer` and `aheadBuffer`.
  void emitPlanesLaidOutAhead(Value first, Value last, const BandRange &range,
                              Value aheadBuffer) {
    Value buffers[2] = {buffer, aheadBuffer};
    auto layOut = [&](Value plane, int64_t parity) {
      buffer = buffers[parity];
      layOutPlane(plane, range);
    };
    auto compute = [&](Value plane, int64_t parity) {
      buffer = buffers[parity];
      computePlane(plane, channelOf(plane), range);
    };
    ifBelow(first, last, [&] { layOut(first, 0); });
    Value pairs = arith::DivUIOp::create(
        b, loc, add(arith::SubIOp::create(b, loc, last, first), 1), index(2));
    forLoop(index(0), pairs, [&](Value pair) {
      Value plane = arith::AddIOp::create(b, loc, first, mul(pair, 2));
      Value next = add(plane, 1), afterNext = add(plane, 2);
      ifBelow(next, last, [&] { layOut(next, 1); });
      compute(plane, 0);
      ifBelow(afterNext, last, [&] { layOut(afterNext, 0); });
      ifBelow(next, last, [&] { compute(next, 1); });
    });
    buffer = buffers[0];
  }

  /// `body` emitted under `if (x < bound)`.
  void ifBelow(Value x, Value bound, function_ref<void()> body) {
    Value below =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, bound);
    auto branch = scf::IfOp::create(b, loc, below, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    body();
  }

  /// The channel of plane `plane` (planes are images x channels).
  Value channelOf(Value plane) {
    return arith::RemUIOp::create(b, loc, plane, index(channels()));
  }

  int64_t channels() {
    return cast<MemRefType>(op.getDpsInits()[0].getType()).getDimSize(1);
  }
  int64_t planeCount() {
    auto type = cast<MemRefType>(op.getDpsInits()[0].getType());
    return type.getDimSize(0) * type.getDimSize(1);
  }

  /// kiln-lower-matmul's loop over the items of the 1x1 convolution that
  /// writes this op's input (kiln::kColumnGroupsAttrName), and the loop's
  /// op in the block (the loop itself, or the one-iteration batch loop
  /// around it).
  struct BandedProducer {
    Operation *op;
    int64_t unitsPerGroup, columnsPerGroup, columns;
    int64_t groupCount() const {
      return llvm::divideCeil(columns, columnsPerGroup);
    }
  };

  /// The matmul whose items can run band by band ahead of this op's bands:
  /// the last op before this one but the padded copy's and those that
  /// neither read nor write memory; its items write this op's whole input
  /// by groups of pixels, every channel of them.
  std::optional<BandedProducer> findBandedProducer() {
    Operation *prev = op->getPrevNode();
    while (prev && (llvm::is_contained(input.padOps, prev) ||
                    isMemoryEffectFree(prev) || kiln::isProfileHook(prev) ||
                    isa<memref::AllocOp, ViewLikeOpInterface>(prev)))
      prev = prev->getPrevNode();
    if (!prev)
      return std::nullopt;
    scf::ParallelOp items = columnGroupLoop(prev);
    if (!items)
      return std::nullopt;
    ArrayRef<int64_t> groups =
        cast<DenseI64ArrayAttr>(items->getAttr(kiln::kColumnGroupsAttrName))
            .asArrayRef();
    auto sourceType = cast<MemRefType>(input.source.getType());
    if (sourceType.getDimSize(0) != 1 ||
        groups[3] != sourceType.getDimSize(1) ||
        groups[2] != sourceType.getDimSize(2) * sourceType.getDimSize(3) ||
        !writesBuffer(prev, rootBuffer(input.source)))
      return std::nullopt;
    return BandedProducer{prev, groups[0], groups[1], groups[2]};
  }

  /// `op`'s loop tagged with kiln::kColumnGroupsAttrName: `op` itself, or
  /// the only one in a one-iteration scf.for.
  static scf::ParallelOp columnGroupLoop(Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      auto inner = loop.getBody()->getOps<scf::ParallelOp>();
      if (!trips || *trips != 1 || !llvm::hasSingleElement(inner))
        return {};
      op = *inner.begin();
    }
    auto items = dyn_cast<scf::ParallelOp>(op);
    if (!items || !items->hasAttr(kiln::kColumnGroupsAttrName))
      return {};
    return items;
  }

  /// The buffer `value` is a view of (itself when it is none).
  static Value rootBuffer(Value value) {
    while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
      value = view.getViewSource();
    return value;
  }

  /// Whether `op` or an op in it writes to `buffer` or a view of it.
  static bool writesBuffer(Operation *op, Value buffer) {
    WalkResult result = op->walk([&](MemoryEffectOpInterface effects) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances)
        if (isa<MemoryEffects::Write>(effect.getEffect()) &&
            effect.getValue() && rootBuffer(effect.getValue()) == buffer)
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return result.wasInterrupted();
  }

  /// Runs `producer`'s items band by band: before band b's tasks, the
  /// groups of pixels that hold the input rows its windows read and no
  /// earlier band's did, then the rest after the last band. Each band's
  /// share of the input (the expansion's output, MobileNetV2's 96 x 112 x
  /// 112 floats in 4.8 MB) is then read from L2 right after it is written,
  /// not from L3 after all of it is. Within a band the matmul's units go
  /// unit-major (a thread's range is a range of the input's channels) and
  /// the band's tasks take ranges of planes: each thread reads the
  /// channels it wrote. Granite Rapids-class host (2 MiB L2), interleaved
  /// rounds: MobileNetV2's 16 -> 96 expansion, 3x3 / 2 and projection at
  /// 112 x 112 615 -> 551 us, its 24 -> 144, 3x3 / 1 and projection at 56 x
  /// 56 426 -> 382 us; the model 4.29 -> 4.18 ms on 1 thread, 2.59 -> 2.53
  /// on 2. (8 bands: the same on 1 thread, 2% slower on 2.)
  void emitInterleaved(const BandedProducer &producer, int64_t bands,
                       int64_t planeTasks) {
    kiln::fuseProfiledKernels(producer.op, op);
    auto sourceType = cast<MemRefType>(input.source.getType());
    int64_t width = sourceType.getDimSize(3);
    int64_t done = 0;
    for (int64_t band = 0; band < bands; ++band) {
      int64_t read =
          std::min(producer.columns, bandRange(band, bands).endRow * width);
      int64_t needed = llvm::divideCeil(read, producer.columnsPerGroup);
      emitProducerGroups(producer, done, needed);
      done = std::max(done, needed);
      emitTaskLoop(planeTasks, band);
    }
    emitProducerGroups(producer, done, producer.groupCount());
    producer.op->erase();
  }

  /// A copy of `producer` that runs its groups [first, end) of items.
  void emitProducerGroups(const BandedProducer &producer, int64_t first,
                          int64_t end) {
    if (first >= end)
      return;
    Operation *copy = b.clone(*producer.op);
    scf::ParallelOp items = columnGroupLoop(copy);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(items);
    int64_t groups = end - first, units = producer.unitsPerGroup;
    auto loop = scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                        ValueRange{index(groups * units)},
                                        ValueRange{index(1)});
    if (auto work = items->getAttrOfType<IntegerAttr>(kiln::kWorkAttrName))
      loop->setAttr(
          kiln::kWorkAttrName,
          b.getI64IntegerAttr(work.getInt() * groups / producer.groupCount()));
    b.setInsertionPointToStart(loop.getBody());
    Value iv = loop.getInductionVars()[0];
    Value unit = arith::DivUIOp::create(b, loc, iv, index(groups));
    Value group = add(arith::RemUIOp::create(b, loc, iv, index(groups)), first);
    Value item = arith::AddIOp::create(b, loc, mul(group, units), unit);
    Block *body = items.getBody();
    body->getArgument(0).replaceAllUsesWith(item);
    loop.getBody()->getOperations().splice(
        Block::iterator(loop.getBody()->getTerminator()), body->getOperations(),
        body->begin(), std::prev(body->end()));
    items.erase();
  }

  Value padScalar() {
    return arith::ConstantOp::create(b, loc,
                                     b.getF32FloatAttr(padValueOf(kind)));
  }

  /// Input rows and columns the window reads.
  int64_t inputRows() const {
    return std::min(layout.height, layout.paddedHeight - layout.top);
  }
  int64_t inputColumns() const {
    return std::min(layout.width, layout.paddedWidth - layout.left);
  }

  /// Writes the pad value to `length` floats of the buffer from `start`.
  void fillRange(Value start, int64_t length) {
    Value pad = vector::BroadcastOp::create(b, loc, vectorType, padScalar());
    forLoop(0, length / lanes, [&](Value i) {
      store(pad, buffer, {arith::AddIOp::create(b, loc, start, mul(i, lanes))},
            lanes);
    });
    if (length % lanes)
      store(pad, buffer, {add(start, length / lanes * lanes)}, length % lanes);
  }

  /// Writes the pad value over the phase rows of the input rows just past
  /// a band's, which this task never lays out but its last group's vectors
  /// reach in the lanes they drop (a vector's slack past its group's rows,
  /// then the taps' rows): defined values rather than stale stack memory,
  /// which could hold denormals (slow FMAs).
  void fillRowsPastBand(const BandRange &range) {
    const PlaneLayout &l = layout;
    int64_t reach =
        (llvm::divideCeil(lanes, l.pitch) + l.windowRows) * l.strideH;
    int64_t end = std::min(inputRows(), range.endRow + reach);
    for (int64_t y = range.endRow; y < end; ++y) {
      int64_t padded = y + l.top;
      for (int64_t pw = 0; pw < l.strideW; ++pw)
        fillRange(index(l.phaseOffset(padded % l.strideH, pw) +
                        padded / l.strideH * l.pitch),
                  l.pitch);
    }
  }

  /// Writes the pad value everywhere in the buffer that layOutPlane does
  /// not (the same positions for every plane): around each phase plane's
  /// interior, where the right border of one row and the left border of
  /// the next are one range, and past the phase planes.
  void fillPadding() {
    const PlaneLayout &l = layout;
    // Phase rows and columns [first, end) holding input rows or columns
    // [low, low + count) of the padded plane.
    auto interior = [](int64_t low, int64_t count, int64_t phase,
                       int64_t stride, int64_t limit) {
      int64_t first = llvm::divideCeilSigned(low - phase, stride);
      int64_t end = llvm::divideCeilSigned(low + count - phase, stride);
      return std::make_pair(std::clamp<int64_t>(first, 0, limit),
                            std::clamp<int64_t>(end, 0, limit));
    };
    int64_t planeSize = l.phaseRows * l.pitch;
    for (int64_t ph = 0; ph < l.strideH; ++ph)
      for (int64_t pw = 0; pw < l.strideW; ++pw) {
        int64_t base = l.phaseOffset(ph, pw);
        auto [r0, r1] =
            interior(l.top, inputRows(), ph, l.strideH, l.phaseRows);
        // (Named values: a lambda may not capture structured bindings in
        // C++17.)
        std::pair<int64_t, int64_t> columns =
            interior(l.left, inputColumns(), pw, l.strideW, l.pitch);
        int64_t c0 = columns.first, c1 = columns.second;
        if (r0 >= r1 || c0 >= c1) {
          fillRange(index(base), planeSize);
          continue;
        }
        fillRange(index(base), r0 * l.pitch + c0);
        forLoop(r0, r1 - 1, [&](Value r) {
          fillRange(add(mul(r, l.pitch), base + c1), l.pitch - c1 + c0);
        });
        fillRange(index(base + (r1 - 1) * l.pitch + c1),
                  planeSize - (r1 - 1) * l.pitch - c1);
      }
    int64_t phases = l.strideH * l.strideW * planeSize;
    fillRange(index(phases), l.length - phases);
  }

  /// Copies input rows [range.firstRow, range.endRow) of plane `plane` into
  /// the buffer's phase planes.
  void layOutPlane(Value plane, const BandRange &range) {
    const PlaneLayout &l = layout;
    int64_t rows = inputRows(), columns = inputColumns();
    auto layOutRows = [&](int64_t first, int64_t end, bool spill) {
      forLoop(first, end, [&](Value y) {
        Value padded = add(y, l.top);
        Value phase = arith::RemUIOp::create(b, loc, padded, index(l.strideH));
        Value phaseRow =
            arith::DivUIOp::create(b, loc, padded, index(l.strideH));
        // Buffer offset of padded row `padded`, phase column 0.
        Value rowBase = arith::AddIOp::create(
            b, loc, mul(phase, l.phaseOffset(1, 0)), mul(phaseRow, l.pitch));
        Value inRow = mul(y, l.width);
        if (l.strideW == 1)
          copyRow(plane, inRow, rowBase, columns, spill);
        else
          deinterleaveRow(plane, inRow, rowBase, columns);
      });
    };
    // With one phase, a row's tail may be stored whole: its lanes past the
    // row hold the pad value, and land on padding or on later rows, which
    // are copied afterwards (or, past the band, read only by lanes its
    // outputs drop: fillRowsPastBand). The last rows, whose tail could reach
    // past the buffer, keep a masked store (masked stores are slow on AVX2).
    int64_t spilling =
        l.strideH == 1 && l.strideW == 1
            ? std::max<int64_t>(0, rows - llvm::divideCeil(lanes, l.pitch) - 1)
            : 0;
    layOutRows(range.firstRow, std::min(range.endRow, spilling),
               /*spill=*/true);
    layOutRows(std::max(range.firstRow, spilling), range.endRow,
               /*spill=*/false);
  }

  /// Whether the input is prefetched as it is laid out (prefetchInput): when
  /// it is large enough to come from memory, not when a banded producer
  /// writes each band's input just before the band reads it
  /// (`writtenByBands`: the band's rows are still in the caches, L2 or L3).
  /// MobileNetV2's 16 -> 96 expansion at 112 x 112 and the 3x3 / 2 after
  /// it, band by band, on Zen 3 (1 thread, alternated runs): 743 -> 696 us
  /// without the prefetches; MobileNetV2 b1 0.75% faster (0.2% on 2
  /// threads), b8 0.7% (1.1%).
  void setUpInputPrefetch(bool writtenByBands) {
    auto sourceType = cast<MemRefType>(source.getType());
    prefetchesInput =
        !writtenByBands && prefetchMinBytes > 0 &&
        sourceType.getNumElements() * 4 >= prefetchMinBytes &&
        memref::CollapseShapeOp::isGuaranteedCollapsible(sourceType, {{0, 1}});
    if (prefetchesInput)
      flatSource = memref::CollapseShapeOp::create(
          b, loc, source, SmallVector<ReassociationIndices>{{0, 1}});
  }

  /// Prefetches the input kLayoutPrefetchFloats past `at` in plane `plane`
  /// (clamped to the input; into the next planes, which the task lays out
  /// next), when the input is large enough to come from memory. A plane's
  /// rows are read in a burst between computing planes, which the hardware
  /// prefetchers do not run far enough ahead of: MobileNetV2 b8's 3x3 / 2
  /// over 8 x 96 x 112 x 112 read its input at 8.5 GB/s. Zen 5, 1 thread,
  /// per-kernel medians of both orders: that layer alone 4.03 -> 3.08 ms,
  /// in MobileNetV2 b8 3.10 -> 2.58 (its window ops 10-36% faster, the
  /// model ~4%); ResNet-style b1's max pool over 3.2 MB 294 -> 228 us.
  /// MobileNetV2 b1's 3x3 layers over 1.6-1.8 MB, still in the caches,
  /// ran 8-15% slower with it (hence prefetch-min-bytes), and an input a
  /// banded producer writes takes none (setUpInputPrefetch). Intel's cores
  /// do not take it (kiln::cpu::windowPrefetchMinBytes).
  void prefetchInput(Value plane, Value at) {
    if (!prefetchesInput)
      return;
    auto type = cast<MemRefType>(source.getType());
    int64_t planeFloats = type.getDimSize(1);
    Value offset =
        add(arith::AddIOp::create(b, loc, mul(plane, planeFloats), at),
            kLayoutPrefetchFloats);
    Value clamped = arith::MinUIOp::create(b, loc, offset,
                                           index(type.getNumElements() - 1));
    memref::PrefetchOp::create(b, loc, flatSource, ValueRange{clamped},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }

  /// Stride 1: the row's `columns` floats to rowBase + left; with `spill`,
  /// the last chunk is stored whole, the pad value past the row.
  void copyRow(Value plane, Value inRow, Value rowBase, int64_t columns,
               bool spill) {
    auto chunk = [&](Value x, int64_t count) {
      Value from = arith::AddIOp::create(b, loc, inRow, x);
      prefetchInput(plane, from);
      Value to = add(arith::AddIOp::create(b, loc, rowBase, x), layout.left);
      if (spill && count < lanes) {
        Value pad =
            vector::BroadcastOp::create(b, loc, vectorType, padScalar());
        Value v = vector::MaskedLoadOp::create(b, loc, vectorType, source,
                                               ValueRange{plane, from},
                                               mask(count), pad);
        store(v, buffer, {to}, lanes);
        return;
      }
      store(load(source, {plane, from}, count), buffer, {to}, count);
    };
    int64_t full = columns / lanes;
    forLoop(0, full, [&](Value i) { chunk(mul(i, lanes), lanes); });
    if (columns % lanes)
      chunk(index(full * lanes), columns % lanes);
  }

  /// Stride 2: input column x goes to phase (x + left) mod 2, column
  /// (x + left) / 2. Chunks of 2 * lanes columns: even and odd ones by two
  /// shuffles, each stored at once. A full chunk of 8-lane vectors is read
  /// as quarters (loadQuarters), whose in-lane shuffles need no cross-lane
  /// vpermpd after them: MobileNetV2's 3x3 / 2 over 96 x 112 x 112, Zen 3,
  /// 1 thread, 6% faster.
  void deinterleaveRow(Value plane, Value inRow, Value rowBase,
                       int64_t columns) {
    SmallVector<int64_t> evens, odds;
    for (int64_t i = 0; i < lanes; ++i) {
      evens.push_back(2 * i);
      odds.push_back(2 * i + 1);
    }
    auto chunk = [&](Value x0, int64_t count) {
      Value at = arith::AddIOp::create(b, loc, inRow, x0);
      prefetchInput(plane, at);
      if (count > lanes)
        prefetchInput(plane, add(at, lanes));
      Value low, high;
      ArrayRef<int64_t> evenLanes = evens, oddLanes = odds;
      if (count == 2 * lanes && lanes == 8) {
        std::tie(low, high) = loadQuarters(plane, at);
        evenLanes = kInLaneEvens;
        oddLanes = kInLaneOdds;
      } else {
        low = load(source, {plane, at}, std::min(count, lanes));
        high = count > lanes ? load(source, {plane, add(at, lanes)},
                                    std::min(count - lanes, lanes))
                             : zeroVector();
      }
      Value half = arith::DivUIOp::create(b, loc, x0, index(2));
      for (int64_t parity = 0; parity < 2; ++parity) {
        int64_t kept = (count - parity + 1) / 2;
        if (kept <= 0)
          continue;
        Value lanesOf = vector::ShuffleOp::create(
            b, loc, low, high, parity ? oddLanes : evenLanes);
        int64_t padded = layout.left + parity;
        Value column = add(arith::AddIOp::create(b, loc, rowBase, half),
                           layout.phaseOffset(0, padded % 2) + padded / 2);
        store(lanesOf, buffer, {column}, kept);
      }
    };
    int64_t full = columns / (2 * lanes);
    forLoop(0, full, [&](Value i) { chunk(mul(i, 2 * lanes), 2 * lanes); });
    if (columns % (2 * lanes))
      chunk(index(full * 2 * lanes), columns % (2 * lanes));
  }

  /// 16 floats from `at` as two 8-lane vectors, [0..3, 8..11] and
  /// [4..7, 12..15] (four 4-lane loads), so that an in-lane shuffle
  /// (vshufps) of the two gives the even or the odd floats in order.
  std::pair<Value, Value> loadQuarters(Value plane, Value at) {
    auto quarterType = VectorType::get({4}, f32);
    SmallVector<Value, 4> quarters;
    for (int64_t q = 0; q < 4; ++q)
      quarters.push_back(vector::LoadOp::create(
          b, loc, quarterType, source, ValueRange{plane, add(at, 4 * q)}));
    SmallVector<int64_t> concat{0, 1, 2, 3, 4, 5, 6, 7};
    return {
        vector::ShuffleOp::create(b, loc, quarters[0], quarters[2], concat),
        vector::ShuffleOp::create(b, loc, quarters[1], quarters[3], concat)};
  }
  /// The even and the odd floats of loadQuarters' pair, in order.
  static constexpr int64_t kInLaneEvens[8] = {0, 2, 8, 10, 4, 6, 12, 14};
  static constexpr int64_t kInLaneOdds[8] = {1, 3, 9, 11, 5, 7, 13, 15};

  /// The plane's outputs in groups [range.firstGroup, range.endGroup).
  void computePlane(Value plane, Value channel, const BandRange &range) {
    const PlaneLayout &l = layout;
    SmallVector<Value> weights;
    for (int64_t t = 0; filters && t < int64_t(l.taps.size()); ++t) {
      Value w = memref::LoadOp::create(b, loc, filters,
                                       ValueRange{channel, index(t)});
      weights.push_back(vector::BroadcastOp::create(b, loc, vectorType, w));
    }
    int64_t groups = l.outHeight / l.groupRows;
    auto group = [&](Value position, Value output, int64_t rows) {
      if (l.rowAligned)
        computeRows(plane, weights, position, output, rows);
      else
        computeGroup(plane, weights, position, output, groupVectors(rows));
    };
    forLoop(range.firstGroup, std::min(range.endGroup, groups), [&](Value g) {
      group(mul(g, l.groupRows * l.pitch), mul(g, l.groupRows * l.outWidth),
            l.groupRows);
    });
    int64_t tail = l.outHeight % l.groupRows;
    if (tail && range.endGroup > groups)
      group(index(groups * l.groupRows * l.pitch),
            index(groups * l.groupRows * l.outWidth), tail);
  }

  /// `rows` row-aligned output rows from buffer position `position` and
  /// output position `output`, one column of vectors at a time (a loop over
  /// the full ones, then the partial one). Within a column, each distinct
  /// tap offset is loaded once, in memory order, and feeds every row that
  /// reads it: row r's tap (kh, kw) is row r + 1's tap (kh - 1, kw) (with
  /// stride 2, its row phase's next row), so 3x3 windows over 8 rows take
  /// 30 loads instead of 72. The unaligned loads, not the FMAs, bound this
  /// kernel on Zen 4 (9 per vector, most split across cache lines). The
  /// rows' accumulators are live together, so a load is used at once (16
  /// registers of AVX2 hold 4 accumulators, 9 filter taps and the load).
  void computeRows(Value plane, ArrayRef<Value> weights, Value position,
                   Value output, int64_t rows) {
    const PlaneLayout &l = layout;
    // The (row, tap) pairs reading each offset from a column's position.
    std::map<int64_t, SmallVector<std::pair<int64_t, int64_t>>> readers;
    for (int64_t r = 0; r < rows; ++r)
      for (auto [t, tap] : llvm::enumerate(l.taps))
        readers[r * l.pitch + tap].push_back({r, t});
    auto column = [&](Value x, int64_t kept) {
      Value at = arith::AddIOp::create(b, loc, position, x);
      Value out = arith::AddIOp::create(b, loc, output, x);
      SmallVector<Value> acc(rows);
      for (const auto &[offset, pairs] : readers) {
        Value v = vector::LoadOp::create(b, loc, vectorType, buffer,
                                         ValueRange{add(at, offset)});
        for (auto [r, t] : pairs)
          acc[r] =
              accumulate(acc[r], v, weights.empty() ? Value() : weights[t]);
      }
      for (int64_t r = 0; r < rows; ++r)
        storeOutput(acc[r], plane, add(out, r * l.outWidth), kept);
    };
    int64_t full = l.outWidth / lanes;
    forLoop(0, full, [&](Value c) { column(mul(c, lanes), lanes); });
    if (l.outWidth % lanes)
      column(index(full * lanes), l.outWidth % lanes);
  }

  void computeGroup(Value plane, ArrayRef<Value> weights, Value position,
                    Value output, ArrayRef<GroupVector> vectors) {
    for (auto [v, group] : llvm::enumerate(vectors)) {
      int64_t kept = group.keptLanes.size();
      if (!kept)
        continue;
      Value at = add(position, v * lanes);
      Value acc;
      for (auto [t, tap] : llvm::enumerate(layout.taps)) {
        Value x = vector::LoadOp::create(b, loc, vectorType, buffer,
                                         ValueRange{add(at, tap)});
        acc = accumulate(acc, x, weights.empty() ? Value() : weights[t]);
      }
      // The kept lanes to the front, in order.
      SmallVector<int64_t> order(group.keptLanes);
      for (int64_t lane = 0; int64_t(order.size()) < lanes; ++lane)
        if (!llvm::is_contained(group.keptLanes, lane))
          order.push_back(lane);
      if (!llvm::equal(order, llvm::seq<int64_t>(0, lanes)))
        acc = vector::ShuffleOp::create(b, loc, acc, acc, order);
      storeOutput(acc, plane, add(output, group.firstOutput), kept);
    }
  }

  /// The `kept` first lanes of `acc` to the output at `column` of `plane`,
  /// after the epilogue.
  void storeOutput(Value acc, Value plane, Value column, int64_t kept) {
    if (epilogue)
      acc = epilogue->apply(b, loc, acc, plane, column,
                            kept == lanes ? Value() : mask(kept));
    store(acc, target, {plane, column}, kept);
  }

  /// `acc` (null before the first tap) combined with tap `x`.
  Value accumulate(Value acc, Value x, Value weight) {
    switch (kind) {
    case WindowKind::DepthwiseConv:
      if (!acc)
        return arith::MulFOp::create(b, loc, x, weight);
      return vector::FMAOp::create(b, loc, x, weight, acc);
    case WindowKind::MaxPool: {
      if (!acc)
        return x;
      // NaN still wins; which zero is the larger does not matter to a pool
      // (max(-0, +0) may be either), which lets LLVM drop the sign blend:
      // 3 instructions per tap instead of 6.
      auto noSignedZeros = arith::FastMathFlagsAttr::get(
          b.getContext(), arith::FastMathFlags::nsz);
      return arith::MaximumFOp::create(b, loc, acc, x, noSignedZeros);
    }
    case WindowKind::SumPool:
      return acc ? arith::AddFOp::create(b, loc, acc, x).getResult() : x;
    }
    llvm_unreachable("unknown window kind");
  }

  linalg::LinalgOp op;
  WindowKind kind;
  DenseIntElementsAttr strides, dilations;
  int64_t lanes, prefetchMinBytes;
  OpBuilder b;
  Location loc;
  Type f32;
  VectorType vectorType;
  PaddedInput input;
  PlaneLayout layout;
  std::optional<kiln::Epilogue> epilogue;
  /// [planes, H * W] input, [planes, OH * OW] output, [C, KH * KW] filters,
  /// the stack buffer.
  Value source, target, filters, buffer;
  /// Whether the layout prefetches the input, which it then reads as one
  /// row of floats (prefetchInput).
  bool prefetchesInput = false;
  Value flatSource;
};

struct LowerWindowOpsPass
    : public kiln::impl::LowerWindowOpsBase<LowerWindowOpsPass> {
  using LowerWindowOpsBase::LowerWindowOpsBase;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::DepthwiseConv2DNchwChwOp, linalg::PoolingNchwMaxOp,
              linalg::PoolingNchwSumOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto conv = dyn_cast<linalg::DepthwiseConv2DNchwChwOp>(op))
        WindowEmitter(conv, WindowKind::DepthwiseConv, conv.getStrides(),
                      conv.getDilations(), lanes, prefetchMinBytes)
            .run();
      else if (auto pool = dyn_cast<linalg::PoolingNchwMaxOp>(op))
        WindowEmitter(pool, WindowKind::MaxPool, pool.getStrides(),
                      pool.getDilations(), lanes, prefetchMinBytes)
            .run();
      else if (auto pool = dyn_cast<linalg::PoolingNchwSumOp>(op))
        WindowEmitter(pool, WindowKind::SumPool, pool.getStrides(),
                      pool.getDilations(), lanes, prefetchMinBytes)
            .run();
    }
  }
};

} // namespace
