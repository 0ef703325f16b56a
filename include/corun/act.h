/*
 * corun/act.h — putting tasks where a policy said: CPU affinity or cgroup
 * cpusets, a dry run, or the simulator, behind one operations table.
 *
 * Every change is journaled first with the task's original placement so that
 * any exit path (normal, signal, crash followed by `corun restore`) puts it
 * back. Failures for one task (ESRCH as it exits, EPERM) are returned for
 * that task and never stop the caller's loop.
 *
 * Backends: corun_act_affinity (sched_setaffinity on every thread of a
 * process, each process held by a pidfd so that a recycled PID is never
 * touched), corun_act_cpuset (one cgroup per task under a "corun" cgroup of
 * the cpuset hierarchy, v2 or v1), corun_act_dryrun (changes nothing, logs
 * what it would do at CORUN_LOG_INFO), and the simulator's own. An instance
 * (the state from open) is used from one thread at a time.
 *
 * The journal (one file per process under opts->journal_dir, written to a
 * temporary name, fsync'ed and renamed) is keyed by PID and the process's
 * start time (field 22 of /proc/PID/stat), so that a restore after a crash
 * never touches a process that merely got the same PID.
 */
#ifndef CORUN_ACT_H
#define CORUN_ACT_H

#include <sys/types.h>

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct corun_act_opts {
    const char *journal_dir; /* where originals are journaled; NULL: no journal */
    const char *root;        /* root for /proc and cgroupfs, NULL = "/" */
    void *backend_cfg;       /* backend-specific (the simulator's instance) */
};

/* corun_act_ops.flags */
/* A task's later children follow it: apply() to a process moves everything
 * it starts afterwards too (cpusets), so callers need not apply to them. */
#define CORUN_ACT_CHILDREN_FOLLOW (1u << 0)

struct corun_act_ops {
    const char *name; /* "affinity", "cpuset", "dryrun", "sim" */
    int (*probe)(const struct corun_act_opts *opts, char *why, size_t len);
    int (*open)(const struct corun_act_opts *opts, void **state);
    /* Runs task @target (a PID, or a task index for the simulator) on the CPUs
     * in @cpus (kernel numbering). 0 or -errno. */
    int (*apply)(void *state, pid_t target, const struct corun_cpuset *cpus);
    /* Puts @target back as it was before the first apply. 0 or -errno. */
    int (*restore)(void *state, pid_t target);
    /* Restores every task this instance changed. 0 or the first -errno. */
    int (*restore_all)(void *state);
    void (*close)(void *state);
    /* ---- appended after the first contract; may be 0/NULL in a backend ---- */
    unsigned flags; /* CORUN_ACT_* */
    /*
     * Moves the memory of @target (a PID the instance has applied to) to
     * NUMA node @node (the kernel's number), as numad and migratepages(8)
     * do after moving a process to another node: every page not on @node
     * and not shared with other processes moves there (migrate_pages(2)).
     * A CORUN_ACT_CHILDREN_FOLLOW backend moves the processes that follow
     * @target too (cpuset: those in its task cgroup); a failure for one of
     * them is not reported. Others move @target only: callers that applied
     * to a process's children move theirs as they placed them.
     * Memory is not put back by restore: it stays where the process now
     * runs or ran last. 0 (pages that could not move are left where they
     * are), -ESRCH (gone or never applied to), -EPERM, -ENOSYS (no NUMA
     * support in the kernel), -EINVAL (node not online), or another -errno.
     * NULL: the backend cannot move memory.
     */
    int (*move_memory)(void *state, pid_t target, int node);
};

/*
 * The backends of this library. apply() on the affinity and cpuset backends:
 *   - the first apply to a PID opens a pidfd on it, reads its start time and
 *     its threads' affinities (and cgroup), journals them durably, then acts
 *     (affinity: a process whose threads all run on @cpus already is left
 *     alone and not journaled: nothing changes);
 *   - applying again (same or other CPUs) rescans /proc/PID/task, so threads
 *     that appeared since are placed too: callers re-apply periodically;
 *   - affinity: a thread corun placed whose mask its owner has changed
 *     since (to anything but the mask corun set and the one asked for) is
 *     left as its owner set it, at this apply and every later one; threads
 *     born since are placed;
 *   - returns -ESRCH when the process is gone (or its PID now names another
 *     process), -EPERM/-EACCES when it is not ours to change, -EBUSY
 *     when its owner has taken it over (affinity: changed every thread
 *     corun had placed, and none was set; cpuset: moved it out of corun's
 *     cgroup), -EINVAL for an empty or impossible set; a thread that exits
 *     under our feet is skipped.
 * restore() leaves what its owner changed since: a thread's mask, or (cpuset)
 * the cgroup it was moved to.
 * restore() returns 0 when the process is gone (nothing left to put back)
 * and drops its journal entry either way once nothing remains to do.
 * A process already journaled by another instance keeps that entry's
 * original: the first original wins.
 */
CORUN_API extern const struct corun_act_ops corun_act_affinity;
CORUN_API extern const struct corun_act_ops corun_act_cpuset;
CORUN_API extern const struct corun_act_ops corun_act_dryrun;

