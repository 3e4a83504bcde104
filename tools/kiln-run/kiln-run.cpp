//===- kiln-run.cpp - run a compiled kiln model ---------------------------===//
//
// kiln-run MODEL.so [--input NAME=FILE]... [--inputs-dir DIR] [--random]
//          [--output-dir DIR] [--compare FILE,...|DIR] [--rtol R] [--atol A]
//          [--bench N] [--profile] [--threads T] [--runs N]
//
// Inputs come from .npy or ONNX TensorProto (.pb) files, from a directory of
// input_N.pb files (ONNX test data), or are random. Uses only the kiln
// runtime (kiln/runtime.h). With --runs N the model runs N times on one
// context, the outputs filled with 0xFF bytes (NaN) before each run, and
// the last run's outputs are the ones written and compared: a kernel that
// leaves part of an output unwritten, or reads what an earlier run left in
// the arena, shows.
//
//===----------------------------------------------------------------------===//

#include "TensorFiles.h"

#include "kiln/runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

using kiln::run::HostTensor;

namespace {

struct Options {
  std::string model;
  std::map<std::string, std::string> inputFiles;
  std::string inputsDir, outputDir;
  std::vector<std::string> compare;
  bool random = false;
  /// Unset: the defaults of each output's dtype (compareTolerance).
  std::optional<double> rtol, atol;
  int bench = 0, threads = 1, runs = 1;
  bool profile = false;
};

int usage(const char *message) {
  std::fprintf(stderr,
               "error: %s\nusage: kiln-run MODEL.so [--input NAME=FILE]... "
               "[--inputs-dir DIR] [--random] [--output-dir DIR] [--compare "
               "FILE,...|DIR] [--rtol R] [--atol A] [--bench N] "
               "[--profile] [--threads T] [--runs N]\n",
               message);
  return 2;
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool parseOptions(int argc, char **argv, Options &options, std::string &why) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      std::string prefix = std::string(flag) + "=";
      if (arg.rfind(prefix, 0) == 0)
        return argv[i] + prefix.size();
      if (arg == flag && i + 1 < argc)
        return argv[++i];
      return nullptr;
    };
    if (const char *v = value("--input")) {
      std::string entry = v;
      size_t eq = entry.find('=');
      if (eq == std::string::npos) {
        why = "--input expects NAME=FILE, got '" + entry + "'";
        return false;
      }
      options.inputFiles[entry.substr(0, eq)] = entry.substr(eq + 1);
    } else if (const char *v = value("--inputs-dir")) {
      options.inputsDir = v;
    } else if (const char *v = value("--output-dir")) {
      options.outputDir = v;
    } else if (const char *v = value("--compare")) {
      std::string list = v;
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        options.compare.push_back(list.substr(start, comma - start));
        start = comma == std::string::npos ? list.size() + 1 : comma + 1;
      }
    } else if (const char *v = value("--rtol")) {
      options.rtol = std::atof(v);
    } else if (const char *v = value("--atol")) {
      options.atol = std::atof(v);
    } else if (const char *v = value("--bench")) {
      options.bench = std::atoi(v);
    } else if (const char *v = value("--runs")) {
      options.runs = std::atoi(v);
      if (options.runs < 1) {
        why = std::string("--runs expects a positive count, got '") + v + "'";
        return false;
      }
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (const char *v = value("--threads")) {
      char *end = nullptr;
      long threads = std::strtol(v, &end, 10);
      if (end == v || *end || threads < 1) {
        why =
            std::string("--threads expects a positive count, got '") + v + "'";
        return false;
      }
      options.threads = int(threads);
    } else if (arg == "--random") {
      options.random = true;
    } else if (arg.rfind("--", 0) == 0) {
      why = "unknown option '" + arg + "'";
      return false;
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      why = "more than one model given";
      return false;
    }
  }
  if (options.model.empty())
    why = "no model given";
  return !options.model.empty();
}

HostTensor allocate(const kiln_tensor_info &info) {
  HostTensor t;
  t.dtype = info.dtype;
  t.dims.assign(info.dims, info.dims + info.rank);
  t.bytes.resize(kiln_dtype_size(info.dtype) * t.numElements());
  return t;
}

/// An IEEE half (binary16) as a float.
float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN
    exponent = 0xff;
  else if (exponent != 0)
    exponent += 127 - 15;
  else if (mantissa != 0) { // subnormal: normalize
    exponent = 127 - 15 + 1;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x3ff;
  }
  uint32_t bits = sign | exponent << 23 | mantissa << 13;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Element `i` of a tensor as a double (for comparisons and printing).
