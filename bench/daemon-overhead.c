/*
 * daemon-overhead.c — what `corun daemon` costs the machine it looks after.
 *
 * For each population (100, 1000, 5000 sleeping processes by default, plus a
 * few busy ones), the benchmark starts that many children named
 * "cobench-slp"/"cobench-busy", starts the daemon selecting them by name at a
 * 1 s interval, waits until the daemon manages them all, then measures the
 * daemon's own CPU time (utime + stime from /proc/PID/stat) over the
 * measurement window. Goal: under 1% of one CPU at 1000 processes.
 *
 * Populations that do not fit under RLIMIT_NPROC or pid_max are skipped with
 * the reason. Prints a table, then one JSON line.
 *
 * usage: daemon-overhead [--counts 100,1000,5000] [--busy N] [--seconds S]
 *                        [--interval S] [--corun PATH]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corun/ctl.h"

#define MAX_COUNTS 8

struct result {
    unsigned n;
    unsigned managed;
    double seconds;
    double cpu_s;
    double percent;
    const char *skipped;
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The CPU time (user + system) of @pid in seconds, or -1. */
static double cpu_seconds(pid_t pid)
{
    char path[64], buf[2048], *p;
    unsigned long long ut = 0, st = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, sizeof(buf), f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* A child that sleeps (or spins) under a recognisable name until killed. */
static pid_t spawn_child(bool busy)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    prctl(PR_SET_NAME, busy ? "cobench-busy" : "cobench-slp");
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (busy)
        for (volatile unsigned long i = 0;; i++)
            ;
    for (;;)
        pause();
}

/* The daemon's "managed" count from its status, or -1. */
static long managed(const char *sock)
{
    char *resp = NULL, *p;
    long n = -1;

    if (corun_ctl_call(sock, "{\"cmd\": \"status\"}", 2000, &resp) == 0) {
        p = strstr(resp, "\"managed\": ");
        if (p)
            n = strtol(p + 11, NULL, 10);
    }
    free(resp);
    return n;
}

static void run_one(const char *corun, unsigned n, unsigned busy, double seconds,
                    const char *interval, struct result *r)
{
    char dir[] = "/tmp/corun-bench-XXXXXX", sock[128], journal[128];
    pid_t *kids = calloc(n + busy, sizeof(pid_t)), daemon;
    double t0, c0, t1, c1, deadline;
    long m = -1;
    int status;

    r->n = n;
    if (!kids || !mkdtemp(dir)) {
        r->skipped = "out of memory or /tmp";
        free(kids);
        return;
    }
    snprintf(sock, sizeof(sock), "%s/sock", dir);
    snprintf(journal, sizeof(journal), "%s/journal", dir);
    for (unsigned i = 0; i < n + busy; i++) {
        kids[i] = spawn_child(i >= n);
        if (kids[i] < 0) {
            r->skipped = "fork failed";
            n = i;
            goto out_kill;
        }
    }
    daemon = fork();
    if (daemon == 0) {
        int devnull = open("/dev/null", 0);

        dup2(devnull, 2);
        execl(corun, "corun", "daemon", "--foreground", "--comm", "cobench-*", "--interval",
              interval, "--socket", sock, "--journal-dir", journal, (char *)NULL);
        _exit(127);
    }
    /* Wait (up to a minute) until the daemon manages every child: the
     * measurement is of the steady state, not of start-up. */
    deadline = now_s() + 60;
    while (now_s() < deadline) {
        struct timespec ts = {0, 50000000};

        m = managed(sock);
        if (m >= (long)(n + busy))
            break;
        nanosleep(&ts, NULL);
    }
    r->managed = m > 0 ? (unsigned)m : 0;
    if (m < (long)(n + busy)) {
        r->skipped = "the daemon did not take every process within 60 s";
        goto out_daemon;
    }
    t0 = now_s();
    c0 = cpu_seconds(daemon);
    {
        struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};

        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
    }
    t1 = now_s();
    c1 = cpu_seconds(daemon);
    r->seconds = t1 - t0;
    r->cpu_s = c1 - c0;
    r->percent = 100 * r->cpu_s / r->seconds;
out_daemon:
    kill(daemon, SIGTERM);
    waitpid(daemon, &status, 0);
