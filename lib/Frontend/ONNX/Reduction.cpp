//===- Reduction.cpp - ONNX reductions and pooling to kiln ----------------===//
//
// Reduce* (axes as attribute or, from opset 13/18, as input), ArgMax/ArgMin,
// the global pools as reductions over the spatial dims, and MaxPool /
// AveragePool with auto_pad resolved.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;

namespace kiln::frontend {
namespace {

using Result = FailureOr<Value>;

/// The axes a Reduce* node reduces: empty means all of them unless
/// noop_with_empty_axes, which makes the node the identity (nullopt).
FailureOr<std::optional<SmallVector<int64_t>>>
reductionAxes(NodeContext &ctx, int64_t axesInputFromOpset) {
  SmallVector<int64_t> axes;
  if (ctx.opset() < axesInputFromOpset) {
    axes = ctx.intsAttr("axes").value_or(SmallVector<int64_t>());
  } else if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  }
  if (!axes.empty())
    return std::optional<SmallVector<int64_t>>(axes);
  if (ctx.intAttr("noop_with_empty_axes", 0))
    return std::optional<SmallVector<int64_t>>();
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < ctx.inputRank(0); ++i)
    all.push_back(i);
  return std::optional<SmallVector<int64_t>>(all);
}

/// An elementwise step before or after a reduction (null: none).
using Step = Result (*)(NodeContext &, Value);

/// Applies `pre` to the input, reduces with OpTy, then applies `post`.
template <typename OpTy>
LogicalResult convertReduce(NodeContext &ctx, int64_t axesInputFromOpset,
                            Step pre, Step post) {
  auto axes = reductionAxes(ctx, axesInputFromOpset);
  if (failed(axes))
    return failure();
  Value x = ctx.input(0);
  if (pre) {
    Result mapped = pre(ctx, x);
    if (failed(mapped))
      return failure();
    x = *mapped;
  }
  if (*axes) {
    Result reduced =
        ctx.create<OpTy>(x, **axes, ctx.intAttr("keepdims", 1) != 0);
    if (failed(reduced))
      return failure();
    x = *reduced;
  }
  if (post) {
    Result mapped = post(ctx, x);
    if (failed(mapped))
      return failure();
    x = *mapped;
  }
  return ctx.setResult(x);
}

Result square(NodeContext &ctx, Value x) { return ctx.create<MulOp>(x, x); }

/// Registers Reduce<name> whose axes became an input at `axesInputFromOpset`.
template <typename OpTy>
void addReduce(ConverterRegistry &r, llvm::StringRef name,
               int64_t axesInputFromOpset, Step pre, Step post) {
  r.add(name, [=](NodeContext &ctx) {
    return convertReduce<OpTy>(ctx, axesInputFromOpset, pre, post);
  });
}

/// log(sum(exp(x - max))) + max, without overflow for large inputs.
LogicalResult convertReduceLogSumExp(NodeContext &ctx) {
  auto axes = reductionAxes(ctx, 18);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.setResult(ctx.input(0));
  Value x = ctx.input(0);
  bool keepDims = ctx.intAttr("keepdims", 1) != 0;
  Result max = ctx.create<ReduceMaxOp>(x, **axes, true);
  if (failed(max))
    return failure();
  Result shifted = ctx.create<SubOp>(x, *max);
  if (failed(shifted))
    return failure();
  Result e = ctx.create<ExpOp>(*shifted);
  if (failed(e))
    return failure();
  Result sum = ctx.create<ReduceSumOp>(*e, **axes, keepDims);
  if (failed(sum))
    return failure();
  Result log = ctx.create<LogOp>(*sum);
  if (failed(log))
    return failure();
  Result maxReduced =
      keepDims ? *max
               : ctx.create<ReshapeOp>(
                     *max, Value(),
                     ctx.b().getDenseI64ArrayAttr(
                         cast<RankedTensorType>(log->getType()).getShape()));
  if (failed(maxReduced))
    return failure();
  return ctx.setResult(ctx.create<AddOp>(*log, *maxReduced));
}

template <typename OpTy> LogicalResult convertArgReduce(NodeContext &ctx) {
  return ctx.setResult(ctx.create<OpTy>(
      ctx.input(0), ctx.intAttr("axis", 0), ctx.intAttr("keepdims", 1) != 0,
      ctx.intAttr("select_last_index", 0) != 0));
}

