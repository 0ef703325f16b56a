/*
 * bench-util.h — what several benchmarks under bench/ time and sort with:
 * the monotonic clock in milliseconds, and an ascending order of doubles
 * for qsort() (medians, percentiles).
 */
#ifndef CORUN_BENCH_UTIL_H
#define CORUN_BENCH_UTIL_H

#include <time.h>

static inline double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

#endif /* CORUN_BENCH_UTIL_H */
