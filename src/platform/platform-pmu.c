/*
 * platform-pmu.c — performance monitoring and resource director: whether a
 * hardware counter opens for this process and, when not, why (a hypervisor
 * without a virtual PMU, a kernel without a PMU driver, perf_event_paranoid
 * and missing privileges); the RDT flags (cache allocation and monitoring,
 * memory bandwidth) and whether resctrl is supported and mounted.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"
#include "platform/platform-internal.h"

/* Lists the core PMUs in /sys/bus/event_source/devices ("cpu", or
 * "cpu_core cpu_atom" on hybrids; "armv8_..." on Arm). */
static void core_pmus(const struct corun__pf_ctx *c, struct corun_platform_pmu *pmu, int *nall)
{
    char **names;
    int n = corun__pf_list_dir(c, "sys/bus/event_source/devices", &names);

    *nall = n;
    for (int i = 0; i < n; i++) {
        const char *s = names[i];

        if (strcmp(s, "cpu") && strncmp(s, "cpu_", 4) && strncmp(s, "armv", 4))
            continue;
        if (pmu->core_pmu[0])
            strncat(pmu->core_pmu, " ", sizeof(pmu->core_pmu) - strlen(pmu->core_pmu) - 1);
        strncat(pmu->core_pmu, s, sizeof(pmu->core_pmu) - strlen(pmu->core_pmu) - 1);
    }
    if (n > 0)
        corun__pf_free_names(names, n);
}

/* Opens cycles for this process, user space only (allowed up to paranoid 2). */
static int probe(void)
{
    struct perf_event_attr attr;
    int fd;

    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd = corun__sys.perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return errno ? -errno : -EIO;
    close(fd);
    return 0;
}

/* Why there is no hardware PMU: the words for a missing core PMU. */
static void no_pmu_reason(const struct corun_platform *p, char *buf, size_t len,
                          const char *evidence)
{
    if (p->hypervisor.present == CORUN_TRI_YES)
        snprintf(buf, len, "hypervisor without a virtual PMU (%s%s): %.120s",
                 p->hypervisor.name[0] ? p->hypervisor.name : "a hypervisor",
                 p->hypervisor.name[0] ? " guest" : "", evidence);
    else
        snprintf(buf, len, "no PMU driver for this processor: %s", evidence);
}

int corun__pf_pmu(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_platform_pmu *pmu = &p->pmu;
    int64_t paranoid;
    int ndev;

    pmu->available = CORUN_TRI_UNKNOWN;
    pmu->paranoid = INT_MIN;
    if (corun__pf_read_i64(c, "proc/sys/kernel/perf_event_paranoid", &paranoid) == 0)
        pmu->paranoid = (int)paranoid;
    core_pmus(c, pmu, &ndev);
    if (c->opts->probe_pmu) {
        int err = probe();

        pmu->probed = true;
        pmu->probe_errno = -err;
        if (!err) {
            pmu->available = CORUN_TRI_YES;
            snprintf(pmu->reason, sizeof(pmu->reason),
                     "perf_event_open(PERF_TYPE_HARDWARE cycles) opens for this process");
            return 0;
        }
        pmu->available = CORUN_TRI_NO;
        if (err == -EACCES || err == -EPERM) {
            snprintf(pmu->reason, sizeof(pmu->reason),
                     "permission: perf_event_open fails with %s, perf_event_paranoid is %d; "
                     "lower it or grant CAP_PERFMON",
                     err == -EACCES ? "EACCES" : "EPERM", pmu->paranoid);
        } else if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) {
            char ev[160];

            snprintf(ev, sizeof(ev), "perf_event_open(PERF_TYPE_HARDWARE) fails with %s%s",
                     err == -ENOENT   ? "ENOENT"
                     : err == -ENODEV ? "ENODEV"
                                      : "EOPNOTSUPP",
                     pmu->core_pmu[0] ? "" : ", no cpu PMU in /sys/bus/event_source/devices");
            no_pmu_reason(p, pmu->reason, sizeof(pmu->reason), ev);
        } else {
            snprintf(pmu->reason, sizeof(pmu->reason), "perf_event_open fails: %s",
                     corun_strerror(err));
        }
        return 0;
    }
    /* Not probed (a recorded tree): only a missing core PMU is certain. */
    if (ndev < 0) {
        snprintf(pmu->reason, sizeof(pmu->reason),
                 "not probed, and /sys/bus/event_source/devices unreadable: %s",
                 corun_strerror(ndev));
    } else if (!pmu->core_pmu[0]) {
        pmu->available = CORUN_TRI_NO;
        no_pmu_reason(p, pmu->reason, sizeof(pmu->reason),
                      "no cpu PMU in /sys/bus/event_source/devices");
    } else {
        snprintf(pmu->reason, sizeof(pmu->reason),
                 "not probed: core PMU %s present, perf_event_paranoid %d; whether this "
                 "process may open it is decided by opening it",
                 pmu->core_pmu, pmu->paranoid);
    }
    return 0;
}

