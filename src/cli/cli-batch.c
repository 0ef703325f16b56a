/*
 * cli-batch.c — `corun batch`: a queue of shell commands run N at a time,
 * GNU parallel style, with co-runners chosen to interfere little.
 *
 * The loop, in the manner of sched_ext's user-space halves: options → signals
 * blocked and taken synchronously (sigtimedwait) → while jobs remain: start
 * jobs while slots are free (which one and where: batch-sched.c and the
 * policy), wait for a child, a signal or the next tick (learn CPU use, pick
 * up new threads, step the engine) → teardown: restore every placement,
 * reap every process, report.
 *
 * Re-placing running jobs is the engine's (corun/engine.h), as in `corun
 * sim` and the daemon: one engine per run, over the sensor the jobs are
 * measured with and the batch's own actuator (so the journal and the final
 * restore_all cover its moves). A job joins it when it starts pinned (the
 * engine adopts the chooser's CPU, so its hysteresis and move cap apply from
 * the start) and leaves it when it exits or is unpinned; the engine moves
 * the job's leader, the tick then moves the rest of its process group.
 *
 * Each job is `/bin/sh -c LINE` in its own process group, with stdin from
 * /dev/null and SIGPIPE by default (corun itself ignores it, so that a
 * reader that goes away costs only the table); corun is a child subreaper,
 * so whatever a job leaves behind is reparented to corun, not to init: when
 * a job's shell exits the rest of its group gets SIGTERM, and nothing
 * outlives the batch. What corun had before the first job (the background
 * jobs of a shell that exec'd it) is left alone. SIGINT/SIGTERM are passed
 * on to every running job; corun waits for them, restores, and exits
 * 130/143.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/job-group.h"
#include "cli/place.h"
#include "cli/spawn.h"
#include "cli/topo-load.h"

#define TICK_NS         250000000L /* learning and thread pick-up period */
#define MATURE_S        1.0        /* a job's CPU use means something after this */
#define WINDOW          8          /* queued jobs considered at each start */
#define STOP_GRACE_S    10.0       /* after forwarding a signal, then SIGKILL */
#define UNPIN_WAIT      0.5        /* share of its CPU demand a pinned job may spend waiting */
#define INHERITED_MAX   4096       /* processes corun had before the batch, at most */

static unsigned count_state(const struct batch *b, enum job_state s)
{
    unsigned n = 0;

    for (unsigned i = 0; i < b->njobs; i++)
        n += b->runs[i].state == s;
    return n;
}

/* The profile the chooser and the policy see for job @r, as task @id. */
static void job_profile(const struct batch *b, const struct job_run *r, unsigned id, int cpu,
                        struct corun_task_profile *p)
{
    const struct sched_learned *l = sched_book_find(&b->book, r->key);
    enum corun_class cls = r->cls;
    double util = NAN;

    if (r->state == JOB_RUNNING && r->live_t - r->start_s >= MATURE_S)
        util = fmin(1.0, r->live_demand);
    else if (l)
        util = l->cpu_util;
    if (cls == CORUN_CLASS_UNKNOWN && l)
        cls = l->cls;
    sched_profile(p, id, cls, r->spec->weight, util, cpu);
}

/* Profiles of the running jobs into @tasks (room for njobs + 1); their count. */
static unsigned running_profiles(const struct batch *b, struct corun_task_profile *tasks)
{
    unsigned n = 0;

    for (unsigned i = 0; i < b->njobs; i++) {
        struct job_run *r = &b->runs[i];

        if (r->state != JOB_RUNNING)
            continue;
        job_profile(b, r, n, r->cpu, &tasks[n]);
        n++;
    }
    return n;
}

/*
 * The expected cost of task @c beside the running tasks if it waited: the
 * same neighbours' places taken by a typical other queued job. (With no
 * other queued job, waiting changes nothing: the cost now.)
 */
static double cost_later(struct batch *b, const struct job_run *cand,
                         const struct corun_task_profile *c,
                         const struct corun_task_profile *running, unsigned nrun)
{
    double sum = 0;
    unsigned n = 0;

    for (unsigned i = 0; i < b->njobs && n < 64; i++) {
        const struct job_run *q = &b->runs[i];

        if (q->state != JOB_QUEUED || q == cand)
            continue;
        for (unsigned k = 0; k < nrun; k++) {
            struct corun_task_profile qp;

            job_profile(b, q, 0, running[k].cpu, &qp);
            sum += sched_pair_cost(b->topo, c, &qp);
        }
        n++;
    }
    return n ? sum / n : sched_cost_with(b->topo, c, running, nrun);
}

