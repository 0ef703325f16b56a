/*
 * engine-second.c — a second opinion, asked where the predictor cannot
 * tell two placements apart.
 *
 * The corun policy places by its predictor, whose error between two whole
 * placements is a percent or two: on bench/heldout7's Ryzen 7 5800X3D with
 * the mixed 8 (seed 7) it settled on a placement it rates 0.2% above DI's,
 * which the simulator has 0.35% below it. Where two plans are rated
 * that close, the counters can tell them apart and the model cannot. So,
 * once the policy's plans have settled (from the SECOND_AFTER-th plan on, a
 * plan that moves no task or that the doubt a change left holds back,
 * every task pinned, no trial running), the
 * second policy (DI's plan, by default under the corun policy: a
 * different model of the same profiles) is asked for the same snapshot,
 * and its plan is tried when it is predicted within SECOND_WITHIN of the
 * current placement and moves at most SECOND_ACROSS (one) task to another
 * NUMA node. The trial is
 * measured over CHECK_WINDOW_LONG intervals and kept only if it measured a
 * gain (engine-check.c); else it is taken back. Once per set of tasks.
 *
 * Why hardly a move to another node: where memory follows its task, a
 * plan tried and taken back moves it twice, and an equal plan on another
 * node (a relabelling of symmetric nodes) costs that for nothing. Tried
 * across nodes (within 1%), bench/heldout6's cases at or above DI fell
 * from 54 to 41 of 54 with seed 1; relabelling the second plan's nodes to
 * keep most tasks where they ran did not save it (45 of 54). Measured in
 * docs/internals/engine.md, "A second opinion". Once like tasks are traded
 * (below), what a plan still moves to another node is a real change, and
 * one such move is allowed: on the 2x Xeon 6338, E5-2699 v4 and 6430 with
 * the mixed 8 (seed 7), three cases below DI, DI's plan moves one sheep
 * to the other node, leaving a rabbit an L3 of its own.
 *
 * Like tasks traded first (like_tasks()): DI deals tasks out by their
 * miss rates, not by where they run, so its plan often sends a task to
 * another node where a like one (same class, same weight) runs, and that
 * one back. Where it moves like tasks between nodes, they are traded in
 * its plan so that each stays on its node where a like task's place
 * allows: on bench/heldout3's 2x E5-2670 with the adversarial 32 (seed
 * 7), DI's plan moved 14 tasks to the other node, each node keeping four
 * of each class; traded, it moves none there, and the final placement
 * rose 2.0% and the run 0.8 points over the baseline
 * (docs/internals/engine.md). Within a node its choice of which like task
 * goes where stands: their profiles differ (trading them there too cost
 * heldout7's Xeon D-1541 adversarial 16 0.1% on every seed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "corun/policy.h"
#include "engine/engine-internal.h"

/* The second policy: the caller's, else DI's under the corun policy. */
static const struct corun_policy *second_policy(const struct corun_engine *e)
{
    if (e->o.no_second_opinion)
        return NULL;
    if (e->o.second_policy)
        return e->o.second_policy;
    return e->o.policy == corun_policy_find("corun") ? corun_policy_find("di") : NULL;
}

/* A task's or a slot's domain at one level, for like_tasks()' merge. */
struct dom_key {
    int dom;
    unsigned k; /* task index */
};

