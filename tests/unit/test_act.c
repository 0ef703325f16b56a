/*
 * test_act.c — the affinity and dryrun actuators on real processes: every
 * thread placed, threads born later picked up by the next apply, each
 * thread's own original mask restored, a thread whose owner set its mask
 * after corun's left to its owner by later applies, the journal written and removed,
 * masks beyond 1024 CPUs, and failures injected through corun__sys
 * (EPERM, ESRCH on one thread, pidfd_open failing) that return an error for
 * that process and nothing else; moving a process's memory to a node
 * (migrate_pages through the seam, the nodes from a recorded sysfs).
 */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "act/act-internal.h"
#include "common/sys.h"
#include "corun/act.h"
#include "kid.h"

static char jdir[] = "/tmp/corun-test-act-XXXXXX";
static int ncpus;

static int setup(void **state)
{
    cpu_set_t m;

    if (!mkdtemp(jdir))
        return -1;
    sched_getaffinity(0, sizeof(m), &m);
    ncpus = CPU_COUNT(&m);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", jdir);
    return system(cmd) == 0 ? 0 : -1;
}

static unsigned journal_entries(void)
{
    struct dirent *d;
    unsigned n = 0;
    DIR *dir = opendir(jdir);

    while (dir && (d = readdir(dir)))
        n += strstr(d->d_name, ".journal") != NULL;
    if (dir)
        closedir(dir);
    return n;
}

static void set_of(struct corun_cpuset *s, const char *list)
{
    assert_int_equal(corun_cpuset_parse(s, list, NULL), 0);
}

/* Asserts every thread of @pid has exactly @want. */
static void expect_threads(pid_t pid, const struct corun_cpuset *want)
{
    pid_t tids[64];
    int n = kid_threads(pid, tids, 64);

    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        struct corun_cpuset got = {0};

        assert_int_equal(corun__mask_get(tids[i], &got), 0);
        if (!corun_cpuset_equal(&got, want)) {
            char a[64], b[64];

            corun_cpuset_format(&got, a, sizeof(a));
            corun_cpuset_format(want, b, sizeof(b));
            fail_msg("thread %d of %d: CPUs %s, want %s", (int)tids[i], (int)pid, a, b);
        }
        corun_cpuset_release(&got);
    }
}

static void test_apply_restore_rescan(void **state)
{
    struct corun_act_opts o = {.journal_dir = jdir};
    struct corun_cpuset one = {0}, orig = {0};
    struct kid k = kid_start(3);
    void *st;

    assert_int_equal(corun__mask_get(k.pid, &orig), 0);
    set_of(&one, ncpus > 1 ? "1" : "0");
    assert_int_equal(corun_act_affinity.open(&o, &st), 0);
    /* Already there: nothing to change, nothing journaled. */
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &orig), 0);
    assert_int_equal(journal_entries(), 0);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), 0);
    expect_threads(k.pid, &one);
    assert_int_equal(journal_entries(), 1);
    /* A thread that widened itself since is placed again by the next apply. */
    kid_new_thread(&k);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), 0);
    expect_threads(k.pid, &one);
    assert_int_equal(corun_act_affinity.restore(st, k.pid), 0);
    expect_threads(k.pid, &orig);
    assert_int_equal(journal_entries(), 0);
    corun_act_affinity.close(st);
    kid_stop(&k);
    corun_cpuset_release(&one);
    corun_cpuset_release(&orig);
}

/* A thread with its own narrower mask gets that mask back, not the process's. */
static void test_per_thread_originals(void **state)
{
    struct corun_act_opts o = {.journal_dir = jdir};
    struct corun_cpuset c0 = {0}, c1 = {0}, got = {0};
    struct kid k;
    pid_t special;
    void *st;

    if (ncpus < 2)
        skip();
    k = kid_start(2);
    set_of(&c0, "0");
    set_of(&c1, "1");
    special = k.tids[0];
    assert_int_equal(corun__mask_set(special, &c0), 0);
    assert_int_equal(corun_act_affinity.open(&o, &st), 0);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &c1), 0);
    expect_threads(k.pid, &c1);
    assert_int_equal(corun_act_affinity.restore_all(st), 0);
    assert_int_equal(corun__mask_get(special, &got), 0);
    assert_true(corun_cpuset_equal(&got, &c0));
    assert_int_equal(corun__mask_get(k.pid, &got), 0);
    assert_int_equal(corun_cpuset_count(&got), (unsigned)ncpus);
    corun_act_affinity.close(st);
    kid_stop(&k);
    corun_cpuset_release(&c0);
    corun_cpuset_release(&c1);
    corun_cpuset_release(&got);
}

