/*
 * test_procsel.c — the process selector on a recorded /proc tree
 * (tests/fixtures/proc-root, see its README): each rule alone and together,
 * kernel threads and corun itself never selected, pinning by an owner
 * respected unless told otherwise, CPU use measured over an interval on a
 * tree the test writes and changes between two scans, and the scheduler's
 * figures of one process (time run and waited, summed over its threads).
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sys.h"
#include "corun/procsel.h"

#define MAXP 32

/* Scans the fixture with @o (root filled in) and writes the selected pids,
 * ascending, into @pids; returns how many. */
static size_t scan_pids(struct corun_procsel_opts *o, pid_t *pids)
{
    struct corun_procsel *s = NULL;
    struct corun_proc_info *v = NULL;
    size_t n = 0;

    o->root = fixture("proc-root");
    assert_int_equal(corun_procsel_open(o, &s), 0);
    assert_int_equal(corun_procsel_scan(s, 1000000000ull, false, &v, &n), 0);
    assert_true(n <= MAXP);
    for (size_t i = 0; i < n; i++) {
        pids[i] = v[i].pid;
        assert_int_equal(v[i].verdict, CORUN_PROCSEL_SELECTED);
        if (i)
            assert_true(pids[i - 1] < pids[i]);
    }
    free(v);
    corun_procsel_close(s);
    return n;
}

#define EXPECT_PIDS(o, ...)                                                                        \
    do {                                                                                           \
        pid_t want_[] = {__VA_ARGS__}, got_[MAXP];                                                 \
        size_t n_ = scan_pids(o, got_);                                                            \
        assert_int_equal(n_, sizeof(want_) / sizeof(want_[0]));                                    \
        for (size_t i_ = 0; i_ < n_; i_++)                                                         \
            assert_int_equal(got_[i_], want_[i_]);                                                 \
    } while (0)

static void test_comm_glob(void **state)
{
    const char *sleep_[] = {"sleep"}, *py[] = {"py*"}, *odd[] = {"my (odd)*"};
    const char *two[] = {"python?", "systemd"};
    struct corun_procsel_opts o = {.comms = sleep_, .ncomms = 1, .self = 105};

    /* 102 is pinned by its owner, 104 is not (its cpuset allows only 2-3). */
    EXPECT_PIDS(&o, 100, 104);
    o.comms = py;
    EXPECT_PIDS(&o, 101);
    o.comms = odd;
    EXPECT_PIDS(&o, 103);
    o.comms = two;
    o.ncomms = 2;
    EXPECT_PIDS(&o, 1, 101);
}

static void test_kernel_threads_and_self_never(void **state)
{
    const char *all[] = {"*"};
    struct corun_procsel_opts o = {.comms = all, .ncomms = 1, .self = 105, .include_pinned = true};

    /* 2, 3 (PF_KTHREAD) and 50 (ppid 2, empty cmdline) are kernel threads;
     * 105 is corun. */
    EXPECT_PIDS(&o, 1, 100, 101, 102, 103, 104);
    o.self = 0;
    EXPECT_PIDS(&o, 1, 100, 101, 102, 103, 104, 105);
}

static void test_user_and_cgroup(void **state)
{
    uid_t u1000[] = {1000}, both[] = {1000, 1002};
    const char *web[] = {"/system.slice/web.service/"}, *slice[] = {"/system.slice"};
    const char *u1000slice[] = {"/user.slice/user-1000.slice"}, *sleep_[] = {"sleep"};
    const char *partial[] = {"/user.slice/user-10"};
    struct corun_procsel_opts o = {.uids = u1000, .nuids = 1, .self = 105};

    EXPECT_PIDS(&o, 100, 101, 103);
    o.uids = both;
    o.nuids = 2;
    EXPECT_PIDS(&o, 100, 101, 103, 104);
    /* Kinds combine with "and": sleep processes of uid 1000 or 1002. */
    o.comms = sleep_;
    o.ncomms = 1;
    EXPECT_PIDS(&o, 100, 104);

    memset(&o, 0, sizeof(o));
    o.self = 105;
    o.cgroups = web; /* a trailing slash is the same cgroup */
    o.ncgroups = 1;
    EXPECT_PIDS(&o, 101);
    o.cgroups = slice; /* below it, in any hierarchy; corun itself excluded */
    EXPECT_PIDS(&o, 101);
    o.cgroups = u1000slice;
    EXPECT_PIDS(&o, 100, 103);
    /* A path matches whole components only: "user-10" is not "user-1000". */
    o.cgroups = partial;
    {
        pid_t got[MAXP];

        assert_int_equal(scan_pids(&o, got), 0);
    }
}