/* Whether a running job is pinned to dense CPU @cpu. */
static bool cpu_held(const struct corun_task_profile *running, unsigned nrun, int cpu)
{
    for (unsigned k = 0; k < nrun; k++)
        if (running[k].cpu == cpu)
            return true;
    return false;
}

/*
 * The CPU for a job about to start, given the policy's choice @want. The
 * policy re-places every task, so its choice for the newcomer may be a CPU
 * it means to empty by moving a running job — a move the chooser does not
 * make. Starting the job there would time-share it with that running job
 * while another CPU idles. So a CPU held by a running pinned job is replaced
 * by the free usable CPU with the least predicted interference beside the
 * running jobs; when no CPU is free (more jobs than CPUs), @want stands.
 */
static int free_cpu_for(const struct batch *b, struct corun_task_profile *t,
                        const struct corun_task_profile *running, unsigned nrun, int want)
{
    unsigned ncpu = corun_topo_ncpus(b->topo);
    double best_cost = INFINITY;
    int best = -1;

    if (want < 0 || !cpu_held(running, nrun, want))
        return want;
    for (unsigned c = 0; c < ncpu; c++) {
        double cost;

        if (!corun_topo_cpu(b->topo, c)->usable || cpu_held(running, nrun, (int)c))
            continue;
        t->cpu = (int)c;
        cost = sched_cost_with(b->topo, t, running, nrun);
        if (cost < best_cost - 1e-12) {
            best_cost = cost;
            best = (int)c;
        }
    }
    t->cpu = want;
    return best >= 0 ? best : want;
}

/*
 * Chooses the next job to start and its dense CPU (-1: not pinned). Among
 * the first WINDOW queued jobs, the policy places each beside the running
 * ones; each gets the interference predicted with them now, less what it
 * would meet later among the jobs still queued. The lowest wins: a
 * memory-bound job starts beside a compute-bound one rather than leaving all
 * the compute-bound jobs to be used up first and the memory-bound ones to
 * meet each other at the end. Ties go to the heavier, then the earlier job.
 * The first queued job passed over 2*jmax times goes next regardless, so no
 * job starves. First in, first out for the `linux` policy.
 */
static struct job_run *pick_next(struct batch *b, struct corun_task_profile *tasks, int *cpu_out)
{
    unsigned nrun = running_profiles(b, tasks), seen = 0;
    int *plan_cpu = calloc(nrun + 1, sizeof(int));
    struct job_run *best = NULL, *head = NULL;
    double best_cost = INFINITY;
    int best_cpu = -1;

    if (!plan_cpu)
        return NULL;
    for (unsigned i = 0; i < b->njobs && seen < WINDOW; i++) {
        struct job_run *r = &b->runs[i];
        struct corun_snapshot snap = {
            .topo = b->topo, .ntasks = nrun + 1, .tasks = tasks, .seed = 1};
        struct corun_plan plan = {.ntasks = nrun + 1, .cpu = plan_cpu};
        double cost;
        int cpu = -1;

        if (r->state != JOB_QUEUED)
            continue;
        if (!head)
            head = r;
        seen++;
        job_profile(b, r, nrun, -1, &tasks[nrun]);
        if (b->pol->place(&snap, &plan) == 0)
            cpu = free_cpu_for(b, &tasks[nrun], tasks, nrun, plan.cpu[nrun]);
        tasks[nrun].cpu = cpu;
        cost = sched_cost_with(b->topo, &tasks[nrun], tasks, nrun);
        if (!b->fifo)
            cost -= cost_later(b, r, &tasks[nrun], tasks, nrun);
        if (!best || cost < best_cost - 1e-9 ||
            (cost < best_cost + 1e-9 && r->spec->weight > best->spec->weight)) {
            best = r;
            best_cost = cost;
            best_cpu = cpu;
        }
        if (b->fifo || head->skipped >= 2 * b->jmax)
            break;
    }
    free(plan_cpu);
    /* Jobs passed over age towards their turn. */
    for (unsigned i = 0; best && &b->runs[i] < best; i++)
        if (b->runs[i].state == JOB_QUEUED)
            b->runs[i].skipped++;
    *cpu_out = best_cpu;
    return best;
}

