/*
 * predict-vs-sim.c — how the corun policy's predictor ranks its own final
 * placement against the oracle's, beside the simulator's ground truth: the
 * diagnosis of a case where corun captures little of what the oracle gains.
 *
 * It runs the engine with the corun policy on a random mix through
 * corun_sim_run_policy() (tasks start where the kernel puts them, counters
 * only, 10 simulated seconds), takes the profiles the engine learned and
 * where it left the tasks, asks the oracle for its placement,
 * then evaluates both with corun_policy_predict() and in a fresh simulation
 * (beside the kernel's placement the engine started from).
 * Per learned class it prints the summed speeds, true and predicted, of
 * both placements; with -v, every task, with the figures the predictor
 * read from its profile: IPC, LLC misses per kilo-instruction, memory
 * bandwidth drawn (GB/s), and the learned L3 pressure and sensitivity (p3,
 * s3; before miss_scale() of policy-model.c scales the pressure).
 *
 * With -m, it also asks the corun policy for its first plan from the
 * kernel's placement (memory where the kernel first ran each task, as the
 * engine starts) with the learned profiles, at memory-move costs of 0.03
 * (the engine's), 0.015, 0.0075 and 0: how many tasks each plan moves
 * across nodes, its predicted and simulated STP. It tells a case that the
 * move cost holds back (cheaper plans gain in the simulator too) from one
 * the cost protects (cheaper plans the predictor likes that lose). With -v
 * as well, every task of each plan: where the kernel put it and where the
 * plan does, its simulated and predicted speed.
 *
 * With -e, every event of the engine's run (a move, one taken back, memory
 * that followed its task), after each batch of them the steady simulated
 * STP of the placement they made (what a change taken back would have
 * given), and the outcome check's counts.
 *
 * With -f, what the predictor reads from each learned profile once it has
 * read it (policy-internal.h's struct corun__pm, after the re-reads of
 * tasks measured on crowded cores and of squeezed rabbits): the class its
 * rows go by and that of its spill row, its memory share, the issue share
 * it asks of a crowded core, its misses in flight, its L3 and memory
 * pressure and sensitivity; beside the profile's IPC, misses per
 * kilo-instruction, miss ratio, the CPU it was measured on and that CPU's
 * capacity. The profiler's class (-v) is not always the one the policy
 * uses.
 *
 * Usage: predict-vs-sim MACHINE NTASKS MIXSEED|CLASS|adversarial [RUNSEED] [-v] [-m] [-e] [-f]
 * (MACHINE: a topology XML or a simulator preset; the mix is
 * `random:NTASKS:MIXSEED` of corun sim, or NTASKS tasks of the simulator
 * class CLASS, as bench/policies' homogeneous mixes, or its adversarial
 * mix). The last line is JSON.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corun/policy.h"
#include "corun/profile.h"
#include "corun/sim.h"
#include "corun/topo.h"
#include "policy/policy-internal.h"

/* A mix of @n tasks of the class named @name (as bench/policies' homogeneous
 * mixes), or of "adversarial" (its adversarial mixes: streaming, rabbit,
 * chasing and compute-int in turn): 0 with *@out, 0 with NULL when @name is
 * a seed, -1 on failure. */
static int homogeneous(const char *name, unsigned n, struct corun_sim_workload **out)
{
    static const int adv[] = {CORUN_SIM_STREAMING, CORUN_SIM_RABBIT, CORUN_SIM_CHASING,
                              CORUN_SIM_COMPUTE_INT};
    struct corun_sim_workload *w;
    bool mixed = !strcmp(name, "adversarial");
    int cls = -1;

    *out = NULL;
    for (int c = 0; c < CORUN_SIM_NCLASSES; c++)
        if (!strcmp(name, corun_sim_class_name(c)))
            cls = c;
    if (cls < 0 && !mixed)
        return 0;
    if (!n || corun_sim_workload_random(n, 1, &w))
        return -1;
    for (unsigned i = 0; i < n; i++) {
        int ci = mixed ? adv[i % 4] : cls;

        memset(&w->tasks[i], 0, sizeof(w->tasks[i]));
        w->tasks[i].cls = ci;
        w->tasks[i].nphases = 1;
        corun_sim_class_preset(ci, &w->tasks[i].phase[0]);
        snprintf(w->tasks[i].name, sizeof(w->tasks[i].name), "%s%u", corun_sim_class_name(ci), i);
    }
    *out = w;
    return 0;
}

