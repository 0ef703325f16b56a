/*
 * wait-mutex.c — corun_mutex and corun_cond on top of the wait strategy and
 * futex.
 *
 * The mutex is one futex word of four bits and a count:
 *   LOCKED    held.
 *   SLEEPERS  a waiter may be asleep in FUTEX_WAIT on the word (sticky: set
 *             by each sleeper, cleared only by an unlock whose FUTEX_WAKE
 *             found nobody in the kernel).
 *   AWAKE     the token: a waiter is awake and will try again, so an unlock
 *             need not wake anyone. A waiter takes it (CAS) to watch while
 *             others sleep; an unlock that wakes a sleeper sets it on the
 *             woken one's behalf. Whoever may hold it (the taker, and every
 *             waiter back from FUTEX_WAIT, since it cannot tell a wake from
 *             an EAGAIN) clears it when it takes the lock or goes to sleep.
 *   STARVING  a waiter has waited longer than CORUN__MUTEX_STARVE_TICKS
 *             (about 1 ms): the lock is reserved for it.
 *   SEQ       bits 8-15: each waiter that goes to sleep adds one (mod 256);
 *             cleared with SLEEPERS. It makes "the word has not changed"
 *             mean "nobody went to sleep" (below).
 * Uncontended, lock is one CAS 0 -> LOCKED and unlock one CAS LOCKED -> 0.
 * A waiter watches the word with the wait strategy (UMWAIT, MWAITX or PAUSE
 * backoff) for about a microsecond, then sleeps on it; running threads may
 * barge ahead of sleepers, which keeps a saturated lock and its data in one
 * cache. What the token buys: while its holder watches (or naps, below), or
 * a woken waiter has not run yet, unlock makes no system call, and the other
 * waiters sleep at once without asking to be woken. Without it (Drepper's
 * three-state lock plus the watch, this file's first version), 99.7% of the
 * FUTEX_WAKEs of a saturated lock found nobody and 99.7% of its FUTEX_WAITs
 * returned EAGAIN: the owner released and retook the lock (~100 ns) before
 * a waiter's FUTEX_WAIT checked the word, the waiter tried again at once,
 * and each of the owner's unlocks saw a sleeper announced and called the
 * kernel. The same race defeats any waiter that goes to sleep while the
 * owner keeps retaking the lock: the owner's next unlock must wake it. So a
 * woken waiter that still finds the lock held after a watch naps instead:
 * it sleeps on the word for at most NAP_NS (50 us) keeping the token, looks,
 * and naps again, until the lock is free or it starves (below). Unlocks
 * meanwhile make no system call, and the waiter's CPU is free.
 *
 * No lost wake-up. Invariant: whenever AWAKE is set, some waiter that holds
 * the token is awake, returning from FUTEX_WAIT, or napping (back within
 * NAP_NS), and will clear it, by taking the lock or by going to sleep. So a
 * lock can stay free with waiters for at most NAP_NS, not for ever. The
 * token is set only by a taker (who then holds it), or by an unlock whose
 * FUTEX_WAKE woke somebody (who holds it); when that FUTEX_WAKE woke nobody
 * the unlock clears it again. A
 * sleeper sleeps on a value v with SLEEPERS set and LOCKED (or STARVING) set,
 * and the kernel puts it to sleep only if the word still holds v. Then:
 *   - AWAKE clear in v: the owner's unlock changes the word, sees SLEEPERS
 *     without AWAKE and calls FUTEX_WAKE, after its RMW. Either the sleeper
 *     is queued and is woken, or its FUTEX_WAIT has not checked yet and sees
 *     a changed word (EAGAIN).
 *   - AWAKE set in v: its holder is awake or napping. Within NAP_NS it
 *     takes the lock, clearing AWAKE, and its own unlock sees SLEEPERS and
 *     wakes one; or it goes to sleep, clearing AWAKE, which is the case
 *     above for the lock's owner.
 *   - STARVING set: the unlock wakes every sleeper (the starving waiter may
 *     be any of them); the others find the lock reserved and sleep again.
 * SLEEPERS is cleared only by an unlock whose FUTEX_WAKE woke nobody: if the
 * word is as its RMW left it, or else if the lock is free and a second
 * FUTEX_WAKE finds nobody either. The first needs SEQ: the word can go
 * through LOCKED and back to the same value while a waiter queues (a locker
 * keeps the token the unlock set for nobody, a waiter sleeps trusting it,
 * the locker's unlock wakes nobody as AWAKE is set), and without the count
 * the flags were dropped with that waiter asleep for good: test_wait's
 * producer/consumer drill hung about once in fifty runs under
 * ThreadSanitizer. The second holds because every sleeper slept on a held or
 * reserved word: one that has not reached the kernel finds a free word
 * changed. Until then that unlock is the token's holder: it drops the token
 * where the lock is held or reserved (the owner's unlock then wakes a
 * sleeper) and wakes a sleeper itself where the lock is free. A woken
 * waiter takes the lock with SLEEPERS set, as it cannot know whether others
 * sleep: its unlock then makes one FUTEX_WAKE that may find nobody.
 *
 * Bounded unfairness. A waiter that has waited CORUN__MUTEX_STARVE_TICKS
 * sets STARVING (one at a time); from then on nobody else takes the lock
 * (trylock fails, barging stops), the holder's unlock wakes all sleepers and
 * the starving waiter takes it. SLEEPERS still set, its unlock wakes the
 * longest sleeper (futex queues are FIFO for normal-priority threads), which
 * is older than the bound by then and reserves the lock at once. So a
 * waiter gets the lock within about 1 ms plus, per waiter ahead of it, one
 * wake-up latency (or nap) and one critical section, once it has a CPU.
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

/*
 * How long the token's holder naps when the lock it was woken for is still
 * held (see lock_slow()): the most a lock can stay free while a waiter
 * naps, and the period at which the holder looks again. 50 us: a saturated
 * owner runs ~600 critical sections of the benchmark between two looks, so
 * the looks cost little; a lock left free waits at most that long.
 */
