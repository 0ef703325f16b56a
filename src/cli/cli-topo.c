/*
 * cli-topo.c — `corun topo`: the machine's topology as corun sees it, in
 * the spirit of lstopo and likwid-topology, or as JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/topo-load.h"
#include "corun/topo.h"

int cli_topo_load(const char *cmd, const char *xml, const char *synthetic, struct corun_topo **out)
{
    struct corun_topo_opts opts = {.source = CORUN_TOPO_SYSTEM};
    int err;

    if (xml && synthetic)
        return cli_usage_error(cmd, "--input and --synthetic exclude each other");
    if (xml) {
        opts.source = CORUN_TOPO_XML;
        opts.input = xml;
    } else if (synthetic) {
        opts.source = CORUN_TOPO_SYNTHETIC;
        opts.input = synthetic;
    }
    err = corun_topo_load(&opts, out);
    if (!err)
        return CLI_EXIT_OK;
    if (xml)
        cli_error(cmd, "%s: %s", xml,
                  err == -EINVAL ? "not a valid hwloc XML topology" : corun_strerror(err));
    else if (synthetic)
        cli_error(cmd, "synthetic description '%s': %s", synthetic,
                  err == -EINVAL ? "not a valid hwloc synthetic description" : corun_strerror(err));
    else
        cli_error(cmd, "cannot discover this system's topology: %s", corun_strerror(err));
    return err == -ENOMEM ? CLI_EXIT_FAIL : (xml || synthetic) ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

static void format_bytes(char *buf, size_t len, uint64_t b)
{
    if (!b)
        snprintf(buf, len, "?");
    else if (b >= (1ull << 30))
        snprintf(buf, len, "%.1f GiB", (double)b / (1ull << 30));
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.4g MiB", (double)b / (1ull << 20));
    else
        snprintf(buf, len, "%llu KiB", (unsigned long long)(b >> 10));
}

/* Writes the OS numbers of a domain's CPUs as a list ("0-3,8"). */
static void format_domain_cpus(const struct corun_topo *t, const struct corun_topo_domain *d,
                               char *buf, size_t len)
{
    struct corun_cpuset set = {0};

    buf[0] = '\0';
    if (corun_cpuset_init(&set, 64))
        return;
    for (unsigned i = 0; i < d->ncpus; i++)
        corun_cpuset_set(&set, corun_topo_cpu(t, d->cpus[i])->os_index);
    corun_cpuset_format(&set, buf, len);
    corun_cpuset_release(&set);
}

/* The cores within @dom (a cache or package) as "0,36 | 1,37": OS numbers of
 * each core's hardware threads, cores separated by bars. */
static void print_cores(const struct corun_topo *t, const struct corun_topo_domain *dom)
{
    int last_core = -2;

    for (unsigned i = 0; i < dom->ncpus; i++) {
        const struct corun_topo_cpu *c = corun_topo_cpu(t, dom->cpus[i]);
        int core = c->dom[CORUN_LEVEL_CORE];

        if (i == 0)
            printf("%u", c->os_index);
        else if (core >= 0 && core == last_core)
            printf(",%u", c->os_index);
        else
            printf(" | %u", c->os_index);
        if (!c->usable)
            printf("(x)");
        last_core = core;
    }
}

/* Domain @d of @inner lies within domain @outer_d of @outer. */
static bool inside(const struct corun_topo *t, enum corun_level inner, unsigned d,
                   enum corun_level outer, int outer_d)
{
    const struct corun_topo_domain *dom = corun_topo_domain(t, inner, d);

    if (outer == CORUN_LEVEL_MACHINE)
        return true;
    return dom->ncpus && corun_topo_cpu(t, dom->cpus[0])->dom[outer] == outer_d;
}

/* The L2s within domain @outer_d of @outer; with @no_l3, only those under no
 * L3 (Meteor Lake's low-power cores sit outside the compute tile's L3). */
static void print_l2s(const struct corun_topo *t, enum corun_level outer, int outer_d, bool no_l3,
                      const char *indent)
{
    char size[32];

    for (unsigned d = 0; d < corun_topo_ndomains(t, CORUN_LEVEL_L2); d++) {
        const struct corun_topo_domain *l2 = corun_topo_domain(t, CORUN_LEVEL_L2, d);

        if (!l2->ncpus || !inside(t, CORUN_LEVEL_L2, d, outer, outer_d) ||
            (no_l3 && !inside(t, CORUN_LEVEL_L2, d, CORUN_LEVEL_L3, -1)))
            continue;
        format_bytes(size, sizeof(size), l2->size_bytes);
        printf("%sL2 #%-3u %-9s  ", indent, d, size);
        print_cores(t, l2);
        printf("\n");
    }
}

