//===- TargetDescription.cpp - NVIDIA GPU target descriptions -------------===//

#include "kiln/Target/CUDA/TargetDescription.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln::cuda {

namespace {

constexpr double kTera = 1e12;

// Vendor datasheet figures of each architecture's reference data-center (or,
// for sm_120, desktop) part: dense tensor-core rates, no sparsity.
const GPUDescription kGPUs[] = {
    {"sm_80", "A100 SXM 80GB", 108, 32, 1024, 163 * 1024, 65536, 19.5 * kTera,
     312 * kTera, 156 * kTera, 2.039e12},
    {"sm_90", "H100 SXM", 132, 32, 1024, 227 * 1024, 65536, 67 * kTera,
     989 * kTera, 494 * kTera, 3.35e12},
    {"sm_100", "B200", 148, 32, 1024, 227 * 1024, 65536, 80 * kTera,
     2250 * kTera, 1100 * kTera, 8.0e12},
    {"sm_120", "RTX 5090", 170, 32, 1024, 99 * 1024, 65536, 104.8 * kTera,
     209.5 * kTera, 104.8 * kTera, 1.792e12},
};

} // namespace

std::optional<GPUDescription> describeGPU(llvm::StringRef chip) {
  for (const GPUDescription &gpu : kGPUs)
    if (gpu.chip == chip)
      return gpu;
  return std::nullopt;
}

llvm::ArrayRef<GPUDescription> knownGPUs() { return kGPUs; }

} // namespace kiln::cuda
