/*
 * test_topo.c — the topo box against real machines: every fixture topology
 * is loaded and compared with its .expected file, which hwloc's own tools
 * wrote (scripts/gen-topo-expected.sh), and each domain's count of cores
 * with its CPUs; shared levels on chosen pairs of
 * known machines; the live machine; bad input; the affinity seam.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys.h"
#include "corun/topo.h"

static int dense(const struct corun_topo *t, unsigned os)
{
    int i = corun_topo_cpu_by_os(t, os);

    assert_true(i >= 0);
    return i;
}

static unsigned count_of(const struct corun_topo *t, const char *name)
{
    const struct corun_topo_info *in = corun_topo_info(t);

    if (!strcmp(name, "pus"))
        return in->pus;
    if (!strcmp(name, "cores"))
        return in->ndomains[CORUN_LEVEL_CORE];
    if (!strcmp(name, "packages"))
        return in->ndomains[CORUN_LEVEL_PACKAGE];
    if (!strcmp(name, "numa_nodes"))
        return in->ndomains[CORUN_LEVEL_NUMA];
    if (!strcmp(name, "l2_domains"))
        return in->ndomains[CORUN_LEVEL_L2];
    if (!strcmp(name, "l3_domains"))
        return in->ndomains[CORUN_LEVEL_L3];
    if (!strcmp(name, "smt_width"))
        return in->smt_width;
    if (!strcmp(name, "cpu_kinds"))
        return in->kinds;
    fail_msg("unknown count '%s' in an expected file", name);
    return 0;
}

static int parse_dom(const char *s)
{
    return strcmp(s, "-") ? atoi(s) : -1;
}

/* Compares one fixture with its .expected file; returns facts checked. */
static unsigned check_fixture(const char *xml_name)
{
    char path[1024], line[256], expected[256];
    struct corun_topo *t = fixture_topo(xml_name);
    unsigned checked = 0, cpus_seen = 0;
    FILE *f;

    snprintf(expected, sizeof(expected), "topologies/%.*s.expected",
             (int)(strlen(xml_name) - 4), xml_name);
    snprintf(path, sizeof(path), "%s", fixture(expected));
    f = fopen(path, "r");
    if (!f)
        fail_msg("%s: no expected file %s", xml_name, path);
    while (fgets(line, sizeof(line), f)) {
        char w[8][32];
        int n = sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %31s", w[0], w[1], w[2], w[3],
                       w[4], w[5], w[6], w[7]);

        if (n <= 0 || w[0][0] == '#')
            continue;
        if (!strcmp(w[0], "count") && n == 3) {
            unsigned got = count_of(t, w[1]), want = (unsigned)atoi(w[2]);

            if (got != want)
                fail_msg("%s: %s is %u, hwloc says %u", xml_name, w[1], got, want);
        } else if (!strcmp(w[0], "cpu") && n == 8) {
            const struct corun_topo_cpu *c = corun_topo_cpu(t, (unsigned)dense(t, (unsigned)atoi(w[1])));
            static const enum corun_level lv[] = {CORUN_LEVEL_CORE, CORUN_LEVEL_PACKAGE,
                                                  CORUN_LEVEL_NUMA, CORUN_LEVEL_L2,
                                                  CORUN_LEVEL_L3};

            for (int k = 0; k < 5; k++)
                if (c->dom[lv[k]] != parse_dom(w[2 + k]))
                    fail_msg("%s: cpu %s %s is %d, hwloc says %s", xml_name, w[1],
                             corun_level_name(lv[k]), c->dom[lv[k]], w[2 + k]);
            if (c->kind != atoi(w[7]))
                fail_msg("%s: cpu %s kind %d, hwloc says %s", xml_name, w[1], c->kind, w[7]);
            cpus_seen++;
        } else if (!strcmp(w[0], "pair") && n == 4) {
            unsigned a = (unsigned)dense(t, (unsigned)atoi(w[1]));
            unsigned b = (unsigned)dense(t, (unsigned)atoi(w[2]));
            const char *got = corun_level_name(corun_topo_shared_level(t, a, b));

            if (strcmp(got, w[3]))
                fail_msg("%s: cpus %s and %s share %s, hwloc says %s", xml_name, w[1], w[2],
                         got, w[3]);
            /* symmetric */
            assert_int_equal(corun_topo_shared_level(t, a, b), corun_topo_shared_level(t, b, a));
        } else {
            fail_msg("%s: bad expected line: %s", path, line);
        }
        checked++;
    }
    fclose(f);
    assert_int_equal(cpus_seen, corun_topo_ncpus(t));
    /* Every domain counts its cores: its CPUs of SMT rank 0; the packages'
     * add up to the machine's (checked against hwloc above). */
    for (int l = CORUN_LEVEL_CORE; l <= CORUN_LEVEL_PACKAGE; l++) {
        unsigned sum = 0;

        for (unsigned d = 0; d < corun_topo_ndomains(t, (enum corun_level)l); d++) {
            const struct corun_topo_domain *dom = corun_topo_domain(t, (enum corun_level)l, d);
            unsigned cores = 0;

            for (unsigned i = 0; i < dom->ncpus; i++)
                cores += corun_topo_cpu(t, dom->cpus[i])->smt_rank == 0;
            if (dom->ncores != cores)
                fail_msg("%s: %s %u counts %u cores, its CPUs say %u", xml_name,
                         corun_level_name((enum corun_level)l), d, dom->ncores, cores);
            sum += dom->ncores;
        }
        if (l == CORUN_LEVEL_PACKAGE)
            assert_int_equal(sum, count_of(t, "cores"));
    }
    corun_topo_free(t);
    return checked;
}

