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
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/internal.h"
#include "corun/engine.h"
#include "engine/engine-internal.h"

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

struct corun_clock corun_clock_monotonic(void)
{
    return (struct corun_clock){.now_ns = mono_now, .wait_until = mono_wait, .ctx = NULL};
}

/* Whether memory follows its task: asked for, possible (an actuator that
 * moves memory, somewhere else for it to go), and not refused for good. */
static void mem_follows_again(struct corun_engine *e)
{
    e->mem_follows = !e->o.no_mem_follow && !e->mem_refused && e->o.act && e->o.act->move_memory &&
                     corun_topo_ndomains(e->o.topo, CORUN_LEVEL_NUMA) > 1;
}

int corun_engine_new(const struct corun_engine_opts *opts, struct corun_engine **out)
{
    struct corun_engine *e;
    int err;

    if (!opts || !opts->topo || !out)
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
        e->o.move_cost = MOVE_COST_DEFAULT;
    else if (e->o.move_cost < 0)
        e->o.move_cost = 0;
    if (e->o.mem_move_cost == 0)
        e->o.mem_move_cost = 0.03;
    else if (e->o.mem_move_cost < 0)
        e->o.mem_move_cost = 0;
    e->placing = e->o.act != NULL;
    e->tr_gain = NAN;
    mem_follows_again(e);
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
    unsigned at = 0, slot;
    int handle = task->handle, err = 0;
    bool own = false;
    struct etask *t;

    /* A removed task's entry and profiler slot go to the new one. */
    while (at < e->ntasks && e->tasks[at].live)
        at++;
    if (at == e->cap) {
        unsigned cap = e->cap ? 2 * e->cap : 16;
        struct etask *v = realloc(e->tasks, cap * sizeof(*v));

        if (!v)
            return -ENOMEM;
        e->tasks = v;
        e->cap = cap;
    }
    if (!task->shared_handle && !task->unread && e->o.sense) {
        err = e->o.sense->attach(e->o.sense_state, task->target, &handle);
        if (err)
            return err;
        own = true;
    }
    if (at < e->ntasks)
        err = corun_profiler_reuse(e->prof, e->tasks[at].slot, task->id, task->hint,
                                   task->weight);
    else
        err = corun_profiler_add(e->prof, task->id, task->hint, task->weight, &slot);
    if (err) {
        if (own && e->o.sense->detach)
            e->o.sense->detach(e->o.sense_state, handle);
        return err;
    }
    t = &e->tasks[at];
    if (at == e->ntasks) {
        memset(t, 0, sizeof(*t));
        t->slot = slot;
        e->ntasks++;
    } else {
        slot = t->slot;
        memset(t, 0, sizeof(*t));
        t->slot = slot;
    }
    t->t = *task;
    t->handle = handle;
    t->own_handle = own;
    t->cpu = -1;
    t->home = -1;
    t->tr_home = -1;
    t->seen_cpu = -1;
    t->planned = -1;
    t->live = true;
    t->active = true;
    t->tr_before = NAN;
    t->tr_speed = NAN;
    t->speed_now = t->speed_planned = NAN;
    if (idx)
        *idx = at;
    if (e->started)
        corun__engine_world_changed(e, e->o.clock.now_ns(e->o.clock.ctx));
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
    if (t->cpu >= 0 && e->o.act && e->o.act->restore)
        err = e->o.act->restore(e->o.act_state, t->t.target);
    t->live = false;
    t->cpu = -1;
    corun__engine_world_changed(e, e->o.clock.now_ns(e->o.clock.ctx));
    return err;
}

/* Reads every live, active task and feeds the profiler. */
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

        if (!t->live || !t->active || !e->o.sense || (!t->own_handle && !t->t.shared_handle))
            continue;
        rc = e->o.sense->read(e->o.sense_state, t->handle, &cur[i]);
        if (rc) {
            corun__engine_note_error(e, rc);
            continue;
        }
        if (t->have_prev)
            corun__engine_note_rate(e, t, &cur[i]);
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

int corun_engine_step(struct corun_engine *e)
{
    uint64_t now = e->o.clock.now_ns(e->o.clock.ctx);
    int err;

    if (!e->started) {
        e->started = true;
        e->start_ns = now;
        if (e->o.warmup_policy && e->placing) {
            const struct corun_policy *pol = e->o.policy;

            /* The warm-up placement is applied whole, once. */
            e->o.policy = e->o.warmup_policy;
            e->warming = true;
            err = corun__engine_place(e, now);
            e->warming = false;
            e->o.policy = pol;
            e->round = 0;
            /* Nothing was measured before it: not a trial. */
            corun__engine_world_changed(e, now);
            if (err)
                return err;
        }
    }
    e->st.intervals++;
    err = sample_all(e);
    if (err)
        return err;
    if (!e->placing) {
        if (e->trial)
            corun__engine_world_changed(e, now);
        return 0;
    }
    if (now - e->start_ns < e->o.warmup_ns)
        return 0;
    return corun__engine_place(e, now);
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
    if (idx >= e->ntasks || !e->tasks[idx].live)
        return -ENOENT;
    return corun_profiler_set_hint(e->prof, e->tasks[idx].slot, hint);
}

