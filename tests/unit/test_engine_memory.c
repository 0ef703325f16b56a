/*
 * test_engine_memory.c — memory follows its task: when the engine moves a
 * task to another NUMA node, it asks the actuator to move the task's memory
 * there (as numad does) as it moves the task; the change's trial is
 * measured from the interval after (the task stalls while its pages move),
 * and a change taken back brings the memory back; a change kept though it
 * measured a loss leaves a doubt (but a first plan kept); a refusal is counted and the task stays
 * moved; with memory following off, or a backend that cannot move memory,
 * nothing is asked.
 *
 * The world: two NUMA nodes of two cores each, two tasks the kernel started
 * on node 0 (memory there, by first touch), and the `spread` policy, which
 * puts one of them on node 1 (or a scripted one). A fake actuator records
 * every apply and every memory move; a fake sensor gives steady counters,
 * optionally with a stall after a memory move.
 */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "corun/engine.h"

#define NT 2

static struct {
    struct corun_topo *topo;
    uint64_t now;
    int pinned[NT];
    unsigned moves;          /* move_memory calls */
    pid_t moved_target;      /* the last one's */
    int moved_node;
    int move_result;         /* what move_memory returns */
    bool slow_far;           /* a task off node 0 runs at a tenth of its speed */
    bool slow_cpu0;          /* CPU 0 runs at two thirds of the others' speed */
    bool slow_cpu2;          /* CPU 2 runs 0.5% slower than the others */
    uint64_t stall_ns;       /* a task stalls this long while its memory moves */
    uint64_t stalled_until[NT];
    int start[NT];           /* where the kernel started each task */
    unsigned script_from;    /* the scripted policy pins in place before this round */
    double mem_move_cost;    /* the engine's option */
    double told_cost[4];     /* the memory-move cost each round's snapshot said */
    struct corun_sample acc[NT];
    struct fake_counters sensor; /* reads acc */
} M;

static uint64_t fake_now(void *ctx)
{
    return M.now;
}

static int fake_wait(void *ctx, uint64_t t)
{
    double dt = (double)(t - M.now);

    for (unsigned i = 0; i < NT; i++) {
        bool far = corun_topo_cpu(M.topo, (unsigned)M.pinned[i])->dom[CORUN_LEVEL_NUMA] != 0;
        double ipc = M.slow_far && far                   ? 0.3
                     : M.slow_cpu0 && M.pinned[i] == 0   ? 2.0
                     : M.slow_cpu2 && M.pinned[i] == 2   ? 2.985
                                                         : 3.0;

        /* Stalled for part of [now, t): no instructions then. */
        if (M.stalled_until[i] > M.now)
            ipc *= 1.0 - (double)((M.stalled_until[i] < t ? M.stalled_until[i] : t) - M.now) / dt;

        M.acc[i].value[CORUN_EV_CYCLES] += (uint64_t)(3.0 * dt);
        M.acc[i].value[CORUN_EV_REF_CYCLES] += (uint64_t)(2.5 * dt);
        M.acc[i].value[CORUN_EV_INSTRUCTIONS] += (uint64_t)(ipc * dt);
        M.acc[i].value[CORUN_EV_LLC_REFERENCES] += (uint64_t)(3e-3 * dt);
        M.acc[i].value[CORUN_EV_LLC_MISSES] += (uint64_t)(1e-3 * dt);
        M.acc[i].value[CORUN_EV_TASK_CLOCK_NS] += (uint64_t)dt;
    }
    M.now = t;
    return 0;
}

static int a_apply(void *st, pid_t target, const struct corun_cpuset *cpus)
{
    M.pinned[target] = corun_topo_cpu_by_os(M.topo, (unsigned)corun_cpuset_next(cpus, 0));
    return 0;
}

/* Given back to the kernel: it runs where the kernel started it. */
static int a_restore(void *st, pid_t target)
{
    M.pinned[target] = M.start[target];
    return 0;
}

static int a_move_memory(void *st, pid_t target, int node)
{
    M.moves++;
    M.moved_target = target;
    M.moved_node = node;
    if (!M.move_result)
        M.stalled_until[target] = M.now + M.stall_ns;
    return M.move_result;
}

static const struct corun_act_ops mem_act = {
    .name = "fake", .apply = a_apply, .restore = a_restore, .move_memory = a_move_memory};
