/*
 * sense-internal.h — what the files of the sense box share and tests reach:
 * the privileges perf_event_open depends on, the words for its failures,
 * multiplex scaling, counter sets (the perf events of one target, grouped per
 * thread) and the per-thread /proc tables. Never exported.
 */
#ifndef CORUN_SENSE_INTERNAL_H
#define CORUN_SENSE_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "corun/sense.h"

/* The perf generic or software event standing for @ev; false for none. */
bool corun__generic_event(enum corun_event ev, uint32_t *type, uint64_t *config, const char **name);

/* ---- privileges and reasons (perf-common.c) ---------------------------------- */

/* What decides which perf events this process may open. */
struct corun__perf_env {
    int paranoid;              /* kernel.perf_event_paranoid; -100 when unreadable */
    bool cap_perfmon;          /* CAP_PERFMON in the effective set */
    bool cap_sys_admin;        /* CAP_SYS_ADMIN in the effective set */
    bool exclude_kernel;       /* count user space only (paranoid >= 2 without privilege) */
    bool cpu_pmu_in_sysfs;     /* a core PMU under /sys/bus/event_source/devices */
    unsigned ncore_pmus;       /* core PMUs there: 2 or more on hybrid CPUs (cpu_core, cpu_atom) */
    char core_pmus[96];        /* their names, comma-separated */
    uint32_t core_pmu_type[4]; /* their perf types (sysfs "type"), the first four */
};

/* A hybrid CPU: one PMU per core type, with known perf types. */
bool corun__perf_hybrid(const struct corun__perf_env *env);

/* Reads paranoid level, capabilities and sysfs PMUs below @rootfd. */
void corun__perf_env_read(int rootfd, struct corun__perf_env *env);

/*
 * The parsing half of corun__perf_env_read(): @paranoid is the text of
 * /proc/sys/kernel/perf_event_paranoid and @status that of /proc/self/status
 * (NUL-terminated; NULL when unreadable). Sets env->paranoid (-100 without
 * @paranoid), cap_perfmon and cap_sys_admin (from the line that starts
 * "CapEff:") and exclude_kernel; leaves the PMU fields alone. Exposed for the
 * fuzz target.
 */
void corun__perf_env_parse(struct corun__perf_env *env, const char *paranoid, const char *status);

/* Fills @attr for encoding @e (type, config, exclusions, read format). */
void corun__perf_attr(const struct corun_event_encoding *e, const struct corun__perf_env *env,
                      struct perf_event_attr *attr);

/* Opens @attr on the calling thread and closes it: 0 or -errno. Through corun__sys. */
int corun__perf_try(struct perf_event_attr *attr);

/*
 * Whether hardware events can be opened here: opens a generic cycles event
 * and a software task-clock on the calling thread. 0 when cycles opened;
 * else -errno with the reason in @why (no PMU exposed by the hypervisor,
 * perf_event_paranoid without CAP_PERFMON, ...).
 */
int corun__perf_diagnose(const struct corun__perf_env *env, char *why, size_t len);

/* The reason event @ev (encoded as @e) failed to open with @err (-errno). */
void corun__perf_event_reason(int err, enum corun_event ev, const struct corun_event_encoding *e,
                              const struct corun__perf_env *env, char *buf, size_t len);

/*
 * Multiplex scaling: the count estimated for the whole enabled time,
 * raw * enabled / running, without overflow. Returns false (count unknown)
 * when the event was enabled but never ran on a counter; a never-enabled
 * event counts 0.
 */
bool corun__perf_scale(uint64_t raw, uint64_t enabled, uint64_t running, uint64_t *out);

/* ---- counter sets (perf-common.c) -------------------------------------------- */

/* Which hardware group each preset goes to (-1: alone). */
int corun__perf_group_of(enum corun_event ev);
#define CORUN__PERF_NGROUPS  2
#define CORUN__PERF_MAX_PMUS 4 /* core-type PMUs of a hybrid CPU we open on */

