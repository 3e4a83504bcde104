//===- TargetDescription.cpp - what kiln knows about a CPU ----------------===//

#include "kiln/Target/CPU/TargetDescription.h"
#include "kiln/CpuFeatures.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>

namespace kiln::cpu {

int fmaLanes(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f") && machine.getTargetCPU() != "znver4")
    return 16;
  if (info->checkFeatures("+fma"))
    return 8;
  return 2; // SSE: a 4-lane multiply and add, no fusion
}

namespace {

/// Whether `machine` compiles for the CPU kiln runs on (--mcpu=native, or
/// the host's own name): its caches can then be read off the host.
bool targetsHost(const llvm::TargetMachine &machine) {
  return machine.getTargetCPU() == llvm::sys::getHostCPUName();
}

/// A sysfs cache attribute ("48K", "2048K", "12"): its value in units
/// (a K or M suffix scales it), or nullopt.
std::optional<int64_t> readCacheNumber(const llvm::Twine &path) {
  auto buffer = llvm::MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return std::nullopt;
  llvm::StringRef text = (*buffer)->getBuffer().trim();
  int64_t scale = 1;
  if (text.consume_back("K"))
    scale = 1024;
  else if (text.consume_back("M"))
    scale = 1024 * 1024;
  int64_t value;
  if (text.getAsInteger(10, value) || value <= 0)
    return std::nullopt;
  return value * scale;
}

} // namespace

std::optional<CacheLevel> hostDataCache(int level, llvm::StringRef cpuDir) {
  for (int index = 0;; ++index) {
    std::string dir = (cpuDir + "/cache/index" + llvm::Twine(index)).str();
    std::optional<int64_t> entryLevel = readCacheNumber(dir + "/level");
    if (!entryLevel)
      return std::nullopt;
    auto type = llvm::MemoryBuffer::getFileAsStream(dir + "/type");
    if (*entryLevel != level || !type ||
        (*type)->getBuffer().trim() == "Instruction")
      continue;
    std::optional<int64_t> bytes = readCacheNumber(dir + "/size");
    std::optional<int64_t> ways =
        readCacheNumber(dir + "/ways_of_associativity");
    if (!bytes || !ways)
      return std::nullopt;
    return CacheLevel{*bytes, static_cast<int>(*ways)};
  }
}

int l1DataWays(const llvm::TargetMachine &machine) {
  if (targetsHost(machine))
    if (std::optional<CacheLevel> l1 = hostDataCache(1))
      return l1->ways;
  // LLVM's names for them (-mcpu); hybrid parts by their performance cores
  // (their efficiency cores have 8 ways).
  static constexpr llvm::StringLiteral twelveWays[] = {
      "icelake-client",  "icelake-server", "tigerlake",     "rocketlake",
      "alderlake",       "raptorlake",     "meteorlake",    "arrowlake",
      "arrowlake-s",     "lunarlake",      "pantherlake",   "wildcatlake",
      "novalake",        "sapphirerapids", "emeraldrapids", "graniterapids",
      "graniterapids-d", "diamondrapids",  "znver5"};
  return llvm::is_contained(twelveWays, machine.getTargetCPU()) ? 12 : 8;
}

int64_t coreL2Bytes(const llvm::TargetMachine &machine) {
  constexpr int64_t kMiB = 1024 * 1024;
  if (targetsHost(machine))
    if (std::optional<CacheLevel> hostL2 = hostDataCache(2))
      return hostL2->bytes;
  static constexpr llvm::StringLiteral twoMiBL2[] = {
      "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d"};
  return llvm::is_contained(twoMiBL2, machine.getTargetCPU()) ? 2 * kMiB : kMiB;
}

int64_t splitBatchMinImageBytes(const llvm::TargetMachine &machine) {
  return coreL2Bytes(machine) / 2;
}

int64_t matmulCacheBytes(const llvm::TargetMachine &machine) {
  constexpr int64_t kMiB = 1024 * 1024;
  // Zen 5 (1 MiB L2, 32 MiB L3 per CCD): 16 MiB, so that an operand of up
  // to 8 MiB (a quarter of L3) counts as cheap to read again. A 128-row A
  // of 1.5 MB is then read again per panel of B from L3 rather than B (9.4
  // MB) per block of rows, over the whole of k: 128 x 3072 x 768 in the
  // BERT layer 3.22 -> 2.79 ms (1 thread, per kernel), alone 2.78 -> 2.70
  // (1 thread), 1.52 -> 1.41 (2); BERT layer b1 9.45 -> 8.78 ms (1
  // thread), 4.76 -> 4.65 (2), b8 75.3 -> 72.6; GPT-2 block b1 9.41 ->
  // 8.97, 5.20 -> 4.99; ResNet-style b1 6.84 -> 6.71; MobileNetV2, the MLP
  // and the square GEMMs within 1% (interleaved rounds, medians). 8 MiB
  // made 1024^3 panel-major in slices of k, 5% slower.
  if (machine.getTargetCPU() == "znver5")
    return 16 * kMiB;
  // Elsewhere twice a core's L2, so that an operand of up to the L2's size
  // counts as cheap to read again; an L3 shared by dozens of cores is not
  // (it serves one core at about DRAM speed). Intel's server cores have 2
  // MiB of L2: on a Granite Rapids-class host (L3 ~22 GB/s per core) 128 x
  // 3072 x 768 read its 9.4 MB of B again per block of rows within 2 MiB,
  // 4.24 ms (1 thread) and 2.08 (2); within 4 MiB A (1.5 MB) stays in L2
  // and is read again per panel of B in 2 slices of k: 2.83 and 1.44 (91%
  // and 89% of peak); BERT layer b1 10.07 -> 9.12 ms, 4.97 -> 4.70; GPT-2
  // block b1 10.12 -> 9.17, 5.07 -> 4.77; the MLP, ResNet and MobileNetV2
  // within 1%.
  return 2 * coreL2Bytes(machine);
}

int64_t windowPrefetchMinBytes(const llvm::TargetMachine &machine) {
  // Measured on Zen 5 (session 33: MobileNetV2 b8 ~4% faster, a 3.2 MB max
  // pool 294 -> 228 us) and on a Granite Rapids-class core, where the
  // prefetches only cost: MobileNetV2 b1's 3x3 / 2 over 96 x 112 x 112
  // (4.8 MB, just written, in L3) 351 -> 262 us without them, the model
  // 1.5-4% faster on 1 thread and 1-2% on 2, batch 8 within 1%. Generic
  // targets (x86-64-v3) keep them.
  llvm::StringRef cpu = machine.getTargetCPU();
  bool amd = cpu.starts_with("znver") || cpu.starts_with("bdver") ||
             cpu.starts_with("btver");
  bool generic = cpu.starts_with("x86-64") || cpu == "generic";
  return amd || generic ? 2 * 1024 * 1024 : 0;
}

int64_t longReductionSteps(const llvm::TargetMachine &machine) {
  // Zen 3 (32 KiB L1, 512 KiB L2; AVX2), 1 thread: read in place from
  // K = 128 on, a tile's new line of A each step and its panel of B
  // outgrow L1, and the row tiles after it read the same lines of A again
  // from L2. Packed: 1x1 convolutions at 7x7 (A transposed) 320 -> 1280
  // 0.59 -> 0.44 ms, 960 -> 320 0.48 -> 0.34, 160 -> 960 0.22 -> 0.17; at
  // 28x28 (B) 192 -> 64 0.29 -> 0.22; at 14x14 (K = 96 to 576) within 4%;
  // MobileNetV2 b1 8.70 -> 8.24 ms, b8 68.7 -> 65.5; the ResNet-style CNN
  // 2-3% faster. Elsewhere it was measured the other way: a Zen 4 host's
  // AVX2 build lost 10% to packing a 1x1 at K = 960, and a Granite
  // Rapids-class core (48 KiB L1) ran that layer in place at 96% of peak.
  static constexpr llvm::StringLiteral slowL1Fill[] = {"znver1", "znver2",
                                                       "znver3"};
  return llvm::is_contained(slowL1Fill, machine.getTargetCPU()) ? 128 : 1024;
}

bool hasNativeBF16(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  return info->checkFeatures("+avx512bf16") ||
         info->checkFeatures("+avxneconvert");
}

std::string requiredCpuFeatures(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  llvm::SmallVector<llvm::StringRef> enabled;
  for (const kiln::CpuFeature &feature : kiln::kCpuFeatures)
    if (info->checkFeatures(("+" + llvm::StringRef(feature.name)).str()))
      enabled.push_back(feature.name);
  return llvm::join(enabled, ",");
}

namespace {

constexpr double kEstimatedGBsPerCore = 35;
constexpr double kDefaultGHz = 3.0;

/// The host's clock from /proc/cpuinfo (the first core's), in GHz.
std::optional<double> cpuinfoGHz() {
  auto cpuinfo = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo");
  if (!cpuinfo)
    return std::nullopt;
  llvm::StringRef text = (*cpuinfo)->getBuffer();
  size_t at = text.find("cpu MHz");
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef value = text.drop_front(at).split(':').second.trim();
  double mhz;
  if (value.split('\n').first.getAsDouble(mhz) || mhz <= 0)
    return std::nullopt;
  return mhz / 1000;
}

#if defined(__x86_64__)
/// The adds of one iteration of dependentAdds (its asm's .rept count).
constexpr uint64_t kAddsPerIteration = 64;

/// `iterations` x kAddsPerIteration dependent register adds: one cycle each
/// on every x86-64 core (the loop's own counter runs beside the chain).
[[gnu::noinline]] uint64_t dependentAdds(uint64_t iterations) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < iterations; ++i)
    asm volatile(".rept 64\n\taddq $1, %0\n\t.endr" : "+r"(sum));
  return sum;
}
#endif

