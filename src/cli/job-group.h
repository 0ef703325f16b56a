/*
 * job-group.h — the processes of a `corun batch` job: the process group it
 * leads (spawn.c starts each job in its own). The affinity actuator places
 * them one by one, so their memory also follows one by one.
 */
#ifndef CORUN_CLI_JOB_GROUP_H
#define CORUN_CLI_JOB_GROUP_H

#include <sys/types.h>

#include "corun/act.h"

/* Every process of process group @pgid, at most @max of them, in @out
 * (the leader among them while it lives). Returns how many. */
unsigned job_group_pids(pid_t pgid, pid_t *out, unsigned max);

/*
 * After the memory of @leader moved to NUMA node @node (the kernel's
 * number): moves that of the other processes of its group with @ops, which
 * placed them (a CORUN_ACT_CHILDREN_FOLLOW actuator moves them itself, so
 * nothing is done here). A process that exited meanwhile, or that the
 * actuator refuses, keeps its memory where it is. Returns the processes
 * whose memory moved.
 */
unsigned job_group_move_memory(const struct corun_act_ops *ops, void *act, pid_t leader, int node);

#endif
