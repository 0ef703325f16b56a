/*
 * procsel.c — the process selector (see corun/procsel.h): one pass over /proc
 * below the root seam, rules applied cheapest first so that a scan of
 * thousands of processes reads little more than one stat file each.
 *
 * Order of the checks, and why: /proc/PID/stat alone tells kernel threads,
 * corun itself, the command name and the CPU time, so those rules go first;
 * /proc/PID/status (uid, Cpus_allowed_list) and /proc/PID/cgroup are read only
 * for processes still in the running, and the cgroup's cpuset once per
 * cgroup per scan.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "corun/procsel.h"

#define PF_KTHREAD_FLAG 0x00200000u

/* What the previous scan saw of a process, to measure CPU use over the
 * interval. Kept sorted by pid. */
struct prev_entry {
    pid_t pid;
    uint64_t start_ticks;
    uint64_t cpu_ticks;
};

/* One cgroup's allowed CPUs, cached for the length of one scan. */
struct cg_cache {
    char *path;
    struct corun_cpuset cpus;
    bool known;
};

struct corun_procsel {
    int rootfd;
    char **comms;
    unsigned ncomms;
    uid_t *uids;
    unsigned nuids;
    char **cgroups;
    unsigned ncgroups;
    double min_cpu_percent;
    bool include_pinned;
    pid_t self;
    bool (*is_ours)(void *user, pid_t pid, uint64_t start_ticks,
                    const struct corun_cpuset *allowed);
    void *user;
    long clk_tck;

    struct prev_entry *prev;
    size_t nprev;
    uint64_t prev_ns;

    struct cg_cache *cg;
    size_t ncg, cap_cg;
};

const char *corun_procsel_verdict_name(enum corun_procsel_verdict v)
{
    switch (v) {
    case CORUN_PROCSEL_SELECTED:
        return "selected";
    case CORUN_PROCSEL_NO_MATCH:
        return "matches no selector";
    case CORUN_PROCSEL_KERNEL_THREAD:
        return "kernel thread";
    case CORUN_PROCSEL_SELF:
        return "corun itself";
    case CORUN_PROCSEL_PINNED:
        return "pinned by its owner";
    case CORUN_PROCSEL_CPU_UNKNOWN:
        return "CPU use not measured yet";
    case CORUN_PROCSEL_GONE:
        return "exited";
    }
    return "unknown";
}

static char **dup_strings(const char *const *src, unsigned n)
{
    char **v = calloc(n ? n : 1, sizeof(*v));

    if (!v)
        return NULL;
    for (unsigned i = 0; i < n; i++) {
        v[i] = strdup(src[i] ? src[i] : "");
        if (!v[i]) {
            while (i--)
                free(v[i]);
            free(v);
            return NULL;
        }
    }
    return v;
}