template <typename OpTy> LogicalResult convertGlobalPool(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> axes = spatialAxes(ctx);
  if (failed(axes))
    return failure();
  return ctx.setResult(ctx.create<OpTy>(ctx.input(0), *axes, true));
}

/// Kernel, strides, dilations and explicit pads of a pooling node.
struct PoolWindow {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};

FailureOr<PoolWindow> poolWindow(NodeContext &ctx) {
  int64_t spatial = ctx.inputRank(0) - 2;
  if (spatial < 1)
    return ctx.emitError() << "needs an [N, C, D...] input";
  PoolWindow w;
  w.kernel = ctx.intsAttr("kernel_shape").value_or(SmallVector<int64_t>());
  if (static_cast<int64_t>(w.kernel.size()) != spatial)
    return ctx.emitError() << "kernel_shape needs " << spatial << " entries";
  w.strides =
      ctx.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  w.dilations =
      ctx.intsAttr("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  if (static_cast<int64_t>(w.strides.size()) != spatial ||
      static_cast<int64_t>(w.dilations.size()) != spatial)
    return ctx.emitError() << "strides and dilations need " << spatial
                           << " entries";
  FailureOr<SmallVector<int64_t>> pads =
      resolveWindowPads(ctx, ctx.inputType(0).getShape().drop_front(2),
                        w.kernel, w.strides, w.dilations);
  if (failed(pads))
    return failure();
  w.pads = *pads;
  return w;
}

LogicalResult convertMaxPool(NodeContext &ctx) {
  if (ctx.proto().output_size() > 1 && !ctx.proto().output(1).empty())
    return ctx.emitError() << "the Indices output is not supported";
  if (ctx.intAttr("storage_order", 0) != 0)
    return ctx.emitError() << "storage_order 1 is not supported";
  FailureOr<PoolWindow> w = poolWindow(ctx);
  if (failed(w))
    return failure();
  return ctx.setResult(ctx.create<MaxPoolOp>(ctx.input(0), w->kernel,
                                             w->strides, w->dilations, w->pads,
                                             ctx.intAttr("ceil_mode", 0) != 0));
}

LogicalResult convertAveragePool(NodeContext &ctx) {
  FailureOr<PoolWindow> w = poolWindow(ctx);
  if (failed(w))
    return failure();
  return ctx.setResult(
      ctx.create<AvgPoolOp>(ctx.input(0), w->kernel, w->strides, w->dilations,
                            w->pads, ctx.intAttr("ceil_mode", 0) != 0,
                            ctx.intAttr("count_include_pad", 0) != 0));
}

} // namespace

void registerReductionConverters(ConverterRegistry &r) {
  addReduce<ReduceSumOp>(r, "ReduceSum", 13, nullptr, nullptr);
  addReduce<ReduceMeanOp>(r, "ReduceMean", 18, nullptr, nullptr);
  addReduce<ReduceMaxOp>(r, "ReduceMax", 18, nullptr, nullptr);
  addReduce<ReduceMinOp>(r, "ReduceMin", 18, nullptr, nullptr);
  addReduce<ReduceProdOp>(r, "ReduceProd", 18, nullptr, nullptr);
  addReduce<ReduceSumOp>(r, "ReduceSumSquare", 18, square, nullptr);
  addReduce<ReduceSumOp>(
      r, "ReduceL1", 18,
      [](NodeContext &ctx, Value x) { return ctx.create<AbsOp>(x); }, nullptr);
  addReduce<ReduceSumOp>(
      r, "ReduceL2", 18, square,
      [](NodeContext &ctx, Value x) { return ctx.create<SqrtOp>(x); });
  addReduce<ReduceSumOp>(
      r, "ReduceLogSum", 18, nullptr,
      [](NodeContext &ctx, Value x) { return ctx.create<LogOp>(x); });
  r.add("ReduceLogSumExp", convertReduceLogSumExp);
  r.add("ArgMax", convertArgReduce<ArgMaxOp>);
  r.add("ArgMin", convertArgReduce<ArgMinOp>);
  r.add("GlobalAveragePool", convertGlobalPool<ReduceMeanOp>);
  r.add("GlobalMaxPool", convertGlobalPool<ReduceMaxOp>);
  r.add("MaxPool", convertMaxPool);
  r.add("AveragePool", convertAveragePool);
}

} // namespace kiln::frontend
