/*
 * batch-sched.h — how `corun batch` picks co-runners: which queued job
 * starts when a CPU frees up, and where, so that the predicted interference
 * with what is running stays low (the heuristic is described in
 * docs/batch.md and atop batch-sched.c).
 */
#ifndef CORUN_CLI_BATCH_SCHED_H
#define CORUN_CLI_BATCH_SCHED_H

#include <stdbool.h>

#include "corun/policy.h"
#include "corun/topo.h"

/* What is learned about a program (the first word of a job's command) from
 * its jobs that ran: later jobs of the same program start from it. */
struct sched_learned {
    char key[64];
    enum corun_class cls; /* learned class, UNKNOWN until known */
    double cpu_util;      /* CPU time / wall time, EWMA over its jobs */
    unsigned jobs;
};

struct sched_book {
    unsigned n, cap;
    struct sched_learned *progs;
};

/* The key of a command: the base name of its first word. */
void sched_key(const char *command, char *key, size_t len);
/* The learned record of @key, or NULL. */
const struct sched_learned *sched_book_find(const struct sched_book *b, const char *key);
/* Folds one finished (or still running) job's figures into @key's record. */
void sched_book_learn(struct sched_book *b, const char *key, enum corun_class cls, double cpu_util);
void sched_book_release(struct sched_book *b);

/*
 * Fills @p for a task of class @cls using @cpu_util of a CPU (NaN: assume
 * busy): the class's typical pressure and sensitivity at each sharing level,
 * pressure scaled by how much of the time the task actually runs.
 */
void sched_profile(struct corun_task_profile *p, unsigned id, enum corun_class cls, double weight,
                   double cpu_util, int cpu);

/* The cache sizes the fallback classification compares footprints with. */
struct sched_caches {
    double l2_bytes;  /* one L2 (0 unknown) */
    double llc_bytes; /* one last-level cache (0 unknown) */
};

/* The sizes of @topo's first L2 and largest L3 (or L2 when it has none). */
void sched_caches_of(const struct corun_topo *topo, struct sched_caches *c);

/*
 * The class the fallback signals (no PMU needed) suggest for a task with hint
 * @hint, measured @cpu_util (CPU time plus time waiting for a CPU, per
 * second) and private resident memory @rss_bytes (NaN: unknown):
 *   - the hint, when given;
 *   - "sheep" below half a CPU (mostly waiting);
 *   - "compute" when it fits an L2 (its data stays near the core);
 *   - "rabbit" when it fits the last-level cache (cache-sensitive);
 *   - "streaming" above it (memory-bound; without counters a pointer chaser
 *     cannot be told apart, and streaming is the one that presses harder);
 *   - UNKNOWN when nothing is known.
 */
enum corun_class sched_learn_class(enum corun_class hint, double cpu_util, double rss_bytes,
                                   const struct sched_caches *c);

/*
 * The class counters suggest (where a PMU is there): LLC misses per
 * kilo-instruction @llc_mpki and @ipc; NaN when not counted, then the
 * fallback's answer @fallback is kept. The hint wins; below half a CPU of
 * demand, "sheep"; then >= 10 MPKI with IPC under 0.5 "chasing" (latency
 * bound), >= 10 "streaming", >= 1 "rabbit", else "compute" (in the manner of
 * Xie & Loh's animal classes).
 */
enum corun_class sched_class_from_counters(enum corun_class hint, double cpu_util, double llc_mpki,
                                           double ipc, enum corun_class fallback);

/*
 * Predicted slowdown two tasks cause each other where they are placed
 * (dense CPUs; -1 means "anywhere": only what the whole machine shares).
 */
double sched_pair_cost(const struct corun_topo *topo, const struct corun_task_profile *a,
                       const struct corun_task_profile *b);

/* The predicted cost of task @t against every task of @others. */
double sched_cost_with(const struct corun_topo *topo, const struct corun_task_profile *t,
                       const struct corun_task_profile *others, unsigned n);

#endif