/// The clock-speed samples measureHostClockGHz takes (after as many to
/// warm up), each ~2 million cycles: ~15 ms in all at 3 GHz.
constexpr int kClockSamples = 8;
constexpr uint64_t kClockSampleIterations = 1 << 15;

} // namespace

std::optional<double> measureHostClockGHz() {
#if defined(__x86_64__)
  using Clock = std::chrono::steady_clock;
  double best = 0;
  // The first samples wake the core up to speed; a sample the host's
  // scheduler interrupts reads slow, so the fastest one counts.
  for (int sample = 0; sample < 2 * kClockSamples; ++sample) {
    auto start = Clock::now();
    uint64_t adds = dependentAdds(kClockSampleIterations);
    std::chrono::duration<double, std::nano> elapsed = Clock::now() - start;
    if (adds != kClockSampleIterations * kAddsPerIteration ||
        elapsed.count() <= 0)
      return std::nullopt;
    if (sample >= kClockSamples)
      best = std::max(best, double(adds) / elapsed.count());
  }
  return best;
#else
  return std::nullopt;
#endif
}

namespace {

/// The clock of `machine`'s CPU and where it comes from: for the host's,
/// measured, else /proc/cpuinfo's (on a virtual machine often the host's
/// base clock, not the one it runs at); otherwise kDefaultGHz.
std::pair<double, llvm::StringRef>
clockGHz(const llvm::TargetMachine &machine) {
  if (!targetsHost(machine))
    return {kDefaultGHz, "clock assumed"};
  if (std::optional<double> measured = measureHostClockGHz())
    return {*measured, "clock measured"};
  if (std::optional<double> nominal = cpuinfoGHz())
    return {*nominal, "clock from /proc/cpuinfo"};
  return {kDefaultGHz, "clock assumed"};
}

/// The entry of a {"1": x, "2": y, ...} table for the largest measured
/// thread count not above `threads` (or the smallest one), with that count.
std::optional<std::pair<int, double>>
nearestMeasured(const llvm::json::Object *table, int threads) {
  if (!table)
    return std::nullopt;
  std::optional<std::pair<int, double>> best, smallest;
  for (const auto &[key, value] : *table) {
    int measured;
    std::optional<double> number = value.getAsNumber();
    if (llvm::StringRef(key).getAsInteger(10, measured) || !number)
      continue;
    if (!smallest || measured < smallest->first)
      smallest = {{measured, *number}};
    if (measured <= threads && (!best || measured > best->first))
      best = {{measured, *number}};
  }
  return best ? best : smallest;
}

/// The probe's JSON (bench/probe): peak_gflops[isa][threads] and
/// bandwidth_gbs.dram_triad[threads]. Compute scales with cores from the
/// nearest measured count; bandwidth is shared and does not.
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
  const llvm::json::Object *probe = json->getAsObject();
  std::optional<llvm::StringRef> isa =
      probe ? probe->getString("isa") : std::nullopt;
  const llvm::json::Object *peaks =
      probe ? probe->getObject("peak_gflops") : nullptr;
  const llvm::json::Object *bandwidths =
      probe ? probe->getObject("bandwidth_gbs") : nullptr;
  auto peak =
      nearestMeasured(peaks && isa ? peaks->getObject(*isa) : nullptr, threads);
  auto bandwidth = nearestMeasured(
      bandwidths ? bandwidths->getObject("dram_triad") : nullptr, threads);
  if (!peak || !bandwidth)
    return llvm::createStringError(
        "machine file " + path +
        " is not bench/probe output: it needs \"isa\", "
        "\"peak_gflops\": {ISA: {THREADS: GFLOPS}} and "
        "\"bandwidth_gbs\": {\"dram_triad\": {THREADS: GBS}}");
  Roofline roofline;
  roofline.threads = threads;
  roofline.peakGflops = peak->second * threads / peak->first;
  roofline.bandwidthGBs = bandwidth->second;
  roofline.source = ("measured by bench/probe, " + path).str();
  return roofline;
}

} // namespace

llvm::Expected<Roofline> describeRoofline(const llvm::TargetMachine &machine,
                                          int threads,
                                          llvm::StringRef machineFile) {
  threads = std::max(threads, 1);
  if (!machineFile.empty())
    return readMachineFile(machineFile, threads);
  auto [ghz, clockSource] = clockGHz(machine);
  Roofline roofline;
  roofline.threads = threads;
  roofline.peakGflops = 2 * fmaLanes(machine) * 2 * ghz * threads;
  roofline.bandwidthGBs = kEstimatedGBsPerCore * threads;
  roofline.source = llvm::formatv("estimated for {0} at {1:F2} GHz, {2}",
                                  machine.getTargetCPU(), ghz, clockSource)
                        .str();
  return roofline;
}

} // namespace kiln::cpu
