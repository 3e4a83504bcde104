//===- pool_benchmark.cpp - thread pool and split-write microbenchmarks ---===//
//
// What a parallel kernel pays beside its own work, on this machine:
//
// - ForkJoin: one parallelFor of the runtime's pool (lib/Runtime) over
//   `count` iterations of `steps` dependent multiply-adds each; with 0 steps,
//   the pool's own cost per kernel (publication, wake-up, claims, the final
//   wait).
// - SplitWrites: two threads, kept on two CPUs and released together, write
//   192 planes of 28 x 28 floats (602 KB: MobileNetV2's 28x28 layers), each
//   its share: half of the planes, half of every plane's rows, or alternate
//   contiguous pieces of N bytes. On a Granite Rapids-class host the rows and
//   most piece sizes took ~3x as long as halves of the planes
//   (docs/backend.md, under Depthwise convolution and pooling): the reason
//   kiln's kernels split a tensor's planes rather than each plane's rows.
//
// Timing only (bench/micro.sh runs it); the written values are checked once
// per case so that a broken split cannot pass for a fast one.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/ThreadPool.h"

#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

using kiln::runtime::ThreadPool;

namespace {

//===----------------------------------------------------------------------===//
// ForkJoin
//===----------------------------------------------------------------------===//

/// Work of `steps` dependent multiply-adds an iteration (one per FP
/// latency, a few cycles each): compare a case's 2-thread time with half
/// its 1-thread time.
struct Spin {
  int64_t steps;
  static void task(void *ctx, int64_t begin, int64_t end) {
    int64_t steps = static_cast<Spin *>(ctx)->steps;
    for (int64_t i = begin; i < end; ++i) {
      double x = 1.0;
      for (int64_t s = 0; s < steps; ++s)
        x = x * 1.0000001 + 1e-9;
      benchmark::DoNotOptimize(x);
    }
  }
};

void forkJoin(benchmark::State &state) {
  int threads = int(state.range(0));
  int64_t count = state.range(1);
  Spin spin{state.range(2)};
  ThreadPool pool(threads);
  for (auto _ : state)
    pool.parallelFor(count, Spin::task, &spin);
  state.SetLabel(std::to_string(count) + " iterations of " +
                 std::to_string(spin.steps) + " steps");
}

//===----------------------------------------------------------------------===//
// SplitWrites
//===----------------------------------------------------------------------===//

constexpr int64_t kPlanes = 192, kRows = 28, kColumns = 28;
constexpr int64_t kPlaneFloats = kRows * kColumns;
constexpr int64_t kFloats = kPlanes * kPlaneFloats;

/// The floats thread `t` of 2 writes, as [begin, end) runs.
using Share = std::vector<std::pair<int64_t, int64_t>>;

Share halvesOfPlanes(int t) {
  return {{t * kFloats / 2, (t + 1) * kFloats / 2}};
}

Share halvesOfRows(int t) {
  Share share;
  int64_t split = kRows / 2 * kColumns;
  for (int64_t p = 0; p < kPlanes; ++p)
    share.push_back(
        t ? std::make_pair(p * kPlaneFloats + split, (p + 1) * kPlaneFloats)
          : std::make_pair(p * kPlaneFloats, p * kPlaneFloats + split));
  return share;
}

Share alternatePieces(int t, int64_t bytes) {
  Share share;
  int64_t floats = bytes / 4;
  for (int64_t begin = t * floats; begin < kFloats; begin += 2 * floats)
    share.push_back({begin, std::min(begin + floats, kFloats)});
  return share;
}

/// Writes `value` over `share` with 64-byte stores, the tail of a run
/// masked, as kiln's AVX-512 kernels store.
__attribute__((target("avx512f"))) void writeZmm(float *out, const Share &share,
                                                 float value) {
  __m512 v = _mm512_set1_ps(value);
  for (auto [begin, end] : share) {
    int64_t i = begin;
    for (; i + 16 <= end; i += 16)
      _mm512_storeu_ps(out + i, v);
    if (i < end)
      _mm512_mask_storeu_ps(out + i, __mmask16((1u << (end - i)) - 1), v);
  }
}

/// Writes `value` over `share`: 64-byte stores where the CPU has AVX-512,
/// else what the compiler vectorizes `std::fill` to.
void write(float *out, const Share &share, float value) {
  static const bool zmm = __builtin_cpu_supports("avx512f");
  if (zmm) {
    writeZmm(out, share, value);
    return;
  }
  for (auto [begin, end] : share)
    std::fill(out + begin, out + end, value);
}

/// The first two CPUs this process may run on (-1 where it has fewer).
std::pair<int, int> twoCpus() {
  cpu_set_t allowed;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu)
      if (CPU_ISSET(cpu, &allowed))
        cpus.push_back(cpu);
  cpus.resize(2, -1);
  return {cpus[0], cpus[1]};
}

void pinTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

/// The second thread, released by a generation counter and counted back.
class Partner {
public:
  Partner(int cpu, std::function<void(int64_t)> work)
      : cpu(cpu), work(std::move(work)), thread([this] { loop(); }) {}
  ~Partner() {
    stop = true;
    go.fetch_add(1);
    thread.join();
  }
  void release(int64_t generation) { go.store(generation); }
  void await(int64_t generation) {
    while (done.load() < generation)
      _mm_pause();
  }

private:
  void loop() {
    pinTo(cpu);
    for (int64_t seen = 0;;) {
      while (go.load() == seen)
        _mm_pause();
      if (stop)
        return;
      seen = go.load();
      work(seen);
      done.store(seen);
    }
  }
  int cpu;
  std::function<void(int64_t)> work;
  std::atomic<int64_t> go{0}, done{0};
  std::atomic<bool> stop{false};
  std::thread thread;
};

void splitWrites(benchmark::State &state,
                 const std::function<Share(int)> &shareOf) {
  auto [first, second] = twoCpus();
  if (second < 0) {
    state.SkipWithError("needs 2 CPUs");
    return;
  }
  // Page-aligned, as the arena's large buffers start: where a piece
  // boundary falls within a page matters (2 KB pieces of an unaligned
  // buffer wrote as slowly as the rows).
  std::unique_ptr<float, decltype(&std::free)> buffer(
      static_cast<float *>(std::aligned_alloc(4096, kFloats * 4)), &std::free);
  float *out = buffer.get();
  Share mine = shareOf(0), theirs = shareOf(1);
  Partner partner(second, [&](int64_t generation) {
    write(out, theirs, float(generation));
  });
  cpu_set_t before;
  bool restore = sched_getaffinity(0, sizeof before, &before) == 0;
  pinTo(first);
  int64_t generation = 0;
  for (auto _ : state) {
    ++generation;
    partner.release(generation);
    write(out, mine, float(generation));
    partner.await(generation);
  }
  // Every float written by the last round, by one thread or the other.
  float value = float(generation);
  for (int64_t i = 0; i < kFloats; ++i)
    if (out[i] != value) {
      state.SkipWithError("a float was not written");
      break;
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * kFloats * 4);
  if (restore)
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
}

void registerAll() {
  for (int threads : {1, 2})
    for (auto [count, steps] :
         {std::pair<int64_t, int64_t>{2, 0}, {34, 0}, {34, 1000}})
      benchmark::RegisterBenchmark("ForkJoin", forkJoin)
          ->Args({threads, count, steps})
          ->ArgNames({"threads", "count", "steps"})
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
  auto split = [](const char *name, std::function<Share(int)> shareOf) {
    benchmark::RegisterBenchmark(
        (std::string("SplitWrites/") + name).c_str(),
        [shareOf](benchmark::State &state) { splitWrites(state, shareOf); })
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  };
  split("halves_of_planes", halvesOfPlanes);
  split("halves_of_rows", halvesOfRows);
  for (int64_t bytes : {1024, 1536, 2048, 2560, 3136})
    split(("pieces_of_" + std::to_string(bytes)).c_str(),
          [bytes](int t) { return alternatePieces(t, bytes); });
}

} // namespace

int main(int argc, char **argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
