/* The runtime's CUDA path against the fake driver (fake_cuda_driver.c):
 * weights copied once per context, inputs in and outputs out on every run,
 * the first run captured as a CUDA graph and later runs replaying it,
 * kiln_run_device launching directly on caller buffers, launch parameters
 * pointing into device allocations, a failed launch reported with the
 * driver's error name, and all device memory freed with the context.
 * Built with AddressSanitizer and UndefinedBehaviorSanitizer.
 * Usage: runtime_cuda_test MODEL.so FAKE_DRIVER.so [--expect-launch-failure]
 * (with KILN_CUDA_DRIVER=FAKE_DRIVER.so in the environment). */

#include "kiln/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda_stats.h"

static int failures = 0;

#define EXPECT(condition, ...)                                                 \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "FAIL line %d: %s: ", __LINE__, #condition);             \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static size_t tensor_bytes(const kiln_tensor_info *info) {
  size_t bytes = kiln_dtype_size(info->dtype);
  for (int32_t d = 0; d < info->rank; ++d)
    bytes *= (size_t)info->dims[d];
  return bytes;
}

/* Tensors over buffers of the signature's shapes; data from `allocate`. */
static void make_tensors(const kiln_model *model, int input, kiln_tensor *t,
                         int32_t count, void *(*allocate)(size_t),
                         size_t *total) {
  *total = 0;
  for (int32_t i = 0; i < count; ++i) {
    kiln_tensor_info info;
    if (input)
      kiln_model_input_info(model, i, &info);
    else
      kiln_model_output_info(model, i, &info);
    t[i] = (kiln_tensor){info.dtype, info.rank, info.dims,
                         allocate(tensor_bytes(&info))};
    *total += tensor_bytes(&info);
  }
}

static void *host_alloc(size_t bytes) { return calloc(1, bytes ? bytes : 1); }

typedef int (*MemAllocFn)(unsigned long long *, size_t);
static MemAllocFn fake_alloc;
static void *device_alloc(size_t bytes) {
  unsigned long long ptr = 0;
  fake_alloc(&ptr, bytes ? bytes : 1);
  return (void *)ptr;
}

/* A model's inputs and outputs in device memory of the fake driver. */
typedef struct device_buffers {
  kiln_tensor in[16], out[16];
  int32_t num_in, num_out;
} device_buffers;

static void make_device_buffers(const kiln_model *model, device_buffers *b) {
  size_t bytes;
  b->num_in = kiln_model_num_inputs(model);
  b->num_out = kiln_model_num_outputs(model);
  make_tensors(model, 1, b->in, b->num_in, device_alloc, &bytes);
  make_tensors(model, 0, b->out, b->num_out, device_alloc, &bytes);
}

static void free_device_buffers(void *driver, const device_buffers *b) {
  void *(*fake_free)(unsigned long long) =
      (void *(*)(unsigned long long))dlsym(driver, "cuMemFree_v2");
  for (int32_t i = 0; i < b->num_in; ++i)
    fake_free((unsigned long long)b->in[i].data);
  for (int32_t i = 0; i < b->num_out; ++i)
    fake_free((unsigned long long)b->out[i].data);
}

