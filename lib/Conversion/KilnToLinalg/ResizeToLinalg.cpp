//===- ResizeToLinalg.cpp - kiln.resize to linalg -------------------------===//
//
// Along each dim, which input indices an output index reads and with which
// weights depends on that index alone, and all of it is known at compile
// time: the coordinate transform, the rounding (nearest) or the two
// neighbours and their weights (linear) are evaluated here, once per index,
// in f32 as ONNX's reference computes them (`DimSampling`). Coordinates are
// clamped to the input, as in the reference.
//
// A resize is then separable: a linear resize blends along one dim at a
// time, one generic per dim that changes, `w0[o] * in[lo[o]] + w1[o] *
// in[hi[o]]` with the four per-index tables as operands; the dims that
// read one input index each (all of a nearest resize's) are one gather.
// Along rows the tables' reads are contiguous in the innermost loop; along
// the innermost dim they would be gathers, which LLVM leaves scalar, so
// where its indices repeat with a period of r outputs and a stride of s
// inputs (upsampling by a whole factor, downsampling by one), the run of
// periods is a generic over [..., periods, r] with tables of r phases,
// which kiln-unroll-small-loops unrolls: contiguous loads per phase, the
// phases' stores interleaved (`blendByPeriods`).
// The steps that shrink the tensor run first and those that grow it last,
// so the intermediate tensors stay small. A gather whose indices are
// affine in the output's along every dim, each input element repeated a
// whole number of times (upsampling by 2 with the default half_pixel
// transform and round_prefer_floor) or every s-th one read (downsampling
// by 2), is a copy whose input map is `d floordiv r` or `s * d + c`, which
// kiln-vectorize-row-copies turns into vector loads and shuffles.
//
// Computing coordinates, clamps and 2^k neighbours element by element ran
// at ~2 GB/s for nearest (256 x 32 x 32 -> 64 x 64: 1.94 ms against ONNX
// Runtime's 0.70) and ~0.6 GB/s for bilinear (6.9 ms against 3.3; by
// periods 0.33 ms, Zen 3, 1 thread).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir;

namespace kiln {
namespace {

/// The input coordinate of output index `o` along dim `d` (input size `n`),
/// before clamping: ONNX's coordinate transforms in f32.
float sourceCoordinate(ResizeOp op, int64_t n, int64_t d, int64_t o) {
  int64_t m = op.getSizes()[d];
  float scale = op.getScales()[d], x = float(o);
  switch (op.getCoordinateTransform()) {
  case CoordinateTransform::HalfPixel:
    return (x + 0.5f) / scale - 0.5f;
  case CoordinateTransform::PytorchHalfPixel:
    return m > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  case CoordinateTransform::AlignCorners: {
    // ONNX divides by the unrounded resized length n * scale.
    double resized = double(n) * scale;
    return m == 1 || resized <= 1 ? 0.0f
                                  : x * float(double(n - 1) / (resized - 1));
  }
  case CoordinateTransform::Asymmetric:
    return x / scale;
  case CoordinateTransform::TfHalfPixelForNearest:
    return (x + 0.5f) / scale;
  }
  llvm_unreachable("unknown coordinate transform");
}

float roundToNearest(NearestMode mode, float x) {
  switch (mode) {
  case NearestMode::RoundPreferFloor:
    return std::ceil(x - 0.5f);
  case NearestMode::RoundPreferCeil:
    return std::floor(x + 0.5f);
  case NearestMode::Floor:
    return std::floor(x);
  case NearestMode::Ceil:
    return std::ceil(x);
  }
  llvm_unreachable("unknown nearest mode");
}

/// What each output index `o` along one dim reads: `w0[o] * in[lo[o]] +
/// w1[o] * in[hi[o]]` where the dim blends, `in[lo[o]]` where it does not.
struct DimSampling {
  int64_t dim = 0, inputSize = 0;
  std::vector<int32_t> lo, hi;
  std::vector<float> w0, w1;
  bool blends = false;

  int64_t outputSize() const { return lo.size(); }

