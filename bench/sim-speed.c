/*
 * sim-speed.c — how fast the simulator runs: 64 tasks on the 128-CPU
 * dual EPYC 7763 fixture for 60 simulated seconds, driven the way the engine
 * drives it (a 10 ms step, every task's counters read through sense-sim each
 * step, tasks with phases so the model re-solves often), plus the oracle's
 * search for the same tasks. Goal: the run under 2 s, a default `corun sim`
 * (all references) under 10 s. Prints a table, then one JSON line.
 *
 * usage: sim-speed [REPEATS]   (median of REPEATS, default 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corun/sim.h"

#define NTASKS 64
#define SIM_S  60.0
#define STEP_S 0.01

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* One engine-like run; returns its wall time and the number of steps. */
static double run_once(const struct corun_topo *t, const struct corun_sim_machine *m,
                       const struct corun_sim_task *tasks, double *stp)
{
    struct corun_sense_opts so = {0};
    struct corun_sample smp;
    struct corun_sim_result r;
    struct corun_sim *sim;
    int cpu[NTASKS], h[NTASKS];
    void *sense;
    double t0 = now_s(), t1;

    for (int i = 0; i < NTASKS; i++)
        cpu[i] = -1;
    if (corun_sim_create(t, m, tasks, NTASKS, 1, &sim))
        exit(1);
    corun_sim_baseline_place(t, NTASKS, 1, cpu);
    corun_sim_place(sim, cpu);
    so.backend_cfg = sim;
    corun_sense_sim_ops.open(&so, &sense);
    for (int i = 0; i < NTASKS; i++)
        corun_sense_sim_ops.attach(sense, i, &h[i]);
    for (long s = 0; s < (long)(SIM_S / STEP_S + 0.5); s++) {
        corun_sim_step(sim, STEP_S);
        for (int i = 0; i < NTASKS; i++)
            corun_sense_sim_ops.read(sense, h[i], &smp);
    }
    corun_sim_result(sim, &r);
    *stp = r.stp;
    corun_sim_result_release(&r);
    corun_sense_sim_ops.close(sense);
    corun_sim_free(sim);
    t1 = now_s();
    return t1 - t0;
}

int main(int argc, char **argv)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_XML,
                                .input = CORUN_FIXTURES "/topologies/AMD-19h-Zen3-2xEpyc-7763.xml"};
    int reps = argc > 1 ? atoi(argv[1]) : 3;
    double run_t[16], ref_t[16], stp = 0, t0;
    struct corun_sim_workload *w;
    struct corun_sim_machine m;
    struct corun_topo *t;

    if (reps < 1 || reps > 16)
        reps = 3;
    if (corun_topo_load(&o, &t) || corun_sim_workload_random(NTASKS, 1, &w))
        return 1;
    corun_sim_machine_defaults(t, &m);
    /* Every fourth task alternates phases every 0.25-1 s: re-solves. */
    for (int i = 0; i < NTASKS; i += 4) {
        struct corun_sim_task *k = &w->tasks[i];

        k->nphases = 2;
        k->phase[1] = k->phase[0];
        k->phase[1].mpki_max *= 3;
        k->phase[1].mpki_min *= 3;
        if (k->phase[1].mpki_max > 1000)
            k->phase[1].mpki_max = k->phase[1].mpki_min = 1000;
        k->phase[0].duration_s = 0.25 + 0.05 * (i % 16);
        k->phase[1].duration_s = 0.5;
    }
    for (int r = 0; r < reps; r++) {
        struct corun_sim_run_opts ro = {.duration_s = 10, .seeds = 5, .seed = 1};
        struct corun_sim_result res;

        run_t[r] = run_once(t, &m, w->tasks, &stp);
        t0 = now_s();
        for (int ref = 0; ref < CORUN_SIM_NREFS; ref++) {
            if (corun_sim_run_ref(t, &m, w->tasks, NTASKS, ref, &ro, &res, NULL))
                return 1;
            corun_sim_result_release(&res);
        }
        ref_t[r] = now_s() - t0;
    }
    qsort(run_t, reps, sizeof(double), cmp);
    qsort(ref_t, reps, sizeof(double), cmp);
    printf("%-44s %10s %8s\n", "case", "median s", "goal s");
    printf("%-44s %10.3f %8.1f\n", "64 tasks, 128 CPUs, 60 s at 10 ms steps", run_t[reps / 2], 2.0);
    printf("%-44s %10.3f %8.1f\n", "all four references, 10 s (oracle included)", ref_t[reps / 2],
           10.0);
    printf("{\"bench\": \"sim-speed\", \"tasks\": %d, \"cpus\": %u, \"simulated_s\": %.0f, "
           "\"step_s\": %.3f, \"run_s\": %.4f, \"references_s\": %.4f, \"repeats\": %d, "
           "\"stp\": %.4f, \"goal_run_s\": 2.0, \"goal_references_s\": 10.0}\n",
           NTASKS, corun_topo_ncpus(t), SIM_S, STEP_S, run_t[reps / 2], ref_t[reps / 2], reps, stp);
    corun_sim_workload_free(w);
    corun_topo_free(t);
    return 0;
}
