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

#include "mutex-drills.h"

static void test_exact_total(void **state)
{
    drill_counter(6, 20000, false);
}

static void test_exact_total_trylock(void **state)
{
    drill_counter(6, 20000, true);
}

static void test_cond_queue_exact(void **state)
{
    drill_queue(5000);
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
