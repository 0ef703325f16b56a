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

#include <stddef.h>
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
    uint64_t t_ns;                 /* when it was read, on the context's clock */
    uint64_t valid;                /* CORUN_EV_BIT(ev) set: value[ev] was read */
    uint64_t value[CORUN_NEVENTS]; /* cumulative since attach, scaled */
    double mux_ratio;              /* least time_running/time_enabled; 1 if none */
};

struct corun_sense_opts {
    uint64_t events;   /* CORUN_EV_BIT mask of presets wanted; 0 = all */
    const char *pmu;   /* libpfm4 PMU name to encode for, NULL = this CPU's */
    const char *root;  /* root for /proc reads, NULL = "/" */
    bool inherit;      /* count children created after attach (launched commands) */
    void *backend_cfg; /* backend-specific (the simulator's instance) */
    /*
     * The target is stopped before its execve() (a launched command): counting
     * starts at exec (perf's enable_on_exec), so corun's own fork-to-exec
     * instructions are not counted and none of the command's are missed.
     * Only with @inherit.
     */
    bool on_exec;
};

/*
 * A sensor backend. State is private to the backend (never global), so
 * several may be open at once; one state is not thread-safe (callers
 * serialise operations on it).
 */
struct corun_sense_ops {
    const char *name; /* "perf", "proc", "sim" */
    /*
     * probe() - whether the backend can work here with @opts: 0, or -errno
     * with words in @why (@len bytes, NUL-terminated), e.g. -ENOENT "no PMU
     * exposed by the hypervisor". Opens nothing that outlives the call.
     */
    int (*probe)(const struct corun_sense_opts *opts, char *why, size_t len);
    /*
     * open() - a state for counting with @opts (copied: @opts may go away).
     * Decides here which presets it can give, so that why_missing() answers
     * before any attach. 0, -ENOMEM, -ENOENT (unknown @opts->pmu), -errno.
     */
    int (*open)(const struct corun_sense_opts *opts, void **state);
    /*
     * attach() - starts counting @target (a PID; a task index for the
     * simulator); *@handle names it for read/detach. 0, -ESRCH (no such
     * process), -EACCES, -ENOMEM, -EMFILE.
     */
    int (*attach)(void *state, pid_t target, int *handle);
    /*
     * read() - counts since attach into @out (zeroed first): valid bits set
     * only for presets actually read, values scaled for multiplexing,
     * mux_ratio and t_ns set. A process that exited but is not yet reaped can
     * still be read. 0, -EINVAL (bad handle), -ESRCH (gone and nothing left
     * to read), -errno of a failed read.
     */
    int (*read)(void *state, int handle, struct corun_sample *out);
    /* detach() - stops counting @handle and frees what it held. 0 or -EINVAL. */
    int (*detach)(void *state, int handle);
    /*
     * why_missing() - why @ev is not counted ("not requested", the PMU's or
     * the kernel's reason), or NULL when it is. The string lives as long as
     * @state and may change after attach (a target refused an event).
     */
    const char *(*why_missing)(void *state, enum corun_event ev);
    /* close() - detaches everything and frees @state; accepts NULL. */
    void (*close)(void *state);
};

/* True for the presets that need a hardware PMU (cycles ... stall_cycles_backend). */
CORUN_API bool corun_event_is_hardware(enum corun_event ev);

/* ---- Encodings: presets to native events ----------------------------------- */

/* Where a preset's count comes from. */
enum corun_event_source {
    CORUN_SRC_NONE = 0, /* unavailable: see the encoding's reason */
    CORUN_SRC_NATIVE,   /* a libpfm4 native event of the PMU model (raw encoding) */
    CORUN_SRC_GENERIC,  /* a perf generic hardware event, mapped by the kernel */
    CORUN_SRC_SOFTWARE, /* a perf software event */
    CORUN_SRC_PROC,     /* read from /proc (no perf event exists) */
};

/* "none", "native", "generic", "software", "proc". */
CORUN_API const char *corun_event_source_name(enum corun_event_source src);

struct corun_event_encoding {
    enum corun_event_source source;
    char native[320]; /* libpfm4's full name ("skx::LONGEST_LAT_CACHE:MISS...") or perf's */
    uint32_t type;    /* perf_event_attr.type (PERF_TYPE_RAW, _HARDWARE, ...) */
    uint64_t config;  /* perf_event_attr.config, config1, config2 */
    uint64_t config1;
    uint64_t config2;
    const char *note; /* what the native event really counts (static text); NULL if none */
    char reason[224]; /* why unavailable (source NONE); "" otherwise */
};

