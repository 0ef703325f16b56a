/*
 * corun/policy.h — placement policies: pure functions from what is known
 * (the topology, a profile per task, where tasks are now) to where they should
 * run. No I/O, no clock, no logging: the same snapshot and seed give the same
 * plan. Policies read only profiles built from counters, never a simulator's
 * ground truth.
 */
#ifndef CORUN_POLICY_H
#define CORUN_POLICY_H

#include <corun/common.h>
#include <corun/topo.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Class hints (Xie & Loh's animal classes), from a user or learned. */
enum corun_class {
    CORUN_CLASS_UNKNOWN = -1,
    CORUN_CLASS_COMPUTE = 0, /* turtle: compute-int, compute-fp */
    CORUN_CLASS_SHEEP,       /* little cache use, insensitive */
    CORUN_CLASS_RABBIT,      /* cache-sensitive */
    CORUN_CLASS_CHASING,     /* pointer-chasing, memory-latency bound devil */
    CORUN_CLASS_STREAMING,   /* bandwidth-bound devil */
    CORUN_NCLASSES
};

/* "compute", "sheep", "rabbit", "chasing", "streaming"; "unknown". */
CORUN_API const char *corun_class_name(enum corun_class c);

/* What a policy knows of a task. NaN marks a figure that is not known. */
struct corun_task_profile {
    unsigned id;            /* the caller's task number */
    enum corun_class cls;   /* hint or learned; UNKNOWN */
    double weight;          /* relative importance, 1 by default */
    double ipc;             /* instructions per cycle */
    double freq_ratio;      /* cycles / ref_cycles */
    double llc_mpki;        /* LLC misses per kilo-instruction */
    double llc_miss_ratio;  /* LLC misses / LLC references */
    double mem_bw_bps;      /* memory bandwidth it draws, bytes per second */
    double cpu_util;        /* CPU time / wall time */
    /* Learned interference at each sharing level (CORUN_LEVEL_CORE, L2, L3,
     * NUMA...): pressure is what it does to neighbours, sensitivity what
     * neighbours do to it; 0 none. The predicted extra run time of a victim
     * at level l is sensitivity[l] * phi_l(sum of its neighbours' pressure[l])
     * with phi linear for the core and the memory domain and P/(1+P) for
     * caches (a share lost saturates): at the core, 1 and 1 halve the
     * victim's speed. See corun_policy_predict() and docs/internals/policy.md.
     * NaN means unknown: the policy falls back to its class prior. */
    double pressure[CORUN_NLEVELS];
    double sensitivity[CORUN_NLEVELS];
    int cpu;                /* dense CPU index it runs on now; -1 unplaced */
    /* Appended: where its memory lives (first touch). Zero-initialised
     * profiles say "unknown". A task run away from its memory node pays
     * remote latency on its memory stalls, and its bandwidth still loads
     * its home node's memory. */
    bool home_known;
    unsigned home_node;     /* logical index of that NUMA node */
    /* Appended: cls is the caller's hint, not learned from counters; the
     * policy then keeps it as given. */
    bool cls_hint;
};

struct corun_snapshot {
    const struct corun_topo *topo;
    unsigned ntasks;
    const struct corun_task_profile *tasks;
    uint64_t seed;
    /* Appended for the engine; zero-initialised snapshots keep working. */
    unsigned round;   /* how many times the engine asked before; 0 the first */
    double move_cost; /* predicted STP a move must gain to be worth it; 0 free */
    /* Appended. Memory follows its task: a task placed on another NUMA node
     * than its memory's (home_node when known, else its CPU's) has the
     * memory moved there, so it pays no remote latency and loads that
     * node's bandwidth; such a move must gain @mem_move_cost more. */
    bool mem_follows;
    double mem_move_cost;
    /* Appended. The clock of a package with n busy cores over its clock
     * with one, n = 1..@turbo_n at [n-1] (more busy cores: the last); NULL:
     * unknown, and a typical server part's linear 20% drop stands in. */
    const double *turbo_rel;
    unsigned turbo_n;
    /* Appended. The most tasks the caller moves this round; 0: as many as
     * the plan moves. A plan that moves more is reached in parts, over
     * several rounds, and each part must pay for itself. */
    unsigned max_moves;
};

/* A placement: one dense CPU index per task, -1 for "leave to the kernel". */
struct corun_plan {
    unsigned ntasks;
    int *cpu;
};

struct corun_policy {
    const char *name;    /* "linux", "spread", "pack", "di", "symbiotic", "corun" */
    const char *summary; /* one line */
    /* Fills @plan (plan->ntasks == snap->ntasks, cpu[] allocated by the
     * caller). 0 or -errno (-ENOSPC when the tasks cannot all be placed). */
    int (*place)(const struct corun_snapshot *snap, struct corun_plan *plan);
};

/*
 * corun_policy_predict() - the predicted STP (sum of weight * speed, where
 * speed 1 is the task alone on a fastest CPU) of placement @cpu (one dense
 * CPU index per task, -1 = not pinned) under the interference model of
 * struct corun_task_profile. Unpinned tasks are counted as running alone at
 * speed 1 with no effect on others: no placement is known for them. Per-task
 * predicted speeds go to @speed when it is not NULL. Returns the STP, or a
 * negative errno (-ENOMEM). Pure and thread-safe.
 */
CORUN_API double corun_policy_predict(const struct corun_snapshot *snap, const int *cpu,
                                      double *speed);

/*
 * corun_policy_check_plan() - whether @plan is valid for @snap: one entry per
 * task, each -1 or a usable CPU, and distinct CPUs when the tasks are no more
 * than the usable CPUs. 0 or -EINVAL.
 */
CORUN_API int corun_policy_check_plan(const struct corun_snapshot *snap,
                                      const struct corun_plan *plan);

/* The registry: the policy named @name, or NULL. */
CORUN_API const struct corun_policy *corun_policy_find(const char *name);
/* Registered policies in order, @i from 0; NULL past the end. */
CORUN_API const struct corun_policy *corun_policy_at(unsigned i);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_POLICY_H */
