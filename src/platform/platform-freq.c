/*
 * platform-freq.c — variable performance: the cpufreq driver, governor and
 * boost switch, each online CPU's limits and current frequency, thermal
 * throttle counts, RAPL zones through powercap, and the MSRs behind them
 * (APERF/MPERF, the turbo-disable bits) where /dev/cpu/N/msr is readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "platform/platform-internal.h"

#define CPU_DIR "sys/devices/system/cpu"

static uint32_t khz(const struct corun__pf_ctx *c, unsigned cpu, const char *file)
{
    char path[128];
    uint64_t v;

    snprintf(path, sizeof(path), CPU_DIR "/cpu%u/cpufreq/%s", cpu, file);
    return corun__read_u64(c->root, path, &v) == 0 ? (uint32_t)v : 0;
}

static int64_t throttles(const struct corun__pf_ctx *c, unsigned cpu, const char *file)
{
    char path[128];
    int64_t v;

    snprintf(path, sizeof(path), CPU_DIR "/cpu%u/thermal_throttle/%s", cpu, file);
    return corun__pf_read_i64(c, path, &v) == 0 ? v : -1;
}

/*
 * Boost. intel_pstate says it inverted (no_turbo); acpi-cpufreq and
 * amd-pstate share cpufreq/boost. A value of 1 in no_turbo or 0 in boost
 * means Linux keeps the CPU below its turbo range.
 */
static void boost(const struct corun__pf_ctx *c, struct corun_platform_freq *f)
{
    int64_t v;

    if (corun__pf_read_i64(c, CPU_DIR "/intel_pstate/no_turbo", &v) == 0) {
        f->boost = v ? CORUN_TRI_NO : CORUN_TRI_YES;
        corun__pf_copy(f->boost_source, sizeof(f->boost_source), "intel_pstate/no_turbo");
    } else if (corun__pf_read_i64(c, CPU_DIR "/cpufreq/boost", &v) == 0) {
        f->boost = v ? CORUN_TRI_YES : CORUN_TRI_NO;
        corun__pf_copy(f->boost_source, sizeof(f->boost_source), "cpufreq/boost");
    } else {
        f->boost = CORUN_TRI_UNKNOWN;
    }
    if (corun__pf_read_str(c, CPU_DIR "/intel_pstate/status", f->pstate_status,
                           sizeof(f->pstate_status)) < 0)
        corun__pf_read_str(c, CPU_DIR "/amd_pstate/status", f->pstate_status,
                           sizeof(f->pstate_status));
}

static int per_cpu(const struct corun__pf_ctx *c, struct corun_platform_freq *f)
{
    struct corun_cpuset online = {0};
    char buf[4096];
    unsigned n, i = 0, with_throttle = 0;

    if (corun__pf_read_str(c, CPU_DIR "/online", buf, sizeof(buf)) <= 0 ||
        corun_cpuset_parse(&online, buf, NULL)) {
        snprintf(f->throttle_why, sizeof(f->throttle_why), "cannot read /" CPU_DIR "/online");
        corun_cpuset_release(&online);
        return 0;
    }
    n = corun_cpuset_count(&online);
    f->cpus = calloc(n ? n : 1, sizeof(*f->cpus));
    if (!f->cpus) {
        corun_cpuset_release(&online);
        return -ENOMEM;
    }
    for (int cpu = corun_cpuset_next(&online, 0); cpu >= 0;
         cpu = corun_cpuset_next(&online, (unsigned)cpu + 1), i++) {
        struct corun_platform_cpufreq *e = &f->cpus[i];

        e->cpu = (unsigned)cpu;
        e->min_khz = khz(c, e->cpu, "cpuinfo_min_freq");
        e->max_khz = khz(c, e->cpu, "cpuinfo_max_freq");
        e->cur_khz = khz(c, e->cpu, "scaling_cur_freq");
        e->base_khz = khz(c, e->cpu, "base_frequency");
        e->core_throttles = throttles(c, e->cpu, "core_throttle_count");
        e->package_throttles = throttles(c, e->cpu, "package_throttle_count");
        with_throttle += e->core_throttles >= 0;
    }
    f->ncpus = i;
    corun_cpuset_release(&online);
    if (!with_throttle)
        snprintf(f->throttle_why, sizeof(f->throttle_why),
                 "no /" CPU_DIR "/cpuN/thermal_throttle (Intel thermal interrupts only, not "
                 "in virtual machines)");
    return 0;
}

