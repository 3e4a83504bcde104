/* Exercises every failure path of the C runtime API on a compiled model
 * (a Relu over f32[2, 3]) and checks the status and message of each.
 * Built with AddressSanitizer and UndefinedBehaviorSanitizer.
 * Usage: runtime_api_test MODEL.so NOT_A_LIBRARY */

#include "kiln/runtime.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT_STATUS(call, expected, fragment)                                \
  do {                                                                         \
    kiln_status got = (call);                                                  \
    if (got != (expected) || !strstr(kiln_last_error(), (fragment))) {         \
      fprintf(stderr, "FAIL line %d: %s -> %d '%s' (expected %d, '%s')\n",     \
              __LINE__, #call, got, kiln_last_error(), expected, fragment);    \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  kiln_model *model = NULL;
  EXPECT_STATUS(kiln_model_load(NULL, &model), KILN_ERROR_INVALID_ARGUMENT,
                "must not be null");
  EXPECT_STATUS(kiln_model_load("/nonexistent/model.so", &model),
                KILN_ERROR_LOAD, "cannot load '/nonexistent/model.so'");
  /* A file that is not a shared library, and one that is not a model. */
  EXPECT_STATUS(kiln_model_load(argv[2], &model), KILN_ERROR_LOAD,
                "invalid ELF header");
  EXPECT_STATUS(kiln_model_load("libm.so.6", &model), KILN_ERROR_NOT_A_MODEL,
                "'libm.so.6' is not a kiln model");
  EXPECT_STATUS(kiln_model_load(argv[1], &model), KILN_OK, "");
  if (!model)
    return 1;

  kiln_tensor_info info;
  EXPECT_STATUS(kiln_model_input_info(model, 1, &info),
                KILN_ERROR_INVALID_ARGUMENT, "input index 1 is out of range");
  EXPECT_STATUS(kiln_model_input_info(model, 0, &info), KILN_OK, "");
  if (info.rank != 2 || info.dims[0] != 2 || info.dims[1] != 3 ||
      info.dtype != KILN_DTYPE_F32 || strcmp(info.name, "X") != 0) {
    fprintf(stderr, "FAIL: wrong input signature\n");
    ++failures;
  }
  if (!strstr(kiln_model_signature_json(model), "\"shape\": [2, 3]")) {
    fprintf(stderr, "FAIL: signature JSON %s\n", kiln_model_signature_json(model));
    ++failures;
  }

  kiln_context *context = NULL;
  EXPECT_STATUS(kiln_context_create(model, NULL), KILN_ERROR_INVALID_ARGUMENT,
                "must not be null");
  EXPECT_STATUS(kiln_context_create(model, &context), KILN_OK, "");

  float in[6] = {-1, 2, -3, 4, -5, 6}, out[6] = {0};
  int64_t dims[2] = {2, 3}, wrong[2] = {3, 2};
  kiln_tensor input = {KILN_DTYPE_F32, 2, dims, in};
  kiln_tensor output = {KILN_DTYPE_F32, 2, dims, out};

  kiln_tensor bad = input;
  bad.dims = wrong;
  EXPECT_STATUS(kiln_run(context, &bad, 1, &output, 1), KILN_ERROR_SHAPE,
                "input 0 ('X') has shape [3x2]; the model expects [2x3]");
  bad = input;
  bad.rank = 1;
  EXPECT_STATUS(kiln_run(context, &bad, 1, &output, 1), KILN_ERROR_SHAPE,
                "has shape [2]");
  bad = input;
  bad.dtype = KILN_DTYPE_I32;
  EXPECT_STATUS(kiln_run(context, &bad, 1, &output, 1), KILN_ERROR_DTYPE,
                "input 0 ('X') is i32; the model expects f32");
  bad = input;
  bad.data = NULL;
  EXPECT_STATUS(kiln_run(context, &bad, 1, &output, 1),
                KILN_ERROR_INVALID_ARGUMENT, "input 0 ('X') has no data");
  bad = output;
  bad.data = NULL;
  EXPECT_STATUS(kiln_run(context, &input, 1, &bad, 1),
                KILN_ERROR_INVALID_ARGUMENT, "output 0 ('Y') has no data");
  EXPECT_STATUS(kiln_run(context, &input, 2, &output, 1),
                KILN_ERROR_INVALID_ARGUMENT, "takes 1 inputs and 1 outputs");
  bad = output;
  bad.data = in + 3; /* overlaps the input buffer */
  EXPECT_STATUS(kiln_run(context, &input, 1, &bad, 1),
                KILN_ERROR_INVALID_ARGUMENT, "output 0 overlaps input 0");
  EXPECT_STATUS(kiln_run(NULL, &input, 1, &output, 1),
                KILN_ERROR_INVALID_ARGUMENT, "null context");

  /* The device entry points refuse a CPU model, naming themselves. */
  EXPECT_STATUS(kiln_run_device(context, &input, 1, &output, 1),
                KILN_ERROR_INVALID_ARGUMENT,
                "kiln_run_device: the model was compiled for the CPU");
  EXPECT_STATUS(kiln_run_device_async(context, NULL, &input, 1, &output, 1),
                KILN_ERROR_INVALID_ARGUMENT,
                "kiln_run_device_async: the model was compiled for the CPU");
  EXPECT_STATUS(kiln_run(context, &input, 1, &output, 1), KILN_OK, "");
  for (int i = 0; i < 6; ++i)
    if (out[i] != (in[i] > 0 ? in[i] : 0)) {
      fprintf(stderr, "FAIL: relu output %d is %g\n", i, out[i]);
      ++failures;
    }

  kiln_context_destroy(context);

  /* A context with a thread pool; and a bad thread count. */
  EXPECT_STATUS(kiln_context_create_with_threads(model, 0, &context),
                KILN_ERROR_INVALID_ARGUMENT,
                "num_threads must be between 1 and 1024, got 0");
  EXPECT_STATUS(kiln_context_create_with_threads(model, 3, &context), KILN_OK,
                "");
  for (int run = 0; run < 3; ++run) {
    memset(out, 0, sizeof out);
    EXPECT_STATUS(kiln_run(context, &input, 1, &output, 1), KILN_OK, "");
    for (int i = 0; i < 6; ++i)
      if (out[i] != (in[i] > 0 ? in[i] : 0)) {
        fprintf(stderr, "FAIL: relu output %d is %g on 3 threads\n", i, out[i]);
        ++failures;
      }
  }
  kiln_context_destroy(context);
  kiln_model_unload(model);
  kiln_context_destroy(NULL);
  kiln_model_unload(NULL);
  if (failures == 0)
    printf("runtime API: all checks passed\n");
  return failures ? 1 : 0;
}
