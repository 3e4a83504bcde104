//===- Lanes.h - image-by-image layers on concurrent lanes ------*- C++ -*-===//
//
// kiln-split-batch runs a batch's large first layers image by image; with
// lanes, the pieces of the batch are dealt out to a few lanes, each a
// sequence of pieces that runs on one thread, the lanes in parallel. The
// names below carry the lanes from the kiln dialect, where the pieces are
// cloned, to the bufferized code, where kiln-form-lanes runs them as the
// iterations of one parallel loop.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_LANES_H
#define KILN_TRANSFORMS_LANES_H

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// The lane (i64) of an op of the image-by-image region (kiln-split-batch)
/// and of a kernel whose ops all run in that lane (kiln-fuse-kernels).
constexpr llvm::StringLiteral kLaneAttrName = "kiln.lane";

/// kiln-inline-kernels brackets each lane's run of kernels with calls to
/// these, the lane their i32 argument; kiln-form-lanes reads and erases
/// them.
constexpr llvm::StringLiteral kLaneBegin = "kiln_lane_begin";
constexpr llvm::StringLiteral kLaneEnd = "kiln_lane_end";

/// The unit attribute of the scf.parallel whose iterations are the lanes
/// (kiln-form-lanes): kiln-plan-memory gives each lane its own buffers and
/// kiln-outline-parallel-loops always runs it on the thread pool.
constexpr llvm::StringLiteral kLanesAttrName = "kiln.lanes";

/// The prefix of the functions kiln-outline-parallel-loops makes of the
/// kernels' loops inside a lanes task, called directly; the backend keeps
/// LLVM from inlining them.
constexpr llvm::StringLiteral kLaneKernelPrefix = "kiln_lane_kernel_";

} // namespace kiln

#endif // KILN_TRANSFORMS_LANES_H
