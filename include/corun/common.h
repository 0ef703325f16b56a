/*
 * corun/common.h — what every box of libcorun shares: the export macro,
 * errors, the logging callback and CPU sets.
 *
 * Errors. Every action returns 0 or a negative errno (-ENOENT, -EINVAL...);
 * a missing feature is -ENOTSUP. corun_strerror() gives the words. Predicates
 * return bool; constructors take an out-parameter.
 *
 * Logging. The library never prints, exits or reads the environment. What it
 * has to say goes to a callback the program sets once with corun_log_set();
 * without one, messages are dropped.
 *
 * CPU sets. struct corun_cpuset is a bitmap of any size (machines with more
 * than 1024 CPUs exist), used for CPU lists given by users, read from /sys and
 * passed to the kernel. Bits are CPU numbers as the caller defines them: OS
 * indexes where a set meets the kernel, dense topology indexes inside policies.
 */
#ifndef CORUN_COMMON_H
#define CORUN_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CORUN_BUILDING)
#define CORUN_API __attribute__((visibility("default")))
#else
#define CORUN_API
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
CORUN_API const char *corun_version(void);

/*
 * corun_strerror() - words for a negative errno returned by the library.
 * Accepts positive values too. Never returns NULL; the string is static.
 * Thread-safe.
 */
CORUN_API const char *corun_strerror(int err);

enum corun_log_level {
    CORUN_LOG_ERROR = 0,
    CORUN_LOG_WARN = 1,
    CORUN_LOG_INFO = 2,
    CORUN_LOG_DEBUG = 3,
};

typedef void (*corun_log_fn)(void *user, enum corun_log_level level, const char *msg);

/*
 * corun_log_set() - route the library's messages at @max_level and below to
 * @fn (NULL drops them). Call it once, before other threads use the library.
 */
CORUN_API void corun_log_set(corun_log_fn fn, void *user, enum corun_log_level max_level);

/* ---- CPU sets -------------------------------------------------------------- */

struct corun_cpuset {
    unsigned nbits;  /* capacity in bits, a multiple of 64 */
    uint64_t *words; /* nbits / 64 words, owned */
};

/* Allocates room for CPUs 0..@nbits-1, all clear. Returns 0 or -ENOMEM. */
CORUN_API int corun_cpuset_init(struct corun_cpuset *set, unsigned nbits);
/* Releases the bitmap; accepts a zeroed or already released set. */
CORUN_API void corun_cpuset_release(struct corun_cpuset *set);
/* Grows the capacity to at least @nbits, keeping the bits. 0 or -ENOMEM. */
CORUN_API int corun_cpuset_reserve(struct corun_cpuset *set, unsigned nbits);
/* Sets bit @cpu, growing the set if needed. 0 or -ENOMEM. */
CORUN_API int corun_cpuset_set(struct corun_cpuset *set, unsigned cpu);
CORUN_API void corun_cpuset_clear(struct corun_cpuset *set, unsigned cpu);
CORUN_API void corun_cpuset_zero(struct corun_cpuset *set);
CORUN_API bool corun_cpuset_isset(const struct corun_cpuset *set, unsigned cpu);
CORUN_API unsigned corun_cpuset_count(const struct corun_cpuset *set);
/* First set bit at or after @from, or -1. */
CORUN_API int corun_cpuset_next(const struct corun_cpuset *set, unsigned from);
/* Copies @src into @dst (growing @dst). 0 or -ENOMEM. */
CORUN_API int corun_cpuset_copy(struct corun_cpuset *dst, const struct corun_cpuset *src);
/* @dst &= @src. */
CORUN_API void corun_cpuset_and(struct corun_cpuset *dst, const struct corun_cpuset *src);
CORUN_API bool corun_cpuset_equal(const struct corun_cpuset *a, const struct corun_cpuset *b);

/*
 * corun_cpuset_parse() - parse a Linux CPU list ("0-3,8,10-15:2") into @set,
 * which it clears first (and grows). Whitespace around the list and a final
 * newline are accepted, as /sys writes them. Returns 0, -EINVAL for a
 * malformed list (then *@bad_at, if given, is the offset of the first bad
 * character), -ERANGE for a CPU number above 1<<20, or -ENOMEM.
 */
CORUN_API int corun_cpuset_parse(struct corun_cpuset *set, const char *list, size_t *bad_at);

/*
 * corun_cpuset_format() - write @set as a CPU list ("0-3,8") into @buf of
 * @len bytes, NUL-terminated. Returns the length the full list needs (not
 * counting the NUL), like snprintf; an empty set gives "".
 */
CORUN_API size_t corun_cpuset_format(const struct corun_cpuset *set, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* CORUN_COMMON_H */