double element(const HostTensor &t, int64_t i) {
  const uint8_t *p = t.bytes.data() + i * kiln_dtype_size(t.dtype);
  auto load = [p](auto value) {
    std::memcpy(&value, p, sizeof value);
    return value;
  };
  switch (t.dtype) {
  case KILN_DTYPE_F32:
    return load(float());
  case KILN_DTYPE_F64:
    return load(double());
  case KILN_DTYPE_F16:
    return halfToFloat(load(uint16_t()));
  case KILN_DTYPE_BF16: {
    uint32_t bits = uint32_t(load(uint16_t())) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case KILN_DTYPE_I8:
    return load(int8_t());
  case KILN_DTYPE_U8:
  case KILN_DTYPE_BOOL:
    return load(uint8_t());
  case KILN_DTYPE_I16:
    return load(int16_t());
  case KILN_DTYPE_U16:
    return load(uint16_t());
  case KILN_DTYPE_I32:
    return load(int32_t());
  case KILN_DTYPE_U32:
    return load(uint32_t());
  case KILN_DTYPE_I64:
    return static_cast<double>(load(int64_t()));
  case KILN_DTYPE_U64:
    return static_cast<double>(load(uint64_t()));
  default:
    return NAN;
  }
}

void randomize(HostTensor &t, std::mt19937 &rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (t.dtype == KILN_DTYPE_F32) {
      float v = uniform(rng);
      std::memcpy(t.bytes.data() + 4 * i, &v, 4);
    } else if (t.dtype == KILN_DTYPE_F64) {
      double v = uniform(rng);
      std::memcpy(t.bytes.data() + 8 * i, &v, 8);
    } else {
      t.bytes[i * kiln_dtype_size(t.dtype)] = rng() % 2;
    }
  }
}

bool loadInputs(const Options &options, const kiln_model *model,
                std::vector<HostTensor> &inputs) {
  std::mt19937 rng(0);
  for (int32_t i = 0; i < kiln_model_num_inputs(model); ++i) {
    kiln_tensor_info info;
    kiln_model_input_info(model, i, &info);
    auto file = options.inputFiles.find(info.name);
    std::string path;
    if (file != options.inputFiles.end())
      path = file->second;
    else if (!options.inputsDir.empty())
      path = options.inputsDir + "/input_" + std::to_string(i) + ".pb";
    if (path.empty()) {
      if (!options.random) {
        std::fprintf(stderr,
                     "error: no data for input %d ('%s'): use --input %s=FILE, "
                     "--inputs-dir or --random\n",
                     i, info.name, info.name);
        return false;
      }
      inputs.push_back(allocate(info));
      randomize(inputs.back(), rng);
      continue;
    }
    HostTensor t;
    std::string error;
    if (!kiln::run::readTensorFile(path, t, error)) {
      std::fprintf(stderr, "error: input '%s': %s\n", info.name, error.c_str());
      return false;
    }
    // ONNX test data stores bfloat16 tensors as uint16 (numpy has no bf16).
    if (t.dtype == KILN_DTYPE_U16 && info.dtype == KILN_DTYPE_BF16)
      t.dtype = KILN_DTYPE_BF16;
    inputs.push_back(std::move(t));
  }
  return true;
}

/// Compares outputs with expected files; prints the worst element.
/// --rtol/--atol, or defaults from the dtype's precision: f32 and f64 1e-4
/// relative and 1e-5 absolute; f16 about 2 ulps (2e-3, 1e-3) and bf16 about
/// 2 ulps (1.6e-2, 1e-2), since a reference computed at higher precision and
/// kiln's result may round each intermediate differently; integers and bool
/// exactly.
std::pair<double, double> compareTolerance(const Options &options,
                                           int32_t dtype) {
  double rtol = 1e-4, atol = 1e-5;
  switch (dtype) {
  case KILN_DTYPE_F32:
  case KILN_DTYPE_F64:
    break;
  case KILN_DTYPE_F16:
    rtol = 2e-3, atol = 1e-3;
    break;
  case KILN_DTYPE_BF16:
    rtol = 1.6e-2, atol = 1e-2;
    break;
  default:
    rtol = 0, atol = 0;
    break;
  }
  return {options.rtol.value_or(rtol), options.atol.value_or(atol)};
}

