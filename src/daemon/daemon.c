/*
 * daemon.c — the daemon's life cycle and what it tells and takes over the
 * control socket: opening the parts (after reconciling a crashed run's
 * journal), the status each caller may see, the settings an administrator
 * may change, and restoring everything at the end.
 *
 * Who sees what is decided here with corun_ctl_may_see(): the processes and
 * migrations of other users are left out of a non-administrator's status, and
 * only counted ("hidden"), so that a user learns nothing about others'
 * programs beyond their number.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/internal.h"
#include "daemon/daemon-internal.h"

int corun__daemon_os_cpu(const struct corun_daemon *d, int dense)
{
    if (dense < 0 || !d->topo || (unsigned)dense >= corun_topo_ncpus(d->topo))
        return -1;
    return (int)corun_topo_cpu(d->topo, (unsigned)dense)->os_index;
}

void corun__daemon_forget(struct corun_daemon *d, size_t i)
{
    struct managed *m = &d->procs[i];

    if (d->eng && m->eidx >= 0)
        corun_engine_remove(d->eng, (unsigned)m->eidx);
    corun_cpuset_release(&m->mask);
    memmove(m, m + 1, (d->nprocs - i - 1) * sizeof(*m));
    d->nprocs--;
}

int corun__daemon_release(struct corun_daemon *d, struct managed *m, bool gives_back)
{
    int err = 0;

    /* The engine restores what it pinned as it lets the process go. */
    if (d->eng && m->eidx >= 0) {
        err = corun_engine_remove(d->eng, (unsigned)m->eidx);
        m->eidx = -1;
        if (m->placed >= 0 && !err && gives_back)
            d->restores_total++;
    }
    m->placed = -1;
    return err;
}

void corun__daemon_record(struct corun_daemon *d, const struct managed *m, int from, int to,
                          int err, const char *why)
{
    struct migration *r;
    struct timespec ts;

    if (!d->cfg.history || !d->hist)
        return;
    r = &d->hist[d->hist_next];
    d->hist_next = (d->hist_next + 1) % d->cfg.history;
    if (d->nhist < d->cfg.history)
        d->nhist++;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->t_unix = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    r->pid = m->pid;
    r->uid = m->uid;
    memcpy(r->comm, m->comm, sizeof(r->comm));
    r->from = from;
    r->to = to;
    r->err = err;
    snprintf(r->why, sizeof(r->why), "%s", why);
    corun__info("daemon: %d (%s) cpu %d -> %d: %s%s%s", (int)m->pid, m->comm, from, to, why,
                err ? ": " : "", err ? corun_strerror(err) : "");
}

/* procsel's question: is the mask of this process the one we set? If not,
 * and we had placed it, its owner has taken over: narrowed it to other CPUs
 * (then it is pinned, and the scan leaves it out) or widened it again (then
 * it is selected, and merge() in daemon-loop.c lets it go). */
