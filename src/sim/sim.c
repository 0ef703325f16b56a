/*
 * sim.c — a simulation: tasks placed on CPUs, simulated time, counters and
 * metrics.
 *
 * Time advances from event to event: between two events (a phase change, a
 * throttle step, a task finishing, a move) every rate is constant, so the
 * solver runs once per event and counters grow linearly. corun_sim_step(dt)
 * may thus span any number of events, and a 60-second run costs as much as
 * its events, not its length.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-internal.h"

unsigned corun__phase_at(const struct corun_sim_task *t, double t_s, double *next_s)
{
    double total = 0, pos, acc = 0;

    if (t->nphases <= 1) {
        if (next_s)
            *next_s = INFINITY;
        return 0;
    }
    for (unsigned p = 0; p < t->nphases; p++)
        total += t->phase[p].duration_s;
    pos = fmod(t_s, total);
    for (unsigned p = 0; p < t->nphases; p++) {
        acc += t->phase[p].duration_s;
        if (pos < acc) {
            if (next_s)
                *next_s = t_s + (acc - pos);
            return p;
        }
    }
    if (next_s)
        *next_s = t_s + t->phase[0].duration_s;
    return 0;
}

int corun_sim_create(const struct corun_topo *topo, const struct corun_sim_machine *m,
                     const struct corun_sim_task *tasks, unsigned ntasks, uint64_t seed,
                     struct corun_sim **out)
{
    struct corun_sim *sim;
    int err;

    *out = NULL;
    if (!topo || !m || !tasks || ntasks == 0 || ntasks > CORUN_SIM_MAX_TASKS)
        return -EINVAL;
    for (unsigned i = 0; i < ntasks; i++) {
        if (tasks[i].nphases < 1 || tasks[i].nphases > CORUN_SIM_MAX_PHASES)
            return -EINVAL;
        for (unsigned p = 0; p < tasks[i].nphases; p++)
            if (!corun_sim_phase_check(&tasks[i].phase[p], NULL) ||
                (tasks[i].nphases > 1 && !(tasks[i].phase[p].duration_s > 0)))
                return -EINVAL;
    }
    if (!(m->base_ghz > 0 && m->bmax_gbps > 0 && m->l0_ns > 0 && m->w_eff > 0 && m->mlp_core >= 1 &&
          m->remote >= 1 && m->migrate_gbps >= 0))
        return -EINVAL;
    sim = calloc(1, sizeof(*sim));
    if (!sim)
        return -ENOMEM;
    sim->topo = topo;
    sim->m = *m;
    sim->seed = seed;
    sim->ntasks = ntasks;
    sim->dirty = true;
    sim->effort = 1.0;
    err = corun__hw_build(&sim->hw, topo, m);
    if (err)
        goto out_free;
    err = -ENOMEM;
    sim->t = calloc(ntasks, sizeof(*sim->t));
    sim->ph = calloc(ntasks, sizeof(*sim->ph));
    sim->cpu_tmp = calloc(ntasks, sizeof(int));
    sim->home_tmp = calloc(ntasks, sizeof(int));
    sim->cur_phase = calloc(ntasks, sizeof(unsigned));
    if (!sim->t || !sim->ph || !sim->cpu_tmp || !sim->home_tmp || !sim->cur_phase)
        goto out_free;
    if (corun__solve_init(&sim->cur, &sim->hw, ntasks) ||
        corun__solve_init(&sim->eval, &sim->hw, ntasks) ||
        corun__solve_init(&sim->alone, &sim->hw, 1))
        goto out_free;
    for (unsigned i = 0; i < ntasks; i++) {
        struct corun__sim_task *t = &sim->t[i];

        t->def = tasks[i];
        t->def.name[CORUN_SIM_NAME_MAX - 1] = '\0';
        t->cpu = t->last_cpu = t->home = -1;
        t->finish_s = NAN;
    }
    *out = sim;
    return 0;
out_free:
    corun_sim_free(sim);
    return err;
}

void corun_sim_free(struct corun_sim *sim)
{
    if (!sim)
        return;
    corun__solve_release(&sim->cur);
    corun__solve_release(&sim->eval);
    corun__solve_release(&sim->alone);
    corun__hw_release(&sim->hw);
    free(sim->t);
    free(sim->ph);
    free(sim->cpu_tmp);
    free(sim->home_tmp);
    free(sim->cur_phase);
    free(sim);
}

void corun_sim_set_effort(struct corun_sim *sim, double effort)
{
    sim->effort = effort > 0 && effort <= 1 ? effort : 1.0;
}

unsigned corun_sim_ntasks(const struct corun_sim *sim)
{
    return sim->ntasks;
}

const struct corun_sim_task *corun_sim_task(const struct corun_sim *sim, unsigned i)
{
    return i < sim->ntasks ? &sim->t[i].def : NULL;
}

const struct corun_topo *corun_sim_topo(const struct corun_sim *sim)
{
    return sim->topo;
}

const struct corun_sim_machine *corun_sim_machine(const struct corun_sim *sim)
{
    return &sim->m;
}

uint64_t corun_sim_seed(const struct corun_sim *sim)
{
    return sim->seed;
}

static bool cpu_ok(const struct corun_sim *sim, int cpu)
{
    return cpu == -1 || (cpu >= 0 && (unsigned)cpu < sim->hw.ncpus && sim->hw.usable[cpu]);
}

int corun_sim_move(struct corun_sim *sim, unsigned task, int cpu)
{
    struct corun__sim_task *t;

    if (task >= sim->ntasks || !cpu_ok(sim, cpu))
        return -EINVAL;
    t = &sim->t[task];
    if (t->finished || t->cpu == cpu)
        return 0;
    if (cpu >= 0) {
        if (t->placed_once && cpu != t->last_cpu)
            t->migrations++;
        if (!t->placed_once) {
            /* First touch: its memory lives on the node it starts on. */
            t->placed_once = true;
            t->home = sim->hw.numa[cpu];
            t->start_s = sim->now_s;
        }
        t->last_cpu = cpu;
    }
    t->cpu = cpu;
    sim->dirty = true;
    return 0;
}

