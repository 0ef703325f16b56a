/*
 * corun/thp.h — huge pages for programs that never asked for them.
 *
 * Three things, each usable alone:
 *
 *  - The system's settings: the transparent huge page (THP) mode and defrag
 *    policy from /sys/kernel/mm/transparent_hugepage, the PMD huge page size,
 *    the per-size ("mTHP", Linux 6.8+) modes, and the hugetlb pools of
 *    /sys/kernel/mm/hugepages (corun_thp_system_read()).
 *
 *  - A process's coverage: how much of its anonymous memory sits in huge
 *    pages, from /proc/PID/smaps_rollup, and per region from /proc/PID/smaps
 *    (AnonHugePages against Anonymous, FilePmdMapped, THPeligible, whether the
 *    region was advised with MADV_HUGEPAGE or refused with MADV_NOHUGEPAGE)
 *    (corun_thp_coverage_read()).
 *
 *  - Collapse of a running process's anonymous regions into huge pages with
 *    process_madvise(MADV_COLLAPSE) (Linux 6.1+), reporting per region what
 *    succeeded and why anything did not (corun_thp_collapse()). Collapse never
 *    changes what the target reads or writes: the kernel copies the small
 *    pages into a huge one under the page table lock. It never touches a
 *    region the program refused (MADV_NOHUGEPAGE), never collapses a sparse
 *    region (that would raise the program's memory use), and does nothing
 *    when THP is "never" or the process disabled THP with prctl.
 *
 * Every reader takes a root directory (NULL means "/"), below which /proc and
 * /sys are read, so tests replay recorded trees (tests/fixtures/thp/).
 *
 * Enabling huge pages for a program at launch is the command's business
 * (`corun run --thp`, src/cli/thp-launch.c, which sets glibc's malloc tunable
 * and preloads libcorun-thp.so); docs/internals/thp.md says which path each
 * case takes and why.
 *
 * Thread-safety: every function is safe to call from several threads on
 * different objects; none keeps global state.
 */
#ifndef CORUN_THP_H
#define CORUN_THP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The advice value of MADV_COLLAPSE (Linux 6.1), for headers that lack it. */
#define CORUN_MADV_COLLAPSE 25

/* A THP mode, as /sys/kernel/mm/transparent_hugepage/enabled selects it. */
enum corun_thp_mode {
    CORUN_THP_UNKNOWN = 0, /* the file could not be read or parsed */
    CORUN_THP_ALWAYS,      /* every large enough anonymous mapping */
    CORUN_THP_MADVISE,     /* only regions advised with MADV_HUGEPAGE */
    CORUN_THP_NEVER,       /* none */
    CORUN_THP_INHERIT,     /* per-size setting: follows the top-level mode */
    CORUN_THP_ABSENT,      /* the kernel has no THP (no sysfs directory) */
};

/* "always", "madvise", "never", "inherit", "absent" or "unknown". */
CORUN_API const char *corun_thp_mode_name(enum corun_thp_mode mode);

#define CORUN_THP_MAX_SIZES 16
#define CORUN_THP_MAX_POOLS 8

/* One huge page size the THP code may use (hugepages-<N>kB directories). */
struct corun_thp_size {
    uint64_t size_kb;
    enum corun_thp_mode mode; /* ALWAYS, MADVISE, NEVER or INHERIT */
};

/* One hugetlb pool (/sys/kernel/mm/hugepages/hugepages-<N>kB). */
struct corun_hugetlb_pool {
    uint64_t size_kb;
    uint64_t total, free, reserved, surplus; /* pages; UINT64_MAX unreadable */
};

