"""Builds a model for several CPUs and checks that the runtime loads and runs
each where this host has every extension the build records, and refuses it
otherwise, naming exactly the missing ones. The oracle is the kernel's view of
the CPU (/proc/cpuinfo's flags), not the runtime's CPUID code under test.

usage: cpu_features_check.py KILN_COMPILE KILN_RUN MODEL.onnxtext WORK_DIR"""
import os
import re
import subprocess
import sys

# A build's extensions (LLVM's names, include/kiln/CpuFeatures.h) as Linux
# names them in /proc/cpuinfo.
LINUX_FLAG = {
    "sse3": "pni", "ssse3": "ssse3", "sse4.1": "sse4_1", "sse4.2": "sse4_2",
    "popcnt": "popcnt", "movbe": "movbe", "lzcnt": "abm", "sse4a": "sse4a",
    "tbm": "tbm", "fma4": "fma4", "xop": "xop", "bmi": "bmi1",
    "bmi2": "bmi2", "avx": "avx", "f16c": "f16c", "fma": "fma", "avx2": "avx2",
    "gfni": "gfni", "vaes": "vaes", "vpclmulqdq": "vpclmulqdq",
    "avxvnni": "avx_vnni", "avx512f": "avx512f", "avx512dq": "avx512dq",
    "avx512ifma": "avx512ifma", "avx512cd": "avx512cd", "avx512bw": "avx512bw",
    "avx512vl": "avx512vl", "avx512vbmi": "avx512vbmi",
    "avx512vbmi2": "avx512_vbmi2", "avx512vnni": "avx512_vnni",
    "avx512bitalg": "avx512_bitalg", "avx512vpopcntdq": "avx512_vpopcntdq",
    "avx512fp16": "avx512_fp16", "avx512bf16": "avx512_bf16",
}

# From x86-64's baseline (no extension past SSE2) to Sapphire Rapids'.
CPUS = ["x86-64", "x86-64-v2", "x86-64-v3", "znver3", "znver4",
        "icelake-server", "sapphirerapids"]


def host_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    raise SystemExit("FAIL: /proc/cpuinfo has no flags line")


def recorded_features(compiler, model, cpu):
    llvm = subprocess.run([compiler, model, f"--mcpu={cpu}", "--emit=llvm", "-o", "-"],
                          check=True, capture_output=True, text=True).stdout
    match = re.search(r'@kiln\.cpu_features = .*(?:c"([^"]*)\\00"|zeroinitializer)', llvm)
    if not match:
        raise SystemExit(f"FAIL: {cpu}: no @kiln.cpu_features in the LLVM IR")
    return [name for name in (match.group(1) or "").split(",") if name]


def check(tools, model, work, cpu, flags):
    compiler, runner = tools
    features = recorded_features(compiler, model, cpu)
    unknown = [name for name in features if name not in LINUX_FLAG]
    if unknown:
        raise SystemExit(f"FAIL: {cpu}: no /proc/cpuinfo name for {unknown}: add it")
    missing = [name for name in features if LINUX_FLAG[name] not in flags]
    library = os.path.join(work, f"{cpu}.so")
    subprocess.run([compiler, model, f"--mcpu={cpu}", "-o", library], check=True)
    run = subprocess.run([runner, library, "--random"], capture_output=True, text=True)
    if not missing:
        if run.returncode != 0:
            raise SystemExit(f"FAIL: {cpu}: the host has all of {features}, but kiln-run "
                             f"exited with {run.returncode}: {run.stderr}")
        return "loaded"
    expected = (f"was compiled for {cpu} and uses CPU extensions this CPU lacks "
                f"(or its OS does not enable): {', '.join(missing)};")
    if run.returncode != 1 or expected not in run.stderr:
        raise SystemExit(f"FAIL: {cpu}: the host lacks {missing}; expected exit 1 and "
                         f"'{expected}', got exit {run.returncode}: {run.stderr}")
    return "refused"


def main():
    compiler, runner, model, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    flags = host_flags()
    outcomes = {cpu: check((compiler, runner), model, work, cpu, flags) for cpu in CPUS}
    for cpu, outcome in outcomes.items():
        print(f"{cpu}: {outcome}")
    if outcomes["x86-64"] != "loaded" or outcomes["x86-64-v2"] != "loaded":
        raise SystemExit("FAIL: a baseline build was refused")
    print(f"cpu features: {len(outcomes)} builds checked, "
          f"{list(outcomes.values()).count('refused')} refused")


if __name__ == "__main__":
    main()
