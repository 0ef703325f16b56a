/*
 * test_platform.c — the platform box against recorded machines: this KVM
 * guest (recorded with scripts/record-platform.sh, CPUID included), an Intel
 * Xeon server with SMT, cpufreq, RAPL, RDT and DMI (no CPUID: cpuinfo only),
 * and a hybrid Alder Lake laptop whose kernel switched PCID off. Then the
 * PMU verdict under injected perf_event_open errors, MSR decoding from a
 * built tree, an empty tree (everything unknown, with reasons), the parsers,
 * and the context-switch measurement with its affinity seam.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"
#include "corun/platform.h"
#include "platform/platform-internal.h"

static struct corun_platform_cpuid_dump *load_dump(const char *rel)
{
    struct corun_platform_cpuid_dump *d = NULL;
    char *text;
    int fd = corun__root_open(fixture(rel));

    assert_true(fd >= 0);
    assert_int_equal(corun__read_alloc(fd, "cpuid.txt", &text, NULL), 0);
    close(fd);
    assert_int_equal(corun_platform_cpuid_parse(text, &d, NULL), 0);
    free(text);
    return d;
}

/* Probes fixture tree @name, with its cpuid.txt when @with_cpuid. */
static struct corun_platform *probe_fixture(const char *name, bool with_cpuid, bool probe_pmu,
                                            struct corun_platform_cpuid_dump **dump)
{
    struct corun_platform_opts o = {.root = fixture(name), .probe_pmu = probe_pmu};
    struct corun_platform *p = NULL;

    *dump = NULL;
    if (with_cpuid) {
        *dump = load_dump(name);
        o.cpuid = corun_platform_cpuid_lookup;
        o.cpuid_user = *dump;
    }
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_non_null(p);
    return p;
}

static bool has(const char *s, const char *part)
{
    if (!strstr(s, part))
        print_error("\"%s\" does not contain \"%s\"\n", s, part);
    return strstr(s, part) != NULL;
}

static void test_kvm_guest(void **state)
{
    struct corun_platform_cpuid_dump *d;
    struct corun_platform *p = probe_fixture("platform/kvm-guest", true, false, &d);

    assert_string_equal(p->cpu.vendor, "AuthenticAMD");
    assert_int_equal(p->cpu.family, 25);
    assert_int_equal(p->cpu.nprocessors, 2);
    assert_true(p->cpu.cpuid_used);
    assert_int_equal(p->smt.enabled, CORUN_TRI_NO);
    assert_int_equal(p->smt.present, CORUN_TRI_NO);
    assert_string_equal(p->smt.control, "notsupported");
    /* One node, the kernel's balancing off (as this machine reads). */
    assert_int_equal(p->numa.nodes, 1);
    assert_string_equal(p->numa.online, "0");
    assert_int_equal(p->numa.balancing, 0);
    assert_int_equal(p->pcid.cpu, CORUN_TRI_YES);
    assert_int_equal(p->pcid.kernel, CORUN_TRI_YES);
    assert_int_equal(p->invpcid.cpu, CORUN_TRI_YES);
    assert_int_equal(p->invpcid.kernel, CORUN_TRI_YES);
    assert_int_equal(p->waitpkg.cpu, CORUN_TRI_NO);
    assert_int_equal(p->monitorx.cpu, CORUN_TRI_NO);
    assert_int_equal(p->monitor_mwait.cpu, CORUN_TRI_NO);
    assert_string_equal(p->wait_strategy, "pause");
    assert_int_equal(p->nhugepage_sizes, 2);
    assert_int_equal(p->hugepages[0].size_kb, 2048);
    assert_int_equal(p->hugepages[1].size_kb, 1048576);
    assert_string_equal(p->thp.mode, "madvise");
    assert_int_equal(p->thp.pmd_size_kb, 2048);
    /* Not probed, but no core PMU at all is certain, and the hypervisor explains it. */
    assert_int_equal(p->pmu.available, CORUN_TRI_NO);
    assert_true(has(p->pmu.reason, "hypervisor without a virtual PMU (KVM guest)"));
    assert_int_equal(p->pmu.paranoid, 2);
    assert_int_equal(p->hypervisor.present, CORUN_TRI_YES);
    assert_string_equal(p->hypervisor.name, "KVM");
    assert_string_equal(p->hypervisor.vendor_id, "KVMKVMKVM");
    assert_int_equal(p->rdt.allocation, CORUN_TRI_NO);
    assert_int_equal(p->rdt.resctrl_supported, CORUN_TRI_NO);
    assert_int_equal(p->rdt.resctrl_mounted, CORUN_TRI_NO);
    assert_string_equal(p->freq.driver, "");
    assert_true(has(p->freq.why, "no frequency driver"));
    assert_int_equal(p->freq.nrapl, 0);
    assert_true(has(p->freq.rapl_why, "powercap"));
    assert_int_equal(p->freq.ncpus, 2);
    assert_int_equal(p->freq.cpus[1].core_throttles, -1);
    assert_string_equal(p->kernel.release, "6.18.44-fc-v1098");
    assert_int_equal(p->kernel.nparams, 1);
    assert_string_equal(p->kernel.params[0].name, "mitigations");
    assert_false(p->kernel.nopcid);
    assert_int_equal(p->kernel.pti, CORUN_TRI_NO);
    assert_true(p->kernel.nvulns > 5);
    assert_int_equal(p->umwait_max_time, -1);
    assert_int_equal(p->nmodules, 8);
    assert_string_equal(p->modules[0].name, "bridge");
    assert_string_equal(p->modules[0].version, "2.3");
    assert_true(p->modules[0].builtin);
    assert_false(p->firmware.present);
    assert_true(has(p->firmware.why, "/sys/class/dmi/id is absent"));
    corun_platform_free(p);
    corun_platform_cpuid_free(d);
}

