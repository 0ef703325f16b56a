/*
 * policy-search.c — local search on the predicted objective: the last step
 * of the corun policy, which improves a placement built by construction.
 *
 * The objective is the predicted weighted STP of corun__pm_eval() minus a
 * move cost for each task placed away from where it runs now. A candidate is
 * a swap of two tasks or the move of one task to another CPU; it is
 * evaluated exactly and incrementally: the per-domain pressure sums are
 * updated, and only the tasks whose sums the candidate changes are
 * recomputed (those of the domains it moves tasks out of or into, of the
 * domains whose sum changes because a task's share of its CPU's time did,
 * and of the memory nodes it loads differently); a task only a memory
 * node's load changed for keeps what its core and caches cost it and has
 * its memory cost read again (struct parts). Candidates that do not
 * improve are undone. Small instances are searched systematically (every
 * pair, every idle CPU) until no candidate improves; large ones by seeded
 * random candidates, biased to the same LLC, within a budget counted in
 * task recomputations, so the result depends on the seed and never on the
 * clock.
 *
 * Also here, corun__align_cores(): a plan moved onto where its tasks run
 * by trading whole cores the predictor cannot tell apart, its objective
 * unchanged but for the move costs (the corun policy aligns DI's plan so
 * before it compares it with its own).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy-internal.h"

struct ls {
    const struct corun__pm *pm;
    int *cpu;
    const int *cur;
    double mc;
    double *sum[CORUN__PM_NLEV];
    double *core3;        /* L3 pressure of each core's tasks */
    unsigned *cnt;        /* tasks per CPU */
    unsigned *corecnt;    /* busy CPUs per core */
    unsigned *active;     /* busy cores per package */
    double *crowd;        /* 2 per core: corun__pm_crowd() of a crowded one */
    double *keep;         /* per task: what it loads memory with, as a share of
                             its load alone (corun__pm_crowd_keep(); 1 where
                             pm->crowd_load is off or its core is not crowded) */
    unsigned *cidx;       /* scratch: one core's tasks */
    int *head, *next, *prev; /* tasks of each CPU, doubly linked */
    double *s;            /* weighted predicted speed of each task */
    struct parts *part;   /* per task: the figures s was made of */
    unsigned *stamp, stampv;
    unsigned *full; /* per task: stampv when all of its speed is read again */
    unsigned *aff, naff;
    double *snew;
    struct parts *pnew; /* per affected task, as snew */
    int *hhead, *hnext; /* tasks whose memory is on each node (pm->home) */
    unsigned *hstamp;   /* per node: its tasks added in this candidate */
    uint64_t ops;
};

/* A task's predicted speed in the parts that change apart: what its core
 * and caches cost it (xk, xc), how that amplifies what memory costs it
 * (amp), and its weighted speed before interference (wcf). A task only
 * memory changes for (its node's load) keeps the rest. */
struct parts {
    double xk, xc, amp, wcf;
};

#define LEV(pm, c, li) ((pm)->dom[(c) * CORUN__PM_NLEV + (li)])

/* Adds @sign times the pressure of CPU @c's tasks to its domains' sums: a
 * task time-sharing a CPU with k-1 others presses 1/k of the time, on its
 * memory's node too where that is known (pm->home) rather than its CPU's. */
static void cpu_contrib(struct ls *ls, unsigned c, double sign)
{
    const struct corun__pm *pm = ls->pm;

    if (!ls->cnt[c])
        return;
    for (int t = ls->head[c]; t >= 0; t = ls->next[t]) {
        if (LEV(pm, c, 0) >= 0) {
            ls->sum[0][(size_t)LEV(pm, c, 0) * CORUN__PM_NCLS + pm->cls[t]] +=
                sign * pm->mp[t] / ls->cnt[c];
            ls->core3[LEV(pm, c, 0)] +=
                sign * pm->press[(unsigned)t * CORUN__PM_NLEV + 2] / ls->cnt[c];
        }
        for (unsigned li = 1; li < CORUN__PM_NLEV; li++)
            if (li == 3 && pm->home[t] >= 0)
                ls->sum[3][pm->home[t]] +=
                    sign * ls->keep[t] * pm->press[(unsigned)t * CORUN__PM_NLEV + 3] / ls->cnt[c];
            else if (LEV(pm, c, li) >= 0)
                ls->sum[li][LEV(pm, c, li)] += sign * (li == 3 ? ls->keep[t] : 1) *
                                               pm->press[(unsigned)t * CORUN__PM_NLEV + li] /
                                               ls->cnt[c];
    }
}

