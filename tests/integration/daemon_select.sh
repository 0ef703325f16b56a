# corun daemon on real processes chosen by --comm: `corun status --json`
# lists them, picks up processes started later, forgets those that exit,
# takes --min-cpu into account, writes the metrics file, and SIGTERM ends it
# cleanly with its socket and metrics file removed.
. "$(dirname "$0")/daemon-lib.bash"

prog "${tag}s"
prog "${tag}x"        # same prefix, other name: not selected by the exact name
for i in 1 2 3; do spawn "${tag}s"; sl[i]=$last; done
spawn "${tag}x"; other=$last
start_daemon --comm "${tag}s" --metrics "$tmp/corun.prom"
expect_placing

for i in 1 2 3; do wait_for "sleeper ${sl[i]} listed" listed "${sl[i]}"; done
not_listed "$other" && ok || fail "$other (another name) is listed"
grep -q "\"pid\": $$," "$tmp/st" && fail "the test shell is listed" || ok
grep -q '"comm": "corun"' "$tmp/st" && fail "corun itself is listed" || ok
grep -q '"uid": 0, "admin": true' <(status_json | tr -d '\n' | sed 's/  */ /g') && ok || fail "root is not admin"

# A process started after the daemon is picked up; one that exits is forgotten.
spawn "${tag}s"; late=$last
wait_for "late starter $late listed" listed "$late"
kill "${sl[2]}"; wait "${sl[2]}" 2>/dev/null
wait_for "exited ${sl[2]} forgotten" not_listed "${sl[2]}"

# Counters this machine cannot give are listed with the sensor's reason.
status_json > "$tmp/st"
grep -q '^    "counters_missing": {' "$tmp/st" && ok || fail "status lacks counters_missing"

# The human table names each process.
"$CORUN" status --socket "$sock" > "$tmp/human" || fail "status exit $?"
grep -q "^ *${sl[1]} ${tag}s " "$tmp/human" && ok || fail "human status lacks ${sl[1]}: $(cat "$tmp/human")"

# Metrics: the textfile is there, complete, with the managed count.
wait_for "metrics file" test -s "$tmp/corun.prom"
grep -q '^corun_daemon_managed_processes [0-9]' "$tmp/corun.prom" && ok || fail "metrics lack managed count"
ls "$tmp"/corun.prom.tmp.* > /dev/null 2>&1 && fail "a temporary metrics file was left" || ok

stop_daemon TERM
expect_eq "daemon exit on SIGTERM" "$drc" 0
[[ -e $sock ]] && fail "socket $sock left behind" || ok
# Its figures end with it: a textfile collector must not export them on.
[[ -e $tmp/corun.prom ]] && fail "metrics file left behind" || ok

# --min-cpu: among our programs, only the busy one uses the CPU.
prog "${tag}b" busy
spawn_busy "${tag}b"; busy=$last
start_daemon --comm "${tag}?" --min-cpu 5
wait_for "busy $busy selected by --min-cpu" listed "$busy"
not_listed "${sl[1]}" && ok || fail "idle ${sl[1]} selected by --min-cpu 5"
stop_daemon INT
expect_eq "daemon exit on SIGINT" "$drc" 0

# Without --foreground it detaches once its socket answers and prints its pid.
bg=$("$CORUN" daemon --comm "${tag}s" --socket "$sock" --journal-dir "$journal" 2>> "$tmp/daemon.err")
expect_eq "background start exit" $? 0
[[ $bg =~ ^[0-9]+$ ]] && ok || fail "background start printed '$bg', not a pid"
dpid=$bg
status_ok && ok || fail "the detached daemon does not answer at once"
wait_for "detached daemon lists ${sl[1]}" listed "${sl[1]}"
kill -TERM "$bg"
gone() { ! kill -0 "$bg" 2>/dev/null; }
wait_for "detached daemon exits on SIGTERM" gone
dpid=

# No daemon: status says so and fails.
"$CORUN" status --socket "$sock" > /dev/null 2> "$tmp/e"; expect_eq "status without daemon" $? 1
grep -q "no corun daemon answers on $sock" "$tmp/e" && ok || fail "status error: $(cat "$tmp/e")"
finish