static void free_strings(char **v, unsigned n)
{
    if (!v)
        return;
    for (unsigned i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int corun_procsel_open(const struct corun_procsel_opts *opts, struct corun_procsel **out)
{
    struct corun_procsel *s;
    int fd;

    if (!opts || !out)
        return -EINVAL;
    *out = NULL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    fd = corun__root_open(opts->root);
    if (fd < 0) {
        free(s);
        return fd;
    }
    s->rootfd = fd;
    s->comms = dup_strings(opts->comms, opts->ncomms);
    s->cgroups = dup_strings(opts->cgroups, opts->ncgroups);
    s->uids = calloc(opts->nuids ? opts->nuids : 1, sizeof(uid_t));
    if (!s->comms || !s->cgroups || !s->uids) {
        s->ncomms = s->comms ? opts->ncomms : 0;
        s->ncgroups = s->cgroups ? opts->ncgroups : 0;
        corun_procsel_close(s);
        return -ENOMEM;
    }
    s->ncomms = opts->ncomms;
    s->ncgroups = opts->ncgroups;
    s->nuids = opts->nuids;
    if (opts->nuids)
        memcpy(s->uids, opts->uids, opts->nuids * sizeof(uid_t));
    /* Strip trailing slashes so that "/a/" and "/a" select the same tree. */
    for (unsigned i = 0; i < s->ncgroups; i++) {
        size_t n = strlen(s->cgroups[i]);

        while (n > 1 && s->cgroups[i][n - 1] == '/')
            s->cgroups[i][--n] = '\0';
    }
    s->min_cpu_percent = opts->min_cpu_percent;
    s->include_pinned = opts->include_pinned;
    s->self = opts->self;
    s->is_ours = opts->is_ours;
    s->user = opts->user;
    s->clk_tck = sysconf(_SC_CLK_TCK);
    if (s->clk_tck <= 0)
        s->clk_tck = 100;
    *out = s;
    return 0;
}

static void cg_cache_reset(struct corun_procsel *s)
{
    for (size_t i = 0; i < s->ncg; i++) {
        free(s->cg[i].path);
        corun_cpuset_release(&s->cg[i].cpus);
    }
    s->ncg = 0;
}

void corun_procsel_close(struct corun_procsel *s)
{
    if (!s)
        return;
    cg_cache_reset(s);
    free(s->cg);
    free(s->prev);
    free_strings(s->comms, s->ncomms);
    free_strings(s->cgroups, s->ncgroups);
    free(s->uids);
    if (s->rootfd >= 0)
        close(s->rootfd);
    free(s);
}

/*
 * Parses /proc/PID/stat into @p: comm, ppid, flags, CPU ticks, threads,
 * start time. The command name may hold spaces and parentheses, so the fields
 * are counted from the last ')'. Returns 0, -ESRCH when the process is gone,
 * -EINVAL for a line it cannot parse.
 */
static int read_stat(struct corun_procsel *s, pid_t pid, struct corun_proc_info *p,
                     unsigned *flags)
{
    char path[64], buf[1024];
    char *open_paren, *close_paren, *f;
    unsigned long long v[40] = {0};
    ssize_t n;
    size_t clen;
    int field;

    snprintf(path, sizeof(path), "proc/%d/stat", (int)pid);
    n = corun__read_text(s->rootfd, path, buf, sizeof(buf));
    if (n < 0)
        return n == -ENOENT || n == -ESRCH ? -ESRCH : (int)n;
    open_paren = strchr(buf, '(');
    close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return -EINVAL;
    clen = (size_t)(close_paren - open_paren - 1);
    if (clen >= sizeof(p->comm))
        clen = sizeof(p->comm) - 1;
    memcpy(p->comm, open_paren + 1, clen);
    p->comm[clen] = '\0';
    /* Field 3 (state) follows ") "; fields are numbered from 1 as in proc(5). */
    f = close_paren + 2;
    if (f > buf + n)
        return -EINVAL;
    for (field = 3; field <= 39 && *f; field++) {
        char *end;

        if (field == 3) {
            f++;
        } else {
            v[field] = strtoull(f, &end, 10);
            if (end == f && *f != '-')
                return -EINVAL;
            f = end;
        }
        while (*f == ' ')
            f++;
    }
    if (field <= 22)
        return -EINVAL;
    p->pid = pid;
    p->ppid = (pid_t)v[4];
    *flags = (unsigned)v[9];
    p->cpu_ticks = v[14] + v[15];
    p->nthreads = (unsigned)v[20];
    p->start_ticks = v[22];
    p->last_cpu = field > 39 ? (int)v[39] : -1;
    return 0;
}

/* True when the command line is empty: kernel threads have none. */
static bool cmdline_empty(struct corun_procsel *s, pid_t pid)
{
    char path[64], buf[8];

    snprintf(path, sizeof(path), "proc/%d/cmdline", (int)pid);
    return corun__read_text(s->rootfd, path, buf, sizeof(buf)) == 0;
}

/*
 * Reads the real uid and Cpus_allowed_list from /proc/PID/status. @allowed is
 * filled when the line is there. 0, -ESRCH, -ENOMEM.
 */
static int read_status(struct corun_procsel *s, pid_t pid, uid_t *uid,
                       struct corun_cpuset *allowed, bool *have_allowed)
{
    char path[64], *text = NULL, *line, *save = NULL;
    int err;

    *have_allowed = false;
    snprintf(path, sizeof(path), "proc/%d/status", (int)pid);
    err = corun__read_alloc(s->rootfd, path, &text, NULL);
    if (err)
        return err == -ENOENT ? -ESRCH : err;
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "Uid:", 4)) {
            *uid = (uid_t)strtoul(line + 4, NULL, 10);
        } else if (!strncmp(line, "Cpus_allowed_list:", 18)) {
            if (corun_cpuset_parse(allowed, line + 18, NULL) == 0)
                *have_allowed = true;
        }
    }
    free(text);
    return 0;
}

