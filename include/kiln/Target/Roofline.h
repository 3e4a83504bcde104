//===- Roofline.h - a target's compute and bandwidth ceilings ---*- C++ -*-===//

#ifndef KILN_TARGET_ROOFLINE_H
#define KILN_TARGET_ROOFLINE_H

#include <string>

namespace kiln {

/// The machine's ceilings for the threads a model runs on: a kernel takes at
/// least max(FLOPs / peak, bytes / bandwidth).
struct Roofline {
  double peakGflops = 0;   // FP32 FMA peak over `threads` cores
  double bandwidthGBs = 0; // DRAM bandwidth with `threads` cores streaming
  int threads = 1;
  std::string source; // where the numbers come from, for the report
};

} // namespace kiln

#endif // KILN_TARGET_ROOFLINE_H
