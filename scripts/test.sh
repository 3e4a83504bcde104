#!/usr/bin/env bash
# Builds kiln and runs every test (each lit file and each GoogleTest case is
# one ctest test). Ends with "kiln tests: N passed, M failed".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ "${KILN_SKIP_DEPS:-0}" == 1 ]] || scripts/install-deps.sh
scripts/build.sh
status=0
ctest --test-dir build --output-on-failure -j "$(nproc)" \
  --output-junit "$root/build/ctest-results.xml" || status=$?
python3 - "$root/build/ctest-results.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
statuses = [case.get("status") for case in cases]
passed = statuses.count("run")
print(f"kiln tests: {passed} passed, {len(statuses) - passed} failed")
PY
exit $status