/* Reads /proc/PID/cgroup into a malloc'd string in *@out. 0 or -errno. */
static int read_cgroups(struct corun_procsel *s, pid_t pid, char **out)
{
    char path[64];
    int err;

    snprintf(path, sizeof(path), "proc/%d/cgroup", (int)pid);
    err = corun__read_alloc(s->rootfd, path, out, NULL);
    return err == -ENOENT ? -ESRCH : err;
}

/* @path is @rule or below it (whole components). */
static bool under(const char *path, const char *rule)
{
    size_t n = strlen(rule);

    if (!strcmp(rule, "/"))
        return true;
    return !strncmp(path, rule, n) && (path[n] == '\0' || path[n] == '/');
}

/* Any hierarchy's path in the /proc/PID/cgroup text @cg matches a rule. */
static bool cgroup_matches(struct corun_procsel *s, const char *cg)
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
static const struct corun_cpuset *cgroup_cpus(struct corun_procsel *s, const char *cg)
{
    char key[1100], cgpath[1024], path[1200];
    struct cg_cache *c;
    bool ok = false;

    if (cgroup_path(cg, "cpuset", cgpath, sizeof(cgpath)))
        snprintf(key, sizeof(key), "1:%s", cgpath);
    else if (cgroup_path(cg, "", cgpath, sizeof(cgpath)))
        snprintf(key, sizeof(key), "2:%s", cgpath);
    else
        snprintf(key, sizeof(key), "0:");
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
            snprintf(path, sizeof(path), "sys/fs/cgroup/unified%s/cpuset.cpus.effective",
                     cgpath);
            ok = read_cpulist(s, path, &c->cpus);
        }
    }
    if (!ok)
        ok = read_cpulist(s, "sys/devices/system/cpu/online", &c->cpus);
    c->known = ok;
    s->ncg++;
    return &c->cpus;
}

