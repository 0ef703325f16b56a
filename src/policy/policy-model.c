/*
 * policy-model.c — the interference predictor every contention-aware policy
 * shares, and the CPU orders the simple ones use.
 *
 * The predictor turns a snapshot into flat per-task arrays (pressure and
 * sensitivity at the core, L2, L3 and memory-domain levels; weight; share of
 * time stalled on memory) and per-CPU arrays (capacity, domain at each level)
 * so that evaluating a placement is a few passes over arrays. A task's
 * predicted speed on CPU c is
 *
 *     cf(c) / (1 + sum_l sens[l] * phi_l(P_l - press[l])) / k(c)
 *
 * where P_l is the pressure summed over the tasks in c's domain at level l
 * (in a shared L2 or L3, phi is corun__cache_loss() of the task's own
 * pressure against the others': the share it keeps, over its miss curve),
 * cf(c) the speed the CPU's capacity gives a task with its memory share (a
 * stalled cycle does not get shorter on a faster core), and k(c) the number
 * of tasks time-sharing CPU c. Profiles give the figures; where one is NaN
 * the class prior of corun/profile.h stands in. A task's L3 and memory
 * pressures are scaled by its LLC misses per kilo-instruction against its
 * classmates' (miss_scale()). A task measured on a core crowded with more
 * than two busy threads is read at its IPC taken back to a crowd-free core
 * (crowd_reread()); one classed streaming that misses per cycle at less
 * than 0.45 of the fastest streamer on its memory node is read as a rabbit
 * in the caches (squeezed_rabbits()). From the engine's second plan on, a
 * task placed on such a core presses its memory domain at the share of its
 * speed the crowd leaves it (corun__pm_crowd_keep()).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corun/profile.h"
#include "model/profile-internal.h"
#include "policy/policy-internal.h"

const enum corun_level corun__pm_levels[CORUN__PM_NLEV] = {
    CORUN_LEVEL_CORE, CORUN_LEVEL_L2, CORUN_LEVEL_L3, CORUN_LEVEL_NUMA};

int corun__cpus_dense(const struct corun_topo *topo, unsigned **out, unsigned *n)
{
    unsigned ncpus = corun_topo_ncpus(topo), k = 0;
    unsigned *v = malloc((ncpus ? ncpus : 1) * sizeof(*v));

    if (!v)
        return -ENOMEM;
    for (unsigned c = 0; c < ncpus; c++)
        if (corun_topo_cpu(topo, c)->usable)
            v[k++] = c;
    if (!k) {
        free(v);
        return -ENOSPC;
    }
    *out = v;
    *n = k;
    return 0;
}

/*
 * Interleaves @v[0..n) so that consecutive entries differ at the outermost
 * level possible: split by the domain at corun__pm_levels[@li] (first
 * appearance order), interleave each part one level down, then deal the parts
 * round-robin. @tmp has room for n entries.
 */
static void interleave(const struct corun_topo *topo, unsigned *v, unsigned n, int li,
                       unsigned *tmp)
{
    unsigned nparts = 0, *start, *len, *pos;
    int *key;

    if (n <= 1 || li < 0)
        return;
    key = malloc(n * sizeof(*key));
    start = calloc(n, sizeof(*start));
    len = calloc(n, sizeof(*len));
    pos = calloc(n, sizeof(*pos));
    if (!key || !start || !len || !pos)
        goto out_free; /* leaves the order as it is: still a valid order */
    /* Part of each entry, numbered by first appearance. */
    for (unsigned i = 0; i < n; i++) {
        int d = corun_topo_cpu(topo, v[i])->dom[corun__pm_levels[li]];
        unsigned p;

        for (p = 0; p < nparts; p++)
            if (key[p] == d)
                break;
        if (p == nparts)
            key[nparts++] = d;
        pos[i] = p;
        len[p]++;
    }
    for (unsigned p = 1; p < nparts; p++)
        start[p] = start[p - 1] + len[p - 1];
    {
        unsigned *fill = calloc(nparts, sizeof(*fill));

        if (!fill)
            goto out_free;
        for (unsigned i = 0; i < n; i++)
            tmp[start[pos[i]] + fill[pos[i]]++] = v[i];
        free(fill);
    }
    for (unsigned p = 0; p < nparts; p++)
        interleave(topo, tmp + start[p], len[p], li - 1, v);
    /* Deal round-robin from the parts (tmp) back into v. */
    {
        unsigned k = 0;

        for (unsigned round = 0; k < n; round++)
            for (unsigned p = 0; p < nparts; p++)
                if (round < len[p])
                    v[k++] = tmp[start[p] + round];
    }
out_free:
    free(key);
    free(start);
    free(len);
    free(pos);
}

int corun__cpus_spread(const struct corun_topo *topo, unsigned **out, unsigned *n)
{
    unsigned *v, *src, *tmp, k = 0, cnt, maxrank = 0;
    int err;

    err = corun__cpus_dense(topo, &v, &cnt);
    if (err)
        return err;
    src = malloc(cnt * sizeof(*src));
    tmp = malloc(cnt * sizeof(*tmp));
    if (!src || !tmp) {
        free(src);
        free(tmp);
        free(v);
        return -ENOMEM;
    }
    memcpy(src, v, cnt * sizeof(*src));
    for (unsigned i = 0; i < cnt; i++)
        if (corun_topo_cpu(topo, src[i])->smt_rank > maxrank)
            maxrank = corun_topo_cpu(topo, src[i])->smt_rank;
    /* Every core's first thread, then the second ones...; within a rank,
     * interleaved across memory domains, LLCs and L2 clusters. */
    for (unsigned r = 0; r <= maxrank; r++) {
        unsigned from = k;

        for (unsigned i = 0; i < cnt; i++)
            if (corun_topo_cpu(topo, src[i])->smt_rank == r)
                v[k++] = src[i];
        interleave(topo, v + from, k - from, CORUN__PM_NLEV - 1, tmp);
    }
    free(src);
    free(tmp);
    *out = v;
    *n = cnt;
    return 0;
}

