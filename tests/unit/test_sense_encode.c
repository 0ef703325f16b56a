/*
 * test_sense_encode.c — the preset tables against the vendors' documented
 * encodings, for PMUs this machine does not have (libpfm4 with
 * LIBPFM_ENCODE_INACTIVE in this process, and LIBPFM_FORCE_PMU in a fresh
 * process per PMU, since libpfm4 reads its environment once).
 *
 * The expected configs are written from the Intel SDM / AMD PPR event
 * numbers (event | umask << 8 | cmask << 24), not from corun's output.
 */
#include "testutil.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corun/sense.h"

#define NONE UINT64_MAX

struct expected {
    const char *pmu;
    uint64_t config[CORUN_EV_STALL_CYCLES_BACKEND + 1];
};

static const struct expected expect[] = {
    /* cycles, instructions, ref_cycles, llc_refs, llc_misses, branch_misses, dtlb, stalls */
    {"skx", {0x3c, 0xc0, 0x0300, 0x4f2e, 0x412e, 0xc5, 0x0108, 0x40004a3}},
    {"icl", {0x3c, 0xc0, 0x0300, 0x4f2e, 0x412e, 0xc5, 0x0e08, 0x40004a3}},
    {"spr", {0x3c, 0xc0, 0x0300, 0x4f2e, 0x412e, 0xc5, 0x0e12, 0x40004a3}},
    /* Zen: no reference cycles; LLC refs are L2 misses (PMCx064 0x09). */
    {"amd64_fam19h_zen3", {0x76, 0xc0, NONE, 0x0964, 0x5c43, 0xc3, 0xf045, 0x77ae}},
    {"amd64_fam17h_zen2", {0x76, 0xc0, NONE, 0x0964, 0x5843, 0xc3, 0xf045, 0xffae}},
};

static const char *self_exe;

static void check_encoding(const struct expected *x, const struct corun_pmu_encoding *enc)
{
    assert_string_equal(enc->pmu, x->pmu);
    for (int ev = 0; ev <= CORUN_EV_STALL_CYCLES_BACKEND; ev++) {
        const struct corun_event_encoding *e = &enc->ev[ev];

        if (x->config[ev] == NONE) {
            if (e->source != CORUN_SRC_NONE)
                fail_msg("%s %s: want unavailable, got %s", x->pmu, corun_event_name(ev),
                         e->native);
            assert_true(strlen(e->reason) > 10);
            continue;
        }
        if (e->source != CORUN_SRC_NATIVE)
            fail_msg("%s %s: want native, got %s (%s)", x->pmu, corun_event_name(ev),
                     corun_event_source_name(e->source), e->reason);
        assert_int_equal(e->type, PERF_TYPE_RAW);
        if (e->config != x->config[ev])
            fail_msg("%s %s: config %#llx, want %#llx", x->pmu, corun_event_name(ev),
                     (unsigned long long)e->config, (unsigned long long)x->config[ev]);
        /* The name says which model it was encoded for. */
        assert_true(!strncmp(e->native, x->pmu, strlen(x->pmu)));
        assert_non_null(e->note);
    }
    /* Software presets do not depend on the model. */
    assert_int_equal(enc->ev[CORUN_EV_TASK_CLOCK_NS].type, PERF_TYPE_SOFTWARE);
    assert_int_equal(enc->ev[CORUN_EV_TASK_CLOCK_NS].config, PERF_COUNT_SW_TASK_CLOCK);
    assert_int_equal(enc->ev[CORUN_EV_PAGE_FAULTS].config, PERF_COUNT_SW_PAGE_FAULTS);
    assert_int_equal(enc->ev[CORUN_EV_RUN_DELAY_NS].source, CORUN_SRC_PROC);
}

/* "pmu::event" lookups of inactive PMUs in this process. */
static void test_inactive_pmus(void **state)
{
    struct corun_pmu_encoding enc;

    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        assert_int_equal(corun_sense_encode(expect[i].pmu, &enc), 0);
        check_encoding(&expect[i], &enc);
    }
}

