/*
 * fit-cache-prior.c — derives the shared-cache sensitivities of small
 * working sets that the corun policy starts from (cache_full[] and
 * cache_ws_mb[] in src/model/profile-prior.c) from the simulator, so that
 * they can be re-fitted whenever the model changes.
 *
 * For each fixture topology and each shared cache level it has (an L2 of
 * several cores, an L3), two tasks run on an otherwise idle machine: once
 * on two cores sharing that cache, once on two cores that do not (same
 * memory node and, for an L2, the same L3). The victim's extra run time
 * from sharing is speed apart / speed sharing - 1. The model it is fitted
 * to is the predictor's for one aggressor:
 *     sens_v * phi(press_a),  phi(p) = p / (1 + p),
 *     sens_v = full_v * (exp(-P / ws_v) - exp(-(P + C) / ws_v))
 * with press_a the aggressor class's L3 pressure prior, C the shared cache
 * and P the private cache below it (32 KB of L1 under a shared L2; a core's
 * part of its L2 under an L3). For each class, ws is searched on a grid and
 * full is then the least-squares fit; the residual is printed beside that of
 * the size-scaled model (one sensitivity per class times the cache's size
 * over 16 MB within 0.25..2, its own least-squares fit). A third line per
 * class fits the model the predictor now uses, phi replaced by
 * corun__cache_loss(press_v, press_a, C / ws): the victim keeps its share
 * by insertion rate, and loses what its miss curve says of it.
 *
 * Usage: fit-cache-prior. The last line is JSON: per class, ws, full and
 * both residuals (sums of squares over the sum of the squared figures).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corun/profile.h"
#include "corun/sim.h"
#include "corun/topo.h"
#include "model/profile-internal.h"
#include "victim-speed.h"

#define MAXG 64

static const char *const cls_name[NCLS] = {"compute", "sheep", "rabbit", "chasing", "streaming"};
static const double ws_grid[] = {0.25, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64};

/* One measured geometry: the extra run time of each victim beside each
 * aggressor. */
struct geom {
    char name[64];
    const char *level;
    double c_mb, p_mb;
    double x[NCLS][NCLS];
};

static struct geom geoms[MAXG];
static unsigned ngeoms;

