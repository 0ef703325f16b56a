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
 * The daemon places (it says "placing" in its status; the table shows the
 * mode it ran in), moving at most --max-migrations processes per tick (the
 * daemon's default, 2, unless given): with the default the window falls in
 * the phase where it is still spreading the population, a few moves (each a
 * journal write with fsync) per tick. --settle first waits until every
 * process is placed, to measure the steady state instead (use it with a
 * large --max-migrations). The table gives the processes placed at the end
 * of the window and the migrations made during it.
 *
 * Populations that do not fit under RLIMIT_NPROC or pid_max are skipped with
 * the reason. Prints a table, then one JSON line.
 *
 * usage: daemon-overhead [--counts 100,1000,5000] [--busy N] [--seconds S]
 *                        [--interval S] [--max-migrations N] [--settle] [--corun PATH]
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
    char mode[24];   /* the daemon's mode: "placing", "observe-only" */
    long placed;     /* processes on a CPU of the daemon's choice, at the end */
    long migrations; /* moves during the window */
    const char *skipped;
};

/* What the benchmark reads from the daemon's status. */
struct dstatus {
    long managed, placed, migrations;
    char mode[24];
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

/* The number after "@key": in @text, or -1. */
static long field(const char *text, const char *key)
{
    const char *p = strstr(text, key);

    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* The daemon's counts from its status; managed -1 when it did not answer. */
static struct dstatus query(const char *sock)
{
    struct dstatus st = {.managed = -1, .placed = 0, .migrations = -1, .mode = "?"};
    char *resp = NULL, *p;

    if (corun_ctl_call(sock, "{\"cmd\": \"status\"}", 5000, &resp) == 0) {
        st.managed = field(resp, "\"managed\": ");
        st.migrations = field(resp, "\"migrations_total\": ");
        p = strstr(resp, "\"mode\": \"");
        if (p)
            sscanf(p + 9, "%23[^\"]", st.mode);
        /* "placed_cpu": null for the kernel's choice, a number when placed. */
        for (p = resp; (p = strstr(p, "\"placed_cpu\": ")); p += 14)
            st.placed += p[14] >= '0' && p[14] <= '9';
    }
    free(resp);
    return st;
}

static long managed(const char *sock)
{
    return query(sock).managed;
}

static void run_one(const char *corun, unsigned n, unsigned busy, double seconds,
                    const char *interval, const char *max_mig, bool settle, struct result *r)
{
    struct dstatus st;
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
        if (max_mig)
            execl(corun, "corun", "daemon", "--foreground", "--comm", "cobench-*", "--interval",
                  interval, "--socket", sock, "--journal-dir", journal, "--max-migrations", max_mig,
                  (char *)NULL);
        else
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
    while (settle && now_s() < deadline + 240) {
        struct timespec ts = {0, 200000000};

        if (query(sock).placed >= (long)(n + busy))
            break;
        nanosleep(&ts, NULL);
    }
    st = query(sock);
    if (settle && st.placed < (long)(n + busy)) {
        r->skipped = "--settle: not every process placed within 5 minutes";
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
    {
        struct dstatus end = query(sock);

        snprintf(r->mode, sizeof(r->mode), "%s", end.mode);
        r->placed = end.placed;
        r->migrations =
            end.migrations >= 0 && st.migrations >= 0 ? end.migrations - st.migrations : -1;
    }
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
        {"corun", required_argument, NULL, 'p'},   {"max-migrations", required_argument, NULL, 'm'},
        {"settle", no_argument, NULL, 'S'},        {0},
    };
    const char *max_mig = NULL;
    bool settle = false;
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
        case 'm':
            max_mig = optarg;
            break;
        case 'S':
            settle = true;
            break;
        default:
            fprintf(stderr, "usage: daemon-overhead [--counts 100,1000,5000] [--busy N] "
                            "[--seconds S] [--interval S] [--max-migrations N] [--settle] "
                            "[--corun PATH]\n");
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
           "processes besides the sleepers; max_migrations %s%s; RLIMIT_NPROC %s, pid_max %lu\n\n",
           interval, seconds, busy, max_mig ? max_mig : "default",
           settle ? ", measured once all are placed" : "",
           rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "limited", pid_max);
    for (unsigned i = 0; i < ncounts; i++) {
        /* Leave room for everything else the machine runs. */
        unsigned long need = counts[i] + busy + 200;

        res[i].n = counts[i];
        if ((rl.rlim_cur != RLIM_INFINITY && geteuid() != 0 && need > rl.rlim_cur) ||
            need > pid_max / 2) {
            res[i].skipped = "does not fit under RLIMIT_NPROC or half of pid_max";
            continue;
        }
        run_one(corun, counts[i], busy, seconds, interval, max_mig, settle, &res[i]);
    }
    printf("%10s %8s %-12s %7s %6s %9s %10s %12s %14s  %s\n", "processes", "managed", "mode",
           "placed", "moves", "window_s", "cpu_s", "cpu_percent", "us_per_proc", "note");
    for (unsigned i = 0; i < ncounts; i++) {
        struct result *r = &res[i];
        double ticks = r->seconds / strtod(interval, NULL);

        if (r->skipped) {
            printf("%10u %8s %-12s %7s %6s %9s %10s %12s %14s  skipped: %s\n", r->n, "-", "-", "-",
                   "-", "-", "-", "-", "-", r->skipped);
            continue;
        }
        printf("%10u %8u %-12s %7ld %6ld %9.1f %10.3f %12.3f %14.1f  %s\n", r->n, r->managed,
               r->mode, r->placed, r->migrations, r->seconds, r->cpu_s, r->percent,
               ticks > 0 ? r->cpu_s / ticks / r->managed * 1e6 : 0,
               r->n == 1000 ? (r->percent < 1 ? "goal < 1% met" : "goal < 1% MISSED") : "");
    }
    printf("{\"bench\": \"daemon-overhead\", \"interval_s\": %s, \"window_s\": %.1f, \"busy\": %u, "
           "\"max_migrations\": %s, \"settle\": %s, \"results\": [",
           interval, seconds, busy, max_mig ? max_mig : "null", settle ? "true" : "false");
    for (unsigned i = 0; i < ncounts; i++) {
        struct result *r = &res[i];

        printf("%s{\"processes\": %u, ", i ? ", " : "", r->n);
        if (r->skipped)
            printf("\"cpu_percent\": null, \"skipped\": \"%s\"}", r->skipped);
        else
            printf("\"managed\": %u, \"mode\": \"%s\", \"placed\": %ld, \"migrations\": %ld, "
                   "\"cpu_seconds\": %.3f, \"cpu_percent\": %.3f}",
                   r->managed, r->mode, r->placed, r->migrations, r->cpu_s, r->percent);
    }
    printf("], \"goal_percent_at_1000\": 1}\n");
    return 0;
}
