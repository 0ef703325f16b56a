/*
 * daemon-internal.h — the daemon's state, shared by its files: daemon.c (life
 * cycle, control requests, status), daemon-loop.c (the tick, the engine it
 * drives and the wiring to the sense/act/policy boxes) and daemon-metrics.c
 * (the Prometheus file).
 */
#ifndef CORUN_DAEMON_INTERNAL_H
#define CORUN_DAEMON_INTERNAL_H

#include <sys/types.h>

#include "corun/act.h"
#include "corun/daemon.h"
#include "corun/engine.h"
#include "corun/policy.h"
#include "corun/procsel.h"
#include "corun/sense.h"
#include "corun/topo.h"

/* One process the daemon looks after. */
struct managed {
    pid_t pid;
    uint64_t start_ticks; /* with pid: the process's identity */
    uid_t uid;
    char comm[CORUN_PROCSEL_COMM_LEN];
    unsigned nthreads;
    int last_cpu;          /* OS CPU it last ran on, from /proc */
    double cpu_percent;    /* over the last interval */
    int eidx;              /* its engine task; -1: not handed over (idle until now) */
    bool unread;           /* handed over unread: the sensor refused it */
    unsigned attach_retry; /* ticks before a refused attach is tried again */
    /* The engine's profile (CPU use from the selector); NaN where not measured. */
    struct corun_task_profile prof;
    int placed;               /* dense CPU we put it on; -1: the kernel's choice */
    struct corun_cpuset mask; /* the mask we applied (OS numbering), when placed */
    bool denied;              /* released by an administrator: never placed again */
    /* Its threads want more than one CPU (daemon-spread.c): left to the
     * kernel, never pinned to one, until it has wanted about one CPU for
     * spread_calm busy ticks in a row. */
    bool spread;
    unsigned spread_calm;
    double cpus_wanted;            /* CPUs it asked for over the last interval; NaN unknown */
    struct corun_proc_sched sched; /* the scheduler's figures at tick sched_tick (0: none) */
    uint64_t sched_tick, sched_ns;
    bool owner_took_over;     /* its mask changed from ours: someone pinned it */
    bool seen;                /* in this tick's selection */
    char why[256];            /* where it is and why, for status */
    /* The policy's predicted speed (1 = alone on a fastest CPU) where it is
     * now and where the plan puts it; NaN when not predicted (idle). */
    double speed_now, speed_planned;
};

struct migration {
    double t_unix; /* wall clock, for people */
    pid_t pid;
    char comm[CORUN_PROCSEL_COMM_LEN];
    uid_t uid;
    int from, to; /* OS CPU numbers; -1 the kernel's choice */
    int err;      /* 0 or the -errno that stopped it */
    char why[160];
};

struct corun_daemon {
    struct corun_daemon_config cfg; /* owned copy */
    struct corun_procsel *sel;
    const struct corun_topo *topo;
    const struct corun_sense_ops *sense;
    void *sense_state;
    const struct corun_act_ops *act;
    void *act_state;
    const struct corun_policy *policy;
    char observe_why[256]; /* empty: placing */
    char sensor_why[160];  /* why there is no sensor */
    bool paused;

    struct managed *procs; /* sorted by pid */
    size_t nprocs, capprocs;

    struct migration *hist; /* ring of cfg.history */
    size_t nhist, hist_next;

    uint64_t started_ns, last_tick_ns, ticks;
    uint64_t tick_cost_ns; /* CPU time the last tick took */
    uint64_t migrations_total, restores_total;
    uint64_t mem_moves_total; /* processes whose memory followed them to a node */
    bool mem_refused;         /* the kernel refused a memory move for good (EPERM, ENOSYS) */
    uint64_t err_esrch, err_eperm, err_other;
    unsigned scan_errors;
    double turbo_rel[CORUN_DAEMON_TURBO_MAX]; /* parts.turbo_rel, lent to the engine */
    unsigned turbo_n;
    /* The engine that samples, profiles, places and applies for the busy
     * processes; NULL without a topology. */
    struct corun_engine *eng;
};

/* Chooses the parts for @cfg: the topology, sensor, actuator and policy by
 * name, with the reason any is missing. Defined in daemon-loop.c: the one place
 * that knows which boxes exist. */
int corun__daemon_wire(const struct corun_daemon_config *cfg, struct corun_daemon_parts *parts,
                       struct corun_topo **topo_out, char *why, size_t len);

/* Opens the engine for @d's parts and configuration (none without a
 * topology). 0 or corun_engine_new()'s -errno. In daemon-loop.c. */
int corun__daemon_engine_open(struct corun_daemon *d);

/* Hands the engine what may change while running (policy, interval,
 * max_migrations, min_dwell, confirm, mem_follow) after the configuration
 * changed. */
void corun__daemon_retune(struct corun_daemon *d);

/* Records a migration (or a failed attempt) in the ring. */
void corun__daemon_record(struct corun_daemon *d, const struct managed *m, int from, int to,
                          int err, const char *why);

/* The OS number of dense CPU @dense, or -1. */
int corun__daemon_os_cpu(const struct corun_daemon *d, int dense);

/* Puts @m back under the kernel's choice when we had moved it. @gives_back:
 * the process is there and its mask still ours, so the actuator puts its
 * own back (counted in restores_total); not when it is gone or its owner
 * set its mask since (the actuator then only drops the journal entry).
 * 0 or -errno. */
int corun__daemon_release(struct corun_daemon *d, struct managed *m, bool gives_back);

/* A deep copy of @src into @dst (zeroed or released before). 0 or -ENOMEM. */
int corun__daemon_config_copy(struct corun_daemon_config *dst,
                              const struct corun_daemon_config *src);

/*
 * corun__daemon_spread_judge() - whether a process stays (or becomes)
 * spread, left to the kernel because its threads want more than one CPU,
 * given that it was (@spread) and that it asked for @wanted CPUs over the
 * last interval (NaN: unknown, nothing changes). *@calm counts the ticks in
 * a row it has wanted about one CPU since. Pure; the rule and its numbers
 * are in daemon-spread.c.
 */
bool corun__daemon_spread_judge(bool spread, unsigned *calm, double wanted);

/*
 * corun__daemon_spread_check() - reads busy or placed process @m's scheduler
 * figures (and where it last ran) and judges it: true while it is spread,
 * and then it must stay out of the engine's plans; a placed one is given
 * back to the kernel here, through the engine and the actuator, and the
 * move is recorded. Its why says so.
 */
bool corun__daemon_spread_check(struct corun_daemon *d, struct managed *m);

/* Forgets managed process @i (taking it from the engine). */
void corun__daemon_forget(struct corun_daemon *d, size_t i);

#endif /* CORUN_DAEMON_INTERNAL_H */
