/*
 * engine-apply.c — asking the policy and applying its plan: the snapshot,
 * the hysteresis (predicted gain against the cost of moving, the cap on
 * moves and the debt of moves made past it), the moves through the
 * actuator, and memory following its task.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "engine/engine-internal.h"

void corun__engine_note_error(struct corun_engine *e, int err)
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

static void emit(struct corun_engine *e, const struct corun_engine_event *ev)
{
    if (e->o.on_event)
        e->o.on_event(e->o.event_ctx, ev);
}

/*
 * Task @t now runs on @cpu (it ran on @where): when memory follows and that
 * is another node than its memory's, the memory is moved there
 * (corun__engine_memory_to()).
 */
void corun__engine_follow_memory(struct corun_engine *e, struct etask *t, int cpu, int where,
                                 uint64_t now)
{
    if (!must_follow(e, t, cpu, where))
        return;
    corun__engine_memory_to(e, t, node_of(e, cpu), now);
}

/*
 * Moves task @t's memory to node @to (a domain index) from its home. A
 * failure is counted, and is not the move's: the task runs where it was
 * put. Without the permission or the kernel support, asking again will not
 * help: memory stops following for every task (and the policy is told so).
 * Otherwise (a node refused) only this task's memory is left alone from
 * then on. The task stalls while its memory moves: for CHECK_WINDOW
 * intervals from @now, a trial's first interval is no early verdict
 * (engine-check.c).
 */
void corun__engine_memory_to(struct corun_engine *e, struct etask *t, int to, uint64_t now)
{
    int from = t->home, err;

    err = e->o.act->move_memory(
        e->o.act_state, t->t.target,
        (int)corun_topo_domain(e->o.topo, CORUN_LEVEL_NUMA, (unsigned)to)->os_index);
    emit(e, &(struct corun_engine_event){.kind = CORUN_ENGINE_EV_MEMORY,
                                         .idx = (unsigned)(t - e->tasks),
                                         .from = from,
                                         .to = to,
                                         .err = err,
                                         .speed_now = NAN,
                                         .speed_planned = NAN});
    if (err) {
        corun__engine_note_error(e, err);
        if (corun_act_move_refused(err)) {
            e->mem_follows = false;
            e->mem_refused = true;
        } else {
            t->mem_stuck = true;
        }
        return;
    }
    t->home = to;
    e->st.mem_moves++;
    e->mem_settled_ns = now + CHECK_WINDOW * e->o.interval_ns;
}

/*
 * Pins task @t to dense CPU @cpu (-1: gives it back to the kernel), for a
 * plan (@kind MOVE) or the outcome check (UNDO), and tells the caller. A
 * task the actuator may not move (EPERM, EACCES) or whose owner has set
 * its affinity since (EBUSY) is left alone from then on: asking again
 * would be refused again.
 */
int corun__engine_move(struct corun_engine *e, struct etask *t, int cpu, uint64_t now,
                       enum corun_engine_event_kind kind)
{
    struct corun_cpuset set = {0};
    int where = t->cpu >= 0 ? t->cpu : t->seen_cpu;
    struct corun_engine_event ev = {.kind = kind,
                                    .idx = (unsigned)(t - e->tasks),
                                    .from = t->cpu,
                                    .to = cpu,
                                    .confirmed = kind == CORUN_ENGINE_EV_MOVE ? t->streak : 0,
                                    .in_place = cpu >= 0 && cpu == where,
                                    .speed_now = kind == CORUN_ENGINE_EV_MOVE ? t->speed_now : NAN,
                                    .speed_planned =
                                        kind == CORUN_ENGINE_EV_MOVE ? t->speed_planned : NAN};
    int err;

