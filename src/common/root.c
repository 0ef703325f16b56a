/*
 * root.c — reads below a root directory. Every file corun reads from /proc,
 * /sys or cgroupfs is opened with openat() relative to a directory the caller
 * chose, so that tests can replay a recorded tree in place of the live one;
 * and the parser of schedstat, a file the sense and procsel boxes both read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/sys.h"

int corun__root_open(const char *root)
{
    int fd = open(root ? root : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    return fd < 0 ? -errno : fd;
}

int corun__root_openat(int dirfd, const char *path, int flags)
{
    int fd;

    while (*path == '/')
        path++;
    if (!*path)
        path = ".";
    fd = openat(dirfd, path, flags | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

ssize_t corun__read_text(int dirfd, const char *path, char *buf, size_t len)
{
    size_t got = 0;
    int fd;

    if (len == 0)
        return -EINVAL;
    fd = corun__root_openat(dirfd, path, O_RDONLY);
    if (fd < 0)
        return fd;
    for (;;) {
        ssize_t n = read(fd, buf + got, len - 1 - got);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            n = -errno;
            close(fd);
            return n;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == len - 1) {
            char extra;
            ssize_t more = read(fd, &extra, 1);

            close(fd);
            buf[got] = '\0';
            return more > 0 ? -EFBIG : (ssize_t)got;
        }
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

int corun__read_alloc(int dirfd, const char *path, char **out, size_t *len)
{
    size_t cap = 4096, got = 0;
    char *buf;
    int fd;

    *out = NULL;
    fd = corun__root_openat(dirfd, path, O_RDONLY);
    if (fd < 0)
        return fd;
    buf = malloc(cap);
    if (!buf)
        goto out_nomem;
    for (;;) {
        ssize_t n;

        if (cap - got < 2) {
            char *nb = realloc(buf, cap * 2);

            if (!nb)
                goto out_nomem;
            buf = nb;
            cap *= 2;
        }
        n = read(fd, buf + got, cap - 1 - got);
        if (n < 0) {
            int err = -errno;

            if (err == -EINTR)
                continue;
            free(buf);
            close(fd);
            return err;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    if (len)
        *len = got;
    return 0;

out_nomem:
    free(buf);
    close(fd);
    return -ENOMEM;
}

int corun__read_u64(int dirfd, const char *path, uint64_t *out)
{
    char buf[64], *end;
    unsigned long long v;
    ssize_t n = corun__read_text(dirfd, path, buf, sizeof(buf));

    if (n < 0)
        return (int)n;
    errno = 0;
    v = strtoull(buf, &end, 10);
    if (end == buf || errno)
        return -EINVAL;
    while (*end == ' ' || *end == '\n' || *end == '\t')
        end++;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

int corun__proc_schedstat_parse(const char *buf, uint64_t *run_ns, uint64_t *delay_ns)
{
    unsigned long long run, delay;

    if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
        return -EINVAL;
    *run_ns = run;
    *delay_ns = delay;
    return 0;
}

char *corun__rstrip(char *s)
{
    size_t n = strlen(s);

    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

uint64_t corun__now_ns(void)
{
    struct timespec ts;

    if (corun__sys.clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
