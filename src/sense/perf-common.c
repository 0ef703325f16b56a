/*
 * perf-common.c — perf_event_open as both backends use it: what this process
 * may count (perf_event_paranoid, capabilities, a PMU in sysfs), the words
 * for each way it fails, multiplex scaling, and counter sets.
 *
 * A counter set is the events of one target. Hardware presets are split into
 * two groups so that each fits the general-purpose counters of every model
 * we have a table for (4 per thread on Intel with SMT, 6 on AMD Zen) and the
 * ratios computed inside a group come from the same time slices:
 *   A: cycles, instructions, ref_cycles, branch_misses, stall_cycles_backend
 *   B: llc_references, llc_misses, dtlb_misses
 * Software events are opened alone (they never multiplex).
 *
 * Launched commands are counted with inherit=1, which the kernel forbids
 * with PERF_FORMAT_GROUP: the groups are still made (so members are
 * scheduled together and share time_running) but each counter is read with
 * its own read(). An existing process is counted per thread from
 * /proc/PID/task without inherit, and each group is read in one read(), so a
 * group's counts are one consistent snapshot; threads it creates after
 * attach are added at each read, from then on.
 *
 * On a hybrid CPU every hardware preset is opened once per core-type PMU
 * (groups per PMU) and a thread's counts are added up before scaling: see
 * add_part() and docs/internals/sense.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"
#include "sense/sense-internal.h"

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

#define CAP_PERFMON_BIT   38
#define CAP_SYS_ADMIN_BIT 21

/* ---- privileges ------------------------------------------------------------- */

/* Is @name a core PMU's sysfs name? "cpu" (one kind of core), "cpu_core" and
 * "cpu_atom" (Intel hybrid), "armv8_pmuv3_0", "armv8_cortex_a53"... (Arm). */
static bool is_core_pmu_name(const char *name)
{
    return !strcmp(name, "cpu") || !strncmp(name, "cpu_", 4) || !strncmp(name, "armv", 4) ||
           !strncmp(name, "arm_cortex", 10);
}

static void scan_core_pmus(int rootfd, struct corun__perf_env *env)
{
    int fd = corun__root_openat(rootfd, "sys/bus/event_source/devices", O_RDONLY | O_DIRECTORY);
    struct dirent *d;
    DIR *dir;

    if (fd < 0)
        return;
    dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return;
    }
    while ((d = readdir(dir))) {
        size_t used = strlen(env->core_pmus);
        char path[320];
        uint64_t type = 0;

        if (!is_core_pmu_name(d->d_name))
            continue;
        snprintf(path, sizeof(path), "sys/bus/event_source/devices/%s/type", d->d_name);
        if (env->ncore_pmus < CORUN_ARRAY_SIZE(env->core_pmu_type) &&
            !corun__read_u64(rootfd, path, &type))
            env->core_pmu_type[env->ncore_pmus] = (uint32_t)type;
        env->ncore_pmus++;
        snprintf(env->core_pmus + used, sizeof(env->core_pmus) - used, "%s%s", used ? ", " : "",
                 d->d_name);
    }
    closedir(dir);
    env->cpu_pmu_in_sysfs = env->ncore_pmus > 0;
}

bool corun__perf_hybrid(const struct corun__perf_env *env)
{
    if (env->ncore_pmus < 2 || env->ncore_pmus > CORUN_ARRAY_SIZE(env->core_pmu_type))
        return false;
    for (unsigned i = 0; i < env->ncore_pmus; i++)
        if (!env->core_pmu_type[i])
            return false;
    return true;
}

