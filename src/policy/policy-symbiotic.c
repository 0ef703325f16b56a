/*
 * policy-symbiotic.c — `symbiotic`: sample co-schedules, then exploit the
 * best one.
 *
 * What it does: works on the same CPUs as spread (one per core first,
 * balanced across domains). For its first rounds it returns a different
 * seeded random co-schedule each time (which task shares a core and a cache
 * with which): these are the samples, and the engine's profiler learns each
 * task's pressure and sensitivity from them. From then on it draws a fixed
 * number of candidate co-schedules, adds the current placement, scores each
 * with the predicted weighted speedup of the learned profiles and returns
 * the best. It does no constructive optimisation: it only chooses among
 * schedules it has drawn.
 *
 * Source: A. Snavely and D. Tullsen, "Symbiotic Jobscheduling for a
 * Simultaneous Multithreading Processor", ASPLOS 2000 (SOS): a sample phase
 * runs several co-schedules and measures them, a symbiosis phase runs the
 * best. Being a pure function, this version measures through the profiles
 * the samples taught, not by keeping per-schedule timings itself.
 *
 * Works well: small machines and mixes, where a few dozen random schedules
 * cover the good ones; SMT pairing where pair effects dominate.
 * Works badly: the sample phase costs throughput (and migrations); on large
 * machines the chance that a drawn schedule is near the best vanishes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy-internal.h"

#define SYMB_SAMPLE_ROUNDS 3
#define SYMB_CANDIDATES 32

static void shuffle(unsigned *v, unsigned n, uint64_t *rng)
{
    for (unsigned i = n; i > 1; i--) {
        unsigned j = corun__rand_below(rng, i), t = v[i - 1];

        v[i - 1] = v[j];
        v[j] = t;
    }
}

static bool current_valid(const struct corun_snapshot *snap)
{
    for (unsigned i = 0; i < snap->ntasks; i++) {
        const struct corun_topo_cpu *c;

        if (snap->tasks[i].cpu < 0)
            return false;
        c = corun_topo_cpu(snap->topo, (unsigned)snap->tasks[i].cpu);
        if (!c || !c->usable)
            return false;
    }
    return true;
}

static int symbiotic_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    unsigned n = snap->ntasks, *order, norder, *slot = NULL;
    uint64_t rng = snap->seed ^ (0x5b5b5b5bull * (snap->round + 1));
    struct corun__pm pm;
    int *cand = NULL, err;
    double best;

    if (!n)
        return 0;
    err = corun__cpus_spread(snap->topo, &order, &norder);
    if (err)
        return err;
    slot = malloc(n * sizeof(*slot));
    cand = malloc(n * sizeof(*cand));
    if (!slot || !cand) {
        err = -ENOMEM;
        goto out_free;
    }
    for (unsigned i = 0; i < n; i++)
        slot[i] = order[i % norder];
    if (snap->round < SYMB_SAMPLE_ROUNDS) {
        shuffle(slot, n, &rng);
        for (unsigned i = 0; i < n; i++)
            plan->cpu[i] = (int)slot[i];
        goto out_free;
    }
    err = corun__pm_init(&pm, snap);
    if (err)
        goto out_free;
    best = -1;
    if (current_valid(snap)) {
        for (unsigned i = 0; i < n; i++)
            plan->cpu[i] = snap->tasks[i].cpu;
        best = corun__pm_eval(&pm, plan->cpu, NULL);
    }
    for (unsigned k = 0; k < SYMB_CANDIDATES; k++) {
        double v;

        if (k)
            shuffle(slot, n, &rng);
        for (unsigned i = 0; i < n; i++)
            cand[i] = (int)slot[i];
        v = corun__pm_eval(&pm, cand, NULL);
        /* A candidate must beat the current one by the cost of its moves. */
        if (v - (best >= 0 ? snap->move_cost * n : 0) > best + 1e-9 || best < 0) {
            best = v;
            memcpy(plan->cpu, cand, n * sizeof(*cand));
        }
    }
    corun__pm_release(&pm);
out_free:
    free(cand);
    free(slot);
    free(order);
    return err;
}

const struct corun_policy corun__policy_symbiotic = {
    .name = "symbiotic",
    .summary = "SOS: sample random co-schedules, then keep the best-predicted one",
    .place = symbiotic_place,
};
