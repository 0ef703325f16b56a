/*
 * engine.c — the sample -> profile -> place -> apply loop (corun/engine.h).
 *
 * The engine keeps, per task, the last counter sample, the CPU it pinned
 * the task to and since when; the profiler keeps what is learned. Placing
 * builds a snapshot of the profiles with the current CPUs, asks the policy,
 * and applies the plan through the actuator under hysteresis and a cap on
 * moves (apply_plan()). All time comes from the clock in the options, so a
 * simulator can drive the loop deterministically.
 *
 * Every applied change is a trial checked against what the counters then
 * say (the outcome check): the instruction rate of each task over the
 * intervals before the change is compared with the rate over the intervals
 * after it, and a change that measurably lowered the sum of the tasks'
 * relative speeds is taken back, after which the engine holds for a while
 * (longer after each failure). The predictor is a model and can be wrong
 * about a machine or a task; this bounds what a wrong prediction costs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/internal.h"
#include "corun/engine.h"

/* Outcome check: intervals measured on each side of a change, the loss (in
 * summed relative speed, per task measured) beyond which it is taken back,
 * and the hold after a failed trial, doubled per consecutive failure. */
#define CHECK_WINDOW 2
#define CHECK_MARGIN 0.01
#define CHECK_HOLD 4
#define CHECK_HOLD_MAX 64

struct etask {
    struct corun_engine_task t;
    int handle;           /* the sensor's */
    bool own_handle;      /* attached by the engine, detached by it */
    bool live;
    bool have_prev;
    struct corun_sample prev;
    int cpu;              /* pinned to, dense; -1 not pinned */
    uint64_t pinned_at;   /* clock time of the last change of cpu */
    unsigned slot;        /* profiler slot */
    int home;             /* NUMA node of its memory, -1 unknown */
    bool mem_stuck;       /* its memory could not be moved: not tried again */
    bool mem_pending;     /* moved in the trial in progress: memory follows if kept */
    int seen_cpu;         /* where the kernel runs it while unpinned, -1 unknown */
    /* Outcome check: instruction rates of the last whole intervals since the
     * last change of placement (rate[0] the newest), and at the start of the
     * trial in progress its mean rate before, its best rate seen and where it
     * was pinned. */
    double rate[CHECK_WINDOW], best_rate;
    unsigned nrate;
    double tr_before;     /* NaN: not measured before the trial */
    int tr_cpu;           /* pinned CPU before the trial, -1 unpinned */
};

struct corun_engine {
    struct corun_engine_opts o;
    struct corun_profiler *prof;
    struct etask *tasks;
    unsigned ntasks, cap;
    uint64_t start_ns;
    bool started, placed_once, warmup_done;
    unsigned round;
    struct corun_engine_stats st;
    /* Outcome check. */
    uint64_t changed_ns;  /* clock time of the last change of placement */
    bool trial;           /* a change is being measured */
    bool arm;             /* the next change of placement starts a trial */
    unsigned waited;      /* intervals the trial in progress has waited */
    unsigned hold;        /* intervals left without plans */
    unsigned fails;       /* consecutive failed trials */
    bool mem_follows;     /* memory is moved with its task (opts.no_mem_follow) */
};

static uint64_t mono_now(void *ctx)
{
    return corun__now_ns();
}

static int mono_wait(void *ctx, uint64_t t_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(t_ns / 1000000000ull),
                          .tv_nsec = (long)(t_ns % 1000000000ull)};
    int err;

    /* corun__now_ns() reads CLOCK_MONOTONIC: sleep on the same clock. */
    do
        err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    while (err == EINTR && corun__now_ns() < t_ns);
    return err && err != EINTR ? -err : 0;
}

static void world_changed(struct corun_engine *e, uint64_t now);

static void trial_begin(struct corun_engine *e);

struct corun_clock corun_clock_monotonic(void)
{
    return (struct corun_clock){.now_ns = mono_now, .wait_until = mono_wait, .ctx = NULL};
}