void corun__perf_env_parse(struct corun__perf_env *env, const char *paranoid, const char *status)
{
    const char *p;

    env->paranoid = -100;
    env->cap_perfmon = false;
    env->cap_sys_admin = false;
    if (paranoid)
        env->paranoid = atoi(paranoid);
    /* At the start of a line only: the Name: line above it is the command
     * name, which whoever runs corun chooses. */
    for (p = status; p && strncmp(p, "CapEff:", 7); p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        ;
    if (p) {
        unsigned long long eff = strtoull(p + 7, NULL, 16);

        env->cap_perfmon = eff & (1ull << CAP_PERFMON_BIT);
        env->cap_sys_admin = eff & (1ull << CAP_SYS_ADMIN_BIT);
    }
    env->exclude_kernel = !env->cap_perfmon && !env->cap_sys_admin && env->paranoid >= 2;
}

void corun__perf_env_read(int rootfd, struct corun__perf_env *env)
{
    char pbuf[4096], sbuf[4096];
    bool have_p, have_s;

    memset(env, 0, sizeof(*env));
    have_p =
        corun__read_text(rootfd, "proc/sys/kernel/perf_event_paranoid", pbuf, sizeof(pbuf)) > 0;
    have_s = corun__read_text(rootfd, "proc/self/status", sbuf, sizeof(sbuf)) > 0;
    corun__perf_env_parse(env, have_p ? pbuf : NULL, have_s ? sbuf : NULL);
    scan_core_pmus(rootfd, env);
}

void corun__perf_attr(const struct corun_event_encoding *e, const struct corun__perf_env *env,
                      struct perf_event_attr *attr)
{
    memset(attr, 0, sizeof(*attr));
    attr->size = sizeof(*attr);
    attr->type = e->type;
    attr->config = e->config;
    attr->config1 = e->config1;
    attr->config2 = e->config2;
    attr->exclude_kernel = env->exclude_kernel;
    attr->exclude_hv = env->exclude_kernel;
    attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

int corun__perf_try(struct perf_event_attr *attr)
{
    int fd;

    attr->disabled = 1;
    fd = corun__sys.perf_event_open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return errno ? -errno : -EIO;
    close(fd);
    return 0;
}

static void paranoid_words(const struct corun__perf_env *env, char *buf, size_t len)
{
    if (env->cap_perfmon || env->cap_sys_admin)
        snprintf(buf, len,
                 "perf_event_open refused (EACCES) although this process has %s: a seccomp "
                 "filter or security module forbids it",
                 env->cap_perfmon ? "CAP_PERFMON" : "CAP_SYS_ADMIN");
    else if (env->paranoid >= 3)
        snprintf(buf, len,
                 "perf_event_open refused (EACCES): kernel.perf_event_paranoid is %d, which "
                 "forbids perf to processes without CAP_PERFMON (or CAP_SYS_ADMIN)",
                 env->paranoid);
    else
        snprintf(buf, len,
                 "perf_event_open refused (EACCES): kernel.perf_event_paranoid is %d and this "
                 "process lacks CAP_PERFMON (and CAP_SYS_ADMIN)",
                 env->paranoid);
}

int corun__perf_diagnose(const struct corun__perf_env *env, char *why, size_t len)
{
    struct corun_event_encoding cyc = {.type = PERF_TYPE_HARDWARE,
                                       .config = PERF_COUNT_HW_CPU_CYCLES};
    struct corun_event_encoding clk = {.type = PERF_TYPE_SOFTWARE,
                                       .config = PERF_COUNT_SW_TASK_CLOCK};
    struct perf_event_attr attr;
    int hw, sw;

    corun__perf_attr(&cyc, env, &attr);
    hw = corun__perf_try(&attr);
    corun__perf_attr(&clk, env, &attr);
    sw = corun__perf_try(&attr);
    if (!hw) {
        if (why && len)
            why[0] = '\0';
        return 0;
    }
    switch (-hw) {
    case EACCES:
    case EPERM:
        paranoid_words(env, why, len);
        break;
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        if (!sw)
            snprintf(why, len,
                     "no PMU exposed by the hypervisor: hardware events fail with %s while "
                     "software events work%s",
                     hw == -ENOENT   ? "ENOENT"
                     : hw == -ENODEV ? "ENODEV"
                                     : "EOPNOTSUPP",
                     env->cpu_pmu_in_sysfs ? ""
                                           : " (no core PMU in /sys/bus/event_source/devices)");
        else
            snprintf(why, len, "hardware events fail with %s and software events with %s",
                     corun_strerror(hw), corun_strerror(sw));
        break;
    case ENOSYS:
        snprintf(why, len,
                 "perf_event_open is not available (kernel without CONFIG_PERF_EVENTS, or a "
                 "seccomp filter)");
        break;
    default:
        snprintf(why, len, "hardware events cannot be opened: %s", corun_strerror(hw));
        break;
    }
    return hw;
}

void corun__perf_event_reason(int err, enum corun_event ev, const struct corun_event_encoding *e,
                              const struct corun__perf_env *env, char *buf, size_t len)
{
    const char *name = corun_event_name(ev);

    switch (-err) {
    case EACCES:
    case EPERM:
        paranoid_words(env, buf, len);
        break;
    case ENOENT:
    case EOPNOTSUPP:
        if (e->source == CORUN_SRC_NATIVE)
            snprintf(buf, len,
                     "the kernel rejected %s (raw %#llx) with %s: this PMU model lacks the event",
                     e->native, (unsigned long long)e->config,
                     err == -ENOENT ? "ENOENT" : "EOPNOTSUPP");
        else
            snprintf(buf, len, "the kernel maps no %s on this CPU (%s): the model lacks it",
                     e->native, err == -ENOENT ? "ENOENT" : "EOPNOTSUPP");
        break;
    case EINVAL:
        snprintf(buf, len, "the kernel rejected the encoding of %s (%s, EINVAL)", name, e->native);
        break;
    case EMFILE:
    case ENFILE:
        snprintf(buf, len, "%s: out of file descriptors", name);
        break;
    default:
        snprintf(buf, len, "%s: %s", name, corun_strerror(err));
        break;
    }
}

bool corun__perf_scale(uint64_t raw, uint64_t enabled, uint64_t running, uint64_t *out)
{
    if (running == 0) {
        *out = 0;
        return enabled == 0;
    }
    if (running >= enabled) {
        *out = raw;
        return true;
    }
    *out = (uint64_t)((unsigned __int128)raw * enabled / running);
    return true;
}

/* ---- counter sets ----------------------------------------------------------- */

int corun__perf_group_of(enum corun_event ev)
{
    switch (ev) {
    case CORUN_EV_CYCLES:
    case CORUN_EV_INSTRUCTIONS:
    case CORUN_EV_REF_CYCLES:
    case CORUN_EV_BRANCH_MISSES:
    case CORUN_EV_STALL_CYCLES_BACKEND:
        return 0;
    case CORUN_EV_LLC_REFERENCES:
    case CORUN_EV_LLC_MISSES:
    case CORUN_EV_DTLB_MISSES:
        return 1;
    default:
        return -1;
    }
}

/*
 * One thread's counters. On a hybrid CPU each hardware preset is opened once
 * per core-type PMU (index p), each PMU with its own groups: events of
 * different hardware PMUs cannot share a group.
 */
struct pthread_fds {
    pid_t tid;
    int fd[CORUN_NEVENTS][CORUN__PERF_MAX_PMUS];
    int leader[CORUN__PERF_MAX_PMUS][CORUN__PERF_NGROUPS];
    uint8_t order[CORUN__PERF_MAX_PMUS][CORUN__PERF_NGROUPS][CORUN_NEVENTS]; /* creation order */
    uint8_t norder[CORUN__PERF_MAX_PMUS][CORUN__PERF_NGROUPS];
};

struct corun__pset {
    const struct corun__pplan *plan;
    int rootfd; /* the caller's, for /proc/PID/task */
    pid_t pid;
    unsigned npmus; /* hardware PMUs each hardware preset is opened on (1 unless hybrid) */
    uint64_t opened;
    int err[CORUN_NEVENTS];
    unsigned n, cap;
    struct pthread_fds *th;
};

static int open_one(struct corun__pset *ps, struct pthread_fds *t, enum corun_event ev, int group,
                    unsigned p)
{
    const struct corun__pplan *plan = ps->plan;
    struct perf_event_attr attr = plan->attr[ev];
    int leader = group >= 0 ? t->leader[p][group] : -1;
    int fd;

    /* Hybrid: the core-type PMU goes in the extended-type bits of config. */
    if (plan->npmus > 1 && group >= 0)
        attr.config |= (uint64_t)plan->pmu_type[p] << 32;
    attr.inherit = plan->inherit;
    if (group >= 0 && !plan->inherit)
        attr.read_format |= PERF_FORMAT_GROUP;
    /* Members follow their leader; leaders and lone events wait for exec. */
    attr.disabled = leader < 0 && plan->on_exec;
    attr.enable_on_exec = leader < 0 && plan->on_exec;
    fd = corun__sys.perf_event_open(&attr, t->tid, -1, leader, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        int err = errno ? -errno : -EIO;

        if (!ps->err[ev])
            ps->err[ev] = err;
        return err;
    }
    t->fd[ev][p] = fd;
    ps->opened |= CORUN_EV_BIT(ev);
    if (group >= 0) {
        if (leader < 0)
            t->leader[p][group] = fd;
        t->order[p][group][t->norder[p][group]++] = (uint8_t)ev;
    }
    return 0;
}

static int open_thread(struct corun__pset *ps, pid_t tid)
{
    struct pthread_fds *t;

    if (ps->n == ps->cap) {
        unsigned cap = ps->cap ? ps->cap * 2 : 4;
        struct pthread_fds *nt = realloc(ps->th, cap * sizeof(*nt));

        if (!nt)
            return -ENOMEM;
        ps->th = nt;
        ps->cap = cap;
    }
    t = &ps->th[ps->n++];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    for (int i = 0; i < CORUN_NEVENTS; i++)
        for (unsigned p = 0; p < CORUN__PERF_MAX_PMUS; p++)
            t->fd[i][p] = -1;
    for (unsigned p = 0; p < CORUN__PERF_MAX_PMUS; p++)
        for (int g = 0; g < CORUN__PERF_NGROUPS; g++)
            t->leader[p][g] = -1;
    for (unsigned p = 0; p < ps->npmus; p++) {
        for (int g = p ? 0 : -1; g < CORUN__PERF_NGROUPS; g++) {
            for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
                int err;

                if (!(ps->plan->events & CORUN_EV_BIT(ev)) || corun__perf_group_of(ev) != g)
                    continue;
                err = open_one(ps, t, ev, g, g < 0 ? 0 : p);
                if (err == -ESRCH)
                    return err; /* the thread is gone: nothing else will open */
                if (err == -ENOMEM || err == -EMFILE || err == -ENFILE)
                    return err;
            }
        }
    }
    return 0;
}

static void close_thread(struct pthread_fds *t)
{
    for (int i = 0; i < CORUN_NEVENTS; i++)
        for (unsigned p = 0; p < CORUN__PERF_MAX_PMUS; p++)
            if (t->fd[i][p] >= 0)
                close(t->fd[i][p]);
}

/*
 * Opens the threads listed in /proc/PID/task that the set does not have yet.
 * 0, -ESRCH when the process is gone, -ENOMEM, -EMFILE.
 */
static int add_threads(struct corun__pset *ps, int rootfd, pid_t pid)
{
    struct dirent *d;
    char path[64];
    int fd, err = 0;
    DIR *dir;

    snprintf(path, sizeof(path), "proc/%d/task", (int)pid);
    fd = corun__root_openat(rootfd, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return fd == -ENOENT ? -ESRCH : fd;
    dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return -ENOMEM;
    }
    while ((d = readdir(dir))) {
        pid_t tid = (pid_t)atoi(d->d_name);
        bool known = false;
        int terr;

        if (tid <= 0)
            continue;
        for (unsigned i = 0; i < ps->n && !known; i++)
            known = ps->th[i].tid == tid;
        if (known)
            continue;
        terr = open_thread(ps, tid);
        if (terr == -ESRCH) {
            /* Exited since the listing: forget it. */
            close_thread(&ps->th[--ps->n]);
            continue;
        }
        if (terr) {
            err = terr;
            break;
        }
    }
    closedir(dir);
    return err;
}

int corun__pset_open(const struct corun__pplan *plan, int rootfd, pid_t pid,
                     struct corun__pset **out)
{
    struct corun__pset *ps = calloc(1, sizeof(*ps));
    int err;

    *out = NULL;
    if (!ps)
        return -ENOMEM;
    ps->plan = plan;
    ps->rootfd = rootfd;
    ps->pid = pid;
    ps->npmus = plan->npmus > 1 ? plan->npmus : 1;
    if (ps->npmus > CORUN__PERF_MAX_PMUS)
        ps->npmus = CORUN__PERF_MAX_PMUS;
    if (plan->inherit) {
        err = open_thread(ps, pid);
    } else {
        err = add_threads(ps, rootfd, pid);
        if (!err && ps->n == 0)
            err = -ESRCH;
    }
    if (err)
        goto out_free;
    *out = ps;
    return 0;

out_free:
    corun__pset_close(ps);
    return err;
}

uint64_t corun__pset_opened(const struct corun__pset *ps)
{
    return ps ? ps->opened : 0;
}

int corun__pset_err(const struct corun__pset *ps, enum corun_event ev)
{
    return ps ? ps->err[ev] : 0;
}

struct acc {
    uint64_t value[CORUN_NEVENTS];
    uint64_t enabled[CORUN_NEVENTS], running[CORUN_NEVENTS];
    bool unknown[CORUN_NEVENTS];
};

/* One thread's counts of an event, summed over core-type PMUs before scaling. */
struct part {
    uint64_t raw[CORUN_NEVENTS], enabled[CORUN_NEVENTS], running[CORUN_NEVENTS];
};

/*
 * A thread's count of an event on several core-type PMUs: each PMU counts
 * while the thread runs on its core type, and the kernel advances every
 * PMU's time_enabled all along but its time_running only there. So the raw
 * counts and the running times add up, enabled is the common one, and
 * raw_sum * enabled / running_sum scales only for real multiplexing. With
 * one PMU this is the usual raw * enabled / running.
 */
static void add_part(struct part *pt, int ev, uint64_t raw, uint64_t en, uint64_t run)
{
    pt->raw[ev] += raw;
    pt->running[ev] += run;
    if (en > pt->enabled[ev])
        pt->enabled[ev] = en;
}

static void add_count(struct acc *a, int ev, uint64_t raw, uint64_t en, uint64_t run)
{
    uint64_t v;

    if (!corun__perf_scale(raw, en, run, &v))
        a->unknown[ev] = true;
    a->value[ev] += v;
    a->enabled[ev] += en;
    a->running[ev] += run < en ? run : en;
}

static int read_fd(int fd, void *buf, size_t len)
{
    ssize_t n;

    do {
        n = read(fd, buf, len);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    return n == 0 ? -EIO : (int)n;
}

static int read_thread(const struct corun__pset *ps, const struct pthread_fds *t, struct acc *a)
{
    uint64_t buf[3 + CORUN_NEVENTS];
    struct part pt;
    int n;

    memset(&pt, 0, sizeof(pt));
    for (unsigned p = 0; p < ps->npmus; p++) {
        for (int g = 0; g < CORUN__PERF_NGROUPS; g++) {
            if (t->leader[p][g] < 0 || ps->plan->inherit)
                continue;
            /* One read for the group: nr, enabled, running, then each member. */
            n = read_fd(t->leader[p][g], buf, sizeof(buf));
            if (n < 0)
                return n;
            if (n < (int)(3 * sizeof(uint64_t)) || buf[0] != t->norder[p][g] ||
                n < (int)((3 + buf[0]) * sizeof(uint64_t)))
                return -EIO;
            for (unsigned i = 0; i < t->norder[p][g]; i++)
                add_part(&pt, t->order[p][g][i], buf[3 + i], buf[1], buf[2]);
        }
    }
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        bool grouped = corun__perf_group_of(ev) >= 0;

        for (unsigned p = 0; p < ps->npmus; p++) {
            if (t->fd[ev][p] < 0 || (grouped && !ps->plan->inherit))
                continue;
            n = read_fd(t->fd[ev][p], buf, 3 * sizeof(uint64_t));
            if (n < 0)
                return n;
            if (n != (int)(3 * sizeof(uint64_t)))
                return -EIO;
            add_part(&pt, ev, buf[0], buf[1], buf[2]);
        }
    }
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        bool any = false;

        for (unsigned p = 0; p < ps->npmus; p++)
            any |= t->fd[ev][p] >= 0;
        if (any)
            add_count(a, ev, pt.raw[ev], pt.enabled[ev], pt.running[ev]);
    }
    return 0;
}

