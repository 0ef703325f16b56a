/*
 * sys.c — the syscall table (see sys.h): the real calls, and the reset that
 * tests use after injecting faults.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "common/sys.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif

static int real_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                                unsigned long flags)
{
    return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static int real_pidfd_open(pid_t pid, unsigned int flags)
{
    return (int)syscall(SYS_pidfd_open, pid, flags);
}

static int real_pidfd_send_signal(int pidfd, int sig, void *info, unsigned int flags)
{
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, info, flags);
}

static long real_futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
                       uint32_t *uaddr2, uint32_t val3)
{
    return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static int real_process_madvise(int pidfd, const void *iov, size_t vlen, int advice,
                                unsigned int flags)
{
    return (int)syscall(SYS_process_madvise, pidfd, iov, vlen, advice, flags);
}

static long real_migrate_pages(pid_t pid, unsigned long maxnode, const unsigned long *old_nodes,
                               const unsigned long *new_nodes)
{
    return syscall(SYS_migrate_pages, pid, maxnode, old_nodes, new_nodes);
}

static void real_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
    memset(regs, 0, 4 * sizeof(regs[0]));
#if defined(__x86_64__) || defined(__i386__)
    /* Leaves of the hypervisor range (0x4000xxxx) are not bounded by the
     * basic or extended maximum: guests answer them and bare metal returns
     * another leaf's data, which the caller judges by the signature. The
     * others are checked against their range's maximum. */
    if ((leaf & 0xf0000000u) != 0x40000000u && leaf > __get_cpuid_max(leaf & 0x80000000u, NULL))
        return;
    __cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
#endif
}

/* Spelled once, used for the table's initialiser and for the reset (a
 * const struct is not a constant expression in C). */
#define REAL_SYSCALLS                                                                              \
    {                                                                                              \
        .perf_event_open = real_perf_event_open, .sched_setaffinity = sched_setaffinity,           \
        .sched_getaffinity = sched_getaffinity, .pidfd_open = real_pidfd_open,                     \
        .pidfd_send_signal = real_pidfd_send_signal, .futex = real_futex,                          \
        .clock_gettime = clock_gettime, .process_madvise = real_process_madvise,                   \
        .cpuid = real_cpuid, .migrate_pages = real_migrate_pages,                                  \
    }

static const struct corun__syscalls real_syscalls = REAL_SYSCALLS;

struct corun__syscalls corun__sys = REAL_SYSCALLS;

void corun__sys_reset(void)
{
    corun__sys = real_syscalls;
}