static bool claim_102(void *user, pid_t pid, uint64_t start, const struct corun_cpuset *allowed)
{
    int *calls = user;

    (*calls)++;
    /* The daemon claims the mask only when it is the one it set: CPU 1. */
    return pid == 102 && start == 1200 && corun_cpuset_isset(allowed, 1) &&
           corun_cpuset_count(allowed) == 1;
}

static void test_pinned(void **state)
{
    const char *sleep_[] = {"sleep"};
    int calls = 0;
    struct corun_procsel_opts o = {.comms = sleep_, .ncomms = 1, .include_pinned = true};

    EXPECT_PIDS(&o, 100, 102, 104);
    o.include_pinned = false;
    o.is_ours = claim_102;
    o.user = &calls;
    EXPECT_PIDS(&o, 100, 102, 104);
    /* Asked about 102 only, the one found pinned: on a recorded tree the
     * others' masks are not asked of (on the live root they would be, for
     * a mask corun set that its owner widened). */
    assert_int_equal(calls, 1);
}

/* The CPU a process last ran on, read now (a scan refreshes it only on its
 * full pass); a start time that is not the process's means the pid was
 * reused; a missing process is gone. */
static void test_last_cpu(void **state)
{
    struct corun_procsel_opts o = {.root = fixture("proc-root")};
    struct corun_procsel *s = NULL;
    int cpu = -2;

    assert_int_equal(corun_procsel_open(&o, &s), 0);
    assert_int_equal(corun_procsel_last_cpu(s, 100, 1000, &cpu), 0);
    assert_int_equal(cpu, 1);
    assert_int_equal(corun_procsel_last_cpu(s, 100, 999, &cpu), -ESRCH);
    assert_int_equal(corun_procsel_last_cpu(s, 4242, 1000, &cpu), -ESRCH);
    corun_procsel_close(s);
}

static void test_all_reports_verdicts(void **state)
{
    const char *sleep_[] = {"sleep"};
    struct corun_procsel_opts o = {
        .comms = sleep_, .ncomms = 1, .self = 105, .root = fixture("proc-root")};
    struct corun_procsel *s = NULL;
    struct corun_proc_info *v = NULL;
    size_t n = 0;

    assert_int_equal(corun_procsel_open(&o, &s), 0);
    assert_int_equal(corun_procsel_scan(s, 1, true, &v, &n), 0);
    assert_int_equal(n, 7); /* every process but the three kernel threads */
    for (size_t i = 0; i < n; i++) {
        switch (v[i].pid) {
        case 100:
        case 104:
            assert_int_equal(v[i].verdict, CORUN_PROCSEL_SELECTED);
            break;
        case 102:
            assert_int_equal(v[i].verdict, CORUN_PROCSEL_PINNED);
            assert_true(v[i].pinned);
            assert_int_equal(v[i].uid, 1001);
            break;
        case 105:
            assert_int_equal(v[i].verdict, CORUN_PROCSEL_SELF);
            break;
        case 101:
            assert_int_equal(v[i].verdict, CORUN_PROCSEL_NO_MATCH);
            assert_string_equal(v[i].comm, "python3");
            assert_int_equal(v[i].nthreads, 4);
            assert_int_equal(v[i].last_cpu, 2);
            assert_int_equal(v[i].start_ticks, 1100);
            assert_int_equal(v[i].cpu_ticks, 1000);
            assert_int_equal(v[i].ppid, 1);
            assert_true(isnan(v[i].cpu_percent)); /* first sight */
            break;
        case 103:
            assert_string_equal(v[i].comm, "my (odd) name");
            break;
        case 1:
            break;
        default:
            fail_msg("unexpected pid %d", (int)v[i].pid);
        }
        assert_false(v[i].pid == 104 && v[i].pinned);
    }
    assert_string_equal(corun_procsel_verdict_name(CORUN_PROCSEL_PINNED), "pinned by its owner");
    free(v);
    corun_procsel_close(s);
}

