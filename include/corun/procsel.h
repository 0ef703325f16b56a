/*
 * corun/procsel.h — choosing which running processes corun looks after.
 *
 * A selector scans /proc (below a root directory, so tests replay a recorded
 * tree) and keeps the processes that match every kind of rule given, and any
 * one rule within a kind:
 *
 *   comm     a shell glob (fnmatch) on the command name (/proc/PID/comm);
 *   uid      the real user id;
 *   cgroup   the process's cgroup path (v2, else any v1 hierarchy) is this
 *            path or below it;
 *   min_cpu  CPU use, user plus system time over the last scan interval, in
 *            percent of one CPU, at least this. A process seen for the first
 *            time has no interval yet and is not selected by this rule until
 *            the next scan.
 *
 * With no rule at all, nothing is selected (the caller decides the default).
 * Whatever the rules say, a selector never keeps
 *   - kernel threads (PF_KTHREAD in /proc/PID/stat, or kthreadd's children
 *     with an empty command line),
 *   - the process given as @self (corun itself),
 *   - unless @include_pinned, a process pinned on purpose by someone else:
 *     its Cpus_allowed is narrower than what its cgroup's cpuset allows and
 *     the caller's is_ours() does not claim the mask as corun's own doing.
 * Each process seen is reported with the reason it was kept or left, so that
 * the daemon can explain itself.
 *
 * Cost. A scan lists /proc; a process seen before costs one pread() of a
 * descriptor kept open on /proc/PID/schedstat (or stat, for multi-threaded
 * processes) and, on the live root, one sched_getaffinity() for the pinning
 * check; processes that matched no rule cost nothing unless a CPU-use rule
 * is set. Command name, uid and cgroup are read again in full every
 * @recheck_scans scans, staggered by pid. The selector holds one descriptor
 * per candidate process: raise RLIMIT_NOFILE for thousands of them (it falls
 * back to opening the file each scan when descriptors run out).
 */
#ifndef CORUN_PROCSEL_H
#define CORUN_PROCSEL_H

#include <sys/types.h>

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct corun_procsel_opts {
    const char *root;         /* root for /proc and /sys, NULL = "/" */
    const char *const *comms; /* shell globs on the command name */
    unsigned ncomms;
    const uid_t *uids;
    unsigned nuids;
    const char *const *cgroups; /* cgroup paths ("/system.slice/x.service") */
    unsigned ncgroups;
    double min_cpu_percent; /* <= 0: no CPU-use rule */
    bool include_pinned;    /* also keep processes pinned by others */
    pid_t self;             /* never selected; 0 = none */
    unsigned recheck_scans; /* judge a known process in full every this
                             * many scans (name, uid, cgroup); 0 = 30 */
    /* True when @allowed, the current mask of (@pid, @start_ticks), is the
     * one corun set; NULL: never. Called, unless @include_pinned, for each
     * process that passes the rules and whose mask was read: pinned, and on
     * the live root ("/") not pinned too, since a mask corun narrowed that
     * its owner has widened again is no longer pinned, and only the caller
     * can tell it is not the one it set (a recorded tree's masks do not
     * follow what corun applied). */
    bool (*is_ours)(void *user, pid_t pid, uint64_t start_ticks,
                    const struct corun_cpuset *allowed);
    void *user;
};

/* Why a process was kept or left. */
enum corun_procsel_verdict {
    CORUN_PROCSEL_SELECTED = 0,
    CORUN_PROCSEL_NO_MATCH, /* no rule of some kind matched */
    CORUN_PROCSEL_KERNEL_THREAD,
    CORUN_PROCSEL_SELF,
    CORUN_PROCSEL_PINNED,      /* pinned by someone else on purpose */
    CORUN_PROCSEL_CPU_UNKNOWN, /* min_cpu rule: first sight, no interval yet */
    CORUN_PROCSEL_GONE,        /* exited while being read */
};

#define CORUN_PROCSEL_COMM_LEN 16 /* TASK_COMM_LEN */

struct corun_proc_info {
    pid_t pid;
    pid_t ppid;
    uid_t uid;            /* real uid; (uid_t)-1 if it was not read */
    uint64_t start_ticks; /* start time in clock ticks after boot: with
                           * the pid, identifies the process */
    char comm[CORUN_PROCSEL_COMM_LEN];
    unsigned nthreads;
    int last_cpu;       /* the CPU it last ran on (OS number), -1 unknown */
    double cpu_percent; /* over the last interval; NaN on first sight */
    uint64_t cpu_ticks; /* utime + stime, cumulative */
    bool pinned;        /* mask narrower than the cgroup allows */
    enum corun_procsel_verdict verdict;
};

