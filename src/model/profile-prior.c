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
#include <string.h>

#include "corun/profile.h"
#include "model/profile-internal.h"

/* Rows: classes; columns: core, L2, L3, NUMA. Fitted to the simulator's
 * pair slowdowns on an SMT2 machine with per-core L2 (the core column holds
 * what siblings do to each other through the pipeline and their shared L2)
 * and to a victim beside one and several streamers in an LLC; the L2 column
 * (clusters and modules of several cores) is half the L3 one. In the cache
 * columns, the sensitivities of rabbits and devils are those of a 16 MB
 * cache; they scale with the cache's size (within 0.25..1.5). Compute-bound
 * tasks and sheep get theirs from cache_sens() instead. The cache columns'
 * pressures are those of the reference caches (16 MB L3, 2 MB L2): a bigger
 * cache holds more of everyone's data, so the same insertion rate takes a
 * smaller part of it, and prior_one() divides them by the size over the
 * reference (down to a quarter). Without it four rabbits sharing a 48 MB
 * L3 were predicted as slow as rabbits beside streamers there (0.44 of
 * their speed alone against 0.70-0.83 in the simulator). Since the cache
 * loss went by the share a task keeps (corun__cache_loss()), a scale common
 * to an L3's tasks cancels out of that share; it still weighs the spill of
 * a core's tasks (corun__pm_l3_dmg()) and the first placement's damage to
 * others. */
static const double prior_press[CORUN_NCLASSES][4] = {
    [CORUN_CLASS_COMPUTE] = {1.00, 0.01, 0.02, 0.00},
    [CORUN_CLASS_SHEEP] = {0.50, 0.05, 0.10, 0.05},
    [CORUN_CLASS_RABBIT] = {0.90, 0.40, 0.80, 0.30},
    [CORUN_CLASS_CHASING] = {1.30, 0.30, 0.60, 0.20},
    [CORUN_CLASS_STREAMING] = {1.10, 1.00, 2.00, 1.00},
};
static const double prior_sens[CORUN_NCLASSES][4] = {
    [CORUN_CLASS_COMPUTE] = {0.68, 0, 0, 0.01},
    [CORUN_CLASS_SHEEP] = {0.30, 0, 0, 0.03},
    [CORUN_CLASS_RABBIT] = {0.50, 0.45, 0.90, 0.10},
    [CORUN_CLASS_CHASING] = {0.30, 0.18, 0.35, 0.12},
    [CORUN_CLASS_STREAMING] = {0.50, 0.02, 0.03, 0.10},
};

/*
 * Sensitivity of small working sets in a shared cache. What a task loses
 * beside a cache hog is what that cache did for it: the part of its miss
 * curve MPKI(c) = min + (max - min) exp(-c / ws) between the private cache
 * P it keeps (L1, or its part of the L2 below an L3) and P plus the shared
 * cache C:
 *     sens = full * (exp(-P / ws) - exp(-(P + C) / ws))
 * So a compute-bound task or a sheep whose working set fits in its private
 * L2 loses nothing in the L3, while a small shared cache with nothing above
 * it (the 1 MB L2 of a Knights Landing tile, a Bulldozer module's 2 MB)
 * matters to it more than to a rabbit: one sensitivity per class scaled by
 * cache size had that backwards. full and ws are the least-squares fit of
 * `make bench && build/bench/fit-cache-prior` to the simulator's
 * victim/aggressor slowdowns in the shared L2s and L3s of the fixture
 * topologies (1-2 MB L2s, 4-32 MB L3s over 0.03-1 MB private caches): a
 * residual of 0.47 (compute) and 0.42 (sheep) of the squared figures,
 * against 0.96 and 0.87 for the size-scaled model; ws lands within
 * SIMULATOR.md's class ranges. Rabbits and devils keep the size-scaled
 * figures of the table: the miss-curve model fits them better (0.01-0.11
 * against 0.03-0.14) but placed worse on the bench's big-LLC presets
 * (milan64, genoa96), and so did the tool's least-squares size-scaled
 * figures (capture 59% against 61% on bench/policies --quick).
 */
static const double cache_full[CORUN_NCLASSES] = {
    [CORUN_CLASS_COMPUTE] = 0.075,
    [CORUN_CLASS_SHEEP] = 0.237,
};
/* Working sets of the classes' miss curves: compute-bound tasks and sheep
 * fitted with cache_full[] above; rabbits at the simulator's preset (the
 * top of their 4-16 MB range: fit-cache-prior's pairs fit best from 16 MB
 * up, bench/policies placed better with 16 than 10), pointer chasers and
 * streamers the middle of theirs. */
