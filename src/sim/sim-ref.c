/*
 * sim-ref.c — the reference placements every policy is judged against:
 * baseline (Linux's load balancer without contention knowledge), random,
 * worst and oracle (searches with the ground truth), and runs of them.
 *
 * The oracle's search, in order of preference:
 *   - exhaustive, up to 12 tasks and CORUN_SIM_EXHAUSTIVE_BUDGET placements
 *     after symmetry reduction (two free CPUs whose domains at every level
 *     hold the same tasks and have the same size and kind are
 *     interchangeable, so only one of them is tried);
 *   - minimum-weight perfect matching on pair speedups when only SMT pairs
 *     share (every cache private to a core; memory bandwidth is then the only
 *     coupling left, so the result is reported as a bound);
 *   - otherwise simulated annealing from the baseline, CORUN_SIM_ANNEAL_RESTARTS
 *     restarts of at most CORUN_SIM_ANNEAL_STEPS moves each (fewer for large
 *     task counts, so that a default run stays under 10 s), seeded; reported
 *     as a bound.
 * Worst is the same search minimising. Fairest is the same search (less
 * matching, whose pair sums cannot express a minimum) maximising the
 * slowest task's speed, STP breaking ties: the bound on how far any
 * placement can cut the max slowdown. Searches optimise the steady state
 * at time 0 (phases as they are then); the reported figures come from
 * running the found placement for the whole duration.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-internal.h"

static const char *const ref_names[CORUN_SIM_NREFS] = {"baseline", "random", "worst", "oracle",
                                                       "fairest"};

const char *corun_sim_ref_name(enum corun_sim_ref r)
{
    return (unsigned)r < CORUN_SIM_NREFS ? ref_names[r] : NULL;
}

int corun_sim_ref_by_name(const char *name)
{
    for (int i = 0; i < CORUN_SIM_NREFS; i++)
        if (name && !strcmp(name, ref_names[i]))
            return i;
    return -EINVAL;
}

/* ---- baseline -------------------------------------------------------------- */

/* Load of a domain as a fraction of its CPUs, so domains of unequal size
 * compare as the kernel's load balancer compares them (per capacity). */
static double frac(const unsigned *load, const unsigned *size, int d)
{
    return d < 0 ? 0 : (double)load[d] / (size[d] ? size[d] : 1);
}

