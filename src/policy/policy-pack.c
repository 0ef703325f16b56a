/*
 * policy-pack.c — `pack`: fill CPUs in order, siblings and neighbours first.
 *
 * What it does: task i gets the i-th usable CPU in hwloc's logical order, so
 * SMT siblings fill together, then the cores of one L2 cluster, one LLC, one
 * memory domain; tasks wrap around when they outnumber CPUs.
 *
 * Source: OpenMP's OMP_PROC_BIND=close and the consolidation policies of
 * power-aware schedulers (pack to let whole packages idle).
 *
 * Works well: tasks that share data (they share caches too); power and
 * turbo (fewer active cores clock higher); leaving whole domains free.
 * Works badly: anything memory-bound or cache-hungry — it puts the most
 * contention on the fewest resources; two compute-bound threads on one core.
 */
#include <errno.h>
#include <stdlib.h>

#include "policy/policy-internal.h"

static int pack_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    unsigned *order, n;
    int err = corun__cpus_dense(snap->topo, &order, &n);

    if (err)
        return err;
    for (unsigned i = 0; i < plan->ntasks; i++)
        plan->cpu[i] = (int)order[i % n];
    free(order);
    return 0;
}

const struct corun_policy corun__policy_pack = {
    .name = "pack",
    .summary = "fill CPUs in order: SMT siblings, then neighbours in one LLC",
    .place = pack_place,
};
