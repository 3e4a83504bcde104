"""Formatting the benchmark results: the terminal table, docs/benchmarks.md
and its charts (when matplotlib is installed)."""

import math
import os
import statistics

# --------------------------------------------------------------------------
# Values of one row
# --------------------------------------------------------------------------


def timing(result, engine: str) -> dict:
    return result.engines.get(engine, {}).get("timing", {})


def median_ms(result, engine: str):
    return timing(result, engine).get("median_ms")


def paired_rounds(rounds: list) -> list:
    """The rounds in which both kiln and ORT ran a block."""
    return [r for r in rounds if r["ms"].get("kiln") and r["ms"].get("ort")]


def paired_speedup(rounds: list):
    """The median over `rounds` of each round's ORT block median over its
    kiln block median, or None where no round has both."""
    ratios = [r["ms"]["ort"] / r["ms"]["kiln"] for r in paired_rounds(rounds)]
    return statistics.median(ratios) if ratios else None


def speedup(result):
    """ORT time / kiln time: above 1, kiln is faster. Paired by round where
    the rounds were recorded: the engines' blocks of one round run one
    after the other, so a change of the host's state between rounds (other guests on
    its cores, where it places the vCPUs) falls on both sides of a ratio,
    where the two medians of all rounds could each take it from different
    rounds. Otherwise (results of an older run) the ratio of the medians."""
    paired = paired_speedup(result.rounds)
    if paired is not None:
        return paired
    kiln, ort = median_ms(result, "kiln"), median_ms(result, "ort")
    return ort / kiln if kiln and ort else None


def kiln_over_handwritten(result):
    """kiln's time over the hand-written loop's (the fusion limit): 1 is as
    fast as hand-written code, above 1 slower."""
    ms, limit = median_ms(result, "kiln"), result.fusion_limit.get("ms_median")
    return ms / limit if ms and limit else None


def achieved_gflops(result, engine: str = "kiln"):
    ms = median_ms(result, engine)
    return result.flops / ms / 1e6 if ms else None


def roofline_percent(result, roofline, engine: str = "kiln"):
    gflops = achieved_gflops(result, engine)
    if gflops is None:
        return None
    return 100.0 * gflops / roofline.attainable_gflops(result.flops, result.bytes,
                                                      result.threads)


def describe_mismatch(check: dict) -> str:
    parts = []
    for failure in check.get("failures", []):
        if "detail" in failure:
            parts.append(f"output '{failure['output']}': {failure['detail']}")
        else:
            parts.append(
                f"output '{failure['output']}': {failure['mismatches']} of "
                f"{failure['elements']} elements off; worst at flat index "
                f"{failure['worst_index']}: kiln {failure['got']:.6g}, ORT "
                f"{failure['expected']:.6g} (max abs err {failure['max_abs_err']:.3g}, "
                f"rtol {check['rtol']}, atol {check['atol']})")
    return "; ".join(parts)


# --------------------------------------------------------------------------
# Cell formatting
# --------------------------------------------------------------------------

def fmt_ms(value) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def fmt_bytes(value) -> str:
    if value is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def fmt_timing(result, engine: str, spread: bool) -> str:
    t = timing(result, engine)
    if not t:
        return "-"
    text = fmt_ms(t["median_ms"])
    if t.get("single_run"):
        return text + (" (1 cold run)" if t.get("cold") else " (1 run)")
    if spread and t["repeats"] > 1:
        text += f" ({fmt_ms(t['min_ms'])}-{fmt_ms(t['max_ms'])})"
    return text


def fmt_speedup(value, words: bool) -> str:
    if value is None:
        return "-"
    if not words:
        return f"{value:.3g}x"
    if value >= 1:
        return f"**{value:.3g}** (kiln faster)"
    return f"{value:.3g} (kiln {1 / value:.3g}x slower)"


def fmt_threads(result) -> str:
    used = result.engines.get("kiln", {}).get("open", {}).get("threads_used")
    if used is not None and used != result.threads:
        return f"{result.threads} (kiln {used})"
    return str(result.threads)


def fmt_runs(result) -> str:
    """Repeats x runs per repeat, kiln / ORT."""
    def runs(engine):
        t = timing(result, engine)
        if not t:
            return "-"
        return "1" if t.get("single_run") else f"{t['repeats']}x{t['runs_per_repeat']}"
    return f"{runs('kiln')} / {runs('ort')}"


def _maybe(value, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def fmt_percent(value) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}%" if value >= 10 else f"{value:.2g}%"


