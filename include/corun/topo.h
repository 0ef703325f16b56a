/*
 * corun/topo.h — the machine: which CPUs exist, what they share, how fast
 * they run.
 *
 * A topology is discovered once with hwloc, from this system, an hwloc XML
 * file (what `lstopo --of xml` writes) or an hwloc synthetic description, and
 * then answered from precomputed arrays: no hwloc call is made after
 * corun_topo_load() returns, so policies may query it on their hot path.
 *
 * CPUs are numbered densely, 0..pus-1, in hwloc's logical order; that dense
 * index is what every other box of corun uses. The kernel's number for a CPU
 * is its os_index. Domains (cores, L2 and L3 caches, NUMA nodes, packages) are
 * numbered 0-based in hwloc's logical order too; -1 means "none".
 *
 * A topology is immutable after loading and may be shared between threads.
 */
#ifndef CORUN_TOPO_H
#define CORUN_TOPO_H

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Levels of sharing, innermost first. CORUN_LEVEL_CORE is what SMT siblings
 * share (the pipeline); L2 is a cluster or module cache; L3 the last-level
 * cache of a CCX or socket.
 */
enum corun_level {
    CORUN_LEVEL_PU = 0, /* the same CPU */
    CORUN_LEVEL_CORE,
    CORUN_LEVEL_L2,
    CORUN_LEVEL_L3,
    CORUN_LEVEL_NUMA,
    CORUN_LEVEL_PACKAGE,
    CORUN_LEVEL_MACHINE,
    CORUN_NLEVELS
};

/* "cpu", "core", "l2", "l3", "numa", "package", "machine". */
CORUN_API const char *corun_level_name(enum corun_level level);

enum corun_topo_source {
    CORUN_TOPO_SYSTEM = 0, /* this machine, live */
    CORUN_TOPO_XML,        /* input: path of an hwloc XML file */
    CORUN_TOPO_SYNTHETIC,  /* input: hwloc synthetic description */
};

struct corun_topo_opts {
    enum corun_topo_source source;
    const char *input; /* XML path or synthetic description */
    /*
     * Root below which /sys is read for frequencies (NULL: "/"). Only used
     * for CORUN_TOPO_SYSTEM.
     */
    const char *sysroot;
};

/* One CPU (hardware thread). Frequencies are 0 where unknown. */
struct corun_topo_cpu {
    unsigned os_index; /* the kernel's CPU number */
    int dom[CORUN_NLEVELS]; /* domain of each level; -1 none; dom[PU] is itself */
    int kind;               /* index into the CPU kinds, 0..kinds-1 */
    bool usable;            /* this process may run there (cgroup and affinity) */
    unsigned smt_rank;      /* 0 for the first hardware thread of its core */
    unsigned smt_width;     /* hardware threads on its core */
    double capacity;        /* relative compute capacity, 1.0 fastest; 0 unknown */
    uint32_t base_khz, min_khz, max_khz, cur_khz;
};

/* A kind of CPU (hybrid machines have two or more). */
struct corun_topo_kind {
    char name[32];      /* hwloc CoreType ("IntelCore", "IntelAtom") or "kindN" */
    int efficiency;     /* hwloc's rank: higher is faster; -1 unknown */
    double capacity;    /* relative capacity, 1.0 fastest; 0 unknown */
    unsigned cpus;      /* CPUs of this kind */
    uint32_t max_khz;   /* from hwloc's FrequencyMaxMHz; 0 unknown */
    uint32_t base_khz;  /* from hwloc's FrequencyBaseMHz; 0 unknown */
};

/* One domain: a core, a cache, a NUMA node or a package. */
struct corun_topo_domain {
    int logical;            /* its number: hwloc's logical index */
    unsigned os_index;      /* hwloc's os_index (NUMA node and package numbers) */
    uint64_t size_bytes;    /* cache size or NUMA memory; 0 unknown */
    unsigned ncpus;         /* its CPUs, dense indexes, ascending */
    const unsigned *cpus;
    /* Appended: its cores, counted as its CPUs of SMT rank 0. */
    unsigned ncores;
};

