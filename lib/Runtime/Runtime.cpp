//===- Runtime.cpp - the kiln C runtime -----------------------------------===//
//
// dlopen()s a model.so, checks that it is a kiln model of this ABI, and runs
// it on caller buffers after checking every tensor against the signature.
// Built without MLIR, LLVM or protobuf.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "CudaDevice.h"
#include "HostCpu.h"
#include "HugePages.h"
#include "ThreadPool.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

thread_local std::string lastError;

kiln_status fail(kiln_status status, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  lastError = buffer;
  return status;
}

using GetInfoFn = const kiln_model_info *(*)();
using RunFn = kiln::runtime::ModelRunFn;
using GetCudaImageFn = const kiln_cuda_image *(*)();

std::string shapeString(int32_t rank, const int64_t *dims) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? "x" : "") + std::to_string(dims[i]);
  return text + "]";
}

} // namespace

using GetProfileFn = const kiln_model_profile *(*)();

struct kiln_model {
  void *library;
  const kiln_model_info *info;
  RunFn run;
  const kiln_model_profile *profile;
  const kiln_cuda_image *cuda; // CUDA models only
};

struct kiln_context {
  const kiln_model *model;
  void *arena;
  std::vector<void *> inputs, outputs;
  std::unique_ptr<kiln::runtime::ThreadPool> pool;
  kiln_parallel_runtime parallel;
  std::unique_ptr<kiln::runtime::CudaContext> cuda;
};

