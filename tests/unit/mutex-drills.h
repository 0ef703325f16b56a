/*
 * mutex-drills.h — the two contention drills both wait-box test programs run
 * on corun_mutex: the normal build (test_wait.c) and the one compiled with
 * a one-tick starvation bound (test_wait_starve.c). Threads released
 * together by a barrier increment one counter under the lock (with trylock
 * on alternate rounds if asked); producers and consumers pass numbered
 * items through a small queue guarded by the mutex and two condition
 * variables. Each asserts exact totals and a clean state word after: a lost
 * update, a lost wake-up (a thread never finishing) or a flag left set fails.
 * Static functions: each test program includes it once.
 */
#ifndef CORUN_TEST_MUTEX_DRILLS_H
#define CORUN_TEST_MUTEX_DRILLS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "corun/wait.h"

#define DRILL_MAX_THREADS 16
#define DRILL_QCAP 4

static struct {
    struct corun_mutex lock;
    uint64_t counter; /* protected by lock; TSan checks that it is */
    unsigned nincs;
    bool use_try;
    pthread_barrier_t start; /* all threads contend from the first increment */
} drill_c = {.lock = CORUN_MUTEX_INIT};

static void *drill_incrementer(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&drill_c.start);
    for (unsigned i = 0; i < drill_c.nincs; i++) {
        if (!(drill_c.use_try && (i & 1) && corun_mutex_trylock(&drill_c.lock)))
            corun_mutex_lock(&drill_c.lock);
        drill_c.counter++;
        corun_mutex_unlock(&drill_c.lock);
    }
    return NULL;
}

/* @nthreads threads each add @nincs under the lock: the exact total. */
static void drill_counter(unsigned nthreads, unsigned nincs, bool use_try)
{
    pthread_t t[DRILL_MAX_THREADS];

    assert_true(nthreads <= DRILL_MAX_THREADS);
    drill_c.counter = 0;
    drill_c.nincs = nincs;
    drill_c.use_try = use_try;
    assert_int_equal(pthread_barrier_init(&drill_c.start, NULL, nthreads), 0);
    for (unsigned i = 0; i < nthreads; i++)
        assert_int_equal(pthread_create(&t[i], NULL, drill_incrementer, NULL), 0);
    for (unsigned i = 0; i < nthreads; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&drill_c.start);
    assert_int_equal(drill_c.counter, (uint64_t)nthreads * nincs);
    assert_int_equal(drill_c.lock.state, 0);
}

struct drill_queue {
    struct corun_mutex m;
    struct corun_cond not_empty, not_full;
    unsigned items[DRILL_QCAP], head, len, taken, nitems;
    uint64_t sum;
};

static void *drill_producer(void *p)
{
    struct drill_queue *q = p;

    for (unsigned i = 1; i <= q->nitems; i++) {
        corun_mutex_lock(&q->m);
        while (q->len == DRILL_QCAP)
            corun_cond_wait(&q->not_full, &q->m, CORUN_WAIT_FOREVER);
        q->items[(q->head + q->len++) % DRILL_QCAP] = i;
        corun_mutex_unlock(&q->m);
        corun_cond_signal(&q->not_empty);
    }
    return NULL;
}

static void *drill_consumer(void *p)
{
    struct drill_queue *q = p;

    for (;;) {
        corun_mutex_lock(&q->m);
        while (q->len == 0 && q->taken < 2 * q->nitems)
            corun_cond_wait(&q->not_empty, &q->m, CORUN_WAIT_FOREVER);
        if (q->taken == 2 * q->nitems) {
            corun_mutex_unlock(&q->m);
            corun_cond_broadcast(&q->not_empty); /* let the other consumer out */
            return NULL;
        }
        q->sum += q->items[q->head];
        q->head = (q->head + 1) % DRILL_QCAP;
        q->len--;
        q->taken++;
        corun_mutex_unlock(&q->m);
        corun_cond_signal(&q->not_full);
    }
}

/* Two producers of 1..@nitems, two consumers: every item taken once. */
static void drill_queue(unsigned nitems)
{
    static struct drill_queue q;
    pthread_t t[4];

    q = (struct drill_queue){.m = CORUN_MUTEX_INIT, .not_empty = CORUN_COND_INIT,
                             .not_full = CORUN_COND_INIT, .nitems = nitems};
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, i < 2 ? drill_producer : drill_consumer, &q),
                         0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(q.taken, 2 * nitems);
    assert_int_equal(q.sum, 2 * ((uint64_t)nitems * (nitems + 1) / 2));
    assert_int_equal(q.m.state, 0);
}

#endif
