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
 * policies') is compared with the observation, differentially (a settled
 * configuration against the previous one, see features()), and the error
 * corrects, in one normalised least-mean-squares step, the victim's
 * sensitivities (in proportion to the pressure it felt at each level) and
 * the pressures of the tasks sharing a domain with it now (in proportion to
 * the victim's sensitivity there), see press_grad(). What is learned is an
 * offset to the class prior, pulled back a little each interval so that a
 * wrong lesson fades when no longer confirmed.
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
    const struct corun__cache_geom *geom; /* the profiler's: the priors' geometry */
    enum corun_class hint;
    double weight;
    /* smoothed figures */
    double ipc, fr, mpki, miss_ratio, bw, util;
    double perf, best;                       /* IPC at the reference clock */
    double best_ipc, best_mpki, best_miss;   /* figures when it ran best */
    double x_obs;                            /* observed extra run time */
    /* Differential learning: the features and speed of the last settled
     * co-run configuration, and of the one it is in now. */
    double cfg_f[NLEV], cfg_perf;
    bool cfg_valid;
    double cur_f[NLEV];
    unsigned cur_n;
    double last_perf;                        /* this interval's, unsmoothed */
    double cur_sum;                          /* of last_perf since the 2nd interval */
    double dpress[NLEV], dsens[NLEV];        /* learned offsets to the prior */
    unsigned intervals;
    struct corun_task_profile prof;
};

struct corun_profiler {
    const struct corun_topo *topo;
    struct corun__cache_geom geom; /* its caches, for the class priors */
    /* corun__share_dom() of every CPU at every level, computed once: a
     * lesson asks it of each co-runner. ncpus * NLEV. */
    int *dom;
    double *scale;
    unsigned ncpus;
    struct corun_profile_opts o;
    struct slot *slots;
    unsigned nslots, cap;
};

static double phi(unsigned li, double p)
{
    return (li == 1 || li == 2) ? p / (1.0 + p) : p;
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
    corun__cache_geom(topo, &p->geom);
    p->ncpus = corun_topo_ncpus(topo);
    p->dom = malloc((p->ncpus ? p->ncpus : 1) * NLEV * sizeof(*p->dom));
    p->scale = malloc((p->ncpus ? p->ncpus : 1) * NLEV * sizeof(*p->scale));
    if (!p->dom || !p->scale) {
        corun_profiler_free(p);
        return -ENOMEM;
    }
    for (unsigned c = 0; c < p->ncpus; c++)
        for (unsigned li = 0; li < NLEV; li++)
            p->dom[c * NLEV + li] =
                corun__share_dom(topo, c, levels[li], &p->geom, &p->scale[c * NLEV + li]);
    if (opts)
        p->o = *opts;
    if (!(p->o.ema > 0 && p->o.ema <= 1))
        p->o.ema = 0.5;
    if (p->o.learn_rate == 0)
        p->o.learn_rate = 0.5;
    if (!(p->o.prior_pull > 0 && p->o.prior_pull < 1))
        p->o.prior_pull = 0.005;
    if (!(p->o.best_decay > 0 && p->o.best_decay <= 1))
        p->o.best_decay = 0.999;
    if (p->o.class_pool == 0 || isnan(p->o.class_pool))
        p->o.class_pool = 0.2;
    else if (p->o.class_pool > 1)
        p->o.class_pool = 1;
    *out = p;
    return 0;
}

void corun_profiler_free(struct corun_profiler *p)
{
    if (!p)
        return;
    free(p->slots);
    free(p->dom);
    free(p->scale);
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

    corun__prior_geom(s->geom, slot_class(s), levels[li], &p, &q);
    *press = clampd(p + s->dpress[li], 0, 4);
    *sens = clampd(q + s->dsens[li], 0, 4);
}