static void test_intel_server(void **state)
{
    struct corun_platform_cpuid_dump *d;
    struct corun_platform *p = probe_fixture("platform/intel-server", false, false, &d);
    int64_t throttles = 0;

    assert_false(p->cpu.cpuid_used);
    assert_string_equal(p->cpu.vendor, "GenuineIntel");
    assert_int_equal(p->cpu.model, 85);
    assert_int_equal(p->cpu.microcode, 0x2006e05);
    assert_int_equal(p->cpu.hybrid, CORUN_TRI_NO);
    assert_int_equal(p->smt.present, CORUN_TRI_YES);
    assert_int_equal(p->smt.enabled, CORUN_TRI_YES);
    assert_int_equal(p->smt.threads_per_core, 2);
    /* Without CPUID the flags speak for the processor. */
    assert_int_equal(p->pcid.cpu, CORUN_TRI_YES);
    assert_int_equal(p->pcid.kernel, CORUN_TRI_YES);
    assert_int_equal(p->monitor_mwait.cpu, CORUN_TRI_YES);
    assert_int_equal(p->waitpkg.cpu, CORUN_TRI_NO);
    assert_string_equal(p->wait_strategy, "pause");
    assert_int_equal(p->hypervisor.present, CORUN_TRI_NO);
    assert_string_equal(p->thp.mode, "always");
    assert_string_equal(p->thp.defrag, "madvise");
    assert_int_equal(p->hugepages[1].nr, 4);
    assert_int_equal(p->pmu.available, CORUN_TRI_UNKNOWN);
    assert_true(has(p->pmu.reason, "not probed"));
    assert_string_equal(p->pmu.core_pmu, "cpu");
    assert_int_equal(p->pmu.paranoid, 3);
    assert_int_equal(p->rdt.allocation, CORUN_TRI_YES);
    assert_int_equal(p->rdt.monitoring, CORUN_TRI_YES);
    assert_int_equal(p->rdt.memory_bandwidth, CORUN_TRI_YES);
    assert_int_equal(p->rdt.cat_l3, CORUN_TRI_YES);
    assert_int_equal(p->rdt.cat_l2, CORUN_TRI_NO);
    assert_int_equal(p->rdt.resctrl_mounted, CORUN_TRI_YES);
    assert_string_equal(p->rdt.resctrl_mount, "/sys/fs/resctrl");
    assert_string_equal(p->freq.driver, "intel_pstate");
    assert_string_equal(p->freq.governor, "performance");
    assert_int_equal(p->freq.boost, CORUN_TRI_YES);
    assert_string_equal(p->freq.boost_source, "intel_pstate/no_turbo");
    assert_int_equal(p->freq.ncpus, 8);
    assert_int_equal(p->freq.cpus[2].cur_khz, 1200000);
    assert_int_equal(p->freq.cpus[7].max_khz, 3700000);
    assert_int_equal(p->freq.cpus[0].base_khz, 3600000);
    for (unsigned i = 0; i < p->freq.ncpus; i++)
        throttles += p->freq.cpus[i].core_throttles;
    assert_int_equal(throttles, 15);
    assert_string_equal(p->freq.throttle_why, "");
    assert_int_equal(p->freq.nrapl, 2);
    assert_string_equal(p->freq.rapl[0].name, "package-0");
    assert_int_equal(p->freq.rapl[0].energy_uj, 183746519283ll);
    assert_int_equal(p->freq.rapl[0].power_limit_uw, 105000000);
    assert_int_equal(p->freq.rapl[1].enabled, CORUN_TRI_NO);
    assert_int_equal(p->msr.accessible, CORUN_TRI_UNKNOWN);
    assert_true(p->firmware.present);
    assert_string_equal(p->firmware.board_name, "X11SPM-F");
    assert_string_equal(p->firmware.bios_date, "11/04/2020");
    assert_int_equal(p->nmodules, 5);
    assert_string_equal(p->modules[0].name, "igb");
    assert_string_equal(p->modules[0].version, "5.13.0-k");
    assert_false(p->modules[0].builtin);
    assert_string_equal(p->modules[2].version, "");
    assert_string_equal(p->modules[2].srcversion, "1F9E3A7C5B2D4E6F8A0C3B5");
    assert_true(p->modules[4].builtin); /* tcp_cubic */
    assert_int_equal(p->kernel.nparams, 4);
    assert_string_equal(p->kernel.params[0].name, "transparent_hugepage");
    assert_string_equal(p->kernel.params[0].value, "always");
    assert_int_equal(p->kernel.pti, CORUN_TRI_YES);
    assert_true(has(p->kernel.pti_why, "Mitigation: PTI"));
    assert_int_equal(p->kernel.nvulns, 5);
    assert_string_equal(p->kernel.vulns[0].name, "l1tf");
    corun_platform_free(p);
}

