/*
 * sense-proc.c — the sensor for machines without a usable PMU.
 *
 * What it counts, best source first:
 *   task_clock_ns, context_switches, cpu_migrations, page_faults: perf's
 *     software events where perf_event_open allows them (exact, and with
 *     inherit they include the children of a launched command);
 *   else task_clock_ns and page_faults from /proc/PID/stat (utime+stime and
 *     minflt+majflt, plus the waited-for children's when counting a launched
 *     command; utime/stime have clock-tick resolution), context_switches from
 *     /proc/PID/task/TID/status; cpu_migrations then has no source;
 *   run_delay_ns: /proc/PID/task/TID/schedstat, summed over every thread seen
 *     (threads that came and went between two reads are missed, and so are
 *     child processes).
 * Hardware presets are always missing, with the reason perf could not count
 * them (corun__perf_diagnose()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "sense/sense-internal.h"

#define ALL_EVENTS (CORUN_EV_BIT(CORUN_NEVENTS) - 1)
#define SW_EVENTS                                                                                  \
    (CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS) | CORUN_EV_BIT(CORUN_EV_CONTEXT_SWITCHES) |              \
     CORUN_EV_BIT(CORUN_EV_CPU_MIGRATIONS) | CORUN_EV_BIT(CORUN_EV_PAGE_FAULTS))

/* ---- per-thread tables ------------------------------------------------------ */

static struct corun__tid_stat *tid_slot(struct corun__tidtab *tab, pid_t tid)
{
    for (unsigned i = 0; i < tab->n; i++)
        if (tab->t[i].tid == tid)
            return &tab->t[i];
    if (tab->n == tab->cap) {
        unsigned cap = tab->cap ? tab->cap * 2 : 8;
        struct corun__tid_stat *nt = realloc(tab->t, cap * sizeof(*nt));

        if (!nt)
            return NULL;
        tab->t = nt;
        tab->cap = cap;
    }
    memset(&tab->t[tab->n], 0, sizeof(tab->t[0]));
    tab->t[tab->n].tid = tid;
    return &tab->t[tab->n++];
}

uint64_t corun__proc_status_field(const char *buf, const char *key)
{
    size_t n = strlen(key);

    for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, key, n))
            return strtoull(p + n, NULL, 10);
    return 0;
}

