/*
 * engine-internal.h — the engine's state, shared by its files: engine.c
 * (life cycle, sampling, the step), engine-apply.c (asking the policy and
 * applying its plan under hysteresis, memory following) and engine-check.c
 * (the outcome check).
 */
#ifndef CORUN_ENGINE_INTERNAL_H
#define CORUN_ENGINE_INTERNAL_H

#include "corun/engine.h"

/* Outcome check: intervals measured on each side of a change, the loss (in
 * summed relative speed, per task measured) beyond which it is taken back,
 * the loss over the first interval beyond which it is taken back at once,
 * and the hold after a failed trial, doubled per consecutive failure. */
#define CHECK_WINDOW   2
#define CHECK_MARGIN   0.01
/* A trial whose tasks lost on the mean by more than CHECK_Z_OPEN standard
 * errors of it, but not enough to be taken back, is measured on up to
 * CHECK_WINDOW_LONG intervals after the change before it is judged. */
#define CHECK_WINDOW_LONG 6
#define CHECK_Z_OPEN      1.0
/* ... narrowed to CHECK_Z standard errors of the tasks' mean change, not
 * below CHECK_FLOOR, when at least CHECK_MIN_TASKS tasks were measured. */
#define CHECK_Z         2.0
#define CHECK_FLOOR     0.003
#define CHECK_MIN_TASKS 4
#define CHECK_EARLY    0.02
#define CHECK_HOLD     4
#define CHECK_HOLD_MAX 64
/* A plan after the first must gain this share of opts.mem_move_cost per
 * task it moves off its memory's node. The first plan is judged against
 * the kernel's placement, which a plan the predictor gets wrong still
 * beats, so its cost stands for that risk as well as the stall; a later
 * plan's trial is judged against the plan it replaces and takes a wrong
 * one back, and what is left to pay for is the stall (64 MB at 1 GB/s
 * over about 8 s). Measured on bench/policies (docs/internals/engine.md). */
#define MEM_LATER_SHARE 0.25
/* How far past the engine's own move cap a change may go, in seconds of
 * the cap's rate (a quarter of the tasks per second), when no part of it
 * within the cap pays and a bigger part does (pick_joint(),
 * engine-apply.c). The moves beyond the cap are a debt: no plan is made
 * until the cap's rate has repaid it. */
#define CAP_REACH_S 2
/* A moved task's predicted gain when the caller names no move cost
 * (opts.move_cost). */
#define MOVE_COST_DEFAULT 0.01

/* A second opinion (engine-second.c): asked once the policy's plans have
 * settled, from the SECOND_AFTER-th plan on; tried when predicted within
 * SECOND_WITHIN of the placement's STP (a share of it); kept when the
 * tasks' summed relative speed rose by more than CHECK_FLOOR per task
 * measured. Within 1%, plans rated 0.9-1.0% below were tried and lost
 * 1.7% in the simulator, and the runs they were taken back in ended lower
 * than without them; those that gained were rated 0.2-0.4% below
 * (docs/internals/engine.md, "A second opinion"). */
#define SECOND_AFTER  6
#define SECOND_WITHIN 0.005
/* ... and when it moves at most this many tasks to another NUMA node, once
 * like tasks are traded (engine-second.c). */
#define SECOND_ACROSS 1

/* The doubt a taken-back change leaves (what it fell short of its
 * prediction, in summed relative speed) shrinks by this factor per
 * interval: halved in 64, the longest hold. */
#define DOUBT_DECAY 0.98923

/* A second opinion (engine-second.c) for the set of tasks: may be asked,
 * being measured, tried. */
enum second_state { SECOND_DUE, SECOND_TRIAL, SECOND_DONE };

