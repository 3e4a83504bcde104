//===- CudaDevice.h - running CUDA models through the driver API ----------===//
//
// A CUDA model's execution context: the driver (libcuda.so.1, opened with
// dlopen so CPU-only programs never need it), the loaded kernels, the device
// arena, weights and input/output buffers, one stream and the CUDA graph of
// one inference, captured on the first run and replayed after.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDADEVICE_H
#define KILN_RUNTIME_CUDADEVICE_H

#include "kiln/runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::runtime {

struct CudaDriver;
struct CublasLibrary;
struct CublasLtLibrary;

/// cublasLtMatmulHeuristicResult_t: the algorithm cuBLASLt picked for a
/// GEMM (opaque), the workspace it needs, its status.
struct CublasLtHeuristic {
  uint64_t algo[8];
  size_t workspaceBytes;
  int state;
  float waves;
  int reserved[4];
};

/// A GEMM with a fused epilogue, planned once per context: cuBLASLt's
/// descriptors of the product and of its three matrices, and its algorithm.
struct CublasLtGemm {
  void *matmul = nullptr, *a = nullptr, *b = nullptr, *d = nullptr;
  CublasLtHeuristic heuristic{};
};

/// What kiln_model_run is, seen from the runtime.
using ModelRunFn = int32_t (*)(void *const *, void *const *, void *,
                               const void *);

class CudaContext {
public:
  ~CudaContext();

  /// Loads the driver, takes the device, loads the image's kernels and
  /// allocates and fills the device memory. On failure, returns a status
  /// and sets `error`.
  static kiln_status create(const kiln_model_info &info,
                            const kiln_cuda_image &image,
                            std::unique_ptr<CudaContext> &context,
                            std::string &error);

  /// Copies the host inputs in, runs the model (the captured graph), copies
  /// the outputs back and waits.
  kiln_status run(ModelRunFn model, const kiln_tensor *inputs,
                  kiln_tensor *outputs, std::string &error);

  /// Runs the model on caller-owned device buffers. Launches go directly,
  /// except when a call passes the same buffers as the one before: that
  /// call captures a graph on them, and later calls with those buffers
  /// replay it (a serving loop reusing its buffers pays one graph launch
  /// instead of a driver call per kernel; callers alternating buffers
  /// never pay a capture).
  kiln_status runOnDevice(ModelRunFn model, const kiln_tensor *inputs,
                          kiln_tensor *outputs, std::string &error);

  /// As runOnDevice, but enqueued on the caller's `callerStream` (a CUstream
  /// of this context; null: the legacy default stream) without waiting. The
  /// next run on another stream is ordered after it on the GPU (the arena
  /// holds its intermediates); the context's end waits for it. Under the
  /// caller's stream capture, the kernels go into that capture directly.
  kiln_status runOnStream(ModelRunFn model, void *callerStream,
                          const kiln_tensor *inputs, kiln_tensor *outputs,
                          std::string &error);

private:
  CudaContext() = default;
  /// Checks a driver result; on failure records "what: NAME (message)".
  bool check(int result, const char *what);
  kiln_status allocate(const kiln_model_info &info,
                       const kiln_cuda_image &image);
  kiln_status loadKernels(const kiln_cuda_image &image);
  /// Calls the model with the launcher on the stream; launches go to the
  /// stream (or into a capture).
  kiln_status launchModel(ModelRunFn model, void *const *inputs,
                          void *const *outputs);
  /// One inference recorded as a CUDA graph on fixed input and output
  /// buffers.
  struct CapturedRun {
    void *graph = nullptr, *exec = nullptr;
    std::vector<void *> inputs, outputs;
  };
  /// Records the model on `inputs`/`outputs` into `run` (replacing what it
  /// held). A failed capture (an old driver) leaves `run` empty and sets
  /// graphFailed: runs then launch directly.
  kiln_status captureGraph(ModelRunFn model, std::vector<void *> inputs,
                           std::vector<void *> outputs, CapturedRun &run);
  void destroyGraph(CapturedRun &run);
  /// Runs the model on caller-owned buffers on the current stream,
  /// capturing a graph on buffers passed twice in a row.
  kiln_status enqueueOnDevice(ModelRunFn model, const kiln_tensor *inputs,
                              kiln_tensor *outputs);
  /// Makes `next` the current stream (launches, cuBLAS) until destroyed.
  class UseStream;
  /// Orders `next` after an earlier caller-stream run (a wait for its
  /// event on the GPU, no host synchronize), unless `next` is its stream.
  bool waitForPendingRun(void *next);
  /// Launches `run`'s graph if it is on these buffers, else the model's
  /// kernels directly.
  kiln_status launch(ModelRunFn model, const CapturedRun &run,
                     const std::vector<void *> &inputs,
                     const std::vector<void *> &outputs);
  static int32_t launchThunk(void *handle, int32_t kernel, uint32_t gx,
                             uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                             uint32_t bz, void **params);
  /// cuBLAS, its handle on the stream and a workspace (so that GEMMs need
  /// no allocation, which graph capture forbids).
  kiln_status startCublas(std::string &error);
  static int32_t gemmThunk(void *handle, int32_t index, const void *a,
                           const void *b, void *c, const void *bias);
  /// cuBLASLt and a plan per GEMM with an epilogue.
  kiln_status startCublasLt(std::string &error);
  kiln_status planEpilogueGemm(const kiln_cuda_gemm &g, CublasLtGemm &plan,
                               std::string &error);
  /// GEMM `index` (with its epilogue) through cuBLASLt.
  int32_t runEpilogueGemm(int32_t index, const void *a, const void *b, void *c,
                          const void *bias);

  const CudaDriver *driver = nullptr;
  const CublasLibrary *cublas = nullptr;
  void *cublasHandle = nullptr;
  unsigned long long cublasWorkspace = 0;
  const CublasLtLibrary *cublasLt = nullptr;
  void *cublasLtHandle = nullptr;
  /// By GEMM index; empty descriptors for GEMMs without an epilogue.
  std::vector<CublasLtGemm> epilogueGemms;
  const kiln_cuda_image *image = nullptr;
  int device = 0;
  void *ctx = nullptr, *module = nullptr;
  /// The context's own stream, and the one launches go to now (the own
  /// one, or a caller's during runOnStream).
  void *ownStream = nullptr, *stream = nullptr;
  /// Where graphs are captured (non-blocking).
  void *captureStream = nullptr;
  /// The caller stream of the last runOnStream and an event recorded there
  /// after it, until a run on another stream has waited for it.
  void *pendingStream = nullptr, *pendingDone = nullptr;
  bool runPending = false;
  /// kiln_run's graph (the context's own buffers) and kiln_run_device's
  /// (the caller's last repeated buffers).
  CapturedRun ownRun, deviceRun;
  /// The buffers of the last kiln_run_device call.
  std::vector<void *> lastDeviceInputs, lastDeviceOutputs;
  bool graphFailed = false;
  std::vector<void *> functions;
  unsigned long long arena = 0, weights = 0;
  std::vector<unsigned long long> inputs, outputs;
  std::vector<size_t> inputBytes, outputBytes;
  kiln_cuda_launcher launcher{};
  /// The first failed launch of a run, for run() to report.
  std::string launchError;
  std::string lastError;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_CUDADEVICE_H
