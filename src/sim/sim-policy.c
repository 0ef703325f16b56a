/*
 * sim-policy.c — running a registered policy in the simulator through the
 * engine (corun/engine.h), exactly as it will drive real processes: the
 * policy sees only profiles the engine's profiler built from sense-sim
 * counters, and acts only through act-sim; the simulator's clock paces the
 * loop.
 *
 * The run: every task starts where Linux's load balancer would put it (the
 * baseline placement: that is the kernel, not the policy), the engine warms
 * up, then samples, learns and places every interval until the end.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corun/engine.h"
#include "sim/sim-internal.h"

/* Engine interval and warm-up in simulated time: short runs get at least
 * about twenty intervals. */
#define INTERVAL_S 0.25
#define WARMUP_S 0.5

/* The caller's event callback and the simulation whose clock stamps it. */
struct sim_events {
    const struct corun_sim_run_opts *opts;
    struct corun_sim *sim;
};

static void sim_event(void *ctx, const struct corun_engine_event *ev)
{
    struct sim_events *se = ctx;

    se->opts->on_event(se->opts->event_ctx, corun_sim_now_s(se->sim), ev);
}

int corun_sim_run_policy(const struct corun_topo *topo, const struct corun_sim_machine *m,
                         const struct corun_sim_task *tasks, unsigned ntasks,
                         const struct corun_policy *pol, const struct corun_sim_run_opts *opts,
                         struct corun_sim_result *out)
{
    struct corun_engine_opts eo = {0};
    struct corun_sense_opts so = {0};
    struct corun_act_opts ao = {0};
    struct corun_engine *eng = NULL;
    struct corun_sim *sim = NULL;
    struct sim_events se;
    void *sense = NULL, *act = NULL;
    double interval = INTERVAL_S, warm = WARMUP_S, *turbo = NULL;
    int *cpu = NULL, err;

    memset(out, 0, sizeof(*out));
    if (!pol || !pol->place || !(opts->duration_s > 0))
        return -EINVAL;
    if (opts->duration_s < 20 * interval) {
        interval = opts->duration_s / 20;
        warm = 2 * interval;
    }
    err = corun_sim_create(topo, m, tasks, ntasks, opts->seed, &sim);
    if (err)
        return err;
    cpu = malloc(ntasks * sizeof(int));
    if (!cpu) {
        err = -ENOMEM;
        goto out_free;
    }
    /* The kernel's placement, before anyone pins anything. */
    for (unsigned i = 0; i < ntasks; i++)
        cpu[i] = -1;
    corun_sim_baseline_place(topo, ntasks, opts->seed, cpu);
    if ((err = corun_sim_place(sim, cpu)))
        goto out_free;
    so.backend_cfg = sim;
    ao.backend_cfg = sim;
    if ((err = corun_sense_sim_ops.open(&so, &sense)) || (err = corun_act_sim_ops.open(&ao, &act)))
        goto out_close;
    eo.topo = topo;
    eo.policy = pol;
    eo.sense = &corun_sense_sim_ops;
    eo.sense_state = sense;
    eo.act = &corun_act_sim_ops;
    eo.act_state = act;
    eo.clock = corun_sim_clock(sim);
    eo.interval_ns = (uint64_t)llround(interval * 1e9);
    eo.warmup_ns = (uint64_t)llround(warm * 1e9);
    eo.seed = opts->seed;
    if (opts->on_event) {
        se = (struct sim_events){.opts = opts, .sim = sim};
        eo.on_event = sim_event;
        eo.event_ctx = &se;
        eo.predict = true;
    }
    /* The machine's turbo table, as the hardware states it. */
    turbo = corun_sim_turbo_table(topo, m, &eo.turbo_n);
    if (!turbo) {
        err = -ENOMEM;
        goto out_close;
    }
    eo.turbo_rel = turbo;
    if ((err = corun_engine_new(&eo, &eng)))
        goto out_close;
    for (unsigned i = 0; i < ntasks; i++) {
        /* Counters only: the model's class is not handed to the policy. */
        struct corun_engine_task t = {.target = (pid_t)i, .id = i, .hint = CORUN_CLASS_UNKNOWN,
                                      .weight = 1.0};

        if ((err = corun_engine_add(eng, &t, NULL)))
            goto out_close;
        /* Its memory is where the kernel first ran it (first touch), as a
         * daemon would read it from /proc/PID/numa_maps; and it runs there
         * now, as /proc/PID/stat would say. */
        if ((err = corun_engine_set_home(eng, i, corun_topo_cpu(topo, (unsigned)cpu[i])->dom[CORUN_LEVEL_NUMA])) ||
            (err = corun_engine_set_cpu(eng, i, cpu[i])))
            goto out_close;
    }
    err = corun_engine_run(eng, (uint64_t)llround(opts->duration_s * 1e9), NULL);
    /* The last interval may end short of the duration. */
    if (!err && corun_sim_now_s(sim) < opts->duration_s - 1e-9)
        err = corun_sim_step(sim, opts->duration_s - corun_sim_now_s(sim));
    if (!err)
        err = corun_sim_result(sim, out);
    if (!err) {
        struct corun_engine_stats st;

        corun_engine_stats(eng, &st);
        out->trials = (unsigned)st.trials;
        out->reverted = (unsigned)st.reverted;
        out->doubted = (unsigned)st.doubted;
        out->second_tried = (unsigned)st.second_tried;
        out->second_kept = (unsigned)st.second_kept;
    }
    for (unsigned i = 0; !err && opts->profiles && i < ntasks; i++) {
        err = corun_engine_profile(eng, i, &opts->profiles[i]);
        if (!err && opts->profiles[i].cpu < 0)
            opts->profiles[i].cpu = cpu[i]; /* unpinned: the simulator keeps it there */
    }
    if (err)
        corun_sim_result_release(out);
out_close:
    corun_engine_free(eng);
    if (sense)
        corun_sense_sim_ops.close(sense);
    if (act)
        corun_act_sim_ops.close(act);
out_free:
    free(cpu);
    free(turbo);
    corun_sim_free(sim);
    return err;
}