struct etask {
    struct corun_engine_task t;
    int handle;      /* the sensor's */
    bool own_handle; /* attached by the engine, detached by it */
    bool live;
    bool have_prev;
    struct corun_sample prev;
    int cpu;            /* pinned to, dense; -1 not pinned */
    uint64_t pinned_at; /* clock time of the last change of cpu */
    unsigned slot;      /* profiler slot */
    int home;           /* NUMA node of its memory, -1 unknown */
    bool mem_stuck;     /* its memory could not be moved: not tried again */
    int tr_home;        /* moved in the trial in progress with its memory: the node
                           its memory was on before (it goes back there if taken
                           back); -1 none */
    int seen_cpu;       /* where the kernel runs it while unpinned, -1 unknown */
    /* Outcome check: instruction rates of the last whole intervals since the
     * last change of placement (rate[0] the newest), and at the start of the
     * trial in progress its mean rate before, its best rate seen and where it
     * was pinned. */
    double rate[CHECK_WINDOW_LONG], best_rate;
    unsigned nrate;
    double tr_before; /* NaN: not measured before the trial */
    double tr_speed;  /* the predicted speed where it ran before the change, NaN unknown */
    int tr_cpu;       /* pinned CPU before the trial, -1 unpinned */
    /* Per-task hysteresis and what was decided (corun_engine_task_info). */
    bool active;       /* read and placed (corun_engine_set_active) */
    bool refused;      /* the actuator may not move it: left where it is */
    int planned;       /* what the last plan wanted, -1 the kernel's choice */
    unsigned streak;   /* plans in a row that wanted @planned; 0: none yet */
    bool moved;        /* the engine moved it, at @moved_at */
    uint64_t moved_at;
    enum corun_engine_state state;
    double speed_now, speed_planned; /* the last plan's prediction (opts.predict) */
};

struct corun_engine {
    struct corun_engine_opts o;
    struct corun_profiler *prof;
    struct etask *tasks;
    unsigned ntasks, cap;
    uint64_t start_ns;
    bool started;
    unsigned round;
    struct corun_engine_stats st;
    /* Outcome check. */
    /* Clock time of the last change of placement, or, when the change
     * being measured moved memory with its tasks, one interval after it:
     * intervals that begin before it are not the placement's (they hold
     * the stall of the pages moving) and are not measured. */
    uint64_t changed_ns;
    bool trial;          /* a change is being measured */
    bool arm;            /* the next change of placement starts a trial */
    uint64_t tr_begun;   /* clock time the trial in progress began */
    unsigned window;     /* intervals after the change it is judged on */
    bool early_ok;       /* the trial in progress may be taken back after one interval */
    uint64_t mem_settled_ns; /* clock time by which the last memory moved has settled */
    unsigned hold;       /* intervals left without plans */
    double debt;         /* moves made past the cap (CAP_REACH_S), not yet repaid */
    unsigned fails;      /* consecutive failed trials */
    double tr_gain;      /* predicted gain of the change being measured, NaN unknown */
    bool tr_first;       /* that change is the first plan */
    enum second_state second; /* the second opinion, for this set of tasks */
    unsigned second_gap, second_wait; /* settled plans between asks, and left */
    double doubt;        /* predicted gain a change must beat: what the last one taken
                            back fell short of its prediction, decaying; 0 none */
    bool mem_follows;    /* memory is moved with its task (opts.no_mem_follow) */
    bool mem_refused;    /* the kernel refused a memory move for good (EPERM, ENOSYS) */
    bool placing;        /* plans are made (an actuator, corun_engine_set_placing) */
    bool warming;        /* the warm-up placement, applied whole, is being made */
};

/* engine-apply.c */
void corun__engine_note_error(struct corun_engine *e, int err);
int corun__engine_move(struct corun_engine *e, struct etask *t, int cpu, uint64_t now,
                       enum corun_engine_event_kind kind);
void corun__engine_follow_memory(struct corun_engine *e, struct etask *t, int cpu, int where,
                                 uint64_t now);
void corun__engine_memory_to(struct corun_engine *e, struct etask *t, int node, uint64_t now);
int corun__engine_place(struct corun_engine *e, uint64_t now);

/* engine-second.c */
bool corun__engine_second(struct corun_engine *e, const struct corun_snapshot *snap,
                          const unsigned *live, const int *cur, int *want, bool held, double base,
                          double *gain);

/* engine-check.c */
void corun__engine_world_changed(struct corun_engine *e, uint64_t now);
void corun__engine_trial_begin(struct corun_engine *e, uint64_t now);
enum corun__verdict { CORUN__WAIT, CORUN__KEEP, CORUN__UNDO };
enum corun__verdict corun__engine_trial_judge(struct corun_engine *e, uint64_t now);
void corun__engine_note_rate(struct corun_engine *e, struct etask *t,
                             const struct corun_sample *cur);

#endif /* CORUN_ENGINE_INTERNAL_H */
