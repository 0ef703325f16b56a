/*
 * corun/sim.h — a deterministic model of a machine running a set of tasks,
 * where corun's policies are judged on machines we do not have.
 *
 * A simulation is a topology (corun/topo.h, from any source) plus resource
 * parameters (struct corun_sim_machine: a named preset or defaults derived
 * from the vendor and cache sizes), and tasks described by the parameters of
 * ../shared/SIMULATOR.md (struct corun_sim_phase). Each task runs on one CPU;
 * the model solves, as a damped fixed point, the contention equations for
 * frequency (turbo by active cores, throttle traces), shared caches (shares by
 * insertion rate), memory bandwidth and loaded latency per NUMA node, and SMT
 * issue sharing; simulated time advances from event to event (phase changes,
 * throttle steps, task completions, moves), so a run costs one solve per event
 * whatever its length.
 *
 * Policies never see this header's ground truth: they read counters through
 * the sense-sim backend (instructions, cycles, ref_cycles, LLC references and
 * misses, task clock, with seeded noise) and act through act-sim; both take a
 * struct corun_sim * as their backend_cfg. The engine drives a simulation with
 * corun_sim_step() and reads its clock with corun_sim_now_ns().
 *
 * Determinism: the same topology, machine, tasks and seed give bit-identical
 * results on any machine. Nothing reads the wall clock; every random choice
 * comes from a PRNG seeded by the caller.
 *
 * Thread-safety: a simulation is not safe for concurrent use; distinct
 * simulations may run in distinct threads. Workloads and machines are plain
 * data.
 */
#ifndef CORUN_SIM_H
#define CORUN_SIM_H

#include <corun/act.h>
#include <corun/common.h>
#include <corun/engine.h>
#include <corun/policy.h>
#include <corun/sense.h>
#include <corun/topo.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tasks and workloads ---------------------------------------------------- */

/* The class presets of SIMULATOR.md (Xie & Loh's animals). */
enum corun_sim_class {
    CORUN_SIM_COMPUTE_INT = 0,
    CORUN_SIM_COMPUTE_FP,
    CORUN_SIM_SHEEP,
    CORUN_SIM_RABBIT,
    CORUN_SIM_CHASING,
    CORUN_SIM_STREAMING,
    CORUN_SIM_NCLASSES,
    CORUN_SIM_CUSTOM = -1 /* no class given: parameters only */
};

/* "compute-int", "compute-fp", "sheep", "rabbit", "chasing", "streaming";
 * "custom" for CORUN_SIM_CUSTOM; NULL out of range. */
CORUN_API const char *corun_sim_class_name(int cls);
/* The class named @name, or -EINVAL. */
CORUN_API int corun_sim_class_by_name(const char *name);
/* The policy-facing class hint of a simulator class (policy.h). */
CORUN_API enum corun_class corun_sim_class_hint(int cls);

/* What a task does during one phase (SIMULATOR.md, "Task"). */
struct corun_sim_phase {
    double cpi_core;    /* cycles per instruction with a perfect LLC */
    double u_disp;      /* share of the core's issue capacity used alone */
    double mpki_max;    /* LLC misses per kilo-instruction with no cache */
    double mpki_min;    /* ... with all the cache it wants */
    double ws_mb;       /* working-set scale of the miss curve, MB */
    double mlp;         /* overlapped memory requests */
    double pf;          /* memory traffic per demand miss (prefetch, writeback) */
    double smt_penalty; /* slowdown of memory time when the SMT sibling is busy */
    double duration_s;  /* length of the phase; 0 for a task with one phase */
};

#define CORUN_SIM_MAX_PHASES 8
#define CORUN_SIM_NAME_MAX   48

