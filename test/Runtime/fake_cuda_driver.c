/*===- fake_cuda_driver.c - a stand-in libcuda.so.1 for runtime tests -----===*
 *
 * The runtime's CUDA path on a machine without a GPU: "device" memory is host
 * memory, kernels do not run, and every call is checked and counted. PTX
 * loaded through the JIT path is parsed for each entry's parameter count,
 * and each launch's parameters are checked against it: every pointer-sized
 * parameter that looks like an address (above 4 GiB) must lie inside a live
 * allocation.
 * FAKE_CUDA_ARCH=NN sets the compute capability (default 90);
 * FAKE_CUDA_FAIL_LAUNCH=1 makes every launch fail. fake_cuda_stats_get()
 * returns the counters.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda_stats.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { kSuccess = 0, kInvalidValue = 1, kIllegalAddress = 700 };

static fake_cuda_stats stats;
static int capturing;
static const char *ptx_text;

typedef struct allocation {
  char *base;
  size_t bytes;
} allocation;
static allocation allocations[4096];
static int num_allocations;

typedef struct function {
  char name[128];
  int params; /* -1: unknown (loaded from a cubin) */
} function;
static function functions[4096];
static int num_functions;

const fake_cuda_stats *fake_cuda_stats_get(void) { return &stats; }

/* The caller's stream whose work the stats count (watched_*), and whether
 * cuStreamIsCapturing says the caller is capturing it. */
static void *watched_stream;
static int watched_capturing;
void fake_cuda_watch_stream(void *stream, int capturing) {
  watched_stream = stream;
  watched_capturing = capturing;
}

CUresult cuInit(unsigned flags) {
  return flags == 0 ? kSuccess : kInvalidValue;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = error == kIllegalAddress ? "CUDA_ERROR_ILLEGAL_ADDRESS"
                                   : "CUDA_ERROR_INVALID_VALUE";
  return kSuccess;
}

CUresult cuGetErrorString(CUresult error, const char **message) {
  *message = error == kIllegalAddress ? "an illegal memory access"
                                      : "invalid argument";
  return kSuccess;
}

CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  const char *arch = getenv("FAKE_CUDA_ARCH");
  int cc = arch ? atoi(arch) : 90;
  if (attribute == 75)
    *value = cc / 10;
  else if (attribute == 76)
    *value = cc % 10;
  else
    return kInvalidValue;
  return kSuccess;
}

static int context_token;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  *ctx = &context_token;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(int device) { return kSuccess; }
CUresult cuCtxPushCurrent_v2(void *ctx) {
  return ctx == &context_token ? kSuccess : kInvalidValue;
}
CUresult cuCtxPopCurrent_v2(void **ctx) {
  *ctx = &context_token;
  return kSuccess;
}

static int module_token;
CUresult cuModuleLoadData(void **module, const void *image) {
  /* A cubin is an ELF file. */
  if (memcmp(image,
             "\x7f"
             "ELF",
             4) != 0)
    return kInvalidValue;
  stats.module_loads_cubin++;
  ptx_text = NULL;
  *module = &module_token;
  return kSuccess;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            int *options, void **values) {
  if (!strstr((const char *)image, ".version") ||
      !strstr((const char *)image, ".target"))
    return kInvalidValue;
  stats.module_loads_ptx++;
  ptx_text = (const char *)image;
  *module = &module_token;
  return kSuccess;
}

CUresult cuModuleUnload(void *module) { return kSuccess; }

/* Parameters of `.entry name(...)` in the loaded PTX, or -1. */
static int count_params(const char *name) {
  if (!ptx_text)
    return -1;
  char header[160];
  snprintf(header, sizeof header, ".entry %s(", name);
  const char *entry = strstr(ptx_text, header);
  if (!entry)
    return -2;
  const char *end = strchr(entry, ')');
  int count = 0;
  for (const char *p = entry; p && p < end; ++count)
    p = strstr(p + 1, ".param");
  return count - 1;
}

CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  int params = count_params(name);
  if (params == -2 || num_functions == 4096)
    return kInvalidValue; /* no such kernel */
  function *f = &functions[num_functions++];
  snprintf(f->name, sizeof f->name, "%s", name);
  f->params = params;
  *fn = f;
  return kSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  if (bytes == 0 || num_allocations == 4096)
    return kInvalidValue;
  char *base = malloc(bytes);
  memset(base, 0, bytes);
  allocations[num_allocations++] = (allocation){base, bytes};
  stats.allocations_live++;
  *ptr = (CUdeviceptr)(uintptr_t)base;
  return kSuccess;
}