/* ---- CPU use over an interval, on a tree written here ---------------------- */

static void put(const char *root, const char *rel, const char *text)
{
    char path[512];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* /proc/PID/stat of a process of @threads threads that last ran on CPU 0. */
static void put_stat_threads(const char *root, int pid, unsigned long utime, unsigned threads)
{
    char rel[64], text[512];

    snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
    snprintf(text, sizeof(text),
             "%d (busy) R 1 %d %d 0 -1 4194304 0 0 0 0 %lu 0 0 0 20 0 %u 0 5000 0 0 0 0 0 0 0 0 "
             "0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
             pid, pid, pid, utime, threads);
    put(root, rel, text);
}

static void put_stat(const char *root, int pid, unsigned long utime)
{
    put_stat_threads(root, pid, utime, 1);
}

static void test_min_cpu_over_interval(void **state)
{
    char root[] = "/tmp/corun-procsel-XXXXXX", path[512];
    struct corun_procsel_opts o = {.min_cpu_percent = 30};
    struct corun_procsel *s = NULL;
    struct corun_proc_info *v = NULL;
    long tck = sysconf(_SC_CLK_TCK);
    size_t n = 0;

    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof(path), "%s/proc", root);
    assert_int_equal(mkdir(path, 0755), 0);
    for (int pid = 400; pid <= 401; pid++) {
        char rel[64];

        snprintf(path, sizeof(path), "%s/proc/%d", root, pid);
        assert_int_equal(mkdir(path, 0755), 0);
        put_stat(root, pid, 0);
        snprintf(rel, sizeof(rel), "proc/%d/status", pid);
        put(root, rel, "Uid:\t1000\t1000\t1000\t1000\nCpus_allowed_list:\t0-3\n");
        snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
        put(root, rel, "0::/\n");
        snprintf(rel, sizeof(rel), "proc/%d/cmdline", pid);
        put(root, rel, "busy\n");
    }
    /* A pid whose files vanished (it exited mid-scan) is skipped quietly. */
    snprintf(path, sizeof(path), "%s/proc/402", root);
    assert_int_equal(mkdir(path, 0755), 0);
    o.root = root;
    assert_int_equal(corun_procsel_open(&o, &s), 0);
    assert_int_equal(corun_procsel_scan(s, 1000000000ull, false, &v, &n), 0);
    assert_int_equal(n, 0); /* no interval yet: nothing measured */
    free(v);
    /* Over 2 s, 400 used one CPU-second (50%), 401 a tenth (5%). */
    put_stat(root, 400, (unsigned long)tck);
    put_stat(root, 401, (unsigned long)tck / 10);
    assert_int_equal(corun_procsel_scan(s, 3000000000ull, false, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].pid, 400);
    assert_true(fabs(v[0].cpu_percent - 50) < 0.5);
    free(v);
    corun_procsel_close(s);
    snprintf(path, sizeof(path), "rm -rf '%s'", root);
    assert_int_equal(system(path), 0);
}

/* Makes directory @rel below @root. */
static void put_dir(const char *root, const char *rel)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    assert_int_equal(mkdir(path, 0755), 0);
}

/* The scheduler's figures of one process: a single thread's from
 * /proc/PID/schedstat, several threads' summed over task/TID/schedstat (a
 * thread whose file is gone, as when it just exited, left out); where it
 * last ran and its threads from stat; no schedstat at all is said, not
 * taken for zero; a reused pid or a missing process is gone. */