static void print_caches(const struct corun_topo *t, enum corun_level outer, int outer_d)
{
    unsigned nl3 = corun_topo_ndomains(t, CORUN_LEVEL_L3);
    unsigned nl2 = corun_topo_ndomains(t, CORUN_LEVEL_L2);
    char size[32];

    if (nl3 == 0) {
        if (nl2)
            print_l2s(t, outer, outer_d, false, "  ");
        return;
    }
    for (unsigned d = 0; d < nl3; d++) {
        const struct corun_topo_domain *l3 = corun_topo_domain(t, CORUN_LEVEL_L3, d);

        if (!l3->ncpus || !inside(t, CORUN_LEVEL_L3, d, outer, outer_d))
            continue;
        format_bytes(size, sizeof(size), l3->size_bytes);
        printf("  L3 #%-3u %-9s  ", d, size);
        if (!nl2) {
            print_cores(t, l3);
            printf("\n");
            continue;
        }
        printf("\n");
        print_l2s(t, CORUN_LEVEL_L3, (int)d, false, "    ");
    }
    if (nl2)
        print_l2s(t, outer, outer_d, true, "  ");
}

/* Whether all CPUs of NUMA node @d are in one package. */
static bool numa_in_one_package(const struct corun_topo *t, unsigned d)
{
    const struct corun_topo_domain *n = corun_topo_domain(t, CORUN_LEVEL_NUMA, d);

    for (unsigned i = 1; i < n->ncpus; i++)
        if (corun_topo_cpu(t, n->cpus[i])->dom[CORUN_LEVEL_PACKAGE] !=
            corun_topo_cpu(t, n->cpus[0])->dom[CORUN_LEVEL_PACKAGE])
            return false;
    return true;
}

/* The NUMA nodes within @outer_d (or, at machine level, those that span
 * packages). */
static void print_numa(const struct corun_topo *t, enum corun_level outer, int outer_d,
                       const char *indent)
{
    char size[32], cpus[256];

    for (unsigned d = 0; d < corun_topo_ndomains(t, CORUN_LEVEL_NUMA); d++) {
        const struct corun_topo_domain *n = corun_topo_domain(t, CORUN_LEVEL_NUMA, d);
        bool one = numa_in_one_package(t, d);

        if (!n->ncpus || (outer == CORUN_LEVEL_MACHINE && one && outer_d < 0) ||
            (outer != CORUN_LEVEL_MACHINE &&
             (!one || !inside(t, CORUN_LEVEL_NUMA, d, outer, outer_d))))
            continue;
        format_bytes(size, sizeof(size), n->size_bytes);
        format_domain_cpus(t, n, cpus, sizeof(cpus));
        printf("%sNUMA #%u (P#%u) %s  cpus %s\n", indent, d, n->os_index, size, cpus);
    }
}

static void print_group(const struct corun_topo *t, enum corun_level outer, int outer_d)
{
    if (outer != CORUN_LEVEL_MACHINE)
        print_numa(t, outer, outer_d, "  ");
    print_caches(t, outer, outer_d);
    if (!corun_topo_ndomains(t, CORUN_LEVEL_L3) && !corun_topo_ndomains(t, CORUN_LEVEL_L2)) {
        const struct corun_topo_domain *all = outer == CORUN_LEVEL_MACHINE
                                                  ? corun_topo_domain(t, CORUN_LEVEL_MACHINE, 0)
                                                  : corun_topo_domain(t, outer, (unsigned)outer_d);

        printf("  cores  ");
        print_cores(t, all);
        printf("\n");
    }
}

