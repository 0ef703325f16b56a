/*
 * thp-smaps.c — a process's huge page coverage, from /proc/PID/smaps_rollup
 * (totals, one read however many mappings) and /proc/PID/smaps (region by
 * region). The parser takes text so that fixtures and the fuzzer feed it
 * directly; the readers go through a root directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "corun/thp.h"
#include "thp/thp-internal.h"

/*
 * Parses a mapping's header line ("7f00-7f80 rw-p 00000000 00:00 0  [heap]")
 * into @r. Returns false when @line is not a header (then it is a field).
 */
static bool parse_header(const char *line, size_t len, struct corun_thp_region *r)
{
    unsigned long long start, end;
    int off = 0;
    const char *p;
    size_t n;

    /* Field names start with a capital that may be a hex digit ("Anonymous:"),
     * but never with hex digits followed by '-'. */
    if (sscanf(line, "%llx-%llx %4s %*s %*s %*s%n", &start, &end, r->perms, &off) != 3 ||
        off <= 0 || (size_t)off > len)
        return false;
    r->start = start;
    r->end = end;
    p = line + off;
    while (p < line + len && (*p == ' ' || *p == '\t'))
        p++;
    n = (size_t)(line + len - p);
    if (n >= sizeof(r->name))
        n = sizeof(r->name) - 1;
    memcpy(r->name, p, n);
    r->name[n] = '\0';
    r->thp_eligible = -1;
    return true;
}

/* Adds one "Key: N kB" / "THPeligible: N" / "VmFlags: ..." line to @r. */
static void parse_field(const char *line, size_t len, struct corun_thp_region *r)
{
    static const struct {
        const char *key;
        size_t off;
    } sizes[] = {
        {"Rss:", offsetof(struct corun_thp_region, rss_kb)},
        {"Anonymous:", offsetof(struct corun_thp_region, anon_kb)},
        {"AnonHugePages:", offsetof(struct corun_thp_region, anon_huge_kb)},
        {"FilePmdMapped:", offsetof(struct corun_thp_region, file_pmd_kb)},
        {"ShmemPmdMapped:", offsetof(struct corun_thp_region, shmem_pmd_kb)},
        {"Private_Hugetlb:", offsetof(struct corun_thp_region, hugetlb_kb)},
        {"Shared_Hugetlb:", offsetof(struct corun_thp_region, hugetlb_kb)},
    };

    for (size_t i = 0; i < CORUN_ARRAY_SIZE(sizes); i++) {
        size_t kl = strlen(sizes[i].key);

        if (len > kl && !strncmp(line, sizes[i].key, kl)) {
            uint64_t *v = (uint64_t *)((char *)r + sizes[i].off);

            *v += strtoull(line + kl, NULL, 10);
            return;
        }
    }
    if (len > 12 && !strncmp(line, "THPeligible:", 12)) {
        r->thp_eligible = atoi(line + 12) ? 1 : 0;
    } else if (len > 8 && !strncmp(line, "VmFlags:", 8)) {
        /* Two-letter flags separated by spaces. */
        for (const char *p = line + 8; p + 1 < line + len; p++) {
            if (p[-1] != ' ' || (p + 2 < line + len && p[2] != ' '))
                continue;
            if (p[0] == 'h' && p[1] == 'g')
                r->advised = true;
            else if (p[0] == 'n' && p[1] == 'h')
                r->refused = true;
        }
    }
}

static void add_totals(struct corun_thp_coverage *cov, const struct corun_thp_region *r)
{
    cov->rss_kb += r->rss_kb;
    cov->anon_kb += r->anon_kb;
    cov->anon_huge_kb += r->anon_huge_kb;
    cov->file_pmd_kb += r->file_pmd_kb;
    cov->shmem_pmd_kb += r->shmem_pmd_kb;
    cov->hugetlb_kb += r->hugetlb_kb;
}

