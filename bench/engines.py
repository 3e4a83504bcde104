"""The inference engines the benchmark compares: kiln, ONNX Runtime, and the
optional peers IREE and torch.compile when they are installed.

Each engine has two halves:

* `compile(meta, workdir, timeout)` runs in the runner process, ahead of
  time, and returns a `CompileResult` (kiln-compile, iree-compile; nothing
  for ONNX Runtime, whose graph optimization happens when a session opens);
* `open(meta, artifact, inputs, threads)` runs in the measuring worker
  (bench/measure.py) and returns a `Session`: a zero-argument `run` over
  preallocated inputs (and outputs where the engine lets the caller own
  them), and `outputs()` to read the last results.
"""

import importlib.util
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KILN_BIN_DIR = os.path.join(REPO_ROOT, "build", "bin")
KILN_RUNTIME = os.path.join(REPO_ROOT, "build", "lib", "libkiln_runtime.so")
# The engine name under which bench/measure.py reports its "rounds" event,
# which covers all engines (bench/run.py takes it out of the engines').
ROUNDS_ENGINE = "_rounds"


@dataclass
class CompileResult:
    status: str                      # "ok", "error", "timeout"
    artifact: Optional[str] = None   # what open() loads
    seconds: float = 0.0
    message: str = ""                # the compiler's error output
    details: dict = field(default_factory=dict)


@dataclass
class Session:
    run: Callable[[], None]
    outputs: Callable[[], list]      # the latest outputs, in signature order
    threads_used: int
    info: dict = field(default_factory=dict)


def run_tool(command: list, timeout: float, cwd: Optional[str] = None) -> tuple:
    """Runs a compiler; returns (status, seconds, combined output)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start, f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - start
    output = (proc.stdout + proc.stderr).strip()
    return ("ok" if proc.returncode == 0 else "error"), seconds, output


def first_error_lines(output: str, limit: int = 6) -> str:
    """The error lines of a compiler's output (or its last lines)."""
    lines = [line for line in output.splitlines() if "error" in line.lower()]
    return "\n".join((lines or output.splitlines())[-limit:])


# --------------------------------------------------------------------------
# kiln
# --------------------------------------------------------------------------

class KilnEngine:
    name = "kiln"

    def __init__(self, bin_dir: str = KILN_BIN_DIR, runtime: str = KILN_RUNTIME):
        self.compiler = os.path.join(bin_dir, "kiln-compile")
        self.runtime = runtime

    def available(self) -> tuple:
        for path in (self.compiler, self.runtime):
            if not os.path.exists(path):
                return False, f"{path} is missing: build kiln first (scripts/build.sh)"
        return True, ""

    def compile(self, meta: dict, workdir: str, timeout: float) -> CompileResult:
        artifact = os.path.join(workdir, meta["key"] + ".so")
        status, seconds, output = run_tool(
            [self.compiler, meta["onnx"], "-v", "-o", artifact], timeout)
        if status != "ok":
            return CompileResult(status, seconds=seconds, message=first_error_lines(output))
        return CompileResult("ok", artifact, seconds, details=parse_kiln_verbose(output))

    def open(self, meta: dict, artifact: str, inputs: list, threads: int) -> Session:
        from kiln_runtime import KilnModel
        model = KilnModel(self.runtime, artifact)
        outputs = [np.empty(o["shape"], o["dtype"]) for o in meta["outputs"]]
        run = model.bind(model.create_context(threads), inputs, outputs)
        return Session(run, lambda: outputs,
                       threads_used=threads if model.supports_threads else 1,
                       info={"arena_bytes": model.arena_bytes()})


# kiln-compile -v prints a timing report; the names of the top-level stages
# follow the percentage after two spaces ("   10.5625 ( 45.6%)  LLVM IR + -O3"),
# the nested passes' after more.
_KILN_STAGE = re.compile(r"^\s*(\d+\.\d+) \(\s*[\d.]+%\)  (\S.*)$")
_KILN_PEAK = re.compile(r"peak memory after [^:]+: (\d+) MiB")


def parse_kiln_verbose(output: str) -> dict:
    stages = {}
    for line in output.splitlines():
        match = _KILN_STAGE.match(line)
        if match and match.group(2) != "Total":
            stages[match.group(2)] = float(match.group(1))
    peaks = [int(m) for m in _KILN_PEAK.findall(output)]
    return {"stages_s": stages, "peak_mib": max(peaks) if peaks else None}


# --------------------------------------------------------------------------
# ONNX Runtime (the reference)
# --------------------------------------------------------------------------

