/*
 * stream.c — the streaming kernel (a bandwidth-bound devil): STREAM-style
 * triads over three arrays far larger than any cache.
 * -m: KiB per array (default 65536, 64 MiB); -n: passes (default 30).
 */
#include "kernel.h"

static uint64_t work(const struct kernel_args *a, unsigned thread)
{
    size_t n = a->kib * 1024 / sizeof(double);
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    double *z = malloc(n * sizeof(double)), sum = 0;

    if (!x || !y || !z)
        exit(1);
    for (size_t i = 0; i < n; i++) {
        x[i] = 1.0;
        y[i] = 2.0 + (double)thread;
        z[i] = 0;
    }
    for (unsigned long p = 0; p < a->n; p++) {
        for (size_t i = 0; i < n; i++)
            z[i] = x[i] + 1.5 * y[i];
        for (size_t i = 0; i < n; i++)
            x[i] = z[i] * 0.5;
    }
    for (size_t i = 0; i < n; i += 4096)
        sum += x[i];
    free(x);
    free(y);
    free(z);
    return (uint64_t)sum;
}

int main(int argc, char **argv)
{
    return kernel_main(argc, argv, work, 30, 65536);
}
