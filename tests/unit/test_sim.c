/*
 * test_sim.c — the simulator against what it promises: each calibration
 * target of SIMULATOR.md as a band the model must land in, the published
 * orderings, conservation (bandwidth never above b_max, cache shares adding
 * up to capacity), determinism, the sensor and actuator backends, phases,
 * throttling and makespan, every fixture machine, and the vendor defaults
 * a Hygon gets.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corun/sim.h"

static struct corun_sim_task task(int cls)
{
    struct corun_sim_task t;

    memset(&t, 0, sizeof(t));
    t.cls = cls;
    t.nphases = 1;
    assert_int_equal(corun_sim_class_preset(cls, &t.phase[0]), 0);
    snprintf(t.name, sizeof(t.name), "%s", corun_sim_class_name(cls));
    return t;
}

static struct corun_sim_machine preset(const char *name, const char **desc)
{
    struct corun_sim_machine m;

    assert_int_equal(corun_sim_machine_preset(name, &m, desc), 0);
    return m;
}

/* Speedups (vs alone) of two tasks placed on CPUs @ca and @cb. */
static void pair_speedups(const struct corun_topo *t, const struct corun_sim_machine *m,
                          struct corun_sim_task a, struct corun_sim_task b, int ca, int cb,
                          double *sa, double *sb)
{
    struct corun_sim_task ts[2] = {a, b};
    struct corun_sim *s;
    struct corun_sim_truth x;
    int cpu[2] = {ca, cb};

    assert_int_equal(corun_sim_create(t, m, ts, 2, 1, &s), 0);
    assert_int_equal(corun_sim_place(s, cpu), 0);
    assert_int_equal(corun_sim_truth(s, 0, &x), 0);
    *sa = x.ips / corun_sim_alone_ips(s, 0);
    assert_int_equal(corun_sim_truth(s, 1, &x), 0);
    *sb = x.ips / corun_sim_alone_ips(s, 1);
    corun_sim_free(s);
}

/* Checks @v against its band and prints it, so that the calibration figures
 * quoted in notes come from a run of build/tests/test_sim. */
static void in_band(const char *what, double v, double lo, double hi)
{
    print_message("  %-40s %.4f  [%.3f, %.3f]\n", what, v, lo, hi);
    if (!(v >= lo && v <= hi))
        fail_msg("%s = %.4f, outside its band [%.3f, %.3f]", what, v, lo, hi);
}

/* ---- calibration targets --------------------------------------------------- */

/* Chandra et al., HPCA 2005: mcf next to a streamer in a shared cache loses
 * ~65% of its IPC, with ~3.9x the LLC misses. An mcf-like chaser on a 4 MB
 * cache shared by two cores (their setup was a small shared L2). */
static void test_cal_mcf_streamer(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo("pack:1 l3:1(size=4194304) core:2 pu:1");
    struct corun_sim_task mcf = task(CORUN_SIM_CHASING), lbm = task(CORUN_SIM_STREAMING);
    struct corun_sim_task ts[2];
    struct corun_sim_truth solo, shared;
    struct corun_sim *s;

    mcf.phase[0].mpki_max = 60;
    mcf.phase[0].mpki_min = 5;
    mcf.phase[0].ws_mb = 0.6;
    ts[0] = mcf;
    ts[1] = lbm;
    assert_int_equal(corun_sim_create(t, &m, ts, 2, 1, &s), 0);
    assert_int_equal(corun_sim_move(s, 0, 0), 0);
    assert_int_equal(corun_sim_truth(s, 0, &solo), 0);
    assert_int_equal(corun_sim_move(s, 1, 1), 0);
    assert_int_equal(corun_sim_truth(s, 0, &shared), 0);
    in_band("mcf IPC loss beside a streamer", 1 - shared.ips / solo.ips, 0.55, 0.75);
    in_band("mcf LLC misses vs solo", shared.mpki / solo.mpki, 3.0, 5.0);
    corun_sim_free(s);
    corun_topo_free(t);
}

/* Navarro-Torres et al. on EPYC 7313P: omnetpp ~2.5x faster with 32 MB of
 * LLC than with none; bwaves barely changes. */
static void test_cal_llc_size(void **state)
{
    struct corun_sim_machine m = preset("milan64", NULL);
    struct corun_topo *big = synthetic_topo("pack:1 l3:1(size=33554432) core:1 pu:1");
    struct corun_topo *none = synthetic_topo("pack:1 core:1 pu:1");
    double r[2];
    int cls[2] = {CORUN_SIM_RABBIT, CORUN_SIM_STREAMING};

    for (int i = 0; i < 2; i++) {
        struct corun_sim_task t = task(cls[i]);
        struct corun_sim *a, *b;

        assert_int_equal(corun_sim_create(big, &m, &t, 1, 1, &a), 0);
        assert_int_equal(corun_sim_create(none, &m, &t, 1, 1, &b), 0);
        r[i] = corun_sim_alone_ips(a, 0) / corun_sim_alone_ips(b, 0);
        corun_sim_free(a);
        corun_sim_free(b);
    }
    in_band("rabbit speed, 32 MB LLC vs none", r[0], 2.1, 2.9);
    in_band("streamer speed, 32 MB LLC vs none", r[1], 1.0, 1.15);
    corun_topo_free(big);
    corun_topo_free(none);
}

/* Intel MLC on Skylake-SP: loaded latency ~1.2x idle at 50% of sustained
 * bandwidth, ~1.6x near saturation. Checked on the curve and on the model:
 * streamers loading one memory domain see the curve's latency. */
static void test_cal_loaded_latency(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo(d);
    struct corun_sim_task ts[28];
    struct corun_sim *s;
    double bw, lat;

    in_band("latency at 50% bandwidth / idle", corun_sim_loaded_latency_ns(&m, 0.5) / m.l0_ns, 1.1,
            1.3);
    in_band("latency near saturation / idle", corun_sim_loaded_latency_ns(&m, 0.99) / m.l0_ns, 1.45,
            1.75);
    for (unsigned n = 1; n <= 28; n += 3) {
        for (unsigned i = 0; i < n; i++)
            ts[i] = task(CORUN_SIM_STREAMING);
        assert_int_equal(corun_sim_create(t, &m, ts, n, 1, &s), 0);
        for (unsigned i = 0; i < n; i++)
            assert_int_equal(corun_sim_move(s, i, (int)(2 * i)), 0);
        assert_int_equal(corun_sim_memory(s, 0, &bw, &lat), 0);
        assert_true(bw <= m.bmax_gbps * 1e9 * (1 + 1e-9));
        if (bw < 0.985 * m.bmax_gbps * 1e9)
            /* Below saturation the model sits on the curve. */
            in_band("model latency / curve",
                    lat / corun_sim_loaded_latency_ns(&m, bw / (m.bmax_gbps * 1e9)), 0.999, 1.001);
        else
            assert_true(lat >= 1.45 * m.l0_ns);
        corun_sim_free(s);
    }
    corun_topo_free(t);
}

/* SMT pair yield: compute+compute 1.0-1.2, compute+memory 1.3-1.5,
 * streaming+streaming 1.0-1.15, some pairs below 1.0. */
