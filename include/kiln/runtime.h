/*===- runtime.h - the kiln C runtime API ---------------------------------===*
 *
 * Load a model compiled by kiln-compile (model.so), query its signature,
 * and run it on caller-owned buffers. No MLIR, LLVM or protobuf at run time.
 * Every function returns a kiln_status; on failure kiln_last_error() (per
 * thread) says what and where. Several contexts of one model may run
 * concurrently from different threads.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI between a compiled model.so and this runtime. */
#define KILN_ABI_VERSION 4

typedef enum kiln_dtype {
  KILN_DTYPE_F32 = 1,
  KILN_DTYPE_F16 = 2,
  KILN_DTYPE_BF16 = 3,
  KILN_DTYPE_F64 = 4,
  KILN_DTYPE_I8 = 5,
  KILN_DTYPE_U8 = 6,
  KILN_DTYPE_I16 = 7,
  KILN_DTYPE_U16 = 8,
  KILN_DTYPE_I32 = 9,
  KILN_DTYPE_U32 = 10,
  KILN_DTYPE_I64 = 11,
  KILN_DTYPE_U64 = 12,
  KILN_DTYPE_BOOL = 13
} kiln_dtype;

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1, /* null pointer, bad index */
  KILN_ERROR_LOAD = 2,             /* cannot open the library */
  KILN_ERROR_NOT_A_MODEL = 3,      /* the library is not a kiln model */
  KILN_ERROR_ABI_MISMATCH = 4,     /* compiled for another runtime ABI */
  KILN_ERROR_SHAPE = 5,            /* wrong rank or dims */
  KILN_ERROR_DTYPE = 6,            /* wrong element type */
  KILN_ERROR_OUT_OF_MEMORY = 7,
  KILN_ERROR_RUN = 8,    /* the model's code reported a failure */
  KILN_ERROR_DEVICE = 9, /* no GPU driver or device, or it failed */
  KILN_ERROR_CPU = 10    /* compiled for CPU extensions this one lacks */
} kiln_status;

/* What a model was compiled for (kiln-compile --target). */
typedef enum kiln_target {
  KILN_TARGET_CPU = 0,
  KILN_TARGET_CUDA = 1
} kiln_target;

/* One input or output of a model, as compiled (all dims static). */
typedef struct kiln_tensor_info {
  const char *name;
  int32_t dtype; /* kiln_dtype */
  int32_t rank;
  const int64_t *dims;
} kiln_tensor_info;

/* A tensor the caller owns: dense, row-major. */
typedef struct kiln_tensor {
  int32_t dtype; /* kiln_dtype */
  int32_t rank;
  const int64_t *dims;
  void *data;
} kiln_tensor;

typedef struct kiln_model kiln_model;
typedef struct kiln_context kiln_context;

/* The message of the last failure on this thread ("" if none). */
const char *kiln_last_error(void);

/* Name of a dtype ("f32", ...), or "?" for an unknown one. */
const char *kiln_dtype_name(int32_t dtype);
/* Bytes per element of a dtype, 0 for an unknown one. */
size_t kiln_dtype_size(int32_t dtype);

kiln_status kiln_model_load(const char *path, kiln_model **model);
void kiln_model_unload(kiln_model *model);

int32_t kiln_model_num_inputs(const kiln_model *model);
int32_t kiln_model_num_outputs(const kiln_model *model);
kiln_status kiln_model_input_info(const kiln_model *model, int32_t index,
                                  kiln_tensor_info *info);
kiln_status kiln_model_output_info(const kiln_model *model, int32_t index,
                                   kiln_tensor_info *info);
/* The signature as JSON: {"inputs": [{"name", "dtype", "shape"}], ...}. */
const char *kiln_model_signature_json(const kiln_model *model);

/* The target the model was compiled for (kiln_target). */
int32_t kiln_model_target(const kiln_model *model);

/* An execution context: its scratch memory (the arena) is allocated once,
 * here. It runs the model on the calling thread only.
 *
 * For a CUDA model the context also loads the driver (libcuda.so.1, with
 * dlopen), takes device 0 (or $KILN_CUDA_DEVICE), loads the kernels (cubin,
 * or the embedded PTX through the driver's JIT), allocates the arena, the
 * weights (copied once) and one buffer per input and output on the device,
 * and creates one stream. num_threads is ignored. */
kiln_status kiln_context_create(const kiln_model *model,
                                kiln_context **context);
/* The same, with a pool of `num_threads` threads in all (the caller of
 * kiln_run plus num_threads - 1 workers, started here and kept until
 * kiln_context_destroy) for the model's parallel loops. num_threads >= 1. */
