/*
 * test_cpuset.c — CPU sets: the list syntax users type and /sys writes,
 * sets beyond 1024 CPUs, formatting back.
 */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "corun/common.h"

static void parse_format(const char *in, const char *want)
{
    struct corun_cpuset s = {0};
    char buf[256];

    assert_int_equal(corun_cpuset_parse(&s, in, NULL), 0);
    corun_cpuset_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, want);
    corun_cpuset_release(&s);
}

static void test_parse_lists(void **state)
{
    parse_format("0", "0");
    parse_format("0-3,8", "0-3,8");
    parse_format("0-3,2-5\n", "0-5");
    parse_format(" 1,3,5 ", "1,3,5");
    parse_format("0-10:2", "0,2,4,6,8,10");
    parse_format("", "");
    parse_format("\n", "");
    parse_format("4095", "4095");
}

static void test_parse_errors(void **state)
{
    static const struct {
        const char *in;
        int err;
        size_t at;
    } bad[] = {
        {"a", -EINVAL, 0},  {"1-", -EINVAL, 2},      {"3-1", -EINVAL, 3},
        {"1,,2", -EINVAL, 2}, {"1,", -EINVAL, 2},    {"0-4:0", -EINVAL, 5},
        {"1 2", -EINVAL, 2},  {"99999999", -ERANGE, 0}, {"-1", -EINVAL, 0},
    };
    struct corun_cpuset s = {0};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t at = 999;

        assert_int_equal(corun_cpuset_parse(&s, bad[i].in, &at), bad[i].err);
        if (bad[i].err == -EINVAL)
            assert_int_equal(at, bad[i].at);
    }
    corun_cpuset_release(&s);
}

static void test_large_sets(void **state)
{
    struct corun_cpuset a = {0}, b = {0};

    assert_int_equal(corun_cpuset_init(&a, 8), 0);
    assert_int_equal(corun_cpuset_set(&a, 2047), 0); /* grows past 1024 */
    assert_true(a.nbits >= 2048);
    assert_int_equal(corun_cpuset_set(&a, 5), 0);
    assert_int_equal(corun_cpuset_count(&a), 2);
    assert_int_equal(corun_cpuset_next(&a, 0), 5);
    assert_int_equal(corun_cpuset_next(&a, 6), 2047);
    assert_int_equal(corun_cpuset_next(&a, 2048), -1);
    assert_int_equal(corun_cpuset_copy(&b, &a), 0);
    assert_true(corun_cpuset_equal(&a, &b));
    corun_cpuset_clear(&b, 2047);
    assert_false(corun_cpuset_equal(&a, &b));
    corun_cpuset_and(&a, &b);
    assert_int_equal(corun_cpuset_count(&a), 1);
    assert_true(corun_cpuset_isset(&a, 5));
    assert_false(corun_cpuset_isset(&a, 100000));
    corun_cpuset_release(&a);
    corun_cpuset_release(&b);
    corun_cpuset_release(&b); /* twice is harmless */
}

static void test_format_truncates(void **state)
{
    struct corun_cpuset s = {0};
    char small[4];

    assert_int_equal(corun_cpuset_parse(&s, "0-3,8,10", NULL), 0);
    assert_int_equal(corun_cpuset_format(&s, small, sizeof(small)), strlen("0-3,8,10"));
    assert_string_equal(small, "0-3");
    corun_cpuset_release(&s);
}

static void test_strerror(void **state)
{
    assert_string_equal(corun_strerror(-ENOENT), "No such file or directory");
    assert_string_equal(corun_strerror(ENOENT), "No such file or directory");
    assert_non_null(strstr(corun_strerror(-ENOTSUP), "not supported"));
    assert_non_null(corun_strerror(-99999));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_lists),   cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_large_sets),    cmocka_unit_test(test_format_truncates),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
