/*
 * sim-model.c — the contention equations of SIMULATOR.md, solved as a
 * damped fixed point.
 *
 * Given where each task runs and which phase it is in, the solver finds the
 * instructions per second of every task that are consistent with
 *   1. frequency: per package, turbo by the number of active cores, capped by
 *      the throttle trace, scaled by the CPU kind's capacity;
 *   2. shared caches: in each shared L2 and L3, shares in proportion to the
 *      insertion rates IPS·MPKI(c)/1000;
 *   3. memory: per NUMA node, bandwidth Σ IPS·MPKI/1000·64·pf and the loaded
 *      latency l0·(1 + 0.6·u^1.5); above b_max the latency rises (bisection)
 *      until the demand fits;
 *   4. time per instruction cpi·σ/f + MPKI/1000·L/mlp·(1 + smt_penalty);
 *   5. SMT issue sharing: the stretch σ ≥ 1 that makes the issue demand of
 *      the threads of a core fit its capacity.
 * Everything is a sum per domain, so one iteration costs O(tasks + domains);
 * no pairwise loop. Two calibrated extensions (docs/internals/sim.md): a
 * thread stalled on memory still holds `stall_hold` of the issue capacity
 * (its ROB and scheduler entries), and the threads of a core share its
 * `mlp_core` miss buffers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-internal.h"

#define SOLVE_MAX_ITER 30
#define SOLVE_MIN_ITER 10
#define SOLVE_TOL      1e-7
#define SOLVE_DAMP     0.8
#define LINE_BYTES     64.0
#define SMT_REF_WIDTH  2.7

double corun_sim_turbo_ghz(const struct corun_sim_machine *m, unsigned n_active, unsigned ncores)
{
    double frac;

    if (m->turbo == CORUN_SIM_TURBO_FLAT || m->turbo1_ghz <= 0)
        return m->base_ghz;
    if (n_active <= 1 || ncores <= 1)
        return m->turbo1_ghz;
    if (n_active > ncores)
        n_active = ncores;
    frac = (double)(n_active - 1) / (double)(ncores - 1);
    if (m->turbo == CORUN_SIM_TURBO_STEPS)
        frac = floor(frac * 4.0 + 1e-9) / 4.0; /* four bins, like Intel's turbo ratio table */
    return m->turbo1_ghz - (m->turbo1_ghz - m->turbo_all_ghz) * frac;
}

double *corun_sim_turbo_table(const struct corun_topo *topo, const struct corun_sim_machine *m,
                              unsigned *n)
{
    unsigned np = corun_topo_ndomains(topo, CORUN_LEVEL_PACKAGE);
    double *rel;

    *n = corun_topo_ndomains(topo, CORUN_LEVEL_CORE) / (np ? np : 1);
    rel = *n ? malloc(*n * sizeof(*rel)) : NULL;
    for (unsigned k = 1; rel && k <= *n; k++)
        rel[k - 1] = corun_sim_turbo_ghz(m, k, *n) / corun_sim_turbo_ghz(m, 1, *n);
    return rel;
}

double corun_sim_loaded_latency_ns(const struct corun_sim_machine *m, double u)
{
    if (!(u > 0))
        u = 0;
    if (u > 0.99)
        u = 0.99;
    return m->l0_ns * (1.0 + 0.6 * pow(u, 1.5));
}

static double throttle_cap(const struct corun_sim_machine *m, double t_s)
{
    double cap = 0;

    for (unsigned i = 0; i < m->nthrottle; i++)
        if (m->throttle[i].t_s <= t_s)
            cap = m->throttle[i].cap_ghz;
    return cap;
}

