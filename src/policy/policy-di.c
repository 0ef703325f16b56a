/*
 * policy-di.c — `di`: Distributed Intensity.
 *
 * What it does: ranks tasks by memory intensity (LLC misses per reference
 * cycle, from the profile's MPKI, IPC and frequency ratio; the class prior
 * when counters are missing) and deals them, most intense first, to the
 * least-loaded memory domain, then the least-loaded LLC within it, then L2
 * cluster, then core — so that every shared cache and memory controller gets
 * an even share of the devils. The set of CPUs used is the first ones of the
 * spread order (one per core first, balanced across domains by count).
 *
 * Source: S. Zhuravlev, S. Blagodurov and A. Fedorova, "Addressing Shared
 * Resource Contention in Multicore Processors via Scheduling", ASPLOS 2010:
 * the miss rate is the best cheap predictor of contention, and spreading it
 * evenly came within a few percent of the best schedule on machines with
 * several cache/memory domains and no SMT.
 *
 * Works well: mixes of devils and sheep on machines with several LLC or
 * memory domains; it needs nothing but one counter ratio per task.
 * Works badly: it does not know SMT (which two tasks share a core is left to
 * the order of the slots), nor sensitivity (a rabbit and a sheep look alike
 * when both miss little), nor hybrid cores; with a single LLC and memory
 * domain it is no better than spread.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "corun/profile.h"
#include "policy/policy-internal.h"

static double intensity(const struct corun_task_profile *t)
{
    double fr = isfinite(t->freq_ratio) && t->freq_ratio > 0 ? t->freq_ratio : 1.0;
    double p;

    if (isfinite(t->llc_mpki) && isfinite(t->ipc))
        return t->llc_mpki * t->ipc * fr / 1000.0;
    corun_profile_prior(t->cls, CORUN_LEVEL_L3, &p, NULL);
    return p / 100.0; /* same order as misses per cycle of the class */
}

struct di_order {
    unsigned task;
    double key;
};

static int by_key_desc(const void *a, const void *b)
{
    const struct di_order *x = a, *y = b;

    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->task < y->task ? -1 : x->task > y->task;
}

static int di_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    const struct corun_topo *topo = snap->topo;
    unsigned n = snap->ntasks, *order, norder, *slot = NULL;
    double *load[CORUN__PM_NLEV] = {0};
    struct di_order *tasks = NULL;
    bool *used = NULL;
    int err;

    if (!n)
        return 0;
    err = corun__cpus_spread(topo, &order, &norder);
    if (err)
        return err;
    err = -ENOMEM;
    slot = malloc(n * sizeof(*slot));
    used = calloc(n, sizeof(*used));
    tasks = malloc(n * sizeof(*tasks));
    if (!slot || !used || !tasks)
        goto out_free;
    for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
        unsigned nd = corun_topo_ndomains(topo, corun__pm_levels[li]);

        if (!(load[li] = calloc(nd ? nd : 1, sizeof(double))))
            goto out_free;
    }
    for (unsigned i = 0; i < n; i++) {
        slot[i] = order[i % norder];
        tasks[i].task = i;
        tasks[i].key = intensity(&snap->tasks[i]);
    }
    qsort(tasks, n, sizeof(*tasks), by_key_desc);
    /* Most intense first, each to the free slot whose memory domain, then
     * LLC, then L2, then core carries the least intensity so far. */
    for (unsigned k = 0; k < n; k++) {
        int best = -1;

        for (unsigned s = 0; s < n; s++) {
            const struct corun_topo_cpu *c, *b;
            int cmp = 0;

            if (used[s])
                continue;
            if (best < 0) {
                best = (int)s;
                continue;
            }
            c = corun_topo_cpu(topo, slot[s]);
            b = corun_topo_cpu(topo, slot[best]);
            for (int li = CORUN__PM_NLEV - 1; li >= 0 && !cmp; li--) {
                enum corun_level l = corun__pm_levels[li];
                double lc = c->dom[l] >= 0 ? load[li][c->dom[l]] : 0;
                double lb = b->dom[l] >= 0 ? load[li][b->dom[l]] : 0;

                if (lc < lb - 1e-12)
                    cmp = -1;
                else if (lc > lb + 1e-12)
                    cmp = 1;
            }
            if (cmp < 0)
                best = (int)s;
        }
        used[best] = true;
        plan->cpu[tasks[k].task] = (int)slot[best];
        for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
            int d = corun_topo_cpu(topo, slot[best])->dom[corun__pm_levels[li]];

            if (d >= 0)
                load[li][d] += tasks[k].key + 1e-9; /* count breaks ties */
        }
    }
    err = 0;
out_free:
    for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
        free(load[li]);
    free(tasks);
    free(used);
    free(slot);
    free(order);
    return err;
}

const struct corun_policy corun__policy_di = {
    .name = "di",
    .summary = "Distributed Intensity: spread LLC miss rates evenly over memory domains and LLCs",
    .place = di_place,
};