  bool isIdentity() const {
    if (blends || outputSize() != inputSize)
      return false;
    for (int64_t o = 0; o < outputSize(); ++o)
      if (lo[o] != o)
        return false;
    return true;
  }

  /// The growth of the tensor along this dim.
  double growth() const { return double(outputSize()) / double(inputSize); }

  /// For a dim that does not blend, its read `lo[o]` as an affine function
  /// of `o`: `o` (sizes equal), `o floordiv r` (each input repeated r
  /// times), a constant (one output), `s * o + c` (every s-th input).
  std::optional<AffineExpr> affineRead(MLIRContext *context) const {
    int64_t m = outputSize(), n = inputSize;
    auto matches = [&](auto index) {
      for (int64_t o = 0; o < m; ++o)
        if (lo[o] != index(o))
          return false;
      return true;
    };
    AffineExpr o = getAffineDimExpr(dim, context);
    int64_t r = n > 0 && m % n == 0 ? m / n : 0;
    int64_t c = lo[0], s = m > 1 ? lo[1] - lo[0] : 0;
    // (linalg takes a bare dim's loop range from the operand: the identity
    // only where the sizes agree.)
    if (m == n && matches([](int64_t i) { return i; }))
      return o;
    if (r > 1 && matches([&](int64_t i) { return i / r; }))
      return o.floorDiv(r);
    if (m == 1)
      return getAffineConstantExpr(c, context);
    if (s >= 2 && matches([&](int64_t i) { return s * i + c; }))
      return o * s + c;
    return std::nullopt;
  }
};

DimSampling sampleDim(ResizeOp op, RankedTensorType inputType, int64_t d) {
  DimSampling sampling;
  sampling.dim = d;
  int64_t n = sampling.inputSize = inputType.getDimSize(d);
  int64_t m = op.getSizes()[d];
  auto clampIndex = [&](float x) {
    return int32_t(std::min(std::max(x, 0.0f), float(n - 1)));
  };
  bool linear = op.getMode() == ResizeMode::Linear;
  // A linear resize leaves a dim of unchanged size and scale 1 as it is
  // (tf_half_pixel_for_nearest would otherwise blend it by half).
  bool unchanged = linear && m == n && op.getScales()[d] == 1.0f;
  for (int64_t o = 0; o < m; ++o) {
    float x = unchanged ? float(o) : sourceCoordinate(op, n, d, o);
    if (!linear) {
      sampling.lo.push_back(clampIndex(roundToNearest(op.getNearestMode(), x)));
      continue;
    }
    x = std::min(std::max(x, 0.0f), float(n - 1));
    float x0 = std::floor(x), w = x - x0;
    sampling.lo.push_back(clampIndex(x0));
    sampling.hi.push_back(clampIndex(x0 + 1));
    sampling.w0.push_back(1 - w);
    sampling.w1.push_back(w);
    sampling.blends |= w != 0;
  }
  return sampling;
}

/// A constant tensor of `shape` holding `values` (i32 indices or f32
/// weights).
template <typename T>
Value constantTable(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                    Type elementType, ArrayRef<T> values) {
  auto type = RankedTensorType::get(shape, elementType);
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}

/// `type` with the sizes of `dims` replaced by their output sizes.
RankedTensorType resizedType(RankedTensorType type,
                             ArrayRef<const DimSampling *> dims) {
  SmallVector<int64_t> shape(type.getShape());
  for (const DimSampling *dim : dims)
    shape[dim->dim] = dim->outputSize();
  return RankedTensorType::get(shape, type.getElementType());
}

/// The box of indices [begin, end) along `dim` of a tensor of `type`, all
/// of every other dim.
struct ColumnBox {
  SmallVector<int64_t> offsets, sizes, strides;
  bool whole;

  ColumnBox(RankedTensorType type, int64_t dim, int64_t begin, int64_t end)
      : offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1),
        whole(begin == 0 && end == type.getDimSize(dim)) {
    offsets[dim] = begin;
    sizes[dim] = end - begin;
  }

