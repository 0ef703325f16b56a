/*
 * cli-stat.c — `corun stat`: counters and derived metrics of a command (or
 * of running processes), like perf stat, from whichever sensor backend works
 * here, with every missing counter listed with its reason.
 *
 * A launched command is started stopped: the child waits on a pipe while the
 * counters are attached (inherit, enable_on_exec), then execs, so none of its
 * instructions are missed and none of corun's are counted. The parent waits
 * for it without reaping (waitid WNOWAIT) so that /proc/PID is still there
 * for the last read, then reaps it and returns its exit status (128+signal
 * when killed, as shells do). SIGINT and SIGQUIT are ignored meanwhile: the
 * terminal sends them to the command, and corun reports what it counted.
 * So is SIGPIPE, so that a reader of the report that goes away (`| head`)
 * does not change the exit status; the command gets it by default.
 *
 * With -p, processes already running are counted until SIGINT or SIGTERM
 * (or until they all exit); the exit status is 0.
 *
 * The human report goes to stderr (as perf stat's does, leaving the
 * command's stdout alone); --json goes to stdout; -o FILE puts either in FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/spawn.h"
#include "common/internal.h"
#include "common/sys.h"
#include "corun/model.h"
#include "corun/sense.h"

#define MAX_TARGETS 64

struct stat_run {
    bool as_json;
    FILE *out;
    uint64_t events;           /* requested presets (all when none given) */
    unsigned long interval_ms; /* 0: none */
    const struct corun_sense_ops *ops;
    void *state;
    struct corun_sense_choice choice;
    unsigned ntargets;
    pid_t pids[MAX_TARGETS];
    int handles[MAX_TARGETS];
    int pidfds[MAX_TARGETS];
    bool gone[MAX_TARGETS];
    struct corun_sample last[MAX_TARGETS]; /* last good read of each */
    bool have_last[MAX_TARGETS];
    char **argv;        /* the command, or NULL with -p */
    sigset_t wait_mask; /* the signal mask while waiting (ppoll) */
    uint64_t t0;
    unsigned nintervals;
};

static volatile sig_atomic_t stop_req;

static void on_stop(int sig)
{
    (void)sig;
    stop_req = 1;
}

/* ---- output ----------------------------------------------------------------- */

static void fmt_count(char *buf, size_t len, uint64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), o = 0;

    for (int i = 0; i < n && o + 2 < (int)len; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
}

static bool wanted(const struct stat_run *r, int ev)
{
    return r->events & CORUN_EV_BIT(ev);
}

static const char *why(const struct stat_run *r, int ev)
{
    const char *w = r->ops->why_missing(r->state, (enum corun_event)ev);

    return w ? w : "could not be read";
}

/* The "counters" (null where missing) and "metrics" members of a JSON
 * report, for the final report and for each -I interval alike. */
static void json_counters_metrics(struct json *j, const struct stat_run *r,
                                  const struct corun_sample *s, const struct corun_metrics *m)
{
    json_key(j, "counters");
    json_obj_begin(j);
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        if (!wanted(r, ev))
            continue;
        if (s->valid & CORUN_EV_BIT(ev))
            json_kuint(j, corun_event_name(ev), s->value[ev]);
        else
            json_knull(j, corun_event_name(ev));
    }
    json_obj_end(j);
    json_key(j, "metrics");
    json_obj_begin(j);
    for (int i = 0; i < CORUN_NMETRICS; i++)
        json_kdouble(j, corun_metric_name(i), m->v[i]);
    json_obj_end(j);
}

