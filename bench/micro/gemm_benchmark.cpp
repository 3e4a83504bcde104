//===- gemm_benchmark.cpp - contraction microbenchmarks (Google Benchmark) ===//
//
// Times compiled contraction models (bench/models.py's gemm-MxKxN models and
// its convolution layers, built by bench/micro.sh with kiln-compile for
// AVX-512 and for AVX2) through the C++ runtime wrapper, on 1 and 2 threads,
// and reports GFLOP/s and the share of the measured FMA peak as counters.
// Timing only: correctness is checked by the benchmark runner and the
// matmul and window-op tests.
//
// Usage: kiln-gemm-benchmark --peak-gflops=117 MODEL.so[=FLOPS]...
//        [benchmark flags]
// FLOPS is the model's work per run; without it, a GEMM's 2*M*N*K.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

/// One compiled matmul: its buffers are allocated once, outside the timing.
struct GemmCase {
  std::string path;
  std::unique_ptr<kiln::Model> model;
  double flops = 0;
  std::vector<std::vector<float>> inputs, outputs;
};

double peakPerThread = 0;

void runGemm(benchmark::State &state, GemmCase *gemm) {
  int threads = int(state.range(0));
  kiln::Context context(*gemm->model, threads);
  std::vector<kiln::Tensor> in, out;
  for (size_t i = 0; i < gemm->inputs.size(); ++i)
    in.push_back(
        kiln::Tensor::of(gemm->model->input(i), gemm->inputs[i].data()));
  for (size_t i = 0; i < gemm->outputs.size(); ++i)
    out.push_back(
        kiln::Tensor::of(gemm->model->output(i), gemm->outputs[i].data()));
  for (auto _ : state)
    context.run(in, out);
  state.counters["GFLOP/s"] = benchmark::Counter(
      gemm->flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (peakPerThread > 0)
    state.counters["%peak"] =
        benchmark::Counter(100 * gemm->flops * 1e-9 / (peakPerThread * threads),
                           benchmark::Counter::kIsIterationInvariantRate);
}

/// 2*M*N*K from the model's first input [M, K] and output [M, N].
double flopsOf(const kiln::Model &model) {
  const kiln::TensorInfo &a = model.input(0), &c = model.output(0);
  return 2.0 * double(c.elements()) * double(a.dims.back());
}

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::unique_ptr<GemmCase>> cases;
  for (int i = 1; i < argc; ++i) {
    if (!std::strncmp(argv[i], "--peak-gflops=", 14)) {
      peakPerThread = std::atof(argv[i] + 14);
      continue;
    }
    auto gemm = std::make_unique<GemmCase>();
    gemm->path = argv[i];
    size_t equals = gemm->path.rfind('=');
    if (equals != std::string::npos) {
      gemm->flops = std::atof(gemm->path.c_str() + equals + 1);
      gemm->path.resize(equals);
    }
    try {
      gemm->model = std::make_unique<kiln::Model>(gemm->path);
    } catch (const kiln::Error &e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 1;
    }
    for (const kiln::TensorInfo &info : gemm->model->inputs())
      gemm->inputs.emplace_back(info.elements(), 0.5f);
    for (const kiln::TensorInfo &info : gemm->model->outputs())
      gemm->outputs.emplace_back(info.elements());
    if (gemm->flops <= 0)
      gemm->flops = flopsOf(*gemm->model);
    std::string name = gemm->path.substr(gemm->path.rfind('/') + 1);
    benchmark::RegisterBenchmark(name.c_str(), runGemm, gemm.get())
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->MinTime(0.3);
    cases.push_back(std::move(gemm));
  }
  if (cases.empty()) {
    std::fprintf(stderr, "usage: %s --peak-gflops=G MODEL.so...\n", argv[0]);
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
