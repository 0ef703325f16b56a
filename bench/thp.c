/*
 * thp.c — benchmark of `corun run --thp`: two unmodified random-walk programs over
 * a buffer (1 GiB by default), one allocating with malloc and one with its
 * own mmap, each run plain and under --thp, interleaved round by round so
 * that the machine's noise falls on both alike. Prints per program the median
 * nanoseconds per access of each (the walk's CPU time, which a loaded machine
 * disturbs less than the wall clock), their ratio (and the median of each round's
 * paired ratio), and how much of the buffer sat
 * in huge pages; then one JSON line. The goal on the development machine
 * (THP "madvise"): a ratio of at least 1.5 for both.
 *
 * usage: thp [--size-mib N] [--accesses N] [--rounds N]
 */
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corun/thp.h"

#define MAX_ROUNDS 64
#define GOAL       1.5

static const char *const programs[] = {"randwalk-malloc", "randwalk-mmap"};

struct run {
    double ns;
    double huge_pct;
};

/* Runs @cmd and parses its line; false when it failed or printed no figure. */
static bool run_one(const char *cmd, struct run *out)
{
    char line[512];
    unsigned long long buf = 0, huge = 0;
    const char *p;
    bool got = false;
    FILE *f = popen(cmd, "r");

    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        if (!(p = strstr(line, " ns_per_access=")))
            continue;
        out->ns = strtod(p + 15, NULL);
        if ((p = strstr(line, "buffer_kb=")))
            buf = strtoull(p + 10, NULL, 10);
        if ((p = strstr(line, "huge_kb=")))
            huge = strtoull(p + 8, NULL, 10);
        out->huge_pct = buf ? 100.0 * (double)huge / (double)buf : 0;
        got = true;
    }
    return pclose(f) == 0 && got;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"size-mib", required_argument, NULL, 's'},
        {"accesses", required_argument, NULL, 'a'},
        {"rounds", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    unsigned long size_mib = 1024, accesses = 10000000, rounds = 7;
    double ns[2][2][MAX_ROUNDS], huge[2][2] = {{100, 100}, {100, 100}};
    char bin[2048], tmp[2048], dir[2100], cmd[8192];
    struct corun_thp_system sys;
    int c;

    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        unsigned long *v = c == 's' ? &size_mib : c == 'a' ? &accesses : &rounds;

        if (c == '?' || !optarg || !(*v = strtoul(optarg, NULL, 10))) {
            fprintf(stderr, "usage: %s [--size-mib N] [--accesses N] [--rounds N]\n", argv[0]);
            return 2;
        }
    }
    if (rounds > MAX_ROUNDS)
        rounds = MAX_ROUNDS;
    snprintf(bin, sizeof(bin), "%s", CORUN_BINARY);
    snprintf(tmp, sizeof(tmp), "%s", bin);
    snprintf(dir, sizeof(dir), "%s/workloads", dirname(tmp));
    corun_thp_system_read(NULL, &sys);
    printf("thp: %lu MiB buffer, %lu accesses, %lu interleaved rounds; THP mode %s\n", size_mib,
           accesses, rounds, corun_thp_mode_name(sys.mode));

    for (unsigned long r = 0; r < rounds; r++) {
        for (int p = 0; p < 2; p++) {
            for (int k = 0; k < 2; k++) {
                /* Alternate which mode goes first, round by round. */
                int thp = (int)((k + r) % 2);
                struct run one = {0};

                /* corun run's own report goes to stderr, away from the
                 * program's line that run_one() reads. */
                snprintf(cmd, sizeof(cmd), "%s%s '%s/%s' %lu %lu%s", thp ? bin : "",
                         thp ? " run --thp --" : "", dir, programs[p], size_mib, accesses,
                         thp ? " 2>/dev/null" : "");
                if (!run_one(cmd, &one)) {
                    fprintf(stderr, "thp: '%s' failed\n", cmd);
                    return 1;
                }
                ns[p][thp][r] = one.ns;
                /* The worst coverage seen with --thp, the best without. */
                if (!r || (thp ? one.huge_pct < huge[p][1] : one.huge_pct > huge[p][0]))
                    huge[p][thp] = one.huge_pct;
            }
        }
    }

    printf("%-16s %10s %10s %8s %8s %10s %10s\n", "program", "plain ns", "--thp ns", "speedup",
           "paired", "huge plain", "huge --thp");
    double med[2][2], paired[2], ratio[MAX_ROUNDS];

    for (int p = 0; p < 2; p++) {
        /* The ratio of each round's neighbouring runs is less exposed to the
         * load drifting over the whole benchmark than the medians are. */
        for (unsigned long r = 0; r < rounds; r++)
            ratio[r] = ns[p][0][r] / ns[p][1][r];
        paired[p] = median(ratio, (int)rounds);
        med[p][0] = median(ns[p][0], (int)rounds);
        med[p][1] = median(ns[p][1], (int)rounds);
        printf("%-16s %10.1f %10.1f %7.2fx %7.2fx %9.1f%% %9.1f%%\n", programs[p], med[p][0],
               med[p][1], med[p][0] / med[p][1], paired[p], huge[p][0], huge[p][1]);
    }
    printf("{\"bench\": \"thp\", \"size_mib\": %lu, \"accesses\": %lu, \"rounds\": %lu, "
           "\"thp_mode\": \"%s\", \"goal_speedup\": %.2f, \"results\": [",
           size_mib, accesses, rounds, corun_thp_mode_name(sys.mode), GOAL);
    for (int p = 0; p < 2; p++)
        printf("%s{\"program\": \"%s\", \"plain_ns\": %.2f, \"thp_ns\": %.2f, \"speedup\": %.3f, "
               "\"paired_speedup\": %.3f, \"plain_huge_pct\": %.1f, \"thp_huge_pct\": %.1f}",
               p ? ", " : "", programs[p], med[p][0], med[p][1], med[p][0] / med[p][1], paired[p],
               huge[p][0], huge[p][1]);
    printf("]}\n");
    return 0;
}