int corun__solve_init(struct corun__solve *s, const struct corun__sim_hw *hw, unsigned ntasks)
{
    unsigned n = ntasks ? ntasks : 1;
    double **dt[] = {&s->ips,   &s->ghz,   &s->cache_mb, &s->mpki, &s->lat_ns,
                     &s->sigma, &s->share, &s->a,        &s->k,    &s->newips};

    memset(s, 0, sizeof(*s));
    s->ntasks = ntasks;
    for (size_t i = 0; i < sizeof(dt) / sizeof(dt[0]); i++)
        if (!(*dt[i] = calloc(n, sizeof(double))))
            goto out_nomem;
    s->bw_bps = calloc(hw->nnuma + 1, sizeof(double));
    s->mem_lat_ns = calloc(hw->nnuma + 1, sizeof(double));
    s->rho_l2 = calloc(hw->nl2 + 1, sizeof(double));
    s->rho_l3 = calloc(hw->nl3 + 1, sizeof(double));
    s->mlp_sum = calloc(hw->ncores + 1, sizeof(double));
    s->cpu_load_d = calloc(hw->ncores + 1, sizeof(double));
    s->cpu_load = calloc(hw->ncpus + 1, sizeof(unsigned));
    s->core_busy = calloc(hw->ncores + 1, sizeof(unsigned));
    s->pkg_act = calloc(hw->npkgs + 1, sizeof(unsigned));
    s->sib = calloc(n, 1);
    s->touched_cpu = calloc(n, sizeof(int));
    if (!s->bw_bps || !s->mem_lat_ns || !s->rho_l2 || !s->rho_l3 || !s->mlp_sum || !s->cpu_load_d ||
        !s->cpu_load || !s->core_busy || !s->pkg_act || !s->sib || !s->touched_cpu)
        goto out_nomem;
    return 0;
out_nomem:
    corun__solve_release(s);
    return -ENOMEM;
}

void corun__solve_release(struct corun__solve *s)
{
    void *p[] = {s->ips,     s->ghz,    s->cache_mb,   s->mpki,       s->lat_ns,   s->sigma,
                 s->share,   s->a,      s->k,          s->newips,     s->bw_bps,   s->mem_lat_ns,
                 s->rho_l2,  s->rho_l3, s->mlp_sum,    s->cpu_load_d, s->cpu_load, s->core_busy,
                 s->pkg_act, s->sib,    s->touched_cpu};

    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        free(p[i]);
    memset(s, 0, sizeof(*s));
}

static inline double miss_curve(const struct corun_sim_phase *p, double c_mb)
{
    return p->mpki_min + (p->mpki_max - p->mpki_min) * exp(-c_mb / p->ws_mb);
}

/* Occupancy: who runs where, which cores are busy, how many per package. */
static void solve_occupancy(struct corun__solve *s, const struct corun__sim_hw *hw,
                            const struct corun_sim_machine *m, const int *cpu, double t_s)
{
    unsigned n = s->ntasks;
    double cap = throttle_cap(m, t_s);

    memset(s->core_busy, 0, hw->ncores * sizeof(unsigned));
    memset(s->pkg_act, 0, hw->npkgs * sizeof(unsigned));
    for (unsigned j = 0; j < n; j++)
        if (cpu[j] >= 0)
            s->cpu_load[cpu[j]] = 0;
    for (unsigned j = 0; j < n; j++)
        if (cpu[j] >= 0 && s->cpu_load[cpu[j]]++ == 0) {
            int core = hw->core[cpu[j]];

            if (core >= 0 && s->core_busy[core]++ == 0)
                s->pkg_act[hw->pkg[cpu[j]]]++;
        }
    for (unsigned j = 0; j < n; j++) {
        int c = cpu[j];
        double f;

        if (c < 0) {
            s->share[j] = 0;
            continue;
        }
        s->share[j] = 1.0 / s->cpu_load[c];
        s->sib[j] = hw->core[c] >= 0 && s->core_busy[hw->core[c]] >= 2;
        f = corun_sim_turbo_ghz(m, s->pkg_act[hw->pkg[c]], hw->pkg_ncores[hw->pkg[c]]);
        if (cap > 0 && cap < f)
            f = cap;
        s->ghz[j] = f * hw->cap[c];
    }
}

/* Step 2: cache shares by insertion rate, then each task's MPKI. */
static void solve_caches(struct corun__solve *s, const struct corun__sim_hw *hw,
                         const struct corun_sim_phase *const *ph, const int *cpu)
{
    unsigned n = s->ntasks;

    for (unsigned j = 0; j < n; j++) {
        int c = cpu[j];

        if (c < 0)
            continue;
        if (hw->l2[c] >= 0)
            s->rho_l2[hw->l2[c]] = 0;
        if (hw->l3[c] >= 0)
            s->rho_l3[hw->l3[c]] = 0;
    }
    for (unsigned j = 0; j < n; j++) {
        int c = cpu[j];
        /* A floor keeps an idle-looking task from getting no share at all. */
        double rho = s->ips[j] * s->mpki[j] * 1e-3 + 1e-3;

        if (c < 0)
            continue;
        if (hw->l2[c] >= 0)
            s->rho_l2[hw->l2[c]] += rho;
        if (hw->l3[c] >= 0)
            s->rho_l3[hw->l3[c]] += rho;
    }
    for (unsigned j = 0; j < n; j++) {
        int c = cpu[j];
        double rho = s->ips[j] * s->mpki[j] * 1e-3 + 1e-3, mb = 0;

        if (c < 0)
            continue;
        if (hw->l2[c] >= 0)
            mb += hw->l2_mb[hw->l2[c]] * rho / s->rho_l2[hw->l2[c]];
        if (hw->l3[c] >= 0)
            mb += hw->l3_mb[hw->l3[c]] * rho / s->rho_l3[hw->l3[c]];
        s->cache_mb[j] = mb;
        s->mpki[j] = miss_curve(ph[j], mb);
    }
}