static void test_cal_smt_yield(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo(d);
    struct corun_sim_task wide = task(CORUN_SIM_COMPUTE_INT);
    double a, b;

    pair_speedups(t, &m, task(CORUN_SIM_COMPUTE_INT), task(CORUN_SIM_COMPUTE_INT), 0, 1, &a, &b);
    in_band("compute-int + compute-int", a + b, 1.0, 1.2);
    pair_speedups(t, &m, task(CORUN_SIM_COMPUTE_FP), task(CORUN_SIM_COMPUTE_INT), 0, 1, &a, &b);
    in_band("compute-fp + compute-int", a + b, 1.0, 1.2);
    pair_speedups(t, &m, task(CORUN_SIM_COMPUTE_INT), task(CORUN_SIM_STREAMING), 0, 1, &a, &b);
    in_band("compute-int + streaming", a + b, 1.3, 1.5);
    pair_speedups(t, &m, task(CORUN_SIM_COMPUTE_FP), task(CORUN_SIM_CHASING), 0, 1, &a, &b);
    in_band("compute-fp + chasing", a + b, 1.3, 1.5);
    pair_speedups(t, &m, task(CORUN_SIM_STREAMING), task(CORUN_SIM_STREAMING), 0, 1, &a, &b);
    in_band("streaming + streaming", a + b, 1.0, 1.15);
    /* Two threads that each fill the issue width alone lose on one core. */
    wide.phase[0].u_disp = 1.0;
    wide.phase[0].cpi_core = 0.35;
    pair_speedups(t, &m, wide, wide, 0, 1, &a, &b);
    in_band("issue-bound + issue-bound", a + b, 0.8, 0.999);
    corun_topo_free(t);
}

/* All-core turbo 15-25% below 1-core on Intel server parts, and the model
 * runs at what the table says. */
static void test_cal_turbo(void **state)
{
    const char *intel[] = {"skx28", "icx40", "spr56"};

    for (unsigned i = 0; i < 3; i++) {
        const char *d;
        struct corun_sim_machine m = preset(intel[i], &d);
        struct corun_topo *t = synthetic_topo(d);
        unsigned ncores = corun_topo_ndomains(t, CORUN_LEVEL_CORE);
        struct corun_sim_task *ts = calloc(ncores, sizeof(*ts));
        struct corun_sim_truth x;
        struct corun_sim *s;

        in_band(intel[i], 1 - m.turbo_all_ghz / m.turbo1_ghz, 0.15, 0.25);
        for (unsigned c = 0; c < ncores; c++)
            ts[c] = task(CORUN_SIM_COMPUTE_INT);
        assert_int_equal(corun_sim_create(t, &m, ts, ncores, 1, &s), 0);
        assert_int_equal(corun_sim_move(s, 0, 0), 0);
        assert_int_equal(corun_sim_truth(s, 0, &x), 0);
        assert_true(fabs(x.ghz - m.turbo1_ghz) < 1e-9);
        for (unsigned c = 1; c < ncores; c++)
            assert_int_equal(corun_sim_move(s, c, (int)(2 * c)), 0);
        assert_int_equal(corun_sim_truth(s, 0, &x), 0);
        assert_true(fabs(x.ghz - m.turbo_all_ghz) < 1e-9);
        corun_sim_free(s);
        free(ts);
        corun_topo_free(t);
    }
}

/*
 * Zhuravlev et al., ASPLOS 2010: Distributed Intensity comes within ~2% of
 * the best placement on an 8-core machine of 4 memory domains without SMT.
 * DI here is the paper's, from counters only: tasks sorted by LLC miss rate
 * (read through sense-sim during a baseline warm-up), each domain given one
 * of the heaviest and one of the lightest.
 */
static void test_cal_di(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:4 [numa] l3:1(size=4194304) core:2 pu:1");
    struct corun_sim_machine m;
    int cls[8] = {CORUN_SIM_STREAMING,   CORUN_SIM_STREAMING, CORUN_SIM_CHASING,
                  CORUN_SIM_RABBIT,      CORUN_SIM_RABBIT,    CORUN_SIM_SHEEP,
                  CORUN_SIM_COMPUTE_INT, CORUN_SIM_COMPUTE_FP};
    struct corun_sim_task ts[8];
    struct corun_sense_opts so = {0};
    struct corun_sample s0, s1;
    double mpki[8], di_stp, best;
    int cpu[8], order[8], handle, di[8];
    struct corun_sim_search info;
    struct corun_sim *s;
    void *sense;

    corun_sim_machine_defaults(t, &m);
    m.bmax_gbps = 20; /* a 2010 memory controller per domain */
    for (int i = 0; i < 8; i++)
        ts[i] = task(cls[i]);
    assert_int_equal(corun_sim_create(t, &m, ts, 8, 7, &s), 0);
    for (int i = 0; i < 8; i++)
        cpu[i] = -1;
    corun_sim_baseline_place(t, 8, 7, cpu);
    assert_int_equal(corun_sim_place(s, cpu), 0);
    so.backend_cfg = s;
    assert_int_equal(corun_sense_sim_ops.open(&so, &sense), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(corun_sense_sim_ops.attach(sense, i, &handle), 0);
        assert_int_equal(handle, i);
    }
    for (int i = 0; i < 8; i++)
        assert_int_equal(corun_sense_sim_ops.read(sense, i, &s0), 0);
    assert_int_equal(corun_sim_step(s, 0.5), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(corun_sense_sim_ops.read(sense, i, &s1), 0);
        mpki[i] =
            (double)s1.value[CORUN_EV_LLC_MISSES] * 1e3 / (double)s1.value[CORUN_EV_INSTRUCTIONS];
        order[i] = i;
    }
    corun_sense_sim_ops.close(sense);
    for (int i = 0; i < 8; i++) /* sort by miss rate, heaviest first */
        for (int j = i + 1; j < 8; j++)
            if (mpki[order[j]] > mpki[order[i]]) {
                int x = order[i];

                order[i] = order[j];
                order[j] = x;
            }
    for (int d = 0; d < 4; d++) {
        di[order[d]] = 2 * d;
        di[order[7 - d]] = 2 * d + 1;
    }
    di_stp = corun_sim_static_stp(s, di);
    assert_int_equal(corun_sim_ref_place(s, CORUN_SIM_REF_ORACLE, 7, cpu, &info), 0);
    assert_string_equal(info.method, "exhaustive");
    best = corun_sim_static_stp(s, cpu);
    in_band("DI STP / oracle STP", di_stp / best, 0.96, 1.0 + 1e-9);
    corun_sim_free(s);
    corun_topo_free(t);
}

/* ---- orderings ----------------------------------------------------------- */

