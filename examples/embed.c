/* Embedding a kiln model in a C program: load model.so, describe its
 * signature, run it on a buffer the program owns, print the outputs.
 *
 *   kiln-compile examples/mlp.onnxtext --dim batch=1 -o mlp.so
 *   cc examples/embed.c -Iinclude -Lbuild/lib -lKilnRuntime -lstdc++ -ldl
 *   ./a.out ./mlp.so
 */

#include "kiln/runtime.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.so\n", argv[0]);
    return 2;
  }
  kiln_model *model;
  if (kiln_model_load(argv[1], &model) != KILN_OK) {
    fprintf(stderr, "error: %s\n", kiln_last_error());
    return 1;
  }
  printf("signature: %s\n", kiln_model_signature_json(model));

  /* One f32 buffer per input and output, sized from the signature. */
  int32_t num_inputs = kiln_model_num_inputs(model);
  int32_t num_outputs = kiln_model_num_outputs(model);
  kiln_tensor *tensors = calloc(num_inputs + num_outputs, sizeof *tensors);
  for (int32_t i = 0; i < num_inputs + num_outputs; ++i) {
    kiln_tensor_info info;
    if (i < num_inputs)
      kiln_model_input_info(model, i, &info);
    else
      kiln_model_output_info(model, i - num_inputs, &info);
    size_t elements = 1;
    for (int32_t d = 0; d < info.rank; ++d)
      elements *= (size_t)info.dims[d];
    float *data = calloc(elements ? elements : 1, sizeof(float));
    for (size_t k = 0; i < num_inputs && k < elements; ++k)
      data[k] = (float)k / (float)elements; /* a simple ramp as input */
    tensors[i] = (kiln_tensor){info.dtype, info.rank, info.dims, data};
  }

  kiln_context *context;
  int status = 0;
  if (kiln_context_create(model, &context) != KILN_OK ||
      kiln_run(context, tensors, (size_t)num_inputs, tensors + num_inputs,
               (size_t)num_outputs) != KILN_OK) {
    fprintf(stderr, "error: %s\n", kiln_last_error());
    status = 1;
  } else {
    for (int32_t o = 0; o < num_outputs; ++o) {
      kiln_tensor_info info;
      kiln_model_output_info(model, o, &info);
      printf("%s:", info.name);
      size_t elements = 1;
      for (int32_t d = 0; d < info.rank; ++d)
        elements *= (size_t)info.dims[d];
      for (size_t k = 0; k < elements && k < 8; ++k)
        printf(" %g", ((float *)tensors[num_inputs + o].data)[k]);
      printf("\n");
    }
    kiln_context_destroy(context);
  }
  for (int32_t i = 0; i < num_inputs + num_outputs; ++i)
    free(tensors[i].data);
  free(tensors);
  kiln_model_unload(model);
  return status;
}