/* Compute time a (s/instr) and memory-time coefficient k (s/instr per ns of latency). */
static void solve_coeffs(struct corun__solve *s, const struct corun__sim_hw *hw,
                         const struct corun_sim_machine *m, const struct corun_sim_phase *const *ph,
                         const int *cpu, const int *home)
{
    unsigned n = s->ntasks;

    for (unsigned j = 0; j < n; j++)
        if (cpu[j] >= 0 && hw->core[cpu[j]] >= 0)
            s->mlp_sum[hw->core[cpu[j]]] = 0;
    for (unsigned j = 0; j < n; j++)
        if (cpu[j] >= 0 && hw->core[cpu[j]] >= 0)
            s->mlp_sum[hw->core[cpu[j]]] += s->share[j] * ph[j]->mlp;
    for (unsigned j = 0; j < n; j++) {
        const struct corun_sim_phase *p = ph[j];
        int c = cpu[j], core;
        double mlp = p->mlp, rf = 1.0;

        if (c < 0)
            continue;
        core = hw->core[c];
        if (core >= 0 && s->mlp_sum[core] > m->mlp_core)
            mlp *= m->mlp_core / s->mlp_sum[core];
        if (home && home[j] >= 0 && home[j] != hw->numa[c])
            rf = m->remote;
        s->a[j] = p->cpi_core / (s->ghz[j] * 1e9);
        s->k[j] = s->mpki[j] * 1e-3 * rf * 1e-9 / mlp * (1.0 + p->smt_penalty * s->sib[j]);
    }
}

/*
 * Σ D_j(σ) - cap and its derivative for the threads @idx of one core, where
 * D_j(σ) = share·(a·u_disp + m·θ)/(a·σ + m): the issue slots thread j needs.
 */
static double issue_excess(const struct corun__solve *s, const struct corun_sim_phase *const *ph,
                           const unsigned *idx, unsigned cnt, double sigma, double theta,
                           double cap, double *deriv)
{
    double d = 0, dd = 0;

    for (unsigned i = 0; i < cnt; i++) {
        unsigned j = idx[i];
        double mem = s->k[j] * s->lat_ns[j], den = s->a[j] * sigma + mem;
        double num = s->share[j] * (s->a[j] * ph[j]->u_disp + mem * theta);

        d += num / den;
        dd -= num * s->a[j] / (den * den);
    }
    *deriv = dd;
    return d - cap;
}

/*
 * Step 5: per SMT core, the stretch σ ≥ 1 that makes Σ D_j(σ) fit the
 * capacity. Σ D is convex and decreasing in σ, so Newton's method converges
 * to the root from either side without oscillating: a few steps instead of
 * a bisection's forty.
 * @order lists the placed tasks grouped by core.
 */
static void solve_smt(struct corun__solve *s, const struct corun__sim_hw *hw,
                      const struct corun_sim_machine *m, const struct corun_sim_phase *const *ph,
                      const int *cpu, const unsigned *order, unsigned nplaced)
{
    double cap = m->w_eff / SMT_REF_WIDTH, theta = m->stall_hold;

    for (unsigned i = 0; i < nplaced;) {
        unsigned j = order[i], e = i + 1;
        int core = hw->core[cpu[j]];
        double sigma = 1, deriv, f;

        while (e < nplaced && hw->core[cpu[order[e]]] == core)
            e++;
        if (core >= 0 && s->core_busy[core] >= 2) {
            /* Warm start from the previous iteration's σ: from the right of
             * the root the first step lands left of it (the tangent of a
             * convex function lies below it), then the climb is monotone. */
            sigma = s->sigma[j] > 1 ? s->sigma[j] : 1;
            for (int it = 0; it < 50; it++) {
                double next;

                f = issue_excess(s, ph, order + i, e - i, sigma, theta, cap, &deriv);
                if (fabs(f) < 1e-13 || !(deriv < 0) || (sigma <= 1 && f <= 0))
                    break;
                next = sigma - f / deriv;
                if (next < 1)
                    next = 1;
                if (fabs(next - sigma) <= 1e-13 * sigma)
                    break;
                sigma = next;
            }
        }
        for (unsigned q = i; q < e; q++)
            s->sigma[order[q]] = sigma;
        i = e;
    }
}

