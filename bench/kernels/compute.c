/*
 * compute.c — the compute-bound kernel ("compute", a turtle): dependent
 * floating-point and integer arithmetic in registers, no memory traffic.
 * -n: millions of iterations (default 300).
 */
#include "kernel.h"

static uint64_t work(const struct kernel_args *a, unsigned thread)
{
    double x = 1.0 + thread, y = 0.5;
    uint64_t h = 0x9e3779b97f4a7c15ull + thread;

    for (unsigned long i = 0; i < a->n * 1000000ul; i++) {
        x = x * 1.0000001 + y;
        y = y * 0.9999999 - 1e-9 * x;
        h = h * 6364136223846793005ull + 1442695040888963407ull;
    }
    return h ^ (uint64_t)(x * 1e6) ^ (uint64_t)(y * 1e6);
}

int main(int argc, char **argv)
{
    return kernel_main(argc, argv, work, 300, 1);
}