static int rapl(const struct corun__pf_ctx *c, struct corun_platform_freq *f)
{
    char **names;
    int n = corun__pf_list_dir(c, "sys/class/powercap", &names), err = 0;

    if (n < 0) {
        snprintf(f->rapl_why, sizeof(f->rapl_why),
                 "no /sys/class/powercap: %s (no powercap driver; usual in virtual machines)",
                 corun_strerror(n));
        return n == -ENOMEM ? n : 0;
    }
    f->rapl = calloc(n ? (size_t)n : 1, sizeof(*f->rapl));
    if (!f->rapl) {
        err = -ENOMEM;
        goto out_free_names;
    }
    for (int i = 0; i < n; i++) {
        struct corun_platform_rapl *z = &f->rapl[f->nrapl];
        char path[160];
        int64_t v;

        /* intel-rapl:0, intel-rapl:0:1; "intel-rapl" itself is the control type. */
        if (strncmp(names[i], "intel-rapl:", 11))
            continue;
        corun__pf_copy(z->zone, sizeof(z->zone), names[i]);
        snprintf(path, sizeof(path), "sys/class/powercap/%s/name", names[i]);
        corun__pf_read_str(c, path, z->name, sizeof(z->name));
        snprintf(path, sizeof(path), "sys/class/powercap/%s/energy_uj", names[i]);
        z->energy_uj = corun__pf_read_i64(c, path, &v) == 0 ? v : -1;
        snprintf(path, sizeof(path), "sys/class/powercap/%s/constraint_0_power_limit_uw", names[i]);
        z->power_limit_uw = corun__pf_read_i64(c, path, &v) == 0 ? v : -1;
        snprintf(path, sizeof(path), "sys/class/powercap/%s/enabled", names[i]);
        z->enabled = corun__pf_read_i64(c, path, &v) == 0 ? (v ? CORUN_TRI_YES : CORUN_TRI_NO)
                                                          : CORUN_TRI_UNKNOWN;
        f->nrapl++;
    }
    if (!f->nrapl)
        snprintf(f->rapl_why, sizeof(f->rapl_why),
                 "/sys/class/powercap has no intel-rapl zone (intel_rapl driver not loaded)");
out_free_names:
    corun__pf_free_names(names, n);
    return err;
}

int corun__pf_freq(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_platform_freq *f = &p->freq;
    int err;

    if (corun__pf_read_str(c, CPU_DIR "/cpu0/cpufreq/scaling_driver", f->driver,
                           sizeof(f->driver)) <= 0)
        snprintf(f->why, sizeof(f->why),
                 "no /" CPU_DIR "/cpu0/cpufreq: no frequency driver loaded%s",
                 p->hypervisor.present == CORUN_TRI_YES ? " (the hypervisor owns frequency)" : "");
    corun__pf_read_str(c, CPU_DIR "/cpu0/cpufreq/scaling_governor", f->governor,
                       sizeof(f->governor));
    boost(c, f);
    if ((err = per_cpu(c, f)))
        return err;
    return rapl(c, f);
}

/* ---- MSRs ------------------------------------------------------------------ */

#define MSR_MPERF                   0xe7
#define MSR_APERF                   0xe8
#define MSR_IA32_MISC_ENABLE        0x1a0
#define MSR_TURBO_RATIO_LIMIT       0x1ad
#define MSR_TURBO_RATIO_LIMIT_CORES 0x1ae
#define MSR_AMD_HWCR                0xc0010015ull

static int rdmsr(int fd, uint64_t msr, uint64_t *val)
{
    ssize_t n = pread(fd, val, sizeof(*val), (off_t)msr);

    if (n < 0)
        return -errno;
    return n == (ssize_t)sizeof(*val) ? 0 : -EIO;
}

void corun__pf_turbo_decode(uint64_t limits, bool have_cores, uint64_t cores,
                            struct corun_platform_msr *m)
{
    bool counts = have_cores;
    unsigned n = 0;

    while (n < 8 && ((limits >> (8 * n)) & 0xff))
        n++;
    for (unsigned i = 0; counts && i < n; i++) {
        unsigned c = (unsigned)(cores >> (8 * i)) & 0xff;

        if (!c || (i && c <= ((cores >> (8 * (i - 1))) & 0xff)))
            counts = false;
    }
    for (unsigned i = 0; i < n; i++) {
        m->turbo_ratio[i] = (unsigned)(limits >> (8 * i)) & 0xff;
        m->turbo_cores[i] = counts ? (unsigned)(cores >> (8 * i)) & 0xff : i + 1;
    }
    m->turbo_groups = n;
}

