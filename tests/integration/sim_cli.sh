# corun sim: determinism, its JSON, bad input, every fixture machine.
. "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
wl=$CORUN_FIXTURES/workloads
fx=$CORUN_FIXTURES/topologies

# Determinism: byte-identical output, human and JSON.
"$CORUN" sim --machine skx28 --workload "$wl/mixed8.txt" > "$tmp/a" && ok || fail "mixed8 exit $?"
"$CORUN" sim --machine skx28 --workload "$wl/mixed8.txt" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok || fail "human output differs between two runs"
grep -q "^oracle " "$tmp/a" && ok || fail "no oracle row: $(cat "$tmp/a")"
for p in baseline random worst oracle; do
  [[ $(grep -c "^$p " "$tmp/a") == 1 ]] && ok || fail "expected one $p row"
done
args=(--machine "$fx/linux-16em64t-4s2c2t.xml" --workload random:6:7 --seed 3 --json)
"$CORUN" sim "${args[@]}" > "$tmp/j1" && ok || fail "json exit $?"
"$CORUN" sim "${args[@]}" > "$tmp/j2"
cmp -s "$tmp/j1" "$tmp/j2" && ok || fail "JSON differs between two runs"
"$CORUN" sim "${args[@]/--seed/--seed}" --seed 4 > "$tmp/j3"
cmp -s "$tmp/j1" "$tmp/j3" && fail "another seed gave the same output" || ok

# JSON: the keys of the issue, one object per policy, oracle >= baseline.
for k in machine seed tasks policies; do
  grep -q "^  \"$k\": " "$tmp/j1" && ok || fail "JSON lacks top-level $k"
done
expect_eq "json tasks" "$(json_num "$tmp/j1" tasks)" 6
expect_eq "json seed" "$(json_num "$tmp/j1" seed)" 3
# Five references and the six registered policies.
for k in name stp antt max_slowdown makespan_s migrations capture tasks; do
  expect_eq "policies with $k" "$(grep -c "^      \"$k\": " "$tmp/j1")" 11
done
# The engine's outcome check: counted for the six policies, null for the five references.
expect_eq "policies with an outcome check" \
  "$(grep -c '^      "outcome_check": {"judged": [0-9]*, "reverted": [0-9]*, "doubted": [0-9]*, "second_tried": [0-9]*, "second_kept": [0-9]*}' "$tmp/j1")" 6
expect_eq "references without one" "$(grep -c '^      "outcome_check": null' "$tmp/j1")" 5
grep -q '"makespan_s": null' "$tmp/j1" && ok || fail "makespan should be null without work amounts"
grep -q '{"name": "[a-z-]*-[0-9]*", "class": "[a-z-]*", "speedup": [0-9.]*, "cpus": "[0-9]*"}' "$tmp/j1" \
  && ok || fail "per-task objects malformed"
stp() { awk -v p="\"$2\"" '$0 ~ "\"name\": "p {f=1} f && /"stp":/ {gsub(/[,]/,""); print $2; exit}' "$1"; }
b=$(stp "$tmp/j1" baseline); o=$(stp "$tmp/j1" oracle); w=$(stp "$tmp/j1" worst)
awk -v b="$b" -v o="$o" -v w="$w" 'BEGIN { exit !(o >= b && b >= w && o > 0) }' && ok \
  || fail "ordering: worst $w baseline $b oracle $o"
# Fairest: no reference has less max slowdown, nor more STP than the oracle.
maxs() { awk -v p="\"$2\"" '$0 ~ "\"name\": "p {f=1} f && /"max_slowdown":/ {gsub(/[,]/,""); print $2; exit}' "$1"; }
f=$(maxs "$tmp/j1" fairest); fs=$(stp "$tmp/j1" fairest)
for r in baseline random worst oracle; do
  x=$(maxs "$tmp/j1" $r)
  awk -v f="$f" -v x="$x" 'BEGIN { exit !(f <= x + 1e-9) }' && ok \
    || fail "fairest max slowdown $f above $r's $x"
done
awk -v fs="$fs" -v o="$o" 'BEGIN { exit !(fs <= o + 1e-9) }' && ok || fail "fairest STP $fs above the oracle's $o"
grep -A1 '"name": "baseline"' "$tmp/j1" > /dev/null
awk '/"name": "baseline"/ {f=1} f && /"capture":/ {print; exit}' "$tmp/j1" | grep -q '"capture": 0' \
  && ok || fail "baseline capture should be 0"

# Where the kernel's placement is already the best, corun keeps to it: a
# plan that shares SMT cores for a turbo bin, or for a P-core's second
# thread, by a predicted gain smaller than its doubt about the shared
# cores' speeds is not taken (a doubt that counts what a full L3 adds to
# them: sheep and rabbits paired beside six rabbits on skx28, bench/policies'
# mixed 16), nor a first plan that ties with the kernel's (bench/policies'
# homogeneous cases).
printf 'c class=compute-int count=32\n' > "$tmp/c32"
printf 'c class=compute-int count=8\n' > "$tmp/c8"
printf 's class=streaming count=16\n' > "$tmp/s16"
for c in "icx40 $tmp/c32 7" "$fx/Intel-RaptorLake-Corei7-1370P.xml $tmp/c8 1" "milan64 $tmp/s16 1" \
  "skx28 random:16:17 1"; do
  read -r mach w s <<< "$c"
  "$CORUN" sim --machine "$mach" --workload "$w" --policy baseline,corun --seed "$s" --json > "$tmp/k"
  b=$(stp "$tmp/k" baseline) c=$(stp "$tmp/k" corun)
  awk -v b="$b" -v c="$c" 'BEGIN { exit !(c >= b * 0.999) }' && ok \
    || fail "$(basename "$mach") $(basename "$w"): corun STP $c below the kernel's $b"
