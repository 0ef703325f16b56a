/*
 * act-sim.c — the actuator backend of the simulator: a policy's placement
 * applied to simulated tasks.
 *
 * Targets are task indexes; CPU sets are in the kernel's numbering, as for
 * the real actuators, and are translated to the topology's dense indexes. A
 * set of one CPU pins the task there; a wider set lets the "kernel" choose,
 * which here means the baseline load balancer's choice among the set's CPUs
 * (the least loaded one, idle cores first). The first placement of each task
 * is journaled in memory so that restore puts it back. Moving a task's
 * memory (node in the kernel's numbering) is corun_sim_move_memory().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-internal.h"

struct sim_act {
    struct corun_sim *sim;
    int *orig; /* CPU before the first apply; -2 untouched */
};

static int act_probe(const struct corun_act_opts *opts, char *why, size_t len)
{
    if (!opts || !opts->backend_cfg) {
        snprintf(why, len, "the sim actuator needs a simulation (backend_cfg)");
        return -ENOTSUP;
    }
    return 0;
}

static int act_open(const struct corun_act_opts *opts, void **state)
{
    struct sim_act *a;
    unsigned n;

    *state = NULL;
    if (!opts || !opts->backend_cfg)
        return -EINVAL;
    a = calloc(1, sizeof(*a));
    if (!a)
        return -ENOMEM;
    a->sim = opts->backend_cfg;
    n = corun_sim_ntasks(a->sim);
    a->orig = malloc(n * sizeof(int));
    if (!a->orig) {
        free(a);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < n; i++)
        a->orig[i] = -2;
    *state = a;
    return 0;
}

/* The CPU of @cpus (kernel numbers) with the fewest tasks, idle cores first. */
static int choose(struct sim_act *a, unsigned task, const struct corun_cpuset *cpus)
{
    const struct corun__sim_hw *hw = &a->sim->hw;
    unsigned n = corun_sim_ntasks(a->sim);
    int best = -1;
    unsigned best_load = ~0u, best_core = ~0u;

    for (int os = corun_cpuset_next(cpus, 0); os >= 0;
         os = corun_cpuset_next(cpus, (unsigned)os + 1)) {
        int c = corun_topo_cpu_by_os(a->sim->topo, (unsigned)os);
        unsigned load = 0, core_load = 0;

        if (c < 0 || !hw->usable[c])
            continue;
        for (unsigned j = 0; j < n; j++) {
            int cj = j == task ? -1 : corun_sim_cpu_of(a->sim, j);

            if (cj < 0)
                continue;
            load += cj == c;
            core_load += hw->core[cj] == hw->core[c];
        }
        if (load < best_load || (load == best_load && core_load < best_core)) {
            best = c;
            best_load = load;
            best_core = core_load;
        }
    }
    return best;
}

static int act_apply(void *state, pid_t target, const struct corun_cpuset *cpus)
{
    struct sim_act *a = state;
    int cpu;

    if (target < 0 || (unsigned)target >= corun_sim_ntasks(a->sim))
        return -ESRCH;
    cpu = choose(a, (unsigned)target, cpus);
    if (cpu < 0)
        return -EINVAL;
    if (a->orig[target] == -2)
        a->orig[target] = corun_sim_cpu_of(a->sim, (unsigned)target);
    return corun_sim_move(a->sim, (unsigned)target, cpu);
}

/* Node @node in the kernel's numbering: the NUMA domain of that os_index. */
static int act_move_memory(void *state, pid_t target, int node)
{
    struct sim_act *a = state;
    const struct corun_topo *t = a->sim->topo;
    unsigned nd = corun_topo_ndomains(t, CORUN_LEVEL_NUMA);

    if (target < 0 || (unsigned)target >= corun_sim_ntasks(a->sim))
        return -ESRCH;
    for (unsigned d = 0; d < nd; d++)
        if (corun_topo_domain(t, CORUN_LEVEL_NUMA, d)->os_index == (unsigned)node)
            return corun_sim_move_memory(a->sim, (unsigned)target, (int)d);
    /* A topology without NUMA domains is one node, 0. */
    return nd == 0 && node == 0 ? 0 : -EINVAL;
}

static int act_restore(void *state, pid_t target)
{
    struct sim_act *a = state;

    if (target < 0 || (unsigned)target >= corun_sim_ntasks(a->sim))
        return -ESRCH;
    if (a->orig[target] == -2)
        return 0;
    /* Back where it was; a task that was unplaced stays where it is (the
     * simulator has no "unpinned" state for a running task). */
    if (a->orig[target] >= 0)
        corun_sim_move(a->sim, (unsigned)target, a->orig[target]);
    a->orig[target] = -2;
    return 0;
}

static int act_restore_all(void *state)
{
    struct sim_act *a = state;
    int first = 0;

    for (unsigned i = 0; i < corun_sim_ntasks(a->sim); i++) {
        int err = act_restore(a, (pid_t)i);

        if (err && !first)
            first = err;
    }
    return first;
}

static void act_close(void *state)
{
    struct sim_act *a = state;

    if (!a)
        return;
    free(a->orig);
    free(a);
}

const struct corun_act_ops corun_act_sim_ops = {
    .name = "sim",
    .probe = act_probe,
    .open = act_open,
    .apply = act_apply,
    .restore = act_restore,
    .restore_all = act_restore_all,
    .close = act_close,
    .move_memory = act_move_memory,
};