struct corun_procsel;

/*
 * corun_procsel_open() - a selector with the rules in @opts (copied; the
 * strings need not outlive the call). Returns 0 and *@out, -EINVAL for a
 * NULL argument, -ENOENT/-EACCES when the root cannot be opened, -ENOMEM.
 */
CORUN_API int corun_procsel_open(const struct corun_procsel_opts *opts, struct corun_procsel **out);

/* Frees the selector; accepts NULL. */
CORUN_API void corun_procsel_close(struct corun_procsel *sel);

/*
 * corun_procsel_scan() - one pass over /proc at time @now_ns (any monotonic
 * clock; it measures the interval for min_cpu). Fills *@out with a malloc'd
 * array (free() it) of the selected processes, sorted by pid; when @all is
 * true the array holds every user process seen, each with its verdict.
 * Processes that vanish during the scan are dropped silently. Returns 0,
 * -ENOMEM, or the -errno of opening /proc. Not thread-safe on one selector.
 */
CORUN_API int corun_procsel_scan(struct corun_procsel *sel, uint64_t now_ns, bool all,
                                 struct corun_proc_info **out, size_t *n);

/* Words for a verdict ("selected", "pinned by its owner", ...); never NULL. */
CORUN_API const char *corun_procsel_verdict_name(enum corun_procsel_verdict v);

/*
 * corun_procsel_read_one() - reads one process as a scan would, without
 * applying the rules (verdict is KERNEL_THREAD/SELF/SELECTED, pinned filled,
 * cpu_percent NaN). 0, -ESRCH when it does not exist, -ENOMEM.
 */
CORUN_API int corun_procsel_read_one(struct corun_procsel *sel, pid_t pid,
                                     struct corun_proc_info *out);

/*
 * corun_procsel_last_cpu() - the CPU process @pid (started at @start_ticks,
 * as a scan gave it) last ran on, read now from /proc/PID/stat: a scan
 * refreshes it only on its full pass (every 30 scans per process), too old
 * for a caller that places the process from where it runs. OS number, -1
 * unknown. 0, -ESRCH when it is gone (or the pid is another process's),
 * -EINVAL for a line that cannot be parsed.
 */
CORUN_API int corun_procsel_last_cpu(struct corun_procsel *sel, pid_t pid, uint64_t start_ticks,
                                     int *cpu);

/* What the scheduler says of one process now (see corun_procsel_sched()). */
struct corun_proc_sched {
    int last_cpu;      /* the CPU it last ran on (OS number), -1 unknown */
    unsigned nthreads; /* threads now */
    bool have_sched;   /* run_ns and delay_ns were read (schedstat exists) */
    uint64_t run_ns;   /* its live threads' time on a CPU, cumulative */
    uint64_t delay_ns; /* their time runnable but waiting for a CPU, cumulative */
};

/*
 * corun_procsel_sched() - process @pid (started at @start_ticks, as a scan
 * gave it) as the scheduler sees it now: where it last ran and how many
 * threads it has (/proc/PID/stat), and the time its threads ran and waited
 * to run, summed over the threads alive now (/proc/PID/schedstat for a
 * single thread, else /proc/PID/task/TID/schedstat of each). A thread that
 * exits takes its times with it, so the sums may fall between two readings.
 * Without schedstat (a kernel without CONFIG_SCHED_INFO, a recorded tree)
 * have_sched is false and the rest is filled. Costs one read of stat and
 * one per thread. 0, -ESRCH when it is gone (or the pid is another
 * process's), -EINVAL for a stat line that cannot be parsed, -ENOMEM.
 */
CORUN_API int corun_procsel_sched(struct corun_procsel *sel, pid_t pid, uint64_t start_ticks,
                                  struct corun_proc_sched *out);

/*
 * corun_procsel_cpus_wanted() - how many CPUs' worth process asked for
 * between readings @before and @after, @dt_ns apart: the time its threads
 * ran plus the time they waited to run, per second. A single thread asks
 * for one CPU at most, whether it gets it or waits for it; a process whose
 * threads want more than one CPU shows more, even on a crowded machine.
 * At most one CPU a thread (the larger thread count of the two readings,
 * when known): the scheduler counts a wait when it ends, so a long one
 * that began before @before would otherwise land whole in this interval
 * (a spinner sharing its CPU on a loaded 2-CPU machine read 1.8). NaN when
 * it cannot be known: either reading lacks schedstat, @dt_ns is 0, or a
 * sum fell (a thread exited). Pure.
 */
CORUN_API double corun_procsel_cpus_wanted(const struct corun_proc_sched *before,
                                           const struct corun_proc_sched *after, uint64_t dt_ns);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_PROCSEL_H */
