/*
 * corun/platform.h — what this processor and kernel offer, and whether Linux
 * uses it.
 *
 * corun_platform_probe() gathers, once, a report a user or a bug report can
 * rely on: CPU identity and SMT; the process-aware TLB (PCID, INVPCID) and
 * whether the kernel uses it; MONITOR/MWAIT, WAITPKG, MONITORX and the wait
 * strategy corun picks; PAT; huge page sizes, hugetlb pools and THP; the PMU
 * and why it is missing; RDT and resctrl; frequency scaling, thermal
 * throttling, RAPL and MSRs; the hypervisor; the kernel and the command-line
 * parameters that change any of this; modules with their versions; DMI board
 * and firmware identity.
 *
 * Sources. Files are read below a root directory (opts.root; "/" live, a
 * recorded tree in tests): /proc/cpuinfo, /proc/cmdline, /proc/mounts,
 * /proc/filesystems, /proc/sys/kernel/{osrelease,version,perf_event_paranoid},
 * /sys/devices/system/cpu/..., /sys/kernel/mm/{hugepages,transparent_hugepage},
 * /sys/bus/event_source/devices, /sys/class/powercap, /sys/hypervisor,
 * /sys/module, /sys/class/dmi/id and /dev/cpu/N/msr. The CPUID instruction is
 * a seam too (opts.cpuid), so tests replay recorded leaves.
 *
 * Unknowns. Nothing is guessed: every answer that cannot be known is
 * CORUN_TRI_UNKNOWN, a 0/-1/"" value as each field says, and a reason in the
 * field's `why` (or the group's reason string). docs/platform-json.md gives
 * the JSON form of the report.
 *
 * A report is immutable after probing and may be shared between threads.
 */
#ifndef CORUN_PLATFORM_H
#define CORUN_PLATFORM_H

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A yes/no answer that may be unknown. */
enum corun_tri {
    CORUN_TRI_UNKNOWN = -1,
    CORUN_TRI_NO = 0,
    CORUN_TRI_YES = 1,
};

#define CORUN_PLATFORM_WHY 224 /* room for a reason, NUL included */

/*
 * The CPUID seam: fills @regs with EAX, EBX, ECX, EDX of leaf @leaf, subleaf
 * @subleaf and returns true, or returns false when that leaf is not known
 * (a replayed dump without it). @user is opts.cpuid_user.
 */
typedef bool (*corun_platform_cpuid_fn)(void *user, uint32_t leaf, uint32_t subleaf,
                                        uint32_t regs[4]);

struct corun_platform_opts {
    /* Root below which /proc, /sys and /dev are read; NULL means "/". */
    const char *root;
    /*
     * CPUID. NULL: the CPUID instruction when @root is NULL (this machine),
     * and no CPUID at all when @root names a recorded tree (answers then come
     * from the tree's /proc/cpuinfo alone).
     */
    corun_platform_cpuid_fn cpuid;
    void *cpuid_user;
    /*
     * Open a hardware counter (PERF_TYPE_HARDWARE cycles, this process,
     * user space only) through the syscall seam to learn whether the PMU
     * works. Without it the answer comes from /sys alone and may be unknown.
     */
    bool probe_pmu;
    /* Read MSRs through /dev/cpu/N/msr below @root. */
    bool read_msr;
};

/* A processor feature: what the CPU offers and whether Linux uses it. */
struct corun_platform_feature {
    enum corun_tri cpu;           /* the processor has it (CPUID; else /proc/cpuinfo) */
    enum corun_tri kernel;        /* Linux has it enabled (its cpuinfo flag, command line) */
    char why[CORUN_PLATFORM_WHY]; /* how `kernel` was decided, or why unknown */
};

struct corun_platform_cpu {
    char vendor[16];             /* "GenuineIntel", "AuthenticAMD"; "" unknown */
    char model_name[96];         /* the brand string; "" unknown */
    int family, model, stepping; /* display values; -1 unknown */
    int64_t microcode;           /* revision; -1 unknown */
    unsigned nprocessors;        /* processors in /proc/cpuinfo */
    enum corun_tri hybrid;       /* more than one core type (Intel hybrid) */
    /* Hybrid core types by their PMU name: "cpu_core" "0-15", "cpu_atom" "16-23". */
    unsigned ntypes;
    struct {
        char name[32];
        char cpus[64];
    } types[4];
    bool cpuid_used;              /* CPUID answered (live, or a replayed dump) */
    char why[CORUN_PLATFORM_WHY]; /* why identity fields are unknown, or "" */
};

