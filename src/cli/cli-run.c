/*
 * cli-run.c — `corun run`: one command, placed by a policy (or on --cpus),
 * measured, with a stat-like report on stderr at the end. The exit status is
 * the command's (128+N when a signal N killed it). A policy places one task
 * on one CPU; a command whose processes keep more threads busy (its own, or
 * those of the children a shell script or `make -j` starts) gets the
 * smallest sharing domain around that CPU that holds them, children
 * included. SIGINT, SIGTERM and SIGHUP sent to corun are passed on to the
 * command, the last two to the processes it started as well; its placement
 * is undone (journal and all) on every way out but a crash, which `corun
 * restore` covers.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "act/act-internal.h"
#include "cli/cli.h"
#include "cli/job-group.h"
#include "cli/json.h"
#include "cli/place.h"
#include "cli/run-measure.h"
#include "cli/spawn.h"
#include "cli/topo-load.h"

struct run_args {
    const char *policy, *cpus, *actuator, *json, *journal;
    bool thp;
    char **argv;
};

/* A --cpus list must name CPUs this process may use, its own affinity
 * (which the kernel keeps inside its cgroup's cpuset; the kernel would
 * trim the list to those, or refuse it): 0, or the usage error's exit
 * status after a line naming the others. Where the mask cannot be read,
 * the list goes to the kernel unchecked. */
static int check_usable(const char *list, const struct corun_cpuset *set)
{
    struct corun_cpuset ok = {0};
    char missing[256] = "", usable[256] = "";
    size_t len = 0;

    if (corun__mask_get(0, &ok)) {
        corun_cpuset_release(&ok);
        return 0;
    }
    for (int c = corun_cpuset_next(set, 0); c >= 0; c = corun_cpuset_next(set, (unsigned)c + 1))
        if (!corun_cpuset_isset(&ok, (unsigned)c) && len < sizeof(missing))
            len +=
                (size_t)snprintf(missing + len, sizeof(missing) - len, "%s%d", len ? "," : "", c);
    corun_cpuset_format(&ok, usable, sizeof(usable));
    corun_cpuset_release(&ok);
    if (!len)
        return 0;
    return cli_usage_error("run", "--cpus '%s': CPU %s not usable here (this process may use %s)",
                           list, missing, usable);
}

/* Where the command goes: the --cpus list, or the policy's CPU for one task
 * of unknown class (then *@topo keeps the topology and *@dense that CPU, so
 * the placement can widen later). Leaves @set empty for "leave it to the
 * kernel". 0 or an exit status. */
static int choose(const struct run_args *a, const struct corun_policy *pol,
                  struct corun_cpuset *set, struct corun_topo **topo, int *dense)
{
    struct corun_task_profile t = {.id = 0, .cls = CORUN_CLASS_UNKNOWN, .weight = 1, .cpu = -1};
    int cpu = -1, err;

