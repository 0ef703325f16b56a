/*
 * randwalk-mmap.c — a random walk over an anonymous mapping the program makes
 * itself with mmap(), as allocators and runtimes do: it never asks for huge
 * pages. Used by the thp tests and by bench/thp.c.
 */
#include <sys/mman.h>

#include "randwalk.h"

int main(int argc, char **argv)
{
    unsigned long long accesses;
    size_t bytes;
    uint64_t *buf;

    rw_args(argc, argv, &bytes, &accesses);
    buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    rw_run("randwalk-mmap", buf, bytes, accesses);
    munmap(buf, bytes);
    return 0;
}