static void test_orderings(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo(d);
    double beside_stream, beside_compute, x, cc, cm;

    /* A cache-sensitive task suffers clearly more beside a streamer than
     * beside a compute-bound task (other cores, the same LLC). */
    pair_speedups(t, &m, task(CORUN_SIM_RABBIT), task(CORUN_SIM_STREAMING), 0, 2, &beside_stream,
                  &x);
    pair_speedups(t, &m, task(CORUN_SIM_RABBIT), task(CORUN_SIM_COMPUTE_INT), 0, 2, &beside_compute,
                  &x);
    if (!(beside_stream < beside_compute - 0.2))
        fail_msg("rabbit beside streamer %.3f, beside compute %.3f", beside_stream, beside_compute);
    /* Compute + memory-bound share an SMT core better than compute + compute. */
    pair_speedups(t, &m, task(CORUN_SIM_COMPUTE_INT), task(CORUN_SIM_COMPUTE_INT), 0, 1, &cc, &x);
    cc += x;
    pair_speedups(t, &m, task(CORUN_SIM_COMPUTE_INT), task(CORUN_SIM_STREAMING), 0, 1, &cm, &x);
    cm += x;
    if (!(cm > cc + 0.1))
        fail_msg("SMT yield compute+memory %.3f, compute+compute %.3f", cm, cc);
    corun_topo_free(t);
}

/* ---- conservation ---------------------------------------------------------- */

static void test_conservation(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 [numa] l3:2(size=8388608) core:4 pu:1");
    struct corun_topo *z = fixture_topo("AMD-19h-Zen3-2xEpyc-7763.xml");
    struct corun_sim_workload *w;
    struct corun_sim_machine m;
    struct corun_sim *s;
    int cpu[64];

    /* Cache shares of each L3 add up to its capacity, whatever the mix. */
    corun_sim_machine_defaults(t, &m);
    assert_int_equal(corun_sim_workload_random(8, 3, &w), 0);
    assert_int_equal(corun_sim_create(t, &m, w->tasks, 8, 3, &s), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(corun_sim_move(s, (unsigned)i, i), 0);
    for (int l3 = 0; l3 < 2; l3++) {
        double sum = 0;
        struct corun_sim_truth x;

        for (int i = 4 * l3; i < 4 * l3 + 4; i++) {
            assert_int_equal(corun_sim_truth(s, (unsigned)i, &x), 0);
            assert_true(x.cache_mb > 0);
            sum += x.cache_mb;
        }
        assert_true(fabs(sum - 8.0) < 1e-9);
    }
    corun_sim_free(s);
    corun_sim_workload_free(w);

    /* Bandwidth never above b_max: 64 random tasks, then 64 streamers
     * crammed on one node. */
    corun_sim_machine_defaults(z, &m);
    assert_int_equal(corun_sim_workload_random(64, 11, &w), 0);
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(corun_sim_create(z, &m, w->tasks, 64, 11, &s), 0);
        for (int i = 0; i < 64; i++)
            cpu[i] = -1;
        if (pass == 0)
            corun_sim_baseline_place(z, 64, 1, cpu);
        for (int i = 0; i < 64; i++)
            if (pass == 1) {
                w->tasks[i] = task(CORUN_SIM_STREAMING);
                cpu[i] = i;
            }
        corun_sim_free(s);
        assert_int_equal(corun_sim_create(z, &m, w->tasks, 64, 11, &s), 0);
        assert_int_equal(corun_sim_place(s, cpu), 0);
        for (unsigned n = 0; n < corun_topo_ndomains(z, CORUN_LEVEL_NUMA); n++) {
            double bw, lat;

            assert_int_equal(corun_sim_memory(s, n, &bw, &lat), 0);
            assert_true(bw <= m.bmax_gbps * 1e9 * (1 + 1e-12));
            if (pass == 1 && n == 0)
                assert_true(bw > 0.99 * m.bmax_gbps * 1e9); /* saturated, at the cap */
        }
        corun_sim_free(s);
    }
    corun_sim_workload_free(w);
    corun_topo_free(t);
    corun_topo_free(z);
}

/* ---- determinism ----------------------------------------------------------- */

static void test_determinism(void **state)
{
    struct corun_topo *t = fixture_topo("Intel-Skylake-2xXeon6140.xml");
    struct corun_sim_workload *w;
    struct corun_sim_machine m;
    struct corun_sim_run_opts o = {.duration_s = 2, .seeds = 3, .seed = 42, .effort = 0.05};
    struct corun_sim_result a, b;

    corun_sim_machine_defaults(t, &m);
    assert_int_equal(corun_sim_workload_random(10, 5, &w), 0);
    for (int r = 0; r < CORUN_SIM_NREFS; r++) {
        assert_int_equal(corun_sim_run_ref(t, &m, w->tasks, w->ntasks, r, &o, &a, NULL), 0);
        assert_int_equal(corun_sim_run_ref(t, &m, w->tasks, w->ntasks, r, &o, &b, NULL), 0);
        assert_memory_equal(&a.stp, &b.stp, sizeof(double));
        assert_memory_equal(&a.antt, &b.antt, sizeof(double));
        for (unsigned i = 0; i < a.ntasks; i++) {
            assert_memory_equal(&a.tasks[i].speedup, &b.tasks[i].speedup, sizeof(double));
            assert_int_equal(a.tasks[i].cpu, b.tasks[i].cpu);
        }
        corun_sim_result_release(&a);
        corun_sim_result_release(&b);
    }
    /* The oracle is never below the baseline nor the worst above it. */
    {
        struct corun_sim_result base, orc, worst;

        o.seeds = 1;
        assert_int_equal(
            corun_sim_run_ref(t, &m, w->tasks, 10, CORUN_SIM_REF_BASELINE, &o, &base, NULL), 0);
        assert_int_equal(
            corun_sim_run_ref(t, &m, w->tasks, 10, CORUN_SIM_REF_ORACLE, &o, &orc, NULL), 0);
        assert_int_equal(
            corun_sim_run_ref(t, &m, w->tasks, 10, CORUN_SIM_REF_WORST, &o, &worst, NULL), 0);
        assert_true(orc.stp >= base.stp - 1e-9);
        assert_true(worst.stp <= base.stp + 1e-9);
        corun_sim_result_release(&base);
        corun_sim_result_release(&orc);
        corun_sim_result_release(&worst);
    }
    corun_sim_workload_free(w);
    corun_topo_free(t);
}

/* Largest slowdown of the tasks of @s placed at @cpu, in the steady state. */
static double static_max_slowdown(struct corun_sim *s, const int *cpu)
{
    double max = 0;

    assert_int_equal(corun_sim_place(s, cpu), 0);
    for (unsigned i = 0; i < corun_sim_ntasks(s); i++) {
        struct corun_sim_truth x;

        assert_int_equal(corun_sim_truth(s, i, &x), 0);
        max = fmax(max, corun_sim_alone_ips(s, i) / x.ips);
    }
    return max;
}

/* Every placement of tasks @i.. of the @n (@cpu's length, the
 * simulation's tasks) on the CPUs @used leaves free: the least max
 * slowdown in *@best. */
static void min_max_slowdown(struct corun_sim *s, int *cpu, unsigned n, unsigned i, bool *used,
                             unsigned ncpus, double *best)
{
    if (i >= n) {
        *best = fmin(*best, static_max_slowdown(s, cpu));
        return;
    }
    for (unsigned c = 0; c < ncpus; c++) {
        if (used[c])
            continue;
        used[c] = true;
        cpu[i] = (int)c;
        min_max_slowdown(s, cpu, n, i + 1, used, ncpus, best);
        used[c] = false;
    }
}

