/*
 * test_wait_starve.c — corun_mutex with the starvation bound at its
 * tightest: the box's sources are compiled in with CORUN__MUTEX_STARVE_TICKS
 * of one tick, so every waiter that finds the lock held reserves it
 * (STARVING) at once, and the paths that reserve, hand over and wake all
 * sleepers run thousands of times instead of once a millisecond. The
 * promises are those of the normal build: exact totals (lock, trylock), no
 * lost wake-up (the threads all finish), the state word clean afterwards,
 * and a condition-variable queue that sums exactly. Runs under
 * ThreadSanitizer too (make tsan).
 */
#define CORUN__MUTEX_STARVE_TICKS 1u
#include "wait/wait.c"
#include "wait/wait-mutex.c"
#include "wait/wait-mwaitx.c"
#include "wait/wait-pause.c"
#include "wait/wait-umwait.c"

#include "testutil.h"

#include <pthread.h>

#define NTHREADS 6
#define NINCS    20000

static struct corun_mutex lock = CORUN_MUTEX_INIT;
static uint64_t counter;        /* protected by lock */
static pthread_barrier_t start; /* all threads contend from the first increment */

static void *incrementer(void *arg)
{
    bool use_try = arg != NULL;

    pthread_barrier_wait(&start);
    for (int i = 0; i < NINCS; i++) {
        if (!(use_try && (i & 1) && corun_mutex_trylock(&lock)))
            corun_mutex_lock(&lock);
        counter++;
        corun_mutex_unlock(&lock);
    }
    return NULL;
}

static void run(bool use_try)
{
    pthread_t t[NTHREADS];

    counter = 0;
    assert_int_equal(pthread_barrier_init(&start, NULL, NTHREADS), 0);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, incrementer, use_try ? &t : NULL), 0);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&start);
    assert_int_equal(counter, (uint64_t)NTHREADS * NINCS);
    assert_int_equal(lock.state, 0);
}

static void test_exact_total(void **state)
{
    run(false);
}

static void test_exact_total_trylock(void **state)
{
    run(true);
}

/* Two producers, two consumers, a queue of 4 under the mutex. */
#define QCAP   4
#define NITEMS 5000

static struct {
    struct corun_mutex m;
    struct corun_cond not_empty, not_full;
    unsigned items[QCAP], head, len, taken;
    uint64_t sum;
} q = {.m = CORUN_MUTEX_INIT, .not_empty = CORUN_COND_INIT, .not_full = CORUN_COND_INIT};

static void *producer(void *p)
{
    for (unsigned i = 1; i <= NITEMS; i++) {
        corun_mutex_lock(&q.m);
        while (q.len == QCAP)
            corun_cond_wait(&q.not_full, &q.m, CORUN_WAIT_FOREVER);
        q.items[(q.head + q.len++) % QCAP] = i;
        corun_mutex_unlock(&q.m);
        corun_cond_signal(&q.not_empty);
    }
    return NULL;
}

static void *consumer(void *p)
{
    for (;;) {
        corun_mutex_lock(&q.m);
        while (q.len == 0 && q.taken < 2 * NITEMS)
            corun_cond_wait(&q.not_empty, &q.m, CORUN_WAIT_FOREVER);
        if (q.taken == 2 * NITEMS) {
            corun_mutex_unlock(&q.m);
            corun_cond_broadcast(&q.not_empty);
            return NULL;
        }
        q.sum += q.items[q.head];
        q.head = (q.head + 1) % QCAP;
        q.len--;
        q.taken++;
        corun_mutex_unlock(&q.m);
        corun_cond_signal(&q.not_full);
    }
}

static void test_cond_queue_exact(void **state)
{
    pthread_t t[4];

    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, i < 2 ? producer : consumer, NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(q.taken, 2 * NITEMS);
    assert_int_equal(q.sum, 2 * ((uint64_t)NITEMS * (NITEMS + 1) / 2));
    assert_int_equal(q.m.state, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_total),
        cmocka_unit_test(test_exact_total_trylock),
        cmocka_unit_test(test_cond_queue_exact),
    };

    return cmocka_run_group_tests_name("wait_starve", tests, NULL, NULL);
}
