//===- gelu_bias_relu.cpp - hand-written fusion limit for gelu-bias-relu --===//
//
// The single pass a performance engineer would write by hand for the
// benchmark model `gelu-bias-relu` (bench/models.py):
//
//   y = Relu(GELU_tanh(x + b)),   x: f32[4096][1024], b: f32[1024]
//   GELU_tanh(u) = 0.5 * u * (1 + tanh(sqrt(2/pi) * (u + 0.044715 * u^3)))
//
// x is read once and y written once; everything in between stays in
// registers. bench/run.py runs it next to kiln and ONNX Runtime and reports
// kiln's time over this one ("Fusion limit" in docs/benchmarks.md): how close
// kiln's fused kernel comes to hand-written code. It uses no kiln code.
//
// The math, per element (with z = sqrt(2/pi) * (u + 0.044715 * u^3)):
//   * 0.5 * (1 + tanh(z)) == 1 / (1 + exp(-2z)) exactly, so
//     GELU_tanh(u) = u / (1 + 2^w) with w = -2z / ln 2 = u * (A + B * u^2):
//     one power of two and one division instead of a tanh and the products
//     around it; computing the exponent in base 2 saves the multiplication
//     by 1/ln 2 of the usual exp range reduction.
//   * 2^w = 2^n * p(r), n = round(w), r = w - n in [-1/2, 1/2] (exact); p is
//     the degree-5 Chebyshev interpolant of 2^r on that interval
//     (numpy.polynomial.chebyshev.Chebyshev.interpolate, converted to
//     monomials and rounded to f32): relative error 1.6e-7.
//   * w is clamped to [-125, 127] so that 2^n stays a normal f32 and no
//     infinity turns into a NaN; the clamp changes no result, as 2^-125 is
//     far below half an ulp of 1 and u / (1 + 2^127) is a negative value
//     that the ReLU zeroes anyway.
// Error: a relative error d in 2^w moves y by at most |u| * d / 4, so y is
// within about 1e-6 of the exact value for inputs of a few units. The
// program measures it (max_abs_error_vs_reference, against a plain scalar
// double-precision loop): 6.5e-7 on the benchmark's standard normal inputs,
// about one ulp of the largest outputs, i.e. mostly the f32 rounding of y.
//
// Measured on the benchmark machine (2-core Zen 4 VM, AVX-512, 32 MiB L3):
// the arithmetic alone (this loop over 64 rows, which stay in L2) takes
// 1.03 ms per 4096 rows on one thread, the whole tensor 1.08 ms, and two
// threads half that: the loop is bound by its arithmetic, not by memory, as
// x and y (32 MiB together) largely stay in the L3 between passes. Hence
// the choices, each measured faster there: vdivps over rcp14 + a Newton
// step, ordinary stores over non-temporal ones (which would evict y from
// the L3), the compiler's own unrolling over a forced one, and the base-2
// exponent above (10% faster than exp's range reduction).
//
// Vectorized with AVX-512 intrinsics where the compiler targets it
// (-march=native), else AVX2 + FMA, else a scalar loop; the algorithm is
// written once over a handful of per-ISA primitives. Rows are split across N
// threads started once (the calling thread is one of them), which spin
// between passes so that a wake-up costs no system call.
//
// Prints one JSON object: threads, isa, ms_median, ms_min, ms_max (per whole
// pass over the tensor, all threads), max_abs_error_vs_reference.
//
// Built by bench/handwritten.py with
//   clang++-22 -O3 -march=native -std=c++17 -pthread gelu_bias_relu.cpp
// Usage: gelu_bias_relu [--threads N] [--repeats R] [--warmup W]
//
//===----------------------------------------------------------------------===//

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

// The model's shape (bench/models.py, gelu_bias_relu).
constexpr int kRows = 4096;
constexpr int kCols = 1024;

// GELU_tanh(u) = u / (1 + 2^(u * (kA + kB * u^2))) (see the header).
const double kSqrt2OverPi = std::sqrt(2.0 / M_PI);
const float kA = float(-2.0 * kSqrt2OverPi / M_LN2);
const float kB = float(-2.0 * kSqrt2OverPi * 0.044715 / M_LN2);
constexpr float kMinExponent = -125.0f;
constexpr float kMaxExponent = 127.0f;
// p(r) = sum kPow2Poly[i] * r^i ~ 2^r on [-1/2, 1/2] (see the header).
constexpr float kPow2Poly[] = {0x1.000002p+0f, 0x1.62e43p-1f, 0x1.ebf906p-3f,
                               0x1.c6af6cp-5f, 0x1.3d107p-7f, 0x1.5f089p-10f};