/* Fairest is the placement with the least max slowdown, where the oracle
 * (best STP) is not: three streamers, a rabbit and two chasers on two
 * 8 MB L3s of two SMT cores. Small enough for the exhaustive search, whose
 * answer is checked against every one of the 20,160 placements; the run
 * then reports less max slowdown than any other reference's, and less STP
 * than the oracle's. */
static void test_fairest(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 l3:2(size=8388608) core:2 pu:2");
    struct corun_sim_task ts[6] = {task(CORUN_SIM_STREAMING), task(CORUN_SIM_STREAMING),
                                   task(CORUN_SIM_STREAMING), task(CORUN_SIM_RABBIT),
                                   task(CORUN_SIM_CHASING),   task(CORUN_SIM_CHASING)};
    struct corun_sim_run_opts o = {.duration_s = 1, .seeds = 1, .seed = 3};
    struct corun_sim_machine m;
    struct corun_sim_search info;
    struct corun_sim_result res[CORUN_SIM_NREFS];
    struct corun_sim *s;
    int cpu[6], all[6];
    bool used[8] = {0};
    double best = INFINITY, found;

    corun_sim_machine_defaults(t, &m);
    assert_int_equal(corun_sim_create(t, &m, ts, 6, 3, &s), 0);
    assert_int_equal(corun_sim_ref_place(s, CORUN_SIM_REF_FAIREST, 3, cpu, &info), 0);
    assert_string_equal(info.method, "exhaustive");
    assert_false(info.bound);
    found = static_max_slowdown(s, cpu);
    assert_int_equal(corun_sim_ntasks(s), 6);
    min_max_slowdown(s, all, 6, 0, used, 8, &best);
    print_message("  fairest max slowdown %.4f, least of all placements %.4f\n", found, best);
    assert_true(fabs(found - best) < 1e-9);
    corun_sim_free(s);

    for (int r = 0; r < CORUN_SIM_NREFS; r++)
        assert_int_equal(corun_sim_run_ref(t, &m, ts, 6, r, &o, &res[r], NULL), 0);
    for (int r = 0; r < CORUN_SIM_NREFS; r++)
        assert_true(res[CORUN_SIM_REF_FAIREST].max_slowdown <= res[r].max_slowdown + 1e-9);
    print_message("  max slowdown: oracle %.4f, fairest %.4f; STP: oracle %.4f, fairest %.4f\n",
                  res[CORUN_SIM_REF_ORACLE].max_slowdown, res[CORUN_SIM_REF_FAIREST].max_slowdown,
                  res[CORUN_SIM_REF_ORACLE].stp, res[CORUN_SIM_REF_FAIREST].stp);
    assert_true(res[CORUN_SIM_REF_FAIREST].max_slowdown <
                0.98 * res[CORUN_SIM_REF_ORACLE].max_slowdown);
    assert_true(res[CORUN_SIM_REF_FAIREST].stp < res[CORUN_SIM_REF_ORACLE].stp);
    for (int r = 0; r < CORUN_SIM_NREFS; r++)
        corun_sim_result_release(&res[r]);
    corun_topo_free(t);
}

/* ---- workloads ------------------------------------------------------------- */

static void test_workload_parse(void **state)
{
    struct corun_sim_workload *w;
    char err[256];
    const char *good =
        "# comment\n"
        "a class=rabbit count=3 ws_mb=8   # trailing comment\n"
        "\n"
        "b cpi_core=0.5 u_disp=0.7 mpki_max=3 mpki_min=1 ws_mb=2 mlp=2 pf=1.2 "
        "smt_penalty=0.05 instructions=1e9\n"
        "c class=sheep duration=2 rss_mb=300 | class=streaming duration=1 | mlp=4 duration=0.5\n";

    assert_int_equal(corun_sim_workload_parse(good, "w.txt", &w, err, sizeof(err)), 0);
    assert_int_equal(w->ntasks, 5);
    assert_string_equal(w->tasks[0].name, "a.1");
    assert_string_equal(w->tasks[2].name, "a.3");
    assert_int_equal(w->tasks[0].cls, CORUN_SIM_RABBIT);
    assert_true(w->tasks[0].phase[0].ws_mb == 8);
    assert_true(w->tasks[0].phase[0].mpki_max == 25); /* the rest from the preset */
    assert_int_equal(w->tasks[3].cls, CORUN_SIM_CUSTOM);
    assert_true(w->tasks[3].instructions == 1e9);
    assert_int_equal(w->tasks[4].nphases, 3);
    assert_true(w->tasks[4].rss_mb == 300 && w->tasks[0].rss_mb == 0);
    assert_int_equal(w->tasks[4].cls, CORUN_SIM_SHEEP);
    assert_true(w->tasks[4].phase[1].mpki_max == 30);
    assert_true(w->tasks[4].phase[2].mlp == 4 && w->tasks[4].phase[2].mpki_max == 30);
    corun_sim_workload_free(w);
}

static void test_workload_bad_lines(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"a class=banana\n", "w.txt:1: unknown class 'banana'"},
        {"\n\na foo=1\n", "w.txt:3: unknown parameter 'foo'"},
        {"a u_disp=abc\n", "w.txt:1: bad number 'abc' for u_disp"},
        {"a u_disp=1.5\n", "w.txt:1: u_disp must be in (0, 1]"},
        {"a mpki_min=9 mpki_max=3\n", "w.txt:1: mpki_max must be in [mpki_min, 1000]"},
        {"a count=0\n", "w.txt:1: count must be an integer in 1..4096"},
        {"a count=2.5\n", "w.txt:1: count must be an integer in 1..4096"},
        {"class=rabbit\n", "w.txt:1: task name missing before 'class=rabbit'"},
        {"ok\nb class=sheep |\n", "w.txt:2: empty phase after '|'"},
        {"a class=sheep | class=rabbit\n", "w.txt:1: phase 1 needs duration=SECONDS > 0"},
        {"a mlp\n", "w.txt:1: expected param=value, got 'mlp'"},
        {"a mlp=0.5\n", "w.txt:1: mlp must be in [1, 64]"},
        {"a cpi_core=-1\n", "w.txt:1: cpi_core must be in (0, 100]"},
        {"a ws_mb=nan\n", "w.txt:1: bad number 'nan' for ws_mb"},
        {"a count=3000\nb count=3000\n", "w.txt:2: more than 4096 tasks"},
        {"# nothing\n", "w.txt:1: no task in the workload"},
        {"a class=sheep duration=1 | instructions=5 duration=1\n",
         "w.txt:1: instructions belongs before the first '|'"},
        {"a rss_mb=-1\n", "w.txt:1: rss_mb must be in [0, 1e9]"},
        {"a class=sheep duration=1 | rss_mb=5 duration=1\n",
         "w.txt:1: rss_mb belongs before the first '|'"},
        {"bad/name\n", "w.txt:1: bad task name 'bad/name'"},
        {"a|class=rabbit duration=1\n", "w.txt:1: phase 1 needs duration=SECONDS > 0"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct corun_sim_workload *w = (void *)1;
        char err[256];
        int rc = corun_sim_workload_parse(cases[i].text, "w.txt", &w, err, sizeof(err));

        assert_true(rc < 0);
        assert_null(w);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)))
            fail_msg("case %zu: got '%s', want '%s...'", i, err, cases[i].want);
    }
}