/*
 * A thread corun placed whose owner set another mask since keeps the
 * owner's mask at the next apply (the daemon's scan may come before the
 * owner's taskset and the move after it); the others, and a thread born
 * since, are placed. Once its owner has every thread, apply is -EBUSY and
 * changes nothing, and restore leaves the owner's masks.
 */
static void test_owner_changed_since(void **state)
{
    struct corun_act_opts o = {.journal_dir = jdir};
    struct corun_cpuset c0 = {0}, c1 = {0}, all = {0}, got = {0};
    struct kid k;
    pid_t tids[64];
    int n;
    void *st;

    if (ncpus < 2)
        skip();
    k = kid_start(2);
    set_of(&c0, "0");
    set_of(&c1, "1");
    assert_int_equal(corun__mask_get(k.pid, &all), 0);
    assert_int_equal(corun_act_affinity.open(&o, &st), 0);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &c0), 0);
    expect_threads(k.pid, &c0);
    /* Its owner widens one thread; corun moves the process. */
    assert_int_equal(corun__mask_set(k.tids[0], &all), 0);
    kid_new_thread(&k);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &c1), 0);
    assert_int_equal(corun__mask_get(k.tids[0], &got), 0);
    assert_true(corun_cpuset_equal(&got, &all));
    assert_int_equal(corun__mask_get(k.pid, &got), 0);
    assert_true(corun_cpuset_equal(&got, &c1));
    assert_int_equal(corun__mask_get(k.tids[2], &got), 0); /* born since: placed */
    assert_true(corun_cpuset_equal(&got, &c1));
    /* Asked again, the owner's thread stays theirs. */
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &c0), 0);
    assert_int_equal(corun__mask_get(k.tids[0], &got), 0);
    assert_true(corun_cpuset_equal(&got, &all));
    /* Its owner takes every thread (taskset -a): nothing is corun's. */
    n = kid_threads(k.pid, tids, 64);
    for (int i = 0; i < n; i++)
        assert_int_equal(corun__mask_set(tids[i], &c1), 0);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &c0), -EBUSY);
    expect_threads(k.pid, &c1);
    assert_int_equal(corun_act_affinity.restore(st, k.pid), 0);
    expect_threads(k.pid, &c1);
    assert_int_equal(journal_entries(), 0);
    corun_act_affinity.close(st);
    kid_stop(&k);
    corun_cpuset_release(&c0);
    corun_cpuset_release(&c1);
    corun_cpuset_release(&all);
    corun_cpuset_release(&got);
}

static int fail_errno, fail_nth, calls;
static int fake_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    calls++;
    if (!fail_nth || calls == fail_nth) {
        errno = fail_errno;
        return -1;
    }
    return sched_setaffinity(pid, size, mask);
}
static int fake_pidfd_open(pid_t pid, unsigned flags)
{
    errno = ESRCH;
    return -1;
}

static void test_faults(void **state)
{
    struct corun_act_opts o = {.journal_dir = jdir};
    struct corun_cpuset one = {0}, orig = {0};
    struct kid k = kid_start(2);
    void *st;

    assert_int_equal(corun__mask_get(k.pid, &orig), 0);
    set_of(&one, "0");
    assert_int_equal(corun_act_affinity.open(&o, &st), 0);

    /* EPERM on every call: an error for this process, nothing changed. */
    corun__sys.sched_setaffinity = fake_setaffinity;
    fail_errno = EPERM;
    fail_nth = 0;
    calls = 0;
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), -EPERM);
    corun__sys_reset();
    expect_threads(k.pid, &orig);
    assert_int_equal(corun_act_affinity.restore_all(st), 0);
    assert_int_equal(journal_entries(), 0);

    /* ESRCH for one thread (it "exited"): the others are placed. */
    corun__sys.sched_setaffinity = fake_setaffinity;
    fail_errno = ESRCH;
    fail_nth = 2;
    calls = 0;
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), 0);
    corun__sys_reset();
    assert_int_equal(corun_act_affinity.restore_all(st), 0);

    /* pidfd_open failing: the process is treated as gone, no journal. */
    corun__sys.pidfd_open = fake_pidfd_open;
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), -ESRCH);
    corun__sys_reset();
    assert_int_equal(journal_entries(), 0);
    expect_threads(k.pid, &orig);

    /* An exited (zombie) process is ESRCH, never touched. */
    kill(k.pid, SIGKILL);
    {
        siginfo_t si;

        waitid(P_PID, (id_t)k.pid, &si, WEXITED | WNOWAIT);
    }
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), -ESRCH);
    assert_int_equal(journal_entries(), 0);
    corun_act_affinity.close(st);
    kid_stop(&k);
    corun_cpuset_release(&one);
    corun_cpuset_release(&orig);
}

