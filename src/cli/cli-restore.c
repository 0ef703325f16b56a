/*
 * cli-restore.c — `corun restore`: after a crash (kill -9 of `corun run`,
 * `corun batch` or the daemon), put every journaled process back as it was:
 * its threads' affinities and, for the cpuset actuator, its cgroup. A
 * process that has exited, or whose PID now names another process (the
 * start time differs), is left alone and its entry dropped.
 *
 * A thread its owner pinned since corun placed it keeps its owner's mask; an
 * entry of a corun that still runs is kept for it ("kept").
 *
 * Without --journal-dir it replays the caller's journal ($XDG_RUNTIME_DIR/corun,
 * else /run/corun) and also /run/corun when the caller may change it: the
 * daemon journals there whatever the environment of the shell an operator
 * runs `corun restore` from (a root login has XDG_RUNTIME_DIR=/run/user/0).
 *
 * Exit status: 0 when every entry was restored, gone or kept, 1 when one
 * could not be restored (its entry is kept for another try).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/place.h"

struct restore_out {
    struct json *j; /* NULL: a table */
    unsigned restored, gone, kept, failed;
};

/* The process's name now (it may have exec'ed since it was journaled). */
static const char *comm_now(const struct corun_journal_entry *e)
{
    static char buf[64];
    char path[64];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/comm", (int)e->pid);
    f = fopen(path, "re");
    if (!f || !fgets(buf, sizeof(buf), f)) {
        if (f)
            fclose(f);
        return e->comm;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static void on_entry(void *user, const struct corun_restore_result *r)
{
    struct restore_out *o = user;
    const struct corun_journal_entry *e = r->entry;

    if (r->err == 0)
        o->restored++;
    else if (r->err == -ESRCH)
        o->gone++;
    else if (r->err == -EBUSY)
        o->kept++;
    else
        o->failed++;
    if (o->j) {
        json_obj_begin_inline(o->j);
        json_kstr(o->j, "file", r->file);
        json_kint_or_null(o->j, "pid", e ? e->pid : -1);
        json_kstr(o->j, "comm", !e ? NULL : r->err ? e->comm : comm_now(e));
        json_kstr(o->j, "backend", e ? e->backend : NULL);
        json_kstr(o->j, "result",
                  r->err == 0        ? "restored"
                  : r->err == -ESRCH ? "gone"
                  : r->err == -EBUSY ? "kept"
                                     : "failed");
        json_kstr(o->j, "what", r->what);
        json_obj_end(o->j);
        return;
    }
    if (e)
        printf("%8d  %-16s %-9s %s%s%s\n", (int)e->pid, r->err ? e->comm : comm_now(e), e->backend,
               r->what, r->err && r->err != -ESRCH && r->err != -EBUSY ? ": " : "",
               r->err && r->err != -ESRCH && r->err != -EBUSY ? corun_strerror(r->err) : "");
    else
        printf("%8s  %-16s %-9s %s: %s (%s)\n", "?", "?", "?", r->what, corun_strerror(r->err),
               r->file);
}

/* The journals to replay into @dirs (each of @len bytes): --journal-dir
 * alone when given; else the caller's, and the system's when it is another
 * folder the caller may change (a missing one is nothing to replay). Returns
 * how many. */
static unsigned journal_dirs(const char *given, char dirs[2][4096], size_t len)
{
    cli_journal_dir(given, dirs[0], len);
    if (given || !strcmp(dirs[0], CLI_SYSTEM_JOURNAL_DIR) ||
        access(CLI_SYSTEM_JOURNAL_DIR, W_OK) != 0)
        return 1;
    snprintf(dirs[1], len, "%s", CLI_SYSTEM_JOURNAL_DIR);
    return 2;
}

static int cmd_restore(int argc, char **argv)
{
    /* --journal-dir is the documented name (as in `corun daemon`); --journal,
     * its first spelling, still works. */
    static const struct option longopts[] = {{"journal-dir", required_argument, NULL, 'j'},
                                             {"journal", required_argument, NULL, 'j'},
                                             {"json", no_argument, NULL, 'J'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct restore_out o = {0};
    const char *given = NULL, *failed_dir = NULL;
    char dirs[2][4096];
    unsigned ndirs;
    struct json j;
    bool json = false;
    int c, err = 0;

    optind = 1;
    while ((c = getopt_long(argc, argv, "j:Jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            given = optarg;
            break;
        case 'J':
            json = true;
            break;
        case 'h':
            cli_usage(stdout, "restore");
            return CLI_EXIT_OK;
        default:
            return cli_usage_error("restore", "bad option");
        }
    }
    if (optind < argc)
        return cli_usage_error("restore", "unexpected argument '%s'", argv[optind]);
    ndirs = journal_dirs(given, dirs, sizeof(dirs[0]));
    /* Entries are printed as they are restored: a reader that goes away
     * (`| head`) must not stop the rest being restored. */
    signal(SIGPIPE, SIG_IGN);
    if (json) {
        o.j = &j;
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_kstr(&j, "journal", dirs[0]);
        json_key(&j, "journals");
        json_arr_begin_inline(&j);
        for (unsigned i = 0; i < ndirs; i++)
            json_str(&j, dirs[i]);
        json_arr_end(&j);
        json_key(&j, "entries");
        json_arr_begin(&j);
    }
    for (unsigned i = 0; i < ndirs; i++) {
        struct corun_act_opts opts = {.journal_dir = dirs[i]};
        int e;

        if (!json)
            printf("journal %s\n", dirs[i]);
        e = corun_act_restore_journal(&opts, on_entry, &o);
        if (e && !err) {
            err = e;
            failed_dir = dirs[i];
        }
    }
    if (json) {
        json_arr_end(&j);
        json_kuint(&j, "restored", o.restored);
        json_kuint(&j, "gone", o.gone);
        json_kuint(&j, "kept", o.kept);
        json_kuint(&j, "failed", o.failed);
        json_obj_end(&j);
        json_end(&j);
    } else {
        printf("%u restored, %u gone, %u kept, %u failed\n", o.restored, o.gone, o.kept, o.failed);
    }
    if (err && !o.failed) {
        cli_error("restore", "%s: %s", failed_dir, corun_strerror(err));
        return CLI_EXIT_FAIL;
    }
    return o.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

CLI_COMMAND(restore, cmd_restore, "put back every process corun placed, after a crash",
            "corun restore [--journal-dir DIR] [--json]")
