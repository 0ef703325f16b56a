/*
 * encode.c — portable presets to native events, per PMU model.
 *
 * The mapping is data: one table per vendor and model family below, each
 * entry naming the libpfm4 event (without its "pmu::" prefix) that stands for
 * a preset on that model, and what that event really counts. Code here only
 * looks a table up and asks libpfm4 for the perf encoding. A model corun has
 * no table for gets perf's generic hardware events, which the kernel maps per
 * model (docs/internals/sense.md says where those differ from ours).
 *
 * libpfm4 keeps global state: it is initialised once (pthread_once) and reads
 * LIBPFM_FORCE_PMU and LIBPFM_ENCODE_INACTIVE from the environment at that
 * moment. The library never reads or writes the environment; the program
 * does, before its first call (see corun_sense_encode() in sense.h).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "sense/sense-internal.h"

#define NHW (CORUN_EV_STALL_CYCLES_BACKEND + 1)

struct preset_native {
    const char *event; /* libpfm4 "EVENT:UMASK..." without the PMU; NULL: none on this model */
    const char *note;  /* what it counts; when @event is NULL, why there is none */
};

struct model_table {
    const char *name; /* corun's name for the table */
    const char *vendor;
    const char *pmus[8]; /* libpfm4 core PMUs it applies to, NULL-terminated */
    struct preset_native ev[NHW];
};

/* The tables read best as written. */
/* clang-format off */

/* ---- Intel ------------------------------------------------------------------ */

#define INTEL_CYCLES                                                                               \
    {"UNHALTED_CORE_CYCLES", "core cycles while the thread is not halted, at the actual "         \
                             "(turbo or throttled) frequency; architectural, fixed counter 1"}
#define INTEL_INSTRUCTIONS                                                                         \
    {"INST_RETIRED:ANY_P", "instructions retired (architectural; the kernel may place it on "     \
                           "fixed counter 0)"}
#define INTEL_REF_CYCLES                                                                           \
    {"UNHALTED_REFERENCE_CYCLES", "unhalted cycles at the TSC (nominal) rate; the kernel's "      \
                                  "pseudo-encoding 0x0300 for fixed counter 2"}
#define INTEL_LLC_MISSES                                                                           \
    {"LONGEST_LAT_CACHE:MISS", "core-originated cacheable requests that miss the L3: demand "     \
                               "data and code reads, RFOs, and L1/L2 hardware prefetches; not "    \
                               "L3 prefetches (architectural event 0x2e/0x41)"}
#define INTEL_BRANCH_MISSES                                                                        \
    {"BR_MISP_RETIRED:ALL_BRANCHES", "retired mispredicted branches (speculative wrong-path "     \
                                     "mispredictions are not counted)"}
#define INTEL_STALLS                                                                               \
    {"CYCLE_ACTIVITY:STALLS_TOTAL", "cycles with no uop executed, any cause: mostly backend "     \
                                    "(memory, dependencies), but also frontend starvation once "   \
                                    "the scheduler drains; Intel has no pure backend-stall cycles"}

static const struct model_table intel_skx = {
    .name = "intel-skx",
    .vendor = "intel",
    .pmus = {"skl", "skx", "clx"},
    .ev = {
        [CORUN_EV_CYCLES] = INTEL_CYCLES,
        [CORUN_EV_INSTRUCTIONS] = INTEL_INSTRUCTIONS,
        [CORUN_EV_REF_CYCLES] = INTEL_REF_CYCLES,
        [CORUN_EV_LLC_REFERENCES] = {"LONGEST_LAT_CACHE:REFERENCE",
                                     "core-originated cacheable requests to the L3, demand and "
                                     "L1/L2 prefetch (architectural event 0x2e/0x4f)"},
        [CORUN_EV_LLC_MISSES] = INTEL_LLC_MISSES,
        [CORUN_EV_BRANCH_MISSES] = INTEL_BRANCH_MISSES,
        [CORUN_EV_DTLB_MISSES] = {"DTLB_LOAD_MISSES:MISS_CAUSES_A_WALK",
                                  "loads that miss both TLB levels and start a page walk, "
                                  "speculative ones included; stores are not counted"},
        [CORUN_EV_STALL_CYCLES_BACKEND] = INTEL_STALLS,
    },
};

