/*
 * wait.c — benchmark of corun_mutex against pthread_mutex, pthread_spinlock
 * and a test-and-test-and-set spinlock ("ttas"), at 1, 2, 4 and 8 threads.
 *
 * For each lock and thread count:
 *   throughput   every thread loops { lock; --cs-work (64) dependent multiplies
 *                written over two shared cache lines; unlock; --work (16)
 *                private multiplies }: a lock-bound load, where how waiters
 *                wait decides the result. An unrelated bystander thread counts
 *                loop iterations alongside. ops_per_s is lock+unlock pairs per
 *                second; cpu_ns_per_op the workers' CPU time (getrusage
 *                RUSAGE_THREAD, user+system) per pair; bystander_ops_per_s the
 *                bystander's iterations per second (what the waiters left to a
 *                thread that does not use the lock); ctxsw_per_kop the
 *                workers' context switches per 1,000 pairs.
 *   hand-off     ping-pong: a thread that released the lock does not take it
 *                again until another thread has, so every acquisition is a
 *                hand-off (threads pinned round robin to the allowed CPUs);
 *                handoff_ns is the median time from a release to the next
 *                owner's acquisition. null at one thread (nobody to hand off
 *                to).
 * Then, per lock, the uncontended cost of lock+unlock in one thread (best of
 * 5 rounds of 2,000,000). Thread counts are measured one after the other; for
 * each, the locks take turns, --repeat times, and the medians are reported.
 *
 * Prints a table and a final JSON line; with --json, the JSON line only:
 *   {"strategy": ..., "repeat": N, "uncontended_ns": {lock: ns...},
 *    "results": [{"lock", "threads", "ops_per_s", "cpu_ns_per_op",
 *    "handoff_ns", "bystander_ops_per_s", "ctxsw_per_kop"}]}
 * The default run (7 interleaved repeats of 200 ms, medians) takes about 33 s.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "corun/wait.h"

#define MAX_THREADS 8
#define MAX_SAMPLES 200000

static unsigned duration_ms = 200, handoff_ms = 80, out_work = 16, cs_work = 64;
static bool json_only;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* The calling thread's CPU time (user + system) and, in *@csw, its context switches. */
static uint64_t thread_cpu_ns(uint64_t *csw)
{
    struct rusage ru;

    getrusage(RUSAGE_THREAD, &ru);
    *csw = (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw);
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

/* ---- the locks ---------------------------------------------------------------- */

static struct {
    pthread_mutex_t pm;
    pthread_spinlock_t ps;
    uint32_t ttas;
    struct corun_mutex cm;
} locks __attribute__((aligned(64)));

/* What the lock protects: two cache lines and the hand-off bookkeeping. */
static struct {
    uint64_t data[16];
    uint64_t release_ns;
    int last_owner;
} shared __attribute__((aligned(64)));

static void ttas_lock(uint32_t *l)
{
    for (;;) {
        if (!__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
            return;
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            cpu_relax();
    }
}

static void ttas_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

enum lock_kind { PTHREAD_MUTEX, PTHREAD_SPIN, TTAS, CORUN_MUTEX, NLOCKS };
static const char *const lock_names[NLOCKS] = {"pthread_mutex", "pthread_spin", "ttas",
                                               "corun_mutex"};

/* A switch rather than function pointers: each lock's call is direct. */
static inline __attribute__((always_inline)) void do_lock(enum lock_kind k)
{
    switch (k) {
    case PTHREAD_MUTEX:
        pthread_mutex_lock(&locks.pm);
        break;
    case PTHREAD_SPIN:
        pthread_spin_lock(&locks.ps);
        break;
    case TTAS:
        ttas_lock(&locks.ttas);
        break;
    default:
        corun_mutex_lock(&locks.cm);
        break;
    }
}

static inline __attribute__((always_inline)) void do_unlock(enum lock_kind k)
{
    switch (k) {
    case PTHREAD_MUTEX:
        pthread_mutex_unlock(&locks.pm);
        break;
    case PTHREAD_SPIN:
        pthread_spin_unlock(&locks.ps);
        break;
    case TTAS:
        ttas_unlock(&locks.ttas);
        break;
    default:
        corun_mutex_unlock(&locks.cm);
        break;
    }
}

static void init_locks(void)
{
    pthread_mutex_init(&locks.pm, NULL);
    pthread_spin_init(&locks.ps, PTHREAD_PROCESS_PRIVATE);
    locks.ttas = 0;
    corun_mutex_init(&locks.cm);
    memset(&shared, 0, sizeof(shared));
    shared.last_owner = -1;
}

/* ---- threads -------------------------------------------------------------------- */

struct worker {
    pthread_t tid;
    int id;
    enum lock_kind kind;
    bool handoff;
    uint64_t ops, cpu_ns, csw;
    uint64_t *samples;
    unsigned nsamples;
} __attribute__((aligned(64)));

static int go, stop; /* go: 0 wait, 1 run */
static unsigned ready;

static void start_line(void)
{
    __atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        sched_yield();
}

/* Private work between operations: a few dependent multiplies. */
static uint64_t private_work(uint64_t x, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

/* The protected work: @cs_work dependent multiplies on shared data, spread
 * over two cache lines. */
static void critical_section(uint64_t v)
{
    uint64_t x = shared.data[0] + v;

    for (unsigned i = 0; i < cs_work; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        shared.data[i & 15] = x;
    }
    shared.data[0] = x;
}

#define THROUGHPUT_LOOP(k)                                                                         \
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {                                            \
        do_lock(k);                                                                                \
        critical_section(ops);                                                                     \
        do_unlock(k);                                                                              \
        x = private_work(x, out_work);                                                             \
        ops++;                                                                                     \
    }

static void *worker_main(void *p)
{
    struct worker *w = p;
    uint64_t ops = 0, x = (uint64_t)w->id, cpu0, csw0, csw1;

    start_line();
    cpu0 = thread_cpu_ns(&csw0);
    switch (w->kind) {
    case PTHREAD_MUTEX:
        THROUGHPUT_LOOP(PTHREAD_MUTEX);
        break;
    case PTHREAD_SPIN:
        THROUGHPUT_LOOP(PTHREAD_SPIN);
        break;
    case TTAS:
        THROUGHPUT_LOOP(TTAS);
        break;
    default:
        THROUGHPUT_LOOP(CORUN_MUTEX);
        break;
    }
    w->cpu_ns = thread_cpu_ns(&csw1) - cpu0;
    w->csw = csw1 - csw0;
    w->ops = ops + (x == 42); /* keep x alive */
    return NULL;
}

/*
 * Hand-off threads are spread over the CPUs we may use, round robin, so that
 * two of them ping-pong between two CPUs rather than share one.
 */
static void pin_round_robin(int id)
{
    cpu_set_t allowed, one;
    int n = 0, want;

    if (sched_getaffinity(0, sizeof(allowed), &allowed))
        return;
    want = id % CPU_COUNT(&allowed);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed) || n++ != want)
            continue;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof(one), &one);
        return;
    }
}

