# corun batch on real processes: a 20-job file whose exit status counts the
# failures, the JSON listing every job, each running job's threads placed
# (checked in /proc while they run), bad input naming its line, SIGINT and
# SIGTERM stopping everything and restoring, no orphans, --compare, the
# engine re-placing running jobs, and injected sched_setaffinity failures.
. "$(dirname "$0")/lib.bash"
export XDG_RUNTIME_DIR; tmp=$(mktemp -d); XDG_RUNTIME_DIR=$tmp/xdg; trap 'touch "$tmp/go"; rm -rf "$tmp"' EXIT
K=$CORUN_BUILD_DIR/kernels
J=$tmp/journal
ncpu=$(nproc --all)

# 20 jobs, 7 of which fail (exit 1..3, a signal, a missing command).
{
  echo "# twenty jobs"
  for i in $(seq 1 13); do echo "name=ok$i -- true"; done
  echo "name=f1 -- exit 1"
  echo "exit 2"
  echo ""
  echo "name=f3 class=sheep weight=2 -- sh -c 'exit 3'"
  echo "name=f4 -- kill -KILL \$\$"
  echo "name=f5 -- /no/such/command"
  echo "FOO=1 sh -c 'exit \$FOO'"
  echo "name=f7 class=compute -- false"
} > "$tmp/twenty.jobs"
"$CORUN" batch -j 2 --journal "$J" --json "$tmp/b.json" "$tmp/twenty.jobs" > "$tmp/out" 2> "$tmp/err"
expect_eq "20 jobs, 7 failed: exit status" $? 7
expect_eq "json lists every job" "$(grep -c '"name": ' "$tmp/b.json")" 20
expect_eq "json successes" "$(grep -c '"exit_status": 0,' "$tmp/b.json")" 13
grep -q '"name": "f5".*"exit_status": 127' "$tmp/b.json" && ok || fail "missing command is not 127"
grep -q '"name": "f4".*"exit_status": 137, "signal": 9' "$tmp/b.json" && ok || fail "killed job not 128+9"
grep -q '"name": "job15".*"exit_status": 2' "$tmp/b.json" && ok || fail "unnamed job's name or status"
grep -q '"failed": 7' "$tmp/b.json" && ok || fail "summary failed count"
grep -q '"makespan_s": [0-9]' "$tmp/b.json" && ok || fail "summary makespan"
# One NUMA node here: nothing for memory to follow.
grep -q '"mem_moves": 0' "$tmp/b.json" && ok || fail "summary mem_moves"
grep -q "makespan" "$tmp/out" && ok || fail "no summary line"
expect_eq "journal empty after the batch" "$(ls "$J" 2> /dev/null | wc -l)" 0

# Bytes that are not UTF-8 in a job file (a Latin-1 file name) still give a
# JSON document that parses; well-formed UTF-8 is kept as it is.
printf 'name=caf\xe9 -- true \xff\xc3\xa9\xe2\x82\xac\xed\xa0\x80 \xc3\n' > "$tmp/latin1.jobs"
"$CORUN" batch --json "$tmp/latin1.json" "$tmp/latin1.jobs" > /dev/null 2>&1
expect_eq "latin-1 job file exit" $? 0
if command -v python3 > /dev/null; then
  got=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1], encoding="utf-8"))["jobs"][0]
print(ascii(j["name"]), ascii(j["command"]))' "$tmp/latin1.json" 2>&1)
  expect_eq "latin-1 job file: JSON parses" "$got" "'caf\ufffd' 'true \ufffd\xe9\u20ac\ufffd\ufffd\ufffd \ufffd'"
fi

# More than 101 failures: 101.
for i in $(seq 1 103); do echo false; done > "$tmp/many.jobs"
"$CORUN" batch -j 2 --policy linux "$tmp/many.jobs" > /dev/null 2>&1; expect_eq "failures capped" $? 101
# From stdin.
printf 'true\nfalse\n' | "$CORUN" batch -j 2 - > /dev/null 2>&1; expect_eq "jobs from stdin" $? 1
printf 'true\ntrue\n' | "$CORUN" batch -j 2 --no-mem-follow - > /dev/null 2>&1
expect_eq "--no-mem-follow accepted" $? 0

# Placement seen in /proc while the jobs run: two 2-thread jobs, -j 2, each
# job's every thread on one CPU, and (spread) not the same one.
printf 'name=a class=compute -- %s -n 0 -t 2 -r %s -w %s\nname=b class=streaming -- %s -n 0 -t 2 -r %s -w %s\n' \
  "$K/corun-compute" "$tmp/ra" "$tmp/go" "$K/corun-stream" "$tmp/rb" "$tmp/go" > "$tmp/two.jobs"
