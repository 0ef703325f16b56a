/*
 * test_policy.c — the placement policies on hand-built snapshots with a
 * known best answer: SMT pairing of streaming with compute tasks, DI's
 * spreading of devils across LLCs, the predicted optimum found by exhaustive
 * search on small machines, hybrid capacity, hysteresis, the turbo table,
 * a near plan preferred under a cap on moves, memory load shared by time
 * with the local search kept exact, a
 * memory share measured on an E-core taken back to a P-core's clock, ties
 * the predictor cannot break left to DI's plan; and,
 * for every policy on every fixture topology, valid and deterministic
 * plans, from nowhere and from a placement that time-shares CPUs. The
 * predictor's own agreement with the simulator is test_predict.c's.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corun/policy.h"
#include "corun/sim.h"
#include "corun/topo.h"
#include "policy/policy-internal.h"

static const char *const names[] = {"linux", "spread", "pack", "di", "symbiotic", "corun"};
#define NPOL (sizeof(names) / sizeof(names[0]))

/* The CPUs @tk's @n tasks run on, in @cpu. */
static int *cpu_of(const struct corun_task_profile *tk, unsigned n, int *cpu)
{
    for (unsigned i = 0; i < n; i++)
        cpu[i] = tk[i].cpu;
    return cpu;
}

static void place(const char *pol, const struct corun_snapshot *s, int *cpu)
{
    const struct corun_policy *p = corun_policy_find(pol);
    struct corun_plan plan = {.ntasks = s->ntasks, .cpu = cpu};

    assert_non_null(p);
    assert_int_equal(p->place(s, &plan), 0);
    assert_int_equal(corun_policy_check_plan(s, &plan), 0);
}

static void test_registry(void **state)
{
    for (unsigned i = 0; i < NPOL; i++) {
        assert_non_null(corun_policy_find(names[i]));
        assert_string_equal(corun_policy_at(i)->name, names[i]);
        assert_non_null(corun_policy_at(i)->summary);
    }
    assert_null(corun_policy_at(NPOL));
    assert_null(corun_policy_find("oracle"));
    assert_null(corun_policy_find(NULL));
    assert_string_equal(corun_class_name(CORUN_CLASS_STREAMING), "streaming");
    assert_string_equal(corun_class_name(CORUN_CLASS_UNKNOWN), "unknown");
}

/* 2 compute + 2 streaming on a 2-core SMT2 machine: the best pairs each
 * streamer with a compute task (memory stalls leave the issue slots free). */
static void test_smt_pairing(void **state)
{
    struct corun_topo *t = synthetic_topo("core:2 pu:2");
    struct corun_task_profile tk[4] = {
        class_task(0, CORUN_CLASS_COMPUTE), class_task(1, CORUN_CLASS_STREAMING),
        class_task(2, CORUN_CLASS_COMPUTE), class_task(3, CORUN_CLASS_STREAMING)};
    struct corun_snapshot s = {.topo = t, .ntasks = 4, .tasks = tk, .seed = 7, .round = 5};
    const char *good[] = {"corun", "symbiotic"};
    int cpu[4];

    for (unsigned k = 0; k < 2; k++) {
        place(good[k], &s, cpu);
        /* Tasks 0 and 2 (compute) on different cores, so each core holds
         * one compute and one streaming task. */
        assert_false(corun_topo_shares(t, (unsigned)cpu[0], (unsigned)cpu[2], CORUN_LEVEL_CORE));
        assert_false(corun_topo_shares(t, (unsigned)cpu[1], (unsigned)cpu[3], CORUN_LEVEL_CORE));
    }
    /* The snapshot order makes spread pair the two compute tasks: the
     * fixture does discriminate. */
    place("spread", &s, cpu);
    assert_true(corun_topo_shares(t, (unsigned)cpu[0], (unsigned)cpu[2], CORUN_LEVEL_CORE));
    corun_topo_free(t);
}

/* 4 devils + 4 sheep. On 2 LLCs of 4 cores, DI puts two devils in each LLC
 * (pack puts all four in one). On 2 packages, each with its own LLC and
 * memory domain, corun spreads them too: bandwidth is per domain. (With one
 * memory domain corun may rightly keep the streamers together: they lose
 * nothing to each other's cache use and the sheep keep theirs.) */
static unsigned devils_in_first(const struct corun_topo *t, const int *cpu, enum corun_level l)
{
    unsigned in0 = 0;

    for (unsigned i = 0; i < 4; i++)
        in0 += corun_topo_shares(t, (unsigned)cpu[i], 0, l);
    return in0;
}

static void test_di_spreads_devils(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 l3:2 core:4 pu:1");
    struct corun_topo *t2 = synthetic_topo("pack:2 numa:1 l3:1 core:4 pu:1");
    struct corun_task_profile tk[8];
    struct corun_snapshot s = {.topo = t, .ntasks = 8, .tasks = tk, .seed = 3};
    int cpu[8];

    for (unsigned i = 0; i < 8; i++) {
        tk[i] = class_task(i, i < 4 ? CORUN_CLASS_STREAMING : CORUN_CLASS_SHEEP);
        /* DI reads counters: give the devils a high miss rate. */
        tk[i].ipc = i < 4 ? 0.5 : 1.2;
        tk[i].llc_mpki = i < 4 ? 28 : 2;
        tk[i].freq_ratio = 1;
    }
    place("di", &s, cpu);
    assert_int_equal(devils_in_first(t, cpu, CORUN_LEVEL_L3), 2);
    place("pack", &s, cpu);
    assert_int_equal(devils_in_first(t, cpu, CORUN_LEVEL_L3), 4);
    s.topo = t2;
    place("di", &s, cpu);
    assert_int_equal(devils_in_first(t2, cpu, CORUN_LEVEL_NUMA), 2);
    place("corun", &s, cpu);
    assert_int_equal(devils_in_first(t2, cpu, CORUN_LEVEL_NUMA), 2);
    corun_topo_free(t);
    corun_topo_free(t2);
}

