/*
 * test_profile.c — the interference learner: classes from counters, the
 * frequency correction (a clock that drops is not interference), learning a
 * pair's interference away from the class prior in both directions, a
 * lesson reaching the learner's classmates through the class pool, the
 * learner's model of extra time agreeing with the predictor's, the SMT pair
 * prior of the cores' vendor, and missing counters staying missing.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "corun/policy.h"
#include "corun/profile.h"
#include "model/profile-internal.h"

static struct corun_topo *topo;

static int setup(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC, .input = "core:2 pu:2"};

    return corun_topo_load(&o, &topo);
}

static int teardown(void **state)
{
    corun_topo_free(topo);
    return 0;
}

/* A cumulative counter stream for one task. */
struct stream {
    struct corun_sample cur, prev;
    bool have;
};

/* One interval of @dt_ns at @ghz actual and 2.5 GHz reference, with @ipc
 * and @mpki (miss ratio @mr). */
static void tick(struct stream *s, uint64_t now, double dt_ns, double ghz, double ipc,
                 double mpki, double mr)
{
    double cycles = ghz * dt_ns, instr = ipc * cycles, misses = instr * mpki / 1000;

    s->prev = s->cur;
    s->have = s->cur.t_ns != 0;
    s->cur.t_ns = now;
    s->cur.valid = CORUN_EV_BIT(CORUN_EV_CYCLES) | CORUN_EV_BIT(CORUN_EV_REF_CYCLES) |
                   CORUN_EV_BIT(CORUN_EV_INSTRUCTIONS) | CORUN_EV_BIT(CORUN_EV_LLC_MISSES) |
                   CORUN_EV_BIT(CORUN_EV_LLC_REFERENCES) | CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS);
    s->cur.value[CORUN_EV_CYCLES] += (uint64_t)cycles;
    s->cur.value[CORUN_EV_REF_CYCLES] += (uint64_t)(2.5 * dt_ns);
    s->cur.value[CORUN_EV_INSTRUCTIONS] += (uint64_t)instr;
    s->cur.value[CORUN_EV_LLC_MISSES] += (uint64_t)misses;
    s->cur.value[CORUN_EV_LLC_REFERENCES] += (uint64_t)(misses / mr);
    s->cur.value[CORUN_EV_TASK_CLOCK_NS] += (uint64_t)dt_ns;
}

static struct corun_profile_obs obs_of(struct stream *s, unsigned slot, int cpu)
{
    return (struct corun_profile_obs){
        .slot = slot, .cpu = cpu, .cur = &s->cur, .prev = s->have ? &s->prev : NULL};
}

static void test_classify(void **state)
{
    assert_int_equal(corun_profile_classify(2.0, 0.1, 0.2), CORUN_CLASS_COMPUTE);
    assert_int_equal(corun_profile_classify(1.0, 2.0, 0.4), CORUN_CLASS_SHEEP);
    assert_int_equal(corun_profile_classify(0.5, 6.0, 0.25), CORUN_CLASS_RABBIT);
    assert_int_equal(corun_profile_classify(0.6, 28, 0.85), CORUN_CLASS_STREAMING);
    assert_int_equal(corun_profile_classify(0.1, 50, 0.7), CORUN_CLASS_CHASING);
    assert_int_equal(corun_profile_classify(1.0, NAN, NAN), CORUN_CLASS_UNKNOWN);
    assert_true(corun_profile_mem_share(2.0, 0.1) < 0.05);
    assert_true(corun_profile_mem_share(0.1, 50) > 0.9);
}

/*
 * The clock drops from 3 to 2 GHz: a compute-bound task keeps its IPC
 * (its rate falls by a third), a memory-bound one keeps its rate (its IPC
 * rises by half). Neither is interference: the observed slowdown stays
 * near zero, where raw instructions per second would say 33%.
 */
