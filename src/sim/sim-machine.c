/*
 * sim-machine.c — the resources of a simulated machine: named presets with
 * approximate published figures, defaults for any topology by vendor and
 * cache sizes, and the per-CPU arrays the solver runs on (domain ids read
 * once from the topology, so the solver never calls the topo box).
 *
 * Figures: bandwidth b_max is 0.7 × channels × transfer rate × 8 bytes per
 * socket (SIMULATOR.md's 0.6–0.8 range); turbo tables from the vendors' spec
 * sheets, all-core figures rounded to land 15–25% below the 1-core figure on
 * Intel parts as SIMULATOR.md requires.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-internal.h"

struct preset {
    const char *name;
    const char *synthetic;
    const char *what;
    double base, turbo1, turbo_all;
    enum corun_sim_turbo turbo;
    double w_eff, mlp_core, bmax, l0, l3_mb, l2_mb;
    const char *model_match; /* substring of a CPU model name that selects it */
};

/*
 * Presets are one package each: a policy's decisions inside a socket are
 * what they test; a two-socket machine is one XML file away.
 */
static const struct preset presets[] = {
    {"skx28", "pack:1 [numa] l3:1(size=40370176) l2:28(size=1048576) core:1 pu:2",
     "Skylake-SP 28C (Xeon 8180): 38.5 MB L3, 6xDDR4-2666, 2.5/3.8 GHz", 2.5, 3.8, 3.1,
     CORUN_SIM_TURBO_STEPS, 2.6, 10, 89.6, 90, 38.5, 1.0, "Platinum 8180"},
    {"icx40", "pack:1 [numa] l3:1(size=62914560) l2:40(size=1310720) core:1 pu:2",
     "Ice Lake-SP 40C (Xeon 8380): 60 MB L3, 8xDDR4-3200, 2.3/3.4 GHz", 2.3, 3.4, 2.8,
     CORUN_SIM_TURBO_STEPS, 2.7, 12, 143.4, 85, 60, 1.25, "Platinum 8380"},
    {"spr56", "pack:1 [numa] l3:1(size=110100480) l2:56(size=2097152) core:1 pu:2",
     "Sapphire Rapids 56C (Xeon 8480+): 105 MB L3, 8xDDR5-4800, 2.0/3.8 GHz", 2.0, 3.8, 3.0,
     CORUN_SIM_TURBO_STEPS, 2.9, 16, 215.0, 105, 105, 2.0, "Platinum 8480"},
    {"milan64", "pack:1 [numa] l3:8(size=33554432) l2:8(size=524288) core:1 pu:2",
     "Milan 64C (EPYC 7763): 8 CCX x 32 MB L3, 8xDDR4-3200 = 204.8 GB/s nominal, 2.45/3.5 GHz",
     2.45, 3.5, 3.1, CORUN_SIM_TURBO_LINEAR, 2.8, 12, 143.4, 95, 32, 0.5, "EPYC 7763"},
    {"genoa96", "pack:1 [numa] l3:12(size=33554432) l2:8(size=1048576) core:1 pu:2",
     "Genoa 96C (EPYC 9654): 12 CCD x 32 MB L3, 12xDDR5-4800, 2.4/3.7 GHz", 2.4, 3.7, 3.55,
     CORUN_SIM_TURBO_LINEAR, 2.9, 16, 322.6, 105, 32, 1.0, "EPYC 9654"},
};

#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

const char *corun_sim_preset_at(unsigned i)
{
    return i < NPRESETS ? presets[i].name : NULL;
}

static void from_preset(const struct preset *p, struct corun_sim_machine *m)
{
    memset(m, 0, sizeof(*m));
    snprintf(m->name, sizeof(m->name), "%s", p->name);
    snprintf(m->origin, sizeof(m->origin), "preset %s: %s", p->name, p->what);
    m->base_ghz = p->base;
    m->turbo1_ghz = p->turbo1;
    m->turbo_all_ghz = p->turbo_all;
    m->turbo = p->turbo;
    m->w_eff = p->w_eff;
    m->stall_hold = 0.6;
    m->mlp_core = p->mlp_core;
    m->bmax_gbps = p->bmax;
    m->l0_ns = p->l0;
    m->remote = 1.5;
    m->migrate_gbps = 1.0;
    m->l3_mb = p->l3_mb;
    m->l2_mb = p->l2_mb;
}

int corun_sim_machine_preset(const char *name, struct corun_sim_machine *m, const char **synthetic)
{
    for (unsigned i = 0; i < NPRESETS; i++)
        if (name && !strcmp(name, presets[i].name)) {
            from_preset(&presets[i], m);
            if (synthetic)
                *synthetic = presets[i].synthetic;
            return 0;
        }
    return -ENOENT;
}

static double largest_cache_mb(const struct corun_topo *topo, enum corun_level lvl)
{
    uint64_t best = 0;

    for (unsigned d = 0; d < corun_topo_ndomains(topo, lvl); d++) {
        const struct corun_topo_domain *dom = corun_topo_domain(topo, lvl, d);

        if (dom->size_bytes > best)
            best = dom->size_bytes;
    }
    return (double)best / (1024.0 * 1024.0);
}

