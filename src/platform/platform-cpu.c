/*
 * platform-cpu.c — the processor: identity, the features corun cares about
 * (PCID, INVPCID, MONITOR/MWAIT, WAITPKG, MONITORX, PAT, 1 GiB pages) with
 * whether Linux uses them, SMT, hybrid core types, the hypervisor, and the
 * wait strategy corun would pick.
 *
 * Each feature has two answers. What the processor offers comes from CPUID
 * when we have it (live, or a replayed dump), else from /proc/cpuinfo. What
 * Linux uses comes from /proc/cpuinfo, because the kernel clears a feature's
 * flag there when it decides not to use it (nopcid, noinvpcid, clearcpuid=,
 * errata such as the Alder Lake INVLPG bug that switches PCID off), and from
 * the command line for switches that leave the flag alone (nopat).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "corun/wait.h"
#include "platform/platform-internal.h"

/*
 * Decides one feature: @bit of register @reg of CPUID @leaf for the
 * processor, cpuinfo flag @flag and command-line switch @off (or NULL) for
 * the kernel.
 */
static void feature(const struct corun__pf_ctx *c, struct corun_platform_feature *f, uint32_t leaf,
                    int reg, unsigned bit, const char *flag, const char *off)
{
    enum corun_tri by_cpuid = corun__pf_cpuid_bit(c, leaf, 0, reg, bit);
    enum corun_tri by_flag = corun__pf_flag(c, flag);
    bool switched_off = off && corun__pf_param(c->cmdline, off, NULL, 0);

    f->cpu = by_cpuid;
    /* Without CPUID the flag speaks for the processor too, unless a switch
     * may have hidden it. */
    if (f->cpu == CORUN_TRI_UNKNOWN && (by_flag == CORUN_TRI_YES || !switched_off))
        f->cpu = by_flag;
    if (by_flag == CORUN_TRI_UNKNOWN) {
        f->kernel = CORUN_TRI_UNKNOWN;
        snprintf(f->why, sizeof(f->why), "%s", c->cpuinfo_why);
    } else if (switched_off) {
        f->kernel = CORUN_TRI_NO;
        snprintf(f->why, sizeof(f->why), "%s on the kernel command line", off);
    } else if (by_flag == CORUN_TRI_YES) {
        f->kernel = CORUN_TRI_YES;
        snprintf(f->why, sizeof(f->why), "cpuinfo flag %s present%s%s%s", flag,
                 off ? " and no " : "", off ? off : "", off ? " on the command line" : "");
    } else {
        f->kernel = CORUN_TRI_NO;
        snprintf(f->why, sizeof(f->why), "%s %s",
                 by_cpuid == CORUN_TRI_NO ? "not in CPUID, no cpuinfo flag" : "no cpuinfo flag",
                 flag);
        if (f->cpu == CORUN_TRI_YES)
            snprintf(f->why, sizeof(f->why),
                     "CPUID has it but the kernel cleared cpuinfo flag %s (clearcpuid=, an "
                     "erratum, or no kernel support)",
                     flag);
    }
    if (f->cpu == CORUN_TRI_UNKNOWN && switched_off)
        snprintf(f->why, sizeof(f->why),
                 "no CPUID, and %s on the command line hides cpuinfo flag %s", off, flag);
}

static void identity_from_cpuid(const struct corun__pf_ctx *c, struct corun_platform_cpu *cpu)
{
    uint32_t r[4];

    if (!c->cpuid || !c->cpuid(c->cpuid_user, 0, 0, r))
        return;
    cpu->cpuid_used = true;
    if (!cpu->vendor[0]) {
        memcpy(cpu->vendor, &r[CORUN__EBX], 4);
        memcpy(cpu->vendor + 4, &r[CORUN__EDX], 4);
        memcpy(cpu->vendor + 8, &r[CORUN__ECX], 4);
        cpu->vendor[12] = '\0';
        cpu->cpuid_used = true;
    }
    if (cpu->family < 0 && c->cpuid(c->cpuid_user, 1, 0, r)) {
        unsigned fam = (r[0] >> 8) & 0xf, mod = (r[0] >> 4) & 0xf;

        cpu->stepping = (int)(r[0] & 0xf);
        cpu->family = (int)(fam == 0xf ? fam + ((r[0] >> 20) & 0xff) : fam);
        cpu->model = (int)(fam == 6 || fam == 0xf ? (((r[0] >> 16) & 0xf) << 4) + mod : mod);
        cpu->cpuid_used = true;
    }
    if (!cpu->model_name[0] && c->cpuid(c->cpuid_user, 0x80000000, 0, r) && r[0] >= 0x80000004) {
        char brand[49];

        for (uint32_t i = 0; i < 3; i++) {
            if (!c->cpuid(c->cpuid_user, 0x80000002 + i, 0, r))
                return;
            memcpy(brand + 16 * i, r, 16);
        }
        brand[48] = '\0';
        corun__pf_copy(cpu->model_name, sizeof(cpu->model_name), brand + strspn(brand, " "));
        corun__rstrip(cpu->model_name);
        cpu->cpuid_used = true;
    }
}

