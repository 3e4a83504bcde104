//===- HostCpuTest.cpp - the runtime's check of a model's extensions ------===//

#include "../../lib/Runtime/HostCpu.h"

#include <gtest/gtest.h>

using namespace kiln::runtime;

namespace {

TEST(HostCpuTest, NothingRequiredNothingMissing) {
  EXPECT_EQ(missingCpuFeatures(nullptr), "");
  EXPECT_EQ(missingCpuFeatures(""), "");
}

TEST(HostCpuTest, UnknownNamesCountAsMissing) {
  // SSE3 is on every x86-64 CPU since 2005; the other name is made up.
  EXPECT_EQ(missingCpuFeatures("sse3,frobnicate,sse3,quux"),
            "frobnicate, quux");
}

#if defined(__x86_64__) || defined(__i386__)
/// The runtime's CPUID and XGETBV code against the one the compiler's
/// runtime library (__builtin_cpu_supports) has, for the extensions both
/// know.
TEST(HostCpuTest, AgreesWithBuiltinCpuSupports) {
  struct Expected {
    const char *name;
    bool supported;
  };
  // __builtin_cpu_supports takes a string literal: one name, spelled once.
#define EXTENSION(name)                                                        \
  Expected { name, bool(__builtin_cpu_supports(name)) }
  const Expected extensions[] = {
      EXTENSION("avx"),      EXTENSION("avx2"),     EXTENSION("fma"),
      EXTENSION("bmi"),      EXTENSION("bmi2"),     EXTENSION("popcnt"),
      EXTENSION("sse4.2"),   EXTENSION("avx512f"),  EXTENSION("avx512bw"),
      EXTENSION("avx512dq"), EXTENSION("avx512vl"), EXTENSION("avx512vnni"),
      EXTENSION("sse4a"),
  };
#undef EXTENSION
  for (const Expected &extension : extensions)
    EXPECT_EQ(missingCpuFeatures(extension.name).empty(), extension.supported)
        << extension.name;
}
#endif

} // namespace