/* A kernel with 2048 possible CPUs: masks smaller than 256 bytes are EINVAL. */
static size_t last_size;
static int big_bit;
static int big_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
    if (size < 256) {
        errno = EINVAL;
        return -1;
    }
    memset(mask, 0, size);
    CPU_SET_S(1500, size, mask);
    CPU_SET_S(3, size, mask);
    return (int)size;
}
static int big_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    last_size = size;
    big_bit = CPU_ISSET_S(1500, size, mask);
    return 0;
}

static void test_big_masks(void **state)
{
    struct corun_cpuset s = {0};
    char list[64];

    corun__sys.sched_getaffinity = big_getaffinity;
    corun__sys.sched_setaffinity = big_setaffinity;
    assert_int_equal(corun__mask_get(getpid(), &s), 0);
    corun_cpuset_format(&s, list, sizeof(list));
    assert_string_equal(list, "3,1500");
    assert_int_equal(corun__mask_set(getpid(), &s), 0);
    assert_true(last_size >= CPU_ALLOC_SIZE(1501));
    assert_true(big_bit);
    corun__sys_reset();
    corun_cpuset_release(&s);
}

static void test_dryrun_and_find(void **state)
{
    struct corun_act_opts o = {.journal_dir = jdir};
    struct corun_cpuset one = {0}, orig = {0};
    struct kid k = kid_start(1);
    void *st;

    assert_ptr_equal(corun_act_find("affinity"), &corun_act_affinity);
    assert_ptr_equal(corun_act_find("cpuset"), &corun_act_cpuset);
    assert_ptr_equal(corun_act_find("dryrun"), &corun_act_dryrun);
    assert_null(corun_act_find("nosuch"));
    assert_int_equal(corun__mask_get(k.pid, &orig), 0);
    set_of(&one, "0");
    assert_int_equal(corun_act_dryrun.open(&o, &st), 0);
    assert_int_equal(corun_act_dryrun.apply(st, k.pid, &one), 0);
    expect_threads(k.pid, &orig);
    assert_int_equal(journal_entries(), 0);
    assert_int_equal(corun_act_dryrun.apply(st, k.pid, NULL), -EINVAL);
    assert_int_equal(corun_act_dryrun.restore_all(st), 0);
    corun_act_dryrun.close(st);
    kid_stop(&k);
    corun_cpuset_release(&one);
    corun_cpuset_release(&orig);
}

/* Two instances placing the same process: the second keeps the first's
 * record of the original, so either one's restore puts back the truth. */
static void test_second_instance_adopts_original(void **state)
{
    struct corun_act_opts o = {.journal_dir = jdir};
    struct corun_cpuset c0 = {0}, c1 = {0}, orig = {0};
    struct kid k = kid_start(1);
    void *a, *b;

    assert_int_equal(corun__mask_get(k.pid, &orig), 0);
    set_of(&c0, "0");
    set_of(&c1, ncpus > 1 ? "1" : "0");
    assert_int_equal(corun_act_affinity.open(&o, &a), 0);
    assert_int_equal(corun_act_affinity.open(&o, &b), 0);
    assert_int_equal(corun_act_affinity.apply(a, k.pid, &c1), 0);
    assert_int_equal(corun_act_affinity.apply(b, k.pid, &c0), 0);
    expect_threads(k.pid, &c0);
    assert_int_equal(journal_entries(), 1);
    assert_int_equal(corun_act_affinity.restore(b, k.pid), 0);
    expect_threads(k.pid, &orig);
    corun_act_affinity.close(a);
    corun_act_affinity.close(b);
    kid_stop(&k);
    corun_cpuset_release(&c0);
    corun_cpuset_release(&c1);
    corun_cpuset_release(&orig);
}

/* migrate_pages as the kernel would see it. */
static struct {
    unsigned calls;
    pid_t pid;
    unsigned long maxnode, from, to;
    long ret;
    int err;
} mp;
static long fake_migrate_pages(pid_t pid, unsigned long maxnode, const unsigned long *from,
                               const unsigned long *to)
{
    mp.calls++;
    mp.pid = pid;
    mp.maxnode = maxnode;
    mp.from = from[0];
    mp.to = to[0];
    errno = mp.err;
    return mp.ret;
}

