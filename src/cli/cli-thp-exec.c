/*
 * cli-thp-exec.c — `corun thp-exec [--thp] -- CMD [ARGS]`: runs CMD, with
 * huge pages when --thp is given, and returns its status. It exists to test
 * and benchmark the --thp launch path (thp-launch.c) on its own; `corun run
 * --thp` calls the same hook.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/thp-launch.h"

static const char *const NAME = "thp-exec";

/* The exit status a shell would give for @status. */
static int shell_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return CLI_EXIT_FAIL;
}

static int cmd_thp_exec(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"thp", no_argument, NULL, 't'},
        {"root", required_argument, NULL, 'r'}, /* tests: THP settings from a fixture */
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *root = NULL;
    int thp = 0, c, status;
    pid_t pid;

    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            thp = 1;
            break;
        case 'r':
            root = optarg;
            break;
        case 'h':
            cli_usage(stdout, NAME);
            return CLI_EXIT_OK;
        default:
            return cli_usage_error(NAME, "unknown option");
        }
    }
    if (optind >= argc)
        return cli_usage_error(NAME, "no command to run");
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        cli_error(NAME, "fork: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (pid == 0) {
        if (thp) {
            char err[512];
            int rc = cli_thp_child_prepare(root, err, sizeof(err));

            /* A setup that could not be done is said, and the program runs
             * anyway, unchanged or with what could be set up. */
            if (rc || cli_verbose)
                cli_error(NAME, "--thp: %s", err);
        }
        execvp(argv[optind], argv + optind);
        cli_error(NAME, "%s: %s", argv[optind], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    /* Like a shell: the child gets the terminal's signals; we wait for it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            cli_error(NAME, "waitpid: %s", strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    return shell_status(status);
}

/* Registered by hand: CLI_COMMAND() makes the name from an identifier, which
 * cannot hold the dash. */
static struct cli_command cli_cmd_thp_exec = {
    .name = "thp-exec",
    .main = cmd_thp_exec,
    .summary = "(internal) run a command with huge pages set up as --thp does",
    .usage = "corun thp-exec [--thp] [--] CMD [ARGS...]",
};

__attribute__((constructor)) static void cli_register_thp_exec(void)
{
    cli_register(&cli_cmd_thp_exec);
}
