#!/usr/bin/env bash
# The main job: build kiln, compile the example ONNX model
# (examples/mlp.onnxtext, batch pinned to 1) to a native shared library and
# run it with kiln-run on random inputs, printing its signature and latency.
# Extra arguments go to kiln-run (e.g. --output-dir DIR, --bench N).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ "${KILN_SKIP_DEPS:-0}" == 1 ]] || scripts/install-deps.sh
scripts/build.sh kiln-compile kiln-run
mkdir -p build/example
build/bin/kiln-compile examples/mlp.onnxtext --dim batch=1 \
  -o build/example/mlp.so
build/bin/kiln-run build/example/mlp.so --random --output-dir build/example \
  --bench 1000 "$@"
python3 - <<'PY'
import numpy as np
print("probabilities:", np.load("build/example/probabilities.npy"))
PY