/* LIBPFM_FORCE_PMU in a fresh process: this CPU's encoding (pmu NULL) is the model's. */
static void test_forced_pmus(void **state)
{
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        int st;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
            setenv("LIBPFM_FORCE_PMU", expect[i].pmu, 1);
            unsetenv("LIBPFM_ENCODE_INACTIVE");
            execl(self_exe, self_exe, "--forced", expect[i].pmu, (char *)NULL);
            _exit(99);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("forced %s: child status %#x", expect[i].pmu, st);
    }
}

/* The child of test_forced_pmus: exit 0 when the forced PMU encodes as expected. */
static int forced_child(const char *pmu)
{
    struct corun_pmu_encoding enc;

    if (corun_sense_encode(NULL, &enc) != 0)
        return 2;
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        if (strcmp(expect[i].pmu, pmu))
            continue;
        if (strcmp(enc.pmu, pmu)) {
            fprintf(stderr, "forced %s: libpfm4 chose %s\n", pmu, enc.pmu);
            return 3;
        }
        for (int ev = 0; ev <= CORUN_EV_STALL_CYCLES_BACKEND; ev++) {
            bool none = expect[i].config[ev] == NONE;

            if (none != (enc.ev[ev].source == CORUN_SRC_NONE) ||
                (!none && enc.ev[ev].config != expect[i].config[ev])) {
                fprintf(stderr, "forced %s: %s is %#llx\n", pmu, corun_event_name(ev),
                        (unsigned long long)enc.ev[ev].config);
                return 4;
            }
        }
        return 0;
    }
    return 5;
}

static void test_unknown_pmu(void **state)
{
    struct corun_pmu_encoding enc;

    assert_int_equal(corun_sense_encode("no_such_pmu", &enc), -ENOENT);
    /* An uncore PMU is not a core PMU. */
    assert_int_equal(corun_sense_encode("skx_unc_imc0", &enc), -ENOENT);
}

static void test_generic_fallback(void **state)
{
    struct corun_pmu_encoding enc;

    /* A libpfm4 core PMU without a corun table: perf's generic events. */
    assert_int_equal(corun_sense_encode("hsw", &enc), 0);
    assert_string_equal(enc.table, "generic");
    assert_int_equal(enc.ev[CORUN_EV_CYCLES].source, CORUN_SRC_GENERIC);
    assert_int_equal(enc.ev[CORUN_EV_CYCLES].type, PERF_TYPE_HARDWARE);
    assert_int_equal(enc.ev[CORUN_EV_CYCLES].config, PERF_COUNT_HW_CPU_CYCLES);
    assert_int_equal(enc.ev[CORUN_EV_DTLB_MISSES].type, PERF_TYPE_HW_CACHE);
    assert_int_equal(enc.ev[CORUN_EV_DTLB_MISSES].config,
                     PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                         (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
}

static void test_names(void **state)
{
    for (int ev = 0; ev < CORUN_NEVENTS; ev++)
        assert_int_equal(corun_event_by_name(corun_event_name(ev)), ev);
    assert_int_equal(corun_event_by_name("cycle"), -EINVAL);
    assert_int_equal(corun_event_by_name(NULL), -EINVAL);
    assert_true(corun_event_is_hardware(CORUN_EV_STALL_CYCLES_BACKEND));
    assert_false(corun_event_is_hardware(CORUN_EV_TASK_CLOCK_NS));
    assert_string_equal(corun_sense_pmu_names()[0], "skl");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forced_pmus), cmocka_unit_test(test_inactive_pmus),
        cmocka_unit_test(test_unknown_pmu), cmocka_unit_test(test_generic_fallback),
        cmocka_unit_test(test_names),
    };

    if (argc == 3 && !strcmp(argv[1], "--forced"))
        return forced_child(argv[2]);
    self_exe = "/proc/self/exe";
    {
        static char path[4096];
        ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

        if (n > 0) {
            path[n] = '\0';
            self_exe = path;
        }
    }
    /* Before libpfm4 initialises: encode PMUs that are not this CPU's. */
    setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