def row_cells(result, roofline, markdown: bool) -> list:
    kiln_compile = result.compile.get("kiln", {})
    kiln_open = result.engines.get("kiln", {}).get("open", {})
    return [
        result.key,
        fmt_threads(result),
        result.status if result.status == "ok" or not markdown else f"**{result.status}**",
        fmt_timing(result, "kiln", spread=markdown),
        fmt_timing(result, "ort", spread=markdown),
        fmt_speedup(speedup(result), words=markdown),
        _maybe(achieved_gflops(result), "{:.3g}"),
        fmt_percent(roofline_percent(result, roofline)),
        fmt_percent(roofline_percent(result, roofline, "ort")),
        _maybe(kiln_compile.get("seconds") if kiln_compile.get("status") == "ok" else None,
               "{:.1f}"),
        fmt_bytes(kiln_open.get("arena_bytes")),
        fmt_bytes(kiln_open.get("peak_bytes")),
        fmt_bytes(result.engines.get("ort", {}).get("open", {}).get("peak_bytes")),
        _maybe(result.other_load, "{:.2f}"),
    ] + ([fmt_runs(result)] if markdown else [])


HEADERS = ["model", "threads", "status", "kiln ms", "ORT ms", "speedup (ORT/kiln)",
           "kiln GFLOP/s", "kiln % roofline", "ORT % roofline", "kiln compile s",
           "kiln arena", "kiln peak mem", "ORT peak mem", "other load (cores)"]
MARKDOWN_HEADERS = HEADERS + ["repeats x runs (kiln / ORT)"]
# Terminal column widths (the model column is the widest).
WIDTHS = [24, 8, 10, 10, 9, 9, 8, 8, 8, 8, 9, 9, 9, 6]
TERMINAL_HEADERS = ["model", "threads", "status", "kiln ms", "ORT ms", "speedup", "GFLOP/s",
                    "%roof", "ORT%roof", "compile", "arena", "kiln mem", "ORT mem", "other"]


def _terminal_line(cells) -> str:
    return " ".join(f"{cell:<{width}}" for cell, width in zip(cells, WIDTHS))


def terminal_header() -> str:
    return _terminal_line(TERMINAL_HEADERS)


def terminal_row(result, roofline) -> str:
    return _terminal_line(row_cells(result, roofline, markdown=False))


def terminal_table(results, roofline) -> str:
    return "\n".join([terminal_header()] + [terminal_row(r, roofline) for r in results])


def markdown_table(headers, rows) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Fusion limit: kiln against the hand-written loop (bench/handwritten.py)
# --------------------------------------------------------------------------

def fmt_handwritten(limit: dict, spread: bool) -> str:
    if "ms_median" not in limit:
        return "-"
    text = fmt_ms(limit["ms_median"])
    if spread:
        text += f" ({fmt_ms(limit['ms_min'])}-{fmt_ms(limit['ms_max'])})"
    return text


def fusion_limit_cells(result, markdown: bool) -> list:
    limit = result.fusion_limit
    status = limit["status"]
    return [
        result.key,
        fmt_threads(result),
        status if status == "ok" or not markdown else f"**{status}**",
        fmt_timing(result, "kiln", spread=markdown),
        fmt_handwritten(limit, spread=markdown),
        _maybe(kiln_over_handwritten(result), "{:.3g}"),
        fmt_timing(result, "ort", spread=markdown),
        limit.get("isa", "-"),
        _maybe(limit.get("max_abs_error_vs_reference"), "{:.2g}"),
    ]


FUSION_LIMIT_HEADERS = ["model", "threads", "hand-written status", "kiln ms",
                        "hand-written ms", "kiln / hand-written", "ORT ms", "hand-written ISA",
                        "hand-written max abs error"]
FUSION_LIMIT_WIDTHS = [24, 12, 12, 10, 10, 10, 9, 7, 8]
FUSION_LIMIT_TERMINAL_HEADERS = ["model", "threads", "status", "kiln ms", "hand ms",
                                 "kiln/hand", "ORT ms", "ISA", "error"]


def terminal_fusion_limit_table(results) -> str:
    rows = [FUSION_LIMIT_TERMINAL_HEADERS] + [fusion_limit_cells(r, markdown=False)
                                              for r in results if r.fusion_limit]
    return "\n".join(" ".join(f"{cell:<{width}}" for cell, width in
                              zip(cells, FUSION_LIMIT_WIDTHS)) for cells in rows)


def terminal_fusion_limit_note(result) -> str:
    """A line under a row that has a hand-written loop: its time, or why
    there is none."""
    limit = result.fusion_limit
    if not limit:
        return ""
    if limit["status"] != "ok" and "ms_median" not in limit:
        return f"\n  hand-written loop: {limit['status']}: {limit['message']}"
    ratio = kiln_over_handwritten(result)
    return (f"\n  hand-written loop ({limit['isa']}): {fmt_ms(limit['ms_median'])} ms"
            + (f"; kiln / hand-written {ratio:.3g}" if ratio else "")
            + ("" if limit["status"] == "ok" else f"; {limit['status']}: {limit['message']}"))


