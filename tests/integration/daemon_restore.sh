# Nothing lost: processes the daemon placed get their original affinity back
# on SIGTERM, and after kill -9 once a new daemon starts (it reconciles the
# journal first) or `corun restore` replays it; a mask the owner set after
# the crash is kept; a daemon starting beside a live `corun run` leaves that
# run's entries alone. Masks are read from /proc/PID/status, not from the
# daemon's word.
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
  fail "the daemon runs observe-only: $(status_json | sed -nE 's/.*"observe_only_why": "(.*)",?$/\1/p')"
  finish; exit
fi

# 1. Placement is visible in /proc, and SIGTERM undoes it.
wait_for "a placement" any_placed
for p in "$a" "$b"; do
  c=$(placed_cpu "$p")
  [[ -z $c ]] && continue
  expect_eq "$p affinity is its placement" "$(allowed "$p")" "$c"
  # status explains it with the policy's prediction (speeds in (0, 2])
  pred=$(status_json | sed -nE "s/.*\{\"pid\": $p, .*\"prediction\": \{\"speed_now\": ([0-9.]+), \"speed_planned\": ([0-9.]+)\}.*/\1 \2/p")
  awk -v p="$pred" 'BEGIN { n = split(p, v, " "); exit !(n == 2 && v[1] > 0 && v[1] <= 2 && v[2] > 0 && v[2] <= 2) }' &&
    ok || fail "$p: no prediction in status: '$pred'"
done
# Each migration's time, as --json gives it, is now to the second (not
# rounded to six digits, which is an hour and more off for a Unix time).
t=$(status_json | sed -nE 's/.*\{"t": ([-0-9.e+]+), "pid".*/\1/p' | head -n 1)
awk -v t="$t" -v now="$(date +%s)" 'BEGIN { d = now - t; exit !(t ~ /^[0-9]+(\.[0-9]+)?$/ && d > -5 && d < 120) }' &&
  ok || fail "migration time '$t' is not near $(date +%s)"
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

# 3. kill -9, then `corun restore --journal-dir` by hand.
start_daemon --comm "${tag}r"
wait_for "a placement" any_placed
stop_daemon KILL
restored && fail "kill -9 restored: the test proves nothing" || ok
"$CORUN" restore --journal-dir "$journal" > "$tmp/restore.out"; expect_eq "corun restore exit" $? 0
restored && ok || fail "corun restore left $a with $(allowed "$a"), $b with $(allowed "$b")"
grep -Eq "^[1-9][0-9]* restored" "$tmp/restore.out" && ok || fail "restore report: $(cat "$tmp/restore.out")"
expect_eq "journal empty after restore" "$(ls "$journal" 2> /dev/null | wc -l)" 0

# other_cpu CPU: a CPU of the original mask other than CPU, or nothing.
other_cpu() {
  awk -v f="$1" 'BEGIN { RS = "," } { split($0, r, "-"); lo = r[1]; hi = (r[2] == "" ? r[1] : r[2]);
       for (c = lo; c <= hi; c++) if (c != f) { print c; exit } }' <<< "$orig_a"
}
if (( $(nproc) >= 2 )) && command -v taskset > /dev/null; then
  # 4. kill -9, then the owner pins a placed process before `corun restore`:
  #    the owner's mask stays, the entry is dropped, the other is restored.
  start_daemon --comm "${tag}r"
  wait_for "a placement" any_placed
  p=$a; q=$b; c=$(placed_cpu "$a")
  [[ -z $c ]] && { p=$b; q=$a; c=$(placed_cpu "$b"); }
  stop_daemon KILL
  mine=$(other_cpu "$c")
  taskset -pc "$mine" "$p" > /dev/null || fail "taskset failed"
  "$CORUN" restore --journal-dir "$journal" > "$tmp/restore.out"; expect_eq "restore exit (owner pin)" $? 0
  expect_eq "owner's pin of $p kept by corun restore" "$(allowed "$p")" "$mine"
  expect_eq "$q restored" "$(allowed "$q")" "$orig_a"
  grep -q "left alone: its owner changed its affinity" "$tmp/restore.out" && ok ||
    fail "restore did not say why it left $p: $(cat "$tmp/restore.out")"
  expect_eq "journal empty after restore (owner pin)" "$(ls "$journal" 2> /dev/null | wc -l)" 0
  taskset -pc "$orig_a" "$p" > /dev/null

  # 5. A daemon starting beside a running `corun run` (same journal) leaves
  #    the run's placement and entry alone: they are the run's to restore.
  prog "${tag}u"
  "$CORUN" run --journal-dir "$journal" --cpus "$mine" -- "$tmp/${tag}u" 600 2> /dev/null &
  runpid=$!; kids+=("$runpid")
  has_entry() { compgen -G "$journal/*.journal" > /dev/null; }
  wait_for "corun run journaled its command" has_entry
  cmd=$(pgrep -x "${tag}u")
  start_daemon --comm "nothing-$tag"
  expect_eq "the run's command still placed" "$(allowed "$cmd")" "$mine"
  has_entry && ok || fail "the daemon's start-up took the running corun run's journal entry"
  stop_daemon TERM
  expect_eq "the run's command still placed after the daemon stops" "$(allowed "$cmd")" "$mine"
  # Once that corun is dead (kill -9), its entry is anyone's: the next
  # daemon start restores the command.
  kill -9 "$runpid"; wait "$runpid" 2>/dev/null
  kids+=("$cmd")
  start_daemon --comm "nothing-$tag"
  expect_eq "a dead run's command restored by the daemon's start-up" "$(allowed "$cmd")" "$orig_a"
  has_entry && fail "the dead run's entry is still there" || ok
  stop_daemon TERM
else
  echo "SKIP: owner pin and shared-journal checks need taskset and two CPUs"
fi

# 6. The daemon's default journal, /run/corun, is found by a plain `corun
#    restore` typed in a root login, whose XDG_RUNTIME_DIR (/run/user/0)
#    names another folder. Root only: /run/corun is the system's (entries of
#    a live corun there are kept, a dead one's are due back anyway).
if ((EUID == 0)); then
  : > "$tmp/empty.conf" # not /etc/corun/corund.conf, whatever it says
  "$CORUN" daemon --foreground --config "$tmp/empty.conf" --socket "$sock" --interval 0.2 \
    --comm "${tag}r" 2>> "$tmp/daemon.err" &
  dpid=$!
  wait_for "the daemon's socket" status_ok
  wait_for "a placement" any_placed
  stop_daemon KILL
  restored && fail "kill -9 restored: the test proves nothing" || ok
  XDG_RUNTIME_DIR=$tmp/xdg "$CORUN" restore > "$tmp/restore.out"; expect_eq "plain restore exit" $? 0
  restored && ok || fail "a plain corun restore missed /run/corun: $(cat "$tmp/restore.out")"
else
  echo "SKIP: the /run/corun check needs root"
fi
finish
