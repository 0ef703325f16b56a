/*
 * procsel-cgroup.c — the selector's cgroup knowledge: matching a process's
 * cgroup paths against the rules, and what CPUs its cpuset allows (the
 * baseline against which "pinned by its owner" is judged): the v1 cpuset
 * hierarchy where the process is in one, else the v2 cgroup's
 * cpuset.cpus.effective at /sys/fs/cgroup or at the hybrid mount
 * /sys/fs/cgroup/unified, else the online CPUs. Read through the root seam,
 * once per cpuset per scan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "procsel/procsel-internal.h"

/* @path is @rule or below it (whole components). */
static bool under(const char *path, const char *rule)
{
    size_t n = strlen(rule);

    if (!strcmp(rule, "/"))
        return true;
    return !strncmp(path, rule, n) && (path[n] == '\0' || path[n] == '/');
}

/* Any hierarchy's path in the /proc/PID/cgroup text @cg matches a rule. */
bool corun__procsel_cgroup_matches(struct corun_procsel *s, const char *cg)
{
    const char *line = cg;

    while (line && *line) {
        const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        const char *nl = strchr(line, '\n');
        char path[1024];
        size_t len;

        if (c2 && (!nl || c2 < nl)) {
            len = (size_t)((nl ? nl : c2 + 1 + strlen(c2 + 1)) - (c2 + 1));
            if (len < sizeof(path)) {
                memcpy(path, c2 + 1, len);
                path[len] = '\0';
                for (unsigned i = 0; i < s->ncgroups; i++)
                    if (under(path, s->cgroups[i]))
                        return true;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

/* The path of hierarchy @which ("cpuset" for v1, "" for v2) in @cg, copied
 * into @out; false when absent. */
static bool cgroup_path(const char *cg, const char *which, char *out, size_t len)
{
    const char *line = cg;
    size_t wl = strlen(which);

    while (line && *line) {
        const char *c1 = strchr(line, ':'), *nl = strchr(line, '\n');
        const char *ctl = c1 ? c1 + 1 : NULL, *c2 = ctl ? strchr(ctl, ':') : NULL;

        if (c2 && (!nl || c2 < nl)) {
            bool hit = false;

            if (!wl) {
                hit = c2 == ctl;
            } else {
                /* v1 lines may list several controllers: "3:cpu,cpuacct:/x". */
                for (const char *p = ctl; p < c2;) {
                    const char *comma = memchr(p, ',', (size_t)(c2 - p));
                    const char *e = comma ? comma : c2;

                    if ((size_t)(e - p) == wl && !strncmp(p, which, wl))
                        hit = true;
                    p = e + 1;
                }
            }
            if (hit) {
                size_t n = (size_t)((nl ? nl : c2 + 1 + strlen(c2 + 1)) - (c2 + 1));

                if (n >= len)
                    return false;
                memcpy(out, c2 + 1, n);
                out[n] = '\0';
                return true;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

/* Tries to read a CPU list file below the root into @set. */
static bool read_cpulist(struct corun_procsel *s, const char *path, struct corun_cpuset *set)
{
    char buf[4096];

    if (corun__read_text(s->rootfd, path, buf, sizeof(buf)) < 0)
        return false;
    corun__rstrip(buf);
    /* An empty effective list (a v2 cgroup without the controller) says
     * nothing: look further. */
    return buf[0] && corun_cpuset_parse(set, buf, NULL) == 0;
}

/*
 * The CPUs the process's cgroup allows: the v1 cpuset hierarchy where the
 * process is in one, else the v2 cgroup's cpuset.cpus.effective (at
 * /sys/fs/cgroup or at the hybrid mount /sys/fs/cgroup/unified), else the
 * online CPUs. Cached per cgroup for the scan. NULL on allocation failure.
 */
void corun__procsel_cgroup_key(const char *cg, char *key, size_t len)
{
    char cgpath[1024];

    if (cgroup_path(cg, "cpuset", cgpath, sizeof(cgpath)))
        snprintf(key, len, "1:%s", cgpath);
    else if (cgroup_path(cg, "", cgpath, sizeof(cgpath)))
        snprintf(key, len, "2:%s", cgpath);
    else
        snprintf(key, len, "0:");
}

/* @key is what cgroup_key() made: "1:" v1 cpuset path, "2:" v2 path, "0:". */
const struct corun_cpuset *corun__procsel_cgroup_cpus(struct corun_procsel *s, const char *key)
{
    const char *cgpath = key + 2;
    char path[1200];
    struct cg_cache *c;
    bool ok = false;

    for (size_t i = 0; i < s->ncg; i++)
        if (!strcmp(s->cg[i].path, key))
            return &s->cg[i].cpus;
    if (s->ncg == s->cap_cg) {
        size_t cap = s->cap_cg ? s->cap_cg * 2 : 8;
        struct cg_cache *n = realloc(s->cg, cap * sizeof(*n));

        if (!n)
            return NULL;
        s->cg = n;
        s->cap_cg = cap;
    }
    c = &s->cg[s->ncg];
    memset(c, 0, sizeof(*c));
    c->path = strdup(key);
    if (!c->path || corun_cpuset_init(&c->cpus, 64)) {
        free(c->path);
        return NULL;
    }
    if (key[0] == '1') {
        snprintf(path, sizeof(path), "sys/fs/cgroup/cpuset%s/cpuset.effective_cpus", cgpath);
        ok = read_cpulist(s, path, &c->cpus);
        if (!ok) {
            snprintf(path, sizeof(path), "sys/fs/cgroup/cpuset%s/cpuset.cpus", cgpath);
            ok = read_cpulist(s, path, &c->cpus);
        }
    } else if (key[0] == '2') {
        snprintf(path, sizeof(path), "sys/fs/cgroup%s/cpuset.cpus.effective", cgpath);
        ok = read_cpulist(s, path, &c->cpus);
        if (!ok) {
            snprintf(path, sizeof(path), "sys/fs/cgroup/unified%s/cpuset.cpus.effective", cgpath);
            ok = read_cpulist(s, path, &c->cpus);
        }
    }
    if (!ok)
        ok = read_cpulist(s, "sys/devices/system/cpu/online", &c->cpus);
    c->known = ok;
    s->ncg++;
    return &c->cpus;
}

void corun__procsel_cg_reset(struct corun_procsel *s)
{
    for (size_t i = 0; i < s->ncg; i++) {
        free(s->cg[i].path);
        corun_cpuset_release(&s->cg[i].cpus);
    }
    s->ncg = 0;
}