/* Every preset's encoding for one PMU model. */
struct corun_pmu_encoding {
    char pmu[64];    /* libpfm4 PMU name ("skx"), or "perf" when only generic events apply */
    char vendor[16]; /* "intel", "amd", "" when unknown */
    char table[32];  /* name of corun's table used ("intel-skx", "amd-zen3", "generic") */
    struct corun_event_encoding ev[CORUN_NEVENTS];
};

/*
 * corun_sense_encode() - resolve every preset for the PMU named @pmu (a
 * libpfm4 core PMU name: "skx", "icl", "amd64_fam19h_zen3"...), or for this
 * CPU's core PMU when @pmu is NULL (the generic perf events when libpfm4 does
 * not know this CPU). Presets the model lacks get source NONE and a reason.
 *
 * libpfm4 is initialised once per process, on first use. It encodes a PMU
 * other than this CPU's only when LIBPFM_ENCODE_INACTIVE=1 (or
 * LIBPFM_FORCE_PMU=NAME) is in the environment at that moment: the library
 * never touches the environment, so a program that wants --pmu sets it first
 * (the corun command does).
 *
 * Returns 0 (presets libpfm4 could not encode, for instance an inactive PMU
 * without LIBPFM_ENCODE_INACTIVE, are NONE with the reason); -ENOENT when
 * libpfm4 knows no core PMU named @pmu; -ENOTSUP when @pmu is given and
 * libpfm4 failed to initialise. Thread-safe (libpfm4's initialisation runs
 * under pthread_once).
 */
CORUN_API int corun_sense_encode(const char *pmu, struct corun_pmu_encoding *out);

/*
 * corun_sense_pmu_names() - the libpfm4 core PMUs corun has an event table
 * for, NULL-terminated (static). Any other libpfm4 core PMU still works with
 * the generic table.
 */
CORUN_API const char *const *corun_sense_pmu_names(void);

/* ---- Backends and their selection ------------------------------------------ */

/*
 * The perf backend counts hardware presets with perf_event_open (grouped per
 * thread, or with inherit for launched commands), plus software events and the
 * scheduler's run delay. Its probe fails when hardware events cannot be
 * opened, with the reason: no PMU exposed (hypervisor), perf_event_paranoid
 * and missing CAP_PERFMON, ...
 *
 * The proc backend needs no PMU: software perf events where permitted, else
 * /proc/PID/stat and status; /proc/PID/task/TID/schedstat for run delay.
 * It reports hardware presets missing with perf's reason.
 */
CORUN_API extern const struct corun_sense_ops corun_sense_perf;
CORUN_API extern const struct corun_sense_ops corun_sense_proc;

#define CORUN_SENSE_MAX_CHAIN 4

struct corun_sense_attempt {
    const char *backend; /* its name */
    int err;             /* probe's or open's -errno */
    char why[256];       /* the backend's words */
};

struct corun_sense_choice {
    const struct corun_sense_ops *ops; /* the backend chosen, NULL when none worked */
    void *state;                       /* opened with the caller's opts; close with ops->close */
    unsigned ntried;                   /* backends that failed before the chosen one */
    struct corun_sense_attempt tried[CORUN_SENSE_MAX_CHAIN];
};

/*
 * corun_sense_select() - probe and open the first backend of @chain (@n
 * entries; NULL means the default chain perf -> proc) that works here with
 * @opts. Each backend that failed is recorded in @out->tried with its reason,
 * in order. Returns 0 (then @out->ops and @out->state are set), -ENOTSUP when
 * none worked, -EINVAL for a chain longer than CORUN_SENSE_MAX_CHAIN.
 * Thread-safe.
 */
CORUN_API int corun_sense_select(const struct corun_sense_opts *opts,
                                 const struct corun_sense_ops *const *chain, unsigned n,
                                 struct corun_sense_choice *out);

/*
 * corun_sample_delta() - @cur minus @prev, event by event, into @out: a value
 * is valid when it is valid in both. mux_ratio and t_ns are @cur's. For
 * interval printing. @out may alias neither input.
 */
CORUN_API void corun_sample_delta(const struct corun_sample *prev, const struct corun_sample *cur,
                                  struct corun_sample *out);

/*
 * corun_sample_add() - adds @s into @sum (several processes counted as one):
 * valid where valid in both, mux_ratio the least, t_ns the latest. Start
 * @sum with corun_sample_init_sum().
 */
CORUN_API void corun_sample_init_sum(struct corun_sample *sum);
CORUN_API void corun_sample_add(struct corun_sample *sum, const struct corun_sample *s);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_SENSE_H */