    if (cpu != where && e->arm) {
        corun__engine_trial_begin(e, now);
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
    ev.err = err;
    emit(e, &ev);
    if (err) {
        corun__engine_note_error(e, err);
        if (err == -EPERM || err == -EACCES || err == -EBUSY) {
            t->refused = true;
            t->state = CORUN_ENGINE_REFUSED;
        }
        return err;
    }
    t->state = kind == CORUN_ENGINE_EV_UNDO ? CORUN_ENGINE_HELD : CORUN_ENGINE_SETTLED;
    if (cpu != where) {
        t->moved = true;
        t->moved_at = now;
    }
    /* Where its memory is, when nobody said: near where it ran until now
     * (first touch), so that its memory follows it from there and a change
     * taken back brings it back there. */
    if (e->mem_follows && t->home < 0 && where >= 0)
        t->home = node_of(e, where);
    /* Memory moves with its task, as it is moved: a trial that ran the task
     * away from its memory until the verdict cost more than the move
     * (docs/internals/engine.md). Within a trial the intervals its pages
     * move in are not measured, and a change taken back brings the memory
     * back. */
    if (cpu >= 0) {
        int home = t->home;

        corun__engine_follow_memory(e, t, cpu, where, now);
        if (e->trial && t->home != home) {
            t->tr_home = home;
            e->changed_ns = now + e->o.interval_ns;
        }
    }
    if (t->cpu >= 0)
        e->st.migrations++;
    else if (cpu >= 0)
        e->st.placements++;
    t->cpu = cpu;
    t->pinned_at = now;
    if (cpu != where && e->changed_ns < now)
        e->changed_ns = now;
    return 0;
}

/* ---- placing --------------------------------------------------------------- */

struct plan_ctx {
    struct corun_snapshot snap;
    struct corun_task_profile *prof;
    unsigned *live;  /* engine index of each snapshot task */
    int *cur, *want; /* current and planned CPU per snapshot task */
};

/* The memory-move cost of plan @round: the option's for the first plan,
 * MEM_LATER_SHARE of it after (engine-internal.h). */
static double mem_cost_of(const struct corun_engine *e, unsigned round)
{
    return round ? MEM_LATER_SHARE * e->o.mem_move_cost : e->o.mem_move_cost;
}

/* What moving task @k of @pc from where it is to where the plan wants it
 * must gain: the move cost, and the memory's when it follows to another
 * node (the engine's own gain check judges plans after the first). */
static double move_cost_of(const struct corun_engine *e, const struct plan_ctx *pc, unsigned k)
{
    const struct etask *t = &e->tasks[pc->live[k]];

    if (pc->want[k] == pc->cur[k])
        return 0;
    return e->o.move_cost +
           (must_follow(e, t, pc->want[k], pc->cur[k]) ? mem_cost_of(e, 1) : 0);
}

static unsigned find_root(unsigned *parent, unsigned a)
{
    while (parent[a] != a)
        a = parent[a] = parent[parent[a]];
    return a;
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

/* How many moves a change may reach past the engine's own cap when no part
 * of it within the cap pays (CAP_REACH_S seconds' worth at the cap's
 * rate); 0 under the caller's cap, which holds for every plan. */
static unsigned move_reach(const struct corun_engine *e, unsigned m)
{
    if (e->o.max_moves)
        return 0;
    return (unsigned)((double)m * CAP_REACH_S / 4);
}

struct group {
    unsigned root, size;
    double gain, cost; /* predicted, and what its moves must gain */
    bool take;         /* chosen by pick_joint() */
};

static int by_gain(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    double ga = a->gain / a->size, gb = b->gain / b->size;

    if (ga != gb)
        return ga > gb ? -1 : 1;
    return a->root < b->root ? -1 : a->root > b->root;
}

/* Sets in @trial the moves of the plan in @pc that group @root holds. */
static void group_into(const struct plan_ctx *pc, unsigned m, unsigned *parent, unsigned root,
                       int *trial)
{
    for (unsigned k = 0; k < m; k++)
        if (pc->want[k] != pc->cur[k] && find_root(parent, k) == root)
            trial[k] = pc->want[k];
}

#define JOINT_CAND  16
#define JOINT_STEPS 8

/* The greedy pass of pick_joint() within @cap: marks the groups taken in
 * g[].take, leaves their moves' count in @size_out and returns how many
 * groups were taken (0: none paid). */
static unsigned joint_greedy(const struct plan_ctx *pc, unsigned m, unsigned cap, struct group *g,
                             unsigned ng, unsigned *parent, int *trial, int *tmp, double base,
                             unsigned *size_out)
{
    unsigned order[JOINT_STEPS], nord = 0, size = 0, nbest = 0;
    double cost = 0, best = 0;

    memcpy(trial, pc->cur, m * sizeof(*trial));
    while (nord < JOINT_STEPS && size < cap) {
        int bj = -1;
        double bv = -INFINITY;

        for (unsigned j = 0; j < ng && j < JOINT_CAND; j++) {
            double v;

            if (g[j].take || (size + g[j].size > cap && (size || g[j].size <= cap)))
                continue;
            memcpy(tmp, trial, m * sizeof(*tmp));
            group_into(pc, m, parent, g[j].root, tmp);
            v = corun_policy_predict(&pc->snap, tmp, NULL) - base - cost - g[j].cost;
            if (v > bv) {
                bv = v;
                bj = (int)j;
            }
        }
        if (bj < 0)
            break;
        g[bj].take = true;
        order[nord++] = (unsigned)bj;
        group_into(pc, m, parent, g[bj].root, trial);
        size += g[bj].size;
        cost += g[bj].cost;
        if (bv > best) {
            best = bv;
            nbest = nord;
        }
    }
    for (unsigned q = nbest; q < nord; q++) {
        g[order[q]].take = false;
        size -= g[order[q]].size;
    }
    *size_out = size;
    return nbest;
}

/*
 * Which groups of a capped change are applied, in g[].take: added one at a
 * time, each the one whose moves, with those taken, raise the predicted
 * gain most over the cost of all of them, while they fit in @cap (a group
 * bigger than the cap alone, first); then the first groups up to where
 * they paid most are kept, if they paid. Scored alone, groups that gain
 * only together never pay: on 4x Xeon 8353H mixed 64 (bench/heldout6) the
 * whole plan was predicted to gain 0.74, more than its moves' cost, the
 * best group of it alone 0.0074 against its 0.0175, and the engine
 * replanned it every interval for seconds without moving a task.
 * Only the JOINT_CAND best groups alone are tried, for at most
 * JOINT_STEPS steps (about 100 predictions; all groups for as many steps
 * as the cap allows measured the same on bench/policies); the groups
 * after them are taken as before, when they pay alone and fit. Where
 * nothing within @cap pays, the same is done again within @reach (0:
 * not), and true is returned when that took something: under a cap of
 * one move, a change of three that pays only whole would never be made
 * (bench/heldout9's A64FX mixed 8, docs/internals/engine.md). @trial and
 * @tmp have room for @m CPUs; @g is sorted by by_gain().
 */
static bool pick_joint(const struct plan_ctx *pc, unsigned m, unsigned cap, unsigned reach,
                       struct group *g, unsigned ng, unsigned *parent, int *trial, int *tmp,
                       double base)
{
    unsigned size;
    bool past = false;

    if (!joint_greedy(pc, m, cap, g, ng, parent, trial, tmp, base, &size) && reach > cap) {
        cap = reach;
        past = joint_greedy(pc, m, cap, g, ng, parent, trial, tmp, base, &size) > 0;
    }
    /* Groups not tried together go as before: those that pay alone, while
     * they fit. */
    for (unsigned j = JOINT_CAND; j < ng; j++)
        if (g[j].gain > g[j].cost && size + g[j].size <= cap) {
            g[j].take = true;
            size += g[j].size;
        }
    return past;
}

/*
 * More moves than the cap allows: the moves are grouped so that a task
 * taking a CPU another mover leaves goes with it (a swap is one group), each
 * group is scored by the predicted gain of applying it alone, and the best
 * groups that fit in the cap are applied; with @need_gain, those that pay
 * their moves' cost together (pick_joint(), which may reach past the
 * engine's own cap: the moves beyond it are owed). A group larger than the
 * cap is applied alone when it comes first.
 */
static int apply_capped(struct corun_engine *e, struct plan_ctx *pc, unsigned m, unsigned cap,
                        bool need_gain, uint64_t now)
{
    unsigned ncpus = corun_topo_ncpus(e->o.topo), *parent = NULL, ng = 0, done = 0;
    int *holder = NULL, *trial = NULL, *tmp = NULL, err = -ENOMEM;
    struct group *g = NULL;
    double base;
    bool past = false;

    parent = malloc(m * sizeof(*parent));
    holder = malloc(ncpus * sizeof(*holder));
    trial = malloc(m * sizeof(*trial));
    tmp = malloc(m * sizeof(*tmp));
    g = calloc(m, sizeof(*g));
    if (!parent || !holder || !trial || !tmp || !g)
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
        memcpy(trial, pc->cur, m * sizeof(*trial));
        group_into(pc, m, parent, g[j].root, trial);
        g[j].gain = corun_policy_predict(&pc->snap, trial, NULL) - base;
    }
    qsort(g, ng, sizeof(*g), by_gain);
    if (need_gain)
        past = pick_joint(pc, m, cap, move_reach(e, m), g, ng, parent, trial, tmp, base);
    memcpy(trial, pc->cur, m * sizeof(*trial));
    for (unsigned j = 0; j < ng; j++) {
        /* A group bigger than the whole cap (a swap under a cap of one)
         * would never fit: it goes alone in an interval of its own. A
         * group left out that pays alone waits for room (CAPPED); one
         * that does not, for a plan that pays (HELD). */
        bool paid = !need_gain || g[j].gain > g[j].cost;

        if (need_gain ? !g[j].take : done + g[j].size > cap && (done || g[j].size <= cap)) {
            e->st.capped += g[j].size;
            for (unsigned k = 0; k < m; k++)
                if (pc->want[k] != pc->cur[k] && find_root(parent, k) == g[j].root)
                    e->tasks[pc->live[k]].state =
                        paid ? CORUN_ENGINE_CAPPED : CORUN_ENGINE_HELD;
            continue;
        }
        for (unsigned k = 0; k < m; k++)
            if (pc->want[k] != pc->cur[k] && find_root(parent, k) == g[j].root) {
                corun__engine_move(e, &e->tasks[pc->live[k]], pc->want[k], now,
                                   CORUN_ENGINE_EV_MOVE);
                trial[k] = pc->want[k];
            }
        done += g[j].size;
    }
    /* What is tried is the part applied: the doubt a loss leaves is
     * measured against what that part was predicted to gain. */
    if (isfinite(e->tr_gain))
        e->tr_gain = done ? corun_policy_predict(&pc->snap, trial, NULL) - base : NAN;
    if (past && done > cap)
        e->debt += done - cap;
    err = 0;
out_free:
    free(parent);
    free(holder);
    free(trial);
    free(tmp);
    free(g);
    return err;
}

/*
 * The policy's prediction of each snapshot task's speed where it runs and
 * where the plan puts it, kept for the caller (opts.predict). A failed
 * prediction (ENOMEM) leaves NaN: no figure rather than a wrong one.
 */
static void keep_prediction(struct corun_engine *e, const struct plan_ctx *pc, unsigned m)
{
    double *now = calloc(m, sizeof(double)), *then = calloc(m, sizeof(double));
    bool ok = now && then && corun_policy_predict(&pc->snap, pc->cur, now) >= 0 &&
              corun_policy_predict(&pc->snap, pc->want, then) >= 0;

    for (unsigned k = 0; k < m; k++) {
        e->tasks[pc->live[k]].speed_now = ok ? now[k] : NAN;
        e->tasks[pc->live[k]].speed_planned = ok ? then[k] : NAN;
    }
    free(now);
    free(then);
}

/*
 * Per-task hysteresis on plan @pc: counts the plans in a row that wanted
 * each task's CPU, pins where it runs a task the plan leaves there, and
 * keeps where it is a task the actuator refused, one whose move is not yet
 * confirmed, and one the engine moved less than min_dwell intervals ago
 * (the warm-up placement is applied whole). Returns the moves left.
 */
static unsigned hold_back(struct corun_engine *e, struct plan_ctx *pc, unsigned m, uint64_t now)
{
    /* Whole intervals, with half of one to spare: a step that comes a
     * little early (a real clock) must not hold a task one interval more. */
    uint64_t dwell_ns =
        e->o.min_dwell ? e->o.min_dwell * e->o.interval_ns - e->o.interval_ns / 2 : 0;
    unsigned moves = 0;

    for (unsigned k = 0; k < m; k++) {
        struct etask *t = &e->tasks[pc->live[k]];

        t->streak = t->streak && t->planned == pc->want[k] ? t->streak + 1 : 1;
        t->planned = pc->want[k];
        /* Left to the kernel and not pinned: it is there already. */
        if (pc->want[k] < 0 && t->cpu < 0) {
            pc->want[k] = pc->cur[k];
            t->state = t->refused ? CORUN_ENGINE_REFUSED : CORUN_ENGINE_SETTLED;
            continue;
        }
        if (pc->want[k] == pc->cur[k]) {
            t->state = t->refused ? CORUN_ENGINE_REFUSED : CORUN_ENGINE_SETTLED;
            /* Staying where the kernel put it: pinned there once confirmed
             * (it is a change of affinity all the same), nothing moves. */
            if (pc->want[k] >= 0 && t->cpu < 0 && !t->refused) {
                if (t->streak >= e->o.confirm || e->warming)
                    corun__engine_move(e, t, pc->want[k], now, CORUN_ENGINE_EV_MOVE);
                else
                    t->state = CORUN_ENGINE_CONFIRMING;
            }
            continue;
        }
        if (t->refused)
            t->state = CORUN_ENGINE_REFUSED;
        else if (t->streak < e->o.confirm && !e->warming)
            t->state = CORUN_ENGINE_CONFIRMING;
        else if (t->cpu >= 0 && t->moved && now - t->moved_at < dwell_ns && !e->warming)
            t->state = CORUN_ENGINE_DWELLING;
        else {
            moves++;
            continue;
        }
        pc->want[k] = pc->cur[k];
    }
    return moves;
}

/*
 * What each task's measured change will weigh in the trial of the change
 * about to be applied (engine-check.c): its speed where it runs, as the
 * predictor rates it in @pc's snapshot; @now holds those speeds when the
 * gain's prediction gave them, else NULL and they are predicted here. NaN
 * where that is not known (no CPU, no memory for the prediction): the
 * best rate seen stands in.
 */
static void weigh_trial(struct corun_engine *e, const struct plan_ctx *pc, unsigned m,
                        const double *now)
{
    double *own = NULL;

    if (!now && (own = calloc(m ? m : 1, sizeof(double))) &&
        corun_policy_predict(&pc->snap, pc->cur, own) >= 0)
        now = own;
    for (unsigned i = 0; i < e->ntasks; i++)
        e->tasks[i].tr_speed = NAN;
    for (unsigned k = 0; now && k < m; k++)
        e->tasks[pc->live[k]].tr_speed = pc->cur[k] >= 0 ? now[k] : NAN;
    free(own);
}

/*
 * A second opinion's plan (engine-second.c), @moves of it left by
 * hold_back(), predicted to gain @gain: applied whole, as a trial judged
 * on CHECK_WINDOW_LONG intervals (engine-check.c keeps it only if it
 * measured a gain). Its moves beyond the engine's own cap are owed, as
 * those of a change that reaches past it.
 */
static void apply_second(struct corun_engine *e, const struct plan_ctx *pc, unsigned m,
                         unsigned moves, double gain, uint64_t now)
{
    unsigned cap = move_cap(e, m);

    if (!moves) {
        e->second = SECOND_DONE;
        return;
    }
    e->tr_gain = gain;
    e->tr_first = false;
    weigh_trial(e, pc, m, NULL);
    e->arm = true;
    for (unsigned k = 0; k < m; k++)
        if (pc->want[k] != pc->cur[k])
            corun__engine_move(e, &e->tasks[pc->live[k]], pc->want[k], now, CORUN_ENGINE_EV_MOVE);
    if (e->trial)
        e->window = CHECK_WINDOW_LONG;
    else
        e->second = SECOND_DONE;
    if (moves > cap)
        e->debt += moves - cap;
}

int corun__engine_place(struct corun_engine *e, uint64_t now)
{
    struct plan_ctx pc = {0};
    struct corun_plan plan;
    unsigned m = 0, moves = 0;
    bool all_pinned = true, any_pinned = false, unpins = false, known, second;
    double gain, base, *sp = NULL; /* base: predicted STP where the tasks run, sp: speeds */
    int err = -ENOMEM;

    if (e->trial && corun__engine_trial_judge(e, now) != CORUN__KEEP)
        return 0;
    e->doubt *= DOUBT_DECAY;
    if (e->hold) {
        e->hold--;
        return 0;
    }
    /* Moves made past the cap are repaid at its rate before the next plan:
     * on average no more move than the cap allows. */
    if (e->debt > 0) {
        for (unsigned i = 0; i < e->ntasks; i++)
            m += e->tasks[i].live && e->tasks[i].active;
        e->debt -= move_cap(e, m);
        return 0;
    }
    pc.prof = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.prof));
    pc.live = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.live));
    pc.cur = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.cur));
    pc.want = calloc(e->ntasks ? e->ntasks : 1, sizeof(*pc.want));
    if (!pc.prof || !pc.live || !pc.cur || !pc.want)
        goto out_free;
    for (unsigned i = 0; i < e->ntasks; i++) {
        const struct etask *t = &e->tasks[i];

        /* An idle task neither suffers nor causes interference: it stays
         * where it is, out of the snapshot. */
        if (!t->live || !t->active)
            continue;
        pc.prof[m] = *corun_profiler_get(e->prof, t->slot);
        /* Where it runs: pinned, or where the caller saw the kernel put it. */
        pc.cur[m] = t->cpu >= 0 ? t->cpu : t->seen_cpu;
        pc.prof[m].cpu = pc.cur[m];
        pc.prof[m].home_known = t->home >= 0;
        pc.prof[m].home_node = t->home >= 0 ? (unsigned)t->home : 0;
        /* The engine's own hysteresis starts after its first plan: until
         * then every policy's plan is applied whole (a policy like corun
         * weighs moves itself, from the snapshot's CPUs). A task the
         * actuator refused is as settled as a pinned one. */
        all_pinned &= t->cpu >= 0 || t->refused;
        any_pinned |= t->cpu >= 0;
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
                                      .mem_move_cost = mem_cost_of(e, e->round),
                                      .turbo_rel = e->o.turbo_rel,
                                      .turbo_n = e->o.turbo_rel ? e->o.turbo_n : 0,
                                      /* After the first plan, the cap
                                       * splits a bigger change. */
                                      .max_moves = e->round ? move_cap(e, m) : e->o.max_moves};
    plan = (struct corun_plan){.ntasks = m, .cpu = pc.want};
    e->round++;
    e->st.plans++;
    err = e->o.policy->place(&pc.snap, &plan);
    if (!err)
        err = corun_policy_check_plan(&pc.snap, &plan);
    if (err)
        goto out_free;
    second = corun__engine_second(e, &pc.snap, pc.live, pc.cur, pc.want, false, NAN, &gain);
    if (e->o.predict)
        keep_prediction(e, &pc, m);
    moves = hold_back(e, &pc, m, now);
    if (second) {
        apply_second(e, &pc, m, moves, gain, now);
        goto out_free;
    }
    /* A policy that gives tasks back to the kernel (not a task held where
     * nobody knows it runs). */
    for (unsigned k = 0; k < m; k++)
        unpins |= pc.want[k] < 0 && pc.cur[k] >= 0;
    if (!moves)
        goto out_free;
    /* What the change is predicted to gain, where every task's CPU is
     * known (a task whose CPU is not is predicted alone, whatever its
     * neighbours; a policy that unpins leaves some so): judged against the
     * doubt a change taken back left and, for the trial, against what the
     * outcome check measures (engine-check.c). */
    known = !unpins;
    for (unsigned k = 0; k < m; k++)
        known &= pc.cur[k] >= 0;
    gain = base = NAN;
    if (known || (any_pinned && all_pinned && !unpins)) {
        /* The speeds where the tasks run come with it (weigh_trial()). */
        sp = calloc(m, sizeof(*sp));
        base = corun_policy_predict(&pc.snap, pc.cur, sp);
        if (!(base >= 0)) {
            free(sp);
            sp = NULL;
        }
        gain = corun_policy_predict(&pc.snap, pc.want, NULL) - base;
    }
    if (known && e->doubt > 0 && gain < e->doubt) {
        e->st.doubted++;
        for (unsigned k = 0; k < m; k++)
            if (pc.want[k] != pc.cur[k])
                e->tasks[pc.live[k]].state = CORUN_ENGINE_HELD;
        /* The placement stays: the policy has settled as much as with a
         * plan that moves nothing (engine-second.c). */
        if (corun__engine_second(e, &pc.snap, pc.live, pc.cur, pc.want, true, base, &gain)) {
            moves = 0;
            for (unsigned k = 0; k < m; k++)
                moves += pc.want[k] != pc.cur[k];
            apply_second(e, &pc, m, moves, gain, now);
        }
        goto out_free;
    }
    e->tr_gain = known ? gain : NAN;
    e->tr_first = e->round == 1;
    weigh_trial(e, &pc, m, sp);
    /* The first move of what follows starts a trial. */
    e->arm = true;
    if (any_pinned && all_pinned && !unpins) {
        double cost = 0;

        for (unsigned k = 0; k < m; k++)
            cost += move_cost_of(e, &pc, k);
        if (gain < cost) {
            e->st.held++;
            for (unsigned k = 0; k < m; k++)
                if (pc.want[k] != pc.cur[k])
                    e->tasks[pc.live[k]].state = CORUN_ENGINE_HELD;
            goto out_free;
        }
        if (moves > move_cap(e, m)) {
            err = apply_capped(e, &pc, m, move_cap(e, m), true, now);
            goto out_free;
        }
    } else if (e->o.max_moves && moves > e->o.max_moves && !e->warming) {
        /* The caller's cap holds for first placements too: the best
         * predicted first, the policy trusted for the rest. */
        err = apply_capped(e, &pc, m, e->o.max_moves, false, now);
        goto out_free;
    }
    /* The first plan, new tasks, or a policy that unpins: applied whole. */
    for (unsigned k = 0; k < m; k++)
        if (pc.want[k] != pc.cur[k])
            corun__engine_move(e, &e->tasks[pc.live[k]], pc.want[k], now, CORUN_ENGINE_EV_MOVE);
out_free:
    e->arm = false;
    free(sp);
    free(pc.prof);
    free(pc.live);
    free(pc.cur);
    free(pc.want);
    return err;
}
