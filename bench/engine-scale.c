/*
 * engine-scale.c — what one engine step costs on a big machine: by default
 * 2048 tasks of a seeded mix on the synthetic 512-CPU machine of
 * bench/place-scale, run in the simulator through the engine with the
 * corun policy, as corun_sim_run_policy() runs it (the kernel's placement
 * first, a 0.25 s interval, a 0.5 s warm-up, the machine's turbo table).
 *
 * Each step (sample every task, learn, plan, apply) is timed on the wall
 * clock, the simulator's own stepping left out. A step that asked the
 * policy for a plan is a planning step; the others only sample (the
 * warm-up, or a trial waiting for its verdict). bench/place-scale times
 * the policy alone; this is the policy with everything the engine adds
 * around it (the profiler's update, the predictions of the plan and of
 * where the tasks run, the trial's bookkeeping). No goal is set for it; the
 * share of one CPU it takes at the daemon's default interval (1 s) is
 * printed beside the median.
 *
 * The run is repeated (5 times by default) and the steps of all runs
 * pooled: the figures are the median and the largest step.
 *
 * Usage: engine-scale [TASKS [SYNTHETIC-DESC [SECONDS [REPEATS]]]]
 * Prints a table and one JSON line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corun/engine.h"
#include "corun/policy.h"
#include "corun/sim.h"
#include "corun/topo.h"

#include "bench-util.h"

#define INTERVAL_S 0.25
#define WARMUP_S   0.5

/* Median and largest of @v[0..n) (sorted in place); NAN when empty. */
static void med_max(double *v, unsigned n, double *med, double *max)
{
    if (!n) {
        *med = *max = NAN;
        return;
    }
    qsort(v, n, sizeof(*v), cmp_d);
    *med = v[n / 2];
    *max = v[n - 1];
}

struct times {
    double *plan, *other; /* ms of each planning step, each other step */
    unsigned nplan, nother;
    double total; /* ms of every step */
    unsigned long migrations;
};

/* One engine run of @secs simulated seconds: the steps' times added to @tm.
 * 0, or 1 with the reason printed. */