static void test_hybrid_laptop(void **state)
{
    struct corun_platform_cpuid_dump *d;
    struct corun_platform *p = probe_fixture("platform/hybrid-laptop", true, false, &d);

    assert_true(p->cpu.cpuid_used);
    assert_int_equal(p->cpu.model, 154);
    assert_int_equal(p->cpu.hybrid, CORUN_TRI_YES);
    assert_int_equal(p->cpu.ntypes, 2);
    assert_string_equal(p->cpu.types[0].name, "cpu_core");
    assert_string_equal(p->cpu.types[1].cpus, "8-15");
    assert_int_equal(p->smt.threads_per_core, 2);
    /* The processor has PCID; the kernel cleared its flag (erratum). */
    assert_int_equal(p->pcid.cpu, CORUN_TRI_YES);
    assert_int_equal(p->pcid.kernel, CORUN_TRI_NO);
    assert_true(has(p->pcid.why, "kernel cleared"));
    assert_int_equal(p->invpcid.kernel, CORUN_TRI_YES);
    assert_int_equal(p->waitpkg.cpu, CORUN_TRI_YES);
    assert_string_equal(p->wait_strategy, "umwait");
    assert_int_equal(p->umwait_max_time, 100000);
    assert_int_equal(p->umwait_c02, CORUN_TRI_YES);
    assert_int_equal(p->kernel.pti, CORUN_TRI_NO);
    assert_int_equal(p->hypervisor.present, CORUN_TRI_NO);
    assert_string_equal(p->pmu.core_pmu, "cpu_atom cpu_core");
    assert_int_equal(p->rdt.resctrl_supported, CORUN_TRI_YES);
    assert_int_equal(p->rdt.resctrl_mounted, CORUN_TRI_NO);
    assert_int_equal(p->freq.nrapl, 4);
    assert_int_equal(p->freq.rapl[0].energy_uj, -1); /* recorded without root */
    assert_int_equal(p->freq.cpus[8].max_khz, 3400000);
    assert_int_equal(p->freq.cpus[0].max_khz, 4700000);
    assert_string_equal(p->kernel.params[0].name, "mitigations");
    assert_string_equal(p->kernel.params[0].value, "off");
    assert_string_equal(p->firmware.bios_version, "N3AET72W (1.37 )");
    corun_platform_free(p);
    corun_platform_cpuid_free(d);
}

/* ---- the PMU probe through the syscall seam -------------------------------- */

static int fail_errno;
static int fake_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                          unsigned long flags)
{
    if (fail_errno) {
        errno = fail_errno;
        return -1;
    }
    return dup(0);
}

