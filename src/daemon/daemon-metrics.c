/*
 * daemon-metrics.c — the daemon's figures in the Prometheus text exposition
 * format, for node_exporter's textfile collector.
 *
 * The collector reads the file whenever it is scraped, so a half-written file
 * must never be visible: we write a temporary file in the same folder (same
 * file system, so rename() is atomic) and rename it over the target. Per
 * process series carry pid and comm labels; a figure that is not known (NaN)
 * is left out rather than written as a number.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "daemon/daemon-internal.h"

/* Writes @s as a label value: backslash, quote and newline escaped. */
static void label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void metric_head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void per_process(FILE *f, const struct corun_daemon *d, const char *name, const char *help,
                        double (*get)(const struct corun_daemon *, const struct managed *))
{
    metric_head(f, name, "gauge", help);
    for (size_t i = 0; i < d->nprocs; i++) {
        double v = get(d, &d->procs[i]);

        if (isnan(v))
            continue;
        fprintf(f, "%s{pid=\"%d\",comm=\"", name, (int)d->procs[i].pid);
        label(f, d->procs[i].comm);
        fprintf(f, "\"} %.6g\n", v);
    }
}

static double get_cpu(const struct corun_daemon *d, const struct managed *m)
{
    return m->cpu_percent / 100;
}

static double get_ipc(const struct corun_daemon *d, const struct managed *m)
{
    return m->prof.ipc;
}

static double get_placed(const struct corun_daemon *d, const struct managed *m)
{
    return corun__daemon_os_cpu(d, m->placed);
}

static void write_all(FILE *f, const struct corun_daemon *d)
{
    metric_head(f, "corun_daemon_observe_only", "gauge",
                "1 when the daemon only watches (an actuator or policy is missing).");
    fprintf(f, "corun_daemon_observe_only %d\n", d->observe_why[0] ? 1 : 0);
    metric_head(f, "corun_daemon_paused", "gauge", "1 when an administrator paused placing.");
    fprintf(f, "corun_daemon_paused %d\n", d->paused ? 1 : 0);
    metric_head(f, "corun_daemon_managed_processes", "gauge", "Processes the daemon manages.");
    fprintf(f, "corun_daemon_managed_processes %zu\n", d->nprocs);
    metric_head(f, "corun_daemon_ticks_total", "counter", "Passes of the daemon's loop.");
    fprintf(f, "corun_daemon_ticks_total %llu\n", (unsigned long long)d->ticks);
    metric_head(f, "corun_daemon_migrations_total", "counter",
                "Processes moved to a new placement.");
    fprintf(f, "corun_daemon_migrations_total %llu\n", (unsigned long long)d->migrations_total);
    metric_head(f, "corun_daemon_mem_moves_total", "counter",
                "Processes whose memory followed them to another NUMA node.");
    fprintf(f, "corun_daemon_mem_moves_total %llu\n", (unsigned long long)d->mem_moves_total);
    {
        struct corun_engine_stats st = {0};

        if (d->eng)
            corun_engine_stats(d->eng, &st);
        metric_head(f, "corun_daemon_changes_judged_total", "counter",
                    "Changes of placement judged on the counters measured after them.");
        fprintf(f, "corun_daemon_changes_judged_total %llu\n", (unsigned long long)st.trials);
        metric_head(f, "corun_daemon_changes_taken_back_total", "counter",
                    "Of those, changes taken back: the counters measured a loss.");
        fprintf(f, "corun_daemon_changes_taken_back_total %llu\n", (unsigned long long)st.reverted);
        metric_head(f, "corun_daemon_changes_doubted_total", "counter",
                    "Plans not applied: predicted to gain less than a change taken back "
                    "lately fell short of its prediction.");
        fprintf(f, "corun_daemon_changes_doubted_total %llu\n", (unsigned long long)st.doubted);
    }
    metric_head(f, "corun_daemon_restores_total", "counter",
                "Processes given back their original affinity.");
    fprintf(f, "corun_daemon_restores_total %llu\n", (unsigned long long)d->restores_total);
    metric_head(f, "corun_daemon_apply_errors_total", "counter",
                "Placements that failed, by reason.");
    fprintf(f, "corun_daemon_apply_errors_total{reason=\"exited\"} %llu\n",
            (unsigned long long)d->err_esrch);
    fprintf(f, "corun_daemon_apply_errors_total{reason=\"permission\"} %llu\n",
            (unsigned long long)d->err_eperm);
    fprintf(f, "corun_daemon_apply_errors_total{reason=\"other\"} %llu\n",
            (unsigned long long)d->err_other);
    metric_head(f, "corun_daemon_tick_cpu_seconds", "gauge",
                "CPU time the daemon's last pass took.");
    fprintf(f, "corun_daemon_tick_cpu_seconds %.9f\n", (double)d->tick_cost_ns / 1e9);
    per_process(f, d, "corun_process_cpu_ratio",
                "CPU use of a managed process over the last interval, in CPUs.", get_cpu);
    per_process(f, d, "corun_process_ipc", "Instructions per cycle of a managed process.", get_ipc);
    per_process(f, d, "corun_process_placed_cpu",
                "The CPU the daemon placed a process on (absent: the kernel's choice).",
                get_placed);
}

int corun_daemon_write_metrics(struct corun_daemon *d, const char *path)
{
    char tmp[4096];
    FILE *f;
    int fd, err = 0;

    if (!d || !path)
        return -EINVAL;
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp))
        return -ENAMETOOLONG;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    f = fdopen(fd, "w");
    if (!f) {
        err = -errno;
        close(fd);
        goto out_unlink;
    }
    write_all(f, d);
    if (ferror(f))
        err = -EIO;
    if (fclose(f) != 0 && !err)
        err = -errno;
    if (err)
        goto out_unlink;
    if (rename(tmp, path) != 0) {
        err = -errno;
        goto out_unlink;
    }
    return 0;

out_unlink:
    unlink(tmp);
    return err;
}