static void test_fixtures_agree_with_hwloc(void **state)
{
    DIR *d = opendir(fixture("topologies"));
    struct dirent *e;
    unsigned files = 0, facts = 0;

    assert_non_null(d);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);

        if (n > 4 && !strcmp(e->d_name + n - 4, ".xml")) {
            facts += check_fixture(e->d_name);
            files++;
        }
    }
    closedir(d);
    assert_true(files >= 14);
    assert_true(facts > 1000);
}

/* Shared levels written out by hand from the machines' documentation. */
static void test_shared_levels(void **state)
{
    struct corun_topo *t;

    /* Skylake-SP 2x18 cores, SMT2: CPU n and n+36 are siblings; even CPUs on
     * package 0. */
    t = fixture_topo("Intel-Skylake-2xXeon6140.xml");
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 36)), CORUN_LEVEL_CORE);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 2)), CORUN_LEVEL_L3);
    /* One NUMA node spans both packages in this snapshot: the node is the
     * innermost thing CPUs of different packages share. */
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 1)), CORUN_LEVEL_NUMA);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 5), dense(t, 5)), CORUN_LEVEL_PU);
    assert_true(corun_topo_shares(t, dense(t, 0), dense(t, 36), CORUN_LEVEL_L3));
    assert_false(corun_topo_shares(t, dense(t, 0), dense(t, 1), CORUN_LEVEL_PACKAGE));
    corun_topo_free(t);

    /* Bulldozer: a module's two cores share the L2 (and the FPU). */
    t = fixture_topo("AMD-15h-Bulldozer-4xOpteron-6272.xml");
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 1)), CORUN_LEVEL_L2);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 2)), CORUN_LEVEL_L3);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 8)), CORUN_LEVEL_PACKAGE);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 16)), CORUN_LEVEL_MACHINE);
    corun_topo_free(t);

    /* Zen1: two 4-core CCXs per die, one die per NUMA node. */
    t = fixture_topo("AMD-17h-Zen-2xEpyc-7451.xml");
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 48)), CORUN_LEVEL_CORE);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 1)), CORUN_LEVEL_L3);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 3)), CORUN_LEVEL_NUMA);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 6)), CORUN_LEVEL_PACKAGE);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 24)), CORUN_LEVEL_MACHINE);
    assert_int_equal(corun_topo_numa_distance(t, 0, 0), 0); /* none recorded */
    corun_topo_free(t);

    /* 4 sockets x 2 nodes with a SLIT: 10 local, 16 and 22 remote. */
    t = fixture_topo("linux-64amd64-4s2n4ca2co.xml");
    assert_int_equal(corun_topo_numa_distance(t, 0, 0), 10);
    assert_int_equal(corun_topo_numa_distance(t, 0, 1), 16);
    assert_int_equal(corun_topo_numa_distance(t, 0, 3), 22);
    assert_int_equal(corun_topo_numa_distance(t, 3, 0), 22);
    assert_int_equal(corun_topo_numa_distance(t, 0, 8), 0);
    corun_topo_free(t);

    /* Knights Landing: SMT4, two cores per L2 tile, no L3. */
    t = fixture_topo("Intel-KnightsLanding-XeonPhi-7210.xml");
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 64)), CORUN_LEVEL_CORE);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 1)), CORUN_LEVEL_L2);
    assert_int_equal(corun_topo_ndomains(t, CORUN_LEVEL_L3), 0);
    assert_int_equal(corun_topo_cpu(t, dense(t, 0))->dom[CORUN_LEVEL_L3], -1);
    assert_int_equal(corun_topo_info(t)->smt_width, 4);
    corun_topo_free(t);
}