def probe_summary(probe: dict) -> str:
    peaks = ", ".join(f"{isa} {' / '.join(f'{v:.0f}' for v in by_threads.values())}"
                      for isa, by_threads in probe["peak_gflops"].items())
    bandwidth = probe["bandwidth_gbs"]
    threads = "/".join(str(t) for t in probe["threads"])
    return (f"probe: {probe['cpu']}; peak FP32 GFLOP/s on {threads} threads: {peaks}; "
            f"DRAM triad GB/s {' / '.join(f'{v:.0f}' for v in bandwidth['dram_triad'].values())}"
            f"; L2 triad GB/s {' / '.join(f'{v:.0f}' for v in bandwidth['l2_triad'].values())}")


# --------------------------------------------------------------------------
# docs/benchmarks.md
# --------------------------------------------------------------------------

METHOD = """\
- **Timing.** Each model and thread count runs in fresh worker processes
  (`bench/measure.py`), `P` passes of them with the thread counts taking
  turns (1, 2, 1, 2, ...), each pass with `R / P` of the rounds and of the
  time budget: a slow minute of the host then falls on the rounds of both
  thread counts, so the 1 -> N thread speedups compare times taken
  together. A worker opens every engine, runs each once, checks the
  outputs (the first pass's open and check are the row's), warms each
  engine up, then times its rounds. In each round every
  engine runs a block of `n` back-to-back runs (`n` chosen per engine from the
  time budget, at most 200), and the engines take turns, in an order that
  rotates every round, so kiln and ONNX Runtime see the same machine state.
  A 100 ms pause precedes every block: thread pools spin for a while after a
  run (ONNX Runtime's by default), and on a 2-core machine a spinning thread
  of the previous engine would take a core from the next one's block.
  The table gives the median of all passes' round medians, and in
  parentheses the lowest and highest round median. The speedup is the
  median of the rounds' ratios (ORT's block median over kiln's in the same
  round), not the ratio of the two medians: the host's state changes
  between rounds (other guests on its cores; where it places the vCPUs,
  Thread scaling below), and each of the two medians could otherwise come
  from rounds in a different state. An engine whose single
  run is longer than its share of a pass's budget gets one warm run per
  pass, each a sample (marked "(1 run)" when it is the only one); when
  even its first run took longer than 5 s, that first run is the sample
  ("(1 cold run)" when the only one). A worker that exceeds the timeout is
  killed and the row says `timeout`; the other engines are then measured
  without kiln.
- **kiln** runs through the C runtime (`build/lib/libkiln_runtime.so`, via
  ctypes): `kiln_model_load`, `kiln_context_create` (or
  `kiln_context_create_with_threads` when the runtime has it), and one
  `kiln_run` per run on preallocated numpy inputs and outputs.
- **ONNX Runtime** runs with `ORT_ENABLE_ALL`, `intra_op_num_threads` equal to
  the row's thread count, `inter_op_num_threads = 1`, sequential execution,
  the CPU provider, and inputs and outputs bound once through IO binding
  (outputs preallocated), one `run_with_iobinding` per run.
- **Check.** kiln's outputs on the first run are compared with ONNX Runtime's on
  the same random inputs (fixed seed): `|kiln - ORT| <= atol + rtol * |ORT|`
  elementwise, rtol 1e-3 and atol 1e-4 unless the model says otherwise. A
  failure is a `MISMATCH` row, with the worst element listed under Failures.
- **FLOPs** are counted from the ONNX graph (`bench/models.py`): 2·M·N·K per
  matmul, 2 · outputs · C_in/groups · kernel area per convolution, the window
  size per pooled output, one per input element of a reduction, 5 per
  element for Softmax, 8 for LayerNormalization, one per output element of
  any other elementwise op, none for data movement.
- **Roofline.** The minimum bytes a model must move is its inputs, weights
  and outputs, each once. The attainable rate at a thread count is
  `min(peak FP32 FLOP/s, FLOP/byte x DRAM bandwidth)`, both from the machine
  probe at that thread count; `% roofline` is the achieved GFLOP/s over it.
  Models whose data fits in the caches can exceed the DRAM roof.
- **Memory.** For each engine, the peak resident memory that opening it
  (loading the model or creating the session) and its first run add to the
  worker process: Linux's VmHWM, reset through `/proc/self/clear_refs` just
  before, minus VmRSS at that moment. It includes the weights (kiln's are
  pages of `model.so`, ONNX Runtime's are copied and possibly pre-packed) and
  every intermediate. `kiln arena` is the scratch arena each kiln context
  allocates (`kiln_model_info.arena_bytes`).
- **Other load.** The CPU time all processes used during a row (`/proc/stat`,
  steal included) minus what the benchmark's own worker used, divided by the
  row's wall time: how many cores something else kept busy. Rows above
  0.25 are flagged in the summary.
- **Machine probe** (`bench/probe/probe.cpp`, built with `clang++-22 -O3
  -march=native`): peak FP32 FMA throughput from AVX-512 (24 zmm) and AVX2
  (12 ymm) register-resident FMA chains on 1 and N threads (`std::thread`);
  bandwidth from a STREAM triad `a = b + s*c` with non-temporal stores over
  384 MiB per thread (DRAM) and with ordinary stores over 192 KiB per thread
  (L2), counting 12 bytes per element; best of 5 trials each. The probe
  runs before the first model and after each; every figure is the best of
  all probes (a probe taken while another guest shares the host's core
  reads low).
"""


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _environment_table(env: dict, probe: dict, roofline, run_info: dict) -> str:
    rows = [("kiln commit", env["kiln_commit"]),
            ("kiln-compile built", env["kiln_compile_built"]),
            ("onnxruntime", env["onnxruntime"]), ("onnx", env["onnx"]),
            ("numpy", env["numpy"]), ("python", env["python"]),
            ("CPU", f"{env['cpu']} ({env['cores']} cores)"), ("Linux", env["kernel"]),
            ("load average at the start", env["load_average"]),
            ("probe compiler", env["probe_compiler"]),
            ("date", env["date"])]
    for name, note in run_info["peer_notes"].items():
        rows.append((f"peer {name}", note))
    for name in run_info["peers"]:
        rows.append((f"peer {name}", "installed, run on every model"))
    settings = run_info["settings"]
    rows.append(("settings", f"time budget {settings['budget_s']:g} s per model and thread "
                             f"count, {settings['rounds']} rounds in "
                             f"{_count(settings.get('passes', 1), 'pass', 'passes')}, timeout "
                             f"{settings['timeout_s']:g} s, compile timeout "
                             f"{settings['compile_timeout_s']:g} s; whole run "
                             f"{run_info['elapsed_s'] / 60:.0f} min"))
    return markdown_table(["", ""], rows)


