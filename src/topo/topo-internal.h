/*
 * topo-internal.h — the precomputed topology shared by the files of the topo
 * box. Filled once by the hwloc discovery (topo-hwloc.c), read by the queries
 * (topo.c).
 */
#ifndef CORUN_TOPO_INTERNAL_H
#define CORUN_TOPO_INTERNAL_H

#include "corun/topo.h"

struct corun_topo {
    struct corun_topo_info info;
    struct corun_topo_cpu *cpus;            /* info.pus entries */
    struct corun_topo_domain *doms[CORUN_NLEVELS];
    unsigned *dom_cpus[CORUN_NLEVELS];      /* backing store of domain cpus */
    struct corun_topo_kind *kinds;          /* info.kinds entries */
    int *by_os;                             /* os index -> dense index, -1 */
    unsigned by_os_len;
    unsigned *numa_dist;                    /* ndomains[NUMA]^2, or NULL */
};

/* Fills cpus[].{base,min,max,cur}_khz from cpufreq under @sysroot. */
void corun__topo_read_cpufreq(struct corun_topo *topo, const char *sysroot);

#endif
