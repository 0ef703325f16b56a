/*
 * corun/model.h — from samples to what a task does.
 *
 * Derived metrics. Counts alone compare badly across tasks and machines;
 * ratios do not. Each metric is computed from a sample's counters (usually a
 * delta over an interval) and is NaN when an input is missing (its validity
 * bit clear) or the ratio is undefined (no instructions retired): a metric
 * that cannot be computed is never shown as zero. JSON writes NaN as null.
 *
 * Learned interference profiles (pressure and sensitivity per sharing level)
 * are declared further down by the files that implement them.
 */
#ifndef CORUN_MODEL_H
#define CORUN_MODEL_H

#include <corun/common.h>
#include <corun/sense.h>

#ifdef __cplusplus
extern "C" {
#endif

enum corun_metric {
    CORUN_M_IPC = 0,             /* instructions / cycles */
    CORUN_M_EFFECTIVE_GHZ,       /* cycles per task-clock second, in GHz */
    CORUN_M_FREQ_RATIO,          /* cycles / ref_cycles: >1 turbo, <1 throttled or idle states */
    CORUN_M_LLC_MPKI,            /* llc_misses per 1000 instructions */
    CORUN_M_LLC_MISS_RATIO,      /* llc_misses / llc_references */
    CORUN_M_BRANCH_MPKI,         /* branch_misses per 1000 instructions */
    CORUN_M_DTLB_MPKI,           /* dtlb_misses per 1000 instructions */
    CORUN_M_BACKEND_STALL_SHARE, /* stall_cycles_backend / cycles */
    CORUN_M_CPU_UTILIZATION,     /* task_clock_ns / elapsed ns: CPUs kept busy */
    CORUN_NMETRICS
};

struct corun_metrics {
    double v[CORUN_NMETRICS]; /* NaN: missing */
};

/* "ipc", "effective_ghz", "freq_ratio", "llc_mpki", "llc_miss_ratio", "branch_mpki",
 * "dtlb_mpki", "backend_stall_share", "cpu_utilization". Static; "?" when out of range. */
CORUN_API const char *corun_metric_name(enum corun_metric m);

/* The metric named @name, or -EINVAL. */
CORUN_API int corun_metric_by_name(const char *name);

/*
 * corun_metrics_compute() - every metric from the counts in @s, over a wall
 * time of @elapsed_ns (for CPU utilisation; 0 = unknown). Writes NaN for
 * each metric whose inputs are missing or whose denominator is zero.
 * Pure and thread-safe.
 */
CORUN_API void corun_metrics_compute(const struct corun_sample *s, uint64_t elapsed_ns,
                                     struct corun_metrics *out);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_MODEL_H */
