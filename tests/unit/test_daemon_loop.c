/*
 * test_daemon_loop.c — the daemon's tick, and the engine it drives, against
 * the recorded /proc tree (tests/fixtures/proc-root) with a recording
 * sensor, actuator and policy behind the real operations tables: a move
 * needs the plan confirmed, the migration cap holds (the pair sharing a CPU
 * first), a process that exits between sample and act (ESRCH) is forgotten
 * without stopping the tick, one we may not touch (EPERM) is never retried,
 * nor one whose owner set its mask since the scan (EBUSY, not an error),
 * a moved process dwells and then the engine's own gain check holds a move
 * that gains nothing, open opens one instance, restore_all gives everything
 * back, the status shows each user only their own processes, on two NUMA
 * nodes memory follows a process moved to the other node once the outcome
 * check keeps the change, a change the counters say made things worse
 * is taken back, and the rule that leaves a process whose threads want
 * more than one CPU to the kernel.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corun/daemon.h"
#include "corun/topo.h"
#include "daemon/daemon-internal.h"

/* ---- a recording actuator ------------------------------------------------- */

struct fake_act {
    int opens, closes, restore_alls;
    int apply_calls[200]; /* per pid */
    int last_cpu[200];
    int restore_calls[200];
    int fail[200]; /* -errno to return from apply for this pid */
    int mem_calls[200], mem_node[200], mem_fail[200]; /* move_memory, likewise */
};
static struct fake_act act;

static int act_probe(const struct corun_act_opts *o, char *why, size_t len)
{
    return 0;
}

static int act_open(const struct corun_act_opts *o, void **state)
{
    act.opens++;
    *state = &act;
    return 0;
}

static int act_apply(void *state, pid_t pid, const struct corun_cpuset *cpus)
{
    assert_true(pid > 0 && pid < 200);
    act.apply_calls[pid]++;
    if (act.fail[pid])
        return act.fail[pid];
    assert_int_equal(corun_cpuset_count(cpus), 1);
    act.last_cpu[pid] = corun_cpuset_next(cpus, 0);
    return 0;
}

static int act_move_memory(void *state, pid_t pid, int node)
{
    assert_true(pid > 0 && pid < 200);
    act.mem_calls[pid]++;
    act.mem_node[pid] = node;
    return act.mem_fail[pid];
}

static int act_restore(void *state, pid_t pid)
{
    act.restore_calls[pid]++;
    act.last_cpu[pid] = -1; /* the kernel's choice again */
    return 0;
}

static int act_restore_all(void *state)
{
    act.restore_alls++;
    return 0;
}

static void act_close(void *state)
{
    act.closes++;
}

static const struct corun_act_ops fake_act_ops = {
    .name = "fake",
    .probe = act_probe,
    .open = act_open,
    .apply = act_apply,
    .restore = act_restore,
    .restore_all = act_restore_all,
    .close = act_close,
    .move_memory = act_move_memory,
};

/* ---- a sensor counting steadily ------------------------------------------- */

static uint64_t now_ns = 1000000000ull; /* the daemon's clock: tick() advances it */
static int slow_from = -1; /* >= 0: a process pinned to OS CPU >= this runs at half speed */
static uint64_t instr[200], instr_t[200]; /* instructions counted per pid, and when */

static int sense_open(const struct corun_sense_opts *o, void **state)
{
    *state = NULL;
    return 0;
}

static int attach_fail[200]; /* -errno to refuse attaching to this pid */

static int sense_attach(void *state, pid_t pid, int *handle)
{
    if (attach_fail[pid])
        return attach_fail[pid];
    *handle = pid;
    return 0;
}

/* Every process counts, per second of the daemon's clock, 1e9 cycles and
 * 2e9 instructions (IPC 2), 1e6 LLC misses (0.5 MPKI) and 0.5 s of task
 * clock, wherever it runs; with @slow_from set, half the instructions where
 * it is pinned to a CPU from there on. */
