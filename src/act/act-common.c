/*
 * act-common.c — the parts of the affinity and cpuset actuators that are the
 * same: CPU masks at the kernel boundary, walking a process's threads,
 * pidfd guards against PID reuse, and the record of each changed process
 * with its journal entry.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act/act-internal.h"
#include "common/internal.h"
#include "common/sys.h"

/* The kernel refuses masks smaller than its nr_cpu_ids; start at 1024 bits
 * and double on EINVAL, so machines with more CPUs are handled. */
#define MASK_START_BITS 1024u
#define MASK_MAX_BITS   (1u << 20)

int corun__mask_get(pid_t tid, struct corun_cpuset *set)
{
    for (unsigned bits = MASK_START_BITS; bits <= MASK_MAX_BITS; bits *= 2) {
        size_t size = CPU_ALLOC_SIZE(bits);
        cpu_set_t *m = CPU_ALLOC(bits);
        int err = 0;

        if (!m)
            return -ENOMEM;
        CPU_ZERO_S(size, m);
        if (corun__sys.sched_getaffinity(tid, size, m) < 0) {
            err = -errno;
            CPU_FREE(m);
            if (err == -EINVAL)
                continue;
            return err;
        }
        err = corun_cpuset_reserve(set, bits);
        if (!err) {
            corun_cpuset_zero(set);
            for (unsigned c = 0; c < bits && !err; c++)
                if (CPU_ISSET_S(c, size, m))
                    err = corun_cpuset_set(set, c);
        }
        CPU_FREE(m);
        return err;
    }
    return -EINVAL;
}

int corun__mask_set(pid_t tid, const struct corun_cpuset *set)
{
    int last = corun_cpuset_next(set, 0), err = 0;
    unsigned bits;
    size_t size;
    cpu_set_t *m;

    if (last < 0)
        return -EINVAL;
    for (int c = last; c >= 0; c = corun_cpuset_next(set, (unsigned)c + 1))
        last = c;
    bits = (unsigned)last + 1 > MASK_START_BITS ? (unsigned)last + 1 : MASK_START_BITS;
    size = CPU_ALLOC_SIZE(bits);
    m = CPU_ALLOC(bits);
    if (!m)
        return -ENOMEM;
    CPU_ZERO_S(size, m);
    for (int c = corun_cpuset_next(set, 0); c >= 0; c = corun_cpuset_next(set, (unsigned)c + 1))
        CPU_SET_S((unsigned)c, size, m);
    if (corun__sys.sched_setaffinity(tid, size, m) < 0)
        err = -errno;
    CPU_FREE(m);
    return err;
}

bool corun__pidfd_alive(int pidfd)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};

    /* A pidfd becomes readable when its process exits (zombie or reaped). */
    return poll(&p, 1, 0) == 0;
}