static void identity(const struct corun__pf_ctx *c, struct corun_platform_cpu *cpu)
{
    char v[128];

    cpu->family = cpu->model = cpu->stepping = -1;
    cpu->microcode = -1;
    if (c->cpuinfo) {
        cpu->nprocessors = corun__pf_cpuinfo_count(c->cpuinfo);
        corun__pf_cpuinfo_field(c->cpuinfo, "vendor_id", cpu->vendor, sizeof(cpu->vendor));
        corun__pf_cpuinfo_field(c->cpuinfo, "model name", cpu->model_name, sizeof(cpu->model_name));
        if (corun__pf_cpuinfo_field(c->cpuinfo, "cpu family", v, sizeof(v)))
            cpu->family = atoi(v);
        if (corun__pf_cpuinfo_field(c->cpuinfo, "model", v, sizeof(v)))
            cpu->model = atoi(v);
        if (corun__pf_cpuinfo_field(c->cpuinfo, "stepping", v, sizeof(v)))
            cpu->stepping = atoi(v);
        if (corun__pf_cpuinfo_field(c->cpuinfo, "microcode", v, sizeof(v)))
            cpu->microcode = strtoll(v, NULL, 0);
    }
    identity_from_cpuid(c, cpu);
    if (cpu->microcode < 0) {
        char s[32];

        if (corun__pf_read_str(c, "sys/devices/system/cpu/cpu0/microcode/version", s, sizeof(s)) >
            0)
            cpu->microcode = strtoll(s, NULL, 0);
    }
    if (!cpu->vendor[0] || cpu->family < 0)
        snprintf(cpu->why, sizeof(cpu->why), "%s%s",
                 c->cpuinfo ? "/proc/cpuinfo lacks vendor_id or cpu family" : c->cpuinfo_why,
                 c->cpuid ? "" : ", and no CPUID");
    else if (cpu->microcode < 0)
        snprintf(cpu->why, sizeof(cpu->why),
                 "microcode revision unknown: not in /proc/cpuinfo (hidden by some hypervisors) "
                 "nor in /sys/devices/system/cpu/cpu0/microcode/version");
}

static void hybrid(const struct corun__pf_ctx *c, struct corun_platform_cpu *cpu)
{
    static const char *const types[] = {"cpu_core", "cpu_atom"};
    enum corun_tri by_cpuid = corun__pf_cpuid_bit(c, 7, 0, CORUN__EDX, 15);

    cpu->hybrid = by_cpuid != CORUN_TRI_UNKNOWN ? by_cpuid : corun__pf_flag(c, "hybrid_cpu");
    for (size_t i = 0; i < CORUN_ARRAY_SIZE(types); i++) {
        char path[64];

        snprintf(path, sizeof(path), "sys/devices/%s/cpus", types[i]);
        if (corun__pf_read_str(c, path, cpu->types[cpu->ntypes].cpus, sizeof(cpu->types[0].cpus)) >
            0) {
            corun__pf_copy(cpu->types[cpu->ntypes].name, sizeof(cpu->types[0].name), types[i]);
            cpu->ntypes++;
        }
    }
    /* Kernels before 5.13 lack the hybrid_cpu flag; two core PMUs say the same. */
    if (cpu->ntypes > 1)
        cpu->hybrid = CORUN_TRI_YES;
}

