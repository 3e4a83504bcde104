//===- ShapeUtils.cpp - shape arithmetic for kiln ops ---------------------===//

#include "kiln/Support/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using llvm::ArrayRef;
using llvm::Expected;

namespace kiln::shape {
namespace {

template <typename... Ts> llvm::Error error(const char *fmt, Ts &&...values) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv(fmt, std::forward<Ts>(values)...).str());
}

std::string dimToString(int64_t dim) {
  return isDynamic(dim) ? "?" : std::to_string(dim);
}

// Floor division that also handles negative numerators (pads may crop).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

} // namespace

bool isStatic(ArrayRef<int64_t> shape) {
  return llvm::none_of(shape, isDynamic);
}

std::string toString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string out;
  for (auto [i, dim] : llvm::enumerate(shape))
    out += (i ? "x" : "") + dimToString(dim);
  return out;
}

bool areCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a, b))
    if (!isDynamic(x) && !isDynamic(y) && x != y)
      return false;
  return true;
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (isDynamic(dim))
      return kDynamic;
    count *= dim;
  }
  return count;
}

Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return error("axis {0} is out of range for rank {1} (expected [{2}, {3}])",
                 axis, rank, -rank, rank - 1);
  return axis < 0 ? axis + rank : axis;
}

Expected<Shape> normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  Shape result;
  for (int64_t axis : axes) {
    Expected<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return normalized.takeError();
    if (llvm::is_contained(result, *normalized))
      return error("axis {0} appears more than once", axis);
    result.push_back(*normalized);
  }
  llvm::sort(result);
  return result;
}

Expected<Shape> broadcast(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  Shape result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [i, dim] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + i];
      if (dim == 1 || out == dim)
        continue;
      if (out == 1) {
        out = dim;
      } else if (isDynamic(dim) || isDynamic(out)) {
        // A dynamic dim broadcast against a known size > 1 must equal it at
        // run time; against another dynamic dim the result stays unknown.
        out = isDynamic(out) ? dim : out;
      } else {
        std::string all;
        for (auto [j, s] : llvm::enumerate(shapes))
          all += (j ? " vs " : "") + toString(s);
        return error("shapes {0} are not broadcast-compatible: dim {1} of "
                     "the result would need both {2} and {3}",
                     all, offset + i, out, dim);
      }
    }
  }
  return result;
}

Expected<Shape> reshape(ArrayRef<int64_t> input, ArrayRef<int64_t> target) {
  Shape result(target.begin(), target.end());
  int64_t inferredIndex = -1;
  int64_t knownProduct = 1;
  for (auto [i, dim] : llvm::enumerate(target)) {
    if (dim == -1) {
      if (inferredIndex >= 0)
        return error("reshape target [{0}] has more than one -1",
                     llvm::make_range(target.begin(), target.end()));
      inferredIndex = i;
    } else if (dim < 0) {
      return error("reshape target dim {0} is {1}; expected a size >= 0 or "
                   "-1",
                   i, dim);
    } else {
      knownProduct *= dim;
    }
  }
  int64_t inputCount = numElements(input);
  if (inferredIndex >= 0) {
    if (isDynamic(inputCount)) {
      result[inferredIndex] = kDynamic;
    } else if (knownProduct == 0 || inputCount % knownProduct != 0) {
      return error("cannot reshape {0} ({1} elements) to [{2}]: the other "
                   "dims ({3} elements) do not divide it",
                   toString(input), inputCount,
                   llvm::make_range(target.begin(), target.end()),
                   knownProduct);
    } else {
      result[inferredIndex] = inputCount / knownProduct;
    }
  } else if (!isDynamic(inputCount) && inputCount != knownProduct) {
    return error("cannot reshape {0} ({1} elements) to {2} ({3} elements)",
                 toString(input), inputCount, toString(target), knownProduct);
  }
  return result;
}

Expected<Shape> matmul(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.size() < 2 || rhs.size() < 2)
    return error("matmul operands must have rank >= 2, got {0} and {1}",
                 toString(lhs), toString(rhs));
  int64_t k1 = lhs.back(), k2 = rhs[rhs.size() - 2];
  if (!isDynamic(k1) && !isDynamic(k2) && k1 != k2)
    return error("matmul contraction dims differ: {0} x {1} (K = {2} vs {3})",
                 toString(lhs), toString(rhs), k1, k2);
  Expected<Shape> batch = broadcast({lhs.drop_back(2), rhs.drop_back(2)});
  if (!batch)
    return error("matmul batch dims: {0}", llvm::toString(batch.takeError()));
  batch->push_back(lhs[lhs.size() - 2]);
  batch->push_back(rhs.back());
  return batch;
}