struct corun_sim_task {
    char name[CORUN_SIM_NAME_MAX];
    int cls;             /* enum corun_sim_class or CORUN_SIM_CUSTOM */
    double instructions; /* work to do; 0: runs for the whole simulation */
    unsigned nphases;    /* 1..CORUN_SIM_MAX_PHASES; phases repeat in order */
    struct corun_sim_phase phase[CORUN_SIM_MAX_PHASES];
    /* Appended: the memory a page migration moves, MB (resident set);
     * 0: corun_sim_task_rss_mb()'s default. */
    double rss_mb;
};

/* The memory task @t has resident, MB: its rss_mb, else twice the working
 * set of its first phase, at least 16 MB (code, stack and heap around it). */
CORUN_API double corun_sim_task_rss_mb(const struct corun_sim_task *t);

/*
 * corun_sim_class_preset() - the parameters of class @cls (midpoints of the
 * ranges of SIMULATOR.md, calibrated; see docs/internals/sim.md) in *@out.
 * 0, or -EINVAL for an unknown class.
 */
CORUN_API int corun_sim_class_preset(int cls, struct corun_sim_phase *out);

/*
 * corun_sim_phase_check() - whether every parameter of @p is in its domain
 * (positive cpi, 0 < u_disp <= 1, 0 <= mpki_min <= mpki_max, ws > 0,
 * mlp >= 1, pf >= 1, 0 <= smt_penalty <= 4). On false, *@why names the
 * first bad parameter.
 */
CORUN_API bool corun_sim_phase_check(const struct corun_sim_phase *p, const char **why);

struct corun_sim_workload {
    unsigned ntasks;
    struct corun_sim_task *tasks;
};

/*
 * corun_sim_workload_parse() - parse the text of a workload file (format in
 * docs/sim-workloads.md): one task per line, `NAME [class=PRESET] [count=N]
 * [param=value ...] [| phase ...]`, `#` comments. @file is the name used in
 * error messages. Returns 0 and a workload in *@out, -EINVAL with
 * "FILE:LINE: reason" in @err (@errlen bytes) for a bad line or an empty
 * workload, -E2BIG above CORUN_SIM_MAX_TASKS tasks, -ENOMEM.
 */
CORUN_API int corun_sim_workload_parse(const char *text, const char *file,
                                       struct corun_sim_workload **out, char *err, size_t errlen);

/* Reads and parses the file @path; -errno of the read, with @err set, or as above. */
CORUN_API int corun_sim_workload_load(const char *path, struct corun_sim_workload **out, char *err,
                                      size_t errlen);

/*
 * corun_sim_workload_random() - @n tasks drawn from the class presets with
 * each parameter jittered within its class range, from @seed. 0, -EINVAL for
 * n == 0 or above CORUN_SIM_MAX_TASKS, -ENOMEM.
 */
CORUN_API int corun_sim_workload_random(unsigned n, uint64_t seed, struct corun_sim_workload **out);

/* Releases a workload; accepts NULL. */
CORUN_API void corun_sim_workload_free(struct corun_sim_workload *w);

#define CORUN_SIM_MAX_TASKS 4096

/* ---- machines --------------------------------------------------------------- */

enum corun_sim_turbo {
    CORUN_SIM_TURBO_FLAT = 0, /* no turbo: always the base frequency */
    CORUN_SIM_TURBO_STEPS,    /* Intel-like: four bins from 1-core to all-core */
    CORUN_SIM_TURBO_LINEAR,   /* AMD-like: linear from 1-core to all-core */
};

#define CORUN_SIM_MAX_THROTTLE 16