/* STP of placement @cpu in a fresh simulation after 2 s; speeds to @sp. */
static double truth(const struct corun_topo *t, const struct corun_sim_machine *m,
                    const struct corun_sim_task *tk, unsigned n, const int *cpu, double *sp)
{
    struct corun_sim *s;
    struct corun_sim_result r;
    double stp = NAN;

    if (corun_sim_create(t, m, tk, n, 1, &s))
        return NAN;
    if (!corun_sim_place(s, cpu) && !corun_sim_step(s, 2.0) && !corun_sim_result(s, &r)) {
        stp = r.stp;
        for (unsigned i = 0; i < n; i++)
            sp[i] = r.tasks[i].speedup;
        corun_sim_result_release(&r);
    }
    corun_sim_free(s);
    return stp;
}

/* With -e: the placement the engine's events build, from the kernel's,
 * and the steady STP of each the engine reached (printed when the next
 * batch of events begins, or at the end). */
struct evlog {
    const struct corun_topo *t;
    const struct corun_sim_machine *m;
    const struct corun_sim_task *tk;
    unsigned n;
    const int *kcpu;
    int *cpu;
    double *sp;
    double at; /* time of the batch not yet rated, NAN none */
};

/* With -f: what the predictor @pm (released here; NULL where it could not
 * be set up) reads from each profile @pr, after its own re-reads
 * (crowded cores, squeezed rabbits): the class of its rows and of its spill
 * row, its memory share, the issue share it asks of a crowded core, its
 * misses in flight, and its L3 and memory pressure and sensitivity (after
 * miss_scale()). */
static void print_figures(struct corun__pm *pm, const struct corun_task_profile *pr,
                          const struct corun_sim_task *tk)
{
    if (!pm) {
        printf("\n(the predictor could not be set up)\n");
        return;
    }
    printf("\nwhat the predictor reads: class (its spill row's), memory share, issue share asked "
           "of a crowded core, misses in flight, L3 and memory pressure and sensitivity\n");
    for (unsigned i = 0; i < pm->n; i++) {
        unsigned c = pm->cls[i], sc = pm->scls[i];
        const double *p = pm->press + i * CORUN__PM_NLEV, *s = pm->sens + i * CORUN__PM_NLEV;
        int cpu = pr[i].cpu;

        printf("%3u %-16s %-9s (%-9s) mf %.2f dem %.2f mlp %4.1f  p3 %.2f s3 %.2f  pm %.2f "
               "sm %.2f  ipc %.3f mpki %.1f miss %.3f cpu %4d cap %.2f\n",
               i, tk[i].name,
               corun_class_name(c < CORUN_NCLASSES ? (enum corun_class)c : CORUN_CLASS_UNKNOWN),
               corun_class_name(sc < CORUN_NCLASSES ? (enum corun_class)sc : CORUN_CLASS_UNKNOWN),
               pm->mf[i], pm->dem[i], pm->mlp[i], p[2], s[2], p[3], s[3], pr[i].ipc, pr[i].llc_mpki,
               pr[i].llc_miss_ratio, cpu,
               cpu >= 0 && (unsigned)cpu < pm->ncpus ? pm->cap[cpu] : NAN);
    }
    corun__pm_release(pm);
}

static void rate_batch(struct evlog *lg)
{
    if (isnan(lg->at))
        return;
    printf("  %6.2f s  -> placement simulated %.3f\n", lg->at,
           truth(lg->t, lg->m, lg->tk, lg->n, lg->cpu, lg->sp));
    lg->at = NAN;
}

/* Prints one engine event, rating the placement of the batch before it
 * when a new batch begins, and follows the task it moves. */
static void on_event(void *ctx, double t_s, const struct corun_engine_event *ev)
{
    static const char *kind[] = {"move", "undo", "memory"};
    struct evlog *lg = ctx;

    if (!isnan(lg->at) && t_s != lg->at)
        rate_batch(lg);
    printf("  %6.2f s  %-6s task %3u  %4d -> %4d\n", t_s,
           (unsigned)ev->kind < 3 ? kind[ev->kind] : "?", ev->idx, ev->from, ev->to);
    if (ev->kind != CORUN_ENGINE_EV_MEMORY && ev->idx < lg->n)
        lg->cpu[ev->idx] = ev->to >= 0 ? ev->to : lg->kcpu[ev->idx];
    lg->at = t_s;
}

/* Runs the engine with the corun policy through corun_sim_run_policy(),
 * from the kernel's placement @kcpu; the learned profiles to @pr, their cpu
 * where it left each task; with @events, every event (on_event()). */