static allocation *find(CUdeviceptr ptr) {
  char *p = (char *)(uintptr_t)ptr;
  for (int i = 0; i < num_allocations; ++i)
    if (allocations[i].base && p >= allocations[i].base &&
        p < allocations[i].base + allocations[i].bytes)
      return &allocations[i];
  return NULL;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  allocation *a = find(ptr);
  if (!a || a->base != (char *)(uintptr_t)ptr)
    return kInvalidValue;
  free(a->base);
  a->base = NULL;
  stats.allocations_live--;
  return kSuccess;
}

static CUresult copy_in(CUdeviceptr dst, const void *src, size_t bytes) {
  allocation *a = find(dst);
  if (!a || (char *)(uintptr_t)dst + bytes > a->base + a->bytes)
    return kIllegalAddress;
  memcpy((void *)(uintptr_t)dst, src, bytes);
  stats.bytes_to_device += bytes;
  return kSuccess;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  return copy_in(dst, src, bytes);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
                              void *stream) {
  return copy_in(dst, src, bytes);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                              void *stream) {
  allocation *a = find(src);
  if (!a || (char *)(uintptr_t)src + bytes > a->base + a->bytes)
    return kIllegalAddress;
  memcpy(dst, (void *)(uintptr_t)src, bytes);
  stats.bytes_to_host += bytes;
  return kSuccess;
}

/* Blocking and non-blocking streams (kiln captures on the latter). */
static int stream_token, nonblocking_stream_token;
CUresult cuStreamCreate(void **stream, unsigned flags) {
  *stream = flags & 1 ? &nonblocking_stream_token : &stream_token;
  return kSuccess;
}
CUresult cuStreamIsCapturing(void *stream, int *status) {
  *status = watched_stream && stream == watched_stream && watched_capturing;
  return kSuccess;
}
static int event_token;
CUresult cuEventCreate(void **event, unsigned flags) {
  *event = &event_token;
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *event) { return kSuccess; }
CUresult cuEventRecord(void *event, void *stream) {
  if (event != &event_token)
    return kInvalidValue;
  if (watched_stream && stream == watched_stream)
    stats.watched_event_records++;
  return kSuccess;
}
CUresult cuEventSynchronize(void *event) { return kSuccess; }
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  if (event != &event_token)
    return kInvalidValue;
  stats.event_waits++;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *stream) { return kSuccess; }
CUresult cuStreamSynchronize(void *stream) {
  if (watched_stream && stream == watched_stream)
    stats.watched_syncs++;
  return kSuccess;
}

/* A parameter holding an address near the allocations' range must point
 * into a live allocation; small values are sizes or indices. */
static void check_params(const function *f, void **params) {
  if (f->params < 0)
    return;
  for (int i = 0; i < f->params; ++i) {
    if (!params || !params[i]) {
      snprintf(stats.last_param_error, sizeof stats.last_param_error,
               "%s: parameter %d of %d is null", f->name, i, f->params);
      stats.param_errors++;
      return;
    }
    CUdeviceptr value = *(CUdeviceptr *)params[i];
    if (value > (1ull << 32) && !find(value)) {
      snprintf(stats.last_param_error, sizeof stats.last_param_error,
               "%s: parameter %d (0x%llx) is no device address", f->name, i,
               value);
      stats.param_errors++;
    }
  }
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  const char *fail = getenv("FAKE_CUDA_FAIL_LAUNCH");
  if (fail && *fail == '1')
    return kIllegalAddress;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
    return kInvalidValue;
  check_params((const function *)fn, params);
  if (capturing)
    stats.captured_launches++;
  else
    stats.launches++;
  if (!capturing && watched_stream && stream == watched_stream)
    stats.watched_launches++;
  return kSuccess;
}

static int graph_token, exec_token;
CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  /* kiln captures on its own stream (a caller's may be the legacy one,
   * which cannot be captured). */
  if (stream != &nonblocking_stream_token)
    return kInvalidValue;
  capturing = 1;
  return kSuccess;
}
CUresult cuStreamEndCapture(void *stream, void **graph) {
  capturing = 0;
  *graph = &graph_token;
  stats.graphs++;
  return kSuccess;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  *exec = &exec_token;
  return kSuccess;
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  stats.graph_launches++;
  if (watched_stream && stream == watched_stream)
    stats.watched_graph_launches++;
  return kSuccess;
}
CUresult cuGraphDestroy(void *graph) { return kSuccess; }
CUresult cuGraphExecDestroy(void *exec) { return kSuccess; }
