/*
 * daemon-config.c — the daemon's settings: defaults, the INI file read with
 * libinih, and the one setter the file, the command line and the control
 * socket all go through, so that a value is validated the same way whatever
 * its source.
 *
 * libinih reports the first bad line but not why; we feed it lines ourselves
 * (ini_parse_stream with our reader) so that the setter's reason is attached
 * to the right line, and so that a line longer than inih's buffer is an error
 * rather than being split into two lines.
 */
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "corun/daemon.h"
#include "corun/policy.h"
#include "daemon/daemon-internal.h"

#define LINE_MAX_BYTES 1024

int corun_daemon_config_init(struct corun_daemon_config *c)
{
    memset(c, 0, sizeof(*c));
    c->interval_s = 1.0;
    c->max_migrations = 2;
    c->min_dwell = 3;
    c->confirm = 2;
    c->mem_follow = true;
    c->history = 32;
    c->sample_min_cpu = 1;
    c->policy = strdup("corun");
    c->actuator = strdup("affinity");
    c->sensor = strdup("auto");
    c->socket_path = strdup(CORUN_DAEMON_SOCKET_PATH);
    c->journal_dir = strdup("/run/corun");
    if (!c->policy || !c->actuator || !c->sensor || !c->socket_path || !c->journal_dir) {
        corun_daemon_config_release(c);
        return -ENOMEM;
    }
    return 0;
}