static void test_frequency_is_not_interference(void **state)
{
    struct corun_profiler *p;
    struct stream a = {0}, b = {0};
    unsigned sa, sb;
    uint64_t now = 1000;

    assert_int_equal(corun_profiler_new(topo, NULL, &p), 0);
    assert_int_equal(corun_profiler_add(p, 1, CORUN_CLASS_UNKNOWN, 1, &sa), 0);
    assert_int_equal(corun_profiler_add(p, 2, CORUN_CLASS_UNKNOWN, 1, &sb), 0);
    for (unsigned k = 0; k < 12; k++) {
        double ghz = k < 6 ? 3.0 : 2.0;
        struct corun_profile_obs o[2];

        now += 100000000;
        tick(&a, now, 1e8, ghz, 2.0, 0.1, 0.2);
        /* Memory-bound: 0.6 cycles of compute plus 1.5 ns of memory
         * stall per instruction: IPC = 1 / (0.6 + 1.5 * GHz). */
        tick(&b, now, 1e8, ghz, 1.0 / (0.6 + 1.5 * ghz), 40, 0.9);
        o[0] = obs_of(&a, sa, 0);
        o[1] = obs_of(&b, sb, 2);
        assert_int_equal(corun_profiler_update(p, o, 2), 0);
    }
    assert_true(fabs(corun_profiler_observed_slowdown(p, sa)) < 0.05);
    assert_true(fabs(corun_profiler_observed_slowdown(p, sb)) < 0.15);
    assert_true(fabs(corun_profiler_get(p, sa)->freq_ratio - 0.8) < 0.01);
    corun_profiler_free(p);
}

/* Predicted extra time of the victim at the core level from the profiles
 * (the pairwise form of corun_profile_core_pair()). */
static double core_x(const struct corun_profiler *p, unsigned victim, unsigned other)
{
    const struct corun_task_profile *v = corun_profiler_get(p, victim);
    const struct corun_task_profile *a = corun_profiler_get(p, other);
    double vp0, vs0, ap0, as0;

    corun_profile_prior(v->cls, CORUN_LEVEL_CORE, &vp0, &vs0);
    corun_profile_prior(a->cls, CORUN_LEVEL_CORE, &ap0, &as0);
    return v->sensitivity[CORUN_LEVEL_CORE] / vs0 * corun_profile_core_pair(v->cls, a->cls) *
           a->pressure[CORUN_LEVEL_CORE] / ap0;
}

/*
 * Two compute-bound tasks, moved every six intervals between two cores and
 * one SMT core, where they really halve each other (the prior says 0.62
 * extra) or do not slow each other at all. The learner raises the pair's
 * predicted interference toward what it sees, through the victim's
 * sensitivity and the co-runner's pressure; a second pair that does not
 * slow down at all is learned down.
 */
static void learn_pair(double shared_ipc, double *x_before, double *x_after, double *press_before,
                       double *press_after)
{
    struct corun_profiler *p;
    struct stream a = {0}, b = {0};
    unsigned sa, sb;
    uint64_t now = 1000;

    assert_int_equal(corun_profiler_new(topo, NULL, &p), 0);
    assert_int_equal(corun_profiler_add(p, 1, CORUN_CLASS_UNKNOWN, 1, &sa), 0);
    assert_int_equal(corun_profiler_add(p, 2, CORUN_CLASS_UNKNOWN, 1, &sb), 0);
    for (unsigned k = 0; k < 60; k++) {
        bool shared = (k / 6) % 2 == 1;
        double ipc = shared ? shared_ipc : 2.0;
        struct corun_profile_obs o[2];

        now += 100000000;
        tick(&a, now, 1e8, 3.0, ipc, 0.1, 0.2);
        tick(&b, now, 1e8, 3.0, ipc, 0.1, 0.2);
        o[0] = obs_of(&a, sa, 0);
        o[1] = obs_of(&b, sb, shared ? 1 : 2);
        assert_int_equal(corun_profiler_update(p, o, 2), 0);
        if (k == 5) {
            *x_before = core_x(p, sa, sb);
            *press_before = corun_profiler_get(p, sb)->pressure[CORUN_LEVEL_CORE];
        }
    }
    assert_int_equal(corun_profiler_get(p, sa)->cls, CORUN_CLASS_COMPUTE);
    *x_after = core_x(p, sa, sb);
    *press_after = corun_profiler_get(p, sb)->pressure[CORUN_LEVEL_CORE];
    corun_profiler_free(p);
}

