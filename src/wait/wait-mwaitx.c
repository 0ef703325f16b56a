/*
 * wait-mwaitx.c — the AMD strategy: MONITORX arms the address monitor on the
 * word's cache line, MWAITX waits until that line is written, its timer
 * expires, or an interrupt arrives.
 *
 * MONITORX is CPUID.80000001h:ECX[29]; unlike MONITOR/MWAIT the pair runs at
 * CPL3. MWAITX takes its timer in TSC ticks in EBX when ECX[1] is set; the
 * hint 0xF0 asks for no C-state (stay in C0), since our waits are about a
 * microsecond. AMD has no TPAUSE, so backing off uses PAUSE.
 *
 * The functions carry target("mwaitx") so the file builds with plain -O2 for
 * any x86-64; they run only after the probe saw the CPUID bit.
 */
#include "wait/wait-internal.h"

#define CPUID81_ECX_MONITORX    (1u << 29)
#define MWAITX_ECX_TIMER_ENABLE (1u << 1)
#define MWAITX_HINT_C0          0xf0u

static bool mwaitx_probe(const char **why)
{
#if CORUN__WAIT_X86
    uint32_t r[4];

    corun__sys.cpuid(0x80000000u, 0, r);
    if (r[0] >= 0x80000001u) {
        corun__sys.cpuid(0x80000001u, 0, r);
        if (r[2] & CPUID81_ECX_MONITORX) {
            *why = NULL;
            return true;
        }
    }
    *why = "the CPU lacks MONITORX (CPUID.80000001h:ECX[29] clear)";
#else
    *why = "not an x86-64 build";
#endif
    return false;
}

#if CORUN__WAIT_X86
__attribute__((target("mwaitx"))) static bool mwaitx_spin(const uint32_t *addr, uint32_t expected,
                                                          uint64_t deadline)
{
    for (;;) {
        uint64_t now;

        /* Arm first, then read: a write after the read still ends the wait. */
        _mm_monitorx((void *)addr, 0, 0);
        if (__atomic_load_n(addr, __ATOMIC_RELAXED) != expected)
            return true;
        now = __rdtsc();
        if (now >= deadline)
            return false;
        _mm_mwaitx(MWAITX_ECX_TIMER_ENABLE, MWAITX_HINT_C0,
                   deadline - now > UINT32_MAX ? UINT32_MAX : (uint32_t)(deadline - now));
    }
}
#else
static bool mwaitx_spin(const uint32_t *addr, uint32_t expected, uint64_t deadline)
{
    return corun__wait_pause_ops.spin(addr, expected, deadline);
}
#endif

static void mwaitx_relax(unsigned round)
{
    corun__wait_pause_ops.relax(round);
}

const struct corun__wait_ops corun__wait_mwaitx_ops = {
    .name = "mwaitx",
    .strategy = CORUN_WAIT_MWAITX,
    .probe = mwaitx_probe,
    .spin = mwaitx_spin,
    .relax = mwaitx_relax,
};