double corun_sim_task_rss_mb(const struct corun_sim_task *t)
{
    double ws = t->nphases ? t->phase[0].ws_mb : 0;

    if (t->rss_mb > 0)
        return t->rss_mb;
    return 2 * ws > 16 ? 2 * ws : 16;
}

int corun_sim_move_memory(struct corun_sim *sim, unsigned task, int node)
{
    struct corun__sim_task *t;
    double gbps = sim->m.migrate_gbps > 0 ? sim->m.migrate_gbps : 1.0, from;

    if (task >= sim->ntasks || node < 0 || (unsigned)node >= sim->hw.nnuma)
        return -EINVAL;
    t = &sim->t[task];
    if (!t->placed_once)
        return -EINVAL;
    if (t->home == node || t->finished)
        return 0;
    t->home = node;
    t->mem_moves++;
    /* The pages move one after another: a later migration waits for the
     * one in progress. */
    from = t->stall_until_s > sim->now_s ? t->stall_until_s : sim->now_s;
    t->stall_until_s = from + corun_sim_task_rss_mb(&t->def) / 1024.0 / gbps;
    sim->dirty = true;
    return 0;
}

int corun_sim_place(struct corun_sim *sim, const int *cpu)
{
    for (unsigned i = 0; i < sim->ntasks; i++)
        if (!cpu_ok(sim, cpu[i]))
            return -EINVAL;
    for (unsigned i = 0; i < sim->ntasks; i++)
        corun_sim_move(sim, i, cpu[i]);
    return 0;
}

int corun_sim_cpu_of(const struct corun_sim *sim, unsigned task)
{
    return task < sim->ntasks ? sim->t[task].cpu : -1;
}

