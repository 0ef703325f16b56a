/*
 * test_jobfile.c — the `corun batch` job-file parser (src/cli/jobfile.c,
 * compiled in here: the CLI is not part of libcorun): plain commands,
 * attributes, comments, environment assignments that are not attributes,
 * and every malformed form with its line number.
 */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jobfile.c"

static int parse_str(const char *text, struct job_list *l, unsigned *bad, char *why)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int err;

    assert_non_null(f);
    err = jobfile_parse(f, l, bad, why, 256);
    fclose(f);
    return err;
}

static void test_plain_and_attributes(void **state)
{
    const char *text = "# comment\n"
                       "\n"
                       "   ./prog -x 1\n"
                       "name=fft class=streaming weight=2.5 -- ./fft -n 4096 -- more\n"
                       "FOO=1 ./env-prog\n"
                       "class=chasing -- chase --flag\n"
                       "\t# indented comment\n"
                       "echo 'a -- b'   \n";
    struct job_list l = {0};
    unsigned bad = 0;
    char why[256];

    assert_int_equal(parse_str(text, &l, &bad, why), 0);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.jobs[0].command, "./prog -x 1");
    assert_string_equal(l.jobs[0].name, "job1");
    assert_int_equal(l.jobs[0].cls, CORUN_CLASS_UNKNOWN);
    assert_true(l.jobs[0].weight == 1.0);
    assert_int_equal(l.jobs[0].line, 3);
    assert_string_equal(l.jobs[1].name, "fft");
    assert_string_equal(l.jobs[1].command, "./fft -n 4096 -- more");
    assert_int_equal(l.jobs[1].cls, CORUN_CLASS_STREAMING);
    assert_true(l.jobs[1].weight == 2.5);
    assert_string_equal(l.jobs[2].command, "FOO=1 ./env-prog");
    assert_int_equal(l.jobs[3].cls, CORUN_CLASS_CHASING);
    assert_string_equal(l.jobs[3].command, "chase --flag");
    assert_string_equal(l.jobs[3].name, "job4");
    assert_string_equal(l.jobs[4].command, "echo 'a -- b'");
    assert_int_equal(l.jobs[4].line, 8);
    job_list_release(&l);
}

struct bad_case {
    const char *text;
    unsigned line;
    const char *why; /* a part of the reason */
};

static void test_malformed(void **state)
{
    static const struct bad_case cases[] = {
        {"true\nname=x true\n", 2, "' -- '"},
        {"class=purple -- x\n", 1, "unknown class 'purple'"},
        {"true\n\n# c\nweight=0 -- x\n", 4, "weight '0'"},
        {"weight=-1 -- x\n", 1, "weight"},
        {"weight=2x -- x\n", 1, "weight '2x'"},
        {"name=a colour=red -- x\n", 1, "unknown attribute 'colour'"},
        {"name=a junk -- x\n", 1, "'junk' is not an attribute"},
        {"name= -- x\n", 1, "empty name"},
        {"name=a --\n", 1, "no command"},
        {"name=a --   \n", 1, "no command"},
        {"true\r\nname=a -- \r\n", 2, "no command"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct job_list l = {0};
        unsigned bad = 0;
        char why[256] = "";

        assert_int_equal(parse_str(cases[i].text, &l, &bad, why), -EINVAL);
        assert_int_equal(bad, cases[i].line);
        if (!strstr(why, cases[i].why))
            fail_msg("case %zu: reason '%s' lacks '%s'", i, why, cases[i].why);
        job_list_release(&l);
    }
}

static void test_empty_and_nul(void **state)
{
    static const char nul[] = "true\nfa\0lse\n";
    struct job_list l = {0};
    unsigned bad = 0;
    char why[256];
    FILE *f;

    assert_int_equal(parse_str("# nothing\n\n   \n \r\n\t\r \r\n", &l, &bad, why), 0);
    assert_int_equal(l.n, 0);
    job_list_release(&l);
    f = fmemopen((void *)nul, sizeof(nul) - 1, "r");
    assert_int_equal(jobfile_parse(f, &l, &bad, why, sizeof(why)), -EINVAL);
    assert_int_equal(bad, 2);
    fclose(f);
    job_list_release(&l);
}

/* A read error comes back as its own errno: a directory is named as one,
 * not as an I/O error. */
static void test_read_error(void **state)
{
    struct job_list l = {0};
    unsigned bad = 0;
    char why[256];
    FILE *f = fopen("/", "r");

    assert_non_null(f);
    assert_int_equal(jobfile_parse(f, &l, &bad, why, sizeof(why)), -EISDIR);
    assert_int_equal(l.n, 0);
    fclose(f);
    job_list_release(&l);
}

/* Every class name round-trips. */
static void test_classes(void **state)
{
    for (int c = CORUN_CLASS_UNKNOWN; c < CORUN_NCLASSES; c++) {
        char line[128], why[256];
        struct job_spec js;

        snprintf(line, sizeof(line), "class=%s -- x", corun_class_name((enum corun_class)c));
        assert_int_equal(jobfile_parse_line(line, &js, why, sizeof(why)), 0);
        assert_int_equal(js.cls, c);
        free(js.name);
        free(js.command);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_attributes),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_empty_and_nul),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_read_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
