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
 * plan that moves no task, every task pinned, no trial running), the
 * second policy (DI's plan, by default under the corun policy: a
 * different model of the same profiles) is asked for the same snapshot,
 * and its plan is tried when it is predicted within SECOND_WITHIN of the
 * current placement and moves no task to another NUMA node. The trial is
 * measured over CHECK_WINDOW_LONG intervals and kept only if it measured a
 * gain (engine-check.c); else it is taken back. Once per set of tasks.
 *
 * Why no move to another node: where memory follows its task, a plan tried
 * and taken back moves it twice, and an equal plan on another node (a
 * relabelling of symmetric nodes) costs that for nothing. Tried across
 * nodes (within 1%), bench/heldout6's cases at or above DI fell from 54
 * to 41 of 54 with seed 1; relabelling the second plan's nodes to keep
 * most tasks where they ran did not save it (45 of 54). Measured in
 * docs/internals/engine.md, "A second opinion".
 */
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

static int numa_of(const struct corun_engine *e, int cpu)
{
    return cpu >= 0 ? corun_topo_cpu(e->o.topo, (unsigned)cpu)->dom[CORUN_LEVEL_NUMA] : -1;
}

/* Whether a second opinion may be asked now, given the policy's plan
 * @want for the tasks of @snap (engine index @live[k], running on
 * @cur[k]): the plans have settled. Not where it could not be judged (no
 * outcome check, a task without instruction counts) or would be applied
 * piecemeal (per-task hysteresis), nor where the caller prices a move
 * above the default: the default stands for the noise in the predictor
 * (docs/internals/engine.md), a higher price for what moving costs the
 * caller, and a second opinion is predicted to pay nothing. */
static bool due(const struct corun_engine *e, const struct corun_snapshot *snap,
                const unsigned *live, const int *cur, const int *want)
{
    if (e->second != SECOND_DUE || e->round < SECOND_AFTER || e->trial || e->o.no_outcome_check ||
        e->o.confirm > 1 || e->o.min_dwell || e->o.move_cost > MOVE_COST_DEFAULT || !snap->ntasks)
        return false;
    for (unsigned k = 0; k < snap->ntasks; k++) {
        const struct etask *t = &e->tasks[live[k]];

        /* A task without an instruction rate (no PMU: the proc sensor)
         * would leave the trial unmeasured, and kept. */
        if (want[k] != cur[k] || t->cpu < 0 || t->refused || !(t->best_rate > 0))
            return false;
    }
    return true;
}

/*
 * Called with the policy's plan @want for @snap: when a second opinion is
 * due and the second policy's plan qualifies (above), it replaces @want,
 * *@gain is its predicted gain over @cur (negative, or a little above
 * zero), the state is SECOND_TRIAL and true is returned; the caller
 * applies it whole as a trial judged on the long window. Asked at every
 * settled plan until one qualifies (the profiles go on learning), then
 * not again for this set of tasks. False otherwise (also on -ENOMEM:
 * nothing is lost by not asking).
 */
bool corun__engine_second(struct corun_engine *e, const struct corun_snapshot *snap,
                          const unsigned *live, const int *cur, int *want, double *gain)
{
    const struct corun_policy *pol = second_policy(e);
    unsigned m = snap->ntasks, moves = 0;
    struct corun_plan plan = {.ntasks = m};
    double now, then;
    bool ok = true;

    if (!pol || !due(e, snap, live, cur, want))
        return false;
    plan.cpu = malloc(m * sizeof(*plan.cpu));
    if (!plan.cpu)
        return false;
    if (pol->place(snap, &plan) || corun_policy_check_plan(snap, &plan))
        goto out_free;
    for (unsigned k = 0; k < m && ok; k++) {
        if (plan.cpu[k] == cur[k])
            continue;
        /* Unpinning is not a placement the predictor can rate. */
        ok = plan.cpu[k] >= 0 && numa_of(e, plan.cpu[k]) == numa_of(e, cur[k]);
        moves++;
    }
    /* A caller's cap holds for every plan. */
    if (!ok || !moves || (e->o.max_moves && moves > e->o.max_moves))
        goto out_free;
    now = corun_policy_predict(snap, cur, NULL);
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