/* The most CPUs in any online CPU's thread_siblings_list; 0 when unreadable. */
static unsigned max_siblings(const struct corun__pf_ctx *c)
{
    struct corun_cpuset online = {0}, sib = {0};
    char buf[4096], path[96];
    unsigned most = 0;

    if (corun__pf_read_str(c, "sys/devices/system/cpu/online", buf, sizeof(buf)) <= 0 ||
        corun_cpuset_parse(&online, buf, NULL))
        goto out_release;
    for (int cpu = corun_cpuset_next(&online, 0); cpu >= 0;
         cpu = corun_cpuset_next(&online, (unsigned)cpu + 1)) {
        snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                 cpu);
        if (corun__pf_read_str(c, path, buf, sizeof(buf)) <= 0 ||
            corun_cpuset_parse(&sib, buf, NULL))
            continue;
        if (corun_cpuset_count(&sib) > most)
            most = corun_cpuset_count(&sib);
    }
out_release:
    corun_cpuset_release(&online);
    corun_cpuset_release(&sib);
    return most;
}

/*
 * SMT. The kernel's own answer, /sys/devices/system/cpu/smt/control, is
 * preferred: "on", "off", "forceoff" (SMT exists), "notsupported" (it does
 * not). Without it ("notimplemented", or an old kernel) the sibling lists
 * decide whether SMT runs, and whether it exists stays open when it does not.
 */
static void smt(const struct corun__pf_ctx *c, struct corun_platform_smt *s)
{
    int64_t active = -1;
    bool nosmt = corun__pf_param(c->cmdline, "nosmt", NULL, 0);

    s->present = s->enabled = CORUN_TRI_UNKNOWN;
    s->threads_per_core = max_siblings(c);
    corun__pf_read_str(c, "sys/devices/system/cpu/smt/control", s->control, sizeof(s->control));
    corun__pf_read_i64(c, "sys/devices/system/cpu/smt/active", &active);
    if (!strcmp(s->control, "on") || !strcmp(s->control, "off") ||
        !strcmp(s->control, "forceoff")) {
        s->present = CORUN_TRI_YES;
        s->enabled = active >= 0 ? (active ? CORUN_TRI_YES : CORUN_TRI_NO)
                                 : (!strcmp(s->control, "on") ? CORUN_TRI_YES : CORUN_TRI_NO);
        snprintf(s->why, sizeof(s->why), "smt/control is %s%s", s->control,
                 nosmt ? " (nosmt on the command line)" : "");
    } else if (!strcmp(s->control, "notsupported")) {
        s->present = s->enabled = CORUN_TRI_NO;
        snprintf(s->why, sizeof(s->why),
                 "smt/control is notsupported: one thread per core as the kernel sees it");
    } else if (s->threads_per_core > 1) {
        s->present = s->enabled = CORUN_TRI_YES;
        snprintf(s->why, sizeof(s->why), "%u threads per core in thread_siblings_list",
                 s->threads_per_core);
    } else if (s->threads_per_core == 1) {
        s->enabled = CORUN_TRI_NO;
        snprintf(s->why, sizeof(s->why),
                 "one thread per core online; whether the processor has more is unknown "
                 "without smt/control");
    } else {
        snprintf(s->why, sizeof(s->why), "no smt/control and no thread_siblings_list");
    }
}

struct hv_name {
    const char *sig, *name;
};

static const struct hv_name hv_sigs[] = {
    {"KVMKVMKVM", "KVM"},
    {"Microsoft Hv", "Hyper-V"},
    {"VMwareVMware", "VMware"},
    {"XenVMMXenVMM", "Xen"},
    {"TCGTCGTCGTCG", "QEMU TCG"},
    {"ACRNACRNACRN", "ACRN"},
    {"bhyve bhyve ", "bhyve"},
    {"VBoxVBoxVBox", "VirtualBox"},
    {" lrpepyh  vr", "Parallels"},
    {"QNXQVMBSQG", "QNX"},
    {"Linux KVM Hv", "KVM (Hyper-V enlightened)"},
};

/* Names a hypervisor from DMI strings, or returns NULL. */
static const char *hv_from_dmi(const struct corun_platform_firmware *fw)
{
    if (!fw->present)
        return NULL;
    if (!strcmp(fw->product_name, "KVM") || strstr(fw->sys_vendor, "QEMU"))
        return "KVM";
    if (strstr(fw->sys_vendor, "VMware"))
        return "VMware";
    if (strstr(fw->sys_vendor, "Microsoft") && strstr(fw->product_name, "Virtual"))
        return "Hyper-V";
    if (strstr(fw->sys_vendor, "Xen"))
        return "Xen";
    if (strstr(fw->sys_vendor, "innotek"))
        return "VirtualBox";
    return NULL;
}

