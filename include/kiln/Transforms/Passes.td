//===- Passes.td - kiln code generation passes -------------*- tablegen -*-===//
//
// Passes that run after lowering out of the kiln dialect: on linalg, on
// bufferized memrefs, on math.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PASSES_TD
#define KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FormLanes : Pass<"kiln-form-lanes", "::mlir::ModuleOp"> {
  let summary = "Run the lanes of a batch's image-by-image layers in parallel";
  let description = [{
    Runs on bufferized code, before kiln-plan-memory. In each function, the
    top-level ops from the first `kiln_lane_begin(i)` call to the last
    `kiln_lane_end(i)` (kiln-inline-kernels' markers around each lane's run
    of kernels, include/kiln/Transforms/Lanes.h) become an `scf.parallel`
    over the lanes, marked `kiln.lanes`, whose body is an `scf.index_switch`
    on the lane: case i runs lane i's ops in their order. Ops of the span
    that no lane owns, and ops of a lane whose results another lane or the
    code after the span uses (a weight's view shared by CSE, the buffer of
    a piece's result), move before the loop, after the ops defining their
    operands, when they are allocations or free of memory effects. Then no
    lane may write a buffer (traced through views from each op's memory
    effects) that another lane reads or writes. Otherwise (a shared op
    that writes memory, such a buffer, an op whose effects are unknown), or
    when the markers do not bracket one run of ops per lane, numbered from
    0, the pass warns and leaves the ops in order, lanes one after another.
    The markers and their declarations are erased.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def PlanMemory : Pass<"kiln-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Give every intermediate buffer a static offset in one arena";
  let description = [{
    Runs on bufferized code. In every public function with a body, each
    `memref.alloc` of a static shape becomes a `memref.view` into a new
    trailing argument, the arena (`memref<Nxi8>`). Offsets come from
    liveness over the function's top-level ops (a buffer lives from its
    allocation to the last top-level op that uses it or any view of it) and
    first-fit interval packing, largest buffers first, each aligned to 64
    bytes. The pass records `kiln.arena_bytes` (the arena size) and
    `kiln.intermediate_bytes` (the sum of all planned buffers, what one
    allocation per buffer would need) on the function. Deallocations of
    planned buffers are removed; nothing is allocated at run time.

    Small buffers (up to `max-stack-buffer-bytes`, at most `max-stack-bytes`
    in all, allocated at the function's top level) become entry-block stack
    slots instead (`kiln.stack_bytes`): a reduction's accumulator on the
    stack is provably distinct from the arena data it reads, so LLVM keeps it
    in registers and vectorizes the reduction. A buffer allocated inside a
    parallel loop (a row tile's temporaries) becomes a stack slot of the
    loop body if it is at most `max-stack-bytes`, an error otherwise;
    kiln-outline-parallel-loops hoists such slots to the function entry.

    The buffers allocated in the lanes of a `kiln.lanes` loop
    (kiln-form-lanes), outside any parallel loop of their own, are placed
    in the arena, whatever their size: each lane runs on its own thread,
    so a lane's buffers overlap those of every other lane of the loop, and
    their lifetimes within the lane follow the lane's ops in order. Buffers
    allocated outside the loop and live across it overlap them all. A lane
    buffer used outside its lane is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer in the arena">,
    Option<"maxStackBufferBytes", "max-stack-buffer-bytes", "int64_t",
           /*default=*/"16384",
           "Buffers up to this size become stack slots instead">,
    Option<"maxStackBytes", "max-stack-bytes", "int64_t",
           /*default=*/"131072",
           "Most stack a function's slots may take in all">,
  ];
}

def ElideOutputCopies
    : Pass<"kiln-elide-output-copies", "::mlir::func::FuncOp"> {
  let summary = "Compute reshaped results in their output buffers, not copied";
  let description = [{
    Runs right after buffer-results-to-out-params, which writes each result
    of a function to an output argument: a result that is an allocation
    becomes the argument itself (hoist-static-allocs), but a reshape of one
    (a model ending in Flatten or Reshape, a bias-free convolution's
    [C, H * W] matrix seen as [1, C, H, W]) is copied there, one more pass
    over the whole output. For `memref.copy` of a chain of
    `memref.expand_shape`, `memref.collapse_shape` and `memref.reshape`
    views of a static, identity-layout `memref.alloc` into an argument it
    is the only use of, where no use of the allocation or its views comes
    after the copy, the allocation becomes the same-sized view of the
    argument (collapsed to one dimension and expanded to the allocation's
    shape) and the copy is erased: the producers write the output in
    place.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ApproximateMath : Pass<"kiln-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace transcendental math ops by polynomial approximations";
  let description = [{
    exp, expm1, log, log1p, log2, tanh, erf, sin, cos, atan, atan2, asin,
    acos, cbrt and rsqrt become arith-only polynomial or rational
    approximations (MLIR's math polynomial approximation patterns), so they
    vectorize instead of calling libm once per element. f32 only; f16/bf16
    are computed in f32. Max relative error about 1e-6 (see docs/backend.md).
    exp and exp2 use kiln's own expansion (2^n * p(r), p of degree 5); with
    `ldexp` the 2^n scaling is one ldexp (`llvm.intr.ldexp`; on vectors, whose
    exponent MLIR's op does not take, the LLVM intrinsic called by name), which
    AVX-512 lowers to vscalefps; 16 x f32 vectors call vscalefps directly
    (`llvm.x86.avx512.mask.scalef.ps.512`, n as a float: no conversions), so
    `ldexp` is for AVX-512 targets only; scalar code rounds n with
    `llvm.intr.lrint` (its conversion back shared with ldexp's once
    vectorized); otherwise n is added to p's exponent bits. An exp tagged
    `kiln.nonpositive_operand` (softmax, GELU's tail) skips the overflow
    check.
  }];
  let options = [
    Option<"useLdexp", "ldexp", "bool", /*default=*/"false",
           "Scale by 2^n with llvm.intr.ldexp, and 16 x f32 vectors with "
           "vscalefps (AVX-512 targets only)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def EmulateBF16 : Pass<"kiln-emulate-bf16", "::mlir::ModuleOp"> {
  let summary = "Compute bf16 arithmetic in f32 and bf16 conversions with "
                "integer ops";
  let description = [{
    For x86 CPUs without AVX512-BF16 or AVX-NE-CONVERT (Zen 3, Intel before
    Cooper Lake), where LLVM lowers every f32 -> bf16 rounding, the one
    after each bf16 `fadd` or `fmul` included, to a call of compiler-rt's
    `__truncsfbf2`: `model.so` does not link it (it needs only libc and
    libm), and a call per element would not vectorize either. First, arith
    ops on bf16 become the f32 op between an `arith.extf` and an
    `arith.truncf` (one rounding per op, as before); then every f32 <-> bf16
    `truncf` / `extf` (scalars and vectors) becomes integer arithmetic on
    the bits: truncation rounds to nearest even and keeps NaNs quiet NaNs,
    extension shifts the 16 bits up. The CPU backend runs it for such
    targets only.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def FuseElementwise : Pass<"kiln-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse the linalg ops inside each kernel region into shared loops";
  let description = [{
    Runs after `convert-kiln-to-linalg`. Within each `kiln.kernel` (never
    across two), elementwise `linalg.generic` producers are fused into their
    consumers, so an elementwise chain is one loop nest and a reduction reads
    its producers' inputs directly; unused operands and results are dropped.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TileRows : Pass<"kiln-tile-rows", "::mlir::ModuleOp"> {
  let summary = "Tile reduction kernels by rows into one parallel loop";
  let description = [{
    Runs after `kiln-fuse-elementwise`. A kernel holding a reduction whose
    ops (linalg.generic / fill over the same loops) share leading parallel
    loops (softmax, layernorm, a row sum) is tiled along those row loops with
    `scf.forall`, every op of the kernel fused into the loop: each tile's
    sweeps (max, exp, sum, scale) run over `tile-bytes` of rows that stay in
    L1, and its temporaries are tile-sized. A row bigger than `tile-bytes`,
    or a kernel that would be one tile, is left as is.
  }];
  let options = [
    Option<"tileBytes", "tile-bytes", "int64_t", /*default=*/"16384",
           "Bytes of the kernel's result one tile covers (at least one row)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def InlineKernels : Pass<"kiln-inline-kernels", "::mlir::ModuleOp"> {
  let summary = "Splice each kernel region's body into its parent block";
  let description = [{
    Replaces every `kiln.kernel` by its body (block arguments by the kernel's
    inputs, results by the yielded values), keeping each kernel's ops
    contiguous and in order. With `profile`, the body is bracketed by calls
    to `kiln_profile_begin(i)` and `kiln_profile_end(i)` (i32 kernel index in
    program order; declared as private functions), which the backend
    defines as per-kernel timers (--profile), or which
    kiln-record-fused-kernels reads and erases (--report).

    Each run of consecutive kernels of one lane (`kiln.lane`, from
    kiln-split-batch) is bracketed by calls to `kiln_lane_begin(lane)` and
    `kiln_lane_end(lane)`, outside the profiling calls, which
    kiln-form-lanes reads and erases.
  }];
  let options = [
    Option<"profile", "profile", "bool", /*default=*/"false",
           "Bracket each kernel with profiling calls">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def RecordFusedKernels
    : Pass<"kiln-record-fused-kernels", "::mlir::ModuleOp"> {
  let summary = "Record which kernels lowering merged into others";
  let description = [{
    After the passes that merge two kernels' work (kiln-lower-matmul's
    stores through a transpose and epilogues from the next kernel,
    kiln-lower-window-ops' banded 1x1 convolutions), which remove the
    kiln-inline-kernels{profile} calls between the merged kernels: records
    the indices of the kernels whose `kiln_profile_begin` call is still
    there, in program order, as the module's `kiln.separate_kernels`
    (`array<i32>`). A kernel not listed runs inside the nearest listed one
    before it; kiln-compile's report and profile tables count it there.
    With `strip-hooks` (a --report build without --profile), the calls are
    then erased, so the code that follows is the build's without them.
  }];
  let options = [
    Option<"stripHooks", "strip-hooks", "bool", /*default=*/"false",
           "Erase the kiln_profile_begin/end calls once recorded">,
  ];
}

def LowerMatmul : Pass<"kiln-lower-matmul", "::mlir::ModuleOp"> {
  let summary = "Register-tiled, packed f32 matmul kernels";
  let description = [{
    Runs on bufferized code. Every f32 matmul `linalg.generic` (as
    convert-kiln-to-linalg writes it: batch dims, m, n, k, on dense buffers)
    becomes loops around a register tile of `rows` x (`vectors` x `lanes`)
    accumulators: B packed into panels [N/NR][K][NR] (at compile time into a
    new read-only global when B is a constant), a run-time B and A packed
    ([M/MR][K][MR]) per call only when their row pitch is a multiple of
    2 KiB (L1 set conflicts), read in place otherwise; the k loop issues
    vector.fma on broadcasts of A.
    A zero linalg.fill of the output right before the matmul is folded into
    the accumulators. Other matmuls (integers, broadcast batch dims) are
    left to the generic loop lowering.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 lanes of a vector register (16: AVX-512, 8: AVX2)">,
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "Rows of the register tile (MR)">,
    Option<"vectors", "vectors", "int64_t", /*default=*/"2",
           "Vector registers per row of the register tile (NR / lanes)">,
    Option<"fma", "fma", "bool", /*default=*/"true",
           "Fused multiply-add (false: a multiply and an add, for CPUs "
           "without FMA, where vector.fma would become calls to fmaf)">,
    Option<"halfRateVectors", "half-rate-vectors", "bool", /*default=*/"false",
           "The CPU runs FMAs of `lanes` lanes at half rate (Zen 4's "
           "512-bit ops on 256-bit pipes): a step of k then takes long "
           "enough to read an operand in place over a long reduction "
           "instead of packing it">,
    Option<"longReduction", "long-reduction", "int64_t", /*default=*/"1024",
           "Steps of k from which a tile whose FMAs run at full rate packs "
           "an operand it would read one row per step (B, a transposed A) "
           "per call: over a long reduction the new cache lines each step "
           "reads outrun the step (kiln-compile gives the target's: 128 on "
           "Zen 1-3, whose L1 fills from L2 too slowly for in-place reads "
           "of 1x1 convolutions' inputs; 1024 elsewhere)">,
    Option<"l1Ways", "l1-ways", "int64_t", /*default=*/"8",
           "Ways of a core's L1 data cache: with few, the rows of A a tile "
           "reads in place evict each other when their pitch is a multiple "
           "of 2 KiB, and A is packed on every call instead">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"2097152",
           "Bytes of cache a matmul's work items are ordered for: an "
           "operand that fits in half of it (along C's rows, a quarter) is "
           "read again rather than the other read again from further away "
           "(kiln-compile gives the target's: twice a core's L2, 2 MiB on "
           "Zen 4 and 4 MiB on Intel's server cores, the host's own when "
           "compiling for it; 16 MiB on Zen 5, whose L3 serves such "
           "re-reads fast)">,
    Option<"kUnroll", "k-unroll", "int64_t", /*default=*/"1",
           "Steps of k per iteration of a tile's k loop (the rest in a "
           "loop of single steps): the loop's counter, branch and the "
           "next panel's prefetch are then paid once per this many steps, "
           "which pays where a step is short (AVX2's 6 x 16 tile: 4)">,
    Option<"shapeTiles", "shape-tiles", "bool", /*default=*/"true",
           "Whether a matmul's shape and operands may change the target's "
           "tile: with 16 lanes and 3 vectors a row (full-rate AVX-512), a "
           "plain matmul at most 128 columns wide that needs fewer "
           "64-column panels than 48-column ones (attention's P V and Q "
           "K^T) takes a 6 x 4-vector tile; with 8 lanes, 4 rows and 3 "
           "vectors (AVX2), one whose B is not a constant takes 6 x 2">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at each lowered matmul: its shape and kind, the "
           "register tile, how A and B are read (packed at compile time, "
           "packed per call, in place), the work items the thread pool "
           "shares out and their order, and the slices of k">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerWindowOps : Pass<"kiln-lower-window-ops", "::mlir::ModuleOp"> {
  let summary = "Direct vector kernels for f32 depthwise convolution and "
                "pooling";
  let description = [{
    Runs on bufferized code. Every f32 `linalg.depthwise_conv_2d_nchw_chw`,
    `linalg.pooling_nchw_max` and `linalg.pooling_nchw_sum` (stride 1 or 2
    along the row) whose output is filled with the accumulator's identity
    right before it becomes a parallel loop over tasks of channel planes.
    Each plane is laid out in a stack buffer (padded, split into stride
    phases, one row pitch), where every tap of the window is a contiguous
    vector load at a constant offset from the output's position. Wide
    planes take rows of whole vectors (a pitch rounded up to whole vectors
    when that adds at most 1/8 of the lanes), a column of vectors over a
    group of rows loading each window row once for all the rows it serves;
    narrow planes are computed in vectors spanning several rows, their kept
    lanes compacted by a constant shuffle and stored with one masked store.
    The elementwise epilogue (kiln::Epilogue) is applied on the register.
    When the input is a padded copy (a tensor.pad), the unpadded source is
    read instead and the copy erased. Planes of one image with at least 56
    output rows are computed in 4 bands of rows; when the op's input is
    written just before it by a 1x1 convolution that kiln-lower-matmul
    tagged `kiln.column_groups` (its items write groups of pixels), that
    loop is run band by band, each band's groups of pixels right before the
    band's tasks, so that the band's input is read from L2.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 lanes of a vector register (16: AVX-512, 8: AVX2)">,
    Option<"prefetchMinBytes", "prefetch-min-bytes", "int64_t",
           /*default=*/"2097152",
           "The smallest input (all its planes, bytes) whose plane layout "
           "prefetches it 8 KiB ahead, unless a banded producer writes it; "
           "0: none (kiln-compile gives the target's: 2 MiB, none on "
           "Intel's cores)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerWinogradTransforms
    : Pass<"kiln-lower-winograd-transforms", "::mlir::ModuleOp"> {
  let summary = "Vector code for the tile transforms of Winograd convolutions";
  let description = [{
    Runs on bufferized code. The input and output transforms of a Winograd
    F(2x2, 3x3) convolution (linalg.generic ops tagged `kiln.winograd =
    "input"` / `"output"` by convert-kiln-to-linalg) become parallel loops
    over rows of tiles, 16 tiles (one vector) at a time: the input tiles'
    columns split into even and odd ones with shuffles, the transform
    matrices' zero coefficients skipped and their +-1 ones turned into adds
    and subtractions; the output transform's 2x2 outputs interleaved back
    into rows, with the elementwise epilogue (kiln::Epilogue) applied before
    the store.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 lanes of a vector register (16: AVX-512, 8: AVX2)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def VectorizeRowCopies : Pass<"kiln-vectorize-row-copies", "::mlir::ModuleOp"> {
  let summary = "Copy rows (and transpose blocks) of data-movement ops with "
                "vector loads and stores";
  let description = [{
    Runs on bufferized code, before convert-linalg-to-parallel-loops. Every
    linalg op on buffers that is a pure copy (one input, one output, all
    loops parallel, the body yields the input) whose output map is the
    identity and whose input, seen through static subviews, is read along
    the innermost loop with a stride of 1 or 2 (its last result is
    `s * d_last + f(outer dims)`, no other result uses `d_last`, both
    buffers have unit innermost stride) becomes an `scf.parallel` over the
    outer loops (unit loops dropped) in which each row is copied with vector
    loads and stores, the last one masked; a stride-2 row reads two vectors
    per vector stored and keeps their even lanes with one shuffle. This
    covers im2col, a pad's interior copy, the phases of a strided
    convolution's input, slices and concatenation pieces.
    A copy of 32-bit elements whose input map only permutes the loops and
    whose innermost output loop is not the input's innermost one (a
    transpose, at least half a vector each way) becomes blocks of `lanes` x
    `lanes` elements: vectors loaded along the input's rows, transposed in
    registers with shuffles, stored along the output's rows (partial blocks
    masked), in an `scf.parallel` over the other loops and the blocks of
    rows.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "32-bit lanes of a vector register (16: AVX-512, 8: AVX2)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def OutlineParallelLoops
    : Pass<"kiln-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Run outermost parallel loops on the runtime's thread pool";
  let description = [{
    Runs on bufferized code after memory planning. Every public function
    gets a trailing argument, the `kiln_parallel_runtime` of runtime.h (as
    `memref<1xi8>`). Every outermost `scf.parallel` whose first dimension has
    at least 2 iterations and whose loop nest runs at least `min-iterations`
    innermost iterations becomes a private function `kiln_task_N(begin, end,
    captures...)` that runs iterations [begin, end) of the first dimension
    (the rest of the loop unchanged), and a call to `kiln_parallel_N(rt,
    count, captures...)`, a private declaration the backend defines to hand
    the task to the thread pool. Constants, globals and views the loop uses
    are recomputed in the task; function arguments, stack buffers and
    enclosing loop indices are passed. A loop needing anything else stays
    sequential. A `kiln.lanes` loop (kiln-form-lanes) is always outlined,
    whatever its work, or the pass fails; inside its task, each outermost
    loop with enough work becomes a function of its own,
    `kiln_lane_kernel_N(begin, end, captures...)`, called directly on the
    whole loop (the backend keeps LLVM from inlining it). Finally, static
    stack slots inside loop bodies (per-iteration temporaries from
    kiln-plan-memory) move to their function's entry block, one per call of
    the task, so the stack does not grow per iteration.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Least innermost iterations worth a fork-join">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect"];
}

def ExternalizeConstants
    : Pass<"kiln-externalize-constants", "::mlir::ModuleOp"> {
  let summary = "Read the model's constants from one weights buffer argument";
  let description = [{
    For a device target: generated kernels cannot read the host's globals,
    so every constant `memref.global` a public function reads is given an
    aligned offset in one weights buffer, a new trailing argument
    (`memref<Nxi8>`), and each `memref.get_global` becomes a `memref.view`
    of it. The globals stay in the module (the host library keeps their
    data) and the layout is recorded on the function as
    `kiln.constants = [[@global, offset, bytes], ...]` and
    `kiln.weights_bytes`, so the runtime can copy each one to the device
    once per context.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Byte alignment of every constant in the weights buffer">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MapLoopsToGPU : Pass<"kiln-map-loops-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn each top-level loop nest into one GPU kernel launch";
  let description = [{
    Runs on bufferized, memory-planned code whose buffers all live on the
    device. Every top-level `scf.parallel` of a public function becomes a
    `gpu.launch` over its iteration space flattened to one dimension: thread
    `blockIdx.x * block-size + threadIdx.x` runs one iteration (the last
    dimension varies fastest, so neighbouring threads touch neighbouring
    elements and accesses coalesce), guarded against the ragged last block.
    When the last dimension's trip count is a multiple of `vector-width`
    and every store in the loop writes along it, each thread runs that many
    consecutive iterations of it, unrolled; when no load can read what a
    store writes, the copies' loads go first and their stores last, and the
    copies' accesses of consecutive elements of a dense row (the last index
    the loop's, the others the same for every copy) become one
    `vector.load` / `vector.store` (128-bit for f32): LLVM's load/store
    vectorizer merges accesses within a basic block only, and a libdevice
    transcendental between them brings branches. Any other top-level op
    that touches memory (a loop nest with no parallel dimension, a copy)
    becomes a one-thread launch. Pure ops the
    kernels use (constants, index arithmetic, views of the arena or the
    weights) are recomputed inside each kernel, so only whole buffers and
    scalars cross into kernels. All kernels are named for one `gpu.module`,
    `kiln_kernels` (where kiln-map-reductions-to-gpu puts its kernels too:
    the backend embeds one module), `kernel_0`, `kernel_1`, ... in program
    order, for gpu-kernel-outlining.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of a parallel loop's kernel">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"4",
           "Consecutive iterations of the last dimension per thread (for "
           "128-bit accesses of f32), when its trip count is a multiple">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerGPULaunches
    : Pass<"kiln-lower-gpu-launches", "::mlir::ModuleOp"> {
  let summary = "Launch outlined GPU kernels through the kiln runtime";
  let description = [{
    Host side of a device target, after the kernels were compiled (their
    `gpu.binary` or `gpu.module` is erased here). Every public function
    gets a trailing argument, the `kiln_cuda_launcher` of runtime.h (as
    `memref<1xi8>`), and each `gpu.launch_func` of kernel K becomes a call
    `kiln_launch_I(launcher, gx, gy, gz, bx, by, bz, args...)` of a private
    declaration the backend defines (I is the kernel's index in the model's
    kernel table). Calls of the runtime's GEMM (`kiln_gemm_I`, from
    kiln-offload-gemms) get the launcher as their first operand too. The
    kernel names, in index order, are recorded on the module as
    `kiln.gpu_kernels`.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def EmulateGPULaunches
    : Pass<"kiln-emulate-gpu-launches", "::mlir::ModuleOp"> {
  let summary = "Run gpu.launch bodies as loops over blocks and threads";
  let description = [{
    A test mode for the device mapping on a machine without a GPU: every
    `gpu.launch` becomes sequential `scf.for` loops over its grid and block,
    the body reading the loop indices as its block and thread ids. Barriers
    at the top level of a kernel split it into phases: all threads of a
    block run one phase before any runs the next (the barrier's guarantee),
    values cross phases through memory (shared memory is a stack buffer per
    block), as pure computations each phase repeats, or, for a thread's
    registers, through a slot per thread. An xor shuffle at the top level
    of a kernel becomes a store of the thread's value, a barrier and a load
    of its partner's. Other shuffles, shuffles under control flow and
    collective reductions are rejected. The result computes exactly what the
    kernels compute, so the CPU backend can run the conformance and
    end-to-end suites through the mapping.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def OffloadGemms : Pass<"kiln-offload-gemms", "::mlir::ModuleOp"> {
  let summary = "Run matmul-shaped contractions through the runtime's GEMM";
  let description = [{
    For the CUDA target, after bufferization, before the memory plan: every
    `linalg` contraction of a public function that is a (batched) matrix
    product on dense buffers -- one M, one N and one K dimension, any batch
    dimensions leading and in order, each operand either carrying all batch
    dimensions or none (broadcast), either operand stored transposed --
    becomes a call `kiln_gemm_I(A, B, C)` of a private declaration, and the
    zero fill of C before it is dropped (beta = 0). The runtime runs it with
    cuBLAS (tensor cores). When the next op reading C is a generic computing
    exactly `C + bias[col]` or `max(C + bias[col], 0)` (f32, C read by
    nothing else), that generic becomes the GEMM's epilogue: the call is
    `kiln_gemm_I(A, B, D, bias)` writing its output D where it was, and the
    runtime runs it with cuBLASLt's BIAS or RELU_BIAS epilogue. The
    descriptors, by index I, are recorded on the module as `kiln.gemms`
    (row-major: m, n, k, batch, transposes, leading dimensions, batch
    strides in elements, beta, element types, epilogue).
    Contractions of other shapes (convolutions, partially broadcast batches)
    stay loops.
  }];
  let options = [
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "Let f32 GEMMs use TF32 tensor cores (--precision=tf32)">,
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "Define each kiln_gemm_I as loops that compute exactly what its "
           "descriptor tells the runtime (kiln-compile --emulate-gpu)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def FoldTransposes : Pass<"kiln-fold-transposes", "::mlir::ModuleOp"> {
  let summary = "Read transposed operands through permuted indexing maps";
  let description = [{
    On linalg on tensors: every operand of a `linalg.generic` that is the
    result of a `linalg.transpose` is replaced by the transpose's input,
    the operand's indexing map permuted to match, so the transposed tensor
    is never materialized (a transpose left without users is erased). For
    the CUDA target, where a contraction reading a transposed or head-split
    operand still runs as one cuBLAS call (kiln-offload-gemms takes any
    strides) and an elementwise kernel reads any permutation in one pass.
  }];
}

def MapReductionsToGPU
    : Pass<"kiln-map-reductions-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Row kernels: thread blocks over whole rows for reductions "
                "over the last dim and the ops over the same rows around them";
  let description = [{
    Runs on bufferized code, after kiln-offload-gemms and before the memory
    plan and the loops. A `linalg.generic` on buffers whose last loop is its
    only reduction, with a recognized combiner (addf, mulf, max, min), one
    f32 output and at least `min-length` elements per row, anchors a row
    kernel: a `gpu.launch` whose blocks run whole rows. `threadIdx.x` walks
    a row (enough threads for `elements-per-thread` elements each: a power
    of two from a warp up to `block-size`) and `threadIdx.y` picks one of
    the rows that share the block (a power of two dividing the row count,
    up to `block-size` threads in all), so short rows fill the GPU rather
    than the few blocks per SM the hardware allows. The fills and generics over the same rows next to it (only views,
    constants, allocations and deallocations between them) join as stages:
    elementwise ops over the row (thread t takes elements t, t + B, ...),
    reductions (each thread folds its elements with the generic's body, the
    warp combines with xor shuffles, one partial per warp goes through
    shared memory, the row's thread 0 combines them into the output) and ops
    on one value per row (the row's thread 0). A barrier separates stages
    only where a thread reads what another wrote or overwrites what another
    read. Softmax (max,
    exp, sum, divide) and layer norm (mean, variance, normalize) become one
    kernel each, with the elementwise op before them. Stages whose buffers
    could let one block touch another's rows (a written buffer sharing bytes
    with another one, or read through a map that is not the row's) fall back
    to one kernel per reduction. Running before kiln-plan-memory keeps every
    buffer of a kernel live across all of it, so the plan gives them
    distinct bytes. Other loop nests are left to kiln-map-loops-to-gpu.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (a power of two): the most per row, and rows "
           "share a block up to it">,
    // 16: measured on an H200 (bench/gpu, sweep 1-16), layer norm over
    // 65536 rows of 768 ran at 72% of the copy bandwidth against 49% with
    // 4; softmax over rows of 128 is the same from 4 up (one warp a row).
    Option<"elementsPerThread", "elements-per-thread", "int64_t",
           /*default=*/"16",
           "Elements of a row per thread: sets the threads per row">,
    Option<"minLength", "min-length", "int64_t", /*default=*/"64",
           "Shortest row worth a block">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def RecordDeviceWork : Pass<"kiln-record-device-work", "::mlir::ModuleOp"> {
  let summary = "List what runs on the GPU, for the kernel report";
  let description = [{
    After kiln-map-loops-to-gpu, in launch order: every `kiln_gemm_I` call
    (a GEMM in cuBLAS, or in cuBLASLt with its epilogue; its FLOPs and the
    bytes of its operands, from the `kiln.gemms` descriptor) and every
    `gpu.launch` (a row kernel or a loop nest mapped to threads; the bytes
    of the buffers it touches, each once). Recorded on the module as
    `kiln.device_work`, an array of {name, kind, how, flops, bytes}, which
    `kiln-compile --report` prints as the GPU's own table.
  }];
}

def MarkKernelBuffers : Pass<"kiln-mark-kernel-buffers", "::mlir::ModuleOp"> {
  let summary = "Tell LLVM that kernel buffers are distinct and aligned";
  let description = [{
    Every memref argument of an outlined GPU kernel is a whole device
    allocation of the model (an input, an output, the arena or the
    weights), each 256-byte aligned by the driver, and none overlaps
    another that the kernel writes (kiln_run checks outputs against
    inputs): the arguments get `llvm.noalias` and `llvm.align = 16`. That
    lets LLVM turn a thread's neighbouring accesses into 128-bit loads and
    stores, and read inputs through the read-only data cache.
  }];
}

def UnrollSmallLoops : Pass<"kiln-unroll-small-loops", "::mlir::ModuleOp"> {
  let summary = "Unroll short innermost reduction loops into their parent";
  let description = [{
    Runs on loops (after convert-linalg-to-parallel-loops). An innermost
    `scf.for` with a constant trip count of at most `max-trip` and at most
    `max-ops` ops in its body, nested in another loop, is fully unrolled;
    repeated until no loop qualifies. A convolution's window loops (3 x 3
    taps) disappear into the output-pixel loop around them, which LLVM's
    loop vectorizer then vectorizes with the accumulator in a register,
    instead of running a 7-iteration vector loop per tap. An `scf.parallel`
    of several dims, without reductions or loops inside, whose innermost
    dim is as short and whose body as small, first sinks that dim into an
    `scf.for` of its own, which then unrolls: a resize's phases (`out[r * q
    + p]`, p < r) become straight-line code in the loop over periods, which
    LLVM vectorizes with the phases' stores interleaved by shuffles.
  }];
  let options = [
    Option<"maxTrip", "max-trip", "int64_t", /*default=*/"8",
           "Longest loop to unroll">,
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"96",
           "Most ops an unrolled body may have">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

#endif // KILN_TRANSFORMS_PASSES_TD