/* Best predicted STP over every injective placement, by recursion. */
static double brute(const struct corun_snapshot *s, int *cpu, unsigned i, bool *used,
                    unsigned ncpus)
{
    double best = -1;

    if (i == s->ntasks)
        return corun_policy_predict(s, cpu, NULL);
    for (unsigned c = 0; c < ncpus; c++) {
        double v;

        if (used[c])
            continue;
        used[c] = true;
        cpu[i] = (int)c;
        v = brute(s, cpu, i + 1, used, ncpus);
        if (v > best)
            best = v;
        used[c] = false;
    }
    return best;
}

/* On small machines corun reaches the predicted optimum of exhaustive search. */
static void test_corun_reaches_predicted_optimum(void **state)
{
    /* core:2 pu:4: six tasks on two SMT4 cores, three threads a core at
     * least (the search's crowd term against the evaluation's). */
    static const char *const machines[] = {"pack:1 l3:2 core:2 pu:2", "pack:2 core:2 pu:2",
                                           "l3:2 l2:2 core:1 pu:2", "core:2 pu:4"};
    static const enum corun_class mix[][6] = {
        {CORUN_CLASS_STREAMING, CORUN_CLASS_RABBIT, CORUN_CLASS_COMPUTE, CORUN_CLASS_CHASING,
         CORUN_CLASS_SHEEP, CORUN_CLASS_COMPUTE},
        {CORUN_CLASS_STREAMING, CORUN_CLASS_STREAMING, CORUN_CLASS_RABBIT, CORUN_CLASS_RABBIT,
         CORUN_CLASS_COMPUTE, CORUN_CLASS_COMPUTE},
        {CORUN_CLASS_CHASING, CORUN_CLASS_CHASING, CORUN_CLASS_CHASING, CORUN_CLASS_SHEEP,
         CORUN_CLASS_COMPUTE, CORUN_CLASS_RABBIT},
    };

    for (unsigned m = 0; m < sizeof(machines) / sizeof(machines[0]); m++) {
        struct corun_topo *t = synthetic_topo(machines[m]);

        for (unsigned x = 0; x < 3; x++) {
            struct corun_task_profile tk[6];
            struct corun_snapshot s = {.topo = t, .ntasks = 6, .tasks = tk, .seed = 11};
            int cpu[6], tmp[6];
            bool used[8] = {0};
            double best, got;

            for (unsigned i = 0; i < 6; i++)
                tk[i] = class_task(i, mix[x][i]);
            best = brute(&s, tmp, 0, used, corun_topo_ncpus(t));
            place("corun", &s, cpu);
            got = corun_policy_predict(&s, cpu, NULL);
            if (got < best - 1e-9)
                fail_msg("%s mix %u: corun %.6f < optimum %.6f", machines[m], x, got, best);
        }
        corun_topo_free(t);
    }
}

/* Hybrid: with more tasks than P-cores, the memory-bound ones go to E-cores
 * and the compute-bound ones keep the P-cores. */
static void test_hybrid_capacity(void **state)
{
    struct corun_topo *t = fixture_topo("Intel-RaptorLake-Corei7-1370P.xml");
    struct corun_task_profile tk[8];
    struct corun_snapshot s = {.topo = t, .ntasks = 8, .tasks = tk, .seed = 5};
    int best_kind = -1, bestk_eff = -1, cpu[8];

    for (unsigned k = 0; k < corun_topo_info(t)->kinds; k++)
        if (corun_topo_kind(t, k)->efficiency > bestk_eff) {
            bestk_eff = corun_topo_kind(t, k)->efficiency;
            best_kind = (int)k;
        }
    for (unsigned i = 0; i < 8; i++) {
        tk[i] = class_task(i, i < 2 ? CORUN_CLASS_CHASING : CORUN_CLASS_COMPUTE);
        tk[i].ipc = i < 2 ? 0.1 : 2.0;
        tk[i].llc_mpki = i < 2 ? 50 : 0.2;
    }
    place("corun", &s, cpu);
    for (unsigned i = 0; i < 8; i++) {
        const struct corun_topo_cpu *c = corun_topo_cpu(t, (unsigned)cpu[i]);

        if (i < 2)
            assert_int_not_equal(c->kind, best_kind);
        else
            assert_int_equal(c->kind, best_kind);
    }
    /* The six compute tasks each have a P-core of their own. */
    for (unsigned i = 2; i < 8; i++)
        for (unsigned j = i + 1; j < 8; j++)
            assert_false(corun_topo_shares(t, (unsigned)cpu[i], (unsigned)cpu[j],
                                           CORUN_LEVEL_CORE));
    corun_topo_free(t);
}

/* Hysteresis: a move cost above the predicted gain keeps tasks where they
 * are; without it, corun leaves the bad placement. */
static void test_move_cost_keeps_placement(void **state)
{
    struct corun_topo *t = synthetic_topo("core:2 pu:2");
    struct corun_task_profile tk[4] = {
        class_task(0, CORUN_CLASS_COMPUTE), class_task(1, CORUN_CLASS_COMPUTE),
        class_task(2, CORUN_CLASS_STREAMING), class_task(3, CORUN_CLASS_STREAMING)};
    struct corun_snapshot s = {.topo = t, .ntasks = 4, .tasks = tk, .seed = 1};
    int cpu[4];

    /* Now: the two compute tasks share core 0 (CPUs 0 and 1). */
    for (unsigned i = 0; i < 4; i++)
        tk[i].cpu = (int)i;
    s.move_cost = 10;
    place("corun", &s, cpu);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(cpu[i], (int)i);
    s.move_cost = 0.001;
    place("corun", &s, cpu);
    assert_false(corun_topo_shares(t, (unsigned)cpu[0], (unsigned)cpu[1], CORUN_LEVEL_CORE));
    corun_topo_free(t);
}