/* Relative capacity of every CPU, 1 for the fastest. Where the topology does
 * not know it on a hybrid machine, kinds are ranked by hwloc's efficiency and
 * the slower ones taken at 0.6, the usual E-core to P-core ratio: a guess
 * that only orders CPUs, never reported as a figure. */
static void fill_capacity(struct corun__pm *pm)
{
    const struct corun_topo_info *in = corun_topo_info(pm->topo);
    double max = 0;
    int maxeff = -1;

    for (unsigned k = 0; k < in->kinds; k++)
        if (corun_topo_kind(pm->topo, k)->efficiency > maxeff)
            maxeff = corun_topo_kind(pm->topo, k)->efficiency;
    for (unsigned c = 0; c < pm->ncpus; c++) {
        const struct corun_topo_cpu *cpu = corun_topo_cpu(pm->topo, c);
        double cap = cpu->capacity;

        if (!(cap > 0)) {
            const struct corun_topo_kind *k = corun_topo_kind(pm->topo, (unsigned)cpu->kind);

            cap = (in->kinds > 1 && k && k->efficiency < maxeff) ? 0.6 : 1.0;
        }
        pm->cap[c] = cap;
        if (cap > max)
            max = cap;
    }
    pm->hybrid = false;
    for (unsigned c = 0; c < pm->ncpus; c++) {
        pm->cap[c] /= max;
        if (pm->cap[c] < 0.999)
            pm->hybrid = true;
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Whether @t has a usable miss count: positive and finite. */
static bool has_misses(const struct corun_task_profile *t)
{
    return isfinite(t->llc_mpki) && t->llc_mpki > 0;
}

/*
 * Tasks of one class differ in how much they take from a shared cache and a
 * memory controller: a cache's shares go by insertion rate, and bandwidth
 * by misses. Each task's L3 and memory pressures are scaled by its LLC
 * misses per kilo-instruction over the median of its classmates' (those of
 * the snapshot with a figure; none with fewer than two), within [1/2, 2]:
 * one class prior stood for rabbits with 4 and 16 MB working sets alike.
 * Per instruction, not per cycle, so that a task on a slower E-core is not
 * taken for a lighter one. What was learned is scaled with the prior: the
 * misses are measured from the first interval, co-runs take many. 0, or
 * -ENOMEM with @pm released.
 */
static int miss_scale(struct corun__pm *pm, const struct corun_snapshot *snap)
{
    double *v = malloc((pm->n ? pm->n : 1) * sizeof(*v));

    if (!v) {
        corun__pm_release(pm);
        return -ENOMEM;
    }
    for (unsigned c = 0; c < CORUN__PM_NCLS; c++) {
        unsigned k = 0;
        double med;

        for (unsigned i = 0; i < pm->n; i++)
            if (pm->cls[i] == c && has_misses(&snap->tasks[i]))
                v[k++] = snap->tasks[i].llc_mpki;
        if (k < 2)
            continue;
        qsort(v, k, sizeof(*v), by_value);
        med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
        for (unsigned i = 0; i < pm->n; i++) {
            double f;

            if (pm->cls[i] != c || !has_misses(&snap->tasks[i]))
                continue;
            f = snap->tasks[i].llc_mpki / med;
            f = f < 0.5 ? 0.5 : f > 2 ? 2 : f;
            pm->press[i * CORUN__PM_NLEV + 2] *= f;
            pm->press[i * CORUN__PM_NLEV + 3] *= f;
        }
    }
    free(v);
    return 0;
}

/*
 * corun__pm_cf() wants a task's memory share at the fastest CPU's clock. A
 * share read from a measured IPC (corun_profile_mem_share()) is that of the
 * CPU the task ran on: a stall takes as long on an E-core, its compute
 * cycles 1/capacity as long, so there the task shows a higher IPC and looks
 * more compute-bound. Of two like tasks, the one measured on an E-core then
 * looked the one that gains most from a P-core, and the one on the P-core
 * the one that loses least on an E-core, and every plan swapped them
 * (bench/heldout7's Arrow Lake with 16 streamers: 128 migrations in 10 s
 * for nothing). Taken back to capacity 1 here. The package's turbo clock is
 * left as it is measured: taking it back too was tried and placed worse on
 * the held-out sets (docs/internals/policy.md).
 */
static void full_clock_mf(struct corun__pm *pm, const struct corun_task_profile *t, unsigned i)
{
    double mf = pm->mf[i], r;

    if (t->cpu < 0 || (unsigned)t->cpu >= pm->ncpus || !isfinite(t->ipc) || !(mf > 0))
        return;
    r = pm->cap[t->cpu];
    if (r < 0.999 && r > 0)
        pm->mf[i] = (mf / r) / (1.0 - mf + mf / r);
}

/*
 * The tasks of placement @cpu sorted by core (counting sort): into *@idx
 * (n entries) core by core, and *@start (ncore + 1 entries) such that core
 * k's are idx[k ? start[k - 1] : 0 .. start[k]). Tasks on no CPU, or on a
 * CPU of no core, are left out. 0, or -ENOMEM with nothing allocated.
 */
static int by_core(const struct corun__pm *pm, const int *cpu, unsigned **start, unsigned **idx)
{
    unsigned *st = calloc(pm->ncore + 1, sizeof(*st)),
             *ix = malloc((pm->n ? pm->n : 1) * sizeof(*ix));

    if (!st || !ix) {
        free(st);
        free(ix);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < pm->n; i++)
        if (cpu[i] >= 0 && (unsigned)cpu[i] < pm->ncpus && pm->core[cpu[i]] >= 0)
            st[pm->core[cpu[i]] + 1]++;
    for (unsigned k = 0; k < pm->ncore; k++)
        st[k + 1] += st[k];
    for (unsigned i = 0; i < pm->n; i++)
        if (cpu[i] >= 0 && (unsigned)cpu[i] < pm->ncpus && pm->core[cpu[i]] >= 0)
            ix[st[pm->core[cpu[i]]]++] = i;
    *start = st;
    *idx = ix;
    return 0;
}

/*
 * The figures of task @i (profile @t) at level indexes @from to @to - 1,
 * read as class @cls: the class priors, with what was learned over the
 * priors of @cls0, the class the profile's figures were learned as.
 */
static void level_figures(struct corun__pm *pm, const struct corun_task_profile *t, unsigned i,
                          enum corun_class cls, enum corun_class cls0, unsigned from, unsigned to)
{
    for (unsigned li = from; li < to; li++) {
        enum corun_level lv = corun__pm_levels[li];
        double p, s, pl, sl;

        corun__prior_geom(&pm->geom, cls, lv, &p, &s);
        corun__prior_geom(&pm->geom, cls0, lv, &pl, &sl);
        if (isfinite(t->pressure[lv]))
            p += t->pressure[lv] - pl;
        if (isfinite(t->sensitivity[lv]))
            s += t->sensitivity[lv] - sl;
        pm->press[i * CORUN__PM_NLEV + li] = p > 0 ? p : 0;
        pm->sens[i * CORUN__PM_NLEV + li] = s > 0 ? s : 0;
        if (li == 1 || li == 2) {
            pm->u[i * CORUN__PM_NLEV + li] = pm->geom.c_mb[li - 1] / corun__class_ws_mb(cls);
            pm->eu[i * CORUN__PM_NLEV + li] = exp(-pm->u[i * CORUN__PM_NLEV + li]);
        }
    }
}

/*
 * The per-task figures of task @i (profile @t) read as class @cls at IPC
 * @ipc: the class priors at every level, with what was learned over the
 * priors of @cls0, the class the profile's figures were learned as; the
 * core level's class row and scale; the memory share; the crowded-core
 * demand, miss buffers and penalty.
 */
static void task_figures(struct corun__pm *pm, const struct corun_task_profile *t, unsigned i,
                         enum corun_class cls, enum corun_class cls0, double ipc)
{
    struct corun__core_use cu;
    double p0, s0;

    level_figures(pm, t, i, cls, cls0, 0, CORUN__PM_NLEV);
    /* The core level: the class row and column, scaled by how the task's
     * learned core figures compare with its class prior. */
    corun_profile_prior(cls, CORUN_LEVEL_CORE, &p0, &s0);
    pm->cls[i] = (unsigned)cls < CORUN_NCLASSES ? (unsigned)cls : CORUN__PM_NCLS - 1;
    pm->scls[i] = pm->cls[i];
    pm->ms[i] = s0 > 0 ? pm->sens[i * CORUN__PM_NLEV] / s0 : 1.0;
    pm->mp[i] = p0 > 0 ? pm->press[i * CORUN__PM_NLEV] / p0 : 1.0;
    pm->mf[i] = corun_profile_mem_share(ipc, t->llc_mpki);
    full_clock_mf(pm, t, i);
    corun__core_use(cls, &cu);
    pm->dem[i] = cu.issue * (1 - pm->mf[i]) + CORUN__PM_HOLD * pm->mf[i];
    pm->mlp[i] = cu.mlp;
    pm->pen[i] = cu.smt_pen;
}

/*
 * Where the tasks of @snap were measured, when some core was crowded there
 * (more than two busy CPUs): each task's CPU in *@cpu (-1 for none, or a
 * CPU of no core), how many tasks each CPU ran in *@cnt and how many busy
 * CPUs each core had in *@corecnt, malloc'd. All three NULL where no core
 * was crowded, or none can be (at most two threads a core): the usual case,
 * which costs no allocation. 0, or -ENOMEM with nothing allocated.
 */
static int crowd_counts(const struct corun__pm *pm, const struct corun_snapshot *snap, int **cpu,
                        unsigned **cnt, unsigned **corecnt)
{
    bool any = false;

    *cpu = NULL;
    *cnt = *corecnt = NULL;
    if (!pm->ncore || !pm->n || corun_topo_info(pm->topo)->smt_width <= 2)
        return 0;
    *cnt = calloc(pm->ncpus, sizeof(**cnt));
    *corecnt = calloc(pm->ncore, sizeof(**corecnt));
    *cpu = malloc(pm->n * sizeof(**cpu));
    if (*cnt && *corecnt && *cpu)
        for (unsigned i = 0; i < pm->n; i++) {
            int c = snap->tasks[i].cpu;

            (*cpu)[i] = c >= 0 && (unsigned)c < pm->ncpus && pm->core[c] >= 0 ? c : -1;
            if ((*cpu)[i] >= 0 && !(*cnt)[c]++)
                any |= ++(*corecnt)[pm->core[c]] > 2;
        }
    if (!any) {
        bool oom = !*cnt || !*corecnt || !*cpu;

        free(*cpu);
        free(*cnt);
        free(*corecnt);
        *cpu = NULL;
        *cnt = *corecnt = NULL;
        return oom ? -ENOMEM : 0;
    }
    return 0;
}

/*
 * crowd_reread() for the @k tasks @idx of one crowded core: each task's
 * figures read again at its IPC times 1 plus the core-level extra time the
 * crowd model gives it there (@x, a scratch array indexed by task), until
 * those extra times move by less than a thousandth (they climb: a higher
 * IPC is a smaller memory share, on which the issue stretch weighs more;
 * on six threads of an SMT8 core it took ten rounds), at most 50 rounds.
 */
static void core_reread(struct corun__pm *pm, const struct corun_snapshot *snap,
                        const unsigned *idx, unsigned k, const int *cpu, const unsigned *cnt,
                        const enum corun_class *cls0, double *x)
{
    for (int round = 0; round < 50; round++) {
        double cr[2], moved = 0;

        corun__pm_crowd(pm, idx, k, cpu, cnt, cr);
        for (unsigned q = 0; q < k; q++) {
            unsigned i = idx[q];
            double v = corun__pm_crowd_x(pm, i, cr);

            if (round && fabs(v - x[i]) / (1 + x[i]) > moved)
                moved = fabs(v - x[i]) / (1 + x[i]);
            x[i] = v;
        }
        if (round && moved < 1e-3)
            break;
        for (unsigned q = 0; q < k; q++) {
            const struct corun_task_profile *t = &snap->tasks[idx[q]];
            double ipc = t->ipc * (1 + x[idx[q]]);
            enum corun_class c = cls0[idx[q]];

            if (!isfinite(ipc))
                continue;
            if (!t->cls_hint) {
                c = corun_profile_classify(ipc, t->llc_mpki, t->llc_miss_ratio);
                if (c == CORUN_CLASS_STREAMING && ipc < CORUN__PM_CROWD_STREAM_IPC)
                    c = CORUN_CLASS_RABBIT;
            }
            task_figures(pm, t, idx[q], c, cls0[idx[q]], ipc);
        }
    }
}

/*
 * A task measured on a crowded core (corun__pm_crowd()) shows the IPC the
 * crowd leaves it. Read as it is, that IPC made the predictor take every
 * task there for a memory-bound one, and a streamer for a pointer chaser:
 * on bench/heldout10's POWER9 SMT8, five or six tasks a core, the 16
 * streamers measured IPCs of 0.04-0.18 and were all classed chasing (the
 * rabbits too), with a chaser's few misses in flight, so the predictor saw
 * neither what they take from a core's miss buffers nor what stacking
 * them frees; and a compute task's memory share was read at 0.8-0.9, so
 * the crowd's issue stretch seemed to cost it little. So each such task
 * is read again at its IPC times 1 plus the core-level extra time the
 * crowd model gives it where it was measured (its IPC alone, as far as
 * the model knows), to a fixed point (core_reread(): the extra time
 * depends on the figures read). Its class is read again too, unless a
 * caller gave it: the POWER9's streamers came out at 0.30-0.63, its
 * rabbits at 0.20-0.34, its chasers at 0.06-0.09. One exception to the
 * classifier: a task's share of a crowded core's caches is a sliver, so a
 * high miss ratio does not say streaming there; the IPC must say it too
 * (the classifier's 0.45). Without it ThunderX2's rabbits, twenty-eight
 * cores to its one L3 (bench/heldout11), came out at 0.26-0.44, were
 * taken for streamers, and the set's capture fell 2-3 points. @cpu,
 * @cnt and @corecnt are crowd_counts()'s: NULL, no crowded core and
 * nothing to do. 0, or -ENOMEM.
 */
static int crowd_reread(struct corun__pm *pm, const struct corun_snapshot *snap, const int *cpu,
                        const unsigned *cnt, const unsigned *corecnt)
{
    unsigned n = pm->n, *start = NULL, *idx = NULL;
    enum corun_class *cls0;
    double *x;
    int err = -ENOMEM;

    if (!cpu)
        return 0;
    x = malloc(n * sizeof(*x));
    cls0 = malloc(n * sizeof(*cls0));
    if (!x || !cls0 || by_core(pm, cpu, &start, &idx))
        goto out;
    for (unsigned i = 0; i < n; i++)
        cls0[i] = pm->cls[i] < CORUN_NCLASSES ? (enum corun_class)pm->cls[i] : CORUN_CLASS_UNKNOWN;
    for (unsigned k = 0; k < pm->ncore; k++) {
        unsigned from = k ? start[k - 1] : 0;

        if (corecnt[k] > 2)
            core_reread(pm, snap, idx + from, start[k] - from, cpu, cnt, cls0, x);
    }
    err = 0;
out:
    free(start);
    free(idx);
    free(x);
    free(cls0);
    return err;
}

/*
 * A rabbit squeezed out of its cache misses almost always, as a streamer
 * does, and the classifier takes it for one: over bench/heldout3-11 (mixed
 * and adversarial 16 and 32, seed 1) 180 of the tasks classed streaming were
 * rabbits, given a streamer's L3 sensitivity of 0.03 (a rabbit's is 0.90),
 * so the predictor never gave them a cache back. What tells them apart is
 * how many misses each keeps in flight: a streamer 6-10, a rabbit 1.5-3, so
 * at the same memory latency a rabbit completes fewer misses a cycle. A task
 * classed streaming (not by its caller) that misses per cycle (misses per
 * instruction times IPC) less than CORUN__PM_SQUEEZED_MPC of the fastest-
 * missing streamer on its memory node (that of the CPU it was measured on:
 * the latency its misses see is that node's) is read as a rabbit in the L2
 * and L3, and in what its SMT sibling costs it once it has lost its L3 (its
 * spill row, corun_profile_core_spill(): a rabbit's misses then go to
 * memory; a streamer's went there anyway). Over those runs, against the
 * run's fastest streamer, the rabbits came out at 0.26-0.50 (72% below
 * 0.45), and no streamer measured on a core of at most two busy threads
 * below 0.51.
 *
 * At the core and the memory it stays as classed: there what counts is the
 * stream of misses it makes, a streamer's at about half the rate, not what a
 * cache would do for it. Read as a rabbit at the core too, bench/heldout7's
 * Xeon D-1541 adversarial 16 (seed 1) fell from +1.5% to -1.5% over the
 * baseline: the pair table's rabbits were fitted beside caches they fit in,
 * and there, 1.5 MB of L3 a core, its rabbit column is 1.5-2 times the
 * table's (bench/fit-core-pair). Read as one at the memory too, heldout5's
 * EPYC 7551P adversarial 64 fell below DI with seeds 1 and 7. With a
 * streamer's spill row, the fixtures' hybrid mixed 8 (seed 1) fell below DI:
 * its rabbit, beside a chaser, was predicted at 0.34 where the simulator has
 * 0.22.
 *
 * Tasks on crowded cores are left to crowd_reread(), which reads their IPCs
 * back first, and tasks measured on no known CPU as they are; a node without
 * a streamer that misses fast has no reference, and nothing there is read
 * again (@cpu and @corecnt are crowd_counts()'s). 0, or -ENOMEM.
 */
static int squeezed_rabbits(struct corun__pm *pm, const struct corun_snapshot *snap, const int *cpu,
                            const unsigned *corecnt)
{
    /* per memory node, and last for CPUs of none */
    double *top = calloc(pm->ndom[3] + 1, sizeof(*top));

    if (!top)
        return -ENOMEM;
    /* Twice: each node's fastest streamer, then those below it. */
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < pm->n; i++) {
            const struct corun_task_profile *t = &snap->tasks[i];
            double v = t->ipc * t->llc_mpki;
            int d;

            if (pm->cls[i] != CORUN_CLASS_STREAMING || !isfinite(v) || t->cpu < 0 ||
                (unsigned)t->cpu >= pm->ncpus ||
                (cpu && cpu[i] >= 0 && corecnt[pm->core[cpu[i]]] > 2))
                continue;
            d = pm->node[t->cpu] >= 0 ? pm->node[t->cpu] : (int)pm->ndom[3];
            if (!pass && v > top[d])
                top[d] = v;
            else if (pass && !t->cls_hint && v < CORUN__PM_SQUEEZED_MPC * top[d]) {
                level_figures(pm, t, i, CORUN_CLASS_RABBIT, CORUN_CLASS_STREAMING, 1, 3);
                pm->scls[i] = CORUN_CLASS_RABBIT;
            }
        }
    free(top);
    return 0;
}

int corun__pm_init(struct corun__pm *pm, const struct corun_snapshot *snap)
{
    unsigned n = snap->ntasks, nc = corun_topo_ncpus(snap->topo);
    struct corun__cache_geom geom;

    memset(pm, 0, sizeof(*pm));
    corun__cache_geom(snap->topo, &geom);
    pm->geom = geom;
    pm->topo = snap->topo;
    pm->mmc = snap->mem_follows && snap->mem_move_cost > 0 ? snap->mem_move_cost : 0;
    pm->turbo_rel = snap->turbo_n ? snap->turbo_rel : NULL;
    pm->crowd_load = snap->round > 0 && corun_topo_info(snap->topo)->smt_width > 2;
    pm->turbo_n = snap->turbo_rel ? snap->turbo_n : 0;
    pm->n = n;
    pm->ncpus = nc;
    pm->press = malloc((n ? n : 1) * CORUN__PM_NLEV * sizeof(double));
    pm->sens = malloc((n ? n : 1) * CORUN__PM_NLEV * sizeof(double));
    pm->u = calloc((n ? n : 1) * CORUN__PM_NLEV, sizeof(double));
    pm->eu = calloc((n ? n : 1) * CORUN__PM_NLEV, sizeof(double));
    pm->w = malloc((n ? n : 1) * sizeof(double));
    pm->mf = malloc((n ? n : 1) * sizeof(double));
    pm->dem = malloc((n ? n : 1) * sizeof(double));
    pm->mlp = malloc((n ? n : 1) * sizeof(double));
    pm->pen = malloc((n ? n : 1) * sizeof(double));
    pm->cap = malloc((nc ? nc : 1) * sizeof(double));
    pm->dom = malloc((nc ? nc : 1) * CORUN__PM_NLEV * sizeof(int));
    pm->scale = malloc((nc ? nc : 1) * CORUN__PM_NLEV * sizeof(double));
    pm->cls = malloc((n ? n : 1) * sizeof(unsigned));
    pm->scls = malloc((n ? n : 1) * sizeof(unsigned));
    pm->ms = malloc((n ? n : 1) * sizeof(double));
    pm->mp = malloc((n ? n : 1) * sizeof(double));
    pm->home = malloc((n ? n : 1) * sizeof(int));
    pm->mnode = malloc((n ? n : 1) * sizeof(int));
    pm->node = malloc((nc ? nc : 1) * sizeof(int));
    pm->pkg = malloc((nc ? nc : 1) * sizeof(int));
    pm->core = malloc((nc ? nc : 1) * sizeof(int));
    pm->npkg = corun_topo_ndomains(pm->topo, CORUN_LEVEL_PACKAGE);
    pm->ncore = corun_topo_ndomains(pm->topo, CORUN_LEVEL_CORE);
    pm->pkg_cores = calloc(pm->npkg ? pm->npkg : 1, sizeof(unsigned));
    if (!pm->home || !pm->mnode || !pm->node || !pm->pkg || !pm->core || !pm->pkg_cores ||
        !pm->press || !pm->sens || !pm->u || !pm->eu || !pm->w || !pm->mf || !pm->cap || !pm->dom ||
        !pm->scale || !pm->cls || !pm->scls || !pm->ms || !pm->mp || !pm->dem || !pm->mlp ||
        !pm->pen) {
        corun__pm_release(pm);
        return -ENOMEM;
    }
    for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
        pm->ndom[li] = corun_topo_ndomains(pm->topo, corun__pm_levels[li]);
    for (unsigned c = 0; c < nc; c++)
        for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
            pm->dom[c * CORUN__PM_NLEV + li] = corun__share_dom(
                pm->topo, c, corun__pm_levels[li], &geom, &pm->scale[c * CORUN__PM_NLEV + li]);
    fill_capacity(pm);
    for (unsigned c = 0; c < nc; c++) {
        const struct corun_topo_cpu *cpu = corun_topo_cpu(pm->topo, c);

        pm->node[c] = cpu->dom[CORUN_LEVEL_NUMA];
        pm->core[c] = cpu->dom[CORUN_LEVEL_CORE];
        pm->pkg[c] = cpu->dom[CORUN_LEVEL_PACKAGE];
        if (pm->core[c] < 0 || pm->pkg[c] < 0)
            pm->pkg[c] = -1; /* no turbo model without cores and packages */
        else if (cpu->smt_rank == 0 && cpu->usable)
            pm->pkg_cores[pm->pkg[c]]++;
    }
    for (unsigned v = 0; v < CORUN__PM_NCLS; v++)
        for (unsigned a = 0; a < CORUN__PM_NCLS; a++) {
            enum corun_class cv = v < CORUN_NCLASSES ? (enum corun_class)v : CORUN_CLASS_UNKNOWN;
            enum corun_class ca = a < CORUN_NCLASSES ? (enum corun_class)a : CORUN_CLASS_UNKNOWN;

            pm->spill[v][a] = corun_profile_core_spill(cv, ca);
        }
    for (unsigned i = 0; i < n; i++) {
        const struct corun_task_profile *t = &snap->tasks[i];
        enum corun_class cls = t->cls;

        if ((unsigned)cls >= CORUN_NCLASSES)
            cls = corun_profile_classify(t->ipc, t->llc_mpki, t->llc_miss_ratio);
        task_figures(pm, t, i, cls, cls, t->ipc);
        pm->w[i] = (isfinite(t->weight) && t->weight > 0) ? t->weight : 1.0;
        pm->home[i] = (t->home_known && t->home_node < pm->ndom[3]) ? (int)t->home_node : -1;
        pm->mnode[i] = pm->home[i] >= 0                               ? pm->home[i]
                       : t->cpu >= 0 && (unsigned)t->cpu < pm->ncpus ? pm->node[t->cpu]
                                                                      : -1;
        if (snap->mem_follows)
            pm->home[i] = -1; /* its memory will be where it runs */
    }
    {
        int *cpu;
        unsigned *cnt, *corecnt;
        int err = crowd_counts(pm, snap, &cpu, &cnt, &corecnt);

        if (!err)
            err = crowd_reread(pm, snap, cpu, cnt, corecnt);
        if (!err)
            err = squeezed_rabbits(pm, snap, cpu, corecnt);
        free(cpu);
        free(cnt);
        free(corecnt);
        if (err) {
            corun__pm_release(pm);
            return err;
        }
    }
    return miss_scale(pm, snap);
}

void corun__pm_release(struct corun__pm *pm)
{
    free(pm->press);
    free(pm->sens);
    free(pm->u);
    free(pm->eu);
    free(pm->w);
    free(pm->mf);
    free(pm->dem);
    free(pm->mlp);
    free(pm->pen);
    free(pm->cap);
    free(pm->dom);
    free(pm->scale);
    free(pm->cls);
    free(pm->scls);
    free(pm->ms);
    free(pm->mp);
    free(pm->home);
    free(pm->mnode);
    free(pm->node);
    free(pm->pkg);
    free(pm->core);
    free(pm->pkg_cores);
    memset(pm, 0, sizeof(*pm));
}

/*
 * corun__pm_crowd() of every crowded core of placement @cpu, @cnt and
 * @corecnt its tasks per CPU and busy CPUs per core, into *@crowd (2 per
 * core, malloc'd; NULL where no core is crowded, the usual case, which
 * costs no allocation): the placed tasks sorted by core (counting sort),
 * each crowded core's solved on its own. 0 or -ENOMEM.
 */
static int crowd_all(const struct corun__pm *pm, const int *cpu, const unsigned *cnt,
                     const unsigned *corecnt, double **crowd)
{
    unsigned *start, *idx;
    bool any = false;

    *crowd = NULL;
    for (unsigned k = 0; k < pm->ncore; k++)
        any |= corecnt[k] > 2;
    if (!any)
        return 0;
    *crowd = malloc(pm->ncore * 2 * sizeof(**crowd));
    if (!*crowd || by_core(pm, cpu, &start, &idx)) {
        free(*crowd);
        *crowd = NULL;
        return -ENOMEM;
    }
    for (unsigned k = 0; k < pm->ncore; k++)
        if (corecnt[k] > 2) {
            unsigned from = k ? start[k - 1] : 0;

            corun__pm_crowd(pm, idx + from, start[k] - from, cpu, cnt, *crowd + 2 * k);
        }
    free(start);
    free(idx);
    return 0;
}

double corun__pm_eval(const struct corun__pm *pm, const int *cpu, double *speed)
{
    return corun__pm_eval_crowd(pm, cpu, speed, NULL);
}

/* What task i loads memory with, as a share of its load alone. */
#define KEEP(i) (keep ? keep[i] : 1.0)

double corun__pm_eval_crowd(const struct corun__pm *pm, const int *cpu, double *speed, double *lost)
{
    double *sum[CORUN__PM_NLEV] = {0}, stp = 0;
    double *core3 = calloc(pm->ndom[0] ? pm->ndom[0] : 1, sizeof(*core3)), *crowd = NULL;
    double *keep = NULL; /* pm->crowd_load's, where a core is crowded; else 1 each */
    unsigned *cnt = calloc(pm->ncpus ? pm->ncpus : 1, sizeof(*cnt));
    unsigned *corecnt = calloc(pm->ncore ? pm->ncore : 1, sizeof(*corecnt));
    unsigned *active = calloc(pm->npkg ? pm->npkg : 1, sizeof(*active));
    int err = 0;

    for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
        /* The core level keeps one sum per class. */
        size_t per = li == 0 ? CORUN__PM_NCLS : 1;

        sum[li] = calloc((pm->ndom[li] ? pm->ndom[li] : 1) * per, sizeof(double));
        if (!sum[li])
            err = -ENOMEM;
    }
    if (!core3 || !cnt || !corecnt || !active || err) {
        stp = -ENOMEM;
        goto out_free;
    }
    for (unsigned i = 0; i < pm->n; i++) {
        if (cpu[i] < 0 || (unsigned)cpu[i] >= pm->ncpus)
            continue;
        /* busy CPUs per core, and busy cores per package */
        if (!cnt[cpu[i]]++ && pm->core[cpu[i]] >= 0 && !corecnt[pm->core[cpu[i]]]++ &&
            pm->pkg[cpu[i]] >= 0)
            active[pm->pkg[cpu[i]]]++;
    }
    if (crowd_all(pm, cpu, cnt, corecnt, &crowd) ||
        (pm->crowd_load && crowd && !(keep = malloc(pm->n * sizeof(*keep))))) {
        stp = -ENOMEM;
        goto out_free;
    }
    /* A task time-sharing a CPU with k-1 others presses 1/k of the time;
     * on a crowded core it loads memory at its speed there. */
    for (unsigned i = 0; i < pm->n; i++) {
        int k;

        if (keep)
            keep[i] = 1;
        if (cpu[i] < 0 || (unsigned)cpu[i] >= pm->ncpus)
            continue;
        k = pm->core[cpu[i]];
        if (keep && k >= 0 && corecnt[k] > 2)
            keep[i] = corun__pm_crowd_keep(pm, i, crowd + 2 * k);
        for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
            int d = pm->dom[cpu[i] * CORUN__PM_NLEV + li];

            if (d < 0)
                continue;
            if (li == 0) {
                sum[0][(size_t)d * CORUN__PM_NCLS + pm->cls[i]] += pm->mp[i] / cnt[cpu[i]];
                core3[d] += pm->press[i * CORUN__PM_NLEV + 2] / cnt[cpu[i]];
            } else if (li == 3 && pm->home[i] >= 0)
                sum[3][pm->home[i]] += KEEP(i) * pm->press[i * CORUN__PM_NLEV + 3] / cnt[cpu[i]];
            else
                sum[li][d] +=
                    (li == 3 ? KEEP(i) : 1) * pm->press[i * CORUN__PM_NLEV + li] / cnt[cpu[i]];
        }
    }
    for (unsigned i = 0; i < pm->n; i++) {
        double x = 0, xc = 0, xm = 0, xk = -1, s;

        if (cpu[i] < 0 || (unsigned)cpu[i] >= pm->ncpus) {
            s = 1.0;
        } else {
            for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
                int d = pm->dom[cpu[i] * CORUN__PM_NLEV + li];

                if (li == 3 && pm->home[i] >= 0)
                    xm +=
                        pm->sens[i * CORUN__PM_NLEV + 3] *
                        corun__pm_dmg(3,
                                      sum[3][pm->home[i]] -
                                          KEEP(i) * pm->press[i * CORUN__PM_NLEV + 3] / cnt[cpu[i]],
                                      corun__pm_scale(pm, (unsigned)cpu[i], 3));
                else if (d >= 0 && li == 0) {
                    int k = pm->core[cpu[i]];
                    unsigned busy = k >= 0 ? corecnt[k] : 1;
                    double xo = corun__pm_core_x(
                        pm, i, &sum[0][(size_t)d * CORUN__PM_NCLS], pm->mp[i] / cnt[cpu[i]],
                        corun__pm_l3_dmg(pm, (unsigned)cpu[i], sum[2], core3[d],
                                         pm->press[i * CORUN__PM_NLEV + 2] / cnt[cpu[i]]),
                        busy, crowd && k >= 0 ? crowd + 2 * k : NULL);

                    x += xo;
                    if (busy > 2)
                        xk = xo;
                } else if (d >= 0) {
                    double own =
                        (li == 3 ? KEEP(i) : 1) * pm->press[i * CORUN__PM_NLEV + li] / cnt[cpu[i]];
                    double v = pm->sens[i * CORUN__PM_NLEV + li] *
                               corun__pm_tdmg(pm, i, li, own, sum[li][d] - own,
                                              corun__pm_scale(pm, (unsigned)cpu[i], li));

                    if (li == 3)
                        xm += v;
                    else
                        xc += v;
                } else if (li == 2)
                    xc += corun__pm_no_l3(pm, i);
            }
            xm += corun__pm_remote_x(pm, i, (unsigned)cpu[i]);
            x += xc + xm * corun__pm_mem_amp(pm, i, xc);
            {
                int p = pm->pkg[cpu[i]];
                double g = p >= 0 ? corun__pm_turbo(pm, active[p], pm->pkg_cores[p]) : 1.0;

                s = corun__pm_cf(pm, i, (unsigned)cpu[i], g) / (1.0 + x) / cnt[cpu[i]];
            }
        }
        if (speed)
            speed[i] = s;
        if (lost)
            lost[i] = xk >= 0 ? pm->w[i] * s * xk : -1;
        stp += pm->w[i] * s;
    }
