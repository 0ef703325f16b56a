/*
 * topo-hwloc.c — topology discovery with hwloc, the only backend of the topo
 * box: hwloc already reads this system (Linux /sys, CPUID), XML exports of
 * other machines and synthetic descriptions, so corun does not parse any of
 * that itself. Everything a query may need is copied out into flat arrays
 * here and the hwloc topology is destroyed before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"
#include "topo/topo-internal.h"

static const hwloc_obj_type_t level_type[CORUN_NLEVELS] = {
    [CORUN_LEVEL_PU] = HWLOC_OBJ_PU,       [CORUN_LEVEL_CORE] = HWLOC_OBJ_CORE,
    [CORUN_LEVEL_L2] = HWLOC_OBJ_L2CACHE,  [CORUN_LEVEL_L3] = HWLOC_OBJ_L3CACHE,
    [CORUN_LEVEL_NUMA] = HWLOC_OBJ_NUMANODE, [CORUN_LEVEL_PACKAGE] = HWLOC_OBJ_PACKAGE,
    [CORUN_LEVEL_MACHINE] = HWLOC_OBJ_MACHINE,
};

/* Checks that @path can be read as a file, so a bad path gets its own
 * errno rather than hwloc's generic failure. */
static int check_xml_path(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0) {
        int err = -errno;

        close(fd);
        return err;
    }
    close(fd);
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    if (st.st_size == 0)
        return -EINVAL;
    return 0;
}

static int open_hwloc(const struct corun_topo_opts *opts, hwloc_topology_t *out)
{
    hwloc_topology_t h;
    int err = 0;

    if (opts->source == CORUN_TOPO_XML) {
        if (!opts->input)
            return -EINVAL;
        if ((err = check_xml_path(opts->input)))
            return err;
    }
    if (opts->source == CORUN_TOPO_SYNTHETIC && (!opts->input || !*opts->input))
        return -EINVAL;
    if (hwloc_topology_init(&h) != 0)
        return -ENOMEM;
    /* Keep CPUs this process may not use: they exist, and we report them as
     * not usable rather than pretending the machine is smaller. */
    hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (opts->source == CORUN_TOPO_XML && hwloc_topology_set_xml(h, opts->input) != 0)
        err = -EINVAL;
    else if (opts->source == CORUN_TOPO_SYNTHETIC &&
             hwloc_topology_set_synthetic(h, opts->input) != 0)
        err = -EINVAL;
    else if (hwloc_topology_load(h) != 0)
        err = opts->source == CORUN_TOPO_SYSTEM && errno ? -errno : -EINVAL;
    if (err) {
        hwloc_topology_destroy(h);
        return err;
    }
    *out = h;
    return 0;
}

static void copy_info(char *dst, size_t len, hwloc_obj_t obj, const char *name)
{
    const char *v = obj ? hwloc_obj_get_info_by_name(obj, name) : NULL;

    snprintf(dst, len, "%s", v ? v : "");
    corun__rstrip(dst);
}

static int info_int(hwloc_obj_t obj, const char *name)
{
    const char *v = obj ? hwloc_obj_get_info_by_name(obj, name) : NULL;

    return v ? atoi(v) : -1;
}

static void fill_identity(struct corun_topo *t, hwloc_topology_t h,
                          const struct corun_topo_opts *opts)
{
    hwloc_obj_t pkg = hwloc_get_obj_by_type(h, HWLOC_OBJ_PACKAGE, 0);
    hwloc_obj_t src = pkg ? pkg : hwloc_get_root_obj(h);

    t->info.source = opts->source;
    if (opts->source == CORUN_TOPO_SYSTEM)
        snprintf(t->info.source_name, sizeof(t->info.source_name), "this system");
    else if (opts->source == CORUN_TOPO_XML)
        snprintf(t->info.source_name, sizeof(t->info.source_name), "%s", opts->input);
    else
        snprintf(t->info.source_name, sizeof(t->info.source_name), "synthetic:%s", opts->input);
    copy_info(t->info.cpu_vendor, sizeof(t->info.cpu_vendor), src, "CPUVendor");
    copy_info(t->info.cpu_model, sizeof(t->info.cpu_model), src, "CPUModel");
    t->info.cpu_family = info_int(src, "CPUFamilyNumber");
    t->info.cpu_model_number = info_int(src, "CPUModelNumber");
}

