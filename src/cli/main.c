/*
 * main.c — the corun command: global options, then dispatch to the
 * subcommand named by the first argument (see cli.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spawn.h"
#include "corun/common.h"

int cli_verbose;
static struct cli_command *commands;

void cli_register(struct cli_command *cmd)
{
    struct cli_command **p = &commands;

    /* Keep them sorted by name for the help text. */
    while (*p && strcmp((*p)->name, cmd->name) < 0)
        p = &(*p)->next;
    cmd->next = *p;
    *p = cmd;
}

static struct cli_command *find_command(const char *name)
{
    for (struct cli_command *c = commands; c; c = c->next)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "corun %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_usage(FILE *f, const char *cmd)
{
    struct cli_command *c = find_command(cmd);
    const char *u;

    if (!c)
        return;
    u = c->usage;
    fprintf(f, "usage: ");
    for (; *u; u++) {
        fputc(*u, f);
        if (*u == '\n' && u[1])
            fputs("       ", f);
    }
    if (u == c->usage || u[-1] != '\n')
        fputc('\n', f);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "corun %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cli_usage(stderr, cmd);
    return CLI_EXIT_USAGE;
}

bool cli_parse_uint(const char *s, unsigned long *out)
{
    char *end;
    unsigned long v;

    if (!s || !*s || *s == '-')
        return false;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool cli_parse_double(const char *s, double *out)
{
    char *end;
    double v;

    if (!s || !*s)
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || v != v)
        return false;
    *out = v;
    return true;
}

static void log_to_stderr(void *user, enum corun_log_level level, const char *msg)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};

    fprintf(stderr, "corun: %s: %s\n", names[level], msg);
}

static void help(FILE *f)
{
    fprintf(f, "corun %s — place tasks where they interfere least\n\n"
               "usage: corun [-v] COMMAND [ARGS]\n\ncommands:\n",
            corun_version());
    for (struct cli_command *c = commands; c; c = c->next)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\n'corun COMMAND --help' describes each command.\n"
               "Exit status: 0 success, 1 failure, 2 usage or input error;\n"
               "commands that run a program return its status.\n");
}

int main(int argc, char **argv)
{
    struct cli_command *c;
    int i = 1;

    spawn_note_signals(); /* before any command changes one */
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v"))
            cli_verbose++;
        else if (!strcmp(argv[i], "-vv"))
            cli_verbose += 2;
        else if (!strcmp(argv[i], "--version")) {
            printf("corun %s\n", corun_version());
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help(stdout);
            return CLI_EXIT_OK;
        } else {
            fprintf(stderr, "corun: unknown option '%s'\n", argv[i]);
            help(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        help(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[i], "help")) {
        if (i + 1 < argc && find_command(argv[i + 1])) {
            cli_usage(stdout, argv[i + 1]);
            return CLI_EXIT_OK;
        }
        help(stdout);
        return CLI_EXIT_OK;
    }
    c = find_command(argv[i]);
    if (!c) {
        fprintf(stderr, "corun: unknown command '%s'\n", argv[i]);
        help(stderr);
        return CLI_EXIT_USAGE;
    }
    corun_log_set(log_to_stderr, NULL,
                  cli_verbose >= 2 ? CORUN_LOG_DEBUG
                  : cli_verbose    ? CORUN_LOG_INFO
                                   : CORUN_LOG_WARN);
    return c->main(argc - i, argv + i);
}