int corun_engine_new(const struct corun_engine_opts *opts, struct corun_engine **out)
{
    struct corun_engine *e;
    int err;

    if (!opts || !opts->topo || !opts->sense || !opts->act || !out)
        return -EINVAL;
    e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->o = *opts;
    if (!e->o.policy)
        e->o.policy = corun_policy_find("corun");
    if (!e->o.clock.now_ns)
        e->o.clock = corun_clock_monotonic();
    if (!e->o.interval_ns)
        e->o.interval_ns = 1000000000ull;
    if (!e->o.warmup_ns)
        e->o.warmup_ns = 2 * e->o.interval_ns;
    if (e->o.move_cost == 0)
        e->o.move_cost = 0.01;
    else if (e->o.move_cost < 0)
        e->o.move_cost = 0;
    if (e->o.mem_move_cost == 0)
        e->o.mem_move_cost = 0.03;
    else if (e->o.mem_move_cost < 0)
        e->o.mem_move_cost = 0;
    /* Memory can follow only where there is somewhere else for it to go. */
    e->mem_follows = !e->o.no_mem_follow && e->o.act && e->o.act->move_memory &&
                     corun_topo_ndomains(e->o.topo, CORUN_LEVEL_NUMA) > 1;
    err = corun_profiler_new(e->o.topo, e->o.profile, &e->prof);
    if (err) {
        free(e);
        return err;
    }
    *out = e;
    return 0;
}

void corun_engine_free(struct corun_engine *e)
{
    if (!e)
        return;
    for (unsigned i = 0; i < e->ntasks; i++)
        if (e->tasks[i].live && e->tasks[i].own_handle && e->o.sense->detach)
            e->o.sense->detach(e->o.sense_state, e->tasks[i].handle);
    corun_profiler_free(e->prof);
    free(e->tasks);
    free(e);
}

int corun_engine_add(struct corun_engine *e, const struct corun_engine_task *task, unsigned *idx)
{
    struct etask *t;
    int err;

    if (e->ntasks == e->cap) {
        unsigned cap = e->cap ? 2 * e->cap : 16;
        struct etask *v = realloc(e->tasks, cap * sizeof(*v));

        if (!v)
            return -ENOMEM;
        e->tasks = v;
        e->cap = cap;
    }
    t = &e->tasks[e->ntasks];
    memset(t, 0, sizeof(*t));
    t->t = *task;
    t->cpu = -1;
    t->home = -1;
    t->seen_cpu = -1;
    err = corun_profiler_add(e->prof, task->id, task->hint, task->weight, &t->slot);
    if (err)
        return err;
    if (task->shared_handle) {
        t->handle = task->handle;
    } else {
        err = e->o.sense->attach(e->o.sense_state, task->target, &t->handle);
        if (err)
            return err; /* the profiler slot stays unused: slots are never reused */
        t->own_handle = true;
    }
    t->live = true;
    t->tr_before = NAN;
    if (idx)
        *idx = e->ntasks;
    e->ntasks++;
    if (e->started)
        world_changed(e, e->o.clock.now_ns(e->o.clock.ctx));
    return 0;
}

int corun_engine_remove(struct corun_engine *e, unsigned idx)
{
    struct etask *t;
    int err = 0;

    if (idx >= e->ntasks || !e->tasks[idx].live)
        return -ENOENT;
    t = &e->tasks[idx];
    if (t->own_handle && e->o.sense->detach)
        e->o.sense->detach(e->o.sense_state, t->handle);
    if (t->cpu >= 0 && e->o.act->restore)
        err = e->o.act->restore(e->o.act_state, t->t.target);
    t->live = false;
    t->cpu = -1;
    world_changed(e, e->o.clock.now_ns(e->o.clock.ctx));
    return err;
}

static void note_error(struct corun_engine *e, int err)
{
    e->st.errors++;
    e->st.last_error = err;
}

/* NUMA node (domain index) of dense CPU @cpu, -1 none or unknown. */
static int node_of(const struct corun_engine *e, int cpu)
{
    return cpu >= 0 ? corun_topo_cpu(e->o.topo, (unsigned)cpu)->dom[CORUN_LEVEL_NUMA] : -1;
}