static void test_sched_sums_threads(void **state)
{
    char root[] = "/tmp/corun-procsel-XXXXXX", rel[96];
    struct corun_procsel_opts o = {0};
    struct corun_procsel *s = NULL;
    struct corun_proc_sched ps;

    assert_non_null(mkdtemp(root));
    put_dir(root, "proc");
    put_dir(root, "proc/500");
    put_stat(root, 500, 0);
    put(root, "proc/500/schedstat", "700 30 5\n");
    put_dir(root, "proc/501");
    put_stat_threads(root, 501, 0, 3);
    put(root, "proc/501/schedstat", "1 1 1\n"); /* the leader's alone: not read */
    put_dir(root, "proc/501/task");
    for (int tid = 501; tid <= 504; tid++) {
        snprintf(rel, sizeof(rel), "proc/501/task/%d", tid);
        put_dir(root, rel);
        if (tid == 504)
            continue; /* exited: its directory lingers without files */
        snprintf(rel, sizeof(rel), "proc/501/task/%d/schedstat", tid);
        put(root, rel, tid == 501 ? "100 10 1\n" : tid == 502 ? "200 20 1\n" : "300 30 1\n");
    }
    put_dir(root, "proc/502");
    put_stat(root, 502, 0);
    o.root = root;
    assert_int_equal(corun_procsel_open(&o, &s), 0);

    assert_int_equal(corun_procsel_sched(s, 500, 5000, &ps), 0);
    assert_true(ps.have_sched);
    assert_int_equal(ps.nthreads, 1);
    assert_int_equal(ps.last_cpu, 0);
    assert_int_equal(ps.run_ns, 700);
    assert_int_equal(ps.delay_ns, 30);

    assert_int_equal(corun_procsel_sched(s, 501, 5000, &ps), 0);
    assert_true(ps.have_sched);
    assert_int_equal(ps.nthreads, 3);
    assert_int_equal(ps.run_ns, 600);
    assert_int_equal(ps.delay_ns, 60);

    assert_int_equal(corun_procsel_sched(s, 502, 5000, &ps), 0);
    assert_false(ps.have_sched);
    assert_int_equal(ps.last_cpu, 0);

    assert_int_equal(corun_procsel_sched(s, 500, 4999, &ps), -ESRCH);
    assert_int_equal(corun_procsel_sched(s, 4242, 5000, &ps), -ESRCH);
    corun_procsel_close(s);
    snprintf(rel, sizeof(rel), "rm -rf '%s'", root);
    assert_int_equal(system(rel), 0);
}

/* CPUs asked for between two readings: time run plus time waited, per
 * second, at most one CPU a thread; unknown (NaN), never 0, without
 * schedstat, without an interval, or when a sum fell (a thread exited
 * with its times). */
static void test_cpus_wanted(void **state)
{
    struct corun_proc_sched a = {.have_sched = true, .run_ns = 1000, .delay_ns = 500};
    struct corun_proc_sched b = {.have_sched = true, .run_ns = 2001000, .delay_ns = 1000500};
    struct corun_proc_sched fell = {.have_sched = true, .run_ns = 999, .delay_ns = 2000000};
    struct corun_proc_sched none = {0};

    /* 2 ms run and 1 ms waited in 1 ms: three CPUs' worth. */
    assert_true(fabs(corun_procsel_cpus_wanted(&a, &b, 1000000) - 3.0) < 1e-9);
    assert_true(fabs(corun_procsel_cpus_wanted(&a, &b, 3000000) - 1.0) < 1e-9);
    assert_true(isnan(corun_procsel_cpus_wanted(&a, &b, 0)));
    assert_true(isnan(corun_procsel_cpus_wanted(&a, &fell, 1000000)));
    assert_true(isnan(corun_procsel_cpus_wanted(&none, &b, 1000000)));
    assert_true(isnan(corun_procsel_cpus_wanted(&a, &none, 1000000)));
    assert_true(isnan(corun_procsel_cpus_wanted(NULL, &b, 1000000)));
    /* One thread asks for one CPU at most: a long wait counted whole when
     * it ends (1.8 CPUs' worth in one interval) is not two threads. Two
     * threads may ask for two; the larger count of the readings holds. */
    a.nthreads = b.nthreads = 1;
    assert_true(fabs(corun_procsel_cpus_wanted(&a, &b, 1000000) - 1.0) < 1e-9);
    assert_true(fabs(corun_procsel_cpus_wanted(&a, &b, 3000000) - 1.0) < 1e-9);
    assert_true(fabs(corun_procsel_cpus_wanted(&a, &b, 6000000) - 0.5) < 1e-9);
    b.nthreads = 2;
    assert_true(fabs(corun_procsel_cpus_wanted(&a, &b, 1000000) - 2.0) < 1e-9);
    a.nthreads = 3;
    assert_true(fabs(corun_procsel_cpus_wanted(&a, &b, 1000000) - 3.0) < 1e-9);
}

