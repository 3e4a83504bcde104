#!/usr/bin/env bash
# Full benchmark run: regenerates docs/benchmarks.md and its charts.
#   bench/run.sh [run.py options, e.g. --filter 'gemm|mlp' --threads 1,2]
# Needs a built kiln (build/bin/kiln-compile, build/lib/libkiln_runtime.so),
# clang++-22, and python3 with onnx, onnxruntime and numpy. matplotlib (for
# the charts) is installed with pip when missing; without it the report has
# no charts.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "matplotlib is missing: installing it for the charts"
  python3 -m pip install --quiet matplotlib ||
    echo "warning: could not install matplotlib; the report will have no charts"
fi
exec python3 bench/run.py "$@"
