/*
 * thp-collapse.c — collapse a running process's anonymous memory into huge
 * pages with process_madvise(MADV_COLLAPSE) (Linux 6.1+), one region per call
 * so that each region's outcome is known, and a second look at smaps to say
 * what the kernel really did.
 *
 * Why it cannot harm the target: MADV_COLLAPSE copies the small pages of each
 * aligned 2 MiB range into one huge page and remaps it under the page table
 * lock; the program's data, protections and mappings are unchanged, and a
 * failure leaves the range as it was. What it can change is memory use (holes
 * in a range are filled), so sparse regions are left alone, and what the
 * program or the administrator refused (MADV_NOHUGEPAGE, prctl, "never") is
 * respected. pidfd_open and process_madvise go through corun__sys so that
 * tests inject EPERM, EINVAL, ENOSYS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"
#include "corun/thp.h"
#include "thp/thp-internal.h"

#define DEFAULT_MIN_RESIDENT_PCT 50

const char *corun_thp_collapse_status_name(enum corun_thp_collapse_status s)
{
    switch (s) {
    case CORUN_THP_COLLAPSE_DONE:
        return "collapsed";
    case CORUN_THP_COLLAPSE_FAILED:
        return "failed";
    case CORUN_THP_COLLAPSE_SKIPPED:
        return "skipped";
    case CORUN_THP_COLLAPSE_PLANNED:
        return "planned";
    case CORUN_THP_COLLAPSE_PARTIAL:
        return "partial";
    }
    return "unknown";
}

const char *corun_thp_collapse_reason(int err)
{
    switch (err < 0 ? -err : err) {
    case 0:
        return "collapsed";
    case EINVAL:
        return "EINVAL: the kernel refused (a range with nothing mapped, one not suitable for "
               "collapse, or process_madvise without MADV_COLLAPSE: Linux before 6.1)";
    case EAGAIN:
        return "EAGAIN: pages were busy (locked, under writeback or migration); try again";
    case ENOMEM:
        return "ENOMEM: no free huge page (memory too fragmented) or the memory cgroup's "
               "limit was reached";
    case EPERM:
        return "EPERM: not permitted: needs CAP_SYS_NICE and ptrace access to the process";
    case ESRCH:
        return "ESRCH: the process exited";
    case ENOSYS:
        return "ENOSYS: this kernel has no process_madvise (Linux 5.10+)";
    case EFAULT:
        return "EFAULT: the range is no longer mapped";
    }
    return corun_strerror(err);
}

/* The kernel release below @rootfd (or uname's) as major * 1000 + minor; 0 unknown. */
static unsigned kernel_version(int rootfd)
{
    char buf[128];
    unsigned major = 0, minor = 0;
    struct utsname u;

    if (corun__read_text(rootfd, "proc/sys/kernel/osrelease", buf, sizeof(buf)) < 0) {
        if (uname(&u))
            return 0;
        snprintf(buf, sizeof(buf), "%s", u.release);
    }
    if (sscanf(buf, "%u.%u", &major, &minor) != 2)
        return 0;
    return major * 1000 + minor;
}

/* Private anonymous memory: no path, the heap, or a region named with
 * prctl(PR_SET_VMA_ANON_NAME) ("[anon:NAME]"). Not the stack, which grows. */
static bool is_private_anon(const struct corun_thp_region *r)
{
    return r->perms[3] == 'p' &&
           (!r->name[0] || !strcmp(r->name, "[heap]") || !strncmp(r->name, "[anon:", 6));
}

/*
 * Chooses the candidate regions of @cov: private anonymous mappings holding
 * at least one aligned huge page range, each marked planned or skipped with
 * its reason. Returns 0 or -ENOMEM.
 */
static int plan_regions(const struct corun_thp_coverage *cov, uint64_t pmd, unsigned min_pct,
                        struct corun_thp_collapse_result *res)
{
    res->regions = calloc(cov->nregions ? cov->nregions : 1, sizeof(*res->regions));
    if (!res->regions)
        return -ENOMEM;
    for (unsigned i = 0; i < cov->nregions; i++) {
        const struct corun_thp_region *r = &cov->regions[i];
        struct corun_thp_collapse_region *c = &res->regions[res->nregions];
        uint64_t hs = (r->start + pmd - 1) / pmd * pmd, he = r->end / pmd * pmd;
        uint64_t span_kb = (r->end - r->start) >> 10;

        if (!is_private_anon(r) || he <= hs)
            continue;
        res->nregions++;
        c->start = r->start;
        c->end = r->end;
        c->huge_start = hs;
        c->huge_end = he;
        c->anon_kb = r->anon_kb;
        c->anon_huge_kb_before = r->anon_huge_kb;
        c->anon_huge_kb_after = UINT64_MAX;
        c->status = CORUN_THP_COLLAPSE_SKIPPED;
        res->anon_kb += r->anon_kb;
        res->anon_huge_kb_before += r->anon_huge_kb;
        if (r->refused)
            c->reason = "the program refused huge pages here (MADV_NOHUGEPAGE)";
        else if (!r->anon_kb)
            c->reason = "nothing resident";
        else if (r->anon_kb * 100 < span_kb * min_pct)
            c->reason = "sparse: collapsing would fill its holes and raise memory use";
        else if (r->anon_kb - (r->anon_huge_kb < r->anon_kb ? r->anon_huge_kb : r->anon_kb) < pmd >>
                 10)
            /* Less than one huge page's worth left in small pages. */
            c->reason = "already in huge pages";
        else
            c->status = CORUN_THP_COLLAPSE_PLANNED;
    }
    return 0;
}

