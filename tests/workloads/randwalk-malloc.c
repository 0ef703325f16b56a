/*
 * randwalk-malloc.c — a random walk over a buffer from malloc(), as an
 * ordinary program allocates: it never asks for huge pages. Used by the thp
 * tests and by bench/thp.c to show what `corun run --thp` gives such a program.
 */
#include "randwalk.h"

int main(int argc, char **argv)
{
    unsigned long long accesses;
    size_t bytes;
    uint64_t *buf;

    rw_args(argc, argv, &bytes, &accesses);
    buf = malloc(bytes);
    if (!buf) {
        perror("malloc");
        return 1;
    }
    rw_run("randwalk-malloc", buf, bytes, accesses);
    free(buf);
    return 0;
}