/* Reads one thread; -ENOENT when it is gone (not an error for the table). */
static int read_tid(struct corun__tidtab *tab, int rootfd, pid_t pid, pid_t tid)
{
    char path[96], buf[8192];
    uint64_t run, delay;
    struct corun__tid_stat *st;
    ssize_t n;

    snprintf(path, sizeof(path), "proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    n = corun__read_text(rootfd, path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    if (corun__proc_schedstat_parse(buf, &run, &delay))
        return -EINVAL;
    st = tid_slot(tab, tid);
    if (!st)
        return -ENOMEM;
    /* Counters only grow; a smaller value is a reused TID we cannot tell apart. */
    if (run > st->run_ns)
        st->run_ns = run;
    if (delay > st->delay_ns)
        st->delay_ns = delay;
    if (tab->want_ctxsw) {
        snprintf(path, sizeof(path), "proc/%d/task/%d/status", (int)pid, (int)tid);
        n = corun__read_text(rootfd, path, buf, sizeof(buf));
        if (n > 0) {
            uint64_t c = corun__proc_status_field(buf, "voluntary_ctxt_switches:") +
                         corun__proc_status_field(buf, "nonvoluntary_ctxt_switches:");

            if (c > st->ctxsw)
                st->ctxsw = c;
        } else if (n != -ENOENT && n != -ESRCH) {
            /* Not a thread that just exited: the sum would silently lack its
             * switches (a status file past the buffer, say), so it is missing. */
            tab->ctxsw_lost = true;
        }
    }
    return 0;
}

int corun__tidtab_update(struct corun__tidtab *tab, int rootfd, pid_t pid)
{
    char path[64];
    struct dirent *d;
    int fd, err = 0;
    DIR *dir;

    snprintf(path, sizeof(path), "proc/%d/task", (int)pid);
    fd = corun__root_openat(rootfd, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return fd == -ENOENT ? -ESRCH : fd;
    dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return -ENOMEM;
    }
    while ((d = readdir(dir))) {
        pid_t tid = (pid_t)atoi(d->d_name);
        int e;

        if (tid <= 0)
            continue;
        e = read_tid(tab, rootfd, pid, tid);
        if (e == -ENOENT) {
            /* Either the thread exited meanwhile or there is no schedstat at
             * all: tell them apart by the thread's own directory. */
            snprintf(path, sizeof(path), "proc/%d/task/%d", (int)pid, (int)tid);
            fd = corun__root_openat(rootfd, path, O_RDONLY | O_DIRECTORY);
            if (fd >= 0) {
                close(fd);
                err = -ENOENT;
                break;
            }
            continue;
        }
        if (e) {
            err = e;
            break;
        }
    }
    closedir(dir);
    return err;
}

uint64_t corun__tidtab_delay(const struct corun__tidtab *tab)
{
    uint64_t sum = 0;

    for (unsigned i = 0; i < tab->n; i++)
        sum += tab->t[i].delay_ns;
    return sum >= tab->base_delay ? sum - tab->base_delay : 0;
}

uint64_t corun__tidtab_ctxsw(const struct corun__tidtab *tab)
{
    uint64_t sum = 0;

    for (unsigned i = 0; i < tab->n; i++)
        sum += tab->t[i].ctxsw;
    return sum >= tab->base_ctxsw ? sum - tab->base_ctxsw : 0;
}

void corun__tidtab_release(struct corun__tidtab *tab)
{
    free(tab->t);
    memset(tab, 0, sizeof(*tab));
}

/* ---- the backend ------------------------------------------------------------ */

struct proc_target {
    bool used;
    pid_t pid;
    struct corun__pset *ps; /* software perf events, NULL when none */
    struct corun__tidtab tab;
    uint64_t base_ticks, base_faults;
};

struct proc_state {
    int rootfd;
    bool inherit;
    uint64_t wanted;
    uint64_t from_proc; /* presets read from /proc */
    long clk_tck;
    struct corun__perf_env env;
    struct corun__pplan plan;
    char why[CORUN_NEVENTS][256];
    struct proc_target *t;
    unsigned nt;
};

static int proc_probe(const struct corun_sense_opts *opts, char *why, size_t len)
{
    int rootfd = corun__root_open(opts ? opts->root : NULL);
    char buf[512];
    ssize_t n;

    if (rootfd < 0) {
        snprintf(why, len, "cannot open the root directory: %s", corun_strerror(rootfd));
        return rootfd;
    }
    n = corun__read_text(rootfd, "proc/self/stat", buf, sizeof(buf));
    close(rootfd);
    if (n < 0) {
        snprintf(why, len, "/proc/self/stat is unreadable (%s): no procfs mounted",
                 corun_strerror((int)n));
        return (int)n;
    }
    return 0;
}

int corun__proc_stat_parse(const char *buf, struct corun__proc_stat *out)
{
    unsigned long long f[8];
    const char *p;

    /* The command name may hold spaces and parentheses: start after the last ')'. */
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %llu %llu %llu %llu %llu %llu %llu",
                     &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7]) != 8)
        return -EINVAL;
    out->minflt = f[0];
    out->cminflt = f[1];
    out->majflt = f[2];
    out->cmajflt = f[3];
    out->utime = f[4];
    out->stime = f[5];
    out->cutime = f[6];
    out->cstime = f[7];
    return 0;
}

/* Reads utime+stime (+ children's) in ticks and faults of @pid. */
static int read_stat(const struct proc_state *st, pid_t pid, uint64_t *ticks, uint64_t *faults)
{
    struct corun__proc_stat f;
    char path[64], buf[1024];
    ssize_t n;

    snprintf(path, sizeof(path), "proc/%d/stat", (int)pid);
    n = corun__read_text(st->rootfd, path, buf, sizeof(buf));
    if (n < 0)
        return n == -ENOENT ? -ESRCH : (int)n;
    if (corun__proc_stat_parse(buf, &f))
        return -EINVAL;
    *faults = f.minflt + f.majflt + (st->inherit ? f.cminflt + f.cmajflt : 0);
    *ticks = f.utime + f.stime + (st->inherit ? f.cutime + f.cstime : 0);
    return 0;
}

