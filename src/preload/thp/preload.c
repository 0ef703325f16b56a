/*
 * preload.c — libcorun-thp.so: preloaded (LD_PRELOAD) into a program that
 * never asked for huge pages, it makes the large private anonymous mappings
 * the program creates with mmap() eligible for transparent huge pages when
 * the system's THP mode is "madvise".
 *
 * What it does, and only this:
 *  - mmap()/mmap64() of a private anonymous mapping of at least one huge page
 *    (hpage_pmd_size, 2 MiB on x86-64), without MAP_FIXED or an address hint,
 *    is placed on a huge page boundary (over-reserve by one huge page, trim
 *    both ends) so that every 2 MiB of it can be one huge page, then advised
 *    with madvise(MADV_HUGEPAGE). With a hint or MAP_FIXED the placement is
 *    the program's; the mapping is still advised. MAP_POPULATE is applied
 *    after the advice (MADV_POPULATE_WRITE/READ), or the first touch would
 *    have chosen small pages already.
 *  - mremap(MREMAP_MAYMOVE) that grows a mapping past one huge page tries in
 *    place first, as the kernel does, and otherwise moves it to an aligned
 *    address. The advice is a flag of the mapping, so it moves with it.
 *  - Nothing when the process disabled THP entirely with
 *    prctl(PR_SET_THP_DISABLE) (the advice would be ignored anyway), for
 *    MAP_HUGETLB, MAP_STACK, MAP_GROWSDOWN, shared or file mappings.
 *
 * glibc's malloc maps memory through its internal __mmap, which this object
 * does not see: programs that allocate with malloc are served by the glibc
 * tunable glibc.malloc.hugetlb=1 instead, which `corun run --thp` sets beside
 * this object (docs/internals/thp.md).
 *
 * The object has no state but the real functions and the huge page size,
 * prints nothing, reads no environment, and never fails a call the program
 * would not have seen fail: every step it adds falls back to the plain call.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ  22
#define MADV_POPULATE_WRITE 23
#endif

#define EXPORT __attribute__((visibility("default")))

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);

static mmap_fn real_mmap;
static mremap_fn real_mremap;
static size_t huge_size = 2u << 20;
static size_t page_size = 4096;
static int thp_off; /* the process disabled THP entirely (prctl) */

/* The huge page size from sysfs, with plain syscalls: malloc may not be ready. */
static size_t read_pmd_size(void)
{
    char buf[32];
    ssize_t n;
    size_t v = 0;
    int fd = open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
        v = v * 10 + (size_t)(buf[i] - '0');
    /* A power of two of at least a page, or it is not a size we can align to. */
    return v >= 4096 && !(v & (v - 1)) ? v : 0;
}

__attribute__((constructor)) static void preload_init(void)
{
    size_t pmd = read_pmd_size();
    long ps = sysconf(_SC_PAGESIZE);
    int disabled = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);

    if (pmd)
        huge_size = pmd;
    if (ps > 0)
        page_size = (size_t)ps;
    /* 1: disabled entirely. 3 (Linux 6.18's "except advised") honours the
     * advice, which is all this object gives. */
    thp_off = disabled == 1;
    real_mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
    real_mremap = (mremap_fn)dlsym(RTLD_NEXT, "mremap");
}

static void *call_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    /* Another preloaded object's constructor may map memory before ours ran. */
    if (real_mmap)
        return real_mmap(addr, len, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* A mapping that this object advises: private, anonymous, at least a huge page. */
static int wanted(size_t len, int flags)
{
    return !thp_off && len >= huge_size && (flags & MAP_ANONYMOUS) &&
           (flags & MAP_TYPE) == MAP_PRIVATE &&
           !(flags & (MAP_HUGETLB | MAP_STACK | MAP_GROWSDOWN));
}

/*
 * Maps @len bytes with @prot/@flags at a huge page boundary: one huge page
 * more than asked, then both ends trimmed. NULL when the larger mapping
 * fails (the caller then maps plainly).
 */
static void *map_aligned(size_t len, int prot, int flags)
{
    size_t rounded = (len + page_size - 1) & ~(page_size - 1);
    uintptr_t a, al, end, rend;
    void *p;

    /* A length this close to the top would wrap; the plain call says no. */
    if (len > SIZE_MAX - huge_size - page_size)
        return NULL;
    p = call_mmap(NULL, rounded + huge_size, prot, flags, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    a = (uintptr_t)p;
    al = (a + huge_size - 1) & ~(uintptr_t)(huge_size - 1);
    end = al + rounded;
    rend = a + rounded + huge_size;
    if (al > a)
        munmap(p, al - a);
    if (rend > end)
        munmap((void *)end, rend - end);
    return (void *)al;
}

static void *thp_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    int saved = errno, populate = flags & MAP_POPULATE;
    void *p = NULL;

    if (!wanted(len, flags))
        return call_mmap(addr, len, prot, flags, fd, off);
    flags &= ~MAP_POPULATE;
    if (!addr && !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
        p = map_aligned(len, prot, flags);
    if (!p) {
        p = call_mmap(addr, len, prot, flags, fd, off);
        if (p == MAP_FAILED)
            return p;
    }
    /* Advice only: a kernel that refuses it leaves the mapping as it was. */
    madvise(p, len, MADV_HUGEPAGE);
    if (populate && prot != PROT_NONE)
        madvise(p, len, (prot & PROT_WRITE) ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
    errno = saved;
    return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return thp_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    return thp_mmap(addr, len, prot, flags, fd, (off_t)off);
}

static void *call_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr)
{
    if (real_mremap)
        return real_mremap(old, old_size, new_size, flags, new_addr);
    return (void *)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
}

EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_addr = NULL, *p, *dst;
    int saved = errno;
    va_list ap;

    if (flags & MREMAP_FIXED) {
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    if (thp_off || flags != MREMAP_MAYMOVE || !old_size || new_size <= old_size ||
        new_size < huge_size)
        return call_mremap(old, old_size, new_size, flags, new_addr);
    p = call_mremap(old, old_size, new_size, 0, NULL);
    if (p != MAP_FAILED)
        goto out_ok;
    /* It must move: to a huge page boundary, reserved with nothing behind it. */
    dst = map_aligned(new_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
    if (dst) {
        p = call_mremap(old, old_size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
        if (p != MAP_FAILED)
            goto out_ok;
        munmap(dst, new_size);
    }
    errno = saved;
    return call_mremap(old, old_size, new_size, flags, NULL);

out_ok:
    errno = saved;
    return p;
}