int corun_thp_parse_smaps(const char *text, bool regions, struct corun_thp_coverage *cov)
{
    struct corun_thp_region cur, *arr = NULL;
    unsigned n = 0, cap = 0;
    bool have = false;
    const char *line = text;

    cov->rss_kb = cov->anon_kb = cov->anon_huge_kb = 0;
    cov->file_pmd_kb = cov->shmem_pmd_kb = cov->hugetlb_kb = 0;
    cov->nregions = 0;
    cov->regions = NULL;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        struct corun_thp_region next;

        memset(&next, 0, sizeof(next));
        if (parse_header(line, len, &next)) {
            if (have) {
                add_totals(cov, &cur);
                if (regions) {
                    if (n == cap) {
                        unsigned ncap = cap ? cap * 2 : 64;
                        struct corun_thp_region *na = realloc(arr, ncap * sizeof(*arr));

                        if (!na)
                            goto out_nomem;
                        arr = na;
                        cap = ncap;
                    }
                    arr[n++] = cur;
                }
            }
            cur = next;
            have = true;
        } else if (have) {
            parse_field(line, len, &cur);
        }
        line += len + (nl ? 1 : 0);
    }
    if (!have) {
        free(arr);
        return -EINVAL;
    }
    add_totals(cov, &cur);
    if (regions) {
        struct corun_thp_region *na = realloc(arr, (n + 1) * sizeof(*arr));

        if (!na)
            goto out_nomem;
        arr = na;
        arr[n++] = cur;
        cov->regions = arr;
        cov->nregions = n;
    }
    return 0;

out_nomem:
    free(arr);
    return -ENOMEM;
}

int corun__thp_process_disabled(int rootfd, pid_t pid)
{
    char path[64], *text = NULL, *p;
    int v = -1;

    snprintf(path, sizeof(path), "proc/%d/status", (int)pid);
    if (corun__read_alloc(rootfd, path, &text, NULL))
        return -1;
    /* "THP_enabled:\t1" since Linux 5.0; absent before. */
    p = strstr(text, "\nTHP_enabled:");
    if (p)
        v = atoi(p + strlen("\nTHP_enabled:")) ? 0 : 1;
    free(text);
    return v;
}

int corun__thp_coverage_at(int rootfd, pid_t pid, unsigned flags, struct corun_thp_coverage **out)
{
    struct corun_thp_coverage *cov;
    char path[64], *text = NULL;
    bool regions = flags & CORUN_THP_REGIONS;
    int err = -ENOENT;

    *out = NULL;
    if (pid <= 0)
        return -EINVAL;
    cov = calloc(1, sizeof(*cov));
    if (!cov)
        return -ENOMEM;
    cov->pid = pid;
    if (!regions) {
        snprintf(path, sizeof(path), "proc/%d/smaps_rollup", (int)pid);
        err = corun__read_alloc(rootfd, path, &text, NULL);
    }
    if (err == -ENOENT) {
        /* smaps_rollup appeared in Linux 4.14; smaps says the same, slower. */
        snprintf(path, sizeof(path), "proc/%d/smaps", (int)pid);
        err = corun__read_alloc(rootfd, path, &text, NULL);
    }
    if (err) {
        /* No /proc/PID at all: the process does not exist. */
        snprintf(path, sizeof(path), "proc/%d", (int)pid);
        if (err == -ENOENT) {
            int fd = corun__root_openat(rootfd, path, O_RDONLY | O_DIRECTORY);

            if (fd < 0)
                err = -ESRCH;
            else
                close(fd);
        }
        goto out_free;
    }
    /* A kernel thread or a zombie has an empty smaps: no memory, not an error. */
    if (*text) {
        err = corun_thp_parse_smaps(text, regions, cov);
        if (err)
            goto out_free;
    }
    cov->thp_disabled = corun__thp_process_disabled(rootfd, pid);
    free(text);
    *out = cov;
    return 0;

out_free:
    free(text);
    free(cov);
    return err;
}

int corun_thp_coverage_read(const char *root, pid_t pid, unsigned flags,
                            struct corun_thp_coverage **out)
{
    int rootfd = corun__root_open(root), err;

    *out = NULL;
    if (rootfd < 0)
        return rootfd;
    err = corun__thp_coverage_at(rootfd, pid, flags, out);
    close(rootfd);
    return err;
}

void corun_thp_coverage_free(struct corun_thp_coverage *cov)
{
    if (!cov)
        return;
    free(cov->regions);
    free(cov);
}
