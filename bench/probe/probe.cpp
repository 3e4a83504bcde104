//===- probe.cpp - machine probe for the kiln benchmark roofline ----------===//
//
// Measures what the roofline in docs/benchmarks.md is drawn against:
//
//   * peak FP32 FMA throughput, with an AVX-512 and an AVX2 microkernel whose
//     accumulators stay in registers (no memory traffic at all), on 1 thread
//     and on N threads;
//   * memory bandwidth, with a STREAM-style triad a[i] = b[i] + s * c[i]:
//     over arrays far larger than L3 with non-temporal stores (DRAM), and over
//     arrays that fit in L2 with ordinary stores (cache), on 1 and N threads.
//
// With --round-trip it measures only how far apart the process's first two
// CPUs are: the round trip of a cache line between two threads pinned to
// them. On a virtual machine the host may place the two vCPUs on cores that
// share a cache or on different core complexes or sockets, and move them
// between the two over seconds to minutes; bench/measure.py takes it around
// every round of a multi-threaded row.
//
// Prints one JSON object on stdout. Built by bench/run.py with
//   clang++-22 -O3 -march=native -std=c++17 -pthread probe.cpp
// Each kernel is compiled for its own ISA through target attributes, so the
// same binary also runs (AVX2 only) on a CPU without AVX-512.
//
// Usage: probe [--threads N] [--quick] | probe --round-trip
//
//===----------------------------------------------------------------------===//

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

//===----------------------------------------------------------------------===//
// Running a kernel on N threads at once
//===----------------------------------------------------------------------===//

// Runs work(threadIndex) on `threads` threads that start together (spin
// barrier, so thread creation is not timed) and returns the wall time from the
// common start until the last thread finished.
double runTogether(int threads, const std::function<void(int)> &work) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      work(t);
    });
  while (ready.load() != threads) {
  }
  Clock::time_point start = Clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread &thread : pool)
    thread.join();
  return secondsSince(start);
}

// The best (shortest) of `trials` timings: the steady-state peak, without the
// interference of other processes on a shared machine.
double bestOf(int trials, const std::function<double()> &measure) {
  double best = 1e30;
  for (int i = 0; i < trials; ++i)
    best = std::min(best, measure());
  return best;
}

//===----------------------------------------------------------------------===//
// FMA microkernels
//===----------------------------------------------------------------------===//

// Each kernel keeps kChains independent accumulator chains in registers:
// acc = acc * a + b. FMA latency is 4 cycles on current x86 cores with two
// FMA pipes, so at least 8 chains are needed to keep both pipes busy; more
// chains hide scheduling noise. 24 zmm chains plus 2 operands fit in the 32
// zmm registers, 12 ymm chains plus 2 operands in the 16 ymm registers.
constexpr int kZmmChains = 24;
constexpr int kYmmChains = 12;

// The result is returned so that the compiler cannot drop the loop; the
// factors keep the values bounded (a < 1).
__attribute__((target("avx512f"), noinline)) float fmaAvx512(int64_t iterations) {
  __m512 acc[kZmmChains];
  for (int c = 0; c < kZmmChains; ++c)
    acc[c] = _mm512_set1_ps(1.0f + c);
  __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kZmmChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    // An empty asm that "modifies" the operands stops the compiler from
    // folding consecutive iterations into a closed form.
    __asm__ volatile("" : "+v"(a), "+v"(b));
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kZmmChains; ++c)
    sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"), noinline)) float fmaAvx2(int64_t iterations) {
  __m256 acc[kYmmChains];
  for (int c = 0; c < kYmmChains; ++c)
    acc[c] = _mm256_set1_ps(1.0f + c);
  __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kYmmChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    __asm__ volatile("" : "+x"(a), "+x"(b));
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kYmmChains; ++c)
    sum = _mm256_add_ps(sum, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes)
    total += lane;
  return total;
}

struct FmaKernel {
  const char *name;
  float (*run)(int64_t iterations);
  int flopsPerIteration; // chains * lanes * 2 (multiply and add)
};

