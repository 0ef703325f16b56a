/*
 * policy-internal.h — what the policies of src/policy/ share: the usable CPUs
 * in spread and pack orders, a seeded random generator, the interference
 * predictor over a snapshot (struct corun__pm) and the local search that
 * improves a placement on the predicted objective.
 *
 * Everything here is pure: it reads the snapshot and the topology, allocates,
 * and computes. No I/O, no clock, no global state.
 */
#ifndef CORUN_POLICY_INTERNAL_H
#define CORUN_POLICY_INTERNAL_H

#include "corun/policy.h"
#include "corun/profile.h"
#include "model/profile-internal.h"

/* The levels at which the predictor models sharing, innermost first. */
#define CORUN__PM_NLEV 4
extern const enum corun_level corun__pm_levels[CORUN__PM_NLEV];

/* Classes of the core-level table: the five of policy.h and "unknown". */
#define CORUN__PM_NCLS (CORUN_NCLASSES + 1)

/* splitmix64: small, good enough for tie-breaking and sampling. */
static inline uint64_t corun__rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline unsigned corun__rand_below(uint64_t *s, unsigned n)
{
    return n ? (unsigned)(corun__rand(s) % n) : 0;
}

/*
 * The usable CPUs of @topo in "spread" order: one CPU per core before any
 * second sibling, and consecutive CPUs in different NUMA nodes, then L3, then
 * L2 domains, as Linux's load balancer would fill an idle machine. malloc'd
 * into *@out (count in *@n). 0, -ENOMEM, or -ENOSPC without a usable CPU.
 */
int corun__cpus_spread(const struct corun_topo *topo, unsigned **out, unsigned *n);
/* The usable CPUs in dense (hwloc logical) order: siblings, then cores, then
 * caches adjacent. Same returns. */
int corun__cpus_dense(const struct corun_topo *topo, unsigned **out, unsigned *n);

/* The predictor: per-task features resolved from a snapshot. */
struct corun__pm {
    const struct corun_topo *topo;
    unsigned n, ncpus;
    double *press, *sens; /* n * CORUN__PM_NLEV, row per task */
    double *u, *eu;       /* n * CORUN__PM_NLEV: cache size over working set (L2, L3),
                             and exp(-u) */
    double *w;            /* weight */
    double *mf;           /* memory-stall share of its time, 0..1 */
    /* A crowded core (corun__pm_crowd()), per task: issue demand alone,
     * memory requests in flight, miss stretch beside a sibling. */
    double *dem, *mlp, *pen;
    double *cap;          /* per CPU relative capacity, 1 the fastest */
    int *dom;             /* ncpus * CORUN__PM_NLEV: domain of a CPU per level, -1 none */
    double *scale;        /* ncpus * CORUN__PM_NLEV: weight of neighbour pressure there */
    unsigned ndom[CORUN__PM_NLEV];
    bool hybrid;          /* CPUs differ in capacity */
    /* A crowded core's tasks load memory at the share of their speed its
     * crowd leaves them (corun__pm_crowd_keep()): on machines of more than
     * two threads a core, from the engine's second plan on. */
    bool crowd_load;
    struct corun__cache_geom geom; /* the priors' (l3_core: corun__l3_others()) */
    /* The core level is pairwise by class (corun__core_pair_geom()): */
    unsigned *cls;        /* class index per task, CORUN__PM_NCLS - 1 for unknown */
    unsigned *scls;       /* class of its spill row: cls, but a squeezed rabbit's */
    double *ms, *mp;      /* core sensitivity and pressure over their class prior */
    int *home;            /* memory node per task (NUMA domain index), -1 unknown or
                             following the task (snapshot.mem_follows) */
    int *mnode;           /* node its memory is on now, -1 unknown */
    double mmc;           /* extra cost of a move off mnode: memory follows; 0 */
    int *node;            /* NUMA node of each CPU (not the model's domain), -1 */
    /* Turbo: a package clocks lower the more of its cores are busy. */
    int *pkg, *core;      /* package and core of each CPU, -1 */
    unsigned *pkg_cores;  /* cores per package */
    unsigned npkg, ncore;
    const double *turbo_rel; /* the snapshot's turbo table, NULL */
    unsigned turbo_n;
    /* the pair table is geom.pair (corun__core_pair_fill()), same layout */
    double spill[CORUN__PM_NCLS][CORUN__PM_NCLS]; /* more per L3 share lost */
};

