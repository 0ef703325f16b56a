/*
 * sense-perf.c — the perf_event_open sensor: every preset this machine's PMU
 * and the kernel allow, encoded for its PMU model (encode.c), opened per
 * target as a counter set (perf-common.c), scaled for multiplexing; run
 * delay from schedstat as in the proc backend.
 *
 * Its probe fails, with the reason, when hardware events cannot be opened at
 * all (no PMU exposed by a hypervisor, perf_event_paranoid and no
 * CAP_PERFMON...): the proc backend is next in the chain. When the PMU works
 * but one preset does not (the model lacks it, the kernel rejects the raw
 * encoding), the native event falls back to perf's generic one where there
 * is one, and otherwise that preset alone is missing with its reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "sense/sense-internal.h"

#define ALL_EVENTS (CORUN_EV_BIT(CORUN_NEVENTS) - 1)

struct perf_target {
    bool used;
    pid_t pid;
    struct corun__pset *ps;
    struct corun__tidtab tab;
};

struct perf_state {
    int rootfd;
    uint64_t wanted;
    bool delay_ok;
    struct corun__perf_env env;
    struct corun_pmu_encoding enc;
    struct corun__pplan plan;
    char why[CORUN_NEVENTS][256];
    struct perf_target *t;
    unsigned nt;
};

static int perf_probe(const struct corun_sense_opts *opts, char *why, size_t len)
{
    struct corun__perf_env env;
    int rootfd = corun__root_open(opts ? opts->root : NULL);
    int err;

    if (rootfd < 0) {
        snprintf(why, len, "cannot open the root directory: %s", corun_strerror(rootfd));
        return rootfd;
    }
    corun__perf_env_read(rootfd, &env);
    close(rootfd);
    err = corun__perf_diagnose(&env, why, len);
    return err;
}

/*
 * A hybrid CPU (one PMU per core type): libpfm4 4.13 has no tables for the
 * core types, and their raw encodings differ anyway, so hardware presets use
 * perf's generic events, opened once per core-type PMU (the extended type in
 * config bits 32-63) and combined (perf-common.c).
 */
static void use_hybrid(struct perf_state *st)
{
    for (int ev = 0; ev <= CORUN_EV_STALL_CYCLES_BACKEND; ev++) {
        struct corun_event_encoding *e = &st->enc.ev[ev];
        const char *name;

        corun__generic_event(ev, &e->type, &e->config, &name);
        e->source = CORUN_SRC_GENERIC;
        e->config1 = e->config2 = 0;
        e->reason[0] = '\0';
        snprintf(e->native, sizeof(e->native), "%s on each of %s", name, st->env.core_pmus);
    }
    st->plan.npmus = st->env.ncore_pmus;
    for (unsigned p = 0; p < st->plan.npmus; p++)
        st->plan.pmu_type[p] = st->env.core_pmu_type[p];
}

/* Tries @attr on every core-type PMU of a hybrid CPU: 0 if one accepts it. */
static int try_hybrid(const struct perf_state *st, struct perf_event_attr *attr)
{
    struct perf_event_attr a;
    int err = -ENOENT;

    for (unsigned p = 0; p < st->plan.npmus; p++) {
        a = *attr;
        a.config |= (uint64_t)st->plan.pmu_type[p] << 32;
        err = corun__perf_try(&a);
        if (!err)
            return 0;
    }
    return err;
}

/*
 * Chooses the attr for @ev: the native encoding if the kernel accepts it,
 * else perf's generic event, else records why there is none.
 */
static void plan_event(struct perf_state *st, enum corun_event ev)
{
    struct corun_event_encoding *e = &st->enc.ev[ev];
    struct perf_event_attr *attr = &st->plan.attr[ev];
    int err;

    if (e->source == CORUN_SRC_NONE) {
        snprintf(st->why[ev], sizeof(st->why[ev]), "%s", e->reason);
        return;
    }
    corun__perf_attr(e, &st->env, attr);
    if (st->plan.npmus > 1 && corun_event_is_hardware(ev))
        err = try_hybrid(st, attr);
    else
        err = corun__perf_try(attr);
    if (err && e->source == CORUN_SRC_NATIVE &&
        (err == -ENOENT || err == -EINVAL || err == -EOPNOTSUPP)) {
        struct corun_event_encoding g = *e;
        const char *name;

        corun__generic_event(ev, &g.type, &g.config, &name);
        g.source = CORUN_SRC_GENERIC;
        g.config1 = g.config2 = 0;
        corun__perf_attr(&g, &st->env, attr);
        if (!corun__perf_try(attr)) {
            corun__info("sense: %s rejected (%s), using %s", e->native, corun_strerror(err), name);
            snprintf(g.native, sizeof(g.native), "%s", name);
            *e = g;
            err = 0;
        }
    }
    if (err) {
        corun__perf_event_reason(err, ev, e, &st->env, st->why[ev], sizeof(st->why[ev]));
        return;
    }
    st->plan.events |= CORUN_EV_BIT(ev);
}