static int sense_read(void *state, int handle, struct corun_sample *s)
{
    uint64_t k = now_ns / 1000000000ull;
    bool slow = slow_from >= 0 && act.last_cpu[handle] >= slow_from;

    if (instr_t[handle] && now_ns > instr_t[handle])
        instr[handle] += (now_ns - instr_t[handle]) * (slow ? 1 : 2);
    instr_t[handle] = now_ns;
    s->t_ns = now_ns;
    s->valid = CORUN_EV_BIT(CORUN_EV_CYCLES) | CORUN_EV_BIT(CORUN_EV_INSTRUCTIONS) |
               CORUN_EV_BIT(CORUN_EV_LLC_MISSES) | CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS);
    s->value[CORUN_EV_CYCLES] = k * 1000000000ull;
    s->value[CORUN_EV_INSTRUCTIONS] = slow_from >= 0 ? instr[handle] : k * 2000000000ull;
    s->value[CORUN_EV_LLC_MISSES] = k * 1000000ull;
    s->value[CORUN_EV_TASK_CLOCK_NS] = k * 500000000ull;
    return 0;
}

static int sense_detach(void *state, int handle)
{
    return 0;
}

static void sense_close(void *state)
{
}

static const struct corun_sense_ops fake_sense_ops = {
    .name = "fake",
    .open = sense_open,
    .attach = sense_attach,
    .read = sense_read,
    .detach = sense_detach,
    .close = sense_close,
};

/* ---- a policy that puts each pid where a table says ----------------------- */

static int want_cpu[200];

/* The plan: pids 100, 101, 103 and 104 (the recorded /proc's) on these
 * dense CPUs (-1: left to the kernel), every other pid on CPU 0. */
static void plan(int c100, int c101, int c103, int c104)
{
    memset(want_cpu, 0, sizeof(want_cpu));
    want_cpu[100] = c100;
    want_cpu[101] = c101;
    want_cpu[103] = c103;
    want_cpu[104] = c104;
}
static bool told_mem_follows;     /* what the last snapshot said */
static unsigned told_turbo_n;     /* and of its turbo table */
static double told_turbo_last;

static int policy_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    assert_int_equal(plan->ntasks, snap->ntasks);
    told_mem_follows = snap->mem_follows;
    told_turbo_n = snap->turbo_rel ? snap->turbo_n : 0;
    told_turbo_last = told_turbo_n ? snap->turbo_rel[told_turbo_n - 1] : 0;
    for (unsigned i = 0; i < snap->ntasks; i++)
        plan->cpu[i] = want_cpu[snap->tasks[i].id]; /* the daemon numbers tasks by pid */
    return 0;
}

static const struct corun_policy fake_policy = {
    .name = "table",
    .summary = "test",
    .place = policy_place,
};

/* ---- helpers ---------------------------------------------------------------- */

struct fx {
    struct corun_topo *topo;
    struct corun_daemon *d;
};

static unsigned parts_turbo_n; /* a turbo table of this many entries in the parts */
static bool cfg_no_mem_follow; /* mem_follow = no in the configuration */

static struct corun_daemon *open_daemon_on(struct fx *f, bool with_act, const char *machine)
{
    static char *comms[] = {"sleep", "python3", "my*"};
    struct corun_topo_opts to = {.source = CORUN_TOPO_SYNTHETIC, .input = machine};
    struct corun_daemon_config cfg;
    struct corun_daemon_parts parts = {0};

    memset(&act, 0, sizeof(act));
    assert_int_equal(corun_topo_load(&to, &f->topo), 0);
    assert_int_equal(corun_daemon_config_init(&cfg), 0);
    cfg.root = strdup(fixture("proc-root"));
    free(cfg.journal_dir);
    cfg.journal_dir = strdup("/nonexistent-journal");
    cfg.comms = malloc(sizeof(comms));
    memcpy(cfg.comms, comms, sizeof(comms));
    cfg.ncomms = 3;
    cfg.confirm = 2;
    cfg.min_dwell = 3;
    cfg.max_migrations = 2;
    cfg.sample_min_cpu = 0; /* the fixture's processes are idle: read them anyway */
    cfg.mem_follow = !cfg_no_mem_follow;
    parts.topo = f->topo;
    parts.sense = &fake_sense_ops;
    parts.act = with_act ? &fake_act_ops : NULL;
    parts.policy = &fake_policy;
    parts.turbo_n = parts_turbo_n;
    for (unsigned i = 0; i < parts_turbo_n; i++)
        parts.turbo_rel[i] = 1.0 - 0.05 * i;
    assert_int_equal(corun_daemon_open(&cfg, &parts, &f->d), 0);
    free(cfg.comms); /* the array; the literals in it are not ours to free */
    cfg.comms = NULL;
    cfg.ncomms = 0;
    corun_daemon_config_release(&cfg);
    return f->d;
}

