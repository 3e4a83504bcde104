#!/usr/bin/env python3
"""Unit tests of bench/report.py's paired speedups and CPU placements (ctest
bench-report): rows built by hand, no engine run."""

import os
import statistics
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import report  # noqa: E402
from run import Result  # noqa: E402


def timed_round(kiln_ms, ort_ms, trips=(None, None)) -> dict:
    ms = {name: value for name, value in (("kiln", kiln_ms), ("ort", ort_ms)) if value}
    return {"ms": ms, "round_trip_ns": list(trips)}


def row(threads: int, rounds: list) -> Result:
    """A row whose timing medians are those of its rounds, as
    run.merge_events pools them."""
    result = Result("m-b1", "m", 1, threads, "", 1, 1, rounds=rounds)
    for engine in ("kiln", "ort"):
        samples = [r["ms"][engine] for r in rounds if engine in r["ms"]]
        result.engines[engine] = {"timing": {"median_ms": statistics.median(samples)}}
    return result


class PairedSpeedupTest(unittest.TestCase):
    def test_pairs_each_round(self):
        # kiln is faster in four rounds of five, but the medians of all
        # rounds (5.0 and 5.0) say the engines tie: the slow rounds
        # (another state of the host) hit kiln in one round and ORT in
        # others.
        rounds = [timed_round(5.0, 4.0), timed_round(4.0, 5.0), timed_round(6.0, 7.5),
                  timed_round(6.0, 6.6), timed_round(4.0, 4.4)]
        result = row(1, rounds)
        self.assertAlmostEqual(report.median_ms(result, "ort") / report.median_ms(result, "kiln"),
                               1.0)
        self.assertAlmostEqual(report.speedup(result), 1.1)

    def test_rounds_without_both_engines_are_left_out(self):
        rounds = [timed_round(2.0, 3.0), timed_round(None, 1.0), timed_round(1.0, None)]
        self.assertAlmostEqual(report.paired_speedup(rounds), 1.5)
        self.assertIsNone(report.paired_speedup([timed_round(None, 1.0)]))

    def test_medians_without_rounds(self):
        # Results of a run before the rounds were recorded.
        result = row(1, [timed_round(2.0, 3.0)])
        result.rounds = []
        self.assertAlmostEqual(report.speedup(result), 1.5)


class PlacementTest(unittest.TestCase):
    def test_both_round_trips_decide(self):
        closest = 100
        self.assertEqual(report._placement(timed_round(1, 1, (100, 190)), closest), "close")
        self.assertEqual(report._placement(timed_round(1, 1, (450, 470)), closest), "apart")
        self.assertIsNone(report._placement(timed_round(1, 1, (100, 450)), closest))
        self.assertIsNone(report._placement(timed_round(1, 1, (None, 100)), closest))
        self.assertIsNone(report._placement(timed_round(1, 1, (100, 100)), None))

    def test_scaling_row_splits_close_and_apart_rounds(self):
        one = row(1, [timed_round(8.0, 9.0), timed_round(8.0, 9.0)])
        two = row(2, [timed_round(4.0, 4.4, (100, 110)), timed_round(4.2, 4.6, (110, 105)),
                      timed_round(6.0, 6.6, (450, 460)), timed_round(5.0, 6.0, (100, 450))])
        (cells,) = report._scaling_rows([one, two])
        self.assertEqual(cells[0], "m-b1")
        # kiln: 8.0 on 1 thread, 4.1 (median of 4.0 and 4.2) in the close
        # rounds, 6.0 in the apart one; the mixed round is in neither.
        self.assertEqual(cells[4], "1.95x (2) / 1.33x (1)")
        # ORT / kiln per round: 1.1 and ~1.095 close, 1.1 apart.
        self.assertEqual(cells[5], "1.10x (2) / 1.10x (1)")
        self.assertEqual(cells[6], "100-460")
        self.assertEqual([r.threads for r in report._rows_apart([one, two])], [2])

    def test_round_trips_of_older_results(self):
        # Before session 54 a row had its round trips per worker, no rounds.
        result = row(2, [timed_round(1.0, 1.0)])
        result.rounds, result.core_round_trip_ns = [], [90, None, 450]
        self.assertEqual(report.round_trips(result), [90, None, 450])
        self.assertEqual(report._fmt_round_trips(result), "90-450")


if __name__ == "__main__":
    unittest.main()
