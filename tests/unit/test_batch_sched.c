/*
 * test_batch_sched.c — the co-runner model of `corun batch`
 * (src/cli/batch-sched.c, compiled in here): predicted interference grows
 * with what two tasks share and with how memory-bound they are, a task that
 * mostly waits weighs little, program keys and what is learned per program.
 * Run on real machine topologies from the fixtures.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "cli/batch-sched.c"

/* Dense index of the first CPU with os index @os. */
static int cpu(const struct corun_topo *t, unsigned os)
{
    int c = corun_topo_cpu_by_os(t, os);

    assert_true(c >= 0);
    return c;
}

static double cost(const struct corun_topo *t, enum corun_class a, int ca, enum corun_class b,
                   int cb)
{
    struct corun_task_profile pa, pb;

    sched_profile(&pa, 0, a, 1, NAN, ca);
    sched_profile(&pb, 1, b, 1, NAN, cb);
    return sched_pair_cost(t, &pa, &pb);
}

static void test_costs_follow_sharing(void **state)
{
    /* Two sockets, one L3 each (cluster-on-die: two): find a CPU sharing
     * CPU 0's L3 and one that does not. */
    struct corun_topo *t = fixture_topo("Intel-Haswell-2xXeon-E5-2680v3.xml");
    int a = cpu(t, 0), same_l3 = -1, other = -1;
    double s_s_l3, s_s_far, s_c_l3, c_c_l3, same_cpu;

    for (unsigned c = 1; c < corun_topo_ncpus(t); c++) {
        enum corun_level l = corun_topo_shared_level(t, (unsigned)a, c);

        if (l == CORUN_LEVEL_L3 && same_l3 < 0)
            same_l3 = (int)c;
        if (!corun_topo_shares(t, (unsigned)a, c, CORUN_LEVEL_L3) && other < 0)
            other = (int)c;
    }
    assert_true(same_l3 > 0 && other > 0);
    assert_false(corun_topo_shares(t, (unsigned)a, (unsigned)other, CORUN_LEVEL_L3));
    s_s_l3 = cost(t, CORUN_CLASS_STREAMING, a, CORUN_CLASS_STREAMING, same_l3);
    s_s_far = cost(t, CORUN_CLASS_STREAMING, a, CORUN_CLASS_STREAMING, other);
    s_c_l3 = cost(t, CORUN_CLASS_STREAMING, a, CORUN_CLASS_COMPUTE, same_l3);
    c_c_l3 = cost(t, CORUN_CLASS_COMPUTE, a, CORUN_CLASS_COMPUTE, same_l3);
    same_cpu = cost(t, CORUN_CLASS_COMPUTE, a, CORUN_CLASS_COMPUTE, a);
    assert_true(s_s_l3 > s_s_far); /* sharing an L3 costs more */
    assert_true(s_s_l3 > s_c_l3);  /* two streams hurt each other most */
    assert_true(s_c_l3 > c_c_l3);
    assert_true(same_cpu > s_s_l3); /* taking turns on one CPU is worst */
    assert_true(s_s_far > 0);       /* the machine's memory is always shared */
    /* Unplaced tasks count only what the whole machine shares. */
    assert_true(cost(t, CORUN_CLASS_STREAMING, -1, CORUN_CLASS_STREAMING, -1) < s_s_far);
    assert_true(cost(t, CORUN_CLASS_STREAMING, -1, CORUN_CLASS_STREAMING, -1) > 0);
    corun_topo_free(t);
}

static void test_waiting_tasks_weigh_little(void **state)
{
    struct corun_topo *t = fixture_topo("this-vm-AMD-EPYC-2c.xml");
    struct corun_task_profile busy, idle, victim;

    sched_profile(&busy, 0, CORUN_CLASS_STREAMING, 1, 1.0, 0);
    sched_profile(&idle, 1, CORUN_CLASS_STREAMING, 1, 0.1, 0);
    sched_profile(&victim, 2, CORUN_CLASS_RABBIT, 1, 1.0, 1);
    assert_true(sched_pair_cost(t, &busy, &victim) > 2 * sched_pair_cost(t, &idle, &victim));
    corun_topo_free(t);
}

/* Without counters: CPU use and footprint against this VM's caches
 * (512 KiB L2 per core, one 32 MiB L3). */
