//===- ThreadPool.h - the runtime's fork-join pool --------------*- C++ -*-===//
//
// Persistent worker threads, created with an execution context, that run the
// parallel loops of a compiled model. A parallel loop of `count` iterations
// is split into one contiguous range per thread; the calling thread runs the
// first range itself. Each thread claims its range from the front, a few
// iterations at a time, and a thread done with its own range takes the
// unclaimed iterations of the others from their back, so one slow thread (a
// core shared with another process, a late wake-up, a range of costlier
// iterations) does not hold up the loop. Workers spin briefly before
// sleeping, so back-to-back kernels do not pay a wake-up each.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include "kiln/runtime.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::runtime {

class ThreadPool {
public:
  /// A pool of `threads` threads in all: the caller plus threads - 1
  /// workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return int(workers.size()) + 1; }

  /// Runs task(ctx, begin, end) over [0, count), split across the threads;
  /// returns when every iteration has run.
  void parallelFor(int64_t count, kiln_task_fn task, void *ctx);

  /// The C entry point the generated code calls through
  /// kiln_parallel_runtime.
  static void parallelForThunk(void *pool, int64_t count, kiln_task_fn task,
                               void *ctx);

private:
  void workerLoop(int index);
  /// Keeps each worker on a CPU of its own (see the definition).
  void pinWorkers();
  /// Moves a pinned worker off the CPU the caller now runs on.
  void avoidCallersCpu();
  /// Stops and joins every started worker.
  void shutDown();

  std::vector<std::thread> workers;
  /// With pinning, the CPUs the process may use and each worker's.
  std::vector<int> allowedCpus, workerCpus;
  // The current job, published by bumping `generation`. Atomic because a
  // worker that did not take part in the previous job may read them while
  // the next one is being written; it then sees `generation` move and
  // rereads.
  struct Job {
    int64_t count;
    int parts;
    kiln_task_fn task;
    void *ctx;
    /// Iterations are claimed in units: `units` of them (at most 2^20 - 1),
    /// of count / units iterations each, the first count % units units one
    /// more; `chunk` units a claim.
    int64_t units, chunk;
    /// The job's stamp on its claim words: 24 bits of generation / 2. A
    /// worker stalled between reading a job and claiming for 2^24 jobs (tens
    /// of seconds) could take a tag for its own; it also rechecks
    /// `generation` before each claim, which leaves only a stall inside
    /// that window.
    uint64_t tag;
  };
  /// The unclaimed units [front, back) of one thread's range, stamped with
  /// the job's tag, in one word: a thread still holding an old job cannot
  /// claim units of the next one.
  struct alignas(64) Range {
    std::atomic<uint64_t> word{0};
  };
  /// Claims up to job.chunk units of range `part` from its front (the
  /// owner) or its back (a thread done with its own range); false when the
  /// range is empty or belongs to another job.
  bool claim(const Job &job, int part, bool fromBack, int64_t &first,
             int64_t &last);
  /// Runs the calling thread's share of `job`: its own range `part`, then
  /// what is left of the others.
  void work(const Job &job, int part);
  /// Runs units [first, last) of `job`.
  static void runUnits(const Job &job, int64_t first, int64_t last);

  std::atomic<int64_t> jobCount{0};
  std::atomic<int> jobParts{0};
  std::atomic<kiln_task_fn> jobTask{nullptr};
  std::atomic<void *> jobCtx{nullptr};
  std::atomic<int64_t> jobUnits{0};
  std::atomic<uint64_t> generation{0};
  /// One claim word per thread (threads() of them).
  std::unique_ptr<Range[]> ranges;
  /// Units of the current job not yet run (on a line of its own: the
  /// threads' final subtractions should not disturb the spinning readers
  /// of `generation`).
  alignas(64) std::atomic<int64_t> pending{0};
  std::atomic<bool> stop{false};
  /// Workers asleep on `wake` (or about to be, holding `mutex`): a job is
  /// published without the mutex, and only notified when one sleeps.
  std::atomic<int> sleepers{0};
  std::mutex mutex;
  std::condition_variable wake;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_THREADPOOL_H
