/*
 * kernel.h — what the bundled workload kernels share: options, threads, and
 * the files tests synchronise on. Each kernel is a small program of a known
 * class (compute-bound, streaming, pointer-chasing, cache-sized random
 * access) used by `make demo`, the batch tests and the benchmarks.
 *
 * Options common to all:
 *   -n N      amount of work (per thread), in the kernel's unit
 *   -m SIZE   working set in KiB (per thread)
 *   -t T      threads (default 1)
 *   -r FILE   write the process's PID into FILE once every thread has
 *             started (tests wait for it), written whole then renamed in
 *   -w FILE   after the work, wait until FILE exists before exiting (tests
 *             inspect the running process, then release it)
 * Each prints nothing unless -v; the exit status is 0, 2 for bad options.
 */
#ifndef CORUN_KERNEL_H
#define CORUN_KERNEL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct kernel_args {
    unsigned long n;   /* work units */
    unsigned long kib; /* working set, KiB */
    unsigned threads;
    const char *ready, *wait;
    int verbose;
    uint64_t result; /* folded from every thread, printed with -v */
};

/* One thread's work: returns a value that depends on all of it, so the
 * compiler cannot drop the loop. */
typedef uint64_t (*kernel_fn)(const struct kernel_args *a, unsigned thread);

static pthread_barrier_t kernel_barrier;

struct kernel_thread {
    const struct kernel_args *a;
    kernel_fn fn;
    unsigned idx;
    uint64_t out;
};

static void kernel_wait_file(const char *path)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 2000000};

    while (access(path, F_OK) != 0)
        nanosleep(&ts, NULL); /* the program's own idle wait, not a test's */
}

static void *kernel_thread_main(void *p)
{
    struct kernel_thread *t = p;

    pthread_barrier_wait(&kernel_barrier);
    t->out = t->fn(t->a, t->idx);
    if (t->a->wait)
        kernel_wait_file(t->a->wait); /* stay alive to be inspected */
    return NULL;
}

static int kernel_main(int argc, char **argv, kernel_fn fn, unsigned long n, unsigned long kib)
{
    struct kernel_args a = {.n = n, .kib = kib, .threads = 1};
    struct kernel_thread *t;
    pthread_t *tid;
    int c;

    while ((c = getopt(argc, argv, "n:m:t:r:w:v")) != -1) {
        switch (c) {
        case 'n':
            a.n = strtoul(optarg, NULL, 10);
            break;
        case 'm':
            a.kib = strtoul(optarg, NULL, 10);
            break;
        case 't':
            a.threads = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'r':
            a.ready = optarg;
            break;
        case 'w':
            a.wait = optarg;
            break;
        case 'v':
            a.verbose = 1;
            break;
        default:
            fprintf(stderr, "usage: %s [-n WORK] [-m KIB] [-t THREADS] [-r READY] [-w WAIT] [-v]\n",
                    argv[0]);
            return 2;
        }
    }
    if (a.threads == 0 || a.threads > 1024 || a.kib == 0) {
        fprintf(stderr, "%s: -t 1..1024 and -m > 0\n", argv[0]);
        return 2;
    }
    t = calloc(a.threads, sizeof(*t));
    tid = calloc(a.threads, sizeof(*tid));
    if (!t || !tid)
        return 1;
    pthread_barrier_init(&kernel_barrier, NULL, a.threads + 1);
    for (unsigned i = 0; i < a.threads; i++) {
        t[i] = (struct kernel_thread){.a = &a, .fn = fn, .idx = i};
        if (pthread_create(&tid[i], NULL, kernel_thread_main, &t[i]))
            return 1;
    }
    if (a.ready) {
        char tmp[4096];
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s.tmp", a.ready);
        f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
            rename(tmp, a.ready);
        }
    }
    pthread_barrier_wait(&kernel_barrier);
    for (unsigned i = 0; i < a.threads; i++) {
        pthread_join(tid[i], NULL);
        a.result ^= t[i].out;
    }
    if (a.wait)
        kernel_wait_file(a.wait);
    if (a.verbose)
        printf("%s: %llx\n", argv[0], (unsigned long long)a.result);
    free(t);
    free(tid);
    return 0;
}

/* A small fast generator (xorshift64*) for the random kernels. */
static inline uint64_t kernel_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

#endif