static void test_learns_pair_interference(void **state)
{
    double before, after, pb, pa;

    learn_pair(1.0, &before, &after, &pb, &pa); /* truly x = 1 */
    assert_true(fabs(before - corun_profile_core_pair(CORUN_CLASS_COMPUTE, CORUN_CLASS_COMPUTE)) <
                0.01);
    assert_true(after > before + 0.15);
    /* Part of the lesson is what the co-runner does: its pressure rose. */
    assert_true(fabs(pb - 1.0) < 0.01);
    assert_true(pa > pb + 0.05);
    learn_pair(2.0, &before, &after, &pb, &pa); /* truly x = 0 */
    assert_true(after < before - 0.3);
    assert_true(pa < pb - 0.05);
}

/*
 * Three compute tasks: a and b share an SMT core every other six intervals
 * and really halve each other there; c runs alone on a core of its own all
 * along, so it never takes a lesson itself. With the class pool (the
 * default) what a learned reaches c, its classmate: c's core sensitivity
 * rises toward a's. Without it c keeps its prior.
 */
static void pool_run(double pool, double *sens_a, double *sens_c)
{
    struct corun_topo_opts to = {.source = CORUN_TOPO_SYNTHETIC, .input = "core:3 pu:2"};
    struct corun_profile_opts po = {.class_pool = pool};
    struct corun_topo *t3;
    struct corun_profiler *p;
    struct stream a = {0}, b = {0}, c = {0};
    unsigned sa, sb, sc;
    uint64_t now = 1000;

    assert_int_equal(corun_topo_load(&to, &t3), 0);
    assert_int_equal(corun_profiler_new(t3, &po, &p), 0);
    assert_int_equal(corun_profiler_add(p, 1, CORUN_CLASS_COMPUTE, 1, &sa), 0);
    assert_int_equal(corun_profiler_add(p, 2, CORUN_CLASS_COMPUTE, 1, &sb), 0);
    assert_int_equal(corun_profiler_add(p, 3, CORUN_CLASS_COMPUTE, 1, &sc), 0);
    for (unsigned k = 0; k < 60; k++) {
        bool shared = (k / 6) % 2 == 1;
        struct corun_profile_obs o[3];

        now += 100000000;
        tick(&a, now, 1e8, 3.0, shared ? 1.0 : 2.0, 0.1, 0.2);
        tick(&b, now, 1e8, 3.0, shared ? 1.0 : 2.0, 0.1, 0.2);
        tick(&c, now, 1e8, 3.0, 2.0, 0.1, 0.2);
        o[0] = obs_of(&a, sa, 0);
        o[1] = obs_of(&b, sb, shared ? 1 : 2);
        o[2] = obs_of(&c, sc, 4);
        assert_int_equal(corun_profiler_update(p, o, 3), 0);
    }
    *sens_a = corun_profiler_get(p, sa)->sensitivity[CORUN_LEVEL_CORE];
    *sens_c = corun_profiler_get(p, sc)->sensitivity[CORUN_LEVEL_CORE];
    corun_profiler_free(p);
    corun_topo_free(t3);
}

/* A profile says whether its class is the caller's hint (the policy keeps
 * it then) or learned from counters (the policy may read it again). */
static void test_hint_is_flagged(void **state)
{
    struct corun_topo_opts to = {.source = CORUN_TOPO_SYNTHETIC, .input = "core:2 pu:1"};
    struct corun_topo *t2;
    struct corun_profiler *p;
    unsigned sh, sl;

    (void)state;
    assert_int_equal(corun_topo_load(&to, &t2), 0);
    assert_int_equal(corun_profiler_new(t2, NULL, &p), 0);
    assert_int_equal(corun_profiler_add(p, 1, CORUN_CLASS_STREAMING, 1, &sh), 0);
    assert_int_equal(corun_profiler_add(p, 2, CORUN_CLASS_UNKNOWN, 1, &sl), 0);
    assert_true(corun_profiler_get(p, sh)->cls_hint);
    assert_int_equal(corun_profiler_get(p, sh)->cls, CORUN_CLASS_STREAMING);
    assert_false(corun_profiler_get(p, sl)->cls_hint);
    assert_int_equal(corun_profiler_set_hint(p, sh, CORUN_CLASS_UNKNOWN), 0);
    assert_false(corun_profiler_get(p, sh)->cls_hint);
    assert_int_equal(corun_profiler_set_hint(p, sl, CORUN_CLASS_RABBIT), 0);
    assert_true(corun_profiler_get(p, sl)->cls_hint);
    corun_profiler_free(p);
    corun_topo_free(t2);
}

