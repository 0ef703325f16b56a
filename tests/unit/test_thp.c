/*
 * test_thp.c — the thp box: the system's settings and a process's coverage
 * replayed from recorded trees (tests/fixtures/thp/), the collapse plan on a
 * fixture, and collapse of a live child process, including its error paths
 * with EPERM, EINVAL, EAGAIN, ESRCH and ENOSYS injected through the syscall
 * seam. The child checks its own memory afterwards: collapse must not change
 * a byte of it.
 */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sys.h"
#include "corun/thp.h"
#include "thp/thp-internal.h"

#define MIB  (1ull << 20)
#define HUGE (2 * MIB)

static const char *root_of(const char *name)
{
    static char buf[1024];

    snprintf(buf, sizeof(buf), "%s", fixture(name));
    return buf;
}

/* ---- system settings --------------------------------------------------- */

static void test_system_live_fixture(void **state)
{
    struct corun_thp_system s;

    assert_int_equal(corun_thp_system_read(root_of("thp/live-6.18"), &s), 0);
    assert_int_equal(s.mode, CORUN_THP_MADVISE);
    assert_string_equal(s.defrag, "madvise");
    assert_string_equal(s.shmem_enabled, "never");
    assert_int_equal(s.pmd_size_bytes, 2097152);
    /* 16 KiB .. 2 MiB; 8 KiB has only shmem_enabled and is not listed. */
    assert_int_equal(s.nsizes, 8);
    assert_int_equal(s.sizes[0].size_kb, 16);
    assert_int_equal(s.sizes[0].mode, CORUN_THP_NEVER);
    assert_int_equal(s.sizes[7].size_kb, 2048);
    assert_int_equal(s.sizes[7].mode, CORUN_THP_INHERIT);
    assert_int_equal(s.npools, 2);
    assert_int_equal(s.pools[0].size_kb, 2048);
    assert_int_equal(s.pools[1].size_kb, 1048576);
    assert_int_equal(s.anon_huge_kb, 0);
}

static void test_system_old_and_absent(void **state)
{
    struct corun_thp_system s;

    assert_int_equal(corun_thp_system_read(root_of("thp/old-4.9"), &s), 0);
    assert_int_equal(s.mode, CORUN_THP_ALWAYS);
    assert_string_equal(s.defrag, "madvise");
    assert_int_equal(s.nsizes, 0);
    assert_int_equal(s.npools, 1);
    assert_int_equal(s.pools[0].total, 512);
    assert_int_equal(s.pools[0].free, 100);
    assert_int_equal(s.pools[0].reserved, 3);
    assert_int_equal(s.anon_huge_kb, UINT64_MAX); /* no meminfo recorded */

    assert_int_equal(corun_thp_system_read(root_of("thp/never-6.1"), &s), 0);
    assert_int_equal(s.mode, CORUN_THP_NEVER);
    assert_string_equal(corun_thp_mode_name(s.mode), "never");

    assert_int_equal(corun_thp_system_read(root_of("thp/nothp"), &s), 0);
    assert_int_equal(s.mode, CORUN_THP_ABSENT);
    assert_int_equal(s.pmd_size_bytes, 0);

    assert_int_equal(corun_thp_system_read("/nonexistent/root", &s), -ENOENT);

    /* A pool whose counters cannot be read says so: unknown, not 0 pages. */
    assert_int_equal(corun_thp_system_read(root_of("thp/partial-pool"), &s), 0);
    assert_int_equal(s.npools, 1);
    assert_int_equal(s.pools[0].total, 64);
    assert_true(s.pools[0].free == UINT64_MAX && s.pools[0].reserved == UINT64_MAX &&
                s.pools[0].surplus == UINT64_MAX);
    assert_int_equal(s.mode, CORUN_THP_NEVER);
}

/* The [selected] word of a sysfs choice file, the one parser of them. */
static void test_selected(void **state)
{
    char out[32];

    assert_int_equal(corun__thp_selected("always [madvise] never\n", out, sizeof(out)), 0);
    assert_string_equal(out, "madvise");
    assert_int_equal(corun__thp_selected("always madvise never", out, sizeof(out)), -EINVAL);
    assert_string_equal(out, "");
    assert_int_equal(corun__thp_selected("[defer+madvise]", out, 4), -EINVAL); /* too long */
}

