/*
 * policy-linux.c — `linux`: pin nothing, leave every task to the kernel.
 *
 * What it does: returns -1 ("leave to the kernel") for every task, so the
 * actuator restores or keeps each task's original affinity. In the simulator
 * an unpinned task is placed by the model of Linux's load balancer, so this
 * policy is the baseline every other one is measured against.
 *
 * Source: Linux's CFS/EEVDF load balancer (kernel/sched/fair.c): it balances
 * runnable load across scheduling domains, fills idle cores before SMT
 * siblings, and knows nothing of which tasks hurt each other.
 *
 * Works well: homogeneous mixes, short-lived tasks, machines where nothing is
 * shared; it costs nothing and never fights the kernel.
 * Works badly: mixes of devils and rabbits, SMT pairs of two compute-bound
 * tasks, streamers packed in one memory domain — contention it cannot see.
 */
#include "policy/policy-internal.h"

static int linux_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned i = 0; i < plan->ntasks; i++)
        plan->cpu[i] = -1;
    return 0;
}

const struct corun_policy corun__policy_linux = {
    .name = "linux",
    .summary = "pin nothing: the kernel's load balancer decides (the baseline)",
    .place = linux_place,
};
