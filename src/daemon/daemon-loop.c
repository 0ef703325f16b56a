/*
 * daemon-loop.c — the daemon's tick: select → sample → profile → place →
 * apply, and corun__daemon_wire(), the one function that knows which sensor,
 * actuator and policy this build has.
 *
 * The tick talks to the other boxes only through their operations tables
 * (corun_sense_ops, corun_act_ops, corun_policy), so that corun_engine can
 * take over the profile/place/apply steps by replacing place_and_apply() and
 * profile_from() without touching selection, the control socket or the
 * status (batch and the simulator already run on it). Hysteresis lives here
 * until then: a new
 * placement must be proposed @confirm ticks in a row, a process moved less
 * than @min_dwell ticks ago stays, and at most @max_migrations processes move
 * per tick. A process that exits between sample and act (ESRCH) is forgotten;
 * one we may not touch (EPERM) is marked and never retried; neither stops the
 * tick.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/internal.h"
#include "common/sys.h"
#include "corun/model.h"
#include "corun/platform.h"
#include "corun/profile.h"
#include "daemon/daemon-internal.h"

/* ---- wiring ----------------------------------------------------------------- */

/* The sensor for @want ("auto": perf, else proc), probed here; NULL with the
 * last reason in @why when none works. */
static const struct corun_sense_ops *pick_sensor(const char *want, char *why, size_t len)
{
    static const struct corun_sense_ops *const chain[] = {&corun_sense_perf, &corun_sense_proc};
    struct corun_sense_opts o = {0};
    char w[160];

    for (size_t i = 0; i < CORUN_ARRAY_SIZE(chain); i++) {
        const struct corun_sense_ops *s = chain[i];

        if (strcmp(want, "auto") && strcmp(want, s->name))
            continue;
        w[0] = '\0';
        if (s->probe && s->probe(&o, w, sizeof(w)) != 0) {
            snprintf(why, len, "%s sensor: %s", s->name, w[0] ? w : "unavailable");
            continue;
        }
        return s;
    }
    return NULL;
}

int corun__daemon_wire(const struct corun_daemon_config *cfg, struct corun_daemon_parts *parts,
                       struct corun_topo **topo_out, char *why, size_t len)
{
    struct corun_topo_opts to = {.source = CORUN_TOPO_SYSTEM};
    struct corun_act_opts ao = {.journal_dir = cfg->journal_dir, .root = cfg->root};
    char w[160] = "";
    int err;

    memset(parts, 0, sizeof(*parts));
    *topo_out = NULL;
    why[0] = '\0';
    parts->sense = pick_sensor(cfg->sensor, parts->sensor_why, sizeof(parts->sensor_why));
    if (!parts->sense)
        corun__info("daemon: no sensor (%s): CPU use from /proc only", parts->sensor_why);

    /* An unknown policy name is the user's mistake. */
    parts->policy = corun_policy_find(cfg->policy);
    if (!parts->policy) {
        snprintf(why, len, "unknown policy '%s'", cfg->policy);
        return -ENOENT;
    }
    parts->act = corun_act_find(cfg->actuator);
    if (!parts->act) {
        if (!why[0])
            snprintf(why, len, "no actuator '%s' in this build", cfg->actuator);
    } else if (parts->act->probe && parts->act->probe(&ao, w, sizeof(w)) != 0) {
        if (!why[0])
            snprintf(why, len, "%s actuator: %s", cfg->actuator, w[0] ? w : "unavailable");
        parts->act = NULL;
    }
    err = corun_topo_load(&to, topo_out);
    if (err) {
        if (!why[0])
            snprintf(why, len, "topology: %s", corun_strerror(err));
        *topo_out = NULL;
    }
    parts->topo = *topo_out;
    parts->observe_only_why = why[0] ? why : NULL;
    /* Intel's turbo table, where the MSRs read (root, the msr driver). */
    if (*topo_out) {
        unsigned np = corun_topo_ndomains(*topo_out, CORUN_LEVEL_PACKAGE);
        unsigned n = corun_topo_ndomains(*topo_out, CORUN_LEVEL_CORE) / (np ? np : 1);

        if (n > CORUN_DAEMON_TURBO_MAX)
            n = CORUN_DAEMON_TURBO_MAX;
        if (n && !corun_platform_read_turbo(cfg->root, n, parts->turbo_rel))
            parts->turbo_n = n;
        corun__info("daemon: turbo table %s", parts->turbo_n
                                                  ? "from MSR_TURBO_RATIO_LIMIT"
                                                  : "unknown (MSR unreadable or not Intel)");
    }
    return 0;
}

