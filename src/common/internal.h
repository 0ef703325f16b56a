/*
 * internal.h — helpers shared by the boxes of libcorun, never exported:
 * logging, reads below a root directory (the seam that lets tests replay
 * recorded /proc and /sys trees) and small string utilities.
 */
#ifndef CORUN_INTERNAL_H
#define CORUN_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "corun/common.h"

#define CORUN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Sends a message to the program's log callback, if any. */
void corun__log(enum corun_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define corun__warn(...) corun__log(CORUN_LOG_WARN, __VA_ARGS__)
#define corun__info(...) corun__log(CORUN_LOG_INFO, __VA_ARGS__)
#define corun__debug(...) corun__log(CORUN_LOG_DEBUG, __VA_ARGS__)

/*
 * Root directories. Every read of /proc, /sys or cgroupfs goes through a
 * directory descriptor opened on the root the caller chose ("/" live, a
 * recorded tree in tests), with paths relative to it.
 */

/* Opens @root (NULL means "/") as a directory. Returns the fd or -errno. */
int corun__root_open(const char *root);
/* Opens @path below @dirfd; a leading '/' in @path is ignored. fd or -errno. */
int corun__root_openat(int dirfd, const char *path, int flags);
/*
 * Reads the text file @path below @dirfd into @buf (at most @len - 1 bytes),
 * NUL-terminated. Returns the number of bytes read or -errno; -EFBIG when the
 * file did not fit.
 */
ssize_t corun__read_text(int dirfd, const char *path, char *buf, size_t len);
/* Reads a whole file into a malloc'd, NUL-terminated buffer. 0 or -errno. */
int corun__read_alloc(int dirfd, const char *path, char **out, size_t *len);
/* Reads one unsigned decimal integer (what most /sys files hold). 0 or -errno. */
int corun__read_u64(int dirfd, const char *path, uint64_t *out);
/* Parses /proc/PID/schedstat's first two fields (time on CPU, time waiting
 * on a runqueue, ns), as the sense and procsel boxes both read them. 0, or
 * -EINVAL (outputs untouched). */
int corun__proc_schedstat_parse(const char *buf, uint64_t *run_ns, uint64_t *delay_ns);
/* Trims trailing whitespace in place; returns @s. */
char *corun__rstrip(char *s);

/* Monotonic time in nanoseconds, through the syscall table. */
uint64_t corun__now_ns(void);

#endif /* CORUN_INTERNAL_H */
