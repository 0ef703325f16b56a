/*
 * corun/daemon.h — looking after processes that are already running: the
 * configuration of `corun daemon`, and the daemon's state and loop as a
 * library object so that the front end only parses arguments, waits on its
 * descriptors and prints.
 *
 * The loop (corun_daemon_tick) selects processes (corun/procsel.h) and hands
 * the busy ones to an engine (corun/engine.h), which samples them through a
 * sensor (corun/sense.h), learns a profile per process, asks a placement
 * policy (corun/policy.h) and applies its plan through an actuator
 * (corun/act.h) with hysteresis, a cap on migrations per interval and a
 * check of each change against what the counters then say. Without an
 * actuator or a policy it runs observe-only and says why. Every change is
 * journaled by the actuator before it is made; corun_daemon_restore_all()
 * gives everything back, and corun_daemon_open() first reconciles a journal a
 * crashed daemon left behind.
 *
 * Nothing here is thread-safe: one thread owns a daemon.
 */
#ifndef CORUN_DAEMON_H
#define CORUN_DAEMON_H

#include <sys/types.h>

#include <corun/common.h>
#include <corun/ctl.h>

#ifdef __cplusplus
extern "C" {
#endif

struct corun_topo;
struct corun_sense_ops;
struct corun_act_ops;
struct corun_policy;

#define CORUN_DAEMON_CONFIG_PATH "/etc/corun/corund.conf"
#define CORUN_DAEMON_SOCKET_PATH "/run/corun/corund.sock"

/* The daemon's settings: defaults, then the file, then the command line. */
struct corun_daemon_config {
    double interval_s;  /* seconds between ticks (0.05 .. 3600) */
    char *policy;       /* placement policy name */
    char *actuator;     /* "affinity" or "cpuset" */
    char *sensor;       /* "auto" (perf, else proc), "perf", "proc" */
    char *socket_path;  /* control socket */
    char *metrics_path; /* Prometheus textfile; NULL: none */
    char *journal_dir;  /* the actuator's journal of originals */
    bool has_admin_gid; /* a group besides root that may change settings */
    gid_t admin_gid;
    unsigned max_migrations; /* moves per tick, at most */
    unsigned min_dwell;      /* ticks a process stays put before it moves again */
    unsigned confirm;        /* ticks a new placement must be planned in a row */
    unsigned history;        /* recent migrations kept for `corun status` */
    double sample_min_cpu;   /* read counters of processes using at least this
                              * percent of a CPU; 0: of every process */
    /* Selection (see corun/procsel.h). */
    char **comms;
    unsigned ncomms;
    uid_t *uids;
    unsigned nuids;
    char **cgroups;
    unsigned ncgroups;
    double min_cpu_percent;
    bool include_pinned;
    char *root; /* root of /proc and /sys; NULL: "/" (tests) */
    /* Appended: a process moved to another NUMA node has its memory moved
     * after it (the actuator's move_memory, as numad does); default yes. */
    bool mem_follow;
};

/* Fills @c with the defaults. 0 or -ENOMEM. Release with _release. */
CORUN_API int corun_daemon_config_init(struct corun_daemon_config *c);
CORUN_API void corun_daemon_config_release(struct corun_daemon_config *c);

/*
 * corun_daemon_config_set() - sets @key of @section ("daemon" or "select") to
 * @value, as the file or the command line gives it. Selector keys ("comm",
 * "user", "cgroup") add one more rule each time. Returns 0, -EINVAL with the
 * reason in @why (@len bytes) for an unknown section or key or a bad value,
 * -ENOMEM.
 */
CORUN_API int corun_daemon_config_set(struct corun_daemon_config *c, const char *section,
                                      const char *key, const char *value, char *why, size_t len);

/* Drops every selector rule (the command line's replace the file's). */
CORUN_API void corun_daemon_config_clear_selectors(struct corun_daemon_config *c);

/* Where a configuration file is wrong. */
struct corun_config_error {
    unsigned line; /* 1-based; 0 when the file could not be read at all */
    char reason[256];
};

/*
 * corun_daemon_config_load() - reads the INI file @path into @c over what it
 * holds. Returns 0; -EINVAL with the first bad line and its reason in @err;
 * or the -errno of opening the file (-ENOENT, -EACCES) with line 0.
 */
CORUN_API int corun_daemon_config_load(struct corun_daemon_config *c, const char *path,
                                       struct corun_config_error *err);

/* ---- the running daemon ----------------------------------------------------- */

/* The parts the daemon drives, chosen by the front end. Any may be NULL:
 * without @act or @policy (or @topo) the daemon observes only; without @sense
 * it knows only CPU use. */
/* Busy-core counts of a package's turbo table the daemon keeps; beyond, the
 * last entry stands. */
#define CORUN_DAEMON_TURBO_MAX 256

struct corun_daemon_parts {
    const struct corun_topo *topo; /* borrowed; outlives the daemon */
    const struct corun_sense_ops *sense;
    const struct corun_act_ops *act;
    const struct corun_policy *policy;
    const char *observe_only_why; /* why a part is missing, for status */
    char sensor_why[160];         /* why there is no sensor, when @sense is NULL */
    /* Appended. The package's turbo table handed to the policy (the clock
     * with n busy cores over one, n = 1..@turbo_n; corun_snapshot.turbo_rel);
     * 0 entries: unknown. */
    double turbo_rel[CORUN_DAEMON_TURBO_MAX];
    unsigned turbo_n;
};

struct corun_daemon;

/*
 * corun_daemon_open() - a daemon with a copy of @cfg driving @parts. With an
 * actuator and a journal directory it first reconciles what a crashed corun
 * left, through corun_act_restore_journal() as `corun restore` does (entries
 * of a corun still running are left to it), then opens the actuator for this
 * run. Returns 0 and *@out, -EINVAL, -ENOMEM
 * or the -errno of opening a part.
 */
CORUN_API int corun_daemon_open(const struct corun_daemon_config *cfg,
                                const struct corun_daemon_parts *parts, struct corun_daemon **out);

/*
 * corun_daemon_tick() - one pass of the loop at time @now_ns (monotonic):
 * select, then one engine step (sample, profile, place, apply). A process
 * exiting or refusing (ESRCH, EPERM) is recorded with the reason and never
 * stops the pass. Returns 0, or -errno when /proc itself could not be
 * scanned, memory ran out or the policy failed (logged too).
 */
CORUN_API int corun_daemon_tick(struct corun_daemon *d, uint64_t now_ns);

/*
 * corun_daemon_reload() - applies @cfg, the configuration read again (on
 * SIGHUP), to running daemon @d. From the next tick: the selection rules
 * (processes no longer selected are given back), interval, policy,
 * max_migrations, min_dwell, confirm and sample_min_cpu. What the running
 * parts were built from (actuator, sensor, socket, metrics, journal_dir,
 * root, admin_group, history) needs a restart: those keep their running
 * values and, when @cfg asked for others, are named in @why (@len bytes;
 * "" when none). Returns 0; -EINVAL with the reason in @why for an unknown
 * policy (nothing changes); -ENOMEM (nothing changes).
 */
CORUN_API int corun_daemon_reload(struct corun_daemon *d, const struct corun_daemon_config *cfg,
                                  char *why, size_t len);

/* Puts every process the daemon changed back as it was. 0 or the first -errno. */
CORUN_API int corun_daemon_restore_all(struct corun_daemon *d);

/* True when the daemon only watches; *@why (if given) says what is missing. */
CORUN_API bool corun_daemon_observe_only(const struct corun_daemon *d, const char **why);

/* The control socket's request handler (a corun_ctl_handler for @user = the
 * daemon): status, settings, pause/resume, release. */
CORUN_API void corun_daemon_ctl(void *user, const struct corun_ctl_peer *peer,
                                const struct corun_ctl_request *req, struct corun_ctl_buf *resp);

/* The access rules for the control socket from the configuration. */
CORUN_API void corun_daemon_ctl_access(const struct corun_daemon *d, struct corun_ctl_access *acc);

/* The current interval in nanoseconds (a control request may change it). */
CORUN_API uint64_t corun_daemon_interval_ns(const struct corun_daemon *d);

/*
 * corun_daemon_write_metrics() - writes the Prometheus text exposition to
 * @path atomically (a temporary file in the same folder, then rename), for
 * node_exporter's textfile collector. 0 or -errno.
 */
CORUN_API int corun_daemon_write_metrics(struct corun_daemon *d, const char *path);

/* Closes the parts and frees the daemon, restoring nothing (call
 * corun_daemon_restore_all first); accepts NULL. */
CORUN_API void corun_daemon_close(struct corun_daemon *d);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_DAEMON_H */
