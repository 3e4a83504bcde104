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

/// Claims per thread's range: each claim is a compare-and-swap on the
/// range's word, so a few are free beside any kernel worth a thread, and
/// they leave a tail that an idle thread can take over.
constexpr int64_t kClaimsPerRange = 8;

/// A claim word: the job's tag (24 bits), then the range's unclaimed units
/// [front, back) in 20 bits each. Loops of more iterations are claimed in
/// units of several.
constexpr int kIndexBits = 20;
constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;
constexpr int64_t kMaxUnits = int64_t(kIndexMask);
constexpr uint64_t kTagMask = (uint64_t(1) << (64 - 2 * kIndexBits)) - 1;

uint64_t claimWord(uint64_t tag, int64_t front, int64_t back) {
  return (tag << (2 * kIndexBits)) | (uint64_t(front) << kIndexBits) |
         uint64_t(back);
}
uint64_t tagOf(uint64_t word) { return word >> (2 * kIndexBits); }
int64_t frontOf(uint64_t word) {
  return int64_t((word >> kIndexBits) & kIndexMask);
}
int64_t backOf(uint64_t word) { return int64_t(word & kIndexMask); }

/// Units a claim takes: a few claims per range.
int64_t claimChunk(int64_t units, int64_t parts) {
  return std::max<int64_t>(1, units / (parts * kClaimsPerRange));
}

/// Units the next claim of a range with `left` unclaimed units takes: a
/// chunk, but at most 1/parts of what is left (at least 1). A whole chunk
/// taken at the end of a range kept the other threads waiting while it ran,
/// up to 1/16 of a loop on 2 threads; shrinking, the range's last units go
/// one at a time to whichever thread is free (guided self-scheduling).
int64_t claimSizeFor(int64_t chunk, int64_t parts, int64_t left) {
  return std::min(chunk, std::max<int64_t>(1, left / parts));
}

/// The tag of the job published at (even) generation `generation`.
uint64_t jobTag(uint64_t generation) { return (generation / 2) & kTagMask; }

void pinWorker(std::thread &worker, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  pthread_setaffinity_np(worker.native_handle(), sizeof one, &one);
}

} // namespace

ThreadPool::ThreadPool(int threads)
    : ranges(std::make_unique<Range[]>(std::max(threads, 1))) {
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

bool ThreadPool::claim(const Job &job, int part, bool fromBack, int64_t &first,
                       int64_t &last) {
  // A worker that has fallen behind (a newer job is out) claims nothing.
  if (jobTag(generation.load(std::memory_order_acquire)) != job.tag)
    return false;
  std::atomic<uint64_t> &word = ranges[part].word;
  uint64_t seen = word.load(std::memory_order_acquire);
  while (true) {
    int64_t front = frontOf(seen), back = backOf(seen);
    if (tagOf(seen) != job.tag || front >= back)
      return false;
    int64_t taken = claimSizeFor(job.chunk, job.parts, back - front);
    first = fromBack ? back - taken : front;
    last = first + taken;
    uint64_t next = fromBack ? claimWord(job.tag, front, first)
                             : claimWord(job.tag, last, back);
    if (word.compare_exchange_weak(seen, next, std::memory_order_acq_rel,
                                   std::memory_order_acquire))
      return true;
  }
}

void ThreadPool::runUnits(const Job &job, int64_t first, int64_t last) {
  // Unit u starts at u * q + min(u, r): units of q or q + 1 iterations.
  int64_t q = job.count / job.units, r = job.count % job.units;
  auto start = [&](int64_t unit) { return unit * q + std::min(unit, r); };
  job.task(job.ctx, start(first), start(last));
}

void ThreadPool::work(const Job &job, int part) {
  int64_t first, last, done = 0;
  auto run = [&] {
    runUnits(job, first, last);
    done += last - first;
  };
  if (part < job.parts)
    while (claim(job, part, /*fromBack=*/false, first, last))
      run();
  // Then the tails of the others, the longest first.
  while (true) {
    int victim = -1;
    int64_t most = 0;
    for (int other = 0; other < job.parts; ++other) {
      uint64_t word = ranges[other].word.load(std::memory_order_relaxed);
      int64_t left = backOf(word) - frontOf(word);
      if (other != part && tagOf(word) == job.tag && left > most) {
        victim = other;
        most = left;
      }
    }
    if (victim < 0)
      break;
    if (claim(job, victim, /*fromBack=*/true, first, last))
      run();
  }
  // Counted once per thread: `pending` is the one line every thread writes.
  if (done)
    pending.fetch_sub(done, std::memory_order_acq_rel);
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
  int64_t units = std::min(count, kMaxUnits);
  int64_t chunk = claimChunk(units, split);
  // Only this thread writes `generation`: the job's is the next even one.
  uint64_t published = generation.load(std::memory_order_relaxed) + 2;
  Job job{count, int(split), task, ctx, units, chunk, jobTag(published)};
  // A seqlock: an odd generation means "being written", so a worker never
  // pairs one job's generation with another job's fields.
  generation.fetch_add(1, std::memory_order_acq_rel);
  jobCount.store(job.count, std::memory_order_relaxed);
  jobParts.store(job.parts, std::memory_order_relaxed);
  jobTask.store(job.task, std::memory_order_relaxed);
  jobCtx.store(job.ctx, std::memory_order_relaxed);
  jobUnits.store(job.units, std::memory_order_relaxed);
  for (int part = 0; part < job.parts; ++part)
    ranges[part].word.store(
        claimWord(job.tag, units * part / split, units * (part + 1) / split),
        std::memory_order_relaxed);
  pending.store(units, std::memory_order_relaxed);
  // Published without the mutex: taking it for every loop cost the caller
  // ~0.2 us a loop (14 us an inference of MobileNetV2 b1 on 2 threads).
  // A worker about to sleep counts itself in `sleepers` under the mutex,
  // then checks `generation`; both sides' accesses are sequentially
  // consistent, so either it sees this job or this sees it and wakes it
  // (through the mutex, once it waits). A wake-up lost anyway would not
  // hang the loop: this thread takes the other ranges' units itself.
  generation.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex);
    wake.notify_all();
  }
  work(job, 0);
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
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      wake.wait(lock, [&] {
        return generation.load(std::memory_order_seq_cst) != seen;
      });
      sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
    uint64_t current = generation.load(std::memory_order_acquire);
    if (stop.load())
      return;
    if (current % 2)
      continue; // being written
    Job job{jobCount.load(std::memory_order_relaxed),
            jobParts.load(std::memory_order_relaxed),
            jobTask.load(std::memory_order_relaxed),
            jobCtx.load(std::memory_order_relaxed),
            jobUnits.load(std::memory_order_relaxed),
            0,
            jobTag(current)};
    job.chunk = claimChunk(job.units, job.parts);
    // The fence keeps the relaxed reads above before the re-check.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (generation.load(std::memory_order_relaxed) != current)
      continue; // a newer job was published while reading this one
    seen = current;
    // A worker that comes late finds its range taken (or the job's tag
    // gone from every word) and goes back to waiting.
    work(job, index);
  }
}

void ThreadPool::parallelForThunk(void *pool, int64_t count, kiln_task_fn task,
                                  void *ctx) {
  static_cast<ThreadPool *>(pool)->parallelFor(count, task, ctx);
}

} // namespace kiln::runtime