/* Copies the domains of @level: their numbers, sizes and CPU lists. */
static int fill_level(struct corun_topo *t, hwloc_topology_t h, enum corun_level level)
{
    int n = hwloc_get_nbobjs_by_type(h, level_type[level]);
    unsigned total = 0, pos = 0;

    if (n <= 0) {
        t->info.ndomains[level] = 0;
        return 0;
    }
    for (int d = 0; d < n; d++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, level_type[level], (unsigned)d);

        total += o->cpuset ? (unsigned)hwloc_bitmap_weight(o->cpuset) : 0;
    }
    t->doms[level] = calloc((size_t)n, sizeof(*t->doms[level]));
    t->dom_cpus[level] = calloc(total ? total : 1, sizeof(unsigned));
    if (!t->doms[level] || !t->dom_cpus[level])
        return -ENOMEM;
    for (int d = 0; d < n; d++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, level_type[level], (unsigned)d);
        struct corun_topo_domain *dom = &t->doms[level][d];
        unsigned start = pos;
        int os;

        dom->logical = (int)o->logical_index;
        dom->os_index = o->os_index;
        if (hwloc_obj_type_is_cache(o->type) && o->attr)
            dom->size_bytes = o->attr->cache.size;
        else if (o->type == HWLOC_OBJ_NUMANODE && o->attr)
            dom->size_bytes = o->attr->numanode.local_memory;
        if (o->cpuset) {
            hwloc_bitmap_foreach_begin(os, o->cpuset) {
                int idx = corun_topo_cpu_by_os(t, (unsigned)os);

                if (idx >= 0) {
                    t->dom_cpus[level][pos++] = (unsigned)idx;
                    dom->ncores += t->cpus[idx].smt_rank == 0;
                }
            }
            hwloc_bitmap_foreach_end();
        }
        dom->cpus = &t->dom_cpus[level][start];
        dom->ncpus = pos - start;
    }
    t->info.ndomains[level] = (unsigned)n;
    return 0;
}

static int fill_cpus(struct corun_topo *t, hwloc_topology_t h)
{
    int n = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    unsigned max_os = 0;

    if (n <= 0)
        return -ENODEV;
    t->info.pus = (unsigned)n;
    t->cpus = calloc((size_t)n, sizeof(*t->cpus));
    if (!t->cpus)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)i);

        if (pu->os_index > max_os)
            max_os = pu->os_index;
    }
    t->by_os_len = max_os + 1;
    t->by_os = malloc(t->by_os_len * sizeof(int));
    if (!t->by_os)
        return -ENOMEM;
    for (unsigned i = 0; i < t->by_os_len; i++)
        t->by_os[i] = -1;

    for (int i = 0; i < n; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)i);
        struct corun_topo_cpu *c = &t->cpus[i];
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_CORE, pu);

        c->os_index = pu->os_index;
        t->by_os[pu->os_index] = i;
        c->dom[CORUN_LEVEL_PU] = i;
        c->dom[CORUN_LEVEL_MACHINE] = 0;
        for (int l = CORUN_LEVEL_CORE; l <= CORUN_LEVEL_PACKAGE; l++) {
            hwloc_obj_t a;

            if (l == CORUN_LEVEL_NUMA) {
                c->dom[l] = -1; /* filled below from the nodes' cpusets */
                continue;
            }
            a = hwloc_get_ancestor_obj_by_type(h, level_type[l], pu);
            c->dom[l] = a ? (int)a->logical_index : -1;
        }
        c->smt_width = 1;
        c->smt_rank = 0;
        if (core && core->cpuset) {
            c->smt_width = (unsigned)hwloc_bitmap_weight(core->cpuset);
            c->smt_rank = 0;
            for (int os = hwloc_bitmap_first(core->cpuset); os >= 0 && (unsigned)os != pu->os_index;
                 os = hwloc_bitmap_next(core->cpuset, os))
                c->smt_rank++;
        }
        if (c->smt_width > t->info.smt_width)
            t->info.smt_width = c->smt_width;
        c->usable = hwloc_bitmap_isset(hwloc_topology_get_allowed_cpuset(h), pu->os_index);
    }
    /* NUMA nodes hang beside the CPUs in hwloc 2 (memory children), so a CPU's
     * node is the first node whose cpuset holds it. Nodes sharing a cpuset
     * (KNL's MCDRAM beside DDR) keep the first, normally the DDR one. */
    for (int d = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE) - 1; d >= 0; d--) {
        hwloc_obj_t node = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)d);
        int os;

        if (!node->cpuset)
            continue;
        hwloc_bitmap_foreach_begin(os, node->cpuset) {
            int idx = corun_topo_cpu_by_os(t, (unsigned)os);

            if (idx >= 0)
                t->cpus[idx].dom[CORUN_LEVEL_NUMA] = d;
        }
        hwloc_bitmap_foreach_end();
    }
    return 0;
}

