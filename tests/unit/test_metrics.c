/*
 * test_metrics.c — derived metrics: each one's arithmetic on known counts,
 * and NaN (never zero) when an input is missing or a denominator is zero.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "corun/model.h"

static struct corun_sample full(void)
{
    struct corun_sample s;

    memset(&s, 0, sizeof(s));
    s.valid = CORUN_EV_BIT(CORUN_NEVENTS) - 1;
    s.value[CORUN_EV_CYCLES] = 3000000000ull;       /* 3e9 cycles */
    s.value[CORUN_EV_INSTRUCTIONS] = 6000000000ull; /* IPC 2 */
    s.value[CORUN_EV_REF_CYCLES] = 2500000000ull;   /* ratio 1.2 */
    s.value[CORUN_EV_LLC_REFERENCES] = 40000000ull;
    s.value[CORUN_EV_LLC_MISSES] = 12000000ull;            /* 2 MPKI, ratio 0.3 */
    s.value[CORUN_EV_BRANCH_MISSES] = 30000000ull;         /* 5 MPKI */
    s.value[CORUN_EV_DTLB_MISSES] = 600000ull;             /* 0.1 MPKI */
    s.value[CORUN_EV_STALL_CYCLES_BACKEND] = 900000000ull; /* 0.3 */
    s.value[CORUN_EV_TASK_CLOCK_NS] = 1000000000ull;       /* 1 s: 3 GHz */
    s.mux_ratio = 1.0;
    return s;
}

static void test_values(void **state)
{
    struct corun_sample s = full();
    struct corun_metrics m;

    corun_metrics_compute(&s, 2000000000ull, &m);
    assert_float_equal(m.v[CORUN_M_IPC], 2.0, 1e-12);
    assert_float_equal(m.v[CORUN_M_EFFECTIVE_GHZ], 3.0, 1e-12);
    assert_float_equal(m.v[CORUN_M_FREQ_RATIO], 1.2, 1e-12);
    assert_float_equal(m.v[CORUN_M_LLC_MPKI], 2.0, 1e-12);
    assert_float_equal(m.v[CORUN_M_LLC_MISS_RATIO], 0.3, 1e-12);
    assert_float_equal(m.v[CORUN_M_BRANCH_MPKI], 5.0, 1e-12);
    assert_float_equal(m.v[CORUN_M_DTLB_MPKI], 0.1, 1e-12);
    assert_float_equal(m.v[CORUN_M_BACKEND_STALL_SHARE], 0.3, 1e-12);
    assert_float_equal(m.v[CORUN_M_CPU_UTILIZATION], 0.5, 1e-12);
}

static void test_missing_inputs(void **state)
{
    struct corun_sample s = full();
    struct corun_metrics m;

    /* No PMU: only the software counts. */
    s.valid = CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS);
    corun_metrics_compute(&s, 2000000000ull, &m);
    for (int i = 0; i < CORUN_NMETRICS; i++) {
        if (i == CORUN_M_CPU_UTILIZATION)
            assert_false(isnan(m.v[i]));
        else if (!isnan(m.v[i]))
            fail_msg("%s = %g without its counters", corun_metric_name(i), m.v[i]);
    }
    /* A missing ref_cycles spoils only the frequency ratio. */
    s = full();
    s.valid &= ~CORUN_EV_BIT(CORUN_EV_REF_CYCLES);
    corun_metrics_compute(&s, 0, &m);
    assert_true(isnan(m.v[CORUN_M_FREQ_RATIO]));
    assert_false(isnan(m.v[CORUN_M_IPC]));
    assert_true(isnan(m.v[CORUN_M_CPU_UTILIZATION])); /* elapsed unknown */
}

static void test_zero_denominators(void **state)
{
    struct corun_sample s = full();
    struct corun_metrics m;

    s.value[CORUN_EV_INSTRUCTIONS] = 0;
    s.value[CORUN_EV_CYCLES] = 0;
    s.value[CORUN_EV_LLC_REFERENCES] = 0;
    corun_metrics_compute(&s, 1, &m);
    assert_true(isnan(m.v[CORUN_M_IPC]));
    assert_true(isnan(m.v[CORUN_M_LLC_MPKI]));
    assert_true(isnan(m.v[CORUN_M_LLC_MISS_RATIO]));
    assert_true(isnan(m.v[CORUN_M_BACKEND_STALL_SHARE]));
    /* A zero numerator is a real zero. */
    assert_float_equal(m.v[CORUN_M_EFFECTIVE_GHZ], 0.0, 0);
}

static void test_names(void **state)
{
    for (int i = 0; i < CORUN_NMETRICS; i++)
        assert_int_equal(corun_metric_by_name(corun_metric_name(i)), i);
    assert_string_equal(corun_metric_name(CORUN_M_LLC_MPKI), "llc_mpki");
    assert_int_equal(corun_metric_by_name("mpki"), -EINVAL);
    assert_string_equal(corun_metric_name(CORUN_NMETRICS), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_missing_inputs),
        cmocka_unit_test(test_zero_denominators),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
