/*
 * test_ctl.c — the control protocol: request parsing (good and hostile
 * lines), the permission decisions made from peer credentials, and one real
 * exchange over a Unix socket between this process and a forked client —
 * as root, and (when the test runs as root) as the unprivileged user nobody,
 * who may look but not change anything.
 */
#include "testutil.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corun/ctl.h"

static void test_parse_good(void **state)
{
    struct corun_ctl_request r;
    char why[128];

    assert_int_equal(corun_ctl_parse("{\"cmd\": \"status\"}\n", &r, why, sizeof(why)), 0);
    assert_int_equal(r.verb, CORUN_CTL_STATUS);
    assert_int_equal(r.pid, -1);
    assert_int_equal(corun_ctl_parse(" { \"cmd\":\"set\" , \"key\":\"interval\",\"value\":2.5 } ",
                                     &r, why, sizeof(why)),
                     0);
    assert_int_equal(r.verb, CORUN_CTL_SET);
    assert_string_equal(r.key, "interval");
    assert_string_equal(r.value, "2.5");
    assert_int_equal(corun_ctl_parse("{\"value\": \"a\\\"b\\u0041\", \"key\": \"policy\", "
                                     "\"cmd\": \"set\"}",
                                     &r, why, sizeof(why)),
                     0);
    assert_string_equal(r.value, "a\"bA");
    assert_int_equal(corun_ctl_parse("{\"cmd\": \"release\", \"pid\": 1234}", &r, why, sizeof(why)),
                     0);
    assert_int_equal(r.verb, CORUN_CTL_RELEASE);
    assert_int_equal(r.pid, 1234);
    assert_int_equal(corun_ctl_parse("{\"cmd\": \"pause\"}", &r, why, sizeof(why)), 0);
    assert_int_equal(r.verb, CORUN_CTL_PAUSE);
}

static void expect_bad(const char *line, const char *words)
{
    struct corun_ctl_request r;
    char why[128] = "";

    assert_int_equal(corun_ctl_parse(line, &r, why, sizeof(why)), -EINVAL);
    if (!strstr(why, words))
        fail_msg("'%s': reason '%s' lacks '%s'", line, why, words);
}

static void test_parse_bad(void **state)
{
    char huge[600];

    expect_bad("", "one JSON object");
    expect_bad("[\"status\"]", "one JSON object");
    expect_bad("{\"cmd\": \"reboot\"}", "unknown command");
    expect_bad("{}", "no \"cmd\"");
    expect_bad("{\"cmd\": \"status\",}", "trailing comma");
    expect_bad("{\"cmd\": \"status\"} x", "text after");
    expect_bad("{\"cmd\": \"status\", \"uid\": 0}", "unknown field");
    expect_bad("{\"cmd\": \"set\", \"key\": \"policy\"}", "needs");
    expect_bad("{\"cmd\": \"release\"}", "needs \"pid\"");
    expect_bad("{\"cmd\": \"release\", \"pid\": -5}", "positive");
    expect_bad("{\"cmd\": \"release\", \"pid\": \"5\"}", "positive");
    expect_bad("{\"cmd\": {\"a\": 1}}", "nested");
    expect_bad("{\"cmd\": \"sta", "unterminated");
    expect_bad("{\"cmd\": \"a\\u00e9\"}", "ASCII");
    memset(huge, 'a', sizeof(huge));
    {
        const char *head = "{\"cmd\": \"set\", \"key\": \"k\", \"value\": \"";

        memcpy(huge, head, strlen(head));
    }
    huge[sizeof(huge) - 1] = '\0';
    expect_bad(huge, "too long");
}

static void test_permissions(void **state)
{
    struct corun_ctl_access none = {0}, grp = {.has_admin_gid = true, .admin_gid = 990};
    gid_t sup[] = {100, 990};
    struct corun_ctl_peer root = {.uid = 0, .admin = true}, alice = {.uid = 1000, .gid = 1000};

    assert_true(corun_ctl_is_admin(&none, 0, 0, NULL, 0));
    assert_false(corun_ctl_is_admin(&none, 1000, 990, sup, 2));
    assert_true(corun_ctl_is_admin(&grp, 1000, 990, NULL, 0));  /* primary group */
    assert_true(corun_ctl_is_admin(&grp, 1000, 1000, sup, 2));  /* supplementary */
    assert_false(corun_ctl_is_admin(&grp, 1000, 1000, sup, 1)); /* 990 not among them */
    assert_false(corun_ctl_is_admin(NULL, 1000, 990, sup, 2));

    assert_true(corun_ctl_may(&root, CORUN_CTL_SET));
    assert_true(corun_ctl_may(&alice, CORUN_CTL_STATUS));
    assert_false(corun_ctl_may(&alice, CORUN_CTL_SET));
    assert_false(corun_ctl_may(&alice, CORUN_CTL_PAUSE));
    assert_false(corun_ctl_may(&alice, CORUN_CTL_RESUME));
    assert_false(corun_ctl_may(&alice, CORUN_CTL_RELEASE));
    assert_false(corun_ctl_may(NULL, CORUN_CTL_STATUS));

    assert_true(corun_ctl_may_see(&root, 1000));
    assert_true(corun_ctl_may_see(&alice, 1000));
    assert_false(corun_ctl_may_see(&alice, 1001));
    assert_false(corun_ctl_may_see(&alice, 0));
    assert_false(corun_ctl_may_see(&alice, (uid_t)-1)); /* owner unknown: hidden */
}