static int run_corun(const struct corun_topo *t, const struct corun_sim_machine *m,
                     const struct corun_sim_task *tk, unsigned n, uint64_t seed,
                     struct corun_task_profile *pr, const int *kcpu, bool events)
{
    struct evlog lg = {.t = t, .m = m, .tk = tk, .n = n, .kcpu = kcpu, .at = NAN};
    struct corun_sim_run_opts ro = {.duration_s = 10,
                                    .seed = seed,
                                    .profiles = pr,
                                    .on_event = events ? on_event : NULL,
                                    .event_ctx = &lg};
    struct corun_sim_result r;
    int err = -ENOMEM;

    lg.cpu = malloc(n * sizeof(*lg.cpu));
    lg.sp = malloc(n * sizeof(*lg.sp));
    if (lg.cpu && lg.sp) {
        memcpy(lg.cpu, kcpu, n * sizeof(*lg.cpu));
        err = corun_sim_run_policy(t, m, tk, n, corun_policy_find("corun"), &ro, &r);
    }
    if (!err) {
        if (events) {
            rate_batch(&lg);
            printf("engine: %u trials, %u taken back, %u plans doubted, %u memory moves, "
                   "%u of %u second opinions kept\n",
                   r.trials, r.reverted, r.doubted, r.mem_moves, r.second_kept, r.second_tried);
        }
        corun_sim_result_release(&r);
    }
    free(lg.cpu);
    free(lg.sp);
    return err;
}

/* With -v -m: each task of placement @pl (the kernel's @kcpu when @pl is
 * NULL), simulated speed @sp and predicted @ps. */
static void plan_tasks(const struct corun_sim_task *tk, unsigned n, const int *kcpu, const int *pl,
                       const double *sp, const double *ps)
{
    for (unsigned i = 0; i < n; i++)
        printf("      %3u %-16s cpu %4d -> %4d  sim %.3f pred %.3f\n", i, tk[i].name, kcpu[i],
               pl ? pl[i] : kcpu[i], sp[i], ps[i]);
}

/* The -m table: the corun policy's first plan from the kernel's placement
 * @kcpu by memory-move cost, on the profiles @pr (their placement fields
 * overwritten); @verbose: every task of each. */
static void replan_by_cost(const struct corun_topo *t, const struct corun_sim_machine *m,
                           const struct corun_sim_task *tk, unsigned n, uint64_t rs,
                           struct corun_task_profile *pr, const int *kcpu, bool verbose)
{
    static const double cost[] = {0.03, 0.015, 0.0075, 0};
    unsigned nturbo;
    double *turbo = corun_sim_turbo_table(t, m, &nturbo);
    struct corun_snapshot snap;
    int *pl = malloc(n * sizeof(*pl));
    double *sp = malloc(n * sizeof(*sp));
    double *ps = malloc(n * sizeof(*ps));
    double kp, ks;

    if (!turbo || !pl || !sp || !ps)
        goto out;
    for (unsigned i = 0; i < n; i++) {
        pr[i].cpu = kcpu[i];
        pr[i].home_known = kcpu[i] >= 0;
        pr[i].home_node =
            kcpu[i] >= 0 ? (unsigned)corun_topo_cpu(t, (unsigned)kcpu[i])->dom[CORUN_LEVEL_NUMA]
                         : 0;
    }
    /* One snapshot; only the memory-move cost changes between plans (the
     * prediction of a placement does not depend on it). */
    snap = (struct corun_snapshot){.topo = t,
                                   .ntasks = n,
                                   .tasks = pr,
                                   .seed = rs,
                                   .mem_follows = true,
                                   .turbo_rel = turbo,
                                   .turbo_n = nturbo};
    kp = corun_policy_predict(&snap, kcpu, ps);
    ks = truth(t, m, tk, n, kcpu, sp);
    printf("\nfirst plan from the kernel's placement, by memory-move cost "
           "(kernel's: predicted %.3f, simulated %.3f)\n",
           kp, ks);
    if (verbose)
        plan_tasks(tk, n, kcpu, NULL, sp, ps);
    for (unsigned k = 0; k < sizeof(cost) / sizeof(cost[0]); k++) {
        struct corun_plan plan = {.ntasks = n, .cpu = pl};
        unsigned cross = 0;

        snap.mem_move_cost = cost[k];
        if (corun_policy_find("corun")->place(&snap, &plan))
            continue;
        for (unsigned i = 0; i < n; i++)
            cross += pl[i] >= 0 && kcpu[i] >= 0 &&
                     corun_topo_cpu(t, (unsigned)pl[i])->dom[CORUN_LEVEL_NUMA] !=
                         corun_topo_cpu(t, (unsigned)kcpu[i])->dom[CORUN_LEVEL_NUMA];
        kp = corun_policy_predict(&snap, pl, ps);
        ks = truth(t, m, tk, n, pl, sp);
        printf("  cost %.4f: %3u across nodes, predicted %.3f, simulated %.3f\n", cost[k], cross,
               kp, ks);
        if (verbose)
            plan_tasks(tk, n, kcpu, pl, sp, ps);
    }
out:
    free(turbo);
    free(pl);
    free(sp);
    free(ps);
}