static int proc_open(const struct corun_sense_opts *opts, void **state)
{
    struct proc_state *st = calloc(1, sizeof(*st));
    char hwwhy[256], buf[128];
    int hw;

    *state = NULL;
    if (!st)
        return -ENOMEM;
    st->rootfd = corun__root_open(opts->root);
    if (st->rootfd < 0) {
        int err = st->rootfd;

        free(st);
        return err;
    }
    st->inherit = opts->inherit;
    st->wanted = opts->events ? opts->events & ALL_EVENTS : ALL_EVENTS;
    st->clk_tck = sysconf(_SC_CLK_TCK);
    if (st->clk_tck <= 0)
        st->clk_tck = 100;
    corun__perf_env_read(st->rootfd, &st->env);
    hw = corun__perf_diagnose(&st->env, hwwhy, sizeof(hwwhy));
    if (!hw)
        snprintf(hwwhy, sizeof(hwwhy), "the proc backend counts no hardware events");

    st->plan.inherit = opts->inherit;
    st->plan.on_exec = opts->inherit && opts->on_exec;
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        struct corun_event_encoding e = {0};
        int err;

        if (!(st->wanted & CORUN_EV_BIT(ev)))
            continue;
        if (corun_event_is_hardware(ev)) {
            snprintf(st->why[ev], sizeof(st->why[ev]), "%s", hwwhy);
            continue;
        }
        if (ev == CORUN_EV_RUN_DELAY_NS) {
            if (corun__read_text(st->rootfd, "proc/self/schedstat", buf, sizeof(buf)) < 0)
                snprintf(st->why[ev], sizeof(st->why[ev]),
                         "no /proc/PID/schedstat (kernel without CONFIG_SCHED_INFO)");
            else
                st->from_proc |= CORUN_EV_BIT(ev);
            continue;
        }
        e.source = CORUN_SRC_SOFTWARE;
        corun__generic_event(ev, &e.type, &e.config, NULL);
        snprintf(e.native, sizeof(e.native), "%s", corun_event_name(ev));
        corun__perf_attr(&e, &st->env, &st->plan.attr[ev]);
        err = corun__perf_try(&st->plan.attr[ev]);
        if (!err) {
            st->plan.events |= CORUN_EV_BIT(ev);
            continue;
        }
        if (ev == CORUN_EV_CPU_MIGRATIONS) {
            corun__perf_event_reason(err, ev, &e, &st->env, buf, sizeof(buf));
            snprintf(st->why[ev], sizeof(st->why[ev]),
                     "only perf's cpu-migrations software event counts it, and %s", buf);
            continue;
        }
        st->from_proc |= CORUN_EV_BIT(ev); /* /proc/PID/stat or status instead */
    }
    *state = st;
    return 0;
}

static int proc_attach(void *state, pid_t target, int *handle)
{
    struct proc_state *st = state;
    struct proc_target *t = NULL;
    unsigned i;
    int err;

    for (i = 0; i < st->nt; i++)
        if (!st->t[i].used)
            break;
    if (i == st->nt) {
        struct proc_target *nt = realloc(st->t, (st->nt + 1) * sizeof(*nt));

        if (!nt)
            return -ENOMEM;
        st->t = nt;
        st->nt++;
    }
    t = &st->t[i];
    memset(t, 0, sizeof(*t));
    t->pid = target;
    t->tab.want_ctxsw = st->from_proc & CORUN_EV_BIT(CORUN_EV_CONTEXT_SWITCHES);
    err = read_stat(st, target, &t->base_ticks, &t->base_faults);
    if (err)
        return err;
    if (st->plan.events) {
        err = corun__pset_open(&st->plan, st->rootfd, target, &t->ps);
        if (err)
            return err;
    }
    if (st->from_proc &
        (CORUN_EV_BIT(CORUN_EV_RUN_DELAY_NS) | CORUN_EV_BIT(CORUN_EV_CONTEXT_SWITCHES))) {
        err = corun__tidtab_update(&t->tab, st->rootfd, target);
        if (err && err != -ENOENT) {
            corun__pset_close(t->ps);
            corun__tidtab_release(&t->tab);
            return err;
        }
        t->tab.base_delay = corun__tidtab_delay(&t->tab);
        t->tab.base_ctxsw = corun__tidtab_ctxsw(&t->tab);
    }
    t->used = true;
    *handle = (int)i;
    return 0;
}

static struct proc_target *target_of(struct proc_state *st, int handle)
{
    if (handle < 0 || (unsigned)handle >= st->nt || !st->t[handle].used)
        return NULL;
    return &st->t[handle];
}