out_free:
    for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
        free(sum[li]);
    free(keep);
    free(core3);
    free(crowd);
    free(cnt);
    free(corecnt);
    free(active);
    return stp;
}
#undef KEEP

double corun__pm_pair_cost(const struct corun__pm *pm, unsigned a, unsigned b, unsigned cpu_a,
                           unsigned cpu_b, double d3a, double d3b)
{
    unsigned ca = pm->cls[a], cb = pm->cls[b];

    double xa = 0, xb = 0;

    for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
        int da = pm->dom[cpu_a * CORUN__PM_NLEV + li];

        if (da < 0 || da != pm->dom[cpu_b * CORUN__PM_NLEV + li])
            continue;
        if (li == 0) {
            xa +=
                pm->ms[a] * (pm->geom.pair[ca][cb] + d3a * pm->spill[pm->scls[a]][cb]) * pm->mp[b];
            xb +=
                pm->ms[b] * (pm->geom.pair[cb][ca] + d3b * pm->spill[pm->scls[b]][ca]) * pm->mp[a];
            continue;
        }
        xa += pm->sens[a * CORUN__PM_NLEV + li] *
              corun__pm_tdmg(pm, a, li, pm->press[a * CORUN__PM_NLEV + li],
                             pm->press[b * CORUN__PM_NLEV + li], corun__pm_scale(pm, cpu_a, li));
        xb += pm->sens[b * CORUN__PM_NLEV + li] *
              corun__pm_tdmg(pm, b, li, pm->press[b * CORUN__PM_NLEV + li],
                             pm->press[a * CORUN__PM_NLEV + li], corun__pm_scale(pm, cpu_b, li));
    }
    return pm->w[a] * corun__pm_cf(pm, a, cpu_a, 1.0) * (1.0 - 1.0 / (1.0 + xa)) +
           pm->w[b] * corun__pm_cf(pm, b, cpu_b, 1.0) * (1.0 - 1.0 / (1.0 + xb));
}

