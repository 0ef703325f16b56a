/*
 * engine-check.c — the outcome check: every change of placement the engine
 * applies is a trial, judged on the instruction rates the counters measure
 * over the intervals before and after it, and taken back when it
 * measurably lowered the tasks' summed relative speed.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "engine/engine-internal.h"

/* ---- the outcome check ------------------------------------------------------ */

/* The trial in progress ends: what its tasks' memory was before is
 * forgotten. */
static void trial_end(struct corun_engine *e)
{
    for (unsigned i = 0; i < e->ntasks; i++)
        e->tasks[i].tr_home = -1;
    e->trial = false;
}

/* The placement changed in a way the engine did not plan (a task joined,
 * left or was pinned by the caller): rates from before no longer compare,
 * and a trial in progress cannot be judged. It is kept, unjudged. */
void corun__engine_world_changed(struct corun_engine *e, uint64_t now)
{
    for (unsigned i = 0; i < e->ntasks; i++)
        e->tasks[i].nrate = 0;
    e->doubt = 0; /* it was about other tasks */
    e->second = SECOND_DUE; /* a second opinion may be asked of them */
    e->second_gap = e->second_wait = 0;
    trial_end(e);
    e->changed_ns = now;
}

static double weight_of(const struct etask *t)
{
    return t->t.weight > 0 ? t->t.weight : 1;
}

/* Mean of @t's newest rates, at most @k. */
static double mean_rate(const struct etask *t, unsigned k)
{
    double s = 0;

    if (k > t->nrate)
        k = t->nrate;
    for (unsigned i = 0; i < k; i++)
        s += t->rate[i];
    return k ? s / k : NAN;
}

/* Where task @t ran before the change: pinned, or where the kernel ran
 * it; -1 unknown. */
static int ran_on(const struct etask *t)
{
    return t->cpu >= 0 ? t->cpu : t->seen_cpu;
}

/* The class whose tasks task @t is pooled with, -1 none: it has a predicted
 * speed and a rate, a known class, and ran on a core of at most two busy
 * threads (@busy per core, of @ncore). */
static int pool_class(const struct corun_engine *e, const struct etask *t, const unsigned *busy,
                      unsigned ncore)
{
    int c = ran_on(t), d;
    enum corun_class k;

    if (!t->live || !(t->tr_speed > 0) || !(t->tr_before > 0) || c < 0)
        return -1;
    d = corun_topo_cpu(e->o.topo, (unsigned)c)->dom[CORUN_LEVEL_CORE];
    k = corun_profiler_get(e->prof, t->slot)->cls;
    if ((d >= 0 && (unsigned)d < ncore && busy[d] > 2) || k < 0 || k >= CORUN_NCLASSES)
        return -1;
    return (int)k;
}

/*
 * Tasks of one class are taken to run alone at one rate: each one's
 * predicted speed before the change (tr_speed) becomes its measured rate
 * before it times its class's predicted speed per unit of rate (the sums
 * over the class's tasks with both), so that a change that only passes
 * speed from one like task to another measures no gain. Weighted by its
 * own predicted speed, each task's relative change counted gains more than
 * losses: of two like tasks, one halved (-50%) and one doubled (+100%),
 * the sum was half a task's speed gained. Left out, keeping their own: a
 * task of no known class, and one that ran on a core of more than two
 * busy threads, whose class is read from what its crowd leaves it
 * (docs/internals/policy.md) and so may not be its classmates' one.
 */
