"""The machine the benchmark runs on: the probe's peak FLOP/s and bandwidth
(bench/probe/probe.cpp, built on first use into build/bench/), the roofline
derived from them, and the versions that go into the report. Also builds
the other standalone C++ programs of bench/ the same way."""

import datetime
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
from typing import Optional

from engines import first_error_lines

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE_SOURCE = os.path.join(REPO_ROOT, "bench", "probe", "probe.cpp")
CXX = os.environ.get("KILN_BENCH_CXX", "clang++-22")
# -march=native enables AVX-512 where the host has it; the kernels choose
# their ISA through target attributes and a CPUID check at run time.
CXX_FLAGS = ["-O3", "-march=native", "-std=c++17", "-pthread"]


class BuildError(Exception):
    """A standalone C++ program of bench/ did not compile; the message holds
    the compiler's error lines."""


def build_native(source_path: str, cache_dir: str) -> str:
    """Compiles a standalone C++ program of bench/ (the probe, the
    hand-written loops) unless a binary from the same source and flags is
    cached. Returns its path; raises BuildError."""
    with open(source_path, "rb") as source:
        digest = hashlib.sha256(source.read() + " ".join([CXX, *CXX_FLAGS]).encode())
    stem = os.path.splitext(os.path.basename(source_path))[0]
    binary = os.path.join(cache_dir, f"{stem}-{digest.hexdigest()[:12]}")
    if not os.path.exists(binary):
        os.makedirs(cache_dir, exist_ok=True)
        try:
            proc = subprocess.run([CXX, *CXX_FLAGS, source_path, "-o", binary],
                                  capture_output=True, text=True)
        except OSError as error:  # no compiler
            raise BuildError(f"{CXX}: {error}") from error
        if proc.returncode != 0:
            raise BuildError(f"{CXX} {os.path.relpath(source_path, REPO_ROOT)} failed:\n"
                             + first_error_lines(proc.stdout + proc.stderr))
    return binary


def run_probe(cache_dir: str, threads: int, quick: bool) -> dict:
    binary = build_probe(cache_dir)
    command = [binary, "--threads", str(threads)] + (["--quick"] if quick else [])
    result = json.loads(subprocess.run(command, check=True, capture_output=True,
                                       text=True).stdout)
    save_probe(result, cache_dir)
    return result


def build_probe(cache_dir: str) -> str:
    """The machine probe's binary (built unless cached); raises BuildError."""
    return build_native(PROBE_SOURCE, cache_dir)


def core_round_trip_ns(probe: str) -> Optional[float]:
    """A cache line's round trip between the process's first two CPUs
    (`probe --round-trip`, the binary build_probe returns), or None where
    there are fewer, they cannot be pinned or the probe fails (the reason on
    stderr). On a virtual machine
    the host may move the vCPUs between cores that share a cache and cores
    that do not (~100 and ~450 ns on a Zen 3 EPYC host) over seconds to
    minutes, which changes how fast one thread reads what the other wrote;
    bench/measure.py takes it around every round of a multi-threaded row,
    from its main thread: an engine that pinned that thread to one CPU would
    leave the probe one CPU (None)."""
    try:
        output = subprocess.run([probe, "--round-trip"], check=True, capture_output=True,
                                text=True, timeout=30).stdout
        return json.loads(output)["round_trip_ns"]
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
        print(f"probe --round-trip: {error}", file=sys.stderr)
        return None


def save_probe(probe: dict, cache_dir: str) -> None:
    """Writes `probe` where bench/micro.sh reads the last one."""
    with open(os.path.join(cache_dir, "probe.json"), "w") as f:
        json.dump(probe, f, indent=1)


