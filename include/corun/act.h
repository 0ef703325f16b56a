/*
 * corun/act.h — putting tasks where a policy said: CPU affinity or cgroup
 * cpusets, a dry run, or the simulator, behind one operations table.
 *
 * Every change is journaled first with the task's original placement so that
 * any exit path (normal, signal, crash followed by `corun restore`) puts it
 * back. Failures for one task (ESRCH as it exits, EPERM) are returned for
 * that task and never stop the caller's loop.
 */
#ifndef CORUN_ACT_H
#define CORUN_ACT_H

#include <sys/types.h>

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct corun_act_opts {
    const char *journal_dir; /* where originals are journaled; NULL: no journal */
    const char *root;        /* root for /proc and cgroupfs, NULL = "/" */
    void *backend_cfg;       /* backend-specific (the simulator's instance) */
};

struct corun_act_ops {
    const char *name; /* "affinity", "cpuset", "dryrun", "sim" */
    int (*probe)(const struct corun_act_opts *opts, char *why, size_t len);
    int (*open)(const struct corun_act_opts *opts, void **state);
    /* Runs task @target (a PID, or a task index for the simulator) on the CPUs
     * in @cpus (kernel numbering). 0 or -errno. */
    int (*apply)(void *state, pid_t target, const struct corun_cpuset *cpus);
    /* Puts @target back as it was before the first apply. 0 or -errno. */
    int (*restore)(void *state, pid_t target);
    /* Restores every task this instance changed. 0 or the first -errno. */
    int (*restore_all)(void *state);
    void (*close)(void *state);
};

#ifdef __cplusplus
}
#endif
#endif /* CORUN_ACT_H */
