/*
 * cli-platform.c — `corun platform`: what this processor and kernel offer
 * and whether Linux uses it, grouped by topic with one verdict line per
 * feature, or as JSON (platform-json.c). --measure adds the cost of a context
 * switch with and without a working set; --root and --cpuid replay a
 * recorded /proc and /sys tree and CPUID dump; --dump-cpuid writes this
 * processor's CPUID leaves in that dump format.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/platform-out.h"
#include "common/internal.h"

#define yn corun_platform_tri_name

static void size_name(char *buf, size_t len, uint64_t kb)
{
    if (kb >= 1024 * 1024 && kb % (1024 * 1024) == 0)
        snprintf(buf, len, "%llu GiB", (unsigned long long)(kb >> 20));
    else if (kb >= 1024 && kb % 1024 == 0)
        snprintf(buf, len, "%llu MiB", (unsigned long long)(kb >> 10));
    else
        snprintf(buf, len, "%llu KiB", (unsigned long long)kb);
}

/* "PCID: yes, and Linux uses it — why" */
static void feature_line(const char *label, const struct corun_platform_feature *f)
{
    printf("  %-16s ", label);
    if (f->cpu == CORUN_TRI_NO && f->kernel != CORUN_TRI_YES)
        printf("no");
    else if (f->cpu == CORUN_TRI_YES && f->kernel == CORUN_TRI_YES)
        printf("yes, enabled in Linux");
    else if (f->cpu == CORUN_TRI_YES && f->kernel == CORUN_TRI_NO)
        printf("yes, but Linux does not use it");
    else
        printf("processor %s, Linux %s", yn(f->cpu), yn(f->kernel));
    printf(" — %s\n", f->why);
}

static void print_cpu(const struct corun_platform *p)
{
    const struct corun_platform_cpu *c = &p->cpu;
    const struct corun_platform_smt *s = &p->smt;

    printf("processor\n");
    if (!c->vendor[0] || c->family < 0) {
        printf("  %-16s unknown — %s\n", "identity", c->why);
    } else {
        printf("  %-16s %s (%s family %d model %d stepping %d", "identity",
               c->model_name[0] ? c->model_name : "unknown model", c->vendor, c->family, c->model,
               c->stepping);
        if (c->microcode >= 0)
            printf(", microcode 0x%llx", (unsigned long long)c->microcode);
        printf("), %u processors\n", c->nprocessors);
        if (c->why[0])
            printf("  %-16s %s\n", "", c->why);
    }
    printf("  %-16s %s", "SMT",
           s->enabled == CORUN_TRI_YES  ? "on"
           : s->enabled == CORUN_TRI_NO ? "off"
                                        : "unknown");
    if (s->threads_per_core)
        printf(", %u thread%s per core", s->threads_per_core, s->threads_per_core == 1 ? "" : "s");
    printf(" — %s\n", s->why);
    printf("  %-16s %s", "hybrid cores", yn(c->hybrid));
    for (unsigned i = 0; i < c->ntypes; i++)
        printf("%s%s %s", i ? ", " : " — ", c->types[i].name, c->types[i].cpus);
    printf("\n");
    printf("  %-16s %s", "hypervisor",
           p->hypervisor.present == CORUN_TRI_NO ? "none (bare metal)"
           : p->hypervisor.name[0]               ? p->hypervisor.name
                                                 : yn(p->hypervisor.present));
    printf(" — %s\n", p->hypervisor.why);
}