def best_probe(probes: list) -> dict:
    """The best figure of each peak and bandwidth over `probes` (one machine,
    probed at several times). The hardware does not get faster, but a probe
    taken while another guest shares the host's core reads low, for longer
    than its own 5 trials: one run's first probe read 80.9 GFLOP/s on a core
    whose GEMMs then ran at 96 (its other probes: 99-102)."""
    best = json.loads(json.dumps(probes[0]))
    for section in ("peak_gflops", "bandwidth_gbs"):
        for kind, by_threads in best[section].items():
            for threads in by_threads:
                by_threads[threads] = max(p[section][kind][threads] for p in probes)
    best["probes"] = len(probes)
    return best


class Roofline:
    """Attainable GFLOP/s at a thread count: min(peak, intensity * DRAM
    bandwidth). Thread counts the probe did not measure use the nearest
    lower one that it did, scaled linearly for the compute peak (cores are
    independent) but not for bandwidth (shared)."""

    def __init__(self, probe: dict):
        self.peaks = {int(t): max(kernel[t] for kernel in probe["peak_gflops"].values()
                                  if t in kernel)
                      for t in probe["peak_gflops"][probe["isa"]]}
        self.bandwidths = {int(t): v for t, v in probe["bandwidth_gbs"]["dram_triad"].items()}

    def _nearest(self, table: dict, threads: int) -> tuple:
        measured = max((t for t in table if t <= threads), default=min(table))
        return measured, table[measured]

    def peak_gflops(self, threads: int) -> float:
        measured, value = self._nearest(self.peaks, threads)
        return value * threads / measured

    def bandwidth_gbs(self, threads: int) -> float:
        return self._nearest(self.bandwidths, threads)[1]

    def attainable_gflops(self, flops: float, bytes_moved: float, threads: int) -> float:
        intensity = flops / bytes_moved
        return min(self.peak_gflops(threads), intensity * self.bandwidth_gbs(threads))

    def ridge_point(self, threads: int) -> float:
        """FLOP/byte where the roofline turns from memory- to compute-bound."""
        return self.peak_gflops(threads) / self.bandwidth_gbs(threads)


def _command_output(command: list, cwd: str = REPO_ROOT) -> str:
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    """1-minute load average: a busy machine (another build) lowers every
    number, the probe's included."""
    try:
        with open("/proc/loadavg") as loadavg:
            return loadavg.read().split()[0]
    except OSError:
        return "unknown"


def _busy_cpu_seconds() -> float:
    """CPU seconds all processes have used since boot (/proc/stat: user,
    nice, system, irq, softirq, and steal, which is time another VM took)."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class OtherCpuLoad:
    """How many cores other processes kept busy while the block ran: all
    CPU time on the machine minus what this process's waited-for children
    (the measuring workers) used, over the wall time. Near 0 on a quiet
    machine; a concurrent build shows up as 1 or more."""

    def __enter__(self):
        self.cores = None
        try:
            self._start = (_busy_cpu_seconds(), _children_cpu_seconds(), time.monotonic())
        except OSError:  # no /proc/stat: leave it unknown
            self._start = None
        return self

    def __exit__(self, *exc):
        if self._start is not None:
            busy, children, start = self._start
            wall = time.monotonic() - start
            others = (_busy_cpu_seconds() - busy) - (_children_cpu_seconds() - children)
            self.cores = max(0.0, others) / wall if wall > 0 else None
        return False


def environment(kiln_compile: str) -> dict:
    """Versions and machine facts for the report header."""
    import numpy
    import onnx
    import onnxruntime
    commit = _command_output(["git", "rev-parse", "--short=12", "HEAD"])
    compiler_version = _command_output([CXX, "--version"]).splitlines()[0]
    dirty = _command_output(["git", "status", "--porcelain", "--untracked-files=no"])
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "kiln_commit": commit + (" (with uncommitted changes)" if dirty not in ("", "unknown")
                                 else ""),
        "kiln_compile_built": datetime.datetime.fromtimestamp(
            os.path.getmtime(kiln_compile)).strftime("%Y-%m-%d %H:%M")
        if os.path.exists(kiln_compile) else "missing",
        "onnxruntime": onnxruntime.__version__,
        "onnx": onnx.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "load_average": load_average(),
        "probe_compiler": f"{CXX} ({compiler_version})",
    }
