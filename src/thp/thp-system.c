/*
 * thp-system.c — the system's huge page settings: the THP mode and defrag
 * policy, the PMD size and the per-size (mTHP) modes under
 * /sys/kernel/mm/transparent_hugepage, the hugetlb pools under
 * /sys/kernel/mm/hugepages, and AnonHugePages of /proc/meminfo. Everything is
 * read below a root directory so that tests replay recorded trees.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "corun/thp.h"
#include "thp/thp-internal.h"

#define THP_DIR     "sys/kernel/mm/transparent_hugepage"
#define HUGETLB_DIR "sys/kernel/mm/hugepages"

const char *corun_thp_mode_name(enum corun_thp_mode mode)
{
    switch (mode) {
    case CORUN_THP_ALWAYS:
        return "always";
    case CORUN_THP_MADVISE:
        return "madvise";
    case CORUN_THP_NEVER:
        return "never";
    case CORUN_THP_INHERIT:
        return "inherit";
    case CORUN_THP_ABSENT:
        return "absent";
    case CORUN_THP_UNKNOWN:
        break;
    }
    return "unknown";
}

/*
 * Copies the bracketed choice of a sysfs selector ("always [madvise] never")
 * into @out; an empty string when there is none.
 */
int corun__thp_selected(const char *text, char *out, size_t len)
{
    const char *open = strchr(text, '['), *close;

    out[0] = '\0';
    if (!open || !(close = strchr(open, ']')) || (size_t)(close - open - 1) >= len)
        return -EINVAL;
    memcpy(out, open + 1, (size_t)(close - open - 1));
    out[close - open - 1] = '\0';
    return 0;
}

static enum corun_thp_mode mode_from_word(const char *w)
{
    if (!strcmp(w, "always"))
        return CORUN_THP_ALWAYS;
    if (!strcmp(w, "madvise"))
        return CORUN_THP_MADVISE;
    if (!strcmp(w, "never"))
        return CORUN_THP_NEVER;
    if (!strcmp(w, "inherit"))
        return CORUN_THP_INHERIT;
    return CORUN_THP_UNKNOWN;
}

/* Reads a selector file below @dirfd and returns its choice as a mode. */
static enum corun_thp_mode read_mode(int dirfd, const char *path)
{
    char buf[256], word[32];

    if (corun__read_text(dirfd, path, buf, sizeof(buf)) < 0 ||
        corun__thp_selected(buf, word, sizeof(word)))
        return CORUN_THP_UNKNOWN;
    return mode_from_word(word);
}

static void read_word(int dirfd, const char *path, char *out, size_t len)
{
    char buf[256];

    out[0] = '\0';
    if (corun__read_text(dirfd, path, buf, sizeof(buf)) >= 0)
        corun__thp_selected(buf, out, len);
}

/* "hugepages-2048kB" -> 2048; 0 when the name is not of that form. */
static uint64_t size_from_name(const char *name)
{
    unsigned long long kb;
    char tail[4];

    if (sscanf(name, "hugepages-%llukB%3s", &kb, tail) != 1)
        return 0;
    return kb;
}

static int cmp_size(const void *a, const void *b)
{
    const struct corun_thp_size *x = a, *y = b;

    return x->size_kb < y->size_kb ? -1 : x->size_kb > y->size_kb;
}

static int cmp_pool(const void *a, const void *b)
{
    const struct corun_hugetlb_pool *x = a, *y = b;

    return x->size_kb < y->size_kb ? -1 : x->size_kb > y->size_kb;
}

/* Opens directory @path below @rootfd for reading its entries, or NULL. */
static DIR *open_dir(int rootfd, const char *path)
{
    int fd = corun__root_openat(rootfd, path, O_RDONLY | O_DIRECTORY);
    DIR *d;

    if (fd < 0)
        return NULL;
    d = fdopendir(fd);
    if (!d)
        close(fd);
    return d;
}

static void read_sizes(int rootfd, struct corun_thp_system *out)
{
    DIR *d = open_dir(rootfd, THP_DIR);
    struct dirent *e;
    char path[512];

    if (!d)
        return;
    while ((e = readdir(d)) && out->nsizes < CORUN_THP_MAX_SIZES) {
        uint64_t kb = size_from_name(e->d_name);

        if (!kb)
            continue;
        /* Sizes with only shmem_enabled (8 KiB on x86) are not for anonymous memory. */
        snprintf(path, sizeof(path), THP_DIR "/%s/enabled", e->d_name);
        if (faccessat(rootfd, path, R_OK, 0))
            continue;
        out->sizes[out->nsizes].size_kb = kb;
        out->sizes[out->nsizes].mode = read_mode(rootfd, path);
        out->nsizes++;
    }
    closedir(d);
    qsort(out->sizes, out->nsizes, sizeof(out->sizes[0]), cmp_size);
}

static void read_pools(int rootfd, struct corun_thp_system *out)
{
    static const char *const files[] = {"nr_hugepages", "free_hugepages", "resv_hugepages",
                                        "surplus_hugepages"};
    DIR *d = open_dir(rootfd, HUGETLB_DIR);
    struct dirent *e;
    char path[512];

    if (!d)
        return;
    while ((e = readdir(d)) && out->npools < CORUN_THP_MAX_POOLS) {
        struct corun_hugetlb_pool *p = &out->pools[out->npools];
        uint64_t *vals[] = {&p->total, &p->free, &p->reserved, &p->surplus};
        uint64_t kb = size_from_name(e->d_name);

        if (!kb)
            continue;
        memset(p, 0, sizeof(*p));
        p->size_kb = kb;
        for (size_t i = 0; i < CORUN_ARRAY_SIZE(files); i++) {
            snprintf(path, sizeof(path), HUGETLB_DIR "/%s/%s", e->d_name, files[i]);
            if (corun__read_u64(rootfd, path, vals[i]))
                *vals[i] = UINT64_MAX; /* unreadable, not zero pages */
        }
        out->npools++;
    }
    closedir(d);
    qsort(out->pools, out->npools, sizeof(out->pools[0]), cmp_pool);
}

static uint64_t read_meminfo_anon_huge(int rootfd)
{
    char *text = NULL, *p;
    uint64_t v = UINT64_MAX;

    if (corun__read_alloc(rootfd, "proc/meminfo", &text, NULL))
        return v;
    p = strstr(text, "\nAnonHugePages:");
    if (p)
        v = strtoull(p + strlen("\nAnonHugePages:"), NULL, 10);
    free(text);
    return v;
}

int corun_thp_system_read(const char *root, struct corun_thp_system *out)
{
    int rootfd = corun__root_open(root);
    int dirfd;

    memset(out, 0, sizeof(*out));
    if (rootfd < 0)
        return rootfd;
    out->anon_huge_kb = read_meminfo_anon_huge(rootfd);
    read_pools(rootfd, out);
    dirfd = corun__root_openat(rootfd, THP_DIR, O_RDONLY | O_DIRECTORY);
    if (dirfd < 0) {
        out->mode = dirfd == -ENOENT ? CORUN_THP_ABSENT : CORUN_THP_UNKNOWN;
        close(rootfd);
        return 0;
    }
    out->mode = read_mode(dirfd, "enabled");
    read_word(dirfd, "defrag", out->defrag, sizeof(out->defrag));
    read_word(dirfd, "shmem_enabled", out->shmem_enabled, sizeof(out->shmem_enabled));
    if (corun__read_u64(dirfd, "hpage_pmd_size", &out->pmd_size_bytes))
        out->pmd_size_bytes = 0;
    close(dirfd);
    read_sizes(rootfd, out);
    close(rootfd);
    return 0;
}
