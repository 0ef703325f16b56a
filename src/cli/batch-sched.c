/*
 * batch-sched.c — choosing co-runners for `corun batch`.
 *
 * The model is deliberately simple, in the manner of Xie & Loh's animal
 * classes and Zhuravlev et al.'s Distributed Intensity: each class of task
 * has a typical pressure (what it does to a neighbour) and sensitivity (what
 * a neighbour does to it) at each level of sharing — the same core (SMT),
 * an L2, an L3, a NUMA node's memory, the machine's memory bandwidth. Two
 * tasks sharing level L are predicted to slow each other by
 *     sens_a[L] * press_b[L] + sens_b[L] * press_a[L]
 * summed over the levels they share. Pressure is scaled by the CPU share
 * the task really uses, learned as it runs from /proc (the fallback signal on
 * machines without a PMU), so a job that mostly waits counts for little;
 * without a hint, its class is guessed from that CPU use and from its
 * resident set against the cache sizes (sched_learn_class()).
 *
 * Where it works: batches that mix memory-bound and compute-bound jobs, the
 * job file giving class hints or earlier jobs of the same program having
 * taught us. Where it does not: everything looks alike without hints and
 * without counters, and then the order is first-in first-out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/batch-sched.h"

enum { L_SMT, L_L2, L_L3, L_NODE, L_MACHINE, L_N };

/* Typical [pressure, sensitivity] per sharing level, per class. The figures
 * are relative (1 = a neighbour halves the victim's speed) and were chosen
 * from the classes' definitions, not measured: learned profiles (the sense
 * box's counters) replace them where available. */
static const double class_table[CORUN_NCLASSES + 1][2][L_N] = {
    /*                      SMT   L2    L3    node  machine */
    [CORUN_CLASS_COMPUTE] = {{0.40, 0.02, 0.01, 0.00, 0.00}, {0.40, 0.02, 0.01, 0.00, 0.00}},
    [CORUN_CLASS_SHEEP] = {{0.10, 0.02, 0.02, 0.01, 0.00}, {0.10, 0.02, 0.02, 0.01, 0.00}},
    [CORUN_CLASS_RABBIT] = {{0.30, 0.15, 0.10, 0.05, 0.02}, {0.40, 0.40, 0.35, 0.10, 0.03}},
    [CORUN_CLASS_CHASING] = {{0.25, 0.25, 0.25, 0.20, 0.08}, {0.35, 0.30, 0.35, 0.35, 0.12}},
    [CORUN_CLASS_STREAMING] = {{0.30, 0.45, 0.45, 0.45, 0.20}, {0.30, 0.15, 0.20, 0.30, 0.12}},
    /* unknown: the middle of the road */
    [CORUN_NCLASSES] = {{0.25, 0.15, 0.15, 0.12, 0.05}, {0.25, 0.15, 0.15, 0.12, 0.05}},
};

static const enum corun_level level_of[L_N] = {CORUN_LEVEL_CORE, CORUN_LEVEL_L2, CORUN_LEVEL_L3,
                                               CORUN_LEVEL_NUMA, CORUN_LEVEL_MACHINE};

void sched_key(const char *command, char *key, size_t len)
{
    const char *p = command, *end, *slash;

    while (*p == ' ' || *p == '\t')
        p++;
    /* skip leading environment assignments: FOO=1 ./prog */
    for (;;) {
        end = p + strcspn(p, " \t");
        if (!memchr(p, '=', (size_t)(end - p)) || !*end)
            break;
        p = end + strspn(end, " \t");
    }
    end = p + strcspn(p, " \t;|&");
    for (slash = p; (slash = memchr(p, '/', (size_t)(end - p))); p = slash + 1)
        ;
    snprintf(key, len, "%.*s", (int)(end - p), p);
}

const struct sched_learned *sched_book_find(const struct sched_book *b, const char *key)
{
    for (unsigned i = 0; i < b->n; i++)
        if (!strcmp(b->progs[i].key, key))
            return &b->progs[i];
    return NULL;
}

void sched_book_learn(struct sched_book *b, const char *key, enum corun_class cls, double cpu_util)
{
    struct sched_learned *l = (struct sched_learned *)sched_book_find(b, key);

    if (!l) {
        if (b->n == b->cap) {
            unsigned cap = b->cap ? 2 * b->cap : 8;
            struct sched_learned *p = realloc(b->progs, cap * sizeof(*p));

            if (!p)
                return; /* learning is an optimisation: forget it */
            b->progs = p;
            b->cap = cap;
        }
        l = &b->progs[b->n++];
        memset(l, 0, sizeof(*l));
        snprintf(l->key, sizeof(l->key), "%s", key);
        l->cls = CORUN_CLASS_UNKNOWN;
        l->cpu_util = NAN;
    }
    if (!isnan(cpu_util))
        l->cpu_util = isnan(l->cpu_util) ? cpu_util : 0.5 * l->cpu_util + 0.5 * cpu_util;
    if (cls != CORUN_CLASS_UNKNOWN)
        l->cls = cls;
    l->jobs++;
}

