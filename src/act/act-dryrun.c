/*
 * act-dryrun.c — the actuator that changes nothing: it says (at
 * CORUN_LOG_INFO) what it would have done, so a user can see a policy's
 * decisions on live processes before trusting it with them. It keeps no
 * journal, since nothing needs restoring.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "corun/act.h"

struct dry {
    unsigned n, cap;
    pid_t *pids; /* what it "changed", for restore_all's report */
};

static int dry_probe(const struct corun_act_opts *opts, char *why, size_t len)
{
    return 0;
}

static int dry_open(const struct corun_act_opts *opts, void **state)
{
    struct dry *d = calloc(1, sizeof(*d));

    if (!d)
        return -ENOMEM;
    *state = d;
    return 0;
}

static int dry_apply(void *state, pid_t target, const struct corun_cpuset *cpus)
{
    struct dry *d = state;
    char list[256];
    bool known = false;

    if (!cpus || corun_cpuset_count(cpus) == 0)
        return -EINVAL;
    corun_cpuset_format(cpus, list, sizeof(list));
    corun__info("dryrun: would place pid %d on CPUs %s", (int)target, list);
    for (unsigned i = 0; i < d->n; i++)
        known |= d->pids[i] == target;
    if (!known) {
        if (d->n == d->cap) {
            unsigned cap = d->cap ? 2 * d->cap : 8;
            pid_t *p = realloc(d->pids, cap * sizeof(*p));

            if (!p)
                return -ENOMEM;
            d->pids = p;
            d->cap = cap;
        }
        d->pids[d->n++] = target;
    }
    return 0;
}

static int dry_restore(void *state, pid_t target)
{
    struct dry *d = state;

    for (unsigned i = 0; i < d->n; i++) {
        if (d->pids[i] != target)
            continue;
        corun__info("dryrun: would restore pid %d", (int)target);
        d->pids[i] = d->pids[--d->n];
        break;
    }
    return 0;
}

static int dry_restore_all(void *state)
{
    struct dry *d = state;

    while (d->n)
        dry_restore(d, d->pids[d->n - 1]);
    return 0;
}

static void dry_close(void *state)
{
    struct dry *d = state;

    if (d)
        free(d->pids);
    free(d);
}

static int dry_move_memory(void *state, pid_t target, int node)
{
    (void)state;
    corun__info("dryrun: would move the memory of pid %d to node %d", (int)target, node);
    return 0;
}

const struct corun_act_ops corun_act_dryrun = {
    .name = "dryrun",
    .probe = dry_probe,
    .open = dry_open,
    .apply = dry_apply,
    .restore = dry_restore,
    .restore_all = dry_restore_all,
    .close = dry_close,
    .move_memory = dry_move_memory,
};