int corun_engine_set_home(struct corun_engine *e, unsigned idx, int node)
{
    if (idx >= e->ntasks || !e->tasks[idx].live)
        return -ENOENT;
    if (node >= (int)corun_topo_ndomains(e->o.topo, CORUN_LEVEL_NUMA) || node < -1)
        return -EINVAL;
    e->tasks[idx].home = node;
    return 0;
}

int corun_engine_set_cpu(struct corun_engine *e, unsigned idx, int cpu)
{
    const struct corun_topo_cpu *c;

    if (idx >= e->ntasks || !e->tasks[idx].live)
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
    corun__engine_world_changed(e, t->pinned_at);
    return 0;
}

int corun_engine_set_active(struct corun_engine *e, unsigned idx, bool active)
{
    struct etask *t;

    if (idx >= e->ntasks || !e->tasks[idx].live)
        return -ENOENT;
    t = &e->tasks[idx];
    if (t->active == active)
        return 0;
    t->active = active;
    /* Its rates start afresh: an interval spanning idle time says nothing
     * about where it runs, and it is not judged in a trial it sat out. */
    t->have_prev = false;
    t->nrate = 0;
    t->tr_before = NAN;
    t->streak = 0;
    t->speed_now = t->speed_planned = NAN;
    t->state = active ? CORUN_ENGINE_WAITING : CORUN_ENGINE_IDLE;
    /* Its co-runners' rates before and after no longer compare either. */
    if (e->started)
        corun__engine_world_changed(e, e->o.clock.now_ns(e->o.clock.ctx));
    return 0;
}

int corun_engine_attach(struct corun_engine *e, unsigned idx)
{
    struct etask *t;
    int err;

    if (idx >= e->ntasks || !e->tasks[idx].live)
        return -ENOENT;
    t = &e->tasks[idx];
    if (t->own_handle || t->t.shared_handle || !e->o.sense)
        return 0;
    err = e->o.sense->attach(e->o.sense_state, t->t.target, &t->handle);
    if (err)
        return err;
    t->own_handle = true;
    t->t.unread = false;
    t->have_prev = false;
    return 0;
}

void corun_engine_set_placing(struct corun_engine *e, bool on)
{
    e->placing = on && e->o.act;
}

void corun_engine_retune(struct corun_engine *e, const struct corun_engine_opts *o)
{
    e->o.policy = o->policy ? o->policy : corun_policy_find("corun");
    e->o.interval_ns = o->interval_ns ? o->interval_ns : 1000000000ull;
    e->o.max_moves = o->max_moves;
    e->o.confirm = o->confirm;
    e->o.min_dwell = o->min_dwell;
    e->o.no_mem_follow = o->no_mem_follow;
    mem_follows_again(e);
}

int corun_engine_task_info(const struct corun_engine *e, unsigned idx,
                           struct corun_engine_task_info *out)
{
    const struct etask *t;
    uint64_t now;

    if (idx >= e->ntasks || !e->tasks[idx].live)
        return -ENOENT;
    t = &e->tasks[idx];
    now = e->o.clock.now_ns(e->o.clock.ctx);
    *out = (struct corun_engine_task_info){
        .cpu = t->cpu,
        .planned = t->planned,
        .streak = t->streak,
        /* Rounded, as hold_back() counts them. */
        .dwelt = !t->moved ? UINT_MAX
                 : now <= t->moved_at
                     ? 0
                     : (unsigned)((now - t->moved_at + e->o.interval_ns / 2) / e->o.interval_ns),
        .state = t->state,
        .speed_now = t->speed_now,
        .speed_planned = t->speed_planned,
    };
    return 0;
}

int corun_engine_restore(struct corun_engine *e)
{
    int err = e->o.act && e->o.act->restore_all ? e->o.act->restore_all(e->o.act_state) : 0;

    /* Nothing is pinned now: a change being judged has nothing to take
     * back, and its memory stays where it moved. */
    for (unsigned i = 0; i < e->ntasks; i++) {
        e->tasks[i].cpu = -1;
        e->tasks[i].tr_home = -1;
    }
    e->trial = false;
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

    if (idx >= e->ntasks || !e->tasks[idx].live ||
        !(p = corun_profiler_get(e->prof, e->tasks[idx].slot)))
        return -ENOENT;
    *out = *p;
    out->cpu = e->tasks[idx].cpu;
    return 0;
}

int corun_engine_task_cpu(const struct corun_engine *e, unsigned idx)
{
    return idx < e->ntasks && e->tasks[idx].live ? e->tasks[idx].cpu : -1;
}

unsigned corun_engine_ntasks(const struct corun_engine *e)
{
    return e->ntasks;
}