static void print_tlb_wait(const struct corun_platform *p)
{
    printf("TLB (process-aware: no flush on a switch between address spaces)\n");
    feature_line("PCID", &p->pcid);
    feature_line("INVPCID", &p->invpcid);
    printf("  %-16s %s — %s%s\n", "PTI",
           p->kernel.pti == CORUN_TRI_YES  ? "on"
           : p->kernel.pti == CORUN_TRI_NO ? "off"
                                           : "unknown",
           p->kernel.pti_why,
           p->kernel.pti == CORUN_TRI_YES ? "; every kernel entry switches page tables, PCID keeps "
                                            "the TLB across them"
                                          : "");
    printf("waiting\n");
    feature_line("MONITOR/MWAIT", &p->monitor_mwait);
    feature_line("WAITPKG", &p->waitpkg);
    feature_line("MONITORX", &p->monitorx);
    if (!p->wait_strategy)
        printf("  %-16s unknown — nothing says whether WAITPKG or MONITORX exist\n",
               "wait strategy");
    else
        printf("  %-16s %s, then futex — %s\n", "wait strategy", p->wait_strategy,
               !strcmp(p->wait_strategy, "umwait") ? "UMONITOR/UMWAIT (WAITPKG)"
               : !strcmp(p->wait_strategy, "mwaitx")
                   ? "MONITORX/MWAITX"
                   : "neither WAITPKG nor MONITORX: a PAUSE spin");
    if (p->umwait_max_time >= 0)
        printf("  %-16s longest wait %lld TSC cycles, C0.2 %s\n", "umwait_control",
               (long long)p->umwait_max_time,
               p->umwait_c02 == CORUN_TRI_YES ? "allowed" : "not allowed");
    printf("  %-16s %s\n", "idle driver", p->idle_driver[0] ? p->idle_driver : "none");
}

static void print_numa(const struct corun_platform_numa *n)
{
    static const char *const modes[] = {"off", "on", "memory tiering only", "on, with tiering"};

    if (n->nodes < 0)
        printf("  %-16s unknown — %s\n", "NUMA", n->why);
    else if (n->nodes == 1)
        printf("  %-16s 1 node (%s) — memory has nowhere to move: corun moves CPUs only\n", "NUMA",
               n->online);
    else
        printf("  %-16s %d nodes (%s) — a process corun moves to another node takes its memory "
               "along (migrate_pages; --no-mem-follow, mem_follow = no)\n",
               "NUMA", n->nodes, n->online);
    if (n->balancing < 0)
        printf("  %-16s unknown — %s\n", "NUMA balancing", n->balancing_why);
    else
        printf("  %-16s %s (kernel.numa_balancing %d)%s\n", "NUMA balancing",
               n->balancing < 4 ? modes[n->balancing] : "on", n->balancing,
               n->balancing && n->nodes > 1 ? ": the kernel also moves pages toward the CPUs "
                                              "that touch them"
                                            : "");
}

static void print_memory(const struct corun_platform *p)
{
    const struct corun_platform_thp *t = &p->thp;
    char sizes[128] = "", one[32];

    printf("memory\n");
    feature_line("PAT", &p->pat);
    for (unsigned i = 0; i < p->nhugepage_sizes; i++) {
        size_name(one, sizeof(one), p->hugepages[i].size_kb);
        snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%s",
                 i == 0                        ? ""
                 : i + 1 == p->nhugepage_sizes ? " and "
                                               : ", ",
                 one);
    }
    printf("  %-16s %s, THP %s — ", "huge pages", p->nhugepage_sizes ? sizes : "none",
           t->mode[0] ? t->mode : "unknown");
    if (!strcmp(t->mode, "always"))
        printf("every anonymous mapping may get them; corun run --thp adds nothing\n");
    else if (!strcmp(t->mode, "madvise"))
        printf("corun run --thp will use them\n");
    else if (!strcmp(t->mode, "never"))
        printf("THP is off: corun run --thp cannot use them (hugetlbfs only)\n");
    else
        printf("%s\n", t->why);
    if (!p->nhugepage_sizes)
        printf("  %-16s %s\n", "", p->hugepages_why);
    for (unsigned i = 0; i < p->nhugepage_sizes; i++) {
        const struct corun_platform_hugetlb_pool *h = &p->hugepages[i];

        size_name(one, sizeof(one), h->size_kb);
        printf("  %-16s %s: %lld pages, %lld free\n", i ? "" : "hugetlb pools", one,
               (long long)h->nr, (long long)h->free);
    }
    if (t->mode[0])
        printf("  %-16s defrag %s, shmem %s, PMD size %llu KiB\n", "THP",
               t->defrag[0] ? t->defrag : "?", t->shmem[0] ? t->shmem : "?",
               (unsigned long long)t->pmd_size_kb);
    print_numa(&p->numa);
}

