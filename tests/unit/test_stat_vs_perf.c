/*
 * test_stat_vs_perf.c — `corun stat` against `perf stat` on the same
 * CPU-bound command: the task clocks agree within 10% (medians of three
 * interleaved runs each). The command is this program with --spin, which
 * burns a fixed amount of CPU time whatever the machine's load. Skipped when
 * /usr/bin/perf is absent or cannot count task-clock.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 3

static char self_exe[4096];
static char tmpdir[] = "/tmp/corun-stat-XXXXXX";

static int run(char *const argv[])
{
    int st;
    pid_t pid = fork();

    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
    static char buf[16384];
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* perf stat -x, writes "1001.72,msec,task-clock,...". Returns ns or -1. */
static double perf_task_clock(void)
{
    char out[256];
    char *argv[] = {"/usr/bin/perf", "stat",   "-x,", "-e", "task-clock", "-o", out, "--",
                    self_exe,        "--spin", "0.2", NULL};
    char *text, *line;

    snprintf(out, sizeof(out), "%s/perf.txt", tmpdir);
    if (run(argv) != 0 || !(text = slurp(out)))
        return -1;
    for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, ",task-clock,") && line[0] >= '0' && line[0] <= '9')
            return atof(line) * 1e6;
    return -1;
}

static double corun_task_clock(void)
{
    char out[256];
    char *argv[] = {CORUN_BINARY,    "stat", "--json", "-o",     out,   "-e",
                    "task_clock_ns", "--",   self_exe, "--spin", "0.2", NULL};
    char *text, *p;

    snprintf(out, sizeof(out), "%s/corun.json", tmpdir);
    if (run(argv) != 0 || !(text = slurp(out)))
        return -1;
    p = strstr(text, "\"task_clock_ns\": ");
    return p ? atof(p + 17) : -1;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void test_task_clock_agrees(void **state)
{
    double p[RUNS], c[RUNS], pm, cm;

    if (access("/usr/bin/perf", X_OK) != 0)
        skip();
    for (int i = 0; i < RUNS; i++) {
        p[i] = perf_task_clock();
        c[i] = corun_task_clock();
        if (p[i] < 0) {
            print_message("perf stat cannot count task-clock here: skipped\n");
            skip();
        }
        assert_true(c[i] > 0);
    }
    qsort(p, RUNS, sizeof(double), cmp);
    qsort(c, RUNS, sizeof(double), cmp);
    pm = p[RUNS / 2];
    cm = c[RUNS / 2];
    print_message("task clock: perf stat %.1f ms, corun stat %.1f ms\n", pm / 1e6, cm / 1e6);
    if (cm < 0.9 * pm || cm > 1.1 * pm)
        fail_msg("corun %.0f ns vs perf %.0f ns: more than 10%% apart", cm, pm);
}

static void spin(double seconds)
{
    struct timespec t0, t;
    volatile unsigned long x = 0;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    (void)x; /* clang: -Wunused-but-set-variable even for a volatile */
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_clock_agrees),
    };
    ssize_t n;
    int rc;

    if (argc == 3 && !strcmp(argv[1], "--spin")) {
        spin(atof(argv[2]));
        return 0;
    }
    n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
    if (n <= 0 || !mkdtemp(tmpdir))
        return 1;
    self_exe[n] = '\0';
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    {
        char path[300];

        snprintf(path, sizeof(path), "%s/perf.txt", tmpdir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/corun.json", tmpdir);
        unlink(path);
        rmdir(tmpdir);
    }
    return rc;
}