/* Resource parameters of a machine (SIMULATOR.md, "Machine"). */
struct corun_sim_machine {
    char name[32];    /* preset name, or "defaults" */
    char origin[192]; /* where the figures come from, for the output */
    double base_ghz;  /* ref_cycles tick at this rate */
    double turbo1_ghz, turbo_all_ghz;
    enum corun_sim_turbo turbo;
    double w_eff;        /* effective SMT issue width; capacity w_eff / 2.7 */
    double stall_hold;   /* share of issue capacity a memory-stalled thread holds */
    double mlp_core;     /* misses one core keeps in flight (fill buffers) */
    double bmax_gbps;    /* sustained bandwidth per memory domain, GB/s */
    double l0_ns;        /* idle memory latency */
    double remote;       /* latency factor for another node's memory */
    double l3_mb, l2_mb; /* cache sizes used where the topology has none */
    unsigned nthrottle;  /* throttle trace: from t_s on, cap at cap_ghz (0: none) */
    struct {
        double t_s, cap_ghz;
    } throttle[CORUN_SIM_MAX_THROTTLE];
    /* Appended: the rate at which the kernel migrates a task's pages to
     * another node (migrate_pages(2)), GB/s; 0: 1 GB/s. */
    double migrate_gbps;
};

/* Preset names in order ("skx28", "icx40", "spr56", "milan64", "genoa96");
 * NULL past the end. */
CORUN_API const char *corun_sim_preset_at(unsigned i);

/*
 * corun_sim_machine_preset() - the preset @name: its parameters in *@m and,
 * in *@synthetic, the hwloc synthetic description of its topology (one
 * package). 0, or -ENOENT for an unknown name.
 */
CORUN_API int corun_sim_machine_preset(const char *name, struct corun_sim_machine *m,
                                       const char **synthetic);

/*
 * corun_sim_machine_defaults() - parameters for @topo: a preset when the CPU
 * model names a known part, otherwise defaults by vendor, core count and
 * cache sizes; m->origin says which. Never fails.
 */
CORUN_API void corun_sim_machine_defaults(const struct corun_topo *topo,
                                          struct corun_sim_machine *m);

/* The turbo frequency of a package with @n_active of @ncores cores busy. */
CORUN_API double corun_sim_turbo_ghz(const struct corun_sim_machine *m, unsigned n_active,
                                     unsigned ncores);

/*
 * corun_sim_turbo_table() - the turbo table of @m for a package of @topo, as
 * the engine takes it (corun_engine_opts.turbo_rel): the clock with n busy
 * cores over the clock with one, n = 1..*@n. malloc'd; NULL when @topo has
 * no cores or on -ENOMEM.
 */
CORUN_API double *corun_sim_turbo_table(const struct corun_topo *topo,
                                        const struct corun_sim_machine *m, unsigned *n);

/* Loaded latency at utilisation @u (clamped to 0..0.99): l0·(1 + 0.6·u^1.5). */
CORUN_API double corun_sim_loaded_latency_ns(const struct corun_sim_machine *m, double u);

/* ---- simulations ------------------------------------------------------------ */

struct corun_sim;

/*
 * corun_sim_create() - a simulation of @ntasks tasks (copied) on @topo
 * (which must outlive it) with the resources @m, at time 0, every task
 * unplaced. Unplaced tasks do not run. Returns 0, -EINVAL for ntasks == 0 or a
 * task with a bad parameter, -ENODEV for a topology without a usable CPU,
 * -ENOMEM.
 */
CORUN_API int corun_sim_create(const struct corun_topo *topo, const struct corun_sim_machine *m,
                               const struct corun_sim_task *tasks, unsigned ntasks, uint64_t seed,
                               struct corun_sim **out);

/* Releases a simulation; accepts NULL. */
CORUN_API void corun_sim_free(struct corun_sim *sim);

CORUN_API unsigned corun_sim_ntasks(const struct corun_sim *sim);
CORUN_API const struct corun_sim_task *corun_sim_task(const struct corun_sim *sim, unsigned i);
CORUN_API const struct corun_topo *corun_sim_topo(const struct corun_sim *sim);
CORUN_API const struct corun_sim_machine *corun_sim_machine(const struct corun_sim *sim);
CORUN_API uint64_t corun_sim_seed(const struct corun_sim *sim);