static int by_dom(const void *a, const void *b)
{
    const struct dom_key *x = a, *y = b;

    if (x->dom != y->dom)
        return x->dom < y->dom ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* Tasks the second opinion may trade: one known class, one weight. */
static bool like(const struct corun_task_profile *a, const struct corun_task_profile *b)
{
    return (unsigned)a->cls < CORUN_NCLASSES && a->cls == b->cls && a->weight == b->weight;
}

/* @cpu's domain at matching level @lv (0: the CPU itself; 1-4: its core,
 * L2, L3 and NUMA node), -1 for none. */
static int dom_at(const struct corun_engine *e, int cpu, unsigned lv)
{
    static const enum corun_level level[] = {CORUN_LEVEL_CORE, CORUN_LEVEL_L2, CORUN_LEVEL_L3,
                                             CORUN_LEVEL_NUMA};

    if (cpu < 0)
        return -1;
    return lv ? corun_topo_cpu(e->o.topo, (unsigned)cpu)->dom[level[lv - 1]] : cpu;
}

static int numa_of(const struct corun_engine *e, int cpu)
{
    return dom_at(e, cpu, 4);
}

/*
 * The second plan @want for the @m tasks of @snap, running on @cur, with
 * like tasks traded where it moves them to another node: a task it keeps
 * on its node keeps the CPU it gives it; the slots (CPUs) of the like
 * tasks it moves to another node go first to those of them that run on
 * the slot itself, then on its core, L2, L3 and node, the rest in task
 * order. Greedy, level by level: both sides of a group are sorted by
 * domain and merged. 0, or -ENOMEM with @want as it was.
 */
static int like_tasks(const struct corun_engine *e, const struct corun_snapshot *snap,
                      const int *cur, int *want, unsigned m)
{
    /* grp: each task's group; lead: each group's first task; start: where
     * each group's tasks begin in mem, which lists them group by group. */
    unsigned *grp = malloc(m * sizeof(*grp)), *lead = malloc(m * sizeof(*lead)),
             *start = calloc(m + 1, sizeof(*start)), *mem = malloc(m * sizeof(*mem)), ng = 0;
    struct dom_key *tk = malloc(m * sizeof(*tk)), *sl = malloc(m * sizeof(*sl));
    bool *placed = calloc(m, sizeof(*placed)), *taken = calloc(m, sizeof(*taken));
    int *out = malloc(m * sizeof(*out)), err = -ENOMEM;

    if (!grp || !lead || !start || !mem || !tk || !sl || !placed || !taken || !out)
        goto out_free;
    for (unsigned k = 0; k < m; k++) {
        unsigned g = 0;

        /* one of a kind (no class) at once: groups are few otherwise */
        if ((unsigned)snap->tasks[k].cls >= CORUN_NCLASSES)
            g = ng;
        while (g < ng && !like(&snap->tasks[lead[g]], &snap->tasks[k]))
            g++;
        if (g == ng)
            lead[ng++] = k;
        grp[k] = g;
        start[g + 1]++;
    }
    for (unsigned g = 0; g < ng; g++)
        start[g + 1] += start[g];
    /* lead, no longer needed, counts each group's tasks into mem. */
    for (unsigned g = 0; g < ng; g++)
        lead[g] = start[g];
    for (unsigned k = 0; k < m; k++)
        mem[lead[grp[k]]++] = k;
    memcpy(out, want, m * sizeof(*out));
    for (unsigned g = 0; g < ng; g++) {
        const unsigned *v = mem + start[g];
        unsigned n = start[g + 1] - start[g], b = 0;

        if (n < 2)
            continue;
        /* Where the plan keeps a task on its node, its choice stands. */
        for (unsigned q = 0; q < n; q++) {
            unsigned k = v[q];

            if (numa_of(e, cur[k]) >= 0 && numa_of(e, cur[k]) == numa_of(e, want[k]))
                placed[k] = taken[k] = true;
        }
        for (unsigned lv = 0; lv <= 4; lv++) {
            unsigned i = 0, j = 0, nt = 0, ns = 0;

            for (unsigned q = 0; q < n; q++) {
                unsigned k = v[q];

                if (!placed[k] && dom_at(e, cur[k], lv) >= 0)
                    tk[nt++] = (struct dom_key){dom_at(e, cur[k], lv), k};
                if (!taken[k] && dom_at(e, want[k], lv) >= 0)
                    sl[ns++] = (struct dom_key){dom_at(e, want[k], lv), k};
            }
            qsort(tk, nt, sizeof(*tk), by_dom);
            qsort(sl, ns, sizeof(*sl), by_dom);
            while (i < nt && j < ns) {
                if (tk[i].dom < sl[j].dom) {
                    i++;
                } else if (tk[i].dom > sl[j].dom) {
                    j++;
                } else {
                    out[tk[i].k] = want[sl[j].k];
                    placed[tk[i].k] = taken[sl[j].k] = true;
                    i++;
                    j++;
                }
            }
        }
        for (unsigned q = 0; q < n; q++) {
            unsigned k = v[q];

            if (placed[k])
                continue;
            while (taken[v[b]])
                b++;
            out[k] = want[v[b]];
            placed[k] = taken[v[b]] = true;
        }
    }
    memcpy(want, out, m * sizeof(*want));
    err = 0;
out_free:
    free(grp);
    free(lead);
    free(start);
    free(mem);
    free(tk);
    free(sl);
    free(placed);
    free(taken);
    free(out);
    return err;
}

/* Whether a second opinion may be asked now, given the policy's plan
 * @want for the tasks of @snap (engine index @live[k], running on
 * @cur[k]): the plans have settled, the policy's moving no task or, with
 * @held, held back by the doubt a change left (engine-apply.c's verdict:
 * predicted to gain less than it). Not where it could not be judged (no
 * outcome check, a task without instruction counts) or would be applied
 * piecemeal (per-task hysteresis), nor where the caller prices a move
 * above the default: the default stands for the noise in the predictor
 * (docs/internals/engine.md), a higher price for what moving costs the
 * caller, and a second opinion is predicted to pay nothing. */
static bool due(const struct corun_engine *e, const struct corun_snapshot *snap,
                const unsigned *live, const int *cur, const int *want, bool held)
{
    bool moves = false;

    if (e->second != SECOND_DUE || e->round < SECOND_AFTER || e->trial || e->o.no_outcome_check ||
        e->o.confirm > 1 || e->o.min_dwell || e->o.move_cost > MOVE_COST_DEFAULT || !snap->ntasks)
        return false;
    for (unsigned k = 0; k < snap->ntasks; k++) {
        const struct etask *t = &e->tasks[live[k]];

        /* A task without an instruction rate (no PMU: the proc sensor)
         * would leave the trial unmeasured, and kept. */
        if (cur[k] < 0 || want[k] < 0 || t->cpu < 0 || t->refused || !(t->best_rate > 0))
            return false;
        moves |= want[k] != cur[k];
    }
    return !moves || held;
}

/*
 * Called with the policy's plan @want for @snap, with @held when the doubt
 * held it back and @base the current placement's predicted STP where the
 * caller has it (NaN: predicted here): when a second opinion is due and
 * the second policy's plan qualifies (above), it replaces @want,
 * *@gain is its predicted gain over @cur (negative, or a little above
 * zero), the state is SECOND_TRIAL and true is returned; the caller
 * applies it whole as a trial judged on the long window. Asked at settled
 * plans, after 1, 2, 4... (at most 64) of them, until one qualifies (the
 * profiles go on learning), then not again for this set of tasks. False otherwise
 * (also on -ENOMEM: nothing is lost by not asking).
 */
bool corun__engine_second(struct corun_engine *e, const struct corun_snapshot *snap,
                          const unsigned *live, const int *cur, int *want, bool held, double base,
                          double *gain)
{
    const struct corun_policy *pol = second_policy(e);
    unsigned m = snap->ntasks, moves = 0, across = 0;
    struct corun_plan plan = {.ntasks = m};
    double now, then;
    bool ok = true;

    if (!pol || !due(e, snap, live, cur, want, held))
        return false;
    /* Asked again after 1, 2, 4... settled plans, at most CHECK_HOLD_MAX
     * (the profiles go on learning in a long run): a policy held back by
     * its doubt settles every plan, and DI's plan with a prediction or two
     * on 2048 tasks cost the median planning step half again
     * (bench/engine-scale). */
    if (e->second_wait) {
        e->second_wait--;
        return false;
    }
    e->second_gap = !e->second_gap                       ? 1
                    : 2 * e->second_gap < CHECK_HOLD_MAX ? 2 * e->second_gap
                                                         : CHECK_HOLD_MAX;
    e->second_wait = e->second_gap;
    plan.cpu = malloc(m * sizeof(*plan.cpu));
    if (!plan.cpu)
        return false;
    if (pol->place(snap, &plan) || corun_policy_check_plan(snap, &plan) ||
        like_tasks(e, snap, cur, plan.cpu, m))
        goto out_free;
    for (unsigned k = 0; k < m && ok; k++) {
        if (plan.cpu[k] == cur[k])
            continue;
        /* Unpinning is not a placement the predictor can rate. */
        ok = plan.cpu[k] >= 0;
        across += ok && numa_of(e, plan.cpu[k]) != numa_of(e, cur[k]);
        moves++;
    }
    /* A caller's cap holds for every plan. */
    if (!ok || !moves || across > SECOND_ACROSS || (e->o.max_moves && moves > e->o.max_moves))
        goto out_free;
    now = base >= 0 ? base : corun_policy_predict(snap, cur, NULL);
    then = corun_policy_predict(snap, plan.cpu, NULL);
    if (!(now > 0) || !(then >= now * (1 - SECOND_WITHIN)))
        goto out_free;
    memcpy(want, plan.cpu, m * sizeof(*want));
    *gain = then - now;
    e->second = SECOND_TRIAL;
    e->st.second_tried++;
out_free:
    free(plan.cpu);
    return e->second == SECOND_TRIAL;
}