static const struct model_table intel_icl = {
    .name = "intel-icl",
    .vendor = "intel",
    .pmus = {"icl", "icx"},
    .ev = {
        [CORUN_EV_CYCLES] = INTEL_CYCLES,
        [CORUN_EV_INSTRUCTIONS] = INTEL_INSTRUCTIONS,
        [CORUN_EV_REF_CYCLES] = INTEL_REF_CYCLES,
        [CORUN_EV_LLC_REFERENCES] = {"LONGEST_LAT_CACHE:REFERENCES",
                                     "core-originated cacheable requests to the L3 (libpfm4 "
                                     "spells the umask REFERENCES on Ice Lake)"},
        [CORUN_EV_LLC_MISSES] = INTEL_LLC_MISSES,
        [CORUN_EV_BRANCH_MISSES] = INTEL_BRANCH_MISSES,
        [CORUN_EV_DTLB_MISSES] = {"DTLB_LOAD_MISSES:WALK_COMPLETED",
                                  "loads whose page walk completed (any page size); Ice Lake "
                                  "has no MISS_CAUSES_A_WALK, so aborted walks are not counted"},
        [CORUN_EV_STALL_CYCLES_BACKEND] = INTEL_STALLS,
    },
};

static const struct model_table intel_spr = {
    .name = "intel-spr",
    .vendor = "intel",
    .pmus = {"spr"},
    .ev = {
        [CORUN_EV_CYCLES] = INTEL_CYCLES,
        [CORUN_EV_INSTRUCTIONS] = INTEL_INSTRUCTIONS,
        [CORUN_EV_REF_CYCLES] = INTEL_REF_CYCLES,
        [CORUN_EV_LLC_REFERENCES] = {"LONGEST_LAT_CACHE:REFERENCE",
                                     "core-originated cacheable requests to the L3, demand and "
                                     "L1/L2 prefetch"},
        [CORUN_EV_LLC_MISSES] = INTEL_LLC_MISSES,
        [CORUN_EV_BRANCH_MISSES] = INTEL_BRANCH_MISSES,
        [CORUN_EV_DTLB_MISSES] = {"DTLB_LOAD_MISSES:WALK_COMPLETED",
                                  "loads whose page walk completed (event 0x12 on Sapphire "
                                  "Rapids, not 0x08)"},
        [CORUN_EV_STALL_CYCLES_BACKEND] = INTEL_STALLS,
    },
};

/* ---- AMD -------------------------------------------------------------------- */

#define AMD_CYCLES                                                                                 \
    {"CYCLES_NOT_IN_HALT", "core cycles not in halt, at the actual frequency (PMCx076)"}
#define AMD_INSTRUCTIONS {"RETIRED_INSTRUCTIONS", "instructions retired (PMCx0C0)"}
#define AMD_NO_REF_CYCLES                                                                          \
    {NULL, "AMD Zen cores have no reference-cycles event (APERF/MPERF are MSRs, not PMU "         \
           "counters) and the kernel maps no generic ref-cycles on AMD"}
#define AMD_LLC_REFERENCES                                                                         \
    {"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS",                       \
     "L2 misses of demand data-cache and instruction-cache requests, i.e. requests the core "     \
     "sends to the L3; the L3 itself is a separate per-CCX PMU (amd_l3) that counts only "        \
     "system-wide (the kernel's generic cache-misses is this same 0x0964, an L2 miss)"}
#define AMD_BRANCH_MISSES                                                                          \
    {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "retired mispredicted branches (PMCx0C3)"}
