/*
 * profile-prior.c — what corun assumes about a task before it has watched
 * it share anything: a class from its counters and the typical pressure and
 * sensitivity of that class at each sharing level.
 *
 * The figures are starting points fitted to the pair slowdowns of the
 * contention model of ../shared/SIMULATOR.md, itself calibrated on published
 * measurements: two compute-bound threads on one SMT core slow each other by
 * about 40%, a compute-bound thread loses most beside a pointer chaser (a
 * stalled thread still holds issue slots), memory-bound ones lose least;
 * rabbits lose most when an LLC is shared with streamers. They vary with the
 * machine (cache sizes, bandwidth per core), which is why the learner
 * corrects them per task.
 */
#include <math.h>
#include <stdbool.h>

#include "corun/profile.h"
#include "model/profile-internal.h"

/* Rows: classes; columns: core, L2, L3, NUMA. Fitted to the simulator's
 * pair slowdowns on an SMT2 machine with per-core L2 (the core column holds
 * what siblings do to each other through the pipeline and their shared L2)
 * and to a victim beside one and several streamers in an LLC; the L2 column
 * (clusters and modules of several cores) is half the L3 one. */
static const double prior_press[CORUN_NCLASSES][4] = {
    [CORUN_CLASS_COMPUTE] = {1.00, 0.01, 0.02, 0.00},
    [CORUN_CLASS_SHEEP] = {0.50, 0.05, 0.10, 0.05},
    [CORUN_CLASS_RABBIT] = {0.90, 0.40, 0.80, 0.30},
    [CORUN_CLASS_CHASING] = {1.30, 0.30, 0.60, 0.20},
    [CORUN_CLASS_STREAMING] = {1.10, 1.00, 2.00, 1.00},
};
static const double prior_sens[CORUN_NCLASSES][4] = {
    [CORUN_CLASS_COMPUTE] = {0.68, 0.01, 0.02, 0.01},
    [CORUN_CLASS_SHEEP] = {0.30, 0.15, 0.30, 0.03},
    [CORUN_CLASS_RABBIT] = {0.50, 0.45, 0.90, 0.10},
    [CORUN_CLASS_CHASING] = {0.30, 0.18, 0.35, 0.12},
    [CORUN_CLASS_STREAMING] = {0.50, 0.02, 0.03, 0.10},
};

/*
 * Two threads on one SMT core do not interfere in proportion to one
 * pressure and one sensitivity: compute-bound threads fight for issue
 * slots, memory-bound ones for the misses a core keeps in flight, and a
 * stalled pointer chaser still holds issue slots. So the core level has a
 * class-pair table (victim row, aggressor column: extra run time of the
 * victim), fitted to the simulator's SMT pair slowdowns less what the same
 * pair costs on two cores of one LLC (counted at the L3 and memory levels).
 * No entry is below 0.15: a pair alone on a machine may barely interfere
 * (two sheep: 0.05), but siblings also halve their L2 and then lean on a
 * loaded LLC, which the pair table cannot see (two sheep beside devils in
 * the simulator: about 0.25).
 * A task's learned core sensitivity and pressure scale its row and column.
 */
static const double core_pair[CORUN_NCLASSES][CORUN_NCLASSES] = {
    [CORUN_CLASS_COMPUTE] = {0.68, 0.38, 0.45, 0.88, 0.55},
    [CORUN_CLASS_SHEEP] = {0.34, 0.15, 0.15, 0.25, 0.15},
    [CORUN_CLASS_RABBIT] = {0.28, 0.15, 0.30, 0.50, 0.50},
    [CORUN_CLASS_CHASING] = {0.15, 0.15, 0.22, 0.38, 0.30},
    [CORUN_CLASS_STREAMING] = {0.34, 0.20, 0.30, 0.40, 0.65},
};

double corun_profile_core_pair(enum corun_class victim, enum corun_class aggressor)
{
    bool kv = (unsigned)victim < CORUN_NCLASSES, ka = (unsigned)aggressor < CORUN_NCLASSES;
    double s = 0;

    if (kv && ka)
        return core_pair[victim][aggressor];
    /* Unknown on either side: the mean over what is unknown. */
    for (int v = 0; v < CORUN_NCLASSES; v++)
        for (int a = 0; a < CORUN_NCLASSES; a++)
            if ((!kv || v == (int)victim) && (!ka || a == (int)aggressor))
                s += core_pair[v][a];
    return s / ((kv ? 1 : CORUN_NCLASSES) * (ka ? 1 : CORUN_NCLASSES));
}

static int level_col(enum corun_level level)
{
    switch (level) {
    case CORUN_LEVEL_CORE:
        return 0;
    case CORUN_LEVEL_L2:
        return 1;
    case CORUN_LEVEL_L3:
        return 2;
    case CORUN_LEVEL_NUMA:
        return 3;
    default:
        return -1;
    }
}

