/*
 * randwalk.h — the random walk shared by the two workload programs: fill a
 * buffer (which faults every page in), then follow a chain of dependent
 * loads at pseudo-random places in it, so that each access waits for the one
 * before it and exposes the cost of a TLB miss. At the end the program reads
 * its own /proc/self/smaps and says how much of its buffer sits in huge
 * pages. Nothing here asks for huge pages: the programs are "unmodified".
 */
#ifndef RANDWALK_H
#define RANDWALK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double rw_now_ns(clockid_t clk)
{
    struct timespec ts;

    clock_gettime(clk, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The KiB of AnonHugePages in the mappings that overlap [p, p + len). */
static long long rw_huge_kb(const void *p, size_t len)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    unsigned long long s, e;
    long long kb = 0, v;
    int inside = 0;
    char line[512];
    FILE *f = fopen("/proc/self/smaps", "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%llx-%llx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = s < hi && e > lo;
        else if (inside && sscanf(line, "AnonHugePages: %lld kB", &v) == 1)
            kb += v;
    }
    fclose(f);
    return kb;
}

/* Usage: NAME [SIZE_MIB [ACCESSES]]. Runs the walk over @buf and prints one line. */
static int rw_run(const char *name, uint64_t *buf, size_t bytes, unsigned long long accesses)
{
    size_t n = bytes / sizeof(*buf);
    uint64_t x = 0x2545F4914F6CDD1Dull, idx = 0, sum = 0;
    double t0, t1, w0, w1;

    for (size_t i = 0; i < n; i++)
        buf[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    /* CPU time: on a loaded machine the wall clock also counts the time the
     * walk waited for a CPU, which has nothing to do with its pages. */
    w0 = rw_now_ns(CLOCK_MONOTONIC);
    t0 = rw_now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (unsigned long long k = 0; k < accesses; k++) {
        uint64_t v = buf[idx];

        x = x * 6364136223846793005ull + 1442695040888963407ull;
        sum += v;
        /* The next place depends on the value just loaded: no overlap. */
        idx = (uint64_t)(((unsigned __int128)(x ^ v) * n) >> 64);
    }
    t1 = rw_now_ns(CLOCK_THREAD_CPUTIME_ID);
    w1 = rw_now_ns(CLOCK_MONOTONIC);
    printf("%s size_mib=%zu accesses=%llu ns_per_access=%.3f wall_ns_per_access=%.3f "
           "buffer_kb=%zu huge_kb=%lld sum=%llu\n",
           name, bytes >> 20, accesses, (t1 - t0) / (double)accesses, (w1 - w0) / (double)accesses,
           bytes >> 10, rw_huge_kb(buf, bytes), (unsigned long long)sum);
    return 0;
}

static void rw_args(int argc, char **argv, size_t *bytes, unsigned long long *accesses)
{
    *bytes = (size_t)(argc > 1 ? strtoull(argv[1], NULL, 10) : 1024) << 20;
    *accesses = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000000ull;
    if (!*bytes || !*accesses) {
        fprintf(stderr, "usage: %s [SIZE_MIB [ACCESSES]]\n", argv[0]);
        exit(2);
    }
}

#endif
