/*
 * platform-mem.c — large pages: the huge page sizes this kernel offers and
 * their hugetlb pools (/sys/kernel/mm/hugepages/hugepages-<N>kB), and
 * transparent huge pages (/sys/kernel/mm/transparent_hugepage): the mode, the
 * defrag policy, shmem and the PMD size. Read by the THP box's
 * corun_thp_system_read() (one reader of those files for `corun pages`,
 * `corun run --thp` and this report); here they are put in the report's
 * terms, with the reason for what is missing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "corun/thp.h"
#include "platform/platform-internal.h"

static int64_t count_or_unknown(uint64_t v)
{
    return v == UINT64_MAX ? -1 : (int64_t)v;
}

static void hugetlb(const struct corun_thp_system *s, struct corun_platform *p)
{
    for (unsigned i = 0; i < s->npools && p->nhugepage_sizes < CORUN_ARRAY_SIZE(p->hugepages);
         i++) {
        struct corun_platform_hugetlb_pool *pool = &p->hugepages[p->nhugepage_sizes++];

        pool->size_kb = s->pools[i].size_kb;
        pool->nr = count_or_unknown(s->pools[i].total);
        pool->free = count_or_unknown(s->pools[i].free);
        pool->resv = count_or_unknown(s->pools[i].reserved);
        pool->surplus = count_or_unknown(s->pools[i].surplus);
    }
    if (!p->nhugepage_sizes)
        snprintf(p->hugepages_why, sizeof(p->hugepages_why),
                 "no hugepages-<N>kB directory readable in /sys/kernel/mm/hugepages (kernel "
                 "without CONFIG_HUGETLBFS?)");
}

static void thp(const struct corun_thp_system *s, struct corun_platform_thp *t)
{
    switch (s->mode) {
    case CORUN_THP_ALWAYS:
    case CORUN_THP_MADVISE:
    case CORUN_THP_NEVER:
        snprintf(t->mode, sizeof(t->mode), "%s", corun_thp_mode_name(s->mode));
        break;
    case CORUN_THP_ABSENT:
        snprintf(t->why, sizeof(t->why),
                 "no /sys/kernel/mm/transparent_hugepage (kernel without "
                 "CONFIG_TRANSPARENT_HUGEPAGE)");
        return;
    default:
        snprintf(t->why, sizeof(t->why),
                 "/sys/kernel/mm/transparent_hugepage/enabled is unreadable or names no "
                 "[selected] mode");
        return;
    }
    snprintf(t->defrag, sizeof(t->defrag), "%s", s->defrag);
    snprintf(t->shmem, sizeof(t->shmem), "%s", s->shmem_enabled);
    t->pmd_size_kb = s->pmd_size_bytes / 1024;
}

int corun__pf_mem(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_thp_system s;
    int err = corun_thp_system_read(c->opts->root, &s);

    if (err) {
        snprintf(p->hugepages_why, sizeof(p->hugepages_why), "cannot open the root: %s",
                 corun_strerror(err));
        snprintf(p->thp.why, sizeof(p->thp.why), "cannot open the root: %s",
                 corun_strerror(err));
        return 0;
    }
    hugetlb(&s, p);
    thp(&s, &p->thp);
    return 0;
}
