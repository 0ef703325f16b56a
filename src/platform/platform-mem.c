/*
 * platform-mem.c — large pages: the huge page sizes this kernel offers and
 * their hugetlb pools (/sys/kernel/mm/hugepages/hugepages-<N>kB), and
 * transparent huge pages (/sys/kernel/mm/transparent_hugepage): the mode, the
 * defrag policy, shmem and the PMD size. Read by the THP box's
 * corun_thp_system_read() (one reader of those files for `corun pages`,
 * `corun run --thp` and this report); here they are put in the report's
 * terms, with the reason for what is missing. And NUMA: the online nodes a
 * process's memory can be moved between (what corun's memory following
 * needs) and the kernel's own NUMA balancing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

static void numa(struct corun__pf_ctx *c, struct corun_platform_numa *n)
{
    struct corun_cpuset set = {0};
    char buf[256], *end;
    ssize_t len = corun__read_text(c->root, "sys/devices/system/node/online", buf, sizeof(buf));
    long v;

    n->nodes = n->balancing = -1;
    if (len == -ENOENT)
        snprintf(n->why, sizeof(n->why),
                 "no /sys/devices/system/node (kernel without CONFIG_NUMA): one memory node");
    else if (len < 0)
        snprintf(n->why, sizeof(n->why), "/sys/devices/system/node/online: %s",
                 corun_strerror((int)len));
    else if (corun_cpuset_parse(&set, corun__rstrip(buf), NULL) || !corun_cpuset_count(&set))
        snprintf(n->why, sizeof(n->why), "/sys/devices/system/node/online holds no node list");
    else {
        n->nodes = (int)corun_cpuset_count(&set);
        corun_cpuset_format(&set, n->online, sizeof(n->online));
    }
    corun_cpuset_release(&set);
    len = corun__read_text(c->root, "proc/sys/kernel/numa_balancing", buf, sizeof(buf));
    if (len == -ENOENT) {
        snprintf(n->balancing_why, sizeof(n->balancing_why),
                 "no /proc/sys/kernel/numa_balancing (kernel without CONFIG_NUMA_BALANCING)");
        return;
    }
    if (len < 0) {
        snprintf(n->balancing_why, sizeof(n->balancing_why),
                 "/proc/sys/kernel/numa_balancing: %s", corun_strerror((int)len));
        return;
    }
    v = strtol(buf, &end, 10);
    if (end == buf || v < 0 || v > 255)
        snprintf(n->balancing_why, sizeof(n->balancing_why),
                 "/proc/sys/kernel/numa_balancing holds no number");
    else
        n->balancing = (int)v;
}

int corun__pf_mem(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_thp_system s;
    int err = corun_thp_system_read(c->opts->root, &s);

    numa(c, &p->numa);
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