extern "C" {

const char *kiln_last_error(void) { return lastError.c_str(); }

const char *kiln_dtype_name(int32_t dtype) {
  static const char *const names[] = {"?",   "f32", "f16", "bf16", "f64",
                                      "i8",  "u8",  "i16", "u16",  "i32",
                                      "u32", "i64", "u64", "bool"};
  return dtype >= 1 && dtype <= KILN_DTYPE_BOOL ? names[dtype] : names[0];
}

size_t kiln_dtype_size(int32_t dtype) {
  static const size_t sizes[] = {0, 4, 2, 2, 8, 1, 1, 2, 2, 4, 4, 8, 8, 1};
  return dtype >= 1 && dtype <= KILN_DTYPE_BOOL ? sizes[dtype] : 0;
}

kiln_status kiln_model_load(const char *path, kiln_model **model) {
  if (!path || !model)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_model_load: path and model must not be null");
  *model = nullptr;
  // A bare file name that exists is that file (dlopen would search the
  // library path instead, and miss it).
  std::string resolved = path;
  if (!std::strchr(path, '/') && access(path, F_OK) == 0)
    resolved = std::string("./") + path;
  void *library = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return fail(KILN_ERROR_LOAD, "cannot load '%s': %s", path, dlerror());
  auto getInfo =
      reinterpret_cast<GetInfoFn>(dlsym(library, "kiln_model_get_info"));
  auto run = reinterpret_cast<RunFn>(dlsym(library, "kiln_model_run"));
  if (!getInfo || !run) {
    dlclose(library);
    return fail(KILN_ERROR_NOT_A_MODEL,
                "'%s' is not a kiln model (no kiln_model_get_info / "
                "kiln_model_run)",
                path);
  }
  const kiln_model_info *info = getInfo();
  if (!info || info->abi_version != KILN_ABI_VERSION) {
    unsigned version = info ? info->abi_version : 0;
    dlclose(library);
    return fail(KILN_ERROR_ABI_MISMATCH,
                "'%s' was compiled for kiln ABI %u; this runtime implements "
                "ABI %d: recompile the model",
                path, version, KILN_ABI_VERSION);
  }
  // Before any of the model's code runs: compiled for extensions this CPU
  // lacks, its first kernel would die of an illegal instruction.
  if (std::string missing =
          kiln::runtime::missingCpuFeatures(info->cpu_features);
      !missing.empty()) {
    std::string cpu = info->cpu ? info->cpu : "?";
    dlclose(library);
    return fail(KILN_ERROR_CPU,
                "'%s' was compiled for %s and uses CPU extensions this CPU "
                "lacks (or its OS does not enable): %s; compile it for this "
                "machine (kiln-compile's default, --mcpu=native) or one it "
                "shares them with (e.g. --mcpu=x86-64-v3)",
                path, cpu.c_str(), missing.c_str());
  }
  if (info->streamed_weights_begin && kiln::runtime::hugePagesEnabled())
    kiln::runtime::moveToHugePages(info->streamed_weights_begin,
                                   info->streamed_weights_end);
  auto getProfile =
      reinterpret_cast<GetProfileFn>(dlsym(library, "kiln_model_get_profile"));
  const kiln_cuda_image *cuda = nullptr;
  if (info->target == KILN_TARGET_CUDA) {
    auto getImage = reinterpret_cast<GetCudaImageFn>(
        dlsym(library, "kiln_model_get_cuda_image"));
    cuda = getImage ? getImage() : nullptr;
    if (!cuda) {
      dlclose(library);
      return fail(KILN_ERROR_NOT_A_MODEL,
                  "'%s' is a CUDA model without kiln_model_get_cuda_image",
                  path);
    }
  } else if (info->target != KILN_TARGET_CPU) {
    unsigned target = info->target;
    dlclose(library);
    return fail(KILN_ERROR_ABI_MISMATCH,
                "'%s' was compiled for target %u, which this runtime does not "
                "know: update the runtime",
                path, target);
  }
  *model = new (std::nothrow)
      kiln_model{library, info, run, getProfile ? getProfile() : nullptr, cuda};
  if (!*model) {
    dlclose(library);
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  return KILN_OK;
}

void kiln_model_unload(kiln_model *model) {
  if (!model)
    return;
  dlclose(model->library);
  delete model;
}

const kiln_model_profile *kiln_model_get_profile_data(const kiln_model *model) {
  return model ? model->profile : nullptr;
}

void kiln_model_reset_profile(const kiln_model *model) {
  const kiln_model_profile *profile = kiln_model_get_profile_data(model);
  if (!profile)
    return;
  std::memset(profile->nanoseconds, 0,
              sizeof(uint64_t) * size_t(profile->num_kernels));
  std::memset(profile->calls, 0,
              sizeof(uint64_t) * size_t(profile->num_kernels));
}

int32_t kiln_model_target(const kiln_model *model) {
  return model ? model->info->target : KILN_TARGET_CPU;
}

int32_t kiln_model_num_inputs(const kiln_model *model) {
  return model ? model->info->num_inputs : 0;
}

int32_t kiln_model_num_outputs(const kiln_model *model) {
  return model ? model->info->num_outputs : 0;
}

static kiln_status tensorInfo(const kiln_model *model, int32_t index,
                              kiln_tensor_info *info, bool input) {
  if (!model || !info)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "model and info must not be null");
  int32_t count = input ? model->info->num_inputs : model->info->num_outputs;
  if (index < 0 || index >= count)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "%s index %d is out of range (the model has %d)",
                input ? "input" : "output", index, count);
  *info = (input ? model->info->inputs : model->info->outputs)[index];
  return KILN_OK;
}

kiln_status kiln_model_input_info(const kiln_model *model, int32_t index,
                                  kiln_tensor_info *info) {
  return tensorInfo(model, index, info, true);
}

kiln_status kiln_model_output_info(const kiln_model *model, int32_t index,
                                   kiln_tensor_info *info) {
  return tensorInfo(model, index, info, false);
}

const char *kiln_model_signature_json(const kiln_model *model) {
  return model ? model->info->signature_json : "";
}

kiln_status kiln_context_create(const kiln_model *model,
                                kiln_context **context) {
  return kiln_context_create_with_threads(model, 1, context);
}