"$CORUN" batch -j 2 --journal "$J" "$tmp/two.jobs" > /dev/null 2>&1 &
c=$!
wait_file "$tmp/ra" && wait_file "$tmp/rb" && ok || fail "jobs never became ready"
pa=$(cat "$tmp/ra"); pb=$(cat "$tmp/rb")
aa=$(affinity_of "$pa"); ab=$(affinity_of "$pb")
expect_eq "job a threads" "$(ls /proc/"$pa"/task | wc -l)" 3
[[ $aa =~ ^[0-9]+$ ]] && ok || fail "job a's threads not on one CPU: '$aa'"
[[ $ab =~ ^[0-9]+$ ]] && ok || fail "job b's threads not on one CPU: '$ab'"
((ncpu < 2)) || [[ $aa != "$ab" ]] && ok || fail "spread put both jobs on CPU $aa"
# (two job shells, and their programs once a tick has placed them too)
n=$(ls "$J"/*.journal 2> /dev/null | wc -l)
((n >= 2 && n <= 4)) && ok || fail "journal entries while placed: $n"
touch "$tmp/go"; wait "$c"; expect_eq "placed batch exit" $? 0
rm -f "$tmp/go" "$tmp/ra" "$tmp/rb"

# A pinned job whose CPU is taken by work corun does not control gets every
# CPU back: two busy threads per CPU besides it, whichever CPU it is given.
if ((ncpu >= 2)); then
  "$K/corun-compute" -n 100000 -t $((2 * ncpu)) -r "$tmp/hog" &
  hog=$!
  wait_file "$tmp/hog" && ok || fail "hog never ready"
  echo "name=victim -- $K/corun-compute -n 100000 -r $tmp/victim" > "$tmp/victim.jobs"
  "$CORUN" batch -j 1 --policy spread --journal "$J" --json "$tmp/victim.json" "$tmp/victim.jobs" > /dev/null 2>&1 &
  c=$!
  wait_file "$tmp/victim" && ok || fail "victim never ready"
  vp=$(cat "$tmp/victim")
  d=$((SECONDS + 30)); wide=""
  while ((SECONDS < d)); do
    a=$(affinity_of "$vp")
    [[ $a =~ [-,] ]] && { wide=$a; break; }
    read -rt 0.05 <> <(:) || true
  done
  [[ -n $wide ]] && ok || fail "a job starved on a contended CPU was never unpinned ($(affinity_of "$vp"))"
  kill "$vp"; wait "$c"
  grep -q '"unpinned": true' "$tmp/victim.json" && ok || fail "json does not say unpinned"
  kill "$hog"; wait "$hog" 2> /dev/null
fi

# Malformed input: exit 2, one line naming FILE:LINE.
printf 'true\n# ok\nname=x clas=compute -- true\n' > "$tmp/bad.jobs"
"$CORUN" batch "$tmp/bad.jobs" > /dev/null 2> "$tmp/e"; expect_eq "malformed exit" $? 2
expect_eq "malformed: one line" "$(wc -l < "$tmp/e")" 1
grep -q "$tmp/bad.jobs:3: .*clas" "$tmp/e" && ok || fail "malformed line not named: $(cat "$tmp/e")"
printf 'class=purple -- true\n' > "$tmp/bad2.jobs"
"$CORUN" batch "$tmp/bad2.jobs" > /dev/null 2> "$tmp/e"; expect_eq "bad class exit" $? 2
grep -q "bad2.jobs:1: unknown class 'purple'" "$tmp/e" && ok || fail "bad class: $(cat "$tmp/e")"
printf 'true\nweight=0 -- true\n' > "$tmp/bad3.jobs"
"$CORUN" batch "$tmp/bad3.jobs" > /dev/null 2> "$tmp/e"; expect_eq "bad weight exit" $? 2
grep -q "bad3.jobs:2: weight" "$tmp/e" && ok || fail "bad weight: $(cat "$tmp/e")"
printf 'name=x true\n' > "$tmp/bad4.jobs"
"$CORUN" batch "$tmp/bad4.jobs" > /dev/null 2> "$tmp/e"; expect_eq "no separator exit" $? 2
"$CORUN" batch /nonexistent.jobs > /dev/null 2> "$tmp/e"; expect_eq "unreadable file" $? 2
grep -q "/nonexistent.jobs" "$tmp/e" && ok || fail "unreadable file not named"
# A directory: its own reason, not an I/O error, on one line.
"$CORUN" batch "$tmp" > /dev/null 2> "$tmp/e"; expect_eq "directory as job file" $? 2
expect_eq "directory: one line" "$(wc -l < "$tmp/e")" 1
grep -q "$tmp: Is a directory" "$tmp/e" && ok || fail "directory: $(cat "$tmp/e")"
"$CORUN" batch - < "$tmp" > /dev/null 2> "$tmp/e"; expect_eq "directory on stdin" $? 2
grep -q "<stdin>: Is a directory" "$tmp/e" && ok || fail "directory on stdin: $(cat "$tmp/e")"
# A --json FILE that cannot be written stops the batch before any job runs.
printf 'touch %s\n' "$tmp/ran" > "$tmp/ran.jobs"
"$CORUN" batch --json "$tmp/no/such/dir/b.json" "$tmp/ran.jobs" > /dev/null 2> "$tmp/e"
expect_eq "unwritable --json exit" $? 2
[[ ! -e $tmp/ran ]] && ok || fail "a job ran before the unwritable --json was noticed"
grep -q "no/such/dir/b.json" "$tmp/e" && ok || fail "unwritable --json not named: $(cat "$tmp/e")"
# So does a --journal-dir that cannot hold the journal: one line, exit 2,
# not one warning per job that then runs unplaced.
: > "$tmp/afile"
"$CORUN" batch --journal-dir "$tmp/afile/j" "$tmp/ran.jobs" > /dev/null 2> "$tmp/e"
expect_eq "unusable --journal-dir exit" $? 2
[[ ! -e $tmp/ran ]] && ok || fail "a job ran before the unusable --journal-dir was noticed"
expect_eq "unusable --journal-dir: one line" "$(wc -l < "$tmp/e")" 1
grep -q "^corun batch: --journal-dir $tmp/afile/j: Not a directory" "$tmp/e" && ok || fail "unusable --journal-dir: $(cat "$tmp/e")"
"$CORUN" batch --journal-dir "$tmp/new/j" "$tmp/ran.jobs" > /dev/null 2> "$tmp/e"
expect_eq "missing --journal-dir made" $? 0
[[ -d $tmp/new/j && -e $tmp/ran ]] && ok || fail "missing --journal-dir not made, or the job did not run"
rm -f "$tmp/ran"
"$CORUN" batch -j 0 "$tmp/two.jobs" > /dev/null 2>&1; expect_eq "-j 0" $? 2
"$CORUN" batch --compare nosuch "$tmp/two.jobs" > /dev/null 2>&1; expect_eq "--compare unknown" $? 2

# A reader that goes away (| head) stops neither the restore nor the --json
# FILE nor the exit status (corun ignores SIGPIPE); the jobs still get
# SIGPIPE by default, as from a shell: one that prints after the reader is
# gone is killed by it, and `yes | head` ends by it.
{
  printf 'name=quiet -- while [ ! -e %s ]; do read -t 0.01 x < /dev/zero 2>/dev/null || true; done\n' "$tmp/closed"
  printf 'name=talk -- while [ ! -e %s ]; do read -t 0.01 x < /dev/zero 2>/dev/null || true; done; echo after\n' "$tmp/closed"
  printf 'name=yes -- (yes; echo $? > %s) | head -n 1 > /dev/null\n' "$tmp/yes.st"
} > "$tmp/pipe.jobs"
"$CORUN" batch --journal "$J" --json "$tmp/pipe.json" "$tmp/pipe.jobs" 2> "$tmp/e" | { exec 0<&-; : > "$tmp/closed"; }
expect_eq "reader gone: exit status (one job failed)" "${PIPESTATUS[0]}" 1
grep -q '"name": "talk".*"exit_status": 141, "signal": 13' "$tmp/pipe.json" && ok || fail "reader gone: a job printing was not killed by SIGPIPE: $(cat "$tmp/pipe.json")"
grep -q '"name": "quiet".*"exit_status": 0,' "$tmp/pipe.json" && ok || fail "reader gone: quiet job"
expect_eq "reader gone: yes ended by SIGPIPE" "$(cat "$tmp/yes.st" 2> /dev/null)" 141
expect_eq "reader gone: journal empty" "$(ls "$J" 2> /dev/null | wc -l)" 0
[[ ! -s $tmp/e ]] && ok || fail "reader gone: corun complained: $(cat "$tmp/e")"
if command -v python3 > /dev/null; then
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/pipe.json" && ok || fail "reader gone: --json FILE does not parse"
fi

# SIGINT / SIGTERM: forwarded, waited for, restored, 130 / 143, no job left.
for sig in INT TERM; do
  rm -f "$tmp"/s*
  for i in 1 2 3 4; do echo "name=s$i -- $K/corun-compute -n 0 -t 2 -r $tmp/s$i -w $tmp/never"; done > "$tmp/stop.jobs"
  "$CORUN" batch -j 2 --journal "$J" --json "$tmp/stop.json" "$tmp/stop.jobs" > /dev/null 2> "$tmp/e" &
  c=$!
  wait_file "$tmp/s1" && wait_file "$tmp/s2" && ok || fail "SIG$sig: jobs never ready"
  p1=$(cat "$tmp/s1"); p2=$(cat "$tmp/s2")
  kill -"$sig" "$c"; wait "$c"; rc=$?
  expect_eq "SIG$sig exit status" "$rc" "$([[ $sig == INT ]] && echo 130 || echo 143)"
  kill -0 "$p1" 2> /dev/null && fail "SIG$sig: job process $p1 still running" || ok
  kill -0 "$p2" 2> /dev/null && fail "SIG$sig: job process $p2 still running" || ok
  [[ ! -e $tmp/s3 && ! -e $tmp/s4 ]] && ok || fail "SIG$sig: queued jobs started after the signal"
  expect_eq "SIG$sig: journal empty (all restored)" "$(ls "$J" 2> /dev/null | wc -l)" 0
  grep -q '"interrupted_by": ' "$tmp/stop.json" && ok || fail "SIG$sig: json not written"
done

# No orphans: a job that leaves a background process behind.
echo "$K/corun-compute -n 0 -r $tmp/orphan -w $tmp/never & while [ ! -s $tmp/orphan ]; do :; done; exit 0" > "$tmp/orphan.jobs"
"$CORUN" batch -j 2 "$tmp/orphan.jobs" > /dev/null 2>&1; expect_eq "orphan batch exit" $? 0
op=$(cat "$tmp/orphan" 2> /dev/null)
[[ -n $op ]] && ok || fail "orphan never started"
[[ -n $op ]] && kill -0 "$op" 2> /dev/null && { fail "orphan $op survived the batch"; kill "$op"; } || ok
# ... even one that left the job's process group (setsid): corun is its subreaper.
echo "setsid $K/corun-compute -n 0 -r $tmp/orphan2 -w $tmp/never & while [ ! -s $tmp/orphan2 ]; do :; done; exit 0" > "$tmp/orphan2.jobs"
"$CORUN" batch -j 2 "$tmp/orphan2.jobs" > /dev/null 2>&1; expect_eq "setsid orphan batch exit" $? 0
op=$(cat "$tmp/orphan2" 2> /dev/null)
[[ -n $op ]] && kill -0 "$op" 2> /dev/null && { fail "setsid orphan $op survived the batch"; kill "$op"; } || ok

# What corun had before the batch (a background job of the shell that
# exec'd it) is not the batch's: neither killed nor waited for (the batch
# would last the sleep's 300 s); nor are its descendants, even once
# reparented to corun, the subreaper, while the batch runs.
printf 'true\n' > "$tmp/one.jobs"
sh -c 'sleep 300 & echo $! > "$1"; exec "$2" batch "$3"' sh "$tmp/elder" "$CORUN" "$tmp/one.jobs" > /dev/null 2>&1
expect_eq "inherited child: exit" $? 0
ep=$(cat "$tmp/elder" 2> /dev/null)
[[ -n $ep ]] && kill -0 "$ep" 2> /dev/null && ok || fail "the batch killed the child corun had before it ($ep)"
[[ -n $ep ]] && kill "$ep" 2> /dev/null
{
  printf 'while [ ! -s %s ]; do read -t 0.01 x < /dev/zero 2>/dev/null || true; done; g=$(cat %s); kill $(cat %s); ' \
    "$tmp/grand" "$tmp/grand" "$tmp/mid"
  printf 'while [ "$(sed -n "s/^PPid:[[:space:]]*//p" /proc/$g/status)" != $PPID ]; do read -t 0.01 x < /dev/zero 2>/dev/null || true; done\n'
} > "$tmp/adopt.jobs"
sh -c '(sleep 300 & echo $! > "$1"; wait) & echo $! > "$2"; exec "$3" batch "$4"' \
  sh "$tmp/grand" "$tmp/mid" "$CORUN" "$tmp/adopt.jobs" > /dev/null 2>&1
