/*===- fake_cublas.c - a stand-in libcublas for runtime tests -------------===*
 *
 * With fake_cuda_driver.c, "device" buffers are host memory, so this fake
 * can compute what cublasGemmStridedBatchedEx defines (column-major,
 * op(A) m x k, op(B) k x n, batched with element strides) for f32 data and
 * f32 compute. That checks the runtime's row-major to column-major mapping
 * and the compiler's GEMM descriptors against the CPU backend's results.
 * The cuBLASLt entry points kiln uses are here too (a GEMM with a bias and
 * ReLU epilogue, descriptors checked for consistency). It computes when
 * called, also while a stream is being captured (the real
 * library would record the work for the graph instead), so the first run of
 * a context produces the products.
 *
 *===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdlib.h>

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

/* A column-major batched GEMM as both libraries define it: C[b] =
 * act(alpha op(A[b]) op(B[b]) + beta C[b] + bias) (bias per row of C). */
struct gemm {
  int opA, opB;
  long long m, n, k, lda, ldb, ldc, strideA, strideB, strideC;
  int batch;
  const float *bias;
  int relu;
};

static void run_gemm(const struct gemm *g, float alpha, const float *A,
                     const float *B, float beta, float *C) {
  for (int b = 0; b < g->batch; ++b) {
    const float *a = A + b * g->strideA;
    const float *bm = B + b * g->strideB;
    float *c = C + b * g->strideC;
    for (long long j = 0; j < g->n; ++j)
      for (long long i = 0; i < g->m; ++i) {
        double sum = 0;
        for (long long p = 0; p < g->k; ++p)
          sum += (double)at(a, g->opA, g->lda, i, p) *
                 at(bm, g->opB, g->ldb, p, j);
        float *out = &c[i + j * g->ldc];
        float value = alpha * (float)sum + (beta != 0 ? beta * *out : 0);
        if (g->bias)
          value += g->bias[i];
        if (g->relu && value < 0)
          value = 0;
        *out = value;
      }
  }
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
  struct gemm g = {opA, opB,     m,       n,       k,     lda,  ldb,
                   ldc, strideA, strideB, strideC, batch, NULL, 0};
  run_gemm(&g, *(const float *)alpha, A, B, *(const float *)beta, C);
  return kSuccess;
}

/* cuBLASLt: descriptors are plain structs; the attributes kiln sets are
 * kept, any other is refused. */
enum {
  kLtDescTransA = 3,
  kLtDescTransB = 4,
  kLtDescEpilogue = 7,
  kLtDescBiasPointer = 8,
  kLtLayoutBatchCount = 5,
  kLtLayoutBatchStride = 6,
  kLtPrefMaxWorkspace = 1,
  kLtEpilogueRelu = 2,
  kLtEpilogueBias = 4
};

struct lt_matmul {
  int compute, opA, opB;
  unsigned epilogue;
  const float *bias;
};
struct lt_layout {
  int type;
  unsigned long long rows, cols;
  long long ld, stride;
  int batch;
};

static int lt_handles, lt_objects;

int cublasLtCreate(void **handle) {
  *handle = &lt_handles;
  lt_handles++;
  return kSuccess;
}

int cublasLtDestroy(void *handle) {
  if (handle != &lt_handles || lt_handles == 0 || lt_objects != 0)
    return kNotInitialized;
  lt_handles--;
  return kSuccess;
}

int cublasLtMatmulDescCreate(void **desc, int compute, int scale) {
  struct lt_matmul *m = calloc(1, sizeof *m);
  if (scale != kR32F ||
      (compute != kCompute32F && compute != kCompute32FFastTF32))
    return kNotSupported;
  m->compute = compute;
  m->epilogue = 1; /* CUBLASLT_EPILOGUE_DEFAULT */
  *desc = m;
  lt_objects++;
  return kSuccess;
}

int cublasLtMatmulDescDestroy(void *desc) {
  free(desc);
  lt_objects--;
  return kSuccess;
}

int cublasLtMatmulDescSetAttribute(void *desc, int attr, const void *value,
                                   size_t bytes) {
  struct lt_matmul *m = desc;
  if ((attr == kLtDescTransA || attr == kLtDescTransB) && bytes == 4)
    *(attr == kLtDescTransA ? &m->opA : &m->opB) = *(const int *)value;
  else if (attr == kLtDescEpilogue && bytes == 4)
    m->epilogue = *(const unsigned *)value;
  else if (attr == kLtDescBiasPointer && bytes == sizeof(void *))
    m->bias = *(const float *const *)value;
  else
    return kInvalidValue;
  return kSuccess;
}