void corun_sim_baseline_place(const struct corun_topo *topo, unsigned ntasks, uint64_t seed,
                              int *cpu)
{
    unsigned n = corun_topo_ncpus(topo), *load[CORUN_NLEVELS], *size[CORUN_NLEVELS];
    unsigned *order = malloc(ntasks * sizeof(unsigned));
    struct corun__rng r;
    bool ok = order != NULL;

    for (int l = 0; l < CORUN_NLEVELS; l++) {
        unsigned nd = corun_topo_ndomains(topo, (enum corun_level)l);

        if (l == CORUN_LEVEL_PU || l == CORUN_LEVEL_MACHINE)
            nd = l == CORUN_LEVEL_PU ? n : 1;
        load[l] = calloc(nd + 1, sizeof(unsigned));
        size[l] = calloc(nd + 1, sizeof(unsigned));
        if (!load[l] || !size[l])
            ok = false;
    }
    if (!ok)
        goto out_free; /* leaves -1: the caller sees unplaced tasks */
    for (unsigned c = 0; c < n; c++) {
        const struct corun_topo_cpu *tc = corun_topo_cpu(topo, c);

        for (int l = CORUN_LEVEL_CORE; l < CORUN_LEVEL_MACHINE; l++)
            if (tc->dom[l] >= 0)
                size[l][tc->dom[l]]++;
        size[CORUN_LEVEL_PU][c] = 1;
    }
    for (unsigned i = 0; i < ntasks; i++)
        if (cpu[i] >= 0) {
            const struct corun_topo_cpu *tc = corun_topo_cpu(topo, (unsigned)cpu[i]);

            load[CORUN_LEVEL_PU][cpu[i]]++;
            for (int l = CORUN_LEVEL_CORE; l < CORUN_LEVEL_MACHINE; l++)
                if (tc->dom[l] >= 0)
                    load[l][tc->dom[l]]++;
        }
    /* The order tasks arrive in is arbitrary: a seeded shuffle. */
    corun__rng_seed(&r, corun__seed_mix(seed, 0xba5eu));
    for (unsigned i = 0; i < ntasks; i++)
        order[i] = i;
    for (unsigned i = ntasks; i > 1; i--) {
        unsigned j = corun__rng_below(&r, i), tmp = order[i - 1];

        order[i - 1] = order[j];
        order[j] = tmp;
    }
    for (unsigned k = 0; k < ntasks; k++) {
        unsigned i = order[k], ties = 0;
        int best = -1;
        double bkey[7] = {0};

        if (cpu[i] >= 0)
            continue;
        for (unsigned c = 0; c < n; c++) {
            const struct corun_topo_cpu *tc = corun_topo_cpu(topo, c);
            /* Lexicographic: an idle CPU, then an idle core (SMT siblings
             * last), then the least loaded package, node, L3 and L2. */
            double key[7] = {
                (double)load[CORUN_LEVEL_PU][c],
                tc->dom[CORUN_LEVEL_CORE] >= 0 ? load[CORUN_LEVEL_CORE][tc->dom[CORUN_LEVEL_CORE]]
                                               : 0,
                frac(load[CORUN_LEVEL_PACKAGE], size[CORUN_LEVEL_PACKAGE],
                     tc->dom[CORUN_LEVEL_PACKAGE]),
                frac(load[CORUN_LEVEL_NUMA], size[CORUN_LEVEL_NUMA], tc->dom[CORUN_LEVEL_NUMA]),
                frac(load[CORUN_LEVEL_L3], size[CORUN_LEVEL_L3], tc->dom[CORUN_LEVEL_L3]),
                frac(load[CORUN_LEVEL_L2], size[CORUN_LEVEL_L2], tc->dom[CORUN_LEVEL_L2]),
                0};
            int cmp = 0;

            if (!tc->usable)
                continue;
            for (int q = 0; q < 6 && !cmp; q++)
                cmp = key[q] < bkey[q] - 1e-12 ? -1 : key[q] > bkey[q] + 1e-12 ? 1 : 0;
            if (best < 0 || cmp < 0) {
                best = (int)c;
                memcpy(bkey, key, sizeof(key));
                ties = 1;
            } else if (cmp == 0 && corun__rng_below(&r, ++ties) == 0) {
                /* Reservoir choice among equals: "arbitrary order otherwise". */
                best = (int)c;
            }
        }
        if (best < 0)
            break;
        cpu[i] = best;
        load[CORUN_LEVEL_PU][best]++;
        for (int l = CORUN_LEVEL_CORE; l < CORUN_LEVEL_MACHINE; l++) {
            int d = corun_topo_cpu(topo, (unsigned)best)->dom[l];

            if (d >= 0)
                load[l][d]++;
        }
    }
out_free:
    for (int l = 0; l < CORUN_NLEVELS; l++) {
        free(load[l]);
        free(size[l]);
    }
    free(order);
}

static void random_place(const struct corun__sim_hw *hw, unsigned ntasks, uint64_t seed, int *cpu)
{
    unsigned *perm = malloc(hw->ncpus * sizeof(unsigned)), nu = 0;
    struct corun__rng r;

    if (!perm)
        return;
    for (unsigned c = 0; c < hw->ncpus; c++)
        if (hw->usable[c])
            perm[nu++] = c;
    corun__rng_seed(&r, corun__seed_mix(seed, 0x7a4du));
    for (unsigned i = nu; i > 1; i--) {
        unsigned j = corun__rng_below(&r, i), tmp = perm[i - 1];

        perm[i - 1] = perm[j];
        perm[j] = tmp;
    }
    for (unsigned i = 0; i < ntasks; i++)
        cpu[i] = (int)perm[i % nu];
    free(perm);
}

/* ---- exhaustive search ----------------------------------------------------- */

#define EX_MAX_TASKS 12
#define EX_LEVELS    5 /* core, l2, l3, numa, package */

