# Processes that exit between the daemon's sample and its action never stop
# the loop (the daemon places, so it applies to processes as they exit): many short-lived matching processes come and go while the daemon
# ticks every 50 ms; afterwards it still answers and keeps ticking, and the
# survivors are listed.
. "$(dirname "$0")/daemon-lib.bash"
prog "${tag}q"
spawn "${tag}q"; keeper=$last
# sample_min_cpu = 0: every selected process is placed, idle or not, so the
# short-lived ones are acted on as they exit (by default idle ones are left
# alone and never reach the actuator).
printf '[daemon]\nsample_min_cpu = 0\n' > "$tmp/churn.conf"
"$CORUN" daemon --foreground --config "$tmp/churn.conf" --socket "$sock" --journal-dir "$journal" \
  --interval 0.05 --comm "${tag}q" 2>> "$tmp/daemon.err" &
dpid=$!
wait_for "the daemon's socket" status_ok
expect_placing
t0=$(ticks)
# 200 processes living 0 to 30 ms each, several at a time.
for i in $(seq 1 40); do
  for j in 1 2 3 4 5; do "$tmp/${tag}q" "0.0$((RANDOM % 3))" & done
  wait_for "tick $i passes" ticks_above "$t0"
  t0=$(ticks)
done
wait $(jobs -p | grep -v "^$dpid$" | grep -v "^$keeper$") 2>/dev/null
kill -0 "$dpid" 2>/dev/null && ok || fail "the daemon died during the churn"
wait_for "keeper $keeper listed" listed "$keeper"
# The survivor is placed on one CPU, visibly in /proc.
keeper_placed() { [[ $(status_json 2>/dev/null | sed -nE "s/.*\{\"pid\": $keeper, .*\"placed_cpu\": ([0-9]+),.*/\1/p") == "$(allowed "$keeper")" ]]; }
wait_for "keeper $keeper placed" keeper_placed
t1=$(ticks); wait_for "ticks go on" ticks_above "$t1"
stop_daemon TERM
expect_eq "daemon exit" "$drc" 0
grep -qi "tick:" "$tmp/daemon.err" && fail "a tick failed: $(grep tick: "$tmp/daemon.err")" || ok
finish
