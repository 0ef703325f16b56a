# corun stat on this machine: the command's exit status, an honest list of
# what could not be counted and why, the software counts, intervals, -p until
# SIGINT, and bad usage.
. "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Exit status is the command's; JSON on stdout with the issue's keys.
"$CORUN" stat --json -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 7' \
  > "$tmp/s.json" 2> "$tmp/err"
expect_eq "exit status" $? 7
expect_eq "json exit_status" "$(json_num "$tmp/s.json" exit_status)" 7
for key in backend unavailable counters metrics elapsed_ns exit_status; do
  grep -q "^  \"$key\": " "$tmp/s.json" && ok || fail "JSON lacks key $key"
done
elapsed=$(json_num "$tmp/s.json" elapsed_ns)
[[ -n $elapsed && $elapsed -gt 0 ]] && ok || fail "elapsed_ns '$elapsed'"
tc=$(sed -nE 's/^    "task_clock_ns": ([0-9]+),?$/\1/p' "$tmp/s.json")
[[ -n $tc && $tc -gt 0 ]] && ok || fail "task_clock_ns '$tc'"
grep -q '"page_faults": [0-9]' "$tmp/s.json" && ok || fail "no page_faults count"
grep -q '"run_delay_ns": [0-9]' "$tmp/s.json" && ok || fail "no run_delay_ns count"

# Hardware events: counted, or listed unavailable with the reason. This
# machine's hypervisor exposes no PMU; perf stat says so too.
if perf stat -e cycles true 2>&1 | grep -q 'not supported\|not counted'; then
  grep -q '"cycles": null' "$tmp/s.json" && ok || fail "cycles not null without a PMU"
  grep -q '{"event": "cycles", "reason": "no PMU exposed by the hypervisor' "$tmp/s.json" \
    && ok || fail "cycles lacks the no-PMU reason: $(grep '"cycles"' "$tmp/s.json")"
  grep -q '"ipc": null' "$tmp/s.json" && ok || fail "ipc not null without counters"
  expect_eq "backend without PMU" "$(sed -nE 's/^  "backend": "(.*)",$/\1/p' "$tmp/s.json")" proc
elif [[ -e /sys/bus/event_source/devices/cpu ]]; then
  grep -q '"cycles": [0-9]' "$tmp/s.json" && ok || fail "cycles not counted with a PMU"
fi

# The human report goes to stderr; the command's stdout is left alone.
out=$("$CORUN" stat -- echo hello 2> "$tmp/human")
expect_eq "command stdout" "$out" hello
grep -q "task_clock_ns" "$tmp/human" && ok || fail "no task_clock_ns in the human report"
grep -q "exit status 0" "$tmp/human" && ok || fail "no exit status in the human report"

# Killed by a signal: 128 + the signal, as shells report it.
"$CORUN" stat -o "$tmp/sig.json" --json -- sh -c 'kill -TERM $$'
expect_eq "signalled exit" $? 143
expect_eq "signalled json" "$(json_num "$tmp/sig.json" exit_status)" 143

# -o FILE, opened before the command starts, is not inherited by it.
"$CORUN" stat -o "$tmp/o.txt" -- sh -c 'ls -l /proc/$$/fd/' > "$tmp/fds"
expect_eq "-o FILE: exit" $? 0
grep -q "/o\.txt" "$tmp/fds" && fail "-o FILE inherited by the command: $(cat "$tmp/fds")" || ok

# A command that does not exist: 127, with one line naming it.
"$CORUN" stat -- /nonexistent/cmd > /dev/null 2> "$tmp/e"
expect_eq "missing command exit" $? 127
grep -q "/nonexistent/cmd" "$tmp/e" && ok || fail "missing command not named"

# Intervals: one line per event per interval, then the totals.
"$CORUN" stat -I 100 -e task_clock_ns -- sh -c 'i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done' \
  2> "$tmp/int"
n=$(grep -cE '^ +[0-9]+\.[0-9]+ +[0-9,]+  task_clock_ns$' "$tmp/int")
[[ $n -ge 1 ]] && ok || fail "no interval lines: $(head -5 "$tmp/int")"

# A reader of the report that goes away (| head) does not change the exit
# status (corun ignores SIGPIPE); the command still gets SIGPIPE by default.
"$CORUN" stat -- sh -c 'while [ ! -e "$1" ]; do read -t 0.01 x < /dev/zero 2> /dev/null || true; done
  (yes; echo $? > "$2") | head -n 1 > /dev/null; exit 4' sh "$tmp/closed" "$tmp/yes.st" 2>&1 > /dev/null \
  | { exec 0<&-; : > "$tmp/closed"; }
expect_eq "reader gone: the command's exit status" "${PIPESTATUS[0]}" 4
expect_eq "reader gone: the command's yes ended by SIGPIPE" "$(cat "$tmp/yes.st" 2> /dev/null)" 141

# -p: count a running process until SIGINT, then print and exit 0.
sleep 30 & sleeper=$!
"$CORUN" stat --json -I 50 -o "$tmp/p.json" -p "$sleeper" & cs=$!
deadline=$((SECONDS + 10))
until grep -q '"interval"' "$tmp/p.json" 2>/dev/null || ((SECONDS > deadline)); do sleep 0.05; done
kill -INT "$cs"; wait "$cs"
expect_eq "-p exit after SIGINT" $? 0
grep -q '^  "exit_status": 0' "$tmp/p.json" && ok || fail "-p final report missing"
kill "$sleeper" 2>/dev/null; wait "$sleeper" 2>/dev/null

# Usage errors: exit 2.
"$CORUN" stat > /dev/null 2>&1; expect_eq "no command" $? 2
"$CORUN" stat -e cycles,bogus -- true > /dev/null 2>&1; expect_eq "bad preset" $? 2
"$CORUN" stat -I 5 -- true > /dev/null 2>&1; expect_eq "bad interval" $? 2
"$CORUN" stat -p 1,x > /dev/null 2>&1; expect_eq "bad pid" $? 2
"$CORUN" stat -p 1 -- true > /dev/null 2>&1; expect_eq "pid and command" $? 2
"$CORUN" stat --backend nope -- true > /dev/null 2>&1; expect_eq "bad backend" $? 2
# Under nohup (SIGHUP ignored), the command keeps SIGHUP ignored, as it
# would under nohup alone: corun hands on the dispositions it was given.
(trap '' HUP; "$CORUN" stat -- sh -c 'kill -HUP $$; echo survived > "$1"' sh "$tmp/hupstat") > /dev/null 2>&1
expect_eq "stat under nohup: the command's SIGHUP stays ignored" "$(cat "$tmp/hupstat" 2> /dev/null)" survived
("$CORUN" stat -- sh -c 'kill -HUP $$; echo survived > "$1"' sh "$tmp/hupstat2") > /dev/null 2>&1
expect_eq "stat: the command's SIGHUP is the default otherwise" "$(cat "$tmp/hupstat2" 2> /dev/null)" ""
finish
