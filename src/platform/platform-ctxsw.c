/*
 * platform-ctxsw.c — the cost of a context switch between two processes,
 * measured in the manner of lmbench's lat_ctx, so that the effect of a
 * process-aware TLB (PCID) and of cache footprints can be seen.
 *
 * Two processes pinned to one CPU pass a token around a ring of two pipes;
 * on receiving it each reads its own working set (one word per cache line)
 * and passes it on. A round trip is two switches. What is not a switch — the
 * pipe write and read and the touch — is measured in one process doing the
 * same without a partner, and subtracted. Each repetition gives one figure;
 * the median is reported, with the spread.
 *
 * Everything runs in a child process (the "measurer") so that the caller's
 * affinity and signal dispositions are never changed; the measurer forks the
 * partner. Children leave with _exit(): they are not the caller's process.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"
#include "platform/platform-internal.h"

#define MAX_REPS 64
#define LINE     64

struct ctxsw_report {
    int err;
    unsigned reps;
    double ring_ns[MAX_REPS]; /* per round trip */
    double ovh_ns[MAX_REPS];  /* per pipe write+read+touch, one process */
};

static volatile uint64_t sink;

static void touch(const volatile char *ws, size_t bytes)
{
    uint64_t s = 0;

    for (size_t i = 0; i < bytes; i += LINE)
        s += (unsigned char)ws[i];
    sink += s;
}