/*
 * corun_sim_move() - run task @task on the dense CPU @cpu from now on (-1:
 * unplaced). A change of CPU after the task's first placement counts as a
 * migration. Several tasks may share a CPU: they time-share it equally.
 * 0, -EINVAL for a bad task or CPU (out of range, not usable).
 */
CORUN_API int corun_sim_move(struct corun_sim *sim, unsigned task, int cpu);

/* Places every task at once (@cpu[i] for task i; -1 unplaced). 0 or -EINVAL,
 * in which case nothing moved. */
CORUN_API int corun_sim_place(struct corun_sim *sim, const int *cpu);

/*
 * corun_sim_move_memory() - migrates task @task's memory to NUMA domain
 * @node (the topology's index), as migrate_pages(2) would: from now on its
 * misses are local where it runs on @node and load that node's bandwidth,
 * and it makes no progress while corun_sim_task_rss_mb() moves at the
 * machine's migrate_gbps (a second migration queues behind the first).
 * Memory already on @node: nothing happens. 0, or -EINVAL (bad task or
 * node, or a task never placed: it has no memory yet).
 */
CORUN_API int corun_sim_move_memory(struct corun_sim *sim, unsigned task, int node);

/* The dense CPU task @task runs on now, or -1. */
CORUN_API int corun_sim_cpu_of(const struct corun_sim *sim, unsigned task);

/*
 * corun_sim_step() - advance simulated time by @dt_s seconds (> 0),
 * accumulating every task's counters. Returns 0 or -EINVAL.
 */
CORUN_API int corun_sim_step(struct corun_sim *sim, double dt_s);

/* Simulated time since creation, nanoseconds and seconds. */
CORUN_API uint64_t corun_sim_now_ns(const struct corun_sim *sim);
CORUN_API double corun_sim_now_s(const struct corun_sim *sim);

/* Appended. The simulation's clock for an engine (corun/engine.h): now is
 * the simulated time, and waiting until a later time steps the simulation
 * there. */
CORUN_API struct corun_clock corun_sim_clock(struct corun_sim *sim);

/* Whether every task with an instruction count has finished (false when no
 * task has one). */
CORUN_API bool corun_sim_done(const struct corun_sim *sim);

/* A task's exact counters (ground truth: for tests and the simulator's own
 * metrics; policies read them through sense-sim, with noise). */
struct corun_sim_counters {
    double instructions, cycles, ref_cycles, llc_references, llc_misses;
    double task_clock_s;
};
CORUN_API int corun_sim_counters(const struct corun_sim *sim, unsigned task,
                                 struct corun_sim_counters *out);

/* The model's state now, ground truth (tests, the oracle; never policies). */
struct corun_sim_truth {
    double ips;        /* instructions per second, averaged over time-sharing */
    double ghz;        /* the frequency of its core */
    double cache_mb;   /* cache it holds, all shared levels together */
    double mpki;       /* LLC misses per kilo-instruction at that share */
    double latency_ns; /* memory latency it sees */
    double sigma;      /* SMT issue stretch, 1 when alone */
};
CORUN_API int corun_sim_truth(struct corun_sim *sim, unsigned task, struct corun_sim_truth *out);

/* Memory domain @numa now: bandwidth drawn (bytes/s) and its latency (ns). */
CORUN_API int corun_sim_memory(struct corun_sim *sim, unsigned numa, double *bw_bps,
                               double *latency_ns);

/* Instructions per second of task @task alone on an idle machine, in its
 * current phase. */
CORUN_API double corun_sim_alone_ips(struct corun_sim *sim, unsigned task);

/* ---- metrics ---------------------------------------------------------------- */

struct corun_sim_task_result {
    double speedup;      /* s_j: time alone for the same work / time taken */
    double instructions; /* retired */
    double finish_s;     /* completion time, NaN if no work amount or unfinished */
    int cpu;             /* CPU at the end (dense), -1 */
    unsigned migrations;
    unsigned mem_moves; /* appended: memory migrations to another node */
};