static void print_counters(const struct corun_platform *p)
{
    const struct corun_platform_pmu *m = &p->pmu;
    const struct corun_platform_rdt *r = &p->rdt;

    printf("counters and resource control\n");
    printf("  %-16s %s — %s", "PMU",
           m->available == CORUN_TRI_YES  ? "available"
           : m->available == CORUN_TRI_NO ? "unavailable"
                                          : "unknown",
           m->reason);
    if (m->paranoid != INT_MIN_PARANOID && m->probed)
        printf(" (perf_event_paranoid %d)", m->paranoid);
    printf("\n");
    printf("  %-16s allocation %s, monitoring %s, memory bandwidth %s", "RDT", yn(r->allocation),
           yn(r->monitoring), yn(r->memory_bandwidth));
    if (r->allocation == CORUN_TRI_YES)
        printf(" (L3 CAT %s, L2 CAT %s, CDP %s)", yn(r->cat_l3), yn(r->cat_l2), yn(r->cdp_l3));
    printf("\n  %-16s %s\n", "resctrl",
           r->resctrl_mounted == CORUN_TRI_YES    ? r->resctrl_mount
           : r->resctrl_supported == CORUN_TRI_NO ? "not in this kernel"
           : r->resctrl_mounted == CORUN_TRI_NO   ? "supported, not mounted"
                                                  : "unknown");
}

static void print_frequency(const struct corun_platform *p)
{
    const struct corun_platform_freq *f = &p->freq;
    const struct corun_platform_msr *m = &p->msr;
    uint32_t lo = 0, hi = 0, cur_lo = 0, cur_hi = 0;
    long long thr = -1;

    printf("frequency and power\n");
    if (!f->driver[0]) {
        printf("  %-16s none — %s\n", "cpufreq", f->why);
    } else {
        printf("  %-16s driver %s, governor %s%s%s\n", "cpufreq", f->driver,
               f->governor[0] ? f->governor : "?", f->pstate_status[0] ? ", mode " : "",
               f->pstate_status);
        for (unsigned i = 0; i < f->ncpus; i++) {
            const struct corun_platform_cpufreq *e = &f->cpus[i];

            if (e->min_khz && (!lo || e->min_khz < lo))
                lo = e->min_khz;
            if (e->max_khz > hi)
                hi = e->max_khz;
            if (e->cur_khz && (!cur_lo || e->cur_khz < cur_lo))
                cur_lo = e->cur_khz;
            if (e->cur_khz > cur_hi)
                cur_hi = e->cur_khz;
        }
        printf("  %-16s %u-%u MHz, now %u-%u MHz across %u CPUs\n", "range", lo / 1000, hi / 1000,
               cur_lo / 1000, cur_hi / 1000, f->ncpus);
    }
    printf("  %-16s %s%s%s%s\n", "boost", yn(f->boost), f->boost_source[0] ? " (" : "",
           f->boost_source, f->boost_source[0] ? ")" : "");
    for (unsigned i = 0; i < f->ncpus; i++)
        if (f->cpus[i].core_throttles >= 0)
            thr = (thr < 0 ? 0 : thr) + f->cpus[i].core_throttles;
    if (thr >= 0)
        printf("  %-16s %lld core throttle events since boot, all CPUs\n", "throttling", thr);
    else
        printf("  %-16s unknown — %s\n", "throttling", f->throttle_why);
    if (f->nrapl) {
        printf("  %-16s", "RAPL");
        for (unsigned i = 0; i < f->nrapl; i++)
            printf("%s %s", i ? "," : "", f->rapl[i].name[0] ? f->rapl[i].name : f->rapl[i].zone);
        printf("\n");
    } else {
        printf("  %-16s none — %s\n", "RAPL", f->rapl_why);
    }
    printf("  %-16s %s", "MSR", m->accessible == CORUN_TRI_YES ? "readable" : yn(m->accessible));
    if (m->accessible == CORUN_TRI_YES)
        printf(", APERF %lld MPERF %lld, turbo disabled by MSR: %s", (long long)m->aperf,
               (long long)m->mperf, yn(m->turbo_disabled));
    else
        printf(" — %s", m->why);
    printf("\n");
    if (m->turbo_groups) {
        printf("  %-16s", "turbo table");
        for (unsigned i = 0; i < m->turbo_groups; i++)
            printf("%s %u-%u cores %.1f GHz", i ? "," : "", i ? m->turbo_cores[i - 1] + 1 : 1,
                   m->turbo_cores[i], m->turbo_ratio[i] / 10.0);
        printf(" (MSR_TURBO_RATIO_LIMIT; corun batch hands it to the policy)\n");
    }
}

