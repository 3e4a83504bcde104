#!/usr/bin/env python3
"""Unit tests of bench/measure.py's rounds (ctest bench-measure): fake
engines, no model run."""

import contextlib
import io
import itertools
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import measure  # noqa: E402
from engines import ROUNDS_ENGINE  # noqa: E402


class FakeSession:
    def run(self):
        time.sleep(0.001)


def timed_rounds(rounds: int, first_round: int, round_trip) -> list:
    """The "rounds" event of time_sessions over engines a and b."""
    sessions = {"a": (FakeSession(), 0.001), "b": (FakeSession(), 0.001)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        measure.time_sessions(sessions, 0.1, rounds, round_trip, first_round)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    (event,) = [e for e in events if e["event"] == "rounds"]
    assert event["engine"] == ROUNDS_ENGINE
    return event["timed"]


class RoundsTest(unittest.TestCase):
    def test_order_rotates_from_first_round(self):
        rounds = timed_rounds(3, 1, None)
        # Each round's blocks in the order they ran.
        self.assertEqual([list(r["ms"]) for r in rounds], [["b", "a"], ["a", "b"], ["b", "a"]])
        self.assertTrue(all(ms > 0 for r in rounds for ms in r["ms"].values()))

    def test_round_trips_around_every_round(self):
        counter = itertools.count(100)
        rounds = timed_rounds(2, 0, lambda: next(counter))
        # Before the first round and after each: a round's trip after it is
        # the next one's before it.
        self.assertEqual([r["round_trip_ns"] for r in rounds], [[100, 101], [101, 102]])

    def test_no_round_trips_without_the_probe(self):
        rounds = timed_rounds(1, 0, None)
        self.assertEqual(rounds[0]["round_trip_ns"], [None, None])


if __name__ == "__main__":
    unittest.main()
