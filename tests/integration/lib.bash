# lib.bash — helpers for the integration tests (sourced, not run).
# Each test is a bash script run by ctest with $CORUN (the command),
# $CORUN_FIXTURES, $CORUN_BUILD_DIR and $CORUN_SOURCE_DIR set.
set -u
failures=0
checks=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }
# expect_eq WHAT GOT WANT
expect_eq() { if [[ "$2" == "$3" ]]; then ok; else fail "$1: got '$2', want '$3'"; fi; }
# json_num FILE KEY: the number after "KEY": on its line (top-level keys are one per line)
json_num() { sed -nE "s/^  \"$2\": ([0-9.]+|null),?$/\1/p" "$1" | head -n 1; }
finish() {
  echo "$checks checks, $failures failures"
  ((failures == 0))
}
