/*
 * spawn.h — starting a command so that corun can place it before it runs:
 * the child is forked, waits until the parent has applied (and journaled)
 * its placement, then execs. Exec failures come back to the parent through
 * a close-on-exec pipe, so "could not start" is told apart from "exited 127".
 */
#ifndef CORUN_CLI_SPAWN_H
#define CORUN_CLI_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct spawn_opts {
    char *const *argv;     /* the command, execvp'ed; or */
    const char *shell_cmd; /* a line for /bin/sh -c */
    bool new_pgroup;       /* its own process group (batch jobs) */
    bool thp;              /* cli_thp_child_setup() before exec */
    bool null_stdin;       /* stdin from /dev/null */
};

struct spawn {
    pid_t pid;
    int go_fd;     /* parent writes here to let the child exec */
    int status_fd; /* child writes why exec failed; EOF on success */
};

/*
 * Notes whether corun was started with SIGHUP or SIGPIPE ignored (`nohup`,
 * a parent that ignores SIGPIPE); main() calls it before any command
 * changes a disposition.
 */
void spawn_note_signals(void);

/*
 * In a child about to exec: SIGHUP and SIGPIPE as corun found them (ignored,
 * or the default); SIGINT, SIGQUIT, SIGTERM and SIGCHLD the default. A
 * command then treats SIGHUP under `nohup corun run -- CMD` as it would
 * under `nohup CMD`.
 */
void spawn_child_signals(void);

/* Forks the child, which waits. 0, or -errno when fork failed. */
int spawn_start(const struct spawn_opts *o, struct spawn *s);

/*
 * Lets the child exec and waits until it has (or has failed to). 0 when the
 * program runs; otherwise -errno with the reason in @why, and the child is
 * exiting with 127 (the caller still reaps it).
 */
int spawn_release(struct spawn *s, char *why, size_t len);

#endif
