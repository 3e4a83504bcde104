//===- HugePages.h - 2 MiB pages for weights and arenas ---------*- C++ -*-===//
//
// A model's contractions stream its weights (tens to hundreds of MB) and
// its arena through the caches once per run. With 4 KiB pages a 16 MB weight
// matrix is 4096 pages, more than the core's second-level TLB holds, so the
// weight stream also walks page tables (MLP b64: 3% of its run time). Linux
// backs anonymous memory with 2 MiB pages when asked (transparent huge
// pages, "madvise" mode by default) but not a shared library's read-only
// data, where the compiled weights live. So the runtime moves the model's
// read-only data onto anonymous 2 MiB pages when it loads the model, and
// asks for them for the arena. Both are best-effort: where the kernel
// refuses, the memory stays as it was. KILN_HUGE_PAGES=0 turns both off.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HUGEPAGES_H
#define KILN_RUNTIME_HUGEPAGES_H

#include <cstddef>

namespace kiln::runtime {

/// Whether KILN_HUGE_PAGES leaves huge pages on (unset or not "0").
bool hugePagesEnabled();

/// Moves the 2 MiB-aligned interior of [begin, end), read-only data of a
/// loaded library, onto anonymous memory that may be backed by 2 MiB pages:
/// same contents, same addresses, read-only. Returns the bytes moved (0
/// when nothing was: under 2 MiB, already moved, transparent huge pages
/// off, or the kernel refused). Thread-safe.
size_t moveToHugePages(const void *begin, const void *end);

/// `bytes` of 64-byte aligned memory; from 2 MiB on, 2 MiB-aligned and
/// advised to use huge pages. Release with freeArena.
void *allocateArena(size_t bytes);
void freeArena(void *arena);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_HUGEPAGES_H
