/*
 * platform-kernel.c — the software around the processor: kernel release and
 * version, the command-line parameters that change what corun reports or
 * does (nopcid, nosmt, transparent_hugepage=, mitigations=, isolcpus=...),
 * modules with their version and srcversion (/sys/module: the answer to
 * "which driver version is this?"), and board and firmware identity from DMI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "platform/platform-internal.h"

/* The parameters reported when present, in this order. */
static const char *const params[] = {
    "nopcid",
    "noinvpcid",
    "nosmt",
    "nopti",
    "pti",
    "nopat",
    "nogbpages",
    "mitigations",
    "transparent_hugepage",
    "hugepagesz",
    "default_hugepagesz",
    "hugepages",
    "isolcpus",
    "nohz_full",
    "intel_pstate",
    "amd_pstate",
    "idle",
    "intel_idle.max_cstate",
    "processor.max_cstate",
    "clearcpuid",
    "nowatchdog",
    "rdt",
    "cpufreq.off",
    "maxcpus",
};

/* Reads every file of vulnerabilities/, sorted by name. */
static int vulnerabilities(const struct corun__pf_ctx *c, struct corun_platform_kernel *k)
{
    char **names;
    int n = corun__pf_list_dir(c, "sys/devices/system/cpu/vulnerabilities", &names);

    if (n <= 0)
        return n == -ENOMEM ? n : 0;
    k->vulns = calloc((size_t)n, sizeof(*k->vulns));
    if (!k->vulns) {
        corun__pf_free_names(names, n);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        char path[128];

        snprintf(path, sizeof(path), "sys/devices/system/cpu/vulnerabilities/%s", names[i]);
        if (corun__pf_read_str(c, path, k->vulns[k->nvulns].status, sizeof(k->vulns[0].status)) < 0)
            continue;
        corun__pf_copy(k->vulns[k->nvulns].name, sizeof(k->vulns[0].name), names[i]);
        k->nvulns++;
    }
    corun__pf_free_names(names, n);
    return 0;
}

/*
 * Page-table isolation. vulnerabilities/meltdown says "Mitigation: PTI" when
 * it is on; "Not affected" and "Vulnerable" mean off. Older kernels without
 * the file show the synthetic cpuinfo flag "pti".
 */
static void pti(const struct corun__pf_ctx *c, struct corun_platform_kernel *k)
{
    for (unsigned i = 0; i < k->nvulns; i++) {
        if (strcmp(k->vulns[i].name, "meltdown"))
            continue;
        k->pti = strstr(k->vulns[i].status, "PTI") ? CORUN_TRI_YES : CORUN_TRI_NO;
        snprintf(k->pti_why, sizeof(k->pti_why), "vulnerabilities/meltdown: %.160s",
                 k->vulns[i].status);
        return;
    }
    k->pti = corun__pf_flag(c, "pti");
    snprintf(k->pti_why, sizeof(k->pti_why), "%s",
             k->pti == CORUN_TRI_UNKNOWN ? "no vulnerabilities/meltdown and no cpuinfo flags"
                                         : "cpuinfo flag pti (no vulnerabilities/meltdown)");
}

int corun__pf_kernel(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_platform_kernel *k = &p->kernel;
    int err;

    corun__pf_read_str(c, "proc/sys/kernel/osrelease", k->release, sizeof(k->release));
    corun__pf_read_str(c, "proc/version", k->version, sizeof(k->version));
    if ((err = vulnerabilities(c, k)))
        return err;
    pti(c, k);
    err = corun__read_alloc(c->root, "proc/cmdline", &k->cmdline, NULL);
    if (err == -ENOMEM)
        return err;
    if (err) {
        snprintf(k->why, sizeof(k->why), "cannot read /proc/cmdline: %s", corun_strerror(err));
        return 0;
    }
    corun__rstrip(k->cmdline);
    for (size_t i = 0; i < CORUN_ARRAY_SIZE(params) && k->nparams < CORUN_ARRAY_SIZE(k->params);
         i++) {
        struct corun_platform_param *prm = &k->params[k->nparams];

        if (corun__pf_param(k->cmdline, params[i], prm->value, sizeof(prm->value))) {
            corun__pf_copy(prm->name, sizeof(prm->name), params[i]);
            k->nparams++;
        }
    }
    k->nopcid = corun__pf_param(k->cmdline, "nopcid", NULL, 0);
    k->noinvpcid = corun__pf_param(k->cmdline, "noinvpcid", NULL, 0);
    k->nosmt = corun__pf_param(k->cmdline, "nosmt", NULL, 0);
    k->nopat = corun__pf_param(k->cmdline, "nopat", NULL, 0);
    {
        char v[16];

        k->nopti = corun__pf_param(k->cmdline, "nopti", NULL, 0) ||
                   (corun__pf_param(k->cmdline, "pti", v, sizeof(v)) && !strcmp(v, "off"));
    }
    if (!k->release[0])
        snprintf(k->why, sizeof(k->why), "cannot read /proc/sys/kernel/osrelease");
    return 0;
}

