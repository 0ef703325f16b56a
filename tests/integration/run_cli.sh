# corun run on real processes: placement of every thread, exit status,
# reports, bad usage, injected affinity failures, and `corun restore` after
# corun is killed with SIGKILL.
. "$(dirname "$0")/lib.bash"
export XDG_RUNTIME_DIR; tmp=$(mktemp -d); XDG_RUNTIME_DIR=$tmp/xdg; trap 'touch "$tmp/go"; rm -rf "$tmp"' EXIT
K=$CORUN_BUILD_DIR/kernels
J=$tmp/journal
mine=$(affinity_of $$)
ncpu=$(nproc --all)
last=$((ncpu - 1))

# --cpus: every thread of a 3-thread kernel on the last CPU while it runs.
"$CORUN" run --journal "$J" --cpus "$last" -- "$K/corun-compute" -n 0 -t 3 -r "$tmp/r1" -w "$tmp/go" 2> "$tmp/err1" &
c=$!
wait_file "$tmp/r1" && ok || fail "kernel never became ready: $(cat "$tmp/err1")"
pid=$(cat "$tmp/r1")
expect_eq "threads of the kernel" "$(ls /proc/"$pid"/task | wc -l)" 4
expect_eq "--cpus affinity of every thread" "$(affinity_of "$pid")" "$last"
ls "$J"/*.journal > /dev/null 2>&1 && ok || fail "no journal entry while placed"
touch "$tmp/go"; wait "$c"; expect_eq "run exit status" $? 0
grep -q "seconds wall time" "$tmp/err1" && ok || fail "no report: $(cat "$tmp/err1")"
grep -q "instructions.*missing\|<missing>" "$tmp/err1" && ok || fail "missing counters not reported as missing"
expect_eq "journal emptied after a normal exit" "$(ls "$J" | wc -l)" 0
rm -f "$tmp/go"

# SIGINT/SIGTERM to corun: passed on, the command's status back, placement undone.
for sig in INT TERM; do
  rm -f "$tmp/rs"
  "$CORUN" run --journal "$J" --cpus "$last" -- "$K/corun-compute" -n 0 -t 2 -r "$tmp/rs" -w "$tmp/never" 2> /dev/null &
  c=$!
  wait_file "$tmp/rs" && ok || fail "SIG$sig: never ready"
  pid=$(cat "$tmp/rs")
  kill -"$sig" "$c"; wait "$c"; rc=$?
  expect_eq "run SIG$sig exit" "$rc" "$([[ $sig == INT ]] && echo 130 || echo 143)"
  kill -0 "$pid" 2> /dev/null && { fail "SIG$sig: command still running"; kill -9 "$pid"; } || ok
  expect_eq "run SIG$sig: journal empty" "$(ls "$J" | wc -l)" 0
done

# The command's exit status and signals come back.
"$CORUN" run -- sh -c 'exit 7' 2> /dev/null; expect_eq "exit status passed through" $? 7
"$CORUN" run -- sh -c 'kill -TERM $$' 2> /dev/null; expect_eq "killed by SIGTERM" $? 143
"$CORUN" run -- /nonexistent/program 2> "$tmp/e"; expect_eq "command not found" $? 127
grep -q "/nonexistent/program" "$tmp/e" && ok || fail "no reason for a command that cannot start"

# A policy places it on one CPU; linux leaves it alone.
got=$("$CORUN" run --journal "$J" --policy spread -- sh -c 'sed -n "s/^Cpus_allowed_list:\s*//p" /proc/self/status' 2> /dev/null)
[[ $got =~ ^[0-9]+$ ]] && ok || fail "spread did not pin to one CPU: '$got'"
got=$("$CORUN" run --journal "$J" --policy linux -- sh -c 'sed -n "s/^Cpus_allowed_list:\s*//p" /proc/self/status' 2> /dev/null)
expect_eq "linux policy leaves the affinity" "$got" "$mine"

# No journal, no change: where the default journal cannot be written
# ($XDG_RUNTIME_DIR/corun here), the command runs unplaced, with a warning.
got=$(XDG_RUNTIME_DIR=/proc/corun-cannot-be "$CORUN" run --cpus "$last" -- sh -c 'sed -n "s/^Cpus_allowed_list:\s*//p" /proc/self/status' 2> "$tmp/e")
expect_eq "unjournaled placement not made" "$got" "$mine"
grep -q "running unplaced" "$tmp/e" && ok || fail "no warning for an unwritable journal: $(cat "$tmp/e")"
# A journal folder the user names and that cannot be made is an input
# error: one line, exit 2, the command not run.
"$CORUN" run --journal /proc/corun-cannot-be --cpus "$last" -- touch "$tmp/ran" > /dev/null 2> "$tmp/e"
expect_eq "unusable --journal exit" $? 2
[[ ! -e $tmp/ran ]] && ok || fail "the command ran with an unusable --journal"
grep -q "^corun run: --journal-dir /proc/corun-cannot-be: No such file or directory" "$tmp/e" && ok || fail "unusable --journal: $(cat "$tmp/e")"