static double domain_bw(const struct corun__solve *s, const struct corun_sim_phase *const *ph,
                        const unsigned *idx, unsigned cnt, double lat, const double *ips_in)
{
    double b = 0;

    for (unsigned i = 0; i < cnt; i++) {
        unsigned j = idx[i];
        double ips = ips_in ? ips_in[j] : s->share[j] / (s->a[j] * s->sigma[j] + s->k[j] * lat);

        b += ips * s->mpki[j] * 1e-3 * LINE_BYTES * ph[j]->pf;
    }
    return b;
}

/*
 * Step 3: per memory domain, latency from the utilisation the current rates
 * draw; where even the saturated latency leaves demand above b_max, the
 * latency that brings it down to b_max exactly (bisection, upper end kept so
 * that the bandwidth never exceeds b_max).
 */
static void solve_memory(struct corun__solve *s, const struct corun_sim_machine *m,
                         const struct corun_sim_phase *const *ph, const unsigned *order,
                         unsigned nplaced, const int *memdom, bool exact)
{
    double bmax = m->bmax_gbps * 1e9;

    for (unsigned i = 0; i < nplaced;) {
        unsigned e = i + 1;
        int d = memdom[order[i]];
        double b, lat, lo, hi;

        while (e < nplaced && memdom[order[e]] == d)
            e++;
        b = domain_bw(s, ph, order + i, e - i, 0, exact ? NULL : s->ips);
        if (exact) {
            /* L = l0(1 + 0.6 u(L)^1.5) with u from the rates at L: monotone, bisect. */
            lo = m->l0_ns;
            hi = corun_sim_loaded_latency_ns(m, 0.99);
            if (domain_bw(s, ph, order + i, e - i, hi, NULL) < 0.99 * bmax) {
                for (int it = 0; it < 50; it++) {
                    double mid = 0.5 * (lo + hi);
                    double u = domain_bw(s, ph, order + i, e - i, mid, NULL) / bmax;

                    if (mid < corun_sim_loaded_latency_ns(m, u))
                        lo = mid;
                    else
                        hi = mid;
                }
                lat = hi;
            } else {
                lo = hi;
                while (domain_bw(s, ph, order + i, e - i, hi, NULL) > bmax)
                    hi *= 2;
                for (int it = 0; it < 60; it++) {
                    double mid = 0.5 * (lo + hi);

                    if (domain_bw(s, ph, order + i, e - i, mid, NULL) > bmax)
                        lo = mid;
                    else
                        hi = mid;
                }
                lat = hi;
            }
        } else {
            lat = corun_sim_loaded_latency_ns(m, b / bmax);
        }
        s->mem_lat_ns[d] = lat;
        for (unsigned q = i; q < e; q++)
            s->lat_ns[order[q]] = lat;
        i = e;
    }
}

/* Sorts the placed tasks by @key (counting sort over @nkeys values) into @out. */
static unsigned sort_by(const int *key, unsigned nkeys, const int *cpu, unsigned n, unsigned *count,
                        unsigned *out)
{
    unsigned placed = 0, pos = 0;

    memset(count, 0, (nkeys + 1) * sizeof(unsigned));
    for (unsigned j = 0; j < n; j++)
        if (cpu[j] >= 0) {
            count[key[j] + 1]++;
            placed++;
        }
    for (unsigned d = 0; d < nkeys; d++) {
        unsigned c = count[d + 1];

        count[d + 1] = pos;
        pos += c;
    }
    for (unsigned j = 0; j < n; j++)
        if (cpu[j] >= 0)
            out[count[key[j] + 1]++] = j;
    return placed;
}