static const double class_ws_mb[CORUN_NCLASSES] = {
    [CORUN_CLASS_COMPUTE] = 0.25, [CORUN_CLASS_SHEEP] = 0.75,   [CORUN_CLASS_RABBIT] = 16,
    [CORUN_CLASS_CHASING] = 40,   [CORUN_CLASS_STREAMING] = 80,
};

double corun__class_ws_mb(enum corun_class cls)
{
    return (unsigned)cls < CORUN_NCLASSES ? class_ws_mb[cls] : 16;
}

static const struct corun__core_use core_use[CORUN_NCLASSES] = {
    [CORUN_CLASS_COMPUTE] = {0.85, 2, 0.03},   [CORUN_CLASS_SHEEP] = {0.50, 2, 0.05},
    [CORUN_CLASS_RABBIT] = {0.40, 3, 0.10},    [CORUN_CLASS_CHASING] = {0.30, 1.5, 0.10},
    [CORUN_CLASS_STREAMING] = {0.35, 8, 0.25},
};

void corun__core_use(enum corun_class cls, struct corun__core_use *out)
{
    if ((unsigned)cls < CORUN_NCLASSES) {
        *out = core_use[cls];
        return;
    }
    *out = (struct corun__core_use){0};
    for (int c = 0; c < CORUN_NCLASSES; c++) {
        out->issue += core_use[c].issue / CORUN_NCLASSES;
        out->mlp += core_use[c].mlp / CORUN_NCLASSES;
        out->smt_pen += core_use[c].smt_pen / CORUN_NCLASSES;
    }
}

