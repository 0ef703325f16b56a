/*
 * test_engine_capped.c — a change bigger than the move cap is applied in
 * parts, and a part is made of moves that pay together: groups of moves
 * that gain only together are tried together, within the cap.
 *
 * The world: one package of eight SMT2 cores whose clock halves with seven
 * busy cores or more (a turbo table, which the engine is given), eight
 * sheep-like tasks spread one per core by the warm-up, and a scripted
 * policy that pairs them on four cores. Each of its four moves idles one
 * core: alone it only pairs two tasks (a loss); two of them reach six
 * busy cores and the full clock. A fake sensor turns the clock and the
 * pairing into counters; a fake actuator records where tasks are pinned.
 * The same change, made after the first plan under the engine's own cap of
 * one move an interval, reaches past that cap; a caller's cap is not
 * reached past.
 */
#include "testutil.h"

#include <string.h>

#include "corun/engine.h"

#define NT     8
#define NCORES 8

static struct {
    struct corun_topo *topo;
    uint64_t now;
    int pinned[NT];
    struct corun_sample acc[NT];
    struct fake_counters sensor; /* reads acc */
    struct fake_pins pins;       /* writes pinned */
    unsigned moves;              /* moves applied after the warm-up */
    uint64_t first_at;           /* clock time of the first of them */
    unsigned moves_at_first;     /* how many were applied at that time */
    bool pass;                   /* odd CPUs run at half speed, task 1 at 0.96 on even ones */
} W;

static const double turbo[NCORES] = {1, 1, 1, 1, 1, 1, 0.5, 0.5};

static bool sibling_busy(unsigned i)
{
    for (unsigned j = 0; j < NT; j++)
        if (j != i && W.pinned[j] >= 0 && W.pinned[j] / 2 == W.pinned[i] / 2)
            return true;
    return false;
}

static unsigned busy_cores(void)
{
    bool busy[NCORES] = {false};
    unsigned n = 0;

    for (unsigned i = 0; i < NT; i++)
        if (W.pinned[i] >= 0 && !busy[W.pinned[i] / 2]) {
            busy[W.pinned[i] / 2] = true;
            n++;
        }
    return n;
}

static uint64_t fake_now(void *ctx)
{
    return W.now;
}

/* Every task runs at the package's clock (3 GHz times the turbo table's
 * share for the busy cores), at IPC 1, 3% less beside a busy sibling. */
static int fake_wait(void *ctx, uint64_t t)
{
    double dt = (double)(t - W.now), clk = 3.0 * turbo[busy_cores() - 1];

    for (unsigned i = 0; i < NT; i++) {
        double cycles = clk * dt, instr = cycles * (sibling_busy(i) ? 0.97 : 1.0);

        if (W.pass && W.pinned[i] >= 0)
            instr *= W.pinned[i] % 2 ? 0.5 : i == 1 ? 0.96 : 1.0;
        fake_sheep_counts(&W.acc[i], cycles, instr, dt);
    }
    W.now = t;
    return 0;
}

/* Then: odd tasks beside the even ones, on cores 0, 2, 4 and 6. */
static int pair_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned k = 0; k < snap->ntasks; k++) {
        unsigned id = snap->tasks[k].id;

        plan->cpu[k] = (int)(id % 2 ? 4 * (id / 2) + 1 : 2 * id);
    }
    return 0;
}

/* The spread for the first plan, the pairing after it: a change made
 * under the cap, after the first plan, which is applied whole. */
static int later_pair_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    return snap->round ? pair_place(snap, plan) : fake_even_place(snap, plan);
}

/* The speed-passing world: tasks 0 and 1 on core 0 (CPUs 0 and 1), the
 * others one per core from core 2 on; a plan after the first swaps tasks
 * 0 and 1, the next one swaps them back, and the rest keep that. */
static int pass_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned k = 0; k < snap->ntasks; k++) {
        unsigned id = snap->tasks[k].id;

        plan->cpu[k] = (int)(id < 2 ? (snap->round == 1 ? 1 - id : id) : 2 * id);
    }
    return 0;
}

/* The warm-up: task i alone on core i. */
static const struct corun_policy spread_pol = {.name = "spread-script", .place = fake_even_place};
static const struct corun_policy pass_pol = {.name = "pass-script", .place = pass_place};
static const struct corun_policy pair_pol = {.name = "pair-script", .place = pair_place};
static const struct corun_policy later_pair_pol = {.name = "later-pair-script",
                                                   .place = later_pair_place};

static void on_event(void *ctx, const struct corun_engine_event *ev)
{
    if (ev->kind != CORUN_ENGINE_EV_MOVE || ev->from < 0)
        return;
    if (!W.moves++)
        W.first_at = W.now;
    if (W.now == W.first_at)
        W.moves_at_first++;
}

/* The world as it starts: the kernel's placement, one task per core. */
static void reset_world(void)
{
    struct corun_topo *topo = W.topo;

    memset(&W, 0, sizeof(W));
    W.topo = topo;
    W.sensor = (struct fake_counters){.acc = W.acc, .now = &W.now};
    W.pins = (struct fake_pins){.topo = W.topo, .pinned = W.pinned};
    W.now = 1000;
    for (unsigned i = 0; i < NT; i++)
        W.pinned[i] = (int)(2 * i);
}

