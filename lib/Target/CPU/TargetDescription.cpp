//===- TargetDescription.cpp - what kiln knows about a CPU ----------------===//

#include "kiln/Target/CPU/TargetDescription.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"

namespace kiln::cpu {
namespace {

constexpr double kEstimatedGBsPerCore = 35;
constexpr double kDefaultGHz = 3.0;

/// f32 lanes of one FMA pipe: Zen 4 executes 512-bit ops on 256-bit pipes.
int fmaLanes(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f") && machine.getTargetCPU() != "znver4")
    return 16;
  if (info->checkFeatures("+fma"))
    return 8;
  return 2; // SSE: a 4-lane multiply and add, no fusion
}

/// The host's clock from /proc/cpuinfo (the first core's), in GHz.
double hostGHz() {
  auto cpuinfo = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo");
  if (!cpuinfo)
    return kDefaultGHz;
  llvm::StringRef text = (*cpuinfo)->getBuffer();
  size_t at = text.find("cpu MHz");
  if (at == llvm::StringRef::npos)
    return kDefaultGHz;
  llvm::StringRef value = text.drop_front(at).split(':').second.trim();
  double mhz;
  if (value.split('\n').first.getAsDouble(mhz) || mhz <= 0)
    return kDefaultGHz;
  return mhz / 1000;
}

llvm::Expected<Roofline> readMachineFile(llvm::StringRef path, int threads) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read machine file " + path + ": " +
                                   buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError("machine file " + path + ": " +
                                   llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  auto number = [&](llvm::StringRef key) -> std::optional<double> {
    return object ? object->getNumber(key) : std::nullopt;
  };
  std::optional<double> perCore = number("fma_gflops_per_core");
  std::optional<double> oneThread = number("dram_gbs_1_thread");
  std::optional<double> allThreads = number("dram_gbs_all_threads");
  std::optional<double> cores = number("cores");
  if (!perCore || !oneThread || !allThreads || !cores)
    return llvm::createStringError(
        "machine file " + path +
        " needs numbers fma_gflops_per_core, dram_gbs_1_thread, "
        "dram_gbs_all_threads and cores");
  Roofline roofline;
  roofline.threads = threads;
  roofline.peakGflops = *perCore * threads;
  roofline.bandwidthGBs = threads <= 1 ? *oneThread : *allThreads;
  roofline.source = ("measured, " + path).str();
  return roofline;
}

} // namespace

llvm::Expected<Roofline> describeRoofline(const llvm::TargetMachine &machine,
                                          int threads,
                                          llvm::StringRef machineFile) {
  threads = std::max(threads, 1);
  if (!machineFile.empty())
    return readMachineFile(machineFile, threads);
  bool host = machine.getTargetCPU() == llvm::sys::getHostCPUName();
  double ghz = host ? hostGHz() : kDefaultGHz;
  Roofline roofline;
  roofline.threads = threads;
  roofline.peakGflops = 2 * fmaLanes(machine) * 2 * ghz * threads;
  roofline.bandwidthGBs = kEstimatedGBsPerCore * threads;
  roofline.source = llvm::formatv("estimated for {0} at {1:F2} GHz",
                                  machine.getTargetCPU(), ghz)
                        .str();
  return roofline;
}

} // namespace kiln::cpu
