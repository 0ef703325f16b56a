/*
 * run-measure.c — measuring launched commands (see run-measure.h): rusage,
 * and counters through the sense box, one backend instance for every
 * command of the process (chosen once: perf, else proc).
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/run-measure.h"
#include "corun/model.h"

static struct corun_sense_choice sense;
static bool sense_tried;
static int sense_err;

/* Opens the sense box once, for launched commands. */
static bool sense_ready(void)
{
    struct corun_sense_opts opts = {.events = 0, .inherit = true, .on_exec = true};

    if (!sense_tried) {
        sense_tried = true;
        sense_err = corun_sense_select(&opts, NULL, 0, &sense);
    }
    return sense_err == 0 && sense.ops;
}

const char *run_measure_backend(char *why, size_t len)
{
    size_t used = 0;

    if (len)
        why[0] = '\0';
    sense_ready();
    for (unsigned i = 0; i < sense.ntried && used < len; i++)
        used += (size_t)snprintf(why + used, len - used, "%s%s: %s", i ? "; " : "",
                                 sense.tried[i].backend, sense.tried[i].why);
    return sense.ops ? sense.ops->name : NULL;
}

bool run_measure_sense(const struct corun_sense_ops **ops, void **state)
{
    if (!sense_ready())
        return false;
    *ops = sense.ops;
    *state = sense.state;
    return true;
}

void run_measure_shutdown(void)
{
    if (sense.ops)
        sense.ops->close(sense.state);
    memset(&sense, 0, sizeof(sense));
    sense_tried = false;
}

double run_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t now_ns(void)
{
    return (uint64_t)(run_now_s() * 1e9);
}

void run_measure_start(struct run_measure *m, pid_t pid)
{
    int err;

    memset(m, 0, sizeof(*m));
    m->pid = pid;
    m->handle = -1;
    m->t0_ns = now_ns();
    if (!sense_ready()) {
        m->no_sense = "no sensor backend works here";
        return;
    }
    err = sense.ops->attach(sense.state, pid, &m->handle);
    if (err) {
        m->handle = -1;
        m->no_sense = "the sense box could not attach to the command";
    }
}

void run_measure_exited(struct run_measure *m)
{
    if (m->handle < 0 || m->have_sample)
        return;
    if (sense.ops->read(sense.state, m->handle, &m->sample) == 0)
        m->have_sample = true;
    sense.ops->detach(sense.state, m->handle);
    m->handle = -1;
}

static void add(struct run_measure *m, const char *name, double v, const char *unit,
                const char *missing)
{
    if (m->nmetrics < RUN_MAX_METRICS)
        m->metrics[m->nmetrics++] = (struct run_metric){name, missing ? NAN : v, unit, missing};
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* Why event @ev is missing from this command's sample. */
static const char *why_missing(const struct run_measure *m, enum corun_event ev)
{
    const char *w;

    if (m->no_sense)
        return m->no_sense;
    if (!m->have_sample)
        return "the counters could not be read";
    w = sense.ops->why_missing(sense.state, ev);
    return w ? w : "not counted";
}

/* The sense box's counts and the derived metrics. */
static void add_counters(struct run_measure *m)
{
    static const enum corun_event shown[] = {
        CORUN_EV_INSTRUCTIONS,  CORUN_EV_CYCLES,       CORUN_EV_LLC_MISSES,
        CORUN_EV_TASK_CLOCK_NS, CORUN_EV_RUN_DELAY_NS, CORUN_EV_CPU_MIGRATIONS,
    };
    static const struct {
        enum corun_metric m;
        enum corun_event needs[2];
    } derived[] = {
        {CORUN_M_IPC, {CORUN_EV_INSTRUCTIONS, CORUN_EV_CYCLES}},
        {CORUN_M_LLC_MPKI, {CORUN_EV_LLC_MISSES, CORUN_EV_INSTRUCTIONS}},
        {CORUN_M_EFFECTIVE_GHZ, {CORUN_EV_CYCLES, CORUN_EV_TASK_CLOCK_NS}},
    };
    struct corun_metrics dm;

    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        enum corun_event ev = shown[i];
        bool ok = m->have_sample && (m->sample.valid & CORUN_EV_BIT(ev));

        add(m, corun_event_name(ev), ok ? (double)m->sample.value[ev] : 0,
            ev == CORUN_EV_TASK_CLOCK_NS || ev == CORUN_EV_RUN_DELAY_NS ? "ns" : "",
            ok ? NULL : why_missing(m, ev));
    }
    if (m->have_sample)
        corun_metrics_compute(&m->sample, m->t1_ns - m->t0_ns, &dm);
    for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++) {
        double v = m->have_sample ? dm.v[derived[i].m] : NAN;
        const char *why = NULL;

        if (isnan(v)) {
            enum corun_event ev = derived[i].needs[0];

            if (m->have_sample && (m->sample.valid & CORUN_EV_BIT(ev)))
                ev = derived[i].needs[1];
            why = why_missing(m, ev);
        }
        add(m, corun_metric_name(derived[i].m), v, "", why);
    }
}