/* Applies dense CPU @cpu to process @pid of job @r; records it for restore. */
static int place_pid(struct batch *b, struct job_run *r, pid_t pid, int cpu)
{
    struct corun_cpuset set = {0};
    int err = cli_dense_to_set(b->topo, cpu, &set);

    if (!err)
        err = b->ops->apply(b->act, pid, &set);
    if (!err) {
        bool known = false;

        for (unsigned i = 0; i < r->napplied; i++)
            known |= r->applied[i] == pid;
        if (!known && r->napplied < sizeof(r->applied) / sizeof(r->applied[0]))
            r->applied[r->napplied++] = pid;
        corun_cpuset_format(&set, r->cpus, sizeof(r->cpus));
    }
    corun_cpuset_release(&set);
    return err;
}

static void start_job(struct batch *b, struct job_run *r, int cpu)
{
    struct spawn_opts so = {.shell_cmd = r->spec->command, .new_pgroup = true, .null_stdin = true};
    struct spawn sp;
    char why[512];
    int err;

    r->start_s = run_now_s();
    r->live_t = r->start_s;
    if ((err = spawn_start(&so, &sp))) {
        cli_error("batch", "job %s (line %u): cannot start: fork: %s", r->spec->name, r->spec->line,
                  corun_strerror(err));
        r->not_started = true;
        r->state = JOB_DONE;
        b->failed++;
        return;
    }
    r->pid = sp.pid;
    r->state = JOB_RUNNING;
    r->cpu = -1;
    snprintf(r->cpus, sizeof(r->cpus), "any");
    run_measure_start(&r->m, sp.pid);
    if (cpu >= 0 && b->ops) {
        err = place_pid(b, r, sp.pid, cpu);
        if (err) {
            /* Never fatal: the job runs where the kernel puts it. */
            cli_error("batch", "job %s: placing on CPU %u (%s): %s; running unplaced",
                      r->spec->name, corun_topo_cpu(b->topo, (unsigned)cpu)->os_index, b->ops->name,
                      corun_strerror(err));
            b->placement_errors++;
        } else {
            r->cpu = cpu;
            batch_engine_add(b, r);
        }
    }
    if ((err = spawn_release(&sp, why, sizeof(why)))) {
        cli_error("batch", "job %s (line %u): cannot start: %s", r->spec->name, r->spec->line, why);
        r->not_started = true;
    }
    if (cli_verbose)
        fprintf(stderr, "corun batch: started %s (pid %d) on CPUs %s\n", r->spec->name, (int)r->pid,
                r->cpus);
}

static void finish_job(struct batch *b, struct job_run *r, int status, const struct rusage *ru)
{
    double util;

    run_measure_finish(&r->m, ru);
    r->status = status;
    r->end_s = run_now_s();
    r->state = JOB_DONE;
    /* What it wanted of a CPU: its CPU time plus the time it waited for
     * one, per second; on a crowded machine CPU time alone makes a busy job
     * look idle. A short job never sampled: if it was preempted more often
     * than it slept, it was busy. */
    util = r->m.wall_s > 0 ? fmin(1.0, (r->m.cpu_s + r->live_delay_s) / r->m.wall_s) : NAN;
    {
        const struct run_metric *rss = run_measure_metric(&r->m, "max_rss_bytes");
        const struct run_metric *vol = run_measure_metric(&r->m, "voluntary_switches");
        const struct run_metric *inv = run_measure_metric(&r->m, "involuntary_switches");
        /* The private footprint sampled while it ran; the whole peak RSS
         * (libraries included) only for a job too short to be sampled. */
        double mem = r->live_rss > 0 ? r->live_rss : rss ? rss->value : NAN;

        if (r->live_delay_s == 0 && vol && inv && vol->value <= inv->value)
            util = 1.0;
        const struct run_metric *mpki = run_measure_metric(&r->m, "llc_mpki");
        const struct run_metric *ipc = run_measure_metric(&r->m, "ipc");

        r->cls = sched_learn_class(r->spec->cls, util, mem > 0 ? mem : NAN, &b->caches);
        /* Counters, where the sense box has them, outrank the footprint. */
        r->cls = sched_class_from_counters(r->spec->cls, util, mpki ? mpki->value : NAN,
                                           ipc ? ipc->value : NAN, r->cls);
    }
    sched_book_learn(&b->book, r->key, r->cls, util);
    for (unsigned i = 0; b->ops && i < r->napplied; i++)
        b->ops->restore(b->act, r->applied[i]);
    r->napplied = 0;
    if (batch_job_code(r) != 0)
        b->failed++;
    if (cli_verbose)
        fprintf(stderr, "corun batch: %s exited %d after %.3f s\n", r->spec->name,
                batch_job_code(r), r->m.wall_s);
}