    *dense = -1;
    if (a->cpus) {
        size_t bad = 0;

        err = corun_cpuset_parse(set, a->cpus, &bad);
        if (err || corun_cpuset_count(set) == 0)
            return cli_usage_error("run", "--cpus '%s': not a CPU list (at offset %zu)", a->cpus,
                                   bad);
        return check_usable(a->cpus, set);
    }
    t.ipc = t.freq_ratio = t.llc_mpki = t.llc_miss_ratio = t.mem_bw_bps = t.cpu_util = NAN;
    if ((err = cli_topo_load("run", NULL, NULL, topo)))
        return err;
    {
        struct corun_snapshot snap = {.topo = *topo, .ntasks = 1, .tasks = &t, .seed = 1};
        struct corun_plan plan = {.ntasks = 1, .cpu = &cpu};

        err = pol->place(&snap, &plan);
    }
    if (!err && cpu >= 0)
        err = cli_dense_to_set(*topo, cpu, set);
    if (err) {
        cli_error("run", "policy %s: %s", pol->name, corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    *dense = cpu;
    return 0;
}

/*
 * A policy places one task on one CPU; a command that turns out to keep N
 * threads busy gets the smallest domain around that CPU (core, L2, L3, NUMA node,
 * package, machine) with at least N usable CPUs, so a parallel program is
 * not squeezed onto one CPU. Returns true when @set grew.
 */
static bool widen(const struct corun_topo *topo, int dense, unsigned nthreads,
                  struct corun_cpuset *set)
{
    if (!topo || dense < 0 || nthreads <= corun_cpuset_count(set))
        return false;
    for (int l = CORUN_LEVEL_CORE; l <= CORUN_LEVEL_MACHINE; l++) {
        struct corun_cpuset wide = {0};
        bool grew;

        if (corun_cpuset_init(&wide, 64))
            return false;
        for (unsigned c = 0; c < corun_topo_ncpus(topo); c++) {
            const struct corun_topo_cpu *tc = corun_topo_cpu(topo, c);

            if (tc->usable && corun_topo_shares(topo, (unsigned)dense, c, (enum corun_level)l))
                corun_cpuset_set(&wide, tc->os_index);
        }
        grew = corun_cpuset_count(&wide) > corun_cpuset_count(set);
        if (grew && (corun_cpuset_count(&wide) >= nthreads || l == CORUN_LEVEL_MACHINE)) {
            corun_cpuset_copy(set, &wide);
            corun_cpuset_release(&wide);
            return true;
        }
        corun_cpuset_release(&wide);
    }
    return false;
}

/* Each thread's CPU demand (ns) at the last look, to tell busy threads
 * from the idle ones runtimes keep (a Go or Java program has dozens). A
 * thread not seen at a look has exited and is dropped, so that a build
 * starting thousands of short processes does not grow the table. */
struct thread_tick {
    pid_t tid;
    bool seen; /* at the look in progress */
    unsigned long long ticks;
};

struct thread_ticks {
    unsigned n, cap;
    struct thread_tick *v;
};

/* Nanoseconds thread @tid of @pid has run or waited to run (schedstat):
 * what it wanted of a CPU, whether or not it got one. 0 when unreadable. */
static unsigned long long thread_demand(pid_t pid, const char *tid)
{
    unsigned long long run = 0, wait = 0;
    char path[300];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, tid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &run, &wait) != 2)
        run = wait = 0;
    fclose(f);
    return run + wait;
}

/* Records @now for thread @tid; true when it wanted a CPU at least half of
 * the last @interval_ns (a thread new to the table counts as not busy). */
static bool thread_busy(struct thread_ticks *tt, pid_t tid, unsigned long long now,
                        unsigned long long interval_ns)
{
    unsigned i;

    for (i = 0; i < tt->n && tt->v[i].tid != tid; i++)
        ;
    if (i < tt->n) {
        bool busy = now - tt->v[i].ticks >= interval_ns / 2;

        tt->v[i].ticks = now;
        tt->v[i].seen = true;
        return busy;
    }
    if (tt->n == tt->cap) {
        unsigned cap = tt->cap ? 2 * tt->cap : 16;
        struct thread_tick *v = realloc(tt->v, cap * sizeof(*v));

        if (!v)
            return false;
        tt->v = v;
        tt->cap = cap;
    }
    tt->v[tt->n++] = (struct thread_tick){.tid = tid, .seen = true, .ticks = now};
    return false;
}

/* Threads of the @n processes @pids (the command and what it started)
 * that wanted a CPU (ran or waited to) at least half the time since the
 * last call, @interval_ns ago; a thread's first look counts it not busy. */
static unsigned busy_threads(const pid_t *pids, unsigned n, struct thread_ticks *tt,
                             unsigned long long interval_ns)
{
    unsigned busy = 0, kept = 0;

    for (unsigned i = 0; i < tt->n; i++)
        tt->v[i].seen = false;
    for (unsigned p = 0; p < n; p++) {
        char path[64];
        struct dirent *d;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%d/task", (int)pids[p]);
        if (!(dir = opendir(path)))
            continue;
        while ((d = readdir(dir))) {
            pid_t tid = (pid_t)atoi(d->d_name);

            if (tid > 0)
                busy += thread_busy(tt, tid, thread_demand(pids[p], d->d_name), interval_ns);
        }
        closedir(dir);
    }
    for (unsigned i = 0; i < tt->n; i++)
        if (tt->v[i].seen)
            tt->v[kept++] = tt->v[i];
    tt->n = kept;
    return busy;
}

