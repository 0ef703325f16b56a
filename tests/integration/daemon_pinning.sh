# A user's own pinning is left alone: a process whose affinity its owner
# narrowed (taskset) is not managed, and its mask is untouched, unless
# --include-pinned says otherwise; one whose owner widened the mask the
# daemon set is let go as well.
. "$(dirname "$0")/daemon-lib.bash"
if (( $(nproc --all) < 2 )) || ! command -v taskset > /dev/null; then
  echo "SKIP: needs taskset and two CPUs to narrow a mask"; exit 0
fi
first=$(allowed $$ | sed -E 's/^([0-9]+).*/\1/')
prog "${tag}n"
spawn "${tag}n"; free_=$last
spawn "${tag}n"; pinned=$last
taskset -pc "$first" "$pinned" > /dev/null || fail "taskset failed"
before=$(allowed "$pinned")
expect_eq "pinned mask" "$before" "$first"

start_daemon --comm "${tag}n"
expect_placing
wait_for "unpinned $free_ listed" listed "$free_"
# Wait two more ticks after it is listed so that a wrong decision has had time to show.
t0=$(ticks); wait_for "two more ticks" ticks_above $((t0 + 1))
not_listed "$pinned" && ok || fail "the user's pinned $pinned is managed"
expect_eq "pinned mask untouched" "$(allowed "$pinned")" "$before"

# Pinned while the daemon watches: it is let go. When the daemon has placed
# it on one CPU, its owner picks another, so that the mask is visibly theirs.
placed=$(status_json | sed -nE "s/.*\{\"pid\": $free_, .*\"placed_cpu\": ([0-9]+),.*/\1/p")
mine=$first
if [[ $placed == "$first" ]]; then
  mine=$(awk -v f="$first" 'BEGIN { RS = "," } { split($0, r, "-"); lo = r[1]; hi = (r[2] == "" ? r[1] : r[2]);
         for (c = lo; c <= hi; c++) if (c != f) { print c; exit } }' <<< "$(allowed $$)")
fi
taskset -pc "$mine" "$free_" > /dev/null
wait_for "$free_ let go once its owner pinned it" not_listed "$free_"
expect_eq "mask set by its owner kept" "$(allowed "$free_")" "$mine"
# Nothing was given back: the owner's mask stands.
restores() { status_json 2>/dev/null | sed -nE 's/^    "restores_total": ([0-9]+),?$/\1/p'; }
expect_eq "restores_total after the owner took over" "$(restores)" 0
stop_daemon TERM
# Stopping restores what the daemon changed, never what an owner set since.
expect_eq "owner's mask kept after the daemon stops" "$(allowed "$free_")" "$mine"

start_daemon --comm "${tag}n" --include-pinned
wait_for "pinned $pinned listed with --include-pinned" listed "$pinned"
stop_daemon TERM

# A placed process that execs into a name the daemon does not select is
# released and its own mask put back: the daemon's pin is not its owner's.
prog "${tag}b" busy
start_daemon --comm "${tag}b"
"$tmp/${tag}b" -c 'trap "exec sleep 600" USR1; while :; do :; done' &
ex=$!; kids+=("$ex")
placed_cpu() { status_json 2>/dev/null | grep -qE "\{\"pid\": $1, .*\"placed_cpu\": [0-9]+,"; }
wait_for "$ex placed" placed_cpu "$ex"
kill -USR1 "$ex"
wait_for "$ex let go once it exec'd into sleep" not_listed "$ex"
expect_eq "its own mask back after the exec" "$(allowed "$ex")" "$(allowed $$)"
status_json > "$tmp/st"
grep -qE "\{\"t\": [0-9.e+]+, \"pid\": $ex, .*\"why\": \"released: no longer selected\"" "$tmp/st" && ok ||
  fail "no 'released' record for $ex: $(grep -o "\"pid\": $ex, [^}]*" "$tmp/st" | tail -1)"
expect_eq "restores_total after the exec" "$(restores)" 1
stop_daemon TERM

# A placed process whose owner widens its mask again (taskset with every
# CPU) is let go too, and stays listed but never placed again: its mask is
# the owner's, now and after the daemon stops.
prog "${tag}w" busy
start_daemon --comm "${tag}w"
spawn_busy "${tag}w"; wide=$last
wait_for "$wide placed" placed_cpu "$wide"
all=$(allowed $$)
taskset -pc "$all" "$wide" > /dev/null || fail "taskset failed"
widened() { status_json 2>/dev/null | grep -qE "\{\"pid\": $wide, .*\"why\": \"left alone: its owner set its affinity\""; }
wait_for "$wide let go once its owner widened its mask" widened
t0=$(ticks); wait_for "two more ticks" ticks_above $((t0 + 1))
placed_cpu "$wide" && fail "$wide placed again after its owner widened it" || ok
listed "$wide" && ok || fail "$wide, widened by its owner, is no longer listed"
expect_eq "widened mask kept" "$(allowed "$wide")" "$all"
expect_eq "restores_total after the owner widened" "$(restores)" 0
stop_daemon TERM
expect_eq "widened mask kept after the daemon stops" "$(allowed "$wide")" "$all"
finish