kiln_status kiln_context_create_with_threads(const kiln_model *model,
                                             int32_t num_threads,
                                             kiln_context **context);
void kiln_context_destroy(kiln_context *context);

/* Runs the model: inputs and outputs in signature order, each checked
 * against the signature (dtype, rank, dims, non-null data). Output buffers
 * must not overlap any input or other output buffer (checked). */
kiln_status kiln_run(kiln_context *context, const kiln_tensor *inputs,
                     size_t num_inputs, kiln_tensor *outputs,
                     size_t num_outputs);

/* CUDA models only: runs on tensors whose data are device pointers
 * (CUdeviceptr values, 16-byte aligned, as cuMemAlloc's are) the caller
 * allocated in the context's CUDA context; no host copies. Shapes and
 * dtypes are checked as for kiln_run. Returns when the outputs are
 * written. A call on the same buffers as the call before records the
 * model as a CUDA graph on them, and later calls on those buffers replay
 * it (one launch instead of one per kernel): reuse buffers in a loop. */
kiln_status kiln_run_device(kiln_context *context, const kiln_tensor *inputs,
                            size_t num_inputs, kiln_tensor *outputs,
                            size_t num_outputs);

/* CUDA models only: as kiln_run_device, but enqueued on `stream` (a
 * CUstream of the context's CUDA context, such as PyTorch's current
 * stream; NULL: the legacy default stream) and returning without waiting:
 * the outputs are written when the stream reaches the run. Errors found
 * while enqueueing are returned; errors of the kernels themselves show on
 * the stream (the next synchronize). The context's arena holds the run's
 * intermediates, so runs on one context go in order: consecutive async
 * runs on one stream need nothing more, and a run on another stream or with
 * kiln_run/kiln_run_device is ordered after the pending one on the GPU. A
 * context is for one thread at a time. */
kiln_status kiln_run_device_async(kiln_context *context, void *stream,
                                  const kiln_tensor *inputs, size_t num_inputs,
                                  kiln_tensor *outputs, size_t num_outputs);

/*===----------------------------------------------------------------------===*
 * Profiling: a model compiled with `kiln-compile --profile` times each of its
 * kernels. The counters belong to the loaded model (all its contexts add to
 * them; concurrent runs make them approximate).
 *===----------------------------------------------------------------------===*/

/* What the compiler knew about one kernel. A kernel that lowering runs inside
 * an earlier one is never called (calls stays 0); its flops and bytes are
 * counted in that kernel's entry and its own are 0. */
typedef struct kiln_kernel_info {
  const char *kind;         /* contraction, reduction, elementwise, ... */
  const char *ops;          /* the kiln ops it contains, space-separated */
  double flops;             /* per run */
  double bytes;             /* inputs read once + outputs written once */
  double predicted_seconds; /* max(flops / peak, bytes / bandwidth) */
} kiln_kernel_info;

typedef struct kiln_model_profile {
  int32_t num_kernels;
  /* The CPU threads predicted_seconds assumes (kiln-compile
   * --roofline-threads); 0 in models compiled before it was recorded. */
  int32_t roofline_threads;
  const kiln_kernel_info *kernels;
  uint64_t *nanoseconds; /* per kernel, summed over runs */
  uint64_t *calls;       /* per kernel */
} kiln_model_profile;

/* The model's per-kernel counters, or NULL if it was not compiled with
 * --profile. */
const kiln_model_profile *kiln_model_get_profile_data(const kiln_model *model);
/* Sets every counter to zero (e.g. after warm-up). */
void kiln_model_reset_profile(const kiln_model *model);

/*===----------------------------------------------------------------------===*
 * What model.so exports (kiln-compile writes it; applications use the API
 * above instead).
 *===----------------------------------------------------------------------===*/

typedef struct kiln_model_info {
  uint32_t abi_version;
  int32_t num_inputs;
  int32_t num_outputs;
  int32_t target; /* kiln_target */
  const kiln_tensor_info *inputs;
  const kiln_tensor_info *outputs;
  uint64_t arena_bytes;
  const char *signature_json;
  /* The weights the contractions stream, packed at compile time into one
   * range of the library's read-only data (2 MiB-aligned from 4 MiB on);
   * NULL when none. The runtime moves it onto huge pages at load time. */
  const void *streamed_weights_begin;
  const void *streamed_weights_end;
  /* The CPU the code was compiled for (kiln-compile --mcpu, resolved:
   * "znver4") and the x86 extensions it may use, comma separated
   * (include/kiln/CpuFeatures.h): the runtime refuses to load the model on a
   * CPU without one of them. */
  const char *cpu;
  const char *cpu_features;
} kiln_model_info;

