/*
 * test_engine.c — the engine loop on a tiny fake world: a 2-core SMT2
 * machine, a fake sensor that turns where tasks are pinned into counters
 * (two compute-bound tasks on one core halve each other's IPC; a memory-bound
 * task and a compute-bound one barely notice each other), a fake actuator
 * that records what it is told, and a fake clock. The engine must find the
 * good pairing from counters alone, respect warm-up, hysteresis and the move
 * cap, and survive a task that vanishes. In an "inverted" world (the two
 * compute tasks share data and run best as siblings, which no counter-based
 * model predicts) the outcome check must take the engine's change back.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corun/engine.h"

#define NT 4

struct world {
    struct corun_topo *topo;
    uint64_t now;
    int pinned[NT];        /* dense CPU, -1: kernel decides */
    bool mem[NT];          /* memory-bound */
    struct corun_sample acc[NT];
    int fail_task;         /* reads of this task fail with -ESRCH; -1 none */
    unsigned applies, restores, attaches, detaches;
    bool inverted;         /* compute tasks gain from sharing a core */
    double inv_loss;       /* inverted: what a compute task loses beside a memory-bound one */
    double inv_mem_loss;   /* inverted: what a memory-bound task loses beside a compute one */
    int refuse_task;       /* apply on this task fails with -EPERM; -1 none */
    uint64_t split_ns;     /* time spent with tasks 0 and 1 on different cores */
    double blip;           /* task 0 runs this much faster over its first 0.2 s split */
};

static struct world W;

/* Where a task runs: pinned, or the kernel's choice (task i on CPU i,
 * which puts tasks 0 and 1 on core 0). */
static int where(unsigned i)
{
    return W.pinned[i] >= 0 ? W.pinned[i] : (int)i;
}

/* IPC of task @i given its SMT sibling. */
static double ipc_of(unsigned i)
{
    double base = W.mem[i] ? 0.4 : 2.0;

    if (i == 0 && W.blip != 0 && W.split_ns < 200000000 &&
        !corun_topo_shares(W.topo, (unsigned)where(0), (unsigned)where(1), CORUN_LEVEL_CORE))
        base *= 1 + W.blip;

    for (unsigned j = 0; j < NT; j++) {
        if (j == i || !corun_topo_shares(W.topo, (unsigned)where(i), (unsigned)where(j),
                                         CORUN_LEVEL_CORE))
            continue;
        if (!W.mem[i] && !W.mem[j])
            return base * (W.inverted ? 1.0 : 0.55);
        if (!W.inverted)
            return base * 0.92;
        if (W.mem[i] && W.mem[j])
            return base * 0.5;
        return base * (W.mem[i] ? 0.5 * (1 - W.inv_mem_loss) : 1 - W.inv_loss);
    }
    return base;
}

/* Advances the world to @t: every task accumulates counters. */
static void advance(uint64_t t)
{
    double dt = (double)(t - W.now);

    for (unsigned i = 0; i < NT; i++) {
        double cycles = 3.0 * dt, ipc = ipc_of(i), instr = ipc * cycles;
        struct corun_sample *s = &W.acc[i];

        s->value[CORUN_EV_CYCLES] += (uint64_t)cycles;
        s->value[CORUN_EV_REF_CYCLES] += (uint64_t)(2.5 * dt);
        s->value[CORUN_EV_INSTRUCTIONS] += (uint64_t)instr;
        s->value[CORUN_EV_LLC_REFERENCES] += (uint64_t)(instr * (W.mem[i] ? 29e-3 : 1e-3));
        s->value[CORUN_EV_LLC_MISSES] += (uint64_t)(instr * (W.mem[i] ? 28e-3 : 0.1e-3));
        s->value[CORUN_EV_TASK_CLOCK_NS] += (uint64_t)dt;
    }
    if (!corun_topo_shares(W.topo, (unsigned)where(0), (unsigned)where(1), CORUN_LEVEL_CORE))
        W.split_ns += t - W.now;
    W.now = t;
}

static uint64_t fake_now(void *ctx)
{
    return W.now;
}

static int fake_wait(void *ctx, uint64_t t)
{
    advance(t);
    return 0;
}

static int s_attach(void *st, pid_t target, int *handle)
{
    if (target < 0 || target >= NT)
        return -ESRCH;
    *handle = target;
    W.attaches++;
    return 0;
}

static int s_read(void *st, int h, struct corun_sample *out)
{
    if (h == W.fail_task)
        return -ESRCH;
    fake_sample(out, &W.acc[h], W.now);
    return 0;
}

static int s_detach(void *st, int h)
{
    W.detaches++;
    return 0;
}

static const struct corun_sense_ops fake_sense = {
    .name = "fake", .attach = s_attach, .read = s_read, .detach = s_detach};

static int a_apply(void *st, pid_t target, const struct corun_cpuset *cpus)
{
    int os = corun_cpuset_next(cpus, 0);

    if (target == W.refuse_task)
        return -EPERM;
    assert_int_equal(corun_cpuset_count(cpus), 1);
    W.pinned[target] = corun_topo_cpu_by_os(W.topo, (unsigned)os);
    W.applies++;
    return 0;
}

