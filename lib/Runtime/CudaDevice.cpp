//===- CudaDevice.cpp - running CUDA models through the driver API --------===//
//
// The driver API is declared here, not included: the runtime builds (and CPU
// models run) on machines without the CUDA toolkit. Only the few entry
// points kiln needs are resolved, by their versioned ABI names.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kiln::runtime {

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult kSuccess = 0;
constexpr CUresult kNoBinaryForGPU = 209;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kCaptureModeThreadLocal = 1;
constexpr unsigned kStreamNonBlocking = 1, kEventDisableTiming = 2;
constexpr int kStreamCaptureStatusNone = 0;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;

} // namespace

/// A library opened once per process with dlopen: get() returns it, or
/// null with `error` saying why Derived::load() could not open it.
template <typename Derived> struct DynamicLibrary {
  void *library = nullptr;

  static const Derived *get(std::string &error) {
    static std::once_flag once;
    static Derived instance;
    static std::string loadError;
    std::call_once(once, [] { loadError = instance.load(); });
    error = loadError;
    return loadError.empty() ? &instance : nullptr;
  }

protected:
  /// Opens the library named by $`variable`, else the first of `names`
  /// that loads; on failure, returns dlopen's messages.
  std::string open(const char *variable,
                   std::initializer_list<const char *> names) {
    std::vector<const char *> candidates(names);
    if (const char *env = std::getenv(variable); env && *env)
      candidates = {env};
    std::string tried;
    for (const char *name : candidates) {
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        return "";
      tried += std::string(tried.empty() ? "" : "; ") + dlerror();
    }
    return tried;
  }

  /// Looks `name` up; the first name not found is kept in `missing`.
  template <typename Fn> void resolve(Fn &fn, const char *name) {
    fn = reinterpret_cast<Fn>(dlsym(library, name));
    if (!fn && !missing)
      missing = name;
  }

  const char *missing = nullptr;
};

/// The driver entry points kiln uses, resolved once per process.
struct CudaDriver : DynamicLibrary<CudaDriver> {
  CUresult (*init)(unsigned);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(int *, int);
  CUresult (*deviceGetAttribute)(int *, int, int);
  CUresult (*primaryCtxRetain)(void **, int);
  CUresult (*primaryCtxRelease)(int);
  CUresult (*ctxPush)(void *);
  CUresult (*ctxPop)(void **);
  CUresult (*moduleLoadData)(void **, const void *);
  CUresult (*moduleLoadDataEx)(void **, const void *, unsigned, int *, void **);
  CUresult (*moduleUnload)(void *);
  CUresult (*moduleGetFunction)(void **, void *, const char *);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void *, size_t, void *);
  CUresult (*memcpyDtoHAsync)(void *, CUdeviceptr, size_t, void *);
  CUresult (*streamCreate)(void **, unsigned);
  CUresult (*streamDestroy)(void *);
  CUresult (*streamSynchronize)(void *);
  CUresult (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, void *, void **,
                           void **);
  CUresult (*streamBeginCapture)(void *, int);
  CUresult (*streamEndCapture)(void *, void **);
  CUresult (*graphInstantiate)(void **, void *, unsigned long long);
  CUresult (*graphLaunch)(void *, void *);
  CUresult (*graphDestroy)(void *);
  CUresult (*graphExecDestroy)(void *);
  CUresult (*streamIsCapturing)(void *, int *);
  CUresult (*eventCreate)(void **, unsigned);
  CUresult (*eventDestroy)(void *);
  CUresult (*eventRecord)(void *, void *);
  CUresult (*eventSynchronize)(void *);
  CUresult (*streamWaitEvent)(void *, void *, unsigned);