/* The previous scan's record of (@pid, @start), or NULL. */
static const struct prev_entry *prev_find(const struct corun_procsel *s, pid_t pid,
                                          uint64_t start)
{
    size_t lo = 0, hi = s->nprev;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (s->prev[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->nprev && s->prev[lo].pid == pid && s->prev[lo].start_ticks == start)
        return &s->prev[lo];
    return NULL;
}

/*
 * Reads everything about @pid that the rules need and decides. @cpu_known
 * says whether the min_cpu rule could be evaluated. Returns 0 with
 * p->verdict set, -ESRCH when the process vanished, -ENOMEM.
 */
static int judge(struct corun_procsel *s, pid_t pid, uint64_t dt_ns, bool all,
                 struct corun_proc_info *p)
{
    struct corun_cpuset allowed = {0}, cg_allowed = {0};
    const struct prev_entry *pe;
    bool have_allowed = false, need_status, need_cg;
    char *cg = NULL;
    unsigned flags;
    int err, mine;

    memset(p, 0, sizeof(*p));
    p->uid = (uid_t)-1;
    p->cpu_percent = NAN;
    err = read_stat(s, pid, p, &flags);
    if (err)
        return err == -EINVAL ? -ESRCH : err;
    pe = prev_find(s, pid, p->start_ticks);
    if (pe && dt_ns)
        p->cpu_percent = (double)(p->cpu_ticks - pe->cpu_ticks) / (double)s->clk_tck * 1e11 /
                         (double)dt_ns;

    if ((flags & PF_KTHREAD_FLAG) || pid == 2 || (p->ppid == 2 && cmdline_empty(s, pid))) {
        p->verdict = CORUN_PROCSEL_KERNEL_THREAD;
        return 0;
    }
    if (s->self && pid == s->self) {
        p->verdict = CORUN_PROCSEL_SELF;
        if (!all)
            return 0;
        /* For @all, read on to fill what is known of it; the verdict stays. */
    }
    p->verdict = CORUN_PROCSEL_SELECTED;
    if (!s->ncomms && !s->nuids && !s->ncgroups && s->min_cpu_percent <= 0)
        p->verdict = CORUN_PROCSEL_NO_MATCH;
    if (s->ncomms && p->verdict == CORUN_PROCSEL_SELECTED) {
        bool hit = false;

        for (unsigned i = 0; i < s->ncomms && !hit; i++)
            hit = fnmatch(s->comms[i], p->comm, 0) == 0;
        if (!hit)
            p->verdict = CORUN_PROCSEL_NO_MATCH;
    }
    if (s->min_cpu_percent > 0 && p->verdict == CORUN_PROCSEL_SELECTED) {
        if (isnan(p->cpu_percent))
            p->verdict = CORUN_PROCSEL_CPU_UNKNOWN;
        else if (p->cpu_percent < s->min_cpu_percent)
            p->verdict = CORUN_PROCSEL_NO_MATCH;
    }
    if (p->verdict != CORUN_PROCSEL_SELECTED && !all)
        return 0;

    /* Only processes still in the running (or every one, for @all) cost the
     * reads below. */
    need_status = true;
    need_cg = s->ncgroups || !s->include_pinned || all;
    if (corun_cpuset_init(&allowed, 64))
        return -ENOMEM;
    mine = corun_cpuset_init(&cg_allowed, 64);
    if (mine) {
        corun_cpuset_release(&allowed);
        return mine;
    }
    if (need_status) {
        err = read_status(s, pid, &p->uid, &allowed, &have_allowed);
        if (err)
            goto out_release;
    }
    if (s->nuids && p->verdict == CORUN_PROCSEL_SELECTED) {
        bool hit = false;

        for (unsigned i = 0; i < s->nuids && !hit; i++)
            hit = s->uids[i] == p->uid;
        if (!hit)
            p->verdict = CORUN_PROCSEL_NO_MATCH;
    }
    if (need_cg) {
        err = read_cgroups(s, pid, &cg);
        if (err)
            goto out_release;
    }
    if (s->ncgroups && p->verdict == CORUN_PROCSEL_SELECTED && !cgroup_matches(s, cg))
        p->verdict = CORUN_PROCSEL_NO_MATCH;
    if (cg && have_allowed) {
        const struct corun_cpuset *cgcpus = cgroup_cpus(s, cg);

        if (!cgcpus) {
            err = -ENOMEM;
            goto out_release;
        }
        if (corun_cpuset_count(cgcpus) && !corun_cpuset_copy(&cg_allowed, &allowed)) {
            corun_cpuset_and(&cg_allowed, cgcpus);
            p->pinned = corun_cpuset_count(&cg_allowed) < corun_cpuset_count(cgcpus);
        }
    }
    if (s->self && pid == s->self)
        p->verdict = CORUN_PROCSEL_SELF;
    if (p->pinned && !s->include_pinned && p->verdict == CORUN_PROCSEL_SELECTED &&
        !(s->is_ours && s->is_ours(s->user, pid, p->start_ticks, &allowed)))
        p->verdict = CORUN_PROCSEL_PINNED;
    err = 0;
out_release:
    free(cg);
    corun_cpuset_release(&cg_allowed);
    corun_cpuset_release(&allowed);
    return err;
}

static int cmp_info(const void *a, const void *b)
{
    const struct corun_proc_info *x = a, *y = b;

    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_prev(const void *a, const void *b)
{
    const struct prev_entry *x = a, *y = b;

    return (x->pid > y->pid) - (x->pid < y->pid);
}

int corun_procsel_read_one(struct corun_procsel *s, pid_t pid, struct corun_proc_info *out)
{
    int err;
    double saved = s->min_cpu_percent;

    s->min_cpu_percent = 0;
    err = judge(s, pid, 0, true, out);
    s->min_cpu_percent = saved;
    cg_cache_reset(s);
    if (!err && out->verdict != CORUN_PROCSEL_KERNEL_THREAD && out->verdict != CORUN_PROCSEL_SELF)
        out->verdict = CORUN_PROCSEL_SELECTED;
    return err;
}

/* Appends @p to the growing array *@v. 0 or -ENOMEM. */
static int push(struct corun_proc_info **v, size_t *n, size_t *cap,
                const struct corun_proc_info *p)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        struct corun_proc_info *nv = realloc(*v, c * sizeof(*nv));

        if (!nv)
            return -ENOMEM;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = *p;
    return 0;
}

int corun_procsel_scan(struct corun_procsel *s, uint64_t now_ns, bool all,
                       struct corun_proc_info **out, size_t *n)
{
    struct corun_proc_info *v = NULL, p;
    struct prev_entry *seen = NULL;
    size_t nv = 0, cap = 0, nseen = 0, capseen = 0;
    uint64_t dt_ns = s->nprev && now_ns > s->prev_ns ? now_ns - s->prev_ns : 0;
    struct dirent *de;
    DIR *dir;
    int fd, err = 0;

    *out = NULL;
    *n = 0;
    fd = corun__root_openat(s->rootfd, "proc", O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return fd;
    dir = fdopendir(fd);
    if (!dir) {
        err = -errno;
        close(fd);
        return err;
    }
    while ((de = readdir(dir))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);

        if (*end || pid <= 0 || end == de->d_name)
            continue;
        err = judge(s, (pid_t)pid, dt_ns, all, &p);
        if (err == -ESRCH) {
            err = 0;
            continue; /* it exited while we looked: nothing to manage */
        }
        if (err)
            goto out_free;
        if (nseen == capseen) {
            size_t c = capseen ? capseen * 2 : 256;
            struct prev_entry *ns = realloc(seen, c * sizeof(*ns));

            if (!ns) {
                err = -ENOMEM;
                goto out_free;
            }
            seen = ns;
            capseen = c;
        }
        seen[nseen++] = (struct prev_entry){p.pid, p.start_ticks, p.cpu_ticks};
        if (p.verdict == CORUN_PROCSEL_KERNEL_THREAD)
            continue;
        if (all || p.verdict == CORUN_PROCSEL_SELECTED) {
            err = push(&v, &nv, &cap, &p);
            if (err)
                goto out_free;
        }
    }
    qsort(v, nv, sizeof(*v), cmp_info);
    /* readdir of /proc gives pids in increasing order, but sort anyway: the
     * lookup in prev_find() depends on it. */
    qsort(seen, nseen, sizeof(*seen), cmp_prev);
    free(s->prev);
    s->prev = seen;
    s->nprev = nseen;
    s->prev_ns = now_ns;
    seen = NULL;
    *out = v;
    *n = nv;
    v = NULL;
out_free:
    cg_cache_reset(s);
    closedir(dir);
    free(seen);
    free(v);
    return err;
}
