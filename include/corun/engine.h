/*
 * corun/engine.h — the loop that wires the boxes together:
 *
 *     sample (a sensor) -> profile (the learner) -> place (a policy)
 *                       -> apply (an actuator)
 *
 * every interval, on a clock the caller chooses (the monotonic clock for
 * real processes, the simulator's clock in `corun sim`). The engine is
 * generic over backends: it sees tasks only as the targets the sensor and
 * actuator understand (PIDs, or the simulator's task indexes), so the same
 * code drives the simulator, `corun run`, `corun batch` and the daemon.
 *
 * Behaviour per interval (corun_engine_step()):
 *  - every task is read; the counter deltas and the CPU each task was pinned
 *    to for the whole interval go to the profiler;
 *  - during the warm-up nothing is placed (tasks stay where the kernel, or
 *    the optional warm-up policy, put them);
 *  - after it, the policy is asked for a plan. The first plan is applied
 *    whole. Later ones are applied only when their predicted gain over the
 *    current placement beats the move cost of the tasks they move
 *    (hysteresis), and at most max_moves tasks move per interval: moves
 *    that depend on each other (a task taking the CPU another leaves) go
 *    together, and the groups applied are those predicted to pay their
 *    moves' cost together (a group larger than the cap may go alone in an
 *    interval of its own). Where no part within the engine's own cap
 *    pays and a bigger part does, up to two seconds' worth of moves go
 *    at once, and no plan is made until the cap's rate has repaid them;
 *    a caller's max_moves is not reached past this way.
 *
 * An engine is not thread-safe; it owns its profiler, and borrows the
 * topology, the opened sensor and actuator states and the policy, which
 * must outlive it.
 */
#ifndef CORUN_ENGINE_H
#define CORUN_ENGINE_H

#include <sys/types.h>

#include <corun/act.h>
#include <corun/common.h>
#include <corun/policy.h>
#include <corun/profile.h>
#include <corun/sense.h>
#include <corun/topo.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A clock the engine reads and waits on: the seam a simulator replaces. */
struct corun_clock {
    /* The time now, in nanoseconds on this clock. */
    uint64_t (*now_ns)(void *ctx);
    /* Returns once the clock reads @t_ns or later (a simulator advances its
     * model to @t_ns). 0, or a negative errno that stops the run loop. */
    int (*wait_until)(void *ctx, uint64_t t_ns);
    void *ctx;
};

/* The monotonic clock of this machine (CLOCK_MONOTONIC, through the
 * library's syscall seam; waiting sleeps). */
CORUN_API struct corun_clock corun_clock_monotonic(void);

enum corun_engine_event_kind {
    CORUN_ENGINE_EV_MOVE,   /* a plan's move: @from -> @to (dense CPUs, -1 the kernel's choice) */
    CORUN_ENGINE_EV_UNDO,   /* the outcome check took a move back */
    CORUN_ENGINE_EV_MEMORY, /* memory followed: NUMA node (domain index) @from -> @to */
};

struct corun_engine_event {
    enum corun_engine_event_kind kind;
    unsigned idx;         /* the task */
    int from, to;
    int err;              /* 0, or the actuator's -errno (nothing changed) */
    unsigned confirmed;   /* MOVE: plans in a row that proposed it */
    bool in_place;        /* MOVE: pinned where the task runs already (nothing moved) */
    double speed_now;     /* MOVE with opts.predict: predicted speed where it was */
    double speed_planned; /* and where it goes; NaN otherwise */
};