/* A parallel loop body: iterations [begin, end) of a loop. */
typedef void (*kiln_task_fn)(void *ctx, int64_t begin, int64_t end);

/* How a model runs its parallel loops: parallel_for(pool, count, task, ctx)
 * runs task over [0, count) split across the threads and returns when all
 * are done. */
typedef struct kiln_parallel_runtime {
  void *pool;
  void (*parallel_for)(void *pool, int64_t count, kiln_task_fn task, void *ctx);
  int32_t num_threads;
  int32_t reserved;
} kiln_parallel_runtime;

/* A CUDA model's device code and weights. */
typedef struct kiln_cuda_constant {
  const void *data; /* host copy, in the library's read-only data */
  uint64_t offset;  /* in the device weights buffer */
  uint64_t bytes;
} kiln_cuda_constant;

/* What a GEMM applies to its product before storing it (cuBLASLt's fused
 * epilogues): a bias per column of C, then a ReLU; flags, or'ed. */
typedef enum kiln_gemm_epilogue {
  KILN_GEMM_EPILOGUE_NONE = 0,
  KILN_GEMM_EPILOGUE_BIAS = 1, /* C[i][j] += bias[j] */
  KILN_GEMM_EPILOGUE_RELU = 2  /* C[i][j] = max(C[i][j], 0), after the bias */
} kiln_gemm_epilogue;

/* A row-major (batched) matrix product the runtime runs with cuBLAS:
 * C[b] = A[b] * B[b] (+ C[b] when accumulate), b < batch, each operand
 * stored transposed or not, batch strides in elements (0: broadcast); with
 * an epilogue (never when accumulating), with cuBLASLt: C[b] =
 * act(A[b] * B[b] + bias). */
typedef struct kiln_cuda_gemm {
  int64_t m, n, k, batch;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  int32_t trans_a, trans_b;
  int32_t in_dtype, out_dtype; /* kiln_dtype: f32, f16 or bf16 */
  int32_t accumulate;
  int32_t tf32;     /* f32 inputs may be rounded to TF32 on tensor cores */
  int32_t epilogue; /* kiln_gemm_epilogue flags */
  int32_t reserved;
} kiln_cuda_gemm;

typedef struct kiln_cuda_image {
  const char *arch; /* "sm_90" */
  const char *ptx;  /* NUL-terminated, for the driver's JIT */
  uint64_t ptx_bytes;
  const void *cubin; /* NULL if ptxas was not found at compile time */
  uint64_t cubin_bytes;
  int32_t num_kernels;
  int32_t num_constants;
  const char *const *kernel_names; /* kernel index -> entry name */
  const kiln_cuda_constant *constants;
  uint64_t weights_bytes;
  int32_t num_gemms;
  int32_t reserved;
  const kiln_cuda_gemm *gemms; /* by index, for kiln_cuda_launcher.gemm */
} kiln_cuda_image;

/* How a CUDA model launches kernel `kernel` of its image: params is
 * cuLaunchKernel's kernelParams (one pointer to each argument). Returns 0 on
 * success; the runtime keeps the first failure for kiln_run to report. */
typedef int32_t (*kiln_cuda_launch_fn)(void *handle, int32_t kernel,
                                       uint32_t grid_x, uint32_t grid_y,
                                       uint32_t grid_z, uint32_t block_x,
                                       uint32_t block_y, uint32_t block_z,
                                       void **params);

/* Runs GEMM `index` of the image on device buffers a, b and c, and bias (an
 * f32 vector of n elements; NULL without a bias epilogue), enqueued on the
 * launcher's stream like the kernels. Returns 0 on success. */
typedef int32_t (*kiln_cuda_gemm_fn)(void *handle, int32_t index, const void *a,
                                     const void *b, void *c, const void *bias);

typedef struct kiln_cuda_launcher {
  void *handle;
  kiln_cuda_launch_fn launch;
  void *weights; /* device address of the weights buffer */
  kiln_cuda_gemm_fn gemm;
} kiln_cuda_launcher;

/* const kiln_model_info *kiln_model_get_info(void);
 * int32_t kiln_model_run(void *const *inputs, void *const *outputs,
 *                        void *arena, const void *rt);
 *   rt is a kiln_parallel_runtime for a CPU model; for a CUDA model it is a
 *   kiln_cuda_launcher and inputs, outputs and arena are device addresses;
 * a CUDA model also exports
 * const kiln_cuda_image *kiln_model_get_cuda_image(void);
 * and, compiled with --profile only:
 * const kiln_model_profile *kiln_model_get_profile(void); */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H */