/* Ping-pong: after releasing, wait until someone else has taken the lock. */
static void *handoff_main(void *p)
{
    struct worker *w = p;
    enum lock_kind k = w->kind;

    pin_round_robin(w->id);
    start_line();
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        uint64_t t;
        int prev;

        do_lock(k);
        t = now_ns();
        prev = __atomic_load_n(&shared.last_owner, __ATOMIC_RELAXED);
        if (prev >= 0 && prev != w->id && w->nsamples < MAX_SAMPLES)
            w->samples[w->nsamples++] = t - shared.release_ns;
        __atomic_store_n(&shared.last_owner, w->id, __ATOMIC_RELAXED);
        critical_section(t);
        shared.release_ns = now_ns();
        do_unlock(k);
        for (unsigned spins = 0; __atomic_load_n(&shared.last_owner, __ATOMIC_RELAXED) == w->id &&
                                 !__atomic_load_n(&stop, __ATOMIC_RELAXED);
             spins++) {
            if (spins < 64)
                cpu_relax();
            else
                sched_yield(); /* let the other threads get the CPU to take it */
        }
    }
    return NULL;
}

static uint64_t bystander_iters;

static void *bystander_main(void *p)
{
    uint64_t n = 0, x = 1;

    start_line();
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        x = private_work(x, 64);
        n++;
    }
    bystander_iters = n + (x == 42);
    return NULL;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