/* The same without move_memory: a backend that cannot move memory. */
static const struct corun_act_ops plain_act = {
    .name = "fake", .apply = a_apply, .restore = a_restore};

static int setup(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC,
                                .input = "pack:1 numa:2 core:2 pu:1"};

    memset(&M, 0, sizeof(M));
    M.sensor = (struct fake_counters){.acc = M.acc, .now = &M.now};
    assert_int_equal(corun_topo_load(&o, &M.topo), 0);
    M.now = 1000;
    M.moved_node = -1;
    for (unsigned i = 0; i < NT; i++)
        M.start[i] = (int)i;
    return 0;
}

static int teardown(void **state)
{
    corun_topo_free(M.topo);
    return 0;
}

/* A scripted policy: from round M.script_from, first task 1 to node 1
 * (CPU 2), then task 0 to CPU 1 as well; before it, every task pinned where
 * it runs (so that the script's changes are not the first plan's). */
static int scripted_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    if (snap->round < 4)
        M.told_cost[snap->round] = snap->mem_move_cost;
    for (unsigned i = 0; i < snap->ntasks; i++)
        plan->cpu[i] = snap->round < M.script_from ? snap->tasks[i].cpu
                       : snap->tasks[i].id == 1    ? 2
                       : snap->round > M.script_from ? 1
                                                   : 0;
    return 0;
}

static const struct corun_policy scripted = {
    .name = "scripted", .summary = "test script", .place = scripted_place};

/* Task 1 to node 1 (CPU 2), task 0 on CPU 0, from the first plan on (the
 * tests that use it start both on CPU 0). */
static int split_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned i = 0; i < snap->ntasks; i++)
        plan->cpu[i] = snap->tasks[i].id == 1 ? 2 : 0;
    return 0;
}

static const struct corun_policy split = {
    .name = "split", .summary = "test script", .place = split_place};

/* Runs @policy (NULL: `spread`) for @ns with both tasks started on node 0
 * (on M.start: CPUs 0 and 1 unless a test says otherwise; memory there);
 * the stats at the end. */
static void run_policy(const struct corun_policy *policy, uint64_t ns,
                       const struct corun_act_ops *act, bool no_follow,
                       struct corun_engine_stats *st)
{
    struct corun_engine_opts o = {
        .topo = M.topo,
        .policy = policy ? policy : corun_policy_find("spread"),
        .move_cost = policy ? -1 : 0, /* a script is followed whatever it gains */
        .sense = &fake_counters_sense,
        .sense_state = &M.sensor,
        .act = act,
        .clock = {.now_ns = fake_now, .wait_until = fake_wait},
        .interval_ns = 100000000,
        .warmup_ns = 200000000,
        .seed = 3,
        .no_mem_follow = no_follow,
        .mem_move_cost = M.mem_move_cost,
    };
    struct corun_engine *e;

    assert_int_equal(corun_engine_new(&o, &e), 0);
    for (unsigned i = 0; i < NT; i++) {
        struct corun_engine_task t = {.target = (pid_t)i, .id = i, .hint = CORUN_CLASS_UNKNOWN};

        assert_int_equal(corun_engine_add(e, &t, NULL), 0);
        assert_int_equal(corun_engine_set_cpu(e, i, M.start[i]), 0);
        assert_int_equal(corun_engine_set_home(e, i, 0), 0);
        M.pinned[i] = M.start[i];
    }
    assert_int_equal(corun_engine_run(e, ns, NULL), 0);
    corun_engine_stats(e, st);
    corun_engine_free(e);
}

/* `spread` for a second. */
static void run(const struct corun_act_ops *act, bool no_follow, struct corun_engine_stats *st)
{
    run_policy(NULL, 1000000000ull, act, no_follow, st);
}

/* The node (domain index) task @i runs on now. */
static int node_now(unsigned i)
{
    return corun_topo_cpu(M.topo, (unsigned)M.pinned[i])->dom[CORUN_LEVEL_NUMA];
}