bool compareOutputs(const Options &options, const kiln_model *model,
                    const std::vector<HostTensor> &outputs) {
  bool ok = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string path;
    if (options.compare.size() == 1 && isDirectory(options.compare[0]))
      path = options.compare[0] + "/output_" + std::to_string(i) + ".pb";
    else if (i < options.compare.size())
      path = options.compare[i];
    else
      break;
    kiln_tensor_info info;
    kiln_model_output_info(model, static_cast<int32_t>(i), &info);
    HostTensor expected;
    std::string error;
    if (!kiln::run::readTensorFile(path, expected, error)) {
      std::fprintf(stderr, "error: expected output '%s': %s\n", info.name,
                   error.c_str());
      return false;
    }
    const HostTensor &actual = outputs[i];
    // ONNX test data stores bfloat16 as uint16 (numpy has no bf16).
    if (expected.dtype == KILN_DTYPE_U16 && actual.dtype == KILN_DTYPE_BF16)
      expected.dtype = KILN_DTYPE_BF16;
    if (expected.dtype != actual.dtype || expected.dims != actual.dims) {
      auto describe = [](const HostTensor &t) {
        std::string text = std::string(kiln_dtype_name(t.dtype)) + "[";
        for (size_t d = 0; d < t.dims.size(); ++d)
          text += (d ? "x" : "") + std::to_string(t.dims[d]);
        return text + "]";
      };
      std::fprintf(stderr, "MISMATCH output '%s': %s, expected %s\n", info.name,
                   describe(actual).c_str(), describe(expected).c_str());
      ok = false;
      continue;
    }
    auto [rtol, atol] = compareTolerance(options, actual.dtype);
    int64_t worst = -1;
    double worstExcess = 0;
    for (int64_t k = 0; k < actual.numElements(); ++k) {
      double a = element(actual, k), e = element(expected, k);
      if (a == e || (std::isnan(a) && std::isnan(e))) // also equal infinities
        continue;
      double excess = std::fabs(a - e) - (atol + rtol * std::fabs(e));
      if (std::isnan(excess) || excess > worstExcess) {
        worstExcess = std::isnan(excess) ? INFINITY : excess;
        worst = k;
      }
    }
    if (worst >= 0) {
      std::fprintf(
          stderr,
          "MISMATCH output '%s' at flat index %lld: got %.9g, expected "
          "%.9g (rtol %g, atol %g)\n",
          info.name, static_cast<long long>(worst), element(actual, worst),
          element(expected, worst), rtol, atol);
      ok = false;
    } else {
      std::printf("output '%s' matches (%lld elements)\n", info.name,
                  static_cast<long long>(actual.numElements()));
    }
  }
  return ok;
}

/// Says which threads the compiler's predictions assume, and when the run
/// uses another count, how to compile the model for its roofline (the
/// percentages would otherwise compare 2 threads' times with 1 thread's
/// peak).
void describeProfileRoofline(const kiln_model_profile *profile, int threads) {
  int predicted = profile->roofline_threads;
  if (predicted <= 0) // compiled before the count was recorded
    return;
  std::printf("roofline predictions for %d thread%s (kiln-compile "
              "--roofline-threads)\n",
              predicted, predicted == 1 ? "" : "s");
  if (threads != predicted)
    std::printf("note: this run uses %d thread%s: compile with "
                "--roofline-threads=%d to compare it with its roofline\n",
                threads, threads == 1 ? "" : "s", threads);
}