/* ---- profiles --------------------------------------------------------------- */

/*
 * The class the profile box's classifier gives, on IPC corrected to the
 * reference clock the way the profiler corrects it (memory stalls take fixed
 * time, so only their share of cycles scales with the clock), so that the
 * daemon, the engine and the policies' priors agree. UNKNOWN without IPC or
 * LLC misses (no PMU).
 */
static enum corun_class classify(const struct corun_task_profile *p)
{
    double ipc = p->ipc, fr = p->freq_ratio, mf;

    if (isnan(ipc))
        return CORUN_CLASS_UNKNOWN;
    if (isfinite(fr) && fr > 0) {
        mf = corun_profile_mem_share(ipc, p->llc_mpki);
        if (isfinite(mf))
            ipc /= (1.0 - mf) + mf / fr;
    }
    return corun_profile_classify(ipc, p->llc_mpki, p->llc_miss_ratio);
}

/* Refreshes @m's profile from a new sample @s (NULL: no sensor). */
static void profile_from(struct managed *m, const struct corun_sample *s, unsigned id)
{
    struct corun_task_profile *p = &m->prof;

    p->id = id;
    p->weight = 1;
    p->cpu = m->placed;
    /* CPU use from the selector: over exactly the last interval, for every
     * process, whether or not its counters were read this tick. */
    p->cpu_util = isnan(m->cpu_percent) ? NAN : m->cpu_percent / 100;
    if (s && m->have_prev) {
        struct corun_sample dlt;
        struct corun_metrics mt;

        /* Counts are cumulative, so the rates hold across the idle ticks on
         * which the sensor was not read. The model box defines the metrics. */
        corun_sample_delta(&m->prev, s, &dlt);
        corun_metrics_compute(&dlt, s->t_ns > m->prev.t_ns ? s->t_ns - m->prev.t_ns : 0, &mt);
        p->ipc = mt.v[CORUN_M_IPC];
        p->freq_ratio = mt.v[CORUN_M_FREQ_RATIO];
        p->llc_mpki = mt.v[CORUN_M_LLC_MPKI];
        p->llc_miss_ratio = mt.v[CORUN_M_LLC_MISS_RATIO];
        p->mem_bw_bps = NAN; /* no preset counts memory traffic per task */
        if (isnan(p->cpu_util))
            p->cpu_util = mt.v[CORUN_M_CPU_UTILIZATION];
    } else if (!m->have_prev) {
        p->ipc = p->freq_ratio = p->llc_mpki = p->llc_miss_ratio = p->mem_bw_bps = NAN;
    }
    /* else: no new sample (idle this tick): the last figures stand. */
    for (int l = 0; l < CORUN_NLEVELS; l++)
        p->pressure[l] = p->sensitivity[l] = NAN;
    p->cls = classify(p);
    if (s) {
        m->prev = *s;
        m->have_prev = true;
    }
}

/*
 * Reads @m's counters when it is worth it: only processes that used at least
 * sample_min_cpu percent of a CPU over the last interval are attached and
 * read. An idle process neither suffers nor causes interference, and reading
 * /proc for thousands of sleepers would cost more than the daemon's whole
 * budget (docs/internals/daemon.md, "Cost"). Returns true with *@s filled.
 */
static bool is_active(const struct corun_daemon *d, const struct managed *m)
{
    return d->cfg.sample_min_cpu <= 0 ||
           (!isnan(m->cpu_percent) && m->cpu_percent >= d->cfg.sample_min_cpu);
}

static bool sample(struct corun_daemon *d, struct managed *m, struct corun_sample *s)
{
    if (!d->sense || !is_active(d, m))
        return false;
    if (m->sense_handle < 0) {
        /* A refused attach (EMFILE, EACCES) is retried only every 30 ticks. */
        if (m->attach_retry && --m->attach_retry)
            return false;
        if (d->sense->attach(d->sense_state, m->pid, &m->sense_handle) != 0) {
            m->sense_handle = -1;
            m->attach_retry = 30;
            return false;
        }
    }
    memset(s, 0, sizeof(*s));
    return d->sense->read(d->sense_state, m->sense_handle, s) == 0;
}