static void test_memory_follows_the_move(void **state)
{
    struct corun_engine_stats st;
    int moved = -1;

    run(&mem_act, false, &st);
    /* spread put one task on each node: the one on node 1 took its memory. */
    assert_int_not_equal(node_now(0), node_now(1));
    for (unsigned i = 0; i < NT; i++)
        if (node_now(i) == 1)
            moved = (int)i;
    assert_true(moved >= 0);
    assert_int_equal(M.moves, 1);
    assert_int_equal(st.mem_moves, 1);
    assert_int_equal(M.moved_target, moved);
    /* The kernel's number of the node, not the topology's index. */
    assert_int_equal(M.moved_node,
                     (int)corun_topo_domain(M.topo, CORUN_LEVEL_NUMA, 1)->os_index);
    assert_int_equal(st.errors, 0);
}

/* A change moved task 1 to node 1 with its memory and was taken back: the
 * task runs on @cpu again, and its memory went there and came back to
 * node 0 (the kernel's number of the node). */
static void assert_memory_came_back(const struct corun_engine_stats *st, int cpu)
{
    assert_true(st->reverted >= 1);
    assert_int_equal(M.pinned[1], cpu);
    assert_int_equal(M.moves, 2);
    assert_int_equal(st->mem_moves, 2);
    assert_int_equal(M.moved_target, 1);
    assert_int_equal(M.moved_node,
                     (int)corun_topo_domain(M.topo, CORUN_LEVEL_NUMA, 0)->os_index);
}

/* A change after the first plan that the outcome check takes back brings
 * the memory back where it was. The first plan pins both tasks where they
 * run, the second moves task 1 to node 1, where it runs at a tenth of its
 * speed: its memory goes there with it and comes back with it. */
static void test_later_change_taken_back_brings_memory_back(void **state)
{
    struct corun_engine_stats st;

    M.slow_far = true;
    M.script_from = 1;
    M.mem_move_cost = -1;
    run_policy(&scripted, 1000000000ull, &mem_act, false, &st);
    assert_memory_came_back(&st, 1);
}

/* A task stalls while its memory moves with a change after the first plan:
 * task 1 goes to node 1 and stalls half an interval, a loss of 25% per
 * task over that interval, which an early verdict would take back. That
 * interval is not measured: the change is kept, and the next one, which
 * moves task 0 off the slow CPU 0 (+50%), too. */
static void test_later_change_stall_is_not_measured(void **state)
{
    struct corun_engine_stats st;

    M.slow_cpu0 = true;
    M.stall_ns = 50000000;
    M.script_from = 1;
    M.mem_move_cost = -1;
    run_policy(&scripted, 900000000ull, &mem_act, false, &st);
    assert_int_equal(M.moves, 1);
    assert_int_equal(M.moved_target, 1);
    assert_int_equal(st.trials, 2);
    assert_int_equal(st.reverted, 0);
    assert_int_equal(M.pinned[0], 1);
    assert_int_equal(M.pinned[1], 2);
}

/* The script from round @from for 1.2 s, CPU 2 0.5% slower than the
 * others, every move free. */
static void run_slow_cpu2_script(unsigned from, struct corun_engine_stats *st)
{
    M.slow_cpu2 = true;
    M.script_from = from;
    M.mem_move_cost = -1;
    run_policy(&scripted, 1200000000ull, &mem_act, false, st);
}

/* A change kept though it measured a loss leaves a doubt, as one taken back
 * does. Task 1 goes to CPU 2 (node 1), where it runs 0.5% slower: inside
 * the margin, kept. The next plan moves task 0 from CPU 0 to CPU 1 for no
 * predicted gain: it does not beat the doubt and is not applied (without
 * the doubt it is tried). */
static void test_kept_loss_leaves_a_doubt(void **state)
{
    struct corun_engine_stats st;

    run_slow_cpu2_script(1, &st);
    assert_int_equal(st.trials, 1);
    assert_int_equal(st.reverted, 0);
    assert_true(st.doubted >= 1);
    assert_int_equal(M.pinned[0], 0);
    assert_int_equal(M.pinned[1], 2);
}

/* A first plan kept though it measured a loss leaves no doubt: it replaced
 * the kernel's placement whole, and the later plans are smaller changes.
 * The same script as above from the first plan on: task 1 to CPU 2, 0.5%
 * slower, kept; then task 0 from CPU 0 to CPU 1 for no predicted gain,
 * which is tried (with a doubt it would be held, as above). */
