# corun topo against hwloc's own tools on every fixture, and bad input.
. "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

for xml in "$CORUN_FIXTURES"/topologies/*.xml; do
  name=$(basename "$xml")
  "$CORUN" topo --input "$xml" --json > "$tmp/out.json" || { fail "$name: exit $?"; continue; }
  n() { local c; c=$(hwloc-calc --input "$xml" -N "$1" all 2>/dev/null); echo "${c:-0}"; }
  expect_eq "$name pus" "$(json_num "$tmp/out.json" pus)" "$(n pu)"
  expect_eq "$name cores" "$(json_num "$tmp/out.json" cores)" "$(n core)"
  expect_eq "$name packages" "$(json_num "$tmp/out.json" packages)" "$(n package)"
  expect_eq "$name numa_nodes" "$(json_num "$tmp/out.json" numa_nodes)" "$(n numanode)"
  expect_eq "$name l2_domains" "$(json_num "$tmp/out.json" l2_domains)" "$(n l2cache)"
  expect_eq "$name l3_domains" "$(json_num "$tmp/out.json" l3_domains)" "$(n l3cache)"
  # every CPU's L3 domain, as hwloc-calc numbers it
  while read -r cpu l3; do
    want=$(hwloc-calc --input "$xml" --pi -I l3cache "pu:$cpu" 2>/dev/null)
    [[ $l3 == null ]] && l3=""
    expect_eq "$name cpu $cpu l3" "$l3" "$want"
  done < <(sed -nE 's/.*"cpu": ([0-9]+), .*"l3": ([0-9]+|null),.*/\1 \2/p' "$tmp/out.json" | awk 'NR % 7 == 1')
  "$CORUN" topo --input "$xml" > "$tmp/human" || fail "$name: human output exit $?"
  grep -q "^package #0\|^machine$" "$tmp/human" && ok || fail "$name: human output has no package"
done

# The human listing shows every CPU once, under its caches: on the fixtures
# and on the bench's machines, whose shapes include L2s outside every L3
# (Meteor Lake's low-power cores, bench/heldout8).
listed() {
  sed -nE -e 's/^ *L[23] #[0-9]+ +([0-9.]+ [KMG]iB|\?) *//p' -e 's/^ *cores +//p' "$1" |
    tr ',|' '\n\n' | tr -d ' ' | sed 's/(x)//' | grep -v '^$'
}
for xml in "$CORUN_FIXTURES"/topologies/*.xml "$CORUN_SOURCE_DIR"/bench/heldout*/*.xml; do
  name=$(basename "$xml")
  "$CORUN" topo --input "$xml" > "$tmp/human" 2>&1 || { fail "$name: exit $?"; continue; }
  pus=$(hwloc-calc --input "$xml" -N pu all 2>/dev/null)
  expect_eq "$name cpus listed" "$(listed "$tmp/human" | wc -l)" "$pus"
  expect_eq "$name cpus listed once" "$(listed "$tmp/human" | sort -u | wc -l)" "$pus"
done

# This machine.
"$CORUN" topo --json > "$tmp/live.json" && ok || fail "live topo exit $?"
expect_eq "live pus" "$(json_num "$tmp/live.json" pus)" "$(hwloc-calc -N pu all)"

# Bad input: exit 2 and one line naming the input.
check_bad() {
  local what=$1; shift
  "$CORUN" topo "$@" > "$tmp/o" 2> "$tmp/e"; rc=$?
  expect_eq "$what exit" "$rc" 2
  expect_eq "$what stderr lines" "$(wc -l < "$tmp/e")" 1
  grep -q -- "$2" "$tmp/e" && ok || fail "$what: stderr does not name '$2': $(cat "$tmp/e")"
}
check_bad "missing file" --input /nonexistent.xml
echo '<topology><object type="Banana"/></topology>' > "$tmp/bad.xml"
check_bad "invalid xml" --input "$tmp/bad.xml"
check_bad "directory" --input "$tmp"
check_bad "bad synthetic" --synthetic "pack:2 banana:3"
"$CORUN" topo --frobnicate > /dev/null 2>&1; expect_eq "bad option exit" $? 2
"$CORUN" topo --input a --synthetic b > /dev/null 2>&1; expect_eq "both sources exit" $? 2
finish
