#!/usr/bin/env bash
# Records the files `corun platform` reads from a machine into a fixture tree,
# so tests (and bug reports) can replay it with `corun platform --root DIR
# --cpuid DIR/cpuid.txt`. Only the files the platform box reads are copied;
# MSRs are not (binary, root only, and they change by the second).
#
#   scripts/record-platform.sh OUT_DIR [CORUN]     (CORUN defaults to build/corun)
set -u
out=${1:?usage: record-platform.sh OUT_DIR [CORUN]}
corun=${2:-build/corun}
mkdir -p "$out"

copy() {  # copy FILE... (absolute paths; missing or unreadable ones are skipped)
  local f
  for f in "$@"; do
    [[ -f $f && -r $f ]] || continue
    mkdir -p "$out$(dirname "$f")"
    cat "$f" > "$out$f" 2>/dev/null || rm -f "$out$f"
  done
}

copy /proc/cpuinfo /proc/cmdline /proc/mounts /proc/filesystems /proc/version \
     /proc/sys/kernel/osrelease /proc/sys/kernel/perf_event_paranoid \
     /proc/sys/kernel/numa_balancing /sys/devices/system/node/online
cpu=/sys/devices/system/cpu
copy $cpu/online $cpu/smt/control $cpu/smt/active $cpu/cpuidle/current_driver \
     $cpu/intel_pstate/no_turbo $cpu/intel_pstate/status $cpu/amd_pstate/status $cpu/cpufreq/boost
for d in $cpu/cpu[0-9]*; do
  copy "$d"/topology/thread_siblings_list "$d"/microcode/version \
       "$d"/thermal_throttle/core_throttle_count "$d"/thermal_throttle/package_throttle_count
  for f in scaling_driver scaling_governor cpuinfo_min_freq cpuinfo_max_freq scaling_cur_freq \
           base_frequency; do
    copy "$d/cpufreq/$f"
  done
done
copy $cpu/umwait_control/max_time $cpu/umwait_control/enable_c02 $cpu/vulnerabilities/*
copy /sys/devices/cpu_core/cpus /sys/devices/cpu_atom/cpus /sys/hypervisor/type
for d in /sys/kernel/mm/hugepages/hugepages-*; do
  copy "$d"/nr_hugepages "$d"/free_hugepages "$d"/resv_hugepages "$d"/surplus_hugepages
done
t=/sys/kernel/mm/transparent_hugepage
copy $t/enabled $t/defrag $t/shmem_enabled $t/hpage_pmd_size
# PMU names are directory names; each has a "type" file that keeps it in git.
for d in /sys/bus/event_source/devices/*; do copy "$d/type"; done
for d in /sys/class/powercap/intel-rapl:*; do
  copy "$d"/name "$d"/energy_uj "$d"/constraint_0_power_limit_uw "$d"/enabled
done
for d in /sys/module/*; do
  [[ -f $d/version || -f $d/srcversion ]] && copy "$d"/version "$d"/srcversion "$d"/initstate
done
for f in sys_vendor product_name board_vendor board_name bios_vendor bios_version bios_date; do
  copy /sys/class/dmi/id/$f
done
if [[ -x $corun ]]; then
  "$corun" platform --dump-cpuid > "$out/cpuid.txt"
else
  echo "record-platform: $corun not built; no cpuid.txt" >&2
fi
echo "recorded into $out ($(find "$out" -type f | wc -l) files)"