static int cmp_module(const void *a, const void *b)
{
    return strcmp(((const struct corun_platform_module *)a)->name,
                  ((const struct corun_platform_module *)b)->name);
}

/*
 * Modules. /sys/module lists loaded modules and built-in code with
 * parameters; only those with a version or srcversion identify a driver
 * version, so only those are reported. A loadable module has "initstate".
 */
int corun__pf_modules(struct corun__pf_ctx *c, struct corun_platform *p)
{
    char **names;
    int n = corun__pf_list_dir(c, "sys/module", &names);

    if (n < 0) {
        snprintf(p->modules_why, sizeof(p->modules_why), "cannot list /sys/module: %s",
                 corun_strerror(n));
        return n == -ENOMEM ? n : 0;
    }
    p->modules = calloc(n ? (size_t)n : 1, sizeof(*p->modules));
    if (!p->modules) {
        corun__pf_free_names(names, n);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        struct corun_platform_module *m = &p->modules[p->nmodules];
        char path[160], state[32];

        snprintf(path, sizeof(path), "sys/module/%s/version", names[i]);
        corun__pf_read_str(c, path, m->version, sizeof(m->version));
        snprintf(path, sizeof(path), "sys/module/%s/srcversion", names[i]);
        corun__pf_read_str(c, path, m->srcversion, sizeof(m->srcversion));
        if (!m->version[0] && !m->srcversion[0])
            continue;
        corun__pf_copy(m->name, sizeof(m->name), names[i]);
        snprintf(path, sizeof(path), "sys/module/%s/initstate", names[i]);
        m->builtin = corun__pf_read_str(c, path, state, sizeof(state)) < 0;
        p->nmodules++;
    }
    corun__pf_free_names(names, n);
    qsort(p->modules, p->nmodules, sizeof(*p->modules), cmp_module);
    if (!p->nmodules)
        snprintf(p->modules_why, sizeof(p->modules_why),
                 "no module in /sys/module has a version or srcversion");
    return 0;
}

int corun__pf_firmware(struct corun__pf_ctx *c, struct corun_platform *p)
{
    struct corun_platform_firmware *fw = &p->firmware;
    const struct {
        const char *file;
        char *dst;
        size_t len;
    } fields[] = {
        {"sys_vendor", fw->sys_vendor, sizeof(fw->sys_vendor)},
        {"product_name", fw->product_name, sizeof(fw->product_name)},
        {"board_vendor", fw->board_vendor, sizeof(fw->board_vendor)},
        {"board_name", fw->board_name, sizeof(fw->board_name)},
        {"bios_vendor", fw->bios_vendor, sizeof(fw->bios_vendor)},
        {"bios_version", fw->bios_version, sizeof(fw->bios_version)},
        {"bios_date", fw->bios_date, sizeof(fw->bios_date)},
    };
    char **names;
    int n = corun__pf_list_dir(c, "sys/class/dmi/id", &names);

    if (n < 0) {
        snprintf(fw->why, sizeof(fw->why),
                 "no DMI: /sys/class/dmi/id %s (firmware without SMBIOS tables, as in "
                 "Firecracker and other microVMs, or a kernel without CONFIG_DMIID)",
                 n == -ENOENT ? "is absent" : corun_strerror(n));
        return n == -ENOMEM ? n : 0;
    }
    corun__pf_free_names(names, n);
    fw->present = true;
    for (size_t i = 0; i < CORUN_ARRAY_SIZE(fields); i++) {
        char path[64];

        snprintf(path, sizeof(path), "sys/class/dmi/id/%s", fields[i].file);
        corun__pf_read_str(c, path, fields[i].dst, fields[i].len);
    }
    return 0;
}
