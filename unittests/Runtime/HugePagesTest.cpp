//===- HugePagesTest.cpp - weights and arenas on 2 MiB pages --------------===//

#include "../../lib/Runtime/HugePages.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

using namespace kiln::runtime;

namespace {

constexpr size_t kHugePage = size_t(2) << 20;

/// The /proc/self/maps line of the mapping that contains `address`.
std::string mappingOf(const void *address) {
  auto at = reinterpret_cast<uintptr_t>(address);
  FILE *maps = std::fopen("/proc/self/maps", "r");
  char line[4096];
  std::string found;
  while (maps && std::fgets(line, sizeof line, maps)) {
    unsigned long begin, end;
    if (std::sscanf(line, "%lx-%lx", &begin, &end) == 2 && at >= begin &&
        at < end)
      found = line;
  }
  if (maps)
    std::fclose(maps);
  return found;
}

/// Whether the mapping is anonymous (inode 0) and read-only.
bool anonymousReadOnly(const std::string &mapping) {
  char perms[8];
  unsigned long inode;
  return std::sscanf(mapping.c_str(), "%*lx-%*lx %7s %*s %*s %lu", perms,
                     &inode) == 2 &&
         inode == 0 && std::string(perms) == "r--p";
}

/// A file of `bytes` with a byte pattern, mapped read-only and private at
/// a 2 MiB-aligned address plus `offset` (as a library's weights are).
struct MappedFile {
  MappedFile(size_t bytes, size_t offset) : bytes(bytes) {
    char path[] = "/tmp/kiln-huge-pages-XXXXXX";
    int fd = mkstemp(path);
    unlink(path);
    std::string pattern(bytes, 0);
    for (size_t i = 0; i < bytes; ++i)
      pattern[i] = char(i * 7 + i / 4096);
    if (write(fd, pattern.data(), bytes) != ssize_t(bytes))
      std::abort();
    // Reserve, then place the file at the aligned address + offset.
    reserved = mmap(nullptr, bytes + 2 * kHugePage, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    auto aligned = (reinterpret_cast<uintptr_t>(reserved) + kHugePage - 1) &
                   ~(kHugePage - 1);
    data = static_cast<char *>(mmap(reinterpret_cast<void *>(aligned + offset),
                                    bytes, PROT_READ, MAP_PRIVATE | MAP_FIXED,
                                    fd, 0));
    close(fd);
    expected = pattern;
  }
  ~MappedFile() { munmap(reserved, bytes + 2 * kHugePage); }

  size_t bytes;
  void *reserved;
  char *data;
  std::string expected;
};

/// Whether transparent huge pages are on ("always" or "madvise").
bool kernelHasHugePages() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(setting, modes) &&
         modes.find("[never]") == std::string::npos;
}

TEST(HugePagesTest, MovesTheAlignedInteriorKeepingContentsAndAddresses) {
  // 4 KiB past a huge page boundary: the interior is the 2 huge pages from
  // the next boundary on; the edges stay mapped from the file.
  MappedFile file(3 * kHugePage, 4096);
  char *interior = file.data + kHugePage - 4096;
  if (!kernelHasHugePages()) {
    // Nothing to gain: the weights stay mapped from the file.
    EXPECT_EQ(moveToHugePages(file.data, file.data + file.bytes), 0u);
    EXPECT_FALSE(anonymousReadOnly(mappingOf(interior)));
    return;
  }
  ASSERT_EQ(moveToHugePages(file.data, file.data + file.bytes), 2 * kHugePage);
  EXPECT_TRUE(anonymousReadOnly(mappingOf(interior))) << mappingOf(interior);
  EXPECT_TRUE(anonymousReadOnly(mappingOf(interior + 2 * kHugePage - 1)));
  EXPECT_FALSE(anonymousReadOnly(mappingOf(file.data)));
  EXPECT_FALSE(anonymousReadOnly(mappingOf(interior + 2 * kHugePage)));
  EXPECT_EQ(std::memcmp(file.data, file.expected.data(), file.bytes), 0);
  // Already moved: nothing to do.
  EXPECT_EQ(moveToHugePages(file.data, file.data + file.bytes), 0u);
  EXPECT_EQ(std::memcmp(file.data, file.expected.data(), file.bytes), 0);
}

TEST(HugePagesTest, LeavesRangesWithoutAWholeHugePage) {
  MappedFile file(2 * kHugePage, 4096);
  // [+4 KiB, +4 MiB): no huge page boundary pair inside.
  EXPECT_EQ(moveToHugePages(file.data, file.data + file.bytes - 8192), 0u);
  EXPECT_FALSE(anonymousReadOnly(mappingOf(file.data + kHugePage)));
  EXPECT_EQ(std::memcmp(file.data, file.expected.data(), file.bytes), 0);
}

TEST(HugePagesTest, ArenasFromTwoMiBAreHugePageAligned) {
  void *small = allocateArena(1000);
  void *large = allocateArena(kHugePage + 1);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % kHugePage, 0u);
  std::memset(large, 1, kHugePage + 1);
  freeArena(small);
  freeArena(large);
}

TEST(HugePagesTest, EnvironmentTurnsThemOff) {
  setenv("KILN_HUGE_PAGES", "0", 1);
  EXPECT_FALSE(hugePagesEnabled());
  void *arena = allocateArena(kHugePage + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena) % 64, 0u);
  freeArena(arena);
  setenv("KILN_HUGE_PAGES", "1", 1);
  EXPECT_TRUE(hugePagesEnabled());
  unsetenv("KILN_HUGE_PAGES");
  EXPECT_TRUE(hugePagesEnabled());
}

} // namespace