int main(int argc, char **argv)
{
    struct corun_topo_opts o = {0};
    struct corun_topo *t;
    struct corun_sim_machine m;
    struct corun_sim_workload *w;
    struct corun_sim *os;
    struct corun_task_profile *pr;
    const char *syn;
    bool verbose = false, by_cost = false, events = false, figures = false, bad = argc < 4;
    struct corun__pm fpm, *fig = NULL;
    unsigned n;
    uint64_t rs;
    int *cpu, *ocpu, *kcpu, *dcpu;
    double *pc, *po, *tc, *to, PC, PO, PD = NAN, TC, TO, TK, TD = NAN,
                                       agg[CORUN_NCLASSES + 1][5] = {{0}};

    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = true;
        else if (!strcmp(argv[i], "-m"))
            by_cost = true;
        else if (!strcmp(argv[i], "-e"))
            events = true;
        else if (!strcmp(argv[i], "-f"))
            figures = true;
        else
            bad = true;
    }
    if (argc > 4 && !strcmp(argv[4], "-v"))
        verbose = true;
    else if (argc > 4 && !strcmp(argv[4], "-m"))
        by_cost = true;
    else if (argc > 4 && !strcmp(argv[4], "-e"))
        events = true;
    else if (argc > 4 && !strcmp(argv[4], "-f"))
        figures = true;
    else if (argc > 4 && argv[4][0] == '-')
        bad = true;
    if (bad) {
        fprintf(stderr, "usage: predict-vs-sim MACHINE NTASKS MIXSEED|CLASS|adversarial [RUNSEED] "
                        "[-v] [-m] [-e] [-f]\n");
        return 2;
    }
    if (strstr(argv[1], ".xml")) {
        o.source = CORUN_TOPO_XML;
        o.input = argv[1];
    } else if (!corun_sim_machine_preset(argv[1], &m, &syn)) {
        o.source = CORUN_TOPO_SYNTHETIC;
        o.input = syn;
    } else {
        fprintf(stderr, "predict-vs-sim: %s: not an XML file nor a preset\n", argv[1]);
        return 2;
    }
    if (corun_topo_load(&o, &t)) {
        fprintf(stderr, "predict-vs-sim: %s: cannot load the topology\n", argv[1]);
        return 2;
    }
    if (o.source == CORUN_TOPO_XML)
        corun_sim_machine_defaults(t, &m);
    n = (unsigned)atoi(argv[2]);
    rs = argc > 4 && argv[4][0] != '-' ? strtoull(argv[4], NULL, 0) : 1;
    if (homogeneous(argv[3], n, &w) < 0 ||
        (!w && corun_sim_workload_random(n, strtoull(argv[3], NULL, 0), &w))) {
        fprintf(stderr, "predict-vs-sim: bad task count %s or mix %s\n", argv[2], argv[3]);
        return 2;
    }
    cpu = malloc(n * sizeof(*cpu));
    ocpu = malloc(n * sizeof(*ocpu));
    kcpu = malloc(n * sizeof(*kcpu));
    dcpu = malloc(n * sizeof(*dcpu));
    pr = calloc(n, sizeof(*pr));
    pc = calloc(n, sizeof(double));
    po = calloc(n, sizeof(double));
    tc = calloc(n, sizeof(double));
    to = calloc(n, sizeof(double));
    if (!cpu || !ocpu || !kcpu || !dcpu || !pr || !pc || !po || !tc || !to)
        return 1;
    /* Where the kernel puts them: where the engine starts. */
    for (unsigned i = 0; i < n; i++)
        kcpu[i] = -1;
    corun_sim_baseline_place(t, n, rs, kcpu);
    if (run_corun(t, &m, w->tasks, n, rs, pr, kcpu, events)) {
        fprintf(stderr, "predict-vs-sim: the engine failed\n");
        return 1;
    }
    for (unsigned i = 0; i < n; i++)
        cpu[i] = pr[i].cpu;
    if (corun_sim_create(t, &m, w->tasks, n, rs, &os) ||
        corun_sim_ref_place(os, CORUN_SIM_REF_ORACLE, rs, ocpu, NULL)) {
        fprintf(stderr, "predict-vs-sim: no oracle placement\n");
        return 1;
    }
    corun_sim_free(os);
    {
        unsigned nturbo;
        double *turbo = corun_sim_turbo_table(t, &m, &nturbo);
        /* As the engine's later plans see it (round > 0: a crowded
         * core's memory load at its crowded speed, policy-internal.h). */
        struct corun_snapshot snap = {.topo = t,
                                      .ntasks = n,
                                      .tasks = pr,
                                      .seed = rs,
                                      .round = 1,
                                      .mem_follows = true,
                                      .turbo_rel = turbo,
                                      .turbo_n = turbo ? nturbo : 0};

        PC = corun_policy_predict(&snap, cpu, pc);
        PO = corun_policy_predict(&snap, ocpu, po);
        {
            /* DI's plan from what corun learned, where corun left the tasks */
            struct corun_plan dp = {.ntasks = n, .cpu = dcpu};

            if (!corun_policy_find("di")->place(&snap, &dp))
                PD = corun_policy_predict(&snap, dcpu, NULL);
        }
        if (figures)
            fig = corun__pm_init(&fpm, &snap) ? NULL : &fpm;
        free(turbo);
    }
    TK = truth(t, &m, w->tasks, n, kcpu, tc);
    TC = truth(t, &m, w->tasks, n, cpu, tc);
    TO = truth(t, &m, w->tasks, n, ocpu, to);
    if (!isnan(PD)) {
        double *td = calloc(n, sizeof(double));

        TD = td ? truth(t, &m, w->tasks, n, dcpu, td) : NAN;
        free(td);
    }
    printf("STP        corun  oracle  oracle/corun  (the kernel's start: %.3f simulated)\n", TK);
    printf("simulated %6.3f %7.3f  %+6.2f%%\n", TC, TO, (TO / TC - 1) * 100);
    printf("predicted %6.3f %7.3f  %+6.2f%%\n", PC, PO, (PO / PC - 1) * 100);
    printf("DI's plan from the learned profiles: simulated %.3f (%+.2f%% over corun's), predicted "
           "%.3f (%+.2f%%)\n",
           TD, (TD / TC - 1) * 100, PD, (PD / PC - 1) * 100);
    for (unsigned i = 0; i < n; i++) {
        unsigned c = (unsigned)pr[i].cls < CORUN_NCLASSES ? (unsigned)pr[i].cls : CORUN_NCLASSES;

        agg[c][0]++;
        agg[c][1] += tc[i];
        agg[c][2] += to[i];
        agg[c][3] += pc[i];
        agg[c][4] += po[i];
    }
    printf("\n%-10s %3s  %9s %9s  %9s %9s  (summed speeds; learned class)\n", "class", "n",
           "sim.corun", "sim.orcl", "pred.corun", "pred.orcl");
    for (unsigned c = 0; c <= CORUN_NCLASSES; c++)
        if (agg[c][0] > 0)
            printf("%-10s %3.0f  %9.3f %9.3f  %9.3f %9.3f\n",
                   corun_class_name(c < CORUN_NCLASSES ? (enum corun_class)c : CORUN_CLASS_UNKNOWN),
                   agg[c][0], agg[c][1], agg[c][2], agg[c][3], agg[c][4]);
    if (verbose)
        for (unsigned i = 0; i < n; i++)
            printf("%3u %-16s %-9s cpu %4d %4d  sim %.3f %.3f  pred %.3f %.3f  ipc %.2f mpki %.1f "
                   "GB/s %.2f p3 %.2f s3 %.2f\n",
                   i, w->tasks[i].name, corun_class_name(pr[i].cls), cpu[i], ocpu[i], tc[i], to[i],
                   pc[i], po[i], pr[i].ipc, pr[i].llc_mpki, pr[i].mem_bw_bps / 1e9,
                   pr[i].pressure[CORUN_LEVEL_L3], pr[i].sensitivity[CORUN_LEVEL_L3]);
    if (figures)
        print_figures(fig, pr, w->tasks);
    if (by_cost)
        replan_by_cost(t, &m, w->tasks, n, rs, pr, kcpu, verbose);
    printf("{\"bench\":\"predict-vs-sim\",\"tasks\":%u,\"sim_kernel\":%.4f,\"sim_corun\":%.4f,"
           "\"sim_oracle\":%.4f,\"pred_corun\":%.4f,\"pred_oracle\":%.4f}\n",
           n, TK, TC, TO, PC, PO);
    corun_sim_workload_free(w);
    corun_topo_free(t);
    free(cpu);
    free(ocpu);
    free(kcpu);
    free(dcpu);
    free(pr);
    free(pc);
    free(po);
    free(tc);
    free(to);
    return 0;
}
