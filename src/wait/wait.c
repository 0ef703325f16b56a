/*
 * wait.c — the core of the wait box: choosing the wait strategy from CPUID,
 * corun_wait_u32()/corun_wake_u32(), and the futex calls under them.
 *
 * A wait watches the word with the strategy's spin for CORUN__WAIT_SPIN_TICKS,
 * then sleeps with FUTEX_WAIT. So that a wake with nobody asleep costs no
 * system call, sleepers announce themselves in a table of counters indexed
 * by a hash of the address (the word itself belongs to the caller and has no
 * room for a count). Both sides use a sequentially consistent read-modify-
 * write on the same counter, which orders them:
 *
 *   waiter: counter += 1 (RMW)        waker: store new value (caller)
 *           FUTEX_WAIT(addr, expected)        counter + 0 (RMW), read it
 *
 * If the waker's RMW comes later in the counter's modification order it sees
 * the waiter and calls FUTEX_WAKE. If it comes earlier, the waiter's RMW
 * reads from it, so the new value is visible to the waiter's FUTEX_WAIT,
 * which then returns at once (EAGAIN). Either way no wake-up is lost. An RMW
 * rather than fence + load, because ThreadSanitizer does not model fences.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>

#include "common/internal.h"
#include "common/sys.h"
#include "wait/wait-internal.h"

#define SLEEPER_SLOTS 64u

/* One counter per cache line, so unrelated words do not share a line. */
static struct {
    uint32_t n;
    char pad[64 - sizeof(uint32_t)];
} sleepers[SLEEPER_SLOTS] __attribute__((aligned(64)));

/* Detection order: the first strategy whose probe succeeds is used. */
static const struct corun__wait_ops *const strategies[] = {
    &corun__wait_umwait_ops,
    &corun__wait_mwaitx_ops,
    &corun__wait_pause_ops,
};

/* Indexed by enum corun_wait_strategy. */
static const struct corun__wait_ops *const by_id[CORUN_WAIT_NSTRATEGIES] = {
    [CORUN_WAIT_PAUSE] = &corun__wait_pause_ops,
    [CORUN_WAIT_UMWAIT] = &corun__wait_umwait_ops,
    [CORUN_WAIT_MWAITX] = &corun__wait_mwaitx_ops,
};

static const struct corun__wait_ops *chosen;

static uint32_t *slot_of(const uint32_t *addr)
{
    /* Fibonacci hashing of the word index; the top bits are the best mixed. */
    uint64_t h = ((uint64_t)(uintptr_t)addr >> 2) * 0x9e3779b97f4a7c15ull;

    return &sleepers[h >> 58].n; /* 64 slots: the top 6 bits */
}

enum corun_wait_strategy corun__wait_detect(void)
{
    for (size_t i = 0; i < CORUN_ARRAY_SIZE(strategies); i++) {
        const char *why;

        if (strategies[i]->probe(&why))
            return strategies[i]->strategy;
    }
    return CORUN_WAIT_PAUSE;
}

const struct corun__wait_ops *corun__wait_ops(void)
{
    const struct corun__wait_ops *ops = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);

    if (ops)
        return ops;
    /* Two first callers may both detect; they agree, and either store wins. */
    ops = by_id[corun__wait_detect()];
    __atomic_store_n(&chosen, ops, __ATOMIC_RELEASE);
    return ops;
}

void corun__wait_reset(void)
{
    __atomic_store_n(&chosen, NULL, __ATOMIC_RELEASE);
}

enum corun_wait_strategy corun_wait_strategy(void)
{
    return corun__wait_ops()->strategy;
}

const char *corun_wait_strategy_name(enum corun_wait_strategy s)
{
    if ((unsigned)s >= CORUN_WAIT_NSTRATEGIES)
        return "unknown";
    return by_id[s]->name;
}

bool corun_wait_strategy_supported(enum corun_wait_strategy s, const char **why)
{
    const char *reason = "no such wait strategy";
    bool ok = false;

    if ((unsigned)s < CORUN_WAIT_NSTRATEGIES)
        ok = by_id[s]->probe(&reason);
    if (why)
        *why = ok ? NULL : reason;
    return ok;
}

int corun_wait_strategy_set(enum corun_wait_strategy s)
{
    if ((unsigned)s >= CORUN_WAIT_NSTRATEGIES)
        return -EINVAL;
    if (!corun_wait_strategy_supported(s, NULL))
        return -ENOTSUP;
    __atomic_store_n(&chosen, by_id[s], __ATOMIC_RELEASE);
    return 0;
}

int corun__futex_wait(const uint32_t *addr, uint32_t val, const struct timespec *ts)
{
    if (corun__sys.futex((uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, ts, NULL, 0) == 0)
        return 0;
    switch (errno) {
    case ETIMEDOUT:
        return -ETIMEDOUT;
    case EINTR:
        return -EINTR;
    default: /* EAGAIN: the word changed before we slept. */
        return 0;
    }
}

int corun__futex_wake(uint32_t *addr, int n)
{
    long r = corun__sys.futex(addr, FUTEX_WAKE_PRIVATE, (uint32_t)n, NULL, NULL, 0);

    return r < 0 ? -errno : (int)r;
}

/* Nanoseconds on CLOCK_MONOTONIC through the syscall table's clock. */
static uint64_t now_ns(void)
{
    struct timespec ts;

    if (corun__sys.clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The sleeping half of corun_wait_u32(): registers in the sleeper table and
 * sleeps in the kernel until woken or @deadline_ns (UINT64_MAX: none).
 */
static int sleep_on(const uint32_t *addr, uint32_t expected, uint64_t deadline_ns)
{
    uint32_t *slot = slot_of(addr);
    struct timespec ts, *tsp = NULL;
    int r;

    if (deadline_ns != UINT64_MAX) {
        uint64_t now = now_ns(), left;

        if (now >= deadline_ns)
            return -ETIMEDOUT;
        left = deadline_ns - now;
        ts.tv_sec = (time_t)(left / 1000000000u);
        ts.tv_nsec = (long)(left % 1000000000u);
        tsp = &ts;
    }
    __atomic_fetch_add(slot, 1, __ATOMIC_SEQ_CST);
    r = corun__futex_wait(addr, expected, tsp);
    __atomic_fetch_sub(slot, 1, __ATOMIC_RELAXED);
    return r == -ETIMEDOUT ? -ETIMEDOUT : 0; /* EINTR is a spurious return */
}

int corun_wait_u32(const uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    uint64_t deadline_ns = UINT64_MAX;

    if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != expected)
        return 0;
    if (timeout_ns == 0)
        return -ETIMEDOUT;
    if (timeout_ns != CORUN_WAIT_FOREVER) {
        uint64_t now = now_ns();

        deadline_ns = now + timeout_ns < now ? UINT64_MAX - 1 : now + timeout_ns;
    }
    /* The spin is about a microsecond; a shorter timeout still gets one. */
    if (corun__wait_ops()->spin(addr, expected, corun__wait_ticks() + CORUN__WAIT_SPIN_TICKS)) {
        /* Acquire what the changer published (an acquire load, not a fence,
         * for ThreadSanitizer's sake). */
        (void)__atomic_load_n(addr, __ATOMIC_ACQUIRE);
        return 0;
    }
    return sleep_on(addr, expected, deadline_ns);
}

int corun_wake_u32(uint32_t *addr, int n)
{
    if (n <= 0)
        return 0;
    /* The RMW pairs with the waiter's increment; see the top of the file. */
    if (__atomic_fetch_add(slot_of(addr), 0, __ATOMIC_SEQ_CST) == 0)
        return 0;
    return corun__futex_wake(addr, n);
}
