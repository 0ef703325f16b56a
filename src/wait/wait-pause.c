/*
 * wait-pause.c — the wait strategy every CPU has: re-read the word between
 * bursts of PAUSE that double in length (1, 2, then 4), until it
 * changes or the deadline passes.
 *
 * PAUSE tells the core this is a spin loop: it avoids the memory-order
 * machine clear when the line finally changes and, on SMT cores, hands some
 * issue slots to the sibling. The backoff keeps the number of reads of a
 * contended line low, so a spinning waiter barely slows down the owner
 * writing it. It still occupies the CPU: nothing here yields it to another
 * thread, which is why the caller sleeps in the kernel soon after.
 */
#include "wait/wait-internal.h"

/*
 * Bursts stop growing at 4 PAUSEs: PAUSE takes 40-140 cycles on bare metal
 * but about 90 ns in this project's KVM guests (pause-loop exiting), so longer
 * bursts would let a release go unnoticed for most of the spin budget.
 */
#ifndef PAUSE_MAX_BURST
#define PAUSE_MAX_BURST 4u
#endif

static bool pause_probe(const char **why)
{
    *why = NULL;
    return true;
}

static void pause_relax(unsigned round)
{
    unsigned n = round < 16 && (1u << round) < PAUSE_MAX_BURST ? 1u << round : PAUSE_MAX_BURST;

    while (n--)
        corun__wait_cpu_relax();
}

static bool pause_spin(const uint32_t *addr, uint32_t expected, uint64_t deadline)
{
    unsigned round = 0;

    for (;;) {
        if (__atomic_load_n(addr, __ATOMIC_RELAXED) != expected)
            return true;
        if (corun__wait_ticks() >= deadline)
            return false;
        pause_relax(round++);
    }
}

const struct corun__wait_ops corun__wait_pause_ops = {
    .name = "pause",
    .strategy = CORUN_WAIT_PAUSE,
    .probe = pause_probe,
    .spin = pause_spin,
    .relax = pause_relax,
};
