//===- ThreadPoolTest.cpp - the runtime's thread pool ---------------------===//

#include "../../lib/Runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

using kiln::runtime::ThreadPool;

namespace {

/// Counts how often each iteration ran, and the ranges a task was given.
struct Coverage {
  explicit Coverage(int64_t count) : hits(count) {}
  std::vector<std::atomic<int>> hits;
  std::atomic<int64_t> calls{0};
  std::atomic<bool> badRange{false};

  static void task(void *ctx, int64_t begin, int64_t end) {
    auto *self = static_cast<Coverage *>(ctx);
    if (begin >= end || begin < 0 || end > int64_t(self->hits.size()))
      self->badRange = true;
    for (int64_t i = begin; i < end && i < int64_t(self->hits.size()); ++i)
      self->hits[i].fetch_add(1);
    self->calls.fetch_add(1);
  }

  bool eachOnce() const {
    for (const std::atomic<int> &hit : hits)
      if (hit.load() != 1)
        return false;
    return true;
  }
};

TEST(ThreadPoolTest, EveryIterationRunsOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    // (More iterations than a claim word counts: claimed several a unit.)
    for (int64_t count :
         {0, 1, 2, 3, 7, 16, 17, 63, 64, 65, 1000, 100003, 3000017}) {
      Coverage coverage(count);
      pool.parallelFor(count, Coverage::task, &coverage);
      EXPECT_TRUE(coverage.eachOnce())
          << threads << " threads, " << count << " iterations";
      EXPECT_FALSE(coverage.badRange.load());
    }
  }
}

TEST(ThreadPoolTest, BackToBackJobs) {
  // A worker that missed one job (still spinning, or asleep) must never run
  // the next job's iterations with the old job's task (each job here has
  // its own context, which only lives for its call).
  ThreadPool pool(4);
  for (int job = 0; job < 20000; ++job) {
    int64_t count = 1 + job % 37;
    Coverage coverage(count);
    pool.parallelFor(count, Coverage::task, &coverage);
    ASSERT_TRUE(coverage.eachOnce()) << "job " << job;
    ASSERT_FALSE(coverage.badRange.load());
  }
}

TEST(ThreadPoolTest, ASleepingWorkerWakesForTheNextJob) {
  // Between jobs a worker spins, then sleeps; a job is published without
  // the pool's mutex and only notified when a worker sleeps. Each job here
  // comes after the worker has gone to sleep, and the caller's iteration
  // waits (up to 2 s) for the worker to run one: a lost wake-up fails the
  // test rather than hanging it (the caller would then take both).
  ThreadPool pool(2);
  struct Handshake {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<bool> workerRan{false};
    static void task(void *ctx, int64_t, int64_t) {
      auto *self = static_cast<Handshake *>(ctx);
      if (std::this_thread::get_id() != self->caller) {
        self->workerRan = true;
        return;
      }
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!self->workerRan && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    }
  };
  for (int job = 0; job < 20; ++job) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Handshake handshake;
    pool.parallelFor(2, Handshake::task, &handshake);
    ASSERT_TRUE(handshake.workerRan.load()) << "job " << job;
  }
}

TEST(ThreadPoolTest, WaitsForTheSlowestRange) {
  // One range sleeps; the caller returns only when all are done.
  ThreadPool pool(2);
  struct Slow {
    Coverage coverage{64};
    static void task(void *ctx, int64_t begin, int64_t end) {
      auto *self = static_cast<Slow *>(ctx);
      if (begin == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      Coverage::task(&self->coverage, begin, end);
    }
  } slow;
  pool.parallelFor(64, Slow::task, &slow);
  EXPECT_TRUE(slow.coverage.eachOnce());
}

TEST(ThreadPoolTest, IdleThreadsTakeOverASlowThreadsIterations) {
  // The worker sleeps in every call: the caller, done with its own half,
  // takes the worker's unclaimed iterations from their back.
  ThreadPool pool(2);
  struct Lopsided {
    Coverage coverage{64};
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int64_t> onCaller{0};
    static void task(void *ctx, int64_t begin, int64_t end) {
      auto *self = static_cast<Lopsided *>(ctx);
      if (std::this_thread::get_id() == self->caller)
        self->onCaller += end - begin;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      Coverage::task(&self->coverage, begin, end);
    }
  } lopsided;
  pool.parallelFor(64, Lopsided::task, &lopsided);
  EXPECT_TRUE(lopsided.coverage.eachOnce());
  EXPECT_FALSE(lopsided.coverage.badRange.load());
  EXPECT_GT(lopsided.onCaller.load(), 32);
}

TEST(ThreadPoolTest, TheLastIterationsOfARangeGoOneByOne) {
  // 64 iterations on 2 threads are claimed 4 at a time, but never more than
  // half of what a range has left: whichever thread finishes first can
  // take over the other's last iterations one by one instead of waiting for
  // a claim of 4 to run.
  ThreadPool pool(2);
  struct Sizes {
    Coverage coverage{64};
    std::atomic<int64_t> largest{0}, single{0};
    static void task(void *ctx, int64_t begin, int64_t end) {
      auto *self = static_cast<Sizes *>(ctx);
      int64_t size = end - begin;
      int64_t seen = self->largest.load();
      while (size > seen && !self->largest.compare_exchange_weak(seen, size))
        ;
      if (size == 1)
        ++self->single;
      Coverage::task(&self->coverage, begin, end);
    }
  } sizes;
  pool.parallelFor(64, Sizes::task, &sizes);
  EXPECT_TRUE(sizes.coverage.eachOnce());
  EXPECT_EQ(sizes.largest.load(), 4);
  EXPECT_GE(sizes.single.load(), 1);
}

} // namespace

