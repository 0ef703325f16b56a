/*
 * sys.h — the system calls corun makes that tests must be able to fail.
 *
 * In the manner of SQLite's os_unix syscall table: every call below goes
 * through corun__sys, a table of function pointers initialised to the real
 * calls. A test replaces an entry (see tests/unit/test_topo.c) to inject EACCES,
 * ESRCH, EINTR... on the Nth call, and puts it back with corun__sys_reset().
 * The entries keep the kernel's conventions: -1 and errno on failure.
 */
#ifndef CORUN_SYS_H
#define CORUN_SYS_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct perf_event_attr;

struct corun__syscalls {
    int (*perf_event_open)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                           unsigned long flags);
    int (*sched_setaffinity)(pid_t pid, size_t size, const cpu_set_t *mask);
    int (*sched_getaffinity)(pid_t pid, size_t size, cpu_set_t *mask);
    int (*pidfd_open)(pid_t pid, unsigned int flags);
    int (*pidfd_send_signal)(int pidfd, int sig, void *info, unsigned int flags);
    long (*futex)(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
                  uint32_t *uaddr2, uint32_t val3);
    int (*clock_gettime)(clockid_t clk, struct timespec *ts);
    int (*process_madvise)(int pidfd, const void *iov, size_t vlen, int advice,
                           unsigned int flags);
    /* CPUID leaf/subleaf into regs[0..3] = eax, ebx, ecx, edx; all zero for a
     * leaf above its range's maximum and on non-x86 builds (hypervisor leaves
     * 0x4000xxxx are always executed). Never fails. The only place corun
     * executes the instruction: corun_platform_cpuid_native() goes through
     * it too. */
    void (*cpuid)(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);
    /* migrate_pages(2): the number of pages left unmoved, or -1 and errno.
     * @maxnode as the kernel counts it (the bits in the masks plus one). */
    long (*migrate_pages)(pid_t pid, unsigned long maxnode, const unsigned long *old_nodes,
                          const unsigned long *new_nodes);
};

extern struct corun__syscalls corun__sys;

/* Restores every entry to the real system call. */
void corun__sys_reset(void);

#endif /* CORUN_SYS_H */