static int pin(unsigned cpu)
{
    cpu_set_t *set = CPU_ALLOC(cpu + 1);
    size_t size = CPU_ALLOC_SIZE(cpu + 1);
    int rc;

    if (!set)
        return -ENOMEM;
    CPU_ZERO_S(size, set);
    CPU_SET_S(cpu, size, set);
    rc = corun__sys.sched_setaffinity(0, size, set) ? -errno : 0;
    CPU_FREE(set);
    return rc;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len) {
        ssize_t n = read(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static char *working_set(size_t bytes)
{
    char *ws = malloc(bytes ? bytes : 1);

    if (ws)
        memset(ws, 1, bytes ? bytes : 1); /* fault every page in now */
    return ws;
}

/* The partner: echoes the token until the ring closes. */
static void partner(int in, int out, unsigned cpu, size_t bytes)
{
    char *ws = working_set(bytes);
    int token;

    if (!ws || pin(cpu))
        _exit(1);
    while (read_all(in, &token, sizeof(token)) == 0) {
        touch(ws, bytes);
        if (write_all(out, &token, sizeof(token)))
            break;
    }
    _exit(0);
}

/* One process, no switch: the pipe operations and the touch. ns per round. */
static int overhead(const char *ws, size_t bytes, unsigned rounds, double *ns)
{
    int p[2], token = 0, err = 0;
    uint64_t t0, t1;

    if (pipe(p))
        return -errno;
    t0 = corun__now_ns();
    for (unsigned i = 0; i < rounds && !err; i++) {
        err = write_all(p[1], &token, sizeof(token));
        if (!err)
            err = read_all(p[0], &token, sizeof(token));
        touch(ws, bytes);
    }
    t1 = corun__now_ns();
    close(p[0]);
    close(p[1]);
    *ns = (double)(t1 - t0) / rounds;
    return err;
}

/* The ring with a partner: ns per round trip. */
static int ring(const char *ws, const struct corun_platform_ctxsw_opts *o, unsigned rounds,
                double *ns)
{
    int to[2], from[2], token = 42, err = 0, status;
    uint64_t t0, t1;
    pid_t pid;

    if (pipe(to))
        return -errno;
    if (pipe(from)) {
        err = -errno;
        goto out_close_to;
    }
    pid = fork();
    if (pid < 0) {
        err = -errno;
        goto out_close_from;
    }
    if (pid == 0) {
        close(to[1]);
        close(from[0]);
        partner(to[0], from[1], o->cpu, o->working_set_bytes);
    }
    /* One round first so the partner has pinned itself and faulted its
     * working set before the clock starts. */
    err = write_all(to[1], &token, sizeof(token));
    if (!err)
        err = read_all(from[0], &token, sizeof(token));
    t0 = corun__now_ns();
    for (unsigned i = 0; i < rounds && !err; i++) {
        err = write_all(to[1], &token, sizeof(token));
        if (!err)
            err = read_all(from[0], &token, sizeof(token));
        touch(ws, o->working_set_bytes);
    }
    t1 = corun__now_ns();
    *ns = (double)(t1 - t0) / rounds;
    close(to[1]);
    to[1] = -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
        err = -EIO;
out_close_from:
    close(from[0]);
    close(from[1]);
out_close_to:
    close(to[0]);
    if (to[1] >= 0)
        close(to[1]);
    return err;
}

static void measurer(int out, const struct corun_platform_ctxsw_opts *o, unsigned rounds,
                     unsigned reps)
{
    struct ctxsw_report r = {.reps = reps};
    char *ws;

    signal(SIGPIPE, SIG_IGN);
    r.err = pin(o->cpu);
    ws = r.err ? NULL : working_set(o->working_set_bytes);
    if (!r.err && !ws)
        r.err = -ENOMEM;
    for (unsigned i = 0; i < reps && !r.err; i++) {
        r.err = overhead(ws, o->working_set_bytes, rounds, &r.ovh_ns[i]);
        if (!r.err)
            r.err = ring(ws, o, rounds, &r.ring_ns[i]);
    }
    free(ws);
    _exit(write_all(out, &r, sizeof(r)) ? 1 : 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whether this process may run on @cpu (through the affinity seam). */
static int allowed(unsigned cpu)
{
    int ncpu = 4096;
    cpu_set_t *set = CPU_ALLOC(ncpu);
    size_t size = CPU_ALLOC_SIZE(ncpu);
    int rc;

    if (!set)
        return -ENOMEM;
    CPU_ZERO_S(size, set);
    if (corun__sys.sched_getaffinity(0, size, set))
        rc = -errno;
    else
        rc = cpu < (unsigned)ncpu && CPU_ISSET_S(cpu, size, set) ? 0 : -EINVAL;
    CPU_FREE(set);
    return rc;
}

int corun_platform_measure_ctxsw(const struct corun_platform_ctxsw_opts *opts,
                                 struct corun_platform_ctxsw_result *out)
{
    unsigned rounds = opts->round_trips ? opts->round_trips : 2000;
    unsigned reps = opts->repetitions ? opts->repetitions : 7;
    struct ctxsw_report *r;
    int res[2], err, status;
    pid_t pid;

    memset(out, 0, sizeof(*out));
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if ((err = allowed(opts->cpu)))
        return err;
    r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    if (pipe(res)) {
        err = -errno;
        goto out_free;
    }
    pid = fork();
    if (pid < 0) {
        err = -errno;
        goto out_close;
    }
    if (pid == 0) {
        close(res[0]);
        measurer(res[1], opts, rounds, reps);
    }
    close(res[1]);
    res[1] = -1;
    err = read_all(res[0], r, sizeof(*r));
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (err)
        err = -EIO;
    else if (r->err)
        err = r->err;
    if (err)
        goto out_close;
    /* Medians of each series, not of pairwise differences: on a busy machine
     * one disturbed overhead run would otherwise swing its pair's figure. */
    out->repetitions = reps;
    out->raw_ns_per_switch = median(r->ring_ns, reps) / 2;
    out->overhead_ns = median(r->ovh_ns, reps);
    out->ns_per_switch = out->raw_ns_per_switch - out->overhead_ns;
    /* median() sorted the series. */
    out->raw_min_ns = r->ring_ns[0] / 2;
    out->raw_max_ns = r->ring_ns[reps - 1] / 2;
out_close:
    close(res[0]);
    if (res[1] >= 0)
        close(res[1]);
out_free:
    free(r);
    return err;
}
