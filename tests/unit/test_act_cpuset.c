/*
 * test_act_cpuset.c — the cpuset actuator's cgroup v2 path, which this
 * project's machines (v1 cpuset) cannot run live: a recorded tree stands in
 * for /proc and /sys/fs/cgroup through the root seam (mountinfo with a
 * cgroup2 mount offering cpuset, the process's cgroup file, its threads),
 * while the process, its pidfd and its affinities are real. The files
 * corun writes are checked: +cpuset enabled on the way down, the task
 * cgroup's cpus, the move, and the move back on restore, but not of a
 * process its owner moved out of corun's cgroup since. (A recorded tree
 * cannot remove a cgroup directory holding files, so the final rmdir is
 * expected to fail here; the live v1 path is covered by
 * tests/integration/cpuset_cli.sh.) Also: probe's reason with no cpuset
 * hierarchy at all.
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

static char root[] = "/tmp/corun-test-cpuset-XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[512], cmd[700];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void get(const char *rel, char *buf, size_t len)
{
    char path[512];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Records process @pid (real) in the tree: stat, comm, cgroup, threads. */
static unsigned long long record_proc(pid_t pid)
{
    char rel[128], stat[1024], src[64], cmd[600];
    pid_t tids[16];
    int n = kid_threads(pid, tids, 16);
    unsigned long long start;
    FILE *f;
    size_t got;

    snprintf(src, sizeof(src), "/proc/%d/stat", (int)pid);
    f = fopen(src, "r");
    assert_non_null(f);
    got = fread(stat, 1, sizeof(stat) - 1, f);
    stat[got] = '\0';
    fclose(f);
    snprintf(rel, sizeof(rel), "proc/%d/stat", (int)pid);
    put(rel, stat);
    snprintf(rel, sizeof(rel), "proc/%d/comm", (int)pid);
    put(rel, "kid\n");
    snprintf(rel, sizeof(rel), "proc/%d/cgroup", (int)pid);
    put(rel, "0::/user.slice\n");
    for (int i = 0; i < n; i++) {
        snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/%d/task/%d", root, (int)pid, (int)tids[i]);
        assert_int_equal(system(cmd), 0);
    }
    assert_int_equal(corun_proc_start_time(root, pid, &start), 0);
    return start;
}

/* A fresh recorded tree at @root: a v1 cpuset mount beside a v2 one that
 * offers cpuset (v2 wins), process @pid in user.slice, and the files corun
 * writes; @pid's start time. */