int corun__pm_init(struct corun__pm *pm, const struct corun_snapshot *snap);
void corun__pm_release(struct corun__pm *pm);

/* What moving task @t from CPU @from to CPU @to costs in the objective:
 * @mc per task moved, and pm->mmc more when its memory must follow it to
 * another node. */
static inline double corun__pm_move_cost(const struct corun__pm *pm, unsigned t, int from, int to,
                                         double mc)
{
    if (from < 0 || from == to)
        return 0;
    if (pm->mmc > 0 && to >= 0 && pm->mnode[t] >= 0 && pm->node[to] >= 0 &&
        pm->node[to] != pm->mnode[t])
        return mc + pm->mmc;
    return mc;
}

/* Damage at level index @li from neighbour pressure @p with the domain's
 * weight @sc (corun__share_dom): inside phi for memory, outside for caches.
 * A task's own cache damage is corun__pm_cdmg(), which knows the victim;
 * this form stays where no one victim is meant: the L3 share a core's
 * tasks lose (corun__pm_l3_dmg()) and what a task costs a domain's others
 * in the corun policy's first placement. */
static inline double corun__pm_dmg(unsigned li, double p, double sc);

/* phi_l: how neighbour pressure P at level index @li turns into damage.
 * Caches: the share a task of pressure 1 loses, P/(1+P) (shares go by
 * insertion rate); corun__cache_loss() is the same with the victim's own
 * pressure and miss curve (docs/internals/policy.md). */
static inline double corun__pm_phi(unsigned li, double p)
{
    /* Core (pipeline) and memory domain add up; caches saturate: one can
     * lose at most the whole cache. */
    if (li == 1 || li == 2)
        return p / (1.0 + p);
    return p;
}

static inline double corun__pm_dmg(unsigned li, double p, double sc)
{
    if (li == 1 || li == 2)
        return sc * p / (1.0 + p);
    return sc * p;
}

/* Damage to task @i in the cache at level index @li (1: L2, 2: L3) of
 * weight @sc, pressing @own there beside @others: it keeps the share
 * own/(own + others) and loses what its miss curve says that share costs
 * (corun__cache_loss(), with u = the cache's size over its class's working
 * set). */
static inline double corun__pm_cdmg(const struct corun__pm *pm, unsigned i, unsigned li, double own,
                                    double others, double sc)
{
    return sc * corun__cache_loss_e(own, others, pm->u[i * CORUN__PM_NLEV + li],
                                    pm->eu[i * CORUN__PM_NLEV + li]);
}

/* Damage to task @i at level index @li (1-3) of weight @sc, pressing @own
 * there beside @others: corun__pm_cdmg() in a cache, corun__pm_dmg() in a
 * memory domain. */
static inline double corun__pm_tdmg(const struct corun__pm *pm, unsigned i, unsigned li, double own,
                                    double others, double sc)
{
    return li == 1 || li == 2 ? corun__pm_cdmg(pm, i, li, own, others, sc)
                              : corun__pm_dmg(li, others, sc);
}

/*
 * Damage to task @i on a CPU under no L3 of a machine that has L3s (Meteor
 * Lake's low-power E-cores, outside the compute tile's L3): it keeps none of
 * one, as beside an L3 that others fill. Without the term a task that
 * needs the L3 (a rabbit) looked best there, out of every L3's contention:
 * on bench/heldout8's 155H two rabbits were put on those cores, predicted
 * at 0.76 and simulated at 0.37. 0 on a machine without an L3.
 */
static inline double corun__pm_no_l3(const struct corun__pm *pm, unsigned i)
{
    if (!pm->ndom[2])
        return 0;
    return pm->sens[i * CORUN__PM_NLEV + 2] * corun__pm_cdmg(pm, i, 2, 0, 1, 1.0);
}

/* Weight of neighbour pressure at level index @li for CPU @c. */
static inline double corun__pm_scale(const struct corun__pm *pm, unsigned c, unsigned li)
{
    return pm->scale[c * CORUN__PM_NLEV + li];
}