/* kiln_run_device, or kiln_run_device_async on `stream` when not null. */
static kiln_status run_on(kiln_context *context, device_buffers *b,
                          void *stream) {
  return stream
             ? kiln_run_device_async(context, stream, b->in, b->num_in, b->out,
                                     b->num_out)
             : kiln_run_device(context, b->in, b->num_in, b->out, b->num_out);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr,
            "usage: %s MODEL.so FAKE_DRIVER.so [--expect-launch-failure]\n",
            argv[0]);
    return 2;
  }
  int expect_failure = argc > 3 && !strcmp(argv[3], "--expect-launch-failure");
  kiln_model *model = NULL;
  if (kiln_model_load(argv[1], &model) != KILN_OK) {
    fprintf(stderr, "load: %s\n", kiln_last_error());
    return 1;
  }
  EXPECT(kiln_model_target(model) == KILN_TARGET_CUDA, "target %d",
         kiln_model_target(model));
  void *library = dlopen(argv[1], RTLD_NOW);
  const kiln_cuda_image *(*get_image)(void) =
      (const kiln_cuda_image *(*)(void))dlsym(library,
                                              "kiln_model_get_cuda_image");
  const kiln_cuda_image *image = get_image();
  unsigned long long weights = 0;
  for (int32_t c = 0; c < image->num_constants; ++c)
    weights += image->constants[c].bytes;

  kiln_context *context = NULL;
  if (kiln_context_create(model, &context) != KILN_OK) {
    fprintf(stderr, "context: %s\n", kiln_last_error());
    return 1;
  }
  void *driver = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
  EXPECT(driver != NULL, "the runtime did not load %s", argv[2]);
  if (!driver)
    return 1;
  const fake_cuda_stats *stats = ((const fake_cuda_stats *(*)(void))dlsym(
      driver, "fake_cuda_stats_get"))();
  fake_alloc = (MemAllocFn)dlsym(driver, "cuMemAlloc_v2");
  EXPECT(stats->module_loads_cubin + stats->module_loads_ptx == 1,
         "modules loaded: %d cubin, %d ptx", stats->module_loads_cubin,
         stats->module_loads_ptx);
  EXPECT(stats->bytes_to_device == weights, "weights copied: %llu of %llu",
         stats->bytes_to_device, weights);

  int32_t num_inputs = kiln_model_num_inputs(model);
  int32_t num_outputs = kiln_model_num_outputs(model);
  kiln_tensor inputs[16], outputs[16];
  size_t in_bytes, out_bytes;
  make_tensors(model, 1, inputs, num_inputs, host_alloc, &in_bytes);
  make_tensors(model, 0, outputs, num_outputs, host_alloc, &out_bytes);

  kiln_status status =
      kiln_run(context, inputs, num_inputs, outputs, num_outputs);
  if (expect_failure) {
    EXPECT(status == KILN_ERROR_DEVICE, "status %d", status);
    printf("launch failure: %s\n", kiln_last_error());
  } else {
    EXPECT(status == KILN_OK, "run: %s", kiln_last_error());
    int kernels = stats->captured_launches;
    EXPECT(kernels > 0 && stats->launches == 0 && stats->graphs == 1 &&
               stats->graph_launches == 1,
           "first run: %d captured, %d direct, %d graphs, %d graph launches",
           kernels, stats->launches, stats->graphs, stats->graph_launches);
    EXPECT(stats->bytes_to_device == weights + in_bytes &&
               stats->bytes_to_host == out_bytes,
           "copies: %llu in, %llu out", stats->bytes_to_device,
           stats->bytes_to_host);
    EXPECT(kiln_run(context, inputs, num_inputs, outputs, num_outputs) ==
               KILN_OK,
           "second run: %s", kiln_last_error());
    EXPECT(stats->graphs == 1 && stats->graph_launches == 2 &&
               stats->captured_launches == kernels,
           "second run: %d graphs, %d graph launches", stats->graphs,
           stats->graph_launches);

    device_buffers first, other;
    make_device_buffers(model, &first);
    EXPECT(run_on(context, &first, NULL) == KILN_OK, "run_device: %s",
           kiln_last_error());
    EXPECT(stats->launches == kernels, "run_device: %d direct launches of %d",
           stats->launches, kernels);
    /* The same buffers again: captured on them, then replayed. */
    for (int repeat = 2; repeat <= 3; ++repeat)
      EXPECT(run_on(context, &first, NULL) == KILN_OK, "run_device %d: %s",
             repeat, kiln_last_error());
    EXPECT(stats->launches == kernels && stats->graphs == 2 &&
               stats->captured_launches == 2 * kernels &&
               stats->graph_launches == 4,
           "run_device on repeated buffers: %d direct, %d captured, %d graphs, "
           "%d graph launches",
           stats->launches, stats->captured_launches, stats->graphs,
           stats->graph_launches);
    /* Other buffers: launched directly, no capture. */
    make_device_buffers(model, &other);
    EXPECT(run_on(context, &other, NULL) == KILN_OK,
           "run_device on other buffers: %s", kiln_last_error());
    EXPECT(stats->launches == 2 * kernels && stats->graphs == 2 &&
               stats->graph_launches == 4,
           "run_device on other buffers: %d direct, %d graphs", stats->launches,
           stats->graphs);
    /* On a caller's stream: enqueued there with an event after it, nothing
     * waited for on the host; a later run on kiln's stream waits for the
     * event on the GPU. */
    static int caller_stream_token;
    void *caller = &caller_stream_token;
    void (*watch)(void *, int) =
        (void (*)(void *, int))dlsym(driver, "fake_cuda_watch_stream");
    watch(caller, 0);
    EXPECT(run_on(context, &other, caller) == KILN_OK, "run_device_async: %s",
           kiln_last_error());
    EXPECT(stats->graphs == 3 && stats->watched_graph_launches == 1 &&
               stats->watched_launches == 0 &&
               stats->watched_event_records == 1 && stats->event_waits == 0,
           "async on repeated buffers: %d graphs, %d graph launches, %d "
           "launches and %d events on the caller's stream, %d waits",
           stats->graphs, stats->watched_graph_launches,
           stats->watched_launches, stats->watched_event_records,
           stats->event_waits);
    EXPECT(run_on(context, &first, caller) == KILN_OK, "run_device_async: %s",
           kiln_last_error());
    EXPECT(stats->watched_launches == kernels && stats->event_waits == 0,
           "async on new buffers: %d launches on the caller's stream, %d "
           "waits",
           stats->watched_launches, stats->event_waits);
    EXPECT(run_on(context, &first, NULL) == KILN_OK,
           "run_device after async: %s", kiln_last_error());
    EXPECT(stats->event_waits == 1 && stats->watched_syncs == 0 &&
               stats->watched_launches == kernels && stats->graphs == 4,
           "run_device after async: %d event waits, %d host waits for the "
           "caller's stream, %d graphs",
           stats->event_waits, stats->watched_syncs, stats->graphs);
    /* Under the caller's own capture: launched into it, no capture of
     * kiln's, no event. */
    watch(caller, 1);
    for (int call = 0; call < 2; ++call)
      EXPECT(run_on(context, &other, caller) == KILN_OK,
             "run_device_async under capture: %s", kiln_last_error());
    EXPECT(stats->watched_launches == 3 * kernels && stats->graphs == 4 &&
               stats->watched_event_records == 2,
           "async under the caller's capture: %d launches, %d graphs, %d "
           "events",
           stats->watched_launches, stats->graphs,
           stats->watched_event_records);
    free_device_buffers(driver, &first);
    free_device_buffers(driver, &other);
    EXPECT(stats->param_errors == 0, "%d bad launch parameters: %s",
           stats->param_errors, stats->last_param_error);
    printf("%d kernels per run, %s loaded, %llu weight bytes, graph replayed\n",
           kernels, stats->module_loads_cubin ? "cubin" : "PTX", weights);
  }
  kiln_context_destroy(context);
  EXPECT(stats->allocations_live == 0, "%d device allocations leaked",
         stats->allocations_live);
  for (int32_t i = 0; i < num_inputs; ++i)
    free(inputs[i].data);
  for (int32_t i = 0; i < num_outputs; ++i)
    free(outputs[i].data);
  kiln_model_unload(model);
  dlclose(library);
  if (failures) {
    printf("cuda runtime: %d checks failed\n", failures);
    return 1;
  }
  printf("cuda runtime: all checks passed\n");
  return 0;
}