out_kill:
    for (unsigned i = 0; i < n + busy; i++) {
        if (kids[i] > 0) {
            kill(kids[i], SIGKILL);
            waitpid(kids[i], &status, 0);
        }
    }
    rmdir(journal);
    rmdir(dir);
    free(kids);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"counts", required_argument, NULL, 'c'},  {"busy", required_argument, NULL, 'b'},
        {"seconds", required_argument, NULL, 's'}, {"interval", required_argument, NULL, 'i'},
        {"corun", required_argument, NULL, 'p'},   {0},
    };
    unsigned counts[MAX_COUNTS] = {100, 1000, 5000}, ncounts = 3, busy = 3;
    const char *corun = CORUN_BINARY, *interval = "1";
    struct result res[MAX_COUNTS] = {{0}};
    double seconds = 15;
    unsigned long pid_max = 32768;
    struct rlimit rl;
    FILE *f;
    int c;

    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'c': {
            char *s = optarg, *tok;

            ncounts = 0;
            while ((tok = strsep(&s, ",")) && ncounts < MAX_COUNTS)
                counts[ncounts++] = (unsigned)strtoul(tok, NULL, 10);
            break;
        }
        case 'b':
            busy = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 's':
            seconds = strtod(optarg, NULL);
            break;
        case 'i':
            interval = optarg;
            break;
        case 'p':
            corun = optarg;
            break;
        default:
            fprintf(stderr, "usage: daemon-overhead [--counts 100,1000,5000] [--busy N] "
                            "[--seconds S] [--interval S] [--corun PATH]\n");
            return 2;
        }
    }
    f = fopen("/proc/sys/kernel/pid_max", "r");
    if (f) {
        if (fscanf(f, "%lu", &pid_max) != 1)
            pid_max = 32768;
        fclose(f);
    }
    getrlimit(RLIMIT_NPROC, &rl);
    printf("daemon-overhead: the daemon's own CPU use, %s s interval, %.0f s windows, %u busy\n"
           "processes besides the sleepers; RLIMIT_NPROC %s, pid_max %lu\n\n",
           interval, seconds, busy, rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "limited",
           pid_max);
    for (unsigned i = 0; i < ncounts; i++) {
        /* Leave room for everything else the machine runs. */
        unsigned long need = counts[i] + busy + 200;

        res[i].n = counts[i];
        if ((rl.rlim_cur != RLIM_INFINITY && geteuid() != 0 && need > rl.rlim_cur) ||
            need > pid_max / 2) {
            res[i].skipped = "does not fit under RLIMIT_NPROC or half of pid_max";
            continue;
        }
        run_one(corun, counts[i], busy, seconds, interval, &res[i]);
    }
    printf("%10s %8s %9s %10s %12s %14s  %s\n", "processes", "managed", "window_s", "cpu_s",
           "cpu_percent", "us_per_proc", "note");
    for (unsigned i = 0; i < ncounts; i++) {
        struct result *r = &res[i];
        double ticks = r->seconds / strtod(interval, NULL);

        if (r->skipped) {
            printf("%10u %8s %9s %10s %12s %14s  skipped: %s\n", r->n, "-", "-", "-", "-", "-",
                   r->skipped);
            continue;
        }
        printf("%10u %8u %9.1f %10.3f %12.3f %14.1f  %s\n", r->n, r->managed, r->seconds, r->cpu_s,
               r->percent, ticks > 0 ? r->cpu_s / ticks / r->managed * 1e6 : 0,
               r->n == 1000 ? (r->percent < 1 ? "goal < 1% met" : "goal < 1% MISSED") : "");
    }
    printf("{\"bench\": \"daemon-overhead\", \"interval_s\": %s, \"window_s\": %.1f, \"busy\": %u, "
           "\"results\": [",
           interval, seconds, busy);
    for (unsigned i = 0; i < ncounts; i++) {
        struct result *r = &res[i];

        printf("%s{\"processes\": %u, ", i ? ", " : "", r->n);
        if (r->skipped)
            printf("\"cpu_percent\": null, \"skipped\": \"%s\"}", r->skipped);
        else
            printf("\"managed\": %u, \"cpu_seconds\": %.3f, \"cpu_percent\": %.3f}", r->managed,
                   r->cpu_s, r->percent);
    }
    printf("], \"goal_percent_at_1000\": 1}\n");
    return 0;
}
