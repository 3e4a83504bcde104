"""The fusion limit: hand-written single-pass C++ loops (bench/fusion_limit/)
for some benchmark models, timed in the same run as kiln and ONNX Runtime.
kiln's time over the loop's says how close kiln's fused code comes to what a
performance engineer would write by hand.

Each loop is a standalone program, built like the machine probe
(machine.build_native) into the work directory, that computes the model on
its own random inputs, times whole passes over the tensor itself (threads
started once, warm-up first) and prints one JSON object: ms_median, ms_min,
ms_max, isa, and max_abs_error_vs_reference against a scalar
double-precision loop.
"""

import json
import os
import subprocess
from typing import Optional

import machine

FUSION_LIMIT_DIR = os.path.join(machine.REPO_ROOT, "bench", "fusion_limit")
# Model name (bench/models.py) -> its hand-written loop.
SOURCES = {"gelu-bias-relu": "gelu_bias_relu.cpp"}
# The loops are accurate to about 1e-6; an error above this means the loop
# computes something else, and its time would compare nothing.
MAX_ABS_ERROR = 1e-5


class FusionLimit:
    """One model's loop, built once per run; measure() runs it on a thread
    count. A build failure is kept and reported by every measure()."""

    def __init__(self, source: str, cache_dir: str):
        self.source = source
        self.binary, self.build_error = None, ""
        try:
            self.binary = machine.build_native(source, cache_dir)
        except machine.BuildError as error:
            self.build_error = str(error)

    def measure(self, threads: int, repeats: int, timeout_s: float) -> dict:
        """Returns the loop's JSON fields plus "source", "status" ("ok",
        "build error", "run error", "timeout", "MISMATCH") and "message"."""
        return {"source": os.path.relpath(self.source, machine.REPO_ROOT),
                **self._run(threads, repeats, timeout_s)}

    def _run(self, threads: int, repeats: int, timeout_s: float) -> dict:
        if self.build_error:
            return {"status": "build error", "message": self.build_error}
        # Warm-up: a tenth as many passes as are timed, at least one (it
        # loads x and y into the caches and gets the threads spinning).
        command = [self.binary, "--threads", str(threads), "--repeats", str(repeats),
                   "--warmup", str(max(1, repeats // 10))]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "message": f"no result within {timeout_s:g} s"}
        try:
            fields = json.loads(proc.stdout)
        except json.JSONDecodeError:
            fields = None
        if proc.returncode != 0 or not isinstance(fields, dict):
            last = (proc.stderr or proc.stdout).strip().splitlines()[-3:] or ["no output"]
            return {"status": "run error",
                    "message": f"exited with status {proc.returncode}: " + " | ".join(last)}
        error = fields["max_abs_error_vs_reference"]
        if not error <= MAX_ABS_ERROR:  # NaN or infinity included
            return {**fields, "status": "MISMATCH",
                    "message": f"max abs error {error:.3g} against the double-precision "
                               f"reference (limit {MAX_ABS_ERROR:g})"}
        return {**fields, "status": "ok", "message": ""}


def for_model(model_name: str, cache_dir: str) -> Optional[FusionLimit]:
    """Builds the model's hand-written loop; None when it has none."""
    source = SOURCES.get(model_name)
    return FusionLimit(os.path.join(FUSION_LIMIT_DIR, source), cache_dir) if source else None
