/*
 * procsel-internal.h — what the selector's files share: its state, the
 * memory of processes between scans (struct tracked), and the cgroup helpers
 * of procsel-cgroup.c.
 */
#ifndef CORUN_PROCSEL_INTERNAL_H
#define CORUN_PROCSEL_INTERNAL_H

#include <sched.h>
#include <sys/types.h>

#include "corun/procsel.h"

/*
 * What the selector remembers of a process between scans, so that a known
 * process costs one small read per scan instead of four: its last judgement,
 * a descriptor kept open on the file its CPU time is read from (a kept
 * /proc/PID descriptor also guards against pid reuse: it fails with ESRCH once
 * the process is gone), and its cgroup for the pinning check. Every
 * @recheck scans (staggered by pid) it is judged again in full, so that
 * changes of command name, uid or cgroup are seen. Kept sorted by pid.
 */
struct tracked {
    pid_t pid;
    uint64_t start_ticks;
    int fd;       /* kept CPU-time file; -1 none */
    bool fd_stat; /* the file is stat (all threads), else schedstat */
    bool have_cpu;
    uint64_t cpu_ns;                 /* cumulative CPU time at the last scan */
    char *cg;                        /* its cpuset's key (cgroup_key), for the pinning check */
    enum corun_procsel_verdict base; /* verdict of the name/uid/cgroup rules alone */
    struct corun_proc_info info;     /* the last judgement */
};

/* One cgroup's allowed CPUs, cached for the length of one scan. */
struct cg_cache {
    char *path;
    struct corun_cpuset cpus;
    bool known;
};

struct corun_procsel {
    int rootfd;
    char **comms;
    unsigned ncomms;
    uid_t *uids;
    unsigned nuids;
    char **cgroups;
    unsigned ncgroups;
    double min_cpu_percent;
    bool include_pinned;
    pid_t self;
    bool (*is_ours)(void *user, pid_t pid, uint64_t start_ticks,
                    const struct corun_cpuset *allowed);
    void *user;
    long clk_tck;

    bool live;        /* the root is "/": the syscall fast paths apply */
    unsigned recheck; /* full judgement every this many scans */
    unsigned scan_no;
    cpu_set_t *mask; /* for sched_getaffinity, mask_ncpus CPUs */
    size_t mask_ncpus;
    struct tracked *prev; /* sorted by pid */
    size_t nprev;
    uint64_t prev_ns;

    struct cg_cache *cg;
    size_t ncg, cap_cg;
};

/* True when a hierarchy's path in the /proc/PID/cgroup text @cg is one of the
 * selector's cgroup rules or below it. */
bool corun__procsel_cgroup_matches(struct corun_procsel *s, const char *cg);
/* The key of the cpuset that governs the process whose /proc/PID/cgroup text
 * is @cg: "1:PATH" (v1 cpuset), "2:PATH" (v2), "0:" (neither). */
void corun__procsel_cgroup_key(const char *cg, char *key, size_t len);
/* The CPUs the cpuset of @key allows, cached for the scan; NULL on ENOMEM. */
const struct corun_cpuset *corun__procsel_cgroup_cpus(struct corun_procsel *s, const char *key);
/* Empties the per-scan cpuset cache. */
void corun__procsel_cg_reset(struct corun_procsel *s);

#endif /* CORUN_PROCSEL_INTERNAL_H */