/* Node task @t's memory is on: its known home, else the node of where it
 * ran (@where: first touch happened near there), -1 unknown. */
static int mem_node(const struct corun_engine *e, const struct etask *t, int where)
{
    return t->home >= 0 ? t->home : node_of(e, where);
}

/* Whether task @t moved from @where to @cpu must take its memory along. */
static bool must_follow(const struct corun_engine *e, const struct etask *t, int cpu, int where)
{
    int to = node_of(e, cpu), from = mem_node(e, t, where);

    return e->mem_follows && !t->mem_stuck && to >= 0 && from >= 0 && to != from;
}

/*
 * Task @t now runs on @cpu (it ran on @where): when memory follows and that
 * is another node than its memory's, the memory is moved there. A failure is
 * counted, and is not the move's: the task runs where it was put. Without
 * the permission or the kernel support, asking again will not help: memory
 * stops following for every task (and the policy is told so). Otherwise
 * (a node refused) only this task's memory is left alone from then on.
 */
static void follow_memory(struct corun_engine *e, struct etask *t, int cpu, int where)
{
    int to = node_of(e, cpu), err;

    if (!must_follow(e, t, cpu, where))
        return;
    err = e->o.act->move_memory(e->o.act_state, t->t.target,
                                (int)corun_topo_domain(e->o.topo, CORUN_LEVEL_NUMA,
                                                       (unsigned)to)->os_index);
    if (err) {
        note_error(e, err);
        if (corun_act_move_refused(err))
            e->mem_follows = false;
        else
            t->mem_stuck = true;
        return;
    }
    t->home = to;
    e->st.mem_moves++;
}

/* Pins task @t to dense CPU @cpu (-1: gives it back to the kernel). */
static int move_task(struct corun_engine *e, struct etask *t, int cpu, uint64_t now)
{
    struct corun_cpuset set = {0};
    int where = t->cpu >= 0 ? t->cpu : t->seen_cpu;
    int err;

    if (cpu != where && e->arm) {
        trial_begin(e);
        e->arm = false;
    }

    if (cpu < 0) {
        err = e->o.act->restore ? e->o.act->restore(e->o.act_state, t->t.target) : 0;
    } else {
        err = corun_cpuset_set(&set, corun_topo_cpu(e->o.topo, (unsigned)cpu)->os_index);
        if (!err)
            err = e->o.act->apply(e->o.act_state, t->t.target, &set);
        corun_cpuset_release(&set);
    }
    if (err) {
        note_error(e, err);
        return err;
    }
    /* Where its memory is, when nobody said: near where it ran until now
     * (first touch), so that a change taken back does not move it. */
    if (e->mem_follows && t->home < 0 && where >= 0)
        t->home = node_of(e, where);
    /* Memory follows a change once it is kept: a change the outcome check
     * takes back must not drag memory there and back. */
    if (cpu >= 0 && e->trial && where >= 0)
        t->mem_pending = must_follow(e, t, cpu, where);
    else if (cpu >= 0)
        follow_memory(e, t, cpu, where);
    if (t->cpu >= 0)
        e->st.migrations++;
    else if (cpu >= 0)
        e->st.placements++;
    t->cpu = cpu;
    t->pinned_at = now;
    if (cpu != where)
        e->changed_ns = now;
    return 0;
}

/* ---- the outcome check ------------------------------------------------------ */

/* The trial's changes are kept: the memory of the tasks it moved follows
 * them. */
static void follow_kept(struct corun_engine *e)
{
    for (unsigned i = 0; i < e->ntasks; i++) {
        struct etask *t = &e->tasks[i];

        if (t->mem_pending && t->live && t->cpu >= 0)
            follow_memory(e, t, t->cpu, t->tr_cpu);
        t->mem_pending = false;
    }
}

/* The placement changed in a way the engine did not plan (a task joined,
 * left or was pinned by the caller): rates from before no longer compare,
 * and a trial in progress cannot be judged. It is kept, unjudged. */
