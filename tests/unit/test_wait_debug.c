/*
 * test_wait_debug.c — the checking build of corun_mutex (CORUN_WAIT_DEBUG):
 * held/notheld are exact per thread, and unlocking a mutex the caller does
 * not hold, or locking one it holds, aborts (seen from a forked child).
 *
 * The box's sources are compiled into this test with CORUN_WAIT_DEBUG set,
 * whatever the library build chose; the test's own definitions take the
 * place of the archive's.
 */
#ifndef CORUN_WAIT_DEBUG
#define CORUN_WAIT_DEBUG 1
#endif
#include "wait/wait.c"
#include "wait/wait-mutex.c"
#include "wait/wait-mwaitx.c"
#include "wait/wait-pause.c"
#include "wait/wait-umwait.c"

#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static struct corun_mutex shared = CORUN_MUTEX_INIT;

static void *other_thread_view(void *arg)
{
    bool *held = arg;

    held[0] = corun_mutex_held(&shared);
    held[1] = corun_mutex_notheld(&shared);
    return NULL;
}

static void test_held_is_per_thread(void **state)
{
    bool other[2];
    pthread_t t;

    assert_false(corun_mutex_held(&shared));
    assert_true(corun_mutex_notheld(&shared));
    corun_mutex_lock(&shared);
    assert_true(corun_mutex_held(&shared));
    assert_false(corun_mutex_notheld(&shared));
    assert_int_equal(pthread_create(&t, NULL, other_thread_view, other), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_false(other[0]); /* held, but not by that thread */
    assert_true(other[1]);
    corun_mutex_unlock(&shared);
    assert_false(corun_mutex_held(&shared));
    assert_true(corun_mutex_trylock(&shared));
    assert_true(corun_mutex_held(&shared));
    corun_mutex_unlock(&shared);
}

/* Runs @fn in a child; returns the signal that ended it, or 0 for an exit. */
static int child_signal(void (*fn)(void))
{
    int status;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void unlock_free(void)
{
    struct corun_mutex m = CORUN_MUTEX_INIT;

    corun_mutex_unlock(&m);
}

static void lock_twice(void)
{
    struct corun_mutex m = CORUN_MUTEX_INIT;

    corun_mutex_lock(&m);
    corun_mutex_lock(&m);
}

static void lock_unlock(void)
{
    struct corun_mutex m = CORUN_MUTEX_INIT;

    corun_mutex_lock(&m);
    corun_mutex_unlock(&m);
}

static void *unlock_shared(void *arg)
{
    corun_mutex_unlock(&shared);
    return NULL;
}

static void unlock_from_other_thread(void)
{
    pthread_t t;

    corun_mutex_lock(&shared);
    pthread_create(&t, NULL, unlock_shared, NULL);
    pthread_join(t, NULL);
}

static void test_misuse_aborts(void **state)
{
    assert_int_equal(child_signal(lock_unlock), 0);
    assert_int_equal(child_signal(unlock_free), SIGABRT);
    assert_int_equal(child_signal(lock_twice), SIGABRT);
    assert_int_equal(child_signal(unlock_from_other_thread), SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_is_per_thread),
        cmocka_unit_test(test_misuse_aborts),
    };

    return cmocka_run_group_tests_name("wait_debug", tests, NULL, NULL);
}
