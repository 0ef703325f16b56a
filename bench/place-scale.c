/*
 * place-scale.c — how long each policy takes to place many tasks on a big
 * machine: by default 2048 tasks on a synthetic 512-CPU machine (2 packages,
 * 2 NUMA nodes each, 4 LLCs per node, 4 L2 clusters of 4 SMT2 cores), a
 * seeded mix of every class. Goal: corun within 20 ms.
 *
 * Every policy places the tasks from nowhere (none pinned). corun is then
 * timed once more the way the engine asks it every interval after its first
 * plan ("corun replan"): every task pinned where corun's first plan put it,
 * its memory on that CPU's node, with the engine's default move costs. The
 * goal holds for both.
 *
 * Usage: place-scale [TASKS [SYNTHETIC-DESC [REPEATS]]]
 * Prints a table (median and worst time per policy, predicted STP) and one
 * JSON line.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corun/policy.h"
#include "corun/topo.h"

#include "bench-util.h"

/* Times @reps plans of @pol for @s into @ms (sorted); -1 if one failed. */
static int time_plans(const struct corun_policy *pol, const struct corun_snapshot *s,
                      struct corun_plan *plan, unsigned reps, double *ms)
{
    for (unsigned r = 0; r < reps; r++) {
        double t0 = now_ms();

        if (pol->place(s, plan)) {
            fprintf(stderr, "place-scale: %s failed\n", pol->name);
            return -1;
        }
        ms[r] = now_ms() - t0;
    }
    qsort(ms, reps, sizeof(*ms), cmp_d);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2048;
    const char *desc = argc > 2 ? argv[2] : "pack:2 numa:2 l3:4 l2:4 core:4 pu:2";
    unsigned reps = argc > 3 ? (unsigned)atoi(argv[3]) : 7;
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC, .input = desc};
    struct corun_topo *t;
    struct corun_task_profile *tk;
    int *cpu;
    uint64_t rng = 12345;
    char json[4096];
    size_t jl = 0;
    double corun_med = NAN, replan_med = NAN;
    bool goal_met;
    int *first;

    if (corun_topo_load(&o, &t)) {
        fprintf(stderr, "place-scale: bad synthetic description '%s'\n", desc);
        return 2;
    }
    tk = calloc(n, sizeof(*tk));
    cpu = calloc(n, sizeof(*cpu));
    first = calloc(n, sizeof(*first));
    if (!tk || !cpu || !first)
        return 1;
    for (unsigned i = 0; i < n; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        tk[i].id = i;
        tk[i].cls = (enum corun_class)((rng >> 33) % CORUN_NCLASSES);
        tk[i].weight = 1;
        tk[i].ipc = tk[i].llc_mpki = tk[i].llc_miss_ratio = NAN;
        tk[i].freq_ratio = tk[i].mem_bw_bps = tk[i].cpu_util = NAN;
        for (int l = 0; l < CORUN_NLEVELS; l++)
            tk[i].pressure[l] = tk[i].sensitivity[l] = NAN;
        tk[i].cpu = -1;
    }
    printf("place-scale: %u tasks on %u CPUs (synthetic:%s), %u repeats\n", n,
           corun_topo_ncpus(t), desc, reps);
    printf("%-10s %10s %10s %12s\n", "policy", "median_ms", "max_ms", "pred_stp");
    jl += snprintf(json + jl, sizeof(json) - jl,
                   "{\"bench\":\"place-scale\",\"tasks\":%u,\"cpus\":%u,\"machine\":\"%s\","
                   "\"policies\":[",
                   n, corun_topo_ncpus(t), desc);
    for (unsigned p = 0; corun_policy_at(p); p++) {
        const struct corun_policy *pol = corun_policy_at(p);
        struct corun_snapshot s = {.topo = t, .ntasks = n, .tasks = tk, .seed = 1, .round = 10};
        struct corun_plan plan = {.ntasks = n, .cpu = cpu};
        double *ms = calloc(reps, sizeof(*ms)), stp;

        if (time_plans(pol, &s, &plan, reps, ms))
            return 1;
        /* Unpinned tasks have no predicted speed: linux has no figure. */
        stp = strcmp(pol->name, "linux") ? corun_policy_predict(&s, cpu, NULL) : NAN;
        printf("%-10s %10.2f %10.2f %12.2f\n", pol->name, ms[reps / 2], ms[reps - 1], stp);
        jl += snprintf(json + jl, sizeof(json) - jl,
                       "%s{\"name\":\"%s\",\"median_ms\":%.3f,\"max_ms\":%.3f,\"pred_stp\":",
                       p ? "," : "", pol->name, ms[reps / 2], ms[reps - 1]);
        jl += isnan(stp) ? snprintf(json + jl, sizeof(json) - jl, "null}")
                         : snprintf(json + jl, sizeof(json) - jl, "%.3f}", stp);
        if (!strcmp(pol->name, "corun")) {
            corun_med = ms[reps / 2];
            memcpy(first, cpu, n * sizeof(*first));
        }
        free(ms);
    }
    {
        /* The engine's later plans: everything pinned where the first plan
         * put it, memory local, a move costing what the engine's default
         * says (engine.h: 0.01 a task, a quarter of 0.03 more across
         * nodes). */
        const struct corun_policy *pol = corun_policy_find("corun");
        struct corun_snapshot s = {.topo = t,
                                   .ntasks = n,
                                   .tasks = tk,
                                   .seed = 1,
                                   .round = 11,
                                   .move_cost = 0.01,
                                   .mem_move_cost = 0.0075};
        struct corun_plan plan = {.ntasks = n, .cpu = cpu};
        double *ms = calloc(reps, sizeof(*ms)), stp;

        for (unsigned i = 0; i < n; i++) {
            tk[i].cpu = first[i];
            tk[i].home_known = first[i] >= 0;
            tk[i].home_node =
                first[i] >= 0
                    ? (unsigned)corun_topo_cpu(t, (unsigned)first[i])->dom[CORUN_LEVEL_NUMA]
                    : 0;
        }
        if (!ms || time_plans(pol, &s, &plan, reps, ms))
            return 1;
        stp = corun_policy_predict(&s, cpu, NULL);
        replan_med = ms[reps / 2];
        printf("%-10s %10.2f %10.2f %12.2f\n", "corun replan", ms[reps / 2], ms[reps - 1], stp);
        jl += snprintf(json + jl, sizeof(json) - jl,
                       "],\"replan\":{\"median_ms\":%.3f,\"max_ms\":%.3f,\"pred_stp\":%.3f,"
                       "\"pred_stp_before\":%.3f}",
                       ms[reps / 2], ms[reps - 1], stp, corun_policy_predict(&s, first, NULL));
        free(ms);
    }
    goal_met = corun_med <= 20 && replan_med <= 20;
    printf("goal: corun <= 20 ms: %s (first plan %.2f ms, replan %.2f ms)\n",
           goal_met ? "met" : "NOT met", corun_med, replan_med);
    jl += snprintf(json + jl, sizeof(json) - jl, ",\"goal_ms\":20,\"goal_met\":%s}",
                   goal_met ? "true" : "false");
    puts(json);
    free(tk);
    free(cpu);
    free(first);
    corun_topo_free(t);
    return 0;
}
