#!/usr/bin/env python3
"""End-to-end: models compiled to model.so by kiln-compile and run by
kiln-run must match ONNX Runtime (the reference) on the same random inputs:
|kiln - ort| <= 1e-5 + 1e-4 * |ort| elementwise (f32).

Models: an MLP, a ResNet-style CNN (224x224; on the CPU target also at batch
3, its layers run image by image down to 8 KiB an image, or in pieces of 2
and 1 images: kiln-split-batch, and image by image on 2 lanes of 2 and 1
images, each lane on one thread),
a BERT-style encoder layer, a GPT-style decoder block with a causal mask,
a model whose outputs are reshapes of computed values and a feature
pyramid's nearest resizes (up by 2, 4 and 3, down by 2) and a segmentation
head's bilinear ones (up by 2, 3 and 8, align_corners, down by 2), all with random
weights (fixed seeds). Each runs on 1 thread and on a pool
of 2.

Usage: e2e_vs_onnxruntime.py BIN_DIR
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Frontend", "ONNX",
                                "Inputs"))
import make_models  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


def mlp():
    g = make_models.GraphBuilder(seed=2)
    x = "x"
    for fan_in, fan_out in ((128, 256), (256, 128)):
        x = g.op("Relu", [g.op("Gemm", [x, g.weight("w", [fan_in, fan_out], 0.1),
                                         g.weight("b", [fan_out], 0.1)])])
    logits = g.op("Gemm", [x, g.weight("w", [128, 10], 0.1), g.weight("b", [10])])
    g.nodes.append(helper.make_node("Softmax", [logits], ["probs"], axis=-1))
    graph = helper.make_graph(
        g.nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 128])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [8, 10])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {}


def resnet_cnn(batch=1):
    class Args:
        pass
    return make_models.resnet(Args()), {"batch": batch}


def bert_layer():
    class Args:
        hidden, layers, heads, vocab = 64, 1, 4, 100
    return make_models.bert(Args()), {"batch": 2, "seq": 16}


def gpt_block():
    """Pre-LN decoder block: causal self-attention and a tanh-GELU MLP."""
    g = make_models.GraphBuilder(seed=3)
    hidden, heads, seq = 64, 4, 16
    head_dim = hidden // heads
    x = "x"
    h = make_models.layer_norm(g, x, hidden)
    split = g.const("split", [1, seq, heads, head_dim])

    def heads_of(t, perm):
        return g.op("Transpose", [g.op("Reshape", [t, split])], perm=perm)

    q = heads_of(make_models.linear(g, h, hidden, hidden), [0, 2, 1, 3])
    k = heads_of(make_models.linear(g, h, hidden, hidden), [0, 2, 3, 1])
    v = heads_of(make_models.linear(g, h, hidden, hidden), [0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [q, k]),
                          g.const("scale", 1.0 / np.sqrt(head_dim), np.float32)])
    ones = g.const("ones", np.ones((seq, seq)), np.float32)
    causal = g.op("Cast", [g.op("Trilu", [ones], upper=0)], to=TensorProto.BOOL)
    masked = g.op("Where", [causal, scores, g.const("neg", -1e9, np.float32)])
    probs = g.op("Softmax", [masked], axis=-1)
    context = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])],
                                    perm=[0, 2, 1, 3]),
                               g.const("merge", [1, seq, hidden])])
    x = g.op("Add", [x, make_models.linear(g, context, hidden, hidden)])
    h = make_models.linear(g, make_models.layer_norm(g, x, hidden), hidden, 4 * hidden)
    cube = g.op("Mul", [g.op("Mul", [h, h]), h])
    inner = g.op("Mul", [g.op("Add", [h, g.op("Mul", [cube, g.const("c", 0.044715, np.float32)])]),
                         g.const("s", np.sqrt(2 / np.pi), np.float32)])
    gelu = g.op("Mul", [g.op("Mul", [h, g.const("half", 0.5, np.float32)]),
                        g.op("Add", [g.op("Tanh", [inner]), g.const("one", 1.0, np.float32)])])
    out = g.op("Add", [x, make_models.linear(g, gelu, 4 * hidden, hidden)])
    g.nodes.append(helper.make_node("Identity", [out], ["y"]))
    graph = helper.make_graph(
        g.nodes, "gpt_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), {}


def reshaped_outputs():
    """Outputs that are reshapes of computed values, which kiln writes in
    place rather than copying them (kiln-elide-output-copies): a bias-free
    1x1 convolution (a [C, H * W] matrix), the Flatten of its ReLU, and the
    ReLU itself too (one value, two outputs)."""
    g = make_models.GraphBuilder(seed=4)
    conv = g.op("Conv", ["x", g.weight("w", [24, 16, 1, 1], 0.2)])
    relu = g.op("Relu", [conv])
    g.nodes.append(helper.make_node("Identity", [conv], ["conv"]))
    g.nodes.append(helper.make_node("Flatten", [relu], ["flat"], axis=1))
    g.nodes.append(helper.make_node("Identity", [relu], ["relu"]))
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
               for name, shape in (("conv", [2, 24, 8, 8]), ("flat", [2, 1536]),
                                   ("relu", [2, 24, 8, 8]))]
    graph = helper.make_graph(
        g.nodes, "reshaped_outputs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 8, 8])], outputs,
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {}


def fpn_upsample():
    """A feature pyramid's top-down step: the coarser map upsampled by 2
    with a nearest Resize (ONNX's default half_pixel / round_prefer_floor:
    each element repeated, a copy kiln vectorizes with shuffles; rows of 26
    and 104: ragged vectors), added to the lateral map; then by 4 with
    asymmetric / floor, an upsampling by 3 (a copy read element by
    element), and the lateral map downsampled by 2 (every other element: a
    strided copy)."""
    g = make_models.GraphBuilder(seed=5)
    up = g.op("Resize", ["coarse", "", g.const("scales2", [1, 1, 2, 2], np.float32)],
              mode="nearest")
    merged = g.op("Add", [up, "lateral"])
    g.nodes.append(helper.make_node(
        "Resize", [merged, "", g.const("scales4", [1, 1, 4, 4], np.float32)], ["up4"],
        mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    g.nodes.append(helper.make_node(
        "Resize", ["coarse", "", g.const("scales3", [1, 1, 3, 3], np.float32)], ["up3"],
        mode="nearest"))
    g.nodes.append(helper.make_node(
        "Resize", ["lateral", "", g.const("half", [1, 1, 0.5, 0.5], np.float32)],
        ["down2"], mode="nearest"))
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
               for name, shape in (("up4", [2, 40, 104, 104]),
                                   ("up3", [2, 40, 39, 39]),
                                   ("down2", [2, 40, 13, 13]))]
    graph = helper.make_graph(
        g.nodes, "fpn_upsample",
        [helper.make_tensor_value_info("coarse", TensorProto.FLOAT, [2, 40, 13, 13]),
         helper.make_tensor_value_info("lateral", TensorProto.FLOAT, [2, 40, 26, 26])],
        outputs, g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {}


def linear_upsample():
    """A segmentation head's bilinear resizes, which kiln runs one dim at a
    time: along rows from per-index tables, along the innermost dim by
    periods where its indices repeat (the phases unrolled, the clamped
    edges from tables) and from tables where they do not. Up by 2
    (half_pixel, ONNX's default) and added to the lateral map; align_corners
    from 9 x 13 to 33 x 49 (a period of 4 outputs, one input a step); the
    sum up by 3 (pytorch_half_pixel); by 8 from 4 x 5 (rows of 5 periods);
    the lateral map down by 2 (every other input: a stride of 2); and
    align_corners from 9 x 13 to 20 x 30 (no period: tables)."""
    g = make_models.GraphBuilder(seed=6)

    def resize(x, name, scales=None, sizes=None, **attrs):
        inputs = ([x, "", g.const(name + "_scales", scales, np.float32)] if scales
                  else [x, "", "", g.const(name + "_sizes", sizes)])
        g.nodes.append(helper.make_node("Resize", inputs, [name], mode="linear", **attrs))
        return name

    merged = g.op("Add", [resize("coarse", "up2", scales=[1, 1, 2, 2]), "lateral"])
    resize("coarse", "up4_corners", sizes=[2, 12, 33, 49],
           coordinate_transformation_mode="align_corners")
    resize(merged, "up3", scales=[1, 1, 3, 3],
           coordinate_transformation_mode="pytorch_half_pixel")
    resize("tiny", "up8", scales=[1, 1, 8, 8])
    resize("lateral", "down2", scales=[1, 1, 0.5, 0.5])
    resize("coarse", "corners_ragged", sizes=[2, 12, 20, 30],
           coordinate_transformation_mode="align_corners")
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
               for name, shape in (("up4_corners", [2, 12, 33, 49]),
                                   ("up3", [2, 12, 54, 78]),
                                   ("up8", [2, 12, 32, 40]),
                                   ("down2", [2, 12, 9, 13]),
                                   ("corners_ragged", [2, 12, 20, 30]))]
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
              for name, shape in (("coarse", [2, 12, 9, 13]),
                                  ("lateral", [2, 12, 18, 26]),
                                  ("tiny", [2, 12, 4, 5]))]
    graph = helper.make_graph(g.nodes, "linear_upsample", inputs, outputs, g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {}


def random_inputs(model, dims, rng):
    inputs = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        shape = [d.dim_value or dims[d.dim_param] for d in tensor.shape.dim]
        if tensor.elem_type == TensorProto.INT64:
            high = 100 if "ids" in value.name else 2
            array = rng.integers(0 if high > 2 else 1, high, size=shape, dtype=np.int64)
        else:
            array = rng.standard_normal(shape).astype(np.float32)
        inputs[value.name] = array
    return inputs


def check(name, model, dims, bin_dir, work, compile_args=(), rtol=RTOL, atol=ATOL):
    """Compiles `model` with kiln (plus `compile_args`), runs it on random
    inputs and compares every output with ONNX Runtime's."""
    rng = np.random.default_rng(0)
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    inputs = random_inputs(model, dims, rng)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    expected = session.run(None, inputs)

    library = os.path.join(work, name + ".so")
    dim_args = [f"--dim={k}={v}" for k, v in dims.items()]
    compiled = subprocess.run([os.path.join(bin_dir, "kiln-compile"), path, "-o", library]
                              + dim_args + list(compile_args), check=True,
                              stderr=subprocess.PIPE, text=True)
    sys.stderr.write(compiled.stderr)
    # A warning means a fallback (kiln-form-lanes leaving the lanes one after
    # another): the outputs may still match, but the build is not the one
    # the flags ask for.
    if "warning:" in compiled.stderr:
        print(f"{name}: FAILED, kiln-compile warned")
        return False
    args = []
    for input_name, array in inputs.items():
        npy = os.path.join(work, f"{name}.{input_name}.npy")
        np.save(npy, array)
        args.append(f"--input={input_name}={npy}")
    ok = True
    # One thread, and the thread pool splitting every parallel loop. Two runs
    # on one context, the outputs NaN before each: the second's are checked
    # (nothing left unwritten, nothing read from what the first left).
    for threads in (1, 2):
        out_dir = os.path.join(work, f"{name}.out{threads}")
        os.makedirs(out_dir, exist_ok=True)
        subprocess.run([os.path.join(bin_dir, "kiln-run"), library, "--output-dir", out_dir,
                        f"--threads={threads}", "--runs=2"] + args, check=True,
                       stdout=subprocess.DEVNULL)
        for output, reference in zip(model.graph.output, expected):
            actual = np.load(os.path.join(out_dir, output.name + ".npy"))
            error = np.abs(actual - reference)
            bound = atol + rtol * np.abs(reference)
            worst = float(np.max(error - bound))
            status = "ok" if worst <= 0 else "MISMATCH"
            ok &= worst <= 0
            print(f"{name}/{output.name} ({threads} thread{'s' if threads > 1 else ''}): "
                  f"{status}, max |kiln - ort| = {error.max():.3g} (max relative "
                  f"{float(np.max(error / (np.abs(reference) + 1e-30))):.3g})")
    return ok


def main():
    bin_dir = sys.argv[1]
    # Extra kiln-compile flags, e.g. --emulate-gpu (the CUDA mapping on the
    # CPU); --tolerance=RTOL,ATOL replaces the comparison's tolerance (for
    # --precision=fp16/bf16).
    compile_args = [a for a in sys.argv[2:] if not a.startswith("--tolerance=")]
    rtol, atol = RTOL, ATOL
    for a in sys.argv[2:]:
        if a.startswith("--tolerance="):
            rtol, atol = (float(v) for v in a.split("=", 1)[1].split(","))
    models = {"mlp": mlp(), "resnet_cnn": resnet_cnn(), "bert_layer": bert_layer(),
              "gpt_block": gpt_block(), "reshaped_outputs": reshaped_outputs(),
              "fpn_upsample": fpn_upsample(), "linear_upsample": linear_upsample()}
    # The CPU target's run also checks a batched CNN split through most of
    # its layers (every convolution or pool of at least 8 KiB an image):
    # image by image, in pieces of 2 and 1 images, and image by image on 2
    # lanes; the CUDA mapping keeps batches whole.
    model_args = {"resnet_cnn_batch3_split": ["--split-batch-bytes=8192",
                                              "--split-batch-lanes=1"],
                  "resnet_cnn_batch3_pieces": ["--split-batch-bytes=8192",
                                               "--split-batch-pieces=2",
                                               "--split-batch-lanes=1"],
                  "resnet_cnn_batch3_lanes": ["--split-batch-bytes=8192",
                                              "--split-batch-lanes=2"]}
    if not compile_args:
        for name in model_args:
            models[name] = resnet_cnn(batch=3)
    with tempfile.TemporaryDirectory() as work:
        results = [check(name, model, dims, bin_dir, work,
                         list(compile_args) + model_args.get(name, []), rtol, atol)
                   for name, (model, dims) in models.items()]
    print(f"{sum(results)} of {len(results)} models match ONNX Runtime "
          f"(rtol {rtol}, atol {atol})")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