struct corun_engine_opts {
    const struct corun_topo *topo;
    const struct corun_policy *policy;        /* NULL: "corun" */
    const struct corun_policy *warmup_policy; /* applied once at the start; NULL: none */
    const struct corun_sense_ops *sense;      /* opened: @sense_state from its open(); NULL none */
    void *sense_state;
    const struct corun_act_ops *act;          /* opened: @act_state from its open(); NULL none */
    void *act_state;
    struct corun_clock clock;                 /* now_ns NULL: corun_clock_monotonic() */
    uint64_t interval_ns;                     /* 0: 1 s */
    uint64_t warmup_ns;                       /* no placement before this; 0: 2 intervals */
    double move_cost;      /* predicted STP a moved task must gain; 0: 0.01; < 0: none */
    unsigned max_moves;    /* per interval after the first plan; 0: a quarter of the tasks
                              per second of interval, at least 1, on average
                              (the engine may reach past it, above) */
    uint64_t seed;
    const struct corun_profile_opts *profile; /* NULL: the defaults */
    /* Appended. The outcome check (on unless this is set): each change the
     * engine applies is judged on the instruction rates measured over the
     * intervals before and the two after it (six when a small loss is not
     * yet sure), and taken back if the tasks' summed relative speed fell by
     * more than 1% per task, or by less where four tasks or more agree on
     * the loss (docs/internals/engine.md; after the first interval when it
     * fell by more than 2%); the engine then holds
     * 4 intervals, doubling per consecutive failure up to 64. Tasks without
     * an instruction count (no PMU) are not judged; with none, every change
     * is kept. */
    bool no_outcome_check;
    /* Appended. Memory follows its task (on unless this is set, where the
     * actuator can move memory and the topology has several NUMA nodes):
     * a task moved to another node has its memory migrated there (the
     * actuator's move_memory, as numad does) as it is moved, and back if
     * the outcome check takes the change back (docs/internals/engine.md),
     * so it does not pay remote
     * latency for the rest of its run; a task whose move fails (no
     * permission, no NUMA support) is left where its memory is and not
     * tried again. The policy is told (corun_snapshot.mem_follows), and a
     * move to another node must then also gain @mem_move_cost. */
    bool no_mem_follow;
    double mem_move_cost; /* predicted STP, the first plan's; 0: 0.03 (256 MB at
                             1 GB/s over about 8 s); < 0: none. Later plans
                             pay a quarter of it: their trials take a
                             mispredicted one back */
    /* Appended. The package's turbo table as the hardware states it (the
     * clock with n busy cores over the clock with one, n = 1..@turbo_n at
     * [n-1]), handed to the policy (snapshot.turbo_rel); NULL: unknown. */
    const double *turbo_rel;
    unsigned turbo_n;
    /* Appended. Per-task hysteresis, for callers whose tasks come and go
     * and were not started by corun (corund): a task moves only once the
     * policy has planned the same CPU for it in @confirm plans in a row
     * (0 or 1: at once), and a task the engine moved stays at least
     * @min_dwell intervals where it is. With @max_moves set, the cap holds
     * for every plan, first placements included. */
    unsigned confirm;
    unsigned min_dwell;
    /* Appended. Called for every move the engine applies or fails to apply
     * and every memory move it makes or fails to make (NULL: none); with
     * @predict, each plan's predicted speeds are kept for the events and
     * corun_engine_task_info(). */
    void (*on_event)(void *ctx, const struct corun_engine_event *ev);
    void *event_ctx;
    bool predict;
    /* Appended. A second opinion, where the predictor cannot tell two
     * placements apart (docs/internals/engine.md, "A second opinion"):
     * once the policy's plans have settled (from the sixth plan on, a
     * plan that moves no task, every task pinned, nothing being measured),
     * @second_policy's plan for the same snapshot is tried if it is
     * predicted within 0.5% of the placement's STP and moves no task to
     * another NUMA node. It is measured over six intervals and kept only if
     * the tasks' summed relative speed rose by more than 0.3% per task;
     * else it is taken back. Once per set of tasks (one joining or leaving
     * allows another). Not tried without the outcome check or where a
     * task has no instruction counts (nothing would judge it), nor under a
     * caller's @max_moves it does not fit, nor with @confirm above 1 or
     * @min_dwell set, which would apply it piecemeal, nor with a
     * @move_cost above the default. NULL: DI's plan
     * under the corun policy, none under any other; @no_second_opinion:
     * none. */
    const struct corun_policy *second_policy;
    bool no_second_opinion;
};

struct corun_engine_task {
    pid_t target;          /* what the sensor and actuator know it by */
    unsigned id;           /* the caller's number, reported in profiles */
    enum corun_class hint; /* CORUN_CLASS_UNKNOWN: learn it */
    double weight;         /* <= 0: 1 */
    /* Appended. The caller already attached @handle to the target with the
     * engine's sensor (a batch measuring the job it started): the engine
     * reads it rather than attaching a second set of counters, and never
     * detaches it (the caller does, after corun_engine_remove()). */
    bool shared_handle;
    int handle;
    /* Appended. Not read: the engine attaches no sensor to it (the caller
     * found the sensor refused it: EMFILE, EACCES) and places it on its
     * hint and the class priors until corun_engine_attach() succeeds. */
    bool unread;
};