  Value extract(OpBuilder &b, Location loc, Value tensor) const {
    if (whole)
      return tensor;
    auto type = cast<RankedTensorType>(tensor.getType());
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sizes, type.getElementType()), tensor,
        ValueRange{}, ValueRange{}, ValueRange{},
        b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
        b.getDenseI64ArrayAttr(strides));
  }

  /// `value` written into the box of `tensor`: with `extract`, an update of
  /// the box in place once bufferized.
  Value insert(OpBuilder &b, Location loc, Value value, Value tensor) const {
    if (whole)
      return value;
    return tensor::InsertSliceOp::create(
        b, loc, value, tensor, ValueRange{}, ValueRange{}, ValueRange{},
        b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
        b.getDenseI64ArrayAttr(strides));
  }
};

/// The map of a table indexed by the loop dims `dims` of a generic of
/// `rank` dims.
AffineMap tableMap(OpBuilder &b, int64_t rank, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> indices;
  for (int64_t d : dims)
    indices.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, indices, b.getContext());
}

/// A parallel generic writing `init` (its shape the iteration space),
/// reading `tables` through `tableMaps` and computing each element with
/// `body` from the tables' elements.
Value tableGeneric(
    OpBuilder &b, Location loc, Value init, ArrayRef<Value> tables,
    ArrayRef<AffineMap> tableMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  SmallVector<AffineMap> maps(tableMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  return linalg::GenericOp::create(
             b, loc, init.getType(), tables, init, maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       body(nested, nestedLoc, args));
             })
      .getResult(0);
}

/// The loop indices of a generic's first `count` dims.
SmallVector<Value> loopIndices(OpBuilder &b, Location loc, int64_t count) {
  SmallVector<Value> indices;
  for (int64_t d = 0; d < count; ++d)
    indices.push_back(linalg::IndexOp::create(b, loc, d));
  return indices;
}

Value asIndex(OpBuilder &b, Location loc, Value i32) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i32);
}

/// Reads `input` at one index per output index along each of `dims`: a
/// copy with an affine input map where every dim's reads are affine, a
/// tensor.extract at indices from per-dim tables otherwise.
Value gather(OpBuilder &b, Location loc, Value input,
             ArrayRef<const DimSampling *> dims) {
  auto inputType = cast<RankedTensorType>(input.getType());
  RankedTensorType type = resizedType(inputType, dims);
  int64_t rank = type.getRank();
  Value init = detail::emptyTensor(b, loc, type);
  SmallVector<AffineExpr> reads;
  for (int64_t d = 0; d < rank; ++d)
    reads.push_back(b.getAffineDimExpr(d));
  bool affine = true;
  for (const DimSampling *dim : dims) {
    std::optional<AffineExpr> read = dim->affineRead(b.getContext());
    affine &= read.has_value();
    if (read)
      reads[dim->dim] = *read;
  }
  if (affine)
    return tableGeneric(
        b, loc, init, input, AffineMap::get(rank, 0, reads, b.getContext()),
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  SmallVector<Value> tables;
  SmallVector<AffineMap> maps;
  for (const DimSampling *dim : dims) {
    tables.push_back(constantTable(b, loc, dim->outputSize(), b.getI32Type(),
                                   ArrayRef<int32_t>(dim->lo)));
    maps.push_back(tableMap(b, rank, dim->dim));
  }
  return tableGeneric(
      b, loc, init, tables, maps,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        SmallVector<Value> coordinates = loopIndices(nested, nestedLoc, rank);
        for (auto [dim, index] : llvm::zip(dims, args))
          coordinates[dim->dim] = asIndex(nested, nestedLoc, index);
        return tensor::ExtractOp::create(nested, nestedLoc, input, coordinates)
            .getResult();
      });
}

/// One output element of a blend: `w0 * in[lo] + w1 * in[hi]` along `dim`,
/// at `coordinates` along the other dims.
struct BlendSample {
  Value lo, hi, w0, w1;
};

