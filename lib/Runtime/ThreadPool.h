//===- ThreadPool.h - the runtime's fork-join pool --------------*- C++ -*-===//
//
// Persistent worker threads, created with an execution context, that run the
// parallel loops of a compiled model. A parallel loop of `count` iterations
// is split into one contiguous range per thread; the calling thread runs the
// first range itself and waits for the others. Workers spin briefly before
// sleeping, so back-to-back kernels do not pay a wake-up each.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include "kiln/runtime.h"

#include <atomic>
#include <condition_variable>
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
  /// returns when every range is done.
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
  };
  static void runRange(const Job &job, int part);

  std::atomic<int64_t> jobCount{0};
  std::atomic<int> jobParts{0};
  std::atomic<kiln_task_fn> jobTask{nullptr};
  std::atomic<void *> jobCtx{nullptr};
  std::atomic<uint64_t> generation{0};
  std::atomic<int> pending{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable wake;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_THREADPOOL_H