static struct job_run *running_by_pid(struct batch *b, pid_t pid)
{
    for (unsigned i = 0; i < b->njobs; i++)
        if (b->runs[i].state == JOB_RUNNING && b->runs[i].pid == pid)
            return &b->runs[i];
    return NULL;
}

/* Whether @pid is one of the processes corun had before the batch. */
static bool inherited_has(const struct batch_inherited *in, pid_t pid)
{
    for (unsigned i = 0; in && i < in->n; i++)
        if (in->pid[i] == pid)
            return true;
    return false;
}

/* @pid, reaped, is forgotten: its number may be reused by a leftover. */
static void inherited_forget(struct batch_inherited *in, pid_t pid)
{
    for (unsigned i = 0; in && i < in->n; i++)
        if (in->pid[i] == pid) {
            in->pid[i] = in->pid[--in->n];
            return;
        }
}

/*
 * Records in @in the children corun has before any job starts, and their
 * descendants (one of them may leave orphans, which come to us, the
 * subreaper). The common case, no child, costs one small read where the
 * kernel lists children. When /proc cannot be read or memory runs out,
 * nothing is recorded: the drain then treats them as it always did.
 */
static void inherited_scan(struct batch_inherited *in)
{
    pid_t *pids = NULL;
    int n = job_children(getpid(), &pids);

    free(pids);
    in->pid = NULL;
    in->n = 0;
    if (n <= 0)
        return;
    n = job_tree_pids(getpid(), &pids, INHERITED_MAX);
    if (n > 1) {
        /* pids[0] is corun itself. */
        memmove(pids, pids + 1, (size_t)(n - 1) * sizeof(*pids));
        in->pid = pids;
        in->n = (unsigned)n - 1;
    } else {
        free(pids);
    }
}

/* Reaps every child that has exited: job leaders end their job (the rest of
 * their group is told to go while the zombie leader still holds the group
 * id, so the signal cannot reach a recycled group); anything else is a
 * leftover reparented to us, or a process corun had before the batch. */
static void reap(struct batch *b)
{
    for (;;) {
        siginfo_t si = {0};
        struct rusage ru = {0};
        struct job_run *r;
        int status = 0;

        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
            return;
        r = running_by_pid(b, si.si_pid);
        if (r) {
            run_measure_exited(&r->m); /* its counters, while it is a zombie */
            batch_engine_drop(b, r);
            kill(-r->pid, SIGTERM);
        }
        if (wait4(si.si_pid, &status, 0, &ru) < 0)
            return;
        if (r)
            finish_job(b, r, status, &ru);
        else
            inherited_forget(b->inherited, si.si_pid);
    }
}

/* Places every process of job @r again (the affinity actuator: each one's
 * threads, including those born or re-masked since), or its leader (cpuset:
 * the rest follow). */
static void replace_job_threads(struct batch *b, struct job_run *r)
{
    pid_t pids[64];
    unsigned n = 1;

    pids[0] = r->pid;
    if (!(b->ops->flags & CORUN_ACT_CHILDREN_FOLLOW))
        n = job_group_pids(r->pid, pids, 64);
    for (unsigned i = 0; i < n; i++)
        place_pid(b, r, pids[i], r->cpu); /* ESRCH: it just exited */
}

/*
 * A pinned job that spends most of what it asks of a CPU waiting for it is
 * sharing its CPU with work corun does not control (or more jobs than
 * CPUs): pinning then only keeps the kernel from moving it somewhere idle.
 * Such a job gets every usable CPU back for the rest of its run; which jobs
 * run together still follows the co-runner choice.
 */
