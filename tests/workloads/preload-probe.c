/*
 * preload-probe.c — checks what libcorun-thp.so promises, from inside a
 * program that asks for nothing: it makes mappings of each kind and prints,
 * per case, whether the mapping starts on a huge page boundary, whether the
 * kernel marks it advised (VmFlags "hg" in /proc/self/smaps), how much of it
 * is in huge pages, and whether data and errno survived. The integration
 * test runs it with and without the preload (tests/integration/thp_cli.sh).
 *
 * "preload-probe --thp-disabled CMD [ARGS]" instead disables THP for itself
 * with prctl(PR_SET_THP_DISABLE), which exec keeps, and runs CMD: how the
 * tests give a program the inherited setting --thp must clear.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MIB  (1ul << 20)
#define HUGE (2 * MIB)

/* The VmFlags "hg" and AnonHugePages of the mapping that contains @p. */
static void inspect(const void *p, int *advised, long *huge_kb)
{
    unsigned long long s, e;
    int inside = 0;
    char line[512];
    FILE *f = fopen("/proc/self/smaps", "r");

    *advised = 0;
    *huge_kb = 0;
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%llx-%llx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = s <= (uintptr_t)p && (uintptr_t)p < e;
        else if (inside && !strncmp(line, "VmFlags:", 8))
            *advised = strstr(line, " hg") != NULL;
        else if (inside)
            sscanf(line, "AnonHugePages: %ld kB", huge_kb);
    }
    fclose(f);
}

static void report(const char *name, const void *p, size_t len, const char *extra)
{
    int advised;
    long huge_kb;

    inspect(p, &advised, &huge_kb);
    printf("case=%s aligned=%d advised=%d huge_pct=%ld%s\n", name, ((uintptr_t)p % HUGE) == 0,
           advised, huge_kb * 100 / (long)(len >> 10), extra);
}

int main(int argc, char **argv)
{
    int anon = MAP_PRIVATE | MAP_ANONYMOUS, rw = PROT_READ | PROT_WRITE;
    char *a, *b, *c, *d, *m, *moved;
    char extra[64];

    if (argc > 2 && !strcmp(argv[1], "--thp-disabled")) {
        if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)) {
            perror("prctl");
            return 1;
        }
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        return 127;
    }
    errno = 1234;
    a = mmap(NULL, 8 * MIB + 4096, rw, anon, -1, 0);
    snprintf(extra, sizeof(extra), " errno_kept=%d", errno == 1234);
    report("large", a, 8 * MIB, extra);

    b = mmap(NULL, 8 * MIB, rw, anon | MAP_POPULATE, -1, 0);
    report("populate", b, 8 * MIB, "");

    c = mmap(NULL, 1 * MIB, rw, anon, -1, 0);
    memset(c, 1, 1 * MIB);
    report("small", c, 1 * MIB, "");

    d = mmap(NULL, 8 * MIB, rw, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    report("shared", d, 8 * MIB, "");

    /* A mapping that must move to grow: something sits right after it. */
    m = mmap(NULL, 4 * MIB, rw, anon, -1, 0);
    memset(m, 7, 4 * MIB);
    mmap(m + 4 * MIB, 4096, PROT_NONE, anon | MAP_FIXED_NOREPLACE, -1, 0);
    moved = mremap(m, 4 * MIB, 64 * MIB, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED) {
        perror("mremap");
        return 1;
    }
    memset(moved + 4 * MIB, 7, 60 * MIB);
    snprintf(extra, sizeof(extra), " moved=%d data_kept=%d", moved != m,
             moved[0] == 7 && moved[4 * MIB - 1] == 7);
    report("mremap", moved, 64 * MIB, extra);

    /* A length that cannot be mapped fails as it would without the preload. */
    errno = 0;
    a = mmap(NULL, SIZE_MAX - 4096, rw, anon, -1, 0);
    printf("case=toolarge failed=%d enomem=%d\n", a == MAP_FAILED, errno == ENOMEM);
    return 0;
}