/* ---- the live root: the cheap revisit of known processes -------------------- */

static int fail_esrch(pid_t pid, size_t size, cpu_set_t *mask)
{
    errno = ESRCH;
    return -1;
}

/* A child named @name that narrows its own affinity to its first allowed CPU
 * when told (a byte on @cmd), then says so (a byte on @done). */
static pid_t child(const char *name, int *cmd, int *done)
{
    int a[2], b[2];
    pid_t pid;

    assert_int_equal(pipe(a), 0);
    assert_int_equal(pipe(b), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cpu_set_t set;
        char c;
        int first = -1;

        prctl(PR_SET_NAME, name);
        close(a[1]);
        close(b[0]);
        if (write(b[1], "r", 1) != 1 || read(a[0], &c, 1) != 1)
            _exit(1);
        sched_getaffinity(0, sizeof(set), &set);
        for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
            if (CPU_ISSET(i, &set))
                first = i;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
        sched_setaffinity(0, sizeof(set), &set);
        if (write(b[1], "p", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(a[0]);
    close(b[1]);
    *cmd = a[1];
    *done = b[0];
    return pid;
}

static bool scan_has(struct corun_procsel *s, pid_t pid, uint64_t now)
{
    struct corun_proc_info *v = NULL;
    size_t n = 0;
    bool hit = false;

    assert_int_equal(corun_procsel_scan(s, now, false, &v, &n), 0);
    for (size_t i = 0; i < n; i++)
        hit |= v[i].pid == pid;
    free(v);
    return hit;
}

static void test_live_revisit(void **state)
{
    char name[16];
    const char *comms[] = {name};
    /* A recheck period far away: everything after the first scan is a
     * revisit, so the fast paths are what is tested. */
    struct corun_procsel_opts o = {.comms = comms, .ncomms = 1, .recheck_scans = 1000000};
    struct corun_procsel *s = NULL;
    int cmd, done, status;
    pid_t pid;
    char c;

    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        skip();
    snprintf(name, sizeof(name), "cpsl%d", (int)getpid() % 100000);
    pid = child(name, &cmd, &done);
    assert_int_equal(read(done, &c, 1), 1);
    assert_int_equal(corun_procsel_open(&o, &s), 0);
    assert_true(scan_has(s, pid, 1000000000ull)); /* judged in full */
    assert_true(scan_has(s, pid, 2000000000ull)); /* revisited */

    /* sched_getaffinity says the process is gone: not selected this scan. */
    corun__sys.sched_getaffinity = fail_esrch;
    assert_false(scan_has(s, pid, 3000000000ull));
    corun__sys_reset();
    assert_true(scan_has(s, pid, 4000000000ull)); /* back, judged anew */

    /* Its owner pins it: the next revisit sees it, without a full read. */
    assert_int_equal(write(cmd, "x", 1), 1);
    assert_int_equal(read(done, &c, 1), 1);
    assert_false(scan_has(s, pid, 5000000000ull));

    corun_procsel_close(s);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(cmd);
    close(done);
}

static void test_bad_root(void **state)
{
    struct corun_procsel_opts o = {.root = "/nonexistent/corun"};
    struct corun_procsel *s = (void *)1;

    assert_int_equal(corun_procsel_open(&o, &s), -ENOENT);
    assert_null(s);
    assert_int_equal(corun_procsel_open(NULL, &s), -EINVAL);
    corun_procsel_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_glob),
        cmocka_unit_test(test_kernel_threads_and_self_never),
        cmocka_unit_test(test_user_and_cgroup),
        cmocka_unit_test(test_pinned),
        cmocka_unit_test(test_all_reports_verdicts),
        cmocka_unit_test(test_min_cpu_over_interval),
        cmocka_unit_test(test_live_revisit),
        cmocka_unit_test(test_bad_root),
        cmocka_unit_test(test_last_cpu),
        cmocka_unit_test(test_sched_sums_threads),
        cmocka_unit_test(test_cpus_wanted),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