volatile float gSink; // keeps every kernel's result alive

// GFLOP/s of `kernel` on `threads` threads, each running `iterations`.
double measureFma(const FmaKernel &kernel, int threads, int64_t iterations,
                  int trials) {
  double seconds = bestOf(trials, [&] {
    return runTogether(threads, [&](int) { gSink = kernel.run(iterations); });
  });
  return double(kernel.flopsPerIteration) * iterations * threads / seconds * 1e-9;
}

//===----------------------------------------------------------------------===//
// Triad bandwidth
//===----------------------------------------------------------------------===//

// a[i] = b[i] + s * c[i] over [begin, end). The streaming variant writes `a`
// with non-temporal stores, so no read-for-ownership of `a` happens and the
// traffic is exactly 3 * 4 bytes per element (what STREAM counts).
// `begin` and `end` are multiples of 16 and the arrays are 64-byte aligned.
__attribute__((target("avx512f"))) void triadAvx512(float *a, const float *b,
                                                    const float *c, float s,
                                                    size_t begin, size_t end,
                                                    bool streaming) {
  __m512 scale = _mm512_set1_ps(s);
  if (streaming) {
    for (size_t i = begin; i < end; i += 16)
      _mm512_stream_ps(a + i, _mm512_fmadd_ps(scale, _mm512_load_ps(c + i),
                                              _mm512_load_ps(b + i)));
    _mm_sfence();
  } else {
    for (size_t i = begin; i < end; i += 16)
      _mm512_store_ps(a + i, _mm512_fmadd_ps(scale, _mm512_load_ps(c + i),
                                             _mm512_load_ps(b + i)));
  }
}

__attribute__((target("avx2,fma"))) void triadAvx2(float *a, const float *b,
                                                   const float *c, float s,
                                                   size_t begin, size_t end,
                                                   bool streaming) {
  __m256 scale = _mm256_set1_ps(s);
  if (streaming) {
    for (size_t i = begin; i < end; i += 8)
      _mm256_stream_ps(a + i, _mm256_fmadd_ps(scale, _mm256_load_ps(c + i),
                                              _mm256_load_ps(b + i)));
    _mm_sfence();
  } else {
    for (size_t i = begin; i < end; i += 8)
      _mm256_store_ps(a + i, _mm256_fmadd_ps(scale, _mm256_load_ps(c + i),
                                             _mm256_load_ps(b + i)));
  }
}

using TriadFn = void (*)(float *, const float *, const float *, float, size_t,
                         size_t, bool);

struct AlignedArray {
  float *data;
  explicit AlignedArray(size_t elements)
      : data(static_cast<float *>(std::aligned_alloc(64, elements * sizeof(float)))) {
    if (!data) {
      std::fprintf(stderr, "probe: cannot allocate %zu floats\n", elements);
      std::exit(1);
    }
  }
  ~AlignedArray() { std::free(data); }
};

// GB/s of the triad with `elementsPerThread` elements per thread and
// `sweeps` passes over them per trial. Each thread gets its own arrays, first
// touched by that thread so its pages are local, which is what STREAM does
// with OpenMP static scheduling.
double measureTriad(TriadFn triad, int threads, size_t elementsPerThread,
                    int sweeps, int trials, bool streaming) {
  std::vector<AlignedArray *> arrays(3 * threads);
  runTogether(threads, [&](int t) {
    for (int k = 0; k < 3; ++k) {
      AlignedArray *array = new AlignedArray(elementsPerThread);
      for (size_t i = 0; i < elementsPerThread; ++i)
        array->data[i] = 1.0f + k;
      arrays[3 * t + k] = array;
    }
  });
  double seconds = bestOf(trials, [&] {
    return runTogether(threads, [&](int t) {
      float *a = arrays[3 * t]->data, *b = arrays[3 * t + 1]->data,
            *c = arrays[3 * t + 2]->data;
      for (int sweep = 0; sweep < sweeps; ++sweep)
        triad(a, b, c, 0.5f, 0, elementsPerThread, streaming);
    });
  });
  for (AlignedArray *array : arrays)
    delete array;
  double bytes = 3.0 * sizeof(float) * elementsPerThread * sweeps * threads;
  return bytes / seconds * 1e-9;
}