/*
 * What the searches maximise for reference @ref, from the steady state of
 * placement @cpu, in two figures: @walk, which the annealer's moves
 * follow, and @keep, which decides the best placement found. Oracle: STP
 * for both; worst: its opposite. Fairest keeps the placement with the
 * smallest max slowdown (of two alike, the smaller power mean of the
 * slowdowns) but walks on that power mean of order FAIR_P: the max alone
 * is flat under most moves (only those of the slowest task change it),
 * which leaves an annealer nothing to follow. NaN on a bad CPU.
 */
#define FAIR_P 16

struct score {
    double walk, keep;
};

static struct score score(struct corun_sim *sim, enum corun_sim_ref ref, const int *cpu)
{
    double stp = corun__sim_eval(sim, cpu), norm, max;

    if (ref == CORUN_SIM_REF_WORST)
        return (struct score){-stp, -stp};
    if (ref != CORUN_SIM_REF_FAIREST)
        return (struct score){stp, stp};
    corun__sim_slowdowns(sim, FAIR_P, &norm, &max);
    return (struct score){-norm, -max - 1e-6 * norm};
}

struct exhaustive {
    struct corun_sim *sim;
    const struct corun__sim_hw *hw;
    unsigned n;
    enum corun_sim_ref ref;
    bool counting;
    unsigned long leaves, budget;
    uint16_t *mask[EX_LEVELS]; /* tasks in each domain, per level */
    bool *used;
    int cur[EX_MAX_TASKS], best[EX_MAX_TASKS];
    double best_score;
};

static int ex_dom(const struct corun__sim_hw *hw, int l, unsigned c)
{
    switch (l) {
    case 0:
        return hw->core[c];
    case 1:
        return hw->l2[c];
    case 2:
        return hw->l3[c];
    case 3:
        return hw->numa[c];
    default:
        return hw->pkg[c];
    }
}

/* Whether free CPUs @a and @b are interchangeable for what is placed so far. */
static bool ex_same(const struct exhaustive *ex, unsigned a, unsigned b)
{
    const struct corun__sim_hw *hw = ex->hw;

    if (hw->cap[a] != hw->cap[b])
        return false;
    if ((hw->l2[a] >= 0 ? hw->l2_mb[hw->l2[a]] : 0) != (hw->l2[b] >= 0 ? hw->l2_mb[hw->l2[b]] : 0))
        return false;
    if ((hw->l3[a] >= 0 ? hw->l3_mb[hw->l3[a]] : 0) != (hw->l3[b] >= 0 ? hw->l3_mb[hw->l3[b]] : 0))
        return false;
    for (int l = 0; l < EX_LEVELS; l++) {
        int da = ex_dom(hw, l, a), db = ex_dom(hw, l, b);
        uint16_t ma = da >= 0 ? ex->mask[l][da] : 0, mb = db >= 0 ? ex->mask[l][db] : 0;

        if (ma != mb || (da < 0) != (db < 0))
            return false;
        /* Same occupants in the same domain: also symmetric only if the
         * domain itself is shared the same way (it is: same domain). */
    }
    return true;
}

static void ex_recurse(struct exhaustive *ex, unsigned i)
{
    const struct corun__sim_hw *hw = ex->hw;
    unsigned cand[256], ncand = 0;

    if (ex->leaves > ex->budget)
        return;
    if (i == ex->n) {
        ex->leaves++;
        if (!ex->counting) {
            double f = score(ex->sim, ex->ref, ex->cur).keep;

            if (ex->best_score != ex->best_score || f > ex->best_score + 1e-12) {
                ex->best_score = f;
                memcpy(ex->best, ex->cur, sizeof(ex->cur));
            }
        }
        return;
    }
    for (unsigned c = 0; c < hw->ncpus; c++) {
        bool dup = false;

        if (!hw->usable[c] || ex->used[c])
            continue;
        for (unsigned q = 0; q < ncand && !dup; q++)
            dup = ex_same(ex, cand[q], c);
        if (dup)
            continue;
        if (ncand == 256)
            break;
        cand[ncand++] = c;
    }
    for (unsigned q = 0; q < ncand; q++) {
        unsigned c = cand[q];

        ex->used[c] = true;
        ex->cur[i] = (int)c;
        for (int l = 0; l < EX_LEVELS; l++) {
            int d = ex_dom(hw, l, c);

            if (d >= 0)
                ex->mask[l][d] |= (uint16_t)(1u << i);
        }
        ex_recurse(ex, i + 1);
        for (int l = 0; l < EX_LEVELS; l++) {
            int d = ex_dom(hw, l, c);

            if (d >= 0)
                ex->mask[l][d] &= (uint16_t) ~(1u << i);
        }
        ex->used[c] = false;
    }
}