static int a_restore(void *st, pid_t target)
{
    W.pinned[target] = -1;
    W.restores++;
    return 0;
}

static int a_restore_all(void *st)
{
    for (unsigned i = 0; i < NT; i++)
        W.pinned[i] = -1;
    return 0;
}

static const struct corun_act_ops fake_act = {
    .name = "fake", .apply = a_apply, .restore = a_restore, .restore_all = a_restore_all};

static int setup(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC, .input = "core:2 pu:2"};

    memset(&W, 0, sizeof(W));
    assert_int_equal(corun_topo_load(&o, &W.topo), 0);
    W.now = 1000;
    W.fail_task = -1;
    W.refuse_task = -1;
    W.inv_loss = 0.5;
    /* Two compute tasks first: the kernel's order pairs them on core 0. */
    for (unsigned i = 0; i < NT; i++) {
        W.pinned[i] = -1;
        W.mem[i] = i >= 2;
    }
    return 0;
}

static int teardown(void **state)
{
    corun_topo_free(W.topo);
    return 0;
}

/* Adds the world's NT tasks to @e: target i, id @id0 + i, class @hint, at
 * index i. */
static void add_tasks(struct corun_engine *e, unsigned id0, enum corun_class hint)
{
    for (unsigned i = 0; i < NT; i++) {
        struct corun_engine_task t = {.target = (pid_t)i, .id = id0 + i, .hint = hint};
        unsigned idx;

        assert_int_equal(corun_engine_add(e, &t, &idx), 0);
        assert_int_equal(idx, i);
    }
}

static struct corun_engine *engine_opts(const char *policy, double move_cost, unsigned max_moves,
                                        bool second)
{
    struct corun_engine_opts o = {
        .topo = W.topo,
        .policy = corun_policy_find(policy),
        .sense = &fake_sense,
        .act = &fake_act,
        .clock = {.now_ns = fake_now, .wait_until = fake_wait},
        .interval_ns = 100000000,
        .warmup_ns = 300000000,
        .move_cost = move_cost,
        .max_moves = max_moves,
        .seed = 9,
        .no_second_opinion = !second,
    };
    struct corun_engine *e;

    assert_int_equal(corun_engine_new(&o, &e), 0);
    add_tasks(e, 100, CORUN_CLASS_UNKNOWN);
    return e;
}

static struct corun_engine *engine(const char *policy, double move_cost, unsigned max_moves)
{
    return engine_opts(policy, move_cost, max_moves, true);
}

static bool good_pairing(void)
{
    return !corun_topo_shares(W.topo, (unsigned)where(0), (unsigned)where(1), CORUN_LEVEL_CORE);
}

/* From counters alone, the engine separates the two compute tasks, and
 * not before the warm-up ends. */