static void print_report(FILE *f, const struct run_args *a, const struct run_measure *m,
                         const char *policy, const char *placed, int status)
{
    fprintf(f, "\n corun run '");
    for (char **p = a->argv; *p; p++)
        fprintf(f, "%s%s", p == a->argv ? "" : " ", *p);
    fprintf(f, "' (policy %s, CPUs %s, counters %s):\n\n", policy, placed,
            run_measure_backend(NULL, 0) ? run_measure_backend(NULL, 0) : "none");
    if (WIFSIGNALED(status))
        fprintf(f, "  %14s  killed by signal\n", strsignal(WTERMSIG(status)));
    else
        fprintf(f, "  %14d  exit status\n", WEXITSTATUS(status));
    fprintf(f, "  %14.3f  seconds wall time\n", m->wall_s);
    fprintf(f, "  %14.3f  seconds CPU time (user %.3f, sys %.3f)\n", m->cpu_s, m->user_s, m->sys_s);
    for (unsigned i = 0; i < m->nmetrics; i++) {
        const struct run_metric *r = &m->metrics[i];

        if (r->missing)
            continue;
        if (r->value == floor(r->value) && fabs(r->value) < 1e15)
            fprintf(f, "  %14.0f  %s%s%s\n", r->value, r->name, r->unit[0] ? " " : "", r->unit);
        else
            fprintf(f, "  %14.3f  %s%s%s\n", r->value, r->name, r->unit[0] ? " " : "", r->unit);
    }
    /* Missing figures, grouped by reason: never printed as numbers. */
    for (unsigned i = 0; i < m->nmetrics; i++) {
        const char *why = m->metrics[i].missing;
        bool first = true;

        if (!why)
            continue;
        for (unsigned k = 0; k < i && first; k++)
            first = !(m->metrics[k].missing && !strcmp(m->metrics[k].missing, why));
        if (!first)
            continue;
        fprintf(f, "  %14s  ", "<missing>");
        for (unsigned k = i, n = 0; k < m->nmetrics; k++)
            if (m->metrics[k].missing && !strcmp(m->metrics[k].missing, why))
                fprintf(f, "%s%s", n++ ? ", " : "", m->metrics[k].name);
        fprintf(f, ": %s\n", why);
    }
    fputc('\n', f);
}

void cli_json_metrics(struct json *j, const struct run_measure *m);
void cli_json_metrics(struct json *j, const struct run_measure *m)
{
    json_key(j, "metrics");
    json_obj_begin_inline(j);
    for (unsigned i = 0; i < m->nmetrics; i++)
        json_kdouble(j, m->metrics[i].name, m->metrics[i].value);
    json_obj_end(j);
}