static void print_json_report(const struct stat_run *r, const struct corun_sample *s,
                              uint64_t elapsed_ns, int exit_status)
{
    struct corun_metrics m;
    struct json j;

    corun_metrics_compute(s, elapsed_ns, &m);
    json_init(&j, r->out);
    json_obj_begin(&j);
    json_kstr(&j, "backend", r->ops->name);
    json_key(&j, "backends_tried");
    json_arr_begin(&j);
    for (unsigned i = 0; i < r->choice.ntried; i++) {
        json_obj_begin_inline(&j);
        json_kstr(&j, "backend", r->choice.tried[i].backend);
        json_kstr(&j, "reason", r->choice.tried[i].why);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_key(&j, "unavailable");
    json_arr_begin(&j);
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        if (!wanted(r, ev) || (s->valid & CORUN_EV_BIT(ev)))
            continue;
        json_obj_begin_inline(&j);
        json_kstr(&j, "event", corun_event_name(ev));
        json_kstr(&j, "reason", why(r, ev));
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_counters_metrics(&j, r, s, &m);
    json_kdouble(&j, "mux_ratio", s->mux_ratio);
    json_kuint(&j, "elapsed_ns", elapsed_ns);
    if (r->argv)
        json_kint(&j, "exit_status", exit_status);
    else
        json_kint(&j, "exit_status", 0);
    json_obj_end(&j);
    json_end(&j);
}

static void print_human_report(const struct stat_run *r, const struct corun_sample *s,
                               uint64_t elapsed_ns, int exit_status)
{
    struct corun_metrics m;
    char buf[64];
    bool shown[CORUN_NEVENTS] = {false};

    corun_metrics_compute(s, elapsed_ns, &m);
    fprintf(r->out, "\n Counters for ");
    if (r->argv) {
        fprintf(r->out, "'");
        for (char **a = r->argv; *a; a++)
            fprintf(r->out, "%s%s", a == r->argv ? "" : " ", *a);
        fprintf(r->out, "'");
    } else {
        for (unsigned i = 0; i < r->ntargets; i++)
            fprintf(r->out, "%s%d", i ? "," : "process ", (int)r->pids[i]);
    }
    fprintf(r->out, " (backend %s", r->ops->name);
    for (unsigned i = 0; i < r->choice.ntried; i++)
        fprintf(r->out, "; %s unavailable: %s", r->choice.tried[i].backend, r->choice.tried[i].why);
    fprintf(r->out, ")\n\n");
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        if (!wanted(r, ev))
            continue;
        if (s->valid & CORUN_EV_BIT(ev)) {
            fmt_count(buf, sizeof(buf), s->value[ev]);
            fprintf(r->out, "  %22s  %s\n", buf, corun_event_name(ev));
        } else {
            fprintf(r->out, "  %22s  %s\n", "<unavailable>", corun_event_name(ev));
        }
    }
    fprintf(r->out, "\n");
    for (int i = 0; i < CORUN_NMETRICS; i++) {
        if (m.v[i] == m.v[i])
            fprintf(r->out, "  %22.3f  %s\n", m.v[i], corun_metric_name(i));
        else
            fprintf(r->out, "  %22s  %s\n", "-", corun_metric_name(i));
    }
    /* The same reason for many events (no PMU) is said once. */
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        const char *w;

        if (!wanted(r, ev) || (s->valid & CORUN_EV_BIT(ev)) || shown[ev])
            continue;
        w = why(r, ev);
        fprintf(r->out, "\n  unavailable:");
        for (int o = ev; o < CORUN_NEVENTS; o++) {
            if (!wanted(r, o) || (s->valid & CORUN_EV_BIT(o)) || shown[o] || strcmp(why(r, o), w))
                continue;
            fprintf(r->out, "%s%s", o == ev ? " " : ", ", corun_event_name(o));
            shown[o] = true;
        }
        fprintf(r->out, "\n    %s\n", w);
    }
    fprintf(r->out, "\n  %.6f s elapsed", (double)elapsed_ns / 1e9);
    if (s->mux_ratio < 1.0)
        fprintf(r->out, "; hardware counters multiplexed, counted %.1f%% of the time",
                100.0 * s->mux_ratio);
    if (r->argv)
        fprintf(r->out, "; exit status %d", exit_status);
    fprintf(r->out, "\n\n");
}

static void print_interval(struct stat_run *r, const struct corun_sample *d, uint64_t t_ns)
{
    struct corun_metrics m;
    char buf[64];

    corun_metrics_compute(d, r->interval_ms * 1000000ull, &m);
    if (r->as_json) {
        struct json j;

        json_init(&j, r->out);
        json_obj_begin_inline(&j);
        json_kuint(&j, "interval", r->nintervals);
        json_kuint(&j, "t_ns", t_ns);
        json_counters_metrics(&j, r, d, &m);
        json_obj_end(&j);
        json_end(&j);
    } else {
        if (r->nintervals == 0)
            fprintf(r->out, "#%13s  %22s  %s\n", "time (s)", "count", "event");
        for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
            if (!wanted(r, ev) || !(d->valid & CORUN_EV_BIT(ev)))
                continue;
            fmt_count(buf, sizeof(buf), d->value[ev]);
            fprintf(r->out, "%14.6f  %22s  %s\n", (double)t_ns / 1e9, buf, corun_event_name(ev));
        }
        fflush(r->out);
    }
    r->nintervals++;
}

/* ---- counting ---------------------------------------------------------------- */

/* Reads every target into @sum; a target that can no longer be read keeps
 * its last good sample. */