static void pool_speeds(struct corun_engine *e)
{
    unsigned ncore = corun_topo_ndomains(e->o.topo, CORUN_LEVEL_CORE), *busy;
    double sp[CORUN_NCLASSES] = {0}, sb[CORUN_NCLASSES] = {0};

    busy = calloc(ncore ? ncore : 1, sizeof(*busy));
    if (!busy)
        return; /* each task keeps its own predicted speed */
    for (unsigned i = 0; i < e->ntasks; i++) {
        int c = e->tasks[i].live ? ran_on(&e->tasks[i]) : -1;
        int d = c >= 0 ? corun_topo_cpu(e->o.topo, (unsigned)c)->dom[CORUN_LEVEL_CORE] : -1;

        if (d >= 0 && (unsigned)d < ncore)
            busy[d]++;
    }
    for (unsigned i = 0; i < e->ntasks; i++) {
        const struct etask *t = &e->tasks[i];
        int k = pool_class(e, t, busy, ncore);

        if (k >= 0) {
            sp[k] += t->tr_speed;
            sb[k] += t->tr_before;
        }
    }
    for (unsigned i = 0; i < e->ntasks; i++) {
        struct etask *t = &e->tasks[i];
        int k = pool_class(e, t, busy, ncore);

        if (k >= 0)
            t->tr_speed = sp[k] / sb[k] * t->tr_before;
    }
    free(busy);
}

/*
 * Starts a trial of the moves about to be applied at @now (called by
 * corun__engine_move() before the first of them): records each task's mean
 * rate over the last CHECK_WINDOW intervals since the last change (not
 * more: the older ones may hold the stall of memory that followed it) and
 * where it runs, pools its classmates' predicted speeds (pool_speeds()),
 * and forgets the rates (the intervals after the change start afresh).
 */
void corun__engine_trial_begin(struct corun_engine *e, uint64_t now)
{
    for (unsigned i = 0; i < e->ntasks; i++) {
        struct etask *t = &e->tasks[i];

        t->tr_before = t->live && t->active ? mean_rate(t, CHECK_WINDOW) : NAN;
        t->tr_cpu = t->cpu;
        t->nrate = 0;
    }
    pool_speeds(e);
    e->trial = !e->o.no_outcome_check;
    e->tr_begun = now;
    e->window = CHECK_WINDOW;
    e->early_ok = now >= e->mem_settled_ns;
}

/*
 * The loss per task a trial may show and be kept: CHECK_MARGIN, or less
 * when the tasks agree. Each task's measured change @d_i carries its own
 * counter noise, independent of the others', so the spread of the @n
 * changes bounds what noise does to their mean: a mean loss beyond
 * CHECK_Z standard errors of it (and beyond CHECK_FLOOR, for what moves
 * every task at once: a phase all of them turn, a clock) is the change's.
 * Thirty-two sheep paired on SMT cores for a turbo bin each lost 0.84%
 * (bench/heldout6's 2x EPYC 7402), inside the flat 1% that a trial of a
 * few tasks needs. check_se() gives the standard error from @sum and @sq,
 * the weighted sums of d_i and d_i^2, and @w, that of the weights (NaN
 * below CHECK_MIN_TASKS tasks: the flat margin), check_margin() the
 * margin.
 */
static double check_se(double sum, double sq, double w, unsigned n)
{
    double mean, var;

    if (n < CHECK_MIN_TASKS || !(w > 0))
        return NAN;
    mean = sum / w;
    var = (sq / w - mean * mean) * n / (n - 1);
    return sqrt(var > 0 ? var / n : 0);
}

static double check_margin(double se)
{
    double m = CHECK_Z * se;

    if (isnan(se))
        return CHECK_MARGIN;
    return m < CHECK_FLOOR ? CHECK_FLOOR : m > CHECK_MARGIN ? CHECK_MARGIN : m;
}

/*
 * What each task's measured change counts in a trial: its change in speed,
 * the rate gained or lost over the rate it would run at alone, summed into
 * the change in STP. That rate is not measured. The best rate seen stood
 * in for it, which holds where tasks have run nearly alone at some point;
 * on crowded SMT cores none has (every rate seen is one of four or eight
 * threads a core), and each task's best is about its rate before, so each
 * task's relative change counted alike: a plan that gives a slow task's
 * share of a core to a fast one, which the STP it is judged by favours,
 * measured as a loss. On bench/heldout10's POWER10 in SMT4 mode
 * (adversarial 32, seed 1) the first plan's steady STP is 14.295 against
 * the kernel's placement's 13.468, and it was taken back.
 *
 * Instead, the predictor apportions and the counters measure: a task's
 * relative change is weighted by its speed where it ran before, as the
 * predictor rated it when the change was made (tr_speed), and the weights
 * are scaled to sum to what the best-rate ones do, so that the check's
 * margins keep their meaning. Since 2026-12-07 the predicted speeds of a
 * class's tasks are pooled (pool_speeds()): like tasks are taken to run
 * alone at one rate. A task with no predicted speed keeps the
 * best-rate form. check_scale() gives the factor for the trial's measured
 * tasks (@need and @late as the trial judge reads them), NaN when none
 * has a speed; task_change() one task's term.
 */