/* Solves the crowd of CPU @c's core again (corun__pm_crowd()) where more
 * than two of its CPUs are busy and, where pm->crowd_load, moves what the
 * core's tasks load their memory nodes with to the share of their speed
 * the crowd leaves them (1 once the core is no longer crowded). */
static void core_crowd(struct ls *ls, unsigned c)
{
    const struct corun__pm *pm = ls->pm;
    const struct corun_topo_domain *dom;
    int k = pm->core[c];
    unsigned q = 0;

    if (k < 0 || (ls->corecnt[k] <= 2 && !pm->crowd_load))
        return;
    dom = corun_topo_domain(pm->topo, CORUN_LEVEL_CORE, (unsigned)k);
    for (unsigned j = 0; j < dom->ncpus; j++)
        for (int t = ls->head[dom->cpus[j]]; t >= 0; t = ls->next[t])
            ls->cidx[q++] = (unsigned)t;
    if (ls->corecnt[k] > 2)
        corun__pm_crowd(pm, ls->cidx, q, ls->cpu, ls->cnt, ls->crowd + 2 * k);
    for (unsigned j = 0; pm->crowd_load && j < q; j++) {
        unsigned t = ls->cidx[j], tc = (unsigned)ls->cpu[t];
        double kp = ls->corecnt[k] > 2 ? corun__pm_crowd_keep(pm, t, ls->crowd + 2 * k) : 1;
        int d = pm->home[t] >= 0 ? pm->home[t] : LEV(pm, tc, 3);

        if (d >= 0 && kp != ls->keep[t])
            ls->sum[3][d] += (kp - ls->keep[t]) * pm->press[t * CORUN__PM_NLEV + 3] / ls->cnt[tc];
        ls->keep[t] = kp;
    }
}

static void link_task(struct ls *ls, unsigned t, unsigned c)
{
    cpu_contrib(ls, c, -1);
    ls->cpu[t] = (int)c;
    ls->prev[t] = -1;
    ls->next[t] = ls->head[c];
    if (ls->head[c] >= 0)
        ls->prev[ls->head[c]] = (int)t;
    ls->head[c] = (int)t;
    if (!ls->cnt[c]++ && ls->pm->core[c] >= 0 && !ls->corecnt[ls->pm->core[c]]++ &&
        ls->pm->pkg[c] >= 0)
        ls->active[ls->pm->pkg[c]]++;
    cpu_contrib(ls, c, +1);
    core_crowd(ls, c);
}

static void unlink_task(struct ls *ls, unsigned t)
{
    unsigned c = (unsigned)ls->cpu[t];

    cpu_contrib(ls, c, -1);
    if (ls->prev[t] >= 0)
        ls->next[ls->prev[t]] = ls->next[t];
    else
        ls->head[c] = ls->next[t];
    if (ls->next[t] >= 0)
        ls->prev[ls->next[t]] = ls->prev[t];
    if (!--ls->cnt[c] && ls->pm->core[c] >= 0 && !--ls->corecnt[ls->pm->core[c]] &&
        ls->pm->pkg[c] >= 0)
        ls->active[ls->pm->pkg[c]]--;
    cpu_contrib(ls, c, +1);
    core_crowd(ls, c);
}

/* What memory costs task @t where it is now, from the current sums. */
static double mem_x(const struct ls *ls, unsigned t)
{
    const struct corun__pm *pm = ls->pm;
    unsigned c = (unsigned)ls->cpu[t];
    double xm = 0, own;
    int d = LEV(pm, c, 3);

    if (pm->home[t] >= 0)
        xm += pm->sens[t * CORUN__PM_NLEV + 3] *
              corun__pm_dmg(3,
                            ls->sum[3][pm->home[t]] -
                                ls->keep[t] * pm->press[t * CORUN__PM_NLEV + 3] / ls->cnt[c],
                            corun__pm_scale(pm, c, 3));
    xm += corun__pm_remote_x(pm, t, c);
    if (pm->home[t] >= 0 || d < 0)
        return xm;
    own = ls->keep[t] * pm->press[t * CORUN__PM_NLEV + 3] / ls->cnt[c];
    return xm + pm->sens[t * CORUN__PM_NLEV + 3] *
                    corun__pm_tdmg(pm, t, 3, own, ls->sum[3][d] - own, corun__pm_scale(pm, c, 3));
}

