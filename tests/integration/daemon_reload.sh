# SIGHUP reloads the configuration into the running daemon: a new policy,
# interval and selection take effect (a process no longer selected is given
# back, its affinity restored); settings that need a restart keep their
# running value and are named; a file with a mistake names its line and the
# running configuration stays. The daemon keeps running throughout.
. "$(dirname "$0")/daemon-lib.bash"

prog "${tag}a"; prog "${tag}b"
spawn "${tag}a"; a=$last
spawn "${tag}b"; b=$last
before_a=$(allowed "$a")
conf=$tmp/d.conf
printf '[daemon]\npolicy = spread\ninterval = 0.2\n[select]\ncomm = %s\ncomm = %s\n' \
  "${tag}a" "${tag}b" > "$conf"
"$CORUN" daemon --config "$conf" --foreground --socket "$sock" --journal-dir "$journal" \
  2>> "$tmp/daemon.err" &
dpid=$!
wait_for "the daemon's socket" status_ok
wait_for "both processes managed" eval 'listed $a && listed $b'
policy() { status_json | sed -nE 's/^    "policy": "(.*)",?$/\1/p'; }
interval() { status_json | sed -nE 's/^    "interval_s": ([0-9.e+-]+),?$/\1/p'; }
expect_eq "policy at start" "$(policy)" spread

# A new policy and interval, one process dropped, and settings that need a
# restart (the metrics file, the history length): all but those take effect.
# (The socket and journal given on the command line win over the file, as at
# start, so they do not change either.)
printf '[daemon]\npolicy = pack\ninterval = 0.3\nmetrics = %s/m.prom\nhistory = 7\nsocket = %s/other.sock\n[select]\ncomm = %s\n' \
  "$tmp" "$tmp" "${tag}b" > "$conf"
kill -HUP "$dpid"
policy_is() { [[ $(policy) == "$1" ]]; }
wait_for "the reloaded policy" policy_is pack
expect_eq "reloaded interval" "$(interval)" 0.3
wait_for "the dropped process given back" not_listed "$a"
expect_eq "dropped process's affinity restored" "$(allowed "$a")" "$before_a"
listed "$b" && ok || fail "the still-selected process is no longer managed"
grep -q "SIGHUP: configuration from $conf reloaded: policy pack, interval 0.3 s; needs a restart to change: metrics, history" \
  "$tmp/daemon.err" && ok || fail "reload message: $(cat "$tmp/daemon.err")"
[[ -e $tmp/other.sock || -e $tmp/m.prom ]] && fail "a restart-only setting changed" || ok

# A mistake in the file: its line is named, nothing changes, the daemon runs on.
printf '[daemon]\npolicy = spread\ninterval = fast\n' > "$conf"
kill -HUP "$dpid"
wait_for "the reload error" grep -q "$conf:3: interval: 'fast' is not a number" "$tmp/daemon.err"
grep -q "SIGHUP: keeping the running configuration" "$tmp/daemon.err" && ok ||
  fail "no 'keeping' line: $(cat "$tmp/daemon.err")"
expect_eq "policy after a bad file" "$(policy)" pack
# An unknown policy is refused the same way, its line named.
printf '[daemon]\npolicy = no-such-policy\n' > "$conf"
kill -HUP "$dpid"
wait_for "the unknown-policy refusal" grep -q "$conf:2: unknown policy 'no-such-policy'" "$tmp/daemon.err"
expect_eq "policy after an unknown one" "$(policy)" pack
kill -0 "$dpid" 2>/dev/null && ok || fail "the daemon died on SIGHUP"

stop_daemon TERM
expect_eq "daemon exit" "$drc" 0
expect_eq "affinity restored at exit" "$(allowed "$b")" "$before_a"
finish