static void test_class_pool(void **state)
{
    double p0, s0, a_on, c_on, a_off, c_off;

    corun_profile_prior(CORUN_CLASS_COMPUTE, CORUN_LEVEL_CORE, &p0, &s0);
    pool_run(-1, &a_off, &c_off);
    assert_true(a_off > s0 * 1.1);        /* a learned that sharing costs more */
    assert_true(fabs(c_off - s0) < 1e-9); /* c learned nothing */
    pool_run(0, &a_on, &c_on);
    assert_true(c_on > s0 * 1.05); /* a's lesson reached c */
    assert_true(fabs(a_on - c_on) < 0.5 * fabs(a_off - c_off));
}

/*
 * The learner and the predictor compose a task's extra time alike, so a
 * task that slows exactly as corun_policy_predict() says teaches nothing.
 * A rabbit runs beside two streamers that take its L3 share and load its
 * memory (six intervals), then alone (six), and so on, at the speed the
 * predictor gives it from the profiles of the moment. Its memory damage is
 * amplified by the cache share it lost (corun__mem_amp()); a learner that
 * added the levels took the difference for a lesson: over the run it
 * raised the L3 sensitivity by a tenth and the memory one fourfold.
 */
static void test_learner_agrees_with_predictor(void **state)
{
    struct corun_topo *t;
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC,
                                .input = "pack:1 [numa] l3:1(size=16777216) core:4 pu:1"};
    struct corun_profiler *p;
    struct stream st[3];
    unsigned slot[3];
    uint64_t now = 1000;
    double s3_0 = 0, s4_0 = 0, x_with = 0;
    const double flat[4] = {1, 1, 1, 1};

    (void)state;
    memset(st, 0, sizeof(st));
    assert_int_equal(corun_topo_load(&o, &t), 0);
    assert_int_equal(corun_profiler_new(t, NULL, &p), 0);
    for (unsigned i = 0; i < 3; i++)
        assert_int_equal(corun_profiler_add(p, i + 1, CORUN_CLASS_UNKNOWN, 1, &slot[i]), 0);
    for (unsigned k = 0; k < 72; k++) {
        bool with = (k / 6) % 2 == 0;
        struct corun_profile_obs ob[3];
        struct corun_task_profile tk[3];
        struct corun_snapshot snap = {
            .topo = t, .ntasks = 3, .tasks = tk, .turbo_rel = flat, .turbo_n = 4};
        int cpu[3] = {0, 1, 2};
        double speed[3], x = 0;
        unsigned n = 0;

        if (with && k >= 6) {
            for (unsigned i = 0; i < 3; i++)
                tk[i] = *corun_profiler_get(p, slot[i]);
            assert_true(corun_policy_predict(&snap, cpu, speed) > 0);
            x = 1 / speed[0] - 1;
            x_with = x;
        }
        now += 100000000;
        /* The rabbit: IPC 0.6 alone, at the predicted speed beside them. */
        tick(&st[0], now, 1e8, 3.0, 0.6 / (1 + x), 6, 0.25);
        ob[n++] = obs_of(&st[0], slot[0], 0);
        if (with) {
            for (unsigned i = 1; i < 3; i++) {
                tick(&st[i], now, 1e8, 3.0, 0.5, 28, 0.9);
                ob[n++] = obs_of(&st[i], slot[i], (int)i);
            }
        }
        assert_int_equal(corun_profiler_update(p, ob, n), 0);
        if (k == 11) {
            s3_0 = corun_profiler_get(p, slot[0])->sensitivity[CORUN_LEVEL_L3];
            s4_0 = corun_profiler_get(p, slot[0])->sensitivity[CORUN_LEVEL_NUMA];
        }
    }
    {
        const struct corun_task_profile *v = corun_profiler_get(p, slot[0]);
        double s3 = v->sensitivity[CORUN_LEVEL_L3], s4 = v->sensitivity[CORUN_LEVEL_NUMA];

        print_message(
            "rabbit beside streamers: x %.4f; sens L3 %.4f -> %.4f, memory %.4f -> %.4f\n", x_with,
            s3_0, s3, s4_0, s4);
        assert_int_equal(v->cls, CORUN_CLASS_RABBIT);
        assert_int_equal(corun_profiler_get(p, slot[1])->cls, CORUN_CLASS_STREAMING);
        assert_true(x_with > 0.1);
        assert_true(fabs(s3 - s3_0) < 0.02 * s3_0);
        assert_true(fabs(s4 - s4_0) < 0.02 * s4_0);
    }
    corun_profiler_free(p);
    corun_topo_free(t);
}