static double mb(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

/* Cores (first threads) among the CPUs of @d. */
static unsigned cores_in(const struct corun_topo *t, const struct corun_topo_domain *d)
{
    unsigned n = 0;

    for (unsigned k = 0; k < d->ncpus; k++)
        n += corun_topo_cpu(t, d->cpus[k])->smt_rank == 0;
    return n;
}

/* Measures @level of @t, if it is shared by cores: a victim CPU, one
 * sharing the cache with it and one not. */
static void measure(const char *name, const struct corun_topo *t, const struct corun_sim_machine *m,
                    enum corun_level level)
{
    unsigned n = corun_topo_ncpus(t);
    const struct corun_topo_cpu *c0 = NULL;
    const struct corun_topo_domain *d;
    struct geom *g = &geoms[ngeoms];
    int a0 = -1, same = -1, far = -1;

    for (unsigned c = 0; c < n && a0 < 0; c++) {
        const struct corun_topo_cpu *cc = corun_topo_cpu(t, c);

        if (cc->usable && cc->smt_rank == 0 && cc->dom[level] >= 0 &&
            cores_in(t, corun_topo_domain(t, level, (unsigned)cc->dom[level])) >= 2) {
            a0 = (int)c;
            c0 = cc;
        }
    }
    if (a0 < 0 || ngeoms >= MAXG)
        return;
    for (unsigned c = 0; c < n; c++) {
        const struct corun_topo_cpu *cc = corun_topo_cpu(t, c);

        if ((int)c == a0 || !cc->usable || cc->smt_rank ||
            cc->dom[CORUN_LEVEL_CORE] == c0->dom[CORUN_LEVEL_CORE] ||
            cc->dom[CORUN_LEVEL_NUMA] != c0->dom[CORUN_LEVEL_NUMA])
            continue;
        if (same < 0 && cc->dom[level] == c0->dom[level])
            same = (int)c;
        if (far < 0 && cc->dom[level] != c0->dom[level] &&
            (level != CORUN_LEVEL_L2 || cc->dom[CORUN_LEVEL_L3] == c0->dom[CORUN_LEVEL_L3]))
            far = (int)c;
    }
    if (same < 0 || far < 0)
        return;
    d = corun_topo_domain(t, level, (unsigned)c0->dom[level]);
    snprintf(g->name, sizeof(g->name), "%s", name);
    g->level = level == CORUN_LEVEL_L2 ? "L2" : "L3";
    g->c_mb = mb(d->size_bytes);
    g->p_mb = 0.032;
    if (level == CORUN_LEVEL_L3 && c0->dom[CORUN_LEVEL_L2] >= 0) {
        const struct corun_topo_domain *l2 =
            corun_topo_domain(t, CORUN_LEVEL_L2, (unsigned)c0->dom[CORUN_LEVEL_L2]);

        g->p_mb = mb(l2->size_bytes) / (cores_in(t, l2) ? cores_in(t, l2) : 1);
    }
    if (!(g->c_mb > 0))
        return;
    for (int v = 0; v < NCLS; v++)
        for (int a = 0; a < NCLS; a++) {
            double s_same = victim_speed(t, m, v, a, a0, same);
            double s_far = victim_speed(t, m, v, a, a0, far);

            g->x[v][a] = s_same > 0 && s_far > 0 ? s_far / s_same - 1 : NAN;
        }
    ngeoms++;
}

static double phi(double p)
{
    return p / (1 + p);
}

/* The feature of geometry @g for victim @v and aggressor pressure @pa: the
 * model's prediction with full = 1. */
static double feat_ws(const struct geom *g, double ws, double pa)
{
    return (exp(-g->p_mb / ws) - exp(-(g->p_mb + g->c_mb) / ws)) * phi(pa);
}

/* The same with the victim's share by insertion rate (its own pressure
 * @pv against @pa) over its miss curve: corun__cache_loss(). */
static double feat_share(const struct geom *g, double ws, double pv, double pa)
{
    return (exp(-g->p_mb / ws) - exp(-(g->p_mb + g->c_mb) / ws)) *
           corun__cache_loss(pv, pa, g->c_mb / ws);
}

static double feat_scaled(const struct geom *g, double pa)
{
    double sc = g->c_mb / 16;

    return (sc < 0.25 ? 0.25 : sc > 2 ? 2 : sc) * phi(pa);
}

/* Least-squares coefficient of @f (per geometry and aggressor) for victim
 * @v, and the residual over the sum of the squared figures. */
static double fit(int v, int kind, double ws, double *resid)
{
    double num = 0, den = 0, tot = 0, err = 0, k;

    for (unsigned i = 0; i < ngeoms; i++)
        for (int a = 0; a < NCLS; a++) {
            double pa, pv, y = geoms[i].x[v][a], f;

            corun_profile_prior((enum corun_class)a, CORUN_LEVEL_L3, &pa, NULL);
            corun_profile_prior((enum corun_class)v, CORUN_LEVEL_L3, &pv, NULL);
            f = kind == 2 ? feat_share(&geoms[i], ws, pv, pa)
                : kind    ? feat_ws(&geoms[i], ws, pa)
                          : feat_scaled(&geoms[i], pa);
            if (isnan(y))
                continue;
            num += f * y;
            den += f * f;
            tot += y * y;
        }
    k = den > 0 ? num / den : 0;
    for (unsigned i = 0; i < ngeoms; i++)
        for (int a = 0; a < NCLS; a++) {
            double pa, pv, y = geoms[i].x[v][a], f;

            corun_profile_prior((enum corun_class)a, CORUN_LEVEL_L3, &pa, NULL);
            corun_profile_prior((enum corun_class)v, CORUN_LEVEL_L3, &pv, NULL);
            f = kind == 2 ? feat_share(&geoms[i], ws, pv, pa)
                : kind    ? feat_ws(&geoms[i], ws, pa)
                          : feat_scaled(&geoms[i], pa);
            if (!isnan(y))
                err += (k * f - y) * (k * f - y);
        }
    *resid = tot > 0 ? err / tot : NAN;
    return k;
}

/* fit() of model @kind for victim @v at the grid's best ws (in *@ws, its
 * residual in *@resid): the coefficient full. */
static double fit_best_ws(int v, int kind, double *ws, double *resid)
{
    double best_k = NAN, r, k;

    *resid = INFINITY;
    *ws = NAN;
    for (size_t w = 0; w < sizeof(ws_grid) / sizeof(ws_grid[0]); w++) {
        k = fit(v, kind, ws_grid[w], &r);
        if (r < *resid) {
            *resid = r;
            *ws = ws_grid[w];
            best_k = k;
        }
    }
    return best_k;
}

int main(void)
{
    char path[512], json[4096];
    size_t jl = 0;
    DIR *dir = opendir(CORUN_FIXTURES "/topologies");
    struct dirent *e;
    char *names[64];
    unsigned nnames = 0;

    while (dir && (e = readdir(dir)))
        if (strstr(e->d_name, ".xml") && nnames < 64)
            names[nnames++] = strdup(e->d_name);
    if (dir)
        closedir(dir);
    qsort(names, nnames, sizeof(*names), (int (*)(const void *, const void *))strcmp);
    for (unsigned i = 0; i < nnames; i++) {
        struct corun_topo_opts o = {.source = CORUN_TOPO_XML, .input = path};
        struct corun_sim_machine m;
        struct corun_topo *t;

        snprintf(path, sizeof(path), "%s/topologies/%s", CORUN_FIXTURES, names[i]);
        if (corun_topo_load(&o, &t) == 0) {
            corun_sim_machine_defaults(t, &m);
            measure(names[i], t, &m, CORUN_LEVEL_L2);
            measure(names[i], t, &m, CORUN_LEVEL_L3);
            corun_topo_free(t);
        }
        free(names[i]);
    }
    printf("victim's extra run time beside one aggressor in a shared cache (apart / sharing - 1)\n");
    for (unsigned i = 0; i < ngeoms; i++) {
        const struct geom *g = &geoms[i];

        printf("\n%s, %s of %.3g MB over %.3g MB private\n%-10s", g->name, g->level, g->c_mb,
               g->p_mb, "victim");
        for (int a = 0; a < NCLS; a++)
            printf(" %9s", cls_name[a]);
        printf("\n");
        for (int v = 0; v < NCLS; v++) {
            printf("%-10s", cls_name[v]);
            for (int a = 0; a < NCLS; a++)
                printf(" %9.4f", g->x[v][a]);
            printf("\n");
        }
    }
    printf("\nper class: best ws (MB) and full; residual of that model and of the size-scaled "
           "one\n");
    jl += (size_t)snprintf(json + jl, sizeof(json) - jl,
                           "{\"bench\":\"fit-cache-prior\",\"geometries\":%u,\"classes\":[",
                           ngeoms);
    for (int v = 0; v < NCLS; v++) {
        double best_ws, best_k, best_r, w2, k2, r2, rs, k;

        best_k = fit_best_ws(v, 1, &best_ws, &best_r);
        k2 = fit_best_ws(v, 2, &w2, &r2);
        k = fit(v, 0, 0, &rs);
        printf("%-10s ws %6.2f  full %6.3f  residual %.3f  (size-scaled: %.3f at %.3f)\n",
               cls_name[v], best_ws, best_k, best_r, rs, k);
        printf("%-10s by share: ws %6.2f  full %6.3f  residual %.3f\n", "", w2, k2, r2);
        jl += (size_t)snprintf(json + jl, sizeof(json) - jl,
                               "%s{\"class\":\"%s\",\"ws_mb\":%.2f,\"full\":%.3f,"
                               "\"residual\":%.4f,\"residual_size_scaled\":%.4f,"
                               "\"share_ws_mb\":%.2f,\"share_full\":%.3f,\"share_residual\":%.4f}",
                               v ? "," : "", cls_name[v], best_ws, best_k, best_r, rs, w2, k2, r2);
    }
    printf("%s]}\n", json);
    return 0;
}
