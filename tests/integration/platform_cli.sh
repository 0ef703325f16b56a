# corun platform: a live run on this machine, checked against what the
# machine says through other doors (cpuinfo flags, sysfs, /dev/cpu/0/cpuid),
# so that on this KVM guest it asserts the facts issue 9's "Done when" lists
# (SMT false, PCID and INVPCID true, WAITPKG and MONITORX false, PMU
# unavailable with the reason, THP madvise, huge pages 2048 and 1048576 kB,
# hypervisor KVM, modules with versions, firmware null with a reason) and
# elsewhere whatever is true there. Then the recorded trees, --measure, and
# bad input.
. "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fx=$CORUN_FIXTURES/platform

# jv FILE KEY: the value after "KEY": on the first line with it (any depth)
jv() { sed -nE "s/^ *\"$2\": (.*[^,]),?$/\1/p" "$1" | head -n 1; }
has_line() { grep -qF -- "$2" "$1" && ok || fail "$3: no line '$2' in $1"; }
flag() { grep -m1 '^flags' /proc/cpuinfo | grep -qw -- "$1"; }
tf() { if "$@"; then echo true; else echo false; fi; }
# cpuid LEAF: EAX EBX ECX EDX of a leaf as 8-digit hex, through /dev/cpu/0/cpuid
cpuid() { dd if=/dev/cpu/0/cpuid bs=16 count=1 iflag=skip_bytes skip=$(($1)) 2>/dev/null | od -An -tx4 | tr -s ' ' | sed 's/^ //'; }

"$CORUN" platform --json > "$tmp/live.json"; rc=$?
expect_eq "live exit" "$rc" 0
# json_ok FILE: parses, and no object repeats a key (where python3 exists).
json_ok() {
  command -v python3 > /dev/null || return 0
  python3 -c 'import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup: sys.exit("repeated keys: %s" % sorted(dup))
    return dict(pairs)
json.load(open(sys.argv[1]), object_pairs_hook=once)' "$1" && ok || fail "$1: not valid JSON"
}
json_ok "$tmp/live.json"

# SMT: the kernel's own switch.
if [[ -r /sys/devices/system/cpu/smt/active ]]; then
  expect_eq "smt" "$(jv "$tmp/live.json" smt)" "$( [[ $(cat /sys/devices/system/cpu/smt/active) == 1 ]] && echo true || echo false)"