# The dry run says what it would do and changes nothing.
got=$("$CORUN" run --journal "$J" --actuator dryrun --cpus "$last" -- sh -c 'sed -n "s/^Cpus_allowed_list:\s*//p" /proc/self/status' 2> "$tmp/e")
expect_eq "dryrun leaves the affinity" "$got" "$mine"
grep -q "dryrun: would place pid [0-9]* on CPUs $last" "$tmp/e" && ok || fail "dryrun said nothing: $(cat "$tmp/e")"

# A command that keeps two threads busy outgrows the policy's single CPU:
# the placement widens to the smallest domain that holds them.
if ((ncpu >= 2)); then
  "$CORUN" run --journal "$J" --policy spread -- "$K/corun-compute" -n 100000 -t 2 -r "$tmp/rw" 2> /dev/null &
  c=$!
  wait_file "$tmp/rw" && ok || fail "widen: never ready"
  pid=$(cat "$tmp/rw")
  d=$((SECONDS + 20)); widened=""
  while ((SECONDS < d)); do
    a=$(affinity_of "$pid" | tail -n 1)
    [[ $a =~ [-,] ]] && { widened=$a; break; }
    read -rt 0.05 <> <(:) || true
  done
  [[ -n $widened ]] && ok || fail "two busy threads were never given more than one CPU"
  kill -TERM "$c"; wait "$c"
  expect_eq "widen: SIGTERM exit" $? 143
fi

# A shell script's children, not the shell, keep the CPUs busy: their
# threads count, the widened placement reaches the processes already
# started, and SIGTERM to corun stops them with the shell.
if ((ncpu >= 2)); then
  "$CORUN" run --journal "$J" --policy spread -- sh -c "'$K/corun-compute' -n 100000 -t 1 -r '$tmp/p1' & '$K/corun-compute' -n 100000 -t 1 -r '$tmp/p2' & wait" 2> /dev/null &
  c=$!
  wait_file "$tmp/p1" && wait_file "$tmp/p2" && ok || fail "children: never ready"
  p1=$(cat "$tmp/p1"); p2=$(cat "$tmp/p2")
  d=$((SECONDS + 20)); widened=""
  while ((SECONDS < d)); do
    a1=$(affinity_of "$p1"); a2=$(affinity_of "$p2")
    [[ $a1 =~ ^[^$'\n']*[-,][^$'\n']*$ && $a2 == "$a1" ]] && { widened=$a1; break; }
    read -rt 0.05 <> <(:) || true
  done
  [[ -n $widened ]] && ok || fail "two busy children were never given more than one CPU: '$a1' '$a2'"
  kill -TERM "$c"; wait "$c"
  expect_eq "children: SIGTERM exit" $? 143
  d=$((SECONDS + 20))
  while { kill -0 "$p1" || kill -0 "$p2"; } 2> /dev/null && ((SECONDS < d)); do read -rt 0.05 <> <(:) || true; done
  { kill -0 "$p1" || kill -0 "$p2"; } 2> /dev/null && { fail "SIGTERM left the command's children running"; kill -9 "$p1" "$p2"; } || ok
  expect_eq "children: journal empty" "$(ls "$J" | wc -l)" 0
fi

# --json
"$CORUN" run --json "$tmp/run.json" --cpus 0 -- sh -c 'exit 3' 2> /dev/null
grep -q '"exit_status": 3' "$tmp/run.json" && ok || fail "json exit_status: $(cat "$tmp/run.json")"
grep -q '"wall_s": [0-9]' "$tmp/run.json" && ok || fail "json wall_s"
# A --json FILE that cannot be written stops corun before the command runs.
"$CORUN" run --json "$tmp/no/such/dir/r.json" --journal "$J" -- touch "$tmp/ran" > /dev/null 2> "$tmp/e"
expect_eq "unwritable --json exit" $? 2
[[ ! -e $tmp/ran ]] && ok || fail "the command ran before the unwritable --json was noticed"
expect_eq "unwritable --json: one line" "$(wc -l < "$tmp/e")" 1
grep -q "no/such/dir/r.json: No such file or directory" "$tmp/e" && ok || fail "unwritable --json not named: $(cat "$tmp/e")"
expect_eq "unwritable --json: journal empty" "$(ls "$J" | wc -l)" 0
# A reader of --json - that goes away (| head) stops neither the restore
# nor the exit status (corun ignores SIGPIPE); the command still gets SIGPIPE
# by default.
"$CORUN" run --journal "$J" --cpus 0 --json - -- sh -c 'while [ ! -e "$1" ]; do read -t 0.01 x < /dev/zero 2> /dev/null || true; done
  (yes; echo $? > "$2") | head -n 1 > /dev/null; exit 5' sh "$tmp/closed" "$tmp/yes.st" 2> /dev/null \
  | { exec 0<&-; : > "$tmp/closed"; }