/* 1 if done (best in @cpu), 0 if over budget, -ENOMEM. */
static int exhaustive(struct corun_sim *sim, enum corun_sim_ref ref, int *cpu, unsigned *evals)
{
    const struct corun__sim_hw *hw = &sim->hw;
    struct exhaustive ex = {.sim = sim, .hw = hw, .n = sim->ntasks, .ref = ref, .best_score = NAN};
    unsigned nd[EX_LEVELS] = {hw->ncores, hw->nl2, hw->nl3, hw->nnuma, hw->npkgs};
    int rc = -ENOMEM;

    ex.budget = (unsigned long)(CORUN_SIM_EXHAUSTIVE_BUDGET * sim->effort);
    ex.used = calloc(hw->ncpus, sizeof(bool));
    for (int l = 0; l < EX_LEVELS; l++)
        ex.mask[l] = calloc(nd[l] + 1, sizeof(uint16_t));
    for (int l = 0; l < EX_LEVELS; l++)
        if (!ex.mask[l])
            goto out_free;
    if (!ex.used)
        goto out_free;
    ex.counting = true;
    ex_recurse(&ex, 0);
    rc = 0;
    if (ex.leaves > ex.budget)
        goto out_free;
    ex.counting = false;
    ex.leaves = 0;
    ex_recurse(&ex, 0);
    memcpy(cpu, ex.best, sim->ntasks * sizeof(int));
    *evals = (unsigned)ex.leaves;
    rc = 1;
out_free:
    for (int l = 0; l < EX_LEVELS; l++)
        free(ex.mask[l]);
    free(ex.used);
    return rc;
}

/* ---- matching (SMT pairs only) --------------------------------------------- */

/*
 * Matching size: the tasks plus "empty" slots so that a task may also get a
 * core of its own (as many as there are spare threads, at most one per
 * task), rounded up to even.
 */
static unsigned match_size(unsigned n, unsigned cores)
{
    unsigned spare = 2 * cores - n, m = n + (spare < n ? spare : n);

    return m + (m & 1) <= 2 * cores ? m + (m & 1) : m - 1;
}

/* Whether the only sharing below memory is the SMT pair: width 2, every
 * cache private to one core. */
static bool pairs_only(const struct corun__sim_hw *hw, const struct corun_topo *topo,
                       unsigned ntasks)
{
    const struct corun_topo_info *in = corun_topo_info(topo);
    unsigned usable_cores = 0;

    if (in->smt_width != 2)
        return false;
    for (enum corun_level l = CORUN_LEVEL_L2; l <= CORUN_LEVEL_L3; l++)
        for (unsigned d = 0; d < corun_topo_ndomains(topo, l); d++) {
            const struct corun_topo_domain *dom = corun_topo_domain(topo, l, d);

            if (dom->ncpus && hw->core[dom->cpus[0]] != hw->core[dom->cpus[dom->ncpus - 1]])
                return false;
        }
    for (unsigned d = 0; d < corun_topo_ndomains(topo, CORUN_LEVEL_CORE); d++) {
        const struct corun_topo_domain *dom = corun_topo_domain(topo, CORUN_LEVEL_CORE, d);

        if (dom->ncpus == 2 && hw->usable[dom->cpus[0]] && hw->usable[dom->cpus[1]])
            usable_cores++;
    }
    return ntasks > 12 && ntasks <= 2 * usable_cores && match_size(ntasks, usable_cores) <= 20;
}