static void print_kernel(const struct corun_platform *p)
{
    const struct corun_platform_kernel *k = &p->kernel;
    const struct corun_platform_firmware *fw = &p->firmware;

    printf("kernel\n");
    printf("  %-16s %s\n", "release", k->release[0] ? k->release : k->why);
    printf("  %-16s", "parameters");
    if (!k->nparams)
        printf(" none that matter to corun");
    for (unsigned i = 0; i < k->nparams; i++)
        printf(" %s%s%s", k->params[i].name, k->params[i].value[0] ? "=" : "", k->params[i].value);
    printf("\n  %-16s %u with a version", "modules", p->nmodules);
    /* A desktop loads a hundred modules or more: the line names the first
     * few, --json lists them all. */
    for (unsigned i = 0; i < p->nmodules && i < 12; i++)
        printf("%s%s %s%s", i ? ", " : ": ", p->modules[i].name,
               p->modules[i].version[0] ? "" : "srcversion ",
               p->modules[i].version[0] ? p->modules[i].version : p->modules[i].srcversion);
    if (p->nmodules > 12)
        printf(" and %u more (--json lists them)", p->nmodules - 12);
    if (!p->nmodules)
        printf(" — %s", p->modules_why);
    printf("\nfirmware\n");
    if (!fw->present) {
        printf("  %-16s unknown — %s\n", "board", fw->why);
        return;
    }
    printf("  %-16s %s %s (board %s %s)\n", "system", fw->sys_vendor, fw->product_name,
           fw->board_vendor, fw->board_name);
    printf("  %-16s %s %s, %s\n", "BIOS", fw->bios_vendor, fw->bios_version, fw->bios_date);
}

static void print_measure(const struct cli_platform_measure *m)
{
    printf("context switch (two processes on CPU %u, pipe ping-pong, median)\n", m->cpu);
    for (unsigned i = 0; i < m->n; i++) {
        char ws[32];

        size_name(ws, sizeof(ws), m->ws_bytes[i] / 1024);
        printf("  %-16s ", m->ws_bytes[i] ? ws : "no working set");
        if (m->err[i])
            printf("unknown — %s\n", corun_strerror(m->err[i]));
        else
            printf("%.0f ns per switch (%.0f ns with %.0f ns of pipe and touch, %.0f-%.0f "
                   "over %u runs)%s\n",
                   m->res[i].ns_per_switch, m->res[i].raw_ns_per_switch, m->res[i].overhead_ns,
                   m->res[i].raw_min_ns, m->res[i].raw_max_ns, m->res[i].repetitions,
                   m->res[i].ns_per_switch <= 0 ? " — below this machine's noise" : "");
    }
}

static void print_human(const struct corun_platform *p, const struct cli_platform_measure *m)
{
    print_cpu(p);
    print_tlb_wait(p);
    print_memory(p);
    print_counters(p);
    print_frequency(p);
    print_kernel(p);
    if (m)
        print_measure(m);
}

/* Runs the context-switch measurement on the first CPU we may use. */
static int measure(struct cli_platform_measure *m)
{
    static const size_t sizes[] = {0, 64 << 10, 1 << 20};
    static const unsigned rounds[] = {4000, 2000, 1000};
    cpu_set_t set;

    memset(m, 0, sizeof(*m));
    if (sched_getaffinity(0, sizeof(set), &set))
        return -errno;
    while (m->cpu < CPU_SETSIZE && !CPU_ISSET(m->cpu, &set))
        m->cpu++;
    for (unsigned i = 0; i < 3; i++) {
        struct corun_platform_ctxsw_opts o = {
            .cpu = m->cpu, .working_set_bytes = sizes[i], .round_trips = rounds[i]};

        m->ws_bytes[i] = sizes[i];
        m->err[i] = corun_platform_measure_ctxsw(&o, &m->res[i]);
        m->n++;
    }
    return 0;
}