/* Four streamers started on node 0 of a two-node machine, their memory
 * there. While memory stays where it was first touched, moving two to node
 * 1 gains little (an L3 each) and they pay remote latency: their bandwidth
 * still loads node 0. When memory follows its task, the same move halves
 * the load on each node's memory, and corun makes it. */
static void test_memory_follows(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:2 [numa] l3:1(size=8388608) core:4 pu:1");
    struct corun_task_profile tk[4];
    struct corun_snapshot s = {.topo = t, .ntasks = 4, .tasks = tk, .seed = 1, .move_cost = 0.01};
    int cpu[4], spread[4] = {0, 1, 4, 5}, packed[4] = {0, 1, 2, 3};
    double sp[4], gain;
    unsigned on1 = 0;

    for (unsigned i = 0; i < 4; i++) {
        tk[i] = class_task(i, CORUN_CLASS_STREAMING);
        tk[i].cpu = (int)i;
        tk[i].home_known = true;
        tk[i].home_node = 0;
    }
    gain = corun_policy_predict(&s, spread, sp) - corun_policy_predict(&s, packed, NULL);
    assert_true(gain < 0.1);
    assert_true(sp[2] < sp[0] && sp[3] < sp[1]); /* remote */

    s.mem_follows = true;
    s.mem_move_cost = 0.03;
    gain = corun_policy_predict(&s, spread, sp) - corun_policy_predict(&s, packed, NULL);
    assert_true(gain > 0.5);
    assert_true(fabs(sp[2] - sp[0]) < 1e-9); /* local wherever it runs */
    place("corun", &s, cpu);
    for (unsigned i = 0; i < 4; i++)
        on1 += corun_topo_cpu(t, (unsigned)cpu[i])->dom[CORUN_LEVEL_NUMA] == 1;
    assert_int_equal(on1, 2);
    /* A move that would take memory along must pay for it: at a prohibitive
     * cost, nobody leaves node 0. */
    s.mem_move_cost = 10;
    place("corun", &s, cpu);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(corun_topo_cpu(t, (unsigned)cpu[i])->dom[CORUN_LEVEL_NUMA], 0);
    corun_topo_free(t);
}

/*
 * A task time-sharing a CPU loads memory for its share of the time, on its
 * CPU's node or on the node its memory is known to be on: four streamers,
 * two to a CPU of node 0, are predicted the same speeds whether their
 * memory is known to be on node 0 or follows them there.
 */
static void test_predict_time_shared_memory(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:2 [numa] l3:1 core:2 pu:1");
    struct corun_task_profile tk[4];
    struct corun_snapshot s = {.topo = t, .ntasks = 4, .tasks = tk, .seed = 1};
    int cpu[4] = {0, 0, 1, 1};
    double follows[4], known[4];

    (void)state;
    for (unsigned i = 0; i < 4; i++) {
        tk[i] = class_task(i, CORUN_CLASS_STREAMING);
        tk[i].cpu = cpu[i];
    }
    assert_true(corun_policy_predict(&s, cpu, follows) > 0);
    for (unsigned i = 0; i < 4; i++) {
        tk[i].home_known = true;
        tk[i].home_node = 0;
    }
    assert_true(corun_policy_predict(&s, cpu, known) > 0);
    for (unsigned i = 0; i < 4; i++) {
        print_message("task %u: memory follows %.4f, known on node 0 %.4f\n", i, follows[i],
                      known[i]);
        assert_true(fabs(follows[i] - known[i]) < 1e-9);
    }
    corun_topo_free(t);
}

/* @n tasks of random classes on the first @ncpus CPUs (some sharing one),
 * most with their memory known to be on one of two nodes, from @rng. */
static void draw_tasks(struct corun_task_profile *tk, unsigned n, unsigned ncpus, uint64_t *rng)
{
    for (unsigned i = 0; i < n; i++) {
        *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
        tk[i] = class_task(i, (enum corun_class)((*rng >> 33) % CORUN_NCLASSES));
        tk[i].cpu = (int)((*rng >> 40) % ncpus);
        tk[i].home_known = (*rng >> 45) % 3 != 0;
        tk[i].home_node = (unsigned)(*rng >> 50) % 2;
    }
}

/*
 * Fails unless placement @cpu of @pm's tasks is a local optimum of the
 * predictor's full evaluation (corun__pm_eval()): no swap of two tasks on
 * different CPUs gains, nor, for CPUs below @nidle, any move of a task to
 * an idle one (0: swaps only). @seed names the case in the message.
 */
static void assert_local_optimum(const struct corun__pm *pm, int *cpu, int nidle, uint64_t seed)
{
    double best = corun__pm_eval(pm, cpu, NULL);

    for (unsigned a = 0; a < pm->n; a++) {
        int x = cpu[a];

        for (unsigned b = a + 1; b < pm->n; b++) {
            double v;

            if (cpu[a] == cpu[b])
                continue;
            cpu[a] = cpu[b];
            cpu[b] = x;
            v = corun__pm_eval(pm, cpu, NULL);
            cpu[b] = cpu[a];
            cpu[a] = x;
            if (v > best + 1e-9)
                fail_msg("seed %lu: swapping tasks %u and %u gains %.6f", (unsigned long)seed, a, b,
                         v - best);
        }
        for (int c = 0; c < nidle; c++) {
            bool idle = true;
            double v;

            for (unsigned b = 0; b < pm->n; b++)
                idle &= cpu[b] != c;
            if (!idle)
                continue;
            cpu[a] = c;
            v = corun__pm_eval(pm, cpu, NULL);
            cpu[a] = x;
            if (v > best + 1e-9)
                fail_msg("seed %lu: moving task %u to CPU %d gains %.6f", (unsigned long)seed, a, c,
                         v - best);
        }
    }
}