static int perf_open(const struct corun_sense_opts *opts, void **state)
{
    struct perf_state *st = calloc(1, sizeof(*st));
    char buf[128];
    int err;

    *state = NULL;
    if (!st)
        return -ENOMEM;
    st->rootfd = corun__root_open(opts->root);
    if (st->rootfd < 0) {
        err = st->rootfd;
        goto out_free;
    }
    err = corun_sense_encode(opts->pmu, &st->enc);
    if (err)
        goto out_close;
    corun__perf_env_read(st->rootfd, &st->env);
    st->wanted = opts->events ? opts->events & ALL_EVENTS : ALL_EVENTS;
    if (corun__perf_hybrid(&st->env))
        use_hybrid(st);
    st->plan.inherit = opts->inherit;
    st->plan.on_exec = opts->inherit && opts->on_exec;
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        if (!(st->wanted & CORUN_EV_BIT(ev)))
            continue;
        if (ev == CORUN_EV_RUN_DELAY_NS) {
            st->delay_ok =
                corun__read_text(st->rootfd, "proc/self/schedstat", buf, sizeof(buf)) >= 0;
            if (!st->delay_ok)
                snprintf(st->why[ev], sizeof(st->why[ev]),
                         "no /proc/PID/schedstat (kernel without CONFIG_SCHED_INFO)");
            continue;
        }
        plan_event(st, ev);
    }
    *state = st;
    return 0;

out_close:
    close(st->rootfd);
out_free:
    free(st);
    return err;
}

static struct perf_target *target_of(struct perf_state *st, int handle)
{
    if (handle < 0 || (unsigned)handle >= st->nt || !st->t[handle].used)
        return NULL;
    return &st->t[handle];
}

static int perf_attach(void *state, pid_t target, int *handle)
{
    struct perf_state *st = state;
    struct perf_target *t;
    unsigned i;
    int err;

    for (i = 0; i < st->nt; i++)
        if (!st->t[i].used)
            break;
    if (i == st->nt) {
        struct perf_target *nt = realloc(st->t, (st->nt + 1) * sizeof(*nt));

        if (!nt)
            return -ENOMEM;
        st->t = nt;
        st->nt++;
    }
    t = &st->t[i];
    memset(t, 0, sizeof(*t));
    t->pid = target;
    err = corun__pset_open(&st->plan, st->rootfd, target, &t->ps);
    if (err)
        return err;
    if (st->delay_ok) {
        err = corun__tidtab_update(&t->tab, st->rootfd, target);
        if (err && err != -ENOENT) {
            corun__pset_close(t->ps);
            corun__tidtab_release(&t->tab);
            return err;
        }
        t->tab.base_delay = corun__tidtab_delay(&t->tab);
    }
    t->used = true;
    *handle = (int)i;
    return 0;
}

static int perf_read(void *state, int handle, struct corun_sample *out)
{
    struct perf_state *st = state;
    struct perf_target *t = target_of(st, handle);
    int err;

    if (!t)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    err = corun__pset_read(t->ps, out);
    if (err)
        return err;
    if (st->delay_ok) {
        err = corun__tidtab_update(&t->tab, st->rootfd, t->pid);
        if (err == -ENOMEM)
            return err;
        if (!err || err == -ESRCH) {
            out->value[CORUN_EV_RUN_DELAY_NS] = corun__tidtab_delay(&t->tab);
            out->valid |= CORUN_EV_BIT(CORUN_EV_RUN_DELAY_NS);
        }
    }
    out->t_ns = corun__now_ns();
    return 0;
}

static int perf_detach(void *state, int handle)
{
    struct perf_state *st = state;
    struct perf_target *t = target_of(st, handle);

    if (!t)
        return -EINVAL;
    corun__pset_close(t->ps);
    corun__tidtab_release(&t->tab);
    t->ps = NULL;
    t->used = false;
    return 0;
}

static const char *perf_why_missing(void *state, enum corun_event ev)
{
    struct perf_state *st = state;

    if ((unsigned)ev >= CORUN_NEVENTS)
        return "no such event";
    if (!(st->wanted & CORUN_EV_BIT(ev)))
        return "not requested";
    if (ev == CORUN_EV_RUN_DELAY_NS)
        return st->delay_ok ? NULL : st->why[ev];
    if (!(st->plan.events & CORUN_EV_BIT(ev)))
        return st->why[ev][0] ? st->why[ev] : "not counted";
    /* Opened at probe time on corun itself, but maybe refused on a target. */
    for (unsigned i = 0; i < st->nt; i++) {
        const struct perf_target *t = &st->t[i];
        int err;

        if (!t->used || (corun__pset_opened(t->ps) & CORUN_EV_BIT(ev)))
            continue;
        err = corun__pset_err(t->ps, ev);
        if (err) {
            corun__perf_event_reason(err, ev, &st->enc.ev[ev], &st->env, st->why[ev],
                                     sizeof(st->why[ev]));
            return st->why[ev];
        }
    }
    return NULL;
}

static void perf_close(void *state)
{
    struct perf_state *st = state;

    if (!st)
        return;
    for (unsigned i = 0; i < st->nt; i++)
        if (st->t[i].used)
            perf_detach(st, (int)i);
    free(st->t);
    close(st->rootfd);
    free(st);
}

const struct corun_sense_ops corun_sense_perf = {
    .name = "perf",
    .probe = perf_probe,
    .open = perf_open,
    .attach = perf_attach,
    .read = perf_read,
    .detach = perf_detach,
    .why_missing = perf_why_missing,
    .close = perf_close,
};