/* A flag from cpuinfo, or from CPUID when given (leaf 7 EBX bits 12 and 15). */
static enum corun_tri rdt_flag(const struct corun__pf_ctx *c, const char *flag, int cpuid_bit)
{
    enum corun_tri t = corun__pf_flag(c, flag);

    if (t == CORUN_TRI_UNKNOWN && cpuid_bit >= 0)
        t = corun__pf_cpuid_bit(c, 7, 0, CORUN__EBX, (unsigned)cpuid_bit);
    return t;
}

/* Finds the resctrl mount in /proc/mounts. */
static void resctrl_mount(const struct corun__pf_ctx *c, struct corun_platform_rdt *r)
{
    char *mounts, *line, *save = NULL;
    int err = corun__read_alloc(c->root, "proc/mounts", &mounts, NULL);

    if (err) {
        r->resctrl_mounted = CORUN_TRI_UNKNOWN;
        snprintf(r->why, sizeof(r->why), "cannot read /proc/mounts: %s", corun_strerror(err));
        return;
    }
    r->resctrl_mounted = CORUN_TRI_NO;
    for (line = strtok_r(mounts, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char dev[64], dir[128], type[32];

        if (sscanf(line, "%63s %127s %31s", dev, dir, type) == 3 && !strcmp(type, "resctrl")) {
            r->resctrl_mounted = CORUN_TRI_YES;
            corun__pf_copy(r->resctrl_mount, sizeof(r->resctrl_mount), dir);
            break;
        }
    }
    free(mounts);
}

int corun__pf_rdt(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_platform_rdt *r = &p->rdt;
    char *fs;

    r->allocation = rdt_flag(c, "rdt_a", 15);
    r->monitoring = rdt_flag(c, "cqm", 12);
    r->memory_bandwidth = rdt_flag(c, "mba", -1);
    r->cat_l3 = rdt_flag(c, "cat_l3", -1);
    r->cat_l2 = rdt_flag(c, "cat_l2", -1);
    r->cdp_l3 = rdt_flag(c, "cdp_l3", -1);
    r->mbm_total = rdt_flag(c, "cqm_mbm_total", -1);
    r->mbm_local = rdt_flag(c, "cqm_mbm_local", -1);
    r->llc_occupancy = rdt_flag(c, "cqm_occup_llc", -1);
    if (!c->flags)
        snprintf(r->why, sizeof(r->why), "%s", c->cpuinfo_why);
    r->resctrl_supported = CORUN_TRI_UNKNOWN;
    if (corun__read_alloc(c->root, "proc/filesystems", &fs, NULL) == 0) {
        r->resctrl_supported = strstr(fs, "\tresctrl\n") ? CORUN_TRI_YES : CORUN_TRI_NO;
        free(fs);
    }
    resctrl_mount(c, r);
    return 0;
}