void corun__solve_run(struct corun__solve *s, const struct corun__sim_hw *hw,
                      const struct corun_sim_machine *m, const struct corun_sim_phase *const *ph,
                      const int *cpu, const int *home, double t_s)
{
    unsigned n = s->ntasks, nplaced;
    unsigned *by_core, *by_mem, *count;
    int *corekey, *memdom;
    unsigned nkeys = (hw->ncores > hw->nnuma ? hw->ncores : hw->nnuma) + 2;

    /* Small per-call buffers: the solver is re-entrant and allocation is
     * cheap next to the iterations. */
    by_core = malloc(n * sizeof(unsigned));
    by_mem = malloc(n * sizeof(unsigned));
    count = malloc((nkeys + 1) * sizeof(unsigned));
    corekey = malloc(n * sizeof(int));
    memdom = malloc(n * sizeof(int));
    if (!by_core || !by_mem || !count || !corekey || !memdom)
        goto out_free; /* outputs stay as they were; callers see stale zeros */

    solve_occupancy(s, hw, m, cpu, t_s);
    for (unsigned j = 0; j < n; j++) {
        corekey[j] = cpu[j] >= 0 && hw->core[cpu[j]] >= 0 ? hw->core[cpu[j]] : (int)hw->ncores;
        memdom[j] = cpu[j] >= 0 ? (home && home[j] >= 0 ? home[j] : hw->numa[cpu[j]]) : 0;
        if (cpu[j] < 0) {
            s->ips[j] = s->cache_mb[j] = s->lat_ns[j] = s->ghz[j] = 0;
            s->mpki[j] = ph[j]->mpki_max;
            s->sigma[j] = 1;
            continue;
        }
        /* Start from the task alone at full speed with no cache: a point on
         * the same side of the fixed point for every task. */
        s->mpki[j] = ph[j]->mpki_max;
        s->lat_ns[j] = m->l0_ns;
        s->sigma[j] = 1;
        s->ips[j] = s->share[j] / (ph[j]->cpi_core / (s->ghz[j] * 1e9) +
                                   s->mpki[j] * 1e-12 * m->l0_ns / ph[j]->mlp);
    }
    nplaced = sort_by(corekey, hw->ncores + 1, cpu, n, count, by_core);
    sort_by(memdom, hw->nnuma, cpu, n, count, by_mem);
    for (unsigned d = 0; d < hw->nnuma; d++) {
        s->bw_bps[d] = 0;
        s->mem_lat_ns[d] = m->l0_ns;
    }

    for (int it = 0; it < SOLVE_MAX_ITER; it++) {
        bool last = it == SOLVE_MAX_ITER - 1;
        double change = 0;

        solve_caches(s, hw, ph, cpu);
        solve_coeffs(s, hw, m, ph, cpu, home);
        solve_smt(s, hw, m, ph, cpu, by_core, nplaced);
        solve_memory(s, m, ph, by_mem, nplaced, memdom, false);
        for (unsigned i = 0; i < nplaced; i++) {
            unsigned j = by_core[i];
            double v = s->share[j] / (s->a[j] * s->sigma[j] + s->k[j] * s->lat_ns[j]);
            double d = fabs(v - s->ips[j]) / v;

            if (d > change)
                change = d;
            s->ips[j] = SOLVE_DAMP * v + (1 - SOLVE_DAMP) * s->ips[j];
        }
        if (last || (it + 1 >= SOLVE_MIN_ITER && change < SOLVE_TOL))
            break;
    }
    /* Final undamped pass with exact memory: the answer obeys b_max exactly
     * and every share sums to its cache's capacity. */
    solve_caches(s, hw, ph, cpu);
    solve_coeffs(s, hw, m, ph, cpu, home);
    solve_smt(s, hw, m, ph, cpu, by_core, nplaced);
    solve_memory(s, m, ph, by_mem, nplaced, memdom, true);
    for (unsigned i = 0; i < nplaced; i++) {
        unsigned j = by_core[i];

        s->ips[j] = s->share[j] / (s->a[j] * s->sigma[j] + s->k[j] * s->lat_ns[j]);
    }
    for (unsigned i = 0; i < nplaced;) {
        unsigned e = i + 1;
        int d = memdom[by_mem[i]];

        while (e < nplaced && memdom[by_mem[e]] == d)
            e++;
        s->bw_bps[d] = domain_bw(s, ph, by_mem + i, e - i, 0, s->ips);
        i = e;
    }
out_free:
    free(by_core);
    free(by_mem);
    free(count);
    free(corekey);
    free(memdom);
}
