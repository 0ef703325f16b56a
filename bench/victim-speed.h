/*
 * victim-speed.h — what the prior-fitting benchmarks (fit-core-pair,
 * fit-cache-prior) measure: the speed of one class-midpoint task beside one
 * other, on an otherwise idle simulated machine or beside a few more.
 */
#ifndef CORUN_BENCH_VICTIM_SPEED_H
#define CORUN_BENCH_VICTIM_SPEED_H

#include <stdio.h>
#include <string.h>

#include "corun/sim.h"
#include "corun/topo.h"

#define NCLS 5
#define VICTIM_MAXBG 8

/* The simulator's class standing for each corun class, in corun's order. */
static const int sim_cls[NCLS] = {CORUN_SIM_COMPUTE_INT, CORUN_SIM_SHEEP, CORUN_SIM_RABBIT,
                                  CORUN_SIM_CHASING, CORUN_SIM_STREAMING};

/* Speed (over alone) of a task of class @v, the victim, on CPU @cpu0 beside
 * one of class @a on CPU @cpu1 (none when @a < 0), with @nbg tasks of class
 * @bg on CPUs @bgcpu, after a simulated second; -1 on failure. */
static double victim_speed_bg(const struct corun_topo *t, const struct corun_sim_machine *m, int v,
                              int a, int cpu0, int cpu1, int bg, const int *bgcpu, unsigned nbg)
{
    struct corun_sim_task task[2 + VICTIM_MAXBG];
    struct corun_sim_result r;
    struct corun_sim *sim;
    int place[2 + VICTIM_MAXBG], cls[2 + VICTIM_MAXBG];
    unsigned n = 0;
    double s = -1;

    if (nbg > VICTIM_MAXBG)
        return -1;
    place[n] = cpu0;
    cls[n++] = sim_cls[v];
    if (a >= 0) {
        place[n] = cpu1;
        cls[n++] = sim_cls[a];
    }
    for (unsigned i = 0; i < nbg; i++) {
        place[n] = bgcpu[i];
        cls[n++] = sim_cls[bg];
    }
    memset(task, 0, sizeof(task));
    for (unsigned i = 0; i < n; i++) {
        task[i].cls = cls[i];
        task[i].nphases = 1;
        corun_sim_class_preset(task[i].cls, &task[i].phase[0]);
        snprintf(task[i].name, sizeof(task[i].name), "t%u", i);
    }
    if (corun_sim_create(t, m, task, n, 1, &sim))
        return -1;
    if (!corun_sim_place(sim, place) && !corun_sim_step(sim, 1.0) && !corun_sim_result(sim, &r)) {
        s = r.tasks[0].speedup;
        corun_sim_result_release(&r);
    }
    corun_sim_free(sim);
    return s;
}

/* The same on an otherwise idle machine. */
static double victim_speed(const struct corun_topo *t, const struct corun_sim_machine *m, int v,
                           int a, int cpu0, int cpu1)
{
    return victim_speed_bg(t, m, v, a, cpu0, cpu1, 0, NULL, 0);
}

#endif
