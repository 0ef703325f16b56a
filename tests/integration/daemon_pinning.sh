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

# Pinned while the daemon watches: it is let go.
taskset -pc "$first" "$free_" > /dev/null
wait_for "$free_ let go once its owner pinned it" not_listed "$free_"
expect_eq "mask set by its owner kept" "$(allowed "$free_")" "$first"
stop_daemon TERM

start_daemon --comm "${tag}n" --include-pinned
wait_for "pinned $pinned listed with --include-pinned" listed "$pinned"
stop_daemon TERM
finish
