/*
 * jobfile.h — the job files of `corun batch` (format in docs/batch.md):
 * one shell command per line, GNU parallel style; blank lines and lines
 * starting with '#' are skipped; optional attributes before " -- ":
 *
 *     name=fft class=streaming weight=2 -- ./fft -n 4096
 */
#ifndef CORUN_CLI_JOBFILE_H
#define CORUN_CLI_JOBFILE_H

#include <stddef.h>
#include <stdio.h>

#include "corun/policy.h"

struct job_spec {
    char *name;           /* name=, or "jobN" (N its 1-based number) */
    char *command;        /* the shell command */
    enum corun_class cls; /* class=, CORUN_CLASS_UNKNOWN when absent */
    double weight;        /* weight=, 1 when absent; > 0 */
    unsigned line;        /* where it was in the file, 1-based */
};

struct job_list {
    unsigned n, cap;
    struct job_spec *jobs;
};

/*
 * Parses one job file already opened as @f. On a malformed line returns
 * -EINVAL with *@bad_line set and the reason in @why; -ENOMEM; -errno of a
 * read error. Jobs are appended to @list (release it with job_list_release
 * whatever the result).
 */
int jobfile_parse(FILE *f, struct job_list *list, unsigned *bad_line, char *why, size_t len);

/* Parses one line (without its newline). 0 with *@out filled (name may be
 * NULL when absent), 1 for a line without a job, -EINVAL with @why. */
int jobfile_parse_line(const char *line, struct job_spec *out, char *why, size_t len);

void job_list_release(struct job_list *list);

#endif
