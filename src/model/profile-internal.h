/*
 * profile-internal.h — what the learner (src/model/profile.c) and the
 * policies' predictor (src/policy/policy-model.c) must agree on: which
 * domain of a CPU counts as shared at a level, and how strongly.
 */
#ifndef CORUN_PROFILE_INTERNAL_H
#define CORUN_PROFILE_INTERNAL_H

#include <math.h>
#include <stdbool.h>

#include "corun/profile.h"
#include "corun/topo.h"

/* The cache geometry the class priors are computed for: per cache level
 * (0: a shared L2, 1: the L3) the shared capacity and the private capacity
 * a core keeps below it, in MB. */
struct corun__cache_geom {
    double c_mb[2], p_mb[2];
    bool l3_core; /* every L3 is one core's own (POWER's): SMT siblings are
                     all its tenants (corun__l3_others()) */
    unsigned core_vendor; /* the cores' vendor's pair table (1 Intel, 2 AMD),
                             or 0: the median one (corun__core_pair_geom()) */
    /* corun__core_pair_geom()'s entries, victim row, aggressor column, the
     * last row and column for an unknown class (corun__core_pair_fill()) */
    double pair[CORUN_NCLASSES + 1][CORUN_NCLASSES + 1];
};

/*
 * corun__share_dom() - the domain of CPU @cpu at @level that the interference
 * model counts, or -1: none, or an L2 private to one core (what SMT siblings
 * share is counted once, at the core level). *@scale weighs the damage
 * there: for a memory domain it multiplies neighbour pressure (bandwidth
 * grows with the cores a domain holds, so pressure counts per six cores,
 * within 0.1..2); for a cache it multiplies the damage itself: its size
 * over the level's largest in @g (the geometry the sensitivities are for),
 * at least 0.25; 1 elsewhere, when the size is unknown or @g is NULL.
 */
int corun__share_dom(const struct corun_topo *topo, unsigned cpu, enum corun_level level,
                     const struct corun__cache_geom *g, double *scale);

/* corun_profile_core_pair() for the cores of the machine @g describes: where
 * the topology names a vendor that has its own tables (Intel, AMD, Hygon),
 * those fitted at its defaults under LLCs of 12 and 32 MB, interpolated on
 * the logarithm of the largest L3 (clamped to the two); else the median
 * table. The learner and the predictor both read it, so that a learned
 * core multiplier scales the same prior. */
double corun__core_pair_geom(const struct corun__cache_geom *g, enum corun_class victim,
                             enum corun_class aggressor);

/* Fills @g->pair from its vendor and L3 size (corun__cache_geom() does; a
 * caller that changes either calls it again). */
void corun__core_pair_fill(struct corun__cache_geom *g);

/* The geometry of @topo: each level's largest shared cache, and below the
 * L3 the largest part of an L2 one core holds; the reference's (2 MB over
 * 32 KB, 16 MB over 1 MB) where the topology gives no size. */
void corun__cache_geom(const struct corun_topo *topo, struct corun__cache_geom *g);

/*
 * The L3 pressure that takes from a task on a core what spills from the
 * core's L2 (the d3 of the SMT pair's spill): of @sum3, the L3's pressure,
 * that of the tasks off its core (@core3 its core's tasks', its own
 * included) where the L3 spans cores, as the pair table was fitted beside
 * siblings in a large LLC; but where the L3 is the core's own (@g's
 * l3_core) the siblings are its only other tenants, and all but its own
 * pressure @own3 counts.
 */
static inline double corun__l3_others(const struct corun__cache_geom *g, double sum3, double core3,
                                      double own3)
{
    double o = sum3 - (g->l3_core ? own3 : core3);

    return o > 0 ? o : 0;
}

/* corun_profile_prior() on geometry @g rather than the reference. */
void corun__prior_geom(const struct corun__cache_geom *g, enum corun_class cls,
                       enum corun_level level, double *pressure, double *sensitivity);

/* A typical working set of class @cls in MB (class_ws_mb[] in
 * profile-prior.c says where each comes from): the scale of its miss curve
 * exp(-c / ws); 16 for an unknown class. */
double corun__class_ws_mb(enum corun_class cls);

/*
 * What a thread of class @cls asks of an SMT core, the class priors of the
 * policies' model of a core with more than two busy threads
 * (corun__pm_crowd() in policy-internal.h): @issue, the share of the core's
 * issue slots it uses while not stalled on memory; @mlp, the memory
 * requests it keeps in flight; @smt_pen, how much longer its misses take
 * beside a busy sibling (which halves its reorder buffer and load-store
 * queue). SIMULATOR.md's class table, at the simulator's presets (its
 * midpoints; compute-bound tasks at the top of their issue range, where two
 * of them yield the published 1.0-1.2 on one core); the mean over the
 * classes for an unknown one.
 */
struct corun__core_use {
    double issue, mlp, smt_pen;
};
void corun__core_use(enum corun_class cls, struct corun__core_use *out);

/* Least own pressure a task keeps a cache share with. */
#define CORUN__OWN_MIN 1e-3

/*
 * corun__cache_loss() - the part of what losing a whole shared cache costs
 * a task that it loses beside co-runners: its share goes by insertion rate,
 * so it keeps k = @own / (@own + @others) of the cache, and over its miss
 * curve exp(-c / ws) the cost of keeping k is
 *     (exp(-k u) - exp(-u)) / (1 - exp(-u)),  u = C / ws
 * (what it keeps below the cache cancels). For a working set large against
 * the cache (u small) that is the share lost, 1 - k; for a small one it
 * stays near 0 until the share left is under its working set.
 */
/* corun__cache_loss() with @eu = exp(-@u) computed once by the caller. */
static inline double corun__cache_loss_e(double own, double others, double u, double eu)
{
    double k;

    if (!(others > 0))
        return 0;
    own = own > CORUN__OWN_MIN ? own : CORUN__OWN_MIN;
    k = own / (own + others);
    if (u < 1e-6)
        return 1 - k;
    return (exp(-k * u) - eu) / (1 - eu);
}

static inline double corun__cache_loss(double own, double others, double u)
{
    return corun__cache_loss_e(own, others, u, exp(-u));
}

/*
 * How much more a task loses to memory latency (the memory domain's load,
 * a remote node) once the caches' other tenants took part of its share: its
 * memory stalls grow with its misses. With @mf its memory share of time and
 * @xc its extra time from caches, its misses grow by about xc / mf of what
 * they were, and its exposure to latency with them (a squeezed sheep beside
 * streamers on a saturated node loses far more than its memory sensitivity
 * alone says). mf is floored, so that a task that hardly stalls is not
 * amplified without bound. The predictor (corun__pm_eval()) and the
 * learner (profile.c) both weigh memory damage by it.
 */
#define CORUN__MF_FLOOR 0.1
static inline double corun__mem_amp(double mf, double xc)
{
    return 1.0 + xc / (mf > CORUN__MF_FLOOR ? mf : CORUN__MF_FLOOR);
}

/* d corun__cache_loss() / d @others. */
static inline double corun__cache_loss_do(double own, double others, double u)
{
    double k, dk;

    others = others > 0 ? others : 0;
    own = own > CORUN__OWN_MIN ? own : CORUN__OWN_MIN;
    k = own / (own + others);
    dk = own / ((own + others) * (own + others));
    if (u < 1e-6)
        return dk;
    return u * exp(-k * u) / (1 - exp(-u)) * dk;
}

#endif
