/*
 * thp-launch.h — huge pages for a program corun launches (`corun run --thp`,
 * and the hidden `corun thp-exec`). The CLI calls cli_thp_child_setup() in
 * the forked child, just before execvp(): it prepares the environment the
 * program will start with. docs/internals/thp.md says which path each case
 * takes:
 *
 *   THP "always"   nothing to set: the kernel already uses huge pages;
 *   THP "madvise"  GLIBC_TUNABLES gains glibc.malloc.hugetlb=1 (programs that
 *                  allocate with malloc) and LD_PRELOAD gains libcorun-thp.so
 *                  (programs that mmap anonymous memory themselves);
 *   THP "never"    nothing can be done: the program runs unchanged.
 *
 * With "always" and "madvise" an inherited prctl(PR_SET_THP_DISABLE) is cleared in the
 * child, since the user asked for huge pages for this program.
 */
#ifndef CORUN_CLI_THP_LAUNCH_H
#define CORUN_CLI_THP_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

/*
 * cli_thp_child_setup() - set up the calling process (the child, between
 * fork and exec) so that the program it execs gets huge pages.
 *
 * Returns 0 when the program should be exec'd: either everything that
 * applies was set up (@err then says in one line what, for -v), or nothing
 * or only part could be, and the program runs unchanged or with what could be
 * set up -- in that case this function has already said why, in one line on
 * stderr ("corun: --thp: ..."), and @err holds the same words. The issue's
 * rule: where THP is "never" or a path is missing, say so plainly and run
 * the program unchanged; a caller must not fail the run for it.
 * Returns -ENOMEM (with @err) only when the environment could not be
 * extended. Uses setenv(): call it in a single-threaded child only.
 */
int cli_thp_child_setup(char *err, size_t errlen);

/*
 * cli_thp_child_prepare() - the same, reading the THP settings below @root
 * (NULL: the live system; tests replay "never"), and printing nothing.
 * Returns 0 when all was set up (@err: what), 1 when nothing or only part
 * could be (@err: why; the program still runs), or -ENOMEM:
 *   THP "never" or absent   nothing changed
 *   libcorun-thp.so missing (beside the corun binary, ../lib, the install
 *                           libdir): only the malloc tunable is set
 */
int cli_thp_child_prepare(const char *root, char *err, size_t errlen);

/*
 * cli_thp_preload_path() - the path of libcorun-thp.so for this corun binary
 * into @buf: beside /proc/self/exe, else the install libdir.
 * Returns 0 or -ENOENT.
 */
int cli_thp_preload_path(char *buf, size_t len);

#endif