/* The weighted speed of parts @p with memory cost @xm. */
static double speed_from(const struct parts *p, double xm)
{
    double x = p->xk;

    x += p->xc + xm * p->amp;
    return p->wcf / (1.0 + x);
}

/* Weighted speed of task @t where it is now, from the current sums, and
 * the parts it is made of into *@p. */
static double speed_of(const struct ls *ls, unsigned t, struct parts *p)
{
    const struct corun__pm *pm = ls->pm;
    unsigned c = (unsigned)ls->cpu[t];
    double xc = 0;

    p->xk = 0;
    if (LEV(pm, c, 0) >= 0)
        p->xk += corun__pm_core_x(pm, t, &ls->sum[0][(size_t)LEV(pm, c, 0) * CORUN__PM_NCLS],
                                  pm->mp[t] / ls->cnt[c],
                                  corun__pm_l3_dmg(pm, c, ls->sum[2], ls->core3[LEV(pm, c, 0)],
                                                   pm->press[t * CORUN__PM_NLEV + 2] / ls->cnt[c]),
                                  pm->core[c] >= 0 ? ls->corecnt[pm->core[c]] : 1,
                                  pm->core[c] >= 0 ? ls->crowd + 2 * pm->core[c] : NULL);
    for (unsigned li = 1; li < 3; li++) {
        int d = LEV(pm, c, li);
        double own;

        if (d < 0) {
            if (li == 2)
                xc += corun__pm_no_l3(pm, t);
            continue;
        }
        own = pm->press[t * CORUN__PM_NLEV + li] / ls->cnt[c];
        xc += pm->sens[t * CORUN__PM_NLEV + li] *
              corun__pm_tdmg(pm, t, li, own, ls->sum[li][d] - own, corun__pm_scale(pm, c, li));
    }
    p->xc = xc;
    p->amp = corun__pm_mem_amp(pm, t, xc);
    {
        int k = pm->pkg[c];
        double g = k >= 0 ? corun__pm_turbo(pm, ls->active[k], pm->pkg_cores[k]) : 1.0;

        p->wcf = pm->w[t] * corun__pm_cf(pm, t, c, g); /* divided by cnt last */
    }
    return speed_from(p, mem_x(ls, t)) / ls->cnt[c];
}

static double move_pen(const struct ls *ls, unsigned t)
{
    return ls->cur ? corun__pm_move_cost(ls->pm, t, ls->cur[t], ls->cpu[t], ls->mc) : 0.0;
}

/* Adds task @t to those the candidate affects: only its memory cost
 * (@full false: what its node is loaded with changed), or all of it. */
static void add_task(struct ls *ls, unsigned t, bool full)
{
    if (ls->stamp[t] != ls->stampv) {
        ls->stamp[t] = ls->stampv;
        ls->aff[ls->naff++] = t;
    }
    if (full)
        ls->full[t] = ls->stampv;
}

static void add_aff(struct ls *ls, unsigned t)
{
    add_task(ls, t, true);
}

static void add_cpu_tasks_as(struct ls *ls, unsigned c, bool full)
{
    for (int t = ls->head[c]; t >= 0; t = ls->next[t])
        add_task(ls, (unsigned)t, full);
}

static void add_cpu_tasks(struct ls *ls, unsigned c)
{
    add_cpu_tasks_as(ls, c, true);
}

/* Adds the tasks whose speed reads the pressure sum of domain @d at level
 * index @li: those running there and, for a memory node, those whose
 * memory is there (pm->home; a node's tasks once per candidate). For a
 * memory node that is all the sum changes of theirs. */