Value blendPair(OpBuilder &b, Location loc, Value input,
                SmallVector<Value> coordinates, int64_t dim,
                const BlendSample &sample) {
  auto read = [&](Value index) {
    coordinates[dim] = index;
    return tensor::ExtractOp::create(b, loc, input, coordinates).getResult();
  };
  Value low = arith::MulFOp::create(b, loc, sample.w0, read(sample.lo));
  Value high = arith::MulFOp::create(b, loc, sample.w1, read(sample.hi));
  return arith::AddFOp::create(b, loc, low, high);
}

/// The sample of tables (lo, hi, w0, w1) read as a generic's operands.
BlendSample tableSample(OpBuilder &b, Location loc, ValueRange args) {
  return {asIndex(b, loc, args[0]), asIndex(b, loc, args[1]), args[2], args[3]};
}

/// The tables (lo, hi, w0, w1) of output indices [begin, begin + count) of
/// `dim` as constants of `shape`. Indices past the output (the last
/// period's padding) repeat the last output's sample.
SmallVector<Value> sampleTables(OpBuilder &b, Location loc,
                                const DimSampling &dim, int64_t begin,
                                int64_t count, ArrayRef<int64_t> shape) {
  int64_t last = dim.outputSize() - 1;
  std::vector<int32_t> lo, hi;
  std::vector<float> w0, w1;
  for (int64_t o = begin; o < begin + count; ++o) {
    int64_t i = std::min(o, last);
    lo.push_back(dim.lo[i]);
    hi.push_back(dim.hi[i]);
    w0.push_back(dim.w0[i]);
    w1.push_back(dim.w1[i]);
  }
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  return {constantTable(b, loc, shape, i32, ArrayRef<int32_t>(lo)),
          constantTable(b, loc, shape, i32, ArrayRef<int32_t>(hi)),
          constantTable(b, loc, shape, f32, ArrayRef<float>(w0)),
          constantTable(b, loc, shape, f32, ArrayRef<float>(w1))};
}

/// Blends `input` along `dim.dim` from per-index tables, one generic over
/// the output.
Value blendByTables(OpBuilder &b, Location loc, Value input,
                    const DimSampling &dim) {
  RankedTensorType type =
      resizedType(cast<RankedTensorType>(input.getType()), {&dim});
  SmallVector<Value> tables =
      sampleTables(b, loc, dim, 0, dim.outputSize(), dim.outputSize());
  SmallVector<AffineMap> maps(tables.size(),
                              tableMap(b, type.getRank(), dim.dim));
  return tableGeneric(
      b, loc, detail::emptyTensor(b, loc, type), tables, maps,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return blendPair(nested, nestedLoc, input,
                         loopIndices(nested, nestedLoc, type.getRank()),
                         dim.dim, tableSample(nested, nestedLoc, args));
      });
}

/// A blend along the innermost dim over whole periods of r outputs:
/// outputs r * q + p for q in [first, last) read inputs s * q + shift[p]
/// and s * q + shift[p] + 1 with the weights w0[p] and w1[p] (upsampling by
/// a whole factor r, s = 1; align_corners where (m - 1) / (n - 1) is whole;
/// downsampling by a whole factor s, r = 1).
struct Periods {
  int64_t period = 0, stride = 0, first = 0, last = 0;
  std::vector<int32_t> shift;
  std::vector<float> w0, w1;
};