Expected<int64_t> windowOutputSize(int64_t input, int64_t kernel,
                                   int64_t stride, int64_t dilation,
                                   int64_t padBegin, int64_t padEnd,
                                   bool ceilMode) {
  if (kernel <= 0 || stride <= 0 || dilation <= 0)
    return error("window kernel ({0}), stride ({1}) and dilation ({2}) must "
                 "be positive",
                 kernel, stride, dilation);
  if (isDynamic(input))
    return kDynamic;
  int64_t padded = input + padBegin + padEnd;
  int64_t span = dilation * (kernel - 1) + 1;
  if (padded < span)
    return error("window of extent {0} (kernel {1}, dilation {2}) does not "
                 "fit in input size {3} padded to {4}",
                 span, kernel, dilation, input, padded);
  int64_t steps = padded - span;
  int64_t size = (ceilMode ? ceilDiv(steps, stride) : steps / stride) + 1;
  // The last window must start inside the input or its leading padding.
  if (ceilMode && (size - 1) * stride >= input + padBegin)
    --size;
  return size;
}

Expected<Shape> windowOutputShape(ArrayRef<int64_t> spatial,
                                  const Window &window) {
  size_t n = spatial.size();
  if (window.kernel.size() != n || window.strides.size() != n ||
      window.dilations.size() != n || window.pads.size() != 2 * n)
    return error("{0} spatial dims need {0} kernel sizes, strides and "
                 "dilations and {1} pads; got {2}, {3}, {4} and {5}",
                 n, 2 * n, window.kernel.size(), window.strides.size(),
                 window.dilations.size(), window.pads.size());
  Shape result;
  for (size_t i = 0; i < n; ++i) {
    Expected<int64_t> size = windowOutputSize(
        spatial[i], window.kernel[i], window.strides[i], window.dilations[i],
        window.pads[i], window.pads[i + n], window.ceilMode);
    if (!size)
      return error("spatial dim {0}: {1}", i, llvm::toString(size.takeError()));
    result.push_back(*size);
  }
  return result;
}

Expected<Shape> conv(ArrayRef<int64_t> input, ArrayRef<int64_t> filter,
                     ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                     ArrayRef<int64_t> pads, int64_t groups) {
  if (input.size() < 3)
    return error("conv input must be [N, C, D1, ...] (rank >= 3), got {0}",
                 toString(input));
  if (filter.size() != input.size())
    return error("conv filter {0} must have the input's rank {1}",
                 toString(filter), input.size());
  if (groups <= 0)
    return error("conv groups must be positive, got {0}", groups);
  int64_t channels = input[1], filterChannels = filter[1],
          outChannels = filter[0];
  if (!isDynamic(channels) && channels % groups != 0)
    return error("conv input channels {0} are not divisible by groups {1}",
                 channels, groups);
  if (!isDynamic(outChannels) && outChannels % groups != 0)
    return error("conv output channels {0} are not divisible by groups {1}",
                 outChannels, groups);
  if (!isDynamic(channels) && !isDynamic(filterChannels) &&
      channels != filterChannels * groups)
    return error("conv filter {0} expects {1} input channels per group but "
                 "the input has {2} channels in {3} group(s)",
                 toString(filter), filterChannels, channels, groups);
  Window window{filter.drop_front(2), strides, dilations, pads};
  Expected<Shape> spatial = windowOutputShape(input.drop_front(2), window);
  if (!spatial)
    return error("conv: {0}", llvm::toString(spatial.takeError()));
  Shape result{input[0], outChannels};
  result.append(spatial->begin(), spatial->end());
  return result;
}

Expected<Shape> pool(ArrayRef<int64_t> input, const Window &window) {
  if (input.size() < 3)
    return error("pooling input must be [N, C, D1, ...] (rank >= 3), got {0}",
                 toString(input));
  Expected<Shape> spatial = windowOutputShape(input.drop_front(2), window);
  if (!spatial)
    return error("pooling: {0}", llvm::toString(spatial.takeError()));
  Shape result{input[0], input[1]};
  result.append(spatial->begin(), spatial->end());
  return result;
}

Expected<Shape> reduce(ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                       bool keepDims) {
  Expected<Shape> normalized = normalizeAxes(axes, input.size());
  if (!normalized)
    return normalized.takeError();
  Shape result;
  for (auto [i, dim] : llvm::enumerate(input)) {
    if (!llvm::is_contained(*normalized, static_cast<int64_t>(i)))
      result.push_back(dim);
    else if (keepDims)
      result.push_back(1);
  }
  return result;
}

Expected<Shape> transpose(ArrayRef<int64_t> input, ArrayRef<int64_t> perm) {
  if (perm.size() != input.size())
    return error("permutation has {0} entries for a rank-{1} tensor",
                 perm.size(), input.size());
  Shape result;
  llvm::SmallVector<bool, 6> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      return error("[{0}] is not a permutation of 0..{1}",
                   llvm::make_range(perm.begin(), perm.end()),
                   static_cast<int64_t>(perm.size()) - 1);
    seen[p] = true;
    result.push_back(input[p]);
  }
  return result;
}