static double check_scale(const struct corun_engine *e, unsigned need, bool late)
{
    double a = 0, b = 0;

    for (unsigned i = 0; i < e->ntasks; i++) {
        const struct etask *t = &e->tasks[i];

        if (!t->live || isnan(t->tr_before) || !(t->best_rate > 0) || (t->nrate < need && late) ||
            !(t->tr_speed > 0) || !(t->tr_before > 0))
            continue;
        a += weight_of(t) * t->tr_before / t->best_rate;
        b += weight_of(t) * t->tr_speed;
    }
    return b > 0 ? a / b : NAN;
}

static double task_change(const struct etask *t, double after, double scale)
{
    if (t->tr_speed > 0 && t->tr_before > 0 && isfinite(scale))
        return scale * t->tr_speed * (after - t->tr_before) / t->tr_before;
    return (after - t->tr_before) / t->best_rate;
}

/*
 * Judges the trial in progress once every task measured before it has
 * CHECK_WINDOW whole intervals after it (or, two intervals of the clock
 * later, on those that have: a task whose reads began to fail, one that
 * exited, must not stall the engine): WAIT until then, KEEP or UNDO; WAIT
 * again for up to CHECK_WINDOW_LONG intervals when the verdict is open (a
 * mean loss beyond CHECK_Z_OPEN standard errors, inside the margin),
 * judging at each interval on the rates so far: UNDO as soon as the loss
 * is beyond the margin, KEEP at the end. A
 * change whose measured gain in summed speed (task_change(), weighted) is
 * below -check_margin() per task
 * measured is taken back: every task goes back where it was (pinned there,
 * or given back to the kernel), memory that moved with it goes back to its
 * node, and the engine holds. A change that lost
 * more than CHECK_EARLY per task over the first interval after it is taken
 * back then: waiting for the second would only double what it costs. Not
 * when memory moved shortly before the trial began (a change taken back
 * brought it back, the warm-up placement moved it): its tasks stall while
 * their pages move, a loss of the first interval that is not the change's
 * (on a 4-node machine, two tasks whose memory moved lost 31% each over
 * it, and the change gained overall: docs/internals/engine.md). The
 * change's own memory moves are not measured (corun__engine_note_rate()).
 */
enum corun__verdict corun__engine_trial_judge(struct corun_engine *e, uint64_t now)
{
    double delta = 0, wsum = 0, sq = 0;
    unsigned nmeas = 0;
    uint64_t from = e->changed_ns > e->tr_begun ? e->changed_ns : e->tr_begun;
    bool late = now > from + (uint64_t)(e->window + 2) * e->o.interval_ns, early = false;
    bool full = true;
    /* Measured longer, it is judged at every interval past the first two
     * after it, and taken back as soon as the loss is sure. */
    unsigned need = e->window > CHECK_WINDOW ? CHECK_WINDOW + 1 : e->window;
    double se, margin, scale = check_scale(e, need, late);

