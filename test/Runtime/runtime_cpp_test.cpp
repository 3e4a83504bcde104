// The C++ wrapper (kiln/runtime.hpp) on a compiled model: signature, a run
// on several threads, errors as exceptions; then several contexts of one
// model running at the same time from different threads, each checked
// against a single-threaded reference run.
// Usage: runtime-cpp-test MODEL.so

#include "kiln/runtime.hpp"

#include <cmath>
#include <cstdio>
#include <thread>

namespace {

int failures = 0;

void expect(bool condition, const char *what) {
  if (!condition) {
    std::fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}

/// Runs `model` on inputs filled with a ramp that depends on `seed`.
std::vector<std::vector<float>> runOnce(const kiln::Model &model,
                                        kiln::Context &context, int seed) {
  std::vector<std::vector<float>> inputs, outputs;
  std::vector<kiln::Tensor> in, out;
  for (const kiln::TensorInfo &info : model.inputs()) {
    inputs.emplace_back(info.elements());
    for (size_t k = 0; k < inputs.back().size(); ++k)
      inputs.back()[k] = std::sin(0.01f * float(k) + float(seed));
    in.push_back(kiln::Tensor::of(info, inputs.back().data()));
  }
  for (const kiln::TensorInfo &info : model.outputs()) {
    outputs.emplace_back(info.elements());
    out.push_back(kiln::Tensor::of(info, outputs.back().data()));
  }
  context.run(in, out);
  return outputs;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  kiln::Model model(argv[1]);
  expect(model.inputs().size() == 2 && model.input(0).name == "X" &&
             model.input(0).dtype == KILN_DTYPE_F32,
         "signature");

  // Errors are exceptions with the runtime's status and message.
  try {
    kiln::Context bad(model, 0);
    expect(false, "0 threads accepted");
  } catch (const kiln::Error &e) {
    expect(e.status() == KILN_ERROR_INVALID_ARGUMENT, "0 threads status");
  }
  try {
    kiln::Context context(model);
    std::vector<float> x(1);
    context.run({kiln::Tensor(KILN_DTYPE_F32, {1}, x.data())}, {});
    expect(false, "wrong input accepted");
  } catch (const kiln::Error &e) {
    expect(std::string(e.what()).find("takes 2 inputs") != std::string::npos,
           "wrong input count message");
  }

  // References on one thread, per seed.
  kiln::Context reference(model);
  std::vector<std::vector<std::vector<float>>> expected;
  for (int seed = 0; seed < 4; ++seed)
    expected.push_back(runOnce(model, reference, seed));

  // Four contexts (two with their own pool of 2 threads) at once, many runs.
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int seed = 0; seed < 4; ++seed)
    threads.emplace_back([&, seed] {
      kiln::Context context(model, seed % 2 ? 2 : 1);
      for (int run = 0; run < 20; ++run)
        mismatches[seed] += runOnce(model, context, seed) != expected[seed];
    });
  for (std::thread &t : threads)
    t.join();
  for (int seed = 0; seed < 4; ++seed)
    expect(mismatches[seed] == 0, "concurrent contexts match the reference");

  if (failures == 0)
    std::printf("C++ runtime API and concurrent contexts: all checks passed\n");
  return failures ? 1 : 0;
}