//===----------------------------------------------------------------------===//
// Per-ISA primitives: a vector of kLanes floats and the operations the
// algorithm needs. Loads and stores are aligned (64-byte buffers, rows of
// 4 KiB). In a namespace of their own: the scalar versions would otherwise
// collide with libm's fma, fmax and friends.
//===----------------------------------------------------------------------===//

namespace vec {

#if defined(__AVX512F__)
constexpr const char *kIsaName = "avx512";
constexpr int kLanes = 16;
using Vec = __m512;
inline Vec splat(float v) { return _mm512_set1_ps(v); }
inline Vec load(const float *p) { return _mm512_load_ps(p); }
inline void store(float *p, Vec v) { _mm512_store_ps(p, v); }
inline Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
inline Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
inline Vec div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
// x86 max/min return the second operand when either is NaN: callers pass
// the value second so that a NaN input stays NaN, as ONNX's ops keep it.
inline Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
inline Vec min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
inline Vec roundNearest(Vec v) {
  return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// p * 2^n for integral n in [-125, 127]; vscalefps does it in one instruction.
inline Vec scaleByPow2(Vec p, Vec n) { return _mm512_scalef_ps(p, n); }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char *kIsaName = "avx2";
constexpr int kLanes = 8;
using Vec = __m256;
inline Vec splat(float v) { return _mm256_set1_ps(v); }
inline Vec load(const float *p) { return _mm256_load_ps(p); }
inline void store(float *p, Vec v) { _mm256_store_ps(p, v); }
inline Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
inline Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
inline Vec div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
inline Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
inline Vec roundNearest(Vec v) {
  return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// No scalef before AVX-512: build 2^n from its exponent bits and multiply.
inline Vec scaleByPow2(Vec p, Vec n) {
  __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}
#else
constexpr const char *kIsaName = "scalar";
constexpr int kLanes = 1;
using Vec = float;
inline Vec splat(float v) { return v; }
inline Vec load(const float *p) { return *p; }
inline void store(float *p, Vec v) { *p = v; }
inline Vec add(Vec a, Vec b) { return a + b; }
inline Vec sub(Vec a, Vec b) { return a - b; }
inline Vec mul(Vec a, Vec b) { return a * b; }
inline Vec div(Vec a, Vec b) { return a / b; }
inline Vec fma(Vec a, Vec b, Vec c) { return std::fma(a, b, c); }
// Same NaN rule as the x86 instructions: a NaN in either gives b.
inline Vec max(Vec a, Vec b) { return a > b ? a : b; }
inline Vec min(Vec a, Vec b) { return a < b ? a : b; }
inline Vec roundNearest(Vec v) { return std::nearbyint(v); }
inline Vec scaleByPow2(Vec p, Vec n) { return std::ldexp(p, int(n)); }
#endif

} // namespace vec

using vec::Vec;

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

// 2^w for w in [kMinExponent, kMaxExponent] (see the header).
inline Vec pow2(Vec w) {
  Vec n = vec::roundNearest(w);
  Vec r = vec::sub(w, n);
  Vec p = vec::splat(kPow2Poly[5]);
  for (int i = 4; i >= 0; --i)
    p = vec::fma(p, r, vec::splat(kPow2Poly[i]));
  return vec::scaleByPow2(p, n);
}

// Relu(GELU_tanh(x + b)) on one vector.
inline Vec geluBiasRelu(Vec x, Vec b) {
  Vec u = vec::add(x, b);
  Vec w = vec::mul(u, vec::fma(vec::mul(u, u), vec::splat(kB), vec::splat(kA)));
  w = vec::min(vec::splat(kMaxExponent), vec::max(vec::splat(kMinExponent), w));
  Vec gelu = vec::div(u, vec::add(vec::splat(1.0f), pow2(w)));
  return vec::max(vec::splat(0.0f), gelu);
}

// Rows [begin, end) of y = Relu(GELU_tanh(x + b)).
void computeRows(const float *x, const float *b, float *y, int begin, int end) {
  using vec::kLanes;
  for (int row = begin; row < end; ++row) {
    const float *xRow = x + size_t(row) * kCols;
    float *yRow = y + size_t(row) * kCols;
    for (int col = 0; col < kCols; col += kLanes)
      vec::store(yRow + col,
                 geluBiasRelu(vec::load(xRow + col), vec::load(b + col)));
  }
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

// Spins until `ready()`; yields the core now and then, so that on a busy
// machine a waiting thread does not keep the one it waits for off the CPU.
template <typename Ready> void spinUntil(Ready ready) {
  for (unsigned spins = 1; !ready(); ++spins) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause(); // frees the core's resources for the other hyperthread
#endif
    if (spins % 4096 == 0)
      std::this_thread::yield();
  }
}

// N threads started once; run() splits the rows among them (the caller
// computes the first share) and returns when all are done.
class RowPool {
public:
  RowPool(int threads, const float *x, const float *b, float *y)
      : threads_(threads), x_(x), b_(b), y_(y) {
    for (int t = 1; t < threads_; ++t)
      workers_.emplace_back([this, t] { work(t); });
  }

  ~RowPool() {
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    for (std::thread &worker : workers_)
      worker.join();
  }

  void run() {
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    computeShare(0);
    spinUntil(
        [&] { return done_.load(std::memory_order_acquire) == threads_ - 1; });
  }

private:
  void computeShare(int t) {
    computeRows(x_, b_, y_, kRows * t / threads_, kRows * (t + 1) / threads_);
  }

  void work(int t) {
    unsigned seen = 0;
    for (;;) {
      spinUntil(
          [&] { return generation_.load(std::memory_order_acquire) != seen; });
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed))
        return;
      computeShare(t);
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  const int threads_;
  const float *x_, *b_;
  float *y_;
  std::vector<std::thread> workers_;
  std::atomic<unsigned> generation_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
};

//===----------------------------------------------------------------------===//
// Reference, inputs, main
//===----------------------------------------------------------------------===//

// The model's ops as written, in double precision with libm's tanh.
double reference(float x, float b) {
  double u = double(x) + double(b);
  double gelu =
      0.5 * u * (1.0 + std::tanh(kSqrt2OverPi * (u + 0.044715 * u * u * u)));
  return std::max(gelu, 0.0);
}

struct AlignedFloats {
  explicit AlignedFloats(size_t count)
      : data(static_cast<float *>(
            std::aligned_alloc(64, count * sizeof(float)))) {
    if (!data) {
      std::fprintf(stderr, "out of memory\n");
      std::exit(1);
    }
  }
  ~AlignedFloats() { std::free(data); }
  AlignedFloats(const AlignedFloats &) = delete;
  AlignedFloats &operator=(const AlignedFloats &) = delete;
  float *data;
};

int intArgument(int argc, char **argv, const char *name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0)
      return std::max(1, std::atoi(argv[i + 1]));
  return fallback;
}

} // namespace