#ifndef NAP_NS
#define NAP_NS 50000
#endif

/* Backoff rounds between two reads in watch_sparse(): 1, 2, 4, then 8. */
#ifndef SPARSE_MAX
#define SPARSE_MAX 8u
#endif

/* The state word's bits; wait-internal.h names them for the tests. */
enum {
    LOCKED = CORUN__MUTEX_LOCKED,
    SLEEPERS = CORUN__MUTEX_SLEEPERS,
    AWAKE = CORUN__MUTEX_AWAKE,
    STARVING = CORUN__MUTEX_STARVING,
    SEQ_ONE = CORUN__MUTEX_SEQ_ONE,
    SEQ = CORUN__MUTEX_SEQ_MASK,
};

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
    m->state = 0;
    m->owner = 0;
}

/* Replaces *@m's state @c (updated on failure) by @n. */
static bool cas(struct corun_mutex *m, uint32_t *c, uint32_t n, int order)
{
    return __atomic_compare_exchange_n(&m->state, c, n, false, order, __ATOMIC_RELAXED);
}

/*
 * Like ops->spin(), but reads the word only every few hundred nanoseconds,
 * then every microsecond or so (SPARSE_MAX rounds of relax(2): 8 x 4 PAUSEs,
 * ~3 us where PAUSE exits to the hypervisor, ~1 us on bare metal). For a
 * waiter that slept and finds the lock still held: its owner keeps retaking
 * it, and each read pulls the line away from the owner, whose next CAS then
 * waits for it. What it must notice is an owner that has gone, whose lock
 * stays free, not the gap between two critical sections.
 */
static bool watch_sparse(const struct corun__wait_ops *ops, const uint32_t *w, uint32_t c,
                         uint64_t deadline)
{
    for (unsigned n = 1;; n += n < SPARSE_MAX ? n : 0) {
        if (__atomic_load_n(w, __ATOMIC_RELAXED) != c)
            return true;
        if (corun__wait_ticks() >= deadline)
            return false;
        for (unsigned i = 0; i < n; i++)
            ops->relax(2);
    }
}