/* Whether @err from process_madvise concerns the whole process, not one range. */
static bool whole_process_error(int err, bool first)
{
    return err == -ESRCH || err == -ENOSYS || (first && err == -EPERM);
}

/*
 * Whether the huge page range at @addr has any page present or swapped, from
 * /proc/PID/pagemap (@pagemap, -1 when it could not be opened: then every
 * range counts as used). The kernel refuses to collapse an empty range with
 * EINVAL, which would otherwise read as a failure.
 */
static bool range_used(int pagemap, uint64_t addr, uint64_t pmd)
{
    uint64_t entries[512];
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size_t)(pmd / page), done = 0;

    if (pagemap < 0)
        return true;
    while (done < n) {
        size_t want = n - done < 512 ? n - done : 512;
        ssize_t got = pread(pagemap, entries, want * 8, (off_t)((addr / page + done) * 8));

        if (got <= 0)
            return true;
        for (ssize_t i = 0; i < got / 8; i++)
            if (entries[i] & (3ull << 62)) /* present or swapped */
                return true;
        done += (size_t)got / 8;
    }
    return false;
}

/*
 * Runs MADV_COLLAPSE on each huge page range of a planned region. Returns 0,
 * or a whole-process -errno (with @first_call telling whether any call was
 * made before); the region's fields say how it went.
 */
static int collapse_region(int pidfd, int pagemap, struct corun_thp_collapse_region *c,
                           uint64_t pmd, bool *first_call)
{
    for (uint64_t a = c->huge_start; a < c->huge_end; a += pmd) {
        struct iovec iov = {.iov_base = (void *)(uintptr_t)a, .iov_len = (size_t)pmd};
        int err;

        if (!range_used(pagemap, a, pmd))
            continue;
        c->ranges++;
        if (corun__sys.process_madvise(pidfd, &iov, 1, CORUN_MADV_COLLAPSE, 0) >= 0) {
            c->ranges_collapsed++;
            *first_call = false;
            continue;
        }
        err = -errno;
        if (whole_process_error(err, *first_call)) {
            c->error = err;
            return err;
        }
        *first_call = false;
        if (!c->error)
            c->error = err;
    }
    if (!c->ranges) {
        c->status = CORUN_THP_COLLAPSE_SKIPPED;
        c->reason = "nothing resident"; /* it emptied since it was read */
    } else if (c->ranges_collapsed == c->ranges)
        c->status = CORUN_THP_COLLAPSE_DONE;
    else
        c->status = c->ranges_collapsed ? CORUN_THP_COLLAPSE_PARTIAL : CORUN_THP_COLLAPSE_FAILED;
    if (c->error)
        c->reason = corun_thp_collapse_reason(c->error);
    return 0;
}

/* Runs MADV_COLLAPSE on each planned region. 0, or a whole-process -errno. */
static int collapse_regions(int rootfd, pid_t pid, uint64_t pmd,
                            struct corun_thp_collapse_result *res, char *why, size_t whylen)
{
    bool first = true;
    int pidfd = corun__sys.pidfd_open(pid, 0), err = 0, pagemap;
    char path[64];

    if (pidfd < 0) {
        err = -errno;
        snprintf(why, whylen, "pidfd_open(%d): %s", (int)pid,
                 err == -ENOSYS ? "this kernel has no pidfd_open (Linux 5.3+)"
                                : corun_thp_collapse_reason(err));
        return err == -ENOSYS ? -ENOTSUP : err;
    }
    snprintf(path, sizeof(path), "proc/%d/pagemap", (int)pid);
    pagemap = corun__root_openat(rootfd, path, O_RDONLY);
    for (unsigned i = 0; i < res->nregions && !err; i++) {
        struct corun_thp_collapse_region *c = &res->regions[i];

        if (c->status != CORUN_THP_COLLAPSE_PLANNED)
            continue;
        err = collapse_region(pidfd, pagemap, c, pmd, &first);
        if (err) {
            snprintf(why, whylen, "process_madvise(%d, MADV_COLLAPSE): %s", (int)pid,
                     corun_thp_collapse_reason(err));
            err = err == -ENOSYS ? -ENOTSUP : err;
        } else if (c->error) {
            corun__debug("thp: collapse of %d [%#llx, %#llx): %u of %u ranges: %s", (int)pid,
                         (unsigned long long)c->huge_start, (unsigned long long)c->huge_end,
                         c->ranges_collapsed, c->ranges, c->reason);
        }
    }
    if (pagemap >= 0)
        close(pagemap);
    close(pidfd);
    return err;
}