expect_eq "inherited grandchild: exit" $? 0
gp=$(cat "$tmp/grand" 2> /dev/null)
[[ -n $gp ]] && kill -0 "$gp" 2> /dev/null && ok || fail "the batch killed a grandchild corun had before it ($gp)"
[[ -n $gp ]] && kill "$gp" 2> /dev/null

# --compare prints both runs and the ratio.
printf 'true\nsleep 0.05\n' > "$tmp/cmp.jobs"
"$CORUN" batch -j 2 --policy spread --compare linux --json "$tmp/cmp.json" "$tmp/cmp.jobs" > "$tmp/out" 2>&1
expect_eq "compare exit" $? 0
expect_eq "compare: two tables" "$(grep -c '^ corun batch:' "$tmp/out")" 2
grep -q "ratio linux/spread" "$tmp/out" && ok || fail "compare: no ratio: $(cat "$tmp/out")"
grep -q '"makespan_ratio": [0-9]' "$tmp/cmp.json" && ok || fail "compare: no ratio in json"

# Running jobs are re-placed by the engine: one per run that pins (spread),
# none under linux; its moves are journaled with the batch's and undone.
"$CORUN" -v batch -j 2 --policy spread --compare linux --journal "$J" "$tmp/cmp.jobs" > /dev/null 2> "$tmp/e"
expect_eq "engine batch exit" $? 0
expect_eq "one engine (spread run only)" "$(grep -c '^corun batch: engine: [0-9]* intervals' "$tmp/e")" 1
expect_eq "journal empty after the engine's run" "$(ls "$J" 2> /dev/null | wc -l)" 0