def _probe_table(probe: dict, roofline) -> str:
    threads = [str(t) for t in probe["threads"]]
    rows = [[f"peak FP32 FMA, {isa}"] + [f"{by_threads[t]:.1f} GFLOP/s" for t in threads]
            for isa, by_threads in probe["peak_gflops"].items()]
    labels = {"dram_triad": "DRAM triad (non-temporal stores)", "l2_triad": "L2 triad"}
    rows += [[labels[kind]] + [f"{values[t]:.1f} GB/s" for t in threads]
             for kind, values in probe["bandwidth_gbs"].items()]
    rows.append(["ridge point (peak / DRAM bandwidth)"]
                + [f"{roofline.ridge_point(int(t)):.1f} FLOP/byte" for t in threads])
    return markdown_table(["", *[f"{t} thread{'s' if t != '1' else ''}" for t in threads]],
                          rows)


def _models_table(results) -> str:
    seen, rows = set(), []
    for r in results:
        if r.key in seen:
            continue
        seen.add(r.key)
        rows.append([r.key, r.description, f"{r.flops / 1e9:.3g}", fmt_bytes(r.bytes),
                     f"{r.flops / r.bytes:.3g}"])
    return markdown_table(["model", "what", "GFLOP", "min bytes", "FLOP/byte"], rows)


def _peers_section(results, run_info) -> str:
    if not run_info["peers"]:
        notes = "; ".join(f"{n}: {note}" for n, note in run_info["peer_notes"].items())
        return f"No optional peer ran ({notes})."
    rows = []
    for r in results:
        for peer in run_info["peers"]:
            compiled = r.compile.get(peer, {})
            events = r.engines.get(peer, {})
            if compiled.get("status") != "ok":
                status = "compile " + compiled.get("status", "skipped")
            elif "error" in events:
                status = "run error"
            elif "check" in events and not events["check"]["ok"]:
                status = "MISMATCH"
            else:
                status = "ok" if "timing" in events else "not timed"
            first_run = events.get("open", {}).get("first_run_ms")
            rows.append([r.key, str(r.threads), peer, status, fmt_timing(r, peer, True),
                         fmt_timing(r, "ort", True), fmt_timing(r, "kiln", True),
                         _maybe(compiled.get("seconds") if compiled.get("status") == "ok"
                                else None, "{:.1f}"),
                         _maybe(first_run and first_run / 1e3, "{:.2g}")])
    return markdown_table(["model", "threads", "peer", "status", "peer ms", "ORT ms",
                           "kiln ms", "peer compile s", "peer first run s"], rows) + (
        "\n\ntorch.compile compiles on the first call, so its compile time is in its "
        "first run." if "torch.compile" in run_info["peers"] else "")