/* CPU kinds (hybrid machines). hwloc ranks them by efficiency, lowest first. */
static int fill_kinds(struct corun_topo *t, hwloc_topology_t h)
{
    int nr = hwloc_cpukinds_get_nr(h, 0);
    hwloc_bitmap_t set;
    bool all_freq = true;
    uint32_t top_khz = 0;

    if (nr < 1)
        nr = 1;
    t->kinds = calloc((size_t)nr, sizeof(*t->kinds));
    set = hwloc_bitmap_alloc();
    if (!t->kinds || !set) {
        hwloc_bitmap_free(set);
        return -ENOMEM;
    }
    t->info.kinds = (unsigned)nr;
    for (int k = 0; k < nr; k++) {
        struct corun_topo_kind *kind = &t->kinds[k];
        struct hwloc_info_s *infos = NULL;
        unsigned nr_infos = 0;
        int eff = -1, os;

        snprintf(kind->name, sizeof(kind->name), "kind%d", k);
        kind->efficiency = -1;
        if (hwloc_cpukinds_get_info(h, (unsigned)k, set, &eff, &nr_infos, &infos, 0) != 0) {
            /* No kinds at all: every CPU is kind 0. */
            kind->cpus = t->info.pus;
            break;
        }
        kind->efficiency = eff;
        for (unsigned i = 0; i < nr_infos; i++) {
            if (!strcmp(infos[i].name, "CoreType"))
                snprintf(kind->name, sizeof(kind->name), "%s", infos[i].value);
            else if (!strcmp(infos[i].name, "FrequencyMaxMHz"))
                kind->max_khz = (uint32_t)strtoul(infos[i].value, NULL, 10) * 1000u;
            else if (!strcmp(infos[i].name, "FrequencyBaseMHz"))
                kind->base_khz = (uint32_t)strtoul(infos[i].value, NULL, 10) * 1000u;
        }
        hwloc_bitmap_foreach_begin(os, set) {
            int idx = corun_topo_cpu_by_os(t, (unsigned)os);

            if (idx >= 0) {
                t->cpus[idx].kind = k;
                kind->cpus++;
            }
        }
        hwloc_bitmap_foreach_end();
        if (!kind->max_khz)
            all_freq = false;
        if (kind->max_khz > top_khz)
            top_khz = kind->max_khz;
    }
    hwloc_bitmap_free(set);
    /* Relative capacity: 1.0 when all CPUs are alike; otherwise the ratio of
     * maximum frequencies where hwloc knows them (it ignores the kinds'
     * different IPC, so it understates the gap), else unknown. */
    for (int k = 0; k < nr; k++) {
        if (nr == 1)
            t->kinds[k].capacity = 1.0;
        else if (all_freq && top_khz)
            t->kinds[k].capacity = (double)t->kinds[k].max_khz / top_khz;
    }
    for (unsigned i = 0; i < t->info.pus; i++) {
        const struct corun_topo_kind *kind = &t->kinds[t->cpus[i].kind];

        t->cpus[i].capacity = kind->capacity;
        t->cpus[i].max_khz = kind->max_khz;
        t->cpus[i].base_khz = kind->base_khz;
    }
    return 0;
}

