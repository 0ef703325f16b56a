/*
 * place.c — helpers shared by the commands that place real processes (run,
 * batch, restore); see place.h. Also the test hook that fails system calls
 * through the corun__sys seam from the environment, so integration tests can
 * check that a failing sched_setaffinity never aborts a batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/place.h"
#include "common/sys.h"

const char *cli_journal_dir(const char *given, char *buf, size_t len)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");

    if (given)
        snprintf(buf, len, "%s", given);
    else if (xdg && *xdg)
        snprintf(buf, len, "%s/corun", xdg);
    else
        snprintf(buf, len, "%s", CLI_SYSTEM_JOURNAL_DIR);
    return buf;
}

/* The dry run's whole output is its log at CORUN_LOG_INFO: show it. */
static void dry_log(void *user, enum corun_log_level level, const char *msg)
{
    fprintf(stderr, "corun: %s\n", msg);
}

int cli_act_open(const char *cmd, const char *name, const char *journal, bool given,
                 const struct corun_act_ops **ops, void **state)
{
    struct corun_act_opts opts = {.journal_dir = journal};
    char why[512] = "";
    int err;

    *ops = corun_act_find(name ? name : "affinity");
    if (!*ops)
        return cli_usage_error(cmd, "unknown actuator '%s' (affinity, cpuset, dryrun)", name);
    if ((err = (*ops)->probe(&opts, why, sizeof(why)))) {
        cli_error(cmd, "actuator %s cannot work here: %s", (*ops)->name,
                  why[0] ? why : corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    /* A dry run changes nothing, so it journals nothing and makes no folder. */
    if (given && *ops != &corun_act_dryrun && (err = corun_journal_prepare(journal))) {
        cli_error(cmd, "--journal-dir %s: %s", journal, corun_strerror(err));
        return CLI_EXIT_USAGE;
    }
    if (*ops == &corun_act_dryrun)
        corun_log_set(dry_log, NULL, cli_verbose >= 2 ? CORUN_LOG_DEBUG : CORUN_LOG_INFO);
    if ((err = (*ops)->open(&opts, state))) {
        cli_error(cmd, "actuator %s: %s", (*ops)->name, corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

const struct corun_policy *cli_policy_get(const char *cmd, const char *name)
{
    const struct corun_policy *p;

    if (!name)
        name = "corun";
    p = corun_policy_find(name);
    if (!p) {
        fprintf(stderr, "corun %s: unknown policy '%s'; known:", cmd, name);
        for (unsigned i = 0; corun_policy_at(i); i++)
            fprintf(stderr, " %s", corun_policy_at(i)->name);
        fputc('\n', stderr);
    }
    return p;
}

int cli_dense_to_set(const struct corun_topo *topo, int dense, struct corun_cpuset *set)
{
    const struct corun_topo_cpu *c = corun_topo_cpu(topo, (unsigned)dense);

    if (dense < 0 || !c)
        return -EINVAL;
    if (!set->words) {
        int err = corun_cpuset_init(set, 64);

        if (err)
            return err;
    }
    corun_cpuset_zero(set);
    return corun_cpuset_set(set, c->os_index);
}

int cli_json_file_open(const char *cmd, const char *path, FILE **out)
{
    *out = strcmp(path, "-") ? fopen(path, "we") : stdout;
    if (!*out) {
        cli_error(cmd, "--json %s: %s", path, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    return 0;
}

void cli_json_file_close(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
}

/* ---- fault injection for tests ------------------------------------------- */
/* CORUN_TEST_FAULT=sched_setaffinity=ERRNO[@N]: calls fail with ERRNO (EPERM,
 * ESRCH, EINVAL), every call, or only the Nth. Tests only; documented in
 * docs/internals/act.md. */

static int fault_errno, fault_nth;
static unsigned fault_calls;

static int faulty_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    fault_calls++;
    if (!fault_nth || fault_calls == (unsigned)fault_nth) {
        errno = fault_errno;
        return -1;
    }
    return sched_setaffinity(pid, size, mask);
}

void cli_test_faults(void)
{
    const char *spec = getenv("CORUN_TEST_FAULT");
    const char *v, *at;

    if (!spec || strncmp(spec, "sched_setaffinity=", 18))
        return;
    v = spec + 18;
    fault_errno = !strncmp(v, "EPERM", 5) ? EPERM : !strncmp(v, "ESRCH", 5) ? ESRCH : EINVAL;
    at = strchr(v, '@');
    fault_nth = at ? atoi(at + 1) : 0;
    corun__sys.sched_setaffinity = faulty_setaffinity;
}
