/*
 * sense-sim.c — the sensor backend of the simulator: what a policy may know
 * of a simulated task, read as a perf-like counter set.
 *
 * It counts cycles (at the core's actual frequency), instructions,
 * ref_cycles (at the base frequency), LLC references and misses and the task
 * clock; every other preset is missing, with the reason. Each read adds the
 * true increase since the previous read times (1 + e), e drawn uniformly in
 * ±CORUN_SIM_NOISE per counter from a stream seeded by the simulation's seed
 * and the handle, so counts stay cumulative and monotone, noisy like real
 * multiplexed counters, and reproducible. The model's parameters never leave
 * the sim box through here.
 */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-internal.h"

#define SIM_EVENTS                                                                                 \
    (CORUN_EV_BIT(CORUN_EV_CYCLES) | CORUN_EV_BIT(CORUN_EV_INSTRUCTIONS) |                         \
     CORUN_EV_BIT(CORUN_EV_REF_CYCLES) | CORUN_EV_BIT(CORUN_EV_LLC_REFERENCES) |                   \
     CORUN_EV_BIT(CORUN_EV_LLC_MISSES) | CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS))

struct sim_handle {
    bool used;
    unsigned task;
    struct corun__rng rng;
    struct corun_sim_counters last; /* truth at the previous read */
    double noisy[CORUN_NEVENTS];    /* what was reported, cumulative */
};

struct sim_sense {
    struct corun_sim *sim;
    uint64_t events;
    unsigned nh;
    struct sim_handle *h;
};

static int sim_probe(const struct corun_sense_opts *opts, char *why, size_t len)
{
    if (!opts || !opts->backend_cfg) {
        snprintf(why, len, "the sim sensor needs a simulation (backend_cfg)");
        return -ENOTSUP;
    }
    return 0;
}

static int sim_open(const struct corun_sense_opts *opts, void **state)
{
    struct sim_sense *s;

    *state = NULL;
    if (!opts || !opts->backend_cfg)
        return -EINVAL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->sim = opts->backend_cfg;
    s->events = (opts->events ? opts->events : ~0ull) & SIM_EVENTS;
    *state = s;
    return 0;
}

static int sim_attach(void *state, pid_t target, int *handle)
{
    struct sim_sense *s = state;
    struct sim_handle *h;
    unsigned i;

    if (target < 0 || (unsigned)target >= corun_sim_ntasks(s->sim))
        return -ESRCH;
    for (i = 0; i < s->nh && s->h[i].used; i++)
        ;
    if (i == s->nh) {
        struct sim_handle *nh = realloc(s->h, (s->nh + 1) * sizeof(*nh));

        if (!nh)
            return -ENOMEM;
        s->h = nh;
        s->nh++;
    }
    h = &s->h[i];
    memset(h, 0, sizeof(*h));
    h->used = true;
    h->task = (unsigned)target;
    corun__rng_seed(&h->rng, corun__seed_mix(corun_sim_seed(s->sim),
                                             0x5e75e000u + i * 7919u + (unsigned)target));
    corun_sim_counters(s->sim, h->task, &h->last);
    *handle = (int)i;
    return 0;
}

static double noisy(struct sim_handle *h, double delta)
{
    return delta * (1.0 + CORUN_SIM_NOISE * (2.0 * corun__rng_unit(&h->rng) - 1.0));
}

static int sim_read(void *state, int handle, struct corun_sample *out)
{
    struct sim_sense *s = state;
    struct sim_handle *h;
    struct corun_sim_counters c;
    double d[CORUN_NEVENTS] = {0};

    if (handle < 0 || (unsigned)handle >= s->nh || !s->h[handle].used)
        return -EBADF;
    h = &s->h[handle];
    corun_sim_counters(s->sim, h->task, &c);
    d[CORUN_EV_CYCLES] = c.cycles - h->last.cycles;
    d[CORUN_EV_INSTRUCTIONS] = c.instructions - h->last.instructions;
    d[CORUN_EV_REF_CYCLES] = c.ref_cycles - h->last.ref_cycles;
    d[CORUN_EV_LLC_REFERENCES] = c.llc_references - h->last.llc_references;
    d[CORUN_EV_LLC_MISSES] = c.llc_misses - h->last.llc_misses;
    d[CORUN_EV_TASK_CLOCK_NS] = (c.task_clock_s - h->last.task_clock_s) * 1e9;
    memset(out, 0, sizeof(*out));
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        if (!(s->events & CORUN_EV_BIT(ev)))
            continue;
        /* Draw for every counted event on every read, whatever its delta, so
         * the stream does not depend on what happened to run. */
        h->noisy[ev] += noisy(h, d[ev]);
        if (h->noisy[ev] < 0)
            h->noisy[ev] = 0;
        out->value[ev] = (uint64_t)llround(h->noisy[ev]);
        out->valid |= CORUN_EV_BIT(ev);
    }
    h->last = c;
    out->t_ns = corun_sim_now_ns(s->sim);
    out->mux_ratio = 1.0;
    return 0;
}

static int sim_detach(void *state, int handle)
{
    struct sim_sense *s = state;

    if (handle < 0 || (unsigned)handle >= s->nh || !s->h[handle].used)
        return -EBADF;
    s->h[handle].used = false;
    return 0;
}

static const char *sim_why_missing(void *state, enum corun_event ev)
{
    struct sim_sense *s = state;

    if ((unsigned)ev >= CORUN_NEVENTS)
        return "no such event";
    if (s->events & CORUN_EV_BIT(ev))
        return NULL;
    if (SIM_EVENTS & CORUN_EV_BIT(ev))
        return "not requested";
    return "the simulator does not model this event";
}

static void sim_close(void *state)
{
    struct sim_sense *s = state;

    if (!s)
        return;
    free(s->h);
    free(s);
}

const struct corun_sense_ops corun_sense_sim_ops = {
    .name = "sim",
    .probe = sim_probe,
    .open = sim_open,
    .attach = sim_attach,
    .read = sim_read,
    .detach = sim_detach,
    .why_missing = sim_why_missing,
    .close = sim_close,
};
