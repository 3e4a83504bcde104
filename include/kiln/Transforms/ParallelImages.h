//===- ParallelImages.h - batches of small images in parallel --*- C++ -*-===//
//
// kiln-lower-matmul runs a batch of many small images (a grouped
// convolution's groups) in parallel, each task writing its images' operands;
// kiln-split-grouped-convs keeps strided convolutions with that many groups
// batched so that they can. One constant for both.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PARALLELIMAGES_H
#define KILN_TRANSFORMS_PARALLELIMAGES_H

#include <cstdint>

namespace kiln {

/// The fewest images of a batch, each of at most kMaxParallelImageWork
/// multiply-adds (kiln-lower-matmul), whose operands written per image are
/// written and used by the image's task, the images in parallel, rather than
/// one image at a time with a thread-pool dispatch each. A grouped
/// convolution's groups are such images: 3x3 256 -> 256 in 64 groups at
/// 56x56 (4 x 36 x 3192 an image), 2 threads (Zen 3): 1.06 ms staged one
/// group at a time, 0.89 laid out all at once before the matmul, 0.81 in
/// parallel.
constexpr int64_t kMinParallelImages = 16;

} // namespace kiln

#endif // KILN_TRANSFORMS_PARALLELIMAGES_H