static int run_once(const struct corun_topo *t, unsigned n, double secs, struct times *tm)
{
    struct corun_sim_machine m;
    struct corun_sim_workload *w = NULL;
    struct corun_sim *sim = NULL;
    struct corun_sense_opts so = {0};
    struct corun_act_opts ao = {0};
    struct corun_engine_opts eo = {0};
    struct corun_engine *e = NULL;
    struct corun_engine_stats st = {0};
    void *sense = NULL, *act = NULL;
    unsigned nsteps = (unsigned)(secs / INTERVAL_S + 0.5);
    uint64_t plans = 0;
    double *turbo = NULL;
    int *cpu = malloc(n * sizeof(*cpu)), rc = 1;

    corun_sim_machine_defaults(t, &m);
    if (!cpu || corun_sim_workload_random(n, 1, &w)) {
        fprintf(stderr, "engine-scale: out of memory\n");
        goto out;
    }
    for (unsigned i = 0; i < n; i++)
        cpu[i] = -1;
    corun_sim_baseline_place(t, n, 1, cpu);
    if (corun_sim_create(t, &m, w->tasks, n, 1, &sim) || corun_sim_place(sim, cpu)) {
        fprintf(stderr, "engine-scale: the simulator refused %u tasks\n", n);
        goto out;
    }
    so.backend_cfg = sim;
    ao.backend_cfg = sim;
    turbo = corun_sim_turbo_table(t, &m, &eo.turbo_n);
    if (!turbo || corun_sense_sim_ops.open(&so, &sense) || corun_act_sim_ops.open(&ao, &act)) {
        fprintf(stderr, "engine-scale: cannot open the simulator's sensor and actuator\n");
        goto out;
    }
    eo.topo = t;
    eo.policy = corun_policy_find("corun");
    eo.sense = &corun_sense_sim_ops;
    eo.sense_state = sense;
    eo.act = &corun_act_sim_ops;
    eo.act_state = act;
    eo.clock = corun_sim_clock(sim);
    eo.interval_ns = (uint64_t)llround(INTERVAL_S * 1e9);
    eo.warmup_ns = (uint64_t)llround(WARMUP_S * 1e9);
    eo.seed = 1;
    eo.turbo_rel = turbo;
    if (corun_engine_new(&eo, &e)) {
        fprintf(stderr, "engine-scale: out of memory\n");
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        struct corun_engine_task tk = {
            .target = (pid_t)i, .id = i, .hint = CORUN_CLASS_UNKNOWN, .weight = 1.0};

        if (corun_engine_add(e, &tk, NULL) ||
            corun_engine_set_home(e, i,
                                  corun_topo_cpu(t, (unsigned)cpu[i])->dom[CORUN_LEVEL_NUMA]) ||
            corun_engine_set_cpu(e, i, cpu[i])) {
            fprintf(stderr, "engine-scale: the engine refused task %u\n", i);
            goto out;
        }
    }
    for (unsigned k = 0; k <= nsteps; k++) {
        double t0, ms;

        if (k && eo.clock.wait_until(sim, (uint64_t)llround(k * INTERVAL_S * 1e9))) {
            fprintf(stderr, "engine-scale: the simulator failed at step %u\n", k);
            goto out;
        }
        t0 = now_ms();
        if (corun_engine_step(e)) {
            fprintf(stderr, "engine-scale: engine step %u failed\n", k);
            goto out;
        }
        ms = now_ms() - t0;
        tm->total += ms;
        corun_engine_stats(e, &st);
        if (st.plans > plans)
            tm->plan[tm->nplan++] = ms;
        else
            tm->other[tm->nother++] = ms;
        plans = st.plans;
    }
    tm->migrations += (unsigned long)st.migrations;
    rc = 0;
out:
    corun_engine_free(e);
    if (sense)
        corun_sense_sim_ops.close(sense);
    if (act)
        corun_act_sim_ops.close(act);
    corun_sim_free(sim);
    corun_sim_workload_free(w);
    free(turbo);
    free(cpu);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2048;
    const char *desc = argc > 2 ? argv[2] : "pack:2 numa:2 l3:4 l2:4 core:4 pu:2";
    double secs = argc > 3 ? atof(argv[3]) : 5.0;
    unsigned reps = argc > 4 ? (unsigned)atoi(argv[4]) : 5, nsteps, steps_all;
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC, .input = desc};
    struct corun_topo *t;
    struct times tm = {0};
    double pm_med, pm_max, om_med, om_max, share;

    if (!n || !reps || !(secs > 2 * WARMUP_S)) {
        fprintf(stderr, "usage: engine-scale [TASKS [SYNTHETIC-DESC [SECONDS > 1 [REPEATS]]]]\n");
        return 2;
    }
    if (corun_topo_load(&o, &t)) {
        fprintf(stderr, "engine-scale: bad synthetic description '%s'\n", desc);
        return 2;
    }
    nsteps = (unsigned)(secs / INTERVAL_S + 0.5);
    steps_all = (nsteps + 1) * reps;
    tm.plan = calloc(steps_all, sizeof(*tm.plan));
    tm.other = calloc(steps_all, sizeof(*tm.other));
    if (!tm.plan || !tm.other) {
        fprintf(stderr, "engine-scale: out of memory\n");
        return 1;
    }
    printf("engine-scale: %u tasks on %u CPUs (synthetic:%s), %.2f s simulated, %u steps, "
           "%u runs\n",
           n, corun_topo_ncpus(t), desc, secs, nsteps + 1, reps);
    for (unsigned r = 0; r < reps; r++)
        if (run_once(t, n, secs, &tm))
            return 1;
    med_max(tm.plan, tm.nplan, &pm_med, &pm_max);
    med_max(tm.other, tm.nother, &om_med, &om_max);
    share = tm.total / (steps_all * INTERVAL_S * 1e3);
    printf("%-16s %6s %10s %10s\n", "step", "count", "median_ms", "max_ms");
    printf("%-16s %6u %10.2f %10.2f\n", "planning", tm.nplan, pm_med, pm_max);
    printf("%-16s %6u %10.2f %10.2f\n", "sampling only", tm.nother, om_med, om_max);
    printf("engine CPU: %.1f%% of one CPU at a %.2f s interval; a median planning step each "
           "1 s: %.1f%%; migrations per run %.1f\n",
           100.0 * share, INTERVAL_S, pm_med / 10.0, (double)tm.migrations / reps);
    printf("{\"bench\":\"engine-scale\",\"tasks\":%u,\"cpus\":%u,\"machine\":\"%s\","
           "\"seconds\":%.2f,\"runs\":%u,\"planning\":{\"count\":%u,\"median_ms\":%.3f,"
           "\"max_ms\":%.3f},\"sampling\":{\"count\":%u,\"median_ms\":%.3f,\"max_ms\":%.3f},"
           "\"cpu_share_interval\":%.4f,\"cpu_share_1s\":%.4f}\n",
           n, corun_topo_ncpus(t), desc, secs, reps, tm.nplan, pm_med, pm_max, tm.nother, om_med,
           om_max, share, pm_med / 1e3);
    free(tm.plan);
    free(tm.other);
    corun_topo_free(t);
    return 0;
}
