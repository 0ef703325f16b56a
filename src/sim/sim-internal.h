/*
 * sim-internal.h — what the files of the sim box share: the simulation's
 * state, the precomputed topology arrays the solver runs on, the solver and
 * the seeded PRNG. Never exported.
 */
#ifndef CORUN_SIM_INTERNAL_H
#define CORUN_SIM_INTERNAL_H

#include <stdint.h>

#include "corun/sim.h"

/* ---- PRNG: splitmix64 to seed, xoshiro256** to draw (sim-rng.c) ------------ */
struct corun__rng {
    uint64_t s[4];
};
void corun__rng_seed(struct corun__rng *r, uint64_t seed);
uint64_t corun__rng_next(struct corun__rng *r);
/* Uniform in [0, 1). */
double corun__rng_unit(struct corun__rng *r);
/* Uniform integer in [0, n), n > 0. */
unsigned corun__rng_below(struct corun__rng *r, unsigned n);
/* Mixes two values into a seed (for per-task and per-run streams). */
uint64_t corun__seed_mix(uint64_t a, uint64_t b);

/* ---- the machine as arrays (built once per simulation) ---------------------- */
struct corun__sim_hw {
    unsigned ncpus, ncores, npkgs, nnuma, nl2, nl3;
    bool *usable;
    int *core, *pkg, *numa, *l2, *l3; /* per CPU; -1 none (then 0 for pkg/numa) */
    double *cap;                      /* per CPU: capacity (frequency factor) */
    unsigned *pkg_ncores;             /* cores per package */
    double *l2_mb, *l3_mb;            /* per domain size, 0 where not shared */
    int best_cpu;                     /* a usable CPU of the fastest kind */
};

/* ---- the solver (sim-model.c) ---------------------------------------------- */

/* Scratch arrays and outputs of one solve, sized for ntasks and the machine. */
struct corun__solve {
    unsigned ntasks;
    /* outputs per task */
    double *ips, *ghz, *cache_mb, *mpki, *lat_ns, *sigma, *share;
    /* outputs per memory domain */
    double *bw_bps, *mem_lat_ns;
    /* scratch */
    double *a, *k, *newips, *rho_l2, *rho_l3, *mlp_sum, *cpu_load_d;
    unsigned *cpu_load, *core_busy, *pkg_act;
    uint8_t *sib;
    int *touched_cpu;
};

int corun__solve_init(struct corun__solve *s, const struct corun__sim_hw *hw, unsigned ntasks);
void corun__solve_release(struct corun__solve *s);

/*
 * Solves the steady state of @ntasks tasks: task j in phase @ph[j] on CPU
 * @cpu[j] (-1: not running) with its memory on node @home[j] (NULL: the node
 * of its CPU), at time @t_s (for the throttle trace). Results in @s.
 */
void corun__solve_run(struct corun__solve *s, const struct corun__sim_hw *hw,
                      const struct corun_sim_machine *m, const struct corun_sim_phase *const *ph,
                      const int *cpu, const int *home, double t_s);

/* ---- the simulation (sim.c) ------------------------------------------------ */
struct corun__sim_task {
    struct corun_sim_task def;
    int cpu, last_cpu, home;
    bool placed_once, finished;
    unsigned migrations, mem_moves;
    double done_instr, finish_s, start_s;
    double stall_until_s; /* no progress before this: its pages are moving */
    double stall_s;       /* time stalled so, in total */
    double alone_equiv_s; /* Σ instructions / alone IPS: the time alone for this work */
    struct corun_sim_counters ctr;
    double alone_ips[CORUN_SIM_MAX_PHASES]; /* 0 until computed */
};

struct corun_sim {
    const struct corun_topo *topo;
    struct corun_sim_machine m;
    uint64_t seed;
    struct corun__sim_hw hw;
    unsigned ntasks;
    struct corun__sim_task *t;
    double now_s;
    bool dirty;                /* the solved state no longer matches the placement or phases */
    struct corun__solve cur;   /* the state now */
    struct corun__solve eval;  /* scratch for static evaluations */
    struct corun__solve alone; /* one task on an idle machine */
    const struct corun_sim_phase **ph;
    int *cpu_tmp, *home_tmp;
    unsigned *cur_phase; /* the phase of each task in cur */
    double effort;       /* search budget factor, (0, 1] */
};

int corun__hw_build(struct corun__sim_hw *hw, const struct corun_topo *topo,
                    const struct corun_sim_machine *m);
void corun__hw_release(struct corun__sim_hw *hw);

/* The phase of @t at time @t_s, and the time of its next phase change (INFINITY). */
unsigned corun__phase_at(const struct corun_sim_task *t, double t_s, double *next_s);

/* Brings sim->cur up to date with the placement and phases now. */
void corun__sim_refresh(struct corun_sim *sim);

/* Static STP of @cpu for sim's tasks at time now; NaN on a bad CPU. */
double corun__sim_eval(struct corun_sim *sim, const int *cpu);
/* The tasks' slowdowns (time relative to alone) in the last
 * corun__sim_eval(): in @norm their power mean of order @p (the mean for 1,
 * tending to the largest as @p grows), in @max the largest (1 at least). */
void corun__sim_slowdowns(const struct corun_sim *sim, double p, double *norm, double *max);

/* Parameter ranges of the classes (for random workloads), sim-task.c. */
void corun__class_range(int cls, struct corun_sim_phase *lo, struct corun_sim_phase *hi);

#endif