def _failure_item(result, status: str, message: str) -> str:
    """A list item for a failed row, with the error text in a code block."""
    item = f"- `{result.key}`, {result.threads} thread(s): **{status}**"
    if message:
        item += "\n\n  ```\n  " + message.replace("\n", "\n  ") + "\n  ```"
    return item


def _failures_section(results) -> str:
    items, seen = [], set()
    for r in results:
        if r.status == "ok" or (r.key, r.status, r.message) in seen:
            continue
        seen.add((r.key, r.status, r.message))
        items.append(_failure_item(r, r.status, r.message))
    return "\n".join(items) if items else "None: every model compiled, ran and matched."


def _fusion_limit_section(results, run_info) -> str:
    rows = [r for r in results if r.fusion_limit]
    sources = sorted({r.fusion_limit.get("source", "") for r in rows})
    failures = "".join("\n\n" + _failure_item(r, r.fusion_limit["status"],
                                               r.fusion_limit["message"])
                       for r in rows if r.fusion_limit["status"] != "ok")
    repeats = run_info["settings"].get("fusion_limit_repeats", "its")
    return f"""## Fusion limit

What fusion can at best achieve: a hand-written C++ loop per model
({", ".join(f"`{source}`" for source in sources)}) that computes the model in one pass over
memory (reads the input once, writes the output once), with AVX-512 intrinsics (AVX2 where
the CPU has no AVX-512), fast polynomial approximations in place of libm's transcendentals
(for GELU, a power of two instead of tanh), and the rows split across threads started once.
It runs right after kiln and ONNX Runtime at each thread count, on its own random inputs of
the same distribution, and times itself: the median of {repeats} back-to-back passes after a
warm-up, lowest-highest pass in parentheses. kiln's and ONNX Runtime's times are those of
the table above (they include a Python call, a few microseconds). `kiln / hand-written` is
kiln's time over the loop's: 1 is as fast as the hand-written code; the target for the fused
elementwise chain is at most 1.15. The loop's max abs error is against a scalar
double-precision loop over the same inputs.

{markdown_table(FUSION_LIMIT_HEADERS, [fusion_limit_cells(r, markdown=True) for r in rows])}{failures}"""


# Issue 7's target for the models' 1 -> 2 thread speedup.
SCALING_TARGET = 1.85


# A row's cache-line round trip between the two CPUs above this multiple of
# the run's shortest: its CPUs were further apart than the closest placement
# the run saw (no shared cache).
APART_FACTOR = 2.0


def round_trips(result) -> list:
    """The CPUs' round trips measured around the row's rounds (None where
    the probe failed or was not run); for results of runs before session
    54, around its workers."""
    if result.rounds:
        return [ns for timed_round in result.rounds for ns in timed_round["round_trip_ns"]]
    return result.core_round_trip_ns


def _round_trips(result) -> list:
    """The row's measured round trips (the probe's failures, None, left out)."""
    return [ns for ns in round_trips(result) if ns]


def _fmt_round_trips(result) -> str:
    trips = _round_trips(result)
    if not trips:
        return "-"
    low, high = round(min(trips)), round(max(trips))
    return f"{low}" if low == high else f"{low}-{high}"


def _closest_round_trip(results):
    """The run's shortest round trip: the closest placement it saw."""
    return min((ns for r in results for ns in _round_trips(r)), default=None)


def _rows_apart(results) -> list:
    """Rows whose round trip, around one of their rounds, says the two CPUs
    were further apart than their closest placement in the run
    (APART_FACTOR). Sampled between rounds only: a move and back within a
    round goes unseen."""
    closest = _closest_round_trip(results)
    if not closest:
        return []
    return [r for r in results
            if any(ns > APART_FACTOR * closest for ns in _round_trips(r))]


def _placement(timed_round: dict, closest):
    """"close" or "apart" where the round trips before and after the round
    agree on it (APART_FACTOR over the run's closest), else None (the host
    moved the CPUs during the round, or a trip is missing)."""
    trips = timed_round["round_trip_ns"]
    if not closest or not trips or None in trips:
        return None
    apart = [ns > APART_FACTOR * closest for ns in trips]
    return "apart" if all(apart) else "close" if not any(apart) else None