static struct corun_platform *probe_with_perf(const char *name, int err)
{
    struct corun_platform_cpuid_dump *d;
    struct corun_platform *p;

    fail_errno = err;
    corun__sys.perf_event_open = fake_perf_open;
    p = probe_fixture(name, false, true, &d);
    corun__sys_reset();
    return p;
}

static void test_pmu_verdicts(void **state)
{
    struct corun_platform *p = probe_with_perf("platform/intel-server", 0);

    assert_int_equal(p->pmu.available, CORUN_TRI_YES);
    assert_true(p->pmu.probed);
    corun_platform_free(p);

    p = probe_with_perf("platform/intel-server", EACCES);
    assert_int_equal(p->pmu.available, CORUN_TRI_NO);
    assert_true(has(p->pmu.reason, "permission"));
    assert_true(has(p->pmu.reason, "perf_event_paranoid is 3"));
    corun_platform_free(p);

    p = probe_with_perf("platform/kvm-guest", ENOENT);
    assert_int_equal(p->pmu.available, CORUN_TRI_NO);
    assert_true(has(p->pmu.reason, "hypervisor without a virtual PMU"));
    assert_true(has(p->pmu.reason, "ENOENT"));
    assert_int_equal(p->pmu.probe_errno, ENOENT);
    corun_platform_free(p);

    p = probe_with_perf("platform/intel-server", ENOENT);
    assert_true(has(p->pmu.reason, "no PMU driver"));
    corun_platform_free(p);
}

/* ---- built trees ------------------------------------------------------------ */