static struct corun_daemon *open_daemon(struct fx *f, bool with_act)
{
    return open_daemon_on(f, with_act, "pack:1 core:4 pu:1");
}

/* Tick @n of a test, a second of the daemon's clock after the last. */
static void tick(struct corun_daemon *d, int n)
{
    now_ns += 1000000000ull;
    assert_int_equal(corun_daemon_tick(d, now_ns), 0);
    (void)n;
}

static struct managed *find(struct corun_daemon *d, pid_t pid)
{
    for (size_t i = 0; i < d->nprocs; i++)
        if (d->procs[i].pid == pid)
            return &d->procs[i];
    return NULL;
}

static void close_fx(struct fx *f)
{
    corun_daemon_close(f->d);
    corun_topo_free(f->topo);
}

/* ---- tests ------------------------------------------------------------------ */

/* Eight CPUs; 100 runs on CPU 1, 101 and 104 share CPU 2, 103 on CPU 3 (the
 * recorded /proc). The plan puts them on the free CPUs 4-7. */
static void test_hysteresis_cap_and_failures(void **state)
{
    struct fx f;
    struct corun_daemon *d = open_daemon_on(&f, true, "pack:1 core:8 pu:1");

    /* Open reconciled the journal (none here) through
     * corun_act_restore_journal(), not through an instance: it opened ours only. */
    assert_int_equal(act.opens, 1);
    assert_int_equal(act.restore_alls, 0);
    assert_int_equal(act.closes, 0);
    assert_false(corun_daemon_observe_only(d, NULL));

    plan(4, 5, 6, 7);
    act.fail[103] = -ESRCH; /* exits between sample and act */
    act.fail[104] = -EPERM; /* not ours to touch */

    tick(d, 1); /* the first samples: nothing to plan on yet */
    assert_int_equal(d->nprocs, 4);
    assert_non_null(strstr(find(d, 100)->why, "measuring"));
    tick(d, 2); /* proposed once: nothing moves */
    assert_int_equal(act.apply_calls[100] + act.apply_calls[101], 0);
    assert_non_null(strstr(find(d, 100)->why, "1 of 2 ticks"));
    /* the profile is the engine's, from the sensor: IPC 2, 0.5 MPKI, and
     * the class the profile box reads from those counters (a sheep) */
    assert_true(fabs(find(d, 100)->prof.ipc - 2) < 1e-9);
    assert_true(fabs(find(d, 100)->prof.llc_mpki - 0.5) < 1e-9);
    assert_int_equal(find(d, 100)->prof.cls, CORUN_CLASS_SHEEP);
    assert_true(isfinite(find(d, 100)->speed_now));

    tick(d, 3); /* confirmed; the cap (2) lets through the pair sharing CPU 2 */
    assert_int_equal(act.apply_calls[101], 1);
    assert_int_equal(act.last_cpu[101], 5);
    assert_int_equal(act.apply_calls[104], 1);
    assert_true(find(d, 104)->placed < 0);
    assert_non_null(strstr(find(d, 104)->why, "not ours to move"));
    assert_int_equal(d->err_eperm, 1);
    assert_int_equal(act.apply_calls[100] + act.apply_calls[103], 0);
    assert_non_null(strstr(find(d, 100)->why, "deferred"));
    assert_int_equal(d->migrations_total, 1);

    tick(d, 4); /* the outcome check measures the change */
    assert_int_equal(act.apply_calls[100], 0);
    tick(d, 5); /* kept; 100 moves, 103 fails with ESRCH and is forgotten */
    assert_int_equal(act.apply_calls[100], 1);
    assert_int_equal(act.last_cpu[100], 4);
    assert_int_equal(act.apply_calls[103], 1);
    assert_null(find(d, 103));
    assert_int_equal(d->err_esrch, 1);
    assert_int_equal(d->migrations_total, 2);
    {
        /* The status counts the change the counters judged (and kept). */
        struct corun_ctl_peer root = {.uid = 0, .admin = true};
        struct corun_ctl_request req = {.verb = CORUN_CTL_STATUS};
        struct corun_ctl_buf b = {0};

        corun_daemon_ctl(d, &root, &req, &b);
        assert_non_null(strstr(b.data, "\"changes_judged_total\": 1,"));
        assert_non_null(strstr(b.data, "\"changes_taken_back_total\": 0,"));
        corun_ctl_buf_release(&b);
    }

    act.fail[103] = 0;
    tick(d, 6); /* 103 is back (the fixture still lists it): new, unconfirmed */
    assert_non_null(find(d, 103));
    for (int k = 7; k < 12; k++)
        tick(d, k);
    assert_int_equal(act.last_cpu[103], 6);
    assert_int_equal(act.apply_calls[104], 1); /* never retried */
    assert_int_equal(act.apply_calls[100], 1); /* stayed: the plan did not change */
    assert_int_equal(act.apply_calls[101], 1);
    assert_int_equal(find(d, 101)->placed, 5);
    assert_non_null(strstr(find(d, 100)->why, "policy 'table' placed it on cpu 4"));

    assert_int_equal(corun_daemon_restore_all(d), 0);
    assert_int_equal(act.restore_alls, 1);
    assert_int_equal(find(d, 100)->placed, -1);
    close_fx(&f);
    assert_int_equal(act.closes, 1);
}

