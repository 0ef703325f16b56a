/*
 * job-group.c — the processes of a `corun batch` job or of a `corun run`
 * command (job-group.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

pid_t job_parent_of(pid_t pid)
{
    char path[64], buf[512], *close_paren;
    int ppid = -1, fd;
    ssize_t got;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    got = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = 0;
    /* The comm may hold spaces and parentheses: the state and the parent
     * follow its last ')'. */
    if ((close_paren = strrchr(buf, ')')) && sscanf(close_paren + 1, " %*c %d", &ppid) == 1)
        return (pid_t)ppid;
    return -1;
}

int job_tree_pids(pid_t root, pid_t **out, unsigned max)
{
    struct link {
        pid_t pid, ppid;
    } *all = NULL;
    size_t nall = 0, cap = 0;
    unsigned n = 1;
    struct dirent *d;
    pid_t *tree;
    DIR *dir;

    *out = NULL;
    if (!max || !(tree = malloc(max * sizeof(*tree))))
        return -ENOMEM;
    tree[0] = root;
    if ((dir = opendir("/proc"))) {
        while ((d = readdir(dir))) {
            pid_t pid = (pid_t)atoi(d->d_name), ppid;

            if (pid <= 0 || pid == root || (ppid = job_parent_of(pid)) <= 0)
                continue;
            if (nall == cap) {
                struct link *l = realloc(all, (cap = cap ? 2 * cap : 256) * sizeof(*l));

                if (!l) {
                    free(all);
                    free(tree);
                    closedir(dir);
                    return -ENOMEM;
                }
                all = l;
            }
            all[nall++] = (struct link){pid, ppid};
        }
        closedir(dir);
    }
    /* Each generation from the one before: children of tree[i], in turn. */
    for (unsigned i = 0; i < n && n < max; i++)
        for (size_t k = 0; k < nall && n < max; k++)
            if (all[k].ppid == tree[i])
                tree[n++] = all[k].pid;
    free(all);
    *out = tree;
    return (int)n;
}

/* Appends @pid to *@v (*@n of *@cap used). 0 or -ENOMEM. */
static int pids_push(pid_t **v, unsigned *n, unsigned *cap, pid_t pid)
{
    if (*n == *cap) {
        unsigned c = *cap ? 2 * *cap : 16;
        pid_t *nv = realloc(*v, c * sizeof(*nv));

        if (!nv)
            return -ENOMEM;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = pid;
    return 0;
}

/* The children of @pid from /proc/PID/task/TID/children, one file per
 * thread (a child belongs to the thread that forked it). -ENOTSUP where the
 * kernel has no such file (CONFIG_PROC_CHILDREN unset). */
static int children_listed(pid_t pid, pid_t **v, unsigned *n, unsigned *cap)
{
    char path[96];
    struct dirent *d;
    int err = 0;
    DIR *dir;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
    if (access(path, R_OK) < 0)
        return errno == ENOENT ? -ENOTSUP : -errno;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(dir = opendir(path)))
        return -errno;
    while (!err && (d = readdir(dir))) {
        int tid = atoi(d->d_name), child;
        FILE *f;

        if (tid <= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, tid);
        if (!(f = fopen(path, "re")))
            continue; /* a thread that just exited */
        while (!err && fscanf(f, "%d", &child) == 1)
            err = pids_push(v, n, cap, (pid_t)child);
        fclose(f);
    }
    closedir(dir);
    return err;
}

/* The children of @pid found by reading every process's parent. */
static int children_scanned(pid_t pid, pid_t **v, unsigned *n, unsigned *cap)
{
    struct dirent *d;
    int err = 0;
    DIR *dir = opendir("/proc");

    if (!dir)
        return -errno;
    while (!err && (d = readdir(dir))) {
        pid_t child = (pid_t)atoi(d->d_name);

        if (child > 0 && child != pid && job_parent_of(child) == pid)
            err = pids_push(v, n, cap, child);
    }
    closedir(dir);
    return err;
}

int job_children(pid_t pid, pid_t **out)
{
    unsigned n = 0, cap = 0;
    pid_t *v = NULL;
    int err = children_listed(pid, &v, &n, &cap);

    if (err == -ENOTSUP)
        err = children_scanned(pid, &v, &n, &cap);
    if (err) {
        free(v);
        v = NULL;
        n = 0;
    }
    *out = v;
    return err ? err : (int)n;
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