static void refresh_profile(struct slot *s)
{
    struct corun_task_profile *t = &s->prof;

    t->id = s->id;
    t->cls = slot_class(s);
    t->cls_hint = (unsigned)s->hint < CORUN_NCLASSES;
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

/* A slot as a new task @id starts it: the class prior, nothing learned. */
static void slot_init(struct corun_profiler *p, struct slot *s, unsigned id, enum corun_class hint,
                      double weight)
{
    memset(s, 0, sizeof(*s));
    s->id = id;
    s->geom = &p->geom;
    s->hint = (unsigned)hint < CORUN_NCLASSES ? hint : CORUN_CLASS_UNKNOWN;
    s->weight = weight > 0 ? weight : 1.0;
    s->ipc = s->fr = s->mpki = s->miss_ratio = s->bw = s->util = NAN;
    s->last_perf = NAN;
    s->perf = s->best = s->best_ipc = s->best_mpki = s->best_miss = s->x_obs = NAN;
    refresh_profile(s);
}

int corun_profiler_add(struct corun_profiler *p, unsigned id, enum corun_class hint,
                       double weight, unsigned *slot)
{
    if (p->nslots == p->cap) {
        unsigned cap = p->cap ? 2 * p->cap : 16;
        struct slot *v = realloc(p->slots, cap * sizeof(*v));

        if (!v)
            return -ENOMEM;
        p->slots = v;
        p->cap = cap;
    }
    slot_init(p, &p->slots[p->nslots], id, hint, weight);
    if (slot)
        *slot = p->nslots;
    p->nslots++;
    return 0;
}

int corun_profiler_reuse(struct corun_profiler *p, unsigned slot, unsigned id,
                         enum corun_class hint, double weight)
{
    if (slot >= p->nslots)
        return -ENOENT;
    slot_init(p, &p->slots[slot], id, hint, weight);
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
    s->last_perf = perf;
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
    bool in = cpu >= 0 && (unsigned)cpu < p->ncpus;

    if (scale)
        *scale = in ? p->scale[(unsigned)cpu * NLEV + li] : 1.0;
    return in ? p->dom[(unsigned)cpu * NLEV + li] : -1;
}

/* Co-runners per level whose pressure one lesson may teach: a victim in a
 * big domain (a whole socket's memory) teaches the first ones found. */
#define LESSON_MAX 64

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

/* Cache size over @s's working set at level index @li (1: L2, 2: L3). */
static double cache_u(const struct corun_profiler *p, const struct slot *s, unsigned li)
{
    return p->geom.c_mb[li - 1] / corun__class_ws_mb(slot_class(s));
}

/* The cache feature of task @k at level index @li (1: L2, 2: L3): its
 * domain's scale times the loss of the share it keeps beside its
 * co-runners' pressure there (corun__cache_loss()), as the predictor weighs
 * it (corun__pm_cdmg()); 0 alone. */
static double cache_feature(struct corun_profiler *p, const struct corun_profile_obs *obs,
                            unsigned k, unsigned li, double *const *sum,
                            const unsigned *const *members, const unsigned *cnt)
{
    double sc, pr, se, others;
    int d = dom_of(p, obs[k].cpu, li, &sc);

    if (d < 0 || members[li][d] < 2)
        return 0;
    slot_ps(&p->slots[obs[k].slot], li, &pr, &se);
    others = sum[li][d] - pr / cnt[obs[k].cpu];
    return sc *
           corun__cache_loss(pr / cnt[obs[k].cpu], others, cache_u(p, &p->slots[obs[k].slot], li));
}

/* The L3 share task @k loses to the tasks off its core, as the predictor
 * weighs the pair's spill (corun__pm_l3_dmg(): 1 without an L3): @core3
 * holds the L3 pressure of each core's tasks. */
static double spill_d3(struct corun_profiler *p, const struct corun_profile_obs *obs, unsigned k,
                       double *const *sum, const double *core3, const unsigned *cnt)
{
    double sc, pr, se;
    int d = dom_of(p, obs[k].cpu, 2, &sc), c = dom_of(p, obs[k].cpu, 0, NULL);

    if (c < 0)
        return 0;
    if (d < 0)
        return 1;
    slot_ps(&p->slots[obs[k].slot], 2, &pr, &se);
    return sc * phi(2, corun__l3_others(&p->geom, sum[2][d], core3[c], pr / cnt[obs[k].cpu]));
}

/*
 * The co-run lesson of one interval. Each pinned task's features are the
 * pressure it feels at each level (phi of its co-runners' summed pressure;
 * at the core level the class-pair table weighted by their pressure
 * multipliers), so that its predicted extra time is, as the predictor's,
 * x^ = sens_0 f_0 + xc + xm (1 + xc / mf), with xc = sens_1 f_1 +
 * sens_2 f_2 from the caches, xm = sens_3 f_3 from memory and mf its
 * memory share of time (predict_x(); sens_0 is its core multiplier).
 *
 * Learning is differential. A task's speed alone is never observed (the
 * best seen is usually contended), and an absolute error would teach that
 * tasks never seen alone are insensitive. So the profiler waits for a task
 * to settle in a new configuration (its features changed, then stayed for
 * three intervals) and compares it with the previous settled one:
 *   e = ln(perf_before / perf_now) - ln((1 + x^_now) / (1 + x^_before))
 * where the unknown speed alone cancels out, and corrects the task's
 * sensitivities, and its present co-runners' pressures, by normalised LMS
 * along the gradient of that log ratio.
 */
static void features(struct corun_profiler *p, const struct corun_profile_obs *obs, unsigned n,
                     unsigned k, double *const *sum, const double *core3,
                     const unsigned *const *members, const unsigned *cnt, double f[NLEV])
{
    const struct slot *s = &p->slots[obs[k].slot];
    unsigned cv = cls_idx(slot_class(s));
    double d3 = spill_d3(p, obs, k, sum, core3, cnt);

    for (unsigned li = 0; li < NLEV; li++) {
        double pr, se, others, sc, ms, mp, s0, p0;
        int d = dom_of(p, obs[k].cpu, li, &sc);

        f[li] = 0;
        if (d < 0 || members[li][d] < 2)
            continue;
        if (li == 0) {
            core_mult(s, &ms, &mp, &s0, &p0);
            for (unsigned c = 0; c < NCLS; c++) {
                double v = sum[0][(size_t)d * NCLS + c] - (c == cv ? mp / cnt[obs[k].cpu] : 0);

                f[0] += (corun__core_pair_geom(&p->geom, idx_cls(cv), idx_cls(c)) +
                         d3 * corun_profile_core_spill(idx_cls(cv), idx_cls(c))) *
                        (v > 0 ? v : 0);
            }
            continue;
        }
        if (li == 1 || li == 2) {
            f[li] = cache_feature(p, obs, k, li, sum, members, cnt);
            continue;
        }
        /* As the predictor weighs it: caches scale the damage, memory the
         * pressure (corun__share_dom). */
        slot_ps(s, li, &pr, &se);
        others = sum[li][d] - pr / cnt[obs[k].cpu];
        f[li] = phi(li, sc * (others > 0 ? others : 0));
    }
}

/* Sensitivities of @s in the units of the features: multiplier at the core. */
static void sens_vec(const struct slot *s, double v[NLEV], double *s0)
{
    double pr, ms, mp, p0;

    core_mult(s, &ms, &mp, s0, &p0);
    v[0] = ms;
    for (unsigned li = 1; li < NLEV; li++)
        slot_ps(s, li, &pr, &v[li]);
}

/*
 * The extra time the predictor composes from sensitivities @sv and
 * features @f (corun__pm_eval()): the core's and the caches' add, and
 * memory's is amplified by the caches' (corun__mem_amp(), @mf the task's
 * memory share of time). How much each feature weighs beyond its
 * sensitivity goes to @amp: the derivative by sensitivity l is
 * f_l * amp_l.
 */
static double predict_x(const double sv[NLEV], const double f[NLEV], double mf, double amp[NLEV])
{
    double xc = sv[1] * f[1] + sv[2] * f[2], xm = sv[3] * f[3];

    amp[0] = 1;
    amp[1] = amp[2] = corun__mem_amp(mf, xm);
    amp[3] = corun__mem_amp(mf, xc);
    return sv[0] * f[0] + xc + xm * amp[3];
}

/* What settle() needs to reach a victim's co-runners: the interval's
 * observations, the victim's index among them, tasks per CPU and the
 * pressure summed per domain (as learn() built them). */
struct lesson {
    const struct corun_profile_obs *obs;
    unsigned n, k;
    const unsigned *cnt;
    double *const *sum;
    const double *core3;
};

/*
 * The victim's error also teaches its co-runners' pressures: the gradient of
 * its predicted log(1 + x^) with respect to the pressure of each task sharing
 * a domain with it now, at every level, joins its own sensitivities' in one
 * normalised LMS step (so the error is split between what the victim feels
 * and what the others do, in proportion to how much each moves the
 * prediction). The co-runners of the previous configuration are not
 * remembered, so their share of the comparison is not taught; across
 * victims each task is judged as a co-runner many times, which averages the
 * confound between its pressure and its victims' sensitivities. @amp is
 * what each level's feature weighs beyond its sensitivity (predict_x()).
 */
static void press_grad(struct corun_profiler *p, const struct slot *s, const struct lesson *ls,
                       const double sv[NLEV], const double amp[NLEV], double xn, double *h,
                       unsigned *who, unsigned *nh)
{
    const struct corun_profile_obs *ob = &ls->obs[ls->k];
    unsigned cv = cls_idx(slot_class(s));
    double d3 = spill_d3(p, ls->obs, ls->k, ls->sum, ls->core3, ls->cnt);

    *nh = 0;
    for (unsigned li = 0; li < NLEV; li++) {
        double sc, pr, se, others, dfdo = 0;
        int d = dom_of(p, ob->cpu, li, &sc);
        unsigned taught = 0;

        if (d < 0 || sv[li] <= 0)
            continue;
        if (li) {
            slot_ps(s, li, &pr, &se);
            others = ls->sum[li][d] - pr / ls->cnt[ob->cpu];
            others = others > 0 ? others : 0;
            /* d feature / d others, as features() weighs it. */
            dfdo = (li == 1 || li == 2)
                       ? sc * corun__cache_loss_do(pr / ls->cnt[ob->cpu], others, cache_u(p, s, li))
                       : sc;
        }
        for (unsigned j = 0; j < ls->n && taught < LESSON_MAX; j++) {
            const struct corun_profile_obs *oj = &ls->obs[j];
            const struct slot *sj;
            double g;

            if (j == ls->k || oj->cpu < 0 || dom_of(p, oj->cpu, li, NULL) != d)
                continue;
            sj = &p->slots[oj->slot];
            if (li == 0) {
                double pj, sj0;

                corun_profile_prior(slot_class(sj), CORUN_LEVEL_CORE, &pj, &sj0);
                if (pj <= 0)
                    continue;
                g = (corun__core_pair_geom(&p->geom, idx_cls(cv), slot_class(sj)) +
                     d3 * corun_profile_core_spill(idx_cls(cv), slot_class(sj))) /
                    pj;
            } else {
                g = dfdo;
            }
            h[*nh] = sv[li] * amp[li] * g / ls->cnt[oj->cpu] / (1 + xn);
            who[*nh] = oj->slot * NLEV + li;
            (*nh)++;
            taught++;
        }
    }
}

static void settle(struct corun_profiler *p, struct slot *s, const double f[NLEV],
                   const struct lesson *ls)
{
    double sv[NLEV], s0, xn, xb, an[NLEV], ab[NLEV], g[NLEV], norm = 0.01, e, perf;
    double h[NLEV * LESSON_MAX];
    unsigned who[NLEV * LESSON_MAX], nh = 0;
    bool same = true;

    for (unsigned li = 0; li < NLEV; li++)
        if (fabs(f[li] - s->cur_f[li]) > 0.02)
            same = false;
    if (!same || !s->cur_n) {
        /* A new configuration; its first interval mixes old and new. */
        memcpy(s->cur_f, f, sizeof(s->cur_f));
        s->cur_n = 1;
        s->cur_sum = 0;
        return;
    }
    if (!isfinite(s->last_perf))
        return;
    s->cur_n++;
    s->cur_sum += s->last_perf;
    perf = s->cur_sum / (s->cur_n - 1);
    if (s->cur_n > 3) {
        /* Still there: a better estimate of the settled configuration. */
        s->cfg_perf = perf;
        return;
    }
    if (s->cur_n < 3)
        return;
    /* Settled (two clean intervals): learn against the previous one. */
    if (s->cfg_valid) {
        bool moved = false;

        for (unsigned li = 0; li < NLEV; li++)
            if (fabs(f[li] - s->cfg_f[li]) > 0.05)
                moved = true;
        if (moved && p->o.learn_rate > 0) {
            double mf = corun_profile_mem_share(s->ipc, s->mpki);

            sens_vec(s, sv, &s0);
            xn = predict_x(sv, f, mf, an);
            xb = predict_x(sv, s->cfg_f, mf, ab);
            for (unsigned li = 0; li < NLEV; li++) {
                g[li] = f[li] * an[li] / (1 + xn) - s->cfg_f[li] * ab[li] / (1 + xb);
                norm += g[li] * g[li];
            }
            press_grad(p, s, ls, sv, an, xn, h, who, &nh);
            for (unsigned q = 0; q < nh; q++)
                norm += h[q] * h[q];
            e = log(s->cfg_perf / perf) - log((1 + xn) / (1 + xb));
            for (unsigned li = 0; li < NLEV; li++) {
                double step = p->o.learn_rate * e * g[li] / norm;

                s->dsens[li] += li == 0 ? s0 * step : step;
            }
            for (unsigned q = 0; q < nh; q++)
                p->slots[who[q] / NLEV].dpress[who[q] % NLEV] +=
                    p->o.learn_rate * e * h[q] / norm;
        }
    }
    memcpy(s->cfg_f, f, sizeof(s->cfg_f));
    s->cfg_perf = perf;
    s->cfg_valid = true;
}

static int learn(struct corun_profiler *p, const struct corun_profile_obs *obs, unsigned n)
{
    unsigned ncpus = corun_topo_ncpus(p->topo), nd[NLEV];
    double *sum[NLEV] = {0}, *core3;
    unsigned *cnt = calloc(ncpus ? ncpus : 1, sizeof(*cnt)), *members[NLEV] = {0};
    struct lesson ls = {.obs = obs, .n = n, .cnt = cnt, .sum = sum};
    int err = -ENOMEM;

    nd[0] = corun_topo_ndomains(p->topo, levels[0]);
    core3 = calloc(nd[0] ? nd[0] : 1, sizeof(*core3));
    ls.core3 = core3;
    if (!cnt || !core3) {
        free(cnt);
        free(core3);
        return -ENOMEM;
    }
    for (unsigned li = 0; li < NLEV; li++) {
        nd[li] = corun_topo_ndomains(p->topo, levels[li]);
        sum[li] = calloc((nd[li] ? nd[li] : 1) * (li == 0 ? NCLS : 1), sizeof(double));
        members[li] = calloc(nd[li] ? nd[li] : 1, sizeof(unsigned));
        if (!sum[li] || !members[li])
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
                slot_ps(s, 2, &pr, &se);
                core3[d] += pr / cnt[obs[k].cpu];
            } else {
                slot_ps(s, li, &pr, &se);
                sum[li][d] += pr / cnt[obs[k].cpu];
            }
            members[li][d]++;
        }
    }
    for (unsigned k = 0; k < n; k++) {
        struct slot *s = &p->slots[obs[k].slot];
        double f[NLEV];

        if (obs[k].cpu < 0 || (unsigned)obs[k].cpu >= ncpus)
            continue;
        ls.k = k;
        features(p, obs, n, k, sum, core3, (const unsigned *const *)members, cnt, f);
        settle(p, s, f, &ls);
    }
    err = 0;