kiln_status kiln_context_create_with_threads(const kiln_model *model,
                                             int32_t num_threads,
                                             kiln_context **context) {
  if (!model || !context)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "model and context must not be null");
  *context = nullptr;
  constexpr int32_t kMaxThreads = 1024;
  if (num_threads < 1 || num_threads > kMaxThreads)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "num_threads must be between 1 and %d, got %d", kMaxThreads,
                num_threads);
  auto *created =
      new (std::nothrow) kiln_context{model, nullptr, {}, {}, {}, {}, {}};
  if (!created)
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  created->inputs.resize(model->info->num_inputs);
  created->outputs.resize(model->info->num_outputs);
  if (model->cuda) {
    std::string error;
    kiln_status status = kiln::runtime::CudaContext::create(
        *model->info, *model->cuda, created->cuda, error);
    if (status != KILN_OK) {
      delete created;
      return fail(status, "%s", error.c_str());
    }
    *context = created;
    return KILN_OK;
  }
  try {
    created->pool = std::make_unique<kiln::runtime::ThreadPool>(num_threads);
  } catch (const std::exception &e) {
    delete created;
    return fail(KILN_ERROR_OUT_OF_MEMORY, "cannot start %d threads: %s",
                num_threads, e.what());
  }
  created->parallel = {created->pool.get(),
                       kiln::runtime::ThreadPool::parallelForThunk, num_threads,
                       0};
  if (uint64_t bytes = model->info->arena_bytes) {
    created->arena = kiln::runtime::allocateArena(bytes);
    if (!created->arena) {
      delete created;
      return fail(KILN_ERROR_OUT_OF_MEMORY,
                  "cannot allocate the %llu-byte arena",
                  static_cast<unsigned long long>(bytes));
    }
  }
  *context = created;
  return KILN_OK;
}

void kiln_context_destroy(kiln_context *context) {
  if (!context)
    return;
  kiln::runtime::freeArena(context->arena);
  delete context;
}

/// Checks `tensor` against `expected`, naming the tensor in the error.
static kiln_status checkTensor(const kiln_tensor &tensor,
                               const kiln_tensor_info &expected,
                               const char *kind, size_t index) {
  int64_t elements = 1;
  for (int32_t d = 0; d < expected.rank; ++d)
    elements *= expected.dims[d];
  if (!tensor.data && elements != 0)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "%s %zu ('%s') has no data", kind,
                index, expected.name);
  if (tensor.dtype != expected.dtype)
    return fail(KILN_ERROR_DTYPE, "%s %zu ('%s') is %s; the model expects %s",
                kind, index, expected.name, kiln_dtype_name(tensor.dtype),
                kiln_dtype_name(expected.dtype));
  bool sameShape =
      tensor.rank == expected.rank && (tensor.rank == 0 || tensor.dims) &&
      (tensor.rank == 0 || std::memcmp(tensor.dims, expected.dims,
                                       sizeof(int64_t) * tensor.rank) == 0);
  if (!sameShape) {
    std::string given = tensor.rank > 0 && !tensor.dims
                            ? "(null dims)"
                            : shapeString(tensor.rank, tensor.dims);
    return fail(KILN_ERROR_SHAPE,
                "%s %zu ('%s') has shape %s; the model "
                "expects %s",
                kind, index, expected.name, given.c_str(),
                shapeString(expected.rank, expected.dims).c_str());
  }
  return KILN_OK;
}

/// Checks a run's tensors against the signature and records their data
/// pointers in the context.
static kiln_status checkRun(kiln_context *context, const kiln_tensor *inputs,
                            size_t num_inputs, kiln_tensor *outputs,
                            size_t num_outputs) {
  if (!context)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_run: null context");
  const kiln_model_info *info = context->model->info;
  if (num_inputs != static_cast<size_t>(info->num_inputs) ||
      num_outputs != static_cast<size_t>(info->num_outputs))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_run: the model takes %d inputs and %d outputs, got %zu "
                "and %zu",
                info->num_inputs, info->num_outputs, num_inputs, num_outputs);
  if ((num_inputs && !inputs) || (num_outputs && !outputs))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_run: null inputs or outputs array");
  for (size_t i = 0; i < num_inputs; ++i) {
    if (kiln_status s = checkTensor(inputs[i], info->inputs[i], "input", i))
      return s;
    context->inputs[i] = inputs[i].data;
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (kiln_status s = checkTensor(outputs[i], info->outputs[i], "output", i))
      return s;
    context->outputs[i] = outputs[i].data;
  }
  // Generated code assumes outputs alias nothing (LLVM noalias).
  auto bytesOf = [](const kiln_tensor &t) {
    size_t bytes = kiln_dtype_size(t.dtype);
    for (int32_t d = 0; d < t.rank; ++d)
      bytes *= static_cast<size_t>(t.dims[d]);
    return bytes;
  };
  auto overlap = [&](const kiln_tensor &a, const kiln_tensor &b) {
    auto *pa = static_cast<const char *>(a.data);
    auto *pb = static_cast<const char *>(b.data);
    size_t na = bytesOf(a), nb = bytesOf(b);
    return na && nb && pa < pb + nb && pb < pa + na;
  };
  for (size_t o = 0; o < num_outputs; ++o) {
    for (size_t i = 0; i < num_inputs; ++i)
      if (overlap(outputs[o], inputs[i]))
        return fail(KILN_ERROR_INVALID_ARGUMENT,
                    "output %zu overlaps input %zu: outputs need their own "
                    "buffers",
                    o, i);
    for (size_t p = 0; p < o; ++p)
      if (overlap(outputs[o], outputs[p]))
        return fail(KILN_ERROR_INVALID_ARGUMENT,
                    "output %zu overlaps output %zu", o, p);
  }
  return KILN_OK;
}