#define AMD_DTLB                                                                                   \
    {"L1_DTLB_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:"   \
     "TLB_RELOAD_4K_L2_MISS",                                                                      \
     "loads and stores that miss the L1 and L2 DTLB (a page walk), all page sizes (PMCx045)"}
#define AMD_STALLS_ZEN3                                                                            \
    {"DISPATCH_RESOURCE_STALL_CYCLES_1:INT_PHY_REG_FILE_RSRC_STALL:LOAD_QUEUE_RSRC_STALL:"        \
     "STORE_QUEUE_RSRC_STALL:TAKEN_BRANCH_BUFFER_RSRC_STALL:FP_REG_FILE_RSRC_STALL:"               \
     "FP_SCHEDULER_RSRC_STALL",                                                                    \
     "cycles dispatch stalled because a backend resource was full (register files, load and "     \
     "store queues, FP scheduler); integer-scheduler token stalls (PMCx0AF) are not included"}

static const struct model_table amd_zen2 = {
    .name = "amd-zen2",
    .vendor = "amd",
    .pmus = {"amd64_fam17h_zen2"},
    .ev = {
        [CORUN_EV_CYCLES] = AMD_CYCLES,
        [CORUN_EV_INSTRUCTIONS] = AMD_INSTRUCTIONS,
        [CORUN_EV_REF_CYCLES] = AMD_NO_REF_CYCLES,
        [CORUN_EV_LLC_REFERENCES] = AMD_LLC_REFERENCES,
        [CORUN_EV_LLC_MISSES] = {"DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:"
                                 "LS_MABRESP_RMT_CACHE:LS_MABRESP_RMT_DRAM",
                                 "demand data-cache refills served by DRAM or another die's "
                                 "cache: an L3-miss proxy for demand data only (no code, no "
                                 "prefetch) (PMCx043)"},
        [CORUN_EV_BRANCH_MISSES] = AMD_BRANCH_MISSES,
        [CORUN_EV_DTLB_MISSES] = AMD_DTLB,
        [CORUN_EV_STALL_CYCLES_BACKEND] = {
            "DISPATCH_RESOURCE_STALL_CYCLES_1:INT_PHY_REG_FILE_RSRC_STALL:LOAD_QUEUE_RSRC_STALL:"
            "STORE_QUEUE_RSRC_STALL:INT_SCHEDULER_MISC_RSRC_STALL:TAKEN_BRANCH_BUFFER_RSRC_STALL:"
            "FP_REG_FILE_RSRC_STALL:FP_SCHEDULER_FILE_RSRC_STALL:FP_MISC_FILE_RSRC_STALL",
            "cycles dispatch stalled because a backend resource was full (PMCx0AE, all causes)"},
    },
};

static const struct model_table amd_zen3 = {
    .name = "amd-zen3",
    .vendor = "amd",
    .pmus = {"amd64_fam19h_zen3"},
    .ev = {
        [CORUN_EV_CYCLES] = AMD_CYCLES,
        [CORUN_EV_INSTRUCTIONS] = AMD_INSTRUCTIONS,
        [CORUN_EV_REF_CYCLES] = AMD_NO_REF_CYCLES,
        [CORUN_EV_LLC_REFERENCES] = AMD_LLC_REFERENCES,
        [CORUN_EV_LLC_MISSES] = {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:EXT_CACHE_LCL:MEM_IO_LCL:"
                                 "EXT_CACHE_RMT:MEM_IO_RMT",
                                 "demand data-cache fills from DRAM/IO or another CCX's cache: "
                                 "misses of this CCX's L3 for demand data only (PMCx043)"},
        [CORUN_EV_BRANCH_MISSES] = AMD_BRANCH_MISSES,
        [CORUN_EV_DTLB_MISSES] = AMD_DTLB,
        [CORUN_EV_STALL_CYCLES_BACKEND] = AMD_STALLS_ZEN3,
    },
};