/* ---- coverage ------------------------------------------------------------ */

static const struct corun_thp_region *region_at(const struct corun_thp_coverage *c, uint64_t start)
{
    for (unsigned i = 0; i < c->nregions; i++)
        if (c->regions[i].start == start)
            return &c->regions[i];
    fail_msg("no region at %#llx", (unsigned long long)start);
    return NULL;
}

static void test_coverage_rollup(void **state)
{
    struct corun_thp_coverage *c = NULL;

    assert_int_equal(corun_thp_coverage_read(root_of("thp/live-6.18"), 4242, 0, &c), 0);
    assert_int_equal(c->pid, 4242);
    assert_int_equal(c->rss_kb, 31112);
    assert_int_equal(c->anon_kb, 29800);
    assert_int_equal(c->anon_huge_kb, 16384);
    assert_int_equal(c->thp_disabled, 0);
    assert_int_equal(c->nregions, 0);
    assert_null(c->regions);
    corun_thp_coverage_free(c);
}

static void test_coverage_regions(void **state)
{
    struct corun_thp_coverage *c = NULL;
    const struct corun_thp_region *r;

    assert_int_equal(corun_thp_coverage_read(root_of("thp/live-6.18"), 4242, CORUN_THP_REGIONS, &c),
                     0);
    assert_int_equal(c->nregions, 29);
    /* The sums of the regions agree with the kernel's rollup. */
    assert_int_equal(c->rss_kb, 31112);
    assert_int_equal(c->anon_kb, 29800);
    assert_int_equal(c->anon_huge_kb, 16384);

    r = region_at(c, 0x7f65a5c00000ull); /* advised, all huge */
    assert_int_equal(r->end, 0x7f65a6c00000ull);
    assert_int_equal(r->anon_kb, 16384);
    assert_int_equal(r->anon_huge_kb, 16384);
    assert_int_equal(r->thp_eligible, 1);
    assert_true(r->advised);
    assert_false(r->refused);
    assert_string_equal(r->name, "");
    assert_string_equal(r->perms, "rw-p");

    r = region_at(c, 0x7f65a5000000ull); /* not advised: small pages */
    assert_int_equal(r->anon_kb, 8192);
    assert_int_equal(r->anon_huge_kb, 0);
    assert_int_equal(r->thp_eligible, 0);
    assert_false(r->advised);

    r = region_at(c, 0x7f65a4c00000ull); /* refused */
    assert_true(r->refused);
    assert_false(r->advised);

    r = region_at(c, 0x7f65a6e43000ull); /* libc's text */
    assert_string_equal(r->name, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    assert_string_equal(r->perms, "r-xp");
    corun_thp_coverage_free(c);
}

static void test_coverage_old_kernel(void **state)
{
    struct corun_thp_coverage *c = NULL;
    const struct corun_thp_region *r;

    /* No smaps_rollup: the totals are the sums of smaps. */
    assert_int_equal(corun_thp_coverage_read(root_of("thp/old-4.9"), 77, 0, &c), 0);
    assert_int_equal(c->anon_kb, 132 + 65536 + 16);
    assert_int_equal(c->anon_huge_kb, 61440);
    assert_int_equal(c->hugetlb_kb, 4096);
    assert_int_equal(c->thp_disabled, -1);
    corun_thp_coverage_free(c);

    assert_int_equal(corun_thp_coverage_read(root_of("thp/old-4.9"), 77, CORUN_THP_REGIONS, &c), 0);
    assert_int_equal(c->nregions, 5);
    r = region_at(c, 0x7f2a40000000ull);
    assert_int_equal(r->thp_eligible, -1);
    assert_int_equal(r->anon_huge_kb, 61440);
    r = region_at(c, 0x7f2a50000000ull);
    assert_string_equal(r->name, "/dev/hugepages/pool (deleted)");
    assert_string_equal(r->perms, "rw-s");
    assert_string_equal(region_at(c, 0x01c3e000ull)->name, "[heap]");
    corun_thp_coverage_free(c);
}

static void test_coverage_errors(void **state)
{
    struct corun_thp_coverage *c = (struct corun_thp_coverage *)0x1;
    struct corun_thp_coverage cov;

    assert_int_equal(corun_thp_coverage_read(root_of("thp/live-6.18"), 999, 0, &c), -ESRCH);
    assert_null(c);
    assert_int_equal(corun_thp_coverage_read(root_of("thp/live-6.18"), 0, 0, &c), -EINVAL);
    assert_int_equal(corun_thp_parse_smaps("Rss: 4 kB\nnot smaps at all\n", true, &cov), -EINVAL);
    assert_int_equal(corun_thp_parse_smaps("", false, &cov), -EINVAL);
    /* A header alone is a mapping with nothing in it. */
    assert_int_equal(corun_thp_parse_smaps("1000-2000 rw-p 00000000 00:00 0", true, &cov), 0);
    assert_int_equal(cov.nregions, 1);
    assert_int_equal(cov.regions[0].end, 0x2000);
    free(cov.regions);
}

/* Every prefix of a real smaps, in a buffer of exactly its size (so ASan sees
 * any read past it), parses without a crash and never finds more. */
static void test_parse_every_prefix(void **state)
{
    struct corun_thp_coverage full, cov;
    char path[1024], *text;
    size_t len;
    FILE *f;

    snprintf(path, sizeof(path), "%s", fixture("thp/live-6.18/proc/4242/smaps"));
    f = fopen(path, "r");
    assert_non_null(f);
    text = malloc(65536);
    assert_non_null(text);
    len = fread(text, 1, 65535, f);
    fclose(f);
    text[len] = '\0';
    assert_int_equal(corun_thp_parse_smaps(text, true, &full), 0);
    for (size_t n = 0; n <= len; n += 7) {
        char *prefix = malloc(n + 1);
        int err;

        assert_non_null(prefix);
        memcpy(prefix, text, n);
        prefix[n] = '\0';
        err = corun_thp_parse_smaps(prefix, true, &cov);
        if (err) {
            assert_int_equal(err, -EINVAL);
        } else {
            assert_true(cov.nregions <= full.nregions);
            assert_true(cov.anon_kb <= full.anon_kb);
            free(cov.regions);
        }
        free(prefix);
    }
    free(full.regions);
    free(text);
}

/* ---- the collapse plan on a fixture ------------------------------------ */

static int must_not_run(int pidfd, const void *iov, size_t vlen, int advice, unsigned flags)
{
    fail_msg("process_madvise called during a dry run");
    return -1;
}

static const struct corun_thp_collapse_region *
collapse_region(const struct corun_thp_collapse_result *res, uint64_t addr)
{
    for (unsigned i = 0; i < res->nregions; i++)
        if (res->regions[i].start <= addr && addr < res->regions[i].end)
            return &res->regions[i];
    return NULL;
}

static void test_collapse_plan_fixture(void **state)
{
    struct corun_thp_collapse_opts opts = {.dry_run = true};
    struct corun_thp_collapse_result *res = NULL;
    const struct corun_thp_collapse_region *r;
    char why[256];

    corun__sys.process_madvise = must_not_run;
    assert_int_equal(
        corun_thp_collapse(root_of("thp/live-6.18"), 4242, &opts, &res, why, sizeof(why)), 0);
    corun__sys_reset();
    r = collapse_region(res, 0x7f65a5000000ull);
    assert_non_null(r);
    assert_int_equal(r->status, CORUN_THP_COLLAPSE_PLANNED);
    assert_int_equal(r->huge_start, 0x7f65a5000000ull);
    assert_int_equal(r->huge_end, 0x7f65a5c00000ull);
    r = collapse_region(res, 0x7f65a5c00000ull);
    assert_int_equal(r->status, CORUN_THP_COLLAPSE_SKIPPED);
    assert_string_equal(r->reason, "already in huge pages");
    r = collapse_region(res, 0x7f65a4c00000ull);
    assert_int_equal(r->status, CORUN_THP_COLLAPSE_SKIPPED);
    assert_non_null(strstr(r->reason, "MADV_NOHUGEPAGE"));
    r = collapse_region(res, 0x7f65a6c00000ull);
    assert_string_equal(r->reason, "nothing resident");
    /* Smaller than one aligned huge page: not a candidate at all. */
    assert_null(collapse_region(res, 0x7f65a4aff000ull));
    /* Files and libraries never are. */
    assert_null(collapse_region(res, 0x7f65a6e43000ull));
    corun_thp_collapse_free(res);
}

static void test_collapse_refusals(void **state)
{
    struct corun_thp_collapse_result *res = (struct corun_thp_collapse_result *)0x1;
    char why[256];

    assert_int_equal(
        corun_thp_collapse(root_of("thp/never-6.1"), 4242, NULL, &res, why, sizeof(why)), -ENOTSUP);
    assert_null(res);
    assert_non_null(strstr(why, "'never'"));
    assert_int_equal(corun_thp_collapse(root_of("thp/old-4.9"), 77, NULL, &res, why, sizeof(why)),
                     -ENOTSUP);
    assert_non_null(strstr(why, "Linux 4.9 has no MADV_COLLAPSE"));
    assert_int_equal(corun_thp_collapse(root_of("thp/nothp"), 1, NULL, &res, why, sizeof(why)),
                     -ESRCH);
    assert_non_null(strstr(why, "/proc/1/smaps"));
}

/* ---- a live child ------------------------------------------------------- */

struct child {
    pid_t pid;
    int go; /* write a byte: the child checks its memory and exits */
    uint64_t addr;
    size_t len;
};

enum child_kind { DENSE, SPARSE, REFUSED };

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 31 + 7);
}