/* Pair weights by exact DP over subsets (n <= 20 with dummies). */
static int matching(struct corun_sim *sim, bool maximise, int *cpu, unsigned *evals)
{
    const struct corun_topo *topo = sim->topo;
    unsigned n = sim->ntasks, m, *pairc = NULL, ncores = 0;
    double *w = NULL, *dp = NULL;
    int *choice = NULL, *tmp = NULL, rc = -ENOMEM;
    unsigned full;

    pairc = malloc(corun_topo_ndomains(topo, CORUN_LEVEL_CORE) * sizeof(unsigned));
    if (!pairc)
        goto out_free;
    for (unsigned d = 0; d < corun_topo_ndomains(topo, CORUN_LEVEL_CORE); d++) {
        const struct corun_topo_domain *dom = corun_topo_domain(topo, CORUN_LEVEL_CORE, d);

        if (dom->ncpus == 2 && sim->hw.usable[dom->cpus[0]] && sim->hw.usable[dom->cpus[1]])
            pairc[ncores++] = d;
    }
    m = match_size(n, ncores);
    w = calloc((size_t)m * m, sizeof(double));
    tmp = malloc(n * sizeof(int));
    dp = malloc(((size_t)1 << m) * sizeof(double));
    choice = malloc(((size_t)1 << m) * sizeof(int));
    if (!w || !tmp || !dp || !choice)
        goto out_free;
    /* Weight of a pair: its STP on one core, everything else spread on
     * other cores (the baseline's spreading keeps memory load comparable). */
    for (unsigned a = 0; a < m; a++)
        for (unsigned b = a + 1; b < m; b++) {
            const struct corun_topo_domain *c0 =
                corun_topo_domain(topo, CORUN_LEVEL_CORE, pairc[0]);
            unsigned next = 0;
            double stp, sa = 0;

            for (unsigned i = 0; i < n; i++)
                tmp[i] = -1;
            if (a < n)
                tmp[a] = (int)c0->cpus[0];
            if (b < n)
                tmp[b] = (int)c0->cpus[1];
            /* The others fill cores 1.. one thread each, then the second
             * threads: the load the pair would see on a full machine. */
            for (unsigned i = 0; i < n; i++)
                if (tmp[i] < 0) {
                    unsigned k = next++;

                    tmp[i] =
                        (int)corun_topo_domain(topo, CORUN_LEVEL_CORE, pairc[1 + k % (ncores - 1)])
                            ->cpus[(k / (ncores - 1)) % 2];
                }
            stp = corun__sim_eval(sim, tmp);
            (*evals)++;
            /* Keep only the pair's own part: subtract the others' share. */
            for (unsigned i = 0; i < n; i++)
                if (i != a && i != b)
                    sa += sim->eval.ips[i] / corun_sim_alone_ips(sim, i);
            w[a * m + b] = w[b * m + a] = stp - sa;
        }
    full = (1u << m) - 1;
    dp[0] = 0;
    for (unsigned s = 1; s <= full; s++) {
        unsigned a = (unsigned)__builtin_ctz(s);

        dp[s] = maximise ? -INFINITY : INFINITY;
        if (__builtin_popcount(s) & 1)
            continue;
        for (unsigned b = a + 1; b < m; b++)
            if (s & (1u << b)) {
                double v = dp[s & ~(1u << a) & ~(1u << b)] + w[a * m + b];

                if (maximise ? v > dp[s] : v < dp[s]) {
                    dp[s] = v;
                    choice[s] = (int)b;
                }
            }
    }
    for (unsigned s = full, core = 0; s; core++) {
        unsigned a = (unsigned)__builtin_ctz(s), b = (unsigned)choice[s];
        const struct corun_topo_domain *dom =
            corun_topo_domain(topo, CORUN_LEVEL_CORE, pairc[core]);

        if (a < n)
            cpu[a] = (int)dom->cpus[0];
        if (b < n)
            cpu[b] = (int)dom->cpus[1];
        s &= ~(1u << a) & ~(1u << b);
    }
    rc = 1;
out_free:
    free(w);
    free(tmp);
    free(pairc);
    free(dp);
    free(choice);
    return rc;
}

/* ---- annealing ------------------------------------------------------------- */

