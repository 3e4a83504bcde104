#!/usr/bin/env bash
# Smoke run for CI: the small models at 1 and 2 threads with tiny repeat
# counts; checks that kiln compiles and runs each one and that its outputs
# match ONNX Runtime's. Exits non-zero on any failure, mismatch or timeout
# (after running everything). Takes a few minutes on 2 cores; writes
# build/bench/smoke-results.json, not the docs.
#   bench/smoke.sh [run.py options]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/run.py --smoke "$@"