void run_measure_finish(struct run_measure *m, const struct rusage *ru)
{
    if (m->handle >= 0)
        run_measure_exited(m);
    m->t1_ns = now_ns();
    m->wall_s = (double)(m->t1_ns - m->t0_ns) * 1e-9;
    m->user_s = tv_s(ru->ru_utime);
    m->sys_s = tv_s(ru->ru_stime);
    m->cpu_s = m->user_s + m->sys_s;
    m->nmetrics = 0;
    add(m, "cpu_util", m->wall_s > 0 ? m->cpu_s / m->wall_s : NAN, "CPUs",
        m->wall_s > 0 ? NULL : "no wall time");
    add(m, "max_rss_bytes", (double)ru->ru_maxrss * 1024.0, "bytes", NULL);
    add(m, "minor_faults", (double)ru->ru_minflt, "", NULL);
    add(m, "major_faults", (double)ru->ru_majflt, "", NULL);
    add(m, "voluntary_switches", (double)ru->ru_nvcsw, "", NULL);
    add(m, "involuntary_switches", (double)ru->ru_nivcsw, "", NULL);
    add_counters(m);
}

const struct run_metric *run_measure_metric(const struct run_measure *m, const char *name)
{
    for (unsigned i = 0; i < m->nmetrics; i++)
        if (!strcmp(m->metrics[i].name, name))
            return &m->metrics[i];
    return NULL;
}

/* Reads pgrp and utime+stime+cutime+cstime (seconds) of /proc/PID/stat,
 * and the private resident memory (resident - shared of statm, in bytes):
 * its own data, not the libraries every process maps. */
static bool read_stat(const char *pid, pid_t *pgrp, double *cpu_s, double *rss)
{
    static long tick, page;
    unsigned long long ut, st, cut, cst, res, shared;
    char path[300], buf[1024], *p;
    int pg;
    FILE *f;
    size_t n;

    if (!tick) {
        tick = sysconf(_SC_CLK_TCK);
        page = sysconf(_SC_PAGESIZE);
    }
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    f = fopen(path, "re");
    if (!f)
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    /* fields after the comm: state ppid pgrp session tty tpgid flags minflt
     * cminflt majflt cmajflt utime stime cutime cstime */
    if (!p || sscanf(p + 2, "%*c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &pg,
                     &ut, &st, &cut, &cst) != 5)
        return false;
    *pgrp = pg;
    *cpu_s = (double)(ut + st + cut + cst) / (double)tick;
    *rss = 0;
    snprintf(path, sizeof(path), "/proc/%s/statm", pid);
    f = fopen(path, "re");
    if (f) {
        if (fscanf(f, "%*u %llu %llu", &res, &shared) == 2 && res > shared)
            *rss = (double)(res - shared) * (double)page;
        fclose(f);
    }
    return true;
}

/* Seconds the threads of process @pid have waited on a run queue (the
 * second figure of each /proc/PID/task/TID/schedstat). */
static double read_delay(const char *pid)
{
    char path[600];
    struct dirent *t;
    double sum = 0;
    DIR *dir;

    snprintf(path, sizeof(path), "/proc/%s/task", pid);
    dir = opendir(path);
    while (dir && (t = readdir(dir))) {
        unsigned long long run, wait;
        FILE *f;

        if (t->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", pid, t->d_name);
        f = fopen(path, "re");
        if (!f)
            continue;
        if (fscanf(f, "%llu %llu", &run, &wait) == 2)
            sum += (double)wait * 1e-9;
        fclose(f);
    }
    if (dir)
        closedir(dir);
    return sum;
}

void run_measure_groups(const pid_t *pgids, unsigned n, struct run_group_use *out)
{
    struct dirent *d;
    DIR *dir;

    memset(out, 0, n * sizeof(*out));
    if (n == 0 || !(dir = opendir("/proc")))
        return;
    while ((d = readdir(dir))) {
        double cpu, mem;
        pid_t pg;

        if (d->d_name[0] < '1' || d->d_name[0] > '9' || !read_stat(d->d_name, &pg, &cpu, &mem))
            continue;
        for (unsigned i = 0; i < n; i++)
            if (pgids[i] == pg) {
                out[i].cpu_s += cpu;
                out[i].rss += mem;
                out[i].delay_s += read_delay(d->d_name);
            }
    }
    closedir(dir);
}