void corun_sim_machine_defaults(const struct corun_topo *topo, struct corun_sim_machine *m)
{
    const struct corun_topo_info *in = corun_topo_info(topo);
    unsigned ncores = in->ndomains[CORUN_LEVEL_CORE] ? in->ndomains[CORUN_LEVEL_CORE] : in->pus;
    unsigned nnuma = in->ndomains[CORUN_LEVEL_NUMA] ? in->ndomains[CORUN_LEVEL_NUMA] : 1;
    unsigned npkg = in->ndomains[CORUN_LEVEL_PACKAGE] ? in->ndomains[CORUN_LEVEL_PACKAGE] : 1;
    bool intel = !strcmp(in->cpu_vendor, "GenuineIntel");
    /* Hygon's Dhyana is AMD's Zen under licence (as platform-freq.c reads
     * it): AMD's boost and miss buffers. */
    bool amd = !strcmp(in->cpu_vendor, "AuthenticAMD") || !strcmp(in->cpu_vendor, "HygonGenuine");
    double cores_per_node = (double)ncores / nnuma, l3 = largest_cache_mb(topo, CORUN_LEVEL_L3);
    double max_ghz = 0, base_ghz = 0;

    for (unsigned i = 0; i < NPRESETS; i++)
        if (in->cpu_model[0] && strstr(in->cpu_model, presets[i].model_match)) {
            from_preset(&presets[i], m);
            snprintf(m->origin, sizeof(m->origin), "preset %s (matched CPU model \"%s\"): %s",
                     presets[i].name, in->cpu_model, presets[i].what);
            return;
        }
    for (unsigned k = 0; k < in->kinds; k++) {
        const struct corun_topo_kind *kd = corun_topo_kind(topo, k);

        if (kd->max_khz / 1e6 > max_ghz)
            max_ghz = kd->max_khz / 1e6;
        if (kd->base_khz / 1e6 > base_ghz)
            base_ghz = kd->base_khz / 1e6;
    }
    memset(m, 0, sizeof(*m));
    snprintf(m->name, sizeof(m->name), "defaults");
    m->base_ghz = base_ghz > 0 ? base_ghz : intel ? 2.3 : amd ? 2.4 : 2.0;
    m->turbo1_ghz = max_ghz > m->base_ghz ? max_ghz : m->base_ghz * (intel || amd ? 1.45 : 1.0);
    m->turbo = intel ? CORUN_SIM_TURBO_STEPS : amd ? CORUN_SIM_TURBO_LINEAR : CORUN_SIM_TURBO_FLAT;
    /* Intel server parts lose ~20% from 1-core to all-core turbo; AMD ~12%. */
    m->turbo_all_ghz = m->turbo1_ghz * (intel ? 0.8 : 0.88);
    if (m->turbo_all_ghz < m->base_ghz)
        m->turbo_all_ghz = m->base_ghz;
    if (m->turbo == CORUN_SIM_TURBO_FLAT)
        m->turbo1_ghz = m->turbo_all_ghz = m->base_ghz;
    m->w_eff = 2.7;
    m->stall_hold = 0.6;
    m->mlp_core = intel ? 10 : 12;
    /*
     * Without a channel count, assume what servers are built for: about 3
     * GB/s sustained per core, at least one DDR4 channel's worth, per node.
     */
    m->bmax_gbps = fmax(17.9, 3.0 * cores_per_node);
    m->l0_ns = nnuma > 1 || npkg > 1 ? 95 : 85;
    m->remote = 1.5;
    m->migrate_gbps = 1.0;
    m->l3_mb = l3 > 0 ? l3 : 1.375 * ncores / npkg;
    m->l2_mb = largest_cache_mb(topo, CORUN_LEVEL_L2);
    if (m->l2_mb <= 0)
        m->l2_mb = 0.5;
    snprintf(m->origin, sizeof(m->origin),
             "defaults for %s, %u cores, %.4g MB LLC: %.3g/%.3g GHz, %.4g GB/s and %.0f ns per "
             "memory domain",
             in->cpu_vendor[0] ? in->cpu_vendor : "an unknown vendor", ncores, m->l3_mb,
             m->base_ghz, m->turbo1_ghz, m->bmax_gbps, m->l0_ns);
}

void corun__hw_release(struct corun__sim_hw *hw)
{
    free(hw->usable);
    free(hw->core);
    free(hw->pkg);
    free(hw->numa);
    free(hw->l2);
    free(hw->l3);
    free(hw->cap);
    free(hw->pkg_ncores);
    free(hw->l2_mb);
    free(hw->l3_mb);
    memset(hw, 0, sizeof(*hw));
}

/* A cache domain's size in MB, or @fallback when the topology has none. */
static double cache_mb(const struct corun_topo *topo, enum corun_level lvl, unsigned d,
                       double fallback)
{
    const struct corun_topo_domain *dom = corun_topo_domain(topo, lvl, d);

    return dom && dom->size_bytes ? dom->size_bytes / (1024.0 * 1024.0) : fallback;
}

