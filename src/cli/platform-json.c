/*
 * platform-json.c — `corun platform --json`: the platform report as JSON, in
 * the shape docs/platform-json.md documents. One rule throughout: a value
 * that is unknown is null, and a sibling "<key>_reason" says why.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/json.h"
#include "cli/platform-out.h"

/* Writes @key as a boolean, or null with "<key>_reason" = @why. */
static void jtri(struct json *j, const char *key, enum corun_tri t, const char *why)
{
    char rkey[96];

    if (t != CORUN_TRI_UNKNOWN) {
        json_kbool(j, key, t == CORUN_TRI_YES);
        return;
    }
    json_knull(j, key);
    snprintf(rkey, sizeof(rkey), "%s_reason", key);
    json_kstr(j, rkey, why && *why ? why : "unknown");
}

/* Writes @key as a boolean or null, and "<key>_reason" = @why either way. */
static void jtri_why(struct json *j, const char *key, enum corun_tri t, const char *why)
{
    char rkey[96];

    json_key(j, key);
    if (t == CORUN_TRI_UNKNOWN)
        json_null(j);
    else
        json_bool(j, t == CORUN_TRI_YES);
    snprintf(rkey, sizeof(rkey), "%s_reason", key);
    json_kstr(j, rkey, why && *why ? why : "unknown");
}

/* Writes @key as a string, or null with "<key>_reason" when @s is empty. */
static void jstr(struct json *j, const char *key, const char *s, const char *why)
{
    char rkey[96];

    if (s && *s) {
        json_kstr(j, key, s);
        return;
    }
    json_knull(j, key);
    snprintf(rkey, sizeof(rkey), "%s_reason", key);
    json_kstr(j, rkey, why && *why ? why : "unknown");
}

/* Writes @key as an integer, or null with "<key>_reason" when @v < 0. */
static void jint(struct json *j, const char *key, long long v, const char *why)
{
    char rkey[96];

    if (v >= 0) {
        json_kint(j, key, v);
        return;
    }
    json_knull(j, key);
    snprintf(rkey, sizeof(rkey), "%s_reason", key);
    json_kstr(j, rkey, why && *why ? why : "unknown");
}