struct corun_topo_info {
    enum corun_topo_source source;
    char source_name[256]; /* "this system", the XML path, "synthetic:DESC" */
    char cpu_vendor[32];   /* "GenuineIntel", "AuthenticAMD"... or "" */
    char cpu_model[96];    /* "Intel(R) Xeon(R) Gold 6140..." or "" */
    int cpu_family, cpu_model_number; /* -1 unknown */
    unsigned pus, usable_pus;
    unsigned ndomains[CORUN_NLEVELS]; /* cores, l2, l3, numa, packages */
    unsigned smt_width;               /* most hardware threads on one core */
    unsigned kinds;                   /* CPU kinds, 1 when all are alike */
    /* Why frequencies are missing, or "" when every CPU has them. */
    char freq_missing[160];
    /* Why usable CPUs were limited, or "". */
    char usable_note[160];
};

struct corun_topo;

/*
 * corun_topo_load() - discover a topology.
 *
 * Returns 0 and the topology in *@out, or a negative errno:
 * -ENOENT/-EACCES/-EISDIR for an XML file that cannot be opened, -EINVAL for
 * an XML file hwloc rejects or a bad synthetic description, -ENODEV for a
 * topology without any CPU, -ENOMEM.
 */
CORUN_API int corun_topo_load(const struct corun_topo_opts *opts, struct corun_topo **out);

/* Releases a topology; accepts NULL. */
CORUN_API void corun_topo_free(struct corun_topo *topo);

/* The summary: counts and identity. Never NULL. */
CORUN_API const struct corun_topo_info *corun_topo_info(const struct corun_topo *topo);

/* Number of CPUs (hardware threads), usable or not. */
CORUN_API unsigned corun_topo_ncpus(const struct corun_topo *topo);

/* CPU @idx (dense index). NULL when out of range. */
CORUN_API const struct corun_topo_cpu *corun_topo_cpu(const struct corun_topo *topo, unsigned idx);

/* Dense index of the CPU the kernel numbers @os_index, or -1. */
CORUN_API int corun_topo_cpu_by_os(const struct corun_topo *topo, unsigned os_index);

/* Domains of @level: count, and domain @d (NULL when out of range). */
CORUN_API unsigned corun_topo_ndomains(const struct corun_topo *topo, enum corun_level level);
CORUN_API const struct corun_topo_domain *corun_topo_domain(const struct corun_topo *topo,
                                                            enum corun_level level, unsigned d);

/* CPU kind @k, 0..info->kinds-1. NULL when out of range. */
CORUN_API const struct corun_topo_kind *corun_topo_kind(const struct corun_topo *topo, unsigned k);

/*
 * corun_topo_shared_level() - the innermost thing CPUs @a and @b (dense
 * indexes) share: CORUN_LEVEL_PU when a == b, CORE for SMT siblings, then L2,
 * L3, NUMA, PACKAGE, and MACHINE when they share nothing smaller. "Innermost"
 * is the shared domain with the fewest CPUs, so a NUMA node inside an L3
 * (sub-NUMA clustering) comes before that L3. Out-of-range CPUs give
 * CORUN_LEVEL_MACHINE. Constant time.
 */
CORUN_API enum corun_level corun_topo_shared_level(const struct corun_topo *topo, unsigned a,
                                                   unsigned b);

/* Whether CPUs @a and @b are in the same domain of @level. */
CORUN_API bool corun_topo_shares(const struct corun_topo *topo, unsigned a, unsigned b,
                                 enum corun_level level);

/*
 * corun_topo_numa_distance() - relative distance between NUMA nodes @i and @j
 * (logical numbers), 10 meaning local, as the firmware (SLIT) reports it.
 * Returns 0 when the topology has no distances.
 */
CORUN_API unsigned corun_topo_numa_distance(const struct corun_topo *topo, unsigned i, unsigned j);

/*
 * corun_topo_usable_set() - the usable CPUs as OS indexes in @set (grown as
 * needed). 0 or -ENOMEM.
 */
CORUN_API int corun_topo_usable_set(const struct corun_topo *topo, struct corun_cpuset *set);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_TOPO_H */
