/*
 * wait-internal.h — what the files of the wait box share: the strategy ops
 * table each backend file exports (wait-umwait.c, wait-mwaitx.c,
 * wait-pause.c), the TSC-style tick counter the spin deadlines use, and the
 * futex helpers wait.c and wait-mutex.c both call.
 */
#ifndef CORUN_WAIT_INTERNAL_H
#define CORUN_WAIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "common/sys.h"
#include "corun/wait.h"

/* -DCORUN__WAIT_X86=0 builds the portable paths on x86 too (to test them). */
#ifndef CORUN__WAIT_X86
#if defined(__x86_64__) || defined(__i386__)
#define CORUN__WAIT_X86 1
#else
#define CORUN__WAIT_X86 0
#endif
#endif
#if CORUN__WAIT_X86
#include <x86intrin.h>
#endif

/*
 * How long a waiter watches the word before it sleeps in the kernel, in
 * ticks of corun__wait_ticks() (TSC cycles on x86, ~2-3 GHz: about a
 * microsecond). Long enough to catch a release by a lock holder running on
 * another CPU with a short critical section; short enough that a waiter whose
 * holder was preempted gives its CPU back quickly. See docs/internals/wait.md.
 */
#ifndef CORUN__WAIT_SPIN_TICKS
#define CORUN__WAIT_SPIN_TICKS 3000u
#endif

/*
 * How long a corun_mutex waiter waits before it reserves the lock for itself
 * (STARVING), in ticks of corun__wait_ticks(): about a millisecond. Bounds
 * the unfairness of a lock that lets running threads barge ahead of
 * sleepers. See docs/internals/wait.md.
 */
#ifndef CORUN__MUTEX_STARVE_TICKS
#define CORUN__MUTEX_STARVE_TICKS 2500000u
#endif

/* The bits of corun_mutex.state (wait-mutex.c says what each means). */
#define CORUN__MUTEX_LOCKED   1u /* held */
#define CORUN__MUTEX_SLEEPERS 2u /* a waiter may sleep in FUTEX_WAIT on the word */
#define CORUN__MUTEX_AWAKE    4u /* a waiter is awake to retry: unlock need not wake one */
#define CORUN__MUTEX_STARVING 8u /* reserved for a waiter that waited too long */
/* Bits 8-15 count the waiters that went to sleep (mod 256) while SLEEPERS
 * is set: so that an unlock that clears SLEEPERS by comparing the word with
 * what it wrote cannot miss a sleeper that queued in between (ABA). */
#define CORUN__MUTEX_SEQ_ONE  0x100u
#define CORUN__MUTEX_SEQ_MASK 0xff00u

/* One wait strategy (one backend file). */
struct corun__wait_ops {
    const char *name;
    enum corun_wait_strategy strategy;
    /*
     * Whether the CPU has the instructions, read through corun__sys.cpuid.
     * When false, *why (never NULL) is set to a static sentence.
     */
    bool (*probe)(const char **why);
    /*
     * Watches *addr until it differs from @expected (returns true) or
     * corun__wait_ticks() reaches @deadline (returns false). Never enters the
     * kernel; may return true only after re-reading a changed value.
     */
    bool (*spin)(const uint32_t *addr, uint32_t expected, uint64_t deadline);
    /* Backs off for a short time that grows with @round (0, 1, 2...). */
    void (*relax)(unsigned round);
};

extern const struct corun__wait_ops corun__wait_pause_ops;
extern const struct corun__wait_ops corun__wait_umwait_ops;
extern const struct corun__wait_ops corun__wait_mwaitx_ops;

/* The strategy in use, chosen on first call (wait.c). Never NULL. */
const struct corun__wait_ops *corun__wait_ops(void);

/*
 * Detects the best strategy from CPUID through corun__sys.cpuid, without
 * caching (tests mock CPUID and call it directly).
 */
enum corun_wait_strategy corun__wait_detect(void);

/* Forgets the chosen strategy so the next use detects it again (tests). */
void corun__wait_reset(void);

/* A cheap monotonic tick: the TSC on x86, nanoseconds elsewhere. */
static inline uint64_t corun__wait_ticks(void)
{
#if CORUN__WAIT_X86
    return __rdtsc();
#else
    struct timespec ts;

    corun__sys.clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* One spin-loop hint: PAUSE on x86, YIELD on arm64, a compiler barrier else. */
static inline void corun__wait_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * FUTEX_WAIT_PRIVATE on @addr while it holds @val, for at most @ts (NULL:
 * forever), through corun__sys.futex. Returns 0 when woken or on a value
 * mismatch (EAGAIN), -EINTR, or -ETIMEDOUT.
 */
int corun__futex_wait(const uint32_t *addr, uint32_t val, const struct timespec *ts);

/* FUTEX_WAKE_PRIVATE of up to @n sleepers. Returns the number woken or -errno. */
int corun__futex_wake(uint32_t *addr, int n);

#endif /* CORUN_WAIT_INTERNAL_H */
