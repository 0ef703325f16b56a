/*
 * test_engine_second.c — a second opinion: once the policy's plans have
 * settled, a second policy's plan that the predictor cannot tell from the
 * placement is tried, kept when the counters measure a gain and taken back
 * when they measure a loss; at most one task moved across NUMA nodes (like
 * tasks traded first), never past a caller's cap, and once per set of
 * tasks.
 *
 * The world: eight SMT2 cores, eight tasks, one a core. The odd CPUs (each
 * core's second thread) run at half speed, which nothing in the topology
 * says: the predictor rates a task alone on its core the same on either
 * thread. The policy and the second policy are scripted: one keeps every
 * task on its core's even thread, the other on its odd one. The tasks are
 * like ones (sheep) unless a test makes some compute-bound.
 */
#include "testutil.h"

#include <string.h>

#include "corun/engine.h"

#define NT 8

static struct {
    struct corun_topo *topo;
    uint64_t now;
    int pinned[NT];
    struct corun_sample acc[NT];
    struct fake_counters sensor; /* reads acc */
    struct fake_pins pins;       /* writes pinned */
    unsigned moves;              /* moves applied from a pinned CPU, undoes included */
    double odd_rate;             /* IPC on an odd CPU */
    bool no_instr;               /* no instruction counts (no PMU) */
    unsigned compute_from;       /* tasks from this index on compute-bound (NT: none) */
    unsigned asks;               /* plans asked of other_node_place() */
} W;

static uint64_t fake_now(void *ctx)
{
    return W.now;
}

/* Every task runs at 3 GHz, at IPC 1 on an even CPU and W.odd_rate on an
 * odd one. */
static int fake_wait(void *ctx, uint64_t t)
{
    double dt = (double)(t - W.now);

    for (unsigned i = 0; i < NT; i++)
        fake_sheep_counts(&W.acc[i], 3.0 * dt,
                          W.no_instr ? 0 : 3.0 * dt * (W.pinned[i] % 2 ? W.odd_rate : 1.0), dt);
    W.now = t;
    return 0;
}

/* Task i on core i's odd thread (its even one: fake_even_place()). */
static int odd_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned k = 0; k < snap->ntasks; k++)
        plan->cpu[k] = (int)(2 * snap->tasks[k].id + 1);
    return 0;
}

/* The even threads of the cores of the other package: the same placement
 * to the predictor, on the other NUMA node. */
static int other_node_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    W.asks++;
    for (unsigned k = 0; k < snap->ntasks; k++)
        plan->cpu[k] = (int)((2 * snap->tasks[k].id + NT) % (2 * NT));
    return 0;
}

/* Every task where it runs (task i on CPU 2i + 1) but task 0, on the even
 * thread of the first core of the second node of "pack:2 [numa] core:8
 * pu:2" (CPU 16). */
static int task0_across_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned k = 0; k < snap->ntasks; k++)
        plan->cpu[k] = snap->tasks[k].id ? (int)(2 * snap->tasks[k].id + 1) : 16;
    return 0;
}

static const struct corun_policy even_pol = {.name = "even-script", .place = fake_even_place};
static const struct corun_policy odd_pol = {.name = "odd-script", .place = odd_place};
static const struct corun_policy other_node_pol = {.name = "other-node-script",
                                                   .place = other_node_place};
static const struct corun_policy task0_across_pol = {.name = "task0-across-script",
                                                     .place = task0_across_place};

static void on_event(void *ctx, const struct corun_engine_event *ev)
{
    if (ev->kind != CORUN_ENGINE_EV_MEMORY && ev->from >= 0)
        W.moves++;
}

/* The world as it starts: the kernel's placement, task i on CPU @first + 2i. */
static void reset_world(unsigned first)
{
    struct corun_topo *topo = W.topo;

    memset(&W, 0, sizeof(W));
    W.topo = topo;
    W.sensor = (struct fake_counters){.acc = W.acc, .now = &W.now};
    W.pins = (struct fake_pins){.topo = W.topo, .pinned = W.pinned};
    W.now = 1000;
    W.odd_rate = 0.5;
    W.compute_from = NT;
    for (unsigned i = 0; i < NT; i++)
        W.pinned[i] = (int)(first + 2 * i);
}

static int load(const char *synthetic)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC, .input = synthetic};

    W.topo = NULL;
    assert_int_equal(corun_topo_load(&o, &W.topo), 0);
    return 0;
}

static int setup(void **state)
{
    return load("pack:1 core:8 pu:2");
}

/* Two packages of four cores, a NUMA node each. */
static int setup_nodes(void **state)
{
    return load("pack:2 [numa] core:4 pu:2");
}