struct corun__pplan {
    uint64_t events;                            /* presets to open */
    struct perf_event_attr attr[CORUN_NEVENTS]; /* their encodings */
    bool inherit;                               /* one set on the PID, inherited; else per thread */
    bool on_exec;                               /* disabled until the target's execve */
    /*
     * Hybrid CPUs: hardware presets are opened once per core-type PMU, with
     * that PMU's perf type in config bits 32-63 (the extended type of
     * PERF_TYPE_HARDWARE and PERF_TYPE_HW_CACHE), and the counts combined.
     * 0 or 1: opened once as encoded.
     */
    unsigned npmus;
    uint32_t pmu_type[CORUN__PERF_MAX_PMUS];
};

struct corun__pset;

/*
 * Opens @plan's events on @pid: with inherit, once on @pid (children and
 * threads created later are counted); without, on every thread listed in
 * /proc/PID/task below @rootfd, one group per thread. Events that failed on
 * every thread are left out (corun__pset_err() says why). Returns 0, -ESRCH
 * when the process is gone, -ENOMEM.
 */
int corun__pset_open(const struct corun__pplan *plan, int rootfd, pid_t pid,
                     struct corun__pset **out);
/* Presets opened on at least one thread. */
uint64_t corun__pset_opened(const struct corun__pset *ps);
/* The first -errno @ev failed with, 0 when none. */
int corun__pset_err(const struct corun__pset *ps, enum corun_event ev);
/*
 * Reads every counter, scales it and sums over threads into @s (valid bits
 * and values of the set's events only; mux_ratio the least over hardware
 * events). Without inherit, first opens the threads born since the last
 * read (listed in /proc/PID/task below the @rootfd given to
 * corun__pset_open(), which must stay open). Returns 0 or -errno of a
 * failed read.
 */
int corun__pset_read(struct corun__pset *ps, struct corun_sample *s);
void corun__pset_close(struct corun__pset *ps);

/* ---- per-thread /proc tables (sense-proc.c) ----------------------------------- */

struct corun__tid_stat {
    pid_t tid;
    uint64_t run_ns, delay_ns; /* schedstat fields 1 and 2 */
    uint64_t ctxsw;            /* voluntary + nonvoluntary context switches */
};

/* Every thread seen since attach, so that exited threads still count. */
struct corun__tidtab {
    struct corun__tid_stat *t;
    unsigned n, cap;
    bool want_ctxsw; /* also read status for context switches */
    bool ctxsw_lost; /* a live thread's status could not be read: the sum is missing */
    uint64_t base_delay, base_ctxsw;
};

/* The fields of /proc/PID/stat the proc backend reads (proc(5)), in ticks and faults. */
struct corun__proc_stat {
    uint64_t minflt, cminflt, majflt, cmajflt;
    uint64_t utime, stime, cutime, cstime;
};

/*
 * Parses the NUL-terminated text of /proc/PID/stat (the command name may hold
 * spaces and parentheses: fields are read after the last ')'). 0, or -EINVAL
 * when the fields are missing or malformed (*@out untouched).
 */
int corun__proc_stat_parse(const char *buf, struct corun__proc_stat *out);

/* corun__proc_schedstat_parse() is in common/internal.h: procsel reads
 * schedstat too. */

/* The number after "@key" at the start of a line of a status file (NUL-terminated
 * @buf); 0 if absent. */
uint64_t corun__proc_status_field(const char *buf, const char *key);

/*
 * Reads /proc/PID/task/TID/schedstat (and status) of every live thread of
 * @pid and records them. Returns 0, -ESRCH when the process is gone,
 * -ENOENT when schedstat is missing (kernel without CONFIG_SCHED_INFO).
 */
int corun__tidtab_update(struct corun__tidtab *tab, int rootfd, pid_t pid);
/* Sums over threads ever seen, minus the baseline taken at attach. */
uint64_t corun__tidtab_delay(const struct corun__tidtab *tab);
uint64_t corun__tidtab_ctxsw(const struct corun__tidtab *tab);
void corun__tidtab_release(struct corun__tidtab *tab);

#endif