static const char *hv_from_sig(const char *sig)
{
    for (size_t i = 0; sig[0] && i < CORUN_ARRAY_SIZE(hv_sigs); i++)
        if (!strcmp(sig, hv_sigs[i].sig))
            return hv_sigs[i].name;
    return NULL;
}

static void sig_of(const uint32_t r[4], char sig[16])
{
    memcpy(sig, &r[1], 4);
    memcpy(sig + 4, &r[2], 4);
    memcpy(sig + 8, &r[3], 4);
    sig[12] = '\0';
}

/*
 * The signature as the kernel reads it: the cpuid driver runs the instruction
 * in the kernel, at offset LEAF of /dev/cpu/0/cpuid. Under nested
 * virtualisation or CPUID faulting the kernel's answer and this process's
 * differ (a PVM guest's kernel sees "KVMKVMKVM", its processes the outer
 * hypervisor's signature). Not read when a mocked CPUID stands for a
 * machine whose tree is this one's.
 */
static void kernel_sig(const struct corun__pf_ctx *c, struct corun_platform_hypervisor *h)
{
    uint32_t r[4];
    ssize_t n;
    int fd;

    if (c->opts->cpuid && !c->opts->root) {
        snprintf(h->kernel_why, sizeof(h->kernel_why), "not read: CPUID is mocked");
        return;
    }
    fd = corun__root_openat(c->root, "dev/cpu/0/cpuid", O_RDONLY);
    if (fd < 0) {
        snprintf(h->kernel_why, sizeof(h->kernel_why), "/dev/cpu/0/cpuid: %s%s", corun_strerror(fd),
                 fd == -ENOENT ? " (the cpuid driver is not loaded)" : "");
        return;
    }
    n = pread(fd, r, sizeof(r), 0x40000000);
    if (n < 0)
        n = -errno;
    close(fd);
    if (n != (ssize_t)sizeof(r)) {
        snprintf(h->kernel_why, sizeof(h->kernel_why), "/dev/cpu/0/cpuid leaf 0x40000000: %s",
                 n < 0 ? corun_strerror((int)n) : "short read");
        return;
    }
    sig_of(r, h->kernel_vendor_id);
    if (!h->kernel_vendor_id[0])
        snprintf(h->kernel_why, sizeof(h->kernel_why), "leaf 0x40000000 is empty");
}

static void hypervisor(const struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_platform_hypervisor *h = &p->hypervisor;
    enum corun_tri bit = corun__pf_cpuid_bit(c, 1, 0, CORUN__ECX, 31);
    const char *dmi = hv_from_dmi(&p->firmware), *user, *kernel;
    uint32_t r[4];
    char xen[32];

    h->present = bit != CORUN_TRI_UNKNOWN ? bit : corun__pf_flag(c, "hypervisor");
    if (h->present == CORUN_TRI_NO) {
        snprintf(h->why, sizeof(h->why), "%s",
                 bit == CORUN_TRI_UNKNOWN ? "no hypervisor flag in /proc/cpuinfo"
                                          : "no hypervisor bit in CPUID leaf 1");
        snprintf(h->kernel_why, sizeof(h->kernel_why), "no hypervisor");
        return;
    }
    if (h->present == CORUN_TRI_YES && c->cpuid && c->cpuid(c->cpuid_user, 0x40000000, 0, r))
        sig_of(r, h->vendor_id);
    kernel_sig(c, h);
    user = hv_from_sig(h->vendor_id);
    kernel = hv_from_sig(h->kernel_vendor_id);
    /* The kernel's answer names the hypervisor Linux runs on; a different
     * one this process sees is said beside it. */
    if (kernel && h->vendor_id[0] && strcmp(h->vendor_id, h->kernel_vendor_id)) {
        h->present = CORUN_TRI_YES;
        corun__pf_copy(h->name, sizeof(h->name), kernel);
        snprintf(h->why, sizeof(h->why),
                 "the kernel's CPUID leaf 0x40000000 signature \"%s\"; this process's CPUID "
                 "says \"%s\"%s%s%s: nested virtualisation or CPUID faulting",
                 h->kernel_vendor_id, h->vendor_id, user ? " (" : "", user ? user : "",
                 user ? ")" : "");
        return;
    }
    if (user || kernel) {
        h->present = CORUN_TRI_YES;
        corun__pf_copy(h->name, sizeof(h->name), user ? user : kernel);
        snprintf(h->why, sizeof(h->why), "%sCPUID leaf 0x40000000 signature \"%s\"",
                 user ? "" : "the kernel's ", user ? h->vendor_id : h->kernel_vendor_id);
        return;
    }
    if (corun__pf_read_str(c, "sys/hypervisor/type", xen, sizeof(xen)) > 0) {
        h->present = CORUN_TRI_YES;
        corun__pf_copy(h->name, sizeof(h->name), !strcmp(xen, "xen") ? "Xen" : xen);
        snprintf(h->why, sizeof(h->why), "/sys/hypervisor/type is %s", xen);
    } else if (dmi && h->present != CORUN_TRI_NO) {
        h->present = CORUN_TRI_YES;
        corun__pf_copy(h->name, sizeof(h->name), dmi);
        snprintf(h->why, sizeof(h->why), "from DMI: \"%s\" \"%s\"", p->firmware.sys_vendor,
                 p->firmware.product_name);
    } else if (h->present == CORUN_TRI_YES) {
        snprintf(h->why, sizeof(h->why), "%s",
                 h->vendor_id[0] ? "CPUID leaf 0x40000000 signature not known to corun"
                                 : "hypervisor bit set, but no CPUID signature, "
                                   "/sys/hypervisor or DMI names it");
    } else {
        snprintf(h->why, sizeof(h->why), "no CPUID and %s", c->cpuinfo_why);
    }
}