void corun__sim_refresh(struct corun_sim *sim)
{
    if (!sim->dirty)
        return;
    for (unsigned i = 0; i < sim->ntasks; i++) {
        struct corun__sim_task *t = &sim->t[i];

        sim->cur_phase[i] = corun__phase_at(&t->def, sim->now_s, NULL);
        sim->ph[i] = &t->def.phase[sim->cur_phase[i]];
        sim->cpu_tmp[i] = t->finished ? -1 : t->cpu;
        sim->home_tmp[i] = t->home;
    }
    corun__solve_run(&sim->cur, &sim->hw, &sim->m, sim->ph, sim->cpu_tmp, sim->home_tmp,
                     sim->now_s);
    sim->dirty = false;
}

/* IPS of task @i alone on the fastest idle CPU, in phase @p (cached). */
static double alone_ips(struct corun_sim *sim, unsigned i, unsigned p)
{
    struct corun__sim_task *t = &sim->t[i];

    if (t->alone_ips[p] > 0)
        return t->alone_ips[p];
    {
        const struct corun_sim_phase *ph = &t->def.phase[p];
        int cpu = sim->hw.best_cpu;

        /* A one-task solve: an idle machine, no throttle, memory local. */
        corun__solve_run(&sim->alone, &sim->hw, &sim->m, &ph, &cpu, NULL, -1.0);
    }
    t->alone_ips[p] = sim->alone.ips[0];
    return t->alone_ips[p];
}

double corun_sim_alone_ips(struct corun_sim *sim, unsigned task)
{
    if (task >= sim->ntasks)
        return NAN;
    return alone_ips(sim, task, corun__phase_at(&sim->t[task].def, sim->now_s, NULL));
}

/* Advances every running task by @dt at the rates of sim->cur. */
static void advance(struct corun_sim *sim, double dt)
{
    const struct corun__solve *s = &sim->cur;

    for (unsigned i = 0; i < sim->ntasks; i++) {
        struct corun__sim_task *t = &sim->t[i];
        unsigned p;
        double instr, run;

        if (t->finished || t->cpu < 0)
            continue;
        p = corun__phase_at(&t->def, sim->now_s, NULL);
        instr = s->ips[i] * dt;
        run = s->share[i] * dt;
        if (t->stall_until_s > sim->now_s) {
            /* Its pages are moving: it holds its CPU and makes no progress
             * (the rest of the model still sees it run: a bound on harm). */
            double still = fmin(1.0, (t->stall_until_s - sim->now_s) / dt);

            instr *= 1 - still;
            run *= 1 - still;
            t->stall_s += still * dt;
        }
        if (t->def.instructions > 0 && t->done_instr + instr > t->def.instructions)
            instr = t->def.instructions - t->done_instr;
        t->done_instr += instr;
        t->ctr.instructions += instr;
        t->ctr.task_clock_s += run;
        t->ctr.cycles += run * s->ghz[i] * 1e9;
        t->ctr.ref_cycles += run * sim->m.base_ghz * 1e9;
        t->ctr.llc_misses += instr * s->mpki[i] * 1e-3;
        /* Every access that misses the private caches reaches the LLC: with
         * no LLC at all, all of them would miss. */
        t->ctr.llc_references += instr * t->def.phase[p].mpki_max * 1e-3;
        t->alone_equiv_s += instr / alone_ips(sim, i, p);
    }
}

/* The earliest event after now: phase change, throttle step, completion. */
static double next_event(struct corun_sim *sim, double end)
{
    double next = end;

    for (unsigned i = 0; i < sim->ntasks; i++) {
        struct corun__sim_task *t = &sim->t[i];
        double ph_next;

        if (t->finished || t->cpu < 0)
            continue;
        corun__phase_at(&t->def, sim->now_s, &ph_next);
        if (ph_next < next)
            next = ph_next;
        if (t->stall_until_s > sim->now_s) {
            /* Stalled: its end is the next thing that happens to it. */
            if (t->stall_until_s < next)
                next = t->stall_until_s;
            continue;
        }
        if (t->def.instructions > 0 && sim->cur.ips[i] > 0) {
            double fin = sim->now_s + (t->def.instructions - t->done_instr) / sim->cur.ips[i];

            if (fin < next)
                next = fin;
        }
    }
    for (unsigned k = 0; k < sim->m.nthrottle; k++)
        if (sim->m.throttle[k].t_s > sim->now_s && sim->m.throttle[k].t_s < next)
            next = sim->m.throttle[k].t_s;
    return next;
}