struct corun_engine_stats {
    uint64_t intervals;    /* steps taken */
    uint64_t plans;        /* times the policy was asked */
    uint64_t placements;   /* tasks pinned for the first time */
    uint64_t migrations;   /* tasks moved from one pinned CPU to another, or unpinned */
    uint64_t held;         /* plans not applied: gain below the move cost */
    uint64_t capped;       /* moves put off by the per-interval cap */
    uint64_t errors;       /* failed reads and applies (the task is kept) */
    int last_error;        /* the last of those, 0 if none */
    /* Appended: the outcome check. */
    uint64_t trials;       /* changes judged on measured rates */
    uint64_t reverted;     /* of those, taken back */
    /* Appended: memory that followed its task to another node. */
    uint64_t mem_moves;
    /* Appended: plans not applied because a change was taken back lately
     * and this one's predicted gain is below what that one fell short of
     * its prediction (the engine's doubt; docs/internals/engine.md). */
    uint64_t doubted;
    /* Appended: second opinions tried (opts.second_policy), and of those
     * kept. */
    uint64_t second_tried;
    uint64_t second_kept;
};

struct corun_engine;

/*
 * corun_engine_new() - an engine with @opts (copied; what it points to is
 * borrowed). Without a sensor tasks are never read: they are placed on
 * their hints and the class priors. Without an actuator nothing is placed:
 * the engine only profiles (a daemon observing). 0, -EINVAL (no topology),
 * -ENOMEM.
 */
CORUN_API int corun_engine_new(const struct corun_engine_opts *opts, struct corun_engine **out);

/*
 * corun_engine_free() - detaches every task from the sensor and frees the
 * engine. It does not restore placements: call corun_engine_restore() first
 * where that is wanted. Accepts NULL.
 */
CORUN_API void corun_engine_free(struct corun_engine *e);

/*
 * corun_engine_add() - starts managing @task: attaches it to the sensor and
 * gives it a profile. Its index (0, 1, ... in order of adding; a removed
 * task's index is given to a later one, so that an engine whose tasks come
 * and go does not grow) goes to *@idx. 0, the sensor's -errno, or -ENOMEM.
 */
CORUN_API int corun_engine_add(struct corun_engine *e, const struct corun_engine_task *task,
                               unsigned *idx);

/*
 * corun_engine_remove() - stops managing task @idx (it exited, or the caller
 * lets it go): detaches it and, if it was pinned, restores it. 0, -ENOENT
 * for an unknown or removed task, or the actuator's -errno (the task is
 * removed anyway).
 */
CORUN_API int corun_engine_remove(struct corun_engine *e, unsigned idx);

/*
 * corun_engine_step() - one interval at the clock's current time, as
 * described above. Per-task failures (a task that exited: -ESRCH) are
 * counted in the stats and do not stop the step. 0 or -ENOMEM, or the
 * policy's -errno.
 */
CORUN_API int corun_engine_step(struct corun_engine *e);

/*
 * corun_engine_run() - steps every interval for @duration_ns on the clock
 * (0: until *@stop), waiting on the clock between steps; returns early when
 * @stop (may be NULL) becomes true. 0, or the first -errno of a step or of
 * the clock.
 */
CORUN_API int corun_engine_run(struct corun_engine *e, uint64_t duration_ns,
                               volatile const bool *stop);

/*
 * corun_engine_set_hint() - the class of task @idx as the caller learned it
 * after adding it (corun_profiler_set_hint()); CORUN_CLASS_UNKNOWN gives
 * the classification back to the counters. 0 or -ENOENT.
 */
CORUN_API int corun_engine_set_hint(struct corun_engine *e, unsigned idx, enum corun_class hint);

/*
 * corun_engine_set_home() - says that task @idx's memory lives on NUMA node
 * @node (logical index; -1: unknown), as the caller knows it (the first
 * placement of a launched task, /proc/PID/numa_maps, the simulator's first
 * touch). Policies then count remote latency when they move it off that
 * node. 0 or -ENOENT, -EINVAL for a node the topology does not have.
 */
CORUN_API int corun_engine_set_home(struct corun_engine *e, unsigned idx, int node);

/*
 * corun_engine_set_cpu() - says that task @idx, not pinned by the engine,
 * runs on dense CPU @cpu now (-1: unknown), as the caller saw it (the
 * "processor" field of /proc/PID/stat, the simulator's baseline). Snapshots
 * then show that CPU, so a policy that weighs moves (corun) does so from
 * the first plan, and a task a plan leaves there is pinned without a move.
 * 0, -ENOENT, or -EINVAL for a CPU that is not usable.
 */
CORUN_API int corun_engine_set_cpu(struct corun_engine *e, unsigned idx, int cpu);