fi
# Features the kernel keeps: the cpuinfo flag says yes for the processor and for Linux.
for f in pcid:pcid invpcid:invpcid waitpkg:waitpkg monitorx:mwaitx; do
  key=${f%%:*} fl=${f##*:}
  expect_eq "${key}_kernel" "$(jv "$tmp/live.json" "${key}_kernel")" "$(tf flag "$fl")"
  flag "$fl" && expect_eq "$key" "$(jv "$tmp/live.json" "$key")" true
done
# Without the flag, CPUID decides for the processor (where /dev/cpu/0/cpuid lets us look).
if [[ -r /dev/cpu/0/cpuid ]] && [[ -n $(cpuid 0) ]]; then
  read -r _ _ ecx7 _ <<< "$(cpuid 7)"
  read -r _ _ ecx81 _ <<< "$(cpuid 0x80000001)"
  expect_eq "waitpkg (CPUID 7 ECX[5])" "$(jv "$tmp/live.json" waitpkg)" "$(tf test $(( 0x$ecx7 >> 5 & 1 )) = 1)"
  expect_eq "monitorx (CPUID 0x80000001 ECX[29])" "$(jv "$tmp/live.json" monitorx)" "$(tf test $(( 0x$ecx81 >> 29 & 1 )) = 1)"
  if flag hypervisor; then
    read -r _ b c d <<< "$(cpuid 0x40000000)"
    sig=$(printf "$(printf '%s' "$b$c$d" | sed -E 's/(..)(..)(..)(..)/\\x\4\\x\3\\x\2\\x\1/g')" | tr -d '\0')
    expect_eq "kernel_vendor_id (/dev/cpu/0/cpuid)" "$(jv "$tmp/live.json" kernel_vendor_id)" "\"$sig\""
    [[ $sig == KVMKVMKVM ]] && echo "KVM signature seen" && expect_eq "hypervisor name" "$(sed -n '/"hypervisor"/,/}/p' "$tmp/live.json" | jv /dev/stdin name)" '"KVM"'
  fi
fi
expect_eq "wait_strategy" "$(jv "$tmp/live.json" wait_strategy)" \
  "$(if flag waitpkg; then echo '"umwait"'; elif flag mwaitx; then echo '"mwaitx"'; else echo '"pause"'; fi)"
flag hypervisor && expect_eq "hypervisor present" "$(sed -n '/"hypervisor"/,/}/p' "$tmp/live.json" | jv /dev/stdin present)" true

# Page-table isolation from the kernel's own vulnerability report.
if [[ -r /sys/devices/system/cpu/vulnerabilities/meltdown ]]; then
  expect_eq "pti" "$(jv "$tmp/live.json" pti)" "$(tf grep -q PTI /sys/devices/system/cpu/vulnerabilities/meltdown)"
fi

# Huge pages and THP from sysfs.
want=$(ls /sys/kernel/mm/hugepages | sed -E 's/hugepages-([0-9]+)kB/\1/' | sort -n | paste -sd, | sed 's/,/, /g')
expect_eq "hugepage_sizes_kb" "$(jv "$tmp/live.json" hugepage_sizes_kb)" "[$want]"
expect_eq "thp mode" "$(jv "$tmp/live.json" mode)" "\"$(sed -E 's/.*\[(.*)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)\""

# PMU: without a core PMU there are no hardware counters, and the reason says why.
if ! ls /sys/bus/event_source/devices | grep -qE '^(cpu|cpu_core|cpu_atom)$'; then
  expect_eq "pmu available" "$(sed -n '/"pmu"/,/}/p' "$tmp/live.json" | jv /dev/stdin available)" false
  flag hypervisor && { grep -q '"reason": "hypervisor without a virtual PMU' "$tmp/live.json" && ok || fail "pmu reason does not name the hypervisor"; }
fi
grep -qE '"reason": ".+"' "$tmp/live.json" && ok || fail "no pmu reason"

# Modules: one entry per /sys/module directory with a version or srcversion.
n=0; first=
for d in /sys/module/*; do
  [[ -f $d/version || -f $d/srcversion ]] || continue
  n=$((n + 1)); [[ -z $first && -f $d/version ]] && first="{\"name\": \"${d##*/}\", \"version\": \"$(cat "$d/version")\""
done
expect_eq "modules" "$(grep -c '{"name": ' "$tmp/live.json")" "$n"
[[ -n $first ]] && { grep -qF "$first" "$tmp/live.json" && ok || fail "module line '$first' missing"; }

# Firmware: null with a reason exactly when there is no DMI.
if [[ -d /sys/class/dmi/id ]]; then
  grep -q '^  "firmware": {' "$tmp/live.json" && ok || fail "DMI present but firmware not an object"
else
  expect_eq "firmware" "$(jv "$tmp/live.json" firmware)" null
  grep -q '^  "firmware_reason": "no DMI' "$tmp/live.json" && ok || fail "firmware null without its reason"
fi
# Every null has its reason (per-CPU arrays use their group's *_reason).
while read -r key; do
  grep -q "\"${key}_reason\": " "$tmp/live.json" && ok || fail "\"$key\": null without \"${key}_reason\""
done < <(grep -v '^ *{"' "$tmp/live.json" | sed -nE 's/^ *"([a-z_0-9]+)": null,?$/\1/p')

# Human report: grouped by topic, one verdict per feature.
"$CORUN" platform > "$tmp/live.txt"; expect_eq "human exit" $? 0
for topic in processor "TLB" waiting memory "counters and resource control" "frequency and power" kernel firmware; do
  grep -q "^$topic" "$tmp/live.txt" && ok || fail "human report lacks topic '$topic'"
done
for f in SMT PCID INVPCID WAITPKG MONITORX "huge pages" PMU RDT hypervisor modules; do
  expect_eq "verdict lines for $f" "$(grep -c "^  $f " "$tmp/live.txt")" 1
done

