/*
 * corun/wait.h — waiting without stealing cycles: wait for a 32-bit word to
 * change, wake its waiters, and a mutex and condition variable built on them.
 *
 * A waiting thread first watches the word for a short while with the best
 * instruction the CPU offers, then sleeps in the kernel (futex). The watching
 * instruction is the wait strategy, chosen once at run time from CPUID:
 *
 *   umwait  UMONITOR/UMWAIT (and TPAUSE to back off), Intel WAITPKG,
 *           CPUID.(EAX=7,ECX=0):ECX[5]. The core naps in C0.1 until the
 *           watched cache line is written or a TSC deadline passes.
 *   mwaitx  MONITORX/MWAITX, AMD, CPUID.80000001h:ECX[29]. The same, with a
 *           timer in TSC ticks.
 *   pause   a short PAUSE loop with exponential backoff, everywhere else
 *           (and on every non-x86 build).
 *
 * The first two leave the core's pipeline to its SMT sibling and draw less
 * power while they watch; PAUSE only slows the spinning thread down. All three
 * give up after about a microsecond and the thread sleeps in the kernel.
 *
 * The box stands alone: it needs only libc and the kernel's futex, not hwloc
 * or libpfm4. Waits are process-private (FUTEX_PRIVATE_FLAG): a word in
 * memory shared between processes is not supported.
 *
 * The checking build (CMake option CORUN_WAIT_DEBUG, which defines
 * CORUN_WAIT_DEBUG) records each mutex's owner and asserts in
 * corun_mutex_unlock() that the caller holds it; corun_mutex_held() and
 * corun_mutex_notheld() are then exact and meant for the caller's assert().
 */
#ifndef CORUN_WAIT_H
#define CORUN_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include <corun/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum corun_wait_strategy {
    CORUN_WAIT_PAUSE = 0,  /* PAUSE backoff, then futex */
    CORUN_WAIT_UMWAIT = 1, /* UMONITOR/UMWAIT (Intel WAITPKG), then futex */
    CORUN_WAIT_MWAITX = 2, /* MONITORX/MWAITX (AMD), then futex */
};
#define CORUN_WAIT_NSTRATEGIES 3

/* A timeout meaning "no timeout". */
#define CORUN_WAIT_FOREVER UINT64_MAX

/*
 * corun_wait_strategy() - the strategy in use. The first call chooses it
 * from CPUID (WAITPKG first, then MONITORX, else PAUSE); later calls return
 * the same answer unless corun_wait_strategy_set() changed it. Thread-safe.
 */
CORUN_API enum corun_wait_strategy corun_wait_strategy(void);

/*
 * corun_wait_strategy_name() - "pause", "umwait" or "mwaitx"; "unknown" for
 * a value outside the enum. Never NULL; the string is static.
 */
CORUN_API const char *corun_wait_strategy_name(enum corun_wait_strategy s);

/*
 * corun_wait_strategy_supported() - whether this CPU (and build) can run
 * strategy @s. When it cannot and @why is not NULL, *@why is set to a static
 * sentence saying why (the CPUID bit that is clear, or "not an x86-64
 * build"); when it can, *@why is set to NULL. Thread-safe.
 */
CORUN_API bool corun_wait_strategy_supported(enum corun_wait_strategy s, const char **why);

/*
 * corun_wait_strategy_set() - use strategy @s from now on (benchmarks compare
 * them). Returns 0, -EINVAL for a value outside the enum, or -ENOTSUP when the
 * CPU lacks it (corun_wait_strategy_supported() says why). Thread-safe: waits
 * already in progress finish with the strategy they started with.
 */
CORUN_API int corun_wait_strategy_set(enum corun_wait_strategy s);

/*
 * corun_wait_u32() - wait until *@addr may differ from @expected.
 *
 * Returns 0 when *@addr was seen to differ from @expected, when a
 * corun_wake_u32() on @addr woke the caller, or spuriously: a signal, a
 * wake meant for another word, or a change and change back that went
 * unnoticed. Callers therefore re-check their condition in a loop. Returns
 * -ETIMEDOUT when @timeout_ns nanoseconds (CLOCK_MONOTONIC, relative to the
 * call) passed first; a @timeout_ns of 0 only checks the word;
 * CORUN_WAIT_FOREVER never times out.
 *
 * The caller watches for a short while with the wait strategy, then sleeps
 * in the kernel; only a sleeping caller needs corun_wake_u32() to notice the
 * change. @addr must be 4-byte aligned and stay valid until the call
 * returns. Thread-safe.
 */
