/*
 * corun/profile.h — learned interference profiles: what each task does to
 * its neighbours (pressure) and what they do to it (sensitivity) at each
 * sharing level, from counters only.
 *
 * A profiler keeps one slot per task. Every interval the engine gives it each
 * task's cumulative counter sample and the CPU the task was pinned to; the
 * profiler turns the deltas into figures (IPC, frequency ratio
 * cycles/ref_cycles, LLC MPKI and miss ratio, bandwidth, CPU use), classifies
 * the task (Xie & Loh's animal classes) to get a prior, and refines the
 * prior from what it observes:
 *
 *   perf = IPC corrected to the reference clock with the frequency ratio
 *          (so a package that clocks down is not taken for interference);
 *   x^   = sum over levels l of sens[l] * phi_l(sum of co-runners' press[l])
 *          where co-runners are the tasks pinned in the same domain of l
 *          (pairwise by class at the core level);
 *   when a task settles in a new co-run configuration, the change of its
 *   perf against the previous settled one is compared with the change of
 *   1 + x^ (its speed alone, never observed, cancels out) and the error
 *   corrects its sensitivities and its co-runners' pressures by normalised
 *   least mean squares; learned offsets are pulled a little back to the
 *   class prior every interval.
 *
 * The result is a struct corun_task_profile per slot, what policies read.
 * Nothing here knows about a simulator; a profiler is not thread-safe (one
 * engine owns it), distinct profilers are independent.
 */
#ifndef CORUN_PROFILE_H
#define CORUN_PROFILE_H

#include <corun/common.h>
#include <corun/policy.h>
#include <corun/sense.h>
#include <corun/topo.h>