expect_eq "reader gone: the command's exit status" "${PIPESTATUS[0]}" 5
expect_eq "reader gone: journal empty" "$(ls "$J" | wc -l)" 0
expect_eq "reader gone: the command's yes ended by SIGPIPE" "$(cat "$tmp/yes.st" 2> /dev/null)" 141

# --thp: works, or says why not.
"$CORUN" run --thp -- true 2> "$tmp/e"; rc=$?
[[ $rc == 0 ]] || grep -q -- "--thp" "$tmp/e" && ok || fail "--thp failed without a reason (rc $rc)"

# Usage errors.
"$CORUN" run > /dev/null 2>&1; expect_eq "no command" $? 2
"$CORUN" run --cpus 1-x -- true > /dev/null 2>&1; expect_eq "bad --cpus" $? 2
# A CPU the machine lacks is refused before anything runs, not trimmed away
# (the kernel would run it on the others, and the report name them all).
"$CORUN" run --cpus "0,$(nproc --all)" -- touch "$tmp/ran" 2> "$tmp/e"; expect_eq "--cpus naming a missing CPU" $? 2
grep -q "CPU $(nproc --all) not usable here" "$tmp/e" && ok || fail "missing CPU: $(cat "$tmp/e")"
[[ ! -e $tmp/ran ]] && ok || fail "the command ran despite a missing CPU"
"$CORUN" run --policy nosuch -- true > /dev/null 2>&1; expect_eq "unknown policy" $? 2
"$CORUN" run --actuator nosuch --cpus 0 -- true > /dev/null 2>&1; expect_eq "unknown actuator" $? 2

# sched_setaffinity failing (EPERM, ESRCH) never stops the command.
for e in EPERM ESRCH; do
  CORUN_TEST_FAULT=sched_setaffinity=$e "$CORUN" run --journal "$J" --cpus 0 -- sh -c 'exit 5' 2> "$tmp/e"
  expect_eq "run with $e injected" $? 5
  grep -q "running unplaced" "$tmp/e" && ok || fail "$e: no warning: $(cat "$tmp/e")"
done

# Crash: kill -9 of corun leaves the command pinned; corun restore puts it
# back. Both find the journal through $XDG_RUNTIME_DIR/corun.
J=$XDG_RUNTIME_DIR/corun
"$CORUN" run --cpus "$last" -- "$K/corun-compute" -n 0 -t 2 -r "$tmp/r2" -w "$tmp/go" 2> /dev/null &
c=$!
wait_file "$tmp/r2" && ok || fail "crash kernel never became ready"
pid=$(cat "$tmp/r2")
kill -9 "$c"; wait "$c" 2> /dev/null
expect_eq "still pinned after the crash" "$(affinity_of "$pid")" "$last"
"$CORUN" restore > "$tmp/restore.out"; expect_eq "restore exit" $? 0
expect_eq "affinity restored after the crash" "$(affinity_of "$pid")" "$mine"
grep -q "1 restored" "$tmp/restore.out" && ok || fail "restore report: $(cat "$tmp/restore.out")"
expect_eq "journal emptied by restore" "$(ls "$J" | wc -l)" 0
touch "$tmp/go"
# Nothing left: a second restore is a no-op.
"$CORUN" restore --journal "$J" --json > "$tmp/r.json"; expect_eq "empty restore exit" $? 0
grep -q '"restored": 0' "$tmp/r.json" && ok || fail "empty restore json"
# A reader that has gone away does not change restore's exit status.
{ wait_file "$tmp/closed2" && "$CORUN" restore --journal "$J"; } | { exec 0<&-; echo closed > "$tmp/closed2"; }
expect_eq "restore with its reader gone: exit" "${PIPESTATUS[0]}" 0
# Under nohup (SIGHUP ignored), the command keeps SIGHUP ignored, as it
# would under nohup alone: corun hands on the dispositions it was given.
(trap '' HUP; "$CORUN" run --journal "$J" -- sh -c 'kill -HUP $$; echo survived > "$1"' sh "$tmp/huprun") > /dev/null 2>&1
expect_eq "run under nohup: the command's SIGHUP stays ignored" "$(cat "$tmp/huprun" 2> /dev/null)" survived
("$CORUN" run --journal "$J" -- sh -c 'kill -HUP $$; echo survived > "$1"' sh "$tmp/huprun2") > /dev/null 2>&1
expect_eq "run: the command's SIGHUP is the default otherwise" "$(cat "$tmp/huprun2" 2> /dev/null)" ""
finish