static void write_file(const char *dir, const char *rel, const void *data, size_t len)
{
    char path[512], *slash;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static void remove_tree(const char *dir)
{
    char cmd[600];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_msr_decoding(void **state)
{
    char dir[] = "/tmp/corun-platform-XXXXXX";
    const char *cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n";
    unsigned char msr[0x1b8] = {0};
    uint64_t misc = 1ull << 38, mperf = 0x1122334455667788ull;
    uint64_t ratios = 0x1f232526ull; /* 3.8, 3.7, 3.5, 3.1 GHz */
    double rel[30];
    struct corun_platform_opts o = {.root = dir, .read_msr = true};
    struct corun_platform *p;

    assert_non_null(mkdtemp(dir));
    write_file(dir, "proc/cpuinfo", cpuinfo, strlen(cpuinfo));
    /* A flat file stands for /dev/cpu/0/msr: pread at the MSR's number. */
    memcpy(msr + 0x1a0, &misc, 8);
    memcpy(msr + 0xe7, &mperf, 8);
    write_file(dir, "dev/cpu/0/msr", msr, sizeof(msr));
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_int_equal(p->msr.accessible, CORUN_TRI_YES);
    assert_int_equal(p->msr.mperf, (int64_t)mperf);
    assert_int_equal(p->msr.turbo_disabled, CORUN_TRI_YES);
    assert_string_equal(p->msr.turbo_source, "IA32_MISC_ENABLE bit 38");
    assert_int_equal(p->msr.turbo_groups, 0); /* a zero ratio: no table */
    assert_int_equal(corun_platform_turbo_rel(p, 30, rel), -ENODATA);
    corun_platform_free(p);

    /* The turbo table read through the file: 0x1ae overlaps 0x1ad in a flat
     * file (one register per byte offset there, not per number), so it reads
     * falling ratios, not rising counts, and the older layout is taken: 3.8
     * GHz with 1 busy core, 3.7 with 2, 3.5 with 3, 3.1 with 4 or more. */
    memcpy(msr + 0x1ad, &ratios, 8);
    write_file(dir, "dev/cpu/0/msr", msr, sizeof(msr));
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_int_equal(p->msr.turbo_groups, 4);
    assert_int_equal(p->msr.turbo_cores[3], 4);
    assert_int_equal(corun_platform_turbo_rel(p, 30, rel), 0);
    assert_true(fabs(rel[0] - 1) < 1e-9 && fabs(rel[1] - 37.0 / 38) < 1e-9);
    assert_true(fabs(rel[29] - 31.0 / 38) < 1e-9); /* beyond the last group */
    corun_platform_free(p);
    /* The same table read on its own, as corund and corun batch do. */
    memset(rel, 0, sizeof(rel));
    assert_int_equal(corun_platform_read_turbo(dir, 30, rel), 0);
    assert_true(fabs(rel[1] - 37.0 / 38) < 1e-9 && fabs(rel[29] - 31.0 / 38) < 1e-9);
    memset(msr + 0x1ad, 0, 8);

    misc = 0;
    memcpy(msr + 0x1a0, &misc, 8);
    write_file(dir, "dev/cpu/0/msr", msr, sizeof(msr));
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_int_equal(p->msr.turbo_disabled, CORUN_TRI_NO);
    corun_platform_free(p);

    /* No ratio: no table. */
    write_file(dir, "dev/cpu/0/msr", msr, sizeof(msr));
    assert_int_equal(corun_platform_read_turbo(dir, 30, rel), -ENODATA);
    /* A file too short for MPERF: the read fails, the reason says so. */
    write_file(dir, "dev/cpu/0/msr", msr, 0x10);
    assert_int_equal(corun_platform_read_turbo(dir, 30, rel), -EIO);
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_int_equal(p->msr.accessible, CORUN_TRI_NO);
    assert_true(has(p->msr.why, "MPERF"));
    corun_platform_free(p);
    remove_tree(dir);
}

/* A nested guest: this process's CPUID names the outer hypervisor (bhyve),
 * the kernel's (a sparse file stands for /dev/cpu/0/cpuid: pread at the
 * leaf) the one Linux runs on, as on a PVM guest. The kernel's names it. */
static void test_nested_hypervisor(void **state)
{
    char dir[] = "/tmp/corun-platform-XXXXXX", path[64];
    const char *cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                          "flags\t\t: fpu hypervisor\n";
    const uint32_t kvm[4] = {0x40000001, 0x4b4d564b, 0x564b4d56, 0x4d};
    struct corun_platform_cpuid_dump *d;
    struct corun_platform_opts o = {.root = dir, .cpuid = corun_platform_cpuid_lookup};
    struct corun_platform *p;
    int fd;

    assert_int_equal(corun_platform_cpuid_parse("1 0: 00a10f11 0 80000000 0\n"
                                                "40000000 0: 40000000 76796862 68622065 20657679\n",
                                                &d, NULL),
                     0);
    o.cpuid_user = d;
    assert_non_null(mkdtemp(dir));
    write_file(dir, "proc/cpuinfo", cpuinfo, strlen(cpuinfo));
    write_file(dir, "sys/bus/event_source/devices/software/type", "1\n", 2); /* no core PMU */
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_string_equal(p->hypervisor.name, "bhyve"); /* no cpuid driver: this process's */
    assert_string_equal(p->hypervisor.kernel_vendor_id, "");
    assert_true(has(p->hypervisor.kernel_why, "cpuid driver is not loaded"));
    corun_platform_free(p);

    write_file(dir, "dev/cpu/0/cpuid", "", 0);
    snprintf(path, sizeof(path), "%s/dev/cpu/0/cpuid", dir);
    fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, kvm, sizeof(kvm), 0x40000000), sizeof(kvm));
    close(fd);
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_int_equal(p->hypervisor.present, CORUN_TRI_YES);
    assert_string_equal(p->hypervisor.name, "KVM");
    assert_string_equal(p->hypervisor.vendor_id, "bhyve bhyve ");
    assert_string_equal(p->hypervisor.kernel_vendor_id, "KVMKVMKVM");
    assert_true(has(p->hypervisor.why, "nested virtualisation"));
    assert_true(has(p->pmu.reason, "(KVM guest)"));
    corun_platform_free(p);

    /* Without CPUID at all, the kernel's signature still names it. */
    o.cpuid = NULL;
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_string_equal(p->hypervisor.name, "KVM");
    assert_string_equal(p->hypervisor.vendor_id, "");
    assert_true(has(p->hypervisor.why, "the kernel's CPUID"));
    corun_platform_free(p);
    corun_platform_cpuid_free(d);
    remove_tree(dir);
}

/* Intel's turbo table: a server part's groups by MSR_TURBO_RATIO_LIMIT_CORES
 * (3.8 GHz up to 2 busy cores, 3.7 up to 4, 3.5 up to 8, 3.1 up to 28), the
 * older layout when those counts do not rise, and the engine's table. */