private:
  friend DynamicLibrary<CudaDriver>;
  /// Opens $KILN_CUDA_DRIVER or libcuda.so.1 and initializes it.
  std::string load() {
    const char *path = std::getenv("KILN_CUDA_DRIVER");
    if (!path || !*path)
      path = "libcuda.so.1";
    library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library)
      return std::string("this model runs on an NVIDIA GPU, but the CUDA "
                         "driver cannot be loaded (") +
             dlerror() + ")";
    resolve(init, "cuInit");
    resolve(getErrorName, "cuGetErrorName");
    resolve(getErrorString, "cuGetErrorString");
    resolve(deviceGetCount, "cuDeviceGetCount");
    resolve(deviceGet, "cuDeviceGet");
    resolve(deviceGetAttribute, "cuDeviceGetAttribute");
    resolve(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    resolve(ctxPush, "cuCtxPushCurrent_v2");
    resolve(ctxPop, "cuCtxPopCurrent_v2");
    resolve(moduleLoadData, "cuModuleLoadData");
    resolve(moduleLoadDataEx, "cuModuleLoadDataEx");
    resolve(moduleUnload, "cuModuleUnload");
    resolve(moduleGetFunction, "cuModuleGetFunction");
    resolve(memAlloc, "cuMemAlloc_v2");
    resolve(memFree, "cuMemFree_v2");
    resolve(memcpyHtoD, "cuMemcpyHtoD_v2");
    resolve(memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    resolve(memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    resolve(streamCreate, "cuStreamCreate");
    resolve(streamDestroy, "cuStreamDestroy_v2");
    resolve(streamSynchronize, "cuStreamSynchronize");
    resolve(launchKernel, "cuLaunchKernel");
    resolve(streamBeginCapture, "cuStreamBeginCapture_v2");
    resolve(streamEndCapture, "cuStreamEndCapture");
    resolve(graphInstantiate, "cuGraphInstantiateWithFlags");
    resolve(graphLaunch, "cuGraphLaunch");
    resolve(graphDestroy, "cuGraphDestroy");
    resolve(graphExecDestroy, "cuGraphExecDestroy");
    resolve(streamIsCapturing, "cuStreamIsCapturing");
    resolve(eventCreate, "cuEventCreate");
    resolve(eventDestroy, "cuEventDestroy_v2");
    resolve(eventRecord, "cuEventRecord");
    resolve(eventSynchronize, "cuEventSynchronize");
    resolve(streamWaitEvent, "cuStreamWaitEvent");
    if (missing)
      return std::string("the CUDA driver ") + path + " lacks " + missing +
             " (too old a driver?)";
    if (CUresult result = init(0); result != kSuccess)
      return "cuInit failed with CUDA error " + std::to_string(result) +
             ": no usable NVIDIA GPU or driver";
    return "";
  }
};

/// The cuBLAS entry points kiln uses, resolved once per process.
struct CublasLibrary : DynamicLibrary<CublasLibrary> {
  int (*create)(void **);
  int (*destroy)(void *);
  int (*setStream)(void *, void *);
  int (*setWorkspace)(void *, void *, size_t);
  int (*gemmStridedBatchedEx)(void *, int, int, int, int, int, const void *,
                              const void *, int, int, long long, const void *,
                              int, int, long long, const void *, void *, int,
                              int, long long, int, int, int);

private:
  friend DynamicLibrary<CublasLibrary>;
  /// Opens $KILN_CUBLAS, or libcublas.so.13 or .12.
  std::string load() {
    std::string tried =
        open("KILN_CUBLAS", {"libcublas.so.13", "libcublas.so.12"});
    if (!library)
      return "this model runs its matrix products with cuBLAS, which cannot "
             "be loaded (" +
             tried + ")";
    resolve(create, "cublasCreate_v2");
    resolve(destroy, "cublasDestroy_v2");
    resolve(setStream, "cublasSetStream_v2");
    resolve(setWorkspace, "cublasSetWorkspace_v2");
    resolve(gemmStridedBatchedEx, "cublasGemmStridedBatchedEx");
    if (missing)
      return std::string("the cuBLAS library lacks ") + missing +
             " (too old a version?)";
    return "";
  }
};

/// The cuBLASLt entry points kiln uses (GEMMs with fused epilogues).
struct CublasLtLibrary : DynamicLibrary<CublasLtLibrary> {
  int (*create)(void **);
  int (*destroy)(void *);
  int (*matmulDescCreate)(void **, int, int);
  int (*matmulDescDestroy)(void *);
  int (*matmulDescSetAttribute)(void *, int, const void *, size_t);
  int (*matrixLayoutCreate)(void **, int, uint64_t, uint64_t, int64_t);
  int (*matrixLayoutDestroy)(void *);
  int (*matrixLayoutSetAttribute)(void *, int, const void *, size_t);
  int (*preferenceCreate)(void **);
  int (*preferenceDestroy)(void *);
  int (*preferenceSetAttribute)(void *, int, const void *, size_t);
  int (*algoGetHeuristic)(void *, void *, void *, void *, void *, void *,
                          void *, int, CublasLtHeuristic *, int *);
  int (*matmul)(void *, void *, const void *, const void *, void *,
                const void *, void *, const void *, const void *, void *,
                void *, void *, const void *, void *, size_t, void *);

private:
  friend DynamicLibrary<CublasLtLibrary>;
  /// Opens $KILN_CUBLASLT, or libcublasLt.so.13 or .12.
  std::string load() {
    std::string tried =
        open("KILN_CUBLASLT", {"libcublasLt.so.13", "libcublasLt.so.12"});
    if (!library)
      return "this model fuses bias and ReLU into its matrix products with "
             "cuBLASLt, which cannot be loaded (" +
             tried + ")";
    resolve(create, "cublasLtCreate");
    resolve(destroy, "cublasLtDestroy");
    resolve(matmulDescCreate, "cublasLtMatmulDescCreate");
    resolve(matmulDescDestroy, "cublasLtMatmulDescDestroy");
    resolve(matmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
    resolve(matrixLayoutCreate, "cublasLtMatrixLayoutCreate");
    resolve(matrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
    resolve(matrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
    resolve(preferenceCreate, "cublasLtMatmulPreferenceCreate");
    resolve(preferenceDestroy, "cublasLtMatmulPreferenceDestroy");
    resolve(preferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
    resolve(algoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
    resolve(matmul, "cublasLtMatmul");
    if (missing)
      return std::string("the cuBLASLt library lacks ") + missing +
             " (too old a version?)";
    return "";
  }
};

namespace {

size_t tensorBytes(const kiln_tensor_info &info) {
  size_t bytes = kiln_dtype_size(info.dtype);
  for (int32_t d = 0; d < info.rank; ++d)
    bytes *= static_cast<size_t>(info.dims[d]);
  return bytes;
}

/// The data pointers of `count` tensors.
std::vector<void *> asData(const kiln_tensor *tensors, size_t count) {
  std::vector<void *> pointers;
  for (size_t i = 0; i < count; ++i)
    pointers.push_back(tensors[i].data);
  return pointers;
}

std::vector<void *> asPointers(const std::vector<CUdeviceptr> &buffers) {
  std::vector<void *> pointers;
  for (CUdeviceptr buffer : buffers)
    pointers.push_back(reinterpret_cast<void *>(buffer));
  return pointers;
}

/// Makes the context current on this thread for a scope.
class CurrentContext {
public:
  CurrentContext(const CudaDriver *driver, void *ctx) : driver(driver) {
    ok = driver->ctxPush(ctx) == kSuccess;
  }
  ~CurrentContext() {
    void *popped;
    if (ok)
      driver->ctxPop(&popped);
  }
  bool ok;

private:
  const CudaDriver *driver;
};

} // namespace

bool CudaContext::check(int result, const char *what) {
  if (result == kSuccess)
    return true;
  const char *name = "?", *message = "";
  driver->getErrorName(result, &name);
  driver->getErrorString(result, &message);
  lastError = std::string(what) + " failed: " + (name ? name : "?") + " (" +
              (message ? message : "") + ")";
  return false;
}

kiln_status CudaContext::create(const kiln_model_info &info,
                                const kiln_cuda_image &image,
                                std::unique_ptr<CudaContext> &context,
                                std::string &error) {
  const CudaDriver *driver = CudaDriver::get(error);
  if (!driver)
    return KILN_ERROR_DEVICE;
  std::unique_ptr<CudaContext> created(new CudaContext());
  created->driver = driver;
  int ordinal = 0;
  if (const char *env = std::getenv("KILN_CUDA_DEVICE"))
    ordinal = std::atoi(env);
  int count = 0;
  if (!created->check(driver->deviceGetCount(&count), "cuDeviceGetCount") ||
      ordinal < 0 || ordinal >= count) {
    error = created->lastError.empty()
                ? "no CUDA device " + std::to_string(ordinal) + " (" +
                      std::to_string(count) + " found)"
                : created->lastError;
    return KILN_ERROR_DEVICE;
  }
  if (!created->check(driver->deviceGet(&created->device, ordinal),
                      "cuDeviceGet") ||
      !created->check(driver->primaryCtxRetain(&created->ctx, created->device),
                      "cuDevicePrimaryCtxRetain")) {
    error = created->lastError;
    return KILN_ERROR_DEVICE;
  }
  CurrentContext current(driver, created->ctx);
  created->image = &image;
  kiln_status status = created->loadKernels(image);
  if (status == KILN_OK)
    status = created->allocate(info, image);
  if (status == KILN_OK && image.num_gemms > 0)
    status = created->startCublas(created->lastError);
  if (status != KILN_OK) {
    error = created->lastError;
    return status;
  }
  created->launcher = {created.get(), &CudaContext::launchThunk,
                       reinterpret_cast<void *>(created->weights),
                       &CudaContext::gemmThunk};
  context = std::move(created);
  return KILN_OK;
}

kiln_status CudaContext::loadKernels(const kiln_cuda_image &image) {
  if (image.num_kernels == 0)
    return KILN_OK;
  int major = 0, minor = 0;
  driver->deviceGetAttribute(&major, kComputeCapabilityMajor, device);
  driver->deviceGetAttribute(&minor, kComputeCapabilityMinor, device);
  std::string deviceArch =
      "sm_" + std::to_string(major) + std::to_string(minor);
  // The cubin runs only on its own architecture; the PTX is JIT-compiled
  // for this device (any newer one).
  CUresult result = kNoBinaryForGPU;
  if (image.cubin && deviceArch == image.arch)
    result = driver->moduleLoadData(&module, image.cubin);
  if (result != kSuccess) {
    char log[4096] = "";
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
    void *values[] = {log, reinterpret_cast<void *>(sizeof log)};
    result = driver->moduleLoadDataEx(&module, image.ptx, 2, options, values);
    if (!check(result, "loading the model's PTX (JIT)")) {
      lastError +=
          " for " + deviceArch + " (compiled for " + image.arch + "): " + log;
      return KILN_ERROR_DEVICE;
    }
  }
  functions.resize(image.num_kernels);
  for (int32_t k = 0; k < image.num_kernels; ++k)
    if (!check(driver->moduleGetFunction(&functions[k], module,
                                         image.kernel_names[k]),
               "cuModuleGetFunction")) {
      lastError += std::string(" for kernel ") + image.kernel_names[k];
      return KILN_ERROR_DEVICE;
    }
  return KILN_OK;
}

kiln_status CudaContext::allocate(const kiln_model_info &info,
                                  const kiln_cuda_image &image) {
  auto alloc = [&](CUdeviceptr &ptr, size_t bytes, const char *what) {
    if (bytes == 0 || driver->memAlloc(&ptr, bytes) == kSuccess)
      return true;
    lastError = "cannot allocate " + std::to_string(bytes) +
                " bytes of device memory for " + what;
    return false;
  };
  if (!alloc(arena, info.arena_bytes, "the arena") ||
      !alloc(weights, image.weights_bytes, "the weights"))
    return KILN_ERROR_OUT_OF_MEMORY;
  for (int32_t c = 0; c < image.num_constants; ++c) {
    const kiln_cuda_constant &constant = image.constants[c];
    if (!check(driver->memcpyHtoD(weights + constant.offset, constant.data,
                                  constant.bytes),
               "copying the weights to the device"))
      return KILN_ERROR_DEVICE;
  }
  for (int32_t i = 0; i < info.num_inputs; ++i) {
    inputBytes.push_back(tensorBytes(info.inputs[i]));
    inputs.push_back(0);
    if (!alloc(inputs.back(), inputBytes.back(), info.inputs[i].name))
      return KILN_ERROR_OUT_OF_MEMORY;
  }
  for (int32_t i = 0; i < info.num_outputs; ++i) {
    outputBytes.push_back(tensorBytes(info.outputs[i]));
    outputs.push_back(0);
    if (!alloc(outputs.back(), outputBytes.back(), info.outputs[i].name))
      return KILN_ERROR_OUT_OF_MEMORY;
  }
  // The own stream orders after the legacy stream's work (a caller's
  // inputs written there); captures go to a non-blocking stream, which no
  // other thread's legacy-stream work can disturb.
  if (!check(driver->streamCreate(&ownStream, 0), "cuStreamCreate") ||
      !check(driver->streamCreate(&captureStream, kStreamNonBlocking),
             "cuStreamCreate") ||
      !check(driver->eventCreate(&pendingDone, kEventDisableTiming),
             "cuEventCreate"))
    return KILN_ERROR_DEVICE;
  stream = ownStream;
  return KILN_OK;
}

namespace {

// cuBLASLt's enumerations (cublasLt.h).
constexpr int kLtDescTransA = 3, kLtDescTransB = 4, kLtDescEpilogue = 7,
              kLtDescBiasPointer = 8;
constexpr int kLtLayoutBatchCount = 5, kLtLayoutBatchStride = 6;
constexpr int kLtPrefMaxWorkspace = 1;
constexpr uint32_t kLtEpilogueRelu = 2, kLtEpilogueBias = 4;
constexpr int kOpN = 0, kOpT = 1;
constexpr int kCompute32F = 68, kCompute32FFastTF32 = 77;
constexpr size_t kWorkspaceBytes = 32 << 20;

/// cudaDataType of a kiln dtype (f32, f16, bf16).
int cudaDataType(int32_t dtype) {
  constexpr int kR32F = 0, kR16F = 2, kR16BF = 14;
  return dtype == KILN_DTYPE_F16    ? kR16F
         : dtype == KILN_DTYPE_BF16 ? kR16BF
                                    : kR32F;
}

} // namespace

kiln_status CudaContext::startCublas(std::string &error) {
  cublas = CublasLibrary::get(error);
  if (!cublas)
    return KILN_ERROR_DEVICE;
  if (cublas->create(&cublasHandle) != 0) {
    cublasHandle = nullptr;
    error = "cublasCreate failed";
    return KILN_ERROR_DEVICE;
  }
  if (driver->memAlloc(&cublasWorkspace, kWorkspaceBytes) != kSuccess) {
    error = "cannot allocate the cuBLAS workspace";
    return KILN_ERROR_OUT_OF_MEMORY;
  }
  if (cublas->setStream(cublasHandle, stream) != 0 ||
      cublas->setWorkspace(cublasHandle,
                           reinterpret_cast<void *>(cublasWorkspace),
                           kWorkspaceBytes) != 0) {
    error = "cannot set cuBLAS' stream and workspace";
    return KILN_ERROR_DEVICE;
  }
  for (int32_t i = 0; i < image->num_gemms; ++i)
    if (image->gemms[i].epilogue != KILN_GEMM_EPILOGUE_NONE)
      return startCublasLt(error);
  return KILN_OK;
}

kiln_status CudaContext::startCublasLt(std::string &error) {
  cublasLt = CublasLtLibrary::get(error);
  if (!cublasLt)
    return KILN_ERROR_DEVICE;
  if (cublasLt->create(&cublasLtHandle) != 0) {
    cublasLtHandle = nullptr;
    error = "cublasLtCreate failed";
    return KILN_ERROR_DEVICE;
  }
  epilogueGemms.resize(image->num_gemms);
  for (int32_t i = 0; i < image->num_gemms; ++i)
    if (image->gemms[i].epilogue != KILN_GEMM_EPILOGUE_NONE)
      if (kiln_status status =
              planEpilogueGemm(image->gemms[i], epilogueGemms[i], error);
          status != KILN_OK)
        return status;
  return KILN_OK;
}

/// The row-major C = A B is the column-major C^T = B^T A^T (as for cuBLAS):
/// cuBLASLt's A is kiln's B, its B kiln's A, its D (n x m) kiln's C; a
/// column bias of C is a row bias of D, which is what the epilogue adds.
kiln_status CudaContext::planEpilogueGemm(const kiln_cuda_gemm &g,
                                          CublasLtGemm &plan,
                                          std::string &error) {
  const CublasLtLibrary &lt = *cublasLt;
  auto layout = [&](void **desc, int32_t dtype, int64_t rows, int64_t cols,
                    int64_t ld, int64_t stride) {
    int32_t batch = int32_t(g.batch);
    return lt.matrixLayoutCreate(desc, cudaDataType(dtype), uint64_t(rows),
                                 uint64_t(cols), ld) == 0 &&
           lt.matrixLayoutSetAttribute(*desc, kLtLayoutBatchCount, &batch,
                                       sizeof batch) == 0 &&
           lt.matrixLayoutSetAttribute(*desc, kLtLayoutBatchStride, &stride,
                                       sizeof stride) == 0;
  };
  int32_t opA = g.trans_b ? kOpT : kOpN, opB = g.trans_a ? kOpT : kOpN;
  uint32_t epilogue =
      ((g.epilogue & KILN_GEMM_EPILOGUE_BIAS) ? kLtEpilogueBias : 0) |
      ((g.epilogue & KILN_GEMM_EPILOGUE_RELU) ? kLtEpilogueRelu : 0);
  constexpr int kScaleR32F = 0;
  bool ok = lt.matmulDescCreate(&plan.matmul,
                                g.tf32 ? kCompute32FFastTF32 : kCompute32F,
                                kScaleR32F) == 0 &&
            lt.matmulDescSetAttribute(plan.matmul, kLtDescTransA, &opA,
                                      sizeof opA) == 0 &&
            lt.matmulDescSetAttribute(plan.matmul, kLtDescTransB, &opB,
                                      sizeof opB) == 0 &&
            lt.matmulDescSetAttribute(plan.matmul, kLtDescEpilogue, &epilogue,
                                      sizeof epilogue) == 0 &&
            layout(&plan.a, g.in_dtype, g.trans_b ? g.k : g.n,
                   g.trans_b ? g.n : g.k, g.ldb, g.stride_b) &&
            layout(&plan.b, g.in_dtype, g.trans_a ? g.m : g.k,
                   g.trans_a ? g.k : g.m, g.lda, g.stride_a) &&
            layout(&plan.d, g.out_dtype, g.n, g.m, g.ldc, g.stride_c);
  void *preference = nullptr;
  uint64_t workspace = kWorkspaceBytes;
  int found = 0;
  ok = ok && lt.preferenceCreate(&preference) == 0 &&
       lt.preferenceSetAttribute(preference, kLtPrefMaxWorkspace, &workspace,
                                 sizeof workspace) == 0 &&
       lt.algoGetHeuristic(cublasLtHandle, plan.matmul, plan.a, plan.b, plan.d,
                           plan.d, preference, 1, &plan.heuristic,
                           &found) == 0 &&
       found > 0;
  if (preference)
    lt.preferenceDestroy(preference);
  if (!ok) {
    error = "cuBLASLt has no algorithm for a " + std::to_string(g.m) + "x" +
            std::to_string(g.n) + "x" + std::to_string(g.k) +
            " GEMM with a fused epilogue";
    return KILN_ERROR_DEVICE;
  }
  return KILN_OK;
}

int32_t CudaContext::gemmThunk(void *handle, int32_t index, const void *a,
                               const void *b, void *c, const void *bias) {
  auto *self = static_cast<CudaContext *>(handle);
  if (!self->launchError.empty())
    return 1;
  if (index < 0 || index >= self->image->num_gemms) {
    self->launchError = "the model called GEMM " + std::to_string(index) +
                        " of " + std::to_string(self->image->num_gemms);
    return 1;
  }
  const kiln_cuda_gemm &g = self->image->gemms[index];
  if (g.epilogue != KILN_GEMM_EPILOGUE_NONE)
    return self->runEpilogueGemm(index, a, b, c, bias);
  // cuBLAS is column-major: the row-major C = A B is the column-major
  // C^T = B^T A^T, so B comes first and m and n swap.
  constexpr int kDefaultAlgo = -1;
  float alpha = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
  int status = self->cublas->gemmStridedBatchedEx(
      self->cublasHandle, g.trans_b ? kOpT : kOpN, g.trans_a ? kOpT : kOpN,
      int(g.n), int(g.m), int(g.k), &alpha, b, cudaDataType(g.in_dtype),
      int(g.ldb), g.stride_b, a, cudaDataType(g.in_dtype), int(g.lda),
      g.stride_a, &beta, c, cudaDataType(g.out_dtype), int(g.ldc), g.stride_c,
      int(g.batch), g.tf32 ? kCompute32FFastTF32 : kCompute32F, kDefaultAlgo);
  if (status != 0) {
    self->launchError = "cublasGemmStridedBatchedEx failed with status " +
                        std::to_string(status) + " (GEMM " +
                        std::to_string(index) + ": " + std::to_string(g.m) +
                        "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
                        ", batch " + std::to_string(g.batch) + ")";
    return 1;
  }
  return 0;
}

int32_t CudaContext::runEpilogueGemm(int32_t index, const void *a,
                                     const void *b, void *c, const void *bias) {
  const CublasLtGemm &plan = epilogueGemms[index];
  float alpha = 1.0f, beta = 0.0f;
  void *workspace = reinterpret_cast<void *>(cublasWorkspace);
  int status = cublasLt->matmulDescSetAttribute(plan.matmul, kLtDescBiasPointer,
                                                &bias, sizeof bias);
  if (status == 0)
    status = cublasLt->matmul(cublasLtHandle, plan.matmul, &alpha, b, plan.a, a,
                              plan.b, &beta, c, plan.d, c, plan.d,
                              plan.heuristic.algo, workspace, kWorkspaceBytes,
                              stream);
  if (status != 0) {
    const kiln_cuda_gemm &g = image->gemms[index];
    launchError = "cublasLtMatmul failed with status " +
                  std::to_string(status) + " (GEMM " + std::to_string(index) +
                  " with a fused epilogue: " + std::to_string(g.m) + "x" +
                  std::to_string(g.n) + "x" + std::to_string(g.k) + ")";
    return 1;
  }
  return 0;
}

CudaContext::~CudaContext() {
  if (!driver || !ctx)
    return;
  {
    CurrentContext current(driver, ctx);
    if (runPending)
      driver->eventSynchronize(pendingDone);
    if (ownStream)
      driver->streamSynchronize(ownStream);
    for (CublasLtGemm &plan : epilogueGemms) {
      for (void *layout : {plan.a, plan.b, plan.d})
        if (layout)
          cublasLt->matrixLayoutDestroy(layout);
      if (plan.matmul)
        cublasLt->matmulDescDestroy(plan.matmul);
    }
    if (cublasLtHandle)
      cublasLt->destroy(cublasLtHandle);
    if (cublasHandle)
      cublas->destroy(cublasHandle);
    if (cublasWorkspace)
      driver->memFree(cublasWorkspace);
    destroyGraph(ownRun);
    destroyGraph(deviceRun);
    if (ownStream)
      driver->streamDestroy(ownStream);
    if (captureStream)
      driver->streamDestroy(captureStream);
    if (pendingDone)
      driver->eventDestroy(pendingDone);
    auto release = [&](CUdeviceptr ptr) {
      if (ptr)
        driver->memFree(ptr);
    };
    for (CUdeviceptr ptr : inputs)
      release(ptr);
    for (CUdeviceptr ptr : outputs)
      release(ptr);
    release(arena);
    release(weights);
    if (module)
      driver->moduleUnload(module);
  }
  driver->primaryCtxRelease(device);
}

int32_t CudaContext::launchThunk(void *handle, int32_t kernel, uint32_t gx,
                                 uint32_t gy, uint32_t gz, uint32_t bx,
                                 uint32_t by, uint32_t bz, void **params) {
  auto *self = static_cast<CudaContext *>(handle);
  if (!self->launchError.empty())
    return 1; // report the first failure only
  if (kernel < 0 || size_t(kernel) >= self->functions.size()) {
    self->launchError = "the model launched kernel " + std::to_string(kernel) +
                        " of " + std::to_string(self->functions.size());
    return 1;
  }
  if (!self->check(self->driver->launchKernel(self->functions[kernel], gx, gy,
                                              gz, bx, by, bz, 0, self->stream,
                                              params, nullptr),
                   "cuLaunchKernel")) {
    self->launchError =
        self->lastError + " (kernel " + std::to_string(kernel) + ")";
    return 1;
  }
  return 0;
}

kiln_status CudaContext::launchModel(ModelRunFn model, void *const *in,
                                     void *const *out) {
  launchError.clear();
  model(in, out, reinterpret_cast<void *>(arena), &launcher);
  if (!launchError.empty()) {
    lastError = launchError;
    return KILN_ERROR_DEVICE;
  }
  return KILN_OK;
}

/// Launches and cuBLAS go to `next` for a scope.
class CudaContext::UseStream {
public:
  UseStream(CudaContext &context, void *next)
      : context(context), previous(context.stream) {
    set(next);
  }
  ~UseStream() { set(previous); }

private:
  // cublasSetStream also resets the handle to cuBLAS' default workspace:
  // kiln's goes back on, as capture needs a workspace it allocated.
  void set(void *next) {
    context.stream = next;
    if (context.cublasHandle) {
      context.cublas->setStream(context.cublasHandle, next);
      context.cublas->setWorkspace(
          context.cublasHandle,
          reinterpret_cast<void *>(context.cublasWorkspace), kWorkspaceBytes);
    }
  }
  CudaContext &context;
  void *previous;
};

/// Records one inference as a CUDA graph, so a run is one graph launch
/// instead of one driver call per kernel.
kiln_status CudaContext::captureGraph(ModelRunFn model,
                                      std::vector<void *> inputs,
                                      std::vector<void *> outputs,
                                      CapturedRun &run) {
  destroyGraph(run);
  // Captured on its own stream; a graph launches on any.
  UseStream capture(*this, captureStream);
  const char *disabled = std::getenv("KILN_CUDA_GRAPH");
  if (graphFailed || (disabled && std::strcmp(disabled, "0") == 0)) {
    graphFailed = true;
    return KILN_OK;
  }
  if (driver->streamBeginCapture(stream, kCaptureModeThreadLocal) != kSuccess) {
    graphFailed = true;
    return KILN_OK;
  }
  kiln_status launched = launchModel(model, inputs.data(), outputs.data());
  CUresult ended = driver->streamEndCapture(stream, &run.graph);
  // A capture that failed (a launch refused under capture, the capture
  // invalidated) falls back to direct launches for good; those report a
  // launch that fails on its own.
  if (launched != KILN_OK || ended != kSuccess ||
      driver->graphInstantiate(&run.exec, run.graph, 0) != kSuccess) {
    graphFailed = true;
    launchError.clear();
    destroyGraph(run);
    return KILN_OK;
  }
  run.inputs = std::move(inputs);
  run.outputs = std::move(outputs);
  return KILN_OK;
}

void CudaContext::destroyGraph(CapturedRun &run) {
  if (run.exec)
    driver->graphExecDestroy(run.exec);
  if (run.graph)
    driver->graphDestroy(run.graph);
  run = CapturedRun();
}

kiln_status CudaContext::launch(ModelRunFn model, const CapturedRun &run,
                                const std::vector<void *> &inputs,
                                const std::vector<void *> &outputs) {
  if (run.exec && run.inputs == inputs && run.outputs == outputs)
    return check(driver->graphLaunch(run.exec, stream), "cuGraphLaunch")
               ? KILN_OK
               : KILN_ERROR_DEVICE;
  return launchModel(model, inputs.data(), outputs.data());
}

bool CudaContext::waitForPendingRun(void *next) {
  if (!runPending || pendingStream == next)
    return true;
  runPending = false;
  return check(driver->streamWaitEvent(next, pendingDone, 0),
               "ordering after the run on the caller's stream");
}

kiln_status CudaContext::run(ModelRunFn model, const kiln_tensor *in,
                             kiln_tensor *out, std::string &error) {
  // Host buffers are pageable: the copies are staged by the driver, and the
  // graph itself only ever sees the context's own device buffers.
  CurrentContext current(driver, ctx);
  kiln_status status =
      waitForPendingRun(ownStream) ? KILN_OK : KILN_ERROR_DEVICE;
  for (size_t i = 0; i < inputs.size() && status == KILN_OK; ++i)
    if (inputBytes[i] && !check(driver->memcpyHtoDAsync(inputs[i], in[i].data,
                                                        inputBytes[i], stream),
                                "copying an input to the device"))
      status = KILN_ERROR_DEVICE;
  std::vector<void *> ownIn = asPointers(inputs), ownOut = asPointers(outputs);
  if (status == KILN_OK && !ownRun.exec && !graphFailed)
    status = captureGraph(model, ownIn, ownOut, ownRun);
  if (status == KILN_OK)
    status = launch(model, ownRun, ownIn, ownOut);
  for (size_t i = 0; i < outputs.size() && status == KILN_OK; ++i)
    if (outputBytes[i] &&
        !check(driver->memcpyDtoHAsync(out[i].data, outputs[i], outputBytes[i],
                                       stream),
               "copying an output from the device"))
      status = KILN_ERROR_DEVICE;
  if (!check(driver->streamSynchronize(stream), "running the model") &&
      status == KILN_OK)
    status = KILN_ERROR_DEVICE;
  if (status != KILN_OK)
    error = lastError;
  return status;
}

kiln_status CudaContext::enqueueOnDevice(ModelRunFn model,
                                         const kiln_tensor *in,
                                         kiln_tensor *out) {
  std::vector<void *> devIn = asData(in, inputs.size()),
                      devOut = asData(out, outputs.size());
  // The second call in a row on the same buffers captures them.
  kiln_status status = KILN_OK;
  bool repeated = devIn == lastDeviceInputs && devOut == lastDeviceOutputs;
  if (repeated && !graphFailed &&
      (deviceRun.inputs != devIn || deviceRun.outputs != devOut))
    status = captureGraph(model, devIn, devOut, deviceRun);
  if (status == KILN_OK)
    status = launch(model, deviceRun, devIn, devOut);
  lastDeviceInputs = std::move(devIn);
  lastDeviceOutputs = std::move(devOut);
  return status;
}

kiln_status CudaContext::runOnDevice(ModelRunFn model, const kiln_tensor *in,
                                     kiln_tensor *out, std::string &error) {
  CurrentContext current(driver, ctx);
  kiln_status status = waitForPendingRun(ownStream)
                           ? enqueueOnDevice(model, in, out)
                           : KILN_ERROR_DEVICE;
  if (!check(driver->streamSynchronize(stream), "running the model") &&
      status == KILN_OK)
    status = KILN_ERROR_DEVICE;
  if (status != KILN_OK)
    error = lastError;
  return status;
}

kiln_status CudaContext::runOnStream(ModelRunFn model, void *callerStream,
                                     const kiln_tensor *in, kiln_tensor *out,
                                     std::string &error) {
  CurrentContext current(driver, ctx);
  // Under the caller's own capture (a PyTorch CUDA graph), kiln's launches
  // go into it directly: no capture of kiln's, no event to wait for later.
  int capture = kStreamCaptureStatusNone;
  if (!check(driver->streamIsCapturing(callerStream, &capture),
             "cuStreamIsCapturing") ||
      !waitForPendingRun(callerStream)) {
    error = lastError;
    return KILN_ERROR_DEVICE;
  }
  bool callerCapturing = capture != kStreamCaptureStatusNone;
  kiln_status status;
  {
    UseStream caller(*this, callerStream);
    status = callerCapturing
                 ? launchModel(model, asData(in, inputs.size()).data(),
                               asData(out, outputs.size()).data())
                 : enqueueOnDevice(model, in, out);
  }
  if (status == KILN_OK && !callerCapturing) {
    if (!check(driver->eventRecord(pendingDone, callerStream),
               "cuEventRecord")) {
      status = KILN_ERROR_DEVICE;
    } else {
      runPending = true;
      pendingStream = callerStream;
    }
  }
  if (status != KILN_OK)
    error = lastError;
  return status;
}

} // namespace kiln::runtime
