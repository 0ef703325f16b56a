/*
 * cachewalk.c — cache-sized random access (a rabbit, cache-sensitive):
 * random read-modify-writes within a working set that fits the last-level
 * cache alone and stops fitting when a neighbour shares it.
 * -m: KiB (default 16384, 16 MiB); -n: millions of accesses (default 100).
 */
#include "kernel.h"

static uint64_t work(const struct kernel_args *a, unsigned thread)
{
    size_t n = a->kib * 1024 / sizeof(uint64_t);
    uint64_t *buf = malloc(n * sizeof(uint64_t)), seed = 0x9e3779b97f4a7c15ull + thread, h = 0;

    if (!buf || n == 0)
        exit(1);
    for (size_t i = 0; i < n; i++)
        buf[i] = i;
    for (unsigned long s = 0; s < a->n * 1000000ul; s++) {
        size_t i = kernel_rand(&seed) % n;

        buf[i] += h;
        h ^= buf[i];
    }
    free(buf);
    return h;
}

int main(int argc, char **argv)
{
    return kernel_main(argc, argv, work, 100, 16384);
}