static void world_changed(struct corun_engine *e, uint64_t now)
{
    for (unsigned i = 0; i < e->ntasks; i++)
        e->tasks[i].nrate = 0;
    if (e->trial)
        follow_kept(e);
    e->trial = false;
    e->changed_ns = now;
}

static double weight_of(const struct etask *t)
{
    return t->t.weight > 0 ? t->t.weight : 1;
}

static double mean_rate(const struct etask *t)
{
    double s = 0;

    for (unsigned k = 0; k < t->nrate; k++)
        s += t->rate[k];
    return t->nrate ? s / t->nrate : NAN;
}

/*
 * Starts a trial of the moves about to be applied (called by move_task()
 * before the first of them): records each task's mean rate over the
 * intervals since the last change and where it runs, and forgets the rates
 * (the intervals after the change start afresh).
 */
static void trial_begin(struct corun_engine *e)
{
    for (unsigned i = 0; i < e->ntasks; i++) {
        struct etask *t = &e->tasks[i];

        t->tr_before = t->live ? mean_rate(t) : NAN;
        t->tr_cpu = t->cpu;
        t->nrate = 0;
    }
    e->trial = !e->o.no_outcome_check;
    e->waited = 0;
}

enum verdict { WAIT, KEEP, UNDO };

/*
 * Judges the trial in progress once every task measured before it has
 * CHECK_WINDOW whole intervals after it (or, after two intervals more, on
 * those that have: a task whose reads began to fail, one that exited, must
 * not stall the engine): WAIT until then, KEEP or UNDO. A
 * change whose measured gain in summed relative speed (each task's rate
 * over its best rate seen, weighted) is below -CHECK_MARGIN per task
 * measured is taken back: every task goes back where it was (pinned there,
 * or given back to the kernel), and the engine holds.
 */
static enum verdict trial_judge(struct corun_engine *e, uint64_t now)
{
    double delta = 0, wsum = 0;
    unsigned nmeas = 0;
    bool late = ++e->waited > CHECK_WINDOW + 2;

    for (unsigned i = 0; i < e->ntasks; i++) {
        const struct etask *t = &e->tasks[i];

        if (!t->live || isnan(t->tr_before) || !(t->best_rate > 0))
            continue;
        if (t->nrate < CHECK_WINDOW) {
            if (!late)
                return WAIT;
            continue;
        }
        delta += weight_of(t) * (mean_rate(t) - t->tr_before) / t->best_rate;
        wsum += weight_of(t);
        nmeas++;
        if (t->mem_pending) {
            /* It runs away from its memory until the change is kept: judge
             * it as it will run once its memory follows. */
            const struct corun_task_profile *p = corun_profiler_get(e->prof, t->slot);
            double r = (CORUN_REMOTE_LATENCY - 1) * corun_profile_mem_share(p->ipc, p->llc_mpki);

            delta += weight_of(t) * mean_rate(t) / t->best_rate * r;
        }
    }
    e->trial = false;
    e->st.trials += nmeas > 0;
    if (!nmeas || delta >= -CHECK_MARGIN * wsum) {
        e->fails = 0;
        follow_kept(e);
        return KEEP;
    }
    for (unsigned i = 0; i < e->ntasks; i++)
        e->tasks[i].mem_pending = false;
    for (unsigned i = 0; i < e->ntasks; i++) {
        struct etask *t = &e->tasks[i];

        if (t->live && t->cpu != t->tr_cpu)
            move_task(e, t, t->tr_cpu, now);
        t->nrate = 0;
    }
    e->st.reverted++;
    e->hold = CHECK_HOLD << (e->fails < 4 ? e->fails : 4);
    if (e->hold > CHECK_HOLD_MAX)
        e->hold = CHECK_HOLD_MAX;
    e->fails++;
    return UNDO;
}

/*
 * Records @t's instruction rate over the interval that ends with @cur, if
 * the interval began after the last change of placement (within a
 * twentieth of an interval: a real actuator moves tasks a little after the
 * samples that decided it).
 */
