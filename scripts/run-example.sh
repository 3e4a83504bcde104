#!/usr/bin/env bash
# The main job as far as it exists today: build kiln-compile and compile the
# example ONNX model (examples/mlp.onnxtext, batch pinned to 1) to the
# shape-inferred kiln dialect. Extra arguments go to kiln-compile.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ "${KILN_SKIP_DEPS:-0}" == 1 ]] || scripts/install-deps.sh
scripts/build.sh kiln-compile
build/bin/kiln-compile examples/mlp.onnxtext --dim batch=1 --emit=kiln "$@"
