# corun events: the presets resolve on the five PMUs the issue names, ref
# cycles on the Intel ones only; this machine's list is honest; bad input.
. "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# config of preset $2 in events JSON $1 ("null" when unavailable)
cfg() { sed -nE "s/.*\"name\": \"$2\", .*\"config\": ([0-9]+|null),.*/\1/p" "$1"; }

for pmu in skx icl spr amd64_fam19h_zen3 amd64_fam17h_zen2; do
  "$CORUN" events --pmu "$pmu" --json > "$tmp/$pmu.json" || { fail "$pmu: exit $?"; continue; }
  grep -q "^  \"pmu\": \"$pmu\"," "$tmp/$pmu.json" && ok || fail "$pmu: pmu key"
  for p in cycles instructions llc_misses branch_misses; do
    c=$(cfg "$tmp/$pmu.json" "$p")
    [[ $c =~ ^[0-9]+$ ]] && ok || fail "$pmu $p: config '$c'"
  done
  c=$(cfg "$tmp/$pmu.json" ref_cycles)
  case $pmu in
    amd*) expect_eq "$pmu ref_cycles" "$c" null
          grep -q '"name": "ref_cycles", "source": "none", "native": null, "type": null, "config": null, "reason": "' \
            "$tmp/$pmu.json" && ok || fail "$pmu ref_cycles has no reason" ;;
    *) expect_eq "$pmu ref_cycles" "$c" 768 ;;  # 0x0300, fixed counter 2
  esac
done
expect_eq "skx llc_misses" "$(cfg "$tmp/skx.json" llc_misses)" $((0x412e))
expect_eq "zen3 cycles" "$(cfg "$tmp/amd64_fam19h_zen3.json" cycles)" $((0x76))

# This machine: hardware presets available, or unavailable with a reason.
"$CORUN" events --json > "$tmp/live.json"; expect_eq "live exit" $? 0
if [[ ! -e /sys/bus/event_source/devices/cpu ]]; then
  grep -q '"name": "cycles", "source": "none", "native": null, "type": null, "config": null, "reason": "no PMU exposed' \
    "$tmp/live.json" && ok || fail "live cycles: $(grep '"cycles"' "$tmp/live.json")"
fi
expect_eq "live task_clock_ns type" \
  "$(sed -nE 's/.*"name": "task_clock_ns", .*"type": ([0-9]+|null),.*/\1/p' "$tmp/live.json")" 1

# Human output names the native events.
"$CORUN" events --pmu skx > "$tmp/h"
grep -q "skx::LONGEST_LAT_CACHE:MISS" "$tmp/h" && ok || fail "human output lacks the native name"

"$CORUN" events --pmu nosuch > /dev/null 2> "$tmp/e"; expect_eq "unknown pmu exit" $? 2
grep -q "nosuch" "$tmp/e" && ok || fail "unknown pmu not named"
"$CORUN" events extra > /dev/null 2>&1; expect_eq "extra argument" $? 2
finish