/*
 * Starts @n threads running @fn (and the bystander when @bystander), lets
 * them run @ms, stops them. Returns the measured wall time in ns.
 */
static uint64_t run_phase(struct worker *w, unsigned n, void *(*fn)(void *), bool bystander,
                          unsigned ms)
{
    pthread_t b;
    uint64_t t0, t1;

    init_locks();
    go = stop = 0;
    ready = 0;
    bystander_iters = 0;
    for (unsigned i = 0; i < n; i++)
        pthread_create(&w[i].tid, NULL, fn, &w[i]);
    if (bystander)
        pthread_create(&b, NULL, bystander_main, NULL);
    while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < n + bystander)
        sched_yield();
    t0 = now_ns();
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    sleep_ms(ms);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    t1 = now_ns();
    for (unsigned i = 0; i < n; i++)
        pthread_join(w[i].tid, NULL);
    if (bystander)
        pthread_join(b, NULL);
    return t1 - t0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

struct result {
    enum lock_kind kind;
    unsigned threads;
    double ops_per_s, cpu_ns_per_op, bystander_ops_per_s;
    double csw_per_kop; /* context switches of the workers per 1,000 operations */
    double handoff_ns;  /* < 0: not measured */
};

static void measure(enum lock_kind kind, unsigned n, struct result *r)
{
    struct worker w[MAX_THREADS];
    uint64_t wall, ops = 0, cpu = 0, csw = 0, *all;
    unsigned total = 0;

    memset(w, 0, sizeof(w));
    for (unsigned i = 0; i < n; i++) {
        w[i].id = (int)i;
        w[i].kind = kind;
    }
    wall = run_phase(w, n, worker_main, true, duration_ms);
    for (unsigned i = 0; i < n; i++) {
        ops += w[i].ops;
        cpu += w[i].cpu_ns;
        csw += w[i].csw;
    }
    r->kind = kind;
    r->threads = n;
    r->ops_per_s = (double)ops * 1e9 / (double)wall;
    r->cpu_ns_per_op = ops ? (double)cpu / (double)ops : -1;
    r->bystander_ops_per_s = (double)bystander_iters * 1e9 / (double)wall;
    r->csw_per_kop = ops ? (double)csw * 1000 / (double)ops : -1;
    r->handoff_ns = -1;
    if (n < 2)
        return;

    all = calloc((size_t)n * MAX_SAMPLES, sizeof(*all));
    if (!all)
        return;
    for (unsigned i = 0; i < n; i++) {
        w[i].samples = all + (size_t)i * MAX_SAMPLES;
        w[i].nsamples = 0;
    }
    run_phase(w, n, handoff_main, false, handoff_ms);
    /* Gather the samples at the front of the buffer, then take the median. */
    for (unsigned i = 0; i < n; i++) {
        memmove(all + total, w[i].samples, w[i].nsamples * sizeof(*all));
        total += w[i].nsamples;
    }
    if (total) {
        qsort(all, total, sizeof(*all), cmp_u64);
        r->handoff_ns = (double)all[total / 2];
    }
    free(all);
}

/* Uncontended lock+unlock in one thread: ns per pair, best of 5 rounds. */
static double uncontended_ns(enum lock_kind kind)
{
    const unsigned iters = 2000000;
    double best = 1e30;

    init_locks();
    for (int round = 0; round < 5; round++) {
        uint64_t t0 = now_ns();

        switch (kind) {
        case PTHREAD_MUTEX:
            for (unsigned i = 0; i < iters; i++)
                do_lock(PTHREAD_MUTEX), do_unlock(PTHREAD_MUTEX);
            break;
        case PTHREAD_SPIN:
            for (unsigned i = 0; i < iters; i++)
                do_lock(PTHREAD_SPIN), do_unlock(PTHREAD_SPIN);
            break;
        case TTAS:
            for (unsigned i = 0; i < iters; i++)
                do_lock(TTAS), do_unlock(TTAS);
            break;
        default:
            for (unsigned i = 0; i < iters; i++)
                do_lock(CORUN_MUTEX), do_unlock(CORUN_MUTEX);
            break;
        }
        double ns = (double)(now_ns() - t0) / iters;
        if (ns < best)
            best = ns;
    }
    return best;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: wait [--json] [--repeat N] [--duration-ms N] [--handoff-ms N]\n"
        "            [--cs-work N] [--work N] [--strategy pause|umwait|mwaitx]\n"
        "            [--threads 1,2,4,8] [--locks pthread_mutex,pthread_spin,ttas,corun_mutex]\n");
}

