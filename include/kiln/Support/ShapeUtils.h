//===- ShapeUtils.h - shape arithmetic for kiln ops -------------*- C++ -*-===//
//
// Pure shape computations (no MLIR) shared by op verification, shape inference
// and the frontend. A dimension is a size >= 0 or kDynamic (unknown until the
// model's inputs are pinned). Each function either returns the result shape
// or an llvm::Error whose message says exactly what is inconsistent.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_SHAPEUTILS_H
#define KILN_SUPPORT_SHAPEUTILS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <limits>
#include <string>

namespace kiln::shape {

/// Marker for a dimension whose size is not known at compile time. Equal to
/// mlir::ShapedType::kDynamic (checked in the dialect).
constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

using Shape = llvm::SmallVector<int64_t, 6>;

inline bool isDynamic(int64_t dim) { return dim == kDynamic; }
bool isStatic(llvm::ArrayRef<int64_t> shape);

/// "2x?x3" (a scalar prints as "scalar").
std::string toString(llvm::ArrayRef<int64_t> shape);

/// True when two shapes can describe the same tensor (same rank, each dim
/// equal or one of them dynamic).
bool areCompatible(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Product of the dims, or kDynamic when any dim is dynamic.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// Maps an axis in [-rank, rank) to [0, rank).
llvm::Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Normalized, sorted axes; rejects duplicates and out-of-range axes.
llvm::Expected<Shape> normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);

/// Numpy multidirectional broadcasting of any number of shapes.
llvm::Expected<Shape> broadcast(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// Resolves a reshape target (sizes >= 0 and at most one -1) against the
/// input shape; checks that the element counts agree when both are known.
llvm::Expected<Shape> reshape(llvm::ArrayRef<int64_t> input,
                              llvm::ArrayRef<int64_t> target);

/// [..., M, K] x [..., K, N] -> [broadcast(...), M, N].
llvm::Expected<Shape> matmul(llvm::ArrayRef<int64_t> lhs,
                             llvm::ArrayRef<int64_t> rhs);

/// Output size of a sliding window (convolution or pooling) along one dim.
/// With ceilMode the size rounds up, but the last window must still start
/// inside the input or its leading padding (ONNX semantics).
llvm::Expected<int64_t> windowOutputSize(int64_t input, int64_t kernel,
                                         int64_t stride, int64_t dilation,
                                         int64_t padBegin, int64_t padEnd,
                                         bool ceilMode = false);

/// Parameters of a sliding window over the trailing spatial dims.
struct Window {
  llvm::ArrayRef<int64_t> kernel;    // one entry per spatial dim
  llvm::ArrayRef<int64_t> strides;   // one entry per spatial dim, > 0
  llvm::ArrayRef<int64_t> dilations; // one entry per spatial dim, > 0
  llvm::ArrayRef<int64_t> pads;      // leading pads, then trailing pads
  bool ceilMode = false;
};

/// Spatial output sizes of a window over `spatial` input dims.
llvm::Expected<Shape> windowOutputShape(llvm::ArrayRef<int64_t> spatial,
                                        const Window &window);

/// Convolution: input [N, C, D...], filter [O, C/groups, K...].
llvm::Expected<Shape> conv(llvm::ArrayRef<int64_t> input,
                           llvm::ArrayRef<int64_t> filter,
                           llvm::ArrayRef<int64_t> strides,
                           llvm::ArrayRef<int64_t> dilations,
                           llvm::ArrayRef<int64_t> pads, int64_t groups);

/// Pooling: input [N, C, D...] -> [N, C, out...].
llvm::Expected<Shape> pool(llvm::ArrayRef<int64_t> input, const Window &window);

/// Reduction over `axes` (negative allowed); keepDims keeps size-1 dims.
llvm::Expected<Shape> reduce(llvm::ArrayRef<int64_t> input,
                             llvm::ArrayRef<int64_t> axes, bool keepDims);

/// Output dim i is input dim perm[i]; perm must be a permutation.
llvm::Expected<Shape> transpose(llvm::ArrayRef<int64_t> input,
                                llvm::ArrayRef<int64_t> perm);

/// Concatenation along `axis`; all other dims must agree.
llvm::Expected<Shape> concat(llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputs,
                             int64_t axis);

/// Pieces of `sizes` along `axis`; they must sum to the dim when it is known.
llvm::Expected<llvm::SmallVector<Shape>> split(llvm::ArrayRef<int64_t> input,
                                               int64_t axis,
                                               llvm::ArrayRef<int64_t> sizes);

/// Number of elements a normalized (start, end, step) picks from a dim.
llvm::Expected<int64_t> sliceSize(int64_t dim, int64_t start, int64_t end,
                                  int64_t step);

/// Strided slice with one (start, end, step) per dim.
llvm::Expected<Shape> slice(llvm::ArrayRef<int64_t> input,
                            llvm::ArrayRef<int64_t> starts,
                            llvm::ArrayRef<int64_t> ends,
                            llvm::ArrayRef<int64_t> steps);

/// data[:axis] + indices + data[axis+1:].
llvm::Expected<Shape> gather(llvm::ArrayRef<int64_t> data,
                             llvm::ArrayRef<int64_t> indices, int64_t axis);

/// Pads: leading pads of each dim, then trailing pads (negative crops).
llvm::Expected<Shape> pad(llvm::ArrayRef<int64_t> input,
                          llvm::ArrayRef<int64_t> pads);

} // namespace kiln::shape

#endif // KILN_SUPPORT_SHAPEUTILS_H