static void print_frequency(const struct corun_topo *t)
{
    const struct corun_topo_info *info = corun_topo_info(t);
    unsigned n = corun_topo_ncpus(t);
    bool shown = false;

    for (unsigned k = 0; k < info->kinds; k++) {
        uint32_t min = 0, max = 0, base = 0, cur_lo = 0, cur_hi = 0;

        for (unsigned i = 0; i < n; i++) {
            const struct corun_topo_cpu *c = corun_topo_cpu(t, i);

            if ((unsigned)c->kind != k || !c->max_khz)
                continue;
            min = c->min_khz, max = c->max_khz, base = c->base_khz;
            if (c->cur_khz && (!cur_lo || c->cur_khz < cur_lo))
                cur_lo = c->cur_khz;
            if (c->cur_khz > cur_hi)
                cur_hi = c->cur_khz;
        }
        if (!max)
            continue;
        printf("frequency%s%s: max %u MHz", info->kinds > 1 ? " of " : "",
               info->kinds > 1 ? corun_topo_kind(t, k)->name : "", max / 1000);
        if (base)
            printf(", base %u MHz", base / 1000);
        if (min)
            printf(", min %u MHz", min / 1000);
        if (cur_hi)
            printf(", now %u-%u MHz", cur_lo / 1000, cur_hi / 1000);
        printf("\n");
        shown = true;
    }
    if (info->freq_missing[0])
        printf("frequency: %s%s\n", shown ? "partly unknown: " : "unknown: ", info->freq_missing);
}

static void print_human(const struct corun_topo *t)
{
    const struct corun_topo_info *info = corun_topo_info(t);
    unsigned npkg = info->ndomains[CORUN_LEVEL_PACKAGE];

    printf("machine: %s", info->source_name);
    if (info->cpu_model[0])
        printf(" — %s", info->cpu_model);
    printf("\n  %u CPUs (%u usable), %u cores, SMT width %u, %u package%s, %u NUMA node%s, "
           "%u L3, %u L2, %u CPU kind%s\n",
           info->pus, info->usable_pus, info->ndomains[CORUN_LEVEL_CORE], info->smt_width, npkg,
           npkg == 1 ? "" : "s", info->ndomains[CORUN_LEVEL_NUMA],
           info->ndomains[CORUN_LEVEL_NUMA] == 1 ? "" : "s", info->ndomains[CORUN_LEVEL_L3],
           info->ndomains[CORUN_LEVEL_L2], info->kinds, info->kinds == 1 ? "" : "s");
    if (info->usable_note[0])
        printf("  usable: %s\n", info->usable_note);
    printf("  (CPUs by the kernel's numbers; a bar separates cores; (x) marks a CPU this "
           "process may not use)\n");
    if (npkg == 0) {
        printf("machine\n");
        print_numa(t, CORUN_LEVEL_MACHINE, 0, "  ");
        print_group(t, CORUN_LEVEL_MACHINE, 0);
    } else {
        /* NUMA nodes that span packages belong to the machine. */
        print_numa(t, CORUN_LEVEL_MACHINE, -1, "");
    }
    for (unsigned p = 0; p < npkg; p++) {
        unsigned os = corun_topo_domain(t, CORUN_LEVEL_PACKAGE, p)->os_index;

        if (os == ~0u)
            printf("package #%u\n", p);
        else
            printf("package #%u (P#%u)\n", p, os);
        print_group(t, CORUN_LEVEL_PACKAGE, (int)p);
    }
    if (info->kinds > 1) {
        printf("CPU kinds (least to most efficient):\n");
        for (unsigned k = 0; k < info->kinds; k++) {
            const struct corun_topo_kind *kind = corun_topo_kind(t, k);

            printf("  #%u %-10s efficiency %d, %u CPUs", k, kind->name, kind->efficiency,
                   kind->cpus);
            if (kind->capacity > 0)
                printf(", capacity %.2f", kind->capacity);
            printf("\n");
        }
    }
    if (corun_topo_numa_distance(t, 0, 0) && info->ndomains[CORUN_LEVEL_NUMA] > 1) {
        unsigned nn = info->ndomains[CORUN_LEVEL_NUMA];

        printf("NUMA distances:\n");
        for (unsigned i = 0; i < nn; i++) {
            printf("  ");
            for (unsigned j = 0; j < nn; j++)
                printf("%4u", corun_topo_numa_distance(t, i, j));
            printf("\n");
        }
    }
    print_frequency(t);
}

