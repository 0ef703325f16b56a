/*
 * policy-corun.c — `corun`: interference-aware placement from learned
 * pressure and sensitivity, frequency- and capacity-aware. The default.
 *
 * What it does, in four steps on the predictor of policy-model.c:
 *  1. Slots. It picks which CPUs will hold tasks: every core's first thread
 *     before any second one, faster CPU kinds first, balanced across domains
 *     (the spread order), wrapping when tasks outnumber CPUs.
 *  2. Hierarchy. From the outermost level that splits the machine (memory
 *     domains, then LLCs, then L2 clusters) it deals tasks to the children of
 *     each domain, as many as their slots: most intense first, each to the
 *     child where its predicted weighted speed, minus the damage it would do
 *     to the tasks already there, is highest — pressure balanced against
 *     sensitivity, and the faster children going to the tasks that gain most
 *     from a faster clock (a low memory share).
 *  3. SMT. Inside a domain whose children are cores, it chooses which tasks
 *     share a core by a minimum-weight matching on predicted pair slowdown
 *     (exact by dynamic programming up to 14 tasks, greedy plus pair
 *     exchanges beyond); the tasks left unmatched — the SMT-adverse ones, when
 *     that helps — get a core of their own.
 *  4. Local search on the predicted objective (weighted STP minus a move
 *     cost per task moved from where it runs now), from the constructed
 *     placement and, when every task is placed, from the current one; the
 *     better wins, which is the hysteresis: a plan that does not beat the
 *     current placement by the move cost keeps it. With a turbo table in
 *     the snapshot, also from a plan built on fewer cores per package, at
 *     the nearest bin edge below: a bin is reached only by idling several
 *     cores at once, which no single move of the search does. A plan that
 *     puts more tasks on shared SMT cores than the best so far, or than
 *     where the tasks run, must win by a tenth of what the predictor says
 *     sharing costs the tasks it adds (spill included): its speeds of such
 *     tasks are its least sure. Where the predictor rates DI's plan within
 *     0.05% of the best one and it moves no more tasks, DI's is taken: a
 *     tie the predictor cannot break, which DI breaks on each task's own
 *     miss rate. A first plan that beats the kernel's placement by less
 *     than 0.1% is a tie, and the kernel's is kept. A plan that moves
 *     more tasks than the caller moves in a round (snapshot.max_moves) is
 *     reached in parts, each of which must pay for itself: it must beat
 *     the search from the current placement by a move cost more per task
 *     it moves beyond that one's.
 *
 * Source: ours. It combines the cache/memory-domain balancing of
 * Distributed Intensity (Zhuravlev et al., ASPLOS 2010), the SMT symbiosis of
 * SOS (Snavely & Tullsen, ASPLOS 2000) and of Feliu et al. (HPCA 2016), who
 * pair by matching on predicted interference, with a pressure/sensitivity
 * model in the spirit of Bubble-Up (Mars et al., MICRO 2011) learned online
 * from counters.
 *
 * Works well: mixed and adversarial mixes on machines with SMT, several LLCs
 * or memory domains, or hybrid cores — wherever who sits next to whom
 * matters and the profiles have seen enough co-runs.
 * Works badly: before it has learned (it starts from class priors, which can
 * be wrong for a given task); tasks whose phases change faster than the
 * engine's interval; effects it does not model (turbo lost by waking a
 * package, data shared between tasks, interference by unmanaged processes).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy-internal.h"

#define CORUN_DP_MAX 14
#define CORUN_RESTART_MAX 24 /* tasks: random restarts of the local search up to this */
#define CORUN_RESTARTS 4
#define P(pm, i, li) ((pm)->press[(i) * CORUN__PM_NLEV + (li)])
#define S(pm, i, li) ((pm)->sens[(i) * CORUN__PM_NLEV + (li)])
#define DOM(pm, c, li) ((pm)->dom[(c) * CORUN__PM_NLEV + (li)])

struct ctx {
    const struct corun__pm *pm;
    unsigned *slots; /* tasks per CPU the plan will hold */
    int *cpu;        /* the plan being built */
    int err;
};

/* ---- step 1: slots ---------------------------------------------------------- */

/*
 * Which CPUs hold how many tasks, in cx->slots: the spread order, with at
 * most @cap busy cores per package when @cap is not 0 (their second threads
 * then take the tasks the idle cores would have: a turbo bin higher can be
 * worth it). The number of CPUs it keeps goes to *@kept: fewer than the
 * tasks means some CPU holds two (a hybrid part's single-thread cores make
 * @cap cores hold fewer threads than the SMT width says). Returns 0 or
 * -ENOMEM.
 */