CORUN_API int corun_wait_u32(const uint32_t *addr, uint32_t expected, uint64_t timeout_ns);

/*
 * corun_wake_u32() - wake up to @n threads sleeping in corun_wait_u32() on
 * @addr (INT32_MAX for all; @n <= 0 wakes none and returns 0). Call it after
 * storing the new value. Makes no system call when no thread sleeps on a
 * word that shares @addr's slot in a small table of sleeper counts (a
 * collision costs one useless futex call, never a lost wake-up). Returns the
 * number of threads woken, or a negative errno from futex (-EFAULT for a bad
 * address). Thread-safe.
 */
CORUN_API int corun_wake_u32(uint32_t *addr, int n);

/* ---- mutex ---------------------------------------------------------------- */

/*
 * A mutual-exclusion lock: one 32-bit word (held, sleepers, a waiter awake,
 * reserved for a starving waiter) and, in the checking build, the owner's
 * thread id. Caller
 * allocated, embeddable, no destructor; initialise it with
 * CORUN_MUTEX_INIT or corun_mutex_init(). Not recursive. Unlocking from a
 * thread other than the owner is a bug (asserted in the checking build).
 * Fields are private. Lock, trylock, unlock and the held checks are
 * thread-safe; init is not (call it before sharing @m). Process-private.
 */
struct corun_mutex {
    uint32_t state;
    uint32_t owner;
};
/* clang-format off */
#define CORUN_MUTEX_INIT {0, 0}
/* clang-format on */

/* Sets @m free. Never fails. */
CORUN_API void corun_mutex_init(struct corun_mutex *m);

/*
 * corun_mutex_lock() - take @m, waiting as long as needed: one atomic
 * compare-and-swap when free; otherwise the wait strategy for about a
 * microsecond (unless another waiter already watches), then futex sleep.
 * Not FIFO: a running thread may take @m ahead of sleeping ones, but a
 * waiter that has waited about a millisecond reserves @m for itself, so
 * nobody waits much longer than that while others keep taking it. Never
 * fails.
 */
CORUN_API void corun_mutex_lock(struct corun_mutex *m);

/*
 * corun_mutex_trylock() - take @m if it is free and not reserved for a
 * waiter that has waited too long (see corun_mutex_lock()). Returns true when
 * taken.
 */
CORUN_API bool corun_mutex_trylock(struct corun_mutex *m);

/*
 * corun_mutex_unlock() - release @m, which the caller holds; wakes one
 * sleeper if there is one (a system call only then).
 */
CORUN_API void corun_mutex_unlock(struct corun_mutex *m);

/*
 * corun_mutex_held() / corun_mutex_notheld() - for assert(). In the checking
 * build, whether the calling thread holds @m / does not hold it. In the
 * normal build the owner is not recorded: held() says whether any thread
 * holds @m, and notheld() returns true, so that neither assertion can fire
 * wrongly.
 */
CORUN_API bool corun_mutex_held(const struct corun_mutex *m);
CORUN_API bool corun_mutex_notheld(const struct corun_mutex *m);

/* ---- condition variable -------------------------------------------------- */

/*
 * A condition variable: a sequence number that signal and broadcast bump.
 * Caller allocated, embeddable, no destructor; CORUN_COND_INIT or
 * corun_cond_init(). Fields are private.
 */
struct corun_cond {
    uint32_t seq;
};
/* clang-format off */
#define CORUN_COND_INIT {0}
/* clang-format on */

/* Sets @c to its initial state. Never fails; not thread-safe (call it first). */
CORUN_API void corun_cond_init(struct corun_cond *c);

/*
 * corun_cond_wait() - release @m (held by the caller), wait for a signal or
 * broadcast on @c, take @m again. Returns 0 when woken (possibly spuriously:
 * callers loop on their predicate) or -ETIMEDOUT after @timeout_ns
 * (CORUN_WAIT_FOREVER for none). @m is held again in both cases.
 */
CORUN_API int corun_cond_wait(struct corun_cond *c, struct corun_mutex *m, uint64_t timeout_ns);

/*
 * corun_cond_signal() / corun_cond_broadcast() - wake at least one / every
 * waiter of @c. A signal can wake more than one waiter (those still watching
 * the word see it change). No system call when nobody sleeps. Thread-safe;
 * holding the mutex is not required.
 */
CORUN_API void corun_cond_signal(struct corun_cond *c);
CORUN_API void corun_cond_broadcast(struct corun_cond *c);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_WAIT_H */