int corun_sim_step(struct corun_sim *sim, double dt_s)
{
    double end;

    if (!(dt_s > 0) || !isfinite(dt_s))
        return -EINVAL;
    end = sim->now_s + dt_s;
    while (sim->now_s < end) {
        double next, dt;

        corun__sim_refresh(sim);
        /* alone_ips() may borrow the scratch arrays: fill the cache first. */
        for (unsigned i = 0; i < sim->ntasks; i++)
            if (sim->t[i].cpu >= 0 && !sim->t[i].finished)
                alone_ips(sim, i, corun__phase_at(&sim->t[i].def, sim->now_s, NULL));
        corun__sim_refresh(sim);
        next = next_event(sim, end);
        dt = next - sim->now_s;
        if (dt < 1e-12) {
            /* An event exactly now (a phase boundary in rounding): step over it. */
            next = sim->now_s + 1e-12 < end ? sim->now_s + 1e-12 : end;
            dt = next - sim->now_s;
        }
        advance(sim, dt);
        for (unsigned k = 0; k < sim->m.nthrottle; k++)
            if (sim->m.throttle[k].t_s > sim->now_s && sim->m.throttle[k].t_s <= next)
                sim->dirty = true;
        sim->now_s = next;
        for (unsigned i = 0; i < sim->ntasks; i++) {
            struct corun__sim_task *t = &sim->t[i];

            if (t->def.nphases > 1 && t->cpu >= 0 &&
                corun__phase_at(&t->def, sim->now_s, NULL) != sim->cur_phase[i])
                sim->dirty = true;

            if (!t->finished && t->cpu >= 0 && t->def.instructions > 0 &&
                t->done_instr >= t->def.instructions * (1 - 1e-12)) {
                t->done_instr = t->def.instructions;
                t->finished = true;
                t->finish_s = sim->now_s;
                sim->dirty = true;
            }
        }
    }
    return 0;
}

uint64_t corun_sim_now_ns(const struct corun_sim *sim)
{
    return (uint64_t)llround(sim->now_s * 1e9);
}

double corun_sim_now_s(const struct corun_sim *sim)
{
    return sim->now_s;
}

static uint64_t clock_now(void *ctx)
{
    return corun_sim_now_ns(ctx);
}

static int clock_wait(void *ctx, uint64_t t_ns)
{
    uint64_t now = corun_sim_now_ns(ctx);

    return t_ns > now ? corun_sim_step(ctx, (double)(t_ns - now) * 1e-9) : 0;
}

struct corun_clock corun_sim_clock(struct corun_sim *sim)
{
    return (struct corun_clock){.now_ns = clock_now, .wait_until = clock_wait, .ctx = sim};
}

bool corun_sim_done(const struct corun_sim *sim)
{
    bool any = false;

    for (unsigned i = 0; i < sim->ntasks; i++) {
        if (sim->t[i].def.instructions <= 0)
            continue;
        any = true;
        if (!sim->t[i].finished)
            return false;
    }
    return any;
}

int corun_sim_counters(const struct corun_sim *sim, unsigned task, struct corun_sim_counters *out)
{
    if (task >= sim->ntasks)
        return -EINVAL;
    *out = sim->t[task].ctr;
    return 0;
}

int corun_sim_truth(struct corun_sim *sim, unsigned task, struct corun_sim_truth *out)
{
    if (task >= sim->ntasks)
        return -EINVAL;
    corun__sim_refresh(sim);
    out->ips = sim->cur.ips[task];
    out->ghz = sim->cur.ghz[task];
    out->cache_mb = sim->cur.cache_mb[task];
    out->mpki = sim->cur.mpki[task];
    out->latency_ns = sim->cur.lat_ns[task];
    out->sigma = sim->cur.sigma[task];
    return 0;
}

