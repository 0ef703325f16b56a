# Nothing lost: processes the daemon placed get their original affinity back
# on SIGTERM, and after kill -9 once a new daemon starts (it reconciles the
# journal first) or `corun restore` replays it. Masks are read from
# /proc/PID/status, not from the daemon's word. Until the act box is merged
# the daemon runs observe-only: the test then checks that it changed
# nothing, and says it skipped the rest.
. "$(dirname "$0")/daemon-lib.bash"
prog "${tag}r" busy
spawn_busy "${tag}r"; a=$last
spawn_busy "${tag}r"; b=$last
orig_a=$(allowed "$a"); orig_b=$(allowed "$b")

# placed_cpu PID: the CPU the daemon says it placed PID on, or nothing.
placed_cpu() { status_json 2>/dev/null | sed -nE "s/.*\{\"pid\": $1, .*\"placed_cpu\": ([0-9]+),.*/\1/p"; }
any_placed() { [[ -n $(placed_cpu "$a") || -n $(placed_cpu "$b") ]]; }
restored() { [[ $(allowed "$a") == "$orig_a" && $(allowed "$b") == "$orig_b" ]]; }

start_daemon --comm "${tag}r"
wait_for "$a listed" listed "$a"
wait_for "$b listed" listed "$b"
if observe_only; then
  why=$(status_json | sed -nE 's/.*"observe_only_why": "(.*)",?$/\1/p')
  t0=$(ticks); wait_for "three more ticks" ticks_above $((t0 + 2))
  stop_daemon TERM
  expect_eq "daemon exit on SIGTERM" "$drc" 0
  expect_eq "observe-only left $a alone" "$(allowed "$a")" "$orig_a"
  expect_eq "observe-only left $b alone" "$(allowed "$b")" "$orig_b"
  echo "SKIP: the daemon runs observe-only ($why): restore after SIGTERM and kill -9 not exercised"
  finish; exit
fi

# 1. Placement is visible in /proc, and SIGTERM undoes it.
wait_for "a placement" any_placed
for p in "$a" "$b"; do
  c=$(placed_cpu "$p")
  [[ -z $c ]] && continue
  expect_eq "$p affinity is its placement" "$(allowed "$p")" "$c"
done
stop_daemon TERM
expect_eq "daemon exit on SIGTERM" "$drc" 0
restored && ok || fail "after SIGTERM: $a has $(allowed "$a") (was $orig_a), $b has $(allowed "$b") (was $orig_b)"

# 2. kill -9 leaves the placement; the next daemon restores it before anything else.
start_daemon --comm "${tag}r"
wait_for "a placement" any_placed
stop_daemon KILL
restored && fail "kill -9 restored: the test proves nothing" || ok
start_daemon --comm "nothing-$tag"
wait_for "a restart restores the journal" restored
stop_daemon TERM

# 3. kill -9, then `corun restore` by hand, where this build has it.
if "$CORUN" help restore > "$tmp/restore-usage" 2>&1 && grep -q -- "--journal-dir" "$tmp/restore-usage"; then
  start_daemon --comm "${tag}r"
  wait_for "a placement" any_placed
  stop_daemon KILL
  "$CORUN" restore --journal-dir "$journal" > /dev/null; expect_eq "corun restore exit" $? 0
  restored && ok || fail "corun restore left $a with $(allowed "$a"), $b with $(allowed "$b")"
else
  echo "SKIP: corun restore --journal-dir is not in this build"
fi
finish