static const struct model_table amd_zen4 = {
    .name = "amd-zen4",
    .vendor = "amd",
    .pmus = {"amd64_fam19h_zen4"},
    .ev = {
        [CORUN_EV_CYCLES] = AMD_CYCLES,
        [CORUN_EV_INSTRUCTIONS] = AMD_INSTRUCTIONS,
        [CORUN_EV_REF_CYCLES] = AMD_NO_REF_CYCLES,
        [CORUN_EV_LLC_REFERENCES] = AMD_LLC_REFERENCES,
        [CORUN_EV_LLC_MISSES] = {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:NEAR_CACHE_NEAR_FAR:"
                                 "DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR:ALT_MEM_NEAR_FAR",
                                 "demand data-cache fills from anywhere beyond this CCX (other "
                                 "CCXs' caches, DRAM, CXL): L3 misses for demand data (PMCx043)"},
        [CORUN_EV_BRANCH_MISSES] = AMD_BRANCH_MISSES,
        [CORUN_EV_DTLB_MISSES] = AMD_DTLB,
        [CORUN_EV_STALL_CYCLES_BACKEND] = AMD_STALLS_ZEN3,
    },
};

static const struct model_table *const tables[] = {
    &intel_skx, &intel_icl, &intel_spr, &amd_zen2, &amd_zen3, &amd_zen4,
};

/* clang-format on */

/* ---- perf's generic events (the fallback) ---------------------------------- */

struct generic_event {
    uint32_t type;
    uint64_t config;
    const char *name;
    const char *note;
};

#define HW_CACHE(id, op, res) ((id) | ((op) << 8) | ((res) << 16))

static const struct generic_event generic[CORUN_NEVENTS] = {
    [CORUN_EV_CYCLES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "PERF_COUNT_HW_CPU_CYCLES",
                         "unhalted core cycles, as the kernel maps them for this model"},
    [CORUN_EV_INSTRUCTIONS] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
                               "PERF_COUNT_HW_INSTRUCTIONS", "instructions retired"},
    [CORUN_EV_REF_CYCLES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
                             "PERF_COUNT_HW_REF_CPU_CYCLES",
                             "unhalted reference cycles (Intel only; not mapped on AMD)"},
    [CORUN_EV_LLC_REFERENCES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
                                 "PERF_COUNT_HW_CACHE_REFERENCES",
                                 "the kernel's 'cache references': L3 on Intel, L2 on AMD Zen"},
    [CORUN_EV_LLC_MISSES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
                             "PERF_COUNT_HW_CACHE_MISSES",
                             "the kernel's 'cache misses': L3 misses on Intel, L2 misses on AMD "
                             "Zen"},
    [CORUN_EV_BRANCH_MISSES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
                                "PERF_COUNT_HW_BRANCH_MISSES", "mispredicted branches"},
    [CORUN_EV_DTLB_MISSES] = {PERF_TYPE_HW_CACHE,
                              HW_CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
                                       PERF_COUNT_HW_CACHE_RESULT_MISS),
                              "PERF_COUNT_HW_CACHE_DTLB:READ:MISS",
                              "data TLB read misses as the kernel maps them (first or second "
                              "level, by model)"},
    [CORUN_EV_STALL_CYCLES_BACKEND] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
                                       "PERF_COUNT_HW_STALLED_CYCLES_BACKEND",
                                       "backend stall cycles; mapped on few models"},
    [CORUN_EV_TASK_CLOCK_NS] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
                                "PERF_COUNT_SW_TASK_CLOCK", "CPU time of the task, in ns"},
    [CORUN_EV_CONTEXT_SWITCHES] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
                                   "PERF_COUNT_SW_CONTEXT_SWITCHES",
                                   "voluntary and involuntary context switches"},
    [CORUN_EV_CPU_MIGRATIONS] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
                                 "PERF_COUNT_SW_CPU_MIGRATIONS", "moves to another CPU"},
    [CORUN_EV_PAGE_FAULTS] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
                              "PERF_COUNT_SW_PAGE_FAULTS", "minor and major page faults"},
};