static void test_kept_first_plan_leaves_no_doubt(void **state)
{
    struct corun_engine_stats st;

    run_slow_cpu2_script(0, &st);
    assert_int_equal(st.reverted, 0);
    assert_int_equal(st.doubted, 0);
    assert_int_equal(st.trials, 2);
    assert_int_equal(M.pinned[0], 1);
    assert_int_equal(M.pinned[1], 2);
}

/* The first plan is told the memory-move cost the caller gave (0: 0.03); the
 * plans after it, whose trials are judged against the placement they would
 * replace, a quarter of it. */
static void test_later_plans_pay_a_quarter_of_the_memory_cost(void **state)
{
    struct corun_engine_stats st;

    M.script_from = 1;
    run_policy(&scripted, 600000000ull, &mem_act, false, &st);
    assert_true(M.told_cost[0] == 0.03);
    assert_true(M.told_cost[1] == 0.0075);
    M.mem_move_cost = 0.1;
    memset(M.told_cost, 0, sizeof(M.told_cost));
    run_policy(&scripted, 600000000ull, &mem_act, false, &st);
    assert_true(M.told_cost[0] == 0.1);
    assert_true(M.told_cost[1] == 0.025);
}

/* The first plan takes task 1's memory along as it moves it: before its
 * trial is judged (two whole intervals after the one it stalls in). */
static void test_first_plan_takes_memory_at_once(void **state)
{
    struct corun_engine_stats st;

    M.start[1] = 0;
    run_policy(&split, 300000000ull, &mem_act, false, &st);
    assert_int_equal(M.pinned[1], 2);
    assert_int_equal(M.moves, 1);
    assert_int_equal(M.moved_target, 1);
    assert_int_equal(M.moved_node,
                     (int)corun_topo_domain(M.topo, CORUN_LEVEL_NUMA, 1)->os_index);
    assert_int_equal(st.trials, 0);
}

/* Task 1 stalls for nine tenths of the interval after the first plan while
 * its memory moves: a loss of 45% per task over that interval, which an
 * early verdict would take back. It is not measured: over the two that
 * follow the change loses nothing, and it is kept. */
static void test_first_plan_stall_is_not_measured(void **state)
{
    struct corun_engine_stats st;

    M.start[1] = 0;
    M.stall_ns = 90000000;
    run_policy(&split, 1000000000ull, &mem_act, false, &st);
    assert_int_equal(st.trials, 1);
    assert_int_equal(st.reverted, 0);
    assert_int_equal(M.moves, 1);
    assert_int_equal(M.pinned[1], 2);
}

/* The first plan's change loses (task 1 runs at a tenth of its speed off
 * node 0): taken back, the task goes back to the kernel and its memory
 * back to node 0. */
static void test_first_plan_taken_back_brings_memory_back(void **state)
{
    struct corun_engine_stats st;

    M.start[1] = 0;
    M.slow_far = true;
    run_policy(&split, 1000000000ull, &mem_act, false, &st);
    assert_memory_came_back(&st, 0);
}

static void test_refused_move_is_counted(void **state)
{
    struct corun_engine_stats st;

    M.move_result = -EPERM;
    run(&mem_act, false, &st);
    /* The task still moved; its memory could not, which is counted once. */
    assert_int_not_equal(node_now(0), node_now(1));
    assert_int_equal(M.moves, 1);
    assert_int_equal(st.mem_moves, 0);
    assert_int_equal(st.errors, 1);
    assert_int_equal(st.last_error, -EPERM);
}

static void test_off_or_unsupported_never_asks(void **state)
{
    struct corun_engine_stats st;

    run(&mem_act, true, &st);
    assert_int_not_equal(node_now(0), node_now(1));
    assert_int_equal(M.moves, 0);
    assert_int_equal(st.mem_moves, 0);
    memset(M.pinned, 0, sizeof(M.pinned));
    run(&plain_act, false, &st);
    assert_int_not_equal(node_now(0), node_now(1));
    assert_int_equal(st.mem_moves, 0);
    assert_int_equal(st.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memory_follows_the_move, setup, teardown),
        cmocka_unit_test_setup_teardown(test_later_change_taken_back_brings_memory_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_later_change_stall_is_not_measured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_loss_leaves_a_doubt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_first_plan_leaves_no_doubt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_later_plans_pay_a_quarter_of_the_memory_cost, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_first_plan_takes_memory_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_plan_stall_is_not_measured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_plan_taken_back_brings_memory_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refused_move_is_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off_or_unsupported_never_asks, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