static int anneal(struct corun_sim *sim, enum corun_sim_ref ref, uint64_t seed, int *cpu,
                  unsigned *evals)
{
    const struct corun__sim_hw *hw = &sim->hw;
    unsigned n = sim->ntasks, steps = 150000u / (n ? n : 1), nfree;
    int *cur = malloc(n * sizeof(int)), *owner = malloc(hw->ncpus * sizeof(int));
    unsigned *freec = malloc(hw->ncpus * sizeof(unsigned));
    /* Temperatures go by the objective per task: STP is a sum over the
     * tasks, the fairest's walk a mean. */
    double best = NAN, per = ref == CORUN_SIM_REF_FAIREST ? 1 : (n ? n : 1);
    struct corun__rng r;
    bool distinct;
    int rc = -ENOMEM;

    if (!cur || !owner || !freec)
        goto out_free;
    if (steps > CORUN_SIM_ANNEAL_STEPS)
        steps = CORUN_SIM_ANNEAL_STEPS;
    steps = (unsigned)(steps * sim->effort);
    if (steps < 20)
        steps = 20;
    corun__rng_seed(&r, corun__seed_mix(seed, ref == CORUN_SIM_REF_ORACLE  ? 0x0a11u
                                              : ref == CORUN_SIM_REF_WORST ? 0x0badu
                                                                           : 0x0fa1u));
    for (unsigned rs = 0; rs < CORUN_SIM_ANNEAL_RESTARTS; rs++) {
        struct score f, g;
        double t0, t;

        for (unsigned i = 0; i < n; i++)
            cur[i] = -1;
        if (rs == 0)
            /* The baseline reference's own placement for this seed: the
             * search can only improve on it. */
            corun_sim_baseline_place(sim->topo, n, seed, cur);
        else
            random_place(hw, n, corun__seed_mix(seed, rs), cur);
        for (unsigned c = 0; c < hw->ncpus; c++)
            owner[c] = -1;
        distinct = true;
        for (unsigned i = 0; i < n; i++) {
            if (owner[cur[i]] >= 0)
                distinct = false;
            owner[cur[i]] = (int)i;
        }
        nfree = 0;
        for (unsigned c = 0; c < hw->ncpus; c++)
            if (hw->usable[c] && owner[c] < 0)
                freec[nfree++] = c;
        f = score(sim, ref, cur);
        (*evals)++;
        if (best != best || f.keep > best) {
            best = f.keep;
            memcpy(cpu, cur, n * sizeof(int));
        }
        t0 = 0.02 * fabs(f.walk) / per + 1e-6;
        for (unsigned s = 0; s < steps; s++) {
            unsigned a = corun__rng_below(&r, n), b = 0, fi = 0;
            int old_a = cur[a], old_b = -1;
            bool swap = !distinct || nfree == 0 || corun__rng_below(&r, 2) == 0;

            t = t0 * pow(1e-3, (double)s / steps);
            if (swap) {
                if (n < 2)
                    break;
                b = corun__rng_below(&r, n - 1);
                b += b >= a;
                old_b = cur[b];
                if (old_a == old_b)
                    continue;
                cur[a] = old_b;
                cur[b] = old_a;
            } else {
                fi = corun__rng_below(&r, nfree);
                cur[a] = (int)freec[fi];
            }
            g = score(sim, ref, cur);
            (*evals)++;
            if (g.walk >= f.walk || corun__rng_unit(&r) < exp((g.walk - f.walk) / t)) {
                f = g;
                if (!swap)
                    freec[fi] = (unsigned)old_a;
                if (f.keep > best) {
                    best = f.keep;
                    memcpy(cpu, cur, n * sizeof(int));
                }
            } else if (swap) {
                cur[a] = old_a;
                cur[b] = old_b;
            } else {
                cur[a] = old_a;
            }
        }
    }
    rc = 1;
out_free:
    free(cur);
    free(owner);
    free(freec);
    return rc;
}

int corun_sim_ref_place(struct corun_sim *sim, enum corun_sim_ref ref, uint64_t seed, int *cpu,
                        struct corun_sim_search *info)
{
    struct corun_sim_search dummy;
    unsigned nusable = 0;
    int rc;