/* The child maps @len bytes at a huge page boundary, fills them (small pages:
 * it never asks for huge ones), says where, waits, then checks every byte. */
static void child_main(int ready, int go, size_t len, enum child_kind kind)
{
    unsigned char *raw = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                              -1, 0),
                  *p;
    uint64_t addr;
    char c;

    if (raw == MAP_FAILED)
        _exit(10);
    p = (unsigned char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (kind == REFUSED && madvise(p, len, MADV_NOHUGEPAGE))
        _exit(11);
    for (size_t i = 0; i < len; i += kind == SPARSE ? HUGE : 1)
        p[i] = pattern(i);
    addr = (uint64_t)(uintptr_t)p;
    if (write(ready, &addr, sizeof(addr)) != sizeof(addr))
        _exit(12);
    if (read(go, &c, 1) != 1)
        _exit(13);
    for (size_t i = 0; i < len; i += kind == SPARSE ? HUGE : 1)
        if (p[i] != pattern(i))
            _exit(14);
    _exit(0);
}

static void child_start(struct child *ch, size_t len, enum child_kind kind)
{
    int ready[2], go[2];

    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    ch->pid = fork();
    assert_true(ch->pid >= 0);
    if (ch->pid == 0) {
        close(ready[0]);
        close(go[1]);
        child_main(ready[1], go[0], len, kind);
    }
    close(ready[1]);
    close(go[0]);
    assert_int_equal(read(ready[0], &ch->addr, sizeof(ch->addr)), sizeof(ch->addr));
    close(ready[0]);
    ch->go = go[1];
    ch->len = len;
}