/// Tells a 2-iteration job's caller from its worker. Threads may take each
/// other's iterations, so each holds its call until the other has started
/// one.
struct TwoThreads {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> callerStarted{false}, workerStarted{false};

  /// Whether this call runs on the caller. Each thread's call waits (up to
  /// 10 s) until the other's has started, so neither can take the other's
  /// iteration: each runs exactly one.
  bool onCaller() {
    bool isCaller = std::this_thread::get_id() == caller;
    (isCaller ? callerStarted : workerStarted) = true;
    std::atomic<bool> &other = isCaller ? workerStarted : callerStarted;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!other && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    return isCaller;
  }
};

/// The CPUs the caller and the worker of a 2-iteration job may use.
struct Placement : TwoThreads {
  std::atomic<int> workerCpus{-1}, callerCpus{-1};
  static void task(void *ctx, int64_t begin, int64_t end) {
    auto *self = static_cast<Placement *>(ctx);
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    (self->onCaller() ? self->callerCpus : self->workerCpus) = CPU_COUNT(&set);
  }
};

/// The CPUs the process may use, and how many (0 if unknown).
int allowedCpus(cpu_set_t &allowed) {
  return sched_getaffinity(0, sizeof allowed, &allowed) == 0
             ? CPU_COUNT(&allowed)
             : 0;
}

/// Pinning tests: they need a 2-thread pool to fit the process's CPUs.
class ThreadPoolPinningTest : public ::testing::Test {
protected:
  void SetUp() override {
    cpus = allowedCpus(allowed);
    if (cpus < 2)
      GTEST_SKIP() << "one CPU: a 2-thread pool does not fit, nothing to pin";
    unsetenv("KILN_PIN_THREADS");
  }

  cpu_set_t allowed;
  int cpus = 0;
};

TEST_F(ThreadPoolPinningTest, PinsWorkersWhenThePoolFits) {
  {
    ThreadPool pool(2);
    Placement placement;
    pool.parallelFor(2, Placement::task, &placement);
    // The worker stays on one CPU; the caller keeps the process's set.
    EXPECT_EQ(placement.workerCpus.load(), 1);
    EXPECT_EQ(placement.callerCpus.load(), cpus);
  }
  setenv("KILN_PIN_THREADS", "0", 1);
  {
    ThreadPool pool(2);
    Placement placement;
    pool.parallelFor(2, Placement::task, &placement);
    EXPECT_EQ(placement.workerCpus.load(), cpus);
  }
  unsetenv("KILN_PIN_THREADS");
}

/// The CPU the worker of a 2-iteration job is pinned to (-1 when it may use
/// several), and the one the caller ran on.
struct PinnedCpu : TwoThreads {
  std::atomic<int> worker{-2}, caller{-2};
  static void task(void *ctx, int64_t begin, int64_t end) {
    auto *self = static_cast<PinnedCpu *>(ctx);
    if (self->onCaller()) {
      self->caller = sched_getcpu();
      return;
    }
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    int pinned = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE && CPU_COUNT(&set) == 1; ++cpu)
      if (CPU_ISSET(cpu, &set))
        pinned = cpu;
    self->worker = pinned;
  }
};

TEST_F(ThreadPoolPinningTest, MovesTheWorkerOffTheCallersCpu) {
  ThreadPool pool(2);
  PinnedCpu first;
  pool.parallelFor(2, PinnedCpu::task, &first);
  ASSERT_GE(first.worker.load(), 0);
  // The caller lands on the worker's CPU: the next loop moves the worker.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first.worker.load(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  PinnedCpu second;
  pool.parallelFor(2, PinnedCpu::task, &second);
  sched_setaffinity(0, sizeof allowed, &allowed);
  EXPECT_EQ(second.caller.load(), first.worker.load());
  EXPECT_GE(second.worker.load(), 0);
  EXPECT_NE(second.worker.load(), second.caller.load());
}
