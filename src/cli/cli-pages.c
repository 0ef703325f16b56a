/*
 * cli-pages.c — `corun pages [-p PID] [--collapse] [--json]`: huge pages as
 * the system and a process have them. Without -p: the THP mode, defrag
 * policy, huge page sizes and hugetlb pools. With -p: how much of the
 * process's anonymous memory sits in huge pages, region by region; with
 * --collapse, its anonymous regions are first collapsed into huge pages
 * (process_madvise(MADV_COLLAPSE)) and each region says how that went;
 * --dry-run shows which regions would be tried, and why the others not.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "corun/thp.h"

static const char *const NAME = "pages";

/* Regions smaller than this, without huge pages, are summed, not listed. */
#define SMALL_KB 2048

static void format_kb(char *buf, size_t len, uint64_t kb)
{
    if (kb == UINT64_MAX)
        snprintf(buf, len, "?");
    else if (kb >= (1ull << 20))
        snprintf(buf, len, "%.1fG", (double)kb / (1 << 20));
    else if (kb >= 1024)
        snprintf(buf, len, "%.1fM", (double)kb / 1024);
    else
        snprintf(buf, len, "%" PRIu64 "K", kb);
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static bool listed(const struct corun_thp_region *r)
{
    return r->anon_kb >= SMALL_KB || r->anon_huge_kb || r->file_pmd_kb || r->shmem_pmd_kb ||
           r->hugetlb_kb;
}

static void print_system(const struct corun_thp_system *s)
{
    char buf[32];

    printf("THP mode        %s\n", corun_thp_mode_name(s->mode));
    printf("defrag          %s\n", s->defrag[0] ? s->defrag : "?");
    printf("shmem           %s\n", s->shmem_enabled[0] ? s->shmem_enabled : "?");
    format_kb(buf, sizeof(buf), s->pmd_size_bytes >> 10);
    printf("PMD huge page   %s\n", s->pmd_size_bytes ? buf : "?");
    if (s->nsizes) {
        printf("THP sizes      ");
        for (unsigned i = 0; i < s->nsizes; i++) {
            format_kb(buf, sizeof(buf), s->sizes[i].size_kb);
            printf(" %s:%s", buf, corun_thp_mode_name(s->sizes[i].mode));
        }
        printf("\n");
    }
    for (unsigned i = 0; i < s->npools; i++) {
        const struct corun_hugetlb_pool *p = &s->pools[i];

        const uint64_t v[4] = {p->total, p->free, p->reserved, p->surplus};
        char f[4][24];

        format_kb(buf, sizeof(buf), p->size_kb);
        for (int k = 0; k < 4; k++) {
            if (v[k] == UINT64_MAX)
                snprintf(f[k], sizeof(f[k]), "?");
            else
                snprintf(f[k], sizeof(f[k]), "%" PRIu64, v[k]);
        }
        printf("hugetlb %-7s %s pages, %s free, %s reserved, %s surplus\n", buf, f[0], f[1], f[2],
               f[3]);
    }
    if (s->anon_huge_kb != UINT64_MAX) {
        format_kb(buf, sizeof(buf), s->anon_huge_kb);
        printf("AnonHugePages   %s in use system-wide\n", buf);
    }
}

static void print_coverage(const struct corun_thp_coverage *c, const struct corun_thp_system *s)
{
    char a[16], h[16], sz[16];
    unsigned hidden = 0;

    format_kb(a, sizeof(a), c->anon_kb);
    format_kb(h, sizeof(h), c->anon_huge_kb);
    printf("process %d: %s anonymous, %s in huge pages (%.1f%%); THP mode %s%s\n", (int)c->pid, a,
           h, pct(c->anon_huge_kb, c->anon_kb), corun_thp_mode_name(s->mode),
           c->thp_disabled == 1 ? "; THP disabled by prctl" : "");
    printf("%-12s %-12s %7s %7s %7s %6s %-8s %-6s %s\n", "start", "end", "size", "anon", "huge",
           "cover", "eligible", "advice", "name");
    for (unsigned i = 0; i < c->nregions; i++) {
        const struct corun_thp_region *r = &c->regions[i];

        if (!listed(r)) {
            hidden++;
            continue;
        }
        format_kb(sz, sizeof(sz), (r->end - r->start) >> 10);
        format_kb(a, sizeof(a), r->anon_kb);
        format_kb(h, sizeof(h), r->anon_huge_kb + r->file_pmd_kb + r->shmem_pmd_kb);
        printf("%-12" PRIx64 " %-12" PRIx64 " %7s %7s %7s %5.1f%% %-8s %-6s %s\n", r->start, r->end,
               sz, a, h, pct(r->anon_huge_kb, r->anon_kb),
               r->thp_eligible < 0 ? "?"
               : r->thp_eligible   ? "yes"
                                   : "no",
               r->refused   ? "nohuge"
               : r->advised ? "huge"
                            : "-",
               r->name);
    }
    if (hidden)
        printf("(%u smaller regions without huge pages not shown)\n", hidden);
}

static void print_collapse(const struct corun_thp_collapse_result *res, bool dry_run)
{
    char b[16], a[16];

    unsigned planned = 0;

    for (unsigned i = 0; i < res->nregions; i++)
        planned += res->regions[i].status == CORUN_THP_COLLAPSE_PLANNED;
    format_kb(b, sizeof(b), res->anon_huge_kb_before);
    format_kb(a, sizeof(a), res->anon_huge_kb_after);
    if (dry_run)
        printf("dry run of %d: %u regions would be collapsed, %u skipped\n", (int)res->pid,
               planned, res->skipped);
    else
        printf("collapse of %d: %u collapsed, %u partly, %u failed, %u skipped; huge pages %s -> "
               "%s\n",
               (int)res->pid, res->collapsed, res->partial, res->failed, res->skipped, b, a);
    for (unsigned i = 0; i < res->nregions; i++) {
        const struct corun_thp_collapse_region *r = &res->regions[i];

        format_kb(b, sizeof(b), r->anon_huge_kb_before);
        format_kb(a, sizeof(a), r->anon_huge_kb_after);
        printf("  %-12" PRIx64 " %-12" PRIx64 " %7s -> %-7s %-9s %u/%u %s\n", r->start, r->end, b,
               a, corun_thp_collapse_status_name(r->status), r->ranges_collapsed, r->ranges,
               r->reason ? r->reason : "");
    }
}

static void json_system(struct json *j, const struct corun_thp_system *s)
{
    json_kstr(j, "thp_mode", corun_thp_mode_name(s->mode));
    json_kstr(j, "defrag", s->defrag[0] ? s->defrag : NULL);
    json_kstr(j, "shmem_enabled", s->shmem_enabled[0] ? s->shmem_enabled : NULL);
    json_kint_or_null(j, "pmd_size_bytes", s->pmd_size_bytes ? (long long)s->pmd_size_bytes : -1);
    json_key(j, "thp_sizes");
    json_arr_begin(j);
    for (unsigned i = 0; i < s->nsizes; i++) {
        json_obj_begin_inline(j);
        json_kuint(j, "size_kb", s->sizes[i].size_kb);
        json_kstr(j, "mode", corun_thp_mode_name(s->sizes[i].mode));
        json_obj_end(j);
    }
    json_arr_end(j);
    json_key(j, "hugetlb_pools");
    json_arr_begin(j);
    for (unsigned i = 0; i < s->npools; i++) {
        const struct corun_hugetlb_pool *p = &s->pools[i];

        json_obj_begin_inline(j);
        json_kuint(j, "size_kb", p->size_kb);
        /* Unreadable counts are null, never 0. */
        json_kint_or_null(j, "total", p->total == UINT64_MAX ? -1 : (long long)p->total);
        json_kint_or_null(j, "free", p->free == UINT64_MAX ? -1 : (long long)p->free);
        json_kint_or_null(j, "reserved", p->reserved == UINT64_MAX ? -1 : (long long)p->reserved);
        json_kint_or_null(j, "surplus", p->surplus == UINT64_MAX ? -1 : (long long)p->surplus);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_kint_or_null(j, "system_anon_huge_kb",
                      s->anon_huge_kb == UINT64_MAX ? -1 : (long long)s->anon_huge_kb);
}

static void json_regions(struct json *j, const struct corun_thp_coverage *c)
{
    json_key(j, "regions");
    json_arr_begin(j);
    for (unsigned i = 0; c && i < c->nregions; i++) {
        const struct corun_thp_region *r = &c->regions[i];
        char addr[24];

        if (!listed(r))
            continue;
        json_obj_begin_inline(j);
        snprintf(addr, sizeof(addr), "0x%" PRIx64, r->start);
        json_kstr(j, "start", addr);
        snprintf(addr, sizeof(addr), "0x%" PRIx64, r->end);
        json_kstr(j, "end", addr);
        json_kuint(j, "size_kb", (r->end - r->start) >> 10);
        json_kuint(j, "anon_kb", r->anon_kb);
        json_kuint(j, "anon_huge_kb", r->anon_huge_kb);
        json_kuint(j, "file_pmd_kb", r->file_pmd_kb);
        json_kuint(j, "shmem_pmd_kb", r->shmem_pmd_kb);
        json_kuint(j, "hugetlb_kb", r->hugetlb_kb);
        if (r->thp_eligible < 0)
            json_knull(j, "thp_eligible");
        else
            json_kbool(j, "thp_eligible", r->thp_eligible);
        json_kstr(j, "advice", r->refused ? "nohugepage" : r->advised ? "hugepage" : NULL);
        json_kstr(j, "name", r->name);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static const char *errno_name(int err)
{
    switch (-err) {
    case EPERM:
        return "EPERM";
    case EINVAL:
        return "EINVAL";
    case EAGAIN:
        return "EAGAIN";
    case ENOMEM:
        return "ENOMEM";
    case ESRCH:
        return "ESRCH";
    case ENOTSUP:
        return "ENOTSUP";
    case EFAULT:
        return "EFAULT";
    case ENOSYS:
        return "ENOSYS";
    }
    return err ? "error" : NULL;
}

static void json_collapse(struct json *j, const struct corun_thp_collapse_result *res, int err,
                          const char *why)
{
    char addr[24];

    json_key(j, "collapse");
    json_obj_begin(j);
    if (!res) {
        json_kstr(j, "error", errno_name(err));
        json_kstr(j, "reason", why);
        json_obj_end(j);
        return;
    }
    json_kuint(j, "collapsed", res->collapsed);
    json_kuint(j, "partial", res->partial);
    json_kuint(j, "failed", res->failed);
    json_kuint(j, "skipped", res->skipped);
    json_kuint(j, "anon_huge_kb_before", res->anon_huge_kb_before);
    json_kint_or_null(j, "anon_huge_kb_after",
                      res->anon_huge_kb_after == UINT64_MAX ? -1
                                                            : (long long)res->anon_huge_kb_after);
    json_key(j, "regions");
    json_arr_begin(j);
    for (unsigned i = 0; i < res->nregions; i++) {
        const struct corun_thp_collapse_region *r = &res->regions[i];

        json_obj_begin_inline(j);
        snprintf(addr, sizeof(addr), "0x%" PRIx64, r->start);
        json_kstr(j, "start", addr);
        snprintf(addr, sizeof(addr), "0x%" PRIx64, r->end);
        json_kstr(j, "end", addr);
        json_kstr(j, "status", corun_thp_collapse_status_name(r->status));
        json_kuint(j, "ranges", r->ranges);
        json_kuint(j, "ranges_collapsed", r->ranges_collapsed);
        json_kstr(j, "error", errno_name(r->error));
        json_kstr(j, "reason", r->reason);
        json_kuint(j, "anon_huge_kb_before", r->anon_huge_kb_before);
        json_kint_or_null(j, "anon_huge_kb_after",
                          r->anon_huge_kb_after == UINT64_MAX ? -1
                                                              : (long long)r->anon_huge_kb_after);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

static int cmd_pages(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"collapse", no_argument, NULL, 'c'},
        {"dry-run", no_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct corun_thp_collapse_result *res = NULL;
    struct corun_thp_coverage *cov = NULL;
    struct corun_thp_system sys;
    struct corun_thp_collapse_opts opts = {0};
    bool json = false, collapse = false;
    unsigned long pid = 0;
    int c, err, cerr = 0, rc = CLI_EXIT_OK;
    char why[256] = "";

    while ((c = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!cli_parse_uint(optarg, &pid) || pid == 0 || pid > INT32_MAX)
                return cli_usage_error(NAME, "-p: '%s' is not a process id", optarg);
            break;
        case 'c':
            collapse = true;
            break;
        case 'n':
            opts.dry_run = true;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            cli_usage(stdout, NAME);
            return CLI_EXIT_OK;
        default:
            return cli_usage_error(NAME, "unknown option");
        }
    }
    if (optind < argc)
        return cli_usage_error(NAME, "unexpected argument '%s'", argv[optind]);
    if (collapse && !pid)
        return cli_usage_error(NAME, "--collapse needs -p PID");
    if (opts.dry_run && !collapse)
        return cli_usage_error(NAME, "--dry-run goes with --collapse");
    err = corun_thp_system_read(NULL, &sys);
    if (err) {
        cli_error(NAME, "cannot read the THP settings: %s", corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    if (collapse) {
        cerr = corun_thp_collapse(NULL, (pid_t)pid, &opts, &res, why, sizeof(why));
        if (cerr || (!res->collapsed && !res->partial && res->failed))
            rc = CLI_EXIT_FAIL;
    }
    if (pid) {
        err = corun_thp_coverage_read(NULL, (pid_t)pid, CORUN_THP_REGIONS, &cov);
        if (err) {
            cli_error(NAME, "process %lu: %s", pid,
                      err == -ESRCH ? "no such process" : corun_strerror(err));
            corun_thp_collapse_free(res);
            return CLI_EXIT_FAIL;
        }
    }
    if (json) {
        struct json j;

        json_init(&j, stdout);
        json_obj_begin(&j);
        if (cov) {
            json_kint(&j, "pid", (long long)pid);
            json_kuint(&j, "anon_kb", cov->anon_kb);
            json_kuint(&j, "anon_huge_kb", cov->anon_huge_kb);
            json_kdouble(&j, "coverage_pct", pct(cov->anon_huge_kb, cov->anon_kb));
            json_kuint(&j, "rss_kb", cov->rss_kb);
            json_kuint(&j, "file_pmd_kb", cov->file_pmd_kb);
            json_kuint(&j, "shmem_pmd_kb", cov->shmem_pmd_kb);
            json_kuint(&j, "hugetlb_kb", cov->hugetlb_kb);
            json_kint_or_null(&j, "thp_disabled", cov->thp_disabled);
        } else {
            json_knull(&j, "pid");
        }
        json_system(&j, &sys);
        json_regions(&j, cov);
        if (collapse)
            json_collapse(&j, res, cerr, why);
        json_obj_end(&j);
        json_end(&j);
    } else {
        if (cov)
            print_coverage(cov, &sys);
        else
            print_system(&sys);
        if (res)
            print_collapse(res, opts.dry_run);
    }
    if (cerr)
        cli_error(NAME, "collapse of %lu: %s", pid, why);
    corun_thp_coverage_free(cov);
    corun_thp_collapse_free(res);
    return rc;
}

CLI_COMMAND(pages, cmd_pages, "huge page coverage of the system or a process; collapse",
            "corun pages [--json]\n"
            "corun pages -p PID [--collapse [--dry-run]] [--json]")
