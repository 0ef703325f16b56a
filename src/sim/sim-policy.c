/*
 * sim-policy.c — running a registered policy in the simulator, the way the
 * engine will: the policy sees only profiles built from sense-sim counters
 * and acts only through act-sim.
 *
 * A stand-in until the engine box lands (the policy engineer replaces
 * corun_sim_run_policy()'s body with the engine's loop): one decision after
 * a warm-up under the baseline placement, no online refinement.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-internal.h"

#define WARMUP_S 0.5

/* A profile from the counters between two samples: what a policy may know. */
static void profile_from(const struct corun_sample *a, const struct corun_sample *b,
                         double elapsed_s, struct corun_task_profile *p)
{
    double instr = (double)(b->value[CORUN_EV_INSTRUCTIONS] - a->value[CORUN_EV_INSTRUCTIONS]);
    double cyc = (double)(b->value[CORUN_EV_CYCLES] - a->value[CORUN_EV_CYCLES]);
    double ref = (double)(b->value[CORUN_EV_REF_CYCLES] - a->value[CORUN_EV_REF_CYCLES]);
    double refs = (double)(b->value[CORUN_EV_LLC_REFERENCES] - a->value[CORUN_EV_LLC_REFERENCES]);
    double miss = (double)(b->value[CORUN_EV_LLC_MISSES] - a->value[CORUN_EV_LLC_MISSES]);
    double clk = (double)(b->value[CORUN_EV_TASK_CLOCK_NS] - a->value[CORUN_EV_TASK_CLOCK_NS]);

    p->ipc = cyc > 0 ? instr / cyc : NAN;
    p->freq_ratio = ref > 0 ? cyc / ref : NAN;
    p->llc_mpki = instr > 0 ? miss / instr * 1e3 : NAN;
    p->llc_miss_ratio = refs > 0 ? miss / refs : NAN;
    p->mem_bw_bps = elapsed_s > 0 ? miss * 64.0 / elapsed_s : NAN;
    p->cpu_util = elapsed_s > 0 ? clk * 1e-9 / elapsed_s : NAN;
}

int corun_sim_run_policy(const struct corun_topo *topo, const struct corun_sim_machine *m,
                         const struct corun_sim_task *tasks, unsigned ntasks,
                         const struct corun_policy *pol, const struct corun_sim_run_opts *opts,
                         struct corun_sim_result *out)
{
    struct corun_sense_opts so = {0};
    struct corun_act_opts ao = {0};
    struct corun_sim *sim = NULL;
    struct corun_sample *s0 = NULL, s1;
    struct corun_task_profile *prof = NULL;
    struct corun_snapshot snap = {0};
    struct corun_plan plan = {0};
    struct corun_cpuset set = {0};
    void *sense = NULL, *act = NULL;
    int *cpu = NULL, *handle = NULL, err;
    double warm = opts->duration_s * 0.1 < WARMUP_S ? opts->duration_s * 0.1 : WARMUP_S;

    memset(out, 0, sizeof(*out));
    if (!pol || !pol->place || !(opts->duration_s > 0))
        return -EINVAL;
    err = corun_sim_create(topo, m, tasks, ntasks, opts->seed, &sim);
    if (err)
        return err;
    err = -ENOMEM;
    cpu = malloc(ntasks * sizeof(int));
    handle = malloc(ntasks * sizeof(int));
    s0 = calloc(ntasks, sizeof(*s0));
    prof = calloc(ntasks, sizeof(*prof));
    plan.cpu = malloc(ntasks * sizeof(int));
    if (!cpu || !handle || !s0 || !prof || !plan.cpu || corun_cpuset_init(&set, 64))
        goto out_free;

    /* Warm-up: the tasks start where Linux would put them. */
    for (unsigned i = 0; i < ntasks; i++)
        cpu[i] = -1;
    corun_sim_baseline_place(topo, ntasks, opts->seed, cpu);
    if ((err = corun_sim_place(sim, cpu)))
        goto out_free;
    so.backend_cfg = sim;
    ao.backend_cfg = sim;
    if ((err = corun_sense_sim_ops.open(&so, &sense)) || (err = corun_act_sim_ops.open(&ao, &act)))
        goto out_close;
    for (unsigned i = 0; i < ntasks; i++)
        if ((err = corun_sense_sim_ops.attach(sense, (pid_t)i, &handle[i])) ||
            (err = corun_sense_sim_ops.read(sense, handle[i], &s0[i])))
            goto out_close;
    if ((err = corun_sim_step(sim, warm)))
        goto out_close;
    for (unsigned i = 0; i < ntasks; i++) {
        if ((err = corun_sense_sim_ops.read(sense, handle[i], &s1)))
            goto out_close;
        prof[i].id = i;
        prof[i].cls = CORUN_CLASS_UNKNOWN; /* counters only: no hint from the model */
        prof[i].weight = 1.0;
        profile_from(&s0[i], &s1, warm, &prof[i]);
        prof[i].cpu = corun_sim_cpu_of(sim, i);
    }

    /* One decision, applied through the actuator. */
    snap.topo = topo;
    snap.ntasks = ntasks;
    snap.tasks = prof;
    snap.seed = opts->seed;
    plan.ntasks = ntasks;
    for (unsigned i = 0; i < ntasks; i++)
        plan.cpu[i] = -1;
    if ((err = pol->place(&snap, &plan)))
        goto out_close;
    for (unsigned i = 0; i < ntasks; i++) {
        corun_cpuset_zero(&set);
        if (plan.cpu[i] >= 0 && (unsigned)plan.cpu[i] < corun_topo_ncpus(topo)) {
            err = corun_cpuset_set(&set, corun_topo_cpu(topo, (unsigned)plan.cpu[i])->os_index);
        } else {
            /* "Leave it to the kernel": it stays where the balancer put it. */
            continue;
        }
        if (err || (err = corun_act_sim_ops.apply(act, (pid_t)i, &set)))
            goto out_close;
    }
    if (opts->duration_s > warm && (err = corun_sim_step(sim, opts->duration_s - warm)))
        goto out_close;
    err = corun_sim_result(sim, out);
out_close:
    if (sense)
        corun_sense_sim_ops.close(sense);
    if (act)
        corun_act_sim_ops.close(act);
out_free:
    corun_cpuset_release(&set);
    free(plan.cpu);
    free(prof);
    free(s0);
    free(handle);
    free(cpu);
    corun_sim_free(sim);
    return err;
}
