/*
 * test_daemon_config.c — the daemon's configuration: a complete file read
 * into every field, each kind of mistake reported with its line and a
 * reason, the setter shared with the command line and the control socket,
 * and the deep copy the daemon keeps.
 */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "corun/daemon.h"
#include "daemon/daemon-internal.h"

static void test_good_file(void **state)
{
    struct corun_daemon_config c, copy;
    struct corun_config_error e;

    assert_int_equal(corun_daemon_config_init(&c), 0);
    assert_int_equal(corun_daemon_config_load(&c, fixture("daemon/good.conf"), &e), 0);
    assert_true(c.interval_s == 2.5);
    assert_string_equal(c.policy, "spread");
    assert_string_equal(c.actuator, "cpuset");
    assert_string_equal(c.sensor, "proc");
    assert_string_equal(c.socket_path, "/run/test/corund.sock");
    assert_string_equal(c.metrics_path, "/var/lib/node_exporter/corun.prom");
    assert_string_equal(c.journal_dir, "/run/test/journal");
    assert_true(c.has_admin_gid);
    assert_int_equal(c.admin_gid, 0);
    assert_int_equal(c.max_migrations, 5);
    assert_int_equal(c.min_dwell, 0);
    assert_int_equal(c.confirm, 3);
    assert_int_equal(c.history, 8);
    assert_true(c.sample_min_cpu == 0.5);
    assert_false(c.mem_follow);
    assert_int_equal(c.ncomms, 2);
    assert_string_equal(c.comms[0], "python*");
    assert_string_equal(c.comms[1], "sleep");
    assert_int_equal(c.nuids, 2);
    assert_int_equal(c.uids[0], 0);
    assert_int_equal(c.uids[1], 1234);
    assert_int_equal(c.ncgroups, 1);
    assert_string_equal(c.cgroups[0], "/system.slice/batch.service");
    assert_true(c.min_cpu_percent == 12.5);
    assert_true(c.include_pinned);

    assert_int_equal(corun__daemon_config_copy(&copy, &c), 0);
    corun_daemon_config_release(&c);
    assert_string_equal(copy.comms[1], "sleep");
    assert_string_equal(copy.policy, "spread");
    assert_int_equal(copy.uids[1], 1234);
    corun_daemon_config_clear_selectors(&copy);
    assert_int_equal(copy.ncomms + copy.nuids + copy.ncgroups, 0);
    assert_true(copy.min_cpu_percent == 0);
    corun_daemon_config_release(&copy);
}

static void test_defaults(void **state)
{
    struct corun_daemon_config c;

    assert_int_equal(corun_daemon_config_init(&c), 0);
    assert_true(c.interval_s == 1);
    assert_string_equal(c.policy, "corun");
    assert_string_equal(c.actuator, "affinity");
    assert_string_equal(c.socket_path, CORUN_DAEMON_SOCKET_PATH);
    assert_null(c.metrics_path);
    assert_false(c.has_admin_gid);
    assert_int_equal(c.ncomms, 0);
    assert_true(c.mem_follow);
    corun_daemon_config_release(&c);
    corun_daemon_config_release(&c); /* twice is harmless */
}

/* Loads @name and expects an error at @line whose reason holds @words. */
static void expect_error(const char *name, int want_err, unsigned line, const char *words)
{
    struct corun_daemon_config c;
    struct corun_config_error e;
    char rel[128];

    snprintf(rel, sizeof(rel), "daemon/%s", name);
    assert_int_equal(corun_daemon_config_init(&c), 0);
    assert_int_equal(corun_daemon_config_load(&c, fixture(rel), &e), want_err);
    if (e.line != line)
        fail_msg("%s: error on line %u, want %u (%s)", name, e.line, line, e.reason);
    if (!strstr(e.reason, words))
        fail_msg("%s: reason '%s' lacks '%s'", name, e.reason, words);
    corun_daemon_config_release(&c);
}

static void test_errors_name_their_line(void **state)
{
    /* The first mistake wins: line 6 (unknown key), not line 7 (bad value). */
    expect_error("unknown-key.conf", -EINVAL, 6, "unknown key 'frobnicate' in [daemon]");
    expect_error("bad-value.conf", -EINVAL, 3, "interval: 'fast' is not a number");
    expect_error("no-section.conf", -EINVAL, 1, "outside a section");
    expect_error("bad-section.conf", -EINVAL, 3, "unknown section [bogus]");
    expect_error("syntax.conf", -EINVAL, 3, "syntax error");
    expect_error("bad-user.conf", -EINVAL, 2, "no such user 'no-such-user-corun'");
    expect_error("relative.conf", -EINVAL, 2, "not an absolute path");
    expect_error("unclosed.conf", -EINVAL, 1, "syntax error");
    expect_error("long-line.conf", -EINVAL, 2, "line longer than");
    expect_error("does-not-exist.conf", -ENOENT, 0, "No such file");
    /* A folder opens but cannot be read: the reason is the read's, not "read error". */
    expect_error(".", -EISDIR, 0, "Is a directory");
}

static void test_setter(void **state)
{
    struct corun_daemon_config c;
    char why[200];

    assert_int_equal(corun_daemon_config_init(&c), 0);
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "interval", "0.5", why, sizeof(why)), 0);
    assert_true(c.interval_s == 0.5);
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "interval", "0.01", why, sizeof(why)),
                     -EINVAL);
    assert_true(c.interval_s == 0.5); /* unchanged by a bad value */
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "actuator", "magic", why, sizeof(why)),
                     -EINVAL);
    assert_non_null(strstr(why, "neither 'affinity' nor 'cpuset'"));
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "max_migrations", "0", why, sizeof(why)),
                     -EINVAL);
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "policy", "Bad Name", why, sizeof(why)),
                     -EINVAL);
    /* A well-formed name this build has no policy for is refused here too,
     * so that --check-config catches it. */
    assert_int_equal(
        corun_daemon_config_set(&c, "daemon", "policy", "no-such-policy", why, sizeof(why)),
        -EINVAL);
    assert_non_null(strstr(why, "unknown policy 'no-such-policy'"));
    assert_int_equal(
        corun_daemon_config_set(&c, "select", "include_pinned", "maybe", why, sizeof(why)),
        -EINVAL);
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "mem_follow", "maybe", why, sizeof(why)),
                     -EINVAL);
    assert_non_null(strstr(why, "mem_follow: 'maybe' is not yes or no"));
    assert_int_equal(corun_daemon_config_set(&c, "select", "cgroup", "batch", why, sizeof(why)),
                     -EINVAL);
    assert_int_equal(corun_daemon_config_set(&c, "select", "min_cpu", "-1", why, sizeof(why)),
                     -EINVAL);
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "metrics", "", why, sizeof(why)), 0);
    assert_null(c.metrics_path);
    assert_int_equal(corun_daemon_config_set(&c, "daemon", "admin_group", "no-such-group-corun",
                                             why, sizeof(why)),
                     -EINVAL);
    corun_daemon_config_release(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_errors_name_their_line),
        cmocka_unit_test(test_setter),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