static void test_missing_counters(void **state)
{
    struct corun_profiler *p;
    struct corun_sample s1 = {.t_ns = 100, .valid = CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS)};
    struct corun_sample s2 = s1;
    struct corun_profile_obs o = {.slot = 0, .cpu = -1, .cur = &s2, .prev = &s1};
    const struct corun_task_profile *t;
    unsigned slot;

    assert_int_equal(corun_profiler_new(topo, NULL, &p), 0);
    assert_int_equal(corun_profiler_add(p, 7, CORUN_CLASS_UNKNOWN, 0, &slot), 0);
    s2.t_ns = 1000100;
    s2.value[CORUN_EV_TASK_CLOCK_NS] = 500000;
    assert_int_equal(corun_profiler_update(p, &o, 1), 0);
    t = corun_profiler_get(p, slot);
    assert_true(isnan(t->ipc));
    assert_true(isnan(t->llc_mpki));
    assert_true(fabs(t->cpu_util - 0.5) < 1e-6);
    assert_int_equal(t->cls, CORUN_CLASS_UNKNOWN);
    assert_true(t->weight == 1.0);
    assert_true(t->pressure[CORUN_LEVEL_L3] > 0); /* the unknown prior */
    o.slot = 5;
    assert_int_equal(corun_profiler_update(p, &o, 1), -EINVAL);
    assert_null(corun_profiler_get(p, 5));
    corun_profiler_free(p);
    assert_int_equal(corun_profiler_new(NULL, NULL, &p), -EINVAL);
}

/* The class prior of @cls at @level as a profiler on @desc starts a task. */
/* The prior sensitivity (or, with @press, pressure) of class @cls at
 * @level on the synthetic machine @desc. */
static double prior_on(const char *desc, enum corun_class cls, enum corun_level level, bool press)
{
    struct corun_topo *t = synthetic_topo(desc);
    struct corun_profiler *p;
    unsigned slot;
    double s;

    assert_int_equal(corun_profiler_new(t, NULL, &p), 0);
    assert_int_equal(corun_profiler_add(p, 1, cls, 1, &slot), 0);
    s = press ? corun_profiler_get(p, slot)->pressure[level]
              : corun_profiler_get(p, slot)->sensitivity[level];
    corun_profiler_free(p);
    corun_topo_free(t);
    return s;
}

static double sens_on(const char *desc, enum corun_class cls, enum corun_level level)
{
    return prior_on(desc, cls, level, false);
}

/* A cache bigger than the reference (16 MB L3, 2 MB L2) holds more of
 * everyone's data, so the same insertion rate takes a smaller part of it:
 * pressure falls with the size above the reference, to a quarter at most;
 * below it the reference figure stands. */
