//===- ThreadPool.cpp - the runtime's fork-join pool ----------------------===//

#include "ThreadPool.h"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace kiln::runtime {
namespace {

/// How long an idle worker polls before it sleeps, and the caller before it
/// starts yielding its core (iterations of a pause, ~10-50 us): long enough
/// to catch the next kernel, short enough not to starve other processes
/// when the machine is oversubscribed.
constexpr int kSpinIterations = 2048;

void pinWorker(std::thread &worker, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  pthread_setaffinity_np(worker.native_handle(), sizeof one, &one);
}

} // namespace

ThreadPool::ThreadPool(int threads) {
  try {
    for (int i = 1; i < threads; ++i)
      workers.emplace_back([this, i] { workerLoop(i); });
  } catch (...) {
    shutDown(); // the threads that did start must be joined
    throw;
  }
  pinWorkers();
}

/// A worker that sleeps between kernels is woken by the caller, and Linux
/// tends to wake a thread on the waker's core ("wake affine"): the worker
/// and the caller then share one core while the other idles, a 2-thread
/// inference running at 1-thread speed for seconds (ResNet b1: 12 ms in
/// place of 7.6, depending on where other threads of the process ran
/// before). When the pool has no more threads than the process has CPUs,
/// worker i stays on the i-th CPU the process may use; the caller is not
/// pinned (it is the application's thread). The scheduler does not always
/// move the caller off a worker's CPU (the same 12 ms, now and then, with
/// the worker pinned to the caller's CPU), so each parallel loop checks
/// where the caller runs and moves a worker off it (avoidCallersCpu).
/// KILN_PIN_THREADS=0 leaves the workers unpinned.
void ThreadPool::pinWorkers() {
  if (const char *env = std::getenv("KILN_PIN_THREADS");
      env && std::string(env) == "0")
    return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return;
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed))
      cpus.push_back(cpu);
  if (threads() > int(cpus.size()))
    return;
  allowedCpus = cpus;
  for (size_t i = 0; i < workers.size(); ++i) {
    workerCpus.push_back(cpus[i + 1]);
    pinWorker(workers[i], cpus[i + 1]);
  }
}

void ThreadPool::avoidCallersCpu() {
  int here = sched_getcpu();
  auto taken = [&](int cpu) {
    return cpu == here || std::find(workerCpus.begin(), workerCpus.end(),
                                    cpu) != workerCpus.end();
  };
  for (size_t i = 0; i < workerCpus.size(); ++i) {
    if (workerCpus[i] != here)
      continue;
    // The pool fits the CPUs, so one is free: the caller's former one.
    auto free = std::find_if_not(allowedCpus.begin(), allowedCpus.end(), taken);
    if (free == allowedCpus.end())
      return;
    workerCpus[i] = *free;
    pinWorker(workers[i], *free);
  }
}

ThreadPool::~ThreadPool() { shutDown(); }

void ThreadPool::shutDown() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
    generation.fetch_add(2, std::memory_order_release);
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    if (worker.joinable())
      worker.join();
}

void ThreadPool::runRange(const Job &job, int part) {
  int64_t begin = job.count * part / job.parts;
  int64_t end = job.count * (part + 1) / job.parts;
  if (begin < end)
    job.task(job.ctx, begin, end);
}

void ThreadPool::parallelFor(int64_t count, kiln_task_fn task, void *ctx) {
  int64_t split = std::min<int64_t>(threads(), count);
  if (split <= 1) {
    if (count > 0)
      task(ctx, 0, count);
    return;
  }
  if (!workerCpus.empty())
    avoidCallersCpu();
  Job job{count, int(split), task, ctx};
  // A seqlock: an odd generation means "being written", so a worker never
  // pairs one job's generation with another job's fields.
  generation.fetch_add(1, std::memory_order_acq_rel);
  jobCount.store(job.count, std::memory_order_relaxed);
  jobParts.store(job.parts, std::memory_order_relaxed);
  jobTask.store(job.task, std::memory_order_relaxed);
  jobCtx.store(job.ctx, std::memory_order_relaxed);
  pending.store(job.parts - 1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex);
    generation.fetch_add(1, std::memory_order_release);
  }
  wake.notify_all();
  runRange(job, 0);
  for (int spins = 0; pending.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kSpinIterations)
      _mm_pause();
    else
      std::this_thread::yield();
  }
}

void ThreadPool::workerLoop(int index) {
  uint64_t seen = 0;
  while (true) {
    // Spin first: the next kernel usually follows within microseconds.
    int spins = 0;
    while (generation.load(std::memory_order_acquire) == seen &&
           ++spins < kSpinIterations)
      _mm_pause();
    if (generation.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] {
        return generation.load(std::memory_order_acquire) != seen;
      });
    }
    uint64_t current = generation.load(std::memory_order_acquire);
    if (stop.load())
      return;
    if (current % 2)
      continue; // being written
    Job job{jobCount.load(std::memory_order_relaxed),
            jobParts.load(std::memory_order_relaxed),
            jobTask.load(std::memory_order_relaxed),
            jobCtx.load(std::memory_order_relaxed)};
    if (generation.load(std::memory_order_acquire) != current)
      continue; // a newer job was published while reading this one
    seen = current;
    if (index < job.parts) {
      runRange(job, index);
      pending.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
}

void ThreadPool::parallelForThunk(void *pool, int64_t count, kiln_task_fn task,
                                  void *ctx) {
  static_cast<ThreadPool *>(pool)->parallelFor(count, task, ctx);
}

} // namespace kiln::runtime
