#!/usr/bin/env python3
"""Runs a GPU kit (bench/gpu/prepare_kit.py) on a machine with an NVIDIA GPU
and writes the results as Markdown and JSON.

    bench/gpu/run_kit.py KIT_DIR RESULTS_DIR [--repeats 7] [--jobs 8]
                         [--budget SECONDS] [--sanitize]

1. Conformance: every node test model runs through kiln-run on the GPU and
   is compared with the ONNX reference outputs; every e2e model is compared
   with ONNX Runtime's CPU outputs (rtol 1e-3, atol 1e-4: the GPU sums in
   another order than the CPU).
2. Benchmark: each model runs on device buffers (kiln_run_device, no host
   copies) and, on the same inputs and weights, in PyTorch eager and under
   torch.compile (the ONNX graph interpreted by bench/gpu/onnx_torch.py);
   median of `repeats` timings of 50 runs each, with CUDA events (kiln's
   runs launch directly, without the CUDA graph, and synchronize each). Also
   the end-to-end median latency of kiln_run through kiln-run --bench (host
   copies in and out, the CUDA graph replayed) and the measured device copy
   bandwidth, against which memory-bound models are reported (bytes the
   model must move / time).
3. With --sanitize: the e2e models under compute-sanitizer memcheck.

Results are written after every stage, so a run cut short (a device lease
ends) still returns what it measured; --budget stops starting benchmark
models and sanitizer runs after that many seconds.
"""

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, HERE)

KILN_F32 = 1
TORCH_KILN_DTYPES = {}


