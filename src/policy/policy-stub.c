/*
 * policy-stub.c — STUB: remove when policy lands.
 *
 * A stand-in for the policy registry (branch `policy`) so that `corun run`
 * and `corun batch` can place tasks, and the simulator can link, before it
 * is merged: `spread` (one task per core, across L3 domains first) and
 * `linux` (no pinning). (This merges the run branch's stub with the sim
 * branch's empty registry.) The real registry replaces this file at merge.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "corun/policy.h"

const char *corun_class_name(enum corun_class c)
{
    static const char *const names[] = {"compute", "sheep", "rabbit", "chasing", "streaming"};

    return c >= 0 && c < CORUN_NCLASSES ? names[c] : "unknown";
}

static int linux_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned i = 0; i < plan->ntasks; i++)
        plan->cpu[i] = -1;
    return 0;
}

/* Usable CPUs in spread order: first hardware thread of each core, cores
 * taken round-robin over L3 domains, then the second threads, and so on. */
static unsigned spread_order(const struct corun_topo *t, unsigned *order)
{
    unsigned n = corun_topo_ncpus(t), k = 0, nl3 = corun_topo_ndomains(t, CORUN_LEVEL_L3);
    unsigned maxsmt = 1;

    for (unsigned c = 0; c < n; c++)
        if (corun_topo_cpu(t, c)->smt_rank + 1 > maxsmt)
            maxsmt = corun_topo_cpu(t, c)->smt_rank + 1;
    if (nl3 == 0)
        nl3 = 1;
    for (unsigned rank = 0; rank < maxsmt; rank++) {
        /* Take the i-th eligible CPU of every L3 in turn. */
        for (unsigned i = 0; i < n; i++) {
            bool any = false;

            for (unsigned d = 0; d < nl3; d++) {
                unsigned seen = 0;

                for (unsigned c = 0; c < n; c++) {
                    const struct corun_topo_cpu *cpu = corun_topo_cpu(t, c);
                    int l3 = cpu->dom[CORUN_LEVEL_L3] < 0 ? 0 : cpu->dom[CORUN_LEVEL_L3];

                    if (!cpu->usable || cpu->smt_rank != rank || (unsigned)l3 != d)
                        continue;
                    if (seen++ == i) {
                        order[k++] = c;
                        any = true;
                        break;
                    }
                }
            }
            if (!any)
                break;
        }
    }
    return k;
}

static int spread_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    unsigned n = corun_topo_ncpus(snap->topo), k;
    unsigned *order = calloc(n ? n : 1, sizeof(*order));
    unsigned *load = calloc(n ? n : 1, sizeof(*load));
    int err = 0;

    if (!order || !load) {
        err = -ENOMEM;
        goto out_free;
    }
    k = spread_order(snap->topo, order);
    if (k == 0) {
        err = -ENOSPC;
        goto out_free;
    }
    /* Tasks already placed stay; the others go to the least loaded CPU,
     * earliest in spread order. */
    for (unsigned i = 0; i < plan->ntasks; i++) {
        int c = snap->tasks[i].cpu;

        plan->cpu[i] = c;
        if (c >= 0 && (unsigned)c < n)
            load[c]++;
    }
    for (unsigned i = 0; i < plan->ntasks; i++) {
        unsigned best = order[0];

        if (plan->cpu[i] >= 0)
            continue;
        for (unsigned j = 1; j < k; j++)
            if (load[order[j]] < load[best])
                best = order[j];
        plan->cpu[i] = (int)best;
        load[best]++;
    }
out_free:
    free(order);
    free(load);
    return err;
}

static const struct corun_policy stub_policies[] = {
    {.name = "spread",
     .summary = "one task per core, across L3 domains first",
     .place = spread_place},
    {.name = "linux", .summary = "no pinning: leave it to the kernel", .place = linux_place},
};

const struct corun_policy *corun_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof(stub_policies) / sizeof(stub_policies[0]); i++)
        if (name && !strcmp(stub_policies[i].name, name))
            return &stub_policies[i];
    return NULL;
}

/* Lists none: the simulator's "--policy all" (and its tests) expect only
 * its reference placements until the real registry lands; run and batch
 * find these two by name. */
const struct corun_policy *corun_policy_at(unsigned i)
{
    (void)i;
    return NULL;
}
