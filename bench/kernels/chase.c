/*
 * chase.c — the pointer-chasing kernel (a latency-bound devil): one long
 * random cycle through a working set far larger than the LLC, each load
 * depending on the one before.
 * -m: KiB (default 65536, 64 MiB); -n: millions of steps (default 4).
 */
#include "kernel.h"

static uint64_t work(const struct kernel_args *a, unsigned thread)
{
    size_t n = a->kib * 1024 / sizeof(size_t);
    size_t *next = malloc(n * sizeof(size_t)), p = 0;
    uint64_t seed = 0x2545f4914f6cdd1dull + thread;

    if (!next || n < 2)
        exit(1);
    for (size_t i = 0; i < n; i++)
        next[i] = i;
    /* Sattolo's shuffle: a single cycle through every slot. */
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = kernel_rand(&seed) % i, t = next[i];

        next[i] = next[j];
        next[j] = t;
    }
    for (unsigned long s = 0; s < a->n * 1000000ul; s++)
        p = next[p];
    free(next);
    return p;
}

int main(int argc, char **argv)
{
    return kernel_main(argc, argv, work, 4, 65536);
}