/*
 * On the synthetic machine @topo, @nseeds times: @n tasks drawn on its
 * @ncpus CPUs (draw_tasks(), from @rng), a snapshot of engine round
 * @round (the crowded memory load from round 1 on where cores have more
 * than two threads), the search run to the end from where they are, and
 * assert_local_optimum() with @nidle idle CPUs tried.
 */
static void search_to_optima(const char *topo, unsigned n, unsigned ncpus, unsigned round,
                             uint64_t rng, unsigned nseeds, int nidle)
{
    struct corun_topo *t = synthetic_topo(topo);
    struct corun_task_profile tk[16];
    struct corun_snapshot s = {.topo = t, .ntasks = n, .tasks = tk, .round = round};
    int cpu[16];

    assert_true(n <= 16);
    for (uint64_t seed = 1; seed <= nseeds; seed++) {
        struct corun__pm pm;

        draw_tasks(tk, n, ncpus, &rng);
        assert_int_equal(corun__pm_init(&pm, &s), 0);
        assert_int_equal(pm.crowd_load, round > 0 && corun_topo_info(t)->smt_width > 2);
        for (unsigned i = 0; i < n; i++)
            cpu[i] = tk[i].cpu;
        corun__search(&pm, cpu, NULL, 0, seed, 10000000);
        assert_local_optimum(&pm, cpu, nidle, seed);
        corun__pm_release(&pm);
    }
    corun_topo_free(t);
}

/*
 * The local search keeps each node's memory load exact while it moves
 * tasks that time-share CPUs and whose memory stays where it is: more
 * tasks than CPUs, of every class, most with their memory on either node.
 * Run to the end from where they are, it stops at a local optimum of the
 * predicted STP (corun__pm_eval()): no swap of two tasks on different CPUs
 * gains. Its running objective drifting from the predictor's would leave
 * one.
 */
static void test_search_time_shared_homes(void **state)
{
    (void)state;
    search_to_optima("pack:2 [numa] l3:1 core:2 pu:2", 13, 8, 0, 99, 200, 0);
}

/*
 * On cores of four threads, from the second plan on, a crowded core's
 * tasks load memory at the speed their crowd leaves them
 * (corun__pm_crowd_keep()), so a move in or out of a crowded core changes
 * the memory load of every task left there, and the search keeps each
 * node's load exact through it. Run to the end, it stops where no swap of
 * two tasks and no move to an idle CPU gains in the predictor's full
 * evaluation (corun__pm_eval()).
 */
static void test_search_crowded_load(void **state)
{
    (void)state;
    search_to_optima("pack:2 [numa] l3:1 core:2 pu:4", 11, 16, 1, 7, 100, 16);
}

/*
 * Where the tasks run now time-shares CPUs while others are idle (two
 * tasks the kernel was seen running on one CPU): every plan is valid, no
 * two tasks on one CPU, though the predictor may rate a streamer given half
 * a CPU above one given a whole.
 */
static void test_time_shared_start(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:2 [numa] l3:2 core:4 pu:2");
    struct corun_task_profile tk[27];
    struct corun_snapshot s = {.topo = t, .ntasks = 27, .tasks = tk};
    int cpu[27];
    uint64_t rng = 99;

    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        draw_tasks(tk, 27, 16, &rng); /* on half the CPUs */
        s.seed = seed;
        for (unsigned p = 0; p < NPOL; p++)
            place(names[p], &s, cpu); /* valid: corun_policy_check_plan() */
    }
    corun_topo_free(t);
}

/* Eight tasks where the search from where they run finds one move, and the
 * plan built from scratch three, which it predicts better by less than two
 * move costs each. Under a cap of two moves (snapshot.max_moves) the far
 * plan would be reached in parts, each paying for itself or never applied:
 * corun takes the near one. Without a cap, or with one it fits in, the far
 * one. */
static void test_cap_prefers_near_plan(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:2 [numa] l3:1 core:4 pu:2");
    static const struct {
        enum corun_class cls;
        int cpu;
    } now[8] = {{CORUN_CLASS_SHEEP, 7},   {CORUN_CLASS_SHEEP, 8},    {CORUN_CLASS_SHEEP, 13},
                {CORUN_CLASS_RABBIT, 14}, {CORUN_CLASS_CHASING, 10}, {CORUN_CLASS_CHASING, 0},
                {CORUN_CLASS_RABBIT, 4},  {CORUN_CLASS_SHEEP, 1}};
    struct corun_task_profile tk[8];
    struct corun_snapshot s = {.topo = t, .ntasks = 8, .tasks = tk, .seed = 128, .round = 1,
                               .move_cost = 0.01, .mem_follows = true, .mem_move_cost = 0.0075};
    int far[8], near[8], cpu[8];
    unsigned mf = 0, mn = 0;

    for (unsigned i = 0; i < 8; i++) {
        tk[i] = class_task(i, now[i].cls);
        tk[i].cpu = now[i].cpu;
        tk[i].home_known = true;
        tk[i].home_node = (unsigned)corun_topo_cpu(t, (unsigned)now[i].cpu)->dom[CORUN_LEVEL_NUMA];
    }
    place("corun", &s, far);
    s.max_moves = 2;
    place("corun", &s, near);
    for (unsigned i = 0; i < 8; i++) {
        mf += far[i] != now[i].cpu;
        mn += near[i] != now[i].cpu;
    }
    print_message("far plan: %u moves, %.4f; near: %u, %.4f\n", mf,
                  corun_policy_predict(&s, far, NULL), mn, corun_policy_predict(&s, near, NULL));
    assert_true(mf > s.max_moves);
    assert_true(mn < mf);
    assert_true(corun_policy_predict(&s, near, NULL) >
                corun_policy_predict(&s, cpu_of(tk, 8, cpu), NULL));
    assert_true(corun_policy_predict(&s, far, NULL) - corun_policy_predict(&s, near, NULL) <
                (2 * s.move_cost + s.mem_move_cost) * (mf - mn));
    s.max_moves = mf;
    place("corun", &s, cpu);
    assert_memory_equal(cpu, far, sizeof(far));
    corun_topo_free(t);
}