/* ---- libpfm4 ---------------------------------------------------------------- */

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_ret;

static void pfm_init(void)
{
    pfm_init_ret = pfm_initialize();
}

/* This CPU's core PMU as libpfm4 detected (or was forced to): its name, or NULL. */
static const char *active_core_pmu(void)
{
    pfm_pmu_t p;

    pfm_for_all_pmus(p)
    {
        pfm_pmu_info_t info;

        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS)
            continue;
        if (info.is_present && info.type == PFM_PMU_TYPE_CORE)
            return info.name;
    }
    return NULL;
}

/* Whether libpfm4 knows a core PMU named @name (active or not). */
static bool known_core_pmu(const char *name, bool *present)
{
    pfm_pmu_t p;

    pfm_for_all_pmus(p)
    {
        pfm_pmu_info_t info;

        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS)
            continue;
        if (info.type == PFM_PMU_TYPE_CORE && !strcmp(info.name, name)) {
            *present = info.is_present;
            return true;
        }
    }
    return false;
}

static const struct model_table *table_for(const char *pmu)
{
    for (size_t t = 0; t < CORUN_ARRAY_SIZE(tables); t++)
        for (const char *const *p = tables[t]->pmus; *p; p++)
            if (!strcmp(*p, pmu))
                return tables[t];
    return NULL;
}

static const char *pmu_names[32];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void fill_pmu_names(void)
{
    size_t n = 0;

    for (size_t t = 0; t < CORUN_ARRAY_SIZE(tables); t++)
        for (const char *const *p = tables[t]->pmus; *p && n + 1 < CORUN_ARRAY_SIZE(pmu_names); p++)
            pmu_names[n++] = *p;
}

const char *const *corun_sense_pmu_names(void)
{
    pthread_once(&names_once, fill_pmu_names);
    return pmu_names;
}

/* Copies libpfm4's full name without the "x=0" modifiers it appends. */
static void strip_modifiers(const char *fstr, char *out, size_t len)
{
    size_t o = 0;
    const char *s = fstr;

    while (*s && o + 1 < len) {
        const char *colon = strchr(s, ':');
        size_t n = colon ? (size_t)(colon - s) : strlen(s);
        bool sep2 = colon && colon[1] == ':';

        if (!memchr(s, '=', n)) {
            if (o && out[o - 1] != ':')
                out[o++] = ':';
            for (size_t i = 0; i < n && o + 1 < len; i++)
                out[o++] = s[i];
            if (sep2 && o + 2 < len) {
                out[o++] = ':';
                out[o++] = ':';
            }
        }
        if (!colon)
            break;
        s = colon + (sep2 ? 2 : 1);
    }
    out[o] = '\0';
}

/* Asks libpfm4 for "@pmu::@event". 0, or a libpfm4 error (negative). */
static int pfm_encode(const char *pmu, const char *event, struct corun_event_encoding *e)
{
    struct perf_event_attr attr;
    pfm_perf_encode_arg_t arg;
    char name[512], *fstr = NULL;
    int ret;

    snprintf(name, sizeof(name), "%s::%s", pmu, event);
    memset(&attr, 0, sizeof(attr));
    memset(&arg, 0, sizeof(arg));
    arg.size = sizeof(arg);
    arg.attr = &attr;
    arg.fstr = &fstr;
    ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    if (ret != PFM_SUCCESS) {
        free(fstr);
        return ret;
    }
    e->source = CORUN_SRC_NATIVE;
    e->type = attr.type;
    e->config = attr.config;
    e->config1 = attr.config1;
    e->config2 = attr.config2;
    strip_modifiers(fstr ? fstr : name, e->native, sizeof(e->native));
    free(fstr);
    return 0;
}