static void test_cache_pressure_follows_size(void **state)
{
    const char *l3_48 = "pack:1 l3:1(size=50331648) l2:4(size=1048576) core:1 pu:1";
    const char *l3_8 = "pack:1 l3:1(size=8388608) l2:4(size=524288) core:1 pu:1";
    const char *l3_256 = "pack:1 l3:1(size=268435456) l2:4(size=2097152) core:1 pu:1";
    const char *l2_4 = "pack:1 l2:2(size=4194304) core:2 pu:1";

    for (int c = 0; c < CORUN_NCLASSES; c++) {
        double p3, p2;

        corun_profile_prior((enum corun_class)c, CORUN_LEVEL_L3, &p3, NULL);
        corun_profile_prior((enum corun_class)c, CORUN_LEVEL_L2, &p2, NULL);
        assert_true(fabs(prior_on(l3_48, (enum corun_class)c, CORUN_LEVEL_L3, true) - p3 / 3) <
                    1e-9);
        assert_true(fabs(prior_on(l3_8, (enum corun_class)c, CORUN_LEVEL_L3, true) - p3) < 1e-12);
        assert_true(fabs(prior_on(l3_256, (enum corun_class)c, CORUN_LEVEL_L3, true) - p3 / 4) <
                    1e-9);
        assert_true(fabs(prior_on(l2_4, (enum corun_class)c, CORUN_LEVEL_L2, true) - p2 / 2) <
                    1e-9);
    }
}

/* What a small working set loses in a shared cache depends on the caches:
 * a 1 MB L2 two cores share with nothing above it (a Knights Landing tile)
 * holds a sheep's working set and little of a rabbit's; an L3 above private
 * 1 MB L2s (Skylake-SP) adds nothing for a sheep or a compute-bound task.
 * Rabbits keep the reference figure scaled by cache size. */
static void test_cache_priors_follow_geometry(void **state)
{
    const char *knl = "pack:1 l2:2(size=1048576) core:2 pu:1";
    const char *skx = "pack:1 l3:1(size=25952256) l2:4(size=1048576) core:1 pu:1";
    const char *nosize = "pack:1 l3:1 core:4 pu:1";
    double ref;

    assert_true(sens_on(knl, CORUN_CLASS_SHEEP, CORUN_LEVEL_L2) >
                1.4 * sens_on(knl, CORUN_CLASS_RABBIT, CORUN_LEVEL_L2));
    assert_true(sens_on(knl, CORUN_CLASS_COMPUTE, CORUN_LEVEL_L2) > 0.05);
    assert_true(sens_on(skx, CORUN_CLASS_SHEEP, CORUN_LEVEL_L3) <
                0.1 * sens_on(skx, CORUN_CLASS_RABBIT, CORUN_LEVEL_L3));
    assert_true(sens_on(skx, CORUN_CLASS_COMPUTE, CORUN_LEVEL_L3) < 0.005);
    /* Rabbits: the reference (16 MB) times 24.75/16, at most 1.5 times. */
    corun_profile_prior(CORUN_CLASS_RABBIT, CORUN_LEVEL_L3, NULL, &ref);
    assert_true(fabs(sens_on(skx, CORUN_CLASS_RABBIT, CORUN_LEVEL_L3) - ref * 1.5) < 1e-9);
    assert_true(fabs(sens_on("pack:1 l3:1(size=20971520) l2:4(size=1048576) core:1 pu:1",
                             CORUN_CLASS_RABBIT, CORUN_LEVEL_L3) -
                     ref * 20 / 16) < 1e-9);
    /* Sizes unknown: the reference geometry, as corun_profile_prior() says. */
    for (int c = 0; c < CORUN_NCLASSES; c++) {
        corun_profile_prior((enum corun_class)c, CORUN_LEVEL_L3, NULL, &ref);
        assert_true(fabs(sens_on(nosize, (enum corun_class)c, CORUN_LEVEL_L3) - ref) < 1e-12);
    }
}

/*
 * The SMT pair prior follows the cores' vendor where the topology names it:
 * Intel's cores keep fewer misses in flight than AMD's, so two streamers as
 * siblings cost each other more there (0.67-0.68 against 0.46). A rabbit
 * sibling costs a compute-bound task less the larger the LLC (0.51 under
 * 12 MB, 0.38 under 32 MB on Intel's): the Skylake 2x6140's 24.75 MB lies
 * between, an LLC past the fitted range takes its end. A machine that names
 * no vendor, or another one, keeps the median table of
 * corun_profile_core_pair(), entry for entry.
 */