//===----------------------------------------------------------------------===//
// Distance between two CPUs
//===----------------------------------------------------------------------===//

/// The first two CPUs this process may run on (on 2 CPUs, those kiln's pool
/// uses), or none.
std::vector<int> firstTwoCpus() {
  cpu_set_t allowed;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu)
    if (CPU_ISSET(cpu, &allowed))
      cpus.push_back(cpu);
  return cpus.size() == 2 ? cpus : std::vector<int>{};
}

bool pinTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

/// The counter the two threads hand back and forth, alone on its lines
/// (and their adjacent-line prefetch partner).
struct alignas(128) HandOff {
  std::atomic<int64_t> turn{0};
  char padding[128 - sizeof(std::atomic<int64_t>)];
};

/// Nanoseconds for one cache line to go from `cpus[0]` to `cpus[1]` and
/// back: each thread waits for the other's increment of one counter, then
/// increments it, `exchanges` times; timed from when both threads run
/// pinned. Negative where a thread cannot be pinned.
double roundTripNs(const std::vector<int> &cpus, int64_t exchanges) {
  HandOff handOff;
  std::atomic<int> arrived{0};
  std::atomic<bool> pinned[2] = {false, false};
  Clock::time_point start;
  auto player = [&](int index) {
    pinned[index] = pinTo(cpus[index]);
    arrived.fetch_add(1);
    // Yielding: a thread not yet moved to its own CPU may be waiting for
    // this one's.
    while (arrived.load() < 2)
      std::this_thread::yield();
    if (!pinned[0] || !pinned[1])
      return;
    if (index == 0)
      start = Clock::now();
    for (int64_t turn = index; turn < 2 * exchanges; turn += 2) {
      // No pause in the wait: it would add its own latency (tens of
      // cycles) to every exchange.
      while (handOff.turn.load(std::memory_order_acquire) != turn) {
      }
      handOff.turn.store(turn + 1, std::memory_order_release);
    }
  };
  std::thread other(player, 1);
  player(0);
  if (!pinned[0] || !pinned[1]) {
    other.join();
    return -1;
  }
  // The other thread's last increment ends the exchanges.
  while (handOff.turn.load(std::memory_order_acquire) != 2 * exchanges) {
  }
  double seconds = secondsSince(start);
  other.join();
  return seconds * 1e9 / exchanges;
}

