/*
 * topo-freq.c — CPU frequencies of this system from Linux cpufreq. hwloc
 * does not report per-CPU frequency limits, so this is the one place the topo
 * box reads /sys itself, through the root seam so tests can replay a tree.
 */
#include <stdio.h>
#include <unistd.h>

#include "common/internal.h"
#include "topo/topo-internal.h"

static uint32_t read_khz(int root, unsigned cpu, const char *file)
{
    char path[128];
    uint64_t v;

    snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%u/cpufreq/%s", cpu, file);
    return corun__read_u64(root, path, &v) == 0 ? (uint32_t)v : 0;
}

void corun__topo_read_cpufreq(struct corun_topo *topo, const char *sysroot)
{
    int root = corun__root_open(sysroot);
    unsigned with = 0, first_without = ~0u;

    if (root < 0) {
        snprintf(topo->info.freq_missing, sizeof(topo->info.freq_missing),
                 "cannot open %s: %s", sysroot ? sysroot : "/", corun_strerror(root));
        return;
    }
    for (unsigned i = 0; i < topo->info.pus; i++) {
        struct corun_topo_cpu *c = &topo->cpus[i];
        uint32_t max = read_khz(root, c->os_index, "cpuinfo_max_freq");

        if (!max) {
            if (first_without == ~0u)
                first_without = c->os_index;
            continue;
        }
        with++;
        c->max_khz = max;
        c->min_khz = read_khz(root, c->os_index, "cpuinfo_min_freq");
        c->base_khz = read_khz(root, c->os_index, "base_frequency");
        c->cur_khz = read_khz(root, c->os_index, "scaling_cur_freq");
    }
    if (with == 0)
        snprintf(topo->info.freq_missing, sizeof(topo->info.freq_missing),
                 "no cpufreq in /sys/devices/system/cpu/cpu%u/cpufreq (no frequency driver "
                 "loaded; usual in virtual machines)",
                 first_without);
    else if (with < topo->info.pus)
        snprintf(topo->info.freq_missing, sizeof(topo->info.freq_missing),
                 "cpufreq missing for %u of %u CPUs (first: cpu%u)", topo->info.pus - with,
                 topo->info.pus, first_without);
    close(root);
}