struct corun_platform_smt {
    enum corun_tri present;    /* the processor has more than one thread per core */
    enum corun_tri enabled;    /* and Linux runs them */
    char control[24];          /* /sys/devices/system/cpu/smt/control; "" absent */
    unsigned threads_per_core; /* most siblings seen; 0 unknown */
    char why[CORUN_PLATFORM_WHY];
};

struct corun_platform_hugetlb_pool {
    uint64_t size_kb;
    int64_t nr, free, resv, surplus; /* -1 unreadable */
};

struct corun_platform_thp {
    char mode[16];        /* "always", "madvise", "never"; "" unknown */
    char defrag[24];      /* "always", "defer", "defer+madvise", "madvise", "never"; "" unknown */
    char shmem[24];       /* shmem_enabled; "" unknown */
    uint64_t pmd_size_kb; /* hpage_pmd_size in KiB; 0 unknown */
    char why[CORUN_PLATFORM_WHY]; /* why mode is unknown, or "" */
};

/* NUMA as corun uses it: the nodes a process's memory can move between,
 * and whether the kernel moves pages by itself. */
struct corun_platform_numa {
    int nodes;                    /* online nodes (sys/devices/system/node/online); -1 unknown */
    char online[64];              /* their list, "0-3"; "" unknown */
    int balancing;                /* kernel.numa_balancing: 0 off, 1 on, 2 memory tiering,
                                     3 both; -1 unknown */
    char why[CORUN_PLATFORM_WHY]; /* why nodes is unknown, or "" */
    char balancing_why[CORUN_PLATFORM_WHY]; /* why balancing is unknown, or "" */
};

struct corun_platform_pmu {
    enum corun_tri available;        /* a hardware counter opens for this process */
    char reason[CORUN_PLATFORM_WHY]; /* why not, why unknown, or how decided */
    int paranoid;                    /* perf_event_paranoid; INT_MIN unknown */
    char core_pmu[64];               /* "cpu", "cpu_core cpu_atom"...; "" none */
    int probe_errno;                 /* errno of the probe; 0 success or not probed */
    bool probed;
};

struct corun_platform_rdt {
    enum corun_tri allocation, monitoring, memory_bandwidth; /* rdt_a, cqm, mba */
    enum corun_tri cat_l3, cat_l2, cdp_l3, mbm_total, mbm_local, llc_occupancy;
    enum corun_tri resctrl_supported; /* resctrl in /proc/filesystems */
    enum corun_tri resctrl_mounted;
    char resctrl_mount[128]; /* where; "" not mounted */
    char why[CORUN_PLATFORM_WHY];
};

struct corun_platform_cpufreq {
    unsigned cpu;
    uint32_t min_khz, max_khz, cur_khz, base_khz; /* 0 unknown */
    int64_t core_throttles, package_throttles;    /* -1 unknown */
};

struct corun_platform_rapl {
    char zone[48];          /* "intel-rapl:0" */
    char name[32];          /* "package-0", "dram", "core" */
    int64_t energy_uj;      /* -1 unreadable (root only since Linux 5.10) */
    int64_t power_limit_uw; /* constraint_0_power_limit_uw; -1 unknown */
    enum corun_tri enabled;
};

struct corun_platform_freq {
    char driver[32];        /* scaling_driver of cpu0; "" none */
    char governor[32];      /* scaling_governor of cpu0; "" none */
    char pstate_status[16]; /* intel_pstate or amd_pstate status; "" absent */
    enum corun_tri boost;   /* turbo/boost allowed by Linux */
    char boost_source[64];  /* the file that said so */
    unsigned ncpus;
    struct corun_platform_cpufreq *cpus; /* ncpus entries, online CPUs */
    unsigned nrapl;
    struct corun_platform_rapl *rapl;
    char why[CORUN_PLATFORM_WHY];          /* why driver is "", or "" */
    char rapl_why[CORUN_PLATFORM_WHY];     /* why there is no RAPL, or "" */
    char throttle_why[CORUN_PLATFORM_WHY]; /* why throttle counts are unknown */
};

struct corun_platform_msr {
    enum corun_tri accessible;     /* /dev/cpu/0/msr opened and read */
    int64_t aperf, mperf;          /* -1 unknown */
    enum corun_tri turbo_disabled; /* IA32_MISC_ENABLE[38] or AMD HWCR[25] */
    char turbo_source[48];
    char why[CORUN_PLATFORM_WHY];
    /* Appended. Intel's turbo table (MSR_TURBO_RATIO_LIMIT): with up to
     * turbo_cores[i] busy cores a package runs at turbo_ratio[i] x 100 MHz,
     * groups by rising core count; the counts come from
     * MSR_TURBO_RATIO_LIMIT_CORES when it reads as rising counts (server
     * parts since Skylake), else group i is i + 1 cores (the older layout).
     * 0 groups: not read (not Intel, MSRs not readable). */
    unsigned turbo_groups;
    unsigned turbo_cores[8];
    unsigned turbo_ratio[8];
};