def run_node_test(kiln_run, kit, test):
    data = os.path.join(kit, "node", test["name"])
    args = [f"--input={name}={data}/{file}" for name, file in test["inputs"]]
    try:
        run = subprocess.run([kiln_run, os.path.join(kit, "node", test["name"] + ".so"),
                              "--compare", data] + args,
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return f"{test['name']}: timed out after 120 s"
    if run.returncode == 0:
        return None
    lines = (run.stderr or run.stdout).strip().splitlines()
    return f"{test['name']}: {' | '.join(lines[-3:]) if lines else run.returncode}"


def run_conformance(kit, manifest, results, jobs, save):
    """Node tests, several processes at a time (each kiln-run creates its own
    CUDA context, most of a small test's time), then the e2e models."""
    kiln_run = os.path.join(kit, "bin", "kiln-run")
    tests = manifest["node"]
    # One test alone first: when the GPU path is broken at its root, its whole
    # error shows at once instead of hundreds of last lines.
    failures = []
    if tests:
        first = run_node_test(kiln_run, kit, tests[0])
        if first:
            print("first node test failed:", first, flush=True)
            failures.append(first)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for failure in pool.map(lambda t: run_node_test(kiln_run, kit, t), tests[1:]):
            if failure:
                print("FAIL", failure, flush=True)
                failures.append(failure)
    results["node"] = {"passed": len(tests) - len(failures), "total": len(tests),
                       "failures": failures}
    print(f"node tests: {len(tests) - len(failures)} of {len(tests)} pass", flush=True)
    save()
    e2e = []
    for model in manifest["e2e"]:
        out_dir = os.path.join(results["dir"], "e2e-" + model["name"])
        os.makedirs(out_dir, exist_ok=True)
        args = [f"--input={n}={os.path.join(kit, 'e2e', f)}" for n, f in model["inputs"]]
        run = subprocess.run([kiln_run, os.path.join(kit, "e2e", model["name"] + ".so"),
                              "--output-dir", out_dir] + args,
                             capture_output=True, text=True, timeout=300)
        entry = {"name": model["name"], "ok": run.returncode == 0, "error": run.stderr[-300:]}
        for name, file in model["outputs"]:
            if not entry["ok"]:
                break
            ref = np.load(os.path.join(kit, "e2e", file))
            got = np.load(os.path.join(out_dir, name + ".npy"))
            err = np.abs(got - ref)
            entry[name] = float(err.max())
            entry["ok"] &= bool(np.all(err <= 1e-4 + 1e-3 * np.abs(ref)))
        print(json.dumps(entry), flush=True)
        e2e.append(entry)
        shutil.rmtree(out_dir)  # only the verdict comes back from the device
    results["e2e"] = e2e
    save()


def find_sanitizer():
    for candidate in (shutil.which("compute-sanitizer"),
                      "/usr/local/cuda/bin/compute-sanitizer"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def run_sanitizer(kit, manifest, results, deadline):
    """compute-sanitizer memcheck over the e2e models: out-of-bounds and
    misaligned device accesses that happen not to change an output."""
    sanitizer = find_sanitizer()
    if not sanitizer:
        results["sanitizer"] = "compute-sanitizer not found"
        return
    kiln_run = os.path.join(kit, "bin", "kiln-run")
    verdicts = []
    for model in manifest["e2e"]:
        left = deadline - time.time()
        if left < 30:
            verdicts.append({"name": model["name"], "verdict": "not run (deadline)"})
            continue
        args = [f"--input={n}={os.path.join(kit, 'e2e', f)}" for n, f in model["inputs"]]
        try:
            run = subprocess.run([sanitizer, "--tool", "memcheck", "--error-exitcode", "3",
                                  kiln_run, os.path.join(kit, "e2e", model["name"] + ".so")]
                                 + args, capture_output=True, text=True,
                                 timeout=min(120, left - 10))
            summary = [l for l in run.stdout.splitlines() if "ERROR SUMMARY" in l]
            errors = [l for l in run.stdout.splitlines() if l.startswith("========= ")][:8]
            verdicts.append({"name": model["name"], "exit": run.returncode,
                             "summary": summary[-1] if summary else run.stdout[-300:],
                             "first_lines": errors})
        except subprocess.TimeoutExpired:
            verdicts.append({"name": model["name"], "verdict": "timed out"})
        print(json.dumps(verdicts[-1]), flush=True)
    results["sanitizer"] = verdicts


class DeviceRunner:
    """kiln_run_device (and kiln_run_device_async on PyTorch's current
    stream) on torch tensors (same CUDA primary context)."""

    def __init__(self, runtime, path):
        from kiln_runtime import KilnModel, KilnTensor
        self.model = KilnModel(runtime, path)
        lib = self.model.lib
        lib.kiln_run_device.argtypes = lib.kiln_run.argtypes
        if hasattr(lib, "kiln_run_device_async"):
            run_args = lib.kiln_run.argtypes
            lib.kiln_run_device_async.argtypes = [run_args[0], ctypes.c_void_p] + run_args[1:]
        self.context = self.model.create_context()
        self.KilnTensor = KilnTensor

    def bind(self, inputs, outputs, stream=None):
        """A call of the model on these tensors: kiln_run_device, or with
        `stream` (a CUstream handle, 0 for the legacy default) the async
        entry point enqueued there."""
        keep = []

        def table(tensors):
            t = (self.KilnTensor * len(tensors))()
            for slot, x in zip(t, tensors):
                dims = (ctypes.c_int64 * max(1, x.dim()))(*x.shape)
                keep.append(dims)
                slot.dtype, slot.rank = KILN_F32, x.dim()
                slot.dims = ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
                slot.data = x.data_ptr()
            return t
        ins, outs = table(inputs), table(outputs)
        lib, ctx = self.model.lib, self.context

        def run():
            if stream is None:
                status = lib.kiln_run_device(ctx, ins, len(inputs), outs, len(outputs))
            else:
                status = lib.kiln_run_device_async(ctx, stream, ins, len(inputs), outs,
                                                   len(outputs))
            if status:
                raise RuntimeError(lib.kiln_last_error().decode())
        run.keep = keep
        return run


def time_cuda(fn, repeats, inner=50):
    import torch
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) / inner)
    return float(np.median(samples))


def copy_bandwidth(repeats):
    import torch
    src = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_cuda(lambda: dst.copy_(src), repeats, inner=20)
    return 2 * src.numel() / (ms * 1e-3)


