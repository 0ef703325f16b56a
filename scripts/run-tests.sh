#!/usr/bin/env bash
# Runs every test of a build folder with ctest and ends with one summary
# line, "tests: N passed, N failed". Exit status: 0 when all passed.
set -u
build=${1:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --test-dir "$build" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" \
      ${CTEST_ARGS:-} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)
if [[ -n $line ]]; then
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  failed=$(sed -E 's/.*passed, ([0-9]+) tests failed.*/\1/' <<<"$line")
  echo "tests: $((total - failed)) passed, $failed failed"
else
  echo "tests: 0 passed, 1 failed"
  rc=1
fi
exit "$rc"