def _by_placement(result, closest) -> dict:
    """The row's rounds taken with the CPUs close and with them apart."""
    rounds = {"close": [], "apart": []}
    for timed_round in result.rounds:
        placement = _placement(timed_round, closest)
        if placement:
            rounds[placement].append(timed_round)
    return rounds


def _fmt_placements(values: dict) -> str:
    """"close / apart" cell: each a ratio and its number of rounds."""
    def one(value):
        ratio, count = value
        return "-" if ratio is None else f"{ratio:.2f}x ({count})"
    return f"{one(values['close'])} / {one(values['apart'])}"


def _scaling_rows(results) -> list:
    """Per model timed ok on 1 thread and on more: each engine's time on 1
    thread over its time on the most threads; kiln's, and its speedup over
    ORT, in the multi-threaded row's rounds taken with the CPUs close and
    with them apart; and the CPUs' round trips."""
    by_key = {}
    for r in results:
        if r.status == "ok":
            by_key.setdefault(r.key, {})[r.threads] = r
    closest = _closest_round_trip(results)
    rows = []
    for key, runs in by_key.items():
        most = max(runs)
        if 1 not in runs or most == 1:
            continue
        cells = [key, str(most)]
        for engine in ("kiln", "ort"):
            one, many = median_ms(runs[1], engine), median_ms(runs[most], engine)
            cells.append(f"{one / many:.2f}x" if one and many else "-")
        kiln_one = median_ms(runs[1], "kiln")
        scaling, over_ort = {}, {}
        for placement, rounds in _by_placement(runs[most], closest).items():
            kiln_ms = [r["ms"]["kiln"] for r in rounds if r["ms"].get("kiln")]
            ratio = kiln_one / statistics.median(kiln_ms) if kiln_one and kiln_ms else None
            scaling[placement] = (ratio, len(kiln_ms))
            over_ort[placement] = (paired_speedup(rounds), len(paired_rounds(rounds)))
        cells += [_fmt_placements(scaling), _fmt_placements(over_ort),
                  _fmt_round_trips(runs[most])]
        rows.append(cells)
    return rows


def _scaling_section(results) -> str:
    rows = _scaling_rows(results)
    if not rows:
        return ""
    table = markdown_table(["model", "threads", "kiln speedup over 1 thread",
                            "ORT speedup over 1 thread",
                            "kiln over 1 thread, CPUs close / apart (rounds)",
                            "kiln speedup over ORT, CPUs close / apart (rounds)",
                            "CPUs' round trip (ns)"], rows)
    return f"""## Thread scaling

Each engine's median time on 1 thread over its median time on the most threads, from the
table above (issue 7's target for kiln's models on 2 threads: {SCALING_TARGET}x); the thread
counts' rounds were taken in alternating passes (Method). Noisy rows (above) make these ratios
noisy too. On a virtual machine the host may place the two vCPUs on cores that share a cache
or on cores that do not (other core complexes or sockets), and move them between the two over
seconds to minutes; apart, what one thread writes and the other reads crosses the host's
interconnect, and a multi-threaded round can run slower for it. So a cache line's round trip
between the first two CPUs is measured before and after every multi-threaded round
(`bench/probe/probe.cpp --round-trip`; last column: lowest-highest; results of runs before
session 54 have it per worker and no rounds to sort). A round is taken with the
CPUs *close* when both of its round trips are at most {APART_FACTOR}x the run's shortest,
*apart* when both are above (rounds with one of each are in neither): the fifth and sixth
columns give kiln's time on 1 thread over its median in those rounds, and the median of those
rounds' ORT / kiln ratios, each with its number of rounds.

{table}

"""


def _summary(results) -> str:
    """Rows ok, and per thread count how often kiln is faster and the
    geometric mean speedup."""
    ok = sum(r.status == "ok" for r in results)
    parts = [f"{ok} of {len(results)} rows ok."]
    for threads in sorted({r.threads for r in results}):
        ratios = [s for s in (speedup(r) for r in results if r.threads == threads) if s]
        if not ratios:
            continue
        geo = math.exp(sum(math.log(s) for s in ratios) / len(ratios))
        faster = sum(s >= 1 for s in ratios)
        parts.append(f"On {threads} thread{'s' if threads > 1 else ''}, kiln is faster than "
                     f"ONNX Runtime on {faster} of {len(ratios)} timed models; geometric mean "
                     f"speedup (ORT time / kiln time) {geo:.3g}"
                     + (f", i.e. kiln takes {1 / geo:.3g}x ORT's time." if geo < 1 else "."))
    return " ".join(parts)