/* Garbage never crashes the parser: it is accepted or named "w.txt:LINE:". */
static void test_workload_garbage(void **state)
{
    static const char alphabet[] = "ab=|#. \t\r\n0123456789eE-+class=rabbitcount=mlp=ws_mb";
    uint64_t x = 12345;
    char text[256], err[256];

    for (int round = 0; round < 3000; round++) {
        struct corun_sim_workload *w = NULL;
        size_t len = (size_t)(round % 200) + 1;
        int rc;

        for (size_t i = 0; i < len; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            text[i] = alphabet[(x >> 33) % (sizeof(alphabet) - 1)];
        }
        text[len] = '\0';
        rc = corun_sim_workload_parse(text, "w.txt", &w, err, sizeof(err));
        if (rc == 0) {
            assert_non_null(w);
            for (unsigned i = 0; i < w->ntasks; i++)
                for (unsigned p = 0; p < w->tasks[i].nphases; p++)
                    assert_true(corun_sim_phase_check(&w->tasks[i].phase[p], NULL));
            corun_sim_workload_free(w);
        } else {
            assert_null(w);
            assert_true(!strncmp(err, "w.txt:", 6));
        }
    }
}

static void test_workload_random(void **state)
{
    struct corun_sim_workload *a, *b, *c;

    assert_int_equal(corun_sim_workload_random(50, 9, &a), 0);
    assert_int_equal(corun_sim_workload_random(50, 9, &b), 0);
    assert_int_equal(corun_sim_workload_random(50, 10, &c), 0);
    assert_memory_equal(a->tasks, b->tasks, 50 * sizeof(*a->tasks));
    assert_true(memcmp(a->tasks, c->tasks, 50 * sizeof(*a->tasks)) != 0);
    for (unsigned i = 0; i < 50; i++)
        assert_true(corun_sim_phase_check(&a->tasks[i].phase[0], NULL));
    corun_sim_workload_free(c);
    assert_int_equal(corun_sim_workload_random(0, 9, &c), -EINVAL);
    assert_null(c);
    corun_sim_workload_free(a);
    corun_sim_workload_free(b);
}

/* ---- time: phases, throttling, makespan ------------------------------------ */

static void test_time(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo(d);
    struct corun_sim_task ts[2] = {task(CORUN_SIM_COMPUTE_INT), task(CORUN_SIM_SHEEP)};
    struct corun_sim_truth x;
    struct corun_sim_result r;
    struct corun_sim *s;
    double ips0;

    /* Phases: sheep for 1 s, then streaming for 1 s, repeating. */
    ts[1].nphases = 2;
    ts[1].phase[0].duration_s = 1;
    assert_int_equal(corun_sim_class_preset(CORUN_SIM_STREAMING, &ts[1].phase[1]), 0);
    ts[1].phase[1].duration_s = 1;
    /* Work: the compute task finishes after 1e10 instructions. */
    ts[0].instructions = 1e10;
    m.nthrottle = 1;
    m.throttle[0].t_s = 0.25;
    m.throttle[0].cap_ghz = 2.0;
    assert_int_equal(corun_sim_create(t, &m, ts, 2, 1, &s), 0);
    assert_int_equal(corun_sim_move(s, 0, 0), 0);
    assert_int_equal(corun_sim_move(s, 1, 2), 0);
    assert_int_equal(corun_sim_truth(s, 1, &x), 0);
    ips0 = x.ips;
    assert_true(x.ghz > 3.7);
    assert_int_equal(corun_sim_step(s, 0.5), 0);
    assert_int_equal(corun_sim_truth(s, 1, &x), 0);
    assert_true(fabs(x.ghz - 2.0) < 1e-9); /* throttled */
    assert_int_equal(corun_sim_step(s, 1.0), 0);
    assert_int_equal(corun_sim_truth(s, 1, &x), 0);
    assert_true(x.ips < 0.7 * ips0); /* streaming phase */
    assert_false(corun_sim_done(s));
    assert_int_equal(corun_sim_step(s, 20), 0);
    assert_true(corun_sim_done(s));
    assert_int_equal(corun_sim_result(s, &r), 0);
    assert_true(isfinite(r.tasks[0].finish_s) && r.tasks[0].finish_s > 1 &&
                r.tasks[0].finish_s < 5);
    assert_true(isnan(r.makespan_s)); /* the sheep has no work amount */
    assert_true(fabs(r.tasks[0].instructions - 1e10) < 1);
    assert_true(r.tasks[0].speedup > 0.5 && r.tasks[0].speedup < 1.0); /* throttled */
    assert_int_equal(corun_sim_now_ns(s), 21500000000ull);
    corun_sim_result_release(&r);
    corun_sim_free(s);
    corun_topo_free(t);
}

/*
 * Memory follows its task: a chaser started on node 0 and moved to node 1
 * pays remote latency until its memory moves; the move stalls it for its
 * resident set at the machine's migration rate (then no instruction
 * retires), after which it runs as fast as on its first node.
 */
static void test_move_memory(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo("pack:2 [numa] l3:1(size=8388608) core:2 pu:1");
    struct corun_sim_task ts[1] = {task(CORUN_SIM_CHASING)};
    struct corun_sim_truth x;
    struct corun_sim_result r;
    struct corun_sim *s;
    double local, remote, before, stall;

    ts[0].rss_mb = 512;
    m.migrate_gbps = 2.0;
    stall = 512.0 / 1024 / 2.0; /* 0.25 s */
    assert_true(corun_sim_task_rss_mb(&ts[0]) == 512);
    assert_int_equal(corun_sim_create(t, &m, ts, 1, 1, &s), 0);
    assert_int_equal(corun_sim_move_memory(s, 0, 1), -EINVAL); /* never ran: no memory */
    assert_int_equal(corun_sim_move(s, 0, 0), 0);
    assert_int_equal(corun_sim_truth(s, 0, &x), 0);
    local = x.ips;
    assert_int_equal(corun_sim_move(s, 0, 2), 0); /* node 1, memory still on 0 */
    assert_int_equal(corun_sim_truth(s, 0, &x), 0);
    remote = x.ips;
    assert_true(remote < 0.85 * local);
    assert_int_equal(corun_sim_move_memory(s, 0, 2), -EINVAL);
    assert_int_equal(corun_sim_move_memory(s, 0, 0), 0); /* already there */
    assert_int_equal(corun_sim_step(s, 0.1), 0);
    assert_int_equal(corun_sim_result(s, &r), 0);
    before = r.tasks[0].instructions;
    assert_int_equal(r.mem_moves, 0);
    corun_sim_result_release(&r);
    assert_int_equal(corun_sim_move_memory(s, 0, 1), 0);
    assert_int_equal(corun_sim_step(s, stall * 0.999), 0);
    assert_int_equal(corun_sim_result(s, &r), 0);
    assert_true(r.tasks[0].instructions == before); /* stalled throughout */
    corun_sim_result_release(&r);
    assert_int_equal(corun_sim_step(s, 1.0), 0);
    assert_int_equal(corun_sim_truth(s, 0, &x), 0);
    assert_true(fabs(x.ips / local - 1) < 1e-6); /* local again */
    assert_int_equal(corun_sim_result(s, &r), 0);
    assert_int_equal(r.mem_moves, 1);
    assert_int_equal(r.tasks[0].mem_moves, 1);
    assert_true(fabs(r.mem_stall_s - stall) < 1e-9);
    assert_true(fabs(r.tasks[0].instructions - before - local * (1.0 - 0.001 * stall)) <
                1e-6 * local);
    corun_sim_result_release(&r);
    corun_sim_free(s);
    /* The default resident set: twice the working set, at least 16 MB. */
    ts[0].rss_mb = 0;
    assert_true(corun_sim_task_rss_mb(&ts[0]) == 2 * ts[0].phase[0].ws_mb);
    ts[0] = task(CORUN_SIM_COMPUTE_INT);
    assert_true(corun_sim_task_rss_mb(&ts[0]) == 16);
    corun_topo_free(t);
}

