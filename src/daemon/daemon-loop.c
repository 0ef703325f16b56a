/*
 * daemon-loop.c — the daemon's tick: select, then one step of the engine
 * (sample -> profile -> place -> apply, include/corun/engine.h) on the
 * processes busy enough to matter; and corun__daemon_wire(), the one
 * function that knows which sensor, actuator and policy this build has.
 *
 * The daemon owns what is its alone: which processes (procsel), whether a
 * process is busy enough to be read and placed (sample_min_cpu), processes
 * whose owner pinned them or that left the selection, the migration
 * records and the reasons in the status. Everything between counters and
 * affinity is the engine's, as for corun batch and the simulator: the
 * learner, the policy, hysteresis (confirm, min_dwell, max_migrations, and
 * the engine's predicted gain against the cost of moving), the outcome
 * check that takes back a change the counters say made things worse, and
 * memory following its process as it moves. A process that
 * exits between sample and act (ESRCH) is forgotten; one we may not touch
 * (EPERM) is left where it is and never retried; neither stops the tick.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/internal.h"
#include "common/sys.h"
#include "corun/platform.h"
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

/* ---- the engine -------------------------------------------------------------- */

static uint64_t tick_now(void *ctx)
{
    return ((const struct corun_daemon *)ctx)->last_tick_ns;
}

/* The managed process that is engine task @idx, or NULL. */
static struct managed *by_task(struct corun_daemon *d, unsigned idx)
{
    for (size_t i = 0; i < d->nprocs; i++)
        if (d->procs[i].eidx == (int)idx)
            return &d->procs[i];
    return NULL;
}

/* Dense CPU @dense as a one-CPU mask in @m (what procsel compares the
 * process's affinity with); released when the kernel chooses again. */
static void note_mask(struct corun_daemon *d, struct managed *m, int dense)
{
    corun_cpuset_release(&m->mask);
    if (dense >= 0 && (corun_cpuset_init(&m->mask, 64) ||
                       corun_cpuset_set(&m->mask, (unsigned)corun__daemon_os_cpu(d, dense))))
        corun_cpuset_release(&m->mask);
}

#define OWNER_WHY "left alone: its owner set its affinity"

/* What the engine did, as the daemon's counters, the process's placement
 * and a migration record with the reason. */
static void on_event(void *ctx, const struct corun_engine_event *ev)
{
    struct corun_daemon *d = ctx;
    struct managed *m = by_task(d, ev->idx);
    char why[160];

    if (!m)
        return;
    if (ev->kind == CORUN_ENGINE_EV_MEMORY) {
        int cpu = corun__daemon_os_cpu(d, m->placed);

        if (!ev->err) {
            d->mem_moves_total++;
            snprintf(why, sizeof(why), "memory followed it to node %d", ev->to);
        } else {
            snprintf(why, sizeof(why), "memory stays on node %d", ev->from);
            if (corun_act_move_refused(ev->err) && !d->mem_refused) {
                d->mem_refused = true;
                corun__warn("daemon: moving memory refused (%s): memory stays where it is "
                            "from now on",
                            corun_strerror(ev->err));
            }
        }
        corun__daemon_record(d, m, cpu, cpu, ev->err, why);
        return;
    }
    if (ev->kind == CORUN_ENGINE_EV_UNDO)
        snprintf(why, sizeof(why),
                 "taken back: the counters measured a loss after the change (outcome check)");
    else if (ev->in_place)
        snprintf(why, sizeof(why), "policy '%s': pinned where the kernel runs it", d->policy->name);
    else
        snprintf(why, sizeof(why),
                 "policy '%s': predicted speed %.2f -> %.2f, planned on %u ticks in a row",
                 d->policy->name, ev->speed_now, ev->speed_planned, ev->confirmed);
    corun__daemon_record(d, m, corun__daemon_os_cpu(d, ev->from), corun__daemon_os_cpu(d, ev->to),
                         ev->err, why);
    if (ev->err == -ESRCH) {
        d->err_esrch++;
        m->seen = false; /* exited between sample and act: forgotten after the step */
    } else if (ev->err == -EBUSY) {
        /* Its owner set its mask after this tick's scan: the next scan
         * finds it not ours and lets it go (merge()). */
        snprintf(m->why, sizeof(m->why), OWNER_WHY);
    } else if (ev->err == -EPERM || ev->err == -EACCES) {
        d->err_eperm++;
        snprintf(m->why, sizeof(m->why), "not ours to move: %s", corun_strerror(ev->err));
    } else if (ev->err) {
        d->err_other++;
        snprintf(m->why, sizeof(m->why), "move failed: %s", corun_strerror(ev->err));
    } else {
        m->placed = ev->to;
        note_mask(d, m, ev->to);
        d->migrations_total++;
    }
}

