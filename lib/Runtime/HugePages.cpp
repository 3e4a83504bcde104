//===- HugePages.cpp - 2 MiB pages for weights and arenas -----------------===//

#include "HugePages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

namespace kiln::runtime {
namespace {

constexpr uintptr_t kHugePage = uintptr_t(2) << 20;

uintptr_t alignDown(uintptr_t address) { return address & ~(kHugePage - 1); }
uintptr_t alignUp(uintptr_t address) {
  return alignDown(address + kHugePage - 1);
}

/// Whether the mapping that contains `address` is backed by a file (a
/// library's segment still as the loader mapped it), from /proc/self/maps:
/// an anonymous mapping has inode 0.
bool fileBacked(uintptr_t address) {
  FILE *maps = std::fopen("/proc/self/maps", "r");
  if (!maps)
    return false;
  bool backed = false;
  unsigned long begin, end, inode;
  char line[4096];
  while (std::fgets(line, sizeof line, maps)) {
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %lu", &begin, &end, &inode) != 3)
      continue;
    if (address >= begin && address < end) {
      backed = inode != 0;
      break;
    }
  }
  std::fclose(maps);
  return backed;
}

/// Replaces [begin, begin + bytes) (2 MiB-aligned, mapped read-only from a
/// file) with anonymous read-only memory of the same contents, advised to
/// use huge pages. The copy goes 2 MiB at a time, each source chunk's pages
/// released after it, so the process never holds both copies (a re-read
/// would fault them back in from the file, unchanged).
bool moveToAnonymous(uintptr_t begin, size_t bytes) {
  void *mapped = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED)
    return false;
  // Trim to a 2 MiB-aligned range, so the kernel can map it with huge pages
  // here and keep them when moving it.
  auto start = reinterpret_cast<uintptr_t>(mapped);
  uintptr_t aligned = alignUp(start);
  if (aligned > start)
    munmap(mapped, aligned - start);
  if (size_t tail = start + bytes + kHugePage - (aligned + bytes))
    munmap(reinterpret_cast<void *>(aligned + bytes), tail);
  auto *copy = reinterpret_cast<char *>(aligned);
  auto *source = reinterpret_cast<char *>(begin);
  madvise(copy, bytes, MADV_HUGEPAGE);
  for (size_t offset = 0; offset < bytes; offset += kHugePage) {
    std::memcpy(copy + offset, source + offset, kHugePage);
    madvise(source + offset, kHugePage, MADV_DONTNEED);
  }
  if (mprotect(copy, bytes, PROT_READ) != 0 ||
      mremap(copy, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, source) ==
          MAP_FAILED) {
    munmap(copy, bytes);
    return false;
  }
  return true;
}

/// Whether the kernel may back anonymous memory with huge pages at all
/// (transparent huge pages not "never"): otherwise a move would only make
/// the weights private memory.
bool kernelHasHugePages() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(setting, modes) &&
         modes.find("[never]") == std::string::npos;
}

} // namespace

bool hugePagesEnabled() {
  const char *env = std::getenv("KILN_HUGE_PAGES");
  return !env || std::string(env) != "0";
}

size_t moveToHugePages(const void *begin, const void *end) {
  uintptr_t first = alignUp(reinterpret_cast<uintptr_t>(begin));
  uintptr_t last = alignDown(reinterpret_cast<uintptr_t>(end));
  // Loads of the same library on two threads: one moves, the other then
  // finds the range anonymous.
  static std::mutex moving;
  std::lock_guard<std::mutex> lock(moving);
  if (last <= first || !kernelHasHugePages() || !fileBacked(first) ||
      !moveToAnonymous(first, last - first))
    return 0;
  return last - first;
}

void *allocateArena(size_t bytes) {
  if (bytes < kHugePage || !hugePagesEnabled())
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  size_t rounded = alignUp(bytes);
  void *arena = std::aligned_alloc(kHugePage, rounded);
  if (arena)
    madvise(arena, rounded, MADV_HUGEPAGE);
  return arena;
}

void freeArena(void *arena) { std::free(arena); }

} // namespace kiln::runtime
