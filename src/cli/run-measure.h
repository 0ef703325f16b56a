/*
 * run-measure.h — how `corun run` and `corun batch` measure the commands
 * they start: wall time and the kernel's rusage (from wait4), and the sense
 * box's counters (perf, else the proc fallback; attached with inherit before
 * exec, read while the command is a zombie) with the derived metrics of
 * corun/model.h. A figure that cannot be measured is listed as missing with
 * its reason, never as a number.
 */
#ifndef CORUN_CLI_RUN_MEASURE_H
#define CORUN_CLI_RUN_MEASURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "corun/sense.h"

#define RUN_MAX_METRICS 40

struct run_metric {
    const char *name;    /* "cpu_util", "max_rss_bytes", "instructions"... */
    double value;        /* NaN when missing */
    const char *unit;    /* "", "bytes", "/s"... */
    const char *missing; /* why it is missing, NULL when measured */
};

struct run_measure {
    pid_t pid;
    int handle;           /* the sense box's, -1 when not attached */
    const char *no_sense; /* why counters are missing altogether, or NULL */
    bool have_sample;
    struct corun_sample sample; /* read while the command was a zombie */
    uint64_t t0_ns, t1_ns;
    double wall_s, cpu_s, user_s, sys_s;
    unsigned nmetrics;
    struct run_metric metrics[RUN_MAX_METRICS];
};

/* Starts measuring the just-forked process @pid (stopped before it execs:
 * counting starts at exec). */
void run_measure_start(struct run_measure *m, pid_t pid);
/* Reads the counters of the command, which has exited but is not reaped yet. */
void run_measure_exited(struct run_measure *m);
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

/* The sense backend in use ("perf", "proc") or NULL, and why the others
 * were not used (one line each into @why, may be empty). */
const char *run_measure_backend(char *why, size_t len);
/* The sense backend and state launched commands are measured with (opened
 * on first use; attach with it before the command execs), for an engine
 * that samples the same commands. False when no backend works here. */
bool run_measure_sense(const struct corun_sense_ops **ops, void **state);
/* Closes the sense box (at exit). */
void run_measure_shutdown(void);

/* Monotonic seconds. */
double run_now_s(void);

#endif