void corun_profile_prior(enum corun_class cls, enum corun_level level, double *pressure,
                         double *sensitivity)
{
    int col = level_col(level);
    double p = 0, s = 0;

    if (col >= 0) {
        if ((unsigned)cls < CORUN_NCLASSES) {
            p = prior_press[cls][col];
            s = prior_sens[cls][col];
        } else {
            /* Unknown: the mean of the classes, so that an unknown task
             * is neither hidden away nor treated as a devil. */
            for (int c = 0; c < CORUN_NCLASSES; c++) {
                p += prior_press[c][col] / CORUN_NCLASSES;
                s += prior_sens[c][col] / CORUN_NCLASSES;
            }
        }
    }
    if (pressure)
        *pressure = p;
    if (sensitivity)
        *sensitivity = s;
}

/*
 * The rules follow the animal classes: devils miss a lot and mostly miss
 * (the cache does not hold their data); streamers keep many misses in flight
 * so their IPC stays well above a pointer chaser's; rabbits reference the
 * LLC often but hit when they have it; sheep miss a little; turtles hardly
 * reach the LLC.
 */
enum corun_class corun_profile_classify(double ipc, double mpki, double miss_ratio)
{
    double refs_pki;

    if (isnan(mpki))
        return CORUN_CLASS_UNKNOWN;
    refs_pki = (!isnan(miss_ratio) && miss_ratio > 0) ? mpki / miss_ratio : NAN;
    if (mpki >= 10) {
        if (!isnan(ipc) && ipc < 0.2)
            return CORUN_CLASS_CHASING; /* one miss at a time: IPC collapses */
        /* Streamers miss almost always and keep many misses in flight; a
         * rabbit squeezed out of its cache misses often too, but stalls. */
        if (isnan(miss_ratio) || miss_ratio >= 0.93 || (miss_ratio >= 0.8 && ipc >= 0.45))
            return CORUN_CLASS_STREAMING;
        return CORUN_CLASS_RABBIT;
    }
    if (!isnan(refs_pki) && refs_pki >= 8 && miss_ratio < 0.8)
        return CORUN_CLASS_RABBIT;
    if (mpki >= 0.5)
        return CORUN_CLASS_SHEEP;
    return CORUN_CLASS_COMPUTE;
}

int corun__share_dom(const struct corun_topo *topo, unsigned cpu, enum corun_level level,
                     double *scale)
{
    const struct corun_topo_cpu *c = corun_topo_cpu(topo, cpu);
    const struct corun_topo_domain *d, *core;
    int dom;

    *scale = 1.0;
    if (!c)
        return -1;
    dom = c->dom[level];
    if (dom < 0)
        return -1;
    d = corun_topo_domain(topo, level, (unsigned)dom);
    if (level == CORUN_LEVEL_L2 && c->dom[CORUN_LEVEL_CORE] >= 0) {
        core = corun_topo_domain(topo, CORUN_LEVEL_CORE, (unsigned)c->dom[CORUN_LEVEL_CORE]);
        if (d && core && d->ncpus <= core->ncpus)
            return -1; /* a per-core L2: what siblings share is the core's */
    }
    if ((level == CORUN_LEVEL_L3 || level == CORUN_LEVEL_L2) && d && d->size_bytes) {
        /* What a cache-sensitive task can lose grows with the cache it
         * could hold: per 16 MB (the priors' reference), within 0.25..2. */
        *scale = (double)d->size_bytes / (16.0 * 1024 * 1024);
        if (*scale < 0.25)
            *scale = 0.25;
        if (*scale > 2)
            *scale = 2;
    }
    if (level == CORUN_LEVEL_NUMA && d) {
        unsigned cores = 0;

        for (unsigned k = 0; k < d->ncpus; k++)
            cores += corun_topo_cpu(topo, d->cpus[k])->smt_rank == 0;
        if (cores)
            *scale = 6.0 / cores;
        if (*scale < 0.1)
            *scale = 0.1;
        if (*scale > 2)
            *scale = 2;
    }
    return dom;
}

/*
 * A core needs about 0.6 cycles per instruction when nothing stalls (the
 * middle of the cpi_core range of common codes), so the share of cycles an
 * IPC leaves unexplained is memory stall; tasks that hardly miss get none of
 * it whatever their IPC says (branchy code is not memory-bound).
 */
double corun_profile_mem_share(double ipc, double mpki)
{
    double mf;

    if (isnan(ipc) && isnan(mpki))
        return 0.5;
    if (isnan(ipc))
        return mpki >= 10 ? 0.7 : mpki >= 1 ? 0.3 : 0.05;
    mf = 1.0 - 0.6 * ipc;
    if (!isnan(mpki) && mpki < 2)
        mf *= mpki / 2;
    if (mf < 0)
        mf = 0;
    if (mf > 0.98)
        mf = 0.98;
    return mf;
}