/*
 * A core with more than two busy threads ("crowded"). The pair table
 * (corun_profile_core_pair()) is fitted on two threads a core; its costs
 * summed over more siblings, times a factor for the crowd, rated
 * compute-bound tasks six to a POWER9 SMT8 core at a third of their
 * simulated speed and led the search away from the plans that win there
 * (bench/heldout10; docs/internals/policy.md). So a crowded core is
 * modelled by what its threads share (SIMULATOR.md's step 5):
 *   - issue slots: task j asks dem_j = issue_j (1 - mf_j) + HOLD mf_j of
 *     the core's issue capacity (corun__core_use(); a thread stalled on
 *     memory still holds HOLD of it, its reorder-buffer and scheduler
 *     entries, which is why a compute task beside a pointer chaser costs
 *     the most in the pair table's compute row); when they sum past
 *     CORE_CAP its compute time stretches by the sigma >= 1 that makes
 *     sum_j share_j dem_j / ((1 - mf_j) sigma + mf_j) = CORE_CAP, the
 *     stalled time being unchanged;
 *   - miss buffers: the core keeps CORE_MLP requests in flight; beyond
 *     that, sum_j share_j mlp_j over CORE_MLP (R) stretches every task's
 *     memory time, and a busy sibling adds its smt_pen;
 * so task i's core-level extra time is
 *     (1 - mf_i)(sigma - 1) + mf_i (R (1 + smt_pen_i) - 1)
 * plus the pair table's spill (what siblings push out of the core's L2
 * and the L3 above no longer holds). CORE_CAP is set where two compute
 * threads (issue 0.85) overfill the core 1.7 times, the pair table's 0.65
 * extra each; CORE_MLP is about a dozen (Intel's cores have had ten L1
 * fill buffers since Nehalem, later ones more).
 * Cores of one or two busy threads keep the pair table.
 */
#define CORUN__PM_HOLD     0.6
#define CORUN__PM_CORE_CAP 1.0
#define CORUN__PM_CORE_MLP 12.0
/* The IPC, read back to a crowd-free core, below which a task that misses
 * almost always is taken for a rabbit rather than a streamer
 * (crowd_reread(), policy-model.c): corun_profile_classify()'s 0.45. */
#define CORUN__PM_CROWD_STREAM_IPC 0.45
/* A task classed streaming that misses per cycle less than this share of
 * the fastest-missing streamer on its memory node is read as a rabbit
 * squeezed out of its cache, in the L2 and L3 and in its spill row
 * (squeezed_rabbits(), policy-model.c). */
#define CORUN__PM_SQUEEZED_MPC 0.45

/* The stretch of a crowded core's compute time (@out[0], sigma above) and
 * of its memory time (@out[1], R) from its @k tasks @idx, task t there a
 * 1/@cnt[@cpu[t]] share of its CPU's time. Newton's method: the issue
 * demand is convex and decreasing in sigma, so from sigma = 1 it climbs to
 * the root in a few steps. */
static inline void corun__pm_crowd(const struct corun__pm *pm, const unsigned *idx, unsigned k,
                                   const int *cpu, const unsigned *cnt, double out[2])
{
    double sigma = 1, mlp = 0;

    for (unsigned q = 0; q < k; q++)
        mlp += pm->mlp[idx[q]] / cnt[cpu[idx[q]]];
    for (int it = 0; it < 60; it++) {
        double d = -CORUN__PM_CORE_CAP, dd = 0, next;

        for (unsigned q = 0; q < k; q++) {
            unsigned t = idx[q];
            double c = 1 - pm->mf[t], num = pm->dem[t] / cnt[cpu[t]], den = c * sigma + pm->mf[t];

            d += num / den;
            dd -= num * c / (den * den);
        }
        if (d <= 1e-12 || !(dd < 0))
            break;
        next = sigma - d / dd;
        if (!(next > sigma * (1 + 1e-12)))
            break;
        sigma = next;
    }
    out[0] = sigma;
    out[1] = mlp > CORUN__PM_CORE_MLP ? mlp / CORUN__PM_CORE_MLP : 1;
}

/* The extra time the crowd of its core (@crowd, its corun__pm_crowd())
 * gives task @i: its compute time stretched by sigma, its memory time by R
 * and its busy siblings' penalty. */