Expected<Shape> concat(ArrayRef<ArrayRef<int64_t>> inputs, int64_t axis) {
  if (inputs.empty())
    return error("concat needs at least one input");
  int64_t rank = inputs.front().size();
  Expected<int64_t> dim = normalizeAxis(axis, rank);
  if (!dim)
    return dim.takeError();
  Shape result(inputs.front().begin(), inputs.front().end());
  for (auto [i, input] : llvm::enumerate(inputs.drop_front())) {
    if (static_cast<int64_t>(input.size()) != rank)
      return error("concat input {0} has rank {1}, input 0 has rank {2}", i + 1,
                   input.size(), rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (d == *dim) {
        result[d] = (isDynamic(result[d]) || isDynamic(input[d]))
                        ? kDynamic
                        : result[d] + input[d];
      } else if (!isDynamic(input[d]) && !isDynamic(result[d]) &&
                 input[d] != result[d]) {
        return error("concat input {0} ({1}) differs from input 0 ({2}) in "
                     "dim {3}, which is not the concat axis",
                     i + 1, toString(input), toString(inputs.front()), d);
      } else if (isDynamic(result[d])) {
        result[d] = input[d];
      }
    }
  }
  return result;
}

Expected<llvm::SmallVector<Shape>> split(ArrayRef<int64_t> input, int64_t axis,
                                         ArrayRef<int64_t> sizes) {
  Expected<int64_t> dim = normalizeAxis(axis, input.size());
  if (!dim)
    return dim.takeError();
  int64_t total = 0;
  llvm::SmallVector<Shape> results;
  for (int64_t size : sizes) {
    if (size < 0)
      return error("split size {0} is negative", size);
    total += size;
    Shape piece(input.begin(), input.end());
    piece[*dim] = size;
    results.push_back(piece);
  }
  if (!isDynamic(input[*dim]) && total != input[*dim])
    return error("split sizes sum to {0} but dim {1} of {2} is {3}", total,
                 *dim, toString(input), input[*dim]);
  return results;
}

Expected<int64_t> sliceSize(int64_t dim, int64_t start, int64_t end,
                            int64_t step) {
  if (step == 0)
    return error("slice step must not be 0");
  if (!isDynamic(dim)) {
    bool inRange = step > 0 ? (0 <= start && start <= end && end <= dim)
                            : (-1 <= end && end <= start && start <= dim - 1);
    if (!inRange && !(step < 0 && dim == 0 && start == -1 && end == -1))
      return error("slice [{0}:{1}:{2}] is not normalized for a dim of size "
                   "{3}",
                   start, end, step, dim);
  }
  if (step > 0)
    return ceilDiv(std::max<int64_t>(end - start, 0), step);
  return ceilDiv(std::max<int64_t>(start - end, 0), -step);
}

Expected<Shape> slice(ArrayRef<int64_t> input, ArrayRef<int64_t> starts,
                      ArrayRef<int64_t> ends, ArrayRef<int64_t> steps) {
  if (starts.size() != input.size() || ends.size() != input.size() ||
      steps.size() != input.size())
    return error("slice of a rank-{0} tensor needs {0} starts, ends and "
                 "steps; got {1}, {2} and {3}",
                 input.size(), starts.size(), ends.size(), steps.size());
  Shape result;
  for (size_t i = 0; i < input.size(); ++i) {
    Expected<int64_t> size = sliceSize(input[i], starts[i], ends[i], steps[i]);
    if (!size)
      return error("dim {0}: {1}", i, llvm::toString(size.takeError()));
    result.push_back(*size);
  }
  return result;
}

Expected<Shape> gather(ArrayRef<int64_t> data, ArrayRef<int64_t> indices,
                       int64_t axis) {
  if (data.empty())
    return error("gather data must have rank >= 1");
  Expected<int64_t> dim = normalizeAxis(axis, data.size());
  if (!dim)
    return dim.takeError();
  Shape result(data.begin(), data.begin() + *dim);
  result.append(indices.begin(), indices.end());
  result.append(data.begin() + *dim + 1, data.end());
  return result;
}

Expected<Shape> pad(ArrayRef<int64_t> input, ArrayRef<int64_t> pads) {
  size_t rank = input.size();
  if (pads.size() != 2 * rank)
    return error("a rank-{0} tensor needs {1} pads, got {2}", rank, 2 * rank,
                 pads.size());
  Shape result;
  for (size_t i = 0; i < rank; ++i) {
    if (isDynamic(input[i])) {
      result.push_back(kDynamic);
      continue;
    }
    int64_t size = input[i] + pads[i] + pads[i + rank];
    if (size < 0)
      return error("pads {0} and {1} crop dim {2} of size {3} below zero",
                   pads[i], pads[i + rank], i, input[i]);
    result.push_back(size);
  }
  return result;
}

} // namespace kiln::shape
