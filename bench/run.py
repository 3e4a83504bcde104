#!/usr/bin/env python3
"""kiln benchmark runner: every model compiled by kiln and run side by side
with ONNX Runtime (and IREE / torch.compile when installed), checked against
ONNX Runtime's outputs, placed on the machine's roofline.

Full run (regenerates docs/benchmarks.md and the charts in docs/):
    bench/run.sh
Smoke run (a few small models, tiny repeat counts; exits 1 on any failure
or mismatch):
    bench/smoke.sh

Steps: build and run the machine probe (bench/probe/probe.cpp); generate the
models (bench/models.py, cached in build/bench/models); for each model,
compile it with kiln-compile (and the peers' compilers), then for each thread
count start a worker (bench/measure.py) that runs every engine in one
process, interleaved, under a timeout, and then, for the models that have
one, the hand-written fusion-limit loop (bench/handwritten.py). A model that
fails to compile, fails to run, mismatches or times out is reported in the
table's status column and the run goes on. The probe runs again after each
model; the report's peaks and bandwidths are the best of all probes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Optional

import engines as engine_registry
import handwritten
import machine
import models
import report

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
DEFAULT_WORK_DIR = os.path.join(REPO_ROOT, "build", "bench")
REFERENCE = "ort"


@dataclass
class Settings:
    """How long and how often to measure; --smoke swaps in SMOKE."""
    budget_s: float = 8.0           # timed seconds per model and thread count
    # Repeats (blocks of runs) per engine. 9, not 5: on a 2-vCPU virtual
    # machine other guests slow whole rounds (33 of 44 rows spread over 15%
    # with 5), and the median of 9 outlasts 4 slow ones.
    rounds: int = 9
    # Workers per model and thread count, the thread counts taking turns
    # (1, 2, 1, 2, ...), each with rounds / passes rounds and budget_s /
    # passes seconds: a slow minute of the host then falls on both thread
    # counts' rounds, not on one of them, and the 1 -> N thread speedup is
    # a ratio of times taken together.
    passes: int = 3
    timeout_s: float = 120.0        # per worker (one pass of a model and thread count)
    compile_timeout_s: float = 600.0
    quick_probe: bool = False
    fusion_limit_repeats: int = 200  # timed passes of a hand-written loop


FULL = Settings()
SMOKE = Settings(budget_s=0.5, rounds=2, passes=2, timeout_s=120.0,
                 compile_timeout_s=300.0, quick_probe=True, fusion_limit_repeats=5)


@dataclass
class Result:
    """One table row: one model at one thread count."""
    key: str
    name: str
    batch: int
    threads: int
    description: str
    flops: int
    bytes: int
    status: str = "ok"
    message: str = ""                                 # error text behind the status
    other_load: Optional[float] = None                # cores used by other processes
    # The timed rounds of all passes (measure.py's "rounds" event): per
    # round, each engine's block median {"ms": {engine: ms}} and, on more
    # than one thread, a cache line's round trip between the first two CPUs
    # before and after it ("round_trip_ns": [before, after], in ns;
    # machine.core_round_trip_ns; None where the probe failed or was not run).
    rounds: list = field(default_factory=list)
    # Results of runs before session 54: the round trips before and after
    # each worker of a multi-threaded row (report.round_trips reads either).
    core_round_trip_ns: list = field(default_factory=list)
    compile: dict = field(default_factory=dict)       # engine -> CompileResult fields
    engines: dict = field(default_factory=dict)       # engine -> {event: fields}
    # The hand-written loop's fields (handwritten.FusionLimit.measure), for
    # the models that have one.
    fusion_limit: dict = field(default_factory=dict)


# --------------------------------------------------------------------------
# Running one model
# --------------------------------------------------------------------------

def run_worker(meta_path: str, threads: int, artifacts: dict, settings: Settings,
               kiln: engine_registry.KilnEngine, probe: str, first_round: int) -> tuple:
    """Starts bench/measure.py for one model and thread count, its rounds
    numbered from first_round. Returns the events it printed, by engine,
    and whether it timed out. A multi-threaded worker measures the CPUs'
    round trip around its rounds with the machine probe's binary `probe`."""
    command = [sys.executable, os.path.join(BENCH_DIR, "measure.py"), "--meta", meta_path,
               "--threads", str(threads), "--budget", str(settings.budget_s),
               "--rounds", str(settings.rounds), "--first-round", str(first_round),
               "--kiln-bin", os.path.dirname(kiln.compiler), "--kiln-runtime", kiln.runtime]
    if threads > 1:
        command += ["--round-trips", probe]
    for name, artifact in artifacts.items():
        command += ["--engine", f"{name}={artifact}"]
    timed_out = False
    try:
        proc = subprocess.run(command, capture_output=True, text=True,
                              timeout=settings.timeout_s)
        stdout, stderr = proc.stdout, proc.stderr
        crashed = proc.returncode != 0
    except subprocess.TimeoutExpired as expired:
        # The worker is killed; keep what it printed before.
        stdout = _text(expired.stdout)
        stderr = _text(expired.stderr)
        timed_out, crashed = True, False
    events = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            events.setdefault(event.pop("engine"), {})[event.pop("event")] = event
    if crashed:
        # A crash inside an engine (a segfault in a model.so) kills the worker.
        last = stderr.strip().splitlines()[-3:] or ["no output"]
        events.setdefault("_worker", {})["error"] = {
            "message": f"worker exited with status {proc.returncode}: " + " | ".join(last)}
    return events, timed_out