/* A root whose proc is the live one and whose sysfs says nodes @online are
 * online (NULL: no node directory, a kernel without NUMA). */
static void fake_root(char *dir, const char *online)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc", dir);
    assert_int_equal(symlink("/proc", path), 0);
    if (!online)
        return;
    snprintf(path, sizeof(path), "mkdir -p %s/sys/devices/system/node", dir);
    assert_int_equal(system(path), 0);
    snprintf(path, sizeof(path), "%s/sys/devices/system/node/online", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", online);
    fclose(f);
}

static void test_move_memory(void **state)
{
    char two[] = "/tmp/corun-test-numa-XXXXXX", none[] = "/tmp/corun-test-numa-XXXXXX";
    struct corun_act_opts live = {0}, o2 = {.root = two}, o0 = {.root = none};
    struct corun_cpuset one = {0};
    struct kid k = kid_start(1);
    char cmd[128];
    void *st;

    set_of(&one, "0");
    assert_non_null(mkdtemp(two));
    assert_non_null(mkdtemp(none));
    fake_root(two, "0-1");
    fake_root(none, NULL);

    /* This machine, for real: a process we placed, its memory to node 0. */
    assert_int_equal(corun_act_affinity.open(&live, &st), 0);
    assert_int_equal(corun_act_affinity.move_memory(st, k.pid, 0), -ESRCH); /* not ours yet */
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), 0);
    assert_int_equal(corun_act_affinity.move_memory(st, k.pid, 0), 0);
    assert_int_equal(corun_act_affinity.restore_all(st), 0);
    corun_act_affinity.close(st);

    /* Two nodes: every page off node 1 moves there; the kernel counts the
     * mask bits plus one. */
    corun__sys.migrate_pages = fake_migrate_pages;
    assert_int_equal(corun_act_affinity.open(&o2, &st), 0);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), 0);
    memset(&mp, 0, sizeof(mp));
    assert_int_equal(corun_act_affinity.move_memory(st, k.pid, 1), 0);
    assert_int_equal(mp.calls, 1);
    assert_int_equal(mp.pid, k.pid);
    assert_int_equal(mp.maxnode, 1025);
    assert_int_equal(mp.from, 1ul << 0);
    assert_int_equal(mp.to, 1ul << 1);
    /* Pages that could not move are not an error. */
    mp.ret = 7;
    assert_int_equal(corun_act_affinity.move_memory(st, k.pid, 0), 0);
    assert_int_equal(mp.from, 1ul << 1);
    /* A node that is not online is refused before the kernel is asked. */
    mp.calls = 0;
    assert_int_equal(corun_act_affinity.move_memory(st, k.pid, 3), -EINVAL);
    assert_int_equal(mp.calls, 0);
    /* The kernel's refusal comes back as it is. */
    mp.ret = -1;
    mp.err = EPERM;
    assert_int_equal(corun_act_affinity.move_memory(st, k.pid, 1), -EPERM);
    assert_int_equal(corun_act_affinity.restore_all(st), 0);
    corun_act_affinity.close(st);

    /* No node directory: the kernel has no NUMA support. */
    assert_int_equal(corun_act_affinity.open(&o0, &st), 0);
    assert_int_equal(corun_act_affinity.apply(st, k.pid, &one), 0);
    mp.calls = 0;
    assert_int_equal(corun_act_affinity.move_memory(st, k.pid, 0), -ENOSYS);
    assert_int_equal(mp.calls, 0);
    assert_int_equal(corun_act_affinity.restore_all(st), 0);
    corun_act_affinity.close(st);
    corun__sys_reset();

    /* The dry run says what it would do and changes nothing. */
    assert_int_equal(corun_act_dryrun.open(&live, &st), 0);
    assert_int_equal(corun_act_dryrun.move_memory(st, k.pid, 1), 0);
    corun_act_dryrun.close(st);

    kid_stop(&k);
    corun_cpuset_release(&one);
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s", two, none);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_restore_rescan),
        cmocka_unit_test(test_per_thread_originals),
        cmocka_unit_test(test_owner_changed_since),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_big_masks),
        cmocka_unit_test(test_dryrun_and_find),
        cmocka_unit_test(test_second_instance_adopts_original),
        cmocka_unit_test(test_move_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