static void note_rate(struct corun_engine *e, struct etask *t, const struct corun_sample *cur)
{
    uint64_t bit = CORUN_EV_BIT(CORUN_EV_INSTRUCTIONS);
    double r;

    if (!(cur->valid & t->prev.valid & bit) || cur->t_ns <= t->prev.t_ns ||
        cur->value[CORUN_EV_INSTRUCTIONS] < t->prev.value[CORUN_EV_INSTRUCTIONS])
        return;
    r = (double)(cur->value[CORUN_EV_INSTRUCTIONS] - t->prev.value[CORUN_EV_INSTRUCTIONS]) * 1e9 /
        (double)(cur->t_ns - t->prev.t_ns);
    if (r > t->best_rate)
        t->best_rate = r;
    if (t->prev.t_ns + e->o.interval_ns / 20 < e->changed_ns)
        return;
    memmove(&t->rate[1], &t->rate[0], (CHECK_WINDOW - 1) * sizeof(t->rate[0]));
    t->rate[0] = r;
    if (t->nrate < CHECK_WINDOW)
        t->nrate++;
}

/* Reads every live task and feeds the profiler. */
static int sample_all(struct corun_engine *e)
{
    struct corun_profile_obs *obs = calloc(e->ntasks ? e->ntasks : 1, sizeof(*obs));
    struct corun_sample *cur = calloc(e->ntasks ? e->ntasks : 1, sizeof(*cur));
    unsigned *of = calloc(e->ntasks ? e->ntasks : 1, sizeof(*of)), n = 0;
    int err = 0;

    if (!obs || !cur || !of) {
        err = -ENOMEM;
        goto out_free;
    }
    for (unsigned i = 0; i < e->ntasks; i++) {
        struct etask *t = &e->tasks[i];
        int rc;

        if (!t->live)
            continue;
        rc = e->o.sense->read(e->o.sense_state, t->handle, &cur[i]);
        if (rc) {
            note_error(e, rc);
            continue;
        }
        if (t->have_prev)
            note_rate(e, t, &cur[i]);
        obs[n].slot = t->slot;
        obs[n].cur = &cur[i];
        obs[n].prev = t->have_prev ? &t->prev : NULL;
        /* Co-runners count only if pinned for the whole interval. */
        obs[n].cpu = (t->cpu >= 0 && t->have_prev && t->pinned_at <= t->prev.t_ns) ? t->cpu : -1;
        of[n++] = i;
    }
    err = corun_profiler_update(e->prof, obs, n);
    for (unsigned k = 0; k < n; k++) {
        e->tasks[of[k]].prev = cur[of[k]];
        e->tasks[of[k]].have_prev = true;
    }
out_free:
    free(obs);
    free(of);
    free(cur);
    return err;
}

/* ---- placing --------------------------------------------------------------- */

struct plan_ctx {
    struct corun_snapshot snap;
    struct corun_task_profile *prof;
    unsigned *live;   /* engine index of each snapshot task */
    int *cur, *want;  /* current and planned CPU per snapshot task */
};

/* What moving task @k of @pc from where it is to where the plan wants it
 * must gain: the move cost, and the memory's when it follows to another
 * node. */
static double move_cost_of(const struct corun_engine *e, const struct plan_ctx *pc, unsigned k)
{
    const struct etask *t = &e->tasks[pc->live[k]];

    if (pc->want[k] == pc->cur[k])
        return 0;
    return e->o.move_cost +
           (must_follow(e, t, pc->want[k], pc->cur[k]) ? e->o.mem_move_cost : 0);
}

static unsigned find_root(unsigned *parent, unsigned a)
{
    while (parent[a] != a)
        a = parent[a] = parent[parent[a]];
    return a;
}

struct group {
    unsigned root, size;
    double gain, cost; /* predicted, and what its moves must gain */
};

static int by_gain(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    double ga = a->gain / a->size, gb = b->gain / b->size;

    if (ga != gb)
        return ga > gb ? -1 : 1;
    return a->root < b->root ? -1 : a->root > b->root;
}

/*
 * More moves than the cap allows: the moves are grouped so that a task
 * taking a CPU another mover leaves goes with it (a swap is one group), each
 * group is scored by the predicted gain of applying it alone, and the best
 * groups that fit in the cap and pay their move cost are applied. A group
 * larger than the cap is applied alone when it comes first.
 */