static void add_domain(struct ls *ls, unsigned li, int d)
{
    const struct corun_topo_domain *dom;

    if (d < 0)
        return;
    if (li == 3) {
        if (ls->hstamp[d] == ls->stampv)
            return;
        ls->hstamp[d] = ls->stampv;
        for (int t = ls->hhead[d]; t >= 0; t = ls->hnext[t])
            add_task(ls, (unsigned)t, false);
    }
    dom = corun_topo_domain(ls->pm->topo, corun__pm_levels[li], (unsigned)d);
    for (unsigned k = 0; k < dom->ncpus; k++)
        add_cpu_tasks_as(ls, dom->cpus[k], li != 3);
}

/* Adds the tasks whose speed reads the memory load of the nodes where the
 * tasks now on CPU @c keep their memory (pm->home): their share of @c's
 * time, and so of what they load there, changed. */
static void add_homes(struct ls *ls, unsigned c)
{
    for (int t = ls->head[c]; t >= 0; t = ls->next[t])
        if (ls->pm->home[t] >= 0)
            add_domain(ls, 3, ls->pm->home[t]);
}

/* Adds the tasks whose speed reads what core @k's tasks load memory with,
 * which its crowd sets (pm->crowd_load): those of the nodes where they keep
 * their memory, and of the nodes of the core's CPUs. */
static void add_core_mem(struct ls *ls, int k)
{
    const struct corun_topo_domain *dom;

    if (k < 0)
        return;
    dom = corun_topo_domain(ls->pm->topo, CORUN_LEVEL_CORE, (unsigned)k);
    for (unsigned j = 0; j < dom->ncpus; j++) {
        add_cpu_tasks(ls, dom->cpus[j]); /* their crowd, read whole */
        add_homes(ls, dom->cpus[j]);
        add_domain(ls, 3, LEV(ls->pm, dom->cpus[j], 3));
    }
}

/*
 * Tries moving tasks @t[0..k) to CPUs @to[0..k) at once; keeps the change
 * when the objective rises by more than a hair. Returns the gain kept (0
 * when undone).
 */
