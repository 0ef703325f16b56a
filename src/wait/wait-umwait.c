/*
 * wait-umwait.c — the Intel WAITPKG strategy: UMONITOR arms the address
 * monitor on the word's cache line, UMWAIT naps in C0.1 until that line is
 * written, the TSC reaches the deadline, or an interrupt arrives; TPAUSE is
 * the timed nap the mutex backs off with.
 *
 * WAITPKG is CPUID.(EAX=7,ECX=0):ECX[5]. The instructions run at CPL3 unless
 * the kernel sets CR4.TSD; the OS also caps each nap through
 * IA32_UMWAIT_CONTROL (Linux: /sys/devices/system/cpu/umwait_control), which
 * only makes UMWAIT return early — the loop re-arms. C0.1 rather than C0.2:
 * our naps are about a microsecond, and C0.1 wakes faster.
 *
 * The functions carry target("waitpkg") so the file builds with plain -O2
 * for any x86-64; they run only after the probe saw the CPUID bit. On other
 * architectures the probe says no and the table is never used.
 */
#include "wait/wait-internal.h"

#define CPUID7_ECX_WAITPKG (1u << 5)
#define UMWAIT_C01         1u /* control bit 0 set: the lighter C0.1 state */

static bool umwait_probe(const char **why)
{
#if CORUN__WAIT_X86
    uint32_t r[4];

    corun__sys.cpuid(0, 0, r);
    if (r[0] >= 7) {
        corun__sys.cpuid(7, 0, r);
        if (r[2] & CPUID7_ECX_WAITPKG) {
            *why = NULL;
            return true;
        }
    }
    *why = "the CPU lacks WAITPKG (CPUID.(EAX=7,ECX=0):ECX[5] clear)";
#else
    *why = "not an x86-64 build";
#endif
    return false;
}

#if CORUN__WAIT_X86
__attribute__((target("waitpkg"))) static bool umwait_spin(const uint32_t *addr, uint32_t expected,
                                                           uint64_t deadline)
{
    for (;;) {
        /* Arm first, then read: a write after the read still ends the nap. */
        _umonitor((void *)addr);
        if (__atomic_load_n(addr, __ATOMIC_RELAXED) != expected)
            return true;
        if (__rdtsc() >= deadline)
            return false;
        _umwait(UMWAIT_C01, deadline);
    }
}

__attribute__((target("waitpkg"))) static void umwait_relax(unsigned round)
{
    unsigned shift = round < 6 ? round : 6;

    /* About 100 TSC cycles doubling to 6,400: PAUSE's range, without spinning. */
    _tpause(UMWAIT_C01, __rdtsc() + (100ull << shift));
}
#else
static bool umwait_spin(const uint32_t *addr, uint32_t expected, uint64_t deadline)
{
    return corun__wait_pause_ops.spin(addr, expected, deadline);
}

static void umwait_relax(unsigned round)
{
    corun__wait_pause_ops.relax(round);
}
#endif

const struct corun__wait_ops corun__wait_umwait_ops = {
    .name = "umwait",
    .strategy = CORUN_WAIT_UMWAIT,
    .probe = umwait_probe,
    .spin = umwait_spin,
    .relax = umwait_relax,
};