static void test_turbo_table(void **state)
{
    struct corun_platform p;
    double rel[30];

    memset(&p, 0, sizeof(p));
    corun__pf_turbo_decode(0x1f232526ull, true, 0x1c080402ull, &p.msr);
    assert_int_equal(p.msr.turbo_groups, 4);
    assert_int_equal(p.msr.turbo_cores[0], 2);
    assert_int_equal(p.msr.turbo_cores[3], 28);
    assert_int_equal(corun_platform_turbo_rel(&p, 30, rel), 0);
    assert_true(fabs(rel[1] - 1) < 1e-9);          /* 2 busy: the first group */
    assert_true(fabs(rel[2] - 37.0 / 38) < 1e-9);  /* 3 busy: up to 4 */
    assert_true(fabs(rel[8] - 31.0 / 38) < 1e-9);  /* 9 busy: up to 28 */
    assert_true(fabs(rel[29] - 31.0 / 38) < 1e-9); /* past 28: the last */
    /* Counts that do not rise: the older layout, group i is i + 1 cores. */
    corun__pf_turbo_decode(0x1f232526ull, true, 0x02080402ull, &p.msr);
    assert_int_equal(p.msr.turbo_cores[3], 4);
    corun__pf_turbo_decode(0x1f232526ull, false, 0, &p.msr);
    assert_int_equal(p.msr.turbo_cores[1], 2);
    /* No ratio: no table. */
    corun__pf_turbo_decode(0, true, 0x1c080402ull, &p.msr);
    assert_int_equal(p.msr.turbo_groups, 0);
    assert_int_equal(corun_platform_turbo_rel(&p, 30, rel), -ENODATA);
    assert_int_equal(corun_platform_turbo_rel(NULL, 30, rel), -EINVAL);
}

/* Command-line switches: one the kernel shows by clearing the flag (nopcid),
 * one it does not (nopat); without CPUID the hidden flag leaves the processor
 * unknown. */
static void test_switches(void **state)
{
    char dir[] = "/tmp/corun-platform-XXXXXX";
    const char *cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                          "flags\t\t: fpu pat invpcid ht\n";
    const char *cmdline = "ro nopcid nopat nosmt=force pti=off\n";
    struct corun_platform_opts o = {.root = dir};
    struct corun_platform *p;

    assert_non_null(mkdtemp(dir));
    write_file(dir, "proc/cpuinfo", cpuinfo, strlen(cpuinfo));
    write_file(dir, "proc/cmdline", cmdline, strlen(cmdline));
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_int_equal(p->pcid.cpu, CORUN_TRI_UNKNOWN);
    assert_int_equal(p->pcid.kernel, CORUN_TRI_NO);
    assert_true(has(p->pcid.why, "nopcid on the command line hides"));
    assert_int_equal(p->pat.cpu, CORUN_TRI_YES);
    assert_int_equal(p->pat.kernel, CORUN_TRI_NO);
    assert_true(has(p->pat.why, "nopat"));
    assert_int_equal(p->invpcid.kernel, CORUN_TRI_YES);
    assert_true(p->kernel.nopcid && p->kernel.nopat && p->kernel.nosmt && p->kernel.nopti);
    assert_false(p->kernel.noinvpcid);
    assert_int_equal(p->waitpkg.cpu, CORUN_TRI_NO); /* the flag speaks without CPUID */
    assert_string_equal(p->wait_strategy, "pause");
    corun_platform_free(p);
    remove_tree(dir);
}

