/*
 * batch.h — the state of one `corun batch` run, shared by the runner
 * (cli-batch.c) and its report (batch-report.c).
 */
#ifndef CORUN_CLI_BATCH_H
#define CORUN_CLI_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/batch-sched.h"
#include "cli/jobfile.h"
#include "cli/json.h"
#include "cli/run-measure.h"
#include "corun/act.h"
#include "corun/engine.h"

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

/*
 * The processes that were corun's children, and their descendants, before
 * any job started: those of the shell that exec'd it (`sh -c 'sleep 300 &
 * exec corun batch JOBS'`). They are not the batch's: its drain neither
 * kills nor waits for them. One reaped during the batch is forgotten, so
 * that its PID, reused, is not spared.
 */
struct batch_inherited {
    pid_t *pid;
    unsigned n;
};

struct job_run {
    const struct job_spec *spec;
    enum job_state state;
    pid_t pid;     /* the leader; also its process group */
    int cpu;       /* dense CPU it is placed on; -1 not pinned */
    char cpus[64]; /* where it ran, for reports ("1", "any") */
    char key[64];  /* what it teaches: its program's name */
    enum corun_class cls;
    struct run_measure m;
    double start_s, end_s;
    int status;                              /* wait status */
    bool not_started;                        /* could not be started: counts as 127 */
    unsigned skipped;                        /* times another job was chosen ahead of it */
    double live_cpu_s, live_delay_s, live_t; /* as last sampled */
    double live_demand;                      /* (CPU + waiting for a CPU) / wall, last interval */
    double live_rss;                         /* resident bytes of its processes, largest seen */
    unsigned moves;                          /* re-placements while running */
    bool unpinned;                           /* its CPU was contended: every CPU given back */
    pid_t applied[64];                       /* processes of the job we placed (for restore) */
    unsigned napplied;
    int eng_idx;                             /* its task in the engine; -1 not managed */
};

struct batch {
    const char *policy_name;
    const struct corun_policy *pol;
    bool fifo; /* linux policy: first in, first out, unpinned */
    bool no_mem_follow; /* --no-mem-follow: jobs' memory stays where it is */
    const struct corun_act_ops *ops;
    void *act;
    struct corun_engine *eng; /* re-places running jobs; NULL: none (linux, no sensor) */
    double *turbo;            /* the turbo table handed to the engine; NULL: unread */
    struct corun_topo *topo;
    unsigned jmax;
    unsigned njobs;
    struct job_run *runs;
    struct sched_book book;
    struct sched_caches caches; /* what footprints are compared with */
    double t0, makespan_s;
    unsigned failed, placement_errors, replacements, unpinned;
    unsigned mem_moves; /* jobs' memory moved after them to another node (engine) */
    int stop_sig; /* SIGINT/SIGTERM received */
    struct batch_inherited *inherited; /* shared by both runs of --compare */
};

/* The exit code a finished job counts with: its status, 128+signal, 127. */
/* The engine's interval (ns): running jobs are re-placed at most this often. */
#define BATCH_ENGINE_EVERY_NS 2000000000

/* batch-engine.c: the engine of one run (b->eng NULL when there is none:
 * the linux policy, no sensor or actuator), and jobs joining and leaving. */
void batch_engine_open(struct batch *b);
void batch_engine_close(struct batch *b);
void batch_engine_add(struct batch *b, struct job_run *r);
void batch_engine_drop(struct batch *b, struct job_run *r);
void batch_engine_tell_class(struct batch *b, struct job_run *r);
uint64_t batch_engine_now_ns(void);

int batch_job_code(const struct job_run *r);

/* The table of jobs and the summary line, on @f. */
void batch_print(FILE *f, const struct batch *b);
/* {"jobs": [...], "summary": {...}} members into an open object. */
void batch_json(struct json *j, const struct batch *b);

#endif
