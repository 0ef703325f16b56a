# A user's own pinning is left alone: a process whose affinity its owner
# narrowed (taskset) is not managed, and its mask is untouched, unless
# --include-pinned says otherwise.
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
stop_daemon TERM
# Stopping restores what the daemon changed, never what an owner set since.
expect_eq "owner's mask kept after the daemon stops" "$(allowed "$free_")" "$mine"

start_daemon --comm "${tag}n" --include-pinned
wait_for "pinned $pinned listed with --include-pinned" listed "$pinned"
stop_daemon TERM
finish