static int setup(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC, .input = "pack:1 core:8 pu:2"};

    W.topo = NULL;
    assert_int_equal(corun_topo_load(&o, &W.topo), 0);
    reset_world();
    return 0;
}

static int teardown(void **state)
{
    corun_topo_free(W.topo);
    return 0;
}

/* Runs the engine for 3 s with @pol under @max_moves (0: the engine's own
 * cap, one move an interval here: a quarter of 8 tasks a second over 0.1 s
 * intervals) and leaves its stats in @st. */
static void run_engine(const struct corun_policy *pol, unsigned max_moves,
                       struct corun_engine_stats *st)
{
    struct corun_engine_opts o = {
        .topo = W.topo,
        .policy = pol,
        .warmup_policy = W.pass ? pol : &spread_pol,
        .sense = &fake_counters_sense,
        .sense_state = &W.sensor,
        .act = &fake_pins_act,
        .act_state = &W.pins,
        .clock = {.now_ns = fake_now, .wait_until = fake_wait},
        .interval_ns = 100000000,
        .warmup_ns = 300000000,
        .max_moves = max_moves,
        /* Passing speed is predicted to gain nothing: no move cost for it
         * to beat. */
        .move_cost = W.pass ? -1 : 0,
        .seed = 3,
        .turbo_rel = turbo,
        .turbo_n = NCORES,
        .on_event = on_event,
    };
    struct corun_engine *e;

    assert_int_equal(corun_engine_new(&o, &e), 0);
    fake_add_sheep(e, W.pinned, NT);
    assert_int_equal(corun_engine_run(e, 3000000000ull, NULL), 0);
    corun_engine_stats(e, st);
    print_message("%s, cap %u: moves %u (%u at once), busy cores %u, plans %lu, trials %lu "
                  "reverted %lu held %lu\n",
                  pol->name, max_moves, W.moves, W.moves_at_first, busy_cores(),
                  (unsigned long)st->plans, (unsigned long)st->trials, (unsigned long)st->reverted,
                  (unsigned long)st->held);
    assert_int_equal(corun_engine_restore(e), 0);
    corun_engine_free(e);
}

/* Two moves were applied at once, reached six busy cores (the full clock)
 * and were kept by their trial; no other move was made. */
static void assert_pair_kept(const struct corun_engine_stats *st)
{
    assert_int_equal(W.moves_at_first, 2);
    assert_int_equal(W.moves, 2);
    assert_int_equal(busy_cores(), 6);
    assert_int_equal(st->trials, 1);
    assert_int_equal(st->reverted, 0);
}

/* Under a cap of two moves an interval, the engine applies two of the
 * plan's four moves at once (each alone is predicted a loss, so scored one
 * by one none would ever be applied), the clock doubles, the trial keeps
 * them; the other two gain nothing more and are held. */
static void test_moves_that_pay_together(void **state)
{
    struct corun_engine_stats st;

    run_engine(&pair_pol, 2, &st);
    assert_pair_kept(&st);
}

/* Under the engine's own cap of one move an interval, no part of the
 * change within the cap pays: the engine reaches past it for the two
 * moves that pay together, applies them at once and keeps them. The move
 * beyond the cap is repaid before the next plan: one plan fewer than under
 * a caller's cap of two, where the same two moves fit. Scored within the
 * cap, nothing would ever move. */
static void test_past_own_cap(void **state)
{
    struct corun_engine_stats st, fit;

    run_engine(&later_pair_pol, 2, &fit);
    assert_int_equal(W.moves, 2);
    reset_world();
    run_engine(&later_pair_pol, 0, &st);
    assert_pair_kept(&st);
    assert_int_equal(st.plans + 1, fit.plans);
}

/* Swapping tasks 0 and 1 only passes speed from one to the other: task 0
 * goes from the fast CPU to the slow one (-50%), task 1 the other way
 * (+92%), 4% of a task's rate lost in all. The trial measures the loss and
 * keeps the swap (it is inside the margin), and the doubt it leaves holds
 * the plan that swaps them back, predicted to gain nothing. Counted by
 * each task's relative change, the swap measured a gain (-50% + 92%), and
 * so did the swap back: both were made. */
static void test_passed_speed_no_gain(void **state)
{
    struct corun_engine_stats st;

    W.pass = true;
    W.pinned[1] = 1; /* where the warm-up puts it */
    run_engine(&pass_pol, 2, &st);
    assert_int_equal(W.moves, 2);
    assert_int_equal(W.pinned[0], 1);
    assert_int_equal(W.pinned[1], 0);
    assert_int_equal(st.trials, 1);
    assert_int_equal(st.reverted, 0);
    assert_true(st.doubted >= 1);
}

/* The caller's cap holds for every plan: under one move an interval the
 * pairing never moves a task. */
static void test_caller_cap_holds(void **state)
{
    struct corun_engine_stats st;

    run_engine(&later_pair_pol, 1, &st);
    assert_int_equal(W.moves, 0);
    assert_int_equal(busy_cores(), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_moves_that_pay_together, setup, teardown),
        cmocka_unit_test_setup_teardown(test_past_own_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_caller_cap_holds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_passed_speed_no_gain, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