/* Every policy, every fixture topology, several task counts: plans valid
 * (usable CPUs, distinct while tasks fit: place() checks) and identical for
 * equal inputs; without a turbo table, with one that loses a little with
 * each busy core (AMD's linear turbo) and with one that steps down every
 * fourth (Intel's bins), under which corun also weighs plans on fewer busy
 * cores where the tasks outnumber the cores. */
static void test_valid_and_deterministic(void **state)
{
    DIR *d = opendir(fixture("topologies"));
    struct dirent *e;
    unsigned machines = 0;
    static const enum corun_class cls[] = {CORUN_CLASS_STREAMING, CORUN_CLASS_COMPUTE,
                                           CORUN_CLASS_RABBIT,    CORUN_CLASS_SHEEP,
                                           CORUN_CLASS_CHASING,   CORUN_CLASS_UNKNOWN};
    double linear[128], steps[128];
    int on[128]; /* usable CPUs of the machine at hand */

    for (unsigned i = 0; i < 128; i++) {
        linear[i] = 1.0 - 0.12 * i / 127;
        steps[i] = 1.0 - 0.03 * (i / 4);
    }
    assert_non_null(d);
    while ((e = readdir(d))) {
        struct corun_topo *t;
        unsigned usable, nodes, counts[4];

        if (!strstr(e->d_name, ".xml"))
            continue;
        t = fixture_topo(e->d_name);
        machines++;
        usable = corun_topo_info(t)->usable_pus;
        nodes = corun_topo_ndomains(t, CORUN_LEVEL_NUMA);
        counts[0] = 1;
        counts[1] = usable / 2 ? usable / 2 : 1;
        counts[2] = usable;
        counts[3] = usable + 3;
        for (unsigned c = 0, j = 0; c < corun_topo_ncpus(t) && j < 128; c++)
            if (corun_topo_cpu(t, c)->usable)
                on[j++] = (int)c;
        for (unsigned k = 0; k < 16; k++) {
            unsigned n = counts[k % 4];
            struct corun_task_profile *tk = calloc(n, sizeof(*tk));
            int *a = calloc(n, sizeof(int)), *b = calloc(n, sizeof(int));
            struct corun_snapshot s = {.topo = t, .ntasks = n, .tasks = tk, .seed = 42,
                                       .round = 4};

            if (k >= 4 && k < 12) {
                s.turbo_rel = k < 8 ? linear : steps;
                s.turbo_n = 128;
            }
            for (unsigned i = 0; i < n; i++) {
                tk[i] = class_task(i, cls[(i * 7) % 6]);
                /* The last four: placed already, on the first half of the
                 * usable CPUs (some sharing one), half of them with their
                 * memory's node known, moves costing. */
                if (k >= 12) {
                    unsigned half = usable / 2 ? usable / 2 : 1;

                    tk[i].cpu = on[((i * 5) % half) % 128];
                    tk[i].home_known = i % 2;
                    tk[i].home_node = nodes ? i % nodes : 0;
                    s.move_cost = 0.01;
                    s.mem_follows = k % 2;
                }
            }
            for (unsigned p = 0; p < NPOL; p++) {
                place(names[p], &s, a);
                place(names[p], &s, b);
                assert_memory_equal(a, b, n * sizeof(int));
                for (unsigned i = 0; i < n; i++) {
                    if (!strcmp(names[p], "linux"))
                        assert_int_equal(a[i], -1);
                    else
                        assert_true(a[i] >= 0);
                }
            }
            free(tk);
            free(a);
            free(b);
        }
        corun_topo_free(t);
    }
    closedir(d);
    assert_true(machines >= 10);
}

static void test_check_plan(void **state)
{
    struct corun_topo *t = synthetic_topo("core:2 pu:2");
    struct corun_task_profile tk[2] = {class_task(0, CORUN_CLASS_COMPUTE),
                                       class_task(1, CORUN_CLASS_SHEEP)};
    struct corun_snapshot s = {.topo = t, .ntasks = 2, .tasks = tk};
    int cpu[2] = {0, 0};
    struct corun_plan p = {.ntasks = 2, .cpu = cpu};

    assert_int_equal(corun_policy_check_plan(&s, &p), -EINVAL); /* same CPU, room left */
    cpu[1] = 4;
    assert_int_equal(corun_policy_check_plan(&s, &p), -EINVAL); /* no such CPU */
    cpu[1] = -1;
    assert_int_equal(corun_policy_check_plan(&s, &p), 0);
    p.ntasks = 1;
    assert_int_equal(corun_policy_check_plan(&s, &p), -EINVAL);
    corun_topo_free(t);
}

/* The predictor: compute+compute on one core is slower than apart, and a
 * streamer hurts a rabbit in its LLC more than a compute task does. */
static void test_predict_orderings(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 l3:2 core:2 pu:2");
    struct corun_task_profile tk[2] = {class_task(0, CORUN_CLASS_COMPUTE),
                                       class_task(1, CORUN_CLASS_COMPUTE)};
    struct corun_snapshot s = {.topo = t, .ntasks = 2, .tasks = tk};
    int same_core[2] = {0, 1}, apart[2] = {0, 4};
    double sp[2], beside_stream, beside_compute;

    assert_true(corun_policy_predict(&s, same_core, NULL) <
                corun_policy_predict(&s, apart, NULL) - 0.3);
    tk[0] = class_task(0, CORUN_CLASS_RABBIT);
    tk[1] = class_task(1, CORUN_CLASS_STREAMING);
    int same_llc[2] = {0, 2};
    corun_policy_predict(&s, same_llc, sp);
    beside_stream = sp[0];
    tk[1] = class_task(1, CORUN_CLASS_COMPUTE);
    corun_policy_predict(&s, same_llc, sp);
    beside_compute = sp[0];
    assert_true(beside_stream < beside_compute - 0.2);
    corun_topo_free(t);
}