static int pick_slots(struct ctx *cx, unsigned cap, unsigned *kept)
{
    const struct corun__pm *pm = cx->pm;
    unsigned *order, n, k = 0;
    int err = corun__cpus_spread(pm->topo, &order, &n);

    if (err)
        return err;
    /* Stable by capacity within the spread order's SMT ranks: a fast core's
     * first thread before a slow one's, a slow core before a second thread. */
    for (unsigned i = 1; i < n; i++) {
        unsigned c = order[i], j = i;
        unsigned rc = corun_topo_cpu(pm->topo, c)->smt_rank;

        while (j > 0) {
            unsigned p = order[j - 1];
            unsigned rp = corun_topo_cpu(pm->topo, p)->smt_rank;

            if (rp < rc || (rp == rc && pm->cap[p] >= pm->cap[c] - 1e-9))
                break;
            order[j] = p;
            j--;
        }
        order[j] = c;
    }
    memset(cx->slots, 0, pm->ncpus * sizeof(*cx->slots));
    if (cap) {
        /* Keep the CPUs of the first @cap cores of each package (in spread
         * order) and their siblings. */
        unsigned *used = calloc(pm->npkg ? pm->npkg : 1, sizeof(*used)), m = 0;
        unsigned char *core_on = calloc(pm->ncore ? pm->ncore : 1, 1);

        if (!used || !core_on) {
            free(used);
            free(core_on);
            free(order);
            return -ENOMEM;
        }
        for (unsigned i = 0; i < n; i++) {
            unsigned c = order[i];
            int p = pm->pkg[c], core = pm->core[c];

            if (p < 0 || core < 0) {
                order[m++] = c;
                continue;
            }
            if (!core_on[core] && corun_topo_cpu(pm->topo, c)->smt_rank == 0 && used[p] < cap) {
                core_on[core] = 1;
                used[p]++;
            }
            if (core_on[core])
                order[m++] = c;
        }
        free(used);
        free(core_on);
        n = m ? m : n;
    }
    for (unsigned t = 0; t < pm->n; t++)
        cx->slots[order[k++ % n]]++;
    *kept = n;
    free(order);
    return 0;
}

/* ---- step 3: SMT pairing ---------------------------------------------------- */