static void unpin_job(struct batch *b, struct job_run *r)
{
    struct corun_cpuset all = {0};
    pid_t pids[64];
    unsigned n = 1;

    if (corun_topo_usable_set(b->topo, &all) || corun_cpuset_count(&all) == 0)
        goto out_release;
    batch_engine_drop(b, r);
    pids[0] = r->pid;
    if (!(b->ops->flags & CORUN_ACT_CHILDREN_FOLLOW))
        n = job_group_pids(r->pid, pids, 64);
    for (unsigned i = 0; i < n; i++)
        b->ops->apply(b->act, pids[i], &all); /* ESRCH: it just exited */
    if (cli_verbose)
        fprintf(stderr, "corun batch: %s waits %.0f%% of the time on CPU %s: unpinned\n",
                r->spec->name, 100 * r->live_delay_s / (r->live_cpu_s + r->live_delay_s), r->cpus);
    corun_cpuset_format(&all, r->cpus, sizeof(r->cpus));
    r->cpu = -1;
    r->unpinned = true;
    b->unpinned++;
out_release:
    corun_cpuset_release(&all);
}

/*
 * One engine interval: sample, learn, and maybe move some jobs' leaders
 * (hysteresis and the move cap are the engine's). A moved job's other
 * processes follow here; a job the plan gives back to the kernel is
 * unpinned whole.
 */
static void engine_tick(struct batch *b)
{
    int err = corun_engine_step(b->eng);

    if (err && cli_verbose)
        fprintf(stderr, "corun batch: engine step: %s\n", corun_strerror(err));
    for (unsigned i = 0; i < b->njobs; i++) {
        struct job_run *r = &b->runs[i];
        int cpu;

        if (r->state != JOB_RUNNING || r->eng_idx < 0)
            continue;
        cpu = corun_engine_task_cpu(b->eng, (unsigned)r->eng_idx);
        if (cpu == r->cpu)
            continue;
        if (cpu < 0) {
            unpin_job(b, r);
            continue;
        }
        r->cpu = cpu;
        r->moves++;
        b->replacements++;
        replace_job_threads(b, r);
        if (cli_verbose)
            fprintf(stderr, "corun batch: engine moved %s to CPUs %s\n", r->spec->name, r->cpus);
    }
}

/* Learns CPU use, picks up new threads, and steps the engine now and then. */
static void tick(struct batch *b, uint64_t *next_engine_ns)
{
    unsigned n = 0, nrun = count_state(b, JOB_RUNNING);
    pid_t *pg = calloc(nrun + 1, sizeof(*pg));
    struct run_group_use *use = calloc(nrun + 1, sizeof(*use));
    struct job_run **rr = calloc(nrun + 1, sizeof(*rr));
    double now = run_now_s();

    if (!pg || !use || !rr)
        goto out_free;
    for (unsigned i = 0; i < b->njobs; i++)
        if (b->runs[i].state == JOB_RUNNING) {
            rr[n] = &b->runs[i];
            pg[n++] = b->runs[i].pid;
        }
    run_measure_groups(pg, n, use);
    for (unsigned i = 0; i < n; i++) {
        struct job_run *r = rr[i];
        double dt = now - r->live_t;

        /* Sums over live processes drop when one exits: skip that interval. */
        if (dt > 0.1 && use[i].cpu_s >= r->live_cpu_s && use[i].delay_s >= r->live_delay_s) {
            r->live_demand = (use[i].cpu_s - r->live_cpu_s + use[i].delay_s - r->live_delay_s) / dt;
            r->live_cpu_s = use[i].cpu_s;
            r->live_delay_s = use[i].delay_s;
            r->live_t = now;
        }
        if (use[i].rss > r->live_rss)
            r->live_rss = use[i].rss;
        if (now - r->start_s >= MATURE_S) {
            r->cls =
                sched_learn_class(r->spec->cls, fmin(1.0, r->live_demand), r->live_rss, &b->caches);
            batch_engine_tell_class(b, r);
        }
        if (r->cpu >= 0 && b->ops && r->napplied && now - r->start_s >= MATURE_S &&
            r->live_delay_s > UNPIN_WAIT * (r->live_cpu_s + r->live_delay_s))
            unpin_job(b, r);
        if (r->cpu >= 0 && b->ops && r->napplied)
            replace_job_threads(b, r);
    }
    if (b->eng && batch_engine_now_ns() >= *next_engine_ns) {
        *next_engine_ns = batch_engine_now_ns() + BATCH_ENGINE_EVERY_NS;
        engine_tick(b);
    }
out_free:
    free(pg);
    free(use);
    free(rr);
}