static void print_json(const struct corun_topo *t)
{
    const struct corun_topo_info *info = corun_topo_info(t);
    unsigned n = corun_topo_ncpus(t), nn = info->ndomains[CORUN_LEVEL_NUMA];
    struct json j;

    json_init(&j, stdout);
    json_obj_begin(&j);
    json_kstr(&j, "source", info->source_name);
    json_kstr(&j, "cpu_vendor", info->cpu_vendor[0] ? info->cpu_vendor : NULL);
    json_kstr(&j, "cpu_model", info->cpu_model[0] ? info->cpu_model : NULL);
    json_kuint(&j, "pus", info->pus);
    json_kuint(&j, "usable_pus", info->usable_pus);
    json_kuint(&j, "cores", info->ndomains[CORUN_LEVEL_CORE]);
    json_kuint(&j, "packages", info->ndomains[CORUN_LEVEL_PACKAGE]);
    json_kuint(&j, "numa_nodes", nn);
    json_kuint(&j, "l2_domains", info->ndomains[CORUN_LEVEL_L2]);
    json_kuint(&j, "l3_domains", info->ndomains[CORUN_LEVEL_L3]);
    json_kuint(&j, "smt_width", info->smt_width);
    json_kuint(&j, "cpu_kinds", info->kinds);
    json_kstr(&j, "usable_note", info->usable_note[0] ? info->usable_note : NULL);
    json_kstr(&j, "frequency_missing", info->freq_missing[0] ? info->freq_missing : NULL);
    json_key(&j, "kinds");
    json_arr_begin(&j);
    for (unsigned k = 0; k < info->kinds; k++) {
        const struct corun_topo_kind *kind = corun_topo_kind(t, k);

        json_obj_begin_inline(&j);
        json_kuint(&j, "kind", k);
        json_kstr(&j, "name", kind->name);
        json_kint(&j, "efficiency", kind->efficiency);
        json_kdouble(&j, "capacity", kind->capacity > 0 ? kind->capacity : NAN);
        json_kuint(&j, "cpus", kind->cpus);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_key(&j, "numa_distances");
    if (corun_topo_numa_distance(t, 0, 0)) {
        json_arr_begin(&j);
        for (unsigned a = 0; a < nn; a++) {
            json_arr_begin_inline(&j);
            for (unsigned b = 0; b < nn; b++)
                json_uint(&j, corun_topo_numa_distance(t, a, b));
            json_arr_end(&j);
        }
        json_arr_end(&j);
    } else {
        json_null(&j);
    }
    json_key(&j, "cpus");
    json_arr_begin(&j);
    for (unsigned i = 0; i < n; i++) {
        const struct corun_topo_cpu *c = corun_topo_cpu(t, i);

        json_obj_begin_inline(&j);
        json_kuint(&j, "cpu", c->os_index);
        json_kint_or_null(&j, "core", c->dom[CORUN_LEVEL_CORE]);
        json_kint_or_null(&j, "package", c->dom[CORUN_LEVEL_PACKAGE]);
        json_kint_or_null(&j, "numa", c->dom[CORUN_LEVEL_NUMA]);
        json_kint_or_null(&j, "l2", c->dom[CORUN_LEVEL_L2]);
        json_kint_or_null(&j, "l3", c->dom[CORUN_LEVEL_L3]);
        json_kint(&j, "kind", c->kind);
        json_kbool(&j, "usable", c->usable);
        json_kuint(&j, "smt_rank", c->smt_rank);
        json_kdouble(&j, "capacity", c->capacity > 0 ? c->capacity : NAN);
        json_kint_or_null(&j, "max_mhz", c->max_khz ? (long long)(c->max_khz / 1000) : -1);
        json_kint_or_null(&j, "base_mhz", c->base_khz ? (long long)(c->base_khz / 1000) : -1);
        json_kint_or_null(&j, "cur_mhz", c->cur_khz ? (long long)(c->cur_khz / 1000) : -1);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    json_end(&j);
}

static int cmd_topo(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"input", required_argument, NULL, 'i'},
        {"synthetic", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const char *xml = NULL, *synth = NULL;
    struct corun_topo *t;
    bool as_json = false;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "i:s:jh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'i':
            xml = optarg;
            break;
        case 's':
            synth = optarg;
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            cli_usage(stdout, "topo");
            return CLI_EXIT_OK;
        default:
            cli_usage(stderr, "topo");
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage_error("topo", "unexpected argument '%s'", argv[optind]);
    if ((rc = cli_topo_load("topo", xml, synth, &t)))
        return rc;
    if (as_json)
        print_json(t);
    else
        print_human(t);
    corun_topo_free(t);
    return CLI_EXIT_OK;
}

CLI_COMMAND(topo, cmd_topo, "show the machine's topology: caches, cores, SMT, NUMA, CPU kinds",
            "corun topo [--input FILE.xml | --synthetic DESC] [--json]")