/* The last migration record of @pid, or NULL. */
static const struct migration *last_record(struct corun_daemon *d, pid_t pid)
{
    const struct migration *r = NULL;

    for (size_t k = 0; k < d->nhist; k++)
        if (d->hist[k].pid == pid)
            r = &d->hist[k];
    return r;
}

/* Two nodes (CPUs 0-1 and 2-3). 100 last ran on CPU 1 (node 0), 101 and
 * 104 on CPU 2, 103 on CPU 3 (node 1; the recorded /proc). The plan moves
 * 100 to node 1, 103 and 104 to node 0, and leaves 101 where it runs. It is
 * the daemon's first plan (nothing is pinned yet), so the memory of 100 and
 * 103 moves with them, not once the outcome check keeps the change; the
 * kernel refuses 104's, which stops memory following for everyone, and the
 * policy is told. The change is kept: nothing moves back. */
static void test_memory_follows(void **state)
{
    struct fx f;
    struct corun_daemon *d = open_daemon_on(&f, true, "pack:2 [numa] core:2 pu:1");

    plan(3, 2, 0, 1);
    act.mem_fail[104] = -EPERM;
    tick(d, 1);
    tick(d, 2); /* proposed once: even pinning 101 where it runs waits */
    assert_true(told_mem_follows);
    assert_int_equal(act.apply_calls[101], 0);
    assert_int_equal(act.mem_calls[100] + act.mem_calls[103] + act.mem_calls[104], 0);
    tick(d, 3); /* 101 pinned where it runs; the three others move together
                 * (a chain of CPUs), their memory with them */
    assert_int_equal(act.last_cpu[101], 2);
    assert_non_null(strstr(last_record(d, 101)->why, "pinned where the kernel runs it"));
    assert_int_equal(act.last_cpu[100], 3);
    assert_int_equal(act.last_cpu[103], 0);
    assert_int_equal(act.last_cpu[104], 1);
    assert_int_equal(act.mem_calls[100], 1);
    assert_int_equal(act.mem_node[100], 1);
    assert_int_equal(act.mem_calls[103], 1);
    assert_int_equal(act.mem_node[103], 0);
    assert_int_equal(act.mem_calls[101], 0);
    assert_int_equal(act.mem_calls[104], 1);
    assert_int_equal(d->mem_moves_total, 2);
    assert_non_null(strstr(last_record(d, 100)->why, "memory followed it to node 1"));
    assert_non_null(strstr(last_record(d, 104)->why, "memory stays on node 1"));
    assert_int_equal(act.last_cpu[104], 1); /* it moved all the same */
    for (int k = 4; k < 10; k++)
        tick(d, k);
    assert_false(told_mem_follows);
    assert_int_equal(act.last_cpu[100], 3); /* kept */
    assert_int_equal(act.mem_calls[100], 1);
    assert_int_equal(act.mem_calls[103], 1);
    close_fx(&f);

    /* mem_follow = no: never asked, the policy told so. */
    cfg_no_mem_follow = true;
    d = open_daemon_on(&f, true, "pack:2 [numa] core:2 pu:1");
    cfg_no_mem_follow = false;
    for (int k = 1; k < 7; k++)
        tick(d, k);
    assert_int_equal(act.last_cpu[100], 3);
    assert_int_equal(act.mem_calls[100], 0);
    assert_false(told_mem_follows);
    close_fx(&f);
}