int corun_sim_memory(struct corun_sim *sim, unsigned numa, double *bw_bps, double *latency_ns)
{
    if (numa >= sim->hw.nnuma)
        return -EINVAL;
    corun__sim_refresh(sim);
    *bw_bps = sim->cur.bw_bps[numa];
    *latency_ns = sim->cur.mem_lat_ns[numa];
    return 0;
}

double corun__sim_eval(struct corun_sim *sim, const int *cpu)
{
    double stp = 0;

    for (unsigned i = 0; i < sim->ntasks; i++) {
        if (cpu[i] < 0 || !cpu_ok(sim, cpu[i]))
            return NAN;
        alone_ips(sim, i, corun__phase_at(&sim->t[i].def, sim->now_s, NULL));
    }
    for (unsigned i = 0; i < sim->ntasks; i++)
        sim->ph[i] = &sim->t[i].def.phase[corun__phase_at(&sim->t[i].def, sim->now_s, NULL)];
    corun__solve_run(&sim->eval, &sim->hw, &sim->m, sim->ph, cpu, NULL, sim->now_s);
    for (unsigned i = 0; i < sim->ntasks; i++)
        stp += sim->eval.ips[i] /
               sim->t[i].alone_ips[corun__phase_at(&sim->t[i].def, sim->now_s, NULL)];
    return stp;
}

void corun__sim_slowdowns(const struct corun_sim *sim, double p, double *norm, double *max)
{
    double sum = 0, m = 1;

    for (unsigned i = 0; i < sim->ntasks; i++) {
        double x = sim->t[i].alone_ips[corun__phase_at(&sim->t[i].def, sim->now_s, NULL)] /
                   sim->eval.ips[i];

        sum += pow(x, p);
        if (x > m)
            m = x;
    }
    *norm = sim->ntasks ? pow(sum / sim->ntasks, 1.0 / p) : 1.0;
    *max = m;
}

double corun_sim_static_stp(struct corun_sim *sim, const int *cpu)
{
    return corun__sim_eval(sim, cpu);
}

int corun_sim_result(const struct corun_sim *sim, struct corun_sim_result *out)
{
    bool all_work = true;
    double sum_inv = 0, makespan = 0, sum_fin = 0;

    memset(out, 0, sizeof(*out));
    if (!(sim->now_s > 0))
        return -ENODATA;
    out->tasks = calloc(sim->ntasks, sizeof(*out->tasks));
    if (!out->tasks)
        return -ENOMEM;
    out->ntasks = sim->ntasks;
    out->sim_s = sim->now_s;
    out->max_slowdown = 0;
    for (unsigned i = 0; i < sim->ntasks; i++) {
        const struct corun__sim_task *t = &sim->t[i];
        struct corun_sim_task_result *r = &out->tasks[i];
        double end = t->finished ? t->finish_s : sim->now_s;
        double alive = end - t->start_s;

        r->speedup = t->placed_once && alive > 0 ? t->alone_equiv_s / alive : 0;
        r->instructions = t->done_instr;
        r->finish_s = t->finished ? t->finish_s : NAN;
        r->cpu = t->last_cpu;
        r->migrations = t->migrations;
        r->mem_moves = t->mem_moves;
        out->migrations += t->migrations;
        out->mem_moves += t->mem_moves;
        out->mem_stall_s += t->stall_s;
        out->stp += r->speedup;
        sum_inv += r->speedup > 0 ? 1.0 / r->speedup : INFINITY;
        if (r->speedup > 0 && 1.0 / r->speedup > out->max_slowdown)
            out->max_slowdown = 1.0 / r->speedup;
        if (r->speedup <= 0)
            out->max_slowdown = INFINITY;
        if (!t->finished)
            all_work = false;
        else {
            makespan = fmax(makespan, t->finish_s);
            sum_fin += t->finish_s;
        }
    }
    out->antt = sum_inv / sim->ntasks;
    out->makespan_s = all_work ? makespan : NAN;
    out->mean_completion_s = all_work ? sum_fin / sim->ntasks : NAN;
    return 0;
}

void corun_sim_result_release(struct corun_sim_result *r)
{
    if (!r)
        return;
    free(r->tasks);
    r->tasks = NULL;
}
