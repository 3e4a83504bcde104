#!/usr/bin/env python3
"""Measures one model at one thread count with several engines, in one fresh
process (started by bench/run.py, which kills it on timeout).

For each engine, in the order given (ONNX Runtime first: it is the
reference):
  1. open a session and run it once, measuring the peak resident memory this
     adds (VmHWM - VmRSS before, with the high-water mark reset through
     /proc/self/clear_refs);
Then:
  2. compare every engine's first outputs with the reference's;
  3. warm up each engine;
  4. time `rounds` rounds; in each round every engine runs a block of runs
     (its own count, sized by the time budget), one engine after the other,
     in an order that rotates each round so that no engine always goes first.
     Each block gives the median of its runs' latencies. With --round-trips,
     a cache line's round trip between the first two CPUs is measured before
     the first round and after each (machine.core_round_trip_ns): each
     round's two values say where the host had placed the CPUs while the
     engines ran it.

Each result is printed as soon as it is known, as one JSON line on stdout
("open", "check", "timing", "error"), so that a killed worker still leaves
what it measured; the rounds' block medians, side by side, and their round
trips come last, as one "rounds" line (engine ROUNDS_ENGINE).

    measure.py --meta M.json --threads 2 --budget 10 --engine ort=M.onnx \
               --engine kiln=M.so
"""

import argparse
import functools
import json
import sys
import time

import numpy as np

import machine
from engines import KILN_BIN_DIR, KILN_RUNTIME, ROUNDS_ENGINE, KilnEngine, engines_by_name

# Integer inputs (token ids) are drawn from [0, INT_INPUT_HIGH): valid for
# any embedding table of at least that many rows.
INT_INPUT_HIGH = 1000
MAX_RUNS_PER_BLOCK = 200
# A first run longer than this (and than the engine's share of the budget)
# is taken as the only sample instead of being repeated.
COLD_RUN_LIMIT_S = 5.0


def emit(event: str, **fields) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def make_inputs(meta: dict) -> list:
    """Inputs with a fixed seed, identical for every engine."""
    rng = np.random.default_rng(0)
    arrays = []
    for spec in meta["inputs"]:
        dtype = np.dtype(spec["dtype"])
        if dtype.kind == "f":
            array = rng.standard_normal(spec["shape"]).astype(dtype)
        elif dtype.kind == "b":
            array = rng.integers(0, 2, spec["shape"]).astype(dtype)
        else:
            array = rng.integers(0, INT_INPUT_HIGH, spec["shape"]).astype(dtype)
        arrays.append(np.ascontiguousarray(array))
    return arrays


# --------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------

def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class PeakMemory:
    """Peak resident memory added by what runs inside the `with` block.
    Linux resets VmHWM to the current RSS when 5 is written to clear_refs;
    where that is not allowed, the RSS growth at the end is used instead
    (a lower bound of the peak)."""

    def __enter__(self):
        try:
            with open("/proc/self/clear_refs", "w") as clear_refs:
                clear_refs.write("5")
            self.peak_field = "VmHWM"
        except OSError:
            self.peak_field = "VmRSS"
        self.start_kib = _status_kib("VmRSS")
        return self

    def __exit__(self, *exc):
        self.bytes = max(0, _status_kib(self.peak_field) - self.start_kib) * 1024
        return False


# --------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------

def open_sessions(engines: list, artifacts: dict, meta: dict, inputs: list,
                  threads: int) -> dict:
    """Opens each engine and runs it once; returns name -> (session,
    first-run seconds). Engines that fail are reported and left out."""
    sessions = {}
    for engine in engines:
        try:
            with PeakMemory() as memory:
                start = time.perf_counter()
                session = engine.open(meta, artifacts[engine.name], inputs, threads)
                opened = time.perf_counter()
                session.run()
                first_run = time.perf_counter() - opened
        except Exception as error:  # report any engine failure and go on
            emit("error", engine=engine.name, message=f"{type(error).__name__}: {error}")
            continue
        sessions[engine.name] = (session, first_run)
        emit("open", engine=engine.name, open_s=opened - start, first_run_ms=first_run * 1e3,
             peak_bytes=memory.bytes, threads_used=session.threads_used, **session.info)
    return sessions