double corun_policy_predict(const struct corun_snapshot *snap, const int *cpu, double *speed)
{
    struct corun__pm pm;
    double stp;
    int err;

    if (!snap || !snap->topo || (snap->ntasks && (!snap->tasks || !cpu)))
        return -EINVAL;
    err = corun__pm_init(&pm, snap);
    if (err)
        return err;
    stp = corun__pm_eval(&pm, cpu, speed);
    corun__pm_release(&pm);
    return stp;
}

int corun_policy_check_plan(const struct corun_snapshot *snap, const struct corun_plan *plan)
{
    unsigned ncpus, usable;
    unsigned char *seen;
    int err = 0;

    if (!snap || !plan || !snap->topo || plan->ntasks != snap->ntasks ||
        (plan->ntasks && !plan->cpu))
        return -EINVAL;
    ncpus = corun_topo_ncpus(snap->topo);
    usable = corun_topo_info(snap->topo)->usable_pus;
    seen = calloc(ncpus ? ncpus : 1, 1);
    if (!seen)
        return -ENOMEM;
    for (unsigned i = 0; i < plan->ntasks && !err; i++) {
        int c = plan->cpu[i];

        if (c == -1)
            continue;
        if (c < 0 || (unsigned)c >= ncpus || !corun_topo_cpu(snap->topo, (unsigned)c)->usable)
            err = -EINVAL;
        else if (seen[c]++ && snap->ntasks <= usable)
            err = -EINVAL;
    }
    free(seen);
    return err;
}