/* The --json document, on @f (opened before the command started). */
static void write_json(FILE *f, const struct run_args *a, const struct run_measure *m,
                       const char *policy, const char *placed, int status)
{
    struct json j;

    json_init(&j, f);
    json_obj_begin(&j);
    json_key(&j, "command");
    json_arr_begin_inline(&j);
    for (char **p = a->argv; *p; p++)
        json_str(&j, *p);
    json_arr_end(&j);
    json_kstr(&j, "policy", policy);
    json_kstr(&j, "cpus", placed);
    json_kstr(&j, "sense", run_measure_backend(NULL, 0));
    json_kint_or_null(&j, "exit_status", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    json_kint_or_null(&j, "signal", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    json_kdouble(&j, "wall_s", m->wall_s);
    json_kdouble(&j, "cpu_s", m->cpu_s);
    cli_json_metrics(&j, m);
    json_key(&j, "missing");
    json_obj_begin_inline(&j);
    for (unsigned i = 0; i < m->nmetrics; i++)
        if (m->metrics[i].missing)
            json_kstr(&j, m->metrics[i].name, m->metrics[i].missing);
    json_obj_end(&j);
    json_obj_end(&j);
    json_end(&j);
}

/* What the wait loop keeps placing. */
struct run_place {
    const struct corun_act_ops *ops;
    void *act;
    struct corun_cpuset *set;
    const struct corun_topo *topo; /* NULL: --cpus, never widened */
    int dense;
    char *placed; /* the report's "CPUs" */
    struct run_measure *m;
    size_t placed_len;
};

/* Most processes of a command's tree looked at: a build's jobs, a
 * server's workers. */
#define RUN_TREE_MAX 4096

/* The tree is found by reading every process's parent (/proc/N/stat),
 * about 8 us a process on the 2-vCPU guest: every half second for the
 * first RUN_TREE_EAGER_NS, when a script starts its work, then every
 * RUN_TREE_EVERY_NS, so that a long run on a machine of thousands of
 * processes costs a fraction of a percent of a CPU. Processes started
 * between two looks inherit the placement of their parent. */
#define RUN_TREE_EAGER_NS 4000000000ull
#define RUN_TREE_EVERY_NS 2000000000ull

static unsigned long long mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/*
 * Waits for @pid, forwarding SIGINT/SIGTERM/SIGHUP, and every half second
 * re-placing the command's threads born since; at each look at its tree
 * (RUN_TREE_EAGER_NS) it widens the placement to the number of busy
 * threads among all its processes (a shell script or `make -j8` keeps its
 * children busy, not itself) and places every one of them, as the
 * processes started before a widening must be reached too.
 * SIGTERM and SIGHUP go to the processes it started as well, as systemd
 * stops a service's processes, so that none outlives the run; SIGINT
 * from a terminal already reaches the whole foreground group, and goes to
 * the command alone. Returns the wait status and fills @ru.
 */
static int wait_child(pid_t pid, struct run_place *pl, struct rusage *ru)
{
    struct timespec tick = {.tv_sec = 0, .tv_nsec = 500000000};
    unsigned long long start = mono_ns(), last = start;
    struct thread_ticks tt = {0};
    sigset_t sigs;
    int status = 0;

    sigemptyset(&sigs);
    sigaddset(&sigs, SIGCHLD);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    for (;;) {
        siginfo_t si = {0};
        pid_t *tree = NULL;
        int sig, n = 0; /* the processes of @tree, when looked at */

        /* Exited: read its counters while it is a zombie, then reap it. */
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
            run_measure_exited(pl->m);
            wait4(pid, &status, 0, ru);
            break;
        }
        sig = sigtimedwait(&sigs, NULL, &tick);
        if (sig == SIGTERM || sig == SIGHUP) {
            /* The command first, then what it started, each once. */
            n = job_tree_pids(pid, &tree, RUN_TREE_MAX);
            for (int i = 0; i < n; i++)
                kill(tree[i], sig);
            if (n < 0)
                kill(pid, sig);
        } else if (sig == SIGINT) {
            kill(pid, sig);
        } else if (sig < 0 && pl->ops && corun_cpuset_count(pl->set)) {
            bool follow = pl->ops->flags & CORUN_ACT_CHILDREN_FOLLOW;
            unsigned long long now = mono_ns();

            if (now - start < RUN_TREE_EAGER_NS || now - last >= RUN_TREE_EVERY_NS) {
                unsigned busy;

                if ((n = job_tree_pids(pid, &tree, RUN_TREE_MAX)) < 0)
                    continue;
                busy = busy_threads(tree, (unsigned)n, &tt, now - last);
                last = now;
                if (widen(pl->topo, pl->dense, busy, pl->set)) {
                    corun_cpuset_format(pl->set, pl->placed, pl->placed_len);
                    if (cli_verbose)
                        fprintf(stderr, "corun run: %u busy threads: widened to CPUs %s\n", busy,
                                pl->placed);
                }
            }
            /* Its threads born since, and the processes it started (a
             * cgroup's are in it already). ESRCH: it just exited. */
            if (n == 0 || follow)
                pl->ops->apply(pl->act, pid, pl->set);
            else
                for (int i = 0; i < n; i++)
                    pl->ops->apply(pl->act, tree[i], pl->set);
        }
        free(tree);
    }
    free(tt.v);
    return status;
}

static int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {{"policy", required_argument, NULL, 'p'},
                                             {"cpus", required_argument, NULL, 'c'},
                                             {"actuator", required_argument, NULL, 'a'},
                                             {"thp", no_argument, NULL, 't'},
                                             {"json", required_argument, NULL, 'J'},
                                             {"journal", required_argument, NULL, 'j'},
                                             {"journal-dir", required_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct run_args a = {0};
    const struct corun_policy *pol;
    const struct corun_act_ops *ops = NULL;
    struct corun_cpuset set = {0};
    struct spawn_opts so = {0};
    struct run_measure m;
    struct rusage ru = {0};
    struct spawn sp;
    sigset_t sigs, old;
    char jdir[4096], placed[256] = "any (not pinned)", why[512];
    struct corun_topo *topo = NULL;
    void *act = NULL;
    FILE *json_f = NULL;
    int c, rc, status, err, dense = -1;

    optind = 1;
    while ((c = getopt_long(argc, argv, "+p:c:a:tJ:j:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            a.policy = optarg;
            break;
        case 'c':
            a.cpus = optarg;
            break;
        case 'a':
            a.actuator = optarg;
            break;
        case 't':
            a.thp = true;
            break;
        case 'J':
            a.json = optarg;
            break;
        case 'j':
            a.journal = optarg;
            break;
        case 'h':
            cli_usage(stdout, "run");
            return CLI_EXIT_OK;
        default:
            return cli_usage_error("run", "bad option");
        }
    }
    if (optind >= argc)
        return cli_usage_error("run", "no command given (corun run [OPTIONS] -- CMD [ARGS])");
    a.argv = argv + optind;
    cli_test_faults();
    if (!(pol = cli_policy_get("run", a.policy)))
        return CLI_EXIT_USAGE;
    if (corun_cpuset_init(&set, 64))
        return CLI_EXIT_FAIL;
    if ((rc = choose(&a, pol, &set, &topo, &dense)))
        goto out_set;
    if (corun_cpuset_count(&set)) {
        corun_cpuset_format(&set, placed, sizeof(placed));
        rc = cli_act_open("run", a.actuator, cli_journal_dir(a.journal, jdir, sizeof(jdir)),
                          a.journal, &ops, &act);
        if (rc)
            goto out_set;
    }
    if (a.json && (rc = cli_json_file_open("run", a.json, &json_f)))
        goto out_act;

    /* Signals are taken synchronously (sigtimedwait) from here on; the
     * child unblocks them before exec. A reader of --json - that goes away
     * (EPIPE) must not stop the restore or change the exit status; the
     * command gets SIGPIPE back by default (spawn.c). */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGCHLD);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    sigprocmask(SIG_BLOCK, &sigs, &old);
    so.argv = a.argv;
    so.thp = a.thp;
    if ((err = spawn_start(&so, &sp))) {
        cli_error("run", "fork: %s", corun_strerror(err));
        rc = CLI_EXIT_FAIL;
        goto out_mask;
    }
    run_measure_start(&m, sp.pid);
    if (ops && (err = ops->apply(act, sp.pid, &set))) {
        /* Never fatal: the command runs where the kernel puts it. */
        cli_error("run", "placing on CPUs %s (%s): %s; running unplaced", placed, ops->name,
                  corun_strerror(err));
        snprintf(placed, sizeof(placed), "any (placement failed)");
    }
    if ((err = spawn_release(&sp, why, sizeof(why)))) {
        cli_error("run", "%s", why);
        wait4(sp.pid, &status, 0, &ru);
        rc = strstr(why, "--thp") ? CLI_EXIT_FAIL : 127;
        goto out_restore;
    }
    {
        struct run_place pl = {.ops = ops,
                               .act = act,
                               .set = &set,
                               .topo = topo,
                               .dense = dense,
                               .placed = placed,
                               .placed_len = sizeof(placed),
                               .m = &m};

        status = wait_child(sp.pid, &pl, &ru);
    }
    run_measure_finish(&m, &ru);
    print_report(stderr, &a, &m, a.cpus ? "none (--cpus)" : pol->name, placed, status);
    if (json_f)
        write_json(json_f, &a, &m, a.cpus ? NULL : pol->name, placed, status);
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

out_restore:
    if (ops && (err = ops->restore_all(act)))
        cli_error("run", "restoring the placement: %s (journal kept; try corun restore)",
                  corun_strerror(err));
out_mask:
    sigprocmask(SIG_SETMASK, &old, NULL);
    cli_json_file_close(json_f);
out_act:
    if (ops)
        ops->close(act);
out_set:
    corun_cpuset_release(&set);
    corun_topo_free(topo);
    run_measure_shutdown();
    return rc;
}

CLI_COMMAND(run, cmd_run, "run one command placed by a policy, and measure it",
            "corun run [--policy P] [--cpus LIST] [--actuator affinity|cpuset|dryrun]\n"
            "          [--thp] [--json FILE] [--journal-dir DIR] -- CMD [ARGS]")
