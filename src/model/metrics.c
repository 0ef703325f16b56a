/*
 * metrics.c — derived metrics (see corun/model.h). Only ratios of counts
 * live here; learned profiles are in their own files of src/model/.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "corun/model.h"

static const char *const metric_names[CORUN_NMETRICS] = {
    [CORUN_M_IPC] = "ipc",
    [CORUN_M_EFFECTIVE_GHZ] = "effective_ghz",
    [CORUN_M_FREQ_RATIO] = "freq_ratio",
    [CORUN_M_LLC_MPKI] = "llc_mpki",
    [CORUN_M_LLC_MISS_RATIO] = "llc_miss_ratio",
    [CORUN_M_BRANCH_MPKI] = "branch_mpki",
    [CORUN_M_DTLB_MPKI] = "dtlb_mpki",
    [CORUN_M_BACKEND_STALL_SHARE] = "backend_stall_share",
    [CORUN_M_CPU_UTILIZATION] = "cpu_utilization",
};

const char *corun_metric_name(enum corun_metric m)
{
    return (unsigned)m < CORUN_NMETRICS ? metric_names[m] : "?";
}

int corun_metric_by_name(const char *name)
{
    for (int i = 0; i < CORUN_NMETRICS; i++)
        if (name && !strcmp(metric_names[i], name))
            return i;
    return -EINVAL;
}

static bool has(const struct corun_sample *s, enum corun_event ev)
{
    return s->valid & CORUN_EV_BIT(ev);
}

/* num/den * scale, or NaN when either count is missing or den is zero. */
static double ratio(const struct corun_sample *s, enum corun_event num, enum corun_event den,
                    double scale)
{
    if (!has(s, num) || !has(s, den) || s->value[den] == 0)
        return NAN;
    return (double)s->value[num] / (double)s->value[den] * scale;
}

void corun_metrics_compute(const struct corun_sample *s, uint64_t elapsed_ns,
                           struct corun_metrics *out)
{
    out->v[CORUN_M_IPC] = ratio(s, CORUN_EV_INSTRUCTIONS, CORUN_EV_CYCLES, 1.0);
    /* cycles per ns of CPU time is GHz. */
    out->v[CORUN_M_EFFECTIVE_GHZ] = ratio(s, CORUN_EV_CYCLES, CORUN_EV_TASK_CLOCK_NS, 1.0);
    out->v[CORUN_M_FREQ_RATIO] = ratio(s, CORUN_EV_CYCLES, CORUN_EV_REF_CYCLES, 1.0);
    out->v[CORUN_M_LLC_MPKI] = ratio(s, CORUN_EV_LLC_MISSES, CORUN_EV_INSTRUCTIONS, 1000.0);
    out->v[CORUN_M_LLC_MISS_RATIO] = ratio(s, CORUN_EV_LLC_MISSES, CORUN_EV_LLC_REFERENCES, 1.0);
    out->v[CORUN_M_BRANCH_MPKI] = ratio(s, CORUN_EV_BRANCH_MISSES, CORUN_EV_INSTRUCTIONS, 1000.0);
    out->v[CORUN_M_DTLB_MPKI] = ratio(s, CORUN_EV_DTLB_MISSES, CORUN_EV_INSTRUCTIONS, 1000.0);
    out->v[CORUN_M_BACKEND_STALL_SHARE] =
        ratio(s, CORUN_EV_STALL_CYCLES_BACKEND, CORUN_EV_CYCLES, 1.0);
    out->v[CORUN_M_CPU_UTILIZATION] =
        has(s, CORUN_EV_TASK_CLOCK_NS) && elapsed_ns
            ? (double)s->value[CORUN_EV_TASK_CLOCK_NS] / (double)elapsed_ns
            : NAN;
}