/* Lets the child check its memory; asserts that every byte was intact. */
static void child_finish(struct child *ch)
{
    int status;

    assert_int_equal(write(ch->go, "x", 1), 1);
    close(ch->go);
    assert_int_equal(waitpid(ch->pid, &status, 0), ch->pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static bool thp_usable(void)
{
    struct corun_thp_system s;

    return corun_thp_system_read(NULL, &s) == 0 &&
           (s.mode == CORUN_THP_ALWAYS || s.mode == CORUN_THP_MADVISE);
}

static void test_collapse_live(void **state)
{
    struct corun_thp_collapse_result *res = NULL;
    const struct corun_thp_collapse_region *r;
    struct corun_thp_coverage *cov = NULL;
    struct child ch;
    char why[256];
    int err;

    if (!thp_usable())
        skip();
    child_start(&ch, 64 * MIB, DENSE);
    /* On a loaded machine the kernel may find pages busy (EAGAIN) or no
     * free huge page (ENOMEM) for some ranges: the region is then partly
     * collapsed, and a later try may find them free (the library's reason
     * for EAGAIN says to try again). A CI run's sanitizer stage once got
     * PARTIAL so. */
    for (int tries = 1;; tries++) {
        err = corun_thp_collapse(NULL, ch.pid, NULL, &res, why, sizeof(why));
        assert_int_equal(err, 0);
        r = collapse_region(res, ch.addr);
        assert_non_null(r);
        if (r->status == CORUN_THP_COLLAPSE_DONE || tries == 3 ||
            (r->error != -EAGAIN && r->error != -ENOMEM))
            break;
        print_message("try %d: %s (%s)\n", tries, corun_thp_collapse_status_name(r->status),
                      r->reason ? r->reason : "");
        corun_thp_collapse_free(res);
        res = NULL;
    }
    assert_int_equal(r->status, CORUN_THP_COLLAPSE_DONE);
    assert_int_equal(r->error, 0);
    assert_null(r->reason);
    assert_true(r->anon_huge_kb_after >= r->anon_huge_kb_before);
    assert_true(r->anon_huge_kb_after * 10 >= (ch.len >> 10) * 9);
    assert_true(res->collapsed >= 1);
    /* The coverage reader sees the same. */
    assert_int_equal(corun_thp_coverage_read(NULL, ch.pid, CORUN_THP_REGIONS, &cov), 0);
    assert_true(cov->anon_huge_kb * 10 >= (ch.len >> 10) * 9);
    corun_thp_coverage_free(cov);
    corun_thp_collapse_free(res);
    child_finish(&ch);
}

static void test_collapse_skips_live(void **state)
{
    struct corun_thp_collapse_result *res = NULL;
    const struct corun_thp_collapse_region *r;
    struct child sparse, refused;
    char why[256];

    if (!thp_usable())
        skip();
    child_start(&sparse, 32 * MIB, SPARSE);
    assert_int_equal(corun_thp_collapse(NULL, sparse.pid, NULL, &res, why, sizeof(why)), 0);
    r = collapse_region(res, sparse.addr);
    assert_non_null(r);
    assert_int_equal(r->status, CORUN_THP_COLLAPSE_SKIPPED);
    assert_non_null(strstr(r->reason, "sparse"));
    assert_int_equal(r->anon_huge_kb_after, 0);
    corun_thp_collapse_free(res);
    child_finish(&sparse);

    child_start(&refused, 8 * MIB, REFUSED);
    assert_int_equal(corun_thp_collapse(NULL, refused.pid, NULL, &res, why, sizeof(why)), 0);
    r = collapse_region(res, refused.addr);
    assert_non_null(r);
    assert_int_equal(r->status, CORUN_THP_COLLAPSE_SKIPPED);
    assert_non_null(strstr(r->reason, "refused"));
    assert_int_equal(r->anon_huge_kb_after, 0);
    corun_thp_collapse_free(res);
    child_finish(&refused);
}

/* process_madvise that fails with fail_errno from call number fail_from on. */
static int fail_errno, fail_from, calls;

static int failing_madvise(int pidfd, const void *iov, size_t vlen, int advice, unsigned flags)
{
    if (++calls >= fail_from) {
        errno = fail_errno;
        return -1;
    }
    errno = EINVAL; /* the earlier calls are refused per region, too */
    return -1;
}

static int no_pidfd(pid_t pid, unsigned flags)
{
    errno = ENOSYS;
    return -1;
}

/* Runs a collapse on a live child with process_madvise failing as set. */
static int collapse_injected(struct child *ch, struct corun_thp_collapse_result **res, char *why,
                             size_t len)
{
    int err;

    calls = 0;
    corun__sys.process_madvise = failing_madvise;
    err = corun_thp_collapse(NULL, ch->pid, NULL, res, why, len);
    corun__sys_reset();
    return err;
}

static void test_collapse_errors_injected(void **state)
{
    struct corun_thp_collapse_result *res = NULL;
    const struct corun_thp_collapse_region *r;
    struct child ch;
    char why[256];

    if (!thp_usable())
        skip();
    child_start(&ch, 16 * MIB, DENSE);

    /* A kernel that refuses every range: reported per region, target untouched. */
    fail_errno = EINVAL, fail_from = 1;
    assert_int_equal(collapse_injected(&ch, &res, why, sizeof(why)), 0);
    r = collapse_region(res, ch.addr);
    assert_int_equal(r->status, CORUN_THP_COLLAPSE_FAILED);
    assert_int_equal(r->error, -EINVAL);
    assert_non_null(strstr(r->reason, "EINVAL"));
    assert_non_null(strstr(r->reason, "6.1"));
    assert_int_equal(r->anon_huge_kb_after, 0);
    assert_int_equal(res->collapsed, 0);
    assert_true(res->failed >= 1);
    corun_thp_collapse_free(res);

    /* Busy pages and no huge page left: per region, with words. */
    fail_errno = EAGAIN, fail_from = 1;
    assert_int_equal(collapse_injected(&ch, &res, why, sizeof(why)), 0);
    assert_non_null(strstr(collapse_region(res, ch.addr)->reason, "try again"));
    corun_thp_collapse_free(res);
    fail_errno = ENOMEM, fail_from = 1;
    assert_int_equal(collapse_injected(&ch, &res, why, sizeof(why)), 0);
    assert_non_null(strstr(collapse_region(res, ch.addr)->reason, "no free huge page"));
    corun_thp_collapse_free(res);

    /* Not permitted on the first call: the whole process is out of reach. */
    fail_errno = EPERM, fail_from = 1;
    res = (struct corun_thp_collapse_result *)0x1;
    assert_int_equal(collapse_injected(&ch, &res, why, sizeof(why)), -EPERM);
    assert_null(res);
    assert_non_null(strstr(why, "EPERM"));
    assert_non_null(strstr(why, "CAP_SYS_NICE"));

    /* The process went away; a kernel without process_madvise or pidfd_open. */
    fail_errno = ESRCH, fail_from = 1;
    assert_int_equal(collapse_injected(&ch, &res, why, sizeof(why)), -ESRCH);
    fail_errno = ENOSYS, fail_from = 1;
    assert_int_equal(collapse_injected(&ch, &res, why, sizeof(why)), -ENOTSUP);
    assert_non_null(strstr(why, "process_madvise"));
    corun__sys.pidfd_open = no_pidfd;
    assert_int_equal(corun_thp_collapse(NULL, ch.pid, NULL, &res, why, sizeof(why)), -ENOTSUP);
    corun__sys_reset();
    assert_non_null(strstr(why, "pidfd_open"));

    child_finish(&ch);
}

static void test_collapse_no_process(void **state)
{
    struct corun_thp_collapse_result *res = NULL;
    char why[256];
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(corun_thp_collapse(NULL, pid, NULL, &res, why, sizeof(why)), -ESRCH);
    assert_null(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_system_live_fixture), cmocka_unit_test(test_system_old_and_absent),
        cmocka_unit_test(test_coverage_rollup),     cmocka_unit_test(test_coverage_regions),
        cmocka_unit_test(test_coverage_old_kernel), cmocka_unit_test(test_coverage_errors),
        cmocka_unit_test(test_parse_every_prefix),  cmocka_unit_test(test_collapse_plan_fixture),
        cmocka_unit_test(test_collapse_refusals),   cmocka_unit_test(test_collapse_live),
        cmocka_unit_test(test_collapse_skips_live), cmocka_unit_test(test_collapse_errors_injected),
        cmocka_unit_test(test_collapse_no_process), cmocka_unit_test(test_selected),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