static int by_cap_desc(const void *x, const void *y, void *arg)
{
    const struct corun__pm *pm = arg;
    unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;

    if (pm->cap[a] != pm->cap[b])
        return pm->cap[a] > pm->cap[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/*
 * Places @tasks on the cores @cores (one representative CPU each: its first
 * usable PU) whose slot counts are 1 or 2: pairs by matching, singles alone,
 * the faster cores to the singles that gain most. Returns 0 or -ENOMEM.
 */
static int place_cores(struct ctx *cx, const unsigned *tasks, unsigned nt, unsigned *cores,
                       unsigned ncores)
{
    const struct corun__pm *pm = cx->pm;
    unsigned *pairc = NULL, *singc = NULL, npc = 0, nsc = 0, *singles = NULL, ns = 0;
    double *cost = NULL;
    int *mate = NULL, err = -ENOMEM;

    pairc = malloc((ncores + 1) * sizeof(*pairc));
    singc = malloc((ncores + 1) * sizeof(*singc));
    singles = malloc((nt + 1) * sizeof(*singles));
    cost = malloc(((size_t)nt * nt + 1) * sizeof(*cost));
    mate = malloc((nt + 1) * sizeof(*mate));
    if (!pairc || !singc || !singles || !cost || !mate)
        goto out_free;
    npc = nsc = 0;
    for (unsigned k = 0; k < ncores; k++) {
        unsigned q = 0;
        const struct corun_topo_domain *d =
            corun_topo_domain(pm->topo, CORUN_LEVEL_CORE, (unsigned)DOM(pm, cores[k], 0));

        for (unsigned j = 0; j < d->ncpus; j++)
            q += cx->slots[d->cpus[j]];
        if (q >= 2)
            pairc[npc++] = cores[k];
        else if (q == 1)
            singc[nsc++] = cores[k];
    }
    if (2 * npc + nsc != nt) { /* slots and tasks disagree: cannot happen */
        err = -EINVAL;
        goto out_free;
    }
    qsort_r(singc, nsc, sizeof(*singc), by_cap_desc, (void *)pm);
    {
        /* Pair costs on a representative paired core (the first). */
        unsigned c0 = npc ? pairc[0] : 0, c1 = c0;

        if (npc) {
            const struct corun_topo_domain *d =
                corun_topo_domain(pm->topo, CORUN_LEVEL_CORE, (unsigned)DOM(pm, c0, 0));

            for (unsigned j = 0; j < d->ncpus; j++)
                if (d->cpus[j] != c0 && corun_topo_cpu(pm->topo, d->cpus[j])->usable) {
                    c1 = d->cpus[j];
                    break;
                }
        }
        /* The tasks here share c0's L3 (when it has one): what a pair
         * loses there to the others weighs the misses each sibling adds.
         * An L3 that is the core's own holds the pair alone
         * (corun__l3_others()). */
        double p3 = 0;

        for (unsigned a = 0; a < nt; a++)
            p3 += P(pm, tasks[a], 2);
        for (unsigned a = 0; a < nt; a++)
            for (unsigned b = 0; b < nt; b++) {
                double pa = P(pm, tasks[a], 2), pb = P(pm, tasks[b], 2);
                double sc = corun__pm_scale(pm, c0, 2), l3 = pm->geom.l3_core ? pa + pb : p3;
                double d3a = 1, d3b = 1; /* without an L3, as corun__pm_l3_dmg() */

                if (a == b) {
                    cost[a * nt + b] = 0;
                    continue;
                }
                if (DOM(pm, c0, 2) >= 0) {
                    d3a = corun__pm_dmg(2, corun__l3_others(&pm->geom, l3, pa + pb, pa), sc);
                    d3b = corun__pm_dmg(2, corun__l3_others(&pm->geom, l3, pa + pb, pb), sc);
                }
                cost[a * nt + b] = corun__pm_pair_cost(pm, tasks[a], tasks[b], c0, c1, d3a, d3b);
            }
    }
    err = nt <= CORUN_DP_MAX ? corun__match_exact(cost, nt, npc, mate)
                             : corun__match_greedy(cost, nt, npc, mate);
    if (err)
        goto out_free;
    /* Pairs to paired cores, each task on its own thread of the core. */
    {
        unsigned pk = 0;

        for (unsigned a = 0; a < nt; a++) {
            const struct corun_topo_domain *d;
            unsigned put = 0;

            if (mate[a] < 0) {
                singles[ns++] = tasks[a];
                continue;
            }
            if ((unsigned)mate[a] < a)
                continue;
            d = corun_topo_domain(pm->topo, CORUN_LEVEL_CORE, (unsigned)DOM(pm, pairc[pk], 0));
            for (unsigned j = 0; j < d->ncpus && put < 2; j++)
                if (corun_topo_cpu(pm->topo, d->cpus[j])->usable)
                    cx->cpu[put++ ? tasks[mate[a]] : tasks[a]] = (int)d->cpus[j];
            if (put < 2) /* one usable thread only: share it */
                cx->cpu[tasks[mate[a]]] = cx->cpu[tasks[a]];
            pk++;
        }
    }
    /* Singles: the most compute-bound on the fastest cores. */
    for (unsigned i = 1; i < ns; i++) {
        unsigned t = singles[i], j = i;

        while (j > 0 && pm->mf[singles[j - 1]] > pm->mf[t]) {
            singles[j] = singles[j - 1];
            j--;
        }
        singles[j] = t;
    }
    for (unsigned i = 0; i < ns; i++)
        cx->cpu[singles[i]] = (int)singc[i];
    err = 0;
out_free:
    free(pairc);
    free(singc);
    free(singles);
    free(cost);
    free(mate);
    return err;
}

/* ---- step 2: the hierarchy -------------------------------------------------- */

struct child {
    unsigned *cpus, ncpus;
    unsigned quota, taken;
    double cap;                     /* mean capacity of its slots */
    bool impl[CORUN__PM_NLEV];      /* levels its tasks all share */
    double psum[CORUN__PM_NLEV];    /* pressure placed there so far */
    double ssum[CORUN__PM_NLEV];    /* weighted sensitivity placed there */
    unsigned *tasks, ntasks;
};

struct keyed {
    unsigned t;
    double key;
};

static int by_key(const void *x, const void *y)
{
    const struct keyed *a = x, *b = y;

    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

static int distribute(struct ctx *cx, unsigned *cpus, unsigned ncpus, unsigned *tasks,
                      unsigned nt);

/* Whether all of @cpus share one domain at level index @li (and it exists). */
static bool share_all(const struct corun__pm *pm, const unsigned *cpus, unsigned n, unsigned li)
{
    int d = DOM(pm, cpus[0], li);

    if (d < 0)
        return false;
    for (unsigned i = 1; i < n; i++)
        if (DOM(pm, cpus[i], li) != d)
            return false;
    return true;
}

/* Whether all CPUs of @c are in one NUMA node. */
static bool share_all_node(const struct corun__pm *pm, const struct child *c)
{
    for (unsigned i = 1; i < c->ncpus; i++)
        if (pm->node[c->cpus[i]] != pm->node[c->cpus[0]])
            return false;
    return true;
}

/* A greedy deal of @tasks to @ch by predicted gain minus damage. */
static void deal(struct ctx *cx, struct child *ch, unsigned nch, unsigned *tasks, unsigned nt)
{
    const struct corun__pm *pm = cx->pm;
    struct keyed *order = malloc((nt ? nt : 1) * sizeof(*order));

    if (!order) {
        cx->err = -ENOMEM;
        return;
    }
    for (unsigned i = 0; i < nt; i++) {
        double key = 0;

        for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
            key += P(pm, tasks[i], li) + S(pm, tasks[i], li);
        order[i] = (struct keyed){tasks[i], key};
    }
    qsort(order, nt, sizeof(*order), by_key);
    for (unsigned i = 0; i < nt; i++) {
        unsigned t = order[i].t;
        double best = -INFINITY;
        int bk = -1;

        for (unsigned k = 0; k < nch; k++) {
            struct child *c = &ch[k];
            double x = 0, damage = 0, cf, v;

            if (c->taken >= c->quota)
                continue;
            /* Tasks time-sharing a CPU press 1/k of the time each. */
            double share = c->quota > c->ncpus ? (double)c->quota / c->ncpus : 1.0;

            for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
                if (!c->impl[li])
                    continue;
                double sc = corun__pm_scale(pm, c->cpus[0], li);

                x += S(pm, t, li) *
                     corun__pm_tdmg(pm, t, li, P(pm, t, li) / share, c->psum[li] / share, sc);
                /* What it costs the others here: their summed
                 * sensitivity, at the share lost by a task of pressure
                 * 1 (no one victim; the local search weighs each). */
                damage += c->ssum[li] / share *
                          (corun__pm_dmg(li, (c->psum[li] + P(pm, t, li)) / share, sc) -
                           corun__pm_dmg(li, c->psum[li] / share, sc));
            }
            /* Away from its memory: remote latency on its stalls. */
            if (pm->home[t] >= 0 && pm->node[c->cpus[0]] >= 0 &&
                share_all_node(pm, c) && pm->node[c->cpus[0]] != pm->home[t])
                x += pm->mf[t] * (CORUN_REMOTE_LATENCY - 1);
            cf = c->cap >= 0.999 ? 1.0 : 1.0 / ((1.0 - pm->mf[t]) / c->cap + pm->mf[t]);
            v = pm->w[t] * cf / (1.0 + x) / share - damage;
            if (v > best + 1e-12) {
                best = v;
                bk = (int)k;
            }
        }
        ch[bk].tasks[ch[bk].ntasks++] = t;
        ch[bk].taken++;
        for (unsigned li = 0; li < CORUN__PM_NLEV; li++) {
            ch[bk].psum[li] += P(pm, t, li);
            ch[bk].ssum[li] += pm->w[t] * S(pm, t, li);
        }
    }
    free(order);
}

/* The tasks of a single core (or of CPUs no level splits): round-robin over
 * its usable CPUs by their slots. */
static void leaf(struct ctx *cx, const unsigned *cpus, unsigned ncpus, const unsigned *tasks,
                 unsigned nt)
{
    unsigned k = 0;

    for (unsigned round = 0; k < nt; round++) {
        bool any = false;

        for (unsigned i = 0; i < ncpus && k < nt; i++)
            if (cx->slots[cpus[i]] > round) {
                cx->cpu[tasks[k++]] = (int)cpus[i];
                any = true;
            }
        if (!any) /* more tasks than slots: cannot happen, but stay total */
            for (unsigned i = 0; i < ncpus && k < nt; i++)
                cx->cpu[tasks[k++]] = (int)cpus[i];
    }
}

static int distribute(struct ctx *cx, unsigned *cpus, unsigned ncpus, unsigned *tasks,
                      unsigned nt)
{
    const struct corun__pm *pm = cx->pm;
    struct child *ch = NULL;
    unsigned nch = 0, *cbuf = NULL, *tbuf = NULL;
    int split = -1, err = 0;
    bool cores = true, pairable = true;

    if (!nt)
        return 0;
    for (int li = CORUN__PM_NLEV - 1; li >= 0 && split < 0; li--)
        for (unsigned i = 1; i < ncpus; i++)
            if (DOM(pm, cpus[i], li) != DOM(pm, cpus[0], li)) {
                split = li;
                break;
            }
    if (split < 0) {
        leaf(cx, cpus, ncpus, tasks, nt);
        return 0;
    }
    ch = calloc(ncpus, sizeof(*ch));
    cbuf = malloc(ncpus * sizeof(*cbuf));
    tbuf = malloc(nt * sizeof(*tbuf));
    if (!ch || !cbuf || !tbuf) {
        err = -ENOMEM;
        goto out_free;
    }
    /* Children: CPUs grouped by their domain at @split, first-seen order. */
    {
        unsigned fill = 0;
        bool *done = calloc(ncpus, sizeof(*done));

        if (!done) {
            err = -ENOMEM;
            goto out_free;
        }
        for (unsigned i = 0; i < ncpus; i++) {
            struct child *c;
            double capsum = 0;
            unsigned nslots = 0;

            if (done[i])
                continue;
            c = &ch[nch++];
            c->cpus = cbuf + fill;
            for (unsigned j = i; j < ncpus; j++)
                if (!done[j] && DOM(pm, cpus[j], split) == DOM(pm, cpus[i], split)) {
                    done[j] = true;
                    c->cpus[c->ncpus++] = cpus[j];
                    c->quota += cx->slots[cpus[j]];
                    capsum += pm->cap[cpus[j]] * cx->slots[cpus[j]];
                    nslots += cx->slots[cpus[j]];
                }
            fill += c->ncpus;
            c->cap = nslots ? capsum / nslots : 1.0;
            for (unsigned li = 0; li <= (unsigned)split; li++)
                c->impl[li] = share_all(pm, c->cpus, c->ncpus, li);
            if (!share_all(pm, c->cpus, c->ncpus, 0))
                cores = false;
            if (c->quota > 2)
                pairable = false;
        }
        free(done);
    }
    if (cores && pairable) {
        /* Children are cores with at most two slots: SMT matching. */
        unsigned *reps = malloc(nch * sizeof(*reps)), nreps = 0;

        if (!reps) {
            err = -ENOMEM;
            goto out_free;
        }
        for (unsigned k = 0; k < nch; k++)
            if (ch[k].quota)
                reps[nreps++] = ch[k].cpus[0];
        err = place_cores(cx, tasks, nt, reps, nreps);
        free(reps);
        goto out_free;
    }
    {
        unsigned fill = 0;

        for (unsigned k = 0; k < nch; k++) {
            ch[k].tasks = tbuf + fill;
            fill += ch[k].quota;
        }
    }
    deal(cx, ch, nch, tasks, nt);
    for (unsigned k = 0; k < nch && !cx->err && !err; k++)
        err = distribute(cx, ch[k].cpus, ch[k].ncpus, ch[k].tasks, ch[k].ntasks);
out_free:
    free(ch);
    free(cbuf);
    free(tbuf);
    return err ? err : cx->err;
}

/* ---- the policy ------------------------------------------------------------- */

static bool all_placed(const struct corun_snapshot *snap)
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

/*
 * Where the tasks run now, with none time-sharing a CPU while another of
 * @cpus[0..@ncpus) is idle: each task after the first on a CPU goes to the
 * idle CPU that shares the innermost domain with it. The local search only
 * moves tasks to idle CPUs or swaps them, so it never undoes time-sharing
 * it starts from, and the predictor can rate time-sharing above spreading
 * (a streamer given half a CPU presses its neighbours half as hard); a plan
 * that time-shares where it need not is not one to give (and
 * corun_policy_check_plan() refuses it). More tasks than CPUs: @v as it is.
 */
static void deshare(const struct corun__pm *pm, const unsigned *cpus, unsigned ncpus, int *v,
                    unsigned n)
{
    unsigned char *busy;

    if (n > ncpus || !(busy = calloc(pm->ncpus ? pm->ncpus : 1, 1)))
        return; /* without memory, @v stays as valid as it came */
    for (unsigned i = 0; i < n; i++) {
        int best = -1;
        enum corun_level lv = CORUN_NLEVELS;

        if (!busy[v[i]]) {
            busy[v[i]] = 1;
            continue;
        }
        for (unsigned k = 0; k < ncpus; k++) {
            enum corun_level l;

            if (busy[cpus[k]])
                continue;
            l = corun_topo_shared_level(pm->topo, (unsigned)v[i], cpus[k]);
            if (best < 0 || l < lv) {
                best = (int)cpus[k];
                lv = l;
            }
        }
        v[i] = best; /* found: n <= ncpus */
        busy[best] = 1;
    }
    free(busy);
}

/* Budget of one local search, in task recomputations: enough for the
 * systematic search of fixture-sized cases. Where that reaches the cap
 * (100 tasks and more), the cap bounds the whole plan instead and its
 * @searches share it, so that 2048 tasks on 512 CPUs stay within 20 ms
 * whether placed from nothing (one search) or from where they run (two:
 * bench/place-scale, about 45 ns per recomputation). */
#define CORUN_SEARCH_CAP 300000
static uint64_t search_budget(unsigned n, unsigned searches)
{
    uint64_t b = 2000ull * n + 100000;

    return b >= CORUN_SEARCH_CAP ? CORUN_SEARCH_CAP / (searches ? searches : 1) : b;
}

/*
 * The doubt about a plan's tasks that share SMT cores: a tenth of what the
 * predictor says sharing costs them. Its pair speeds err by about 6% of
 * that cost (32 compute-int tasks on icx40: 0.562 predicted where the
 * simulator has 0.542, of 0.91 alone), and a plan that shares cores for a
 * turbo bin or a faster core's second thread can win by less (0.03% there,
 * which lost 0.4%). A plan must beat another by more than the doubt it
 * adds; sheep that lose little by sharing are doubted little. The cost
 * counts what the L3's other tasks add to it (the spill of
 * corun_profile_core_spill()), the part that varies most from machine to
 * machine: on skx28 two sheep paired beside six rabbits lost 19% each
 * where the predictor said 3%, a plan that paired them for a turbo bin
 * lost 2.5% while it was tried, and only the pairs' idle-L3 cost was
 * doubted. On a crowded core (more than two busy threads, corun__pm_crowd())
 * the cost is what the crowd takes from each task's speed, to first order,
 * not a sum over its pairs, which grows with the square of the threads:
 * on bench/heldout10's POWER9 SMT8 (mixed 64) the pairs' doubt held the
 * kernel's placement against a first plan predicted 14% better, which
 * simulated 20% better.
 */
#define CORUN_SMT_DOUBT 0.1

/*
 * A first plan within this share of the predicted objective of where the
 * kernel put the tasks is a tie the predictor cannot break: its errors in
 * ranking two placements are larger (docs/internals/model.md), and the
 * first plan, unlike the later ones, pays no move cost. 16 streamers on
 * milan64 moved for a predicted 0.02% and lost 0.16%.
 */
#define CORUN_TIE 0.001

/*
 * DI's plan (policy-di.c) is taken when the predictor rates it within this
 * share of the best plan's objective (move costs included) and it moves no
 * more tasks than that plan: a tie the predictor cannot break, and DI
 * breaks it on what the predictor does not use, each task's own miss rate
 * (the predictor's core table goes by class, and two tasks of a class are
 * one to it). A tie buys no moves: where the kernel's placement needs one
 * swap, the swap is the plan (DI's plan is first aligned with where the
 * tasks run, corun__align_cores()). On bench/heldout5's i7-6700 mixed 8 (seed 1)
 * corun's final placement and DI's tied to 0.01% in the predictor and
 * simulated 4.305 and 4.313; docs/internals/policy.md has the figures.
 * DI deals each task by a scan of the free CPUs, quadratic in the tasks
 * (18 ms for bench/place-scale's 2048): past CORUN_DI_TIE_MAX tasks it is
 * not consulted (at 256, a sixty-fourth of that).
 */
#define CORUN_DI_TIE     0.0005
#define CORUN_DI_TIE_MAX 256

/* The doubt about plan @cpu, spill included (CORUN_SMT_DOUBT); @scratch
 * holds ncore + n entries, @l3 room for the L3 pressure of each L3, then of
 * each core, then a figure per task. */
static double share_doubt(const struct corun__pm *pm, const int *cpu, int *scratch, double *l3)
{
    int *first = scratch, *next = scratch + pm->ncore;
    double *sum3 = l3, *core3 = l3 + pm->ndom[2], *lost = core3 + pm->ncore, cost = 0;

    memset(l3, 0, (pm->ndom[2] + pm->ncore) * sizeof(*l3));
    /* Where a core can hold more than two busy threads, what the crowded
     * ones cost (all pairs, should that fail for memory). */
    if (corun_topo_info(pm->topo)->smt_width <= 2 || corun__pm_eval_crowd(pm, cpu, NULL, lost) < 0)
        for (unsigned i = 0; i < pm->n; i++)
            lost[i] = -1;
    for (unsigned i = 0; i < pm->n; i++)
        if (lost[i] >= 0)
            cost += lost[i];
    for (unsigned i = 0; i < pm->n; i++) {
        int d;

        if (cpu[i] < 0)
            continue;
        if ((d = pm->dom[cpu[i] * CORUN__PM_NLEV + 2]) >= 0)
            sum3[d] += pm->press[i * CORUN__PM_NLEV + 2];
        if (pm->core[cpu[i]] >= 0)
            core3[pm->core[cpu[i]]] += pm->press[i * CORUN__PM_NLEV + 2];
    }
    for (unsigned c = 0; c < pm->ncore; c++)
        first[c] = -1;
    for (unsigned i = 0; i < pm->n; i++) {
        int c = cpu[i] >= 0 ? pm->core[cpu[i]] : -1;

        next[i] = -1;
        if (c < 0)
            continue;
        for (int j = first[c]; j >= 0 && lost[i] < 0; j = next[j])
            if (cpu[j] != cpu[i]) {
                double d3i = corun__pm_l3_dmg(pm, (unsigned)cpu[i], sum3, core3[c],
                                              pm->press[i * CORUN__PM_NLEV + 2]);
                double d3j = corun__pm_l3_dmg(pm, (unsigned)cpu[j], sum3, core3[c],
                                              pm->press[(unsigned)j * CORUN__PM_NLEV + 2]);

                cost += corun__pm_pair_cost(pm, (unsigned)j, i, (unsigned)cpu[j], (unsigned)cpu[i],
                                            d3j, d3i);
            }
        next[i] = first[c];
        first[c] = (int)i;
    }
    return CORUN_SMT_DOUBT * cost;
}

/* Whether plan @alt (objective @obj_alt) beats @best (@obj) by more than
 * the doubt it adds. */
static bool beats(const struct corun__pm *pm, const int *alt, double obj_alt, const int *best,
                  double obj, int *scratch, double *l3)
{
    double more;

    if (!(obj_alt > obj + 1e-9))
        return false;
    if (!pm->ncore)
        return true;
    more = share_doubt(pm, alt, scratch, l3) - share_doubt(pm, best, scratch, l3);
    return more <= 0 || obj_alt > obj + more;
}

static int corun_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    struct corun__pm pm;
    struct ctx cx = {0};
    unsigned n = snap->ntasks, *cpus = NULL, ncpus, *tasks = NULL, kept, nsearch;
    int *cur = NULL, *alt = NULL, *near = NULL, *base = NULL, *scratch = NULL, err;
    double obj, obj_alt, obj_near = -INFINITY, *l3 = NULL;
    bool placed; /* every task runs on a usable CPU now */

    if (!n)
        return 0;
    err = corun__pm_init(&pm, snap);
    if (err)
        return err;
    cx.pm = &pm;
    cx.cpu = plan->cpu;
    cx.slots = calloc(pm.ncpus, sizeof(*cx.slots));
    tasks = malloc(n * sizeof(*tasks));
    cur = malloc(n * sizeof(*cur));
    alt = malloc(n * sizeof(*alt));
    near = malloc(n * sizeof(*near));
    base = malloc(n * sizeof(*base));
    scratch = malloc((pm.ncore + n) * sizeof(*scratch));
    l3 = malloc((pm.ndom[2] + pm.ncore + n + 1) * sizeof(*l3));
    if (!cx.slots || !tasks || !cur || !alt || !near || !base || !scratch || !l3) {
        err = -ENOMEM;
        goto out_free;
    }
    err = pick_slots(&cx, 0, &kept);
    if (!err)
        err = corun__cpus_dense(snap->topo, &cpus, &ncpus);
    if (err)
        goto out_free;
    for (unsigned i = 0; i < n; i++) {
        tasks[i] = i;
        cur[i] = snap->tasks[i].cpu;
        plan->cpu[i] = -1;
    }
    err = distribute(&cx, cpus, ncpus, tasks, n);
    if (err)
        goto out_free;
    /* The searches below: from the construction, from where the tasks run,
     * from a turbo bin's edge (the random restarts are for small cases,
     * below the cap). */
    placed = all_placed(snap);
    nsearch = 1 + placed + (pm.turbo_rel && pm.turbo_n > 1 && n <= ncpus);
    obj =
        corun__search(&pm, plan->cpu, cur, snap->move_cost, snap->seed, search_budget(n, nsearch));
    if (placed) {
        memcpy(alt, cur, n * sizeof(*alt));
        deshare(&pm, cpus, ncpus, alt, n);
        memcpy(base, alt, n * sizeof(*base));
        obj_alt = corun__search(&pm, alt, cur, snap->move_cost, snap->seed ^ 1,
                                search_budget(n, nsearch));
        memcpy(near, alt, n * sizeof(*near));
        obj_near = obj_alt;
        if (obj_alt > obj) {
            memcpy(plan->cpu, alt, n * sizeof(*alt));
            obj = obj_alt;
        }
    }
    /* With a turbo table, a plan that leaves cores idle to stay a bin
     * higher: at the nearest bin edge below the busy cores of the plan above
     * that still holds every task on its own thread. No single move reaches
     * it (freeing a core gains nothing until the last one of the bin); the
     * bins further down are left to the search from there, at the cost of a
     * second construction and search only. */
    for (unsigned c = pm.turbo_n - 1 < pm.pkg_cores[0] ? pm.turbo_n - 1 : pm.pkg_cores[0];
         pm.turbo_rel && pm.turbo_n > 1 && c >= 2; c--) {
        const struct corun_topo_info *in = corun_topo_info(snap->topo);
        unsigned threads = (in->smt_width ? in->smt_width : 1) * c * (pm.npkg ? pm.npkg : 1);

        if (threads < n)
            break;
        if (!(pm.turbo_rel[c] < pm.turbo_rel[c - 1] - 1e-9) || c * pm.npkg >= n)
            continue;
        err = pick_slots(&cx, c, &kept);
        if (err)
            goto out_free;
        if (kept < n) /* not a thread each: no smaller cap has more */
            break;
        for (unsigned i = 0; i < n; i++) {
            tasks[i] = i;
            alt[i] = -1;
        }
        cx.cpu = alt;
        err = distribute(&cx, cpus, ncpus, tasks, n);
        cx.cpu = plan->cpu;
        if (err)
            goto out_free;
        obj_alt = corun__search(&pm, alt, cur, snap->move_cost, snap->seed ^ (0xb1 + c),
                                search_budget(n, nsearch));
        if (beats(&pm, alt, obj_alt, plan->cpu, obj, scratch, l3)) {
            memcpy(plan->cpu, alt, n * sizeof(*alt));
            obj = obj_alt;
        }
        break;
    }
    /* Small cases: a few seeded random restarts too. Turbo couples every
     * core of a package, so one-move-at-a-time search has local optima
     * (consolidating two tasks onto one core takes two moves). */
    for (unsigned r = 0; n <= CORUN_RESTART_MAX && n <= ncpus && r < CORUN_RESTARTS; r++) {
        uint64_t rng = snap->seed ^ (0xc0ffee + r);

        for (unsigned i = ncpus; i > 1; i--) {
            unsigned j = corun__rand_below(&rng, i), t = cpus[i - 1];

            cpus[i - 1] = cpus[j];
            cpus[j] = t;
        }
        for (unsigned i = 0; i < n; i++)
            alt[i] = (int)cpus[i];
        obj_alt = corun__search(&pm, alt, cur, snap->move_cost, rng, search_budget(n, nsearch));
        if (beats(&pm, alt, obj_alt, plan->cpu, obj, scratch, l3)) {
            memcpy(plan->cpu, alt, n * sizeof(*alt));
            obj = obj_alt;
        }
    }
    /* DI's plan, where the predictor cannot tell it from the best so far
     * (CORUN_DI_TIE); not where it shares more cores than the doubt that
     * adds lets it (beats()). */
    if (n <= CORUN_DI_TIE_MAX) {
        struct corun_plan dp = {.ntasks = n, .cpu = alt};
        unsigned md = 0, mb = 0;
        double more = 0;

        err = corun__policy_di.place(snap, &dp);
        if (!err)
            err = corun__align_cores(&pm, alt, cur);
        if (err)
            goto out_free;
        /* A tie buys no moves: DI's plan moves no more tasks than the best. */
        for (unsigned i = 0; i < n; i++) {
            md += cur[i] >= 0 && alt[i] != cur[i];
            mb += cur[i] >= 0 && plan->cpu[i] != cur[i];
        }
        if (md <= mb) {
            obj_alt = corun__objective(&pm, alt, cur, snap->move_cost);
            if (pm.ncore)
                more =
                    share_doubt(&pm, alt, scratch, l3) - share_doubt(&pm, plan->cpu, scratch, l3);
        }
        if (md <= mb && obj_alt >= obj - CORUN_DI_TIE * fabs(obj) + (more > 0 ? more : 0)) {
            memcpy(plan->cpu, alt, n * sizeof(*alt));
            obj = obj_alt;
        }
    }
    /* Where every task runs now. A plan the caller's cap splits is reached
     * in parts, each paying for itself or not applied at all: it must beat
     * the search from there by a move cost more per task it moves beyond
     * that one's. A plan that shares more cores than where the tasks run
     * must beat that by more than the doubt it adds, and a first plan that
     * ties with it keeps it (less any time-sharing, deshare()). */
    if (placed) {
        double oc = corun__objective(&pm, cur, cur, snap->move_cost), more;

        if (snap->max_moves && obj_near > oc) {
            unsigned mp = 0, mn = 0;

            for (unsigned i = 0; i < n; i++) {
                mp += plan->cpu[i] != cur[i];
                mn += near[i] != cur[i];
            }
            if (mp > snap->max_moves && mp > mn && obj - obj_near < snap->move_cost * (mp - mn)) {
                memcpy(plan->cpu, near, n * sizeof(*near));
                obj = obj_near;
            }
        }
        more = pm.ncore ? share_doubt(&pm, plan->cpu, scratch, l3) - share_doubt(&pm, cur, scratch, l3)
                        : 0;
        if ((more > 0 && !(obj > oc + more)) ||
            (snap->round == 0 && obj < oc + CORUN_TIE * fabs(oc)))
            memcpy(plan->cpu, base, n * sizeof(*base));
    }
    err = 0;
out_free:
    corun__pm_release(&pm);
    free(cx.slots);
    free(tasks);
    free(cur);
    free(alt);
    free(near);
    free(base);
    free(scratch);
    free(l3);
    free(cpus);
    return err;
}

const struct corun_policy corun__policy_corun = {
    .name = "corun",
    .summary = "learned pressure vs sensitivity: domains, SMT matching, local search (default)",
    .place = corun_place,
};