static void cpu(struct json *j, const struct corun_platform *p)
{
    const struct corun_platform_cpu *c = &p->cpu;
    char ucode[32];

    json_key(j, "cpu");
    json_obj_begin(j);
    jstr(j, "vendor", c->vendor, c->why);
    jstr(j, "model_name", c->model_name, c->why);
    jint(j, "family", c->family, c->why);
    jint(j, "model", c->model, c->why);
    jint(j, "stepping", c->stepping, c->why);
    snprintf(ucode, sizeof(ucode), "0x%llx", (unsigned long long)c->microcode);
    jstr(j, "microcode", c->microcode >= 0 ? ucode : "", c->why);
    json_kuint(j, "processors", c->nprocessors);
    jtri(j, "hybrid", c->hybrid, "no CPUID and no hybrid_cpu flag in /proc/cpuinfo");
    json_key(j, "core_types");
    json_arr_begin(j);
    for (unsigned i = 0; i < c->ntypes; i++) {
        json_obj_begin_inline(j);
        json_kstr(j, "pmu", c->types[i].name);
        json_kstr(j, "cpus", c->types[i].cpus);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_kbool(j, "cpuid", c->cpuid_used);
    json_obj_end(j);
}

static void feature(struct json *j, const char *key, const struct corun_platform_feature *f)
{
    char k[64];

    jtri(j, key, f->cpu, f->why);
    snprintf(k, sizeof(k), "%s_kernel", key);
    jtri(j, k, f->kernel, f->why);
    if (f->kernel != CORUN_TRI_UNKNOWN) {
        snprintf(k, sizeof(k), "%s_kernel_reason", key);
        json_kstr(j, k, f->why);
    }
}

static void memory(struct json *j, const struct corun_platform *p)
{
    const struct corun_platform_thp *t = &p->thp;

    json_key(j, "hugepage_sizes_kb");
    if (p->nhugepage_sizes) {
        json_arr_begin_inline(j);
        for (unsigned i = 0; i < p->nhugepage_sizes; i++)
            json_uint(j, p->hugepages[i].size_kb);
        json_arr_end(j);
        json_key(j, "hugetlb_pools");
        json_arr_begin(j);
        for (unsigned i = 0; i < p->nhugepage_sizes; i++) {
            const struct corun_platform_hugetlb_pool *h = &p->hugepages[i];

            json_obj_begin_inline(j);
            json_kuint(j, "size_kb", h->size_kb);
            json_kint_or_null(j, "pages", h->nr);
            json_kint_or_null(j, "free", h->free);
            json_kint_or_null(j, "reserved", h->resv);
            json_kint_or_null(j, "surplus", h->surplus);
            json_obj_end(j);
        }
        json_arr_end(j);
    } else {
        json_null(j);
        json_kstr(j, "hugepage_sizes_kb_reason", p->hugepages_why);
        json_knull(j, "hugetlb_pools");
        json_kstr(j, "hugetlb_pools_reason", p->hugepages_why);
    }
    json_key(j, "thp");
    json_obj_begin(j);
    jstr(j, "mode", t->mode, t->why);
    jstr(j, "defrag", t->defrag, t->why);
    jstr(j, "shmem", t->shmem, t->why);
    jint(j, "pmd_size_kb", t->pmd_size_kb ? (long long)t->pmd_size_kb : -1, t->why);
    json_obj_end(j);
    json_key(j, "numa");
    json_obj_begin(j);
    jint(j, "nodes", p->numa.nodes, p->numa.why);
    jstr(j, "online", p->numa.online, p->numa.why);
    jint(j, "balancing", p->numa.balancing, p->numa.balancing_why);
    json_obj_end(j);
}

static void pmu_rdt(struct json *j, const struct corun_platform *p)
{
    const struct corun_platform_pmu *m = &p->pmu;
    const struct corun_platform_rdt *r = &p->rdt;

    json_key(j, "pmu");
    json_obj_begin(j);
    jtri(j, "available", m->available, m->reason);
    json_kstr(j, "reason", m->reason);
    jint(j, "perf_event_paranoid", m->paranoid == INT_MIN_PARANOID ? -1 : m->paranoid,
         "cannot read /proc/sys/kernel/perf_event_paranoid");
    jstr(j, "core_pmu", m->core_pmu, "no core PMU in /sys/bus/event_source/devices");
    json_kbool(j, "probed", m->probed);
    json_obj_end(j);

    json_key(j, "rdt");
    json_obj_begin(j);
    jtri(j, "allocation", r->allocation, r->why);
    jtri(j, "monitoring", r->monitoring, r->why);
    jtri(j, "memory_bandwidth", r->memory_bandwidth, r->why);
    jtri(j, "cat_l3", r->cat_l3, r->why);
    jtri(j, "cat_l2", r->cat_l2, r->why);
    jtri(j, "cdp_l3", r->cdp_l3, r->why);
    jtri(j, "llc_occupancy", r->llc_occupancy, r->why);
    jtri(j, "mbm_total", r->mbm_total, r->why);
    jtri(j, "mbm_local", r->mbm_local, r->why);
    jtri(j, "resctrl_supported", r->resctrl_supported, "cannot read /proc/filesystems");
    jtri(j, "resctrl_mounted", r->resctrl_mounted, r->why);
    jstr(j, "resctrl_mount", r->resctrl_mount, "not mounted");
    json_obj_end(j);
}

static void frequency(struct json *j, const struct corun_platform *p)
{
    const struct corun_platform_freq *f = &p->freq;

    json_key(j, "frequency");
    json_obj_begin(j);
    jstr(j, "driver", f->driver, f->why);
    jstr(j, "governor", f->governor, f->why);
    jstr(j, "pstate_status", f->pstate_status, "no intel_pstate or amd_pstate status file");
    jtri(j, "boost", f->boost, "no intel_pstate/no_turbo and no cpufreq/boost");
    if (f->boost != CORUN_TRI_UNKNOWN)
        json_kstr(j, "boost_source", f->boost_source);
    json_key(j, "cpus");
    json_arr_begin(j);
    for (unsigned i = 0; i < f->ncpus; i++) {
        const struct corun_platform_cpufreq *e = &f->cpus[i];

        json_obj_begin_inline(j);
        json_kuint(j, "cpu", e->cpu);
        json_kint_or_null(j, "min_khz", e->min_khz ? (long long)e->min_khz : -1);
        json_kint_or_null(j, "max_khz", e->max_khz ? (long long)e->max_khz : -1);
        json_kint_or_null(j, "cur_khz", e->cur_khz ? (long long)e->cur_khz : -1);
        json_kint_or_null(j, "base_khz", e->base_khz ? (long long)e->base_khz : -1);
        json_kint_or_null(j, "core_throttles", e->core_throttles);
        json_kint_or_null(j, "package_throttles", e->package_throttles);
        json_obj_end(j);
    }
    json_arr_end(j);
    if (!f->driver[0])
        json_kstr(j, "cpus_reason", f->why);
    if (f->throttle_why[0])
        json_kstr(j, "throttles_reason", f->throttle_why);
    json_key(j, "rapl");
    if (f->nrapl) {
        json_arr_begin(j);
        for (unsigned i = 0; i < f->nrapl; i++) {
            const struct corun_platform_rapl *z = &f->rapl[i];

            json_obj_begin_inline(j);
            json_kstr(j, "zone", z->zone);
            json_kstr(j, "name", z->name);
            jint(j, "energy_uj", z->energy_uj, "energy_uj unreadable (root only since Linux 5.10)");
            jint(j, "power_limit_uw", z->power_limit_uw, "no constraint_0_power_limit_uw");
            jtri(j, "enabled", z->enabled, "no enabled file");
            json_obj_end(j);
        }
        json_arr_end(j);
    } else {
        json_null(j);
        json_kstr(j, "rapl_reason", f->rapl_why);
    }
    json_obj_end(j);
}

static void msr(struct json *j, const struct corun_platform *p)
{
    const struct corun_platform_msr *m = &p->msr;

    json_key(j, "msr");
    json_obj_begin(j);
    jtri(j, "accessible", m->accessible, m->why);
    if (m->accessible == CORUN_TRI_NO)
        json_kstr(j, "reason", m->why);
    jint(j, "aperf", m->aperf, m->why[0] ? m->why : "APERF unreadable");
    jint(j, "mperf", m->mperf, m->why[0] ? m->why : "MPERF unreadable");
    jtri(j, "turbo_disabled", m->turbo_disabled,
         m->why[0] ? m->why : "the turbo-disable MSR is unreadable or unknown for this vendor");
    if (m->turbo_disabled != CORUN_TRI_UNKNOWN)
        json_kstr(j, "turbo_source", m->turbo_source);
    json_key(j, "turbo_ratio_limits");
    if (m->turbo_groups) {
        json_arr_begin(j);
        for (unsigned i = 0; i < m->turbo_groups; i++) {
            json_obj_begin_inline(j);
            json_kuint(j, "max_busy_cores", m->turbo_cores[i]);
            json_kuint(j, "ratio", m->turbo_ratio[i]);
            json_obj_end(j);
        }
        json_arr_end(j);
    } else {
        json_null(j);
        json_kstr(j, "turbo_ratio_limits_reason",
                  m->accessible != CORUN_TRI_YES
                      ? (m->why[0] ? m->why : "MSRs not readable")
                      : "MSR_TURBO_RATIO_LIMIT is Intel's, and did not read");
    }
    json_obj_end(j);
}

static void kernel(struct json *j, const struct corun_platform *p)
{
    const struct corun_platform_kernel *k = &p->kernel;
    const struct corun_platform_hypervisor *h = &p->hypervisor;

    json_key(j, "hypervisor");
    json_obj_begin(j);
    jtri(j, "present", h->present, h->why);
    jstr(j, "name", h->name, h->present == CORUN_TRI_NO ? "no hypervisor" : h->why);
    jstr(j, "vendor_id", h->vendor_id,
         h->present == CORUN_TRI_NO ? "no hypervisor" : "no CPUID leaf 0x40000000");
    jstr(j, "kernel_vendor_id", h->kernel_vendor_id, h->kernel_why);
    json_kstr(j, "reason", h->why);
    json_obj_end(j);

    json_key(j, "kernel");
    json_obj_begin(j);
    jstr(j, "release", k->release, k->why);
    jstr(j, "version", k->version, k->why);
    jstr(j, "cmdline", k->cmdline, k->why);
    json_kbool(j, "nopcid", k->nopcid);
    json_kbool(j, "noinvpcid", k->noinvpcid);
    json_kbool(j, "nosmt", k->nosmt);
    json_kbool(j, "nopat", k->nopat);
    json_kbool(j, "nopti", k->nopti);
    jtri_why(j, "pti", k->pti, k->pti_why);
    json_key(j, "vulnerabilities");
    if (k->nvulns) {
        json_obj_begin(j);
        for (unsigned i = 0; i < k->nvulns; i++)
            json_kstr(j, k->vulns[i].name, k->vulns[i].status);
        json_obj_end(j);
    } else {
        json_null(j);
        json_kstr(j, "vulnerabilities_reason", "no /sys/devices/system/cpu/vulnerabilities");
    }
    json_key(j, "params");
    json_obj_begin(j);
    for (unsigned i = 0; i < k->nparams; i++)
        json_kstr(j, k->params[i].name, k->params[i].value);
    json_obj_end(j);
    json_obj_end(j);

    json_key(j, "modules");
    json_arr_begin(j);
    for (unsigned i = 0; i < p->nmodules; i++) {
        const struct corun_platform_module *m = &p->modules[i];

        json_obj_begin_inline(j);
        json_kstr(j, "name", m->name);
        jstr(j, "version", m->version, "the module declares no MODULE_VERSION");
        jstr(j, "srcversion", m->srcversion, "built into the kernel: no srcversion");
        json_kbool(j, "builtin", m->builtin);
        json_obj_end(j);
    }
    json_arr_end(j);
    if (p->modules_why[0])
        json_kstr(j, "modules_reason", p->modules_why);
}

static void firmware(struct json *j, const struct corun_platform *p)
{
    const struct corun_platform_firmware *f = &p->firmware;
    const char *why = "not in DMI";

    json_key(j, "firmware");
    if (!f->present) {
        json_null(j);
        json_kstr(j, "firmware_reason", f->why);
        return;
    }
    json_obj_begin(j);
    jstr(j, "sys_vendor", f->sys_vendor, why);
    jstr(j, "product_name", f->product_name, why);
    jstr(j, "board_vendor", f->board_vendor, why);
    jstr(j, "board_name", f->board_name, why);
    jstr(j, "bios_vendor", f->bios_vendor, why);
    jstr(j, "bios_version", f->bios_version, why);
    jstr(j, "bios_date", f->bios_date, why);
    json_obj_end(j);
}

static void measured(struct json *j, const struct cli_platform_measure *m)
{
    json_key(j, "measure");
    json_obj_begin(j);
    json_kuint(j, "cpu", m->cpu);
    json_kstr(j, "method",
              "pipe ping-pong between two processes pinned to one CPU "
              "(lmbench lat_ctx), median of repetitions, pipe and touch "
              "overhead subtracted");
    json_key(j, "context_switch");
    json_arr_begin(j);
    for (unsigned i = 0; i < m->n; i++) {
        json_obj_begin_inline(j);
        json_kuint(j, "working_set_kb", m->ws_bytes[i] / 1024);
        if (m->err[i]) {
            json_knull(j, "ns_per_switch");
            json_kstr(j, "ns_per_switch_reason", corun_strerror(m->err[i]));
        } else {
            json_kdouble(j, "ns_per_switch", round(m->res[i].ns_per_switch));
            json_kdouble(j, "raw_ns_per_switch", round(m->res[i].raw_ns_per_switch));
            json_kdouble(j, "overhead_ns", round(m->res[i].overhead_ns));
            json_kdouble(j, "raw_min_ns", round(m->res[i].raw_min_ns));
            json_kdouble(j, "raw_max_ns", round(m->res[i].raw_max_ns));
            json_kuint(j, "repetitions", m->res[i].repetitions);
        }
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

void cli_platform_json(const struct corun_platform *p, const struct cli_platform_measure *m)
{
    struct json j;

    json_init(&j, stdout);
    json_obj_begin(&j);
    cpu(&j, p);
    jtri_why(&j, "smt", p->smt.enabled, p->smt.why);
    jtri(&j, "smt_present", p->smt.present, p->smt.why);
    jstr(&j, "smt_control", p->smt.control, "no /sys/devices/system/cpu/smt/control");
    jint(&j, "smt_threads_per_core",
         p->smt.threads_per_core ? (long long)p->smt.threads_per_core : -1,
         "no thread_siblings_list");
    feature(&j, "pcid", &p->pcid);
    feature(&j, "invpcid", &p->invpcid);
    feature(&j, "monitor_mwait", &p->monitor_mwait);
    feature(&j, "waitpkg", &p->waitpkg);
    feature(&j, "monitorx", &p->monitorx);
    jstr(&j, "wait_strategy", p->wait_strategy,
         "neither CPUID nor cpuinfo flags say whether WAITPKG or MONITORX exist");
    jint(&j, "umwait_max_time", p->umwait_max_time,
         "no /sys/devices/system/cpu/umwait_control (no WAITPKG, or a kernel before 5.3)");
    jtri(&j, "umwait_c02", p->umwait_c02,
         "no /sys/devices/system/cpu/umwait_control (no WAITPKG, or a kernel before 5.3)");
    jstr(&j, "idle_driver", p->idle_driver, "no cpuidle driver");
    feature(&j, "pat", &p->pat);
    feature(&j, "gbpages", &p->gbpages);
    memory(&j, p);
    pmu_rdt(&j, p);
    frequency(&j, p);
    msr(&j, p);
    kernel(&j, p);
    firmware(&j, p);
    if (m)
        measured(&j, m);
    json_obj_end(&j);
    json_end(&j);
}
