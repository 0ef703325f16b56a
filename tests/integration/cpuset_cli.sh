# The cpuset actuator on this machine's cgroups (v2 with cpuset, or v1):
# a placed command runs in corun's cgroup with the CPUs asked for, its
# threads follow, and the cgroup is gone (the process back where it was)
# afterwards; `corun restore` after a crash does the same, keeping a mask
# the process's owner set inside corun's cgroup since, and leaving a
# process its owner moved to a cgroup of theirs there. Skipped, saying
# why, where no cpuset hierarchy is mounted or writable.
. "$(dirname "$0")/lib.bash"
export XDG_RUNTIME_DIR; tmp=$(mktemp -d); XDG_RUNTIME_DIR=$tmp/xdg; trap 'touch "$tmp/go"; rm -rf "$tmp"' EXIT
K=$CORUN_BUILD_DIR/kernels
J=$tmp/journal
last=$(($(nproc --all) - 1))

if ! "$CORUN" run --actuator cpuset --journal "$J" --cpus 0 -- true 2> "$tmp/probe"; then
  if grep -q "cannot work here" "$tmp/probe"; then
    echo "SKIP: cpuset actuator unavailable: $(cat "$tmp/probe")"
    exit 0
  fi
fi
mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpuset(,|$)/ {print $2; exit}' /proc/mounts)
v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
if [[ -n $v2 ]] && grep -qw cpuset "$v2/cgroup.controllers" 2> /dev/null; then mnt=$v2; fi
echo "cpuset hierarchy: $mnt"
# cgroup_of PID: its cgroup in the cpuset hierarchy.
cgroup_of() { grep -E '(^0::|cpuset)' /proc/"$1"/cgroup | head -1 | cut -d: -f3; }
# placed_then_crashed CPUS TAG: a waiting kernel placed on CPUS through
# cpusets, then its corun killed (-9): sets pid and cg (corun's cgroup).
placed_then_crashed() {
  "$CORUN" run --actuator cpuset --journal-dir "$J" --cpus "$1" -- "$K/corun-compute" -n 0 -r "$tmp/$2" -w "$tmp/go" 2> /dev/null &
  local c=$!
  wait_file "$tmp/$2" && ok || fail "$2: never ready"
  pid=$(cat "$tmp/$2")
  cg=$(cgroup_of "$pid")
  kill -9 "$c"; wait "$c" 2> /dev/null
}
before=$(cgroup_of self)

"$CORUN" run --actuator cpuset --journal "$J" --cpus "$last" -- "$K/corun-compute" -n 0 -t 3 -r "$tmp/r1" -w "$tmp/go" 2> "$tmp/err" &
c=$!
wait_file "$tmp/r1" && ok || fail "never ready: $(cat "$tmp/err")"
pid=$(cat "$tmp/r1")
cg=$(cgroup_of "$pid")
[[ $cg == /corun/"$pid"-* ]] && ok || fail "not in corun's cgroup: '$cg'"
expect_eq "cpuset.cpus" "$(cat "$mnt$cg/cpuset.cpus" 2> /dev/null)" "$last"
expect_eq "every thread on the cpuset" "$(affinity_of "$pid")" "$last"
touch "$tmp/go"; wait "$c"; expect_eq "cpuset run exit" $? 0
[[ -z $cg || ! -d $mnt$cg ]] && ok || fail "cgroup $mnt$cg left behind"
expect_eq "journal empty" "$(ls "$J" | wc -l)" 0
rm -f "$tmp/go"

# Crash, then corun restore: back to its cgroup, cgroup removed.
placed_then_crashed "$last" r2
"$CORUN" restore --journal "$J" > "$tmp/out"; expect_eq "restore exit" $? 0
expect_eq "back in its cgroup" "$(cgroup_of "$pid")" "$before"
[[ ! -d $mnt$cg ]] && ok || fail "cgroup $mnt$cg left after restore"
expect_eq "affinity back" "$(affinity_of "$pid")" "$(affinity_of $$)"
touch "$tmp/go"

# Crash, then its owner pins it inside corun's cgroup, then corun restore:
# back to its cgroup with the owner's mask, not the journaled original. (A
# kernel that resets masks on a cgroup move has the owner's set again; a
# recent one, like this machine's, keeps the mask the user asked for.)
if ((last >= 1)) && command -v taskset > /dev/null; then
  rm -f "$tmp/go"
  placed_then_crashed "0-$last" r3
  taskset -apc "$last" "$pid" > /dev/null || fail "taskset failed"
  "$CORUN" restore --journal-dir "$J" > "$tmp/out"; expect_eq "restore exit (owner pin)" $? 0
  expect_eq "owner pin: back in its cgroup" "$(cgroup_of "$pid")" "$before"
  [[ ! -d $mnt$cg ]] && ok || fail "cgroup $mnt$cg left after restore (owner pin)"
  expect_eq "owner's mask set again after the move" "$(affinity_of "$pid")" "$last"
  grep -q "left alone: its owner changed its affinity" "$tmp/out" && ok || fail "restore said: $(cat "$tmp/out")"
  touch "$tmp/go"
fi

# Crash, then its owner moves it to a cgroup of theirs, then corun restore:
# it stays in their cgroup, and corun's is removed.
rm -f "$tmp/go"
placed_then_crashed "$last" r4
theirs=corun-test-theirs-$$
mkdir "$mnt/$theirs" || fail "mkdir $mnt/$theirs"
if [[ $mnt != "$v2" ]]; then
  cat "$mnt/cpuset.cpus" > "$mnt/$theirs/cpuset.cpus"
  cat "$mnt/cpuset.mems" > "$mnt/$theirs/cpuset.mems"
fi
echo "$pid" > "$mnt/$theirs/cgroup.procs" || fail "moving $pid to $theirs"
"$CORUN" restore --journal-dir "$J" > "$tmp/out"; expect_eq "restore exit (owner move)" $? 0
expect_eq "owner move: still in their cgroup" "$(cgroup_of "$pid")" "/$theirs"
[[ ! -d $mnt$cg ]] && ok || fail "cgroup $mnt$cg left after restore (owner move)"
grep -q "left alone: no longer in corun's cgroup" "$tmp/out" && ok || fail "restore said: $(cat "$tmp/out")"
echo "$pid" > "$mnt/cgroup.procs"; rmdir "$mnt/$theirs"
touch "$tmp/go"

# A batch through cpusets.
printf 'true\nfalse\nsh -c "exit 0"\n' > "$tmp/c.jobs"
ndirs() { find "$mnt/corun" -mindepth 1 -maxdepth 1 -type d 2> /dev/null | wc -l; }
n0=$(ndirs)
"$CORUN" batch -j 2 --actuator cpuset --journal "$J" "$tmp/c.jobs" > /dev/null 2>&1
expect_eq "cpuset batch exit" $? 1
expect_eq "no task cgroups left" "$(ndirs)" "$n0"
finish
