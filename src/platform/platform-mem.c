/*
 * platform-mem.c — large pages: the huge page sizes this kernel offers and
 * their hugetlb pools (/sys/kernel/mm/hugepages/hugepages-<N>kB), and
 * transparent huge pages (/sys/kernel/mm/transparent_hugepage): the mode, the
 * defrag policy, shmem and the PMD size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "platform/platform-internal.h"

static int cmp_pool(const void *a, const void *b)
{
    const struct corun_platform_hugetlb_pool *x = a, *y = b;

    return x->size_kb < y->size_kb ? -1 : x->size_kb > y->size_kb;
}

static void hugetlb(const struct corun__pf_ctx *c, struct corun_platform *p)
{
    static const char *const counts[] = {"nr_hugepages", "free_hugepages", "resv_hugepages",
                                         "surplus_hugepages"};
    char **names;
    int n = corun__pf_list_dir(c, "sys/kernel/mm/hugepages", &names);

    if (n < 0) {
        snprintf(p->hugepages_why, sizeof(p->hugepages_why),
                 "cannot list /sys/kernel/mm/hugepages: %s (kernel without CONFIG_HUGETLBFS?)",
                 corun_strerror(n));
        return;
    }
    for (int i = 0; i < n && p->nhugepage_sizes < CORUN_ARRAY_SIZE(p->hugepages); i++) {
        struct corun_platform_hugetlb_pool *pool = &p->hugepages[p->nhugepage_sizes];
        unsigned long long kb;
        char tail[8];
        int64_t *fields[] = {&pool->nr, &pool->free, &pool->resv, &pool->surplus};

        if (sscanf(names[i], "hugepages-%llu%7s", &kb, tail) != 2 || strcmp(tail, "kB") || !kb)
            continue;
        pool->size_kb = kb;
        for (size_t k = 0; k < CORUN_ARRAY_SIZE(counts); k++) {
            char path[128];

            snprintf(path, sizeof(path), "sys/kernel/mm/hugepages/%s/%s", names[i], counts[k]);
            if (corun__pf_read_i64(c, path, fields[k]))
                *fields[k] = -1;
        }
        p->nhugepage_sizes++;
    }
    corun__pf_free_names(names, n);
    qsort(p->hugepages, p->nhugepage_sizes, sizeof(p->hugepages[0]), cmp_pool);
    if (!p->nhugepage_sizes)
        snprintf(p->hugepages_why, sizeof(p->hugepages_why),
                 "/sys/kernel/mm/hugepages lists no hugepages-<N>kB directory");
}

static void thp(const struct corun__pf_ctx *c, struct corun_platform_thp *t)
{
    const char *dir = "sys/kernel/mm/transparent_hugepage";
    char buf[128], path[96];
    uint64_t bytes;
    int n;

    snprintf(path, sizeof(path), "%s/enabled", dir);
    n = corun__pf_read_str(c, path, buf, sizeof(buf));
    if (n < 0) {
        snprintf(t->why, sizeof(t->why), "cannot read /%s: %s%s", path, corun_strerror(n),
                 n == -ENOENT ? " (kernel without CONFIG_TRANSPARENT_HUGEPAGE)" : "");
        return;
    }
    if (!corun__pf_bracketed(buf, t->mode, sizeof(t->mode)))
        snprintf(t->why, sizeof(t->why), "/%s has no [selected] mode: \"%.80s\"", path, buf);
    snprintf(path, sizeof(path), "%s/defrag", dir);
    if (corun__pf_read_str(c, path, buf, sizeof(buf)) > 0)
        corun__pf_bracketed(buf, t->defrag, sizeof(t->defrag));
    snprintf(path, sizeof(path), "%s/shmem_enabled", dir);
    if (corun__pf_read_str(c, path, buf, sizeof(buf)) > 0)
        corun__pf_bracketed(buf, t->shmem, sizeof(t->shmem));
    snprintf(path, sizeof(path), "%s/hpage_pmd_size", dir);
    if (corun__read_u64(c->root, path, &bytes) == 0)
        t->pmd_size_kb = bytes / 1024;
}

int corun__pf_mem(struct corun__pf_ctx *c, struct corun_platform *p)
{
    hugetlb(c, p);
    thp(c, &p->thp);
    return 0;
}
