/*
 * cli.h — what the subcommands of the corun command share.
 *
 * Each subcommand is one file, src/cli/cli-NAME.c, that registers itself with
 * CLI_COMMAND(); main.c dispatches on the first argument. A subcommand parses
 * its arguments (getopt_long), calls the library and prints; it returns the
 * process's exit status:
 *   0   success
 *   1   a failure at run time (the library's error, printed)
 *   2   usage and input errors: bad option, unreadable or malformed file
 * Commands that run a program (stat, run) return that program's status.
 */
#ifndef CORUN_CLI_H
#define CORUN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

struct cli_command {
    const char *name;
    int (*main)(int argc, char **argv); /* argv[0] is the subcommand's name */
    const char *summary;
    const char *usage; /* one or more lines, after "usage: " */
    struct cli_command *next;
};

void cli_register(struct cli_command *cmd);

/* Registers a subcommand from its file: CLI_COMMAND(topo, cmd_topo, "...", "..."). */
#define CLI_COMMAND(id, fn, summary_, usage_)                                                      \
    static struct cli_command cli_cmd_##id = {                                                     \
        .name = #id, .main = fn, .summary = summary_, .usage = usage_};                            \
    __attribute__((constructor)) static void cli_register_##id(void)                               \
    {                                                                                              \
        cli_register(&cli_cmd_##id);                                                               \
    }

/* Verbosity set by -v before the subcommand (0 warnings, 1 info, 2 debug). */
extern int cli_verbose;

/* "corun NAME: msg" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the usage of @cmd to @f. */
void cli_usage(FILE *f, const char *cmd);
/* The usage error: "corun NAME: msg" then "usage: ..." on stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a non-negative integer / a double option value; false if malformed. */
bool cli_parse_uint(const char *s, unsigned long *out);
bool cli_parse_double(const char *s, double *out);

#endif
