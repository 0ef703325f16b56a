/*
 * job-group.c — the processes of a `corun batch` job (job-group.h).
 */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/job-group.h"

#define JOB_GROUP_MAX 64

unsigned job_group_pids(pid_t pgid, pid_t *out, unsigned max)
{
    struct dirent *d;
    unsigned n = 0;
    DIR *dir = opendir("/proc");

    if (!dir)
        return 0;
    while ((d = readdir(dir)) && n < max) {
        pid_t pid = (pid_t)atoi(d->d_name);

        if (pid > 0 && getpgid(pid) == pgid)
            out[n++] = pid;
    }
    closedir(dir);
    return n;
}

unsigned job_group_move_memory(const struct corun_act_ops *ops, void *act, pid_t leader, int node)
{
    pid_t pids[JOB_GROUP_MAX];
    unsigned n, moved = 0;

    if (!ops || !ops->move_memory || (ops->flags & CORUN_ACT_CHILDREN_FOLLOW))
        return 0;
    n = job_group_pids(leader, pids, JOB_GROUP_MAX);
    for (unsigned i = 0; i < n; i++)
        if (pids[i] != leader && ops->move_memory(act, pids[i], node) == 0)
            moved++;
    return moved;
}