# Cores other processes may use during a row before its numbers are flagged.
BUSY_CORES = 0.25


# Highest / lowest round median of an engine beyond which a row is flagged.
NOISY_SPREAD = 1.15


def _noisy_rows(results) -> list:
    """Rows where an engine's round medians differ by more than NOISY_SPREAD:
    contention the `other load` column cannot see (on a virtual machine,
    other guests on the same cores), which slows some rounds only."""
    noisy = []
    for result in results:
        for engine in ("kiln", "ort"):
            t = timing(result, engine)
            if (t and not t.get("single_run") and t.get("repeats", 1) > 1
                    and t["min_ms"] > 0 and t["max_ms"] / t["min_ms"] > NOISY_SPREAD):
                noisy.append(result)
                break
    return noisy


def _load_warning(results, run_info) -> str:
    """Says how busy the machine was, from each row's other-load measurement
    and from the spread of its rounds."""
    loads = [r.other_load for r in results if r.other_load is not None]
    if not loads:
        text = ("The CPU time other processes used during the run was not recorded (column "
                "`other load`).")
    elif not (busy := [r for r in results
                       if r.other_load is not None and r.other_load > BUSY_CORES]):
        text = f"Other processes used at most {max(loads):.2f} cores during any row."
    else:
        text = (f"**The machine was busy**: other processes used more than {BUSY_CORES} cores "
                f"during {len(busy)} of {len(results)} rows (up to {max(loads):.1f} cores; "
                "column `other load`). Those rows' numbers, the multi-threaded ones most, are "
                "lower and noisier than on a quiet machine.")
    noisy = _noisy_rows(results)
    if noisy:
        names = ", ".join(f"{r.key} ({r.threads} thr.)" for r in noisy)
        text += (f" **Noisy rows**: in {len(noisy)} of {len(results)} rows an engine's round "
                 f"medians differ by more than {round((NOISY_SPREAD - 1) * 100)}% (the "
                 "parentheses): slowdowns no process here caused, such as other guests on the "
                 "host's cores. Their times say less than the others' (their speedups, "
                 "paired by round, less so): " + names + ".")
    else:
        text += " Every engine's round medians agree within " \
                f"{round((NOISY_SPREAD - 1) * 100)}%."
    apart = _rows_apart(results)
    if apart:
        names = ", ".join(f"{r.key} ({r.threads} thr.)" for r in apart)
        where = " ([Thread scaling](#thread-scaling))" if _scaling_rows(results) else ""
        text += (f" **CPUs apart**: in {len(apart)} of {len(results)} rows a cache line's "
                 "round trip between the two CPUs, measured before or after one of the row's "
                 f"rounds, took more than {APART_FACTOR}x its shortest in the run{where}: "
                 "most likely the host had placed them further apart (on cores without a "
                 "shared cache). " + names + ".")
    return text


def _notes(run_info) -> str:
    return "".join(f"\nNote: {note}\n" for note in run_info.get("notes", []))


def write_markdown(path: str, results, probe, roofline, env, run_info) -> list:
    docs_dir = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    os.makedirs(docs_dir, exist_ok=True)
    charts, chart_note = write_charts(results, roofline, docs_dir, stem)
    table = markdown_table(MARKDOWN_HEADERS,
                           [row_cells(r, roofline, markdown=True) for r in results])
    chart_lines = "\n\n".join(f"![{title}]({os.path.basename(file)})"
                              for title, file in charts) or chart_note
    fusion_limit = (_fusion_limit_section(results, run_info) + "\n\n"
                    if any(r.fusion_limit for r in results) else "")
    text = f"""# Benchmarks: kiln against ONNX Runtime

Generated by `bench/run.sh` ({'smoke run' if run_info['smoke'] else 'full run'}); do not edit
by hand, rerun it. Smoke check (CI): `bench/smoke.sh`. How the numbers are taken is under
[Method](#method); the code is in `bench/`. The CUDA target's numbers (an NVIDIA H200, against
PyTorch) are in [benchmarks-gpu.md](benchmarks-gpu.md).

{_summary(results)}

{_load_warning(results, run_info)}
{_notes(run_info)}
Speedup is ONNX Runtime's time over kiln's, round by round: the median of the rounds' ORT / kiln
ratios (Method), which can differ from the ratio of the two medians shown; below 1, kiln is
slower. Times are milliseconds per inference, median of the rounds (lowest-highest round
median in parentheses).

{table}

{chart_lines}

{_scaling_section(results)}{fusion_limit}## Failures

{_failures_section(results)}

## Optional peers

{_peers_section(results, run_info)}

## Machine

{_probe_table(probe, roofline)}

{_environment_table(env, probe, roofline, run_info)}

## Models

Generated by `bench/models.py` with random weights (fixed seeds), opset 18, all shapes static,
cached in `build/bench/models/`. Model keys end in `-bBATCH`.

{_models_table(results)}

## Method

{METHOD}"""
    with open(path, "w") as f:
        f.write(text)
    return [path] + [file for _, file in charts]