static int apply_capped(struct corun_engine *e, struct plan_ctx *pc, unsigned m, unsigned cap,
                        uint64_t now)
{
    unsigned ncpus = corun_topo_ncpus(e->o.topo), *parent = NULL, ng = 0, done = 0;
    int *holder = NULL, *trial = NULL, err = -ENOMEM;
    struct group *g = NULL;
    double base;

    parent = malloc(m * sizeof(*parent));
    holder = malloc(ncpus * sizeof(*holder));
    trial = malloc(m * sizeof(*trial));
    g = calloc(m, sizeof(*g));
    if (!parent || !holder || !trial || !g)
        goto out_free;
    for (unsigned c = 0; c < ncpus; c++)
        holder[c] = -1;
    for (unsigned k = 0; k < m; k++) {
        parent[k] = k;
        if (pc->cur[k] >= 0 && holder[pc->cur[k]] < 0)
            holder[pc->cur[k]] = (int)k;
    }
    for (unsigned k = 0; k < m; k++) {
        int h;

        if (pc->want[k] == pc->cur[k] || pc->want[k] < 0)
            continue;
        h = holder[pc->want[k]];
        if (h >= 0 && pc->want[h] != pc->cur[h])
            parent[find_root(parent, k)] = find_root(parent, (unsigned)h);
    }
    base = corun_policy_predict(&pc->snap, pc->cur, NULL);
    for (unsigned k = 0; k < m; k++) {
        unsigned r;
        int found = -1;

        if (pc->want[k] == pc->cur[k])
            continue;
        r = find_root(parent, k);
        for (unsigned j = 0; j < ng; j++)
            if (g[j].root == r)
                found = (int)j;
        if (found < 0) {
            found = (int)ng;
            g[ng++] = (struct group){.root = r};
        }
        g[found].size++;
        g[found].cost += move_cost_of(e, pc, k);
    }
    for (unsigned j = 0; j < ng; j++) {
        for (unsigned k = 0; k < m; k++)
            trial[k] = (pc->want[k] != pc->cur[k] && find_root(parent, k) == g[j].root)
                           ? pc->want[k]
                           : pc->cur[k];
        g[j].gain = corun_policy_predict(&pc->snap, trial, NULL) - base;
    }
    qsort(g, ng, sizeof(*g), by_gain);
    for (unsigned j = 0; j < ng; j++) {
        /* A group bigger than the whole cap (a swap under a cap of one)
         * would never fit: it goes alone in an interval of its own. */
        if (g[j].gain <= g[j].cost ||
            (done + g[j].size > cap && (done || g[j].size <= cap))) {
            e->st.capped += g[j].size;
            continue;
        }
        for (unsigned k = 0; k < m; k++)
            if (pc->want[k] != pc->cur[k] && find_root(parent, k) == g[j].root)
                move_task(e, &e->tasks[pc->live[k]], pc->want[k], now);
        done += g[j].size;
    }
    err = 0;
out_free:
    free(parent);
    free(holder);
    free(trial);
    free(g);
    return err;
}

/* Moves allowed this interval: the caller's cap, else a quarter of the
 * tasks per second of interval, so that a task moves well under once a
 * second on average whatever the interval (at least one move). */
static unsigned move_cap(const struct corun_engine *e, unsigned m)
{
    double per = (double)m * (double)e->o.interval_ns * 1e-9 / 4;

    if (e->o.max_moves)
        return e->o.max_moves;
    return per >= 1 ? (unsigned)per : 1;
}