struct corun_platform_hypervisor {
    enum corun_tri present;
    char name[32];                /* "KVM", "Hyper-V", "VMware", "Xen"...; "" unknown/none */
    char vendor_id[16];           /* CPUID 0x40000000 signature; "" unknown */
    char why[CORUN_PLATFORM_WHY]; /* where it came from or why unknown */
    /* The same leaf as the kernel reads it (/dev/cpu/0/cpuid): it differs
     * from vendor_id under nested virtualisation; "" unknown, see kernel_why. */
    char kernel_vendor_id[16];
    char kernel_why[96];
};

/* A kernel command-line parameter corun cares about, as given. */
struct corun_platform_param {
    char name[32];
    char value[96]; /* "" for a bare flag */
};

struct corun_platform_kernel {
    char release[64];  /* osrelease; "" unknown */
    char version[256]; /* /proc/version */
    char *cmdline;     /* /proc/cmdline, or NULL */
    bool nopcid, noinvpcid, nosmt, nopat, nopti;
    unsigned nparams;
    struct corun_platform_param params[24];
    char why[CORUN_PLATFORM_WHY];
    /*
     * Kernel page-table isolation (the Meltdown mitigation): with it every
     * entry to the kernel switches page tables, which is what PCID makes
     * cheap. From vulnerabilities/meltdown, else the cpuinfo flag "pti".
     */
    enum corun_tri pti;
    char pti_why[CORUN_PLATFORM_WHY];
    /* /sys/devices/system/cpu/vulnerabilities: name and status, sorted. */
    unsigned nvulns;
    struct {
        char name[40];
        char status[200];
    } * vulns;
};

struct corun_platform_module {
    char name[64];
    char version[64];    /* "" when the module has none */
    char srcversion[32]; /* "" when the module has none (built in) */
    bool builtin;        /* no initstate: built into the kernel */
};

struct corun_platform_firmware {
    bool present; /* /sys/class/dmi/id exists */
    char sys_vendor[64], product_name[96];
    char board_vendor[64], board_name[64];
    char bios_vendor[64], bios_version[64], bios_date[16];
    char why[CORUN_PLATFORM_WHY]; /* why absent */
};

/* The report. Read it directly; release it with corun_platform_free(). */
struct corun_platform {
    struct corun_platform_cpu cpu;
    struct corun_platform_smt smt;
    struct corun_platform_feature pcid, invpcid, monitor_mwait, waitpkg, monitorx, pat;
    struct corun_platform_feature gbpages; /* 1 GiB pages (pdpe1gb) */
    char idle_driver[32];                  /* cpuidle current_driver; "" none */
    /* Linux's limits on UMWAIT (umwait_control): the longest wait in TSC
     * cycles (-1 unknown) and whether the deeper C0.2 state is allowed. */
    int64_t umwait_max_time;
    enum corun_tri umwait_c02;
    const char *wait_strategy; /* "umwait", "mwaitx", "pause" (each then futex); NULL unknown */
    unsigned nhugepage_sizes;
    struct corun_platform_hugetlb_pool hugepages[8]; /* ascending size */
    char hugepages_why[CORUN_PLATFORM_WHY];
    struct corun_platform_thp thp;
    struct corun_platform_pmu pmu;
    struct corun_platform_rdt rdt;
    struct corun_platform_freq freq;
    struct corun_platform_msr msr;
    struct corun_platform_hypervisor hypervisor;
    struct corun_platform_kernel kernel;
    unsigned nmodules;
    struct corun_platform_module *modules; /* sorted by name */
    char modules_why[CORUN_PLATFORM_WHY];
    struct corun_platform_firmware firmware;
    struct corun_platform_numa numa; /* appended */
};

/*
 * corun_platform_probe() - gather the report described above.
 *
 * Missing files are not errors: what they would have said becomes unknown
 * with a reason. Returns 0 and the report in *@out, -ENOENT/-ENOTDIR/-EACCES
 * when @opts->root cannot be opened as a directory, or -ENOMEM. Thread-safe
 * except against a test replacing the syscall table.
 */
CORUN_API int corun_platform_probe(const struct corun_platform_opts *opts,
                                   struct corun_platform **out);

/* Releases a report; accepts NULL. */
CORUN_API void corun_platform_free(struct corun_platform *p);

