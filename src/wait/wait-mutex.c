/*
 * wait-mutex.c — corun_mutex and corun_cond on top of the wait strategy and
 * futex.
 *
 * The mutex is the three-state futex lock of Drepper's "Futexes Are Tricky"
 * (0 free, 1 held, 2 held and someone may sleep), with one addition: before
 * sleeping, a waiter watches the word with the wait strategy (UMWAIT, MWAITX
 * or PAUSE backoff) for about a microsecond, so a lock released soon is taken
 * without a system call on either side. The state word itself records
 * whether anybody sleeps, so unlock calls FUTEX_WAKE only after a sleeper
 * announced itself by writing 2 — the sleeper table of wait.c is not needed.
 *
 * The condition variable is a sequence number: waiters sleep on it with
 * corun_wait_u32(), signal and broadcast bump it and call corun_wake_u32().
 *
 * The checking build (CORUN_WAIT_DEBUG) records the owner's thread id and
 * aborts, after logging why, on unlocking a mutex the caller does not hold and
 * on locking one it already holds. It aborts rather than assert()s so that
 * the checks stay in NDEBUG builds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/internal.h"
#include "wait/wait-internal.h"

enum { FREE = 0, HELD = 1, CONTENDED = 2 };

#ifdef CORUN_WAIT_DEBUG
static uint32_t self_id(void)
{
    static __thread uint32_t tid;

    if (!tid)
        tid = (uint32_t)gettid();
    return tid;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            corun__log(CORUN_LOG_ERROR, __VA_ARGS__);                                              \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void note_owner(struct corun_mutex *m)
{
    __atomic_store_n(&m->owner, self_id(), __ATOMIC_RELAXED);
}
#else
static void note_owner(struct corun_mutex *m)
{
    (void)m;
}
#endif

void corun_mutex_init(struct corun_mutex *m)
{
    m->state = FREE;
    m->owner = 0;
}

/*
 * The contended path of corun_mutex_lock(): @c is the state last seen. While
 * nobody sleeps (state 1), watch the word until the deadline, taking the lock
 * if it is seen free; then announce a sleeper (state 2) and sleep until an
 * exchange finds it free.
 */
static void lock_slow(struct corun_mutex *m, uint32_t c)
{
    const struct corun__wait_ops *ops = corun__wait_ops();
    uint64_t deadline = corun__wait_ticks() + CORUN__WAIT_SPIN_TICKS;

    for (;;) {
        if (c == FREE) {
            /* Take it as 1: we have not slept, nobody is owed a wake-up by us. */
            if (__atomic_compare_exchange_n(&m->state, &c, HELD, false, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                return;
            continue;
        }
        /*
         * Someone already sleeps: the lock is oversubscribed, and another
         * watcher would only burn a CPU and drag the lock between caches.
         */
        if (c == CONTENDED || !ops->spin(&m->state, c, deadline))
            break;
        c = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
        if (c == FREE) {
            /*
             * Seen free: leave the releaser a moment to take it back. If it
             * does, the lock is saturated, and it running the critical
             * sections back to back, its cache hot, beats passing the lock
             * and its data to this CPU; we watch on and soon sleep.
             */
            ops->relax(0);
            c = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
        }
    }
    /*
     * Taking the lock with 2 after sleeping is what keeps the others' wake-ups
     * coming: we cannot know whether another sleeper remains.
     */
    if (c != CONTENDED)
        c = __atomic_exchange_n(&m->state, CONTENDED, __ATOMIC_ACQUIRE);
    while (c != FREE) {
        corun__futex_wait(&m->state, CONTENDED, NULL);
        c = __atomic_exchange_n(&m->state, CONTENDED, __ATOMIC_ACQUIRE);
    }
}

void corun_mutex_lock(struct corun_mutex *m)
{
    uint32_t c = FREE;

#ifdef CORUN_WAIT_DEBUG
    CHECK(__atomic_load_n(&m->owner, __ATOMIC_RELAXED) != self_id(),
          "corun_mutex_lock: mutex %p is already held by this thread (%u): deadlock", (void *)m,
          self_id());
#endif
    if (!__atomic_compare_exchange_n(&m->state, &c, HELD, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        lock_slow(m, c);
    note_owner(m);
}

bool corun_mutex_trylock(struct corun_mutex *m)
{
    uint32_t c = FREE;

    if (!__atomic_compare_exchange_n(&m->state, &c, HELD, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return false;
    note_owner(m);
    return true;
}

void corun_mutex_unlock(struct corun_mutex *m)
{
#ifdef CORUN_WAIT_DEBUG
    uint32_t owner = __atomic_load_n(&m->owner, __ATOMIC_RELAXED);

    CHECK(owner == self_id(),
          "corun_mutex_unlock: mutex %p is not held by this thread (%u); owner %u (0: none)",
          (void *)m, self_id(), owner);
    __atomic_store_n(&m->owner, 0, __ATOMIC_RELAXED);
#endif
    if (__atomic_exchange_n(&m->state, FREE, __ATOMIC_RELEASE) == CONTENDED)
        corun__futex_wake(&m->state, 1);
}

bool corun_mutex_held(const struct corun_mutex *m)
{
#ifdef CORUN_WAIT_DEBUG
    return __atomic_load_n(&m->owner, __ATOMIC_RELAXED) == self_id();
#else
    return __atomic_load_n(&m->state, __ATOMIC_RELAXED) != FREE;
#endif
}

bool corun_mutex_notheld(const struct corun_mutex *m)
{
#ifdef CORUN_WAIT_DEBUG
    return __atomic_load_n(&m->owner, __ATOMIC_RELAXED) != self_id();
#else
    (void)m;
    return true;
#endif
}

void corun_cond_init(struct corun_cond *c)
{
    c->seq = 0;
}

int corun_cond_wait(struct corun_cond *c, struct corun_mutex *m, uint64_t timeout_ns)
{
    /*
     * Read under the mutex: a signaller that changes the predicate under it
     * bumps seq after this read, so the wait below returns.
     */
    uint32_t seq = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
    int r;

    corun_mutex_unlock(m);
    r = corun_wait_u32(&c->seq, seq, timeout_ns);
    corun_mutex_lock(m);
    return r == -ETIMEDOUT ? -ETIMEDOUT : 0;
}

void corun_cond_signal(struct corun_cond *c)
{
    __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELEASE);
    corun_wake_u32(&c->seq, 1);
}

void corun_cond_broadcast(struct corun_cond *c)
{
    __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELEASE);
    corun_wake_u32(&c->seq, INT32_MAX);
}