static double try_moves(struct ls *ls, const unsigned *t, const unsigned *to, unsigned k)
{
    const struct corun__pm *pm = ls->pm;
    unsigned from[2], act0[4], cnt0[4], cc0[4] = {0};
    int pk[4];
    double before = 0, after = 0;

    for (unsigned m = 0; m < k; m++) {
        from[m] = (unsigned)ls->cpu[t[m]];
        before -= move_pen(ls, t[m]);
        pk[2 * m] = pm->pkg[from[m]];
        pk[2 * m + 1] = pm->pkg[to[m]];
    }
    for (unsigned q = 0; q < 2 * k; q++)
        act0[q] = pk[q] >= 0 ? ls->active[pk[q]] : 0;
    for (unsigned m = 0; m < k; m++) {
        cnt0[2 * m] = ls->cnt[from[m]];
        cnt0[2 * m + 1] = ls->cnt[to[m]];
        if (pm->core[from[m]] >= 0)
            cc0[2 * m] = ls->corecnt[pm->core[from[m]]];
        if (pm->core[to[m]] >= 0)
            cc0[2 * m + 1] = ls->corecnt[pm->core[to[m]]];
    }
    for (unsigned m = 0; m < k; m++) {
        unlink_task(ls, t[m]);
        link_task(ls, t[m], to[m]);
    }
    /* Affected: the tasks of every domain the moves change, of every node
     * whose memory load changed, and of every package whose count of busy
     * cores (its clock) changed. Their speeds before are the stored ones. */
    ls->stampv++;
    ls->naff = 0;
    for (unsigned m = 0; m < k; m++) {
        /* A task's share of its CPU's time (and so of what it presses
         * on its domains) changed: the moved task's, or those of the
         * tasks left on or joined at a CPU whose count changed. The
         * domains both CPUs share then changed too, and so did the nodes
         * the two CPUs' tasks keep their memory on. (A task moved from a
         * CPU of its own to an idle one changes none.) */
        bool shares = cnt0[2 * m] != ls->cnt[to[m]] ||
                      (ls->cnt[from[m]] && cnt0[2 * m] != ls->cnt[from[m]]) ||
                      (cnt0[2 * m + 1] && cnt0[2 * m + 1] != ls->cnt[to[m]]);

        add_cpu_tasks(ls, from[m]);
        add_cpu_tasks(ls, to[m]);
        add_aff(ls, t[m]);
        for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
            if (LEV(pm, from[m], li) != LEV(pm, to[m], li)) {
                add_domain(ls, li, LEV(pm, from[m], li));
                add_domain(ls, li, LEV(pm, to[m], li));
            } else if (shares) {
                add_domain(ls, li, LEV(pm, from[m], li));
            }
        if (shares) {
            add_homes(ls, from[m]);
            add_homes(ls, to[m]);
        }
        /* What a crowded core's tasks load memory with follows its crowd,
         * which any change of its tasks moves. */
        for (unsigned e = 0; pm->crowd_load && e < 2; e++) {
            int kc = pm->core[e ? to[m] : from[m]];

            if (kc >= 0 && (cc0[2 * m + e] > 2 || ls->corecnt[kc] > 2))
                add_core_mem(ls, kc);
        }
    }
    for (unsigned q = 0; q < 2 * k; q++)
        if (pk[q] >= 0 && ls->active[pk[q]] != act0[q]) {
            const struct corun_topo_domain *dom =
                corun_topo_domain(pm->topo, CORUN_LEVEL_PACKAGE, (unsigned)pk[q]);

            for (unsigned j = 0; dom && j < dom->ncpus; j++)
                add_cpu_tasks(ls, dom->cpus[j]);
        }
    /* A task only its node's load changed for keeps the other parts of
     * its speed: its memory cost is read again, not its core and caches. */
    for (unsigned a = 0; a < ls->naff; a++) {
        unsigned u = ls->aff[a];

        before += ls->s[u];
        if (ls->full[u] == ls->stampv) {
            ls->snew[a] = speed_of(ls, u, &ls->pnew[a]);
        } else {
            ls->pnew[a] = ls->part[u];
            ls->snew[a] = speed_from(&ls->part[u], mem_x(ls, u)) / ls->cnt[ls->cpu[u]];
        }
        after += ls->snew[a];
    }
    for (unsigned m = 0; m < k; m++)
        after -= move_pen(ls, t[m]);
    ls->ops += ls->naff;
    if (after > before + 1e-9) {
        for (unsigned a = 0; a < ls->naff; a++) {
            ls->s[ls->aff[a]] = ls->snew[a];
            ls->part[ls->aff[a]] = ls->pnew[a];
        }
        return after - before;
    }
    for (unsigned m = k; m-- > 0;) {
        unlink_task(ls, t[m]);
        link_task(ls, t[m], from[m]);
    }
    return 0;
}

static double try_swap(struct ls *ls, unsigned a, unsigned b)
{
    unsigned t[2] = {a, b}, to[2] = {(unsigned)ls->cpu[b], (unsigned)ls->cpu[a]};

    if (ls->cpu[a] == ls->cpu[b])
        return 0;
    return try_moves(ls, t, to, 2);
}

static double try_move(struct ls *ls, unsigned a, unsigned c)
{
    if (ls->cpu[a] == (int)c)
        return 0;
    return try_moves(ls, &a, &c, 1);
}

static void ls_free(struct ls *ls)
{
    for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
        free(ls->sum[li]);
    free(ls->core3);
    free(ls->cnt);
    free(ls->corecnt);
    free(ls->active);
    free(ls->crowd);
    free(ls->keep);
    free(ls->cidx);
    free(ls->head);
    free(ls->next);
    free(ls->prev);
    free(ls->s);
    free(ls->part);
    free(ls->stamp);
    free(ls->full);
    free(ls->aff);
    free(ls->snew);
    free(ls->pnew);
    free(ls->hhead);
    free(ls->hnext);
    free(ls->hstamp);
}