# --------------------------------------------------------------------------
# Charts
# --------------------------------------------------------------------------

def write_charts(results, roofline, docs_dir: str, stem: str) -> tuple:
    """Writes the speedup bars and the roofline plot as PNGs. Returns
    ([(title, path)], note); without matplotlib, no charts and a note."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], ("*(No charts: matplotlib is not installed; `pip install matplotlib` and "
                    "rerun.)*")
    charts = [("Speedup of kiln over ONNX Runtime",
               _speedup_chart(plt, results, os.path.join(docs_dir, f"{stem}-speedup.png"))),
              ("Roofline", _roofline_chart(plt, results, roofline,
                                           os.path.join(docs_dir, f"{stem}-roofline.png")))]
    return charts, ""


def _speedup_chart(plt, results, path: str) -> str:
    keys = list(dict.fromkeys(r.key for r in results))
    thread_counts = sorted({r.threads for r in results})
    by = {(r.key, r.threads): r for r in results}
    height = 0.8 / len(thread_counts)
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(keys) * len(thread_counts) + 1.5))
    for i, threads in enumerate(thread_counts):
        ys = [k + i * height for k in range(len(keys))]
        values = [speedup(by[(key, threads)]) if (key, threads) in by else None
                  for key in keys]
        ax.barh([y for y, v in zip(ys, values) if v], [v for v in values if v],
                height=height, label=f"{threads} thread{'s' if threads > 1 else ''}")
        for y, key, value in zip(ys, keys, values):
            result = by.get((key, threads))
            label = f"{value:.2g}x" if value else (result.status if result else "")
            ax.text(value or 1.0, y, " " + label, va="center", fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks([k + 0.4 - height / 2 for k in range(len(keys))], keys, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("speedup = ONNX Runtime time / kiln time (log; right of 1: kiln faster)")
    ax.set_title("kiln vs ONNX Runtime")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _roofline_chart(plt, results, roofline, path: str) -> str:
    """One panel per thread count: the roofline, kiln's and ONNX Runtime's
    point for each model joined by a line, models numbered (key in the
    legend below) because their labels would overlap."""
    thread_counts = sorted({r.threads for r in results})
    keys = list(dict.fromkeys(r.key for r in results))
    number = {key: i + 1 for i, key in enumerate(keys)}
    fig, axes = plt.subplots(1, len(thread_counts), figsize=(6.5 * len(thread_counts), 6.5),
                             squeeze=False)
    intensities = [r.flops / r.bytes for r in results] or [1.0]
    x_low = min(intensities) / 3
    x_high = max(intensities + [roofline.ridge_point(max(thread_counts))]) * 3
    for ax, threads in zip(axes[0], thread_counts):
        xs = [x_low * (x_high / x_low) ** (i / 200) for i in range(201)]
        ax.plot(xs, [min(roofline.peak_gflops(threads), x * roofline.bandwidth_gbs(threads))
                     for x in xs], color="black", linewidth=1.2, label="roofline (DRAM)")
        for r in (r for r in results if r.threads == threads):
            x = r.flops / r.bytes
            kiln, ort = achieved_gflops(r, "kiln"), achieved_gflops(r, "ort")
            if kiln and ort:
                ax.plot([x, x], [kiln, ort], color="grey", linewidth=0.6, zorder=1)
            if ort:
                ax.scatter([x], [ort], marker="s", color="tab:blue", s=18, zorder=2)
            if kiln:
                ax.scatter([x], [kiln], marker="o", color="tab:red", s=22, zorder=3)
                ax.annotate(str(number[r.key]), (x, kiln), fontsize=7, xytext=(4, 2),
                            textcoords="offset points")
        ax.scatter([], [], marker="o", color="tab:red", label="kiln")
        ax.scatter([], [], marker="s", color="tab:blue", label="ONNX Runtime")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP / minimum byte)")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{threads} thread{'s' if threads > 1 else ''}: peak "
                     f"{roofline.peak_gflops(threads):.0f} GFLOP/s, DRAM "
                     f"{roofline.bandwidth_gbs(threads):.0f} GB/s")
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=8, loc="lower right")
    legend = "   ".join(f"{number[key]} {key}" for key in keys)
    fig.text(0.5, 0.01, legend, ha="center", va="bottom", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