def compare(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> dict:
    """|actual - expected| <= atol + rtol * |expected| elementwise (NaN only
    matches NaN). Returns whether it holds and the worst element."""
    if actual.shape != expected.shape:
        return {"ok": False, "detail": f"shape {actual.shape} != {expected.shape}"}
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    error = np.abs(a - e)
    allowed = atol + rtol * np.abs(e)
    both_nan = np.isnan(a) & np.isnan(e)
    bad = ~((error <= allowed) | both_nan)
    # How far each element is beyond its tolerance: a NaN against a number
    # is the worst, NaN against NaN is fine.
    excess = np.where(both_nan, -np.inf, np.where(np.isnan(error), np.inf, error - allowed))
    worst = int(np.argmax(excess)) if excess.size else 0
    return {"ok": not bad.any(), "mismatches": int(bad.sum()), "elements": int(a.size),
            "max_abs_err": float(np.nanmax(error)) if error.size else 0.0,
            "worst_index": worst, "got": float(a.flat[worst]) if a.size else None,
            "expected": float(e.flat[worst]) if e.size else None}


def check_outputs(sessions: dict, reference: str, meta: dict) -> None:
    expected = [np.array(o) for o in sessions[reference][0].outputs()]
    for name, (session, _) in sessions.items():
        if name == reference:
            continue
        results = [compare(np.asarray(got), want, meta["rtol"], meta["atol"])
                   for got, want in zip(session.outputs(), expected)]
        failed = [dict(r, output=spec["name"])
                  for r, spec in zip(results, meta["outputs"]) if not r["ok"]]
        emit("check", engine=name, ok=not failed, against=reference,
             rtol=meta["rtol"], atol=meta["atol"],
             max_abs_err=max(r.get("max_abs_err", float("inf")) for r in results),
             failures=failed)


def latency_block(run, count: int) -> list:
    """Latency of each of `count` runs, in seconds."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def warm_up(session, first_run_s: float, share_s: float) -> list:
    """Warms an engine up; returns the warm-up latencies (at least one run,
    for up to a fifth of the engine's share of the budget). An engine whose
    first run took longer than both its share and COLD_RUN_LIMIT_S is not
    run again: for such a slow run the cold start hardly matters, and the
    first run is all it gets."""
    if first_run_s > max(share_s, COLD_RUN_LIMIT_S):
        return []
    target = min(0.2 * share_s, 1.0)
    times = latency_block(session.run, 1)
    while sum(times) < target and len(times) < 50:
        times += latency_block(session.run, 1)
    return times


# Seconds between two engines' blocks (time_sessions).
ENGINE_GAP_S = 0.1


def time_sessions(sessions: dict, budget_s: float, rounds: int, round_trip=None,
                  first_round: int = 0) -> None:
    """Times the engines' rounds (step 4). `round_trip`, when given, returns
    the CPUs' round trip in ns (or None), measured around every round.
    `first_round` numbers the rounds for the order's rotation, so that the
    passes of a row (bench/run.py) continue it instead of each starting
    with the same engine."""
    share_s = budget_s / len(sessions)  # each engine's total timed seconds
    plan = {}
    for name, (session, first_run) in sessions.items():
        warm = warm_up(session, first_run, share_s)
        per_run = float(np.median(warm)) if warm else first_run
        # Every round if the budget allows one run per round; else as many
        # single-run rounds as fit (none: the warm-up, or the first run, is
        # the one sample).
        engine_rounds = rounds if per_run * rounds <= share_s else int(share_s // per_run)
        runs = int(min(MAX_RUNS_PER_BLOCK, max(1, share_s / max(engine_rounds, 1) / per_run)))
        plan[name] = (session, engine_rounds, runs, warm, first_run)

    medians = {name: [] for name in plan}
    names = list(plan)
    # Per round: each engine's block median (ms) and the round trips
    # before and after it.
    timed_rounds = []

    def measured_round_trip():
        if not round_trip or not rounds:
            return None
        # After the pause the blocks take too: a spinning pool thread of
        # the engine just run would take a core from the probe's threads.
        time.sleep(ENGINE_GAP_S)
        return round_trip()

    trip_before = measured_round_trip()
    for round_index in range(rounds):
        shift = (first_round + round_index) % len(names)
        blocks_ms = {}
        for name in names[shift:] + names[:shift]:
            session, engine_rounds, runs, _, _ = plan[name]
            if round_index < engine_rounds:
                # A pause first: the previous engine's pool threads, which
                # spin for a while after a run (ONNX Runtime's by default),
                # would otherwise take a core from this block's threads.
                time.sleep(ENGINE_GAP_S)
                medians[name].append(float(np.median(latency_block(session.run, runs))))
                blocks_ms[name] = medians[name][-1] * 1e3
        trip_after = measured_round_trip()
        timed_rounds.append({"ms": blocks_ms, "round_trip_ns": [trip_before, trip_after]})
        trip_before = trip_after

    for name, (session, engine_rounds, runs, warm, first_run) in plan.items():
        # Without timed rounds, the last warm-up run is the sample, or the
        # first (cold) run when there was no warm-up.
        samples = medians[name] or warm[-1:] or [first_run]
        emit("timing", engine=name, median_ms=float(np.median(samples)) * 1e3,
             min_ms=min(samples) * 1e3, max_ms=max(samples) * 1e3,
             samples_ms=[sample * 1e3 for sample in samples],
             repeats=len(medians[name]), runs_per_repeat=runs if medians[name] else 0,
             single_run=not medians[name], cold=not medians[name] and not warm)
    emit("rounds", engine=ROUNDS_ENGINE, timed=timed_rounds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--meta", required=True, help="model metadata JSON (models.py)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--budget", type=float, default=10.0,
                        help="seconds of timed runs, shared by the engines")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--engine", action="append", default=[],
                        help="NAME=ARTIFACT; the first is the reference")
    parser.add_argument("--round-trips", metavar="PROBE", default=None,
                        help="measure the CPUs' round trip around every round with the "
                             "machine probe's binary PROBE (machine.core_round_trip_ns)")
    parser.add_argument("--first-round", type=int, default=0,
                        help="the first round's number in the row (rotates the engines' order)")
    parser.add_argument("--kiln-bin", default=None)
    parser.add_argument("--kiln-runtime", default=None)
    args = parser.parse_args()

    with open(args.meta) as f:
        meta = json.load(f)
    artifacts = dict(spec.split("=", 1) for spec in args.engine)
    kiln = KilnEngine(args.kiln_bin or KILN_BIN_DIR, args.kiln_runtime or KILN_RUNTIME)
    engines = engines_by_name(list(artifacts), kiln)

    inputs = make_inputs(meta)
    sessions = open_sessions(engines, artifacts, meta, inputs, args.threads)
    reference = engines[0].name
    if reference in sessions and len(sessions) > 1:
        check_outputs(sessions, reference, meta)
    if sessions:
        round_trip = (functools.partial(machine.core_round_trip_ns, args.round_trips)
                      if args.round_trips else None)
        time_sessions(sessions, args.budget, args.rounds, round_trip, args.first_round)
    return 0


if __name__ == "__main__":
    sys.exit(main())