static void test_buf(void **state)
{
    struct corun_ctl_buf b = {0};

    corun_ctl_buf_jstr(&b, "a\"b\\c\nd\x01\xc3");
    corun_ctl_buf_printf(&b, " ");
    corun_ctl_buf_jnum(&b, 0.0 / 0.0);
    corun_ctl_buf_printf(&b, " ");
    corun_ctl_buf_jnum(&b, 42);
    corun_ctl_buf_printf(&b, " ");
    corun_ctl_buf_jstr(&b, NULL);
    assert_string_equal(b.data, "\"a\\\"b\\\\c\\nd\\u0001\\u00c3\" null 42 null");
    corun_ctl_buf_release(&b);
}

/* ---- over a socket -------------------------------------------------------- */

static void handler(void *user, const struct corun_ctl_peer *peer,
                    const struct corun_ctl_request *req, struct corun_ctl_buf *resp)
{
    corun_ctl_buf_printf(resp, "{\"ok\": true, \"uid\": %u, \"admin\": %s, \"verb\": %d}",
                         (unsigned)peer->uid, peer->admin ? "true" : "false", (int)req->verb);
}

/* Runs a client in a child (as @uid when not -1) sending @req; the parent
 * serves it. Returns the response line the child wrote back to us. */
static char *exchange(const char *path, struct corun_ctl_server *srv, uid_t uid, const char *req)
{
    int p[2], status;
    char buf[512] = "";
    ssize_t n;
    pid_t pid;

    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *resp = NULL;
        int err;

        close(p[0]);
        if (uid != (uid_t)-1 && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
            _exit(3);
        err = corun_ctl_call(path, req, 2000, &resp);
        if (err)
            dprintf(p[1], "error %d", err);
        else
            dprintf(p[1], "%s", resp);
        free(resp);
        _exit(0);
    }
    close(p[1]);
    /* Serve until the client has been answered. */
    for (int served = 0; served < 1;) {
        struct pollfd pfd = {.fd = corun_ctl_fd(srv), .events = POLLIN};

        assert_true(poll(&pfd, 1, 5000) == 1);
        served += corun_ctl_serve(srv, handler, NULL);
    }
    n = read(p[0], buf, sizeof(buf) - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    close(p[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return strdup(buf);
}

static void test_socket(void **state)
{
    char dir[] = "/tmp/corun-ctl-XXXXXX", path[128];
    struct corun_ctl_server *srv = NULL, *second = NULL;
    struct corun_ctl_access acc = {0};
    char *r;

    assert_non_null(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(path, sizeof(path), "%s/s", dir);
    assert_int_equal(corun_ctl_listen(path, &acc, &srv), 0);
    /* A second daemon on the same path is refused while the first answers. */
    assert_int_equal(corun_ctl_listen(path, &acc, &second), -EADDRINUSE);

    r = exchange(path, srv, (uid_t)-1, "{\"cmd\": \"pause\"}");
    if (getuid() == 0)
        assert_string_equal(r, "{\"ok\": true, \"uid\": 0, \"admin\": true, \"verb\": 2}");
    free(r);
    r = exchange(path, srv, (uid_t)-1, "{\"cmd\": \"frobnicate\"}");
    assert_non_null(strstr(r, "\"ok\": false"));
    assert_non_null(strstr(r, "unknown command"));
    free(r);
    if (getuid() == 0) {
        /* nobody: may ask for status, may not pause; the server says so
         * without calling the handler. */
        r = exchange(path, srv, 65534, "{\"cmd\": \"status\"}");
        assert_string_equal(r, "{\"ok\": true, \"uid\": 65534, \"admin\": false, \"verb\": 0}");
        free(r);
        r = exchange(path, srv, 65534, "{\"cmd\": \"pause\"}");
        assert_non_null(strstr(r, "permission denied"));
        free(r);
    }
    corun_ctl_close(srv);
    assert_int_equal(access(path, F_OK), -1); /* the file is gone */
    /* A stale socket file (nobody listening) is replaced. */
    assert_int_equal(corun_ctl_listen(path, &acc, &srv), 0);
    corun_ctl_close(srv);
    assert_int_equal(corun_ctl_call(path, "{\"cmd\": \"status\"}", 100, &r), -ENOENT);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),  cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_permissions), cmocka_unit_test(test_buf),
        cmocka_unit_test(test_socket),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