done

# Work amounts: makespan is reported.
"$CORUN" sim --machine icx40 --workload "$wl/phases-batch.txt" --policy baseline \
  --duration-s 120 --json > "$tmp/batch" && ok || fail "batch exit $?"
grep -q '"makespan_s": [0-9]' "$tmp/batch" && ok || fail "batch has no makespan"
expect_eq "batch shows only what was asked" "$(grep -c '"name": "worst"' "$tmp/batch")" 0

# Bad input: exit 2 and one line "FILE:LINE: reason".
check_bad() {
  local what=$1 want=$2; shift 2
  "$CORUN" sim "$@" > "$tmp/o" 2> "$tmp/e"; rc=$?
  expect_eq "$what exit" "$rc" 2
  grep -q -- "$want" "$tmp/e" && ok || fail "$what: stderr lacks '$want': $(cat "$tmp/e")"
}
printf 'good class=sheep\n\nbad class=banana\n' > "$tmp/w1"
check_bad "unknown class" "$tmp/w1:3: unknown class 'banana'" --machine skx28 --workload "$tmp/w1"
expect_eq "bad line: one stderr line" "$(wc -l < "$tmp/e")" 1
printf 'a u_disp=2\n' > "$tmp/w2"
check_bad "out of range" "$tmp/w2:1: u_disp must be in (0, 1\]" --machine skx28 --workload "$tmp/w2"
printf 'a frob=1\n' > "$tmp/w3"
check_bad "unknown parameter" "$tmp/w3:1: unknown parameter 'frob'" --machine skx28 --workload "$tmp/w3"
check_bad "missing workload" "/nonexistent.txt:0: cannot read" --machine skx28 --workload /nonexistent.txt
check_bad "bad random" "random:N:SEED" --machine skx28 --workload random:0:1
check_bad "missing machine file" "/nonexistent.xml" --machine /nonexistent.xml --workload random:4:1
check_bad "bad synthetic" "synthetic description" --machine synthetic:banana:3 --workload random:4:1
check_bad "unknown policy" "unknown policy 'nope'" --machine skx28 --workload random:4:1 --policy nope
check_bad "bad duration" "duration" --machine skx28 --workload random:4:1 --duration-s -1
check_bad "no machine" "required" --workload random:4:1
check_bad "events with json" "not with --json" --machine skx28 --workload random:4:1 --events --json

# --events: the engine's events, a line each in the documented fields, for
# the policies only; the rest of the output as without it (the events do
# not change what the engine decides).
args=(--machine "$fx/linux-64amd64-4s2n4ca2co.xml" --workload random:12:5 --seed 2)
"$CORUN" sim "${args[@]}" > "$tmp/plain" && ok || fail "plain exit $?"
"$CORUN" sim "${args[@]}" --events > "$tmp/ev" && ok || fail "--events exit $?"
grep -v '^event ' "$tmp/ev" | cmp -s - "$tmp/plain" && ok || fail "--events changed the table"
cpu='([0-9]+|unpinned)'
re="^event [a-z]+ t=[0-9]+\.[0-9]{3} ((move|pin|undo) task=[0-9]+ name=[^ ]+ cpu=$cpu->$cpu( predicted=[0-9.]+->[0-9.]+)?|memory task=[0-9]+ name=[^ ]+ node=([0-9]+|unknown)->([0-9]+|unknown))( error=.*)?$"
expect_eq "malformed event lines" "$(grep '^event ' "$tmp/ev" | grep -Evc "$re")" 0
[[ $(grep -c '^event corun .* \(move\|pin\) ' "$tmp/ev") -ge 12 ]] && ok \
  || fail "corun's first plan should pin or move all 12 tasks: $(grep -c '^event corun' "$tmp/ev")"
grep -q '^event [a-z]* t=[0-9.]* move .* predicted=' "$tmp/ev" && ok || fail "moves carry no prediction"
expect_eq "events of references" "$(grep -Ec '^event (baseline|random|worst|oracle|fairest) ' "$tmp/ev")" 0
# Eight nodes: memory follows some task; time never goes back.
grep -q '^event [a-z]* t=[0-9.]* memory ' "$tmp/ev" && ok || fail "no memory event on eight nodes"
awk '$1 == "event" { split($3, t, "="); if (t[2] + 0 < last[$2]) bad++; last[$2] = t[2] + 0 }
     END { exit bad > 0 }' "$tmp/ev" && ok || fail "event times go back within a policy"

# Every fixture machine and every preset runs, and says where its figures come from.
for m in "$fx"/*.xml skx28 icx40 spr56 milan64 genoa96 "synthetic:pack:2 core:4 pu:2"; do
  "$CORUN" sim --machine "$m" --workload random:4:1 --duration-s 1 > "$tmp/m" 2>&1 \
    && ok || fail "$(basename "$m"): exit $?: $(tail -n 2 "$tmp/m")"
  grep -q "^resources: \(preset\|defaults\)" "$tmp/m" && ok || fail "$(basename "$m"): no resources line"
done
finish
