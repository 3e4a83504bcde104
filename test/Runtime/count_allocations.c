/* Counts heap allocations made while kiln_run executes a compiled model: the
 * arena is allocated once, by kiln_context_create, so an inference must make
 * none. malloc and friends are interposed for the whole process (model.so
 * binds to these definitions); inputs and outputs are zero-filled buffers.
 * Usage: count-allocations MODEL.so RUNS. Prints "allocations per run: N". */

#include "kiln/runtime.h"

#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static int counting;
static long allocations;

void *malloc(size_t n) {
  allocations += counting;
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t size) {
  allocations += counting;
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n) {
  allocations += counting;
  return __libc_realloc(p, n);
}
void *aligned_alloc(size_t alignment, size_t n) {
  allocations += counting;
  return __libc_memalign(alignment, n);
}
int posix_memalign(void **p, size_t alignment, size_t n) {
  allocations += counting;
  *p = __libc_memalign(alignment, n);
  return *p ? 0 : 12 /* ENOMEM */;
}

static kiln_tensor *zeroTensors(const kiln_model *model, int32_t count,
                                kiln_status (*info)(const kiln_model *, int32_t,
                                                    kiln_tensor_info *)) {
  kiln_tensor *tensors = calloc(count ? count : 1, sizeof(kiln_tensor));
  for (int32_t i = 0; i < count; ++i) {
    kiln_tensor_info t;
    info(model, i, &t);
    size_t bytes = kiln_dtype_size(t.dtype);
    for (int32_t d = 0; d < t.rank; ++d)
      bytes *= (size_t)t.dims[d];
    tensors[i] = (kiln_tensor){t.dtype, t.rank, t.dims, calloc(bytes + 1, 1)};
  }
  return tensors;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL.so RUNS\n", argv[0]);
    return 2;
  }
  kiln_model *model;
  kiln_context *context;
  if (kiln_model_load(argv[1], &model) != KILN_OK ||
      kiln_context_create(model, &context) != KILN_OK) {
    fprintf(stderr, "error: %s\n", kiln_last_error());
    return 1;
  }
  int32_t numInputs = kiln_model_num_inputs(model);
  int32_t numOutputs = kiln_model_num_outputs(model);
  kiln_tensor *inputs = zeroTensors(model, numInputs, kiln_model_input_info);
  kiln_tensor *outputs = zeroTensors(model, numOutputs, kiln_model_output_info);
  long runs = atol(argv[2]);
  counting = 1;
  for (long i = 0; i < runs; ++i)
    if (kiln_run(context, inputs, numInputs, outputs, numOutputs) != KILN_OK) {
      counting = 0;
      fprintf(stderr, "error: %s\n", kiln_last_error());
      return 1;
    }
  counting = 0;
  printf("allocations per run: %ld\n", runs ? allocations / runs : 0);
  return 0;
}