/*
 * The contended path of corun_mutex_lock(), a loop over the state @c last
 * seen. In order:
 *   - free (and not reserved for a starving waiter, unless that is us): take
 *     it; hand back the AWAKE token if we hold it, announce SLEEPERS if we
 *     slept (others may still sleep), drop STARVING if it was ours;
 *   - we have waited longer than CORUN__MUTEX_STARVE_TICKS: reserve the lock
 *     (STARVING), once;
 *   - sleepers exist and nobody holds AWAKE: take the token, so that unlocks
 *     stop waking sleepers while we watch;
 *   - watch the word until the deadline (sparsely once we have slept),
 *     unless another waiter holds the token or the lock is reserved for
 *     someone else;
 *   - back from the kernel with the token and the lock held: nap;
 *   - else sleep on a value with SLEEPERS set and LOCKED (or STARVING) set,
 *     and AWAKE clear if we held the token: the unlock that changes it wakes
 *     one of us. Back (woken or turned back), we hold the token.
 */
static void lock_slow(struct corun_mutex *m)
{
    const struct corun__wait_ops *ops = corun__wait_ops();
    uint64_t deadline = 0, starve_at = 0; /* set when first found held */
    uint32_t c = __atomic_load_n(&m->state, __ATOMIC_RELAXED), v;
    bool token = false, slept = false, starver = false;

    for (;;) {
        if (!(c & LOCKED) && (!(c & STARVING) || starver)) {
            v = c | LOCKED;
            if (token)
                v &= ~AWAKE;
            if (starver)
                v &= ~STARVING;
            if (slept)
                v |= SLEEPERS;
            if (cas(m, &c, v, __ATOMIC_ACQUIRE))
                return;
            continue;
        }
        if (!starve_at) {
            /* Only now: an owner that finds just flags set reads no clock. */
            deadline = corun__wait_ticks() + CORUN__WAIT_SPIN_TICKS;
            starve_at = deadline - CORUN__WAIT_SPIN_TICKS + CORUN__MUTEX_STARVE_TICKS;
        }
        if (!starver && !(c & STARVING) && corun__wait_ticks() >= starve_at) {
            if (cas(m, &c, c | STARVING, __ATOMIC_RELAXED)) {
                starver = true;
                c |= STARVING;
            }
            continue;
        }
        if ((c & (SLEEPERS | AWAKE)) == SLEEPERS) {
            if (cas(m, &c, c | AWAKE, __ATOMIC_RELAXED)) {
                token = true;
                c |= AWAKE;
            }
            continue;
        }
        /*
         * Someone else watches for the sleepers, or the lock is reserved
         * for a starving waiter: a second watcher would only burn a CPU
         * and drag the lock between caches.
         */
        bool pointless = ((c & SLEEPERS) && !token) || ((c & STARVING) && !starver);

        if (!pointless && (slept ? watch_sparse(ops, &m->state, c, deadline)
                                 : ops->spin(&m->state, c, deadline))) {
            c = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
            if (!(c & LOCKED) && !starver) {
                /*
                 * Seen free: leave the releaser a moment to take it back.
                 * If it does, the lock is saturated, and it running the
                 * critical sections back to back, its cache hot, beats
                 * passing the lock and its data to this CPU.
                 */
                ops->relax(0);
                c = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
            }
            continue;
        }
        if (token && slept && !starver && (c & LOCKED)) {
            /*
             * Woken, watched, and the lock is still held: its owner keeps
             * retaking it. Nap on the word keeping the token, so that the
             * owner's unlocks make no system call and this CPU is free,
             * and look again after NAP_NS. Sleeping for good instead would
             * make the owner's next unlock, ~100 ns away, wake a waiter
             * again: one FUTEX_WAKE per round, and a waiter always awake.
             */
            struct timespec nap = {.tv_sec = 0, .tv_nsec = NAP_NS};

            corun__futex_wait(&m->state, c, &nap);
            deadline = 0; /* look, then nap again: no watching between naps */
            c = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
            continue;
        }
        /*
         * A holder of the token gives it up as it sleeps, so that the next
         * unlock wakes somebody; anyone else leaves it to its holder, who
         * is awake and will wake the next one (see the top of the file).
         */
        v = (c | SLEEPERS) & ~SEQ;
        v |= (c + SEQ_ONE) & SEQ; /* one more sleeper: see unlock_slow() */
        if (token)
            v &= ~AWAKE;
        if (!cas(m, &c, v, __ATOMIC_RELAXED))
            continue;
        corun__futex_wait(&m->state, v, NULL);
        slept = token = true;
        deadline = corun__wait_ticks() + CORUN__WAIT_SPIN_TICKS;
        c = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
    }
}