/* ---- selection ---------------------------------------------------------------- */

static size_t find_proc(const struct corun_daemon *d, pid_t pid, bool *found)
{
    size_t lo = 0, hi = d->nprocs;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (d->procs[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < d->nprocs && d->procs[lo].pid == pid;
    return lo;
}

static int add_proc(struct corun_daemon *d, size_t at, const struct corun_proc_info *p)
{
    struct managed *m;

    if (d->nprocs == d->capprocs) {
        size_t cap = d->capprocs ? d->capprocs * 2 : 64;
        struct managed *n = realloc(d->procs, cap * sizeof(*n));

        if (!n)
            return -ENOMEM;
        d->procs = n;
        d->capprocs = cap;
    }
    memmove(&d->procs[at + 1], &d->procs[at], (d->nprocs - at) * sizeof(*m));
    d->nprocs++;
    m = &d->procs[at];
    memset(m, 0, sizeof(*m));
    m->pid = p->pid;
    m->start_ticks = p->start_ticks;
    m->placed = m->planned = -1;
    m->home = -1;
    m->sense_handle = -1;
    m->dwell = d->cfg.min_dwell; /* never moved: free to move */
    m->prof.ipc = m->prof.freq_ratio = m->prof.llc_mpki = NAN;
    m->prof.llc_miss_ratio = m->prof.mem_bw_bps = NAN;
    m->speed_now = m->speed_planned = NAN;
    return 0; /* the sensor is attached once the process is busy: sample() */
}

static void update_proc(struct managed *m, const struct corun_proc_info *p)
{
    m->uid = p->uid;
    memcpy(m->comm, p->comm, sizeof(m->comm));
    m->nthreads = p->nthreads;
    m->last_cpu = p->last_cpu;
    m->cpu_percent = p->cpu_percent;
    m->seen = true;
}

/* Merges this tick's selection into the managed table; processes that left
 * it are given back (when alive) and forgotten. */
static int merge(struct corun_daemon *d, const struct corun_proc_info *sel, size_t nsel)
{
    for (size_t i = 0; i < d->nprocs; i++)
        d->procs[i].seen = false;
    for (size_t k = 0; k < nsel; k++) {
        bool found;
        size_t at = find_proc(d, sel[k].pid, &found);

        if (found && d->procs[at].start_ticks != sel[k].start_ticks) {
            /* The pid was reused: the one we knew is gone. */
            corun__daemon_release(d, &d->procs[at]);
            corun__daemon_forget(d, at);
            found = false;
        }
        if (!found) {
            int err = add_proc(d, at, &sel[k]);

            if (err)
                return err;
        }
        update_proc(&d->procs[at], &sel[k]);
    }
    for (size_t i = d->nprocs; i-- > 0;) {
        struct managed *m = &d->procs[i];
        struct corun_proc_info now;

        if (m->seen)
            continue;
        if (corun_procsel_read_one(d->sel, m->pid, &now) != 0 ||
            now.start_ticks != m->start_ticks) {
            corun__daemon_release(d, m); /* lets the actuator drop its journal entry */
        } else if (m->owner_took_over || now.pinned) {
            /* Its owner pinned it (a mask we did not set): their choice
             * stands. The actuator's restore sees the mask is no longer
             * ours, leaves it and drops the journal entry. */
            int from = corun__daemon_os_cpu(d, m->placed);

            corun__daemon_release(d, m);
            corun__daemon_record(d, m, from, now.last_cpu, 0,
                                 "left alone: its owner set its affinity");
        } else {
            int from = corun__daemon_os_cpu(d, m->placed);
            int err = corun__daemon_release(d, m);

            corun__daemon_record(d, m, from, -1, err, "released: no longer selected");
        }
        corun__daemon_forget(d, i);
    }
    return 0;
}

/* ---- placing ------------------------------------------------------------------ */

/* "cpu 1, sharing L3 with 1234 (comm)": the neighbours that justify a place. */
static void explain(struct corun_daemon *d, size_t i, char *buf, size_t len)
{
    struct managed *m = &d->procs[i];
    int os = corun__daemon_os_cpu(d, m->placed);
    size_t n;
    unsigned shown = 0;

    n = (size_t)snprintf(buf, len, "policy '%s' placed it on cpu %d", d->policy->name, os);
    for (size_t j = 0; j < d->nprocs && n < len && shown < 3; j++) {
        const struct managed *o = &d->procs[j];
        enum corun_level lvl;

        if (j == i || o->placed < 0)
            continue;
        lvl = corun_topo_shared_level(d->topo, (unsigned)m->placed, (unsigned)o->placed);
        if (lvl >= CORUN_LEVEL_MACHINE)
            continue;
        n += (size_t)snprintf(buf + n, len - n, "%s %s with %d (%s)", shown ? "," : "; shares",
                              corun_level_name(lvl), (int)o->pid, o->comm);
        shown++;
    }
    if (!shown && n < len)
        snprintf(buf + n, len - n, "; no managed neighbour shares a cache with it");
}

/* Whether memory may follow processes to another node here. */
static bool mem_follows(const struct corun_daemon *d)
{
    return d->cfg.mem_follow && !d->mem_refused && d->act && d->act->move_memory &&
           corun_topo_ndomains(d->topo, CORUN_LEVEL_NUMA) > 1;
}

/* NUMA node (domain index) of dense CPU @cpu, -1 unknown. */
static int node_of(const struct corun_daemon *d, int cpu)
{
    return cpu >= 0 ? corun_topo_cpu(d->topo, (unsigned)cpu)->dom[CORUN_LEVEL_NUMA] : -1;
}

/* Node @m's memory is on: where it was when the daemon first moved it, or
 * where it moved since; before that, near where it runs (first touch); -1
 * unknown. */
static int mem_node(const struct corun_daemon *d, const struct managed *m)
{
    if (m->home >= 0)
        return m->home;
    if (m->placed >= 0)
        return node_of(d, m->placed);
    return m->last_cpu >= 0 ? node_of(d, corun_topo_cpu_by_os(d->topo, (unsigned)m->last_cpu))
                            : -1;
}

/*
 * @m now runs on dense CPU @to, having had its memory on node @from: the
 * memory follows it when that is another node (numad's practice). What
 * happened goes to @note (for the migration record). Without the permission
 * or the kernel support memory stops following for every process; another
 * failure stops it for this one. Never the move's failure.
 */
static void follow_memory(struct corun_daemon *d, struct managed *m, int to, int from,
                          char *note, size_t len)
{
    int node = node_of(d, to), err;

    note[0] = '\0';
    if (!mem_follows(d) || m->mem_stuck || node < 0 || from < 0 || node == from)
        return;
    err = d->act->move_memory(d->act_state, m->pid,
                              (int)corun_topo_domain(d->topo, CORUN_LEVEL_NUMA, (unsigned)node)
                                  ->os_index);
    if (err) {
        snprintf(note, len, "; memory stays on node %d: %s", from, corun_strerror(err));
        if (corun_act_move_refused(err)) {
            d->mem_refused = true;
            corun__warn("daemon: moving memory refused (%s): memory stays where it is from now on",
                        corun_strerror(err));
        } else {
            m->mem_stuck = true;
        }
        return;
    }
    m->home = node;
    d->mem_moves_total++;
    snprintf(note, len, "; memory to node %d", node);
}

/* Applies a move of @m to dense CPU @to (-1: back to the kernel's choice). */
static int move(struct corun_daemon *d, struct managed *m, int to)
{
    struct corun_cpuset set = {0};
    int err;

    if (to < 0)
        return d->act->restore(d->act_state, m->pid);
    err = corun_cpuset_init(&set, 64);
    if (!err)
        err = corun_cpuset_set(&set, (unsigned)corun__daemon_os_cpu(d, to));
    if (!err)
        err = d->act->apply(d->act_state, m->pid, &set);
    if (!err)
        err = corun_cpuset_copy(&m->mask, &set);
    corun_cpuset_release(&set);
    return err;
}

/*
 * The prediction behind the plan, for status: each active process's speed
 * under the model of corun_policy_predict() where it runs now and where the
 * plan puts it. Idle processes get NaN. A failed prediction (ENOMEM) leaves
 * NaN too: status then has no figure rather than a wrong one.
 */
static void predict(struct corun_daemon *d, const struct corun_snapshot *snap,
                    const struct corun_plan *plan, const size_t *idx)
{
    double *now = calloc(snap->ntasks ? snap->ntasks : 1, sizeof(double));
    double *then = calloc(snap->ntasks ? snap->ntasks : 1, sizeof(double));
    int *cur = calloc(snap->ntasks ? snap->ntasks : 1, sizeof(int));
    bool ok;

    for (size_t i = 0; i < d->nprocs; i++)
        d->procs[i].speed_now = d->procs[i].speed_planned = NAN;
    if (!now || !then || !cur)
        goto out_free;
    for (unsigned k = 0; k < snap->ntasks; k++)
        cur[k] = d->procs[idx[k]].placed;
    ok = corun_policy_predict(snap, cur, now) >= 0 &&
         corun_policy_predict(snap, plan->cpu, then) >= 0;
    for (unsigned k = 0; ok && k < snap->ntasks; k++) {
        d->procs[idx[k]].speed_now = now[k];
        d->procs[idx[k]].speed_planned = then[k];
    }
out_free:
    free(now);
    free(then);
    free(cur);
}

/*
 * Asks the policy where the active processes should run and applies what
 * hysteresis lets through. Only processes using at least sample_min_cpu
 * percent of a CPU are placed: an idle process neither suffers nor causes
 * interference, moving it gains nothing, and leaving it out keeps the
 * policy's cost proportional to the busy processes rather than to every
 * sleeper selected (1000 sleepers cost the corun policy several percent of a
 * CPU per tick otherwise). Idle processes stay where they are.
 */
static int place_and_apply(struct corun_daemon *d)
{
    struct corun_task_profile *tasks;
    struct corun_snapshot snap;
    struct corun_plan plan;
    unsigned moves = 0, nact = 0;
    size_t *idx;
    int err;

    tasks = calloc(d->nprocs ? d->nprocs : 1, sizeof(*tasks));
    plan.cpu = calloc(d->nprocs ? d->nprocs : 1, sizeof(int));
    idx = calloc(d->nprocs ? d->nprocs : 1, sizeof(*idx));
    if (!tasks || !plan.cpu || !idx) {
        err = -ENOMEM;
        goto out_free;
    }
    for (size_t i = 0; i < d->nprocs; i++) {
        if (!is_active(d, &d->procs[i])) {
            d->procs[i].planned = d->procs[i].placed;
            d->procs[i].planned_streak = 0;
            if (d->procs[i].placed < 0)
                snprintf(d->procs[i].why, sizeof(d->procs[i].why),
                         "idle (under %.3g%% of a CPU): left where the kernel runs it",
                         d->cfg.sample_min_cpu);
            continue;
        }
        tasks[nact] = d->procs[i].prof;
        tasks[nact].home_known = mem_node(d, &d->procs[i]) >= 0;
        tasks[nact].home_node = tasks[nact].home_known ? (unsigned)mem_node(d, &d->procs[i]) : 0;
        idx[nact++] = i;
    }
    snap = (struct corun_snapshot){.topo = d->topo,
                                   .ntasks = nact,
                                   .tasks = tasks,
                                   .seed = 1,
                                   .mem_follows = mem_follows(d),
                                   .mem_move_cost = 0.03,
                                   .turbo_rel = d->turbo_n ? d->turbo_rel : NULL,
                                   .turbo_n = d->turbo_n};
    plan.ntasks = nact;
    err = nact ? d->policy->place(&snap, &plan) : 0;
    if (err) {
        corun__warn("daemon: policy '%s' could not place %u processes: %s", d->policy->name, nact,
                    corun_strerror(err));
        goto out_free;
    }
    predict(d, &snap, &plan, idx);
    for (unsigned k = 0; k < nact; k++) {
        size_t i = idx[k];
        struct managed *m = &d->procs[i];
        int to = plan.cpu[k], from_os = m->placed >= 0 ? corun__daemon_os_cpu(d, m->placed) : -1;
        int mem_from = mem_node(d, m);
        char why[160], note[64] = "";

        if (m->denied)
            continue;
        if (to >= (int)corun_topo_ncpus(d->topo))
            to = -1;
        if (to == m->placed) {
            m->planned = to;
            m->planned_streak = 0;
            continue;
        }
        m->planned_streak = to == m->planned ? m->planned_streak + 1 : 1;
        m->planned = to;
        if (m->planned_streak < d->cfg.confirm) {
            snprintf(m->why, sizeof(m->why), "policy proposes cpu %d (%u of %u ticks to confirm)",
                     corun__daemon_os_cpu(d, to), m->planned_streak, d->cfg.confirm);
            continue;
        }
        if (m->placed >= 0 && m->dwell < d->cfg.min_dwell) {
            snprintf(m->why, sizeof(m->why),
                     "policy proposes cpu %d; holding: moved %u ticks ago (min_dwell %u)",
                     corun__daemon_os_cpu(d, to), m->dwell, d->cfg.min_dwell);
            continue;
        }
        if (moves >= d->cfg.max_migrations) {
            snprintf(m->why, sizeof(m->why), "move to cpu %d deferred: %u migrations per tick",
                     corun__daemon_os_cpu(d, to), d->cfg.max_migrations);
            continue;
        }
        err = move(d, m, to);
        /* Its memory stays where it was first touched unless it follows. */
        if (!err && m->home < 0)
            m->home = mem_from;
        if (!err && to >= 0)
            follow_memory(d, m, to, mem_from, note, sizeof(note));
        snprintf(why, sizeof(why),
                 "policy '%s': predicted speed %.2f -> %.2f, planned on %u ticks in a row%s",
                 d->policy->name, m->speed_now, m->speed_planned, m->planned_streak, note);
        corun__daemon_record(d, m, from_os, to >= 0 ? corun__daemon_os_cpu(d, to) : -1, err, why);
        if (err == -ESRCH) {
            d->err_esrch++;
            m->seen = false; /* exited between sample and act: forgotten below */
        } else if (err == -EPERM || err == -EACCES) {
            d->err_eperm++;
            m->denied = true;
            snprintf(m->why, sizeof(m->why), "not ours to move: %s", corun_strerror(err));
        } else if (err) {
            d->err_other++;
            snprintf(m->why, sizeof(m->why), "move failed: %s", corun_strerror(err));
        } else {
            m->placed = to;
            m->dwell = 0;
            moves++;
            d->migrations_total++;
        }
    }
    for (size_t i = 0; i < d->nprocs; i++)
        if (d->procs[i].placed >= 0 && !d->procs[i].denied && d->procs[i].planned_streak == 0)
            explain(d, i, d->procs[i].why, sizeof(d->procs[i].why));
    for (size_t i = d->nprocs; i-- > 0;)
        if (!d->procs[i].seen)
            corun__daemon_forget(d, i);
    err = 0;
out_free:
    free(tasks);
    free(plan.cpu);
    free(idx);
    return err;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;

    if (corun__sys.clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int corun_daemon_tick(struct corun_daemon *d, uint64_t now_ns)
{
    struct corun_proc_info *sel = NULL;
    uint64_t t0 = thread_cpu_ns();
    size_t nsel = 0;
    int err;

    if (!d)
        return -EINVAL;
    d->ticks++;
    d->last_tick_ns = now_ns;
    err = corun_procsel_scan(d->sel, now_ns, false, &sel, &nsel);
    if (err) {
        d->scan_errors++;
        return err;
    }
    err = merge(d, sel, nsel);
    free(sel);
    if (err)
        return err;

    for (size_t i = 0; i < d->nprocs; i++) {
        struct managed *m = &d->procs[i];
        struct corun_sample s;
        bool have;

        if (m->dwell < UINT32_MAX)
            m->dwell++;
        have = sample(d, m, &s);
        profile_from(m, have ? &s : NULL, (unsigned)i);
        /* Written only when it changes: formatting thousands of identical
         * lines every tick showed up in the overhead benchmark. */
        if (!d->observe_why[0] && d->paused && strncmp(m->why, "placing paused", 14))
            snprintf(m->why, sizeof(m->why), "placing paused by an administrator");
        else if (d->observe_why[0] && strncmp(m->why, "observe-only", 12))
            snprintf(m->why, sizeof(m->why), "observe-only: %.200s", d->observe_why);
    }
    if (!d->observe_why[0] && !d->paused && d->nprocs)
        err = place_and_apply(d);
    d->tick_cost_ns = thread_cpu_ns() - t0;
    return err;
}
