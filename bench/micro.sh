#!/usr/bin/env bash
# Contraction microbenchmarks (Google Benchmark): the GEMM shapes of
# bench/models.py (BERT, GPT-2, MLP and square classes) and its layer
# classes (ResNet's and MobileNetV2's convolutions, BERT's attention
# matmuls: bench/models.py LAYERS),
# compiled by kiln for AVX-512 (the host) and for AVX2 (--mcpu=x86-64-v3),
# run on 1 and 2 threads; GFLOP/s and % of the measured single-core FMA peak
# per thread as counters. Then kiln-pool-benchmark: the thread pool's
# fork-join and two cores' split writes.
#   bench/micro.sh [Google Benchmark flags for the GEMMs, e.g.
#                   --benchmark_filter=768]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ "${KILN_SKIP_DEPS:-0}" == 1 ]] || scripts/install-deps.sh
scripts/build.sh kiln-compile kiln-gemm-benchmark kiln-pool-benchmark >/dev/null
work=build/bench/micro
mkdir -p "$work"
# The GEMM models of the benchmark suite and the layer classes
# (generated into its cache), each as PATH=FLOPS.
cases=$(python3 - <<'PY'
import sys
sys.path.insert(0, "bench")
import models
specs = models.select_models("^gemm-") + models.select_layers()
print(" ".join(f"{meta['onnx']}={meta['flops']}"
               for meta in map(models.ensure_model, specs)))
PY
)
# The measured single-core FMA peak: the probe's last result, or a new run.
peak=$(python3 - <<'PY'
import json, os, sys
sys.path.insert(0, "bench")
import machine
path = "build/bench/probe.json"
if os.path.exists(path):
    with open(path) as f:
        probe = json.load(f)
else:
    probe = machine.run_probe("build/bench", 2, quick=False)
print(probe["peak_gflops"][probe["isa"]]["1"])
PY
)
libraries=()
for case in $cases; do
  onnx=${case%=*}
  flops=${case##*=}
  name=$(basename "$onnx" .onnx)
  for cpu in native x86-64-v3; do
    tag=$([[ $cpu == native ]] && echo avx512 || echo avx2)
    so="$work/$name.$tag.so"
    build/bin/kiln-compile "$onnx" --mcpu=$cpu -o "$so"
    libraries+=("$so=$flops")
    # 3x3 stride-1 layers run as Winograd F(2x2, 3x3) (their GFLOP/s count
    # the direct convolution's multiplies); the direct kernel too, for its
    # % of peak.
    if [[ $name == conv-resnet-3x3-[0-9]* ]]; then
      so="$work/$name.$tag-direct.so"
      build/bin/kiln-compile "$onnx" --mcpu=$cpu --winograd=false -o "$so"
      libraries+=("$so=$flops")
    fi
  done
done
# Repetitions run in a random order across all cases: on this shared
# machine a case run right after others (the 2-thread rounds after the
# 1-thread ones) read up to 15% slower than alone; interleaving spreads such
# drift over all cases instead of one.
build/bin/kiln-gemm-benchmark --peak-gflops="$peak" "${libraries[@]}" \
  --benchmark_enable_random_interleaving=true "$@"
# What a parallel kernel pays beside its work: the pool's fork-join, and two
# cores writing interleaved pieces of one tensor (pool_benchmark.cpp).
build/bin/kiln-pool-benchmark --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true