/*
 * Past two busy threads a core, its threads share its issue slots
 * (corun__pm_crowd()): four compute-bound tasks that never stall on memory
 * (IPC 2.2, 0.2 misses per kilo-instruction) on one SMT4 core each run
 * Σ issue / CORUN__PM_CORE_CAP = 4 x 0.85 times longer, where two to a
 * core pay the pair table's cost. Both pay each sibling's spill as well
 * (all of it: without an L3, what a sibling pushes out of the core's
 * caches goes to memory). No caches and one memory node, so the rest of
 * each task's time is the same in all three placements and cancels in the
 * differences.
 */
static void test_smt_crowd(void **state)
{
    struct corun_topo *t = synthetic_topo("core:4 pu:4");
    struct corun_task_profile tk[4];
    const double flat[4] = {1, 1, 1, 1};
    struct corun_snapshot s = {
        .topo = t, .ntasks = 4, .tasks = tk, .turbo_rel = flat, .turbo_n = 4};
    int alone[4] = {0, 4, 8, 12}, pairs[4] = {0, 1, 4, 5}, four[4] = {0, 1, 2, 3};
    struct corun__core_use cu;
    double pair = corun_profile_core_pair(CORUN_CLASS_COMPUTE, CORUN_CLASS_COMPUTE);
    double spill = corun_profile_core_spill(CORUN_CLASS_COMPUTE, CORUN_CLASS_COMPUTE);
    double sa[4], sp[4], s4[4], x2, x4;

    corun__core_use(CORUN_CLASS_COMPUTE, &cu);
    for (unsigned i = 0; i < 4; i++) {
        tk[i] = class_task(i, CORUN_CLASS_COMPUTE);
        tk[i].ipc = 2.2;
        tk[i].llc_mpki = 0.2;
    }
    corun_policy_predict(&s, alone, sa);
    corun_policy_predict(&s, pairs, sp);
    corun_policy_predict(&s, four, s4);
    x2 = 1 / sp[0] - 1 / sa[0];
    x4 = 1 / s4[0] - 1 / sa[0];
    assert_true(fabs(x2 - pair - spill) < 1e-9);
    if (fabs(x4 - (4 * cu.issue / CORUN__PM_CORE_CAP - 1) - 3 * spill) > 1e-6)
        fail_msg("four a core: extra time %.4f, want %.4f", x4,
                 4 * cu.issue / CORUN__PM_CORE_CAP - 1 + 3 * spill);
    corun_topo_free(t);
}

/*
 * Where the predictor cannot tell plans apart, corun takes DI's: four sheep
 * the predictor sees alike (one class, no learned figures, no shared cache,
 * one memory node: every pairing predicts the same), two of which miss
 * eight times as often. DI puts the two that miss most on different cores;
 * so does corun, with every seed of its search.
 */
static void test_di_breaks_ties(void **state)
{
    struct corun_topo *t = synthetic_topo("core:2 pu:2");
    struct corun_task_profile tk[4];
    struct corun_snapshot s = {.topo = t, .ntasks = 4, .tasks = tk, .seed = 1};
    int cpu[4], together[4] = {0, 1, 2, 3}, apart[4] = {0, 2, 1, 3};

    for (unsigned i = 0; i < 4; i++) {
        tk[i] = class_task(i, CORUN_CLASS_SHEEP);
        tk[i].ipc = 1.0;
        tk[i].freq_ratio = 1;
        tk[i].llc_mpki = i < 2 ? 8 : 1;
    }
    /* The predictor has no preference... */
    assert_true(fabs(corun_policy_predict(&s, together, NULL) -
                     corun_policy_predict(&s, apart, NULL)) < 1e-12);
    place("di", &s, cpu);
    assert_false(corun_topo_shares(t, (unsigned)cpu[0], (unsigned)cpu[1], CORUN_LEVEL_CORE));
    /* ...and corun takes DI's plan. */
    for (unsigned seed = 1; seed <= 8; seed++) {
        s.seed = seed;
        place("corun", &s, cpu);
        assert_false(corun_topo_shares(t, (unsigned)cpu[0], (unsigned)cpu[1], CORUN_LEVEL_CORE));
    }
    /* Where the two run together, a first plan keeps the kernel's placement
     * it ties with (CORUN_TIE), and a later one, which must pay its moves,
     * keeps the current one: DI's plan breaks ties between plans, not the
     * hysteresis. */
    for (unsigned i = 0; i < 4; i++)
        tk[i].cpu = together[i];
    place("corun", &s, cpu);
    assert_memory_equal(cpu, together, sizeof(cpu));
    s.round = 3;
    s.move_cost = 0.01;
    place("corun", &s, cpu);
    assert_memory_equal(cpu, together, sizeof(cpu));
    corun_topo_free(t);
}

/* Cores of @t that @cpu[0..n) keep busy. */
static unsigned busy_cores(const struct corun_topo *t, const int *cpu, unsigned n)
{
    unsigned busy = 0;

    for (unsigned i = 0; i < n; i++) {
        bool first = true;

        for (unsigned j = 0; j < i; j++)
            if (corun_topo_shares(t, (unsigned)cpu[i], (unsigned)cpu[j], CORUN_LEVEL_CORE))
                first = false;
        busy += first;
    }
    return busy;
}

/*
 * The turbo table a snapshot carries decides whether light tasks share
 * cores to let the others idle: four sheep on four SMT cores spread when
 * the clock does not depend on busy cores, and pack into two when a third
 * busy core halves it.
 */