/*
 * corun_act_move_refused() - whether @err, from move_memory, would come back
 * for any process: no permission (-EPERM, -EACCES) or no NUMA support
 * (-ENOSYS). Callers then stop moving memory altogether; after another error
 * they stop only for that process.
 */
CORUN_API bool corun_act_move_refused(int err);

/* The library's backend named @name ("affinity", "cpuset", "dryrun"), or NULL. */
CORUN_API const struct corun_act_ops *corun_act_find(const char *name);

/* ---- the journal ----------------------------------------------------------- */

/* One thread's original affinity. */
struct corun_journal_thread {
    pid_t tid;
    struct corun_cpuset cpus;
};

/* What a process looked like before corun's first change to it. */
struct corun_journal_entry {
    pid_t pid;
    unsigned long long start_time; /* /proc/PID/stat field 22, clock ticks since boot */
    char backend[16];              /* "affinity", "cpuset" */
    char comm[32];                 /* its command name, for reports */
    struct corun_cpuset cpus;      /* the main thread's affinity: what new threads get */
    unsigned nthreads;
    struct corun_journal_thread *threads; /* every thread's affinity then */
    char cgroup[256];  /* cpuset backend: the cgroup it was in (absolute path), or "" */
    char created[256]; /* cpuset backend: the cgroup corun made for it, or "" */
    /* ---- appended with journal format 2; zero in a format-1 entry ---- */
    /* The mask corun applied last (journaled before it is applied). On
     * restore a thread whose mask is no longer this one was pinned by its
     * owner since, and is left as they set it. No words: unknown (format 1),
     * every thread is restored. */
    struct corun_cpuset applied;
    pid_t owner;                    /* the corun process that wrote it; 0 unknown */
    unsigned long long owner_start; /* its start time, to tell a recycled PID */
};

/* Releases what an entry owns; accepts a zeroed entry. */
CORUN_API void corun_journal_entry_release(struct corun_journal_entry *e);

/*
 * corun_journal_write() - store @e durably as DIR/PID-START.journal: written
 * to a temporary file, fsync'ed, renamed over, and the directory fsync'ed.
 * Creates @dir (mode 0700) if needed. 0 or -errno. Thread-safe for distinct
 * entries.
 */
CORUN_API int corun_journal_write(const char *dir, const struct corun_journal_entry *e);

/*
 * corun_journal_read() - parse the journal file @path into @e. 0, -errno for
 * an unreadable file, or -EINVAL for a malformed one (then *@bad_line, if
 * given, is its first bad line, 1-based).
 */
CORUN_API int corun_journal_read(const char *path, struct corun_journal_entry *e,
                                 unsigned *bad_line);

/*
 * corun_journal_prepare() - makes @dir ready for corun_journal_write():
 * creates it (mode 0700 for the parts made) if needed and checks that this
 * process may create files in it. 0, or -errno: -ENOTDIR (a part is a
 * file), -EACCES, -EROFS... Callers use it to refuse an unusable journal
 * before anything is placed.
 */
CORUN_API int corun_journal_prepare(const char *dir);

/* Removes the entry of @pid/@start_time from @dir. 0 (also when absent) or -errno. */
CORUN_API int corun_journal_remove(const char *dir, pid_t pid, unsigned long long start_time);

/*
 * corun_proc_start_time() - the start time of process @pid (field 22 of
 * /proc/PID/stat below @root, NULL "/"). 0, -ESRCH when there is no such
 * process, -EINVAL when the file cannot be parsed.
 */
CORUN_API int corun_proc_start_time(const char *root, pid_t pid, unsigned long long *out);

/* What corun_act_restore_journal() did with one entry. */
struct corun_restore_result {
    const char *file;                        /* the journal file */
    const struct corun_journal_entry *entry; /* NULL when it could not be read */
    int err;          /* 0 restored; -ESRCH gone (or PID recycled); other -errno failed */
                      /* (appended) -EBUSY kept: the corun that wrote it still runs */
    const char *what; /* words: "affinity of 3 threads restored", "process gone" */
};

/*
 * corun_act_restore_journal() - put back every process journaled under
 * opts->journal_dir, as after a crash: for each entry, if a process with its
 * PID and start time still runs, its threads get their original affinities
 * (and, for the cpuset backend, it goes back to its cgroup and corun's cgroup
 * is removed). Entries are removed once handled (kept when restoring failed
 * for a reason other than the process being gone). @cb, if not NULL, is called
 * once per entry. Returns 0 when every entry was restored or gone, else the
 * first -errno; -ENOENT when the directory does not exist is reported as 0
 * with no entries.
 *
 * (Appended with journal format 2.) A thread whose mask is no longer the one
 * corun applied (entry->applied) was pinned by its owner since: it is left as
 * it is, and an entry none of whose threads still had corun's mask is dropped
 * with "left alone" in r->what. An entry whose writer (entry->owner, with its
 * start time) is a live process other than the caller is kept untouched and
 * reported with -EBUSY: that corun is still running and restores it itself
 * (the journal directory is shared by `corun run`, `batch` and the daemon);
 * -EBUSY does not count as a failure in the return value.
 */
CORUN_API int
corun_act_restore_journal(const struct corun_act_opts *opts,
                          void (*cb)(void *user, const struct corun_restore_result *r), void *user);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_ACT_H */