class OrtEngine:
    name = "ort"

    def available(self) -> tuple:
        return importlib.util.find_spec("onnxruntime") is not None, "pip install onnxruntime"

    def compile(self, meta: dict, workdir: str, timeout: float) -> CompileResult:
        # Graph optimization happens when the session opens (in the worker).
        return CompileResult("ok", meta["onnx"])

    def open(self, meta: dict, artifact: str, inputs: list, threads: int) -> Session:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(artifact, options, providers=["CPUExecutionProvider"])
        binding = session.io_binding()
        for spec, array in zip(meta["inputs"], inputs):
            binding.bind_cpu_input(spec["name"], array)
        outputs = [np.empty(o["shape"], o["dtype"]) for o in meta["outputs"]]
        for spec, array in zip(meta["outputs"], outputs):
            binding.bind_output(spec["name"], "cpu", 0, array.dtype, array.shape,
                                array.ctypes.data)
        return Session(lambda: session.run_with_iobinding(binding), lambda: outputs,
                       threads_used=threads)


# --------------------------------------------------------------------------
# Optional peers
# --------------------------------------------------------------------------

class IreeEngine:
    """IREE (pip iree-base-compiler + iree-base-runtime): the ONNX model is
    imported with iree-import-onnx and compiled for the host CPU (llvm-cpu);
    it runs on the local-task driver with one task group per thread. IREE
    returns fresh output buffers, so its outputs are not preallocated."""
    name = "iree"

    def available(self) -> tuple:
        for module in ("iree.compiler", "iree.runtime"):
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:
                found = False
            if not found:
                return False, ("not installed (pip install iree-base-compiler "
                               "iree-base-runtime)")
        return True, ""

    def compile(self, meta: dict, workdir: str, timeout: float) -> CompileResult:
        mlir = os.path.join(workdir, meta["key"] + ".iree.mlir")
        vmfb = os.path.join(workdir, meta["key"] + ".vmfb")
        steps = [
            [sys.executable, "-m", "iree.compiler.tools.import_onnx", meta["onnx"], "-o", mlir],
            [sys.executable, "-m", "iree.compiler.tools.scripts.iree_compile", mlir,
             "--iree-hal-target-device=local",
             "--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-target-cpu=host", "-o", vmfb],
        ]
        total = 0.0
        for command in steps:
            status, seconds, output = run_tool(command, max(1.0, timeout - total))
            total += seconds
            if status != "ok":
                return CompileResult(status, seconds=total, message=first_error_lines(output))
        os.remove(mlir)  # the weights again, as text
        return CompileResult("ok", vmfb, total)

    def open(self, meta: dict, artifact: str, inputs: list, threads: int) -> Session:
        import iree.runtime as rt
        # The flag must be set before the driver is created.
        rt.flags.parse_flags(f"--task_topology_max_group_count={threads}")
        config = rt.Config("local-task")
        with open(artifact, "rb") as f:
            module = rt.VmModule.copy_buffer(config.vm_instance, f.read())
        context = rt.SystemContext(config=config)
        context.add_vm_module(module)
        function = context.modules.module[_onnx_graph_name(meta["onnx"])]
        device_inputs = [rt.asdevicearray(config.device, array) for array in inputs]
        results = []

        def run():
            results[:] = [function(*device_inputs)]

        def outputs():
            values = results[0] if isinstance(results[0], (list, tuple)) else [results[0]]
            return [value.to_host() for value in values]
        return Session(run, outputs, threads_used=threads)


def _onnx_graph_name(path: str) -> str:
    """iree-import-onnx names the function after the ONNX graph."""
    import onnx
    return onnx.load(path, load_external_data=False).graph.name


class TorchCompileEngine:
    """torch.compile (inductor, CPU). The models are ONNX graphs and torch
    cannot import ONNX, so they go through onnx2torch (pip) into a
    torch.fx module first. Compilation happens on the first call, so the
    first-run time is the compile time. Not exercised where torch is absent
    (the CI machine: torch is too large to install there)."""
    name = "torch.compile"

    def available(self) -> tuple:
        for module in ("torch", "onnx2torch"):
            if importlib.util.find_spec(module) is None:
                return False, (f"{module} is not installed (pip install torch onnx2torch: "
                               "the ONNX models reach torch.compile through onnx2torch)")
        return True, ""

    def compile(self, meta: dict, workdir: str, timeout: float) -> CompileResult:
        return CompileResult("ok", meta["onnx"])  # compiled by the first call

    def open(self, meta: dict, artifact: str, inputs: list, threads: int) -> Session:
        import onnx2torch
        import torch
        torch.set_num_threads(threads)
        module = onnx2torch.convert(artifact).eval()
        compiled = torch.compile(module, backend="inductor")
        tensors = [torch.from_numpy(array) for array in inputs]
        results = []

        def run():
            with torch.inference_mode():
                results[:] = [compiled(*tensors)]

        def outputs():
            values = results[0] if isinstance(results[0], (list, tuple)) else [results[0]]
            return [value.numpy() for value in values]
        return Session(run, outputs, threads_used=threads)


OPTIONAL_PEERS = [IreeEngine(), TorchCompileEngine()]


def engines_by_name(names: list, kiln: KilnEngine) -> list:
    registry = {"kiln": kiln, "ort": OrtEngine(), **{p.name: p for p in OPTIONAL_PEERS}}
    return [registry[name] for name in names]
