/*
 * corun/sense.h — counters per task, from whatever this machine offers.
 *
 * A sensor backend (perf_event_open, /proc, the simulator) sits behind one
 * operations table. A task is attached once and read as often as wanted; a
 * read returns cumulative counts since attach, scaled for multiplexing, with
 * a validity mask: a counter that could not be read is missing (its bit
 * clear), never zero. Why each preset is missing is kept and reported.
 *
 * Presets are portable names; each backend maps them to what it can count
 * (libpfm4 native events per PMU model for perf; see docs/internals/sense.md).
 */
#ifndef CORUN_SENSE_H
#define CORUN_SENSE_H

#include <sys/types.h>

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum corun_event {
    /* hardware */
    CORUN_EV_CYCLES = 0,
    CORUN_EV_INSTRUCTIONS,
    CORUN_EV_REF_CYCLES,
    CORUN_EV_LLC_REFERENCES,
    CORUN_EV_LLC_MISSES,
    CORUN_EV_BRANCH_MISSES,
    CORUN_EV_DTLB_MISSES,
    CORUN_EV_STALL_CYCLES_BACKEND,
    /* software */
    CORUN_EV_TASK_CLOCK_NS,
    CORUN_EV_CONTEXT_SWITCHES,
    CORUN_EV_CPU_MIGRATIONS,
    CORUN_EV_PAGE_FAULTS,
    /* scheduler (/proc/PID/schedstat) */
    CORUN_EV_RUN_DELAY_NS,
    CORUN_NEVENTS
};

/* "cycles", "instructions", "ref_cycles", ... as in the preset table. */
CORUN_API const char *corun_event_name(enum corun_event ev);
/* The event named @name, or -EINVAL. */
CORUN_API int corun_event_by_name(const char *name);

#define CORUN_EV_BIT(ev) (1ull << (ev))

struct corun_sample {
    uint64_t t_ns;                  /* when it was read, on the context's clock */
    uint64_t valid;                 /* CORUN_EV_BIT(ev) set: value[ev] was read */
    uint64_t value[CORUN_NEVENTS];  /* cumulative since attach, scaled */
    double mux_ratio;               /* least time_running/time_enabled; 1 if none */
};

struct corun_sense_opts {
    uint64_t events;   /* CORUN_EV_BIT mask of presets wanted; 0 = all */
    const char *pmu;   /* libpfm4 PMU name to encode for, NULL = this CPU's */
    const char *root;  /* root for /proc reads, NULL = "/" */
    bool inherit;      /* count children created after attach (launched commands) */
    void *backend_cfg; /* backend-specific (the simulator's instance) */
};

struct corun_sense_ops {
    const char *name; /* "perf", "proc", "sim" */
    /* 0 when the backend can work here, else -errno with words in @why. */
    int (*probe)(const struct corun_sense_opts *opts, char *why, size_t len);
    int (*open)(const struct corun_sense_opts *opts, void **state);
    /* Starts counting @target (a PID; a task index for the simulator). */
    int (*attach)(void *state, pid_t target, int *handle);
    int (*read)(void *state, int handle, struct corun_sample *out);
    int (*detach)(void *state, int handle);
    /* Why @ev is missing for this backend (NULL when it is counted). */
    const char *(*why_missing)(void *state, enum corun_event ev);
    void (*close)(void *state);
};

#ifdef __cplusplus
}
#endif
#endif /* CORUN_SENSE_H */