/* The engine's options from the configuration that may change while
 * running (corun_engine_retune) and the wiring that may not. */
static void engine_opts(const struct corun_daemon *d, struct corun_engine_opts *o)
{
    *o = (struct corun_engine_opts){
        .topo = d->topo,
        .policy = d->policy,
        .sense = d->sense,
        .sense_state = d->sense_state,
        .act = d->act,
        .act_state = d->act_state,
        .clock = {.now_ns = tick_now, .ctx = (void *)d},
        .interval_ns = (uint64_t)(d->cfg.interval_s * 1e9),
        /* Placing from the second tick: confirm is the daemon's warm-up,
         * per process, as processes come and go. */
        .warmup_ns = 1,
        .max_moves = d->cfg.max_migrations,
        .seed = 1,
        .no_mem_follow = !d->cfg.mem_follow,
        .turbo_rel = d->turbo_n ? d->turbo_rel : NULL,
        .turbo_n = d->turbo_n,
        .confirm = d->cfg.confirm,
        .min_dwell = d->cfg.min_dwell,
        .on_event = on_event,
        .event_ctx = (void *)d,
        .predict = true,
    };
}

int corun__daemon_engine_open(struct corun_daemon *d)
{
    struct corun_engine_opts o;

    if (!d->topo)
        return 0; /* observe-only: CPU use from the selector alone */
    engine_opts(d, &o);
    return corun_engine_new(&o, &d->eng);
}

void corun__daemon_retune(struct corun_daemon *d)
{
    struct corun_engine_opts o;

    if (!d->eng)
        return;
    engine_opts(d, &o);
    corun_engine_retune(d->eng, &o);
}

/* ---- processes ---------------------------------------------------------------- */

/*
 * Only processes that used at least sample_min_cpu percent of a CPU over the
 * last interval are read and placed. An idle process neither suffers nor
 * causes interference, moving it gains nothing, and reading /proc for
 * thousands of sleepers would cost more than the daemon's whole budget
 * (docs/internals/daemon.md, "Cost").
 */
static bool is_active(const struct corun_daemon *d, const struct managed *m)
{
    return d->cfg.sample_min_cpu <= 0 ||
           (!isnan(m->cpu_percent) && m->cpu_percent >= d->cfg.sample_min_cpu);
}

/*
 * Hands @m to the engine once it is busy (attaching the sensor then), tells
 * it whether it is busy now and where the kernel runs it: read now, with
 * the scheduler's figures (corun__daemon_spread_check()), as the scan's
 * figure can be 30 ticks old. A busy process whose threads want more than
 * one CPU is kept out, as an idle one is. A process the sensor refuses
 * (EMFILE, EACCES) is handed over unread, placed on the class priors, and
 * the sensor is tried again every 30 ticks.
 */
static void engine_track(struct corun_daemon *d, struct managed *m)
{
    bool busy = is_active(d, m) && !m->denied;
    int seen;

    /* A placed process is watched even when its CPU use looks idle: the
     * selector may count only its main thread (procsel.md). */
    if (!busy && m->placed < 0)
        m->cpus_wanted = NAN; /* not read: an idle process asks for nothing */
    else if (corun__daemon_spread_check(d, m))
        busy = false; /* its threads want several CPUs: the kernel's */
    if (!busy) {
        if (m->eidx >= 0)
            corun_engine_set_active(d->eng, (unsigned)m->eidx, false);
        return;
    }
    seen = m->last_cpu >= 0 ? corun_topo_cpu_by_os(d->topo, (unsigned)m->last_cpu) : -1;
    if (m->eidx < 0) {
        struct corun_engine_task t = {
            .target = m->pid, .id = (unsigned)m->pid, .hint = CORUN_CLASS_UNKNOWN};
        unsigned idx;

        if (corun_engine_add(d->eng, &t, &idx) != 0) {
            t.unread = true;
            if (corun_engine_add(d->eng, &t, &idx) != 0)
                return; /* out of memory: tried again next tick */
            m->unread = true;
            m->attach_retry = 30;
        }
        m->eidx = (int)idx;
    } else if (m->unread && --m->attach_retry == 0) {
        m->unread = corun_engine_attach(d->eng, (unsigned)m->eidx) != 0;
        m->attach_retry = m->unread ? 30 : 0;
    }
    corun_engine_set_active(d->eng, (unsigned)m->eidx, true);
    corun_engine_set_cpu(d->eng, (unsigned)m->eidx, seen);
}

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

