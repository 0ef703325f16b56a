/*
 * test_journal.c — the journal of original placements: a durable round
 * trip, malformed files named by line, start times read from /proc (live
 * and from a recorded tree whose command name holds spaces and
 * parentheses), and the replay after a crash: a pinned process is put back,
 * a process whose PID was recycled (start time differs) is left alone.
 */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "act/act-internal.h"
#include "common/sys.h"
#include "corun/act.h"
#include "kid.h"

static char dir[] = "/tmp/corun-test-journal-XXXXXX";

static int setup(void **state)
{
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_round_trip(void **state)
{
    struct corun_journal_entry e = {.pid = 4242, .start_time = 987654321ull}, r;
    struct corun_journal_thread th[2] = {{.tid = 4242}, {.tid = 4243}};
    char path[256];
    unsigned bad = 0;

    snprintf(e.backend, sizeof(e.backend), "cpuset");
    snprintf(e.comm, sizeof(e.comm), "my prog");
    snprintf(e.cgroup, sizeof(e.cgroup), "/sys/fs/cgroup/cpuset/user");
    snprintf(e.created, sizeof(e.created), "/sys/fs/cgroup/cpuset/corun/4242-987654321");
    assert_int_equal(corun_cpuset_parse(&e.cpus, "0-3,1500", NULL), 0);
    assert_int_equal(corun_cpuset_parse(&th[0].cpus, "0-3", NULL), 0);
    assert_int_equal(corun_cpuset_parse(&th[1].cpus, "2", NULL), 0);
    e.threads = th;
    e.nthreads = 2;
    assert_int_equal(corun_journal_write(dir, &e), 0);
    snprintf(path, sizeof(path), "%s/4242-987654321.journal", dir);
    assert_int_equal(corun_journal_read(path, &r, &bad), 0);
    assert_int_equal(r.pid, 4242);
    assert_true(r.start_time == 987654321ull);
    assert_string_equal(r.backend, "cpuset");
    assert_string_equal(r.comm, "my prog");
    assert_string_equal(r.cgroup, e.cgroup);
    assert_string_equal(r.created, e.created);
    assert_true(corun_cpuset_equal(&r.cpus, &e.cpus));
    assert_int_equal(r.nthreads, 2);
    assert_int_equal(r.threads[1].tid, 4243);
    assert_true(corun_cpuset_equal(&r.threads[1].cpus, &th[1].cpus));
    corun_journal_entry_release(&r);
    /* no temporary file is left beside it */
    snprintf(path, sizeof(path), "%s/4242-987654321.journal.tmp", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(corun_journal_remove(dir, 4242, 987654321ull), 0);
    assert_int_equal(corun_journal_remove(dir, 4242, 987654321ull), 0);
    corun_cpuset_release(&e.cpus);
    corun_cpuset_release(&th[0].cpus);
    corun_cpuset_release(&th[1].cpus);
}

static void test_malformed(void **state)
{
    static const struct {
        const char *text;
        unsigned line;
    } cases[] = {
        {"corun-journal 2\n", 1},
        {"corun-journal 1\npid 12\nstart 5\nbackend affinity\ncpus 0-1\n", 6}, /* no end */
        {"corun-journal 1\npid x\n", 2},
        {"corun-journal 1\npid 12\nstart 5\nbackend affinity\ncpus 0-\nend\n", 5},
        {"corun-journal 1\npid 12\nstart 5\nbackend affinity\ncpus 0\nthread 1\nend\n", 6},
        {"corun-journal 1\npid 12\nbogus 1\n", 3},
        {"corun-journal 1\npid 12\nstart 5\nbackend affinity\ncpus 0\nend\nmore\n", 7},
        {"corun-journal 1\nstart 5\nbackend affinity\ncpus 0\nend\n", 6}, /* no pid */
    };
    char path[256];

    snprintf(path, sizeof(path), "%s/bad.journal", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct corun_journal_entry e;
        unsigned bad = 0;

        write_file(path, cases[i].text);
        assert_int_equal(corun_journal_read(path, &e, &bad), -EINVAL);
        if (bad != cases[i].line)
            fail_msg("case %zu: bad line %u, want %u", i, bad, cases[i].line);
    }
    unlink(path);
    {
        struct corun_journal_entry e;

        assert_int_equal(corun_journal_read("/nonexistent/x.journal", &e, NULL), -ENOENT);
    }
}

static void test_start_time(void **state)
{
    char root[300], p[400], cmd[500];
    unsigned long long t = 0, again = 0;

    assert_int_equal(corun_proc_start_time(NULL, getpid(), &t), 0);
    assert_true(t > 0);
    assert_int_equal(corun_proc_start_time(NULL, getpid(), &again), 0);
    assert_true(t == again);
    assert_int_equal(corun_proc_start_time(NULL, 0x3ffffff, &t), -ESRCH);
    /* A recorded /proc whose comm holds ") (" and spaces. */
    snprintf(root, sizeof(root), "%s/root", dir);
    snprintf(p, sizeof(p), "%s/proc/77", root);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", p);
    assert_int_equal(system(cmd), 0);
    snprintf(p, sizeof(p), "%s/proc/77/stat", root);
    write_file(p, "77 (a) (b c) S 1 77 77 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 "
                  "123456789 1000 100 18446744073709551615\n");
    assert_int_equal(corun_proc_start_time(root, 77, &t), 0);
    assert_true(t == 123456789ull);
    write_file(p, "77 (x) S 1 2\n");
    assert_int_equal(corun_proc_start_time(root, 77, &t), -EINVAL);
}

struct seen {
    int err[8];
    unsigned n;
};

static void on_entry(void *user, const struct corun_restore_result *r)
{
    struct seen *s = user;

    if (s->n < 8)
        s->err[s->n++] = r->err;
}

/* A crash: the instance goes away without restoring; the replay does it. */
static void test_replay_after_crash(void **state)
{
    struct corun_act_opts o = {.journal_dir = dir};
    struct corun_cpuset one = {0}, orig = {0}, got = {0};
    struct kid k = kid_start(2);
    struct seen s = {0};
    void *st;

    assert_int_equal(corun__mask_get(k.pid, &orig), 0);
    assert_int_equal(corun_cpuset_parse(&one, corun_cpuset_count(&orig) > 1 ? "1" : "0", NULL), 0);
    assert_int_equal(corun_act_affinity.open(&o, &st), 0);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), 0);
    corun_act_affinity.close(st); /* no restore: as if killed */
    assert_int_equal(corun__mask_get(k.pid, &got), 0);
    assert_true(corun_cpuset_equal(&got, &one));
    assert_int_equal(corun_act_restore_journal(&o, on_entry, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.err[0], 0);
    assert_int_equal(corun__mask_get(k.pid, &got), 0);
    assert_true(corun_cpuset_equal(&got, &orig));
    /* The entry is gone: a second replay sees nothing. */
    s.n = 0;
    assert_int_equal(corun_act_restore_journal(&o, on_entry, &s), 0);
    assert_int_equal(s.n, 0);
    kid_stop(&k);
    corun_cpuset_release(&one);
    corun_cpuset_release(&orig);
    corun_cpuset_release(&got);
}

/* An entry whose PID now names another process (different start time) is
 * dropped without touching that process; an unreadable entry is kept. */
static void test_replay_recycled_pid(void **state)
{
    struct corun_act_opts o = {.journal_dir = dir};
    struct corun_journal_entry e = {0};
    struct corun_cpuset before = {0}, got = {0};
    struct kid k = kid_start(0);
    struct seen s = {0};
    unsigned long long start;
    char path[256];

    assert_int_equal(corun__mask_get(k.pid, &before), 0);
    assert_int_equal(corun_proc_start_time(NULL, k.pid, &start), 0);
    e.pid = k.pid;
    e.start_time = start + 1;
    snprintf(e.backend, sizeof(e.backend), "affinity");
    assert_int_equal(corun_cpuset_parse(&e.cpus, "0", NULL), 0);
    assert_int_equal(corun_journal_write(dir, &e), 0);
    snprintf(path, sizeof(path), "%s/junk.journal", dir);
    write_file(path, "not a journal\n");
    assert_int_equal(corun_act_restore_journal(&o, on_entry, &s), -EINVAL);
    assert_int_equal(s.n, 2);
    assert_true((s.err[0] == -ESRCH && s.err[1] == -EINVAL) ||
                (s.err[1] == -ESRCH && s.err[0] == -EINVAL));
    assert_int_equal(corun__mask_get(k.pid, &got), 0);
    assert_true(corun_cpuset_equal(&got, &before));
    assert_int_equal(access(path, F_OK), 0); /* kept for a human to look at */
    unlink(path);
    kid_stop(&k);
    corun_journal_entry_release(&e);
    corun_cpuset_release(&before);
    corun_cpuset_release(&got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),          cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_start_time),          cmocka_unit_test(test_replay_after_crash),
        cmocka_unit_test(test_replay_recycled_pid),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
