//===- Passes.td - kiln dialect passes ---------------------*- tablegen -*-===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnShapeInference : Pass<"kiln-shape-inference", "::mlir::func::FuncOp"> {
  let summary = "Propagate static shapes through a function from its arguments";
  let description = [{
    Visits the ops of a function in order and refines every result type to
    what the op infers from its (already refined) operands, then updates the
    function's result types to match its `func.return`. A declared type that
    conflicts with the inferred one (different rank, element type or a
    different static size) is an error naming the op, both types and the
    operands' types. An op that cannot infer (for example a matmul whose K
    dims disagree) reports why.
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFoldConstants : Pass<"kiln-fold-constants"> {
  let summary = "Evaluate small integer/shape subgraphs at compile time";
  let description = [{
    Folds kiln ops whose operands are constants into constants, as exporters'
    shape subgraphs need (Shape -> Gather -> Concat -> Reshape, Cast, integer
    arithmetic), then rewrites shape-tensor operands that became constant
    into attributes. Only integer and bool tensors with at most
    `max-elements` elements are evaluated, so weights are never expanded.
    Unlike `canonicalize` it applies no other rewrites.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"4096",
           "Largest constant (in elements) the pass may create">
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnRecomposeOps : Pass<"kiln-recompose-ops", "::mlir::func::FuncOp"> {
  let summary = "Recognize composite ops written out in primitive ops";
  let description = [{
    Replaces GELU written out by exporters with one `kiln.gelu`, so that code
    generation can use a cheaper equivalent formula:
    `0.5 * x * (1 + erf(x / sqrt(2)))` becomes `kiln.gelu none` and
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` becomes
    `kiln.gelu tanh`, in any association and operand order of the products
    (constants within a relative 1e-5). Intermediate values used elsewhere
    stay.
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFuseKernels : Pass<"kiln-fuse-kernels", "::mlir::func::FuncOp"> {
  let summary = "Group ops into kernel regions, one generated kernel each";
  let description = [{
    Forms `kiln.kernel` regions by the roofline rules of docs/fusion.md:
    elementwise chains (with broadcasts and transposes) merge; a matmul or
    convolution absorbs its same-shape elementwise epilogue; a reduction or
    softmax absorbs its elementwise producers and consumers and other
    reductions over the same axes; every other op is a kernel of its own;
    constants, shape_of and reshapes stay outside. A value used outside its
    kernel is yielded. Merges that would make two kernels depend on each
    other are refused, and a kernel stops growing at `max-ops` ops or
    `max-inputs` tensor inputs. Running it on a function that already has
    kernels does nothing.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"48",
           "Most ops in one kernel">,
    Option<"maxInputs", "max-inputs", "int64_t", /*default=*/"12",
           "Most tensor inputs (besides constants) of one kernel">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnAutocast : Pass<"kiln-autocast", "::mlir::func::FuncOp"> {
  let summary = "Run matrix products in half precision, the rest in f32";
  let description = [{
    The mixed-precision policy of `kiln-compile --precision=fp16|bf16`: every
    f32 `kiln.matmul` and dense `kiln.conv` (one group; im2col + a GEMM on
    the CUDA target) reads its operands converted to `type` (f16 or bf16;
    constant weights are converted at compile time, halving their size)
    and its result is converted back to f32 for its consumers (a
    convolution's constant bias is added after that, in f32). Everything
    else -- elementwise chains, reductions, softmax, layer norms, grouped
    and depthwise convolutions, model inputs and outputs -- stays f32. The conversions are
    elementwise ops, so fusion folds them into the kernels that produce or
    consume the half-precision tensors: activations between a producer and
    a matrix product are stored in half precision, and arithmetic happens
    in f32 registers. On the CUDA target the products run on tensor cores
    through cuBLAS with f32 accumulation.
  }];
  let options = [
    Option<"type", "type", "std::string", /*default=*/"\"f16\"",
           "The half-precision type: f16 or bf16">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnSplitBatch : Pass<"kiln-split-batch", "::mlir::func::FuncOp"> {
  let summary = "Run a batched network's large first layers one image at a time";
  let description = [{
    At batch N, each kernel of a convolutional network writes all N images'
    activations before the next kernel reads them back: where one image's
    activations are large (MobileNetV2's 112 x 112 layers, 1.6-4.8 MB an
    image), N of them leave the caches between every two layers, while one
    image's stay in L2. This pass runs such layers image by image.

    It walks the function's ops in order from its batched arguments (static
    dim 0 = N > 1) and collects the region of ops that each image can run
    alone: convolutions and pools of a batched input, transposes and pads
    that leave dim 0 alone, and elementwise ops whose batched operands (dim
    0 = N) all come from the region (their other operands broadcast over
    the batch). A convolution or pool joins when
    it is large (its input or result takes at least `min-image-bytes` an
    image) or when it shrinks a value of the region (the batch is then
    joined after it, smaller). The first op that reads the region or a
    batched argument and does not join ends it. The region's ops are then cloned once per image,
    on the arguments' `kiln.split` pieces, with dim 0 of every type 1; the
    values used after the region are joined by `kiln.concat`. Each piece
    gets its own copy of the region's code, so a batch of more than
    `max-pieces` images is cut into `max-pieces` pieces of several images
    (as even as whole pieces allow, the last one smaller). Functions
    without such a region are left alone.

    With `lanes` > 1, the pieces are dealt out in order to that many lanes
    (contiguous runs of pieces, as even as whole pieces allow): each cloned
    op gets its lane as `kiln.lane`, which kiln-fuse-kernels carries to
    its kernel and kiln-form-lanes turns into one iteration of a parallel
    loop, so that each lane's pieces run one after another on one thread
    and the lanes on different threads.
  }];
  let options = [
    Option<"minImageBytes", "min-image-bytes", "int64_t",
           /*default=*/"1048576",
           "Smallest per-image input or result of a convolution or pool "
           "that joins the region">,
    Option<"maxPieces", "max-pieces", "int64_t", /*default=*/"16",
           "Most pieces (copies of the region) a batch is cut into">,
    Option<"lanes", "lanes", "int64_t", /*default=*/"1",
           "Lanes the pieces are dealt out to, each run on one thread (1: "
           "the pieces one after another, each kernel across the threads)">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnSplitGroupedConvs
    : Pass<"kiln-split-grouped-convs", "::mlir::func::FuncOp"> {
  let summary = "Run a grouped convolution as one dense convolution per group";
  let description = [{
    Each `kiln.conv` with 1 < `groups` <= `max-groups`, more than one input
    channel a group and at least `min-group-channels` output channels a
    group (static f32 shapes, constant filters) becomes `groups`
    convolutions with groups = 1: group g reads the g-th `kiln.split` piece
    of the input along the channels, with filters (and bias) that are the
    g-th slice of the original's, as new constants; `kiln.concat` joins the
    results along the channels, after the unary elementwise ops (ReLU,
    ReLU6) that only the convolution's result feeds, which run on each
    group's result. Each group then gets the kernels of a dense convolution
    (implicit GEMM or im2col with its filters packed at compile time,
    Winograd) instead of the generic loop nest grouped convolutions lower
    to: 3x3 256 -> 256 in 4 groups at 14x14, 6.9 -> 0.42 ms; ResNeXt's 3x3
    128 -> 128 in 32 groups (4 channels each) at 56x56, 2.15 -> 0.55 ms (1
    thread). Each group is a kernel of its own, compiled apart (0.2-0.8 s
    each), hence `max-groups`. One f32 image of a convolution of more
    groups runs as one matmul batched over the groups
    (convert-kiln-to-linalg with implicit-gemm-convs: an implicit GEMM or
    windowed rows, as a dense convolution would), and a batch of several as
    a loop nest. That matmul, its groups laid out and run in parallel, runs
    as fast as the split where each group's dense convolution would take
    the same form: at most `batched-group-channels` input channels a group
    (no Winograd) and, for a strided window, at least 16 groups (run in
    parallel), so one image of such a convolution is not split
    (ResNeXt's 3x3 in 32 groups of 4, 8 and 16 channels at 56x56, 28x28,
    14x14: 0.51 / 0.60 / 0.37 ms batched, 0.57 / 0.84 / 0.39 split, which
    took 7-13 s to compile; its 3x3 / 2 at 56x56 and 28x28 on 2 threads
    0.50 / 0.29 ms batched, 0.91 / 0.44 split, alike on 1).
    Depthwise convolutions (one input channel a group) are left alone.
    The ops that replace a convolution of a lane (`kiln.lane`,
    kiln-split-batch) run in that lane too. kiln-compile runs the pass for
    the CPU target only.
  }];
  let options = [
    Option<"minGroupChannels", "min-group-channels", "int64_t",
           /*default=*/"2",
           "Fewest output channels a group of a split convolution has">,
    Option<"maxGroups", "max-groups", "int64_t", /*default=*/"32",
           "Most groups a split convolution has">,
    Option<"batchedGroupChannels", "batched-group-channels", "int64_t",
           /*default=*/"16",
           "Most input channels a group of a convolution of one image has "
           "that is left to the matmul batched over the groups (0: split "
           "all)">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

#endif // KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