/*
 * corun_engine_adopt() - says that the caller itself pinned task @idx to
 * dense CPU @cpu, through the engine's actuator (a batch runner placing a
 * job as it starts it). From then on the engine counts the task as pinned
 * by itself since now: moving it is subject to hysteresis and the cap, and
 * corun_engine_remove() restores it. @cpu -1: the caller gave it back to
 * the kernel (nothing is applied). Nothing is applied or counted in the
 * stats. 0, -ENOENT for an unknown or removed task, -EINVAL for a CPU that
 * is not usable.
 */
CORUN_API int corun_engine_adopt(struct corun_engine *e, unsigned idx, int cpu);

/*
 * corun_engine_set_active() - whether task @idx is busy enough to matter
 * (on when added). An inactive task is neither read nor placed: it stays
 * where it is, out of the policy's snapshots, as an idle process neither
 * suffers nor causes interference; its rates start afresh when it becomes
 * active again. 0 or -ENOENT.
 */
CORUN_API int corun_engine_set_active(struct corun_engine *e, unsigned idx, bool active);

/*
 * corun_engine_attach() - tries the sensor again for task @idx, added
 * unread: from the next step its counters are read. 0 (also when it is
 * read already), -ENOENT, or the sensor's -errno (it stays unread).
 */
CORUN_API int corun_engine_attach(struct corun_engine *e, unsigned idx);

/*
 * corun_engine_set_placing() - placing on or off (on at first; always off
 * without an actuator): while off, steps read and profile the tasks but
 * plan nothing, and a change being judged is kept unjudged.
 */
CORUN_API void corun_engine_set_placing(struct corun_engine *e, bool on);

/*
 * corun_engine_retune() - takes, from @o, what may change while tasks run:
 * the policy (NULL: "corun"), interval_ns, max_moves, confirm, min_dwell
 * (0 each: the defaults) and no_mem_follow (memory that the kernel refused
 * to move for good stays refused). The wiring (topology, sensor, actuator,
 * clock) is kept.
 */
CORUN_API void corun_engine_retune(struct corun_engine *e, const struct corun_engine_opts *o);

enum corun_engine_state {
    CORUN_ENGINE_WAITING,    /* not planned for yet (warm-up, or just added) */
    CORUN_ENGINE_IDLE,       /* inactive: left where it is */
    CORUN_ENGINE_SETTLED,    /* where the last plan wants it */
    CORUN_ENGINE_CONFIRMING, /* a move planned fewer than confirm times in a row */
    CORUN_ENGINE_DWELLING,   /* a move planned; moved less than min_dwell intervals ago */
    CORUN_ENGINE_HELD,       /* a move planned; gain below its cost, or after a failed trial */
    CORUN_ENGINE_CAPPED,     /* a move planned; put off by the cap on moves */
    CORUN_ENGINE_REFUSED,    /* the actuator may not move it (EPERM, EACCES) or its owner
                              * set its affinity (EBUSY): left alone */
};

struct corun_engine_task_info {
    int cpu;             /* dense CPU it is pinned to, -1 the kernel's choice */
    int planned;         /* what the last plan wanted, -1 the kernel's choice */
    unsigned streak;     /* plans in a row that wanted @planned */
    unsigned dwelt;      /* whole intervals since the engine last moved it */
    enum corun_engine_state state;
    double speed_now, speed_planned; /* opts.predict: the last plan's; else NaN */
};

/* What the engine knows of task @idx and decided for it. 0 or -ENOENT. */
CORUN_API int corun_engine_task_info(const struct corun_engine *e, unsigned idx,
                                     struct corun_engine_task_info *out);

/* Puts every task the engine pinned back as it was (actuator restore_all). */
CORUN_API int corun_engine_restore(struct corun_engine *e);

CORUN_API void corun_engine_stats(const struct corun_engine *e, struct corun_engine_stats *out);

/* Copies the profile of task @idx into *@out, its cpu field set to where the
 * task is pinned now (-1 unpinned). 0 or -ENOENT. */
CORUN_API int corun_engine_profile(const struct corun_engine *e, unsigned idx,
                                   struct corun_task_profile *out);

/* The dense CPU task @idx is pinned to, -1 when unpinned, unknown or removed. */
CORUN_API int corun_engine_task_cpu(const struct corun_engine *e, unsigned idx);

/* Number of task indexes given out (removed tasks' included). */
CORUN_API unsigned corun_engine_ntasks(const struct corun_engine *e);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_ENGINE_H */
