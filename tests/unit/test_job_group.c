/*
 * test_job_group.c — the processes of a batch job (src/cli/job-group.c):
 * every member of a real process group is found, and when the leader's
 * memory has followed it, the others' follows through the actuator that
 * placed them; an actuator whose children follow it is left to do it.
 * The tree of a `corun run` command is found by parent PID, generation by
 * generation, whatever the processes' names hold; a process's children
 * are found, whichever way the kernel allows.
 */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/job-group.c"

/* A process that sleeps until killed, in process group @pgid (0: its own). */
static pid_t sleeper(pid_t pgid)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, pgid);
        for (;;)
            pause();
    }
    /* Both sides set it: the parent's call is what the test can rely on. */
    assert_int_equal(setpgid(pid, pgid ? pgid : pid), 0);
    return pid;
}

static struct {
    pid_t pid[8];
    int node[8];
    unsigned calls;
    pid_t refuse; /* this one is refused, as a process not ours */
} mm;

static int fake_move_memory(void *state, pid_t target, int node)
{
    (void)state;
    if (mm.calls < 8) {
        mm.pid[mm.calls] = target;
        mm.node[mm.calls] = node;
    }
    mm.calls++;
    return target == mm.refuse ? -EPERM : 0;
}

static bool called_for(pid_t pid)
{
    for (unsigned i = 0; i < mm.calls && i < 8; i++)
        if (mm.pid[i] == pid)
            return true;
    return false;
}

static void test_group_memory_follows(void **state)
{
    struct corun_act_ops ops = {.name = "fake", .move_memory = fake_move_memory};
    pid_t leader = sleeper(0), a = sleeper(leader), b = sleeper(leader), other = sleeper(0);
    pid_t pids[8];
    unsigned n = job_group_pids(leader, pids, 8);
    bool seen[3] = {0};

    (void)state;
    assert_int_equal(n, 3);
    for (unsigned i = 0; i < n; i++) {
        seen[0] |= pids[i] == leader;
        seen[1] |= pids[i] == a;
        seen[2] |= pids[i] == b;
        assert_int_not_equal(pids[i], other);
    }
    assert_true(seen[0] && seen[1] && seen[2]);

    /* The two others follow the leader to node 1; the leader is not moved
     * again, the process outside the group not at all. */
    memset(&mm, 0, sizeof(mm));
    assert_int_equal(job_group_move_memory(&ops, NULL, leader, 1), 2);
    assert_int_equal(mm.calls, 2);
    assert_true(called_for(a) && called_for(b));
    assert_int_equal(mm.node[0], 1);
    assert_int_equal(mm.node[1], 1);

    /* One refused: the other still moves, and only it is counted. */
    memset(&mm, 0, sizeof(mm));
    mm.refuse = a;
    assert_int_equal(job_group_move_memory(&ops, NULL, leader, 0), 1);
    assert_int_equal(mm.calls, 2);

    /* An actuator that carries children (cpuset) moves them itself; one
     * without move_memory cannot. */
    memset(&mm, 0, sizeof(mm));
    ops.flags = CORUN_ACT_CHILDREN_FOLLOW;
    assert_int_equal(job_group_move_memory(&ops, NULL, leader, 1), 0);
    ops.flags = 0;
    ops.move_memory = NULL;
    assert_int_equal(job_group_move_memory(&ops, NULL, leader, 1), 0);
    assert_int_equal(mm.calls, 0);

    kill(-leader, SIGKILL);
    kill(other, SIGKILL);
    for (int i = 0; i < 4; i++)
        assert_true(wait(NULL) > 0);
}

/*
 * A child that starts a grandchild named like a trap for a parser (a ')'
 * and spaces), reports the grandchild's PID on @fd once it has taken that
 * name, and sleeps until killed.
 */
static pid_t parent_of_one(int fd)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        int named[2];
        pid_t g;
        char b;

        if (pipe(named) || (g = fork()) < 0)
            _exit(1);
        if (g == 0) {
            prctl(PR_SET_NAME, "x) 1 2 (y");
            if (write(named[1], "n", 1) != 1)
                _exit(1);
            for (;;)
                pause();
        }
        if (read(named[0], &b, 1) != 1 || write(fd, &g, sizeof(g)) != sizeof(g))
            _exit(1);
        for (;;)
            pause();
    }
    return pid;
}

static void test_tree(void **state)
{
    int p[2];
    pid_t root, grand, other = sleeper(0), *tree;
    int n;

    (void)state;
    assert_int_equal(pipe(p), 0);
    root = parent_of_one(p[1]);
    assert_int_equal(read(p[0], &grand, sizeof(grand)), sizeof(grand));

    assert_int_equal(job_parent_of(grand), root);
    n = job_tree_pids(root, &tree, 16);
    assert_int_equal(n, 2);
    assert_int_equal(tree[0], root);
    assert_int_equal(tree[1], grand);
    free(tree);
    /* At most @max: the root first. */
    assert_int_equal(job_tree_pids(root, &tree, 1), 1);
    assert_int_equal(tree[0], root);
    free(tree);
    /* A process without children: itself alone. */
    assert_int_equal(job_tree_pids(grand, &tree, 16), 1);
    free(tree);
    assert_int_equal(job_tree_pids(other, &tree, 16), 1);
    assert_int_equal(tree[0], other);
    free(tree);

    kill(grand, SIGKILL);
    kill(root, SIGKILL);
    kill(other, SIGKILL);
    assert_int_equal(waitpid(root, NULL, 0), root);
    assert_int_equal(waitpid(other, NULL, 0), other);
    close(p[0]);
    close(p[1]);
}

static bool has_pid(const pid_t *v, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (v[i] == pid)
            return true;
    return false;
}

/* A process's children, listed by the kernel or found by parent PID: both
 * ways give the same, a grandchild is not among them, and a reaped child
 * is gone. */
static void test_children(void **state)
{
    int p[2], n;
    pid_t a = sleeper(0), root, grand, *kids = NULL;
    unsigned sn = 0, cap = 0;

    (void)state;
    assert_int_equal(pipe(p), 0);
    root = parent_of_one(p[1]);
    assert_int_equal(read(p[0], &grand, sizeof(grand)), sizeof(grand));

    n = job_children(getpid(), &kids);
    assert_int_equal(n, 2);
    assert_true(has_pid(kids, n, a));
    assert_true(has_pid(kids, n, root));
    free(kids);
    kids = NULL;
    assert_int_equal(children_scanned(getpid(), &kids, &sn, &cap), 0);
    assert_int_equal(sn, 2);
    assert_true(has_pid(kids, (int)sn, a) && has_pid(kids, (int)sn, root));
    free(kids);
    n = job_children(root, &kids);
    assert_int_equal(n, 1);
    assert_int_equal(kids[0], grand);
    free(kids);

    kill(grand, SIGKILL);
    kill(root, SIGKILL);
    assert_int_equal(waitpid(root, NULL, 0), root);
    kill(a, SIGKILL);
    assert_int_equal(waitpid(a, NULL, 0), a);
    assert_int_equal(job_children(getpid(), &kids), 0);
    assert_null(kids);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_memory_follows),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_children),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
