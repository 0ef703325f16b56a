/*
 * thp-internal.h — what the files of the thp box share, never exported.
 */
#ifndef CORUN_THP_INTERNAL_H
#define CORUN_THP_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "corun/thp.h"

/* The bracketed word of a sysfs selector into @out. 0 or -EINVAL. */
int corun__thp_selected(const char *text, char *out, size_t len);

/*
 * Reads /proc/@pid/status below @rootfd and returns 1 when the process has
 * THP disabled by prctl (THP_enabled: 0), 0 when not, -1 when unknown.
 */
int corun__thp_process_disabled(int rootfd, pid_t pid);

/* The coverage of @pid below an open root; see corun_thp_coverage_read(). */
int corun__thp_coverage_at(int rootfd, pid_t pid, unsigned flags, struct corun_thp_coverage **out);

#endif