static int dump_cpuid(void)
{
    const uint64_t *l = corun_platform_cpuid_leaves();

    printf("# CPUID leaves read by corun platform: LEAF SUBLEAF: EAX EBX ECX EDX\n");
    for (; *l != ~(uint64_t)0; l++) {
        uint32_t r[4];

        if (corun_platform_cpuid_native(NULL, (uint32_t)(*l >> 32), (uint32_t)*l, r))
            printf("%08x %x: %08x %08x %08x %08x\n", (uint32_t)(*l >> 32), (uint32_t)*l, r[0], r[1],
                   r[2], r[3]);
    }
    return CLI_EXIT_OK;
}

/* Loads a CPUID dump for --cpuid; prints "FILE:LINE: reason" on a bad one. */
static int load_dump(const char *path, struct corun_platform_cpuid_dump **out)
{
    char *text = NULL;
    unsigned line = 0;
    /* corun__read_alloc() reads below a directory: "/" for an absolute
     * path, the working directory for a relative one. */
    int fd = path[0] == '/' ? corun__root_open("/") : AT_FDCWD, err;

    err = fd < 0 && fd != AT_FDCWD ? fd : corun__read_alloc(fd, path, &text, NULL);
    if (fd >= 0)
        close(fd);
    if (err) {
        fprintf(stderr, "%s: %s\n", path, corun_strerror(err));
        return CLI_EXIT_USAGE;
    }
    err = corun_platform_cpuid_parse(text, out, &line);
    free(text);
    if (err == -EINVAL) {
        fprintf(stderr, "%s:%u: not \"LEAF SUBLEAF: EAX EBX ECX EDX\" in hex\n", path, line);
        return CLI_EXIT_USAGE;
    }
    if (err) {
        cli_error("platform", "%s", corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int cmd_platform(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"measure", no_argument, NULL, 'm'},
        {"root", required_argument, NULL, 'r'},
        {"cpuid", required_argument, NULL, 'c'},
        {"dump-cpuid", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    struct corun_platform_opts opts = {.probe_pmu = true, .read_msr = true};
    struct cli_platform_measure m, *mp = NULL;
    struct corun_platform_cpuid_dump *dump = NULL;
    const char *cpuid_path = NULL;
    struct corun_platform *p;
    bool as_json = false, do_measure = false;
    int opt, err, rc = CLI_EXIT_OK;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "jmr:c:dh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'j':
            as_json = true;
            break;
        case 'm':
            do_measure = true;
            break;
        case 'r':
            opts.root = optarg;
            break;
        case 'c':
            cpuid_path = optarg;
            break;
        case 'd':
            return dump_cpuid();
        case 'h':
            cli_usage(stdout, "platform");
            return CLI_EXIT_OK;
        default:
            cli_usage(stderr, "platform");
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage_error("platform", "unexpected argument '%s'", argv[optind]);
    if (opts.root) {
        /* A recorded tree: this machine's PMU and MSRs would answer for it. */
        opts.probe_pmu = opts.read_msr = false;
        if (do_measure)
            return cli_usage_error("platform", "--measure measures this machine, not --root");
    }
    if (cpuid_path) {
        if ((rc = load_dump(cpuid_path, &dump)))
            return rc;
        opts.cpuid = corun_platform_cpuid_lookup;
        opts.cpuid_user = dump;
    }
    err = corun_platform_probe(&opts, &p);
    if (err) {
        if (opts.root && err != -ENOMEM) {
            fprintf(stderr, "%s: %s\n", opts.root, corun_strerror(err));
            rc = CLI_EXIT_USAGE;
        } else {
            cli_error("platform", "%s", corun_strerror(err));
            rc = CLI_EXIT_FAIL;
        }
        goto out_free_dump;
    }
    if (do_measure) {
        if ((err = measure(&m)))
            cli_error("platform", "--measure: %s", corun_strerror(err));
        else
            mp = &m;
    }
    if (as_json)
        cli_platform_json(p, mp);
    else
        print_human(p, mp);
    corun_platform_free(p);
out_free_dump:
    corun_platform_cpuid_free(dump);
    return rc;
}

CLI_COMMAND(platform, cmd_platform,
            "what this processor and kernel offer, and whether Linux uses it",
            "corun platform [--json] [--measure]\n"
            "corun platform --root DIR [--cpuid FILE] [--json]   (replay a recorded tree)\n"
            "corun platform --dump-cpuid")
