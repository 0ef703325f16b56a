/*
 * policy-spread.c — `spread`: one task per core and as far apart as possible.
 *
 * What it does: orders the usable CPUs so that every core's first hardware
 * thread comes before any second one, and consecutive CPUs lie in different
 * memory domains, then LLCs, then L2 clusters; task i (in snapshot order)
 * gets CPU i of that order, wrapping around when tasks outnumber CPUs.
 *
 * Source: the scatter/spread placement of OpenMP (OMP_PROC_BIND=spread) and
 * of numactl --interleave style deployments; what Linux does on an idle
 * machine, but pinned.
 *
 * Works well: few tasks on a big machine (each gets a core, a share of every
 * cache and of bandwidth); memory-bound mixes.
 * Works badly: it ignores who is placed next to whom once tasks outnumber
 * cores or LLCs, so two streamers may land in one LLC by the luck of the
 * order; it powers up every package (lower turbo).
 */
#include <errno.h>
#include <stdlib.h>

#include "policy/policy-internal.h"

static int spread_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    unsigned *order, n;
    int err = corun__cpus_spread(snap->topo, &order, &n);

    if (err)
        return err;
    for (unsigned i = 0; i < plan->ntasks; i++)
        plan->cpu[i] = (int)order[i % n];
    free(order);
    return 0;
}

const struct corun_policy corun__policy_spread = {
    .name = "spread",
    .summary = "one task per core first, across memory domains and LLCs",
    .place = spread_place,
};