void sched_book_release(struct sched_book *b)
{
    free(b->progs);
    memset(b, 0, sizeof(*b));
}

void sched_profile(struct corun_task_profile *p, unsigned id, enum corun_class cls, double weight,
                   double cpu_util, int cpu)
{
    int row = cls >= 0 && cls < CORUN_NCLASSES ? cls : CORUN_NCLASSES;
    double share = isnan(cpu_util) ? 1.0 : fmin(1.0, fmax(0.0, cpu_util));

    memset(p, 0, sizeof(*p));
    p->id = id;
    p->cls = cls;
    p->weight = weight;
    p->ipc = p->freq_ratio = p->llc_mpki = p->llc_miss_ratio = p->mem_bw_bps = NAN;
    p->cpu_util = cpu_util;
    p->cpu = cpu;
    for (int l = 0; l < L_N; l++) {
        p->pressure[level_of[l]] = class_table[row][0][l] * share;
        p->sensitivity[level_of[l]] = class_table[row][1][l];
    }
    /* Two tasks on the same CPU take turns: each halves the other. */
    p->pressure[CORUN_LEVEL_PU] = share;
    p->sensitivity[CORUN_LEVEL_PU] = 1.0;
}

void sched_caches_of(const struct corun_topo *topo, struct sched_caches *c)
{
    const struct corun_topo_domain *d;

    c->l2_bytes = c->llc_bytes = 0;
    d = corun_topo_domain(topo, CORUN_LEVEL_L2, 0);
    if (d)
        c->l2_bytes = (double)d->size_bytes;
    for (unsigned i = 0; i < corun_topo_ndomains(topo, CORUN_LEVEL_L3); i++) {
        d = corun_topo_domain(topo, CORUN_LEVEL_L3, i);
        if ((double)d->size_bytes > c->llc_bytes)
            c->llc_bytes = (double)d->size_bytes;
    }
    if (c->llc_bytes == 0)
        c->llc_bytes = c->l2_bytes;
}

enum corun_class sched_learn_class(enum corun_class hint, double cpu_util, double rss_bytes,
                                   const struct sched_caches *c)
{
    if (hint != CORUN_CLASS_UNKNOWN)
        return hint;
    if (!isnan(cpu_util) && cpu_util < 0.5)
        return CORUN_CLASS_SHEEP;
    if (isnan(cpu_util) || isnan(rss_bytes) || rss_bytes <= 0)
        return CORUN_CLASS_UNKNOWN;
    if (c && c->l2_bytes > 0 && rss_bytes <= c->l2_bytes)
        return CORUN_CLASS_COMPUTE;
    if (c && c->llc_bytes > 0 && rss_bytes <= c->llc_bytes)
        return CORUN_CLASS_RABBIT;
    if (c && c->llc_bytes > 0)
        return CORUN_CLASS_STREAMING;
    return CORUN_CLASS_UNKNOWN;
}

enum corun_class sched_class_from_counters(enum corun_class hint, double cpu_util, double llc_mpki,
                                           double ipc, enum corun_class fallback)
{
    if (hint != CORUN_CLASS_UNKNOWN)
        return hint;
    if (!isnan(cpu_util) && cpu_util < 0.5)
        return CORUN_CLASS_SHEEP;
    if (isnan(llc_mpki))
        return fallback;
    if (llc_mpki >= 10)
        return !isnan(ipc) && ipc < 0.5 ? CORUN_CLASS_CHASING : CORUN_CLASS_STREAMING;
    return llc_mpki >= 1 ? CORUN_CLASS_RABBIT : CORUN_CLASS_COMPUTE;
}

double sched_pair_cost(const struct corun_topo *topo, const struct corun_task_profile *a,
                       const struct corun_task_profile *b)
{
    bool placed = a->cpu >= 0 && b->cpu >= 0;
    double cost = 0;

    if (placed && a->cpu == b->cpu)
        cost += a->sensitivity[CORUN_LEVEL_PU] * b->pressure[CORUN_LEVEL_PU] +
                b->sensitivity[CORUN_LEVEL_PU] * a->pressure[CORUN_LEVEL_PU];
    for (int l = 0; l < L_N; l++) {
        enum corun_level lv = level_of[l];

        /* Unplaced tasks may meet anywhere: count only what all CPUs share. */
        if (lv != CORUN_LEVEL_MACHINE &&
            !(placed && corun_topo_shares(topo, (unsigned)a->cpu, (unsigned)b->cpu, lv)))
            continue;
        cost += a->sensitivity[lv] * b->pressure[lv] + b->sensitivity[lv] * a->pressure[lv];
    }
    return cost;
}

double sched_cost_with(const struct corun_topo *topo, const struct corun_task_profile *t,
                       const struct corun_task_profile *others, unsigned n)
{
    double c = 0;

    for (unsigned i = 0; i < n; i++)
        c += sched_pair_cost(topo, t, &others[i]);
    return c;
}