/* ---- sensor and actuator ----------------------------------------------------- */

static void test_sense_act(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo(d);
    struct corun_sim_task ts[2] = {task(CORUN_SIM_RABBIT), task(CORUN_SIM_STREAMING)};
    struct corun_sense_opts so = {0};
    struct corun_act_opts ao = {0};
    struct corun_sample a, b;
    struct corun_sim_counters c;
    struct corun_cpuset set = {0};
    struct corun_sim_result r;
    struct corun_sim *s;
    void *sense, *act;
    int h, ha;
    char why[128];

    assert_int_equal(corun_sense_sim_ops.probe(&so, why, sizeof(why)), -ENOTSUP);
    assert_int_equal(corun_sim_create(t, &m, ts, 2, 5, &s), 0);
    so.backend_cfg = s;
    ao.backend_cfg = s;
    assert_int_equal(corun_sense_sim_ops.probe(&so, why, sizeof(why)), 0);
    assert_int_equal(corun_sense_sim_ops.open(&so, &sense), 0);
    assert_int_equal(corun_act_sim_ops.open(&ao, &act), 0);
    assert_int_equal(corun_sense_sim_ops.attach(sense, 7, &h), -ESRCH);
    assert_int_equal(corun_sense_sim_ops.attach(sense, 0, &h), 0);
    assert_int_equal(corun_sense_sim_ops.attach(sense, 1, &ha), 0);
    assert_non_null(corun_sense_sim_ops.why_missing(sense, CORUN_EV_DTLB_MISSES));
    assert_null(corun_sense_sim_ops.why_missing(sense, CORUN_EV_LLC_MISSES));

    /* Apply: CPU sets in kernel numbers; one CPU pins. */
    assert_int_equal(corun_cpuset_init(&set, 64), 0);
    corun_cpuset_set(&set, corun_topo_cpu(t, 4)->os_index);
    assert_int_equal(corun_act_sim_ops.apply(act, 0, &set), 0);
    assert_int_equal(corun_sim_cpu_of(s, 0), 4);
    /* A wide set: the balancer's choice, an idle core, not 4 or its sibling. */
    corun_cpuset_zero(&set);
    for (unsigned i = 4; i < 8; i++)
        corun_cpuset_set(&set, corun_topo_cpu(t, i)->os_index);
    assert_int_equal(corun_act_sim_ops.apply(act, 1, &set), 0);
    assert_true(corun_sim_cpu_of(s, 1) == 6 || corun_sim_cpu_of(s, 1) == 7);

    assert_int_equal(corun_sense_sim_ops.read(sense, h, &a), 0);
    assert_int_equal(corun_sim_step(s, 1.0), 0);
    assert_int_equal(corun_sense_sim_ops.read(sense, h, &b), 0);
    assert_int_equal(b.t_ns, 1000000000ull);
    assert_true(b.valid & CORUN_EV_BIT(CORUN_EV_INSTRUCTIONS));
    assert_false(b.valid & CORUN_EV_BIT(CORUN_EV_BRANCH_MISSES));
    assert_int_equal(corun_sim_counters(s, 0, &c), 0);
    /* Noisy within ±CORUN_SIM_NOISE, never exact. */
    in_band("instructions noise", b.value[CORUN_EV_INSTRUCTIONS] / c.instructions,
            1 - CORUN_SIM_NOISE, 1 + CORUN_SIM_NOISE);
    in_band("cycles/ref_cycles = f/base",
            (double)b.value[CORUN_EV_CYCLES] / b.value[CORUN_EV_REF_CYCLES], 3.8 / 2.5 * 0.93,
            3.8 / 2.5 * 1.07);
    assert_true(b.value[CORUN_EV_INSTRUCTIONS] != (uint64_t)llround(c.instructions));
    in_band("task clock", b.value[CORUN_EV_TASK_CLOCK_NS] / 1e9, 0.97, 1.03);
    assert_true(b.value[CORUN_EV_LLC_MISSES] <= b.value[CORUN_EV_LLC_REFERENCES]);

    /* Move and restore: a migration each. */
    corun_cpuset_zero(&set);
    corun_cpuset_set(&set, corun_topo_cpu(t, 10)->os_index);
    assert_int_equal(corun_act_sim_ops.apply(act, 0, &set), 0);
    assert_int_equal(corun_sim_cpu_of(s, 0), 10);
    assert_int_equal(corun_act_sim_ops.restore_all(act), 0);
    assert_int_equal(corun_sim_step(s, 0.1), 0);
    assert_int_equal(corun_sim_result(s, &r), 0);
    assert_int_equal(r.tasks[0].migrations, 1); /* 4 -> 10; -1 -> 4 was no migration */
    assert_int_equal(corun_sense_sim_ops.detach(sense, h), 0);
    assert_int_equal(corun_sense_sim_ops.read(sense, h, &a), -EBADF);
    corun_sim_result_release(&r);
    corun_cpuset_release(&set);
    corun_sense_sim_ops.close(sense);
    corun_act_sim_ops.close(act);
    corun_sim_free(s);
    corun_topo_free(t);
}

/* ---- a registered policy through sense-sim and act-sim --------------------- */

static struct corun_task_profile seen[4];
static unsigned seen_n;

/* Places task i on CPU 2i (its own core) and remembers what it was shown. */
static int spy_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    seen_n = snap->ntasks;
    memcpy(seen, snap->tasks, snap->ntasks * sizeof(seen[0]));
    for (unsigned i = 0; i < plan->ntasks; i++)
        plan->cpu[i] = (int)(2 * i);
    return 0;
}

static int full_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    return -ENOSPC;
}

/* Events a run reported, and when. */
struct ev_log {
    unsigned n, moves;
    double t[16];
};

static void log_event(void *ctx, double t_s, const struct corun_engine_event *ev)
{
    struct ev_log *l = ctx;

    if (l->n < 16)
        l->t[l->n] = t_s;
    l->n++;
    if (ev->kind == CORUN_ENGINE_EV_MOVE) {
        assert_true(ev->idx < 4);
        assert_int_equal(ev->to, (int)(2 * ev->idx));
        assert_true(isfinite(ev->speed_now) && isfinite(ev->speed_planned));
        l->moves++;
    }
}