static inline double corun__pm_crowd_x(const struct corun__pm *pm, unsigned i, const double *crowd)
{
    double m = pm->mf[i];

    return (1 - m) * (crowd[0] - 1) + m * (crowd[1] * (1 + pm->pen[i]) - 1);
}

/*
 * The share of its speed alone that the crowd of its core (@crowd, its
 * corun__pm_crowd()) leaves task @i, and so of the misses it sends to
 * memory each second: what it loads its memory node with there, as a
 * share of its load alone (pm->crowd_load; docs/internals/policy.md, "A
 * crowded task's memory load at its crowded speed").
 */
static inline double corun__pm_crowd_keep(const struct corun__pm *pm, unsigned i,
                                          const double *crowd)
{
    return 1 / (1 + corun__pm_crowd_x(pm, i, crowd));
}

/* Core-level extra time of task @i from @csum, the per-class pressure sums
 * of its core (its own share @own_mp included there and removed here), when
 * it has lost @d3 of its L3 to the L3's other tasks (the misses its siblings
 * cause in the core's L2 then go further: corun_profile_core_spill(),
 * corun__pm_l3_dmg()); @busy CPUs of the core run tasks, and where more
 * than two do, @crowd is its corun__pm_crowd(). */
static inline double corun__pm_core_x(const struct corun__pm *pm, unsigned i, const double *csum,
                                      double own_mp, double d3, unsigned busy, const double *crowd)
{
    const double *row = pm->geom.pair[pm->cls[i]], *sp = pm->spill[pm->scls[i]];
    double x = 0;

    if (busy > 2 && crowd) {
        for (unsigned k = 0; k < CORUN__PM_NCLS; k++)
            x += d3 * sp[k] * (csum[k] - (k == pm->cls[i] ? own_mp : 0));
        return corun__pm_crowd_x(pm, i, crowd) + (x > 0 ? pm->ms[i] * x : 0);
    }
    for (unsigned k = 0; k < CORUN__PM_NCLS; k++)
        x += (row[k] + d3 * sp[k]) * (csum[k] - (k == pm->cls[i] ? own_mp : 0));
    return x > 0 ? pm->ms[i] * x : 0;
}

/* The L3 damage that the other tenants of its L3 do to a task on CPU @c,
 * P/(1+P) weighted by the cache's scale: from @sum3, the L3 pressure summed
 * over the tasks of c's L3, those corun__l3_others() counts, given @core3,
 * that of the tasks of c's core, and @own3, the task's own (what a sibling
 * does in an L3 that spans cores is in the pair table, fitted beside it).
 * 1 without an L3: what a sibling pushes out of the core's caches goes to
 * memory, as from a full one. */
static inline double corun__pm_l3_dmg(const struct corun__pm *pm, unsigned c, const double *sum3,
                                      double core3, double own3)
{
    int d = pm->dom[c * CORUN__PM_NLEV + 2];

    if (d < 0)
        return 1;
    return corun__pm_dmg(2, corun__l3_others(&pm->geom, sum3[d], core3, own3),
                         corun__pm_scale(pm, c, 2));
}

/* Memory domain whose pressure task @i feels and adds to on CPU @c: its
 * home when known, else the CPU's. */
static inline int corun__pm_memdom(const struct corun__pm *pm, unsigned i, unsigned c)
{
    return pm->home[i] >= 0 ? pm->home[i] : pm->dom[c * CORUN__PM_NLEV + 3];
}

/* Extra time of task @i on CPU @c from remote memory. */
static inline double corun__pm_remote_x(const struct corun__pm *pm, unsigned i, unsigned c)
{
    return (pm->home[i] >= 0 && pm->node[c] >= 0 && pm->home[i] != pm->node[c])
               ? pm->mf[i] * (CORUN_REMOTE_LATENCY - 1)
               : 0;
}

/* corun__mem_amp() for task @i. */
static inline double corun__pm_mem_amp(const struct corun__pm *pm, unsigned i, double xc)
{
    return corun__mem_amp(pm->mf[i], xc);
}

/* All-core turbo is 15-25% below 1-core turbo on server parts
 * (SIMULATOR.md); the predictor takes the middle, linear in busy cores. */
#define CORUN__PM_TURBO_DROP 0.2

/* Relative clock of a package with @active of @cores cores busy: the
 * snapshot's table when it has one, else linear. */