# Two jobs running side by side are never started on the same CPU while
# another is free (the policy's plan may mean to move a running job off the
# CPU it gives the newcomer; the chooser does not make that move). Each job
# records its CPUs and waits for the test's go-ahead, so pairs are known.
if (($(nproc) >= 2)); then
  mkdir -p "$tmp/pairs"
  for n in s1 s2 c1 c2; do
    cls=streaming; [[ $n == c* ]] && cls=compute
    printf 'name=%s class=%s -- sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status > %s/%s.tmp && mv %s/%s.tmp %s/%s; while [ ! -e %s/go-%s ]; do read -t 0.01 x < /dev/zero 2>/dev/null || true; done\n' \
      "$n" "$cls" "$tmp/pairs" "$n" "$tmp/pairs" "$n" "$tmp/pairs" "$n" "$tmp/pairs" "$n"
  done > "$tmp/pairs.jobs"
  "$CORUN" batch -j 2 --journal "$J" "$tmp/pairs.jobs" > "$tmp/pairs.out" 2>&1 &
  bp=$!
  for round in 1 2; do
    d=$((SECONDS + 20))
    while (($(ls "$tmp/pairs" | grep -vc '^go-\|tmp$') < 2 * round)) && ((SECONDS < d)); do
      read -rt 0.01 <> <(:) || true
    done
    mapfile -t now < <(cd "$tmp/pairs" && for f in s1 s2 c1 c2; do [[ -e $f && ! -e go-$f ]] && echo "$f"; done)
    expect_eq "round $round: two jobs running" "${#now[@]}" 2
    if ((${#now[@]} == 2)); then
      m1=$(cat "$tmp/pairs/${now[0]}"); m2=$(cat "$tmp/pairs/${now[1]}")
      [[ $m1 != "$m2" ]] && ok || fail "round $round: ${now[0]} and ${now[1]} both started on CPUs $m1"
    fi
    for f in "${now[@]}"; do : > "$tmp/pairs/go-$f"; done
  done
  wait "$bp"; expect_eq "pairs batch exit" $? 0
fi

# sched_setaffinity failing never aborts the batch.
for e in EPERM ESRCH; do
  printf 'true\nexit 4\ntrue\n' > "$tmp/f.jobs"
  CORUN_TEST_FAULT=sched_setaffinity=$e "$CORUN" batch -j 2 --journal "$J" "$tmp/f.jobs" > /dev/null 2> "$tmp/e"
  expect_eq "batch with $e injected" $? 1
  grep -q "running unplaced" "$tmp/e" && ok || fail "$e: no warning"
done
CORUN_TEST_FAULT=sched_setaffinity=EPERM@2 "$CORUN" batch -j 2 --journal "$J" "$tmp/f.jobs" > /dev/null 2>&1
expect_eq "batch with the 2nd call failing" $? 1
expect_eq "journal empty after faults" "$(ls "$J" 2> /dev/null | wc -l)" 0
finish