def _text(value) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def classify(result: Result, timed_out: bool, timeout_s: float) -> None:
    """Sets the row's status from kiln's compile result and the worker's
    events, first problem first."""
    kiln_compile = result.compile.get("kiln", {})
    kiln = result.engines.get("kiln", {})
    if kiln_compile.get("status") != "ok":
        result.status = "compile " + kiln_compile.get("status", "skipped")
        result.message = kiln_compile.get("message", "")
    elif "error" in kiln:
        result.status, result.message = "run error", kiln["error"]["message"]
    elif "check" in kiln and not kiln["check"]["ok"]:
        result.status = "MISMATCH"
        result.message = report.describe_mismatch(kiln["check"])
    elif "timing" not in kiln:
        if timed_out:
            result.status = "timeout"
            result.message = (f"kiln's first run took {kiln['open']['first_run_ms'] / 1e3:.0f} s"
                              if "open" in kiln else
                              f"kiln did not finish one run within {timeout_s:g} s")
        else:
            worker = result.engines.get("_worker", {}).get("error", {})
            result.status, result.message = "run error", worker.get("message", "no result")


def measure_engines(meta_path: str, threads: int, artifacts: dict, settings: Settings,
                    kiln: engine_registry.KilnEngine, probe: str, first_round: int,
                    log) -> tuple:
    """Runs the worker; when a slow or crashing engine (naive kiln) took it
    down before the reference was timed, measures the others again without
    it, so that the row still has their numbers."""
    events, timed_out = run_worker(meta_path, threads, artifacts, settings, kiln, probe,
                                   first_round)
    unfinished = [name for name in artifacts if "timing" not in events.get(name, {})]
    if REFERENCE in unfinished and len(artifacts) > 1:
        unfinished.remove(REFERENCE)
        rest = {n: a for n, a in artifacts.items() if n not in unfinished}
        log(f"  measuring {', '.join(rest)} again without {', '.join(unfinished)}")
        again, _ = run_worker(meta_path, threads, rest, settings, kiln, probe, first_round)
        events.update({name: again.get(name, {})
                       for name in [*rest, engine_registry.ROUNDS_ENGINE]})
    return events, timed_out


def merge_events(into: dict, events: dict) -> None:
    """Adds one pass's worker events to a row's: each engine's first open,
    check and error, and its timing samples pooled with the earlier passes'
    (the median, lowest and highest over all of them)."""
    for engine, fields_by_kind in events.items():
        row = into.setdefault(engine, {})
        for kind, fields in fields_by_kind.items():
            if kind != "timing" or "timing" not in row:
                row.setdefault(kind, fields)
                continue
            # Each sample is a round's median, or a pass's one run (an engine
            # slower than its share of a pass's budget): pooled, they are
            # the row's repeats.
            timing = row["timing"]
            samples = timing["samples_ms"] + fields["samples_ms"]
            timing.update(median_ms=float(statistics.median(samples)), min_ms=min(samples),
                          max_ms=max(samples), samples_ms=samples, repeats=len(samples),
                          runs_per_repeat=max(1, timing["runs_per_repeat"],
                                              fields["runs_per_repeat"]),
                          single_run=False, cold=False)


