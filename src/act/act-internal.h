/*
 * act-internal.h — what the actuator backends share: CPU masks at the kernel
 * boundary (sized with CPU_ALLOC, so machines with more than 1024 CPUs work),
 * the threads of a process, pidfd guards, and the per-process record an
 * instance keeps of what it changed.
 */
#ifndef CORUN_ACT_INTERNAL_H
#define CORUN_ACT_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "corun/act.h"

/* One process an instance has changed. */
struct corun__act_proc {
    pid_t pid;
    int pidfd;                       /* held from the first apply to restore */
    struct corun_journal_entry orig; /* what it was, as journaled */
    struct corun_cpuset cur;         /* what we last applied */
    pid_t *tids;                     /* affinity: the threads it is on */
    unsigned ntids;
};

/* The bookkeeping shared by the affinity and cpuset instances. */
struct corun__act_base {
    int rootfd;
    char *journal_dir; /* NULL: no journal */
    char *root;        /* as given, for corun_proc_start_time */
    unsigned nprocs, cap;
    struct corun__act_proc *procs;
};

int corun__act_base_init(struct corun__act_base *b, const struct corun_act_opts *opts);
void corun__act_base_release(struct corun__act_base *b);
/* The record of @pid, or NULL. */
struct corun__act_proc *corun__act_find(struct corun__act_base *b, pid_t pid);
/* Drops the record @p (closing its pidfd). */
void corun__act_forget(struct corun__act_base *b, struct corun__act_proc *p);

/*
 * corun__act_track() - the first sight of @pid: open a pidfd, read its start
 * time, comm and every thread's affinity into a new record, and journal it
 * (with @backend's name; the cpuset backend fills cgroup/created through
 * @fill before the write). 0 and *@out, or -ESRCH (gone), -errno.
 */
int corun__act_track(struct corun__act_base *b, pid_t pid, const char *backend,
                     const struct corun_cpuset *applying,
                     int (*fill)(void *ctx, struct corun_journal_entry *e), void *ctx,
                     struct corun__act_proc **out);

/*
 * corun__act_note_applied() - records in @p's journal entry that @cpus is
 * about to be applied (before it is, so that a crash in between leaves at
 * worst threads still on the previous mask, which restore then takes for an
 * owner's). Rewrites the entry only when the mask changes. 0 or -errno (then
 * the caller must not apply).
 */
int corun__act_note_applied(struct corun__act_base *b, struct corun__act_proc *p,
                            const struct corun_cpuset *cpus);

/*
 * corun__act_move_memory() - the move_memory operation of the affinity and
 * cpuset backends (corun/act.h): @pid must be one @b has applied to and
 * still alive (its pidfd), the nodes come from @b's root
 * (sys/devices/system/node/online). With @cgroup (a path from the root),
 * once @pid's memory has moved, every other process listed in that
 * cgroup's cgroup.procs moves too (the ones that follow @pid); their
 * failures are only logged. 0 or @pid's -errno.
 */
int corun__act_move_memory(struct corun__act_base *b, pid_t pid, int node, const char *cgroup);

/* What a restore did with a process's threads. */
struct corun__restore_count {
    unsigned restored; /* put back on their journaled mask */
    unsigned kept;     /* no longer on corun's mask: left as their owner set them */
    bool moved_away;   /* cpuset: no longer in corun's cgroup: left where it is */
};

/* Words for @n, as "affinity of 3 threads restored" or "left alone: its owner
 * changed its affinity since corun set it", into @buf. @what names what was
 * restored ("affinity", "cgroup and affinity"). */
void corun__restore_words(const struct corun__restore_count *n, const char *what, char *buf,
                          size_t len);

/* Every thread's mask of @pid now, into @snap->threads (zeroed before). 0 or -errno. */
int corun__capture_threads(int rootfd, pid_t pid, struct corun_journal_entry *snap);

/* True while the process behind @pidfd has not exited. */
bool corun__pidfd_alive(int pidfd);

/* Reads the affinity of thread @tid into @set (grown as needed). 0 or -errno. */
int corun__mask_get(pid_t tid, struct corun_cpuset *set);
/* Sets the affinity of thread @tid to @set. 0 or -errno. */
int corun__mask_set(pid_t tid, const struct corun_cpuset *set);

/*
 * corun__for_each_thread() - calls @fn for every thread of @pid listed in
 * /proc/PID/task below @rootfd. Stops at the first non-zero return of @fn
 * and returns it; -ESRCH when the process is gone.
 */
int corun__for_each_thread(int rootfd, pid_t pid, int (*fn)(void *ctx, pid_t tid), void *ctx);

/*
 * corun__set_all_threads() - puts every thread of @p->pid on @cpus,
 * rescanning until a pass finds no thread it had not already set (threads
 * created meanwhile). A thread that vanished (ESRCH) is skipped. A thread
 * of @p->tids (those corun put on @p->cur) whose mask is now neither
 * @p->cur nor @cpus was given it by its owner since: it is left as it is.
 * @p->tids becomes the threads on @cpus. 0, -ESRCH when the whole process
 * is gone, -EBUSY when its owner had changed every thread found (none was
 * set), or the first other -errno.
 */
int corun__set_all_threads(int rootfd, struct corun__act_proc *p, const struct corun_cpuset *cpus);

/* True when every thread of @pid already runs on exactly @cpus (false on
 * any error, including the process being gone). */
bool corun__threads_all_on(int rootfd, pid_t pid, const struct corun_cpuset *cpus);

/*
 * corun__restore_threads() - gives every thread of @e->pid the affinity @e
 * journaled for it (the main thread's for threads born since), except, when
 * @e->applied is known, a thread whose mask is no longer corun's: its owner
 * pinned it, and it is left alone. @now, if not NULL, holds the threads'
 * masks captured before a cgroup move reset them (cpuset v1): those are the
 * masks compared, and an owner's is set again rather than left. Counts into
 * *@n. 0, -ESRCH, or the first -errno.
 */
int corun__restore_threads(int rootfd, const struct corun_journal_entry *e,
                           const struct corun_journal_entry *now, struct corun__restore_count *n);

/* The cpuset backend's restore of a journaled entry (crash recovery too):
 * back to its cgroup, affinities back, corun's cgroup removed. A process
 * no longer in corun's cgroup (its owner moved it) is left where it is
 * (@n->moved_away). */
int corun__cpuset_restore_entry(int rootfd, const struct corun_journal_entry *e, bool alive,
                                struct corun__restore_count *n);

#endif