/// The longest run of periods of `dim`'s tables, with the shortest period
/// up to kiln-unroll-small-loops' trip limit (8) that covers at least half
/// of the output; none if no period does. Outside the run are the edges,
/// where coordinates are clamped.
std::optional<Periods> findPeriods(const DimSampling &dim) {
  constexpr int64_t kMaxPeriod = 8;
  int64_t m = dim.outputSize();
  for (int64_t r = 1; r <= kMaxPeriod && m / r >= 4; ++r) {
    int64_t count = m / r, middle = count / 2;
    int64_t s = dim.lo[(middle + 1) * r] - dim.lo[middle * r];
    auto matches = [&](int64_t q) {
      for (int64_t p = 0; p < r; ++p) {
        int64_t o = q * r + p, reference = middle * r + p;
        if (dim.hi[o] != dim.lo[o] + 1 ||
            dim.lo[o] - s * q != dim.lo[reference] - s * middle ||
            dim.w0[o] != dim.w0[reference] || dim.w1[o] != dim.w1[reference])
          return false;
      }
      return true;
    };
    if (s < 1 || !matches(middle))
      continue;
    Periods periods;
    periods.period = r;
    periods.stride = s;
    periods.first = middle;
    periods.last = middle + 1;
    while (periods.first > 0 && matches(periods.first - 1))
      --periods.first;
    while (periods.last < count && matches(periods.last))
      ++periods.last;
    if (2 * (periods.last - periods.first) < count)
      continue;
    for (int64_t p = 0; p < r; ++p) {
      periods.shift.push_back(dim.lo[middle * r + p] - s * middle);
      periods.w0.push_back(dim.w0[middle * r + p]);
      periods.w1.push_back(dim.w1[middle * r + p]);
    }
    return periods;
  }
  return std::nullopt;
}

/// Blends `input` along its innermost dim `d` by periods: the output laid
/// out as [..., Q, r] (Q periods, the last one padded past the output), the
/// run of periods one generic whose phase dim kiln-unroll-small-loops
/// unrolls, so that LLVM vectorizes the loop over periods with contiguous
/// loads per phase and the phases' stores interleaved by shuffles (reads
/// at indices from tables are gathers, which LLVM leaves scalar: 8
/// instructions an output); the edge periods before and after the run
/// read tables. Each generic writes its box of the output in place.
Value blendByPeriods(OpBuilder &b, Location loc, Value input,
                     const DimSampling &dim, const Periods &periods) {
  int64_t d = dim.dim, r = periods.period, m = dim.outputSize();
  int64_t count = (m + r - 1) / r;
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(inputType.getShape());
  shape[d] = count;
  shape.push_back(r);
  auto periodsType = RankedTensorType::get(shape, inputType.getElementType());
  Value dest = detail::emptyTensor(b, loc, periodsType);
  SmallVector<int64_t> periodAndPhase = {d, d + 1};
  auto blendBox =
      [&](int64_t begin, int64_t end, ArrayRef<Value> tables,
          ArrayRef<int64_t> tableDims,
          function_ref<BlendSample(OpBuilder &, Location, ValueRange, Value)>
              sample) {
        ColumnBox box(periodsType, d, begin, end);
        SmallVector<AffineMap> maps(tables.size(),
                                    tableMap(b, d + 2, tableDims));
        Value blended = tableGeneric(
            b, loc, box.extract(b, loc, dest), tables, maps,
            [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
              SmallVector<Value> coordinates =
                  loopIndices(nested, nestedLoc, d + 1);
              return blendPair(nested, nestedLoc, input, coordinates, d,
                               sample(nested, nestedLoc, args, coordinates[d]));
            });
        dest = box.insert(b, loc, blended, dest);
      };
  auto edge = [&](int64_t begin, int64_t end) {
    if (begin == end)
      return;
    blendBox(begin, end,
             sampleTables(b, loc, dim, begin * r, (end - begin) * r,
                          {end - begin, r}),
             periodAndPhase,
             [](OpBuilder &nested, Location nestedLoc, ValueRange args, Value) {
               return tableSample(nested, nestedLoc, args);
             });
  };
  edge(0, periods.first);
  // The run's table of first inputs holds shift[p] + s * first, to which
  // s times the generic's period index (counted from the run's first
  // period) adds.
  int64_t s = periods.stride;
  std::vector<int32_t> firstInputs;
  for (int32_t shift : periods.shift)
    firstInputs.push_back(shift + int32_t(s * periods.first));
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  blendBox(periods.first, periods.last,
           {constantTable(b, loc, r, i32, ArrayRef<int32_t>(firstInputs)),
            constantTable(b, loc, r, f32, ArrayRef<float>(periods.w0)),
            constantTable(b, loc, r, f32, ArrayRef<float>(periods.w1))},
           d + 1,
           [&](OpBuilder &nested, Location nestedLoc, ValueRange args,
               Value period) {
             Value first =
                 s == 1 ? period
                        : arith::MulIOp::create(nested, nestedLoc, period,
                                                arith::ConstantIndexOp::create(
                                                    nested, nestedLoc, s))
                              .getResult();
             Value lo = arith::AddIOp::create(
                 nested, nestedLoc, first, asIndex(nested, nestedLoc, args[0]));
             Value hi = arith::AddIOp::create(
                 nested, nestedLoc, lo,
                 arith::ConstantIndexOp::create(nested, nestedLoc, 1));
             return BlendSample{lo, hi, args[1], args[2]};
           });
  edge(periods.last, count);
  SmallVector<ReassociationIndices> phases;
  for (int64_t i = 0; i < d; ++i)
    phases.push_back({i});
  phases.push_back({d, d + 1});
  Value result = tensor::CollapseShapeOp::create(b, loc, dest, phases);
  if (count * r == m)
    return result;
  // The padding of the last period is left out: a view where the result
  // is read (the next blend), a copy only where it is the resize's result.
  return ColumnBox(cast<RankedTensorType>(result.getType()), d, 0, m)
      .extract(b, loc, result);
}