static void read_all(struct stat_run *r, struct corun_sample *sum)
{
    corun_sample_init_sum(sum);
    for (unsigned i = 0; i < r->ntargets; i++) {
        struct corun_sample s;
        int err = r->ops->read(r->state, r->handles[i], &s);

        if (!err) {
            r->last[i] = s;
            r->have_last[i] = true;
        } else if (cli_verbose) {
            cli_error("stat", "reading process %d: %s", (int)r->pids[i], corun_strerror(err));
        }
        if (r->have_last[i]) {
            corun_sample_add(sum, &r->last[i]);
        } else {
            struct corun_sample none = {.mux_ratio = 1.0};

            corun_sample_add(sum, &none);
        }
    }
}

/*
 * Waits until every target is gone, SIGINT/SIGTERM (with -p) or, with -I,
 * the next interval, printing each interval's counts. The stop signals are
 * blocked except inside ppoll(), so one that arrives between the check of
 * stop_req and the wait cannot be lost. A target without a pidfd (kernels
 * before 5.3) is never seen leaving: only a signal ends the wait for it.
 */
static void wait_loop(struct stat_run *r)
{
    /* With -p, threads born after attach join the count at each read: read
     * at least this often even without -I. */
    const uint64_t refresh_ns = r->argv ? 0 : 100000000ull;
    struct corun_sample prev, cur, d;
    struct pollfd pfd[MAX_TARGETS];
    uint64_t next = r->t0 + r->interval_ms * 1000000ull, next_refresh = r->t0 + refresh_ns;

    corun_sample_init_sum(&prev);
    for (;;) {
        struct timespec ts, *tsp = NULL;
        unsigned n = 0, alive = 0;
        uint64_t now, wake = UINT64_MAX;
        int rc;

        for (unsigned i = 0; i < r->ntargets; i++) {
            if (r->gone[i])
                continue;
            alive++;
            if (r->pidfds[i] < 0)
                continue;
            pfd[n].fd = r->pidfds[i];
            pfd[n].events = POLLIN;
            n++;
        }
        if (!alive || stop_req)
            return;
        if (r->interval_ms)
            wake = next;
        if (refresh_ns && next_refresh < wake)
            wake = next_refresh;
        if (wake != UINT64_MAX) {
            uint64_t left;

            now = corun__now_ns();
            left = now >= wake ? 0 : wake - now;
            ts.tv_sec = (time_t)(left / 1000000000ull);
            ts.tv_nsec = (long)(left % 1000000000ull);
            tsp = &ts;
        }
        rc = ppoll(pfd, n, tsp, &r->wait_mask);
        if (rc < 0 && errno != EINTR)
            return;
        if (rc > 0) {
            for (unsigned i = 0, k = 0; i < r->ntargets; i++) {
                if (r->gone[i] || r->pidfds[i] < 0)
                    continue;
                if (pfd[k++].revents)
                    r->gone[i] = true;
            }
        }
        now = corun__now_ns();
        if (r->interval_ms && now >= next) {
            read_all(r, &cur);
            corun_sample_delta(&prev, &cur, &d);
            print_interval(r, &d, next - r->t0);
            prev = cur;
            next += r->interval_ms * 1000000ull;
            next_refresh = now + refresh_ns;
            /* Its reader gone (EPIPE) or its disk full: no more intervals;
             * the command is still waited for. */
            if (ferror(r->out))
                r->interval_ms = 0;
        } else if (refresh_ns && now >= next_refresh) {
            read_all(r, &cur);
            next_refresh = now + refresh_ns;
        }
    }
}

/* ---- launching ---------------------------------------------------------------- */

/*
 * Forks the command, stopped: the child blocks reading @go until the
 * counters are attached. Exec failures come back as an errno on @errp.
 */
