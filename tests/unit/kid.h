/*
 * kid.h — a real child process for the act tests: it starts with some
 * threads, and on command starts another thread that widens its own
 * affinity to every CPU (as a program resetting its threads would), so
 * tests can see whether an actuator picks up threads born later.
 */
#ifndef CORUN_TEST_KID_H
#define CORUN_TEST_KID_H

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define KID_MAX_TIDS 8

struct kid {
    pid_t pid;
    int cmd;       /* parent -> child */
    int resp;      /* child -> parent */
    pid_t tids[KID_MAX_TIDS]; /* the threads it started, in order (not a sanitizer's own) */
    int ntids;
};

/* The child's end of the response pipe, for its threads. */
static int kid_resp = -1;

/* A thread of the child: @arg non-NULL widens its affinity first; then it
 * says its thread ID. */
static void *kid_idle(void *arg)
{
    pid_t tid = gettid();

    if (arg) {
        cpu_set_t all;

        CPU_ZERO(&all);
        for (int c = 0; c < CPU_SETSIZE; c++)
            CPU_SET(c, &all);
        sched_setaffinity(0, sizeof(all), &all); /* the kernel trims it */
    }
    write(kid_resp, &tid, sizeof(tid));
    for (;;)
        pause();
    return NULL;
}

/* Reads a thread ID the child sent into @k->tids. */
static inline void kid_read_tid(struct kid *k)
{
    pid_t tid;

    if (read(k->resp, &tid, sizeof(tid)) != (ssize_t)sizeof(tid) || k->ntids >= KID_MAX_TIDS)
        abort();
    k->tids[k->ntids++] = tid;
}

/* Starts a child with @nthreads extra threads; returns when they run. */
static inline struct kid kid_start(int nthreads)
{
    int c[2], r[2];
    struct kid k = {.ntids = 0};
    char x;

    if (nthreads >= KID_MAX_TIDS || pipe(c) || pipe(r))
        abort();
    k.pid = fork();
    if (k.pid == 0) {
        pthread_t t;
        static int wide;

        close(c[1]);
        close(r[0]);
        kid_resp = r[1];
        for (int i = 0; i < nthreads; i++)
            pthread_create(&t, NULL, kid_idle, NULL);
        while (read(c[0], &x, 1) == 1) {
            if (x == 't')
                pthread_create(&t, NULL, kid_idle, &wide);
            else
                _exit(0);
        }
        _exit(0);
    }
    close(c[0]);
    close(r[1]);
    k.cmd = c[1];
    k.resp = r[0];
    for (int i = 0; i < nthreads; i++)
        kid_read_tid(&k);
    return k;
}

/* Asks the child for one more (wide) thread; returns when it is wide. */
static inline void kid_new_thread(struct kid *k)
{
    if (write(k->cmd, "t", 1) != 1)
        abort();
    kid_read_tid(k);
}

static inline void kid_stop(struct kid *k)
{
    kill(k->pid, SIGKILL);
    waitpid(k->pid, NULL, 0);
    close(k->cmd);
    close(k->resp);
}

/* The thread IDs of @pid, up to @max; their count. */
static inline int kid_threads(pid_t pid, pid_t *tids, int max)
{
    char path[64];
    struct dirent *d;
    DIR *dir;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    dir = opendir(path);
    while (dir && (d = readdir(dir)) && n < max)
        if (d->d_name[0] != '.')
            tids[n++] = (pid_t)atoi(d->d_name);
    if (dir)
        closedir(dir);
    return n;
}

#endif
