//===- TargetDescription.h - NVIDIA GPU target descriptions -----*- C++ -*-===//
//
// What kiln's CUDA codegen and the report need to know about a GPU
// architecture: its shape (SMs, warp size, shared memory, registers) and its
// peaks (FLOP/s, HBM bandwidth). One reference part per architecture; the
// report can be given measured peaks instead.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CUDA_TARGETDESCRIPTION_H
#define KILN_TARGET_CUDA_TARGETDESCRIPTION_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace kiln::cuda {

struct GPUDescription {
  llvm::StringRef chip;          // "sm_90"
  llvm::StringRef referencePart; // the part the peaks are from
  int smCount;
  int warpSize;
  int maxThreadsPerBlock;
  int sharedMemoryPerBlock; // bytes, with the opt-in carve-out
  int registersPerSM;       // 32-bit registers
  double fp32Flops;         // FLOP/s, CUDA cores
  double tensorFp16Flops;   // FLOP/s, dense, fp32 accumulation
  double tensorTf32Flops;   // FLOP/s, dense
  double memoryBandwidth;   // bytes/s, DRAM
};

/// The description of `chip` ("sm_80", "sm_90", ...), or nullopt for an
/// architecture kiln has no description of.
std::optional<GPUDescription> describeGPU(llvm::StringRef chip);

/// Every architecture kiln describes, oldest first.
llvm::ArrayRef<GPUDescription> knownGPUs();

} // namespace kiln::cuda

#endif // KILN_TARGET_CUDA_TARGETDESCRIPTION_H
