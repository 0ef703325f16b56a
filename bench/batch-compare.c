/*
 * batch-compare.c — how much sooner a batch finishes when corun chooses the
 * co-runners than first-in first-out unpinned (`--policy linux`, what GNU
 * parallel does): runs `corun batch -j N --compare linux` on the bundled
 * demo batch (or -f FILE) R times and prints each makespan, the ratio
 * linux/policy (above 1: corun's choice was faster), and the medians as a
 * final JSON line. Timings on shared machines are noisy: quote medians.
 *
 *   build/bench/batch-compare [-r REPEATS] [-p POLICY] [-j N] [-f JOBFILE]
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The first "makespan_s" after the @nth occurrence of "summary". */
static double makespan(const char *json, int nth)
{
    const char *p = json;

    for (int i = 0; i <= nth && p; i++) {
        p = strstr(p, "\"summary\"");
        if (p && i < nth)
            p++;
    }
    p = p ? strstr(p, "\"makespan_s\": ") : NULL;
    return p ? strtod(p + 14, NULL) : -1;
}

int main(int argc, char **argv)
{
    const char *policy = "spread", *jobfile = NULL;
    char fx[4096], src[4096], bin[4096], kernels[4096], path[8192], cmd[16384], out[64] = "";
    int repeats = 5, jobs = 2, c, n = 0;
    double mine[64], lin[64], ratio[64];

    while ((c = getopt(argc, argv, "r:p:j:f:")) != -1) {
        switch (c) {
        case 'r':
            repeats = atoi(optarg);
            break;
        case 'p':
            policy = optarg;
            break;
        case 'j':
            jobs = atoi(optarg);
            break;
        case 'f':
            jobfile = optarg;
            break;
        default:
            fprintf(stderr, "usage: %s [-r REPEATS] [-p POLICY] [-j N] [-f JOBFILE]\n", argv[0]);
            return 2;
        }
    }
    if (repeats < 1 || repeats > 64 || jobs < 1)
        return 2;
    /* The source tree is above tests/fixtures; the kernels beside corun. */
    snprintf(fx, sizeof(fx), "%s", CORUN_FIXTURES);
    snprintf(src, sizeof(src), "%s", dirname(dirname(fx)));
    snprintf(bin, sizeof(bin), "%s", CORUN_BINARY);
    snprintf(kernels, sizeof(kernels), "%s/kernels", dirname(bin));
    snprintf(path, sizeof(path), "%s:%s", kernels,
             getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    snprintf(out, sizeof(out), "/tmp/corun-bench-XXXXXX");
    if (mkstemp(out) < 0)
        return 1;
    printf("batch: %s, -j %d, policy %s against linux, %d runs\n\n",
           jobfile ? jobfile : "bench/kernels/demo.jobs", jobs, policy, repeats);
    printf("%4s %12s %12s %8s\n", "run", policy, "linux", "ratio");
    for (int r = 0; r < repeats; r++) {
        char *text = NULL;
        size_t cap = 0;
        FILE *f;
        int rc;

        snprintf(cmd, sizeof(cmd),
                 "'%s' batch -j %d --policy '%s' --compare linux --json '%s' '%s%s' >/dev/null",
                 CORUN_BINARY, jobs, policy, out, jobfile ? "" : src,
                 jobfile ? jobfile : "/bench/kernels/demo.jobs");
        rc = system(cmd);
        if (rc != 0) {
            fprintf(stderr, "run %d: corun batch failed (%d)\n", r + 1, rc);
            continue;
        }
        f = fopen(out, "r");
        if (!f || getdelim(&text, &cap, '\0', f) < 0) {
            if (f)
                fclose(f);
            free(text);
            continue;
        }
        fclose(f);
        mine[n] = makespan(text, 0);
        lin[n] = makespan(text, 1);
        free(text);
        if (mine[n] <= 0 || lin[n] <= 0)
            continue;
        ratio[n] = lin[n] / mine[n];
        printf("%4d %11.3fs %11.3fs %8.3f\n", r + 1, mine[n], lin[n], ratio[n]);
        n++;
    }
    unlink(out);
    if (n == 0)
        return 1;
    {
        double mr = median(ratio, n), mm = median(mine, n), ml = median(lin, n);

        printf("\nmedian %10.3fs %11.3fs %8.3f\n", mm, ml, mr);
        printf("{\"bench\": \"batch-compare\", \"policy\": \"%s\", \"jobs\": %d, \"runs\": %d, "
               "\"median_makespan_s\": %.4f, \"median_linux_makespan_s\": %.4f, "
               "\"median_ratio_linux_over_policy\": %.4f}\n",
               policy, jobs, n, mm, ml, mr);
    }
    return 0;
}