#ifdef __cplusplus
extern "C" {
#endif

struct corun_profile_opts {
    double ema;        /* weight of a new interval in smoothed figures; 0: 0.5 */
    double learn_rate; /* NLMS step for the learned offsets; 0: 0.5; <0: no learning */
    double prior_pull; /* share of a learned offset dropped each interval; 0: 0.005 */
    double best_decay; /* per-interval decay of the best perf seen; 0: 0.999 */
    /* Appended. Share of the gap to its class's mean that each task's
     * learned offsets close each interval, over the tasks of the class
     * observed in it (two at least): like tasks do not drift apart on
     * counter noise, and a lesson one task learns reaches its classmates.
     * Only while learning is on. 0: 0.2; < 0: none; above 1: 1. */
    double class_pool;
};

/* One interval's observation of one task. */
struct corun_profile_obs {
    unsigned slot;                  /* from corun_profiler_add() */
    int cpu;                        /* dense CPU it was pinned to all interval; -1 unknown */
    const struct corun_sample *cur; /* cumulative sample now */
    const struct corun_sample *prev; /* the one before, NULL for the first */
};

struct corun_profiler;

/*
 * corun_profiler_new() - a profiler for tasks on @topo (kept by reference:
 * it must outlive the profiler). @opts may be NULL for the defaults.
 * 0 or -ENOMEM, -EINVAL for a NULL topology.
 */
CORUN_API int corun_profiler_new(const struct corun_topo *topo,
                                 const struct corun_profile_opts *opts,
                                 struct corun_profiler **out);
/* Releases a profiler; accepts NULL. */
CORUN_API void corun_profiler_free(struct corun_profiler *p);

/*
 * corun_profiler_add() - a slot for a new task numbered @id by the caller,
 * with class hint @hint (CORUN_CLASS_UNKNOWN to learn it) and @weight (<= 0:
 * 1). The slot number goes to *@slot; a slot is reused only when the caller
 * says so (corun_profiler_reuse()). 0 or -ENOMEM.
 */
CORUN_API int corun_profiler_add(struct corun_profiler *p, unsigned id, enum corun_class hint,
                                 double weight, unsigned *slot);

/*
 * corun_profiler_reuse() - @slot, whose task has gone, starts afresh for
 * another task, as corun_profiler_add() would have made it: nothing learned
 * of the old task is kept. For callers whose tasks come and go (a daemon),
 * so that the profiler does not grow with every task ever seen. 0 or -ENOENT.
 */
CORUN_API int corun_profiler_reuse(struct corun_profiler *p, unsigned slot, unsigned id,
                                   enum corun_class hint, double weight);

/*
 * corun_profiler_set_hint() - replaces the class hint of @slot (UNKNOWN:
 * classify from counters again), for a caller that learned the class after
 * the task joined (a batch from its footprint when no counter reads LLC
 * misses). A hint outranks the counters; learned offsets are kept, now
 * relative to the new class's prior. 0 or -ENOENT.
 */
CORUN_API int corun_profiler_set_hint(struct corun_profiler *p, unsigned slot,
                                      enum corun_class hint);

/*
 * corun_profiler_update() - learns from one interval: @n observations, one
 * per task that ran (slots not given keep their profile). Tasks pinned in a
 * shared domain are each other's co-runners; a task with cpu -1 is learned
 * from alone. A sample whose needed counters are missing (valid mask) only
 * updates what it can. 0, or -EINVAL for a bad slot.
 */
CORUN_API int corun_profiler_update(struct corun_profiler *p,
                                    const struct corun_profile_obs *obs, unsigned n);

/* The profile of @slot (its cpu field is whatever the caller sets), or NULL.
 * Valid until the next call on @p. */
CORUN_API const struct corun_task_profile *corun_profiler_get(const struct corun_profiler *p,
                                                              unsigned slot);

/* Observed extra run time of @slot against the best perf seen (slowly
 * decaying): a lower bound when it never ran alone. NaN before two samples. */
CORUN_API double corun_profiler_observed_slowdown(const struct corun_profiler *p, unsigned slot);

/*
 * corun_profile_prior() - the class prior at @level: pressure and
 * sensitivity of a typical task of class @cls (UNKNOWN: a middle guess).
 * Levels without a model (PU, PACKAGE, MACHINE) give 0.
 */
CORUN_API void corun_profile_prior(enum corun_class cls, enum corun_level level,
                                   double *pressure, double *sensitivity);

/*
 * corun_profile_core_pair() - the class prior of what an SMT sibling of
 * class @aggressor does to one of class @victim: the victim's extra run time
 * (0.62: two compute-bound threads each run at 1/1.62 of their speed alone,
 * on an otherwise idle machine).
 * The core level of the model is pairwise: the predicted extra time is
 *   (sens_v / prior_sens_v) * sum over siblings a of
 *       core_pair(v, a) * (press_a / prior_press_a)
 * with sens and press the profiles' core-level figures and the priors those
 * of corun_profile_prior(). UNKNOWN classes give the mean over classes.
 * This is the table for cores of no known vendor, the median over machines;
 * on a topology that names Intel, AMD or Hygon cores the learner and the
 * predictor read the one fitted for that vendor and the machine's L3 size
 * (docs/internals/model.md).
 */
CORUN_API double corun_profile_core_pair(enum corun_class victim, enum corun_class aggressor);

/*
 * corun_profile_core_spill() - what the same pair costs the victim more per
 * unit of its LLC share lost to the other tasks of its LLC, d3 = P/(1+P)
 * (the L3 damage of the model): siblings share the core's private L2, and
 * the misses a sibling causes there hit an idle LLC but go to memory from a
 * full one. With it the core level's extra time is
 *   (sens_v / prior_sens_v) * sum over siblings a of
 *       (core_pair(v, a) + d3 * core_spill(v, a)) * (press_a / prior_press_a)
 * UNKNOWN classes give the mean over classes.
 */
CORUN_API double corun_profile_core_spill(enum corun_class victim, enum corun_class aggressor);

/*
 * corun_profile_classify() - the class counters suggest: @ipc at the
 * reference clock, LLC misses per kilo-instruction @mpki and LLC miss ratio
 * @miss_ratio (NaN when unknown). CORUN_CLASS_UNKNOWN when @mpki is NaN.
 */
CORUN_API enum corun_class corun_profile_classify(double ipc, double mpki, double miss_ratio);

/*
 * corun_profile_mem_share() - the share of a task's time stalled on memory,
 * estimated from @ipc and @mpki: what decides how much it gains from a
 * faster clock. 0..0.98; 0.5 when both are unknown.
 */
CORUN_API double corun_profile_mem_share(double ipc, double mpki);

/* Memory latency off the home node over local: 1.3-1.7x in SIMULATOR.md,
 * as measured on two-socket machines; the model takes the middle. A task
 * away from its memory runs 1 + (CORUN_REMOTE_LATENCY - 1) * mem_share
 * times slower. */
#define CORUN_REMOTE_LATENCY 1.5

#ifdef __cplusplus
}
#endif
#endif /* CORUN_PROFILE_H */