/* Re-reads the coverage and fills in the "after" figures. */
static void measure_after(int rootfd, struct corun_thp_collapse_result *res)
{
    struct corun_thp_coverage *cov = NULL;

    if (corun__thp_coverage_at(rootfd, res->pid, CORUN_THP_REGIONS, &cov))
        return;
    res->anon_huge_kb_after = 0;
    for (unsigned i = 0; i < res->nregions; i++) {
        struct corun_thp_collapse_region *c = &res->regions[i];

        for (unsigned k = 0; k < cov->nregions; k++)
            if (cov->regions[k].start == c->start) {
                c->anon_huge_kb_after = cov->regions[k].anon_huge_kb;
                res->anon_huge_kb_after += c->anon_huge_kb_after;
                break;
            }
    }
    corun_thp_coverage_free(cov);
}

/* The refusals that concern the whole system or process, before any syscall. */
static int check_allowed(int rootfd, const char *root, const struct corun_thp_coverage *cov,
                         uint64_t *pmd, char *why, size_t whylen)
{
    struct corun_thp_system sys;
    unsigned kver = kernel_version(rootfd);

    corun_thp_system_read(root, &sys);
    *pmd = sys.pmd_size_bytes ? sys.pmd_size_bytes : 2u << 20;
    if (sys.mode == CORUN_THP_NEVER || sys.mode == CORUN_THP_ABSENT) {
        snprintf(why, whylen, "transparent huge pages are %s on this system",
                 sys.mode == CORUN_THP_NEVER ? "'never'" : "not built into the kernel");
        return -ENOTSUP;
    }
    if (kver && kver < 6001) {
        snprintf(why, whylen, "Linux %u.%u has no MADV_COLLAPSE (6.1 and later)", kver / 1000,
                 kver % 1000);
        return -ENOTSUP;
    }
    if (cov->thp_disabled == 1) {
        snprintf(why, whylen,
                 "process %d disabled transparent huge pages with prctl(PR_SET_THP_DISABLE)",
                 (int)cov->pid);
        return -ENOTSUP;
    }
    return 0;
}

int corun_thp_collapse(const char *root, pid_t pid, const struct corun_thp_collapse_opts *opts,
                       struct corun_thp_collapse_result **out, char *why, size_t whylen)
{
    struct corun_thp_collapse_result *res = NULL;
    struct corun_thp_coverage *cov = NULL;
    unsigned min_pct =
        opts && opts->min_resident_pct ? opts->min_resident_pct : DEFAULT_MIN_RESIDENT_PCT;
    uint64_t pmd;
    int rootfd, err;

    *out = NULL;
    if (whylen)
        why[0] = '\0';
    rootfd = corun__root_open(root);
    if (rootfd < 0)
        return rootfd;
    err = corun__thp_coverage_at(rootfd, pid, CORUN_THP_REGIONS, &cov);
    if (err) {
        snprintf(why, whylen, "cannot read /proc/%d/smaps: %s", (int)pid, corun_strerror(err));
        goto out_close;
    }
    err = check_allowed(rootfd, root, cov, &pmd, why, whylen);
    if (err)
        goto out_cov;
    err = -ENOMEM;
    res = calloc(1, sizeof(*res));
    if (!res || plan_regions(cov, pmd, min_pct, res))
        goto out_cov;
    res->pid = pid;
    res->anon_huge_kb_after = UINT64_MAX;
    if (!(opts && opts->dry_run)) {
        err = collapse_regions(rootfd, pid, pmd, res, why, whylen);
        if (err)
            goto out_cov;
        measure_after(rootfd, res);
    }
    for (unsigned i = 0; i < res->nregions; i++) {
        enum corun_thp_collapse_status s = res->regions[i].status;

        res->collapsed += s == CORUN_THP_COLLAPSE_DONE;
        res->partial += s == CORUN_THP_COLLAPSE_PARTIAL;
        res->failed += s == CORUN_THP_COLLAPSE_FAILED;
        res->skipped += s == CORUN_THP_COLLAPSE_SKIPPED;
    }
    *out = res;
    res = NULL;
    err = 0;

out_cov:
    corun_thp_coverage_free(cov);
    corun_thp_collapse_free(res);
out_close:
    close(rootfd);
    return err;
}

void corun_thp_collapse_free(struct corun_thp_collapse_result *res)
{
    if (!res)
        return;
    free(res->regions);
    free(res);
}
