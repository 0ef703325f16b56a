/*
 * act-affinity.c — the affinity actuator: sched_setaffinity on every thread
 * of a process.
 *
 * The first apply to a PID that changes anything opens a pidfd on it and
 * journals the original affinity of every thread (keyed by PID and start
 * time; a process already exactly there is left alone, unjournaled); each apply walks
 * /proc/PID/task again, so threads born since are placed too. Every call is
 * preceded by a liveness check of the pidfd: while the process we opened is
 * alive its PID cannot name another process, so a recycled PID is never
 * touched. (A thread ID could in theory be recycled between the listing and
 * the call if that thread exits and the PID space wraps in between; we accept
 * that window of microseconds.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act/act-internal.h"
#include "common/internal.h"
#include "common/sys.h"

static int aff_probe(const struct corun_act_opts *opts, char *why, size_t len)
{
    struct corun_cpuset set = {0};
    int err = corun__mask_get(0, &set);

    corun_cpuset_release(&set);
    if (err)
        snprintf(why, len, "sched_getaffinity: %s", corun_strerror(err));
    return err;
}

static int aff_open(const struct corun_act_opts *opts, void **state)
{
    struct corun__act_base *b = calloc(1, sizeof(*b));
    int err;

    if (!b)
        return -ENOMEM;
    if ((err = corun__act_base_init(b, opts))) {
        free(b);
        return err;
    }
    *state = b;
    return 0;
}

static int aff_apply(void *state, pid_t target, const struct corun_cpuset *cpus)
{
    struct corun__act_base *b = state;
    struct corun__act_proc *p = corun__act_find(b, target);
    int err;

    if (!cpus || corun_cpuset_count(cpus) == 0)
        return -EINVAL;
    /* Already where it should be (a child that inherited its parent's
     * placement): nothing changes, so nothing is journaled either. */
    if (!p && corun__threads_all_on(b->rootfd, target, cpus))
        return 0;
    if (!p && (err = corun__act_track(b, target, "affinity", cpus, NULL, NULL, &p)))
        return err;
    if (!corun__pidfd_alive(p->pidfd))
        return -ESRCH;
    if ((err = corun__act_note_applied(b, p, cpus)))
        return err;
    err = corun__set_all_threads(b->rootfd, p, cpus);
    if (!err)
        err = corun_cpuset_copy(&p->cur, cpus);
    return err;
}

/* Restores @p and forgets it. 0 when restored, gone, or left to its owner
 * (threads its owner pinned since are not undone). */
static int restore_proc(struct corun__act_base *b, struct corun__act_proc *p)
{
    struct corun__restore_count n = {0};
    int err = 0;

    if (corun__pidfd_alive(p->pidfd)) {
        err = corun__restore_threads(b->rootfd, &p->orig, NULL, &n);
        if (err == -ESRCH || !corun__pidfd_alive(p->pidfd))
            err = 0; /* it exited meanwhile: nothing is left to put back */
    }
    if (!err && n.kept) {
        char what[160];

        corun__restore_words(&n, "affinity", what, sizeof(what));
        corun__info("affinity: pid %d (%s): %s", (int)p->pid, p->orig.comm, what);
    }
    if (err) {
        corun__warn("affinity: restoring pid %d (%s): %s", (int)p->pid, p->orig.comm,
                    corun_strerror(err));
        return err; /* keep the journal entry for `corun restore` */
    }
    if (b->journal_dir)
        corun_journal_remove(b->journal_dir, p->pid, p->orig.start_time);
    corun__act_forget(b, p);
    return 0;
}

static int aff_restore(void *state, pid_t target)
{
    struct corun__act_base *b = state;
    struct corun__act_proc *p = corun__act_find(b, target);

    return p ? restore_proc(b, p) : 0;
}

static int aff_restore_all(void *state)
{
    struct corun__act_base *b = state;
    int first = 0;

    for (unsigned i = b->nprocs; i-- > 0;) {
        int err = restore_proc(b, &b->procs[i]);

        if (err && !first)
            first = err;
    }
    return first;
}

static void aff_close(void *state)
{
    struct corun__act_base *b = state;

    if (!b)
        return;
    corun__act_base_release(b);
    free(b);
}

static int aff_move_memory(void *state, pid_t target, int node)
{
    return corun__act_move_memory(state, target, node, NULL);
}

const struct corun_act_ops corun_act_affinity = {
    .name = "affinity",
    .probe = aff_probe,
    .open = aff_open,
    .apply = aff_apply,
    .restore = aff_restore,
    .restore_all = aff_restore_all,
    .close = aff_close,
    .move_memory = aff_move_memory,
};

const struct corun_act_ops *corun_act_find(const char *name)
{
    static const struct corun_act_ops *const all[] = {&corun_act_affinity, &corun_act_cpuset,
                                                      &corun_act_dryrun};

    for (size_t i = 0; i < CORUN_ARRAY_SIZE(all); i++)
        if (name && !strcmp(all[i]->name, name))
            return all[i];
    return NULL;
}