/* Placed on CPUs 0-3; then the policy swaps 100 and 101. A moved process
 * dwells min_dwell ticks (5 here); after that the engine's own gain check
 * holds a swap of two alike processes, which gains nothing. */
static void test_min_dwell(void **state)
{
    struct fx f;
    struct corun_daemon *d = open_daemon(&f, true);
    int before;

    plan(0, 1, 2, 3);
    tick(d, 1);
    tick(d, 2);
    tick(d, 3); /* all four move: 101 takes 100's CPU, a chain */
    assert_int_equal(d->migrations_total, 4);
    plan(1, 0, 2, 3); /* 100 and 101 swap */
    d->cfg.min_dwell = 5;
    corun__daemon_retune(d);
    before = act.apply_calls[100];
    tick(d, 4); /* the outcome check measures */
    tick(d, 5); /* kept; the swap is proposed once */
    assert_non_null(strstr(find(d, 100)->why, "1 of 2 ticks"));
    tick(d, 6); /* confirmed, but 100 moved 3 ticks ago: it holds */
    assert_non_null(strstr(find(d, 100)->why, "holding: moved 3 ticks ago (min_dwell 5)"));
    tick(d, 7);
    assert_int_equal(act.apply_calls[100], before);
    tick(d, 8); /* 5 ticks since it moved: the gain check holds it now */
    assert_non_null(strstr(find(d, 100)->why, "held: the predicted gain does not pay"));
    assert_int_equal(act.apply_calls[100], before);
    close_fx(&f);
}

/* A process whose owner set its mask after the tick's scan and before its
 * move (the actuator's -EBUSY): no error is counted, the status says its
 * owner has it, and it is never asked again. */
static void test_owner_set_since_scan(void **state)
{
    struct fx f;
    struct corun_daemon *d = open_daemon(&f, true);

    plan(0, 1, 2, 3);
    act.fail[101] = -EBUSY;
    tick(d, 1);
    tick(d, 2);
    tick(d, 3);
    assert_int_equal(act.apply_calls[101], 1);
    assert_true(find(d, 101)->placed < 0);
    assert_non_null(strstr(find(d, 101)->why, "left alone: its owner set its affinity"));
    assert_int_equal(d->err_eperm + d->err_other + d->err_esrch, 0);
    assert_int_equal(d->migrations_total, 3);
    plan(1, 0, 2, 3);
    for (int k = 4; k < 10; k++)
        tick(d, k);
    assert_int_equal(act.apply_calls[101], 1);
    assert_non_null(strstr(find(d, 101)->why, "left alone: its owner set its affinity"));
    close_fx(&f);
}

/* A move the counters say made things worse (the process runs at half
 * speed on CPUs 4-7 of this machine, which no model predicts) is taken back
 * by the outcome check two ticks later, recorded, and counted in the
 * status; memory is not asked to follow. */
static void test_outcome_check_takes_back(void **state)
{
    struct corun_ctl_peer root = {.uid = 0, .admin = true};
    struct corun_ctl_request req = {.verb = CORUN_CTL_STATUS};
    struct corun_ctl_buf b = {0};
    struct fx f;
    struct corun_daemon *d = open_daemon_on(&f, true, "pack:1 core:8 pu:1");

    memset(instr, 0, sizeof(instr));
    memset(instr_t, 0, sizeof(instr_t));
    for (int pid = 0; pid < 200; pid++)
        act.last_cpu[pid] = -1;
    slow_from = 4;
    plan(4, 2, 3, 5);
    tick(d, 1);
    tick(d, 2);
    tick(d, 3); /* 101 and 103 pinned where they run, 100 and 104 moved */
    assert_int_equal(act.last_cpu[100], 4);
    assert_int_equal(act.last_cpu[104], 5);
    tick(d, 4);
    tick(d, 5); /* judged: half speed for two of four: taken back */
    assert_int_equal(act.last_cpu[100], -1);
    assert_int_equal(act.last_cpu[104], -1);
    assert_true(find(d, 100)->placed < 0);
    assert_non_null(strstr(last_record(d, 100)->why, "taken back"));
    corun_daemon_ctl(d, &root, &req, &b);
    assert_non_null(strstr(b.data, "\"changes_judged_total\": 1,"));
    assert_non_null(strstr(b.data, "\"changes_taken_back_total\": 1,"));
    assert_non_null(strstr(b.data, "\"changes_doubted_total\": 0,"));
    corun_ctl_buf_release(&b);
    /* The engine holds a while: the same plan is not applied at once. */
    tick(d, 6);
    tick(d, 7);
    assert_int_equal(act.last_cpu[100], -1);
    slow_from = -1;
    close_fx(&f);
}