/* Whether a child that is not inherited is still there, exited or not
 * (false when the children cannot be listed: the drain cannot tell). */
static bool others_left(const struct batch *b)
{
    pid_t *kids;
    int n = job_children(getpid(), &kids);
    bool left = false;

    for (int i = 0; i < n && !left; i++)
        left = !inherited_has(b->inherited, kids[i]);
    free(kids);
    return left;
}

/* SIGKILLs every child that was not inherited: leftovers of the jobs in
 * groups of their own, reparented to us. */
static void kill_leftovers(const struct batch *b)
{
    pid_t *kids;
    int n = job_children(getpid(), &kids);

    for (int i = 0; i < n; i++)
        if (!inherited_has(b->inherited, kids[i]))
            kill(kids[i], SIGKILL);
    free(kids);
}

/*
 * After the last job: nothing of the batch's may outlive it. What corun had
 * before it (b->inherited) is neither killed nor waited for: the drain ends
 * when only those are left.
 */
static void drain(struct batch *b)
{
    double deadline = run_now_s() + 2.0;

    for (unsigned i = 0; i < b->njobs; i++) {
        siginfo_t si = {0};

        if (b->runs[i].pid > 0 &&
            waitid(P_PGID, (id_t)b->runs[i].pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
            kill(-b->runs[i].pid, SIGKILL); /* a member still holds the group id */
    }
    for (;;) {
        pid_t w = waitpid(-1, NULL, WNOHANG);

        if (w < 0 && errno == ECHILD)
            break;
        if (w > 0) {
            inherited_forget(b->inherited, w);
            continue;
        }
        if (b->inherited && b->inherited->n && !others_left(b))
            break;
        if (run_now_s() > deadline) {
            kill_leftovers(b);
            deadline = run_now_s() + 2.0;
        }
        {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 20000000};
            sigset_t s;

            sigemptyset(&s);
            sigaddset(&s, SIGCHLD);
            sigtimedwait(&s, NULL, &ts);
        }
    }
}

/* Runs the whole batch @b. Returns 0, or the signal that stopped it. */
static int batch_run(struct batch *b)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = TICK_NS};
    struct corun_task_profile *tasks = calloc(b->njobs + 1, sizeof(*tasks));
    double stop_deadline = 0, next_tick = 0;
    uint64_t next_engine_ns;
    bool killed = false;
    sigset_t sigs;

    if (!tasks)
        return -ENOMEM;
    batch_engine_open(b);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGCHLD);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    b->t0 = run_now_s();
    /* The engine's first step only takes the clock; its warm-up starts here. */
    if (b->eng)
        corun_engine_step(b->eng);
    next_engine_ns = batch_engine_now_ns() + BATCH_ENGINE_EVERY_NS;
    for (;;) {
        unsigned nrun = count_state(b, JOB_RUNNING);
        int sig;

        while (!b->stop_sig && nrun < b->jmax && count_state(b, JOB_QUEUED)) {
            int cpu = -1;
            struct job_run *r = pick_next(b, tasks, &cpu);

            if (!r)
                break;
            start_job(b, r, cpu);
            nrun = count_state(b, JOB_RUNNING);
        }
        if (nrun == 0 && (b->stop_sig || !count_state(b, JOB_QUEUED)))
            break;
        sig = sigtimedwait(&sigs, NULL, &ts);
        if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !b->stop_sig) {
            b->stop_sig = sig;
            stop_deadline = run_now_s() + STOP_GRACE_S;
            for (unsigned i = 0; i < b->njobs; i++)
                if (b->runs[i].state == JOB_RUNNING)
                    kill(-b->runs[i].pid, sig);
        }
        reap(b);
        if (b->stop_sig && !killed && run_now_s() > stop_deadline) {
            killed = true;
            for (unsigned i = 0; i < b->njobs; i++)
                if (b->runs[i].state == JOB_RUNNING)
                    kill(-b->runs[i].pid, SIGKILL);
        }
        if (!b->stop_sig && run_now_s() >= next_tick) {
            tick(b, &next_engine_ns);
            next_tick = run_now_s() + (double)TICK_NS * 1e-9;
        }
    }
    b->makespan_s = run_now_s() - b->t0;
    drain(b);
    batch_engine_close(b);
    free(tasks);
    return b->stop_sig;
}

