/*
 * profile.c — the online learner of interference profiles (corun/profile.h).
 *
 * Each interval, for each task: counter deltas become figures, smoothed by
 * an exponential moving average; IPC is corrected to the reference clock with
 * the frequency ratio and the task's memory share, so that a lower clock
 * (more active cores, a thermal cap) is not read as interference; the
 * observed extra run time is the best corrected IPC seen (decaying slowly so
 * that phase changes are forgiven) over the smoothed one, minus one.
 *
 * Co-runners are the tasks pinned to CPUs in the same domain at a level; the
 * prediction of struct corun_task_profile's model (the same phi as the
 * policies') is compared with the observation and the error is attributed
 * by normalised least mean squares: half to the victim's sensitivities in
 * proportion to the pressure it felt at each level, half to its co-runners'
 * pressures in proportion to the victim's sensitivity there. What is learned
 * is an offset to the class prior, pulled back a little each interval so
 * that a wrong lesson fades when no longer confirmed.
 *
 * The class comes from the figures seen when the task ran best (least
 * contended): a rabbit squeezed by a streamer misses like a devil, and must
 * not be classed as one.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corun/model.h"
#include "corun/profile.h"
#include "model/profile-internal.h"

#define NLEV 4
static const enum corun_level levels[NLEV] = {CORUN_LEVEL_CORE, CORUN_LEVEL_L2, CORUN_LEVEL_L3,
                                              CORUN_LEVEL_NUMA};

struct slot {
    unsigned id;
    enum corun_class hint;
    double weight;
    /* smoothed figures */
    double ipc, fr, mpki, miss_ratio, bw, util;
    double perf, best;                       /* IPC at the reference clock */
    double best_ipc, best_mpki, best_miss;   /* figures when it ran best */
    double x_obs;                            /* observed extra run time */
    double dpress[NLEV], dsens[NLEV];        /* learned offsets to the prior */
    unsigned intervals;
    struct corun_task_profile prof;
};

struct corun_profiler {
    const struct corun_topo *topo;
    struct corun_profile_opts o;
    struct slot *slots;
    unsigned nslots, cap;
};

static double phi(unsigned li, double p)
{
    return (li == 1 || li == 2) ? p / (1.0 + p) : p;
}

static double dphi(unsigned li, double p)
{
    return (li == 1 || li == 2) ? 1.0 / ((1.0 + p) * (1.0 + p)) : 1.0;
}

int corun_profiler_new(const struct corun_topo *topo, const struct corun_profile_opts *opts,
                       struct corun_profiler **out)
{
    struct corun_profiler *p;

    if (!topo || !out)
        return -EINVAL;
    p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->topo = topo;
    if (opts)
        p->o = *opts;
    if (!(p->o.ema > 0 && p->o.ema <= 1))
        p->o.ema = 0.5;
    if (p->o.learn_rate == 0)
        p->o.learn_rate = 0.25;
    if (!(p->o.prior_pull > 0 && p->o.prior_pull < 1))
        p->o.prior_pull = 0.02;
    if (!(p->o.best_decay > 0 && p->o.best_decay <= 1))
        p->o.best_decay = 0.999;
    *out = p;
    return 0;
}

void corun_profiler_free(struct corun_profiler *p)
{
    if (!p)
        return;
    free(p->slots);
    free(p);
}