static void test_hybrid_kinds(void **state)
{
    struct corun_topo *t = fixture_topo("linux-20em64t-hybrid-1p6c2t+2ca4co1t.xml");
    const struct corun_topo_info *in = corun_topo_info(t);
    const struct corun_topo_cpu *p = corun_topo_cpu(t, dense(t, 0));
    const struct corun_topo_cpu *e = corun_topo_cpu(t, dense(t, 12));

    assert_int_equal(in->kinds, 2);
    assert_true(corun_topo_kind(t, (unsigned)p->kind)->efficiency >
                corun_topo_kind(t, (unsigned)e->kind)->efficiency);
    /* Capacity from the kinds' maximum frequencies: 3900 / 5000 MHz. */
    assert_float_equal(p->capacity, 1.0, 1e-9);
    assert_float_equal(e->capacity, 0.78, 1e-9);
    assert_int_equal(e->max_khz, 3900000);
    /* E-cores in a cluster of four share an L2. */
    assert_int_equal(corun_topo_shared_level(t, dense(t, 12), dense(t, 15)), CORUN_LEVEL_L2);
    assert_int_equal(corun_topo_shared_level(t, dense(t, 0), dense(t, 12)), CORUN_LEVEL_L3);
    corun_topo_free(t);

    /* Kinds known only by CoreType: the ranking holds, capacity is unknown. */
    t = fixture_topo("Intel-RaptorLake-Corei7-1370P.xml");
    assert_int_equal(corun_topo_info(t)->kinds, 2);
    assert_string_equal(corun_topo_kind(t, (unsigned)corun_topo_cpu(t, dense(t, 0))->kind)->name,
                        "IntelCore");
    assert_string_equal(corun_topo_kind(t, (unsigned)corun_topo_cpu(t, dense(t, 19))->kind)->name,
                        "IntelAtom");
    assert_true(corun_topo_cpu(t, dense(t, 19))->capacity == 0.0);
    corun_topo_free(t);
}

static void test_domains_partition_cpus(void **state)
{
    struct corun_topo *t = fixture_topo("AMD-19h-Zen3-2xEpyc-7763.xml");

    for (int l = CORUN_LEVEL_CORE; l <= CORUN_LEVEL_PACKAGE; l++) {
        unsigned total = 0;

        for (unsigned d = 0; d < corun_topo_ndomains(t, (enum corun_level)l); d++) {
            const struct corun_topo_domain *dom = corun_topo_domain(t, (enum corun_level)l, d);

            for (unsigned i = 0; i < dom->ncpus; i++)
                assert_int_equal(corun_topo_cpu(t, dom->cpus[i])->dom[l], (int)d);
            total += dom->ncpus;
        }
        assert_int_equal(total, 128);
    }
    assert_int_equal(corun_topo_ndomains(t, CORUN_LEVEL_L3), 16);
    assert_int_equal(corun_topo_domain(t, CORUN_LEVEL_L3, 0)->ncpus, 8);
    assert_int_equal(corun_topo_domain(t, CORUN_LEVEL_L3, 0)->size_bytes, 32u << 20);
    assert_null(corun_topo_domain(t, CORUN_LEVEL_L3, 16));
    assert_null(corun_topo_cpu(t, 128));
    assert_int_equal(corun_topo_cpu_by_os(t, 100000), -1);
    assert_int_equal(corun_topo_shared_level(t, 0, 1000), CORUN_LEVEL_MACHINE);
    corun_topo_free(t);
}

static void test_live(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYSTEM};
    struct corun_topo *t = NULL;
    struct corun_cpuset set = {0};

    assert_int_equal(corun_topo_load(&o, &t), 0);
    assert_true(corun_topo_info(t)->pus >= 1);
    assert_true(corun_topo_info(t)->usable_pus >= 1);
    assert_string_equal(corun_topo_info(t)->source_name, "this system");
    assert_int_equal(corun_topo_usable_set(t, &set), 0);
    assert_int_equal(corun_cpuset_count(&set), corun_topo_info(t)->usable_pus);
    corun_cpuset_release(&set);
    corun_topo_free(t);
}

/* A recorded /sys with cpufreq for cpu0 only: frequencies are read through
 * the root seam and the missing ones are explained. */