static pid_t launch(char **argv, int go[2], int errp[2])
{
    pid_t pid;

    if (pipe2(go, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(errp, O_CLOEXEC) < 0) {
        close(go[0]);
        close(go[1]);
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        char c;
        int e;

        close(go[1]);
        close(errp[0]);
        spawn_child_signals();
        if (read(go[0], &c, 1) != 1)
            _exit(127); /* corun gave up before attaching */
        execvp(argv[0], argv);
        e = errno;
        if (write(errp[1], &e, sizeof(e)) < 0)
            _exit(127);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(go[0]);
    close(errp[1]);
    if (pid < 0) {
        close(go[1]);
        close(errp[0]);
    }
    return pid;
}

static int status_of(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
}

static int run_command(struct stat_run *r)
{
    int go[2], errp[2], wstatus = 0, err, exec_err = 0;
    struct corun_sample sum;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit, old_pipe;
    siginfo_t si;
    uint64_t t1;
    pid_t pid;

    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    /* The exit status is the command's: a reader of the report that went
     * away (EPIPE) loses the report, not the status. */
    sigaction(SIGPIPE, &ign, &old_pipe);
    pid = launch(r->argv, go, errp);
    if (pid < 0) {
        cli_error("stat", "cannot start %s: %s", r->argv[0], strerror(errno));
        return CLI_EXIT_FAIL;
    }
    r->ntargets = 1;
    r->pids[0] = pid;
    err = r->ops->attach(r->state, pid, &r->handles[0]);
    if (err) {
        /* Closing the pipe unblocks the child, which exits without exec. */
        close(go[1]);
        close(errp[0]);
        waitpid(pid, NULL, 0);
        cli_error("stat", "cannot count %s: %s", r->argv[0], corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    r->pidfds[0] = corun__sys.pidfd_open(pid, 0);
    r->t0 = corun__now_ns();
    if (write(go[1], "g", 1) != 1)
        cli_error("stat", "cannot release %s: %s", r->argv[0], strerror(errno));
    close(go[1]);
    if (read(errp[0], &exec_err, sizeof(exec_err)) == (ssize_t)sizeof(exec_err))
        cli_error("stat", "%s: %s", r->argv[0], strerror(exec_err));
    close(errp[0]);
    if (r->interval_ms && r->pidfds[0] < 0)
        cli_error("stat", "-I needs pidfd_open (Linux 5.3): no interval counts");
    if (r->pidfds[0] >= 0 && r->interval_ms) {
        sigprocmask(SIG_SETMASK, NULL, &r->wait_mask);
        wait_loop(r);
    }
    /* Wait without reaping: the last read still finds /proc/PID. */
    while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    t1 = corun__now_ns();
    read_all(r, &sum);
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    if (r->pidfds[0] >= 0)
        close(r->pidfds[0]);
    r->ops->detach(r->state, r->handles[0]);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (r->as_json)
        print_json_report(r, &sum, t1 - r->t0, status_of(wstatus));
    else
        print_human_report(r, &sum, t1 - r->t0, status_of(wstatus));
    fflush(r->out); /* while SIGPIPE is still ignored */
    sigaction(SIGPIPE, &old_pipe, NULL);
    return status_of(wstatus);
}

static int run_pids(struct stat_run *r)
{
    struct sigaction sa = {.sa_handler = on_stop};
    struct corun_sample sum;
    sigset_t stop_set;
    uint64_t t1;

    for (unsigned i = 0; i < r->ntargets; i++) {
        int err = r->ops->attach(r->state, r->pids[i], &r->handles[i]);

        if (err) {
            cli_error("stat", "cannot count process %d: %s", (int)r->pids[i],
                      err == -ESRCH ? "no such process" : corun_strerror(err));
            for (unsigned k = 0; k < i; k++) {
                r->ops->detach(r->state, r->handles[k]);
                if (r->pidfds[k] >= 0)
                    close(r->pidfds[k]);
            }
            return err == -ESRCH ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
        }
        r->pidfds[i] = corun__sys.pidfd_open(r->pids[i], 0);
    }
    /* Block the stop signals but inside ppoll(); no SA_RESTART, so that
     * the handler interrupts it. */
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop_set, &r->wait_mask);
    sigdelset(&r->wait_mask, SIGINT);
    sigdelset(&r->wait_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    r->t0 = corun__now_ns();
    wait_loop(r);
    t1 = corun__now_ns();
    read_all(r, &sum);
    for (unsigned i = 0; i < r->ntargets; i++) {
        r->ops->detach(r->state, r->handles[i]);
        if (r->pidfds[i] >= 0)
            close(r->pidfds[i]);
    }
    if (r->as_json)
        print_json_report(r, &sum, t1 - r->t0, 0);
    else
        print_human_report(r, &sum, t1 - r->t0, 0);
    return CLI_EXIT_OK;
}

/* ---- arguments ---------------------------------------------------------------- */

static int parse_events(const char *list, uint64_t *out)
{
    char *dup = strdup(list), *save = NULL, *tok;
    int rc = 0;

    if (!dup)
        return -ENOMEM;
    *out = 0;
    for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int ev = corun_event_by_name(tok);

        if (ev < 0) {
            rc = cli_usage_error("stat", "unknown preset '%s' (see corun events)", tok);
            break;
        }
        *out |= CORUN_EV_BIT(ev);
    }
    free(dup);
    return rc;
}

static int parse_pids(struct stat_run *r, const char *list)
{
    char *dup = strdup(list), *save = NULL, *tok;
    int rc = 0;

    if (!dup)
        return CLI_EXIT_FAIL;
    for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned long v;

        if (!cli_parse_uint(tok, &v) || v == 0 || v > 0x7fffffff) {
            rc = cli_usage_error("stat", "-p: '%s' is not a process ID", tok);
            break;
        }
        if (r->ntargets == MAX_TARGETS) {
            rc = cli_usage_error("stat", "-p: at most %d processes", MAX_TARGETS);
            break;
        }
        r->pids[r->ntargets++] = (pid_t)v;
    }
    free(dup);
    return rc;
}

static int select_backend(struct stat_run *r, const char *name, bool launched)
{
    const struct corun_sense_ops *one[1];
    struct corun_sense_opts opts = {.events = r->events, .inherit = launched, .on_exec = launched};
    int err;

    if (name) {
        if (!strcmp(name, "perf"))
            one[0] = &corun_sense_perf;
        else if (!strcmp(name, "proc"))
            one[0] = &corun_sense_proc;
        else
            return cli_usage_error("stat", "unknown backend '%s' (perf or proc)", name);
    }
    err = corun_sense_select(&opts, name ? one : NULL, name ? 1 : 0, &r->choice);
    if (err) {
        for (unsigned i = 0; i < r->choice.ntried; i++)
            cli_error("stat", "backend %s: %s", r->choice.tried[i].backend, r->choice.tried[i].why);
        cli_error("stat", "no sensor backend works here");
        return CLI_EXIT_FAIL;
    }
    r->ops = r->choice.ops;
    r->state = r->choice.state;
    return 0;
}

static int cmd_stat(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},           {"events", required_argument, NULL, 'e'},
        {"interval", required_argument, NULL, 'I'}, {"pid", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},   {"backend", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},           {0, 0, 0, 0},
    };
    struct stat_run *r = calloc(1, sizeof(*r));
    const char *outfile = NULL, *backend = NULL;
    int opt, rc = CLI_EXIT_OK;

    if (!r)
        return CLI_EXIT_FAIL;
    r->events = CORUN_EV_BIT(CORUN_NEVENTS) - 1;
    for (unsigned i = 0; i < MAX_TARGETS; i++)
        r->pidfds[i] = -1;
    /* '+': stop at the command, whose own options are its business. */
    while ((opt = getopt_long(argc, argv, "+je:I:p:o:b:h", longopts, NULL)) != -1) {
        unsigned long v;

        switch (opt) {
        case 'j':
            r->as_json = true;
            break;
        case 'e':
            rc = parse_events(optarg, &r->events);
            break;
        case 'I':
            if (!cli_parse_uint(optarg, &v) || v < 10 || v > 3600000)
                rc = cli_usage_error("stat", "-I: '%s' is not an interval in ms (10 or more)",
                                     optarg);
            r->interval_ms = v;
            break;
        case 'p':
            rc = parse_pids(r, optarg);
            break;
        case 'o':
            outfile = optarg;
            break;
        case 'b':
            backend = optarg;
            break;
        case 'h':
            cli_usage(stdout, "stat");
            goto out_free;
        default:
            rc = CLI_EXIT_USAGE;
            cli_usage(stderr, "stat");
        }
        if (rc)
            goto out_free;
    }
    if (r->ntargets && optind < argc) {
        rc = cli_usage_error("stat", "-p and a command exclude each other");
        goto out_free;
    }
    if (!r->ntargets && optind >= argc) {
        rc = cli_usage_error("stat", "give a command (after --) or -p PID");
        goto out_free;
    }
    r->out = r->as_json ? stdout : stderr;
    if (outfile) {
        r->out = fopen(outfile, "we");
        if (!r->out) {
            cli_error("stat", "%s: %s", outfile, strerror(errno));
            rc = CLI_EXIT_USAGE;
            goto out_free;
        }
    }
    rc = select_backend(r, backend, !r->ntargets);
    if (rc)
        goto out_close;
    if (r->ntargets) {
        rc = run_pids(r);
    } else {
        r->argv = argv + optind;
        rc = run_command(r);
    }
    r->ops->close(r->state);
out_close:
    if (outfile)
        fclose(r->out);
out_free:
    free(r);
    return rc;
}

CLI_COMMAND(stat, cmd_stat, "count a command's (or processes') events and derived metrics",
            "corun stat [--json] [-o FILE] [-e PRESET,...] [-I MS] [--backend perf|proc]\n"
            "           (-p PID[,PID...] | [--] CMD [ARGS...])")