static enum corun_class slot_class(const struct slot *s)
{
    if ((unsigned)s->hint < CORUN_NCLASSES)
        return s->hint;
    return corun_profile_classify(s->best_ipc, s->best_mpki, s->best_miss);
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Press and sens of @s at level index @li: prior plus learned offset. */
static void slot_ps(const struct slot *s, unsigned li, double *press, double *sens)
{
    double p, q;

    corun_profile_prior(slot_class(s), levels[li], &p, &q);
    *press = clampd(p + s->dpress[li], 0, 4);
    *sens = clampd(q + s->dsens[li], 0, 4);
}

static void refresh_profile(struct slot *s)
{
    struct corun_task_profile *t = &s->prof;

    t->id = s->id;
    t->cls = slot_class(s);
    t->weight = s->weight;
    t->ipc = s->ipc;
    t->freq_ratio = s->fr;
    t->llc_mpki = s->mpki;
    t->llc_miss_ratio = s->miss_ratio;
    t->mem_bw_bps = s->bw;
    t->cpu_util = s->util;
    for (int l = 0; l < CORUN_NLEVELS; l++)
        t->pressure[l] = t->sensitivity[l] = 0;
    for (unsigned li = 0; li < NLEV; li++)
        slot_ps(s, li, &t->pressure[levels[li]], &t->sensitivity[levels[li]]);
    t->cpu = -1;
}

int corun_profiler_add(struct corun_profiler *p, unsigned id, enum corun_class hint,
                       double weight, unsigned *slot)
{
    struct slot *s;

    if (p->nslots == p->cap) {
        unsigned cap = p->cap ? 2 * p->cap : 16;
        struct slot *v = realloc(p->slots, cap * sizeof(*v));

        if (!v)
            return -ENOMEM;
        p->slots = v;
        p->cap = cap;
    }
    s = &p->slots[p->nslots];
    memset(s, 0, sizeof(*s));
    s->id = id;
    s->hint = (unsigned)hint < CORUN_NCLASSES ? hint : CORUN_CLASS_UNKNOWN;
    s->weight = weight > 0 ? weight : 1.0;
    s->ipc = s->fr = s->mpki = s->miss_ratio = s->bw = s->util = NAN;
    s->perf = s->best = s->best_ipc = s->best_mpki = s->best_miss = s->x_obs = NAN;
    refresh_profile(s);
    if (slot)
        *slot = p->nslots;
    p->nslots++;
    return 0;
}

static double ema(double old, double v, double a)
{
    if (!isfinite(v))
        return old;
    return isfinite(old) ? old + a * (v - old) : v;
}

/* Figures of one interval into the slot's smoothed ones. The ratios are
 * the sense box's derived metrics (corun/model.h) over the delta. */
static void observe(struct corun_profiler *p, struct slot *s, const struct corun_profile_obs *ob)
{
    double a = p->o.ema, ipc, fr, mpki, mr, bw = NAN, util, stall, dt, perf, mf;
    struct corun_sample d = {0};
    struct corun_metrics m;

    if (!ob->prev || ob->cur->t_ns <= ob->prev->t_ns)
        return;
    dt = (double)(ob->cur->t_ns - ob->prev->t_ns);
    d.valid = ob->cur->valid & ob->prev->valid;
    for (int ev = 0; ev < CORUN_NEVENTS; ev++)
        d.value[ev] = ob->cur->value[ev] >= ob->prev->value[ev]
                          ? ob->cur->value[ev] - ob->prev->value[ev]
                          : 0;
    corun_metrics_compute(&d, ob->cur->t_ns - ob->prev->t_ns, &m);
    ipc = m.v[CORUN_M_IPC];
    fr = m.v[CORUN_M_FREQ_RATIO];
    mpki = m.v[CORUN_M_LLC_MPKI];
    mr = m.v[CORUN_M_LLC_MISS_RATIO];
    util = m.v[CORUN_M_CPU_UTILIZATION];
    stall = m.v[CORUN_M_BACKEND_STALL_SHARE];
    if (d.valid & CORUN_EV_BIT(CORUN_EV_LLC_MISSES))
        bw = (double)d.value[CORUN_EV_LLC_MISSES] * 64.0 / dt * 1e9;
    s->ipc = ema(s->ipc, ipc, a);
    s->fr = ema(s->fr, fr, a);
    s->mpki = ema(s->mpki, mpki, a);
    s->miss_ratio = ema(s->miss_ratio, mr, a);
    s->bw = ema(s->bw, bw, a);
    s->util = ema(s->util, util, a);
    if (!isfinite(ipc) || (isfinite(util) && util < 0.05))
        return; /* nothing to learn from a task that hardly ran */
    /* IPC at the reference clock: memory stalls take fixed time, so their
     * share of cycles scales with the clock; compute cycles do not. */
    /* A backend-stall counter, where the PMU has one, says it directly. */
    mf = isfinite(stall) ? stall : corun_profile_mem_share(ipc, mpki);
    perf = isfinite(fr) && fr > 0 ? ipc / ((1.0 - mf) + mf / fr) : ipc;
    s->perf = ema(s->perf, perf, a);
    s->intervals++;
    if (!isfinite(s->best) || s->perf > s->best) {
        s->best = s->perf;
        s->best_ipc = isfinite(fr) && fr > 0 ? perf : ipc;
        s->best_mpki = s->mpki;
        s->best_miss = s->miss_ratio;
    } else {
        s->best *= p->o.best_decay;
    }
    s->x_obs = s->intervals >= 2 ? s->best / s->perf - 1.0 : NAN;
}

/* Index of @cpu's domain at level index @li as the model counts it, or -1;
 * the weight of pressure there in *@scale (may be NULL). */
static int dom_of(const struct corun_profiler *p, int cpu, unsigned li, double *scale)
{
    double sc;
    int d = cpu >= 0 ? corun__share_dom(p->topo, (unsigned)cpu, levels[li], &sc) : -1;

    if (scale)
        *scale = sc;
    return d;
}

/* Index of a class in the core-level sums: the five classes, then unknown. */
#define NCLS (CORUN_NCLASSES + 1)
static unsigned cls_idx(enum corun_class c)
{
    return (unsigned)c < CORUN_NCLASSES ? (unsigned)c : NCLS - 1;
}

static enum corun_class idx_cls(unsigned k)
{
    return k < CORUN_NCLASSES ? (enum corun_class)k : CORUN_CLASS_UNKNOWN;
}

/* Core-level multipliers of @s: its sensitivity and pressure over its
 * class prior (the pairwise table of corun_profile_core_pair() is scaled by
 * them), and those priors. */
static void core_mult(const struct slot *s, double *ms, double *mp, double *s0, double *p0)
{
    double pr, se;

    corun_profile_prior(slot_class(s), CORUN_LEVEL_CORE, p0, s0);
    slot_ps(s, 0, &pr, &se);
    *ms = *s0 > 0 ? se / *s0 : 1;
    *mp = *p0 > 0 ? pr / *p0 : 1;
}

/*
 * The co-run lesson of one interval: for every pinned task with an observed
 * slowdown, the error of the predicted one, shared out by NLMS. Pressure
 * updates are gathered per domain first (a domain's victims' pull on its
 * members; per class of member at the core level) and applied after, so the
 * result does not depend on the order of @obs. Per level, sums are indexed
 * d * width + k, with width NCLS and k the class at the core level.
 */
static int learn(struct corun_profiler *p, const struct corun_profile_obs *obs, unsigned n)
{
    unsigned ncpus = corun_topo_ncpus(p->topo), nd[NLEV], width[NLEV];
    double *sum[NLEV] = {0}, *pull[NLEV] = {0};
    unsigned *cnt = calloc(ncpus ? ncpus : 1, sizeof(*cnt)), *members[NLEV] = {0};
    double eta = p->o.learn_rate;
    int err = -ENOMEM;

    if (!cnt)
        return -ENOMEM;
    for (unsigned li = 0; li < NLEV; li++) {
        nd[li] = corun_topo_ndomains(p->topo, levels[li]);
        width[li] = li == 0 ? NCLS : 1;
        sum[li] = calloc((nd[li] ? nd[li] : 1) * width[li], sizeof(double));
        pull[li] = calloc((nd[li] ? nd[li] : 1) * width[li], sizeof(double));
        members[li] = calloc(nd[li] ? nd[li] : 1, sizeof(unsigned));
        if (!sum[li] || !pull[li] || !members[li])
            goto out_free;
    }
    for (unsigned k = 0; k < n; k++)
        if (obs[k].cpu >= 0 && (unsigned)obs[k].cpu < ncpus)
            cnt[obs[k].cpu]++;
    for (unsigned k = 0; k < n; k++) {
        const struct slot *s = &p->slots[obs[k].slot];

        if (obs[k].cpu < 0 || (unsigned)obs[k].cpu >= ncpus)
            continue;
        for (unsigned li = 0; li < NLEV; li++) {
            int d = dom_of(p, obs[k].cpu, li, NULL);
            double pr, se, ms, s0, p0;

            if (d < 0)
                continue;
            if (li == 0) {
                core_mult(s, &ms, &pr, &s0, &p0);
                sum[0][(size_t)d * NCLS + cls_idx(slot_class(s))] += pr / cnt[obs[k].cpu];
            } else {
                slot_ps(s, li, &pr, &se);
                sum[li][d] += pr / cnt[obs[k].cpu];
            }
            members[li][d]++;
        }
    }
    /* Victims: their own sensitivity now, their domains' pull later. */
    for (unsigned k = 0; k < n; k++) {
        struct slot *s = &p->slots[obs[k].slot];
        double f[NLEV] = {0}, g[NLEV] = {0}, xhat = 0, norm = 0.05, e, ms = 1, mp, s0 = 0, p0;
        unsigned nb[NLEV] = {0}, cv = cls_idx(slot_class(s));
        int d[NLEV];

        if (obs[k].cpu < 0 || (unsigned)obs[k].cpu >= ncpus || !isfinite(s->x_obs))
            continue;
        for (unsigned li = 0; li < NLEV; li++) {
            double pr, se, others, sc;

            d[li] = dom_of(p, obs[k].cpu, li, &sc);
            if (d[li] < 0 || members[li][d[li]] < 2)
                continue;
            nb[li] = members[li][d[li]] - 1;
            if (li == 0) {
                double tmax = 0;

                core_mult(s, &ms, &mp, &s0, &p0);
                for (unsigned c = 0; c < NCLS; c++) {
                    double t = corun_profile_core_pair(idx_cls(cv), idx_cls(c));
                    double v = sum[0][(size_t)d[0] * NCLS + c] - (c == cv ? mp / cnt[obs[k].cpu] : 0);

                    f[0] += t * (v > 0 ? v : 0);
                    tmax = t > tmax ? t : tmax;
                }
                g[0] = ms * tmax;
                xhat += ms * f[0];
                norm += f[0] * f[0] + nb[0] * g[0] * g[0];
                continue;
            }
            slot_ps(s, li, &pr, &se);
            others = sum[li][d[li]] - pr / cnt[obs[k].cpu];
            if (others < 0)
                others = 0;
            f[li] = phi(li, sc * others);
            g[li] = se * dphi(li, sc * others) * sc;
            xhat += se * f[li];
            norm += f[li] * f[li] + nb[li] * g[li] * g[li];
        }
        e = s->x_obs - xhat;
        for (unsigned li = 0; li < NLEV; li++) {
            if (!nb[li])
                continue;
            if (li == 0) {
                /* In multiplier space, then back to the figures' units. */
                s->dsens[0] += s0 * eta * e * f[0] / norm;
                for (unsigned c = 0; c < NCLS; c++)
                    pull[0][(size_t)d[0] * NCLS + c] +=
                        eta * e * ms * corun_profile_core_pair(idx_cls(cv), idx_cls(c)) / norm /
                        members[0][d[0]];
                continue;
            }
            s->dsens[li] += eta * e * f[li] / norm;
            /* Divided by the members so that a crowded domain does not
             * overshoot. */
            pull[li][d[li]] += eta * e * g[li] / norm / members[li][d[li]];
        }
    }
    for (unsigned k = 0; k < n; k++) {
        struct slot *s = &p->slots[obs[k].slot];

        if (obs[k].cpu < 0 || (unsigned)obs[k].cpu >= ncpus)
            continue;
        for (unsigned li = 0; li < NLEV; li++) {
            int d = dom_of(p, obs[k].cpu, li, NULL);
            double ms, mp, s0, p0;

            /* Its own pull as a victim is in the domain's total; the
             * error there is not its doing, but one share in many is a
             * small bias, accepted for an O(n) update. */
            if (d < 0 || members[li][d] < 2)
                continue;
            if (li == 0) {
                core_mult(s, &ms, &mp, &s0, &p0);
                s->dpress[0] +=
                    p0 * pull[0][(size_t)d * NCLS + cls_idx(slot_class(s))] / cnt[obs[k].cpu];
            } else {
                s->dpress[li] += pull[li][d] / cnt[obs[k].cpu];
            }
        }
    }
    err = 0;
out_free:
    for (unsigned li = 0; li < NLEV; li++) {
        free(sum[li]);
        free(pull[li]);
        free(members[li]);
    }
    free(cnt);
    return err;
}

int corun_profiler_update(struct corun_profiler *p, const struct corun_profile_obs *obs,
                          unsigned n)
{
    int err = 0;

    for (unsigned k = 0; k < n; k++)
        if (obs[k].slot >= p->nslots || !obs[k].cur)
            return -EINVAL;
    for (unsigned k = 0; k < n; k++)
        observe(p, &p->slots[obs[k].slot], &obs[k]);
    if (p->o.learn_rate > 0)
        err = learn(p, obs, n);
    for (unsigned i = 0; i < p->nslots; i++) {
        struct slot *s = &p->slots[i];

        for (unsigned li = 0; li < NLEV; li++) {
            double pr, se;

            s->dpress[li] *= 1.0 - p->o.prior_pull;
            s->dsens[li] *= 1.0 - p->o.prior_pull;
            /* Keep offsets where they still move the clamped value. */
            slot_ps(s, li, &pr, &se);
            corun_profile_prior(slot_class(s), levels[li], &pr, &se);
            s->dpress[li] = clampd(s->dpress[li], -pr, 4 - pr);
            s->dsens[li] = clampd(s->dsens[li], -se, 4 - se);
        }
        refresh_profile(s);
    }
    return err;
}

const struct corun_task_profile *corun_profiler_get(const struct corun_profiler *p, unsigned slot)
{
    return slot < p->nslots ? &p->slots[slot].prof : NULL;
}

double corun_profiler_observed_slowdown(const struct corun_profiler *p, unsigned slot)
{
    return slot < p->nslots ? p->slots[slot].x_obs : NAN;
}