struct corun_sim_result {
    double stp;               /* Σ s_j */
    double antt;              /* mean 1/s_j */
    double max_slowdown;      /* max 1/s_j */
    double makespan_s;        /* NaN unless every task has a work amount and finished */
    double mean_completion_s; /* NaN likewise */
    unsigned migrations;
    double sim_s; /* simulated time */
    unsigned ntasks;
    struct corun_sim_task_result *tasks; /* caller frees with corun_sim_result_release */
    /* Appended. A policy run (corun_sim_run_policy): the changes the
     * engine's outcome check judged, and those it took back; 0 otherwise. */
    unsigned trials, reverted;
    /* Appended: memory migrations (corun_sim_move_memory) of every task,
     * and the task-seconds they stalled tasks for. */
    unsigned mem_moves;
    double mem_stall_s;
    /* Appended. A policy run: plans the engine did not apply for the doubt
     * a change taken back left (corun_engine_stats.doubted); 0 otherwise. */
    unsigned doubted;
    /* Appended. A policy run: second opinions the engine tried
     * (corun_engine_stats.second_tried), and of those kept; 0 otherwise. */
    unsigned second_tried, second_kept;
};

/* The metrics of the run so far. 0, -ENODATA before any time passed, -ENOMEM. */
CORUN_API int corun_sim_result(const struct corun_sim *sim, struct corun_sim_result *out);
CORUN_API void corun_sim_result_release(struct corun_sim_result *r);

/*
 * corun_sim_static_stp() - STP of placement @cpu (one dense CPU per task) in
 * the steady state at the simulation's current time, without moving anything
 * or advancing time. What the oracle's search optimises. NaN on a bad CPU.
 */
CORUN_API double corun_sim_static_stp(struct corun_sim *sim, const int *cpu);

/* ---- reference placements --------------------------------------------------- */

enum corun_sim_ref {
    CORUN_SIM_REF_BASELINE = 0, /* Linux's load balancer without contention knowledge */
    CORUN_SIM_REF_RANDOM,
    CORUN_SIM_REF_WORST,
    CORUN_SIM_REF_ORACLE,
    /* Appended: the search for the smallest max slowdown (not the best STP). */
    CORUN_SIM_REF_FAIREST,
    CORUN_SIM_NREFS
};

/* "baseline", "random", "worst", "oracle", "fairest"; NULL out of range. */
CORUN_API const char *corun_sim_ref_name(enum corun_sim_ref r);
/* The reference named @name or -EINVAL. */
CORUN_API int corun_sim_ref_by_name(const char *name);

struct corun_sim_search {
    const char *method; /* "exhaustive", "matching", "annealing", "-" */
    bool bound;         /* a search that may miss the optimum: what it optimises is a bound */
    unsigned evaluations;
};

/*
 * corun_sim_baseline_place() - where Linux's load balancer would put tasks
 * arriving in an arbitrary (seeded) order: idle cores before SMT siblings,
 * spread across packages, NUMA nodes and LLCs by count; tasks whose entry in
 * @cpu is already >= 0 stay. Fills the -1 entries of @cpu (ntasks of them).
 */
CORUN_API void corun_sim_baseline_place(const struct corun_topo *topo, unsigned ntasks,
                                        uint64_t seed, int *cpu);

/*
 * corun_sim_ref_place() - the placement of reference @ref for the tasks of
 * @sim (at its current time), in @cpu (ntasks entries). Baseline and random
 * use @seed; worst, oracle and fairest search with the ground truth
 * (exhaustive up to 12 tasks within CORUN_SIM_EXHAUSTIVE_BUDGET evaluations,
 * matching where only SMT pairs share (not for fairest), else seeded
 * annealing with restarts). Worst minimises STP, oracle maximises it,
 * fairest maximises the slowest task's speed (ties to the higher STP).
 * @info, if not NULL, says how. 0, -EINVAL, -ENOMEM.
 */