static void set_generic(enum corun_event ev, struct corun_event_encoding *e, const char *note)
{
    e->source = corun_event_is_hardware(ev) ? CORUN_SRC_GENERIC : CORUN_SRC_SOFTWARE;
    e->type = generic[ev].type;
    e->config = generic[ev].config;
    e->config1 = e->config2 = 0;
    snprintf(e->native, sizeof(e->native), "%s", generic[ev].name);
    e->note = note ? note : generic[ev].note;
    e->reason[0] = '\0';
}

/* Encodes the hardware preset @ev for @pmu with table @t (NULL: generic). */
static void encode_hw(const char *pmu, bool pmu_present, const struct model_table *t,
                      enum corun_event ev, struct corun_event_encoding *e)
{
    const struct preset_native *n = t ? &t->ev[ev] : NULL;
    int ret;

    if (!t) {
        set_generic(ev, e, NULL);
        return;
    }
    if (!n->event) {
        e->source = CORUN_SRC_NONE;
        snprintf(e->reason, sizeof(e->reason), "%s has no such event: %s", pmu, n->note);
        return;
    }
    e->note = n->note;
    ret = pfm_encode(pmu, n->event, e);
    if (ret == 0)
        return;
    if (!pmu_present && ret == PFM_ERR_NOTFOUND) {
        /* libpfm4 4.13 hides inactive PMUs unless told otherwise. */
        e->source = CORUN_SRC_NONE;
        snprintf(e->reason, sizeof(e->reason),
                 "libpfm4 encodes %s (not this CPU's PMU) only with LIBPFM_ENCODE_INACTIVE=1 or "
                 "LIBPFM_FORCE_PMU=%s set before it initialises",
                 pmu, pmu);
        return;
    }
    /* This libpfm4 lacks the event: the kernel's generic one is the best left. */
    set_generic(ev, e, generic[ev].note);
    snprintf(e->reason, sizeof(e->reason), "%s", "");
    corun__debug("sense: libpfm4 cannot encode %s::%s (%s); using %s", pmu, n->event,
                 pfm_strerror(ret), generic[ev].name);
}

int corun_sense_encode(const char *pmu, struct corun_pmu_encoding *out)
{
    const struct model_table *t;
    bool present = true;
    const char *name;

    memset(out, 0, sizeof(*out));
    pthread_once(&pfm_once, pfm_init);
    if (pfm_init_ret != PFM_SUCCESS && pmu)
        return -ENOTSUP;
    if (pmu) {
        if (!known_core_pmu(pmu, &present))
            return -ENOENT;
        name = pmu;
    } else {
        name = pfm_init_ret == PFM_SUCCESS ? active_core_pmu() : NULL;
    }
    t = name ? table_for(name) : NULL;
    snprintf(out->pmu, sizeof(out->pmu), "%s", name ? name : "perf");
    snprintf(out->vendor, sizeof(out->vendor), "%s", t ? t->vendor : "");
    snprintf(out->table, sizeof(out->table), "%s", t ? t->name : "generic");
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        struct corun_event_encoding *e = &out->ev[ev];

        if (ev == CORUN_EV_RUN_DELAY_NS) {
            e->source = CORUN_SRC_PROC;
            snprintf(e->native, sizeof(e->native), "/proc/PID/task/TID/schedstat");
            e->note = "time runnable but waiting for a CPU (run-queue delay), summed over threads";
        } else if (corun_event_is_hardware(ev)) {
            encode_hw(name, present, t, ev, e);
        } else {
            set_generic(ev, e, NULL);
        }
    }
    return 0;
}

bool corun__generic_event(enum corun_event ev, uint32_t *type, uint64_t *config, const char **name)
{
    if ((unsigned)ev >= CORUN_NEVENTS || !generic[ev].name)
        return false;
    *type = generic[ev].type;
    *config = generic[ev].config;
    if (name)
        *name = generic[ev].name;
    return true;
}