static void test_cpufreq_from_sysroot(void **state)
{
    char root[] = "/tmp/corun-topo-XXXXXX", cmd[512];
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYSTEM};
    struct corun_topo *t = NULL;

    assert_non_null(mkdtemp(root));
    snprintf(cmd, sizeof(cmd),
             "d=%s/sys/devices/system/cpu/cpu0/cpufreq; mkdir -p $d && echo 3500000 > "
             "$d/cpuinfo_max_freq && echo 800000 > $d/cpuinfo_min_freq && echo 2100000 > "
             "$d/scaling_cur_freq",
             root);
    assert_int_equal(system(cmd), 0);
    o.sysroot = root;
    assert_int_equal(corun_topo_load(&o, &t), 0);
    assert_int_equal(corun_topo_cpu(t, (unsigned)corun_topo_cpu_by_os(t, 0))->max_khz, 3500000);
    assert_int_equal(corun_topo_cpu(t, (unsigned)corun_topo_cpu_by_os(t, 0))->cur_khz, 2100000);
    if (corun_topo_ncpus(t) > 1)
        assert_non_null(strstr(corun_topo_info(t)->freq_missing, "cpufreq missing for"));
    corun_topo_free(t);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    assert_int_equal(system(cmd), 0);
}

/* The process's affinity, read through the syscall seam, limits usable CPUs. */
static int only_cpu0(pid_t pid, size_t size, cpu_set_t *mask)
{
    CPU_ZERO_S(size, mask);
    CPU_SET_S(0, size, mask);
    return 0;
}

static void test_affinity_limits_usable(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYSTEM};
    struct corun_topo *t = NULL;

    corun__sys.sched_getaffinity = only_cpu0;
    assert_int_equal(corun_topo_load(&o, &t), 0);
    corun__sys_reset();
    assert_int_equal(corun_topo_info(t)->usable_pus, 1);
    assert_true(corun_topo_cpu(t, (unsigned)corun_topo_cpu_by_os(t, 0))->usable);
    if (corun_topo_ncpus(t) > 1)
        assert_non_null(strstr(corun_topo_info(t)->usable_note, "affinity"));
    corun_topo_free(t);
}

static void test_bad_input(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_XML};
    struct corun_topo *t = (struct corun_topo *)0x1;
    char bad[] = "/tmp/corun-bad-XXXXXX";
    int fd;

    o.input = "/nonexistent/machine.xml";
    assert_int_equal(corun_topo_load(&o, &t), -ENOENT);
    assert_null(t);
    o.input = "/tmp";
    assert_int_equal(corun_topo_load(&o, &t), -EISDIR);
    fd = mkstemp(bad);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "<topology>not really</topo", 26), 26);
    close(fd);
    o.input = bad;
    assert_int_equal(corun_topo_load(&o, &t), -EINVAL);
    unlink(bad);
    o.source = CORUN_TOPO_SYNTHETIC;
    o.input = "pack:2 frobnicator:3";
    assert_int_equal(corun_topo_load(&o, &t), -EINVAL);
    o.input = "";
    assert_int_equal(corun_topo_load(&o, &t), -EINVAL);
    corun_topo_free(NULL);
}

static void test_synthetic(void **state)
{
    struct corun_topo_opts o = {.source = CORUN_TOPO_SYNTHETIC,
                                .input = "pack:2 l3:2 l2:2 core:2 pu:2"};
    struct corun_topo *t = NULL;

    assert_int_equal(corun_topo_load(&o, &t), 0);
    assert_int_equal(corun_topo_info(t)->pus, 32);
    assert_int_equal(corun_topo_ndomains(t, CORUN_LEVEL_L3), 4);
    assert_int_equal(corun_topo_ndomains(t, CORUN_LEVEL_L2), 8);
    assert_int_equal(corun_topo_shared_level(t, 0, 1), CORUN_LEVEL_CORE);
    assert_int_equal(corun_topo_shared_level(t, 0, 2), CORUN_LEVEL_L2);
    assert_int_equal(corun_topo_shared_level(t, 0, 4), CORUN_LEVEL_L3);
    assert_int_equal(corun_topo_shared_level(t, 0, 8), CORUN_LEVEL_PACKAGE);
    assert_int_equal(corun_topo_shared_level(t, 0, 16), CORUN_LEVEL_NUMA);
    corun_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_agree_with_hwloc),
        cmocka_unit_test(test_shared_levels),
        cmocka_unit_test(test_hybrid_kinds),
        cmocka_unit_test(test_domains_partition_cpus),
        cmocka_unit_test(test_live),
        cmocka_unit_test(test_cpufreq_from_sysroot),
        cmocka_unit_test(test_affinity_limits_usable),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_synthetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
