//===- TargetDescriptionTest.cpp - the host's caches and clock ------------===//

#include "kiln/Target/CPU/TargetDescription.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using kiln::cpu::CacheLevel;
using kiln::cpu::hostDataCache;

namespace {

/// A fake /sys/devices/system/cpu/cpu0: cache/indexN folders with the
/// attribute files Linux writes, removed with the fixture.
class FakeCpuDir : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-cpu0", root));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  void addCache(int index, llvm::StringRef level, llvm::StringRef type,
                llvm::StringRef size, llvm::StringRef ways) {
    llvm::SmallString<128> dir(root);
    llvm::sys::path::append(dir, "cache", "index" + std::to_string(index));
    ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
    write(dir, "level", level);
    write(dir, "type", type);
    write(dir, "size", size);
    write(dir, "ways_of_associativity", ways);
  }

  /// Expects the host cache of `level` under `root` to be `bytes` large
  /// with `ways` ways.
  void expectCache(int level, int64_t bytes, int ways) {
    std::optional<CacheLevel> cache = hostDataCache(level, root);
    ASSERT_TRUE(cache) << "no level " << level << " cache";
    EXPECT_EQ(cache->bytes, bytes);
    EXPECT_EQ(cache->ways, ways);
  }

  llvm::SmallString<128> root;

private:
  static void write(llvm::StringRef dir, llvm::StringRef name,
                    llvm::StringRef text) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code error;
    llvm::raw_fd_ostream file(path, error);
    ASSERT_FALSE(error);
    file << text << "\n";
  }
};

TEST_F(FakeCpuDir, ReadsDataCachesAndSkipsInstructionCaches) {
  // A Granite Rapids-class core as KVM reports it.
  addCache(0, "1", "Data", "48K", "12");
  addCache(1, "1", "Instruction", "64K", "16");
  addCache(2, "2", "Unified", "2048K", "16");
  addCache(3, "3", "Unified", "516096K", "16");
  expectCache(1, 48 * 1024, 12);
  expectCache(2, 2 * 1024 * 1024, 16);
}

TEST_F(FakeCpuDir, InstructionCacheFirstAndMegabyteSizes) {
  addCache(0, "1", "Instruction", "32K", "8");
  addCache(1, "1", "Data", "32K", "8");
  addCache(2, "2", "Unified", "1M", "8");
  expectCache(1, 32 * 1024, 8);
  expectCache(2, 1024 * 1024, 8);
}

TEST_F(FakeCpuDir, MissingOrMalformedLevelsAreNone) {
  EXPECT_FALSE(hostDataCache(1, root)); // no cache folders at all
  addCache(0, "1", "Data", "48K", "12");
  EXPECT_FALSE(hostDataCache(2, root)); // no L2 listed
  addCache(1, "2", "Unified", "two megabytes", "16");
  EXPECT_FALSE(hostDataCache(2, root)); // a size that is not a number
}

#if defined(__x86_64__)
TEST(HostClock, MeasuresARunningCoresClock) {
  // Any x86-64 core of the last two decades, turbo or not, and a virtual
  // CPU whose samples the host interrupts now and then.
  std::optional<double> ghz = kiln::cpu::measureHostClockGHz();
  ASSERT_TRUE(ghz);
  EXPECT_GT(*ghz, 0.5);
  EXPECT_LT(*ghz, 7.0);
}
#endif

} // namespace
