/*
 * stat-overhead.c — what `corun stat` costs next to `perf stat` on the same
 * command: wall time of each (and of the bare command), median of
 * interleaved runs, the ratio corun/perf (goal: at most 1.05), and how far
 * their task clocks agree. Prints a table, then one JSON line.
 *
 * usage: stat-overhead [-n ROUNDS] [--perf PATH] [-- CMD [ARGS]]
 * The default command burns about 0.1 s of CPU in a shell loop.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 200

enum { BARE, PERF, CORUN, NVARIANTS };
static const char *const variant_name[NVARIANTS] = {"bare", "perf stat", "corun stat"};

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Runs @argv with stdout and stderr to /dev/null; wall ms, or -1. */
static double timed_run(char **argv)
{
    double t0 = now_ms();
    int st;
    pid_t pid = fork();

    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return now_ms() - t0;
}

static double task_clock_from(const char *path, bool json)
{
    char line[1024];
    double v = -1;
    FILE *f = fopen(path, "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        char *p;

        if (json && (p = strstr(line, "\"task_clock_ns\": ")))
            v = atof(p + 17) / 1e6;
        else if (!json && strstr(line, ",task-clock,") && line[0] >= '0' && line[0] <= '9')
            v = atof(line);
    }
    fclose(f);
    return v;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    static char *default_cmd[] = {"/bin/sh", "-c",
                                  "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done", NULL};
    char **cmd = default_cmd, *perf = "/usr/bin/perf";
    char perf_out[] = "/tmp/stat-overhead-perf-XXXXXX", corun_out[] = "/tmp/stat-overhead-XXXXXX";
    char *argvs[NVARIANTS][64];
    double wall[NVARIANTS][MAX_ROUNDS], tc_perf[MAX_ROUNDS], tc_corun[MAX_ROUNDS];
    double med[NVARIANTS], tcp, tcc;
    int rounds = 11, ncmd = 0, fd;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--perf") && i + 1 < argc) {
            perf = argv[++i];
        } else if (!strcmp(argv[i], "--") && i + 1 < argc) {
            cmd = argv + i + 1;
            break;
        } else {
            fprintf(stderr, "usage: stat-overhead [-n ROUNDS] [--perf PATH] [-- CMD [ARGS]]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || access(perf, X_OK) != 0) {
        fprintf(stderr, "stat-overhead: need 1..%d rounds and an executable %s\n", MAX_ROUNDS,
                perf);
        return 2;
    }
    if ((fd = mkstemp(perf_out)) < 0 || close(fd) || (fd = mkstemp(corun_out)) < 0 || close(fd))
        return 1;
    while (cmd[ncmd] && ncmd < 50)
        ncmd++;
    {
        char *pre_perf[] = {perf, "stat", "-x,", "-o", perf_out, "--"};
        char *pre_corun[] = {CORUN_BINARY, "stat", "--json", "-o", corun_out, "--"};
        int n;

        memcpy(argvs[BARE], cmd, (size_t)ncmd * sizeof(char *));
        argvs[BARE][ncmd] = NULL;
        memcpy(argvs[PERF], pre_perf, sizeof(pre_perf));
        memcpy(argvs[PERF] + 6, cmd, (size_t)ncmd * sizeof(char *));
        argvs[PERF][6 + ncmd] = NULL;
        n = (int)(sizeof(pre_corun) / sizeof(pre_corun[0]));
        memcpy(argvs[CORUN], pre_corun, sizeof(pre_corun));
        memcpy(argvs[CORUN] + n, cmd, (size_t)ncmd * sizeof(char *));
        argvs[CORUN][n + ncmd] = NULL;
    }
    /* Warm the page cache and the binaries once. */
    for (int v = 0; v < NVARIANTS; v++)
        if (timed_run(argvs[v]) < 0) {
            fprintf(stderr, "stat-overhead: %s failed\n", variant_name[v]);
            return 1;
        }
    /* Interleaved, with the order rotating each round, so that drifts in the
     * machine's load fall on every variant alike. */
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < NVARIANTS; k++) {
            int v = (r + k) % NVARIANTS;

            wall[v][r] = timed_run(argvs[v]);
            if (wall[v][r] < 0) {
                fprintf(stderr, "stat-overhead: %s failed\n", variant_name[v]);
                return 1;
            }
        }
        tc_perf[r] = task_clock_from(perf_out, false);
        tc_corun[r] = task_clock_from(corun_out, true);
    }
    unlink(perf_out);
    unlink(corun_out);
    for (int v = 0; v < NVARIANTS; v++)
        med[v] = median(wall[v], rounds);
    tcp = median(tc_perf, rounds);
    tcc = median(tc_corun, rounds);

    printf("stat overhead: median of %d interleaved runs of '", rounds);
    for (int i = 0; i < ncmd; i++)
        printf("%s%s", i ? " " : "", cmd[i]);
    printf("'\n\n%-12s %12s %12s %12s\n", "variant", "wall ms", "min ms", "max ms");
    for (int v = 0; v < NVARIANTS; v++)
        printf("%-12s %12.2f %12.2f %12.2f\n", variant_name[v], med[v], wall[v][0],
               wall[v][rounds - 1]);
    printf("\nwall ratio corun/perf: %.3f (goal <= 1.05)\n", med[CORUN] / med[PERF]);
    printf("task clock: perf %.2f ms, corun %.2f ms, ratio %.3f\n", tcp, tcc, tcc / tcp);
    printf("{\"bench\": \"stat-overhead\", \"rounds\": %d, \"wall_ms\": {\"bare\": %.3f, "
           "\"perf\": %.3f, \"corun\": %.3f}, \"ratio_corun_perf\": %.4f, \"goal\": 1.05, "
           "\"task_clock_ms\": {\"perf\": %.3f, \"corun\": %.3f}, \"task_clock_ratio\": %.4f}\n",
           rounds, med[BARE], med[PERF], med[CORUN], med[CORUN] / med[PERF], tcp, tcc, tcc / tcp);
    return 0;
}
