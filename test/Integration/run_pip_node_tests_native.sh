#!/usr/bin/env bash
# The pip onnx package's newer node tests through model.so: writes them to a
# temporary folder, then runs run_node_tests_native.py over them.
# Usage: run_pip_node_tests_native.sh BIN_DIR EXPECTED [--update] [--verbose]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/../Frontend/ONNX/write_pip_node_tests.py" "$work" >/dev/null
python3 "$here/run_node_tests_native.py" "$1" "$work" "$2" "${@:3}"