static void test_run_policy(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo(d);
    struct corun_sim_task ts[4] = {task(CORUN_SIM_STREAMING), task(CORUN_SIM_COMPUTE_INT),
                                   task(CORUN_SIM_RABBIT), task(CORUN_SIM_SHEEP)};
    struct corun_policy spy = {.name = "spy", .summary = "test", .place = spy_place};
    struct corun_policy full = {.name = "full", .summary = "test", .place = full_place};
    struct corun_sim_run_opts o = {.duration_s = 5, .seed = 3};
    struct corun_sim_result r;

    assert_int_equal(corun_sim_run_policy(t, &m, ts, 4, &spy, &o, &r), 0);
    assert_int_equal(seen_n, 4);
    /* Through the engine: classes learned from counters alone (no hint is
     * given), figures finite, and in the last snapshot every task where the
     * previous plan pinned it, its memory on the node it started on. */
    assert_int_equal(seen[0].cls, CORUN_CLASS_STREAMING);
    assert_int_equal(seen[1].cls, CORUN_CLASS_COMPUTE);
    for (unsigned i = 0; i < 4; i++) {
        assert_true(seen[i].pressure[CORUN_LEVEL_CORE] >= 0);
        assert_true(seen[i].home_known && seen[i].home_node == 0);
        assert_int_equal(seen[i].cpu, (int)(2 * i));
        assert_true(seen[i].ipc > 0 && isfinite(seen[i].ipc));
        in_band("freq ratio", seen[i].freq_ratio, 1.0, 3.8 / 2.5 * 1.05);
        in_band("cpu util", seen[i].cpu_util, 0.95, 1.05);
        assert_true(seen[i].mem_bw_bps > 0);
        assert_int_equal(r.tasks[i].cpu, (int)(2 * i));
    }
    assert_true(seen[0].llc_mpki > 10 * seen[1].llc_mpki); /* streamer vs compute */
    assert_true(seen[0].mem_bw_bps > seen[3].mem_bw_bps);
    assert_true(r.sim_s == 5.0 && r.stp > 3.0 && r.stp <= 4.0);
    corun_sim_result_release(&r);
    /* Asked for, the learned profiles come back, each where the engine
     * left its task. */
    {
        struct corun_task_profile prof[4];

        memset(prof, 0, sizeof(prof));
        o.profiles = prof;
        assert_int_equal(corun_sim_run_policy(t, &m, ts, 4, &spy, &o, &r), 0);
        for (unsigned i = 0; i < 4; i++)
            assert_int_equal(prof[i].cpu, (int)(2 * i));
        assert_int_equal(prof[0].cls, CORUN_CLASS_STREAMING);
        corun_sim_result_release(&r);
        o.profiles = NULL;
    }
    /* Asked for, the engine's events come with the simulated time: the
     * spy's plan pins each task once, after the warm-up, and nothing else
     * happens; the run is the same as without them. */
    {
        struct ev_log log = {0};
        double stp;

        assert_int_equal(corun_sim_run_policy(t, &m, ts, 4, &spy, &o, &r), 0);
        stp = r.stp;
        corun_sim_result_release(&r);
        o.on_event = log_event;
        o.event_ctx = &log;
        assert_int_equal(corun_sim_run_policy(t, &m, ts, 4, &spy, &o, &r), 0);
        assert_true(r.stp == stp);
        assert_int_equal(log.n, 4);
        assert_int_equal(log.moves, 4);
        for (unsigned i = 0; i < 4; i++)
            assert_true(log.t[i] >= 0.5 - 1e-9 && log.t[i] <= 0.5 + 0.25 + 1e-9);
        corun_sim_result_release(&r);
        o.on_event = NULL;
    }
    assert_int_equal(corun_sim_run_policy(t, &m, ts, 4, &full, &o, &r), -ENOSPC);
    corun_topo_free(t);
}

/* ---- every fixture machine ------------------------------------------------- */

static void test_fixture_machines(void **state)
{
    static const char *names[] = {"AMD-15h-Bulldozer-4xOpteron-6272.xml",
                                  "AMD-17h-Zen-2xEpyc-7451.xml",
                                  "AMD-19h-Zen3-2xEpyc-7763.xml",
                                  "Intel-Haswell-2xXeon-E5-2680v3.xml",
                                  "Intel-KnightsLanding-XeonPhi-7210.xml",
                                  "Intel-RaptorLake-Corei7-1370P.xml",
                                  "Intel-Skylake-2xXeon6140.xml",
                                  "linux-128arm-2pa2n8cluster4co.xml",
                                  "linux-16em64t-4s2c2t.xml",
                                  "linux-20em64t-hybrid-1p6c2t+2ca4co1t.xml",
                                  "linux-256ppc-8n8s4t.xml",
                                  "linux-2i386-2t-hugepagesizecount.xml",
                                  "linux-64amd64-4s2n4ca2co.xml",
                                  "this-vm-AMD-EPYC-2c.xml"};
    struct corun_sim_workload *w;

    assert_int_equal(corun_sim_workload_random(4, 2, &w), 0);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct corun_topo *t = fixture_topo(names[i]);
        struct corun_sim_machine m;
        struct corun_sim_run_opts o = {.duration_s = 1, .seeds = 2, .seed = 1, .effort = 0.1};
        struct corun_sim_result base, orc;

        corun_sim_machine_defaults(t, &m);
        assert_true(m.origin[0] != '\0');
        assert_true(m.base_ghz > 0 && m.turbo1_ghz >= m.turbo_all_ghz &&
                    m.turbo_all_ghz >= m.base_ghz);
        assert_int_equal(
            corun_sim_run_ref(t, &m, w->tasks, 4, CORUN_SIM_REF_BASELINE, &o, &base, NULL), 0);
        assert_int_equal(
            corun_sim_run_ref(t, &m, w->tasks, 4, CORUN_SIM_REF_ORACLE, &o, &orc, NULL), 0);
        if (!(base.stp > 0 && base.stp <= 4 * 1.6 && orc.stp >= base.stp - 1e-6))
            fail_msg("%s: baseline %.3f oracle %.3f", names[i], base.stp, orc.stp);
        corun_sim_result_release(&base);
        corun_sim_result_release(&orc);
        corun_topo_free(t);
    }
    corun_sim_workload_free(w);
}

/*
 * A Hygon machine (vendor HygonGenuine: AMD's Zen under licence) gets the
 * AMD defaults: the 2x EPYC 7451 fixture, its vendor and model renamed to
 * a Hygon C86 7185's, runs on what the EPYC gets but for the origin line,
 * which names the vendor. Before, it got the unknown vendor's flat clock.
 */