/* An empty tree: every answer unknown or absent, each with a reason. */
static void test_empty_tree(void **state)
{
    char dir[] = "/tmp/corun-platform-XXXXXX";
    struct corun_platform_opts o = {.root = dir, .read_msr = true};
    struct corun_platform *p;

    assert_non_null(mkdtemp(dir));
    assert_int_equal(corun_platform_probe(&o, &p), 0);
    assert_int_equal(p->pcid.cpu, CORUN_TRI_UNKNOWN);
    assert_int_equal(p->pcid.kernel, CORUN_TRI_UNKNOWN);
    assert_true(has(p->pcid.why, "/proc/cpuinfo"));
    assert_true(has(p->cpu.why, "/proc/cpuinfo"));
    assert_int_equal(p->smt.enabled, CORUN_TRI_UNKNOWN);
    assert_true(p->smt.why[0]);
    assert_int_equal(p->nhugepage_sizes, 0);
    assert_true(has(p->hugepages_why, "/sys/kernel/mm/hugepages"));
    assert_string_equal(p->thp.mode, "");
    assert_true(has(p->thp.why, "CONFIG_TRANSPARENT_HUGEPAGE"));
    assert_int_equal(p->pmu.available, CORUN_TRI_UNKNOWN);
    assert_true(p->pmu.reason[0]);
    assert_int_equal(p->pmu.paranoid, INT_MIN);
    assert_int_equal(p->hypervisor.present, CORUN_TRI_UNKNOWN);
    assert_true(p->hypervisor.why[0]);
    assert_int_equal(p->msr.accessible, CORUN_TRI_NO);
    assert_true(has(p->msr.why, "msr driver"));
    assert_null(p->kernel.cmdline);
    assert_true(has(p->kernel.why, "/proc/cmdline"));
    assert_int_equal(p->nmodules, 0);
    assert_true(p->modules_why[0]);
    assert_int_equal(p->kernel.pti, CORUN_TRI_UNKNOWN);
    assert_true(p->kernel.pti_why[0]);
    assert_false(p->firmware.present);
    assert_null(p->wait_strategy);
    assert_int_equal(p->numa.nodes, -1);
    assert_true(has(p->numa.why, "CONFIG_NUMA"));
    assert_int_equal(p->numa.balancing, -1);
    assert_true(has(p->numa.balancing_why, "CONFIG_NUMA_BALANCING"));
    corun_platform_free(p);

    /* Four nodes with the kernel's balancing on; then files that say
     * nothing usable. */
    {
        char cmd[512];
        struct corun_platform *q;

        snprintf(cmd, sizeof(cmd),
                 "mkdir -p %s/sys/devices/system/node %s/proc/sys/kernel && "
                 "echo 0-3 > %s/sys/devices/system/node/online && "
                 "echo 1 > %s/proc/sys/kernel/numa_balancing",
                 dir, dir, dir, dir);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(corun_platform_probe(&o, &q), 0);
        assert_int_equal(q->numa.nodes, 4);
        assert_string_equal(q->numa.online, "0-3");
        assert_int_equal(q->numa.balancing, 1);
        corun_platform_free(q);
        snprintf(cmd, sizeof(cmd),
                 "echo > %s/sys/devices/system/node/online && "
                 "echo on > %s/proc/sys/kernel/numa_balancing",
                 dir, dir);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(corun_platform_probe(&o, &q), 0);
        assert_int_equal(q->numa.nodes, -1);
        assert_true(has(q->numa.why, "no node list"));
        assert_int_equal(q->numa.balancing, -1);
        assert_true(has(q->numa.balancing_why, "no number"));
        corun_platform_free(q);
    }
    remove_tree(dir);

    o.root = "/nonexistent/corun";
    assert_int_equal(corun_platform_probe(&o, &p), -ENOENT);
    assert_null(p);
}

/* ---- parsers ---------------------------------------------------------------- */

static void test_params(void **state)
{
    const char *cl = "BOOT_IMAGE=/vmlinuz ro nosmt=force transparent_hugepage=never "
                     "dyndbg=\"file foo.c +p\" nopcid mitigations=auto transparent_hugepage=madvise"
                     " -- nopat";
    char v[64];

    assert_true(corun__pf_param(cl, "nosmt", v, sizeof(v)));
    assert_string_equal(v, "force");
    assert_true(corun__pf_param(cl, "nopcid", v, sizeof(v)));
    assert_string_equal(v, "");
    assert_true(corun__pf_param(cl, "transparent_hugepage", v, sizeof(v)));
    assert_string_equal(v, "madvise"); /* the last one wins */
    assert_true(corun__pf_param(cl, "dyndbg", v, sizeof(v)));
    assert_string_equal(v, "file foo.c +p");
    assert_false(corun__pf_param(cl, "nopat", NULL, 0)); /* after "--": init's */
    assert_false(corun__pf_param(cl, "nopc", NULL, 0));
    assert_false(corun__pf_param(cl, "foo.c", NULL, 0)); /* inside quotes */
    assert_false(corun__pf_param(NULL, "nopcid", NULL, 0));
    assert_false(corun__pf_param("", "nopcid", NULL, 0));
}