static void test_turbo_table(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 l3:1(size=33554432) core:4 pu:2");
    struct corun_task_profile tk[4] = {
        class_task(0, CORUN_CLASS_SHEEP), class_task(1, CORUN_CLASS_SHEEP),
        class_task(2, CORUN_CLASS_SHEEP), class_task(3, CORUN_CLASS_SHEEP)};
    const double flat[4] = {1, 1, 1, 1}, step[4] = {1, 1, 0.5, 0.5};
    struct corun_snapshot s = {
        .topo = t, .ntasks = 4, .tasks = tk, .seed = 3, .turbo_rel = flat, .turbo_n = 4};
    int cpu[4];

    place("corun", &s, cpu);
    assert_int_equal(busy_cores(t, cpu, 4), 4);
    s.turbo_rel = step;
    place("corun", &s, cpu);
    assert_int_equal(busy_cores(t, cpu, 4), 2);
    /* The predictor reads the table: the same placement, half the clock. */
    {
        int spread[4] = {0, 2, 4, 6};
        double with_flat, with_step;

        s.turbo_rel = flat;
        with_flat = corun_policy_predict(&s, spread, NULL);
        s.turbo_rel = step;
        with_step = corun_policy_predict(&s, spread, NULL);
        assert_true(with_step < with_flat * 0.8);
    }
    corun_topo_free(t);
}

/*
 * A turbo bin is reached only by freeing several cores at once: thirty
 * sheep on 32 SMT cores run a bin faster on 24 busy cores than on 25 to 30,
 * and no single move from one sheep per core gets there (too many tasks for
 * random restarts). corun starts a plan at each bin edge of the table.
 */
static void test_turbo_bin_edge(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 l3:1(size=33554432) core:32 pu:2");
    struct corun_task_profile tk[30];
    double bins[32];
    struct corun_snapshot s = {
        .topo = t, .ntasks = 30, .tasks = tk, .seed = 5, .turbo_rel = bins, .turbo_n = 32};
    int cpu[30];

    for (unsigned i = 0; i < 32; i++)
        bins[i] = i < 24 ? 1.0 : 0.8;
    for (unsigned i = 0; i < 30; i++)
        tk[i] = class_task(i, CORUN_CLASS_SHEEP);
    place("corun", &s, cpu);
    assert_int_equal(busy_cores(t, cpu, 30), 24);
    corun_topo_free(t);
}

/*
 * A bin edge that cannot hold a task per thread is not taken. On the Raptor
 * Lake part (six P-cores of two threads, eight E-cores of one: 20 CPUs) ten
 * busy cores hold at most 16 threads; with twenty tasks and a bin at ten
 * cores, a plan built for ten cores would put two tasks on a CPU. It did
 * (the cap counted every core as two threads), and the engine refused the
 * plan.
 */
static void test_turbo_bin_hybrid(void **state)
{
    struct corun_topo *t = fixture_topo("Intel-RaptorLake-Corei7-1370P.xml");
    struct corun_task_profile tk[20];
    double bins[14];
    struct corun_snapshot s = {
        .topo = t, .ntasks = 20, .tasks = tk, .seed = 5, .turbo_rel = bins, .turbo_n = 14};
    int cpu[20];

    for (unsigned i = 0; i < 14; i++)
        bins[i] = i < 10 ? 1.0 : 0.6;
    for (unsigned i = 0; i < 20; i++)
        tk[i] = class_task(i, i % 2 ? CORUN_CLASS_SHEEP : CORUN_CLASS_COMPUTE);
    place("corun", &s, cpu); /* checks the plan: one task per CPU */
    corun_topo_free(t);
}

/*
 * A bin barely worth it is not taken. Thirty compute tasks on 32 SMT cores,
 * the bin at 24 busy cores 28% faster: the predictor rates them on 24 cores
 * (twelve sharing six) 0.27 above one per core, less than its doubt about
 * the six shared cores (a tenth of what it says sharing costs, 0.77 a
 * pair), and corun keeps one task per core. With the bin 32% faster (a
 * gain of 1.1) it shares them.
 */
static void test_turbo_doubt(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 l3:1(size=33554432) core:32 pu:2");
    struct corun_task_profile tk[30];
    double bins[32];
    struct corun_snapshot s = {
        .topo = t, .ntasks = 30, .tasks = tk, .seed = 5, .turbo_rel = bins, .turbo_n = 32};
    int cpu[30], spread[30], packed[30], one_pair[30];
    double gain, pair;

    for (unsigned i = 0; i < 30; i++) {
        tk[i] = class_task(i, CORUN_CLASS_COMPUTE);
        one_pair[i] = spread[i] = (int)(2 * i);
        packed[i] = i < 24 ? (int)(2 * i) : (int)(2 * (i - 24) + 1);
    }
    one_pair[29] = 1;
    for (unsigned i = 0; i < 32; i++)
        bins[i] = 1;
    pair = corun_policy_predict(&s, spread, NULL) - corun_policy_predict(&s, one_pair, NULL);
    for (unsigned i = 24; i < 32; i++)
        bins[i] = 0.72;
    gain = corun_policy_predict(&s, packed, NULL) - corun_policy_predict(&s, spread, NULL);
    assert_true(gain > 0 && gain < 0.1 * 6 * pair);
    place("corun", &s, cpu);
    assert_int_equal(busy_cores(t, cpu, 30), 30);
    for (unsigned i = 24; i < 32; i++)
        bins[i] = 0.68;
    gain = corun_policy_predict(&s, packed, NULL) - corun_policy_predict(&s, spread, NULL);
    assert_true(gain > 0.1 * 6 * pair);
    place("corun", &s, cpu);
    assert_int_equal(busy_cores(t, cpu, 30), 24);
    corun_topo_free(t);
}