static void test_hygon_defaults(void **state)
{
    struct corun_topo *amd = fixture_topo("AMD-17h-Zen-2xEpyc-7451.xml"), *hy = NULL;
    struct corun_topo_opts o = {.source = CORUN_TOPO_XML};
    struct corun_sim_machine ma, mh;
    char path[] = "/tmp/corun-hygon-XXXXXX", *buf, *p;
    FILE *f = fopen(fixture("topologies/AMD-17h-Zen-2xEpyc-7451.xml"), "r");
    long n;
    int fd;

    (void)state;
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    buf = calloc((size_t)n + 1, 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    /* Same lengths: the file keeps its layout. */
    for (p = buf; (p = strstr(p, "\"AuthenticAMD\"")); p++)
        memcpy(p + 1, "HygonGenuine", 12);
    for (p = buf; (p = strstr(p, "AMD EPYC 7451 24-Core")); p++)
        memcpy(p, "Hygon C86 7185 32-co", 20);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, (size_t)n), n);
    close(fd);
    free(buf);
    o.input = path;
    assert_int_equal(corun_topo_load(&o, &hy), 0);
    unlink(path);
    assert_string_equal(corun_topo_info(hy)->cpu_vendor, "HygonGenuine");
    corun_sim_machine_defaults(amd, &ma);
    corun_sim_machine_defaults(hy, &mh);
    assert_int_equal(mh.turbo, CORUN_SIM_TURBO_LINEAR);
    assert_int_equal(mh.turbo, ma.turbo);
    assert_true(mh.base_ghz == ma.base_ghz && mh.turbo1_ghz == ma.turbo1_ghz &&
                mh.turbo_all_ghz == ma.turbo_all_ghz && mh.mlp_core == ma.mlp_core &&
                mh.bmax_gbps == ma.bmax_gbps && mh.l3_mb == ma.l3_mb);
    assert_non_null(strstr(mh.origin, "HygonGenuine"));
    corun_topo_free(amd);
    corun_topo_free(hy);
}

/* Hybrid: a task runs slower on an E-core (the fixture gives no capacity:
 * the simulator's default for the less efficient kind applies). */
static void test_hybrid(void **state)
{
    struct corun_topo *t = fixture_topo("Intel-RaptorLake-Corei7-1370P.xml");
    struct corun_sim_task ts = task(CORUN_SIM_COMPUTE_INT);
    struct corun_sim_machine m;
    struct corun_sim_truth x;
    struct corun_sim *s;
    int p = -1, e = -1;
    double ip, ie;

    for (unsigned c = 0; c < corun_topo_ncpus(t); c++) {
        const struct corun_topo_cpu *cpu = corun_topo_cpu(t, c);

        if (!strcmp(corun_topo_kind(t, (unsigned)cpu->kind)->name, "IntelCore") && p < 0)
            p = (int)c;
        if (!strcmp(corun_topo_kind(t, (unsigned)cpu->kind)->name, "IntelAtom") && e < 0)
            e = (int)c;
    }
    assert_true(p >= 0 && e >= 0);
    corun_sim_machine_defaults(t, &m);
    assert_int_equal(corun_sim_create(t, &m, &ts, 1, 1, &s), 0);
    assert_int_equal(corun_sim_move(s, 0, p), 0);
    assert_int_equal(corun_sim_truth(s, 0, &x), 0);
    ip = x.ips;
    in_band("speedup alone on the fastest CPU", ip / corun_sim_alone_ips(s, 0), 0.999, 1.001);
    assert_int_equal(corun_sim_move(s, 0, e), 0);
    assert_int_equal(corun_sim_truth(s, 0, &x), 0);
    ie = x.ips;
    in_band("E-core / P-core speed", ie / ip, 0.5, 0.7);
    corun_sim_free(s);
    corun_topo_free(t);
}

/* Where only SMT pairs share, the oracle matches pairs: better than the
 * baseline and than any of 300 random placements. */
static void test_oracle_matching(void **state)
{
    struct corun_topo *t = synthetic_topo("pack:1 [numa] l2:10(size=1048576) core:1 pu:2");
    struct corun_sim_workload *w;
    struct corun_sim_machine m;
    struct corun_sim_search info;
    struct corun_sim *s;
    int cpu[14];
    double orc, best_rand = 0;

    corun_sim_machine_defaults(t, &m);
    assert_int_equal(corun_sim_workload_random(14, 21, &w), 0);
    assert_int_equal(corun_sim_create(t, &m, w->tasks, 14, 21, &s), 0);
    assert_int_equal(corun_sim_ref_place(s, CORUN_SIM_REF_ORACLE, 21, cpu, &info), 0);
    assert_string_equal(info.method, "matching");
    assert_true(info.bound);
    orc = corun_sim_static_stp(s, cpu);
    assert_int_equal(corun_sim_ref_place(s, CORUN_SIM_REF_BASELINE, 21, cpu, NULL), 0);
    assert_true(orc >= corun_sim_static_stp(s, cpu) - 1e-9);
    for (int r = 0; r < 300; r++) {
        double v;

        assert_int_equal(corun_sim_ref_place(s, CORUN_SIM_REF_RANDOM, (uint64_t)r, cpu, NULL), 0);
        v = corun_sim_static_stp(s, cpu);
        best_rand = v > best_rand ? v : best_rand;
    }
    if (!(orc >= best_rand - 1e-9))
        fail_msg("matching %.4f below a random placement %.4f", orc, best_rand);
    corun_sim_free(s);
    corun_sim_workload_free(w);
    corun_topo_free(t);
}

/* Bad inputs to the API. */
static void test_api_errors(void **state)
{
    const char *d;
    struct corun_sim_machine m = preset("skx28", &d);
    struct corun_topo *t = synthetic_topo(d);
    struct corun_sim_task ts = task(CORUN_SIM_SHEEP), bad = ts;
    struct corun_sim *s;

    assert_int_equal(corun_sim_machine_preset("nope", &m, NULL), -ENOENT);
    m = preset("skx28", NULL);
    bad.phase[0].mlp = 0;
    assert_int_equal(corun_sim_create(t, &m, &bad, 1, 1, &s), -EINVAL);
    assert_int_equal(corun_sim_create(t, &m, &ts, 0, 1, &s), -EINVAL);
    assert_int_equal(corun_sim_create(t, &m, &ts, 1, 1, &s), 0);
    assert_int_equal(corun_sim_move(s, 0, 56), -EINVAL);
    assert_int_equal(corun_sim_move(s, 1, 0), -EINVAL);
    assert_int_equal(corun_sim_step(s, 0), -EINVAL);
    assert_int_equal(corun_sim_step(s, NAN), -EINVAL);
    assert_true(isnan(corun_sim_static_stp(s, (int[]){-1})));
    corun_sim_free(s);
    corun_sim_free(NULL);
    corun_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cal_mcf_streamer),
        cmocka_unit_test(test_cal_llc_size),
        cmocka_unit_test(test_cal_loaded_latency),
        cmocka_unit_test(test_cal_smt_yield),
        cmocka_unit_test(test_cal_turbo),
        cmocka_unit_test(test_cal_di),
        cmocka_unit_test(test_orderings),
        cmocka_unit_test(test_conservation),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_fairest),
        cmocka_unit_test(test_workload_parse),
        cmocka_unit_test(test_workload_bad_lines),
        cmocka_unit_test(test_workload_random),
        cmocka_unit_test(test_workload_garbage),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_move_memory),
        cmocka_unit_test(test_sense_act),
        cmocka_unit_test(test_fixture_machines),
        cmocka_unit_test(test_hygon_defaults),
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_run_policy),
        cmocka_unit_test(test_hybrid),
        cmocka_unit_test(test_oracle_matching),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