static void test_small_parsers(void **state)
{
    const char *ci = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 17\n"
                     "model name\t: AMD EPYC  \nflags\t\t: fpu pcid\tpat\n\nprocessor\t: 1\n";
    char out[32], *flags;

    assert_true(corun__pf_cpuinfo_field(ci, "model", out, sizeof(out)));
    assert_string_equal(out, "17"); /* "model" is not "model name" */
    assert_true(corun__pf_cpuinfo_field(ci, "model name", out, sizeof(out)));
    assert_string_equal(out, "AMD EPYC");
    assert_false(corun__pf_cpuinfo_field(ci, "microcode", out, sizeof(out)));
    flags = corun__pf_cpuinfo_flags(ci);
    assert_string_equal(flags, " fpu pcid pat ");
    free(flags);
    assert_null(corun__pf_cpuinfo_flags("processor : 0\n"));
    assert_int_equal(corun__pf_cpuinfo_count(ci), 2);
}

static void test_cpuid_dump(void **state)
{
    struct corun_platform_cpuid_dump *d;
    uint32_t r[4];
    unsigned line = 0;

    assert_int_equal(corun_platform_cpuid_parse("# c\n0 0: 1 2 3 4\n0x7 0x0: a b c d # x\n"
                                                "7 0: a b c e\n",
                                                &d, &line),
                     0);
    assert_true(corun_platform_cpuid_lookup(d, 0, 0, r));
    assert_int_equal(r[3], 4);
    assert_true(corun_platform_cpuid_lookup(d, 7, 0, r));
    assert_int_equal(r[3], 0xe); /* the last line for a leaf wins */
    assert_false(corun_platform_cpuid_lookup(d, 1, 0, r));
    corun_platform_cpuid_free(d);
    assert_int_equal(corun_platform_cpuid_parse("0 0: 1 2 3 4\n\n1 0: 1 2 3\n", &d, &line),
                     -EINVAL);
    assert_int_equal(line, 3);
    assert_null(d);
    assert_int_equal(corun_platform_cpuid_parse("0 0: 1 2 3 4 5\n", &d, &line), -EINVAL);
    assert_int_equal(corun_platform_cpuid_parse("0 0: 100000000 2 3 4\n", &d, &line), -EINVAL);
    assert_true(corun_platform_cpuid_leaves()[0] == 0);
}

/* ---- the context-switch measurement ------------------------------------------ */

static unsigned first_cpu(void)
{
    cpu_set_t set;
    unsigned c = 0;

    assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
    while (!CPU_ISSET(c, &set))
        c++;
    return c;
}

static void test_ctxsw(void **state)
{
    struct corun_platform_ctxsw_opts o = {
        .cpu = first_cpu(), .working_set_bytes = 64 << 10, .round_trips = 200, .repetitions = 3};
    struct corun_platform_ctxsw_result r;

    assert_int_equal(corun_platform_measure_ctxsw(&o, &r), 0);
    assert_int_equal(r.repetitions, 3);
    assert_true(r.raw_ns_per_switch > 0 && isfinite(r.raw_ns_per_switch));
    assert_true(r.overhead_ns > 0);
    assert_true(r.raw_min_ns <= r.raw_ns_per_switch && r.raw_ns_per_switch <= r.raw_max_ns);
    assert_true(fabs(r.ns_per_switch - (r.raw_ns_per_switch - r.overhead_ns)) < 1e-6);
    /* A switch costs more than nothing and less than a hundredth of a second. */
    assert_true(r.raw_ns_per_switch < 1e7);

    o.cpu = 4000;
    assert_int_equal(corun_platform_measure_ctxsw(&o, &r), -EINVAL);
}

static int deny_affinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    errno = EPERM;
    return -1;
}

static void test_ctxsw_affinity_fails(void **state)
{
    struct corun_platform_ctxsw_opts o = {.cpu = first_cpu(), .round_trips = 10, .repetitions = 1};
    struct corun_platform_ctxsw_result r;

    /* The children inherit the table, so the measurer's pin fails. */
    corun__sys.sched_setaffinity = deny_affinity;
    assert_int_equal(corun_platform_measure_ctxsw(&o, &r), -EPERM);
    corun__sys_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kvm_guest),     cmocka_unit_test(test_intel_server),
        cmocka_unit_test(test_hybrid_laptop), cmocka_unit_test(test_pmu_verdicts),
        cmocka_unit_test(test_msr_decoding),  cmocka_unit_test(test_nested_hypervisor),
        cmocka_unit_test(test_switches),      cmocka_unit_test(test_turbo_table),
        cmocka_unit_test(test_empty_tree),    cmocka_unit_test(test_params),
        cmocka_unit_test(test_small_parsers), cmocka_unit_test(test_cpuid_dump),
        cmocka_unit_test(test_ctxsw),         cmocka_unit_test(test_ctxsw_affinity_fails),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