void corun_mutex_lock(struct corun_mutex *m)
{
    uint32_t c = 0;

#ifdef CORUN_WAIT_DEBUG
    CHECK(__atomic_load_n(&m->owner, __ATOMIC_RELAXED) != self_id(),
          "corun_mutex_lock: mutex %p is already held by this thread (%u): deadlock", (void *)m,
          self_id());
#endif
    if (!cas(m, &c, LOCKED, __ATOMIC_ACQUIRE))
        lock_slow(m);
    note_owner(m);
}

bool corun_mutex_trylock(struct corun_mutex *m)
{
    uint32_t c = 0;

    /* Free with flags set is still free, unless reserved for a starving waiter. */
    while (!(c & (LOCKED | STARVING)))
        if (cas(m, &c, c | LOCKED, __ATOMIC_ACQUIRE)) {
            note_owner(m);
            return true;
        }
    return false;
}

/*
 * The unlock of a state @c with flags: release, and wake one sleeper if
 * nobody holds the AWAKE token (setting it for the one woken), or all of them
 * when the lock is reserved for a starving waiter (it may be any of them).
 * When the kernel finds nobody asleep, the sleepers announced are still on
 * their way in and will find the word changed: the flags are dropped, if the
 * word is still as we left it, so the next unlocks make no system call.
 */
static void unlock_slow(struct corun_mutex *m, uint32_t c)
{
    uint32_t v;
    int wake;

    do {
        v = c & ~LOCKED;
        wake = 0;
        if ((c & (SLEEPERS | STARVING)) == (SLEEPERS | STARVING)) {
            wake = INT32_MAX;
        } else if ((c & (SLEEPERS | AWAKE)) == SLEEPERS) {
            v |= AWAKE;
            wake = 1;
        }
    } while (!cas(m, &c, v, __ATOMIC_RELEASE));
    if (!wake || corun__futex_wake(&m->state, wake) > 0)
        return;
    /*
     * Nobody was asleep in the kernel to take the token we set: it is ours
     * to get rid of, and until we do, a waiter may have gone to sleep
     * trusting it (a value with AWAKE set), while a locker kept it and its
     * unlock woke nobody. Word unchanged (the sleep count proves nobody
     * queued meanwhile): the sleepers announced are on their way in and will
     * find the word changed; drop the flags. Otherwise, as the token's
     * holder leaving: with the lock held or reserved, drop the token (that
     * unlock will wake a sleeper); with the lock free and sleepers
     * announced, wake one to hold it, or if the kernel has nobody, drop the
     * flags as above. Anyone already asleep slept on a held or reserved
     * word, so a FUTEX_WAKE that finds nobody proves there is nobody.
     */
    c = v;
    for (;;) {
        if (c == v || (!(c & (LOCKED | STARVING)) && (c & SLEEPERS))) {
            if (c != v && corun__futex_wake(&m->state, 1) > 0)
                return;
            if (cas(m, &c, c & ~(SLEEPERS | AWAKE | SEQ), __ATOMIC_RELAXED))
                return;
        } else if (!(c & AWAKE) || cas(m, &c, c & ~AWAKE, __ATOMIC_RELAXED)) {
            return;
        }
    }
}

void corun_mutex_unlock(struct corun_mutex *m)
{
    uint32_t c = LOCKED;

#ifdef CORUN_WAIT_DEBUG
    uint32_t owner = __atomic_load_n(&m->owner, __ATOMIC_RELAXED);

    CHECK(owner == self_id(),
          "corun_mutex_unlock: mutex %p is not held by this thread (%u); owner %u (0: none)",
          (void *)m, self_id(), owner);
    __atomic_store_n(&m->owner, 0, __ATOMIC_RELAXED);
#endif
    if (!cas(m, &c, 0, __ATOMIC_RELEASE))
        unlock_slow(m, c);
}

bool corun_mutex_held(const struct corun_mutex *m)
{
#ifdef CORUN_WAIT_DEBUG
    return __atomic_load_n(&m->owner, __ATOMIC_RELAXED) == self_id();
#else
    return __atomic_load_n(&m->state, __ATOMIC_RELAXED) & LOCKED;
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