    if (!info)
        info = &dummy;
    memset(info, 0, sizeof(*info));
    info->method = "-";
    for (unsigned i = 0; i < sim->ntasks; i++)
        cpu[i] = -1;
    for (unsigned c = 0; c < sim->hw.ncpus; c++)
        nusable += sim->hw.usable[c];
    switch (ref) {
    case CORUN_SIM_REF_BASELINE:
        corun_sim_baseline_place(sim->topo, sim->ntasks, seed, cpu);
        return cpu[0] < 0 ? -ENOMEM : 0;
    case CORUN_SIM_REF_RANDOM:
        random_place(&sim->hw, sim->ntasks, seed, cpu);
        return cpu[0] < 0 ? -ENOMEM : 0;
    case CORUN_SIM_REF_WORST:
    case CORUN_SIM_REF_ORACLE:
    case CORUN_SIM_REF_FAIREST:
        break;
    default:
        return -EINVAL;
    }
    if (sim->ntasks <= EX_MAX_TASKS && sim->ntasks <= nusable) {
        rc = exhaustive(sim, ref, cpu, &info->evaluations);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            info->method = "exhaustive";
            return 0;
        }
    }
    if (ref != CORUN_SIM_REF_FAIREST && pairs_only(&sim->hw, sim->topo, sim->ntasks)) {
        rc = matching(sim, ref == CORUN_SIM_REF_ORACLE, cpu, &info->evaluations);
        if (rc < 0)
            return rc;
        info->method = "matching";
        info->bound = true;
        return 0;
    }
    rc = anneal(sim, ref, seed, cpu, &info->evaluations);
    if (rc < 0)
        return rc;
    info->method = "annealing";
    info->bound = true;
    return 0;
}

/* ---- runs ------------------------------------------------------------------ */

/* Runs placement @cpu on a fresh simulation for the duration (or until the
 * work is done). */
static int run_placement(const struct corun_topo *topo, const struct corun_sim_machine *m,
                         const struct corun_sim_task *tasks, unsigned ntasks, const int *cpu,
                         const struct corun_sim_run_opts *opts, struct corun_sim_result *out)
{
    struct corun_sim *sim;
    int err = corun_sim_create(topo, m, tasks, ntasks, opts->seed, &sim);

    if (err)
        return err;
    err = corun_sim_place(sim, cpu);
    if (!err)
        err = corun_sim_step(sim, opts->duration_s);
    if (!err)
        err = corun_sim_result(sim, out);
    corun_sim_free(sim);
    return err;
}

static void accumulate(struct corun_sim_result *acc, const struct corun_sim_result *r, unsigned k)
{
    /* Running means over seeds; per-task rows stay those of the first. */
    acc->stp += (r->stp - acc->stp) / k;
    acc->antt += (r->antt - acc->antt) / k;
    acc->max_slowdown += (r->max_slowdown - acc->max_slowdown) / k;
    acc->makespan_s += (r->makespan_s - acc->makespan_s) / k;
    acc->mean_completion_s += (r->mean_completion_s - acc->mean_completion_s) / k;
    acc->migrations += r->migrations;
}

int corun_sim_run_ref(const struct corun_topo *topo, const struct corun_sim_machine *m,
                      const struct corun_sim_task *tasks, unsigned ntasks, enum corun_sim_ref ref,
                      const struct corun_sim_run_opts *opts, struct corun_sim_result *out,
                      struct corun_sim_search *info)
{
    struct corun_sim *sim = NULL;
    unsigned seeds = opts->seeds ? opts->seeds : 5;
    int *cpu = malloc(ntasks * sizeof(int)), err;

    memset(out, 0, sizeof(*out));
    if (!cpu)
        return -ENOMEM;
    err = corun_sim_create(topo, m, tasks, ntasks, opts->seed, &sim);
    if (err)
        goto out_free;
    corun_sim_set_effort(sim, opts->effort);
    if (ref != CORUN_SIM_REF_BASELINE && ref != CORUN_SIM_REF_RANDOM)
        seeds = 1;
    for (unsigned k = 0; k < seeds; k++) {
        struct corun_sim_result r;

        err = corun_sim_ref_place(sim, ref, corun__seed_mix(opts->seed, k), cpu, info);
        if (err)
            goto out_free;
        err = run_placement(topo, m, tasks, ntasks, cpu, opts, &r);
        if (err)
            goto out_free;
        if (k == 0) {
            *out = r;
            continue;
        }
        accumulate(out, &r, k + 1);
        corun_sim_result_release(&r);
    }
out_free:
    if (err)
        corun_sim_result_release(out);
    corun_sim_free(sim);
    free(cpu);
    return err;
}