static int proc_read(void *state, int handle, struct corun_sample *out)
{
    struct proc_state *st = state;
    struct proc_target *t = target_of(st, handle);
    uint64_t ticks, faults;
    int err, serr;

    if (!t)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->mux_ratio = 1.0;
    if (t->ps && (err = corun__pset_read(t->ps, out)))
        return err;
    serr = read_stat(st, t->pid, &ticks, &faults);
    if (serr && !t->ps)
        return serr;
    if (!serr && (st->from_proc & CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS))) {
        out->value[CORUN_EV_TASK_CLOCK_NS] =
            (ticks - t->base_ticks) * (1000000000ull / (uint64_t)st->clk_tck);
        out->valid |= CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS);
    }
    if (!serr && (st->from_proc & CORUN_EV_BIT(CORUN_EV_PAGE_FAULTS))) {
        out->value[CORUN_EV_PAGE_FAULTS] = faults - t->base_faults;
        out->valid |= CORUN_EV_BIT(CORUN_EV_PAGE_FAULTS);
    }
    if (st->from_proc &
        (CORUN_EV_BIT(CORUN_EV_RUN_DELAY_NS) | CORUN_EV_BIT(CORUN_EV_CONTEXT_SWITCHES))) {
        err = corun__tidtab_update(&t->tab, st->rootfd, t->pid);
        if (err == -ENOMEM)
            return err;
        /* A process gone from /proc keeps what was last seen of its threads. */
        if (!err || err == -ESRCH) {
            if (st->from_proc & CORUN_EV_BIT(CORUN_EV_RUN_DELAY_NS)) {
                out->value[CORUN_EV_RUN_DELAY_NS] = corun__tidtab_delay(&t->tab);
                out->valid |= CORUN_EV_BIT(CORUN_EV_RUN_DELAY_NS);
            }
            if ((st->from_proc & CORUN_EV_BIT(CORUN_EV_CONTEXT_SWITCHES)) && !t->tab.ctxsw_lost) {
                out->value[CORUN_EV_CONTEXT_SWITCHES] = corun__tidtab_ctxsw(&t->tab);
                out->valid |= CORUN_EV_BIT(CORUN_EV_CONTEXT_SWITCHES);
            }
        }
    }
    out->t_ns = corun__now_ns();
    return 0;
}

static int proc_detach(void *state, int handle)
{
    struct proc_state *st = state;
    struct proc_target *t = target_of(st, handle);

    if (!t)
        return -EINVAL;
    corun__pset_close(t->ps);
    corun__tidtab_release(&t->tab);
    t->ps = NULL;
    t->used = false;
    return 0;
}

static const char *proc_why_missing(void *state, enum corun_event ev)
{
    struct proc_state *st = state;

    if ((unsigned)ev >= CORUN_NEVENTS)
        return "no such event";
    if (!(st->wanted & CORUN_EV_BIT(ev)))
        return "not requested";
    if (st->from_proc & CORUN_EV_BIT(ev))
        return NULL;
    if (!(st->plan.events & CORUN_EV_BIT(ev)))
        return st->why[ev][0] ? st->why[ev] : "not counted by the proc backend";
    /* A software event that opened on corun but was refused on a target. */
    for (unsigned i = 0; i < st->nt; i++) {
        const struct proc_target *t = &st->t[i];
        struct corun_event_encoding e = {.source = CORUN_SRC_SOFTWARE};
        int err;

        if (!t->used || !t->ps || (corun__pset_opened(t->ps) & CORUN_EV_BIT(ev)))
            continue;
        err = corun__pset_err(t->ps, ev);
        if (err) {
            snprintf(e.native, sizeof(e.native), "%s", corun_event_name(ev));
            corun__perf_event_reason(err, ev, &e, &st->env, st->why[ev], sizeof(st->why[ev]));
            return st->why[ev];
        }
    }
    return NULL;
}

static void proc_close(void *state)
{
    struct proc_state *st = state;

    if (!st)
        return;
    for (unsigned i = 0; i < st->nt; i++)
        if (st->t[i].used)
            proc_detach(st, (int)i);
    free(st->t);
    close(st->rootfd);
    free(st);
}

const struct corun_sense_ops corun_sense_proc = {
    .name = "proc",
    .probe = proc_probe,
    .open = proc_open,
    .attach = proc_attach,
    .read = proc_read,
    .detach = proc_detach,
    .why_missing = proc_why_missing,
    .close = proc_close,
};
