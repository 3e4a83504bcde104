//===- TargetDescription.h - what kiln knows about a CPU --------*- C++ -*-===//

#ifndef KILN_TARGET_CPU_TARGETDESCRIPTION_H
#define KILN_TARGET_CPU_TARGETDESCRIPTION_H

#include "kiln/Target/Roofline.h"

#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <optional>
#include <string>

namespace kiln::cpu {

/// f32 lanes of one FMA pipe: 16 with AVX-512, except on Zen 4, which
/// executes 512-bit ops on 256-bit pipes; 8 with AVX2 and FMA.
int fmaLanes(const llvm::TargetMachine &machine);

/// A core's data (or unified) cache at one level.
struct CacheLevel {
  int64_t bytes;
  int ways;
};

/// The host's cache of `level` (1: L1 data, 2: L2) as Linux reports it
/// under `cpuDir` (its cache/indexN folders), or nullopt.
std::optional<CacheLevel>
hostDataCache(int level,
              llvm::StringRef cpuDir = "/sys/devices/system/cpu/cpu0");

/// Ways of a core's L1 data cache: the host's when compiling for it;
/// otherwise 12 on the cores with 48 KiB of it (Intel's since Sunny Cove,
/// Zen 5), 8 on the others (32 KiB).
int l1DataWays(const llvm::TargetMachine &machine);

/// Bytes of a core's L2: the host's when compiling for it; 2 MiB for
/// Intel's server cores since Sapphire Rapids, else 1 MiB.
int64_t coreL2Bytes(const llvm::TargetMachine &machine);

/// The smallest per-image input or result of a convolution or pool that
/// kiln-split-batch runs image by image (min-image-bytes): half of a
/// core's L2, so that the layers it splits could not keep a batch of their
/// activations in L2 and keep one image's in it (or in the window ops'
/// bands).
int64_t splitBatchMinImageBytes(const llvm::TargetMachine &machine);

/// Bytes of cache the matmul kernels order their work items for
/// (kiln-lower-matmul{l2-bytes}: an operand of at most half of it is read
/// again cheaply): 16 MiB on Zen 5, whose L3 serves such re-reads fast
/// enough; elsewhere twice a core's L2 (the host's when compiling for it;
/// 2 MiB for Intel's server cores since Sapphire Rapids, else 1 MiB).
int64_t matmulCacheBytes(const llvm::TargetMachine &machine);

/// Steps of k from which a matmul tile whose FMAs run at full rate packs an
/// operand it would read one row per step (a transposed A, such as a 1x1
/// convolution's input in NCHW with the pixels as rows; or B) per call
/// (kiln-lower-matmul{long-reduction}): 128 on Zen 1-3, 1024 elsewhere.
int64_t longReductionSteps(const llvm::TargetMachine &machine);

/// The smallest input (bytes) the depthwise convolutions' and pools' plane
/// layouts prefetch (kiln-lower-window-ops{prefetch-min-bytes}): 2 MiB, 0
/// (none) on Intel's cores, whose L2 streamer runs ahead of the layout by
/// itself.
int64_t windowPrefetchMinBytes(const llvm::TargetMachine &machine);

/// Whether the CPU rounds f32 to bf16 in one instruction (AVX512-BF16,
/// AVX-NE-CONVERT); Zen 3 and Intel's cores before Cooper Lake do not.
bool hasNativeBF16(const llvm::TargetMachine &machine);

/// The extensions of kiln::kCpuFeatures that `machine` enables, comma
/// separated in the table's order: what model.so records and the runtime
/// checks the CPU for when it loads the model.
std::string requiredCpuFeatures(const llvm::TargetMachine &machine);

/// The clock the calling thread's core runs at, in GHz: the fastest of a
/// few timed chains of dependent integer adds (one cycle each), ~15 ms in
/// all; nullopt off x86-64. What /proc/cpuinfo reports on a virtual machine
/// is often the host's base clock (2.45 GHz on a Zen 3 host whose cores
/// ran at 3.2).
std::optional<double> measureHostClockGHz();

/// The roofline of `machine`'s CPU on `threads` cores. With `machineFile`
/// (the JSON bench/probe writes, build/bench/probe.json: FMA peak and DRAM
/// triad bandwidth per thread count), the measured numbers; otherwise an
/// estimate: 2 FMA pipes x the FMA datapath's f32 lanes x 2 FLOPs x the
/// clock (the host's, measured, else from /proc/cpuinfo; else 3 GHz), and
/// 35 GB/s per streaming core. The source says which clock.
llvm::Expected<Roofline> describeRoofline(const llvm::TargetMachine &machine,
                                          int threads,
                                          llvm::StringRef machineFile);

} // namespace kiln::cpu

#endif // KILN_TARGET_CPU_TARGETDESCRIPTION_H