/*
 * The wait strategy. On this machine (no recorded root, real CPUID) it is
 * the wait box's own choice, so the report and corun_mutex never disagree.
 * For a replayed tree it is derived from the report with the wait box's rule:
 * WAITPKG gives UMONITOR/UMWAIT, else MONITORX gives MONITORX/MWAITX, else a
 * PAUSE spin; each then sleeps on a futex.
 */
static const char *wait_strategy_of(const struct corun__pf_ctx *c, const struct corun_platform *p)
{
    if (!c->opts->root && !c->opts->cpuid)
        return corun_wait_strategy_name(corun_wait_strategy());
    if (p->waitpkg.cpu == CORUN_TRI_YES)
        return "umwait";
    if (p->waitpkg.cpu == CORUN_TRI_UNKNOWN)
        return NULL;
    if (p->monitorx.cpu == CORUN_TRI_YES)
        return "mwaitx";
    return p->monitorx.cpu == CORUN_TRI_NO ? "pause" : NULL;
}

/* Linux programs IA32_UMWAIT_CONTROL for every CPU and shows it here. */
static void umwait_control(const struct corun__pf_ctx *c, struct corun_platform *p)
{
    const char *dir = "sys/devices/system/cpu/umwait_control";
    char path[96];
    int64_t v;

    snprintf(path, sizeof(path), "%s/max_time", dir);
    p->umwait_max_time = corun__pf_read_i64(c, path, &v) == 0 ? v : -1;
    snprintf(path, sizeof(path), "%s/enable_c02", dir);
    p->umwait_c02 = corun__pf_read_i64(c, path, &v) == 0 ? (v ? CORUN_TRI_YES : CORUN_TRI_NO)
                                                         : CORUN_TRI_UNKNOWN;
}

int corun__pf_cpu(struct corun__pf_ctx *c, struct corun_platform *p)
{
    identity(c, &p->cpu);
    hybrid(c, &p->cpu);
    smt(c, &p->smt);
    feature(c, &p->pcid, 1, CORUN__ECX, 17, "pcid", "nopcid");
    feature(c, &p->invpcid, 7, CORUN__EBX, 10, "invpcid", "noinvpcid");
    feature(c, &p->monitor_mwait, 1, CORUN__ECX, 3, "monitor", NULL);
    feature(c, &p->waitpkg, 7, CORUN__ECX, 5, "waitpkg", NULL);
    feature(c, &p->monitorx, 0x80000001, CORUN__ECX, 29, "mwaitx", NULL);
    feature(c, &p->pat, 1, CORUN__EDX, 16, "pat", "nopat");
    feature(c, &p->gbpages, 0x80000001, CORUN__EDX, 26, "pdpe1gb", "nogbpages");
    corun__pf_read_str(c, "sys/devices/system/cpu/cpuidle/current_driver", p->idle_driver,
                       sizeof(p->idle_driver));
    hypervisor(c, p);
    p->wait_strategy = wait_strategy_of(c, p);
    umwait_control(c, p);
    return 0;
}
