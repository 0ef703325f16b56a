/*
 * run-measure.h — how `corun run` and `corun batch` measure the commands
 * they start. One small seam: today wall time and the kernel's rusage (from
 * wait4) and live CPU use from /proc; at merge the lead points it at the
 * sense box (perf, with the proc fallback) and the counter metrics appear.
 * A figure that cannot be measured is listed as missing with its reason.
 */
#ifndef CORUN_CLI_RUN_MEASURE_H
#define CORUN_CLI_RUN_MEASURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#define RUN_MAX_METRICS 16

struct run_metric {
    const char *name;    /* "cpu_util", "max_rss_bytes", "instructions"... */
    double value;        /* NaN when missing */
    const char *unit;    /* "", "bytes", "/s"... */
    const char *missing; /* why it is missing, NULL when measured */
};

struct run_measure {
    pid_t pid;
    uint64_t t0_ns, t1_ns;
    double wall_s, cpu_s, user_s, sys_s;
    unsigned nmetrics;
    struct run_metric metrics[RUN_MAX_METRICS];
};

/* Starts measuring the just-forked process @pid (before it execs). */
void run_measure_start(struct run_measure *m, pid_t pid);
/* Ends the measurement with what wait4 returned for it. */
void run_measure_finish(struct run_measure *m, const struct rusage *ru);
/* The metric @name, or NULL. */
const struct run_metric *run_measure_metric(const struct run_measure *m, const char *name);

/* What the live processes of one process group use, from /proc. */
struct run_group_use {
    double cpu_s;   /* CPU seconds, theirs and their reaped children's */
    double delay_s; /* seconds spent runnable, waiting for a CPU (schedstat) */
    double rss;     /* private resident bytes (not shared libraries) */
};

/* The use of each process group in @pgids into @out[i] (zeros when none of
 * its processes is alive); one /proc scan for all. */
void run_measure_groups(const pid_t *pgids, unsigned n, struct run_group_use *out);

/* Monotonic seconds. */
double run_now_s(void);

#endif