static int place_and_apply(struct corun_engine *e, uint64_t now)
{
    struct plan_ctx pc = {0};
    struct corun_plan plan;
    unsigned m = 0, moves = 0;
    bool all_pinned = true, any_pinned = false, unpins = false;
    int err = -ENOMEM;

    if (e->trial && trial_judge(e, now) != KEEP)
        return 0;
    if (e->hold) {
        e->hold--;
        return 0;
    }
    pc.prof = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.prof));
    pc.live = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.live));
    pc.cur = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.cur));
    pc.want = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.want));
    if (!pc.prof || !pc.live || !pc.cur || !pc.want)
        goto out_free;
    for (unsigned i = 0; i < e->ntasks; i++) {
        if (!e->tasks[i].live)
            continue;
        pc.prof[m] = *corun_profiler_get(e->prof, e->tasks[i].slot);
        /* Where it runs: pinned, or where the caller saw the kernel put it. */
        pc.cur[m] = e->tasks[i].cpu >= 0 ? e->tasks[i].cpu : e->tasks[i].seen_cpu;
        pc.prof[m].cpu = pc.cur[m];
        pc.prof[m].home_known = e->tasks[i].home >= 0;
        pc.prof[m].home_node = e->tasks[i].home >= 0 ? (unsigned)e->tasks[i].home : 0;
        /* The engine's own hysteresis starts after its first plan: until
         * then every policy's plan is applied whole (a policy like corun
         * weighs moves itself, from the snapshot's CPUs). */
        all_pinned &= e->tasks[i].cpu >= 0;
        any_pinned |= e->tasks[i].cpu >= 0;
        pc.live[m++] = i;
    }
    err = 0;
    if (!m)
        goto out_free;
    pc.snap = (struct corun_snapshot){.topo = e->o.topo,
                                      .ntasks = m,
                                      .tasks = pc.prof,
                                      .seed = e->o.seed ^ (0x9e3779b97f4a7c15ull * (e->round + 1)),
                                      .round = e->round,
                                      /* The first plan has no placement of
                                       * ours to hold to: the kernel's. */
                                      .move_cost = e->round ? e->o.move_cost : 0,
                                      .mem_follows = e->mem_follows,
                                      .mem_move_cost = e->o.mem_move_cost,
                                      .turbo_rel = e->o.turbo_rel,
                                      .turbo_n = e->o.turbo_rel ? e->o.turbo_n : 0};
    plan = (struct corun_plan){.ntasks = m, .cpu = pc.want};
    e->round++;
    e->st.plans++;
    err = e->o.policy->place(&pc.snap, &plan);
    if (!err)
        err = corun_policy_check_plan(&pc.snap, &plan);
    if (err)
        goto out_free;
    for (unsigned k = 0; k < m; k++) {
        moves += pc.want[k] != pc.cur[k];
        unpins |= pc.want[k] < 0;
        /* Staying where the kernel put it: pin it there, nothing moves. */
        if (pc.want[k] >= 0 && pc.want[k] == pc.cur[k] && e->tasks[pc.live[k]].cpu < 0)
            move_task(e, &e->tasks[pc.live[k]], pc.want[k], now);
    }
    if (!moves)
        goto out_free;
    /* The first move of what follows starts a trial. */
    e->arm = true;
    if (any_pinned && all_pinned && !unpins) {
        double gain = corun_policy_predict(&pc.snap, pc.want, NULL) -
                      corun_policy_predict(&pc.snap, pc.cur, NULL), cost = 0;

        for (unsigned k = 0; k < m; k++)
            cost += move_cost_of(e, &pc, k);
        if (gain < cost) {
            e->st.held++;
            goto out_free;
        }
        if (moves > move_cap(e, m)) {
            err = apply_capped(e, &pc, m, move_cap(e, m), now);
            goto out_free;
        }
    }
    /* The first plan, new tasks, or a policy that unpins: applied whole. */
    for (unsigned k = 0; k < m; k++)
        if (pc.want[k] != pc.cur[k])
            move_task(e, &e->tasks[pc.live[k]], pc.want[k], now);
out_free:
    e->arm = false;
    free(pc.prof);
    free(pc.live);
    free(pc.cur);
    free(pc.want);
    return err;
}