static int batch_init(struct batch *b, const struct job_list *jobs, const char *policy_name,
                      const struct corun_policy *pol)
{
    memset(b, 0, sizeof(*b));
    b->runs = calloc(jobs->n ? jobs->n : 1, sizeof(*b->runs));
    if (!b->runs)
        return -ENOMEM;
    b->njobs = jobs->n;
    b->pol = pol;
    b->policy_name = pol->name;
    b->fifo = !strcmp(pol->name, "linux");
    for (unsigned i = 0; i < jobs->n; i++) {
        b->runs[i].spec = &jobs->jobs[i];
        b->runs[i].cls = jobs->jobs[i].cls;
        b->runs[i].cpu = -1;
        b->runs[i].eng_idx = -1;
        sched_key(jobs->jobs[i].command, b->runs[i].key, sizeof(b->runs[i].key));
    }
    return 0;
}

static void batch_release(struct batch *b)
{
    free(b->runs);
    sched_book_release(&b->book);
}

/* Reads the job file @path ("-": stdin). 0 or an exit status (2). */
static int load_jobs(const char *path, struct job_list *jobs)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
    const char *shown = strcmp(path, "-") ? path : "<stdin>";
    unsigned bad = 0;
    char why[256] = "";
    int err;

    if (!f) {
        cli_error("batch", "%s: %s", path, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    err = jobfile_parse(f, jobs, &bad, why, sizeof(why));
    if (f != stdin)
        fclose(f);
    if (err == -EINVAL) {
        cli_error("batch", "%s:%u: %s", shown, bad, why);
        return CLI_EXIT_USAGE;
    }
    if (err) {
        cli_error("batch", "%s: %s", shown, corun_strerror(err));
        return err == -ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
    }
    return 0;
}

struct batch_args {
    const char *policy, *compare, *json, *actuator, *journal, *file;
    unsigned long jobs;
    bool no_mem_follow;
};

static int parse_args(int argc, char **argv, struct batch_args *a)
{
    static const struct option longopts[] = {{"jobs", required_argument, NULL, 'j'},
                                             {"policy", required_argument, NULL, 'p'},
                                             {"compare", required_argument, NULL, 'C'},
                                             {"json", required_argument, NULL, 'J'},
                                             {"actuator", required_argument, NULL, 'a'},
                                             {"journal", required_argument, NULL, 'L'},
                                             {"journal-dir", required_argument, NULL, 'L'},
                                             {"no-mem-follow", no_argument, NULL, 'M'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "j:p:C:J:a:L:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            if (!cli_parse_uint(optarg, &a->jobs) || a->jobs == 0 || a->jobs > 4096)
                return cli_usage_error("batch", "-j '%s': not a number of jobs (1-4096)", optarg);
            break;
        case 'p':
            a->policy = optarg;
            break;
        case 'C':
            a->compare = optarg;
            break;
        case 'J':
            a->json = optarg;
            break;
        case 'a':
            a->actuator = optarg;
            break;
        case 'L':
            a->journal = optarg;
            break;
        case 'M':
            a->no_mem_follow = true;
            break;
        case 'h':
            cli_usage(stdout, "batch");
            return -1;
        default:
            return cli_usage_error("batch", "bad option");
        }
    }
    if (argc - optind > 1)
        return cli_usage_error("batch", "one job file at most ('%s' is extra)", argv[optind + 1]);
    a->file = optind < argc ? argv[optind] : "-";
    return 0;
}

static void write_json(FILE *f, const struct batch *b, const struct batch *cmp)
{
    struct json j;

    json_init(&j, f);
    json_obj_begin(&j);
    batch_json(&j, b);
    if (cmp) {
        json_key(&j, "compare");
        json_obj_begin(&j);
        batch_json(&j, cmp);
        json_kdouble(&j, "makespan_ratio",
                     b->makespan_s > 0 ? cmp->makespan_s / b->makespan_s : NAN);
        json_obj_end(&j);
    }
    json_obj_end(&j);
    json_end(&j);
}

static int cmd_batch(int argc, char **argv)
{
    struct batch_args a = {0};
    struct job_list jobs = {0};
    const struct corun_policy *pol, *cmp_pol = NULL;
    struct batch b, cmp;
    struct batch_inherited inherited;
    bool have_cmp = false;
    char jdir[4096];
    sigset_t sigs, old;
    FILE *out, *json_f = NULL;
    int rc, sig;

    if ((rc = parse_args(argc, argv, &a)))
        return rc < 0 ? CLI_EXIT_OK : rc;
    cli_test_faults();
    if (!(pol = cli_policy_get("batch", a.policy)))
        return CLI_EXIT_USAGE;
    if (a.compare && !(cmp_pol = cli_policy_get("batch", a.compare)))
        return CLI_EXIT_USAGE;
    if ((rc = load_jobs(a.file, &jobs)))
        goto out_jobs;
    if (a.json && (rc = cli_json_file_open("batch", a.json, &json_f)))
        goto out_jobs;
    if (batch_init(&b, &jobs, a.policy, pol)) {
        rc = CLI_EXIT_FAIL;
        goto out_json;
    }
    b.no_mem_follow = a.no_mem_follow;
    if ((rc = cli_topo_load("batch", NULL, NULL, &b.topo)))
        goto out_batch;
    sched_caches_of(b.topo, &b.caches);
    b.jmax = a.jobs ? (unsigned)a.jobs : corun_topo_info(b.topo)->usable_pus;
    if (!b.jmax)
        b.jmax = 1;
    rc = cli_act_open("batch", a.actuator, cli_journal_dir(a.journal, jdir, sizeof(jdir)),
                      a.journal, &b.ops, &b.act);
    if (rc)
        goto out_topo;
    /* Orphans of our jobs come to us, not to init: we reap them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* A reader that goes away (`| head`) must not stop the restore, the
     * --json FILE or the exit status: output to it is dropped (EPIPE).
     * Jobs get SIGPIPE back by default (spawn.c), as from a shell. */
    signal(SIGPIPE, SIG_IGN);
    inherited_scan(&inherited);
    b.inherited = &inherited;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGCHLD);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    sigprocmask(SIG_BLOCK, &sigs, &old);

    sig = batch_run(&b);
    if (!sig && cmp_pol && !batch_init(&cmp, &jobs, a.compare, cmp_pol)) {
        have_cmp = true;
        cmp.topo = b.topo;
        cmp.caches = b.caches;
        cmp.jmax = b.jmax;
        cmp.ops = b.ops;
        cmp.act = b.act;
        cmp.no_mem_follow = b.no_mem_follow;
        cmp.inherited = b.inherited;
        sig = batch_run(&cmp);
    }
    if (b.ops->restore_all(b.act))
        cli_error("batch",
                  "some placements could not be undone; the journal in %s keeps them "
                  "(corun restore)",
                  jdir);
    /* With --json -, the document owns stdout and the tables go to stderr. */
    out = a.json && !strcmp(a.json, "-") ? stderr : stdout;
    batch_print(out, &b);
    if (have_cmp) {
        batch_print(out, &cmp);
        fprintf(out, "\n  makespan %s %.3f s, %s %.3f s: ratio %s/%s %.3f\n", b.policy_name,
                b.makespan_s, cmp.policy_name, cmp.makespan_s, cmp.policy_name, b.policy_name,
                b.makespan_s > 0 ? cmp.makespan_s / b.makespan_s : NAN);
    }
    fflush(stdout);
    if (json_f)
        write_json(json_f, &b, have_cmp ? &cmp : NULL);
    if (sig) {
        cli_error("batch", "stopped by %s; running jobs were stopped and placements undone",
                  strsignal(sig));
        rc = 128 + sig;
    } else {
        rc = b.failed > 101 ? 101 : (int)b.failed;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(inherited.pid);
    if (have_cmp)
        batch_release(&cmp);
    b.ops->close(b.act);
out_topo:
    corun_topo_free(b.topo);
out_batch:
    batch_release(&b);
out_json:
    cli_json_file_close(json_f);
out_jobs:
    job_list_release(&jobs);
    run_measure_shutdown();
    return rc;
}

CLI_COMMAND(batch, cmd_batch, "run a queue of jobs N at a time, choosing co-runners",
            "corun batch [-j N] [--policy P] [--compare POLICY] [--json FILE]\n"
            "            [--actuator affinity|cpuset|dryrun] [--journal-dir DIR] [--no-mem-follow]\n"
            "            [JOBFILE | -]")