/* Two packages of eight cores, a NUMA node each: the tasks, one a core,
 * all on the first. */
static int setup_big_nodes(void **state)
{
    return load("pack:2 [numa] core:8 pu:2");
}

static int teardown(void **state)
{
    corun_topo_free(W.topo);
    return 0;
}

/* Runs the engine for 5 s of 0.25 s intervals with @pol, @second (NULL:
 * none under a scripted policy) and the caller's @max_moves (0: the
 * engine's own cap), and leaves its stats in @st. */
static void run_engine(const struct corun_policy *pol, const struct corun_policy *second,
                       unsigned max_moves, bool no_second, struct corun_engine_stats *st)
{
    struct corun_engine_opts o = {
        .topo = W.topo,
        .policy = pol,
        .sense = &fake_counters_sense,
        .sense_state = &W.sensor,
        .act = &fake_pins_act,
        .act_state = &W.pins,
        .clock = {.now_ns = fake_now, .wait_until = fake_wait},
        .interval_ns = 250000000,
        .max_moves = max_moves,
        .seed = 5,
        .on_event = on_event,
        .second_policy = second,
        .no_second_opinion = no_second,
    };
    struct corun_engine *e;

    assert_int_equal(corun_engine_new(&o, &e), 0);
    fake_add_sheep(e, W.pinned, NT);
    for (unsigned i = W.compute_from; i < NT; i++)
        assert_int_equal(corun_engine_set_hint(e, i, CORUN_CLASS_COMPUTE), 0);
    assert_int_equal(corun_engine_run(e, 5000000000ull, NULL), 0);
    corun_engine_stats(e, st);
    print_message("%s / %s, cap %u: moves %u, plans %lu, trials %lu, reverted %lu, held %lu, "
                  "second opinions %lu tried %lu kept\n",
                  pol->name, second ? second->name : "none", max_moves, W.moves,
                  (unsigned long)st->plans, (unsigned long)st->trials, (unsigned long)st->reverted,
                  (unsigned long)st->held, (unsigned long)st->second_tried,
                  (unsigned long)st->second_kept);
    assert_int_equal(corun_engine_restore(e), 0);
    corun_engine_free(e);
}

static void assert_on(unsigned first)
{
    for (unsigned i = 0; i < NT; i++)
        assert_int_equal(W.pinned[i], (int)(first + 2 * i));
}

/* Runs from the slow threads with @second and asserts that its plan was
 * tried once and kept: every task on its core's fast thread, one move
 * each, nothing taken back. */
static void assert_kept(const struct corun_policy *second)
{
    struct corun_engine_stats st;

    reset_world(1);
    run_engine(&odd_pol, second, 0, false, &st);
    assert_on(0);
    assert_int_equal(st.second_tried, 1);
    assert_int_equal(st.second_kept, 1);
    assert_int_equal(st.reverted, 0);
    assert_int_equal(W.moves, NT);
}

/* The policy keeps the tasks on the slow threads; the second opinion, rated
 * the same, is tried once the plans have settled, measures twice the rate
 * and is kept. The policy's plans after it, back to the slow threads, are
 * predicted to gain nothing and are not applied. */
static void test_second_kept(void **state)
{
    assert_kept(&even_pol);
}

/* The other way round: the second opinion halves every rate, is taken back
 * (every task where it ran), and is not asked again. */
static void test_second_taken_back(void **state)
{
    struct corun_engine_stats st;

    reset_world(0);
    run_engine(&even_pol, &odd_pol, 0, false, &st);
    assert_on(0);
    assert_int_equal(st.second_tried, 1);
    assert_int_equal(st.second_kept, 0);
    assert_int_equal(st.reverted, 1);
    assert_int_equal(W.moves, 2 * NT);
}

/* A second opinion must measure a gain: the odd threads 0.1% slower, a
 * loss a change of the policy's own would be kept with (inside the
 * margin), and it is taken back. */
static void test_second_no_gain(void **state)
{
    struct corun_engine_stats st;

    reset_world(0);
    W.odd_rate = 0.999;
    run_engine(&even_pol, &odd_pol, 0, false, &st);
    assert_on(0);
    assert_int_equal(st.second_tried, 1);
    assert_int_equal(st.second_kept, 0);
    assert_int_equal(st.reverted, 1);
}

/* Where the doubt test's tasks start (two on core 0, none on core 1), where
 * its policy plans task 0 after its first plan, and where its second
 * opinion puts task 1. */
static const int doubt_start[NT] = {1, 0, 5, 7, 9, 11, 13, 15};

static int doubt_place(const struct corun_snapshot *snap, struct corun_plan *plan, unsigned task,
                       int cpu)
{
    for (unsigned k = 0; k < snap->ntasks; k++)
        plan->cpu[k] = snap->tasks[k].id == task ? cpu : doubt_start[snap->tasks[k].id];
    return 0;
}