/// Blends `input` along one dim: by periods along the innermost dim where
/// its indices repeat, from per-index tables otherwise.
Value blend(OpBuilder &b, Location loc, Value input, const DimSampling &dim) {
  if (dim.dim == cast<RankedTensorType>(input.getType()).getRank() - 1)
    if (std::optional<Periods> periods = findPeriods(dim))
      return blendByPeriods(b, loc, input, dim, *periods);
  return blendByTables(b, loc, input, dim);
}

/// One step of a resize: the gather over the dims that read one index
/// each, or the blend along one dim.
struct ResizeStep {
  SmallVector<const DimSampling *> dims;
  bool blend = false;

  double growth() const {
    double product = 1;
    for (const DimSampling *dim : dims)
      product *= dim->growth();
    return product;
  }
  int64_t innermostDim() const { return dims.back()->dim; }
};

/// The steps of a resize, those that shrink the tensor most first; among
/// steps that grow it alike, the one along the inner dim first (an
/// upsampling's blend along rows then runs over the smaller tensor, the
/// blend of whole rows over the larger).
SmallVector<ResizeStep> planSteps(ArrayRef<DimSampling> dims) {
  SmallVector<ResizeStep> steps;
  ResizeStep gatherStep;
  for (const DimSampling &dim : dims) {
    if (dim.blends)
      steps.push_back({{&dim}, /*blend=*/true});
    else if (!dim.isIdentity())
      gatherStep.dims.push_back(&dim);
  }
  if (!gatherStep.dims.empty())
    steps.push_back(gatherStep);
  // (Each dim is in one step: the order is total.)
  llvm::sort(steps, [](const ResizeStep &a, const ResizeStep &b) {
    if (a.growth() != b.growth())
      return a.growth() < b.growth();
    return a.innermostDim() > b.innermostDim();
  });
  return steps;
}

struct ResizeToGeneric : public OpConversionPattern<ResizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!type.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "resize is lowered for f32");
    std::vector<DimSampling> dims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back(sampleDim(op, inputType, d));
    Value value = adaptor.getInput();
    for (const ResizeStep &step : planSteps(dims))
      value = step.blend ? blend(rewriter, op.getLoc(), value, *step.dims[0])
                         : gather(rewriter, op.getLoc(), value, step.dims);
    // Every dim unchanged: still a copy, the result a tensor of its own.
    if (value == adaptor.getInput())
      value = gather(rewriter, op.getLoc(), value, {});
    rewriter.replaceOp(op, value);
    return success();
  }
};

} // namespace

void populateResizeToLinalgPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns) {
  patterns.add<ResizeToGeneric>(converter, patterns.getContext());
}

} // namespace kiln