kiln_status kiln_run(kiln_context *context, const kiln_tensor *inputs,
                     size_t num_inputs, kiln_tensor *outputs,
                     size_t num_outputs) {
  if (kiln_status s =
          checkRun(context, inputs, num_inputs, outputs, num_outputs))
    return s;
  if (context->cuda) {
    std::string error;
    kiln_status status =
        context->cuda->run(context->model->run, inputs, outputs, error);
    return status == KILN_OK ? KILN_OK : fail(status, "%s", error.c_str());
  }
  if (context->model->run(context->inputs.data(), context->outputs.data(),
                          context->arena, &context->parallel) != 0)
    return fail(KILN_ERROR_RUN, "the model reported a failure");
  return KILN_OK;
}

/// The checks of kiln_run_device and kiln_run_device_async (`call` names
/// the function in errors).
static kiln_status checkDeviceRun(const char *call, kiln_context *context,
                                  const kiln_tensor *inputs, size_t num_inputs,
                                  kiln_tensor *outputs, size_t num_outputs) {
  if (context && !context->cuda)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "%s: the model was compiled for the CPU; use kiln_run", call);
  if (kiln_status s =
          checkRun(context, inputs, num_inputs, outputs, num_outputs))
    return s;
  // The kernels are compiled for 16-byte aligned buffers (what cuMemAlloc
  // gives), so they can use 128-bit accesses.
  constexpr uintptr_t kDeviceAlignment = 16;
  for (size_t i = 0; i < num_inputs + num_outputs; ++i) {
    bool input = i < num_inputs;
    const kiln_tensor &t = input ? inputs[i] : outputs[i - num_inputs];
    if (reinterpret_cast<uintptr_t>(t.data) % kDeviceAlignment != 0)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "%s: %s %zu is not 16-byte aligned", call,
                  input ? "input" : "output", input ? i : i - num_inputs);
  }
  return KILN_OK;
}

kiln_status kiln_run_device(kiln_context *context, const kiln_tensor *inputs,
                            size_t num_inputs, kiln_tensor *outputs,
                            size_t num_outputs) {
  if (kiln_status s = checkDeviceRun("kiln_run_device", context, inputs,
                                     num_inputs, outputs, num_outputs))
    return s;
  std::string error;
  kiln_status status =
      context->cuda->runOnDevice(context->model->run, inputs, outputs, error);
  return status == KILN_OK ? KILN_OK : fail(status, "%s", error.c_str());
}

kiln_status kiln_run_device_async(kiln_context *context, void *stream,
                                  const kiln_tensor *inputs, size_t num_inputs,
                                  kiln_tensor *outputs, size_t num_outputs) {
  if (kiln_status s = checkDeviceRun("kiln_run_device_async", context, inputs,
                                     num_inputs, outputs, num_outputs))
    return s;
  std::string error;
  kiln_status status = context->cuda->runOnStream(context->model->run, stream,
                                                  inputs, outputs, error);
  return status == KILN_OK ? KILN_OK : fail(status, "%s", error.c_str());
}

} // extern "C"