/* The IPC a task whose memory share is @mf at the full clock shows at
 * relative clock @r (its stalls take as long, its compute 1/r as long),
 * found through corun_profile_mem_share() at @mpki. */
static double ipc_at(double mf, double r, double mpki)
{
    double want = mf / ((1.0 - mf) / r + mf), lo = 0, hi = 10;

    for (int k = 0; k < 100; k++) {
        double mid = (lo + hi) / 2;

        if (corun_profile_mem_share(mid, mpki) > want)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/*
 * Like tasks measured at different clocks are alike to the predictor. A
 * stall takes the same time at any clock, so a task on a slower CPU shows a
 * higher IPC and a smaller memory share; read as it is, the one on an
 * E-core looked the one that gains most from a P-core and the one on the
 * P-core the one that loses least on an E-core, and corun swapped them at
 * every plan (16 streamers on a held-out Arrow Lake part: 128 migrations
 * in 10 s for nothing). Swapping them now gains nothing, and with every
 * CPU of the part busy with like tasks corun keeps them where they are.
 */
static void test_clock_normalised_memory_share(void **state)
{
    struct corun_topo *t = fixture_topo("Intel-RaptorLake-Corei7-1370P.xml");
    struct corun_task_profile tk[2];
    const double flat[1] = {1.0};
    struct corun_snapshot s = {
        .topo = t, .ntasks = 2, .tasks = tk, .seed = 1, .turbo_rel = flat, .turbo_n = 1};
    int p_cpu = -1, e_cpu = -1, best_eff = -1, cur[2], swap[2];
    double e_cap, p_cap;

    for (unsigned k = 0; k < corun_topo_info(t)->kinds; k++)
        if (corun_topo_kind(t, k)->efficiency > best_eff)
            best_eff = corun_topo_kind(t, k)->efficiency;
    for (unsigned c = 0; c < corun_topo_ncpus(t); c++) {
        const struct corun_topo_cpu *cp = corun_topo_cpu(t, c);
        bool fast = corun_topo_kind(t, (unsigned)cp->kind)->efficiency == best_eff;

        if (fast && p_cpu < 0)
            p_cpu = (int)c;
        if (!fast && e_cpu < 0)
            e_cpu = (int)c;
    }
    assert_true(p_cpu >= 0 && e_cpu >= 0);
    for (unsigned i = 0; i < 2; i++) {
        tk[i] = class_task(i, CORUN_CLASS_STREAMING);
        tk[i].llc_mpki = 20;
    }
    /* The E-core's clock as the predictor takes it: its stated capacity,
     * or 0.6 where the part states none. */
    e_cap = corun_topo_cpu(t, (unsigned)e_cpu)->capacity;
    p_cap = corun_topo_cpu(t, (unsigned)p_cpu)->capacity;
    e_cap = e_cap > 0 && p_cap > 0 ? e_cap / p_cap : 0.6;
    tk[0].cpu = cur[0] = swap[1] = p_cpu;
    tk[0].ipc = ipc_at(0.6, 1.0, 20);
    tk[1].cpu = cur[1] = swap[0] = e_cpu;
    tk[1].ipc = ipc_at(0.6, e_cap, 20);
    assert_true(tk[1].ipc > tk[0].ipc * 1.2);
    assert_true(fabs(corun_policy_predict(&s, swap, NULL) - corun_policy_predict(&s, cur, NULL)) <
                1e-9);

    /* Twenty like tasks on the twenty CPUs, each measured where it runs,
     * the engine's move cost: no plan moves one. */
    {
        unsigned n = corun_topo_ncpus(t);
        struct corun_task_profile *all = calloc(n, sizeof(*all));
        int *cpu = calloc(n, sizeof(*cpu));

        assert_true(n == 20 && all && cpu);
        for (unsigned i = 0; i < n; i++) {
            const struct corun_topo_cpu *cp = corun_topo_cpu(t, i);
            bool fast = corun_topo_kind(t, (unsigned)cp->kind)->efficiency == best_eff;

            all[i] = class_task(i, CORUN_CLASS_STREAMING);
            all[i].llc_mpki = 20;
            all[i].cpu = (int)i;
            all[i].ipc = ipc_at(0.6, fast ? 1.0 : e_cap, 20);
        }
        s = (struct corun_snapshot){.topo = t,
                                    .ntasks = n,
                                    .tasks = all,
                                    .seed = 1,
                                    .round = 1,
                                    .move_cost = 0.01,
                                    .turbo_rel = flat,
                                    .turbo_n = 1};
        place("corun", &s, cpu);
        for (unsigned i = 0; i < n; i++)
            assert_int_equal(cpu[i], (int)i);
        free(all);
        free(cpu);
    }
    corun_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_smt_pairing),
        cmocka_unit_test(test_di_spreads_devils),
        cmocka_unit_test(test_corun_reaches_predicted_optimum),
        cmocka_unit_test(test_hybrid_capacity),
        cmocka_unit_test(test_move_cost_keeps_placement),
        cmocka_unit_test(test_memory_follows),
        cmocka_unit_test(test_predict_time_shared_memory),
        cmocka_unit_test(test_search_time_shared_homes),
        cmocka_unit_test(test_search_crowded_load),
        cmocka_unit_test(test_time_shared_start),
        cmocka_unit_test(test_cap_prefers_near_plan),
        cmocka_unit_test(test_valid_and_deterministic),
        cmocka_unit_test(test_check_plan),
        cmocka_unit_test(test_predict_orderings),
        cmocka_unit_test(test_smt_crowd),
        cmocka_unit_test(test_di_breaks_ties),
        cmocka_unit_test(test_turbo_table),
        cmocka_unit_test(test_turbo_bin_edge),
        cmocka_unit_test(test_turbo_bin_hybrid),
        cmocka_unit_test(test_turbo_doubt),
        cmocka_unit_test(test_clock_normalised_memory_share),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