/* Task 0 to core 1's even thread, after a first plan that pins every task
 * where it runs. */
static int task0_even_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    return doubt_place(snap, plan, 0, snap->round ? 2 : 1);
}

/* Task 1 to core 1's odd thread. */
static int task1_odd_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    return doubt_place(snap, plan, 1, 3);
}

static const struct corun_policy task0_pol = {.name = "task0-even-script",
                                              .place = task0_even_place};
static const struct corun_policy task1_pol = {.name = "task1-odd-script", .place = task1_odd_place};

/* Plans the doubt holds back have settled too. The tasks are compute-bound,
 * two of them on core 0, and the odd threads are the fast ones. The policy
 * pins every task where it runs, then moves task 0 off core 0 to the even
 * thread of the idle core 1: predicted to gain (no core shared), measured
 * at half the rate, taken back. The doubt that leaves holds the same plan
 * back every round after, and the second opinion is asked: task 1 to core
 * 1's odd thread, predicted the same gain, measured at twice the rate,
 * kept. */
static void test_second_when_doubted(void **state)
{
    struct corun_engine_stats st;

    reset_world(1);
    W.odd_rate = 2.0;
    W.compute_from = 0;
    memcpy(W.pinned, doubt_start, sizeof(doubt_start));
    run_engine(&task0_pol, &task1_pol, 0, false, &st);
    assert_true(st.doubted > 0);
    assert_int_equal(st.reverted, 1);
    assert_int_equal(st.second_tried, 1);
    assert_int_equal(st.second_kept, 1);
    assert_int_equal(W.pinned[0], 1);
    assert_int_equal(W.pinned[1], 3);
}

/* Runs from the slow threads with @second, under @max_moves and
 * @no_second, and asserts that no second opinion was tried: every task
 * still on its slow thread, none moved. */
static void assert_not_tried(const struct corun_policy *second, unsigned max_moves, bool no_second)
{
    struct corun_engine_stats st;

    run_engine(&odd_pol, second, max_moves, no_second, &st);
    assert_int_equal(st.second_tried, 0);
    assert_on(1);
    assert_int_equal(W.moves, 0);
}

/* Not tried: past the caller's cap, when the caller said none, and under a
 * policy other than corun's with none given. */
static void test_second_not_tried(void **state)
{
    reset_world(1);
    assert_not_tried(&even_pol, NT - 1, false);
    reset_world(1);
    assert_not_tried(&even_pol, 0, true);
    reset_world(1);
    assert_not_tried(NULL, 0, false);
}

/* Without instruction counts (a sensor like the proc one, no PMU) nothing
 * could judge it, and it would be kept unmeasured: not tried. */
static void test_second_not_unmeasured(void **state)
{
    reset_world(1);
    W.no_instr = true;
    assert_not_tried(&even_pol, 0, false);
}

/* A second plan that moves more than one task to another NUMA node is not
 * tried, though it would measure twice the rate: here the tasks of the
 * second node are compute-bound, so no trade of like tasks keeps them on
 * their node, and all eight cross. It is asked again less and less often. */
static void test_second_not_across_nodes(void **state)
{
    reset_world(1);
    W.compute_from = NT / 2;
    assert_not_tried(&other_node_pol, 0, false);
    /* Asked after 1, 2, 4... settled plans (14 of them here), not at each. */
    print_message("second opinion asked %u times\n", W.asks);
    assert_in_range(W.asks, 3, 5);
}

/* One task moved to another node is a change, not a relabelling: tried,
 * it measures twice that task's rate and is kept. */
static void test_second_one_across(void **state)
{
    struct corun_engine_stats st;

    reset_world(1);
    run_engine(&odd_pol, &task0_across_pol, 0, false, &st);
    assert_int_equal(st.second_tried, 1);
    assert_int_equal(st.second_kept, 1);
    assert_int_equal(W.pinned[0], 16);
    for (unsigned i = 1; i < NT; i++)
        assert_int_equal(W.pinned[i], (int)(2 * i + 1));
}

/* The same plan with like tasks: traded, each task takes the even thread
 * of its own core, none crosses a node, and the trial measures twice the
 * rate and is kept. */
static void test_second_like_traded(void **state)
{
    assert_kept(&other_node_pol);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_second_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_taken_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_no_gain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_when_doubted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_not_tried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_not_unmeasured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_not_across_nodes, setup_nodes, teardown),
        cmocka_unit_test_setup_teardown(test_second_like_traded, setup_nodes, teardown),
        cmocka_unit_test_setup_teardown(test_second_one_across, setup_big_nodes, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