/* Bytes to MB; 0 (unknown) stays 0. */
static double mb(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

/* Sensitivity of class @cls in a shared cache of @c_mb over a private
 * @p_mb at column @col (1: L2, 2: L3). */
static double cache_sens(int cls, int col, double c_mb, double p_mb)
{
    double ws = class_ws_mb[cls], sc;

    if (cache_full[cls] > 0)
        return cache_full[cls] * (exp(-p_mb / ws) - exp(-(p_mb + c_mb) / ws));
    sc = c_mb / 16;
    return prior_sens[cls][col] * (sc < 0.25 ? 0.25 : sc > 1.5 ? 1.5 : sc);
}

/* The reference geometry of corun_profile_prior(): a 2 MB L2 of a cluster
 * over 32 KB L1s, a 16 MB L3 over private 1 MB L2s. */
static const struct corun__cache_geom ref_geom = {.c_mb = {2, 16}, .p_mb = {0.032, 1}};

/*
 * Two threads on one SMT core do not interfere in proportion to one
 * pressure and one sensitivity: compute-bound threads fight for issue
 * slots, memory-bound ones for the misses a core keeps in flight, and a
 * stalled pointer chaser still holds issue slots. So the core level has a
 * class-pair table (victim row, aggressor column: extra run time of the
 * victim), fitted to the simulator's SMT pair slowdowns less what the same
 * pair costs on two cores of one LLC (counted at the L3 and memory levels),
 * on an otherwise idle machine: the median over the five SMT presets and
 * the Skylake 2x6140 fixture, which runs on the simulator's defaults as
 * most machines do, printed by `make bench && build/bench/fit-core-pair
 * ../shared/fixtures/topologies/Intel-Skylake-2xXeon6140.xml`. Two sheep
 * barely interfere on the wide presets (0.01), more at the defaults'
 * issue width (0.05) and on skx28 (0.09); fitted to the presets alone the
 * entry was 0.01, and corun paired sheep for turbo bins where the
 * simulator's defaults made that a loss (bench/heldout4's Ryzen 7950X and
 * Sapphire Rapids, docs/internals/model.md). Beside a loaded LLC they
 * interfere more (about 0.2 in the simulator), which core_spill[][] below
 * adds.
 * A task's learned core sensitivity and pressure scale its row and column.
 * Cores whose vendor the topology names read core_pair_vendor[][] below.
 */
static const double core_pair[CORUN_NCLASSES][CORUN_NCLASSES] = {
    [CORUN_CLASS_COMPUTE] = {0.65, 0.36, 0.33, 0.76, 0.48},
    [CORUN_CLASS_SHEEP] = {0.31, 0.03, 0.01, 0.16, 0.04},
    [CORUN_CLASS_RABBIT] = {0.26, 0.06, 0.07, 0.20, 0.08},
    [CORUN_CLASS_CHASING] = {0.15, 0.11, 0.11, 0.25, 0.11},
    [CORUN_CLASS_STREAMING] = {0.34, 0.17, 0.18, 0.34, 0.49},
};

/*
 * What the pair costs more when the LLC above the core is taken by others:
 * siblings share the core's private L2, so a victim whose working set lived
 * there now misses to the L3, and what it finds there depends on the L3's
 * other tenants. In an idle LLC those misses hit (the pair table, fitted
 * there); in a full one they go to memory. Extra run time of the victim per
 * unit of the L3 share it loses (the L3 damage P/(1+P) of the predictor),
 * victim row, aggressor column: fit-core-pair (as above) fits it to the
 * simulator's SMT pairs beside four streamers in the LLC.
 */
static const double core_spill[CORUN_NCLASSES][CORUN_NCLASSES] = {
    [CORUN_CLASS_COMPUTE] = {0.01, 0.06, 0.28, 0.14, 0.08},
    [CORUN_CLASS_SHEEP] = {0.07, 0.10, 0.22, 0.23, 0.16},
    [CORUN_CLASS_RABBIT] = {0.42, 0.25, 0.35, 0.60, 0.30},
    [CORUN_CLASS_CHASING] = {0.10, 0.11, 0.14, 0.20, 0.09},
    [CORUN_CLASS_STREAMING] = {0.03, 0.03, 0.06, 0.06, 0.07},
};

/*
 * The pair table at the defaults of one vendor's cores, where the topology
 * names the vendor. The one table above is a median over machines whose
 * cores keep 10 to 16 misses in flight and boost in steps or linearly, and
 * what two threads of a core do to each other depends on those most. An
 * Intel core at the simulator's defaults keeps ten misses in flight (the
 * L1 fill buffers of Nehalem to Broadwell), an AMD one twelve, and they boost
 * in four bins and linearly: two streamers as siblings cost each other
 * 0.68 on the first, 0.46 on the second, 0.49 in the median.
 * What a rabbit sibling costs depends on the LLC too: a rabbit that the
 * LLC holds runs faster and pushes more out of the L2 it shares (compute
 * beside a rabbit 0.51 under a 12 MB LLC, 0.38 under 32 MB, Intel).
 * So each vendor has a table for an LLC of 12 MB and one of 32 MB, and
 * corun__core_pair_geom() interpolates on the logarithm of the machine's
 * largest L3, clamped to the two. Fitted by `make bench &&
 * build/bench/fit-core-pair bench/fit/Intel-8C-12MB.xml ...` (each file's
 * own rows; four files): one LLC over eight SMT2 cores of 256 KB L2, the
 * vendor named and no model, so that the simulator takes its defaults for
 * the vendor (bench/fit/README.md). Hygon's cores are AMD's. Other vendors
 * keep the median table.
 */
static const double core_pair_vendor[2][2][CORUN_NCLASSES][CORUN_NCLASSES] = {
    {/* GenuineIntel */
     {
         /* 12 MB LLC */
         [CORUN_CLASS_COMPUTE] = {0.69, 0.38, 0.51, 0.90, 0.53},
         [CORUN_CLASS_SHEEP] = {0.34, 0.04, 0.09, 0.25, 0.09},
         [CORUN_CLASS_RABBIT] = {0.27, 0.10, 0.15, 0.33, 0.20},
         [CORUN_CLASS_CHASING] = {0.15, 0.11, 0.12, 0.27, 0.09},
         [CORUN_CLASS_STREAMING] = {0.33, 0.18, 0.31, 0.37, 0.68},
     },
     {
         /* 32 MB LLC */
         [CORUN_CLASS_COMPUTE] = {0.69, 0.38, 0.38, 0.84, 0.51},
         [CORUN_CLASS_SHEEP] = {0.34, 0.04, 0.02, 0.21, 0.06},
         [CORUN_CLASS_RABBIT] = {0.28, 0.05, 0.08, 0.27, 0.17},
         [CORUN_CLASS_CHASING] = {0.16, 0.10, 0.11, 0.27, 0.08},
         [CORUN_CLASS_STREAMING] = {0.33, 0.17, 0.28, 0.36, 0.67},
     }},
    {/* AuthenticAMD, HygonGenuine */
     {
         /* 12 MB LLC */
         [CORUN_CLASS_COMPUTE] = {0.66, 0.36, 0.49, 0.87, 0.51},
         [CORUN_CLASS_SHEEP] = {0.32, 0.03, 0.08, 0.24, 0.08},
         [CORUN_CLASS_RABBIT] = {0.26, 0.09, 0.15, 0.33, 0.11},
         [CORUN_CLASS_CHASING] = {0.15, 0.11, 0.12, 0.27, 0.09},
         [CORUN_CLASS_STREAMING] = {0.33, 0.18, 0.22, 0.37, 0.46},
     },
     {
         /* 32 MB LLC */
         [CORUN_CLASS_COMPUTE] = {0.66, 0.36, 0.36, 0.82, 0.49},
         [CORUN_CLASS_SHEEP] = {0.32, 0.03, 0.01, 0.20, 0.05},
         [CORUN_CLASS_RABBIT] = {0.26, 0.05, 0.08, 0.27, 0.09},
         [CORUN_CLASS_CHASING] = {0.15, 0.10, 0.11, 0.27, 0.08},
         [CORUN_CLASS_STREAMING] = {0.32, 0.17, 0.20, 0.36, 0.46},
     }},
};

/* Entry (@victim, @aggressor) of @tab; on an unknown side, the mean over
 * what is unknown. */
static double class_pair(const double tab[CORUN_NCLASSES][CORUN_NCLASSES], enum corun_class victim,
                         enum corun_class aggressor)
{
    bool kv = (unsigned)victim < CORUN_NCLASSES, ka = (unsigned)aggressor < CORUN_NCLASSES;
    double s = 0;

    if (kv && ka)
        return tab[victim][aggressor];
    for (int v = 0; v < CORUN_NCLASSES; v++)
        for (int a = 0; a < CORUN_NCLASSES; a++)
            if ((!kv || v == (int)victim) && (!ka || a == (int)aggressor))
                s += tab[v][a];
    return s / ((kv ? 1 : CORUN_NCLASSES) * (ka ? 1 : CORUN_NCLASSES));
}

double corun_profile_core_pair(enum corun_class victim, enum corun_class aggressor)
{
    return class_pair(core_pair, victim, aggressor);
}

double corun_profile_core_spill(enum corun_class victim, enum corun_class aggressor)
{
    return class_pair(core_spill, victim, aggressor);
}

/* The entry (@victim, @aggressor) of the pair table for @g's cores, from the
 * tables themselves (corun__core_pair_fill() keeps the results). */
static double core_pair_of(const struct corun__cache_geom *g, enum corun_class victim,
                           enum corun_class aggressor)
{
    const double(*t)[CORUN_NCLASSES][CORUN_NCLASSES];
    double w;

    if (g->core_vendor < 1 || g->core_vendor > 2)
        return class_pair(core_pair, victim, aggressor);
    t = core_pair_vendor[g->core_vendor - 1];
    w = log(g->c_mb[1] / 12) / log(32.0 / 12);
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    return (1 - w) * class_pair(t[0], victim, aggressor) + w * class_pair(t[1], victim, aggressor);
}

void corun__core_pair_fill(struct corun__cache_geom *g)
{
    for (unsigned v = 0; v <= CORUN_NCLASSES; v++)
        for (unsigned a = 0; a <= CORUN_NCLASSES; a++)
            g->pair[v][a] =
                core_pair_of(g, v < CORUN_NCLASSES ? (enum corun_class)v : CORUN_CLASS_UNKNOWN,
                             a < CORUN_NCLASSES ? (enum corun_class)a : CORUN_CLASS_UNKNOWN);
}

double corun__core_pair_geom(const struct corun__cache_geom *g, enum corun_class victim,
                             enum corun_class aggressor)
{
    unsigned v = (unsigned)victim < CORUN_NCLASSES ? (unsigned)victim : CORUN_NCLASSES;
    unsigned a = (unsigned)aggressor < CORUN_NCLASSES ? (unsigned)aggressor : CORUN_NCLASSES;

    return g->pair[v][a];
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

/* The prior of class index @c (known) at column @col on geometry @g. */
static void prior_one(int c, int col, const struct corun__cache_geom *g, double *p, double *s)
{
    *p = prior_press[c][col];
    if (col == 1 || col == 2) {
        double ref = ref_geom.c_mb[col - 1], have = g->c_mb[col - 1];

        if (have > ref)
            *p *= ref / have < 0.25 ? 0.25 : ref / have;
    }
    *s = col == 1 || col == 2 ? cache_sens(c, col, g->c_mb[col - 1], g->p_mb[col - 1])
                              : prior_sens[c][col];
}

void corun__prior_geom(const struct corun__cache_geom *g, enum corun_class cls,
                       enum corun_level level, double *pressure, double *sensitivity)
{
    int col = level_col(level);
    double p = 0, s = 0;

    if (col >= 0) {
        if ((unsigned)cls < CORUN_NCLASSES) {
            prior_one(cls, col, g, &p, &s);
        } else {
            /* Unknown: the mean of the classes, so that an unknown task
             * is neither hidden away nor treated as a devil. */
            for (int c = 0; c < CORUN_NCLASSES; c++) {
                double pc, sc;

                prior_one(c, col, g, &pc, &sc);
                p += pc / CORUN_NCLASSES;
                s += sc / CORUN_NCLASSES;
            }
        }
    }
    if (pressure)
        *pressure = p;
    if (sensitivity)
        *sensitivity = s;
}

void corun_profile_prior(enum corun_class cls, enum corun_level level, double *pressure,
                         double *sensitivity)
{
    corun__prior_geom(&ref_geom, cls, level, pressure, sensitivity);
}

/* The row of core_pair_vendor[][] for CPUID vendor string @v, plus one; 0:
 * none (the median table). */
static unsigned vendor_of(const char *v)
{
    if (!strcmp(v, "GenuineIntel"))
        return 1;
    if (!strcmp(v, "AuthenticAMD") || !strcmp(v, "HygonGenuine"))
        return 2;
    return 0;
}

void corun__cache_geom(const struct corun_topo *topo, struct corun__cache_geom *g)
{
    unsigned n = corun_topo_ncpus(topo);
    bool l3 = false, own = true; /* an L3 seen; every one of one core */

    *g = ref_geom;
    g->c_mb[0] = g->c_mb[1] = 0;
    g->p_mb[1] = 0;
    /* The largest shared domain of each level, and below an L3 the part of
     * an L2 one core holds (its own L2, or its share of a cluster's). */
    for (unsigned c = 0; c < n; c++) {
        const struct corun_topo_cpu *cpu = corun_topo_cpu(topo, c);
        double sc;

        if (!cpu->usable)
            continue;
        if (corun__share_dom(topo, c, CORUN_LEVEL_L2, NULL, &sc) >= 0) {
            const struct corun_topo_domain *d =
                corun_topo_domain(topo, CORUN_LEVEL_L2, (unsigned)cpu->dom[CORUN_LEVEL_L2]);

            if (mb(d->size_bytes) > g->c_mb[0])
                g->c_mb[0] = mb(d->size_bytes);
        }
        if (cpu->dom[CORUN_LEVEL_L3] >= 0) {
            const struct corun_topo_domain *d =
                corun_topo_domain(topo, CORUN_LEVEL_L3, (unsigned)cpu->dom[CORUN_LEVEL_L3]);

            if (mb(d->size_bytes) > g->c_mb[1])
                g->c_mb[1] = mb(d->size_bytes);
            l3 = true;
            own = own && d->ncores <= 1;
        }
        if (cpu->dom[CORUN_LEVEL_L2] >= 0) {
            const struct corun_topo_domain *d =
                corun_topo_domain(topo, CORUN_LEVEL_L2, (unsigned)cpu->dom[CORUN_LEVEL_L2]);
            unsigned cores = d->ncores;

            if (mb(d->size_bytes) / (cores ? cores : 1) > g->p_mb[1])
                g->p_mb[1] = mb(d->size_bytes) / (cores ? cores : 1);
        }
    }
    g->l3_core = l3 && own;
    /* Sizes the topology does not give: the reference's. */
    for (int l = 0; l < 2; l++)
        if (!(g->c_mb[l] > 0))
            g->c_mb[l] = ref_geom.c_mb[l];
    if (!(g->p_mb[1] > 0))
        g->p_mb[1] = ref_geom.p_mb[1];
    g->core_vendor = vendor_of(corun_topo_info(topo)->cpu_vendor);
    corun__core_pair_fill(g);
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
                     const struct corun__cache_geom *g, double *scale)
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
        /* The sensitivities are those of the level's largest cache
         * (@g); a smaller one of the same level (a hybrid part's) holds
         * less of what a task could lose: in proportion, down to a
         * quarter. */
        double big = g ? g->c_mb[level == CORUN_LEVEL_L2 ? 0 : 1] : 0;

        *scale = big > 0 ? mb(d->size_bytes) / big : 1;
        if (*scale < 0.25)
            *scale = 0.25;
        if (*scale > 1)
            *scale = 1;
    }
    if (level == CORUN_LEVEL_NUMA && d) {
        if (d->ncores)
            *scale = 6.0 / d->ncores;
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
