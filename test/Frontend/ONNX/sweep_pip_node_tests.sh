#!/usr/bin/env bash
# Writes the pip onnx package's node tests to a temporary folder and runs the
# import sweep over them. Usage: sweep_pip_node_tests.sh KILN_COMPILE EXPECTED
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/write_pip_node_tests.py" "$work"
python3 "$here/node_import_sweep.py" "$1" "$work" "$2" "${@:3}"