    for (unsigned i = 0; i < e->ntasks; i++) {
        const struct etask *t = &e->tasks[i];
        double d;

        if (!t->live || isnan(t->tr_before) || !(t->best_rate > 0))
            continue;
        if (t->nrate < need) {
            if (late)
                continue;
            if (!t->nrate)
                return CORUN__WAIT;
            early = true;
        }
        full = full && t->nrate >= e->window;
        d = task_change(t, mean_rate(t, e->window), scale);
        delta += weight_of(t) * d;
        sq += weight_of(t) * d * d;
        wsum += weight_of(t);
        nmeas++;
    }
    if (early && !(e->early_ok && delta < -CHECK_EARLY * wsum))
        return CORUN__WAIT;
    se = check_se(delta, sq, wsum, nmeas);
    margin = check_margin(se);
    if (!early && e->window < CHECK_WINDOW_LONG && delta < -CHECK_Z_OPEN * se * wsum &&
        delta >= -margin * wsum) {
        /* A loss the noise may explain, but not easily: measure longer. */
        e->window = CHECK_WINDOW_LONG;
        return CORUN__WAIT;
    }
    if (!full && !late && delta >= -margin * wsum)
        return CORUN__WAIT;
    e->trial = false;
    e->st.trials += nmeas > 0;
    if (e->second == SECOND_TRIAL) {
        /* A second opinion (engine-second.c) was predicted to gain nothing:
         * kept only on a measured gain. Then the predictor fell short of it
         * by what it gained and more, and a plan must be predicted to gain
         * that before it is believed (the doubt, below). */
        e->second = SECOND_DONE;
        if (nmeas && delta > CHECK_FLOOR * wsum) {
            if (isfinite(e->tr_gain) && delta - e->tr_gain > e->doubt)
                e->doubt = delta - e->tr_gain;
            e->st.second_kept++;
            e->fails = 0;
            trial_end(e);
            return CORUN__KEEP;
        }
        goto undo; /* nothing measured is no gain */
    }
    /* A change that measured a loss, taken back or kept inside the margin,
     * fell short of its prediction: a change like it is predicted to gain
     * as much again, so until the doubt has decayed a plan must be
     * predicted to gain more than this one fell short by. Taken back, what
     * the retries cost was measured on the Ryzen 7950X of bench/heldout4;
     * kept, plans the predictor rated above their cost from noise in the
     * profiles followed one another, each moving memory, on heldout6's 2x
     * X5670 (docs/internals/engine.md). A first plan kept leaves none: it
     * replaced the kernel's placement whole, and what it fell short by says
     * little of the later plans, each a smaller change that pays its moves;
     * held by its doubt, they waited most of a run. */
    if (nmeas && delta < 0 && isfinite(e->tr_gain) && e->tr_gain - delta > e->doubt &&
        !(e->tr_first && delta >= -margin * wsum))
        e->doubt = e->tr_gain - delta;
    if (!nmeas || delta >= -margin * wsum) {
        e->fails = 0;
        trial_end(e);
        return CORUN__KEEP;
    }
undo:
    for (unsigned i = 0; i < e->ntasks; i++) {
        struct etask *t = &e->tasks[i];

        if (t->live && t->cpu != t->tr_cpu)
            corun__engine_move(e, t, t->tr_cpu, now, CORUN_ENGINE_EV_UNDO);
        /* Its memory moved with the change: back where it was (a task
         * pinned again took it along already). */
        if (t->live && t->tr_home >= 0 && t->home != t->tr_home && e->mem_follows && !t->mem_stuck)
            corun__engine_memory_to(e, t, t->tr_home, now);
        t->tr_home = -1;
        t->nrate = 0;
    }
    e->st.reverted++;
    e->hold = CHECK_HOLD << (e->fails < 4 ? e->fails : 4);
    if (e->hold > CHECK_HOLD_MAX)
        e->hold = CHECK_HOLD_MAX;
    e->fails++;
    return CORUN__UNDO;
}

/*
 * Records @t's instruction rate over the interval that ends with @cur, if
 * the interval began after the last change of placement (within a
 * twentieth of an interval: a real actuator moves tasks a little after the
 * samples that decided it) and, when that change moved memory with its
 * tasks, after the interval its pages moved in.
 */
void corun__engine_note_rate(struct corun_engine *e, struct etask *t,
                             const struct corun_sample *cur)
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
    memmove(&t->rate[1], &t->rate[0], (CHECK_WINDOW_LONG - 1) * sizeof(t->rate[0]));
    t->rate[0] = r;
    if (t->nrate < CHECK_WINDOW_LONG)
        t->nrate++;
}
