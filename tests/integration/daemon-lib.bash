# daemon-lib.bash — helpers for the daemon's integration tests (sourced, not
# run; the .bash suffix keeps it out of the test list). Each test gets a
# private folder for the socket, the journal and the metrics, and programs
# with a command name unique to the test (a copy of sleep or bash), so that
# the daemon selects our processes and nobody else's on a shared machine.
. "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d /tmp/corun-daemon-test.XXXXXX)
chmod 755 "$tmp"      # nobody must be able to run the programs copied here
sock=$tmp/sock
journal=$tmp/journal
dpid=
kids=()
cleanup() {
  local p
  [[ -n $dpid ]] && kill -9 "$dpid" 2>/dev/null
  for p in "${kids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# A unique command name: "c" + the test's pid + a suffix, at most 15 bytes.
tag="c$$"
# prog NAME [sleep|busy]: an executable called NAME in $tmp.
prog() {
  if [[ ${2:-sleep} == busy ]]; then cp "$(command -v bash)" "$tmp/$1"; else cp "$(command -v sleep)" "$tmp/$1"; fi
}
# spawn NAME [ARGS]: starts $tmp/NAME (a sleeper by default) and records its pid in $last.
spawn() { local n=$1; shift; "$tmp/$n" "${@:-600}" & last=$!; kids+=("$last"); }
spawn_busy() { "$tmp/$1" -c 'while :; do :; done' & last=$!; kids+=("$last"); }

# wait_for WHAT CMD...: runs CMD until it succeeds, for at most 20 s. Polls a
# real condition; the short pause only avoids spinning.
wait_for() {
  local what=$1; shift
  local end=$((SECONDS + 20))
  until "$@"; do
    if ((SECONDS >= end)); then fail "timed out waiting for $what"; return 1; fi
    sleep 0.05
  done
  ok
}
status_json() { "$CORUN" status --socket "$sock" --json; }
status_ok() { "$CORUN" status --socket "$sock" --json > /dev/null 2>&1; }
listed() { status_json 2>/dev/null | grep -q "{\"pid\": $1,"; }
not_listed() { status_json > "$tmp/st" 2>/dev/null && ! grep -q "{\"pid\": $1," "$tmp/st"; }
ticks() { status_json 2>/dev/null | sed -nE 's/^    "ticks": ([0-9]+),?$/\1/p'; }
# ticks_above N: the daemon has made more than N passes (re-read on each call).
ticks_above() { local t; t=$(ticks); [[ -n $t ]] && ((t > $1)); }
observe_only() { status_json 2>/dev/null | grep -q '"mode": "observe-only"'; }
allowed() { sed -nE 's/^Cpus_allowed_list:\s*(.*)$/\1/p' "/proc/$1/status"; }

# start_daemon ARGS: the daemon in the foreground of a background job, with
# the private socket and journal; waits until it answers.
start_daemon() {
  "$CORUN" daemon --foreground --socket "$sock" --journal-dir "$journal" --interval 0.2 "$@" \
    2>> "$tmp/daemon.err" &
  dpid=$!
  wait_for "the daemon's socket" status_ok
}
# stop_daemon [SIGNAL]: signals it and waits for its exit status in $drc.
stop_daemon() {
  kill -"${1:-TERM}" "$dpid"
  wait "$dpid" 2>/dev/null; drc=$?
  dpid=
}