static bool in_list(const char *list, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);

        if (n == len && !strncmp(p, name, n))
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

static double median(double *v, unsigned n)
{
    /* n is small: insertion sort */
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];

            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    if (!n || v[0] < 0)
        return -1; /* not measured in some repeat */
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_num(const char *key, double v, bool comma)
{
    if (v < 0)
        printf("\"%s\": null%s", key, comma ? ", " : "");
    else
        printf("\"%s\": %.1f%s", key, v, comma ? ", " : "");
}

static int parse_strategy(const char *name)
{
    const char *why = NULL;
    int s;

    for (s = 0; s < CORUN_WAIT_NSTRATEGIES; s++)
        if (!strcmp(name, corun_wait_strategy_name(s)))
            break;
    if (corun_wait_strategy_set(s) == 0)
        return 0;
    corun_wait_strategy_supported(s, &why);
    fprintf(stderr, "wait: --strategy %s: %s\n", name, why ? why : "unknown strategy");
    return -1;
}

#define MAX_REPEAT 15
static const unsigned thread_counts[] = {1, 2, 4, 8};
#define NCOUNTS 4

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"repeat", required_argument, NULL, 'r'},
        {"duration-ms", required_argument, NULL, 'd'},
        {"handoff-ms", required_argument, NULL, 'H'},
        {"work", required_argument, NULL, 'w'},
        {"cs-work", required_argument, NULL, 'c'},
        {"strategy", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"locks", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *threads_list = "1,2,4,8", *locks_list = NULL;
    static struct result raw[MAX_REPEAT][NLOCKS][NCOUNTS];
    static double unc_raw[NLOCKS][MAX_REPEAT];
    bool want[NLOCKS][NCOUNTS] = {{false}}, want_lock[NLOCKS] = {false};
    unsigned repeat = 7;
    int c;

    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json_only = true;
            break;
        case 'r':
            repeat = (unsigned)atoi(optarg);
            break;
        case 'd':
            duration_ms = (unsigned)atoi(optarg);
            break;
        case 'H':
            handoff_ms = (unsigned)atoi(optarg);
            break;
        case 'w':
            out_work = (unsigned)atoi(optarg);
            break;
        case 'c':
            cs_work = (unsigned)atoi(optarg);
            break;
        case 't':
            threads_list = optarg;
            break;
        case 'l':
            locks_list = optarg;
            break;
        case 's':
            if (parse_strategy(optarg) < 0)
                return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (repeat < 1 || repeat > MAX_REPEAT) {
        fprintf(stderr, "wait: --repeat must be 1..%d\n", MAX_REPEAT);
        return 2;
    }
    for (int k = 0; k < NLOCKS; k++) {
        want_lock[k] = !locks_list || in_list(locks_list, lock_names[k]);
        for (unsigned i = 0; i < NCOUNTS; i++) {
            char tn[4];

            snprintf(tn, sizeof(tn), "%u", thread_counts[i]);
            want[k][i] = want_lock[k] && in_list(threads_list, tn);
        }
    }

    /*
     * Interleaved: for each thread count, every repeat measures each lock in
     * turn, a second or so apart, starting with a different lock each time,
     * so that the noise of a shared machine falls on all locks alike.
     */
    for (unsigned i = 0; i < NCOUNTS; i++)
        for (unsigned r = 0; r < repeat; r++)
            for (int j = 0; j < NLOCKS; j++) {
                int k = (j + (int)r) % NLOCKS; /* rotate who goes first */

                if (want[k][i])
                    measure(k, thread_counts[i], &raw[r][k][i]);
            }
    for (unsigned r = 0; r < repeat; r++)
        for (int k = 0; k < NLOCKS; k++)
            if (want_lock[k])
                unc_raw[k][r] = uncontended_ns(k);

    if (!json_only)
        printf("wait strategy: %s; medians of %u runs of %u ms; critical section %u, private "
               "work %u\n\n%-14s %7s %12s %12s %11s %14s %10s\n",
               corun_wait_strategy_name(corun_wait_strategy()), repeat, duration_ms, cs_work,
               out_work, "lock", "threads", "ops/s", "cpu_ns/op", "handoff_ns", "bystander/s",
               "csw/kop");
    struct result med[NLOCKS][NCOUNTS];
    double unc[NLOCKS];

    for (int k = 0; k < NLOCKS; k++) {
        double v[5][MAX_REPEAT];

        unc[k] = want_lock[k] ? median(unc_raw[k], repeat) : -1;
        for (unsigned i = 0; i < NCOUNTS; i++) {
            struct result *m = &med[k][i];

            if (!want[k][i])
                continue;
            for (unsigned r = 0; r < repeat; r++) {
                v[0][r] = raw[r][k][i].ops_per_s;
                v[1][r] = raw[r][k][i].cpu_ns_per_op;
                v[2][r] = raw[r][k][i].handoff_ns;
                v[3][r] = raw[r][k][i].bystander_ops_per_s;
                v[4][r] = raw[r][k][i].csw_per_kop;
            }
            m->kind = k;
            m->threads = thread_counts[i];
            m->ops_per_s = median(v[0], repeat);
            m->cpu_ns_per_op = median(v[1], repeat);
            m->handoff_ns = median(v[2], repeat);
            m->bystander_ops_per_s = median(v[3], repeat);
            m->csw_per_kop = median(v[4], repeat);
            if (json_only)
                continue;
            printf("%-14s %7u %12.0f %12.1f ", lock_names[k], m->threads, m->ops_per_s,
                   m->cpu_ns_per_op);
            if (m->handoff_ns < 0)
                printf("%11s", "-");
            else
                printf("%11.0f", m->handoff_ns);
            printf(" %14.0f %10.2f\n", m->bystander_ops_per_s, m->csw_per_kop);
        }
    }
    if (!json_only) {
        printf("\nuncontended lock+unlock, ns:");
        for (int k = 0; k < NLOCKS; k++)
            if (want_lock[k])
                printf(" %s %.2f", lock_names[k], unc[k]);
        printf("\n(handoff_ns: - at one thread, nobody to hand off to; csw/kop: the workers'"
               " context switches per 1,000 operations)\n\n");
    }

    printf("{\"strategy\": \"%s\", \"repeat\": %u, \"uncontended_ns\": {",
           corun_wait_strategy_name(corun_wait_strategy()), repeat);
    for (int k = 0, first = 1; k < NLOCKS; k++) {
        if (!want_lock[k])
            continue;
        printf("%s\"%s\": %.2f", first ? "" : ", ", lock_names[k], unc[k]);
        first = 0;
    }
    printf("}, \"results\": [");
    for (int k = 0, first = 1; k < NLOCKS; k++) {
        for (unsigned i = 0; i < NCOUNTS; i++) {
            const struct result *m = &med[k][i];

            if (!want[k][i])
                continue;
            printf("%s{\"lock\": \"%s\", \"threads\": %u, ", first ? "" : ", ", lock_names[k],
                   m->threads);
            print_num("ops_per_s", m->ops_per_s, true);
            print_num("cpu_ns_per_op", m->cpu_ns_per_op, true);
            print_num("handoff_ns", m->handoff_ns, true);
            print_num("bystander_ops_per_s", m->bystander_ops_per_s, true);
            print_num("ctxsw_per_kop", m->csw_per_kop, false);
            printf("}");
            first = 0;
        }
    }
    printf("]}\n");
    return 0;
}