/* A plan that leaves processes to the kernel changes nothing and records
 * nothing. A process the sensor refuses is placed all the same (on the
 * class priors), and read once the sensor takes it, 30 ticks on. */
static void test_left_to_kernel_and_unread(void **state)
{
    struct fx f;
    struct corun_daemon *d = open_daemon(&f, true);

    plan(-1, -1, -1, -1);
    attach_fail[101] = -EACCES;
    for (int k = 1; k <= 4; k++)
        tick(d, k);
    assert_int_equal(d->migrations_total, 0);
    assert_int_equal(d->nhist, 0);
    assert_int_equal(act.apply_calls[100] + act.restore_calls[100], 0);
    assert_non_null(strstr(find(d, 100)->why, "leaves it to the kernel"));
    plan(0, 1, 2, 3);
    for (int k = 5; k <= 7; k++)
        tick(d, k);
    assert_int_equal(act.last_cpu[101], 1);
    assert_true(isnan(find(d, 101)->prof.ipc));
    attach_fail[101] = 0;
    for (int k = 8; k <= 36; k++)
        tick(d, k);
    assert_true(fabs(find(d, 101)->prof.ipc - 2) < 1e-9);
    close_fx(&f);
}

/* The parts' turbo table reaches the policy with every snapshot; without
 * one the snapshot has none. */
static void test_turbo_table(void **state)
{
    struct fx f;
    struct corun_daemon *d;

    plan(0, 1, 3, 2); /* one process per CPU */
    parts_turbo_n = 4;
    d = open_daemon(&f, true);
    parts_turbo_n = 0;
    tick(d, 1);
    tick(d, 2);
    assert_int_equal(told_turbo_n, 4);
    assert_true(fabs(told_turbo_last - 0.85) < 1e-9);
    close_fx(&f);
    d = open_daemon(&f, true);
    tick(d, 1);
    tick(d, 2);
    assert_int_equal(told_turbo_n, 0);
    close_fx(&f);
}

