/*===- fake_cublas.c - a stand-in libcublas for runtime tests -------------===*
 *
 * With fake_cuda_driver.c, "device" buffers are host memory, so this fake
 * can compute what cublasGemmStridedBatchedEx defines (column-major,
 * op(A) m x k, op(B) k x n, batched with element strides) for f32 data and
 * f32 compute. That checks the runtime's row-major to column-major mapping
 * and the compiler's GEMM descriptors against the CPU backend's results.
 * It computes when called, also while a stream is being captured (the real
 * library would record the work for the graph instead), so the first run of
 * a context produces the products.
 *
 *===----------------------------------------------------------------------===*/

#include <stddef.h>

enum {
  kSuccess = 0,
  kNotInitialized = 1,
  kInvalidValue = 7,
  kNotSupported = 15
};
enum {
  kOpN = 0,
  kOpT = 1,
  kR32F = 0,
  kCompute32F = 68,
  kCompute32FFastTF32 = 77
};

static int handle_token, created;

int cublasCreate_v2(void **handle) {
  *handle = &handle_token;
  created++;
  return kSuccess;
}

int cublasDestroy_v2(void *handle) {
  if (handle != &handle_token || created == 0)
    return kNotInitialized;
  created--;
  return kSuccess;
}

int cublasSetStream_v2(void *handle, void *stream) {
  return handle == &handle_token && stream ? kSuccess : kInvalidValue;
}

int cublasSetWorkspace_v2(void *handle, void *workspace, size_t bytes) {
  return handle == &handle_token && workspace && bytes ? kSuccess
                                                       : kInvalidValue;
}

/* Element (row, col) of op(X) for a column-major X with leading dim ld. */
static float at(const float *x, int op, long long ld, long long row,
                long long col) {
  return op == kOpN ? x[row + col * ld] : x[col + row * ld];
}

int cublasGemmStridedBatchedEx(void *handle, int opA, int opB, int m, int n,
                               int k, const void *alpha, const void *A,
                               int aType, int lda, long long strideA,
                               const void *B, int bType, int ldb,
                               long long strideB, const void *beta, void *C,
                               int cType, int ldc, long long strideC, int batch,
                               int compute, int algo) {
  if (handle != &handle_token)
    return kNotInitialized;
  if (aType != kR32F || bType != kR32F || cType != kR32F ||
      (compute != kCompute32F && compute != kCompute32FFastTF32))
    return kNotSupported;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || lda < (opA == kOpN ? m : k) ||
      ldb < (opB == kOpN ? k : n) || ldc < m)
    return kInvalidValue;
  float a_scale = *(const float *)alpha, b_scale = *(const float *)beta;
  for (int b = 0; b < batch; ++b) {
    const float *a = (const float *)A + b * strideA;
    const float *bm = (const float *)B + b * strideB;
    float *c = (float *)C + b * strideC;
    for (long long j = 0; j < n; ++j)
      for (long long i = 0; i < m; ++i) {
        double sum = 0;
        for (long long p = 0; p < k; ++p)
          sum += (double)at(a, opA, lda, i, p) * at(bm, opB, ldb, p, j);
        float *out = &c[i + j * ldc];
        *out = a_scale * (float)sum + (b_scale != 0 ? b_scale * *out : 0);
      }
  }
  return kSuccess;
}
