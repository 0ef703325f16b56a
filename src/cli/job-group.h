/*
 * job-group.h — the processes of a job: for `corun batch`, the process
 * group it leads (spawn.c starts each job in its own); for `corun run`,
 * whose command stays in the terminal's foreground group, the tree of
 * processes it started. The affinity actuator places them one by one, so
 * their memory also follows one by one. Also a process's children, which
 * tell batch's leftovers from what it had before any job.
 */
#ifndef CORUN_CLI_JOB_GROUP_H
#define CORUN_CLI_JOB_GROUP_H

#include <sys/types.h>

#include "corun/act.h"

/* Every process of process group @pgid, at most @max of them, in @out
 * (the leader among them while it lives). Returns how many. */
unsigned job_group_pids(pid_t pgid, pid_t *out, unsigned max);

/* The parent of process @pid (/proc/PID/stat), or -1 when it cannot be
 * read. */
pid_t job_parent_of(pid_t pid);

/*
 * @root and its descendants living now, by parent PID (/proc/N/stat), at
 * most @max, in *@out (malloc'ed; the caller frees it): @root first, then
 * each generation. A process whose parent exited was reparented and is no
 * longer found. Returns how many (at least 1: @root, alive or not), or
 * -ENOMEM with *@out NULL.
 */
int job_tree_pids(pid_t root, pid_t **out, unsigned max);

/*
 * The children of process @pid living (or not yet reaped) now, in *@out
 * (malloc'ed, the caller frees it; NULL when there are none): from
 * /proc/PID/task/TID/children where the kernel has it, else by reading
 * every process's parent. Returns how many, or -errno (-ENOMEM, or /proc
 * unreadable) with *@out NULL.
 */
int job_children(pid_t pid, pid_t **out);

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
