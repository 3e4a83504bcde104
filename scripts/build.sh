#!/usr/bin/env bash
# Configures (once) and builds kiln with the `dev` preset into build/.
# Extra arguments go to ninja (e.g. a target name).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [[ ! -f build/build.ninja ]]; then
  cmake --preset dev >/dev/null
fi
cmake --build build -- "$@"