int main(int argc, char **argv) {
  int threads = intArgument(argc, argv, "--threads", 1);
  int repeats = intArgument(argc, argv, "--repeats", 200);
  int warmup = intArgument(argc, argv, "--warmup", 20);

  // The benchmark's input distributions (bench/measure.py draws x from a
  // standard normal, bench/models.py the bias from N(0, 0.02)), fixed seed.
  AlignedFloats x(size_t(kRows) * kCols), b(kCols), y(size_t(kRows) * kCols);
  std::mt19937 rng(0);
  std::normal_distribution<float> unit(0.0f, 1.0f), small(0.0f, 0.02f);
  for (size_t i = 0; i < size_t(kRows) * kCols; ++i)
    x.data[i] = unit(rng);
  for (int i = 0; i < kCols; ++i)
    b.data[i] = small(rng);
  // The first pass would otherwise also fault in y's pages.
  std::memset(y.data, 0, size_t(kRows) * kCols * sizeof(float));

  std::vector<double> ms;
  {
    RowPool pool(threads, x.data, b.data, y.data);
    for (int i = 0; i < warmup; ++i)
      pool.run();
    for (int i = 0; i < repeats; ++i) {
      auto start = std::chrono::steady_clock::now();
      pool.run();
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
  } // Stops the workers before the (slow, single-threaded) reference.

  // A NaN anywhere makes the error infinite (std::max would drop it).
  double maxError = 0.0;
  for (int row = 0; row < kRows; ++row)
    for (int col = 0; col < kCols; ++col) {
      size_t i = size_t(row) * kCols + col;
      double error =
          std::fabs(double(y.data[i]) - reference(x.data[i], b.data[col]));
      maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
    }
  // JSON has no infinity; Python's json module reads this spelling of it.
  char errorText[32];
  if (std::isinf(maxError))
    std::snprintf(errorText, sizeof errorText, "Infinity");
  else
    std::snprintf(errorText, sizeof errorText, "%.3g", maxError);

  std::sort(ms.begin(), ms.end());
  double median = ms.size() % 2
                      ? ms[ms.size() / 2]
                      : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  std::printf(
      "{\"threads\": %d, \"isa\": \"%s\", \"rows\": %d, \"cols\": %d, "
      "\"warmup\": %d, \"repeats\": %d, \"ms_median\": %.6g, \"ms_min\": %.6g, "
      "\"ms_max\": %.6g, \"max_abs_error_vs_reference\": %s}\n",
      threads, vec::kIsaName, kRows, kCols, warmup, repeats, median, ms.front(),
      ms.back(), errorText);
  return 0;
}