/// {"cpus": [a, b], "round_trip_ns": the lowest of 10 trials} (~3 ms on
/// cores that share a cache, ~11 ms apart): the host moves the vCPUs over
/// seconds, so within the trials the distance is fixed, and the lowest
/// leaves out the time slices another thread on either CPU took.
int printRoundTrip() {
  std::vector<int> cpus = firstTwoCpus();
  double best = -1;
  for (int i = 0; i < 10 && !cpus.empty(); ++i) {
    double ns = roundTripNs(cpus, 2'500);
    if (ns < 0) {
      best = -1;
      break;
    }
    best = best < 0 ? ns : std::min(best, ns);
  }
  if (best < 0) {
    std::printf("{\"cpus\": [], \"round_trip_ns\": null}\n");
    return 0;
  }
  std::printf("{\"cpus\": [%d, %d], \"round_trip_ns\": %.0f}\n", cpus[0],
              cpus[1], best);
  return 0;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

std::string cpuModel() {
  FILE *file = std::fopen("/proc/cpuinfo", "r");
  std::string model = "unknown";
  if (!file)
    return model;
  char line[512];
  while (std::fgets(line, sizeof line, file)) {
    if (std::strncmp(line, "model name", 10) == 0) {
      const char *colon = std::strchr(line, ':');
      if (colon) {
        model = colon + 2;
        model.erase(model.find_last_not_of(" \n") + 1);
      }
      break;
    }
  }
  std::fclose(file);
  return model;
}

// {"1": x, "N": y} for the thread counts measured.
std::string perThreadsJson(const std::vector<int> &threadCounts,
                           const std::function<double(int)> &measure) {
  std::string json = "{";
  for (size_t i = 0; i < threadCounts.size(); ++i) {
    char entry[64];
    std::snprintf(entry, sizeof entry, "%s\"%d\": %.1f", i ? ", " : "",
                  threadCounts[i], measure(threadCounts[i]));
    json += entry;
  }
  return json + "}";
}

} // namespace

int main(int argc, char **argv) {
  int maxThreads = int(std::max(1u, std::thread::hardware_concurrency()));
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--round-trip"))
      return printRoundTrip();
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      maxThreads = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else {
      std::fprintf(
          stderr,
          "usage: probe [--threads N] [--quick] | probe --round-trip\n");
      return 2;
    }
  }
  std::vector<int> threadCounts = {1};
  if (maxThreads > 1)
    threadCounts.push_back(maxThreads);

  bool hasAvx512 = __builtin_cpu_supports("avx512f");
  bool hasAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!hasAvx2) {
    std::fprintf(stderr, "probe: the CPU has no AVX2+FMA\n");
    return 1;
  }

  // ~0.1-0.3 s per FMA trial at ~100 GFLOP/s per core; --quick for smoke runs.
  int trials = quick ? 2 : 5;
  int64_t fmaIterations = quick ? 2'000'000 : 20'000'000;
  std::vector<FmaKernel> kernels;
  if (hasAvx512)
    kernels.push_back({"avx512", fmaAvx512, kZmmChains * 16 * 2});
  kernels.push_back({"avx2", fmaAvx2, kYmmChains * 8 * 2});

  // DRAM: 3 arrays of 32 Mi floats per thread (384 MiB per thread), far
  // larger than any L3. L2: 3 arrays of 16 Ki floats (192 KiB), larger than
  // L1d and well inside a 512 KiB+ L2.
  size_t dramElements = quick ? (size_t(8) << 20) : (size_t(32) << 20);
  size_t l2Elements = size_t(16) << 10;
  int l2Sweeps = quick ? 500 : 4000;
  TriadFn triad = hasAvx512 ? triadAvx512 : triadAvx2;

  std::printf("{\n  \"cpu\": \"%s\",\n  \"threads\": [", cpuModel().c_str());
  for (size_t i = 0; i < threadCounts.size(); ++i)
    std::printf("%s%d", i ? ", " : "", threadCounts[i]);
  std::printf("],\n  \"isa\": \"%s\",\n  \"peak_gflops\": {", hasAvx512 ? "avx512" : "avx2");
  for (size_t k = 0; k < kernels.size(); ++k)
    std::printf("%s\n    \"%s\": %s", k ? "," : "", kernels[k].name,
                perThreadsJson(threadCounts, [&](int threads) {
                  return measureFma(kernels[k], threads, fmaIterations, trials);
                }).c_str());
  std::printf("\n  },\n  \"bandwidth_gbs\": {\n");
  std::printf("    \"dram_triad\": %s,\n",
              perThreadsJson(threadCounts, [&](int threads) {
                return measureTriad(triad, threads, dramElements, 1, trials, true);
              }).c_str());
  std::printf("    \"l2_triad\": %s\n  },\n",
              perThreadsJson(threadCounts, [&](int threads) {
                return measureTriad(triad, threads, l2Elements, l2Sweeps, trials, false);
              }).c_str());
  std::printf("  \"method\": \"FMA: %d zmm / %d ymm register-resident chains, best of %d; "
              "triad a=b+s*c: DRAM %zu MiB per thread with non-temporal stores, L2 %zu KiB "
              "per thread, 12 bytes per element, best of %d\"\n}\n",
              kZmmChains, kYmmChains, trials, 3 * dramElements * 4 >> 20,
              3 * l2Elements * 4 >> 10, trials);
  return 0;
}
