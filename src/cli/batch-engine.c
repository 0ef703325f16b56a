/*
 * batch-engine.c — the engine of a `corun batch` run: opening it over the
 * batch's sensor and actuator (with the turbo table where Intel's MSRs
 * read), jobs joining and leaving it, the class the batch learned handed to
 * its profiler, its clock, and closing it with its figures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/job-group.h"
#include "corun/platform.h"

/*
 * Hands the just-placed job @r (stopped before its exec, so a perf sensor
 * counts from the exec on) to the engine, which adopts the CPU the chooser
 * gave it. Without the engine, or when it refuses, the job simply stays
 * where the chooser put it.
 */
void batch_engine_add(struct batch *b, struct job_run *r)
{
    const struct sched_learned *l = sched_book_find(&b->book, r->key);
    struct corun_engine_task t = {.target = r->pid,
                                  .id = (unsigned)(r - b->runs),
                                  .hint = r->cls != CORUN_CLASS_UNKNOWN || !l ? r->cls : l->cls,
                                  .weight = r->spec->weight,
                                  /* One set of counters per job: the engine
                                   * reads the one the job is measured with. */
                                  .shared_handle = r->m.handle >= 0,
                                  .handle = r->m.handle};
    unsigned idx;

    if (!b->eng || corun_engine_add(b->eng, &t, &idx))
        return;
    if (corun_engine_adopt(b->eng, idx, r->cpu)) {
        corun_engine_remove(b->eng, idx);
        return;
    }
    corun_engine_set_home(b->eng, idx,
                          (int)corun_topo_cpu(b->topo, (unsigned)r->cpu)->dom[CORUN_LEVEL_NUMA]);
    r->eng_idx = (int)idx;
}

/* Job @r leaves the engine (it exited, or was unpinned); the engine
 * restores its leader if it still holds it. */
void batch_engine_drop(struct batch *b, struct job_run *r)
{
    if (b->eng && r->eng_idx >= 0)
        corun_engine_remove(b->eng, (unsigned)r->eng_idx);
    r->eng_idx = -1;
}

/*
 * The class the batch learned for a running job, for the engine's profiler,
 * where the sensor cannot tell it (no LLC miss count: the proc sensor); with
 * counters the profiler's own classification stands.
 */
void batch_engine_tell_class(struct batch *b, struct job_run *r)
{
    struct corun_task_profile p;

    if (!b->eng || r->eng_idx < 0 || corun_engine_profile(b->eng, (unsigned)r->eng_idx, &p))
        return;
    if (isnan(p.llc_mpki) && p.cls != r->cls)
        corun_engine_set_hint(b->eng, (unsigned)r->eng_idx, r->cls);
}

/* The engine's clock, CLOCK_MONOTONIC: when its next interval is due. */
uint64_t batch_engine_now_ns(void)
{
    struct corun_clock c = corun_clock_monotonic();

    return c.now_ns(c.ctx);
}

/*
 * The package's turbo table from Intel's MSR_TURBO_RATIO_LIMIT, for the
 * engine (corun_platform_turbo_rel()); NULL where it cannot be read (not
 * root, no msr driver, not Intel): the policy then assumes a typical drop.
 */
static double *turbo_table(const struct corun_topo *topo, unsigned *n)
{
    unsigned np = corun_topo_ndomains(topo, CORUN_LEVEL_PACKAGE);
    double *rel;

    *n = corun_topo_ndomains(topo, CORUN_LEVEL_CORE) / (np ? np : 1);
    rel = *n ? malloc(*n * sizeof(*rel)) : NULL;
    if (rel && corun_platform_read_turbo(NULL, *n, rel)) {
        free(rel);
        rel = NULL;
    }
    return rel;
}

/*
 * What the engine did, as it happens. After a job's leader's memory
 * followed it to another node, the job's other processes follow it too
 * (the affinity actuator placed them one by one; a cpuset carries them).
 */
static void engine_event(void *ctx, const struct corun_engine_event *ev)
{
    struct batch *b = ctx;
    const struct corun_topo_domain *node;
    unsigned moved;

    if (ev->kind != CORUN_ENGINE_EV_MEMORY || ev->err || ev->to < 0)
        return;
    node = corun_topo_domain(b->topo, CORUN_LEVEL_NUMA, (unsigned)ev->to);
    for (unsigned i = 0; node && i < b->njobs; i++) {
        struct job_run *r = &b->runs[i];

        if (r->state != JOB_RUNNING || r->eng_idx != (int)ev->idx)
            continue;
        moved = job_group_move_memory(b->ops, b->act, r->pid, (int)node->os_index);
        if (cli_verbose)
            fprintf(stderr, "corun batch: %s: memory followed it to node %u (%u more process%s)\n",
                    r->spec->name, node->os_index, moved, moved == 1 ? "" : "es");
        return;
    }
}

/*
 * The engine for one run of @b: the chosen policy, the sensor the jobs are
 * measured with, the batch's actuator, the monotonic clock; the first plan
 * after one interval. None for the linux policy (nothing is pinned), without
 * an actuator or a sensor, or when it cannot be made: then running jobs stay
 * where they started.
 */
void batch_engine_open(struct batch *b)
{
    struct corun_engine_opts o = {.topo = b->topo,
                                  .policy = b->pol,
                                  .act = b->ops,
                                  .act_state = b->act,
                                  .clock = corun_clock_monotonic(),
                                  .interval_ns = BATCH_ENGINE_EVERY_NS,
                                  .warmup_ns = BATCH_ENGINE_EVERY_NS,
                                  .seed = 1,
                                  .no_mem_follow = b->no_mem_follow,
                                  .on_event = engine_event,
                                  .event_ctx = b};
    int err;

    b->eng = NULL;
    if (b->fifo || !b->ops || !run_measure_sense(&o.sense, &o.sense_state))
        return;
    b->turbo = turbo_table(b->topo, &o.turbo_n);
    o.turbo_rel = b->turbo;
    if (cli_verbose)
        fprintf(stderr, "corun batch: turbo table %s\n",
                b->turbo ? "from MSR_TURBO_RATIO_LIMIT" : "unknown (MSR unreadable or not Intel)");
    if ((err = corun_engine_new(&o, &b->eng))) {
        cli_error("batch", "engine: %s; running jobs will not be re-placed", corun_strerror(err));
        b->eng = NULL;
    }
}

/* Frees the engine (it detaches its tasks; the placements it made are the
 * actuator's to restore, with the batch's). */
void batch_engine_close(struct batch *b)
{
    struct corun_engine_stats st;

    if (!b->eng)
        return;
    corun_engine_stats(b->eng, &st);
    b->mem_moves = (unsigned)st.mem_moves;
    if (cli_verbose)
        fprintf(stderr,
                "corun batch: engine: %llu intervals, %llu plans, %llu moves, %llu held, "
                "%llu capped, %llu memory moves, %llu of %llu second opinions kept, %llu "
                "errors\n",
                (unsigned long long)st.intervals, (unsigned long long)st.plans,
                (unsigned long long)st.migrations, (unsigned long long)st.held,
                (unsigned long long)st.capped, (unsigned long long)st.mem_moves,
                (unsigned long long)st.second_kept, (unsigned long long)st.second_tried,
                (unsigned long long)st.errors);
    corun_engine_free(b->eng);
    b->eng = NULL;
    free(b->turbo);
    b->turbo = NULL;
}