int corun__pf_msr(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_platform_msr *m = &p->msr;
    bool intel = !strcmp(p->cpu.vendor, "GenuineIntel");
    bool amd = !strcmp(p->cpu.vendor, "AuthenticAMD") || !strcmp(p->cpu.vendor, "HygonGenuine");
    uint64_t v;
    int fd, err;

    m->accessible = m->turbo_disabled = CORUN_TRI_UNKNOWN;
    m->aperf = m->mperf = -1;
    if (!c->opts->read_msr) {
        snprintf(m->why, sizeof(m->why), "MSRs not read (not asked to)");
        return 0;
    }
    fd = corun__root_openat(c->root, "dev/cpu/0/msr", O_RDONLY);
    if (fd < 0) {
        m->accessible = CORUN_TRI_NO;
        snprintf(m->why, sizeof(m->why), "/dev/cpu/0/msr: %s%s", corun_strerror(fd),
                 fd == -ENOENT                   ? " (msr driver not loaded or not built)"
                 : fd == -EACCES || fd == -EPERM ? " (needs root and CAP_SYS_RAWIO)"
                                                 : "");
        return 0;
    }
    err = rdmsr(fd, MSR_MPERF, &v);
    if (!err) {
        m->mperf = (int64_t)v;
        if (rdmsr(fd, MSR_APERF, &v) == 0)
            m->aperf = (int64_t)v;
    }
    m->accessible = err == 0 ? CORUN_TRI_YES : CORUN_TRI_NO;
    if (err)
        snprintf(m->why, sizeof(m->why), "reading MPERF through /dev/cpu/0/msr: %s%s",
                 corun_strerror(err),
                 err == -EIO ? " (the hypervisor does not pass this MSR through)" : "");
    if (intel && rdmsr(fd, MSR_TURBO_RATIO_LIMIT, &v) == 0) {
        uint64_t cores = 0;
        bool have = rdmsr(fd, MSR_TURBO_RATIO_LIMIT_CORES, &cores) == 0;

        corun__pf_turbo_decode(v, have, cores, m);
    }
    if (intel && rdmsr(fd, MSR_IA32_MISC_ENABLE, &v) == 0) {
        m->turbo_disabled = (v >> 38) & 1 ? CORUN_TRI_YES : CORUN_TRI_NO;
        corun__pf_copy(m->turbo_source, sizeof(m->turbo_source), "IA32_MISC_ENABLE bit 38");
    } else if (amd && rdmsr(fd, MSR_AMD_HWCR, &v) == 0) {
        m->turbo_disabled = (v >> 25) & 1 ? CORUN_TRI_YES : CORUN_TRI_NO;
        corun__pf_copy(m->turbo_source, sizeof(m->turbo_source), "HWCR bit 25 (CpbDis)");
    }
    close(fd);
    return 0;
}

/* @m's turbo table as the engine takes it (corun_platform_turbo_rel()). */
static int msr_turbo_rel(const struct corun_platform_msr *m, unsigned ncores, double *rel)
{
    unsigned g = 0;

    if (!m->turbo_groups || !m->turbo_ratio[0])
        return -ENODATA;
    for (unsigned n = 1; n <= ncores; n++) {
        while (g + 1 < m->turbo_groups && n > m->turbo_cores[g])
            g++;
        rel[n - 1] = (double)m->turbo_ratio[g] / m->turbo_ratio[0];
    }
    return 0;
}

int corun_platform_turbo_rel(const struct corun_platform *p, unsigned ncores, double *rel)
{
    if (!p || !rel)
        return -EINVAL;
    return msr_turbo_rel(&p->msr, ncores, rel);
}

int corun_platform_read_turbo(const char *root, unsigned ncores, double *rel)
{
    struct corun_platform_msr m;
    uint64_t limits, cores = 0;
    int dir, fd, err;

    if (!rel || !ncores)
        return -EINVAL;
    memset(&m, 0, sizeof(m));
    dir = corun__root_open(root);
    if (dir < 0)
        return dir;
    fd = corun__root_openat(dir, "dev/cpu/0/msr", O_RDONLY);
    close(dir);
    if (fd < 0)
        return fd;
    err = rdmsr(fd, MSR_TURBO_RATIO_LIMIT, &limits);
    if (!err)
        corun__pf_turbo_decode(limits, rdmsr(fd, MSR_TURBO_RATIO_LIMIT_CORES, &cores) == 0, cores,
                               &m);
    close(fd);
    return err ? err : msr_turbo_rel(&m, ncores, rel);
}