struct corun_thp_system {
    enum corun_thp_mode mode; /* transparent_hugepage/enabled */
    char defrag[24];        /* "always", "defer", "defer+madvise", "madvise", "never"; "" unknown */
    char shmem_enabled[24]; /* "always", "within_size", "advise", "never"...; "" unknown */
    uint64_t pmd_size_bytes; /* hpage_pmd_size; 0 when unknown */
    unsigned nsizes;         /* per-size modes, ascending by size (Linux 6.8+) */
    struct corun_thp_size sizes[CORUN_THP_MAX_SIZES];
    unsigned npools; /* hugetlb pools, ascending by size */
    struct corun_hugetlb_pool pools[CORUN_THP_MAX_POOLS];
    uint64_t anon_huge_kb; /* AnonHugePages of /proc/meminfo; UINT64_MAX unknown */
};

/*
 * corun_thp_system_read() - the THP and hugetlb settings below @root (NULL:
 * the live system). A kernel without THP gives mode CORUN_THP_ABSENT and
 * returns 0; files that are missing leave their fields unknown.
 * Returns 0, or -errno when @root cannot be opened.
 */
CORUN_API int corun_thp_system_read(const char *root, struct corun_thp_system *out);

/* One mapping of a process, from /proc/PID/smaps. Sizes in KiB. */
struct corun_thp_region {
    uint64_t start, end; /* [start, end) */
    char perms[5];       /* "rw-p" */
    char name[80];       /* path, "[heap]", "[stack]"...; "" for anonymous (truncated) */
    uint64_t rss_kb;
    uint64_t anon_kb;      /* Anonymous */
    uint64_t anon_huge_kb; /* AnonHugePages: the part of anon_kb in PMD-size pages */
    uint64_t file_pmd_kb;  /* FilePmdMapped */
    uint64_t shmem_pmd_kb; /* ShmemPmdMapped */
    uint64_t hugetlb_kb;   /* Private_Hugetlb + Shared_Hugetlb */
    int thp_eligible;      /* THPeligible: 1, 0, or -1 when the kernel does not say */
    bool advised;          /* VmFlags "hg": the program asked (MADV_HUGEPAGE) */
    bool refused;          /* VmFlags "nh": the program refused (MADV_NOHUGEPAGE) */
};

struct corun_thp_coverage {
    pid_t pid;
    uint64_t rss_kb, anon_kb, anon_huge_kb, file_pmd_kb, shmem_pmd_kb, hugetlb_kb;
    int thp_disabled;  /* 1: the process disabled THP with prctl; 0 not; -1 unknown */
    unsigned nregions; /* 0 unless CORUN_THP_REGIONS was asked */
    struct corun_thp_region *regions;
};

/* Flags of corun_thp_coverage_read(). */
#define CORUN_THP_REGIONS 1u /* also read smaps region by region */

/*
 * corun_thp_coverage_read() - the huge page coverage of process @pid below
 * @root (NULL: the live system). Totals come from smaps_rollup (or the sum
 * of smaps where the rollup is missing); with CORUN_THP_REGIONS, regions
 * lists every mapping and the totals are their sums.
 * Returns 0 and a coverage to free with corun_thp_coverage_free(); -ESRCH
 * when there is no such process, -EACCES/-EPERM when its maps may not be
 * read, -EINVAL for a file that is not smaps, -ENOMEM.
 */
CORUN_API int corun_thp_coverage_read(const char *root, pid_t pid, unsigned flags,
                                      struct corun_thp_coverage **out);
/* Frees a coverage; accepts NULL. */
CORUN_API void corun_thp_coverage_free(struct corun_thp_coverage *cov);

/*
 * corun_thp_parse_smaps() - parse the text of an smaps or smaps_rollup file
 * into @cov (its totals, and its regions when @regions is true; the regions
 * array is allocated). For fuzzing and fixtures.
 * Returns 0, -EINVAL when the text holds no mapping, or -ENOMEM.
 */
CORUN_API int corun_thp_parse_smaps(const char *text, bool regions, struct corun_thp_coverage *cov);

/* ---- collapse ------------------------------------------------------------ */

struct corun_thp_collapse_opts {
    /*
     * A region is collapsed only when at least this share (percent) of it is
     * resident: MADV_COLLAPSE fills the holes of each 2 MiB range, so a sparse
     * region would grow the program's memory. 0 means the default, 50.
     */
    unsigned min_resident_pct;
    bool dry_run; /* choose the regions and say why, without collapsing */
};