/* Why idle process @m is where it is, unless it is placed (its place says
 * more), an administrator released it or it is spread (those say more). */
static void why_idle(const struct corun_daemon *d, struct managed *m)
{
    if (!m->denied && !m->spread && m->placed < 0)
        snprintf(m->why, sizeof(m->why),
                 "idle (under %.3g%% of a CPU): left where the kernel runs it",
                 d->cfg.sample_min_cpu);
}

/*
 * After the step: @m's profile and prediction from the engine (CPU use from
 * the selector, over exactly the last interval), and why it is where it is.
 */
static void engine_report(struct corun_daemon *d, size_t i)
{
    struct managed *m = &d->procs[i];
    struct corun_engine_task_info in;
    double util = isnan(m->cpu_percent) ? NAN : m->cpu_percent / 100;
    int to;

    m->speed_now = m->speed_planned = NAN;
    if (m->eidx < 0 || corun_engine_task_info(d->eng, (unsigned)m->eidx, &in) != 0) {
        m->prof.cpu_util = util;
        why_idle(d, m);
        return;
    }
    if (corun_engine_profile(d->eng, (unsigned)m->eidx, &m->prof) == 0) {
        m->prof.cpu = m->placed;
        if (!isnan(util))
            m->prof.cpu_util = util;
    }
    if (in.state != CORUN_ENGINE_IDLE) {
        m->speed_now = in.speed_now;
        m->speed_planned = in.speed_planned;
    }
    if (d->observe_why[0] || d->paused)
        return;
    to = corun__daemon_os_cpu(d, in.planned);
    switch (in.state) {
    case CORUN_ENGINE_WAITING:
        snprintf(m->why, sizeof(m->why), "measuring: not planned for yet");
        break;
    case CORUN_ENGINE_IDLE:
        why_idle(d, m);
        break;
    case CORUN_ENGINE_SETTLED:
        if (m->placed >= 0)
            explain(d, i, m->why, sizeof(m->why));
        else
            snprintf(m->why, sizeof(m->why), "policy '%s' leaves it to the kernel",
                     d->policy->name);
        break;
    case CORUN_ENGINE_CONFIRMING:
        snprintf(m->why, sizeof(m->why), "policy proposes cpu %d (%u of %u ticks to confirm)", to,
                 in.streak, d->cfg.confirm);
        break;
    case CORUN_ENGINE_DWELLING:
        snprintf(m->why, sizeof(m->why),
                 "policy proposes cpu %d; holding: moved %u ticks ago (min_dwell %u)", to, in.dwelt,
                 d->cfg.min_dwell);
        break;
    case CORUN_ENGINE_HELD:
        snprintf(m->why, sizeof(m->why),
                 "policy proposes cpu %d; held: the predicted gain does not pay for the move, "
                 "or the last change was taken back",
                 to);
        break;
    case CORUN_ENGINE_CAPPED:
        snprintf(m->why, sizeof(m->why), "move to cpu %d deferred: %u migrations per tick", to,
                 d->cfg.max_migrations);
        break;
    case CORUN_ENGINE_REFUSED:
        break; /* the reason was written when the actuator refused */
    }
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
    m->placed = -1;
    m->eidx = -1;                      /* the engine takes it once it is busy: engine_track() */
    m->prof.cls = CORUN_CLASS_UNKNOWN; /* until the engine has measured it */
    m->prof.ipc = m->prof.freq_ratio = m->prof.llc_mpki = NAN;
    m->prof.llc_miss_ratio = m->prof.mem_bw_bps = m->prof.cpu_util = NAN;
    m->speed_now = m->speed_planned = m->cpus_wanted = NAN;
    return 0;
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

/* Its owner set its mask (not us): their choice stands. It is let go
 * without its mask put back: the actuator's restore sees the mask is no
 * longer ours and only drops its journal entry. @to: where it runs now,
 * -1 unknown. */
static void owner_has_it(struct corun_daemon *d, struct managed *m, int to)
{
    int from = corun__daemon_os_cpu(d, m->placed);
    int err = corun__daemon_release(d, m, false);

    corun__daemon_record(d, m, from, to, err, OWNER_WHY);
}

/*
 * Its owner widened the mask we set (taskset -p with every CPU): selected
 * again, since a wide mask is not pinned, but the mask is theirs, as a
 * narrowed one is. Let go, it stays listed, never placed again while it
 * lives, as one an administrator released: forgotten, the next scan would
 * select it anew.
 */
static void owner_widened(struct corun_daemon *d, struct managed *m)
{
    owner_has_it(d, m, -1);
    m->denied = true;
    snprintf(m->why, sizeof(m->why), OWNER_WHY);
}

/* Merges this tick's selection into the managed table; processes that left
 * it are given back (when alive) and forgotten, and those whose owner
 * widened the mask we set are let go. */
static int merge(struct corun_daemon *d, const struct corun_proc_info *sel, size_t nsel)
{
    for (size_t i = 0; i < d->nprocs; i++)
        d->procs[i].seen = false;
    for (size_t k = 0; k < nsel; k++) {
        bool found;
        size_t at = find_proc(d, sel[k].pid, &found);

        if (found && d->procs[at].start_ticks != sel[k].start_ticks) {
            /* The pid was reused: the one we knew is gone. */
            corun__daemon_release(d, &d->procs[at], false);
            corun__daemon_forget(d, at);
            found = false;
        }
        if (!found) {
            int err = add_proc(d, at, &sel[k]);

            if (err)
                return err;
        }
        update_proc(&d->procs[at], &sel[k]);
        if (d->procs[at].owner_took_over && d->procs[at].placed >= 0)
            owner_widened(d, &d->procs[at]);
    }
    for (size_t i = d->nprocs; i-- > 0;) {
        struct managed *m = &d->procs[i];
        struct corun_proc_info now;

        if (m->seen)
            continue;
        if (corun_procsel_read_one(d->sel, m->pid, &now) != 0 ||
            now.start_ticks != m->start_ticks) {
            corun__daemon_release(d, m, false); /* lets the actuator drop its journal entry */
        } else if (m->owner_took_over || (now.pinned && m->placed < 0)) {
            /* Its owner pinned it. A process we placed is pinned by us:
             * that alone is not its owner's doing (it may have exec'd into
             * a name we do not select). */
            owner_has_it(d, m, now.last_cpu);
        } else {
            int from = corun__daemon_os_cpu(d, m->placed);
            int err = corun__daemon_release(d, m, true);

            corun__daemon_record(d, m, from, -1, err, "released: no longer selected");
        }
        corun__daemon_forget(d, i);
    }
    return 0;
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
    if (d->eng) {
        for (size_t i = 0; i < d->nprocs; i++)
            engine_track(d, &d->procs[i]);
        corun_engine_set_placing(d->eng, !d->observe_why[0] && !d->paused);
        err = corun_engine_step(d->eng);
        if (err)
            corun__warn("daemon: policy '%s' could not place %zu processes: %s", d->policy->name,
                        d->nprocs, corun_strerror(err));
    }
    for (size_t i = 0; i < d->nprocs; i++) {
        struct managed *m = &d->procs[i];

        if (d->eng)
            engine_report(d, i);
        else
            m->prof.cpu_util = isnan(m->cpu_percent) ? NAN : m->cpu_percent / 100;
        /* Written only when it changes: formatting thousands of identical
         * lines every tick showed up in the overhead benchmark. */
        if (!d->observe_why[0] && d->paused && strncmp(m->why, "placing paused", 14))
            snprintf(m->why, sizeof(m->why), "placing paused by an administrator");
        else if (d->observe_why[0] && strncmp(m->why, "observe-only", 12))
            snprintf(m->why, sizeof(m->why), "observe-only: %.200s", d->observe_why);
    }
    for (size_t i = d->nprocs; i-- > 0;)
        if (!d->procs[i].seen)
            corun__daemon_forget(d, i);
    d->tick_cost_ns = thread_cpu_ns() - t0;
    return err;
}
