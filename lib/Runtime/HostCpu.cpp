//===- HostCpu.cpp - the extensions this CPU has --------------------------===//

#include "HostCpu.h"

#include "kiln/CpuFeatures.h"

#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace kiln::runtime {
namespace {

#if defined(__x86_64__) || defined(__i386__)
/// Register `reg` of CPUID leaf / subleaf; 0 past the CPU's highest leaf.
uint32_t cpuid(uint32_t leaf, uint32_t subleaf, CpuidRegister reg) {
  uint32_t regs[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3]))
    return 0;
  return regs[static_cast<int>(reg)];
}

/// The state components the OS saves on context switches (XCR0); 0 when
/// it does not say (no OSXSAVE): then no AVX state either.
uint64_t enabledOsState() {
  constexpr uint32_t kOsXsave = 1u << 27;
  if (!(cpuid(1, 0, CpuidRegister::Ecx) & kOsXsave))
    return 0;
  uint32_t low, high;
  __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (uint64_t(high) << 32) | low;
}

bool hasFeature(const CpuFeature &feature, uint64_t osState) {
  bool reported =
      cpuid(feature.leaf, feature.subleaf, feature.reg) & (1u << feature.bit);
  return reported && (osState & feature.osState) == feature.osState;
}
#else
uint64_t enabledOsState() { return 0; }
bool hasFeature(const CpuFeature &, uint64_t) { return false; }
#endif

bool hostHas(std::string_view name, uint64_t osState) {
  for (const CpuFeature &feature : kCpuFeatures)
    if (name == feature.name)
      return hasFeature(feature, osState);
  return false;
}

} // namespace

std::string missingCpuFeatures(const char *required) {
  std::string missing;
  if (!required)
    return missing;
  uint64_t osState = enabledOsState();
  std::string_view rest = required;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    if (name.empty() || hostHas(name, osState))
      continue;
    if (!missing.empty())
      missing += ", ";
    missing += name;
  }
  return missing;
}

} // namespace kiln::runtime