static void test_observe_only_and_status(void **state)
{
    struct corun_ctl_peer alice = {.uid = 1000}, root = {.uid = 0, .admin = true};
    struct corun_ctl_request req = {.verb = CORUN_CTL_STATUS};
    struct corun_ctl_buf b = {0};
    char path[] = "/tmp/corun-metrics-XXXXXX", *text = NULL;
    const char *why;
    struct fx f;
    struct corun_daemon *d = open_daemon(&f, false);
    FILE *fp;
    long n;

    assert_true(corun_daemon_observe_only(d, &why));
    assert_string_equal(why, "no actuator");
    tick(d, 1);
    tick(d, 2);
    assert_int_equal(d->nprocs, 4);
    assert_non_null(strstr(find(d, 100)->why, "observe-only"));

    /* uid 1000 sees its three (100, 101, 103), not 104 of uid 1002. */
    corun_daemon_ctl(d, &alice, &req, &b);
    assert_non_null(strstr(b.data, "\"pid\": 100,"));
    assert_non_null(strstr(b.data, "\"pid\": 101,"));
    assert_non_null(strstr(b.data, "\"comm\": \"my (odd) name\""));
    assert_null(strstr(b.data, "\"pid\": 104,"));
    assert_non_null(strstr(b.data, "\"hidden\": 1,"));
    assert_non_null(strstr(b.data, "\"mode\": \"observe-only\""));
    corun_ctl_buf_release(&b);
    corun_daemon_ctl(d, &root, &req, &b);
    assert_non_null(strstr(b.data, "\"pid\": 104,"));
    assert_non_null(strstr(b.data, "\"hidden\": 0,"));
    corun_ctl_buf_release(&b);
    /* A change from a non-administrator is refused even if asked directly. */
    req.verb = CORUN_CTL_PAUSE;
    corun_daemon_ctl(d, &alice, &req, &b);
    assert_non_null(strstr(b.data, "permission denied"));
    corun_ctl_buf_release(&b);
    req.verb = CORUN_CTL_SET;
    strcpy(req.key, "interval");
    strcpy(req.value, "0.5");
    corun_daemon_ctl(d, &root, &req, &b);
    assert_string_equal(b.data, "{\"ok\": true}");
    assert_int_equal(corun_daemon_interval_ns(d), 500000000ull);
    corun_ctl_buf_release(&b);
    strcpy(req.key, "socket");
    corun_daemon_ctl(d, &root, &req, &b);
    assert_non_null(strstr(b.data, "cannot be changed while running"));
    corun_ctl_buf_release(&b);

    /* Metrics: written whole, then renamed into place. */
    {
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        close(fd);
    }
    assert_int_equal(corun_daemon_write_metrics(d, path), 0);
    fp = fopen(path, "r");
    assert_non_null(fp);
    text = calloc(1, 65536);
    n = (long)fread(text, 1, 65535, fp);
    fclose(fp);
    assert_true(n > 0);
    assert_non_null(strstr(text, "corun_daemon_managed_processes 4\n"));
    assert_non_null(strstr(text, "corun_daemon_observe_only 1\n"));
    assert_non_null(strstr(text, "corun_process_ipc{pid=\"100\",comm=\"sleep\"} 2\n"));
    assert_non_null(strstr(text, "# TYPE corun_daemon_migrations_total counter\n"));
    assert_non_null(strstr(text, "corun_daemon_changes_judged_total 0\n"));
    assert_non_null(strstr(text, "corun_daemon_changes_doubted_total 0\n"));
    free(text);
    unlink(path);
    assert_int_equal(corun_daemon_write_metrics(d, "/nonexistent-dir/m.prom"), -ENOENT);
    close_fx(&f);
}

/* A process whose threads want more than one CPU is left to the kernel
 * (over 1.5 CPUs, placed or not), stays so while it wants more than about
 * one (1.1), and is placed again only after five ticks in a row at about
 * one; an unknown figure changes nothing. */
static void test_spread_rule(void **state)
{
    unsigned calm = 0;
    bool spread = false;

    assert_false(corun__daemon_spread_judge(false, &calm, 1.0));  /* one busy thread */
    assert_false(corun__daemon_spread_judge(false, &calm, 1.45)); /* a second, now and then */
    assert_false(corun__daemon_spread_judge(false, &calm, NAN));
    assert_true(corun__daemon_spread_judge(false, &calm, 2.9)); /* three spinning threads */
    assert_true(corun__daemon_spread_judge(true, &calm, NAN));
    assert_true(corun__daemon_spread_judge(true, &calm, 1.3)); /* more than one still */
    assert_int_equal(calm, 0);
    spread = true;
    for (int i = 1; i <= 4; i++) {
        spread = corun__daemon_spread_judge(spread, &calm, 1.0);
        assert_true(spread);
        assert_int_equal(calm, (unsigned)i);
    }
    /* A tick over about one starts the count again. */
    assert_true(corun__daemon_spread_judge(spread, &calm, 1.2));
    assert_int_equal(calm, 0);
    for (int i = 1; i <= 4; i++)
        assert_true(corun__daemon_spread_judge(true, &calm, 0.9));
    assert_false(corun__daemon_spread_judge(true, &calm, 0.9)); /* the fifth: placed again */
    assert_int_equal(calm, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hysteresis_cap_and_failures),
        cmocka_unit_test(test_min_dwell),
        cmocka_unit_test(test_owner_set_since_scan),
        cmocka_unit_test(test_memory_follows),
        cmocka_unit_test(test_observe_only_and_status),
        cmocka_unit_test(test_turbo_table),
        cmocka_unit_test(test_outcome_check_takes_back),
        cmocka_unit_test(test_left_to_kernel_and_unread),
        cmocka_unit_test(test_spread_rule),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
