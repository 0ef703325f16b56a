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
# wait_file FILE [SECONDS]: poll until FILE exists (a real condition), with a deadline
wait_file() { local d=$((SECONDS + ${2:-20})); while [[ ! -s $1 ]]; do ((SECONDS > d)) && return 1; read -rt 0.01 <> <(:) || true; done; }
# affinity_of PID: the distinct Cpus_allowed_list values of all its threads, one per line
affinity_of() { cat /proc/"$1"/task/*/status 2>/dev/null | sed -n 's/^Cpus_allowed_list:\s*//p' | sort -u; }
