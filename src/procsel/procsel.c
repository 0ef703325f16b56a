/*
 * procsel.c — the process selector (see corun/procsel.h): one pass over /proc
 * below the root seam, rules applied cheapest first so that a scan of
 * thousands of processes reads little more than one stat file each.
 *
 * Order of the checks, and why: /proc/PID/stat alone tells kernel threads,
 * corun itself and the command name, so those rules go first;
 * /proc/PID/status (uid, Cpus_allowed_list) and /proc/PID/cgroup are read only
 * for processes still in the running, and the cgroup's cpuset once per
 * cgroup per scan. A process judged before is only revisited (its CPU time
 * through a kept descriptor, its affinity through one system call) until
 * its turn for a full judgement comes again; see struct tracked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"
#include "corun/procsel.h"
#include "procsel/procsel-internal.h"

#define PF_KTHREAD_FLAG 0x00200000u

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
    s->live = !opts->root || !strcmp(opts->root, "/");
    s->recheck = opts->recheck_scans ? opts->recheck_scans : 30;
    s->clk_tck = sysconf(_SC_CLK_TCK);
    if (s->clk_tck <= 0)
        s->clk_tck = 100;
    *out = s;
    return 0;
}

static void tracked_release(struct tracked *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    free(t->cg);
    t->cg = NULL;
}

void corun_procsel_close(struct corun_procsel *s)
{
    if (!s)
        return;
    corun__procsel_cg_reset(s);
    free(s->cg);
    if (s->mask)
        CPU_FREE(s->mask);
    for (size_t i = 0; i < s->nprev; i++)
        tracked_release(&s->prev[i]);
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
static int read_stat(struct corun_procsel *s, pid_t pid, struct corun_proc_info *p, unsigned *flags)
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
static int read_status(struct corun_procsel *s, pid_t pid, uid_t *uid, struct corun_cpuset *allowed,
                       bool *have_allowed)
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

/* The entry for @pid in the previous scan, or NULL. */
static struct tracked *tracked_find(struct corun_procsel *s, pid_t pid)
{
    size_t lo = 0, hi = s->nprev;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (s->prev[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nprev && s->prev[lo].pid == pid ? &s->prev[lo] : NULL;
}

/*
 * Reads the cumulative CPU time of @t's process in ns: through the kept
 * descriptor when there is one, else by opening the file. schedstat (first
 * field, ns) is four times cheaper to read than stat but counts only the main
 * thread, so it is used for single-threaded processes only. 0, -ESRCH when
 * the process is gone, -EINVAL for a file it cannot parse.
 */
static int read_cpu(struct corun_procsel *s, struct tracked *t, uint64_t *ns)
{
    char path[64], buf[1024];
    ssize_t n;

    if (t->fd >= 0) {
        n = pread(t->fd, buf, sizeof(buf) - 1, 0);
        if (n < 0)
            return -ESRCH;
        buf[n] = '\0';
    } else {
        snprintf(path, sizeof(path), "proc/%d/%s", (int)t->pid, t->fd_stat ? "stat" : "schedstat");
        n = corun__read_text(s->rootfd, path, buf, sizeof(buf));
        if (n < 0)
            return n == -ENOENT ? -ESRCH : (int)n;
    }
    if (!t->fd_stat) {
        char *end;

        *ns = strtoull(buf, &end, 10);
        return end == buf ? -EINVAL : 0;
    } else {
        /* utime and stime are fields 14 and 15, counted after the last ')'. */
        char *f = strrchr(buf, ')');
        unsigned long long ut, st;

        if (!f ||
            sscanf(f + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
            return -EINVAL;
        *ns = (ut + st) * (1000000000ull / (uint64_t)s->clk_tck);
        return 0;
    }
}

/* Chooses where @t's CPU time is read from and, for a candidate, keeps the
 * file open (unless descriptors run out: then it is opened each scan). */
static void cpu_source(struct corun_procsel *s, struct tracked *t, bool keep)
{
    char path[64];

    if (t->fd >= 0)
        return;
    t->fd_stat = t->info.nthreads != 1;
    if (!t->fd_stat) {
        snprintf(path, sizeof(path), "proc/%d/schedstat", (int)t->pid);
        t->fd = corun__root_openat(s->rootfd, path, O_RDONLY);
        if (t->fd < 0) {
            t->fd_stat = true; /* no schedstat in this kernel or tree */
            t->fd = -1;
        } else if (!keep) {
            close(t->fd);
            t->fd = -1;
        }
    }
    if (t->fd_stat && keep) {
        snprintf(path, sizeof(path), "proc/%d/stat", (int)t->pid);
        t->fd = corun__root_openat(s->rootfd, path, O_RDONLY);
        if (t->fd < 0)
            t->fd = -1;
    }
}

/* Measures @t's CPU use since the last scan into t->info.cpu_percent (NaN
 * without a previous reading). 0 or -ESRCH. */
static int measure(struct corun_procsel *s, struct tracked *t, uint64_t dt_ns)
{
    uint64_t ns;
    int err = read_cpu(s, t, &ns);

    t->info.cpu_percent = NAN;
    if (err) {
        t->have_cpu = false;
        return err == -ESRCH ? err : 0;
    }
    if (t->have_cpu && dt_ns && ns >= t->cpu_ns)
        t->info.cpu_percent = (double)(ns - t->cpu_ns) * 100 / (double)dt_ns;
    t->cpu_ns = ns;
    t->have_cpu = true;
    return 0;
}

/* The final verdict from the rules' verdict, CPU use and pinning. */
static enum corun_procsel_verdict combine(struct corun_procsel *s, struct tracked *t,
                                          const struct corun_cpuset *allowed)
{
    struct corun_proc_info *p = &t->info;
    bool ours;

    if (t->base != CORUN_PROCSEL_SELECTED)
        return t->base;
    if (s->min_cpu_percent > 0) {
        if (isnan(p->cpu_percent))
            return CORUN_PROCSEL_CPU_UNKNOWN;
        if (p->cpu_percent < s->min_cpu_percent)
            return CORUN_PROCSEL_NO_MATCH;
    }
    if (s->include_pinned)
        return CORUN_PROCSEL_SELECTED;
    /* On the live root, asked of a mask that is not narrow too: one corun
     * set that its owner has widened is no longer pinned, and only the
     * caller knows it changed. A recorded tree's masks do not follow what
     * corun applied. */
    ours = allowed && s->is_ours && (p->pinned || s->live) &&
           s->is_ours(s->user, p->pid, p->start_ticks, allowed);
    return p->pinned && !ours ? CORUN_PROCSEL_PINNED : CORUN_PROCSEL_SELECTED;
}

/* Whether @allowed is narrower than what the cpuset of key @cgkey allows. */
static int narrower(struct corun_procsel *s, const char *cgkey, const struct corun_cpuset *allowed,
                    bool *pinned)
{
    const struct corun_cpuset *cgcpus = corun__procsel_cgroup_cpus(s, cgkey);
    struct corun_cpuset both = {0};

    *pinned = false;
    if (!cgcpus)
        return -ENOMEM;
    if (!corun_cpuset_count(cgcpus))
        return 0;
    if (corun_cpuset_copy(&both, allowed))
        return -ENOMEM;
    corun_cpuset_and(&both, cgcpus);
    *pinned = corun_cpuset_count(&both) < corun_cpuset_count(cgcpus);
    corun_cpuset_release(&both);
    return 0;
}

/*
 * Reads everything about @t->pid that the rules need and decides: the full
 * judgement, for a process not seen before or due for a recheck. @t keeps
 * what the next scans need. Returns 0, -ESRCH when the process vanished,
 * -ENOMEM.
 */
static int judge(struct corun_procsel *s, struct tracked *t, uint64_t dt_ns, bool all)
{
    struct corun_proc_info *p = &t->info;
    struct corun_cpuset allowed = {0};
    bool have_allowed = false, candidate;
    char *cg = NULL, key[1100];
    pid_t pid = t->pid;
    uint64_t start = t->start_ticks;
    unsigned flags = 0;
    int err;

    memset(p, 0, sizeof(*p));
    p->uid = (uid_t)-1;
    p->cpu_percent = NAN;
    err = read_stat(s, pid, p, &flags);
    if (err)
        return err == -EINVAL ? -ESRCH : err;
    if (start != p->start_ticks) {
        /* A new process, or the pid was reused: forget the old one. */
        tracked_release(t);
        t->have_cpu = false;
        t->start_ticks = p->start_ticks;
    }
    if ((flags & PF_KTHREAD_FLAG) || pid == 2 || (p->ppid == 2 && cmdline_empty(s, pid))) {
        t->base = p->verdict = CORUN_PROCSEL_KERNEL_THREAD;
        tracked_release(t);
        return 0;
    }
    t->base = CORUN_PROCSEL_SELECTED;
    if (!s->ncomms && !s->nuids && !s->ncgroups && s->min_cpu_percent <= 0)
        t->base = CORUN_PROCSEL_NO_MATCH;
    if (s->ncomms && t->base == CORUN_PROCSEL_SELECTED) {
        bool hit = false;

        for (unsigned i = 0; i < s->ncomms && !hit; i++)
            hit = fnmatch(s->comms[i], p->comm, 0) == 0;
        if (!hit)
            t->base = CORUN_PROCSEL_NO_MATCH;
    }
    if (s->self && pid == s->self)
        t->base = CORUN_PROCSEL_SELF;
    candidate = t->base == CORUN_PROCSEL_SELECTED;
    if (!candidate && !all) {
        tracked_release(t);
        p->verdict = t->base;
        return 0;
    }
    /* Candidates keep their CPU-time file open for the scans to come. */
    cpu_source(s, t, candidate);
    err = measure(s, t, dt_ns);
    if (err)
        return err;
    if (corun_cpuset_init(&allowed, 64))
        return -ENOMEM;
    err = read_status(s, pid, &p->uid, &allowed, &have_allowed);
    if (err)
        goto out_release;
    if (s->nuids && t->base == CORUN_PROCSEL_SELECTED) {
        bool hit = false;

        for (unsigned i = 0; i < s->nuids && !hit; i++)
            hit = s->uids[i] == p->uid;
        if (!hit)
            t->base = CORUN_PROCSEL_NO_MATCH;
    }
    err = read_cgroups(s, pid, &cg);
    if (err)
        goto out_release;
    if (s->ncgroups && t->base == CORUN_PROCSEL_SELECTED && !corun__procsel_cgroup_matches(s, cg))
        t->base = CORUN_PROCSEL_NO_MATCH;
    corun__procsel_cgroup_key(cg, key, sizeof(key));
    free(t->cg);
    t->cg = strdup(key);
    if (!t->cg) {
        err = -ENOMEM;
        goto out_release;
    }
    if (have_allowed) {
        err = narrower(s, t->cg, &allowed, &p->pinned);
        if (err)
            goto out_release;
    }
    p->verdict = combine(s, t, have_allowed ? &allowed : NULL);
    if (t->base != CORUN_PROCSEL_SELECTED)
        tracked_release(t); /* not a candidate: nothing to keep open */
    err = 0;
out_release:
    free(cg);
    corun_cpuset_release(&allowed);
    return err;
}

/* The live process's affinity through the syscall seam, into @set. The
 * kernel's mask is kept in the selector and grown when the machine has more
 * CPUs than it holds (EINVAL). */
static int live_affinity(struct corun_procsel *s, pid_t pid, struct corun_cpuset *set)
{
    for (;;) {
        size_t words;

        if (!s->mask) {
            s->mask_ncpus = s->mask_ncpus ? s->mask_ncpus * 4 : 1024;
            if (s->mask_ncpus > (1u << 22))
                return -EINVAL;
            s->mask = CPU_ALLOC(s->mask_ncpus);
            if (!s->mask)
                return -ENOMEM;
        }
        if (corun__sys.sched_getaffinity(pid, CPU_ALLOC_SIZE(s->mask_ncpus), s->mask) != 0) {
            int err = -errno;

            if (err != -EINVAL)
                return err;
            CPU_FREE(s->mask);
            s->mask = NULL;
            continue;
        }
        /* cpu_set_t is an array of unsigned longs, bit i of word w is CPU
         * w * 64 + i on the 64-bit machines this runs on. */
        words = CPU_ALLOC_SIZE(s->mask_ncpus) / sizeof(uint64_t);
        if (corun_cpuset_reserve(set, (unsigned)(words * 64)))
            return -ENOMEM;
        corun_cpuset_zero(set);
        memcpy(set->words, s->mask, words * sizeof(uint64_t));
        return 0;
    }
}

/*
 * The cheap pass for a process judged before: its CPU use and, on the live
 * root, whether its owner pinned it since (one sched_getaffinity). Returns 0,
 * -ESRCH when it is gone, -ENOMEM.
 */
static int revisit(struct corun_procsel *s, struct tracked *t, uint64_t dt_ns)
{
    struct corun_cpuset allowed = {0};
    bool have = false;
    int err;

    if (t->base != CORUN_PROCSEL_SELECTED) {
        t->info.verdict = t->base; /* a known non-candidate costs nothing */
        return 0;
    }
    err = measure(s, t, dt_ns);
    if (err)
        return err;
    if (t->base == CORUN_PROCSEL_SELECTED && s->live && t->cg) {
        if (corun_cpuset_init(&allowed, 64))
            return -ENOMEM;
        err = live_affinity(s, t->pid, &allowed);
        if (err == -ESRCH)
            goto out_release;
        if (!err) {
            have = true;
            err = narrower(s, t->cg, &allowed, &t->info.pinned);
            if (err)
                goto out_release;
        }
    }
    t->info.verdict = combine(s, t, have ? &allowed : NULL);
    err = 0;
out_release:
    corun_cpuset_release(&allowed);
    return err;
}

static int cmp_info(const void *a, const void *b)
{
    const struct corun_proc_info *x = a, *y = b;

    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_tracked(const void *a, const void *b)
{
    const struct tracked *x = a, *y = b;

    return (x->pid > y->pid) - (x->pid < y->pid);
}

int corun_procsel_read_one(struct corun_procsel *s, pid_t pid, struct corun_proc_info *out)
{
    struct tracked t = {.pid = pid, .fd = -1};
    double saved = s->min_cpu_percent;
    int err;

    s->min_cpu_percent = 0;
    err = judge(s, &t, 0, true);
    s->min_cpu_percent = saved;
    tracked_release(&t);
    corun__procsel_cg_reset(s);
    if (err)
        return err;
    *out = t.info;
    out->cpu_percent = NAN;
    if (t.base == CORUN_PROCSEL_SELF || t.base == CORUN_PROCSEL_KERNEL_THREAD)
        out->verdict = t.base;
    else
        out->verdict = CORUN_PROCSEL_SELECTED;
    return 0;
}

/* Reads the stat of (@pid, @start_ticks) into @p. 0, -ESRCH when it is
 * gone or the pid was reused, -EINVAL. */
static int read_stat_of(struct corun_procsel *s, pid_t pid, uint64_t start_ticks,
                        struct corun_proc_info *p)
{
    unsigned flags;
    int err = read_stat(s, pid, p, &flags);

    if (err)
        return err;
    return p->start_ticks == start_ticks ? 0 : -ESRCH; /* else the pid was reused */
}

int corun_procsel_last_cpu(struct corun_procsel *s, pid_t pid, uint64_t start_ticks, int *cpu)
{
    struct corun_proc_info p;
    int err = read_stat_of(s, pid, start_ticks, &p);

    if (!err)
        *cpu = p.last_cpu;
    return err;
}

/* Adds the schedstat at @path to @out. 0, or the read's -errno. */
static int add_schedstat(struct corun_procsel *s, const char *path, struct corun_proc_sched *out)
{
    char buf[128];
    uint64_t run, delay;
    ssize_t n = corun__read_text(s->rootfd, path, buf, sizeof(buf));

    if (n < 0)
        return (int)n;
    if (corun__proc_schedstat_parse(buf, &run, &delay))
        return -EINVAL;
    out->run_ns += run;
    out->delay_ns += delay;
    out->have_sched = true;
    return 0;
}

/* Sums the schedstat of every thread of @pid alive now into @out (a thread
 * that exits meanwhile is left out). 0 or -ENOMEM; have_sched tells whether
 * any was read. */
static int sum_threads(struct corun_procsel *s, pid_t pid, struct corun_proc_sched *out)
{
    char path[96];
    struct dirent *de;
    DIR *dir;
    int fd;

    snprintf(path, sizeof(path), "proc/%d/task", (int)pid);
    fd = corun__root_openat(s->rootfd, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return 0;
    dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return -ENOMEM;
    }
    while ((de = readdir(dir))) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);

        if (*end || tid <= 0 || end == de->d_name)
            continue;
        snprintf(path, sizeof(path), "proc/%d/task/%ld/schedstat", (int)pid, tid);
        add_schedstat(s, path, out);
    }
    closedir(dir);
    return 0;
}

int corun_procsel_sched(struct corun_procsel *s, pid_t pid, uint64_t start_ticks,
                        struct corun_proc_sched *out)
{
    struct corun_proc_info p;
    char path[64];
    int err = read_stat_of(s, pid, start_ticks, &p);

    if (err)
        return err;
    *out = (struct corun_proc_sched){.last_cpu = p.last_cpu, .nthreads = p.nthreads};
    /* A single thread's schedstat is the process's: one read, not three. */
    if (p.nthreads == 1) {
        snprintf(path, sizeof(path), "proc/%d/schedstat", (int)pid);
        add_schedstat(s, path, out);
        return 0;
    }
    return sum_threads(s, pid, out);
}

double corun_procsel_cpus_wanted(const struct corun_proc_sched *before,
                                 const struct corun_proc_sched *after, uint64_t dt_ns)
{
    unsigned threads;
    double w;

    if (!before || !after || !before->have_sched || !after->have_sched || !dt_ns ||
        after->run_ns < before->run_ns || after->delay_ns < before->delay_ns)
        return NAN;
    w = (double)(after->run_ns - before->run_ns + after->delay_ns - before->delay_ns) /
        (double)dt_ns;
    /* A wait is counted when it ends, whole: one that began before
     * @before lands in this interval in full. No thread asks for more than
     * one CPU, so no more than one CPU a thread is counted. */
    threads = before->nthreads > after->nthreads ? before->nthreads : after->nthreads;
    return threads && w > threads ? threads : w;
}

/* Appends @p to the growing array *@v. 0 or -ENOMEM. */
static int push(void **v, size_t size, size_t *n, size_t *cap, const void *p)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        void *nv = realloc(*v, c * size);

        if (!nv)
            return -ENOMEM;
        *v = nv;
        *cap = c;
    }
    memcpy((char *)*v + (*n)++ * size, p, size);
    return 0;
}

int corun_procsel_scan(struct corun_procsel *s, uint64_t now_ns, bool all,
                       struct corun_proc_info **out, size_t *n)
{
    struct corun_proc_info *v = NULL;
    struct tracked *cur = NULL;
    size_t nv = 0, cap = 0, ncur = 0, capcur = 0;
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
    s->scan_no++;
    while ((de = readdir(dir))) {
        struct tracked t = {.fd = -1}, *old;
        char *end;
        long pid = strtol(de->d_name, &end, 10);

        if (*end || pid <= 0 || end == de->d_name)
            continue;
        old = tracked_find(s, (pid_t)pid);
        if (old) {
            t = *old; /* moved: the old array no longer owns its fd and cg */
            old->fd = -1;
            old->cg = NULL;
        }
        t.pid = (pid_t)pid;
        /* The full judgement for new processes and, staggered, for known
         * ones every @recheck scans; the cheap pass otherwise. @all asks
         * for every field of every process: always in full. */
        if (!old || all || (s->scan_no + (unsigned)pid) % s->recheck == 0)
            err = judge(s, &t, dt_ns, all);
        else
            err = revisit(s, &t, dt_ns);
        if (!err)
            err = push((void **)&cur, sizeof(*cur), &ncur, &capcur, &t);
        if (err) {
            tracked_release(&t);
            if (err == -ESRCH) {
                err = 0;
                continue; /* it exited while we looked: nothing to manage */
            }
            goto out_free;
        }
        if (t.info.verdict != CORUN_PROCSEL_KERNEL_THREAD &&
            (all || t.info.verdict == CORUN_PROCSEL_SELECTED)) {
            err = push((void **)&v, sizeof(*v), &nv, &cap, &t.info);
            if (err)
                goto out_free;
        }
    }
    /* readdir of /proc gives pids in increasing order, but sort anyway: the
     * lookup in tracked_find() depends on it. */
    if (ncur)
        qsort(cur, ncur, sizeof(*cur), cmp_tracked);
    if (nv)
        qsort(v, nv, sizeof(*v), cmp_info);
    for (size_t i = 0; i < s->nprev; i++)
        tracked_release(&s->prev[i]); /* processes that are gone */
    free(s->prev);
    s->prev = cur;
    s->nprev = ncur;
    s->prev_ns = now_ns;
    cur = NULL;
    ncur = 0;
    *out = v;
    *n = nv;
    v = NULL;
out_free:
    for (size_t i = 0; i < ncur; i++)
        tracked_release(&cur[i]);
    corun__procsel_cg_reset(s);
    closedir(dir);
    free(cur);
    free(v);
    return err;
}