def benchmark_model(spec, thread_counts: list, settings: Settings, peers: list,
                    kiln: engine_registry.KilnEngine, work_dir: str, log, on_result) -> list:
    models_dir = os.path.join(work_dir, "models")
    meta = models.ensure_model(spec, models_dir)
    meta_path = os.path.join(models_dir, spec.key + ".json")
    compiled_dir = os.path.join(work_dir, "compiled")
    os.makedirs(compiled_dir, exist_ok=True)

    compiles = {}
    for engine in [kiln, *peers]:
        log(f"  compiling {spec.key} with {engine.name} ...")
        compiles[engine.name] = engine.compile(meta, compiled_dir, settings.compile_timeout_s)
    artifacts = {REFERENCE: meta["onnx"]}
    artifacts.update({name: c.artifact for name, c in compiles.items() if c.status == "ok"})
    fusion_limit = handwritten.for_model(spec.name, work_dir)
    probe = machine.build_probe(work_dir)  # for the CPUs' round trips

    results = {threads: Result(spec.key, spec.name, spec.batch, threads, spec.description,
                               meta["flops"], meta["bytes"],
                               compile={name: asdict(c) for name, c in compiles.items()})
               for threads in thread_counts}
    timed_out = dict.fromkeys(thread_counts, False)
    passes = max(1, min(settings.passes, settings.rounds))
    pass_settings = replace(settings, budget_s=settings.budget_s / passes,
                            rounds=-(-settings.rounds // passes))
    kiln_skipped = ""  # why kiln is no longer run at higher thread counts
    for pass_index in range(passes):
        for threads in thread_counts:
            result = results[threads]
            if timed_out[threads]:
                continue  # a worker that timed out would again
            log(f"  running {spec.key} on {threads} thread(s), pass {pass_index + 1} "
                f"of {passes} ...")
            row_artifacts = {n: a for n, a in artifacts.items()
                             if not (kiln_skipped and n == "kiln")}
            with machine.OtherCpuLoad() as other_load:
                events, timed_out[threads] = measure_engines(
                    meta_path, threads, row_artifacts, pass_settings, kiln, probe,
                    pass_index * pass_settings.rounds, log)
                if fusion_limit and pass_index == 0:
                    log(f"  running the hand-written loop on {threads} thread(s) ...")
                    result.fusion_limit = fusion_limit.measure(
                        threads, settings.fusion_limit_repeats, settings.timeout_s)
            rounds_event = events.pop(engine_registry.ROUNDS_ENGINE, {}).get("rounds", {})
            result.rounds += rounds_event.get("timed", [])
            result.other_load = max(result.other_load or 0.0, other_load.cores)
            merge_events(result.engines, events)
            if pass_index or kiln_skipped:
                continue
            classify(result, timed_out[threads], settings.timeout_s)
            kiln_threads = result.engines.get("kiln", {}).get("open", {}).get("threads_used")
            if result.status == "timeout" and kiln_threads in (1, None):
                # A kiln without a thread pool would time out again at every
                # thread count: do not spend the time.
                kiln_skipped = (f"not run: timed out on {threads} thread(s), and this kiln "
                                "runs on one thread whatever the count")
    for threads in thread_counts:
        result = results[threads]
        if kiln_skipped and "kiln" not in result.engines and not timed_out[threads]:
            result.status, result.message = "timeout", kiln_skipped
        else:
            result.status, result.message = "ok", ""
            classify(result, timed_out[threads], settings.timeout_s)
        on_result(result)
    return [results[threads] for threads in thread_counts]


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def parse_args():
    summary, details = __doc__.split("\n\n", 1)
    parser = argparse.ArgumentParser(description=summary.replace("\n", " "), epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true",
                        help="small models, tiny repeat counts, exit 1 on any failure")
    parser.add_argument("--filter", default="", help="regex over model keys (name-bBATCH)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--out", default=None,
                        help="markdown report to write (default: docs/benchmarks.md for a "
                             "full run, none for --smoke)")
    def default(attribute):
        return f"(default {getattr(FULL, attribute):g}, --smoke {getattr(SMOKE, attribute):g})"
    parser.add_argument("--budget", type=float,
                        help="seconds of timed runs per model and thread count, shared by the "
                             "engines " + default("budget_s"))
    parser.add_argument("--rounds", type=int, help="repeats per engine " + default("rounds"))
    parser.add_argument("--passes", type=int,
                        help="workers per model and thread count, the thread counts "
                             "taking turns " + default("passes"))
    parser.add_argument("--timeout", type=float,
                        help="seconds per worker (a pass of a model and thread count) "
                             + default("timeout_s"))
    parser.add_argument("--compile-timeout", type=float,
                        help="seconds per compilation " + default("compile_timeout_s"))
    parser.add_argument("--no-peers", action="store_true", help="kiln and ORT only")
    parser.add_argument("--kiln-bin", default=engine_registry.KILN_BIN_DIR,
                        help="folder with kiln-compile (default build/bin)")
    parser.add_argument("--kiln-runtime", default=engine_registry.KILN_RUNTIME,
                        help="the shared runtime (default build/lib/libkiln_runtime.so)")
    parser.add_argument("--work-dir", default=DEFAULT_WORK_DIR,
                        help="generated and compiled models, probe, results JSON "
                             "(default build/bench)")
    parser.add_argument("--note", action="append", default=[],
                        help="a remark for the report's header (repeatable), e.g. what else "
                             "ran on the machine")
    parser.add_argument("--report-only", action="store_true",
                        help="measure nothing: rewrite the report from the last full run's "
                             "results JSON (after changing the report code, or to add a --note)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    return parser.parse_args()


def rewrite_report(results_path: str, out: str, notes: list) -> int:
    """Writes the markdown report and charts again from a results JSON."""
    with open(results_path) as f:
        saved = json.load(f)
    results = [Result(**fields) for fields in saved["results"]]
    run_info = saved["run"]
    run_info["notes"] = run_info.get("notes", []) + notes
    written = report.write_markdown(out, results, saved["probe"],
                                    machine.Roofline(saved["probe"]), saved["environment"],
                                    run_info)
    print("wrote " + ", ".join(written))
    return 0


def main() -> int:
    args = parse_args()
    out = args.out if args.out is not None else (
        None if args.smoke else os.path.join(REPO_ROOT, "docs", "benchmarks.md"))
    results_path = os.path.join(args.work_dir,
                                "smoke-results.json" if args.smoke else "results.json")
    if args.report_only:
        if not out:
            print("error: --report-only needs --out with --smoke", file=sys.stderr)
            return 2
        return rewrite_report(results_path, out, args.note)
    specs = models.select_models(args.filter, args.smoke)
    if args.list:
        for spec in specs:
            print(f"{spec.key:24} {spec.description}")
        return 0
    if not specs:
        print(f"no model matches --filter {args.filter!r}", file=sys.stderr)
        return 2
    base = SMOKE if args.smoke else FULL
    settings = Settings(
        budget_s=args.budget if args.budget is not None else base.budget_s,
        rounds=args.rounds if args.rounds is not None else base.rounds,
        timeout_s=args.timeout if args.timeout is not None else base.timeout_s,
        compile_timeout_s=(args.compile_timeout if args.compile_timeout is not None
                           else base.compile_timeout_s),
        passes=args.passes if args.passes is not None else base.passes,
        quick_probe=base.quick_probe, fusion_limit_repeats=base.fusion_limit_repeats)
    thread_counts = [int(t) for t in args.threads.split(",")]

    kiln = engine_registry.KilnEngine(args.kiln_bin, args.kiln_runtime)
    available, why = kiln.available()
    if not available:
        print(f"error: {why}", file=sys.stderr)
        return 2
    peers, peer_notes = [], {}
    for peer in ([] if args.no_peers else engine_registry.OPTIONAL_PEERS):
        ok, note = peer.available()
        if ok:
            peers.append(peer)
        else:
            peer_notes[peer.name] = note

    def log(message: str) -> None:
        print(message, flush=True)

    started = time.time()
    load = machine.load_average()
    if load != "unknown" and float(load) > 0.5:
        log(f"warning: load average {load}: other processes are running, the numbers "
            "(the probe's too) will be low and noisy")
    log(f"machine probe ({'quick' if settings.quick_probe else 'full'}) ...")
    probe = machine.run_probe(args.work_dir, max(thread_counts), settings.quick_probe)
    roofline = machine.Roofline(probe)
    env = machine.environment(kiln.compiler)
    log(report.probe_summary(probe))
    log(f"{len(specs)} models x threads {thread_counts}; peers: "
        f"{', '.join(p.name for p in peers) or 'none'}"
        + "".join(f"\n  {name}: {note}" for name, note in peer_notes.items()))
    log(report.terminal_header())

    results, probes = [], [probe]
    for spec in specs:
        results.extend(benchmark_model(
            spec, thread_counts, settings, peers, kiln, args.work_dir, log,
            on_result=lambda result: log(report.terminal_row(result, roofline)
                                         + report.terminal_fusion_limit_note(result))))
        # Probed again after each model (1-2 s): the best of all probes.
        probes.append(machine.run_probe(args.work_dir, max(thread_counts),
                                        settings.quick_probe))
    probe = machine.best_probe(probes)
    machine.save_probe(probe, args.work_dir)
    roofline = machine.Roofline(probe)
    log(f"best of {len(probes)} probes: " + report.probe_summary(probe))
    elapsed = time.time() - started

    log("")
    log(report.terminal_table(results, roofline))
    if any(r.fusion_limit for r in results):
        log("\nFusion limit (hand-written single-pass loop):")
        log(report.terminal_fusion_limit_table(results))
    run_info = {"settings": asdict(settings), "smoke": args.smoke, "elapsed_s": elapsed,
                "threads": thread_counts, "peers": [p.name for p in peers],
                "peer_notes": peer_notes, "filter": args.filter, "notes": args.note}
    with open(results_path, "w") as f:
        json.dump({"environment": env, "probe": probe, "run": run_info,
                   "results": [asdict(r) for r in results]}, f, indent=1)
    log(f"results: {results_path}")
    if out:
        written = report.write_markdown(out, results, probe, roofline, env, run_info)
        log("wrote " + ", ".join(written))

    failures = [r for r in results if r.status != "ok"]
    for result in failures:
        log(f"FAILED {result.key} threads {result.threads}: {result.status}: {result.message}")
    limit_failures = [r for r in results
                      if r.fusion_limit and r.fusion_limit["status"] != "ok"]
    for result in limit_failures:
        log(f"FAILED hand-written loop for {result.key} threads {result.threads}: "
            f"{result.fusion_limit['status']}: {result.fusion_limit['message']}")
    # The probe pins two threads to the process's first two CPUs: where
    # there are two, every multi-threaded row must have its round trips.
    two_cpus = len(os.sched_getaffinity(0)) > 1
    unmeasured = [r for r in results if two_cpus and r.threads > 1 and r.status == "ok"
                  and (not report.round_trips(r) or not all(report.round_trips(r)))]
    for result in unmeasured:
        log(f"FAILED {result.key} threads {result.threads}: the CPUs' round trip was not "
            f"measured (bench/probe/probe.cpp --round-trip): {report.round_trips(result)}")
    log(f"{len(results) - len(failures)} of {len(results)} rows ok in {elapsed:.0f} s"
        + (f"; {len(limit_failures)} hand-written loop run(s) failed" if limit_failures
           else "")
        + (f"; {len(unmeasured)} row(s) without the CPUs' round trip" if unmeasured else ""))
    return 1 if args.smoke and (failures or limit_failures or unmeasured) else 0


if __name__ == "__main__":
    sys.exit(main())