enum corun_thp_collapse_status {
    CORUN_THP_COLLAPSE_DONE,    /* the kernel collapsed the whole range */
    CORUN_THP_COLLAPSE_FAILED,  /* the kernel refused; see error and reason */
    CORUN_THP_COLLAPSE_SKIPPED, /* not tried; see reason */
    CORUN_THP_COLLAPSE_PLANNED, /* dry run: would be tried */
    CORUN_THP_COLLAPSE_PARTIAL, /* some huge page ranges collapsed, others refused */
};

/* "collapsed", "failed", "skipped", "planned" or "partial". */
CORUN_API const char *corun_thp_collapse_status_name(enum corun_thp_collapse_status s);

struct corun_thp_collapse_region {
    uint64_t start, end;           /* the mapping */
    uint64_t huge_start, huge_end; /* its PMD-aligned part, advised one huge page at a time */
    unsigned ranges;               /* huge page ranges tried */
    unsigned ranges_collapsed;     /* of which the kernel collapsed (or found huge already) */
    uint64_t anon_kb;
    uint64_t anon_huge_kb_before, anon_huge_kb_after; /* after: UINT64_MAX unknown */
    enum corun_thp_collapse_status status;
    int error;          /* 0, or the first -errno process_madvise gave */
    const char *reason; /* static words; NULL when all collapsed */
};

struct corun_thp_collapse_result {
    pid_t pid;
    uint64_t anon_kb, anon_huge_kb_before, anon_huge_kb_after;
    unsigned collapsed, partial, failed, skipped; /* regions by status */
    unsigned nregions; /* the anonymous regions of at least one huge page */
    struct corun_thp_collapse_region *regions;
};

/*
 * corun_thp_collapse() - collapse the anonymous memory of process @pid into
 * huge pages with process_madvise(MADV_COLLAPSE), one call per aligned huge
 * page range that has pages present (an empty range, which the kernel
 * refuses with EINVAL, would otherwise hide the others), then re-read its
 * coverage. Candidates are the private anonymous mappings ([heap] and
 * [anon:NAME] included, not [stack]) that hold at least one PMD-aligned huge
 * page range; a region is skipped when the program refused huge pages there,
 * when nothing is resident, when it is sparse (opts), or when it is already
 * in huge pages (less than one huge page's worth left in small pages). The
 * target keeps running throughout and its memory contents are unchanged.
 *
 * Returns 0 when the regions were tried (each region says how it went: one
 * region may fail with -EAGAIN or -ENOMEM while others succeed) and stores a
 * result to free with corun_thp_collapse_free(). Returns a negative errno and
 * writes the reason into @why (@whylen bytes) when nothing could be tried:
 *   -ESRCH    no such process, or it exited
 *   -EPERM    not permitted (pidfd_open or process_madvise needs ptrace
 *             access and CAP_SYS_NICE over the target)
 *   -ENOTSUP  THP is "never" or absent, the process disabled THP with prctl,
 *             the kernel is older than 6.1 (no MADV_COLLAPSE), or lacks
 *             pidfd_open/process_madvise
 *   -ENOMEM, or an error reading /proc/PID/smaps.
 * @opts may be NULL for the defaults. @root as for corun_thp_coverage_read()
 * (the syscalls always go to the live kernel).
 */
CORUN_API int corun_thp_collapse(const char *root, pid_t pid,
                                 const struct corun_thp_collapse_opts *opts,
                                 struct corun_thp_collapse_result **out, char *why, size_t whylen);
/* Frees a collapse result; accepts NULL. */
CORUN_API void corun_thp_collapse_free(struct corun_thp_collapse_result *res);

/*
 * corun_thp_collapse_reason() - what a -errno from MADV_COLLAPSE on one region
 * means, in words (static string; never NULL).
 */
CORUN_API const char *corun_thp_collapse_reason(int err);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_THP_H */