static int ls_init(struct ls *ls, const struct corun__pm *pm, int *cpu, const int *cur, double mc)
{
    unsigned n = pm->n ? pm->n : 1, nc = pm->ncpus ? pm->ncpus : 1;
    unsigned nnode = pm->ndom[3] ? pm->ndom[3] : 1;

    memset(ls, 0, sizeof(*ls));
    ls->pm = pm;
    ls->cpu = cpu;
    ls->cur = cur;
    ls->mc = mc;
    for (unsigned li = 0; li < CORUN__PM_NLEV; li++)
        if (!(ls->sum[li] = calloc((pm->ndom[li] ? pm->ndom[li] : 1) *
                                       (li == 0 ? CORUN__PM_NCLS : 1),
                                   sizeof(double))))
            goto out_nomem;
    ls->core3 = calloc(pm->ndom[0] ? pm->ndom[0] : 1, sizeof(*ls->core3));
    ls->cnt = calloc(nc, sizeof(*ls->cnt));
    ls->corecnt = calloc(pm->ncore ? pm->ncore : 1, sizeof(*ls->corecnt));
    ls->active = calloc(pm->npkg ? pm->npkg : 1, sizeof(*ls->active));
    ls->crowd = calloc((pm->ncore ? pm->ncore : 1) * 2, sizeof(*ls->crowd));
    ls->keep = malloc(n * sizeof(*ls->keep));
    ls->cidx = malloc(n * sizeof(*ls->cidx));
    ls->head = malloc(nc * sizeof(*ls->head));
    ls->next = malloc(n * sizeof(*ls->next));
    ls->prev = malloc(n * sizeof(*ls->prev));
    ls->s = calloc(n, sizeof(*ls->s));
    ls->part = calloc(n, sizeof(*ls->part));
    ls->stamp = calloc(n, sizeof(*ls->stamp));
    ls->full = calloc(n, sizeof(*ls->full));
    ls->aff = malloc(n * sizeof(*ls->aff));
    ls->snew = malloc(n * sizeof(*ls->snew));
    ls->pnew = malloc(n * sizeof(*ls->pnew));
    ls->hhead = malloc(nnode * sizeof(*ls->hhead));
    ls->hnext = malloc(n * sizeof(*ls->hnext));
    ls->hstamp = calloc(nnode, sizeof(*ls->hstamp));
    if (!ls->core3 || !ls->cnt || !ls->corecnt || !ls->active || !ls->crowd || !ls->keep ||
        !ls->cidx || !ls->head || !ls->next || !ls->prev || !ls->s || !ls->part || !ls->stamp ||
        !ls->full || !ls->aff || !ls->snew || !ls->pnew || !ls->hhead || !ls->hnext || !ls->hstamp)
        goto out_nomem;
    for (unsigned c = 0; c < nc; c++)
        ls->head[c] = -1;
    for (unsigned t = 0; t < n; t++)
        ls->keep[t] = 1;
    for (unsigned h = 0; h < nnode; h++)
        ls->hhead[h] = -1;
    for (unsigned t = 0; t < pm->n; t++) {
        link_task(ls, t, (unsigned)cpu[t]);
        if (pm->home[t] >= 0) {
            ls->hnext[t] = ls->hhead[pm->home[t]];
            ls->hhead[pm->home[t]] = (int)t;
        }
    }
    for (unsigned t = 0; t < pm->n; t++)
        ls->s[t] = speed_of(ls, t, &ls->part[t]);
    return 0;
out_nomem:
    ls_free(ls);
    return -ENOMEM;
}

double corun__objective(const struct corun__pm *pm, const int *cpu, const int *cur,
                        double move_cost)
{
    double obj = corun__pm_eval(pm, cpu, NULL);

    if (obj < 0)
        return obj;
    for (unsigned t = 0; cur && t < pm->n; t++)
        obj -= corun__pm_move_cost(pm, t, cur[t], cpu[t], move_cost);
    return obj;
}

/* Every pair and every (task, idle CPU) until nothing improves or the
 * budget is spent. */
static void systematic(struct ls *ls, const unsigned *usable, unsigned nus, uint64_t budget)
{
    bool improved = true;

    while (improved && ls->ops < budget) {
        improved = false;
        for (unsigned a = 0; a < ls->pm->n && ls->ops < budget; a++) {
            for (unsigned b = a + 1; b < ls->pm->n; b++)
                if (try_swap(ls, a, b) > 0)
                    improved = true;
            for (unsigned k = 0; k < nus; k++)
                if (!ls->cnt[usable[k]] && try_move(ls, a, usable[k]) > 0)
                    improved = true;
        }
    }
}

/* A CPU for a candidate partner of task @a: mostly in a's LLC (or memory
 * domain), else anywhere usable. */