int cublasLtMatrixLayoutCreate(void **desc, int type, unsigned long long rows,
                               unsigned long long cols, long long ld) {
  struct lt_layout *l = calloc(1, sizeof *l);
  if (type != kR32F || (long long)rows > ld)
    return kInvalidValue;
  l->type = type;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  l->batch = 1;
  *desc = l;
  lt_objects++;
  return kSuccess;
}

int cublasLtMatrixLayoutDestroy(void *desc) {
  free(desc);
  lt_objects--;
  return kSuccess;
}

int cublasLtMatrixLayoutSetAttribute(void *desc, int attr, const void *value,
                                     size_t bytes) {
  struct lt_layout *l = desc;
  if (attr == kLtLayoutBatchCount && bytes == 4)
    l->batch = *(const int *)value;
  else if (attr == kLtLayoutBatchStride && bytes == 8)
    l->stride = *(const long long *)value;
  else
    return kInvalidValue;
  return kSuccess;
}

static int preference_token;

int cublasLtMatmulPreferenceCreate(void **pref) {
  *pref = &preference_token;
  return kSuccess;
}

int cublasLtMatmulPreferenceDestroy(void *pref) {
  return pref == &preference_token ? kSuccess : kInvalidValue;
}

int cublasLtMatmulPreferenceSetAttribute(void *pref, int attr,
                                         const void *value, size_t bytes) {
  return pref == &preference_token && attr == kLtPrefMaxWorkspace && bytes == 8
             ? kSuccess
             : kInvalidValue;
}

/* The dimensions of op(X) for a layout read with op. */
static void op_dims(const struct lt_layout *l, int op, long long *rows,
                    long long *cols) {
  *rows = (long long)(op == kOpN ? l->rows : l->cols);
  *cols = (long long)(op == kOpN ? l->cols : l->rows);
}

/* Whether A (m x k), B (k x n) and C, D (m x n) agree, batches too. */
static int lt_shapes_agree(const struct lt_matmul *m, const struct lt_layout *a,
                           const struct lt_layout *b, const struct lt_layout *d,
                           struct gemm *g) {
  long long am, ak, bk, bn;
  op_dims(a, m->opA, &am, &ak);
  op_dims(b, m->opB, &bk, &bn);
  if (ak != bk || am != (long long)d->rows || bn != (long long)d->cols ||
      a->batch != d->batch || b->batch != d->batch)
    return 0;
  struct gemm shape = {m->opA,
                       m->opB,
                       am,
                       bn,
                       ak,
                       a->ld,
                       b->ld,
                       d->ld,
                       a->stride,
                       b->stride,
                       d->stride,
                       d->batch,
                       (m->epilogue & kLtEpilogueBias) ? m->bias : NULL,
                       (m->epilogue & kLtEpilogueRelu) != 0};
  *g = shape;
  return 1;
}

typedef struct {
  unsigned long long algo[8];
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
} heuristic;

int cublasLtMatmulAlgoGetHeuristic(void *handle, void *desc, void *a, void *b,
                                   void *c, void *d, void *pref, int requested,
                                   heuristic *results, int *found) {
  struct gemm g;
  if (handle != &lt_handles || requested < 1 || c != d ||
      !lt_shapes_agree(desc, a, b, d, &g))
    return kInvalidValue;
  results[0].algo[0] = 42;
  results[0].workspace = 0;
  results[0].state = kSuccess;
  *found = 1;
  return kSuccess;
}

int cublasLtMatmul(void *handle, void *desc, const void *alpha, const void *A,
                   void *aDesc, const void *B, void *bDesc, const void *beta,
                   const void *C, void *cDesc, void *D, void *dDesc,
                   const void *algo, void *workspace, size_t workspaceBytes,
                   void *stream) {
  struct gemm g;
  const struct lt_matmul *m = desc;
  if (handle != &lt_handles || !stream || !workspace ||
      ((const unsigned long long *)algo)[0] != 42 || C != D || cDesc != dDesc ||
      !lt_shapes_agree(m, aDesc, bDesc, dDesc, &g) ||
      ((m->epilogue & kLtEpilogueBias) && !m->bias))
    return kInvalidValue;
  run_gemm(&g, *(const float *)alpha, A, B, *(const float *)beta, D);
  return kSuccess;
}
