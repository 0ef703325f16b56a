# Demo: corun daemon on three programs, corun status explains them, SIGTERM
# gives everything back. Sourced by scripts/demo.sh with $corun set.
step "corun daemon --comm 'demo-*' and corun status  (processes already running)"
demo_dir=$(mktemp -d)
cp "$(command -v sleep)" "$demo_dir/demo-sleep"
cp "$(command -v bash)" "$demo_dir/demo-busy"
"$demo_dir/demo-sleep" 60 & demo_p1=$!
"$demo_dir/demo-busy" -c 'while :; do :; done' & demo_p2=$!
"$demo_dir/demo-busy" -c 'while :; do :; done' & demo_p3=$!
"$corun" daemon --foreground --comm 'demo-*' --interval 0.5 --socket "$demo_dir/sock" \
  --journal-dir "$demo_dir/journal" --metrics "$demo_dir/corun.prom" &
demo_d=$!
# Wait (up to 10 s) until the daemon has placed the two busy ones: it
# measures them, plans, and moves once two plans in a row agree.
for _ in $(seq 1 100); do
  "$corun" status --socket "$demo_dir/sock" --json 2>/dev/null | grep -o '"placed_cpu": [0-9]' |
    grep -c . | grep -qx 2 && break
  sleep 0.1
done
"$corun" status --socket "$demo_dir/sock"
echo; grep '^corun_daemon_' "$demo_dir/corun.prom" | grep -v '^#' | head -n 6
kill -TERM "$demo_d"; wait "$demo_d"
kill "$demo_p1" "$demo_p2" "$demo_p3" 2>/dev/null; wait "$demo_p1" "$demo_p2" "$demo_p3" 2>/dev/null
rm -rf "$demo_dir"