static void test_finds_pairing(void **state)
{
    struct corun_engine *e = engine("corun", 0, 0);
    struct corun_engine_stats st;
    struct corun_task_profile p;

    assert_false(good_pairing());
    assert_int_equal(corun_engine_run(e, 250000000, NULL), 0); /* within warm-up */
    corun_engine_stats(e, &st);
    assert_int_equal(st.plans, 0);
    assert_int_equal(W.applies, 0);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_true(st.plans > 0);
    assert_int_equal(st.placements, NT);
    assert_true(good_pairing());
    /* Learned classes: compute vs memory-bound, from counters. */
    assert_int_equal(corun_engine_profile(e, 0, &p), 0);
    assert_int_equal(p.id, 100);
    assert_int_equal(p.cls, CORUN_CLASS_COMPUTE);
    assert_int_equal(corun_engine_profile(e, 3, &p), 0);
    assert_true(p.cls == CORUN_CLASS_STREAMING || p.cls == CORUN_CLASS_CHASING);
    assert_true(fabs(p.freq_ratio - 1.2) < 0.01);
    assert_int_equal(p.cpu, W.pinned[3]);
    /* Once placed well, it stays: no migration for the rest of the run. */
    assert_int_equal(corun_engine_run(e, 2000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_true(st.migrations <= 2);
    assert_int_equal(corun_engine_restore(e), 0);
    assert_int_equal(corun_engine_task_cpu(e, 0), -1);
    corun_engine_free(e);
}

/* Pinned badly at the start (warm-up policy pack), a huge move cost keeps
 * the engine from moving; a cap of one move per interval spreads the
 * moves over intervals. */
static void test_hysteresis_and_cap(void **state)
{
    struct corun_engine_stats st;
    struct corun_engine_opts o;
    struct corun_engine *e;

    /* With the warm-up placement "pack", tasks 0 and 1 share core 0. */
    memset(&o, 0, sizeof(o));
    o.topo = W.topo;
    o.policy = corun_policy_find("corun");
    o.warmup_policy = corun_policy_find("pack");
    o.sense = &fake_sense;
    o.act = &fake_act;
    o.clock = (struct corun_clock){.now_ns = fake_now, .wait_until = fake_wait};
    o.interval_ns = 100000000;
    o.warmup_ns = 300000000;
    o.move_cost = 100;
    assert_int_equal(corun_engine_new(&o, &e), 0);
    add_tasks(e, 0, CORUN_CLASS_UNKNOWN);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_int_equal(st.placements, NT);
    assert_int_equal(st.migrations, 0);
    assert_true(st.plans > 0);
    assert_false(good_pairing());
    corun_engine_free(e);

    /* Same start, cheap moves, at most one per interval. */
    for (unsigned i = 0; i < NT; i++)
        W.pinned[i] = -1;
    o.move_cost = 0.001;
    o.max_moves = 1;
    assert_int_equal(corun_engine_new(&o, &e), 0);
    add_tasks(e, 0, CORUN_CLASS_UNKNOWN);
    assert_int_equal(corun_engine_run(e, 2000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_true(good_pairing());
    /* One swap: two moves that only make sense together, so they go
     * together in one interval although the cap is one. */
    assert_int_equal(st.migrations, 2);
    corun_engine_free(e);
}

/* A task whose reads fail is counted, not fatal; removing a pinned task
 * restores it. */
static void test_errors_and_remove(void **state)
{
    struct corun_engine *e = engine("spread", 0, 0);
    struct corun_engine_stats st;

    W.fail_task = 2;
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_true(st.errors > 0);
    assert_int_equal(st.last_error, -ESRCH);
    assert_true(W.pinned[0] >= 0);
    assert_int_equal(corun_engine_remove(e, 0), 0);
    assert_int_equal(W.pinned[0], -1);
    assert_int_equal(W.restores, 1);
    assert_int_equal(corun_engine_remove(e, 0), -ENOENT);
    assert_int_equal(corun_engine_ntasks(e), NT);
    corun_engine_free(e);
}

/* Told where the kernel runs each task, corun moves only the two tasks
 * that must move (one swap) and pins the others where they are; bad
 * arguments are refused. */
static void test_kernel_cpus(void **state)
{
    /* Without a second opinion: here DI's plan would be tried once the
     * plans settle, two moves more (tests/unit/test_engine_second.c). */
    struct corun_engine *e = engine_opts("corun", 0, 0, false);
    struct corun_engine_stats st;
    unsigned moved = 0;

    for (unsigned i = 0; i < NT; i++)
        assert_int_equal(corun_engine_set_cpu(e, i, (int)i), 0);
    assert_int_equal(corun_engine_set_cpu(e, NT, 0), -ENOENT);
    assert_int_equal(corun_engine_set_cpu(e, 0, 99), -EINVAL);
    assert_int_equal(corun_engine_set_home(e, 0, 5), -EINVAL);
    assert_int_equal(corun_engine_set_home(e, 0, 0), 0);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_true(good_pairing());
    assert_int_equal(st.placements, NT);
    for (unsigned i = 0; i < NT; i++)
        moved += W.pinned[i] != (int)i;
    assert_int_equal(moved, 2);
    corun_engine_free(e);
}

/* Tasks the caller pinned itself (a batch's first placement) are under the
 * engine's hysteresis at once: a huge move cost holds the bad pairing, a
 * cheap one makes the one swap as migrations (nothing "placed"), and
 * removing an adopted task restores it. */
static void test_adopt(void **state)
{
    struct corun_engine_stats st;
    struct corun_engine *e;

    for (int pass = 0; pass < 2; pass++) {
        e = engine("corun", pass ? 0.001 : 100, 1);
        for (unsigned i = 0; i < NT; i++) {
            W.pinned[i] = (int)i; /* as the caller applied it: 0 and 1 share core 0 */
            assert_int_equal(corun_engine_adopt(e, i, (int)i), 0);
        }
        W.applies = 0;
        assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
        corun_engine_stats(e, &st);
        assert_int_equal(st.placements, 0);
        if (!pass) {
            assert_false(good_pairing());
            assert_int_equal(st.migrations, 0);
            assert_int_equal(W.applies, 0);
        } else {
            assert_true(good_pairing());
            assert_int_equal(st.migrations, 2);
        }
        assert_int_equal(corun_engine_adopt(e, NT, 0), -ENOENT);
        assert_int_equal(corun_engine_adopt(e, 0, 99), -EINVAL);
        assert_int_equal(corun_engine_adopt(e, 0, -2), -EINVAL);
        W.restores = 0;
        assert_int_equal(corun_engine_remove(e, 3), 0);
        assert_int_equal(W.restores, 1);
        assert_int_equal(W.pinned[3], -1);
        assert_int_equal(corun_engine_adopt(e, 3, 0), -ENOENT);
        /* Given back to the kernel: removing it restores nothing. */
        assert_int_equal(corun_engine_adopt(e, 2, -1), 0);
        assert_int_equal(corun_engine_task_cpu(e, 2), -1);
        assert_int_equal(corun_engine_remove(e, 2), 0);
        assert_int_equal(W.restores, 1);
        corun_engine_free(e);
        if (!pass) { /* a fresh world for the second pass */
            teardown(NULL);
            setup(NULL);
        }
    }
}

/* The outcome check. Where the model is right (the normal world), the
 * change it makes is judged and kept. Where it is wrong (inverted), every
 * change is measured worse and taken back, and the holds that follow,
 * doubling, keep the bad placement to a small share of the run; with the
 * check off, the engine stays in the bad placement. */
static void test_outcome_check(void **state)
{
    struct corun_engine_stats st;
    struct corun_engine *e = engine("corun", 0, 0);

    assert_int_equal(corun_engine_run(e, 2000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_true(good_pairing());
    assert_true(st.trials >= 1);
    assert_int_equal(st.reverted, 0);
    corun_engine_free(e);

    for (int check = 1; check >= 0; check--) {
        struct corun_engine_opts o = {
            .topo = W.topo, .policy = corun_policy_find("corun"), .sense = &fake_sense,
            .act = &fake_act, .clock = {.now_ns = fake_now, .wait_until = fake_wait},
            .interval_ns = 100000000, .warmup_ns = 300000000, .seed = 9,
            .no_outcome_check = !check};
        uint64_t t0;

        teardown(NULL);
        setup(NULL);
        W.inverted = true;
        o.topo = W.topo; /* the fresh world's */
        assert_int_equal(corun_engine_new(&o, &e), 0);
        add_tasks(e, 0, CORUN_CLASS_UNKNOWN);
        t0 = W.now;
        assert_int_equal(corun_engine_run(e, 10000000000ull, NULL), 0);
        corun_engine_stats(e, &st);
        print_message("check %d: trials %lu reverted %lu migrations %lu split %.2f of the run\n",
                      check, (unsigned long)st.trials, (unsigned long)st.reverted,
                      (unsigned long)st.migrations, (double)W.split_ns / (double)(W.now - t0));
        if (check) {
            assert_true(st.reverted >= 1);
            assert_true(st.trials >= st.reverted);
            /* Each trial costs an interval; holds of 4, 8, 16... between. */
            assert_true(W.split_ns * 4 < W.now - t0);
        } else {
            assert_int_equal(st.trials, 0);
            assert_int_equal(st.reverted, 0);
            assert_true(W.split_ns * 4 > 3 * (W.now - t0));
        }
        corun_engine_free(e);
    }
}

/* Runs @e interval by interval (0.1 s, at most 20) until its first trial
 * is judged (a change taken back is judged too); its stats in @st. */
static void run_until_judged(struct corun_engine *e, struct corun_engine_stats *st)
{
    for (unsigned i = 0; i < 20; i++) {
        assert_int_equal(corun_engine_run(e, 100000000, NULL), 0);
        corun_engine_stats(e, st);
        if (st->trials)
            return;
    }
}

/* What a change that went wrong costs before it is taken back: a clear
 * loss (a quarter of the summed speed) is taken back after one interval,
 * a small one (1.5% per task, beyond the 1% margin) after the two of the
 * window. */
static void test_outcome_check_early(void **state)
{
    static const struct {
        double loss;
        unsigned intervals;
    } cases[] = {{0.5, 1}, {0.03, 2}};

    for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct corun_engine *e = engine("corun", 0, 0);
        struct corun_engine_stats st;

        W.inverted = true;
        W.inv_loss = cases[k].loss;
        run_until_judged(e, &st);
        print_message("loss %.2f: trials %lu reverted %lu split %.3f s\n", cases[k].loss,
                      (unsigned long)st.trials, (unsigned long)st.reverted,
                      (double)W.split_ns / 1e9);
        assert_int_equal(st.trials, 1);
        assert_int_equal(st.reverted, 1);
        assert_int_equal(W.split_ns, cases[k].intervals * 100000000ull);
        assert_false(good_pairing());
        corun_engine_free(e);
        teardown(NULL);
        setup(NULL);
    }
}

/* A small loss that every task shows alike is the change's, not the
 * counters': 0.6% per task, inside the 1% margin a trial of a few tasks
 * needs, is taken back when the tasks agree on it (here they agree
 * exactly). A loss below the 0.3% floor is kept: a clock or a phase can
 * move every task at once. */
static void test_outcome_check_agreeing_loss(void **state)
{
    static const struct {
        double loss;
        bool undone;
    } cases[] = {{0.006, true}, {0.002, false}};

    for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct corun_engine *e = engine("corun", 0, 0);
        struct corun_engine_stats st;

        W.inverted = true;
        W.inv_loss = W.inv_mem_loss = cases[k].loss;
        run_until_judged(e, &st);
        print_message("loss %.3f: trials %lu reverted %lu\n", cases[k].loss,
                      (unsigned long)st.trials, (unsigned long)st.reverted);
        assert_int_equal(st.trials, 1);
        assert_int_equal(st.reverted, cases[k].undone);
        assert_int_equal(good_pairing(), !cases[k].undone);
        corun_engine_free(e);
        teardown(NULL);
        setup(NULL);
    }
}

/*
 * A loss the tasks' spread leaves open is measured longer, and judged at
 * every interval on. Every task loses 0.6% by the change, and task 0 runs
 * 1% faster over the first two intervals after it (a phase, counter
 * noise): over those two the mean loss is 0.35%, within two standard
 * errors of it (0.5%) but beyond one, so the engine measures on, and takes
 * the change back after the third interval, where the loss is sure.
 * Without the blip the agreeing loss is taken back after two. When only
 * the compute tasks lose (1.2% each), the verdict stays open to the sixth
 * interval, and the change is kept.
 */
static void test_outcome_check_measures_longer(void **state)
{
    static const struct {
        double blip, loss, mem_loss;
        bool undone;
        unsigned intervals;
    } cases[] = {
        {0.01, 0.006, 0.006, true, 3}, {0, 0.006, 0.006, true, 2}, {0, 0.012, 0, false, 6}};

    for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct corun_engine *e = engine("corun", 0, 0);
        struct corun_engine_stats st;

        W.inverted = true;
        W.inv_loss = cases[k].loss;
        W.inv_mem_loss = cases[k].mem_loss;
        W.blip = cases[k].blip;
        run_until_judged(e, &st);
        print_message("blip %.3f loss %.3f/%.3f: trials %lu reverted %lu split %.3f s\n",
                      cases[k].blip, cases[k].loss, cases[k].mem_loss, (unsigned long)st.trials,
                      (unsigned long)st.reverted, (double)W.split_ns / 1e9);
        assert_int_equal(st.trials, 1);
        assert_int_equal(st.reverted, cases[k].undone);
        assert_int_equal(W.split_ns, cases[k].intervals * 100000000ull);
        corun_engine_free(e);
        teardown(NULL);
        setup(NULL);
    }
}

/* test_outcome_check_doubt() under the caller's cap of @max_moves moves an
 * interval (0: the engine's own). */
static void outcome_check_doubt(unsigned max_moves)
{
    struct corun_engine *e = engine("corun", 0, max_moves);
    struct corun_engine_stats st;
    uint64_t split;

    W.inverted = true;
    /* Where the kernel runs them, as a caller that reads it says: the
     * predicted gain of a plan needs every task's CPU. */
    for (unsigned i = 0; i < NT; i++)
        assert_int_equal(corun_engine_set_cpu(e, i, (int)i), 0);
    /* 100 intervals: without the doubt, four trials or more. */
    assert_int_equal(corun_engine_run(e, 10000000000ull, NULL), 0);
    corun_engine_stats(e, &st);
    print_message("cap %u: trials %lu reverted %lu doubted %lu split %.2f s\n", max_moves,
                  (unsigned long)st.trials, (unsigned long)st.reverted,
                  (unsigned long)st.doubted, (double)W.split_ns / 1e9);
    assert_int_equal(st.trials, 1);
    assert_int_equal(st.reverted, 1);
    assert_true(st.doubted >= 10);
    assert_false(good_pairing());
    /* Task 3 (memory-bound) leaves: splitting the compute tasks 0 and 1
     * is predicted to gain as much as before, and it is tried again: they
     * run on different cores for a while. */
    assert_int_equal(corun_engine_remove(e, 3), 0);
    split = W.split_ns;
    assert_int_equal(corun_engine_run(e, 2000000000ull, NULL), 0);
    assert_true(W.split_ns > split);
    corun_engine_free(e);
}

/* A change taken back leaves a doubt: the same plan, predicted to gain as
 * much again, is not tried again while the doubt lasts (before, the
 * holds of 4, 8, 16... intervals only spaced the retries out, and a retry
 * that measured a loss within the margin was kept). A task that leaves
 * changes the world, and the doubt with it: the next plan is tried. So
 * too when the caller's cap of one move an interval makes the swap a
 * capped part of its plan (the doubt was left only by whole plans, and
 * on few tasks the engine's own cap makes every plan after the first
 * capped). */
static void test_outcome_check_doubt(void **state)
{
    for (unsigned max_moves = 0; max_moves <= 1; max_moves++) {
        if (max_moves) {
            teardown(NULL);
            setup(NULL);
        }
        outcome_check_doubt(max_moves);
    }
}

/* A task whose reads start failing while a change is judged (it exited)
 * does not stall the check: the change is judged on the others. */
static void test_outcome_check_survives_failing_task(void **state)
{
    struct corun_engine *e = engine("corun", 0, 0);
    struct corun_engine_stats st;

    assert_int_equal(corun_engine_run(e, 400000000, NULL), 0); /* first plan at 0.3 s */
    corun_engine_stats(e, &st);
    assert_int_equal(st.placements, NT);
    assert_int_equal(st.trials, 0);
    W.fail_task = 3;
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_int_equal(st.trials, 1);
    corun_engine_free(e);
}

/* A class the caller learns later replaces the counters' (and UNKNOWN gives
 * the classification back to them). */
static void test_set_hint(void **state)
{
    struct corun_engine *e = engine("corun", 0, 0);
    struct corun_task_profile p;

    assert_int_equal(corun_engine_run(e, 500000000, NULL), 0);
    assert_int_equal(corun_engine_profile(e, 0, &p), 0);
    assert_int_equal(p.cls, CORUN_CLASS_COMPUTE);
    assert_int_equal(corun_engine_set_hint(e, 0, CORUN_CLASS_RABBIT), 0);
    assert_int_equal(corun_engine_profile(e, 0, &p), 0);
    assert_int_equal(p.cls, CORUN_CLASS_RABBIT);
    assert_int_equal(corun_engine_set_hint(e, 0, CORUN_CLASS_UNKNOWN), 0);
    assert_int_equal(corun_engine_profile(e, 0, &p), 0);
    assert_int_equal(p.cls, CORUN_CLASS_COMPUTE);
    assert_int_equal(corun_engine_set_hint(e, NT, CORUN_CLASS_SHEEP), -ENOENT);
    corun_engine_free(e);
}

/* A handle the caller attached (a batch measuring its job) is read, never
 * attached again nor detached by the engine; the engine's own are detached
 * on remove and free. */
static void test_shared_handle(void **state)
{
    struct corun_engine_opts o = {
        .topo = W.topo, .policy = corun_policy_find("corun"), .sense = &fake_sense,
        .act = &fake_act, .clock = {.now_ns = fake_now, .wait_until = fake_wait},
        .interval_ns = 100000000, .warmup_ns = 300000000, .seed = 9};
    struct corun_engine *e;
    struct corun_task_profile p;

    assert_int_equal(corun_engine_new(&o, &e), 0);
    for (unsigned i = 0; i < NT; i++) {
        struct corun_engine_task t = {.target = (pid_t)i, .id = i, .hint = CORUN_CLASS_UNKNOWN,
                                      .shared_handle = i < 2, .handle = (int)i};

        assert_int_equal(corun_engine_add(e, &t, NULL), 0);
    }
    assert_int_equal(W.attaches, 2); /* only the engine's own */
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    assert_int_equal(corun_engine_profile(e, 0, &p), 0);
    assert_int_equal(p.cls, CORUN_CLASS_COMPUTE); /* read through the shared handle */
    assert_true(good_pairing());
    assert_int_equal(corun_engine_remove(e, 0), 0);
    assert_int_equal(W.detaches, 0);
    assert_int_equal(corun_engine_remove(e, 2), 0);
    assert_int_equal(W.detaches, 1);
    corun_engine_free(e);
    assert_int_equal(W.detaches, 2); /* task 3's; never tasks 0 and 1's */
}

/* The linux policy never pins. */
static void test_linux_pins_nothing(void **state)
{
    struct corun_engine *e = engine("linux", 0, 0);

    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    assert_int_equal(W.applies, 0);
    corun_engine_free(e);
}

/* A policy that records the turbo table it is handed and places nothing. */
static const double *seen_turbo;
static unsigned seen_turbo_n;

static int record_turbo(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    seen_turbo = snap->turbo_rel;
    seen_turbo_n = snap->turbo_n;
    for (unsigned i = 0; i < plan->ntasks; i++)
        plan->cpu[i] = -1;
    return 0;
}

/* The turbo table of the options reaches the policy with every snapshot. */
static void test_turbo_table_reaches_policy(void **state)
{
    static const struct corun_policy rec = {
        .name = "rec", .summary = "records", .place = record_turbo};
    const double table[2] = {1.0, 0.9};
    struct corun_engine_opts o = {
        .topo = W.topo,
        .policy = &rec,
        .sense = &fake_sense,
        .act = &fake_act,
        .clock = {.now_ns = fake_now, .wait_until = fake_wait},
        .interval_ns = 100000000,
        .turbo_rel = table,
        .turbo_n = 2,
    };
    struct corun_engine_task t = {.target = 0, .id = 100};
    struct corun_engine *e;

    seen_turbo = NULL;
    seen_turbo_n = 0;
    assert_int_equal(corun_engine_new(&o, &e), 0);
    assert_int_equal(corun_engine_add(e, &t, NULL), 0);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    assert_ptr_equal(seen_turbo, table);
    assert_int_equal(seen_turbo_n, 2);
    corun_engine_free(e);
}

/* No topology is refused. Without an actuator the engine observes: it
 * learns from the counters and never plans; without a sensor it places on
 * the class priors, attaching nothing. */
static void test_observe_only_and_no_sensor(void **state)
{
    struct corun_engine_opts o = {0};
    struct corun_engine *e = NULL;
    struct corun_engine_stats st;
    struct corun_task_profile p;

    assert_int_equal(corun_engine_new(&o, &e), -EINVAL);
    o.topo = W.topo;
    o.sense = &fake_sense;
    o.clock = (struct corun_clock){.now_ns = fake_now, .wait_until = fake_wait};
    o.interval_ns = 100000000;
    assert_int_equal(corun_engine_new(&o, &e), 0);
    add_tasks(e, 0, CORUN_CLASS_UNKNOWN);
    corun_engine_set_placing(e, true); /* no actuator: stays off */
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_int_equal(st.plans, 0);
    assert_int_equal(W.applies, 0);
    assert_int_equal(corun_engine_profile(e, 0, &p), 0);
    assert_int_equal(p.cls, CORUN_CLASS_COMPUTE);
    assert_int_equal(corun_engine_restore(e), 0);
    corun_engine_free(e);

    o.sense = NULL;
    o.act = &fake_act;
    W.attaches = 0;
    assert_int_equal(corun_engine_new(&o, &e), 0);
    add_tasks(e, 0, CORUN_CLASS_COMPUTE);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_int_equal(W.attaches, 0);
    assert_true(st.plans > 0);
    assert_int_equal(st.placements, NT);
    assert_int_equal(corun_engine_remove(e, 0), 0);
    corun_engine_free(e);
    corun_engine_free(NULL);
}

/* ---- per-task hysteresis, events and task slots ----------------------------- */

static int table_cpu[NT]; /* where the "table" policy puts task id 100 + i */

static int table_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned k = 0; k < snap->ntasks; k++)
        plan->cpu[k] = table_cpu[snap->tasks[k].id - 100];
    return 0;
}

static const struct corun_policy table_policy = {.name = "table", .place = table_place};

#define MAXEV 64
static struct corun_engine_event evs[MAXEV];
static unsigned nev;

static void on_event(void *ctx, const struct corun_engine_event *ev)
{
    assert_ptr_equal(ctx, &nev);
    if (nev < MAXEV)
        evs[nev++] = *ev;
}

/* The engine of a daemon: the table policy, confirm 2, dwell 3, a cap of
 * one move, no move cost, no outcome check, predictions kept. */
static struct corun_engine *daemon_engine(void)
{
    struct corun_engine_opts o = {
        .topo = W.topo,
        .policy = &table_policy,
        .sense = &fake_sense,
        .act = &fake_act,
        .clock = {.now_ns = fake_now, .wait_until = fake_wait},
        .interval_ns = 100000000,
        .warmup_ns = 1,
        .move_cost = -1,
        .max_moves = 1,
        .no_outcome_check = true,
        .confirm = 2,
        .min_dwell = 3,
        .on_event = on_event,
        .event_ctx = &nev,
        .predict = true,
    };
    struct corun_engine *e;

    nev = 0;
    assert_int_equal(corun_engine_new(&o, &e), 0);
    add_tasks(e, 100, CORUN_CLASS_UNKNOWN);
    for (unsigned i = 0; i < NT; i++)
        assert_int_equal(corun_engine_set_cpu(e, i, (int)i), 0);
    return e;
}

static void step(struct corun_engine *e)
{
    advance(W.now + 100000000);
    assert_int_equal(corun_engine_step(e), 0);
}

static enum corun_engine_state state_of(struct corun_engine *e, unsigned idx)
{
    struct corun_engine_task_info in;

    assert_int_equal(corun_engine_task_info(e, idx, &in), 0);
    return in.state;
}

/* Tasks 2 and 3 idle; the plan moves 0 to CPU 2 and 1 to CPU 3. A move
 * waits for its second plan in a row, the cap lets one through per
 * interval, a moved task dwells 3 intervals, and every move is told with
 * the prediction behind it. */
static void test_confirm_cap_dwell_events(void **state)
{
    struct corun_engine *e = daemon_engine();
    struct corun_engine_task_info in;
    unsigned first;

    assert_int_equal(corun_engine_set_active(e, 2, false), 0);
    assert_int_equal(corun_engine_set_active(e, 3, false), 0);
    assert_int_equal(corun_engine_set_active(e, NT, false), -ENOENT);
    table_cpu[0] = 2;
    table_cpu[1] = 3;
    step(e); /* samples only: nothing measured yet */
    step(e); /* first plan: proposed once */
    assert_int_equal(nev, 0);
    assert_int_equal(corun_engine_task_info(e, 0, &in), 0);
    assert_int_equal(in.state, CORUN_ENGINE_CONFIRMING);
    assert_int_equal(in.planned, 2);
    assert_int_equal(in.streak, 1);
    assert_int_equal(in.cpu, -1);
    assert_true(isfinite(in.speed_now) && isfinite(in.speed_planned));
    assert_int_equal(state_of(e, 2), CORUN_ENGINE_IDLE);
    step(e); /* confirmed: one move under the cap, the other put off */
    assert_int_equal(nev, 1);
    assert_int_equal(evs[0].kind, CORUN_ENGINE_EV_MOVE);
    assert_int_equal(evs[0].from, -1);
    assert_int_equal(evs[0].err, 0);
    assert_int_equal(evs[0].confirmed, 2);
    assert_false(evs[0].in_place); /* it ran on CPU 0 or 1 */
    assert_true(evs[0].speed_now > 0 && evs[0].speed_now <= 1);
    assert_true(evs[0].speed_planned > 0 && evs[0].speed_planned <= 1);
    assert_int_equal(W.pinned[evs[0].idx], (int)evs[0].idx + 2);
    assert_int_equal(state_of(e, evs[0].idx), CORUN_ENGINE_SETTLED);
    assert_int_equal(state_of(e, 1 - evs[0].idx), CORUN_ENGINE_CAPPED);
    /* The task that moved first is wanted back where it ran: the new plan
     * needs confirming, then it dwells 3 intervals from its move. */
    first = evs[0].idx;
    table_cpu[first] = (int)first;
    step(e); /* the other one moves; the new plan is proposed once */
    assert_int_equal(nev, 2);
    assert_int_equal(W.pinned[0], 2);
    assert_int_equal(W.pinned[1], 3);
    assert_int_equal(state_of(e, first), CORUN_ENGINE_CONFIRMING);
    step(e); /* confirmed, but it moved 2 intervals ago */
    assert_int_equal(corun_engine_task_info(e, first, &in), 0);
    assert_int_equal(in.state, CORUN_ENGINE_DWELLING);
    assert_int_equal(in.dwelt, 2);
    assert_int_equal(W.pinned[first], (int)first + 2);
    step(e);
    assert_int_equal(W.pinned[first], (int)first);
    assert_int_equal(evs[nev - 1].from, (int)first + 2);
    assert_int_equal(evs[nev - 1].to, (int)first);
    corun_engine_free(e);
}

/* An actuator that refuses (EPERM) a task: told once, never asked again,
 * the task left out of moves; the others are placed. */
static void test_refused(void **state)
{
    struct corun_engine *e = daemon_engine();
    unsigned applies;

    W.refuse_task = 1;
    for (unsigned i = 0; i < NT; i++)
        table_cpu[i] = (int)(NT - 1 - i);
    for (int k = 0; k < 8; k++)
        step(e);
    assert_int_equal(state_of(e, 1), CORUN_ENGINE_REFUSED);
    applies = W.applies;
    for (int k = 0; k < 6; k++)
        step(e);
    assert_int_equal(W.applies, applies);
    {
        unsigned refused = 0;

        for (unsigned k = 0; k < nev; k++)
            refused += evs[k].idx == 1 && evs[k].err == -EPERM;
        assert_int_equal(refused, 1);
    }
    assert_int_equal(W.pinned[0], 3);
    assert_int_equal(W.pinned[1], -1);
    corun_engine_free(e);
}

/* A task added unread is neither attached nor read, yet placed; once the
 * sensor takes it (corun_engine_attach) its counters are read. */
static void test_unread_then_attached(void **state)
{
    struct corun_engine *e = engine("corun", 0, 0);
    struct corun_engine_task t = {
        .target = 2, .id = 777, .hint = CORUN_CLASS_UNKNOWN, .unread = true};
    struct corun_task_profile p;
    unsigned idx, attaches;

    assert_int_equal(corun_engine_remove(e, 2), 0);
    attaches = W.attaches;
    assert_int_equal(corun_engine_add(e, &t, &idx), 0);
    assert_int_equal(W.attaches, attaches);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    assert_int_equal(corun_engine_profile(e, idx, &p), 0);
    assert_true(isnan(p.ipc));
    assert_true(corun_engine_task_cpu(e, idx) >= 0);
    assert_int_equal(corun_engine_attach(e, idx), 0);
    assert_int_equal(W.attaches, attaches + 1);
    assert_int_equal(corun_engine_attach(e, idx), 0); /* read already: nothing */
    assert_int_equal(W.attaches, attaches + 1);
    assert_int_equal(corun_engine_attach(e, NT + 5), -ENOENT);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    assert_int_equal(corun_engine_profile(e, idx, &p), 0);
    assert_true(p.ipc > 0);
    corun_engine_free(e);
}

/* A removed task's index and profile slot go to the next task added, which
 * starts afresh; placing off keeps the engine from planning. */
static void test_reuse_and_placing_off(void **state)
{
    struct corun_engine *e = engine("corun", 0, 0);
    struct corun_engine_task t = {.target = 1, .id = 555, .hint = CORUN_CLASS_STREAMING};
    struct corun_engine_stats st;
    struct corun_task_profile p;
    unsigned idx, attaches;
    uint64_t plans;

    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    assert_int_equal(corun_engine_remove(e, 1), 0);
    attaches = W.attaches;
    assert_int_equal(corun_engine_add(e, &t, &idx), 0);
    assert_int_equal(idx, 1);
    assert_int_equal(W.attaches, attaches + 1);
    assert_int_equal(corun_engine_ntasks(e), NT);
    assert_int_equal(corun_engine_profile(e, 1, &p), 0);
    assert_int_equal(p.id, 555);
    assert_int_equal(p.cls, CORUN_CLASS_STREAMING);
    assert_int_equal(corun_engine_task_cpu(e, 1), -1);
    corun_engine_set_placing(e, false);
    corun_engine_stats(e, &st);
    plans = st.plans;
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_int_equal(st.plans, plans);
    corun_engine_set_placing(e, true);
    assert_int_equal(corun_engine_run(e, 1000000000, NULL), 0);
    corun_engine_stats(e, &st);
    assert_true(st.plans > plans);
    corun_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_finds_pairing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hysteresis_and_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_and_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kernel_cpus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_linux_pins_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_observe_only_and_no_sensor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_confirm_cap_dwell_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reuse_and_placing_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unread_then_attached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_hint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_check_early, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_check_agreeing_loss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_check_measures_longer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_check_doubt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_check_survives_failing_task, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_turbo_table_reaches_policy, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