static void test_core_pair_follows_vendor(void **state)
{
    struct corun_topo *intel = fixture_topo("Intel-Skylake-2xXeon6140.xml");
    struct corun_topo *amd = fixture_topo("AMD-17h-Zen-2xEpyc-7451.xml");
    struct corun__cache_geom gi, ga, gn, g;
    const enum corun_class s = CORUN_CLASS_STREAMING, c = CORUN_CLASS_COMPUTE,
                           r = CORUN_CLASS_RABBIT;
    double mid;

    (void)state;
    corun__cache_geom(intel, &gi);
    corun__cache_geom(amd, &ga);
    corun__cache_geom(topo, &gn);
    assert_true(corun__core_pair_geom(&gi, s, s) > corun__core_pair_geom(&ga, s, s) + 0.1);
    assert_true(corun__core_pair_geom(&gi, s, s) >= 0.67 &&
                corun__core_pair_geom(&gi, s, s) <= 0.68);
    assert_true(corun__core_pair_geom(&gi, s, r) > corun__core_pair_geom(&ga, s, r));
    mid = corun__core_pair_geom(&gi, c, r);
    g = gi;
    g.c_mb[1] = 12;
    corun__core_pair_fill(&g);
    assert_true(fabs(corun__core_pair_geom(&g, c, r) - 0.51) < 1e-9);
    g.c_mb[1] = 96;
    corun__core_pair_fill(&g);
    assert_true(fabs(corun__core_pair_geom(&g, c, r) - 0.38) < 1e-9);
    assert_true(mid > 0.38 + 0.01 && mid < 0.51 - 0.01);
    for (int v = 0; v <= CORUN_NCLASSES; v++)
        for (int a = 0; a <= CORUN_NCLASSES; a++) {
            enum corun_class cv = v < CORUN_NCLASSES ? (enum corun_class)v : CORUN_CLASS_UNKNOWN;
            enum corun_class ca = a < CORUN_NCLASSES ? (enum corun_class)a : CORUN_CLASS_UNKNOWN;

            assert_true(corun__core_pair_geom(&gn, cv, ca) == corun_profile_core_pair(cv, ca));
            assert_true(corun__core_pair_geom(&gi, cv, ca) > 0);
            assert_true(corun__core_pair_geom(&ga, cv, ca) > 0);
        }
    corun_topo_free(intel);
    corun_topo_free(amd);
}

/*
 * The cache loss shared by the learner and the predictor: nothing without
 * co-runners, all of it when the share kept vanishes, the share lost for a
 * working set large against the cache, little for one the share kept still
 * holds, and a derivative that matches the function's slope.
 */
static void test_cache_loss(void **state)
{
    (void)state;
    assert_true(corun__cache_loss(1, 0, 2) == 0);
    assert_true(fabs(corun__cache_loss(1, 1e9, 2) - 1) < 1e-6);
    /* u -> 0: the share lost. */
    assert_true(fabs(corun__cache_loss(1, 3, 0) - 0.75) < 1e-12);
    assert_true(fabs(corun__cache_loss(1, 3, 1e-4) - 0.75) < 1e-4);
    /* Half of a cache six times the working set: exp(-3) of it. */
    assert_true(corun__cache_loss(1, 1, 6) < 0.05);
    assert_true(corun__cache_loss(1, 1, 6) < corun__cache_loss(1, 1, 1));
    for (double u = 0; u < 8; u += 0.7)
        for (double o = 0.05; o < 5; o *= 1.9) {
            double h = 1e-6,
                   slope = (corun__cache_loss(0.8, o + h, u) - corun__cache_loss(0.8, o - h, u)) /
                           (2 * h);

            assert_true(fabs(slope - corun__cache_loss_do(0.8, o, u)) < 1e-5);
            assert_true(corun__cache_loss(0.8, o, u) >= 0 && corun__cache_loss(0.8, o, u) <= 1);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_cache_loss),
        cmocka_unit_test(test_frequency_is_not_interference),
        cmocka_unit_test(test_learns_pair_interference),
        cmocka_unit_test(test_hint_is_flagged),
        cmocka_unit_test(test_class_pool),
        cmocka_unit_test(test_missing_counters),
        cmocka_unit_test(test_learner_agrees_with_predictor),
        cmocka_unit_test(test_cache_priors_follow_geometry),
        cmocka_unit_test(test_core_pair_follows_vendor),
        cmocka_unit_test(test_cache_pressure_follows_size),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
