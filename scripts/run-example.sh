#!/usr/bin/env bash
# The main job as far as it exists today: build kiln, then shape-infer and
# fold the example model in examples/mlp.mlir and print the result.
# (Once the ONNX frontend and CPU backend land this compiles an .onnx model.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ "${KILN_SKIP_DEPS:-0}" == 1 ]] || scripts/install-deps.sh
scripts/build.sh kiln-opt
build/bin/kiln-opt examples/mlp.mlir \
  --kiln-shape-inference --kiln-fold-constants --kiln-shape-inference \
  --canonicalize