/// --profile: runs the model `runs` times after a warm-up on `threads`
/// threads and prints each kernel's measured time against its roofline
/// prediction, and the time spent outside kernels.
int profileKernels(const kiln_model *model,
                   const std::function<kiln_status()> &runOnce, int runs,
                   int threads) {
  const kiln_model_profile *profile = kiln_model_get_profile_data(model);
  if (!profile) {
    std::fprintf(stderr, "error: the model has no kernel timers: compile it "
                         "with kiln-compile --profile\n");
    return 1;
  }
  for (int i = 0; i < 3; ++i)
    runOnce();
  kiln_model_reset_profile(model);
  describeProfileRoofline(profile, threads);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i)
    runOnce();
  double totalUs = std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - start)
                       .count() /
                   runs;
  std::printf("%4s  %-11s %10s %9s %9s %11s %10s  %s\n", "#", "kind", "us/run",
              "GFLOP/s", "GB/s", "roofline %", "pred. us", "ops");
  // A kernel never called had its work fused into the nearest called one
  // before it (a matmul storing through the transpose after it); the
  // compiler counted its FLOPs, bytes and prediction there.
  int32_t lastCalled = 0, aboveRoofline = 0;
  double kernelUs = 0;
  for (int32_t k = 0; k < profile->num_kernels; ++k) {
    const kiln_kernel_info &info = profile->kernels[k];
    if (k > 0 && !profile->calls[k]) {
      std::printf("%4d  %-11s %10s %9s %9s %11s %10s  %s (fused into #%d)\n", k,
                  info.kind, "-", "-", "-", "-", "-", info.ops, lastCalled);
      continue;
    }
    lastCalled = k;
    double us = profile->nanoseconds[k] / 1e3 / runs;
    double seconds = us / 1e6;
    kernelUs += us;
    aboveRoofline += seconds > 0 && info.predicted_seconds > seconds;
    std::printf("%4d  %-11s %10.2f %9.2f %9.2f %10.1f%% %10.2f  %s\n", k,
                info.kind, us, seconds > 0 ? info.flops / seconds / 1e9 : 0,
                seconds > 0 ? info.bytes / seconds / 1e9 : 0,
                seconds > 0 ? 100 * info.predicted_seconds / seconds : 0,
                info.predicted_seconds * 1e6, info.ops);
  }
  std::printf("per run over %d runs: %.2f us total, %.2f us in kernels, "
              "%.2f us outside kernels (overhead)\n",
              runs, totalUs, kernelUs, std::max(totalUs - kernelUs, 0.0));
  // Lanes (kiln-compile --split-batch-lanes) run their kernels at once, one
  // lane per thread: each kernel's time is its own lane's.
  if (threads > 1 && kernelUs > totalUs)
    std::printf("note: the kernels' times add up to more than the run's: "
                "the lanes of a batch's image-by-image layers ran at once, "
                "each kernel timed on its lane's thread\n");
  // Faster than the roofline: it underrates this machine (an estimate from
  // the nominal clock, or a machine file from another one).
  if (aboveRoofline && threads == profile->roofline_threads)
    std::printf("note: %d kernel%s ran faster than the roofline predicts: "
                "measure this machine's peaks with bench/probe and compile "
                "with --machine=FILE\n",
                aboveRoofline, aboveRoofline == 1 ? "" : "s");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string why;
  if (!parseOptions(argc, argv, options, why))
    return usage(why.c_str());

  kiln_model *model = nullptr;
  if (kiln_model_load(options.model.c_str(), &model) != KILN_OK) {
    std::fprintf(stderr, "error: %s\n", kiln_last_error());
    return 1;
  }
  std::printf("%s\n", kiln_model_signature_json(model));
  std::vector<HostTensor> inputs, outputs;
  if (!loadInputs(options, model, inputs)) {
    kiln_model_unload(model);
    return 1;
  }
  std::vector<kiln_tensor> inputViews, outputViews;
  for (HostTensor &t : inputs)
    inputViews.push_back({t.dtype, static_cast<int32_t>(t.dims.size()),
                          t.dims.data(), t.bytes.data()});
  for (int32_t i = 0; i < kiln_model_num_outputs(model); ++i) {
    kiln_tensor_info info;
    kiln_model_output_info(model, i, &info);
    outputs.push_back(allocate(info));
  }
  for (HostTensor &t : outputs)
    outputViews.push_back({t.dtype, static_cast<int32_t>(t.dims.size()),
                           t.dims.data(), t.bytes.data()});

  kiln_context *context = nullptr;
  int status = 0;
  auto runOnce = [&] {
    return kiln_run(context, inputViews.data(), inputViews.size(),
                    outputViews.data(), outputViews.size());
  };
  auto checkedRuns = [&] {
    for (int run = 0; run < options.runs; ++run) {
      if (options.runs > 1)
        for (HostTensor &t : outputs)
          std::fill(t.bytes.begin(), t.bytes.end(), uint8_t(0xFF));
      if (runOnce() != KILN_OK)
        return false;
    }
    return true;
  };
  if (kiln_context_create_with_threads(model, options.threads, &context) !=
          KILN_OK ||
      !checkedRuns()) {
    std::fprintf(stderr, "error: %s\n", kiln_last_error());
    status = 1;
  }
  if (status == 0 && !options.outputDir.empty())
    for (size_t i = 0; i < outputs.size(); ++i) {
      kiln_tensor_info info;
      kiln_model_output_info(model, static_cast<int32_t>(i), &info);
      std::string error;
      std::string path = options.outputDir + "/" + info.name + ".npy";
      if (!kiln::run::writeNpy(path, outputs[i], error)) {
        std::fprintf(stderr, "error: %s\n", error.c_str());
        status = 1;
      }
    }
  if (status == 0 && !options.compare.empty() &&
      !compareOutputs(options, model, outputs))
    status = 1;
  if (status == 0 && options.profile)
    status = profileKernels(model, runOnce, std::max(options.bench, 10),
                            options.threads);
  if (status == 0 && options.bench > 0) {
    for (int i = 0; i < std::min(options.bench, 10); ++i) // warm-up
      runOnce();
    std::vector<double> ms;
    for (int i = 0; i < options.bench; ++i) {
      auto start = std::chrono::steady_clock::now();
      runOnce();
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
    std::sort(ms.begin(), ms.end());
    double mean = 0;
    for (double t : ms)
      mean += t / ms.size();
    std::printf("latency over %d runs: min %.4f ms, median %.4f ms, p90 %.4f "
                "ms, p99 %.4f ms, mean %.4f ms\n",
                options.bench, ms.front(), ms[ms.size() / 2],
                ms[std::min(ms.size() - 1, ms.size() * 9 / 10)],
                ms[std::min(ms.size() - 1, ms.size() * 99 / 100)], mean);
  }
  kiln_context_destroy(context);
  kiln_model_unload(model);
  return status;
}