static unsigned pick_cpu(const struct ls *ls, unsigned a, const unsigned *usable, unsigned nus,
                         uint64_t *rng)
{
    const struct corun__pm *pm = ls->pm;
    unsigned c = (unsigned)ls->cpu[a];

    if (corun__rand_below(rng, 10) < 6) {
        for (unsigned li = 2; li < CORUN__PM_NLEV; li++) {
            int d = LEV(pm, c, li);
            const struct corun_topo_domain *dom;

            if (d < 0)
                continue;
            dom = corun_topo_domain(pm->topo, corun__pm_levels[li], (unsigned)d);
            if (dom->ncpus > 1) {
                unsigned pick = dom->cpus[corun__rand_below(rng, dom->ncpus)];

                if (corun_topo_cpu(pm->topo, pick)->usable)
                    return pick;
            }
        }
    }
    return usable[corun__rand_below(rng, nus)];
}

static void randomised(struct ls *ls, const unsigned *usable, unsigned nus, uint64_t seed,
                       uint64_t budget)
{
    uint64_t rng = seed ^ 0x5eed5eedull, fails = 0, maxfails = 40ull * ls->pm->n + 200;

    while (ls->ops < budget && fails < maxfails) {
        unsigned a = corun__rand_below(&rng, ls->pm->n);
        unsigned c = pick_cpu(ls, a, usable, nus, &rng);
        double g;

        if (!ls->cnt[c]) {
            g = try_move(ls, a, c);
        } else {
            int b = ls->head[c];

            for (unsigned hop = corun__rand_below(&rng, 4); hop && ls->next[b] >= 0; hop--)
                b = ls->next[b];
            g = try_swap(ls, a, (unsigned)b);
        }
        fails = g > 0 ? 0 : fails + 1;
        ls->ops++; /* a rejected no-op still costs something */
    }
}

double corun__search(const struct corun__pm *pm, int *cpu, const int *cur, double move_cost,
                     uint64_t seed, uint64_t budget)
{
    struct ls ls;
    unsigned *usable, nus;
    double obj;
    int err;

    if (!pm->n)
        return 0;
    err = corun__cpus_dense(pm->topo, &usable, &nus);
    if (err)
        return err;
    err = ls_init(&ls, pm, cpu, cur, move_cost);
    if (err) {
        free(usable);
        return err;
    }
    if ((uint64_t)pm->n * (pm->n + nus) <= budget / 8)
        systematic(&ls, usable, nus, budget);
    else
        randomised(&ls, usable, nus, seed, budget);
    ls_free(&ls);
    free(usable);
    obj = corun__objective(pm, cpu, cur, move_cost);
    return obj;
}

/* ---- aligning a plan with where the tasks run --------------------------------- */

/* Whether the predictor cannot tell cores @a and @b apart: as many usable
 * CPUs (one at least), the same L2, L3, memory domain and package, the
 * same capacity. */
static bool cores_alike(const struct corun__pm *pm, const unsigned *cstart, const unsigned *clist,
                        unsigned a, unsigned b)
{
    unsigned ca, cb;

    if (cstart[a + 1] - cstart[a] != cstart[b + 1] - cstart[b] || cstart[a] == cstart[a + 1])
        return false;
    ca = clist[cstart[a]];
    cb = clist[cstart[b]];
    if (pm->pkg[ca] != pm->pkg[cb] || fabs(pm->cap[ca] - pm->cap[cb]) > 1e-9)
        return false;
    for (unsigned li = 1; li < CORUN__PM_NLEV; li++)
        if (LEV(pm, ca, li) != LEV(pm, cb, li))
            return false;
    return true;
}

/* How many of the tasks on core @from (@occ: the task on each CPU, -1)
 * run on core @to now. */
static unsigned stay_on(const struct corun__pm *pm, const unsigned *cstart, const unsigned *clist,
                        const int *occ, const int *cur, unsigned from, unsigned to)
{
    unsigned k = 0;

    for (unsigned i = cstart[from]; i < cstart[from + 1]; i++) {
        int t = occ[clist[i]];

        k += t >= 0 && cur[t] >= 0 && pm->core[cur[t]] == (int)to;
    }
    return k;
}