/*
 * The relative speed of CPU kind @k where the topology does not give one: on
 * a hybrid machine, the ratio of maximum frequencies when known, else
 * HYBRID_SLOW_KIND for every kind below the most efficient (an E-core does
 * ~60% of a P-core's work per unit of time); 1 on homogeneous machines.
 */
#define HYBRID_SLOW_KIND 0.6
static double kind_capacity(const struct corun_topo *topo, int k)
{
    const struct corun_topo_kind *kd = corun_topo_kind(topo, (unsigned)k), *top = NULL;
    unsigned nk = corun_topo_info(topo)->kinds;

    if (!kd || nk < 2)
        return 1.0;
    for (unsigned i = 0; i < nk; i++) {
        const struct corun_topo_kind *o = corun_topo_kind(topo, i);

        if (!top || o->efficiency > top->efficiency)
            top = o;
    }
    if (kd == top || kd->efficiency < 0 || kd->efficiency == top->efficiency)
        return 1.0;
    if (kd->max_khz && top->max_khz)
        return (double)kd->max_khz / top->max_khz;
    return HYBRID_SLOW_KIND;
}

int corun__hw_build(struct corun__sim_hw *hw, const struct corun_topo *topo,
                    const struct corun_sim_machine *m)
{
    unsigned n = corun_topo_ncpus(topo);
    double best_cap = -1;

    memset(hw, 0, sizeof(*hw));
    hw->ncpus = n;
    hw->ncores = corun_topo_ndomains(topo, CORUN_LEVEL_CORE);
    hw->npkgs = corun_topo_ndomains(topo, CORUN_LEVEL_PACKAGE);
    hw->nnuma = corun_topo_ndomains(topo, CORUN_LEVEL_NUMA);
    hw->nl2 = corun_topo_ndomains(topo, CORUN_LEVEL_L2);
    hw->nl3 = corun_topo_ndomains(topo, CORUN_LEVEL_L3);
    if (!hw->npkgs)
        hw->npkgs = 1;
    if (!hw->nnuma)
        hw->nnuma = 1;
    hw->best_cpu = -1;
    hw->usable = calloc(n, sizeof(bool));
    hw->core = calloc(n, sizeof(int));
    hw->pkg = calloc(n, sizeof(int));
    hw->numa = calloc(n, sizeof(int));
    hw->l2 = calloc(n, sizeof(int));
    hw->l3 = calloc(n, sizeof(int));
    hw->cap = calloc(n, sizeof(double));
    hw->pkg_ncores = calloc(hw->npkgs, sizeof(unsigned));
    hw->l2_mb = calloc(hw->nl2 + 1, sizeof(double));
    hw->l3_mb = calloc(hw->nl3 + 1, sizeof(double));
    if (!hw->usable || !hw->core || !hw->pkg || !hw->numa || !hw->l2 || !hw->l3 || !hw->cap ||
        !hw->pkg_ncores || !hw->l2_mb || !hw->l3_mb) {
        corun__hw_release(hw);
        return -ENOMEM;
    }
    for (unsigned d = 0; d < hw->nl2; d++)
        hw->l2_mb[d] = cache_mb(topo, CORUN_LEVEL_L2, d, m->l2_mb);
    for (unsigned d = 0; d < hw->nl3; d++)
        hw->l3_mb[d] = cache_mb(topo, CORUN_LEVEL_L3, d, m->l3_mb);
    for (unsigned i = 0; i < n; i++) {
        const struct corun_topo_cpu *c = corun_topo_cpu(topo, i);
        int pkg = c->dom[CORUN_LEVEL_PACKAGE], numa = c->dom[CORUN_LEVEL_NUMA];

        hw->usable[i] = c->usable;
        hw->core[i] = c->dom[CORUN_LEVEL_CORE];
        hw->pkg[i] = pkg >= 0 ? pkg : 0;
        hw->numa[i] = numa >= 0 ? numa : 0;
        hw->l2[i] = c->dom[CORUN_LEVEL_L2];
        hw->l3[i] = c->dom[CORUN_LEVEL_L3];
        hw->cap[i] = c->capacity > 0 ? c->capacity : kind_capacity(topo, c->kind);
        if (c->usable && hw->cap[i] > best_cap) {
            best_cap = hw->cap[i];
            hw->best_cpu = (int)i;
        }
    }
    for (unsigned d = 0; d < hw->ncores; d++) {
        const struct corun_topo_domain *core = corun_topo_domain(topo, CORUN_LEVEL_CORE, d);

        if (core->ncpus)
            hw->pkg_ncores[hw->pkg[core->cpus[0]]]++;
    }
    if (!hw->ncores) {
        /* No core objects: every CPU is its own core. */
        hw->ncores = n;
        for (unsigned i = 0; i < n; i++) {
            hw->core[i] = (int)i;
            hw->pkg_ncores[hw->pkg[i]]++;
        }
    }
    return hw->best_cpu < 0 ? -ENODEV : 0;
}
