/*
 * testutil.h — what the cmocka tests share: fixture paths, cmocka's
 * includes in the order it needs them, a task known by its class, the
 * reading of a fake sensor and a fake actuator that records pins.
 */
#ifndef CORUN_TESTUTIL_H
#define CORUN_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "corun/act.h"
#include "corun/engine.h"
#include "corun/profile.h"
#include "corun/sense.h"
#include "corun/topo.h"

/* The path of fixture @rel (below tests/fixtures) in a static buffer. */
static inline const char *fixture(const char *rel)
{
    static char buf[4][1024];
    static int next;
    char *b = buf[next++ % 4];

    snprintf(b, sizeof(buf[0]), "%s/%s", CORUN_FIXTURES, rel);
    return b;
}

/* The fixture topology tests/fixtures/topologies/@name; the test fails if it
 * does not load. */
static inline struct corun_topo *fixture_topo(const char *name)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_XML};
    struct corun_topo *t = NULL;
    char rel[512];

    snprintf(rel, sizeof(rel), "topologies/%s", name);
    o.input = fixture(rel);
    assert_int_equal(corun_topo_load(&o, &t), 0);
    assert_non_null(t);
    return t;
}

/* An hwloc synthetic topology; the test fails if it does not load. */
static inline struct corun_topo *synthetic_topo(const char *desc)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC, .input = desc};
    struct corun_topo *t = NULL;

    assert_int_equal(corun_topo_load(&o, &t), 0);
    assert_non_null(t);
    return t;
}

/* A task known only by its class: counters unknown, priors stand in. */
static inline struct corun_task_profile class_task(unsigned id, enum corun_class cls)
{
    struct corun_task_profile p = {.id = id, .cls = cls, .weight = 1, .cpu = -1};

    p.ipc = p.freq_ratio = p.llc_mpki = p.llc_miss_ratio = p.mem_bw_bps = p.cpu_util = NAN;
    for (int l = 0; l < CORUN_NLEVELS; l++)
        p.pressure[l] = p.sensitivity[l] = NAN;
    return p;
}

/* A fake sensor's read: @acc (the counts so far) at time @now, every event
 * an engine uses counted, nothing multiplexed. */
static inline void fake_sample(struct corun_sample *out, const struct corun_sample *acc,
                               uint64_t now)
{
    *out = *acc;
    out->t_ns = now;
    out->valid = CORUN_EV_BIT(CORUN_EV_CYCLES) | CORUN_EV_BIT(CORUN_EV_REF_CYCLES) |
                 CORUN_EV_BIT(CORUN_EV_INSTRUCTIONS) | CORUN_EV_BIT(CORUN_EV_LLC_REFERENCES) |
                 CORUN_EV_BIT(CORUN_EV_LLC_MISSES) | CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS);
    out->mux_ratio = 1;
}

/* A fake sensor over counts a test accumulates itself: a task's handle is
 * its target, and a read gives acc[handle] at *now (fake_sample()). Its
 * state (opts.sense_state) is a struct fake_counters. */
struct fake_counters {
    const struct corun_sample *acc;
    const uint64_t *now;
};

static inline int fake_counters_attach(void *st, pid_t target, int *handle)
{
    (void)st;
    *handle = target;
    return 0;
}

static inline int fake_counters_read(void *st, int h, struct corun_sample *out)
{
    const struct fake_counters *fc = st;

    fake_sample(out, &fc->acc[h], *fc->now);
    return 0;
}

static inline int fake_counters_detach(void *st, int h)
{
    (void)st;
    (void)h;
    return 0;
}

static const struct corun_sense_ops fake_counters_sense
    __attribute__((unused)) = {.name = "fake",
                               .attach = fake_counters_attach,
                               .read = fake_counters_read,
                               .detach = fake_counters_detach};

/* What a sheep-like task counts into @acc over @dt ns of @cycles cycles
 * and @instr instructions: 2.5 reference cycles a ns, 5 LLC references and
 * 1.5 misses per thousand instructions. */
static inline void fake_sheep_counts(struct corun_sample *acc, double cycles, double instr,
                                     double dt)
{
    acc->value[CORUN_EV_CYCLES] += (uint64_t)cycles;
    acc->value[CORUN_EV_REF_CYCLES] += (uint64_t)(2.5 * dt);
    acc->value[CORUN_EV_INSTRUCTIONS] += (uint64_t)instr;
    acc->value[CORUN_EV_LLC_REFERENCES] += (uint64_t)(instr * 5e-3);
    acc->value[CORUN_EV_LLC_MISSES] += (uint64_t)(instr * 1.5e-3);
    acc->value[CORUN_EV_TASK_CLOCK_NS] += (uint64_t)dt;
}

/* A fake actuator that records where each task is pinned: a task's target
 * is its index in @pinned, -1 the kernel's choice. Its state
 * (opts.act_state) is a struct fake_pins. */
struct fake_pins {
    const struct corun_topo *topo;
    int *pinned;
};

static inline int fake_pins_apply(void *st, pid_t target, const struct corun_cpuset *cpus)
{
    struct fake_pins *fp = st;

    fp->pinned[target] = corun_topo_cpu_by_os(fp->topo, (unsigned)corun_cpuset_next(cpus, 0));
    return 0;
}

static inline int fake_pins_restore(void *st, pid_t target)
{
    struct fake_pins *fp = st;

    fp->pinned[target] = -1;
    return 0;
}

static const struct corun_act_ops fake_pins_act __attribute__((unused)) = {
    .name = "fake", .apply = fake_pins_apply, .restore = fake_pins_restore};

/* A scripted placement: task id i on CPU 2i, the first thread of core i
 * on a machine of two threads a core. */
static inline int fake_even_place(const struct corun_snapshot *snap, struct corun_plan *plan)
{
    for (unsigned k = 0; k < snap->ntasks; k++)
        plan->cpu[k] = (int)(2 * snap->tasks[k].id);
    return 0;
}

/* Adds @n tasks hinted sheep to @e, task i with target and id i, where the
 * kernel runs it: @cpu[i]. */
static inline void fake_add_sheep(struct corun_engine *e, const int *cpu, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct corun_engine_task t = {.target = (pid_t)i, .id = i, .hint = CORUN_CLASS_SHEEP};

        assert_int_equal(corun_engine_add(e, &t, NULL), 0);
        assert_int_equal(corun_engine_set_cpu(e, i, cpu[i]), 0);
    }
}

#endif