/*
 * corun_platform_turbo_rel() - the turbo table of @p as the engine takes it
 * (corun_engine_opts.turbo_rel): for n = 1..@ncores busy cores of a package,
 * the clock over the clock with one busy core, in @rel[n - 1] (beyond the
 * last group, the last group's). 0, or -ENODATA without a table.
 */
CORUN_API int corun_platform_turbo_rel(const struct corun_platform *p, unsigned ncores,
                                       double *rel);

/*
 * corun_platform_read_turbo() - the same table read on its own, for a caller
 * that wants nothing else of the report (corund, corun batch): Intel's
 * MSR_TURBO_RATIO_LIMIT (and _CORES) through @root's /dev/cpu/0/msr (NULL:
 * "/"). 0, -ENODATA without a table, or the -errno of opening or reading it
 * (-ENOENT: no msr driver; -EACCES: not root; -EIO: a part without the MSR,
 * AMD's, or a hypervisor that does not pass it through).
 */
CORUN_API int corun_platform_read_turbo(const char *root, unsigned ncores, double *rel);

/* "yes", "no" or "unknown". */
CORUN_API const char *corun_platform_tri_name(enum corun_tri t);

/*
 * corun_platform_cpuid_leaves() - the CPUID leaves and subleaves the probe
 * asks for, as (leaf << 32 | subleaf) values, ending with ~0: what a dump for
 * corun_platform_cpuid_replay() must hold.
 */
CORUN_API const uint64_t *corun_platform_cpuid_leaves(void);

/*
 * corun_platform_cpuid_native() - the CPUID instruction, in the shape of
 * corun_platform_cpuid_fn (@user unused). False for a leaf above the processor's
 * maximum for its range, and always on non-x86 builds.
 */
CORUN_API bool corun_platform_cpuid_native(void *user, uint32_t leaf, uint32_t subleaf,
                                           uint32_t regs[4]);

/*
 * A recorded CPUID dump: lines "LEAF SUBLEAF: EAX EBX ECX EDX", all in hex
 * (with or without 0x); '#' starts a comment.
 */
struct corun_platform_cpuid_dump;

/*
 * corun_platform_cpuid_parse() - parse @text (NUL-terminated) into *@out.
 * Returns 0, -EINVAL for a malformed line (*@bad_line, if given, is its
 * 1-based number) or -ENOMEM.
 */
CORUN_API int corun_platform_cpuid_parse(const char *text, struct corun_platform_cpuid_dump **out,
                                         unsigned *bad_line);
/* Releases a dump; accepts NULL. */
CORUN_API void corun_platform_cpuid_free(struct corun_platform_cpuid_dump *d);
/* The corun_platform_cpuid_fn that answers from a dump passed as @user. */
CORUN_API bool corun_platform_cpuid_lookup(void *user, uint32_t leaf, uint32_t subleaf,
                                           uint32_t regs[4]);

/* ---- measurement ----------------------------------------------------------- */

struct corun_platform_ctxsw_opts {
    unsigned cpu;             /* the OS CPU both processes are pinned to */
    size_t working_set_bytes; /* each process touches this much per switch; 0 none */
    unsigned round_trips;     /* per repetition; 0 means 2000 */
    unsigned repetitions;     /* 0 means 7; the median is reported */
};

struct corun_platform_ctxsw_result {
    double ns_per_switch;          /* raw_ns_per_switch - overhead_ns; may be <= 0 under noise */
    double raw_ns_per_switch;      /* median over repetitions of half a round trip */
    double overhead_ns;            /* median: pipe write+read and the touch in one process */
    double raw_min_ns, raw_max_ns; /* the spread of raw_ns_per_switch over repetitions */
    unsigned repetitions;
};

/*
 * corun_platform_measure_ctxsw() - the cost of a context switch between two
 * processes, after lmbench's lat_ctx: two processes pinned to one CPU pass a
 * token through two pipes; each touches its own working set before passing it
 * on. The cost of the pipe operations and of the touch, measured in a single
 * process without switching, is subtracted. Repeated, the median reported.
 *
 * Returns 0, -EINVAL for a CPU this process may not use, a negative errno of
 * pipe/fork/affinity (through the syscall seam), or -EIO when a child died.
 * Forks; the caller must not hold locks another thread could need in the
 * children. Not thread-safe with other measurements (they would share CPUs).
 */
CORUN_API int corun_platform_measure_ctxsw(const struct corun_platform_ctxsw_opts *opts,
                                           struct corun_platform_ctxsw_result *out);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_PLATFORM_H */