out_free:
    for (unsigned li = 0; li < NLEV; li++) {
        free(sum[li]);
        free(members[li]);
    }
    free(core3);
    free(cnt);
    return err;
}

/*
 * Pools the learned offsets of the tasks observed now within each class:
 * each moves the share class_pool of the way to its class's mean. Lessons
 * are few and noisy (a feature moved by a co-runner's new estimate, a rate
 * that happened to drop), and two like tasks that learned different
 * figures from noise were predicted apart: the engine moved them for it
 * (24 streamers on a two-node machine swapped across nodes, paying for
 * their memory each time; docs/internals/model.md). What one task keeps
 * learning stays its own in part; what one learns once reaches its
 * classmates.
 */
static void pool_by_class(struct corun_profiler *p, const struct corun_profile_obs *obs, unsigned n)
{
    double ms[NCLS][NLEV] = {{0}}, mp[NCLS][NLEV] = {{0}}, k = p->o.class_pool;
    unsigned cn[NCLS] = {0};

    for (unsigned j = 0; j < n; j++) {
        const struct slot *s = &p->slots[obs[j].slot];
        unsigned c = cls_idx(slot_class(s));

        cn[c]++;
        for (unsigned li = 0; li < NLEV; li++) {
            ms[c][li] += s->dsens[li];
            mp[c][li] += s->dpress[li];
        }
    }
    for (unsigned j = 0; j < n; j++) {
        struct slot *s = &p->slots[obs[j].slot];
        unsigned c = cls_idx(slot_class(s));

        if (cn[c] < 2)
            continue;
        for (unsigned li = 0; li < NLEV; li++) {
            s->dsens[li] += k * (ms[c][li] / cn[c] - s->dsens[li]);
            s->dpress[li] += k * (mp[c][li] / cn[c] - s->dpress[li]);
        }
    }
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
    if (!err && p->o.learn_rate > 0 && p->o.class_pool > 0)
        pool_by_class(p, obs, n);
    for (unsigned i = 0; i < p->nslots; i++) {
        struct slot *s = &p->slots[i];

        for (unsigned li = 0; li < NLEV; li++) {
            double pr, se;

            s->dpress[li] *= 1.0 - p->o.prior_pull;
            s->dsens[li] *= 1.0 - p->o.prior_pull;
            /* Keep offsets where they still move the clamped value. */
            slot_ps(s, li, &pr, &se);
            corun__prior_geom(s->geom, slot_class(s), levels[li], &pr, &se);
            s->dpress[li] = clampd(s->dpress[li], -pr, 4 - pr);
            /* A lesson moves a sensitivity within half to twice its class
             * prior: few co-run changes teach it, noisily, and a collapse
             * to zero (or a blow-up) misleads placement more than the
             * prior's error does. */
            s->dsens[li] = clampd(s->dsens[li], -0.5 * se, se);
        }
        refresh_profile(s);
    }
    return err;
}

int corun_profiler_set_hint(struct corun_profiler *p, unsigned slot, enum corun_class hint)
{
    struct slot *s;

    if (slot >= p->nslots)
        return -ENOENT;
    s = &p->slots[slot];
    s->hint = (unsigned)hint < CORUN_NCLASSES ? hint : CORUN_CLASS_UNKNOWN;
    refresh_profile(s);
    return 0;
}

const struct corun_task_profile *corun_profiler_get(const struct corun_profiler *p, unsigned slot)
{
    return slot < p->nslots ? &p->slots[slot].prof : NULL;
}

double corun_profiler_observed_slowdown(const struct corun_profiler *p, unsigned slot)
{
    return slot < p->nslots ? p->slots[slot].x_obs : NAN;
}