/*
 * Plan @v (DI's) moved onto where its tasks run (@cur) without changing
 * what the predictor sees: the tasks of two cores it cannot tell apart
 * trade cores when more of them then stay where they run, and inside a
 * core each task takes the thread it runs on. DI deals its groups to cores
 * in its own order, so its plan can move every task where the same groups
 * on other cores move two. A plan that time-shares a CPU, or a machine
 * without cores, is left as it is. 0 or -ENOMEM.
 */
int corun__align_cores(const struct corun__pm *pm, int *v, const int *cur)
{
    unsigned n = pm->n, nc = pm->ncore, *cstart = NULL, *clist = NULL;
    int *occ = NULL, err = -ENOMEM;
    bool better = true;

    if (!nc)
        return 0;
    cstart = calloc(nc + 2, sizeof(*cstart));
    clist = malloc((pm->ncpus ? pm->ncpus : 1) * sizeof(*clist));
    occ = malloc((pm->ncpus ? pm->ncpus : 1) * sizeof(*occ));
    if (!cstart || !clist || !occ)
        goto out;
    err = 0;
    for (unsigned c = 0; c < pm->ncpus; c++)
        occ[c] = -1;
    for (unsigned i = 0; i < n; i++) {
        if (v[i] < 0 || occ[v[i]] >= 0 || pm->core[v[i]] < 0)
            goto out; /* time-shared, unplaced or off every core: as it is */
        occ[v[i]] = (int)i;
    }
    /* The usable CPUs of each core, in order: counting sort. */
    for (unsigned c = 0; c < pm->ncpus; c++)
        if (pm->core[c] >= 0 && corun_topo_cpu(pm->topo, c)->usable)
            cstart[pm->core[c] + 2]++;
    for (unsigned k = 0; k < nc; k++)
        cstart[k + 2] += cstart[k + 1];
    for (unsigned c = 0; c < pm->ncpus; c++)
        if (pm->core[c] >= 0 && corun_topo_cpu(pm->topo, c)->usable)
            clist[cstart[pm->core[c] + 1]++] = c;
    /* Only two cores of which one holds a task that runs on the other can
     * gain by trading: the pairs are found from the tasks, not from every
     * two cores of the machine (a plan is made every interval). */
    for (unsigned pass = 0; better && pass < 4; pass++) {
        better = false;
        for (unsigned c = 0; c < pm->ncpus; c++) {
            int t = occ[c], ta = pm->core[c], tb;
            unsigned a, b, now, then;

            if (t < 0 || ta < 0 || cur[t] < 0 || (tb = pm->core[cur[t]]) < 0 || ta == tb)
                continue;
            a = (unsigned)ta;
            b = (unsigned)tb;
            now = stay_on(pm, cstart, clist, occ, cur, a, a) +
                  stay_on(pm, cstart, clist, occ, cur, b, b);
            then = stay_on(pm, cstart, clist, occ, cur, a, b) +
                   stay_on(pm, cstart, clist, occ, cur, b, a);
            if (then <= now || !cores_alike(pm, cstart, clist, a, b))
                continue;
            for (unsigned k = 0; k < cstart[a + 1] - cstart[a]; k++) {
                unsigned ca = clist[cstart[a] + k], cb = clist[cstart[b] + k];
                int x = occ[ca];

                occ[ca] = occ[cb];
                occ[cb] = x;
            }
            better = true;
        }
    }
    /* Inside each core, each task on the thread it runs on when it can (not
     * at the cost of one there already: where the current placement
     * time-shares, two tasks run on one). Each swap puts one more task
     * where it runs, so this ends. */
    for (unsigned k = 0; k < nc; k++)
        for (unsigned i = cstart[k]; i < cstart[k + 1]; i++) {
            int t;

            while ((t = occ[clist[i]]) >= 0 && cur[t] >= 0 && (unsigned)cur[t] != clist[i] &&
                   pm->core[cur[t]] == (int)k && corun_topo_cpu(pm->topo, cur[t])->usable &&
                   !(occ[cur[t]] >= 0 && cur[occ[cur[t]]] == cur[t])) {
                occ[clist[i]] = occ[cur[t]];
                occ[cur[t]] = t;
            }
        }
    for (unsigned c = 0; c < pm->ncpus; c++)
        if (occ[c] >= 0)
            v[occ[c]] = (int)c;
out:
    free(cstart);
    free(clist);
    free(occ);
    return err;
}
