/*
 * topo.c — queries on a loaded topology. Everything here reads precomputed
 * arrays; nothing calls hwloc, so policies can ask on their hot path.
 */
#include <errno.h>
#include <stdlib.h>

#include "topo/topo-internal.h"

static const char *const level_names[CORUN_NLEVELS] = {
    [CORUN_LEVEL_PU] = "cpu",   [CORUN_LEVEL_CORE] = "core", [CORUN_LEVEL_L2] = "l2",
    [CORUN_LEVEL_L3] = "l3",    [CORUN_LEVEL_NUMA] = "numa", [CORUN_LEVEL_PACKAGE] = "package",
    [CORUN_LEVEL_MACHINE] = "machine",
};

const char *corun_level_name(enum corun_level level)
{
    return (unsigned)level < CORUN_NLEVELS ? level_names[level] : "?";
}

void corun_topo_free(struct corun_topo *topo)
{
    if (!topo)
        return;
    for (int l = 0; l < CORUN_NLEVELS; l++) {
        free(topo->doms[l]);
        free(topo->dom_cpus[l]);
    }
    free(topo->cpus);
    free(topo->kinds);
    free(topo->by_os);
    free(topo->numa_dist);
    free(topo);
}

const struct corun_topo_info *corun_topo_info(const struct corun_topo *topo)
{
    return &topo->info;
}

unsigned corun_topo_ncpus(const struct corun_topo *topo)
{
    return topo->info.pus;
}

const struct corun_topo_cpu *corun_topo_cpu(const struct corun_topo *topo, unsigned idx)
{
    return idx < topo->info.pus ? &topo->cpus[idx] : NULL;
}

int corun_topo_cpu_by_os(const struct corun_topo *topo, unsigned os_index)
{
    return os_index < topo->by_os_len ? topo->by_os[os_index] : -1;
}

unsigned corun_topo_ndomains(const struct corun_topo *topo, enum corun_level level)
{
    return (unsigned)level < CORUN_NLEVELS ? topo->info.ndomains[level] : 0;
}

const struct corun_topo_domain *corun_topo_domain(const struct corun_topo *topo,
                                                  enum corun_level level, unsigned d)
{
    if ((unsigned)level >= CORUN_NLEVELS || d >= topo->info.ndomains[level])
        return NULL;
    return &topo->doms[level][d];
}

const struct corun_topo_kind *corun_topo_kind(const struct corun_topo *topo, unsigned k)
{
    return k < topo->info.kinds ? &topo->kinds[k] : NULL;
}

bool corun_topo_shares(const struct corun_topo *topo, unsigned a, unsigned b,
                       enum corun_level level)
{
    const struct corun_topo_cpu *ca, *cb;

    if (a >= topo->info.pus || b >= topo->info.pus || (unsigned)level >= CORUN_NLEVELS)
        return false;
    if (level == CORUN_LEVEL_MACHINE)
        return true;
    ca = &topo->cpus[a];
    cb = &topo->cpus[b];
    return ca->dom[level] >= 0 && ca->dom[level] == cb->dom[level];
}

enum corun_level corun_topo_shared_level(const struct corun_topo *topo, unsigned a, unsigned b)
{
    enum corun_level best = CORUN_LEVEL_MACHINE;
    unsigned best_size = ~0u;

    if (a >= topo->info.pus || b >= topo->info.pus)
        return CORUN_LEVEL_MACHINE;
    if (a == b)
        return CORUN_LEVEL_PU;
    /* The shared domain with the fewest CPUs wins; ties go to the lower
     * level (an L2 that is exactly one core's is reported as the core). */
    for (int l = CORUN_LEVEL_CORE; l < CORUN_LEVEL_MACHINE; l++) {
        int da = topo->cpus[a].dom[l];

        if (da >= 0 && da == topo->cpus[b].dom[l] && topo->doms[l][da].ncpus < best_size) {
            best = (enum corun_level)l;
            best_size = topo->doms[l][da].ncpus;
        }
    }
    return best;
}

unsigned corun_topo_numa_distance(const struct corun_topo *topo, unsigned i, unsigned j)
{
    unsigned n = topo->info.ndomains[CORUN_LEVEL_NUMA];

    if (!topo->numa_dist || i >= n || j >= n)
        return 0;
    return topo->numa_dist[i * n + j];
}

int corun_topo_usable_set(const struct corun_topo *topo, struct corun_cpuset *set)
{
    int err;

    if (!set->words && (err = corun_cpuset_init(set, topo->by_os_len)))
        return err;
    corun_cpuset_zero(set);
    for (unsigned i = 0; i < topo->info.pus; i++)
        if (topo->cpus[i].usable && (err = corun_cpuset_set(set, topo->cpus[i].os_index)))
            return err;
    return 0;
}