static inline double corun__pm_turbo(const struct corun__pm *pm, unsigned active, unsigned cores)
{
    if (active <= 1)
        return 1.0;
    if (pm->turbo_rel && pm->turbo_n)
        return pm->turbo_rel[(active < pm->turbo_n ? active : pm->turbo_n) - 1];
    if (cores <= 1)
        return 1.0;
    return 1.0 - CORUN__PM_TURBO_DROP * (double)(active - 1) / (cores - 1);
}

/* Speed factor of task @i on CPU @c from the CPU's capacity and its
 * package's clock @g: only the compute part of its time scales. */
static inline double corun__pm_cf(const struct corun__pm *pm, unsigned i, unsigned c, double g)
{
    double cap = pm->cap[c] * g, mf = pm->mf[i];

    if (cap >= 0.999)
        return 1.0;
    return 1.0 / ((1.0 - mf) / cap + mf);
}

/*
 * Predicted weighted STP of placement @cpu (-1 = unpinned: alone, speed 1),
 * minus @move_cost for each task whose CPU differs from @cur (NULL: none).
 * Speeds go to @speed when not NULL. -ENOMEM as a negative value.
 */
double corun__pm_eval(const struct corun__pm *pm, const int *cpu, double *speed);
/* corun__pm_eval(), and in @lost, per task on a crowded core
 * (corun__pm_crowd()) the weighted speed the core's crowd costs it to first
 * order (its weighted speed times its core-level extra time), -1 for every
 * other task. */
double corun__pm_eval_crowd(const struct corun__pm *pm, const int *cpu, double *speed,
                            double *lost);

/* Predicted pair cost of tasks @a and @b sharing one SMT core (and whatever
 * the core's siblings share below the core's L2): the loss of weighted speed
 * against each running alone there, when they have lost @d3a and @d3b of
 * their L3 to its other tasks (corun__pm_l3_dmg()). */
double corun__pm_pair_cost(const struct corun__pm *pm, unsigned a, unsigned b, unsigned cpu_a,
                           unsigned cpu_b, double d3a, double d3b);

/*
 * corun__search() - improves placement @cpu in place by local search on the
 * predicted objective (weighted STP minus @move_cost per task away from
 * @cur[i] when @cur is not NULL): swaps of two tasks and moves to idle
 * usable CPUs, candidates drawn from @seed, within a deterministic budget of
 * about @budget evaluated task updates. Returns the final objective or a
 * negative errno.
 */
double corun__search(const struct corun__pm *pm, int *cpu, const int *cur, double move_cost,
                     uint64_t seed, uint64_t budget);

/*
 * corun__align_cores() - plan @v moved onto where its tasks run (@cur)
 * without changing what the predictor sees: the tasks of two cores it
 * cannot tell apart trade cores when more of them then stay where they
 * run, and inside a core each task takes the thread it runs on. A plan
 * that time-shares a CPU, or a machine without cores, is left as it is.
 * 0 or -ENOMEM (policy-search.c).
 */
int corun__align_cores(const struct corun__pm *pm, int *v, const int *cur);

/* Objective of @cpu as corun__search() counts it. */
double corun__objective(const struct corun__pm *pm, const int *cpu, const int *cur,
                        double move_cost);

/*
 * Minimum-weight choice of @npairs pairs among @nt tasks, the rest alone, on
 * the nt*nt pair costs @cost; each task's mate to @mate (-1 alone).
 * corun__match_exact() by dynamic programming over subsets (few tasks: 2^nt
 * states), corun__match_greedy() cheapest pairs first, then exchanges
 * between two pairs and between a pair and a single until none helps. 0
 * or -ENOMEM (policy-match.c).
 */
int corun__match_exact(const double *cost, unsigned nt, unsigned npairs, int *mate);
int corun__match_greedy(const double *cost, unsigned nt, unsigned npairs, int *mate);

/* Policies of the registry. */
extern const struct corun_policy corun__policy_linux;
extern const struct corun_policy corun__policy_spread;
extern const struct corun_policy corun__policy_pack;
extern const struct corun_policy corun__policy_di;
extern const struct corun_policy corun__policy_symbiotic;
extern const struct corun_policy corun__policy_corun;

#endif