static bool is_ours(void *user, pid_t pid, uint64_t start_ticks, const struct corun_cpuset *allowed)
{
    struct corun_daemon *d = user;
    size_t lo = 0, hi = d->nprocs;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (d->procs[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= d->nprocs || d->procs[lo].pid != pid || d->procs[lo].start_ticks != start_ticks ||
        d->procs[lo].placed < 0)
        return false;
    if (corun_cpuset_equal(&d->procs[lo].mask, allowed))
        return true;
    d->procs[lo].owner_took_over = true;
    return false;
}

/* One journal entry replayed at start-up, in the log. */
static void reconciled(void *user, const struct corun_restore_result *r)
{
    const struct corun_journal_entry *e = r->entry;

    (void)user;
    if (!e)
        corun__warn("daemon: journal %s: %s: %s", r->file, r->what, corun_strerror(r->err));
    else if (r->err && r->err != -ESRCH && r->err != -EBUSY)
        corun__warn("daemon: journal: pid %d (%s): %s: %s", (int)e->pid, e->comm, r->what,
                    corun_strerror(r->err));
    else
        corun__info("daemon: journal: pid %d (%s): %s", (int)e->pid, e->comm, r->what);
}

/* Opens the actuator; with a journal, first replays what a crashed run left,
 * by the same path as `corun restore` (corun_act_restore_journal): every
 * entry whose writer is dead is put back, or dropped when its process is
 * gone or its owner pinned it since. Entries of a corun still running (a
 * batch sharing /run/corun) are theirs and stay. */
static int open_actuator(struct corun_daemon *d)
{
    struct corun_act_opts ao = {.journal_dir = d->cfg.journal_dir, .root = d->cfg.root};
    int err;

    if (ao.journal_dir) {
        err = corun_act_restore_journal(&ao, reconciled, d);
        if (err)
            corun__warn("daemon: restoring a previous run's journal in %s: %s", ao.journal_dir,
                        corun_strerror(err));
    }
    return d->act->open(&ao, &d->act_state);
}

/* The selector options of @c, for corun_procsel_open(). */
static void sel_opts(struct corun_daemon *d, const struct corun_daemon_config *c,
                     struct corun_procsel_opts *so)
{
    memset(so, 0, sizeof(*so));
    so->root = c->root;
    so->comms = (const char *const *)c->comms;
    so->ncomms = c->ncomms;
    so->uids = c->uids;
    so->nuids = c->nuids;
    so->cgroups = (const char *const *)c->cgroups;
    so->ncgroups = c->ncgroups;
    so->min_cpu_percent = c->min_cpu_percent;
    so->include_pinned = c->include_pinned;
    so->self = getpid();
    so->is_ours = is_ours;
    so->user = d;
}

int corun_daemon_open(const struct corun_daemon_config *cfg, const struct corun_daemon_parts *parts,
                      struct corun_daemon **out)
{
    struct corun_procsel_opts so = {0};
    struct corun_daemon *d;
    int err;

    if (!cfg || !parts || !out)
        return -EINVAL;
    *out = NULL;
    d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    err = corun__daemon_config_copy(&d->cfg, cfg);
    if (err)
        goto out_free;
    /* With no rule at all the daemon looks after busy user processes, as
     * numad does, rather than after nothing. */
    if (!d->cfg.ncomms && !d->cfg.nuids && !d->cfg.ncgroups && d->cfg.min_cpu_percent <= 0)
        d->cfg.min_cpu_percent = 5;
    d->hist = calloc(d->cfg.history ? d->cfg.history : 1, sizeof(*d->hist));
    if (!d->hist) {
        err = -ENOMEM;
        goto out_config;
    }
    sel_opts(d, &d->cfg, &so);
    err = corun_procsel_open(&so, &d->sel);
    if (err)
        goto out_hist;
    d->topo = parts->topo;
    d->policy = parts->policy;
    d->turbo_n = parts->turbo_n < CORUN_DAEMON_TURBO_MAX ? parts->turbo_n : CORUN_DAEMON_TURBO_MAX;
    memcpy(d->turbo_rel, parts->turbo_rel, d->turbo_n * sizeof(d->turbo_rel[0]));
    snprintf(d->sensor_why, sizeof(d->sensor_why), "%s",
             parts->sensor_why[0] ? parts->sensor_why : "no sensor given");
    if (parts->sense) {
        /* Only what the profile uses: every preset more is a descriptor per
         * process, and the per-thread /proc reads are the dearest. */
        struct corun_sense_opts o = {
            .root = d->cfg.root,
            .events = CORUN_EV_BIT(CORUN_EV_CYCLES) | CORUN_EV_BIT(CORUN_EV_INSTRUCTIONS) |
                      CORUN_EV_BIT(CORUN_EV_REF_CYCLES) | CORUN_EV_BIT(CORUN_EV_LLC_REFERENCES) |
                      CORUN_EV_BIT(CORUN_EV_LLC_MISSES) | CORUN_EV_BIT(CORUN_EV_TASK_CLOCK_NS),
        };

        d->sense = parts->sense;
        if (d->sense->open(&o, &d->sense_state) != 0) {
            corun__warn("daemon: %s sensor would not open; CPU use only", d->sense->name);
            snprintf(d->sensor_why, sizeof(d->sensor_why), "%s sensor would not open",
                     d->sense->name);
            d->sense = NULL;
            d->sense_state = NULL;
        }
    }
    if (parts->observe_only_why)
        snprintf(d->observe_why, sizeof(d->observe_why), "%s", parts->observe_only_why);
    else if (!parts->policy || !parts->act || !parts->topo)
        snprintf(d->observe_why, sizeof(d->observe_why), "%s",
                 !parts->policy ? "no policy"
                 : !parts->act  ? "no actuator"
                                : "no topology");
    if (parts->act) {
        d->act = parts->act;
        err = open_actuator(d);
        if (err) {
            snprintf(d->observe_why, sizeof(d->observe_why), "%s actuator: %s", d->act->name,
                     corun_strerror(err));
            d->act = NULL;
            d->act_state = NULL;
        }
    }
    err = corun__daemon_engine_open(d);
    if (err)
        goto out_parts;
    d->started_ns = corun__now_ns();
    *out = d;
    return 0;

out_parts:
    if (d->act)
        d->act->close(d->act_state);
    if (d->sense)
        d->sense->close(d->sense_state);
    corun_procsel_close(d->sel);

out_hist:
    free(d->hist);
out_config:
    corun_daemon_config_release(&d->cfg);
out_free:
    free(d);
    return err;
}

/* Keeps the running value of a setting that needs a restart, and names it
 * in @why when the new configuration asked for another. */
static int keep_str(char **dst, const char *run, const char *name, char *why, size_t len)
{
    if ((*dst && run && !strcmp(*dst, run)) || (!*dst && !run))
        return 0;
    free(*dst);
    *dst = run ? strdup(run) : NULL;
    if (run && !*dst)
        return -ENOMEM;
    snprintf(why + strlen(why), len - strlen(why), "%s%s", why[0] ? ", " : "", name);
    return 0;
}

int corun_daemon_reload(struct corun_daemon *d, const struct corun_daemon_config *cfg, char *why,
                        size_t len)
{
    const struct corun_policy *pol;
    struct corun_procsel_opts so;
    struct corun_daemon_config nc;
    struct corun_procsel *sel;
    int err;

    why[0] = '\0';
    pol = corun_policy_find(cfg->policy);
    if (!pol) {
        snprintf(why, len, "unknown policy '%s'", cfg->policy);
        return -EINVAL;
    }
    err = corun__daemon_config_copy(&nc, cfg);
    if (err)
        return err;
    if (!nc.ncomms && !nc.nuids && !nc.ncgroups && nc.min_cpu_percent <= 0)
        nc.min_cpu_percent = 5; /* as corun_daemon_open() */
    /* What the running parts were built from stays. */
    if ((err = keep_str(&nc.actuator, d->cfg.actuator, "actuator", why, len)) ||
        (err = keep_str(&nc.sensor, d->cfg.sensor, "sensor", why, len)) ||
        (err = keep_str(&nc.socket_path, d->cfg.socket_path, "socket", why, len)) ||
        (err = keep_str(&nc.metrics_path, d->cfg.metrics_path, "metrics", why, len)) ||
        (err = keep_str(&nc.journal_dir, d->cfg.journal_dir, "journal_dir", why, len)) ||
        (err = keep_str(&nc.root, d->cfg.root, "root", why, len)))
        goto out_nc;
    if (nc.has_admin_gid != d->cfg.has_admin_gid ||
        (nc.has_admin_gid && nc.admin_gid != d->cfg.admin_gid)) {
        nc.has_admin_gid = d->cfg.has_admin_gid;
        nc.admin_gid = d->cfg.admin_gid;
        snprintf(why + strlen(why), len - strlen(why), "%sadmin_group", why[0] ? ", " : "");
    }
    if (nc.history != d->cfg.history) {
        nc.history = d->cfg.history;
        snprintf(why + strlen(why), len - strlen(why), "%shistory", why[0] ? ", " : "");
    }
    sel_opts(d, &nc, &so);
    err = corun_procsel_open(&so, &sel);
    if (err)
        goto out_nc;
    corun_procsel_close(d->sel);
    d->sel = sel;
    corun_daemon_config_release(&d->cfg);
    d->cfg = nc;
    d->policy = pol;
    corun__daemon_retune(d);
    corun__info("daemon: configuration reloaded (policy %s, interval %g s)%s%s", pol->name,
                d->cfg.interval_s, why[0] ? "; needs a restart to change: " : "", why);
    return 0;

out_nc:
    corun_daemon_config_release(&nc);
    return err;
}

int corun_daemon_restore_all(struct corun_daemon *d)
{
    int err;

    if (!d || !d->act)
        return 0;
    /* Through the engine, which forgets its pins too. */
    err = d->eng ? corun_engine_restore(d->eng) : d->act->restore_all(d->act_state);
    for (size_t i = 0; i < d->nprocs; i++) {
        d->procs[i].placed = -1;
        corun_cpuset_release(&d->procs[i].mask);
    }
    return err;
}

void corun_daemon_close(struct corun_daemon *d)
{
    if (!d)
        return;
    while (d->nprocs)
        corun__daemon_forget(d, d->nprocs - 1);
    free(d->procs);
    corun_engine_free(d->eng);
    if (d->act)
        d->act->close(d->act_state);
    if (d->sense)
        d->sense->close(d->sense_state);
    corun_procsel_close(d->sel);
    free(d->hist);
    corun_daemon_config_release(&d->cfg);
    free(d);
}

bool corun_daemon_observe_only(const struct corun_daemon *d, const char **why)
{
    if (why)
        *why = d->observe_why[0] ? d->observe_why : NULL;
    return d->observe_why[0] != '\0';
}

uint64_t corun_daemon_interval_ns(const struct corun_daemon *d)
{
    return (uint64_t)(d->cfg.interval_s * 1e9);
}

void corun_daemon_ctl_access(const struct corun_daemon *d, struct corun_ctl_access *acc)
{
    acc->has_admin_gid = d->cfg.has_admin_gid;
    acc->admin_gid = d->cfg.admin_gid;
}

/* ---- status ------------------------------------------------------------------ */

static void kv_num(struct corun_ctl_buf *b, const char *key, double v, bool comma)
{
    corun_ctl_buf_printf(b, "\"%s\": ", key);
    corun_ctl_buf_jnum(b, v);
    if (comma)
        corun_ctl_buf_printf(b, ", ");
}

static void kv_str(struct corun_ctl_buf *b, const char *key, const char *v, bool comma)
{
    corun_ctl_buf_printf(b, "\"%s\": ", key);
    corun_ctl_buf_jstr(b, v);
    if (comma)
        corun_ctl_buf_printf(b, ", ");
}

static void status_process(const struct corun_daemon *d, const struct managed *m,
                           struct corun_ctl_buf *b)
{
    const struct corun_task_profile *p = &m->prof;

    corun_ctl_buf_printf(b, "{");
    kv_num(b, "pid", m->pid, true);
    kv_str(b, "comm", m->comm, true);
    kv_num(b, "uid", m->uid == (uid_t)-1 ? NAN : m->uid, true);
    kv_num(b, "threads", m->nthreads, true);
    kv_str(b, "class", corun_class_name(p->cls), true);
    kv_num(b, "cpu_percent", m->cpu_percent, true);
    /* CPUs its threads asked for (ran or waited), over the last interval
     * it was read: busy or placed processes only; null otherwise. */
    kv_num(b, "cpus_wanted", m->cpus_wanted, true);
    kv_num(b, "ipc", p->ipc, true);
    kv_num(b, "llc_mpki", p->llc_mpki, true);
    kv_num(b, "freq_ratio", p->freq_ratio, true);
    kv_num(b, "placed_cpu", m->placed >= 0 ? corun__daemon_os_cpu(d, m->placed) : NAN, true);
    kv_str(b, "why", m->why[0] ? m->why : "left to the kernel: no move planned", true);
    /* The policy's model behind the plan: speed 1 is the process alone on a
     * fastest CPU; null for idle processes, which are not placed. */
    if (isnan(m->speed_now)) {
        kv_str(b, "prediction", NULL, false);
    } else {
        corun_ctl_buf_printf(b, "\"prediction\": {");
        kv_num(b, "speed_now", m->speed_now, true);
        kv_num(b, "speed_planned", m->speed_planned, false);
        corun_ctl_buf_printf(b, "}");
    }
    corun_ctl_buf_printf(b, "}");
}

/* "counters_missing": each counter the profile uses that this machine does
 * not give, with the sensor's reason; every one of them without a sensor. */
static void counters_missing(const struct corun_daemon *d, struct corun_ctl_buf *b)
{
    static const enum corun_event used[] = {CORUN_EV_INSTRUCTIONS, CORUN_EV_CYCLES,
                                            CORUN_EV_REF_CYCLES,   CORUN_EV_LLC_REFERENCES,
                                            CORUN_EV_LLC_MISSES,   CORUN_EV_TASK_CLOCK_NS};
    bool first = true;

    corun_ctl_buf_printf(b, "\"counters_missing\": {");
    for (size_t i = 0; i < CORUN_ARRAY_SIZE(used); i++) {
        const char *why = !d->sense               ? d->sensor_why
                          : d->sense->why_missing ? d->sense->why_missing(d->sense_state, used[i])
                                                  : NULL;

        if (!why)
            continue;
        corun_ctl_buf_printf(b, "%s\"%s\": ", first ? "" : ", ", corun_event_name(used[i]));
        corun_ctl_buf_jstr(b, why);
        first = false;
    }
    corun_ctl_buf_printf(b, "}");
}

static void status(struct corun_daemon *d, const struct corun_ctl_peer *peer,
                   struct corun_ctl_buf *b)
{
    unsigned hidden = 0;
    bool first = true;

    corun_ctl_buf_printf(b, "{\"ok\": true, \"daemon\": {");
    kv_num(b, "pid", getpid(), true);
    kv_str(b, "version", corun_version(), true);
    kv_str(b, "mode", d->observe_why[0] ? "observe-only" : d->paused ? "paused" : "placing", true);
    kv_str(b, "observe_only_why", d->observe_why[0] ? d->observe_why : NULL, true);
    kv_str(b, "policy", d->policy ? d->policy->name : d->cfg.policy, true);
    kv_str(b, "actuator", d->act ? d->act->name : NULL, true);
    kv_str(b, "sensor", d->sense ? d->sense->name : NULL, true);
    kv_num(b, "interval_s", d->cfg.interval_s, true);
    kv_num(b, "max_migrations", d->cfg.max_migrations, true);
    kv_num(b, "ticks", (double)d->ticks, true);
    kv_num(b, "uptime_s", (double)(corun__now_ns() - d->started_ns) / 1e9, true);
    kv_num(b, "managed", (double)d->nprocs, true);
    kv_num(b, "migrations_total", (double)d->migrations_total, true);
    kv_num(b, "restores_total", (double)d->restores_total, true);
    kv_num(b, "mem_moves_total", (double)d->mem_moves_total, true);
    {
        struct corun_engine_stats st = {0};

        if (d->eng)
            corun_engine_stats(d->eng, &st);
        kv_num(b, "changes_judged_total", (double)st.trials, true);
        kv_num(b, "changes_taken_back_total", (double)st.reverted, true);
        kv_num(b, "changes_doubted_total", (double)st.doubted, true);
    }
    kv_num(b, "errors_esrch", (double)d->err_esrch, true);
    kv_num(b, "errors_eperm", (double)d->err_eperm, true);
    kv_num(b, "tick_cpu_ms", (double)d->tick_cost_ns / 1e6, true);
    counters_missing(d, b);
    corun_ctl_buf_printf(b, "}, \"you\": {");
    kv_num(b, "uid", peer->uid, true);
    corun_ctl_buf_printf(b, "\"admin\": %s}, \"processes\": [", peer->admin ? "true" : "false");
    for (size_t i = 0; i < d->nprocs; i++) {
        if (!corun_ctl_may_see(peer, d->procs[i].uid)) {
            hidden++;
            continue;
        }
        if (!first)
            corun_ctl_buf_printf(b, ", ");
        first = false;
        status_process(d, &d->procs[i], b);
    }
    corun_ctl_buf_printf(b, "], \"hidden\": %u, \"migrations\": [", hidden);
    first = true;
    for (size_t k = 0; k < d->nhist; k++) {
        /* oldest first */
        size_t idx = (d->hist_next + d->cfg.history - d->nhist + k) % d->cfg.history;
        const struct migration *r = &d->hist[idx];

        if (!corun_ctl_may_see(peer, r->uid))
            continue;
        corun_ctl_buf_printf(b, "%s{", first ? "" : ", ");
        first = false;
        kv_num(b, "t", r->t_unix, true);
        kv_num(b, "pid", r->pid, true);
        kv_str(b, "comm", r->comm, true);
        kv_num(b, "from", r->from >= 0 ? r->from : NAN, true);
        kv_num(b, "to", r->to >= 0 ? r->to : NAN, true);
        kv_str(b, "error", r->err ? corun_strerror(r->err) : NULL, true);
        kv_str(b, "why", r->why, false);
        corun_ctl_buf_printf(b, "}");
    }
    corun_ctl_buf_printf(b, "]}");
}

/* ---- changes ------------------------------------------------------------------ */

/* A failed request, and why; @input: the request itself caused it (a
 * setting or value the daemon does not take, a pid it does not manage),
 * and corun status exits 2 for it as for any input error. */
static void answer_error(struct corun_ctl_buf *b, const char *why, bool input)
{
    corun_ctl_buf_printf(b, "{\"ok\": false, %s\"error\": ", input ? "\"input\": true, " : "");
    corun_ctl_buf_jstr(b, why);
    corun_ctl_buf_printf(b, "}");
}

static void fail(struct corun_ctl_buf *b, const char *why)
{
    answer_error(b, why, false);
}

static void refuse(struct corun_ctl_buf *b, const char *why)
{
    answer_error(b, why, true);
}

static void set(struct corun_daemon *d, const struct corun_ctl_request *req,
                struct corun_ctl_buf *b)
{
    static const char *const keys[] = {"interval", "policy", "max_migrations", "min_dwell",
                                       "confirm"};
    char why[200];
    bool known = false;

    for (size_t i = 0; i < CORUN_ARRAY_SIZE(keys); i++)
        known |= !strcmp(req->key, keys[i]);
    if (!known) {
        snprintf(why, sizeof(why),
                 "'%s' cannot be changed while running (interval, policy, max_migrations, "
                 "min_dwell, confirm can)",
                 req->key);
        refuse(b, why);
        return;
    }
    if (!strcmp(req->key, "policy")) {
        const struct corun_policy *p = corun_policy_find(req->value);

        if (!p) {
            snprintf(why, sizeof(why), "no policy '%.100s' in this build", req->value);
            refuse(b, why);
            return;
        }
        d->policy = p;
    }
    if (corun_daemon_config_set(&d->cfg, "daemon", req->key, req->value, why, sizeof(why))) {
        refuse(b, why);
        return;
    }
    corun__daemon_retune(d);
    corun__info("daemon: %s set to %s", req->key, req->value);
    corun_ctl_buf_printf(b, "{\"ok\": true}");
}

static void release_pid(struct corun_daemon *d, long long pid, struct corun_ctl_buf *b)
{
    for (size_t i = 0; i < d->nprocs; i++) {
        struct managed *m = &d->procs[i];
        int err;

        if (m->pid != pid)
            continue;
        err = corun__daemon_release(d, m, !m->owner_took_over);
        /* Marked rather than forgotten: the next scan would select it again. */
        m->denied = true;
        snprintf(m->why, sizeof(m->why), "released by an administrator");
        corun__daemon_record(d, m, m->last_cpu, -1, err, "released by an administrator");
        if (err && err != -ESRCH) {
            fail(b, corun_strerror(err));
            return;
        }
        corun_ctl_buf_printf(b, "{\"ok\": true}");
        return;
    }
    refuse(b, "not a managed process");
}

void corun_daemon_ctl(void *user, const struct corun_ctl_peer *peer,
                      const struct corun_ctl_request *req, struct corun_ctl_buf *resp)
{
    struct corun_daemon *d = user;

    /* corun_ctl_serve() has already refused changes to non-administrators;
     * check again so that a handler called another way cannot be misused. */
    if (!corun_ctl_may(peer, req->verb)) {
        fail(resp, "permission denied");
        return;
    }
    switch (req->verb) {
    case CORUN_CTL_STATUS:
        status(d, peer, resp);
        break;
    case CORUN_CTL_SET:
        set(d, req, resp);
        break;
    case CORUN_CTL_PAUSE:
    case CORUN_CTL_RESUME:
        d->paused = req->verb == CORUN_CTL_PAUSE;
        corun_ctl_buf_printf(resp, "{\"ok\": true, \"paused\": %s}", d->paused ? "true" : "false");
        break;
    case CORUN_CTL_RELEASE:
        release_pid(d, req->pid, resp);
        break;
    }
}