int corun_engine_step(struct corun_engine *e)
{
    uint64_t now = e->o.clock.now_ns(e->o.clock.ctx);
    int err;

    if (!e->started) {
        e->started = true;
        e->start_ns = now;
        if (e->o.warmup_policy) {
            const struct corun_policy *pol = e->o.policy;

            /* The warm-up placement is applied whole, once. */
            e->o.policy = e->o.warmup_policy;
            err = place_and_apply(e, now);
            e->o.policy = pol;
            e->round = 0;
            /* Nothing was measured before it: not a trial. */
            world_changed(e, now);
            if (err)
                return err;
        }
    }
    e->st.intervals++;
    err = sample_all(e);
    if (err)
        return err;
    if (now - e->start_ns < e->o.warmup_ns)
        return 0;
    return place_and_apply(e, now);
}

int corun_engine_run(struct corun_engine *e, uint64_t duration_ns, volatile const bool *stop)
{
    uint64_t t0 = e->o.clock.now_ns(e->o.clock.ctx), next = t0;
    int err;

    /* The first step only takes the initial samples (and the warm-up
     * placement): nothing has been measured yet. */
    err = corun_engine_step(e);
    while (!err && !(stop && *stop)) {
        next += e->o.interval_ns;
        if (duration_ns && next > t0 + duration_ns)
            break;
        err = e->o.clock.wait_until(e->o.clock.ctx, next);
        if (!err && !(stop && *stop))
            err = corun_engine_step(e);
    }
    return err;
}

int corun_engine_set_hint(struct corun_engine *e, unsigned idx, enum corun_class hint)
{
    if (idx >= e->ntasks)
        return -ENOENT;
    return corun_profiler_set_hint(e->prof, e->tasks[idx].slot, hint);
}

int corun_engine_set_home(struct corun_engine *e, unsigned idx, int node)
{
    if (idx >= e->ntasks)
        return -ENOENT;
    if (node >= (int)corun_topo_ndomains(e->o.topo, CORUN_LEVEL_NUMA) || node < -1)
        return -EINVAL;
    e->tasks[idx].home = node;
    return 0;
}

int corun_engine_set_cpu(struct corun_engine *e, unsigned idx, int cpu)
{
    const struct corun_topo_cpu *c;

    if (idx >= e->ntasks)
        return -ENOENT;
    c = cpu >= 0 ? corun_topo_cpu(e->o.topo, (unsigned)cpu) : NULL;
    if (cpu < -1 || (cpu >= 0 && (!c || !c->usable)))
        return -EINVAL;
    e->tasks[idx].seen_cpu = cpu;
    return 0;
}

int corun_engine_adopt(struct corun_engine *e, unsigned idx, int cpu)
{
    const struct corun_topo_cpu *c;
    struct etask *t;

    if (idx >= e->ntasks || !e->tasks[idx].live)
        return -ENOENT;
    c = cpu >= 0 ? corun_topo_cpu(e->o.topo, (unsigned)cpu) : NULL;
    if (cpu < -1 || (cpu >= 0 && (!c || !c->usable)))
        return -EINVAL;
    t = &e->tasks[idx];
    /* Pinned from now: its co-runners count from the next whole interval. */
    t->cpu = cpu;
    t->seen_cpu = cpu;
    t->pinned_at = e->o.clock.now_ns(e->o.clock.ctx);
    world_changed(e, t->pinned_at);
    return 0;
}

int corun_engine_restore(struct corun_engine *e)
{
    int err = e->o.act->restore_all ? e->o.act->restore_all(e->o.act_state) : 0;

    for (unsigned i = 0; i < e->ntasks; i++)
        e->tasks[i].cpu = -1;
    return err;
}

void corun_engine_stats(const struct corun_engine *e, struct corun_engine_stats *out)
{
    *out = e->st;
}

int corun_engine_profile(const struct corun_engine *e, unsigned idx,
                         struct corun_task_profile *out)
{
    const struct corun_task_profile *p;

    if (idx >= e->ntasks || !(p = corun_profiler_get(e->prof, e->tasks[idx].slot)))
        return -ENOENT;
    *out = *p;
    out->cpu = e->tasks[idx].cpu;
    return 0;
}

int corun_engine_task_cpu(const struct corun_engine *e, unsigned idx)
{
    return idx < e->ntasks ? e->tasks[idx].cpu : -1;
}

unsigned corun_engine_ntasks(const struct corun_engine *e)
{
    return e->ntasks;
}