# Recorded trees.
p() { local n=$1; shift; "$CORUN" platform --root "$fx/$n" "$@"; }
p intel-server --json > "$tmp/server.json"; expect_eq "server exit" $? 0
expect_eq "server smt" "$(jv "$tmp/server.json" smt)" true
expect_eq "server thp" "$(jv "$tmp/server.json" mode)" '"always"'
expect_eq "server driver" "$(jv "$tmp/server.json" driver)" '"intel_pstate"'
expect_eq "server boost" "$(jv "$tmp/server.json" boost)" true
expect_eq "server board" "$(jv "$tmp/server.json" board_name)" '"X11SPM-F"'
expect_eq "server rdt allocation" "$(jv "$tmp/server.json" allocation)" true
expect_eq "server pmu (not probed)" "$(jv "$tmp/server.json" available)" null
json_ok "$tmp/server.json"
p hybrid-laptop --cpuid "$fx/hybrid-laptop/cpuid.txt" --json > "$tmp/laptop.json"
expect_eq "laptop exit" $? 0
expect_eq "laptop pcid" "$(jv "$tmp/laptop.json" pcid)" true
expect_eq "laptop pcid_kernel" "$(jv "$tmp/laptop.json" pcid_kernel)" false
expect_eq "laptop wait" "$(jv "$tmp/laptop.json" wait_strategy)" '"umwait"'
expect_eq "laptop hybrid" "$(jv "$tmp/laptop.json" hybrid)" true
json_ok "$tmp/laptop.json"
p hybrid-laptop --cpuid "$fx/hybrid-laptop/cpuid.txt" > "$tmp/laptop.txt"
has_line "$tmp/laptop.txt" "PCID             yes, but Linux does not use it" laptop
p kvm-guest --cpuid "$fx/kvm-guest/cpuid.txt" > "$tmp/guest.txt"
has_line "$tmp/guest.txt" "huge pages       2 MiB and 1 GiB, THP madvise — corun run --thp will use them" guest
has_line "$tmp/guest.txt" "hypervisor       KVM" guest

# An empty tree: every answer unknown, each null with its reason, still exit 0.
mkdir "$tmp/empty"
"$CORUN" platform --root "$tmp/empty" --json > "$tmp/empty.json"; expect_eq "empty tree exit" $? 0
json_ok "$tmp/empty.json"
expect_eq "empty smt" "$(jv "$tmp/empty.json" smt)" null
while read -r key; do
  grep -q "\"${key}_reason\": " "$tmp/empty.json" && ok || fail "empty tree: \"$key\": null without \"${key}_reason\""
done < <(grep -v '^ *{"' "$tmp/empty.json" | sed -nE 's/^ *"([a-z_0-9]+)": null,?$/\1/p')

# --measure: three working sets, a figure or a reason each.
"$CORUN" platform --json --measure > "$tmp/m.json"; expect_eq "measure exit" $? 0
json_ok "$tmp/m.json"
expect_eq "measure sizes" "$(grep -c '"working_set_kb"' "$tmp/m.json")" 3
grep -qE '"ns_per_switch": -?[0-9]' "$tmp/m.json" && ok || fail "no ns_per_switch figure"

# Bad input: exit 2, one line naming the input.
check_bad() {
  local what=$1 name=$2; shift 2
  "$CORUN" platform "$@" > "$tmp/o" 2> "$tmp/e"; rc=$?
  expect_eq "$what exit" "$rc" 2
  expect_eq "$what stderr lines" "$(wc -l < "$tmp/e")" 1
  grep -qF -- "$name" "$tmp/e" && ok || fail "$what: stderr does not name '$name': $(cat "$tmp/e")"
}
check_bad "missing root" /nonexistent/tree --root /nonexistent/tree
printf '0 0: 1 2 3 4\nbanana\n' > "$tmp/bad.txt"
check_bad "bad cpuid dump" "$tmp/bad.txt:2:" --root "$fx/kvm-guest" --cpuid "$tmp/bad.txt"
check_bad "missing cpuid dump" "$tmp/none.txt" --cpuid "$tmp/none.txt"
"$CORUN" platform --frobnicate > /dev/null 2>&1; expect_eq "bad option exit" $? 2
"$CORUN" platform --root "$fx/kvm-guest" --measure > /dev/null 2>&1; expect_eq "--root --measure exit" $? 2
"$CORUN" platform extra > /dev/null 2>&1; expect_eq "extra argument exit" $? 2
finish