static unsigned long long make_tree(pid_t pid)
{
    char rel[256];
    unsigned long long start;

    strcpy(root + strlen(root) - 6, "XXXXXX");
    assert_non_null(mkdtemp(root));
    put("proc/self/mountinfo",
        "22 1 0:20 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
        "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
    put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
    put("sys/fs/cgroup/cgroup.subtree_control", "");
    put("sys/fs/cgroup/user.slice/cgroup.procs", "");
    start = record_proc(pid);
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cpuset.cpus", (int)pid, start);
    put(rel, "");
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cgroup.procs", (int)pid, start);
    put(rel, "");
    put("sys/fs/cgroup/corun/cgroup.subtree_control", "");
    return start;
}

/* migrate_pages through the seam: the pids asked for, in order. */
static pid_t mp_pid[8];
static unsigned mp_calls;
static long fake_migrate_pages(pid_t pid, unsigned long maxnode, const unsigned long *from,
                               const unsigned long *to)
{
    (void)maxnode;
    (void)from;
    (void)to;
    if (mp_calls < 8)
        mp_pid[mp_calls] = pid;
    mp_calls++;
    return 0;
}

static void test_v2_recorded(void **state)
{
    struct corun_act_opts o = {.root = root};
    struct corun_cpuset one = {0}, orig = {0}, got = {0};
    struct kid k = kid_start(2);
    unsigned long long start;
    char rel[256], buf[256], why[256], pid[32];
    void *st;

    start = make_tree(k.pid);

    assert_int_equal(corun_act_cpuset.probe(&o, why, sizeof(why)), 0);
    assert_int_equal(corun__mask_get(k.pid, &orig), 0);
    assert_int_equal(corun_cpuset_parse(&one, "0", NULL), 0);
    assert_int_equal(corun_act_cpuset.open(&o, &st), 0);
    assert_int_equal(corun_act_cpuset.apply(st, k.pid, &one), 0);
    get("sys/fs/cgroup/cgroup.subtree_control", buf, sizeof(buf));
    assert_string_equal(buf, "+cpuset");
    get("sys/fs/cgroup/corun/cgroup.subtree_control", buf, sizeof(buf));
    assert_string_equal(buf, "+cpuset");
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cpuset.cpus", (int)k.pid, start);
    get(rel, buf, sizeof(buf));
    assert_string_equal(buf, "0");
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cgroup.procs", (int)k.pid, start);
    get(rel, buf, sizeof(buf));
    snprintf(pid, sizeof(pid), "%d", (int)k.pid);
    assert_string_equal(buf, pid);
    /* A second apply only changes the task cgroup's cpus. */
    assert_int_equal(corun_cpuset_parse(&one, "0-1", NULL), 0);
    assert_int_equal(corun_act_cpuset.apply(st, k.pid, &one), 0);
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cpuset.cpus", (int)k.pid, start);
    get(rel, buf, sizeof(buf));
    assert_string_equal(buf, "0-1");
    /* Its memory to node 1 on a two-node machine: the process, then what
     * it started since, which lives in its task cgroup (children follow). */
    put("sys/devices/system/node/online", "0-1\n");
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cgroup.procs", (int)k.pid, start);
    snprintf(buf, sizeof(buf), "%d\n4242\n4243\n", (int)k.pid);
    put(rel, buf);
    corun__sys.migrate_pages = fake_migrate_pages;
    assert_int_equal(corun_act_cpuset.move_memory(st, k.pid, 1), 0);
    corun__sys_reset();
    assert_int_equal(mp_calls, 3);
    assert_int_equal(mp_pid[0], k.pid);
    assert_int_equal(mp_pid[1], 4242);
    assert_int_equal(mp_pid[2], 4243);
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cgroup.procs", (int)k.pid, start);
    snprintf(buf, sizeof(buf), "%d", (int)k.pid);
    put(rel, buf);
    /* Restore: back to user.slice, affinities back; rmdir fails in a tree. */
    assert_int_not_equal(corun_act_cpuset.restore(st, k.pid), 0);
    get("sys/fs/cgroup/user.slice/cgroup.procs", buf, sizeof(buf));
    assert_string_equal(buf, pid);
    assert_int_equal(corun__mask_get(k.pid, &got), 0);
    assert_true(corun_cpuset_equal(&got, &orig));
    corun_act_cpuset.close(st);
    kid_stop(&k);
    corun_cpuset_release(&one);
    corun_cpuset_release(&orig);
    corun_cpuset_release(&got);
    snprintf(buf, sizeof(buf), "rm -rf %s", root);
    assert_int_equal(system(buf), 0);
}

/*
 * Its owner moves a placed process out of corun's cgroup (a container
 * manager, a user's echo into cgroup.procs): the next apply is -EBUSY and
 * writes nothing, and restore leaves the process where its owner put it
 * rather than move it back to the cgroup it came from.
 */
static void test_owner_moved_it(void **state)
{
    struct corun_act_opts o = {.root = root};
    struct corun_cpuset one = {0};
    struct kid k = kid_start(1);
    unsigned long long start;
    char rel[256], buf[256], pid[32];
    void *st;

    start = make_tree(k.pid);
    snprintf(pid, sizeof(pid), "%d", (int)k.pid);

    assert_int_equal(corun_cpuset_parse(&one, "0", NULL), 0);
    assert_int_equal(corun_act_cpuset.open(&o, &st), 0);
    assert_int_equal(corun_act_cpuset.apply(st, k.pid, &one), 0);
    /* Its owner moves it to a cgroup of theirs. */
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cgroup.procs", (int)k.pid, start);
    put(rel, "");
    put("sys/fs/cgroup/theirs/cgroup.procs", pid);
    assert_int_equal(corun_cpuset_parse(&one, "0-1", NULL), 0);
    assert_int_equal(corun_act_cpuset.apply(st, k.pid, &one), -EBUSY);
    snprintf(rel, sizeof(rel), "sys/fs/cgroup/corun/%d-%llu/cpuset.cpus", (int)k.pid, start);
    get(rel, buf, sizeof(buf));
    assert_string_equal(buf, "0");
    /* Restore (the rmdir fails in a tree) moves nothing back. */
    corun_act_cpuset.restore(st, k.pid);
    get("sys/fs/cgroup/user.slice/cgroup.procs", buf, sizeof(buf));
    assert_string_equal(buf, "");
    get("sys/fs/cgroup/theirs/cgroup.procs", buf, sizeof(buf));
    assert_string_equal(buf, pid);
    corun_act_cpuset.close(st);
    kid_stop(&k);
    corun_cpuset_release(&one);
    snprintf(buf, sizeof(buf), "rm -rf %s", root);
    assert_int_equal(system(buf), 0);
}

static void test_no_hierarchy(void **state)
{
    char tree[] = "/tmp/corun-test-nocg-XXXXXX", path[256], why[256] = "", cmd[300];
    struct corun_act_opts o = {.root = tree};
    void *st;
    FILE *f;

    assert_non_null(mkdtemp(tree));
    snprintf(path, sizeof(path), "%s/proc/self", tree);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/proc/self/mountinfo", tree);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("22 1 0:20 / / rw - ext4 /dev/vda1 rw\n", f);
    fclose(f);
    assert_int_equal(corun_act_cpuset.probe(&o, why, sizeof(why)), -ENOTSUP);
    assert_non_null(strstr(why, "cpuset"));
    assert_int_equal(corun_act_cpuset.open(&o, &st), -ENOTSUP);
    snprintf(path, sizeof(path), "rm -rf %s", tree);
    assert_int_equal(system(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2_recorded),
        cmocka_unit_test(test_owner_moved_it),
        cmocka_unit_test(test_no_hierarchy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