int corun__for_each_thread(int rootfd, pid_t pid, int (*fn)(void *ctx, pid_t tid), void *ctx)
{
    char path[64];
    struct dirent *d;
    DIR *dir;
    int fd, ret = 0;

    snprintf(path, sizeof(path), "proc/%d/task", (int)pid);
    fd = corun__root_openat(rootfd, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return fd == -ENOENT ? -ESRCH : fd;
    dir = fdopendir(fd);
    if (!dir) {
        ret = -errno;
        close(fd);
        return ret;
    }
    while ((d = readdir(dir))) {
        char *end;
        long tid = strtol(d->d_name, &end, 10);

        if (d->d_name[0] < '0' || d->d_name[0] > '9' || *end)
            continue;
        ret = fn(ctx, (pid_t)tid);
        if (ret)
            break;
    }
    closedir(dir);
    return ret;
}

/* ---- setting every thread --------------------------------------------------- */

struct set_ctx {
    const struct corun_cpuset *cpus;
    const struct corun_journal_entry *orig; /* restore: per-thread masks */
    const struct corun_journal_entry *now;  /* restore: masks before a cgroup move */
    struct corun__restore_count *count;
    struct corun__act_proc *was; /* apply: what corun set before */
    struct corun_cpuset tmp;
    pid_t *done;
    unsigned ndone, cap, nset, nkept;
    bool new_seen;
    int err;
};

static bool seen(struct set_ctx *c, pid_t tid)
{
    for (unsigned i = 0; i < c->ndone; i++)
        if (c->done[i] == tid)
            return true;
    return false;
}

static const struct corun_cpuset *mask_for(struct set_ctx *c, pid_t tid)
{
    if (!c->orig)
        return c->cpus;
    for (unsigned i = 0; i < c->orig->nthreads; i++)
        if (c->orig->threads[i].tid == tid)
            return &c->orig->threads[i].cpus;
    return &c->orig->cpus;
}

/* The mask of thread @tid when it is no longer the one corun applied (its
 * owner's), else NULL; *@err -ESRCH when the thread is gone. */
static const struct corun_cpuset *owner_mask(struct set_ctx *c, pid_t tid, int *err)
{
    *err = 0;
    if (c->now) {
        for (unsigned i = 0; i < c->now->nthreads; i++)
            if (c->now->threads[i].tid == tid)
                return corun_cpuset_equal(&c->now->threads[i].cpus, &c->orig->applied)
                           ? NULL
                           : &c->now->threads[i].cpus;
        return NULL; /* born after the capture, in corun's cgroup: corun's */
    }
    *err = corun__mask_get(tid, &c->tmp);
    if (*err)
        return NULL; /* unreadable: restore it, as format 1 would */
    return corun_cpuset_equal(&c->tmp, &c->orig->applied) ? NULL : &c->tmp;
}

/* Apply: whether thread @tid, which corun put on its process's mask, has
 * been given another by its owner since (-ESRCH in *@err when gone). */
static bool owner_moved(struct set_ctx *c, pid_t tid, int *err)
{
    bool known = false;

    *err = 0;
    if (!c->was->cur.words)
        return false; /* the first apply: nothing of corun's to find */
    for (unsigned i = 0; i < c->was->ntids && !known; i++)
        known = c->was->tids[i] == tid;
    if (!known || (*err = corun__mask_get(tid, &c->tmp)))
        return false; /* born since, or unreadable: set it */
    return !corun_cpuset_equal(&c->tmp, &c->was->cur) && !corun_cpuset_equal(&c->tmp, c->cpus);
}

static int set_one(void *ctx, pid_t tid)
{
    struct set_ctx *c = ctx;
    int err;

    if (seen(c, tid))
        return 0;
    if (c->ndone == c->cap) {
        unsigned cap = c->cap ? c->cap * 2 : 16;
        pid_t *d = realloc(c->done, cap * sizeof(*d));

        if (!d)
            return -ENOMEM;
        c->done = d;
        c->cap = cap;
    }
    c->done[c->ndone++] = tid;
    c->new_seen = true;
    if (c->orig && c->orig->applied.words) {
        const struct corun_cpuset *cur = owner_mask(c, tid, &err);

        if (err == -ESRCH)
            return 0;
        if (cur) {
            /* Its owner pinned it after corun placed it: their choice stands
             * (set again only when a cgroup move has just reset it). */
            err = c->now ? corun__mask_set(tid, cur) : 0;
            if (!err) {
                c->nset++;
                if (c->count)
                    c->count->kept++;
            } else if (err != -ESRCH && !c->err) {
                c->err = err;
            }
            return 0;
        }
    }
    if (c->was) {
        if (owner_moved(c, tid, &err)) {
            c->nkept++; /* their choice stands: not corun's thread any more */
            return 0;
        }
        if (err == -ESRCH)
            return 0;
    }
    err = corun__mask_set(tid, mask_for(c, tid));
    if (!err) {
        c->nset++;
        if (c->count)
            c->count->restored++;
    }
    /* A thread exiting between the listing and the call is not a failure. */
    if (err && err != -ESRCH && !c->err)
        c->err = err;
    return 0;
}

static int set_threads(int rootfd, pid_t pid, struct set_ctx *c)
{
    int err = 0;

    /* Threads created while we walk inherit the mask of their creator, which
     * may not be set yet: walk again until a pass finds nothing new. */
    for (int pass = 0; pass < 64; pass++) {
        c->new_seen = false;
        err = corun__for_each_thread(rootfd, pid, set_one, c);
        if (err || !c->new_seen)
            break;
    }
    if (c->was && !err) {
        /* Every thread seen is corun's to know: those set, and those whose
         * owner has them, which stay theirs at the next apply. */
        free(c->was->tids);
        c->was->tids = c->done;
        c->was->ntids = c->ndone;
        c->done = NULL;
    }
    free(c->done);
    corun_cpuset_release(&c->tmp);
    if (err)
        return err;
    /* Its owner has every thread: nothing here is corun's to move. */
    if (!c->err && c->nkept && !c->nset)
        return -EBUSY;
    /* Every thread vanished under us: the process is gone. */
    if (!c->err && c->ndone && !c->nset)
        return -ESRCH;
    return c->err;
}

int corun__set_all_threads(int rootfd, struct corun__act_proc *p, const struct corun_cpuset *cpus)
{
    struct set_ctx c = {.cpus = cpus, .was = p};

    return set_threads(rootfd, p->pid, &c);
}

int corun__restore_threads(int rootfd, const struct corun_journal_entry *e,
                           const struct corun_journal_entry *now, struct corun__restore_count *n)
{
    struct set_ctx c = {.orig = e, .now = now, .count = n};

    return set_threads(rootfd, e->pid, &c);
}

void corun__restore_words(const struct corun__restore_count *n, const char *what, char *buf,
                          size_t len)
{
    if (n->moved_away)
        snprintf(buf, len, "left alone: no longer in corun's cgroup (its owner moved it)");
    else if (n->kept && !n->restored)
        snprintf(buf, len, "left alone: its owner changed its affinity since corun set it");
    else if (n->kept)
        snprintf(buf, len, "%s of %u threads restored; %u left as their owner pinned them", what,
                 n->restored, n->kept);
    else
        snprintf(buf, len, "%s of %u thread%s restored", what, n->restored,
                 n->restored == 1 ? "" : "s");
}

struct same_ctx {
    const struct corun_cpuset *cpus;
    struct corun_cpuset tmp;
};

static int differs(void *ctx, pid_t tid)
{
    struct same_ctx *c = ctx;
    int err = corun__mask_get(tid, &c->tmp);

    if (err == -ESRCH)
        return 0;
    if (err)
        return err;
    return corun_cpuset_equal(&c->tmp, c->cpus) ? 0 : 1;
}

bool corun__threads_all_on(int rootfd, pid_t pid, const struct corun_cpuset *cpus)
{
    struct same_ctx c = {.cpus = cpus};
    int ret = corun__for_each_thread(rootfd, pid, differs, &c);

    corun_cpuset_release(&c.tmp);
    return ret == 0;
}

/* ---- records of changed processes ------------------------------------------ */

int corun__act_base_init(struct corun__act_base *b, const struct corun_act_opts *opts)
{
    memset(b, 0, sizeof(*b));
    b->rootfd = corun__root_open(opts ? opts->root : NULL);
    if (b->rootfd < 0)
        return b->rootfd;
    if (opts && opts->journal_dir && !(b->journal_dir = strdup(opts->journal_dir)))
        goto out_nomem;
    if (opts && opts->root && !(b->root = strdup(opts->root)))
        goto out_nomem;
    return 0;

out_nomem:
    corun__act_base_release(b);
    return -ENOMEM;
}

void corun__act_base_release(struct corun__act_base *b)
{
    while (b->nprocs)
        corun__act_forget(b, &b->procs[b->nprocs - 1]);
    free(b->procs);
    free(b->journal_dir);
    free(b->root);
    if (b->rootfd >= 0)
        close(b->rootfd);
    memset(b, 0, sizeof(*b));
    b->rootfd = -1;
}

struct corun__act_proc *corun__act_find(struct corun__act_base *b, pid_t pid)
{
    for (unsigned i = 0; i < b->nprocs; i++)
        if (b->procs[i].pid == pid)
            return &b->procs[i];
    return NULL;
}

void corun__act_forget(struct corun__act_base *b, struct corun__act_proc *p)
{
    unsigned i = (unsigned)(p - b->procs);

    if (p->pidfd >= 0)
        close(p->pidfd);
    corun_journal_entry_release(&p->orig);
    corun_cpuset_release(&p->cur);
    free(p->tids);
    b->procs[i] = b->procs[--b->nprocs];
}

struct capture_ctx {
    struct corun_journal_entry *e;
};

static int capture_one(void *ctx, pid_t tid)
{
    struct corun_journal_entry *e = ((struct capture_ctx *)ctx)->e;
    struct corun_journal_thread *t;
    int err;

    t = realloc(e->threads, (e->nthreads + 1) * sizeof(*t));
    if (!t)
        return -ENOMEM;
    e->threads = t;
    t = &e->threads[e->nthreads];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    err = corun__mask_get(tid, &t->cpus);
    if (err == -ESRCH) {
        corun_cpuset_release(&t->cpus);
        return 0; /* it exited while we looked */
    }
    if (err) {
        corun_cpuset_release(&t->cpus);
        return err;
    }
    e->nthreads++;
    return 0;
}

int corun__capture_threads(int rootfd, pid_t pid, struct corun_journal_entry *snap)
{
    struct capture_ctx cc = {.e = snap};

    return corun__for_each_thread(rootfd, pid, capture_one, &cc);
}

static void read_comm(int rootfd, pid_t pid, char *buf, size_t len)
{
    char path[64];

    snprintf(path, sizeof(path), "proc/%d/comm", (int)pid);
    if (corun__read_text(rootfd, path, buf, len) < 0)
        snprintf(buf, len, "?");
    corun__rstrip(buf);
}

/*
 * If another instance (a batch, the daemon, a crashed run) already journaled
 * this very process, what it recorded is the true original: what we see now
 * is its placement. Take that record instead of overwriting it. Returns true
 * when @e was replaced by the existing entry.
 */
static bool adopt_existing(const char *dir, struct corun_journal_entry *e)
{
    struct corun_journal_entry old;
    char path[4200];

    snprintf(path, sizeof(path), "%s/%d-%llu.journal", dir, (int)e->pid, e->start_time);
    if (corun_journal_read(path, &old, NULL))
        return false;
    if (strcmp(old.backend, e->backend)) {
        /* Another backend's record: keep its cgroup facts, our backend. */
        snprintf(old.backend, sizeof(old.backend), "%s", e->backend);
    }
    if (!old.created[0] && e->created[0]) {
        snprintf(old.created, sizeof(old.created), "%s", e->created);
        snprintf(old.cgroup, sizeof(old.cgroup), "%s", e->cgroup);
    }
    corun_journal_entry_release(e);
    *e = old;
    return true;
}

int corun__act_track(struct corun__act_base *b, pid_t pid, const char *backend,
                     const struct corun_cpuset *applying,
                     int (*fill)(void *ctx, struct corun_journal_entry *e), void *ctx,
                     struct corun__act_proc **out)
{
    struct corun__act_proc p = {.pid = pid, .pidfd = -1};
    struct capture_ctx cc = {.e = &p.orig};
    bool journaled_before = false;
    int err;

    if (pid <= 0)
        return -EINVAL;
    p.pidfd = corun__sys.pidfd_open(pid, 0);
    if (p.pidfd < 0)
        return errno == ESRCH ? -ESRCH : -errno;
    p.orig.pid = pid;
    snprintf(p.orig.backend, sizeof(p.orig.backend), "%s", backend);
    /* Read after the pidfd is open: if the start time belongs to the pidfd's
     * process (it is still alive below), the journal key is right. */
    err = corun_proc_start_time(b->root, pid, &p.orig.start_time);
    if (err)
        goto out_release;
    read_comm(b->rootfd, pid, p.orig.comm, sizeof(p.orig.comm));
    if ((err = corun__mask_get(pid, &p.orig.cpus)))
        goto out_release;
    if ((err = corun__for_each_thread(b->rootfd, pid, capture_one, &cc)))
        goto out_release;
    if (fill && (err = fill(ctx, &p.orig)))
        goto out_release;
    if (!corun__pidfd_alive(p.pidfd)) {
        err = -ESRCH;
        goto out_release;
    }
    if (b->journal_dir && adopt_existing(b->journal_dir, &p.orig))
        journaled_before = true;
    /* Whatever another instance recorded, this one applies next and
     * restores: the entry is ours now. */
    if (applying && (err = corun_cpuset_copy(&p.orig.applied, applying)))
        goto out_release;
    p.orig.owner = getpid();
    if (corun_proc_start_time(NULL, p.orig.owner, &p.orig.owner_start))
        p.orig.owner = 0; /* cannot say who we are: nobody's entry, as format 1 */
    if (b->journal_dir && (err = corun_journal_write(b->journal_dir, &p.orig)))
        goto out_release;
    if (b->nprocs == b->cap) {
        unsigned cap = b->cap ? b->cap * 2 : 8;
        struct corun__act_proc *n = realloc(b->procs, cap * sizeof(*n));

        if (!n) {
            err = -ENOMEM;
            goto out_unjournal;
        }
        b->procs = n;
        b->cap = cap;
    }
    b->procs[b->nprocs] = p;
    *out = &b->procs[b->nprocs++];
    return 0;

out_unjournal:
    if (b->journal_dir && !journaled_before)
        corun_journal_remove(b->journal_dir, pid, p.orig.start_time);
out_release:
    if (p.pidfd >= 0)
        close(p.pidfd);
    corun_journal_entry_release(&p.orig);
    return err;
}

int corun__act_note_applied(struct corun__act_base *b, struct corun__act_proc *p,
                            const struct corun_cpuset *cpus)
{
    int err;

    if (p->orig.applied.words && corun_cpuset_equal(&p->orig.applied, cpus))
        return 0;
    if ((err = corun_cpuset_copy(&p->orig.applied, cpus)))
        return err;
    return b->journal_dir ? corun_journal_write(b->journal_dir, &p->orig) : 0;
}

bool corun_act_move_refused(int err)
{
    return err == -EPERM || err == -EACCES || err == -ENOSYS;
}

/* Nodes as migrate_pages(2) takes them: a bitmask of unsigned longs. */
#define NODE_BITS 1024
#define NODE_WORDS (NODE_BITS / (8 * sizeof(unsigned long)))

/*
 * The other processes of cgroup @cg (a path from the root): their pages go
 * from @from to @to too. One that is gone, or not ours to move, keeps its
 * memory where it is; the leader's move stands either way.
 */
static void move_cgroup_memory(struct corun__act_base *b, pid_t leader, const char *cg,
                               const unsigned long *from, const unsigned long *to)
{
    char path[512], *procs, *line, *save = NULL;
    size_t len;
    int err;

    snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
    if ((err = corun__read_alloc(b->rootfd, path, &procs, &len))) {
        corun__debug("move_memory: %s: %s", path, corun_strerror(err));
        return;
    }
    for (line = strtok_r(procs, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *end;
        long pid = strtol(line, &end, 10);

        if (end == line || pid <= 0 || pid == leader)
            continue;
        if (corun__sys.migrate_pages((pid_t)pid, NODE_BITS + 1, from, to) < 0 && errno != ESRCH)
            corun__debug("move_memory: pid %ld (in %s): %s", pid, cg, strerror(errno));
    }
    free(procs);
}

int corun__act_move_memory(struct corun__act_base *b, pid_t pid, int node, const char *cgroup)
{
    struct corun__act_proc *p = corun__act_find(b, pid);
    struct corun_cpuset online = {0};
    unsigned long from[NODE_WORDS] = {0}, to[NODE_WORDS] = {0};
    const unsigned wbits = 8 * sizeof(unsigned long);
    char buf[4096];
    ssize_t n;
    long left;
    int err;

    if (!p || !corun__pidfd_alive(p->pidfd))
        return -ESRCH;
    if (node < 0 || node >= NODE_BITS)
        return -EINVAL;
    n = corun__read_text(b->rootfd, "sys/devices/system/node/online", buf, sizeof(buf));
    if (n == -ENOENT)
        return -ENOSYS; /* a kernel without NUMA support has no node directory */
    if (n < 0)
        return (int)n;
    if ((err = corun_cpuset_parse(&online, corun__rstrip(buf), NULL)))
        goto out;
    if (!corun_cpuset_isset(&online, (unsigned)node)) {
        err = -EINVAL;
        goto out;
    }
    /* From every other online node; a node that is already the target
     * has nothing to move. */
    for (int d = corun_cpuset_next(&online, 0); d >= 0 && d < NODE_BITS;
         d = corun_cpuset_next(&online, (unsigned)d + 1))
        if (d != node)
            from[(unsigned)d / wbits] |= 1ul << ((unsigned)d % wbits);
    to[(unsigned)node / wbits] |= 1ul << ((unsigned)node % wbits);
    err = 0;
    if (corun_cpuset_count(&online) < 2)
        goto out; /* one node: memory is already on it */
    left = corun__sys.migrate_pages(pid, NODE_BITS + 1, from, to);
    if (left < 0) {
        err = -errno;
        goto out;
    }
    if (left > 0)
        corun__debug("move_memory: pid %d: %ld pages could not move to node %d", (int)pid, left,
                     node);
    if (cgroup)
        move_cgroup_memory(b, pid, cgroup, from, to);
out:
    corun_cpuset_release(&online);
    return err;
}