static void test_fallback_classes(void **state)
{
    struct corun_topo *t = fixture_topo("this-vm-AMD-EPYC-2c.xml");
    struct sched_caches c;
    const double MiB = 1024.0 * 1024.0;

    sched_caches_of(t, &c);
    assert_true(c.l2_bytes == 0.5 * MiB);
    assert_true(c.llc_bytes == 32 * MiB);
    assert_int_equal(sched_learn_class(CORUN_CLASS_UNKNOWN, 0.2, 1 * MiB, &c), CORUN_CLASS_SHEEP);
    assert_int_equal(sched_learn_class(CORUN_CLASS_UNKNOWN, 0.99, 0.2 * MiB, &c),
                     CORUN_CLASS_COMPUTE);
    assert_int_equal(sched_learn_class(CORUN_CLASS_UNKNOWN, 0.99, 16 * MiB, &c),
                     CORUN_CLASS_RABBIT);
    assert_int_equal(sched_learn_class(CORUN_CLASS_UNKNOWN, 0.99, 192 * MiB, &c),
                     CORUN_CLASS_STREAMING);
    assert_int_equal(sched_learn_class(CORUN_CLASS_UNKNOWN, 0.99, NAN, &c), CORUN_CLASS_UNKNOWN);
    assert_int_equal(sched_learn_class(CORUN_CLASS_UNKNOWN, NAN, NAN, &c), CORUN_CLASS_UNKNOWN);
    assert_int_equal(sched_learn_class(CORUN_CLASS_CHASING, 0.2, 192 * MiB, &c),
                     CORUN_CLASS_CHASING);
    corun_topo_free(t);
}

static void test_keys_and_learning(void **state)
{
    struct sched_book b = {0};
    const struct sched_learned *l;
    char key[64];

    sched_key("  /usr/bin/stream -n 3", key, sizeof(key));
    assert_string_equal(key, "stream");
    sched_key("FOO=1 BAR=2 ./bin/fft|sort", key, sizeof(key));
    assert_string_equal(key, "fft");
    sched_key("make;", key, sizeof(key));
    assert_string_equal(key, "make");
    sched_key("A=1", key, sizeof(key));
    assert_string_equal(key, "A=1");
    assert_null(sched_book_find(&b, "fft"));
    sched_book_learn(&b, "fft", CORUN_CLASS_UNKNOWN, 1.0);
    sched_book_learn(&b, "fft", CORUN_CLASS_STREAMING, 0.5);
    sched_book_learn(&b, "fft", CORUN_CLASS_UNKNOWN, NAN);
    l = sched_book_find(&b, "fft");
    assert_non_null(l);
    assert_int_equal(l->jobs, 3);
    assert_int_equal(l->cls, CORUN_CLASS_STREAMING); /* a later UNKNOWN does not erase it */
    assert_true(fabs(l->cpu_util - 0.75) < 1e-12);
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof(key), "p%d", i);
        sched_book_learn(&b, key, CORUN_CLASS_COMPUTE, 1);
    }
    assert_non_null(sched_book_find(&b, "p19"));
    assert_non_null(sched_book_find(&b, "fft"));
    sched_book_release(&b);
}

/* With counters (a PMU): MPKI and IPC decide; without, the fallback stays. */
static void test_counter_classes(void **state)
{
    const enum corun_class U = CORUN_CLASS_UNKNOWN;

    assert_int_equal(sched_class_from_counters(U, 1.0, 25, 0.3, U), CORUN_CLASS_CHASING);
    assert_int_equal(sched_class_from_counters(U, 1.0, 25, 1.2, U), CORUN_CLASS_STREAMING);
    assert_int_equal(sched_class_from_counters(U, 1.0, 3, 1.2, U), CORUN_CLASS_RABBIT);
    assert_int_equal(sched_class_from_counters(U, 1.0, 0.1, 2.5, U), CORUN_CLASS_COMPUTE);
    assert_int_equal(sched_class_from_counters(U, 0.1, 25, 0.3, U), CORUN_CLASS_SHEEP);
    assert_int_equal(sched_class_from_counters(U, 1.0, NAN, NAN, CORUN_CLASS_RABBIT),
                     CORUN_CLASS_RABBIT);
    assert_int_equal(sched_class_from_counters(CORUN_CLASS_COMPUTE, 1.0, 25, 0.3, U),
                     CORUN_CLASS_COMPUTE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_costs_follow_sharing),
        cmocka_unit_test(test_waiting_tasks_weigh_little),
        cmocka_unit_test(test_keys_and_learning),
        cmocka_unit_test(test_fallback_classes),
        cmocka_unit_test(test_counter_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