CORUN_API int corun_sim_ref_place(struct corun_sim *sim, enum corun_sim_ref ref, uint64_t seed,
                                  int *cpu, struct corun_sim_search *info);

#define CORUN_SIM_EXHAUSTIVE_BUDGET 100000u
#define CORUN_SIM_ANNEAL_RESTARTS   4u
#define CORUN_SIM_ANNEAL_STEPS      3000u

/* ---- running ---------------------------------------------------------------- */

struct corun_sim_run_opts {
    double duration_s; /* simulated time; with work amounts, the cap */
    unsigned seeds;    /* baseline and random: placements averaged (default 5) */
    uint64_t seed;
    double effort; /* scales the oracle's search budgets; 0 means 1 */
    /* Appended. corun_sim_run_policy(): when not NULL (one per task), the
     * profiles the engine learned, each cpu where the engine left the task
     * (where the kernel put it, when it left it unpinned). */
    struct corun_task_profile *profiles;
    /* Appended. corun_sim_run_policy(): when not NULL, called with the
     * simulated time in seconds for every event of the engine (a move of
     * a plan, one the outcome check took back, memory that followed its
     * task; corun/engine.h), each move with the predicted speeds where the
     * task ran and where it goes. What the engine decides is the same
     * with or without it. */
    void (*on_event)(void *ctx, double t_s, const struct corun_engine_event *ev);
    void *event_ctx;
};

/*
 * corun_sim_set_effort() - scale the search budgets of corun_sim_ref_place()
 * (exhaustive leaves, annealing moves) by @effort in (0, 1] (tests use less;
 * 1 is the documented default). Other values are taken as 1.
 */
CORUN_API void corun_sim_set_effort(struct corun_sim *sim, double effort);

/*
 * corun_sim_run_ref() - run reference @ref on a fresh simulation of @tasks and
 * report its metrics in *@out (averaged over opts->seeds seeds for baseline
 * and random; per-task figures are those of the first seed). 0 or -errno.
 */
CORUN_API int corun_sim_run_ref(const struct corun_topo *topo, const struct corun_sim_machine *m,
                                const struct corun_sim_task *tasks, unsigned ntasks,
                                enum corun_sim_ref ref, const struct corun_sim_run_opts *opts,
                                struct corun_sim_result *out, struct corun_sim_search *info);

/*
 * corun_sim_run_policy() - run registered policy @pol through the engine
 * (corun/engine.h): tasks start where the baseline (the kernel) puts them,
 * with their memory there (first touch); after a warm-up the engine samples
 * sense-sim counters, learns profiles, asks @pol->place() and applies plans
 * through act-sim every interval (0.25 s, or 1/20 of a shorter run), with
 * hysteresis and a cap on moves, until the end; then it reports. 0 or -errno
 * (the policy's own error included).
 */
CORUN_API int corun_sim_run_policy(const struct corun_topo *topo, const struct corun_sim_machine *m,
                                   const struct corun_sim_task *tasks, unsigned ntasks,
                                   const struct corun_policy *pol,
                                   const struct corun_sim_run_opts *opts,
                                   struct corun_sim_result *out);

/* ---- sensor and actuator backends ------------------------------------------ */

/*
 * Both take the struct corun_sim * as opts->backend_cfg; attach/apply take a
 * task index as the target. sense-sim counts cycles, instructions,
 * ref_cycles, LLC references and misses and task clock, each with seeded
 * multiplicative noise of CORUN_SIM_NOISE on every read interval; the rest are
 * missing. act-sim takes CPU sets in the kernel's numbering: a task allowed
 * several CPUs goes where the load balancer would put it among them.
 */
#define CORUN_SIM_NOISE 0.03
CORUN_API extern const struct corun_sense_ops corun_sense_sim_ops;
CORUN_API extern const struct corun_act_ops corun_act_sim_ops;

#ifdef __cplusplus
}
#endif
#endif /* CORUN_SIM_H */