def device_busy(fn, runs=20):
    """(device ms, kernels) per call of `fn`: the kernels and copies it puts
    on the GPU, from torch.profiler (CUPTI sees kiln's driver-API launches
    as well as PyTorch's). Per-call time minus this is launch overhead."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sum(e.time_range.elapsed_us() for e in events) / 1e3 / runs, len(events) / runs


def bench_row(kit, meta, runtime, repeats, deadline):
    import torch
    from models import MODELS
    from onnx_torch import OnnxTorch
    spec = {m.name: m for m in MODELS}[meta["name"]]
    model = spec.build(meta["batch"])
    row = {"key": meta["key"], "description": meta["description"],
           "flops": meta["flops"], "bytes": meta["bytes"],
           "precision": meta.get("precision", "fp32")}
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn([d for d in i["shape"]], generator=gen).cuda()
              for i in meta["inputs"]]
    outputs = [torch.empty(o["shape"], device="cuda") for o in meta["outputs"]]
    try:
        runner = DeviceRunner(runtime, os.path.join(kit, "bench", meta["key"] + ".so"))
        run = runner.bind(inputs, outputs)
        row["kiln_ms"] = time_cuda(run, repeats)
        if hasattr(runner.model.lib, "kiln_run_device_async"):
            # Enqueued on PyTorch's stream without a synchronize per call,
            # as PyTorch's own calls are timed.
            stream = torch.cuda.current_stream().cuda_stream
            row["kiln_async_ms"] = time_cuda(runner.bind(inputs, outputs, stream),
                                             repeats)
        try:
            row["kiln_busy_ms"], row["kiln_kernels"] = device_busy(run)
        except Exception as e:  # the profiler is a extra, not the result
            row["profiler_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    except Exception as e:  # report, keep going
        row["kiln_error"] = str(e)[:300]
    if meta.get("kiln_only"):  # a variant of a model measured in full
        return row
    # End to end through kiln_run: host copies in and out, CUDA graph.
    bench_run = subprocess.run(
        [os.path.join(kit, "bin", "kiln-run"),
         os.path.join(kit, "bench", meta["key"] + ".so"), "--random", "--bench", "30"],
        capture_output=True, text=True, timeout=300)
    for line in bench_run.stdout.splitlines():
        if line.startswith("latency over"):
            row["kiln_run_ms"] = float(line.split("median ")[1].split(" ms")[0])
    # PyTorch runs the products in the model's precision the way its users
    # would: autocast (bf16/fp16 products, f32 elsewhere), as kiln does.
    autocast = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(row["precision"])
    try:
        reference = OnnxTorch(model).cuda()

        def in_precision(fn):
            def call():
                with torch.autocast("cuda", dtype=autocast, enabled=autocast is not None):
                    return fn(*inputs)
            return call
        with torch.no_grad():
            eager = in_precision(reference)
            expected = eager()
            if "kiln_ms" in row:
                row["max_abs_error"] = max(float((o - e.float()).abs().max())
                                           for o, e in zip(outputs, expected))
            row["torch_ms"] = time_cuda(eager, repeats)
            # torch.compile's first compilation takes tens of seconds.
            if time.time() < deadline - 60:
                compiled = in_precision(torch.compile(reference))
                compiled()
                row["compile_ms"] = time_cuda(compiled, repeats)
    except Exception as e:
        row["torch_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    return row


def run_bench(kit, manifest, results, repeats, deadline, save):
    runtime = os.path.join(kit, "lib", "libkiln_runtime.so")
    results["copy_bandwidth"] = copy_bandwidth(repeats)
    rows = []
    results["bench"] = rows
    for meta in manifest["bench"]:
        if time.time() > deadline - 20:
            rows.append({"key": meta["key"], "description": meta["description"],
                         "flops": meta["flops"], "bytes": meta["bytes"],
                         "kiln_error": "not run (deadline)"})
            continue
        rows.append(bench_row(kit, meta, runtime, repeats, deadline))
        print(json.dumps(rows[-1]), flush=True)
        save()


def write_markdown(results, path):
    lines = ["# kiln on the GPU", "", f"Device: {results.get('device', '?')}", ""]
    if "node" in results:
        n = results["node"]
        lines += [f"Node tests on the GPU: **{n['passed']} of {n['total']} pass**.", ""]
        lines += [f"- FAIL {f}" for f in n["failures"][:50]]
        lines += ["", "| e2e model | matches ORT (rtol 1e-3, atol 1e-4) |", "|---|---|"]
        lines += [f"| {e['name']} | {'yes' if e['ok'] else 'NO ' + e.get('error', '')} |"
                  for e in results.get("e2e", [])]
    if "bench_error" in results:
        lines += ["", f"Benchmark not run: {results['bench_error']}"]
    if "bench" in results:
        bw = results["copy_bandwidth"]
        lines += ["", f"Measured device copy bandwidth: {bw / 1e12:.2f} TB/s.", "",
                  "kiln ms: kiln_run_device per call (launches and a synchronize "
                  "included); async: kiln_run_device_async on PyTorch's stream, timed "
                  "like PyTorch's calls; busy: the GPU time of its kernels and copies "
                  "(profiler); overhead: kiln ms minus busy.", "",
                  "| model | precision | kiln ms | kiln async ms | PyTorch eager ms | "
                  "torch.compile ms | "
                  "kiln vs eager | kiln vs compile | kiln % of copy bandwidth | "
                  "kiln busy ms (kernels) | overhead us | max abs error | "
                  "kiln_run ms (copies + graph) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in results["bench"]:
            k, t, c = r.get("kiln_ms"), r.get("torch_ms"), r.get("compile_ms")
            fmt = lambda v: f"{v:.4f}" if v else r.get("kiln_error", r.get("torch_error", "-"))[:60]
            ratio = lambda a, b: f"{b / a:.2f}x" if a and b else "-"
            share = f"{100 * r['bytes'] / (k * 1e-3) / bw:.0f}%" if k else "-"
            busy = r.get("kiln_busy_ms")
            busy_text = f"{busy:.4f} ({r['kiln_kernels']:g})" if busy else "-"
            overhead = f"{1e3 * (k - busy):.1f}" if k and busy else "-"
            lines.append(f"| {r['key']} | {r.get('precision', 'fp32')} | {fmt(k)} | "
                         f"{fmt(r.get('kiln_async_ms'))} | {fmt(t)} | "
                         f"{fmt(c)} | {ratio(k, t)} | {ratio(k, c)} | {share} | {busy_text} | "
                         f"{overhead} | {r.get('max_abs_error', '-')} | "
                         f"{r.get('kiln_run_ms', '-')} |")
    sanitizer = results.get("sanitizer")
    if isinstance(sanitizer, str):
        lines += ["", f"compute-sanitizer: {sanitizer}"]
    elif sanitizer:
        lines += ["", "| e2e model under compute-sanitizer memcheck | verdict |", "|---|---|"]
        lines += [f"| {v['name']} | {v.get('summary', v.get('verdict', ''))} |"
                  for v in sanitizer]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kit")
    parser.add_argument("results")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1),
                        help="node tests run at a time")
    parser.add_argument("--budget", type=float, default=1e9,
                        help="seconds: no benchmark model or sanitizer run starts later")
    parser.add_argument("--sanitize", action="store_true",
                        help="also run the e2e models under compute-sanitizer memcheck")
    options = parser.parse_args()
    deadline = time.time() + options.budget
    # kiln-run finds the libraries the kit brought (prepare_kit.py).
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(
        filter(None, [os.path.abspath(os.path.join(options.kit, "lib")),
                      os.environ.get("LD_LIBRARY_PATH")]))
    os.makedirs(options.results, exist_ok=True)
    with open(os.path.join(options.kit, "manifest.json")) as f:
        manifest = json.load(f)
    try:
        device = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                text=True).stdout.strip()
    except FileNotFoundError:
        device = "no nvidia-smi"
    results = {"dir": options.results, "device": device,
               "arch": manifest["arch"], "started": time.ctime()}

    def save():  # after every stage: a run cut short still reports what it did
        with open(os.path.join(options.results, "gpu-results.json"), "w") as f:
            json.dump(results, f, indent=1)
        write_markdown(results, os.path.join(options.results, "gpu-results.md"))

    if manifest["node"] or manifest["e2e"]:
        run_conformance(options.kit, manifest, results, options.jobs, save)
    if manifest["bench"]:
        try:
            run_bench(options.kit, manifest, results, options.repeats, deadline, save)
        except ImportError as e:  # no PyTorch: conformance results still count
            results["bench_error"] = str(e)
    if options.sanitize and manifest["e2e"]:
        run_sanitizer(options.kit, manifest, results, deadline)
    save()
    print(open(os.path.join(options.results, "gpu-results.md")).read())
    ok = results.get("node", {}).get("failures", []) == [] and \
        all(e["ok"] for e in results.get("e2e", []))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
