/*
 * sense.c — the sense box's front: preset names, the backend fallback chain
 * and sample arithmetic. The event tables per PMU model are in encode.c, the
 * backends in sense-perf.c and sense-proc.c (the simulator adds its own).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "corun/sense.h"

static const char *const event_names[CORUN_NEVENTS] = {
    [CORUN_EV_CYCLES] = "cycles",
    [CORUN_EV_INSTRUCTIONS] = "instructions",
    [CORUN_EV_REF_CYCLES] = "ref_cycles",
    [CORUN_EV_LLC_REFERENCES] = "llc_references",
    [CORUN_EV_LLC_MISSES] = "llc_misses",
    [CORUN_EV_BRANCH_MISSES] = "branch_misses",
    [CORUN_EV_DTLB_MISSES] = "dtlb_misses",
    [CORUN_EV_STALL_CYCLES_BACKEND] = "stall_cycles_backend",
    [CORUN_EV_TASK_CLOCK_NS] = "task_clock_ns",
    [CORUN_EV_CONTEXT_SWITCHES] = "context_switches",
    [CORUN_EV_CPU_MIGRATIONS] = "cpu_migrations",
    [CORUN_EV_PAGE_FAULTS] = "page_faults",
    [CORUN_EV_RUN_DELAY_NS] = "run_delay_ns",
};

const char *corun_event_name(enum corun_event ev)
{
    return (unsigned)ev < CORUN_NEVENTS ? event_names[ev] : "?";
}

int corun_event_by_name(const char *name)
{
    for (int i = 0; i < CORUN_NEVENTS; i++)
        if (name && !strcmp(event_names[i], name))
            return i;
    return -EINVAL;
}

bool corun_event_is_hardware(enum corun_event ev)
{
    return ev <= CORUN_EV_STALL_CYCLES_BACKEND;
}

const char *corun_event_source_name(enum corun_event_source src)
{
    switch (src) {
    case CORUN_SRC_NATIVE:
        return "native";
    case CORUN_SRC_GENERIC:
        return "generic";
    case CORUN_SRC_SOFTWARE:
        return "software";
    case CORUN_SRC_PROC:
        return "proc";
    default:
        return "none";
    }
}

int corun_sense_select(const struct corun_sense_opts *opts,
                       const struct corun_sense_ops *const *chain, unsigned n,
                       struct corun_sense_choice *out)
{
    static const struct corun_sense_ops *const default_chain[] = {&corun_sense_perf,
                                                                  &corun_sense_proc};

    memset(out, 0, sizeof(*out));
    if (!chain) {
        chain = default_chain;
        n = CORUN_ARRAY_SIZE(default_chain);
    }
    if (n > CORUN_SENSE_MAX_CHAIN)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        struct corun_sense_attempt *a = &out->tried[out->ntried];
        void *state = NULL;
        int err;

        a->backend = chain[i]->name;
        err = chain[i]->probe(opts, a->why, sizeof(a->why));
        if (!err) {
            err = chain[i]->open(opts, &state);
            if (err)
                snprintf(a->why, sizeof(a->why), "open failed: %s", corun_strerror(err));
        }
        if (!err) {
            out->ops = chain[i];
            out->state = state;
            return 0;
        }
        a->err = err;
        if (!a->why[0])
            snprintf(a->why, sizeof(a->why), "%s", corun_strerror(err));
        corun__info("sense: backend %s unavailable: %s", a->backend, a->why);
        out->ntried++;
    }
    return -ENOTSUP;
}

void corun_sample_delta(const struct corun_sample *prev, const struct corun_sample *cur,
                        struct corun_sample *out)
{
    memset(out, 0, sizeof(*out));
    out->t_ns = cur->t_ns;
    out->mux_ratio = cur->mux_ratio;
    out->valid = prev->valid & cur->valid;
    for (int i = 0; i < CORUN_NEVENTS; i++) {
        if (!(out->valid & CORUN_EV_BIT(i)))
            continue;
        /* Scaled estimates may step back slightly when a multiplexed count is
         * re-estimated; a negative delta is clamped to zero, not wrapped. */
        out->value[i] = cur->value[i] >= prev->value[i] ? cur->value[i] - prev->value[i] : 0;
    }
}

void corun_sample_init_sum(struct corun_sample *sum)
{
    memset(sum, 0, sizeof(*sum));
    sum->valid = CORUN_EV_BIT(CORUN_NEVENTS) - 1;
    sum->mux_ratio = 1.0;
}

void corun_sample_add(struct corun_sample *sum, const struct corun_sample *s)
{
    sum->valid &= s->valid;
    for (int i = 0; i < CORUN_NEVENTS; i++)
        sum->value[i] = (sum->valid & CORUN_EV_BIT(i)) ? sum->value[i] + s->value[i] : 0;
    if (s->mux_ratio < sum->mux_ratio)
        sum->mux_ratio = s->mux_ratio;
    if (s->t_ns > sum->t_ns)
        sum->t_ns = s->t_ns;
}