static int fill_numa_distances(struct corun_topo *t, hwloc_topology_t h)
{
    unsigned n = t->info.ndomains[CORUN_LEVEL_NUMA], nr = 1;
    struct hwloc_distances_s *dist = NULL;

    if (n < 1)
        return 0;
    if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &dist,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
        nr < 1)
        return 0;
    t->numa_dist = calloc((size_t)n * n, sizeof(unsigned));
    if (!t->numa_dist) {
        hwloc_distances_release(h, dist);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < dist->nbobjs; i++)
        for (unsigned j = 0; j < dist->nbobjs; j++) {
            unsigned li = dist->objs[i]->logical_index, lj = dist->objs[j]->logical_index;

            if (li < n && lj < n)
                t->numa_dist[li * n + lj] = (unsigned)dist->values[i * dist->nbobjs + j];
        }
    hwloc_distances_release(h, dist);
    return 0;
}

/* On this system, the process's affinity narrows what is usable further than
 * the cgroup (which hwloc already applied). */
static void apply_affinity(struct corun_topo *t, unsigned cgroup_excluded)
{
    size_t size = CPU_ALLOC_SIZE(t->by_os_len > 1024 ? t->by_os_len : 1024);
    cpu_set_t *mask = CPU_ALLOC(t->by_os_len > 1024 ? t->by_os_len : 1024);
    unsigned aff_excluded = 0;

    if (!mask)
        return;
    if (corun__sys.sched_getaffinity(0, size, mask) == 0) {
        for (unsigned i = 0; i < t->info.pus; i++)
            if (t->cpus[i].usable && !CPU_ISSET_S(t->cpus[i].os_index, size, mask)) {
                t->cpus[i].usable = false;
                aff_excluded++;
            }
    }
    CPU_FREE(mask);
    if (cgroup_excluded || aff_excluded)
        snprintf(t->info.usable_note, sizeof(t->info.usable_note),
                 "%u CPU(s) excluded by the cgroup cpuset, %u by this process's affinity",
                 cgroup_excluded, aff_excluded);
}

static void fill_frequency(struct corun_topo *t, const struct corun_topo_opts *opts)
{
    bool any = false;

    if (opts->source == CORUN_TOPO_SYSTEM) {
        corun__topo_read_cpufreq(t, opts->sysroot);
        return;
    }
    for (unsigned i = 0; i < t->info.pus; i++)
        any |= t->cpus[i].max_khz != 0;
    snprintf(t->info.freq_missing, sizeof(t->info.freq_missing), "%s",
             opts->source == CORUN_TOPO_SYNTHETIC
                 ? "a synthetic topology has no frequencies"
             : any ? "the XML file records maximum and base frequencies only"
                   : "the XML file records no frequencies");
}

int corun_topo_load(const struct corun_topo_opts *opts, struct corun_topo **out)
{
    struct corun_topo *t;
    hwloc_topology_t h;
    unsigned cgroup_excluded = 0;
    int err;

    *out = NULL;
    if ((err = open_hwloc(opts, &h)))
        return err;
    t = calloc(1, sizeof(*t));
    if (!t) {
        err = -ENOMEM;
        goto out_destroy;
    }
    fill_identity(t, h, opts);
    if ((err = fill_cpus(t, h)))
        goto out_free;
    for (int l = 0; l < CORUN_NLEVELS; l++)
        if ((err = fill_level(t, h, (enum corun_level)l)))
            goto out_free;
    if ((err = fill_kinds(t, h)) || (err = fill_numa_distances(t, h)))
        goto out_free;
    for (unsigned i = 0; i < t->info.pus; i++)
        cgroup_excluded += !t->cpus[i].usable;
    if (opts->source == CORUN_TOPO_SYSTEM)
        apply_affinity(t, cgroup_excluded);
    else if (cgroup_excluded)
        snprintf(t->info.usable_note, sizeof(t->info.usable_note),
                 "%u CPU(s) outside the recorded allowed cpuset", cgroup_excluded);
    for (unsigned i = 0; i < t->info.pus; i++)
        t->info.usable_pus += t->cpus[i].usable;
    fill_frequency(t, opts);
    hwloc_topology_destroy(h);
    *out = t;
    return 0;

out_free:
    corun_topo_free(t);
out_destroy:
    hwloc_topology_destroy(h);
    return err;
}