int corun__pset_read(struct corun__pset *ps, struct corun_sample *s)
{
    struct acc a;
    double mux = 1.0;

    /* Per-thread counting: threads born since the last read join now; what
     * they did before is not counted (inherit would, at the price of
     * grouped reads). Growth failures leave the known threads counting. */
    if (!ps->plan->inherit) {
        int err = add_threads(ps, ps->rootfd, ps->pid);

        if (err && err != -ESRCH)
            corun__debug("sense: new threads of %d not counted: %s", (int)ps->pid,
                         corun_strerror(err));
    }
    memset(&a, 0, sizeof(a));
    for (unsigned i = 0; i < ps->n; i++) {
        int err = read_thread(ps, &ps->th[i], &a);

        if (err)
            return err;
    }
    for (int ev = 0; ev < CORUN_NEVENTS; ev++) {
        if (!(ps->opened & CORUN_EV_BIT(ev)))
            continue;
        if (a.unknown[ev] && a.running[ev] == 0) {
            /* Enabled but never on a counter: unknown, not zero. */
            s->valid &= ~CORUN_EV_BIT(ev);
            continue;
        }
        s->valid |= CORUN_EV_BIT(ev);
        s->value[ev] = a.value[ev];
        if (corun_event_is_hardware(ev) && a.enabled[ev] > 0) {
            double r = (double)a.running[ev] / (double)a.enabled[ev];

            if (r < mux)
                mux = r;
        }
    }
    s->mux_ratio = mux;
    return 0;
}

void corun__pset_close(struct corun__pset *ps)
{
    if (!ps)
        return;
    for (unsigned i = 0; i < ps->n; i++)
        close_thread(&ps->th[i]);
    free(ps->th);
    free(ps);
}