static void free_list(char **v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void corun_daemon_config_clear_selectors(struct corun_daemon_config *c)
{
    free_list(c->comms, c->ncomms);
    free_list(c->cgroups, c->ncgroups);
    free(c->uids);
    c->comms = c->cgroups = NULL;
    c->uids = NULL;
    c->ncomms = c->ncgroups = c->nuids = 0;
    c->min_cpu_percent = 0;
}

void corun_daemon_config_release(struct corun_daemon_config *c)
{
    if (!c)
        return;
    corun_daemon_config_clear_selectors(c);
    free(c->policy);
    free(c->actuator);
    free(c->sensor);
    free(c->socket_path);
    free(c->metrics_path);
    free(c->journal_dir);
    free(c->root);
    memset(c, 0, sizeof(*c));
}

static int why_fmt(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int why_fmt(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (why && len) {
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static int set_str(char **dst, const char *v)
{
    char *n = strdup(v);

    if (!n)
        return -ENOMEM;
    free(*dst);
    *dst = n;
    return 0;
}

static int push_str(char ***v, unsigned *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof(**v));

    if (!nv)
        return -ENOMEM;
    *v = nv;
    nv[*n] = strdup(s);
    if (!nv[*n])
        return -ENOMEM;
    (*n)++;
    return 0;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    double v;

    if (!*s)
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool parse_unsigned(const char *s, unsigned long max, unsigned *out)
{
    char *end;
    unsigned long v;

    if (!*s || *s == '-')
        return false;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false",
                                                                                "off"};

    for (size_t i = 0; i < CORUN_ARRAY_SIZE(yes); i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = true;
            return true;
        }
        if (!strcasecmp(s, no[i])) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* Names of backends: short words, checked against the registries when the
 * daemon starts (the registry may not hold a name this build lacks). */
static bool plain_name(const char *s)
{
    if (!*s || strlen(s) > 32)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            return false;
    return true;
}

static int set_daemon_key(struct corun_daemon_config *c, const char *key, const char *v, char *why,
                          size_t len)
{
    double d;

    if (!strcmp(key, "interval")) {
        if (!parse_double(v, &d) || d < 0.05 || d > 3600)
            return why_fmt(why, len, "interval: '%s' is not a number of seconds in 0.05..3600", v);
        c->interval_s = d;
        return 0;
    }
    if (!strcmp(key, "policy") || !strcmp(key, "actuator") || !strcmp(key, "sensor")) {
        if (!plain_name(v))
            return why_fmt(why, len, "%s: '%s' is not a name", key, v);
        /* A policy this build lacks is the file's mistake, found here so that
         * --check-config and SIGHUP name its line rather than the daemon
         * refusing to start on a file that checked out. */
        if (!strcmp(key, "policy") && !corun_policy_find(v))
            return why_fmt(why, len, "unknown policy '%s'", v);
        if (!strcmp(key, "actuator") && strcmp(v, "affinity") && strcmp(v, "cpuset"))
            return why_fmt(why, len, "actuator: '%s' is neither 'affinity' nor 'cpuset'", v);
        if (!strcmp(key, "sensor") && strcmp(v, "auto") && strcmp(v, "perf") && strcmp(v, "proc"))
            return why_fmt(why, len, "sensor: '%s' is not one of auto, perf, proc", v);
        return set_str(!strcmp(key, "policy")     ? &c->policy
                       : !strcmp(key, "actuator") ? &c->actuator
                                                  : &c->sensor,
                       v);
    }
    if (!strcmp(key, "socket") || !strcmp(key, "metrics") || !strcmp(key, "journal_dir")) {
        if (!strcmp(key, "metrics") && !*v) {
            free(c->metrics_path);
            c->metrics_path = NULL;
            return 0;
        }
        if (v[0] != '/')
            return why_fmt(why, len, "%s: '%s' is not an absolute path", key, v);
        if (!strcmp(key, "socket") && strlen(v) >= 108)
            return why_fmt(why, len, "socket: path longer than 107 bytes");
        return set_str(!strcmp(key, "socket")    ? &c->socket_path
                       : !strcmp(key, "metrics") ? &c->metrics_path
                                                 : &c->journal_dir,
                       v);
    }
    if (!strcmp(key, "admin_group")) {
        struct group *g;
        unsigned gid;

        if (!*v) {
            c->has_admin_gid = false;
            return 0;
        }
        g = getgrnam(v);
        if (g) {
            c->admin_gid = g->gr_gid;
        } else if (parse_unsigned(v, UINT_MAX - 1, &gid)) {
            c->admin_gid = (gid_t)gid;
        } else {
            return why_fmt(why, len, "admin_group: no such group '%s'", v);
        }
        c->has_admin_gid = true;
        return 0;
    }
    if (!strcmp(key, "max_migrations") || !strcmp(key, "min_dwell") || !strcmp(key, "confirm") ||
        !strcmp(key, "history")) {
        unsigned u;

        if (!parse_unsigned(v, 100000, &u) || (u == 0 && strcmp(key, "min_dwell")))
            return why_fmt(why, len, "%s: '%s' is not a %s integer up to 100000", key, v,
                           strcmp(key, "min_dwell") ? "positive" : "non-negative");
        *(!strcmp(key, "max_migrations") ? &c->max_migrations
          : !strcmp(key, "min_dwell")    ? &c->min_dwell
          : !strcmp(key, "confirm")      ? &c->confirm
                                         : &c->history) = u;
        return 0;
    }
    if (!strcmp(key, "mem_follow")) {
        if (!parse_bool(v, &c->mem_follow))
            return why_fmt(why, len, "mem_follow: '%s' is not yes or no", v);
        return 0;
    }
    if (!strcmp(key, "sample_min_cpu")) {
        if (!parse_double(v, &d) || d < 0 || d > 100000)
            return why_fmt(why, len, "sample_min_cpu: '%s' is not a percentage of one CPU", v);
        c->sample_min_cpu = d;
        return 0;
    }
    return why_fmt(why, len, "unknown key '%s' in [daemon]", key);
}

static int set_select_key(struct corun_daemon_config *c, const char *key, const char *v, char *why,
                          size_t len)
{
    if (!strcmp(key, "comm")) {
        if (!*v || strlen(v) > 255)
            return why_fmt(why, len, "comm: a pattern of 1 to 255 characters is needed");
        return push_str(&c->comms, &c->ncomms, v);
    }
    if (!strcmp(key, "cgroup")) {
        if (v[0] != '/')
            return why_fmt(why, len, "cgroup: '%s' is not a path from the cgroup root", v);
        return push_str(&c->cgroups, &c->ncgroups, v);
    }
    if (!strcmp(key, "user")) {
        struct passwd *pw = getpwnam(v);
        unsigned uid;
        uid_t *nu;

        if (pw)
            uid = pw->pw_uid;
        else if (!parse_unsigned(v, UINT_MAX - 1, &uid))
            return why_fmt(why, len, "user: no such user '%s'", v);
        nu = realloc(c->uids, (c->nuids + 1) * sizeof(*nu));
        if (!nu)
            return -ENOMEM;
        c->uids = nu;
        nu[c->nuids++] = (uid_t)uid;
        return 0;
    }
    if (!strcmp(key, "min_cpu")) {
        double d;

        if (!parse_double(v, &d) || d < 0 || d > 100000)
            return why_fmt(why, len, "min_cpu: '%s' is not a percentage of one CPU", v);
        c->min_cpu_percent = d;
        return 0;
    }
    if (!strcmp(key, "include_pinned")) {
        if (!parse_bool(v, &c->include_pinned))
            return why_fmt(why, len, "include_pinned: '%s' is not yes or no", v);
        return 0;
    }
    return why_fmt(why, len, "unknown key '%s' in [select]", key);
}

int corun_daemon_config_set(struct corun_daemon_config *c, const char *section, const char *key,
                            const char *value, char *why, size_t len)
{
    if (!c || !section || !key || !value)
        return why_fmt(why, len, "missing setting");
    if (!strcmp(section, "daemon"))
        return set_daemon_key(c, key, value, why, len);
    if (!strcmp(section, "select"))
        return set_select_key(c, key, value, why, len);
    if (!*section)
        return why_fmt(why, len, "'%s' outside a section: put it under [daemon] or [select]", key);
    return why_fmt(why, len, "unknown section [%s]", section);
}

/* ---- the file --------------------------------------------------------------- */

struct load_ctx {
    struct corun_daemon_config *c;
    FILE *f;
    unsigned line;     /* lines handed to inih so far */
    unsigned err_line; /* first error found by us; 0 none */
    char reason[256];
    int fatal;    /* -ENOMEM */
    int read_err; /* getline's errno as -errno (EISDIR for a folder); 0 none */
    char *buf;
    size_t cap;
};

/* inih's reader: one whole line per call. A line that does not fit inih's
 * buffer is recorded as an error and handed over cut (inih then sees a line
 * it may accept, but our error wins since it comes first). */
static char *reader(char *str, int num, void *stream)
{
    struct load_ctx *x = stream;
    ssize_t n;

    errno = 0;
    n = getline(&x->buf, &x->cap, x->f);
    if (n < 0) {
        if (ferror(x->f))
            x->read_err = errno ? -errno : -EIO;
        return NULL;
    }
    x->line++;
    if (n >= num - 1 && !x->err_line && !(n == num - 1 && x->buf[n - 1] == '\n')) {
        x->err_line = x->line;
        snprintf(x->reason, sizeof(x->reason), "line longer than %d characters", num - 2);
    }
    if (n > num - 1)
        n = num - 1;
    memcpy(str, x->buf, (size_t)n);
    str[n] = '\0';
    return str;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct load_ctx *x = user;
    char why[200];
    int err;

    if (x->err_line)
        return 1; /* keep only the first error */
    err = corun_daemon_config_set(x->c, section, name, value ? value : "", why, sizeof(why));
    if (err == -ENOMEM) {
        x->fatal = err;
        x->err_line = x->line;
        snprintf(x->reason, sizeof(x->reason), "out of memory");
        return 0;
    }
    if (err) {
        x->err_line = x->line;
        snprintf(x->reason, sizeof(x->reason), "%s", why);
        return 0;
    }
    return 1;
}

int corun_daemon_config_load(struct corun_daemon_config *c, const char *path,
                             struct corun_config_error *err)
{
    struct load_ctx x = {.c = c};
    struct corun_config_error dummy;
    int rc;

    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    if (!c || !path)
        return -EINVAL;
    x.f = fopen(path, "re");
    if (!x.f) {
        rc = -errno;
        snprintf(err->reason, sizeof(err->reason), "%s", corun_strerror(rc));
        return rc;
    }
    rc = ini_parse_stream(reader, &x, handler, &x);
    if (rc == 0 && ferror(x.f)) {
        rc = x.read_err ? x.read_err : -EIO;
        snprintf(err->reason, sizeof(err->reason), "%s", corun_strerror(rc));
    }
    fclose(x.f);
    free(x.buf);
    if (x.fatal)
        return x.fatal;
    if (x.err_line && (rc <= 0 || (unsigned)rc >= x.err_line)) {
        err->line = x.err_line;
        snprintf(err->reason, sizeof(err->reason), "%s", x.reason);
        return -EINVAL;
    }
    if (rc > 0) {
        /* inih's own finding: no '=' or ':' on a line, or an unclosed '['. */
        err->line = (unsigned)rc;
        snprintf(err->reason, sizeof(err->reason),
                 "syntax error: expected '[section]', 'key = value' or a comment");
        return -EINVAL;
    }
    return rc;
}

static int copy_list(char ***dst, unsigned *ndst, char *const *src, unsigned n)
{
    *dst = NULL;
    *ndst = 0;
    for (unsigned i = 0; i < n; i++)
        if (push_str(dst, ndst, src[i]))
            return -ENOMEM;
    return 0;
}

static int dup_opt(char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = strdup(src);
    return *dst ? 0 : -ENOMEM;
}

int corun__daemon_config_copy(struct corun_daemon_config *dst,
                              const struct corun_daemon_config *src)
{
    int err = 0;

    *dst = *src;
    dst->uids = NULL;
    err |= dup_opt(&dst->policy, src->policy);
    err |= dup_opt(&dst->actuator, src->actuator);
    err |= dup_opt(&dst->sensor, src->sensor);
    err |= dup_opt(&dst->socket_path, src->socket_path);
    err |= dup_opt(&dst->metrics_path, src->metrics_path);
    err |= dup_opt(&dst->journal_dir, src->journal_dir);
    err |= dup_opt(&dst->root, src->root);
    err |= copy_list(&dst->comms, &dst->ncomms, src->comms, src->ncomms);
    err |= copy_list(&dst->cgroups, &dst->ncgroups, src->cgroups, src->ncgroups);
    if (src->nuids) {
        dst->uids = malloc(src->nuids * sizeof(uid_t));
        if (dst->uids)
            memcpy(dst->uids, src->uids, src->nuids * sizeof(uid_t));
        else
            err = -ENOMEM;
    }
    if (err) {
        corun_daemon_config_release(dst);
        return -ENOMEM;
    }
    return 0;
}
