/*
 * place.h — what `corun run`, `corun batch` and `corun restore` share:
 * where the journal lives, opening an actuator with its fallback, the
 * default policy, turning a policy's dense CPU into a kernel CPU set, and
 * opening the --json FILE before anything runs.
 */
#ifndef CORUN_CLI_PLACE_H
#define CORUN_CLI_PLACE_H

#include <stddef.h>
#include <stdio.h>

#include "corun/act.h"
#include "corun/policy.h"
#include "corun/topo.h"

/* The system's journal: the daemon's (journal_dir's default) and that of a
 * run or batch started without $XDG_RUNTIME_DIR. */
#define CLI_SYSTEM_JOURNAL_DIR "/run/corun"

/* --journal DIR if given, else $XDG_RUNTIME_DIR/corun, else /run/corun. */
const char *cli_journal_dir(const char *given, char *buf, size_t len);

/*
 * Opens the actuator @name (NULL: "affinity") with the journal in @journal
 * (@given: the user named it with --journal-dir). Prints "corun CMD: ..."
 * and returns 2 for an unknown name or a given journal folder that cannot
 * be made or written (nothing could be placed with it: the user said where
 * and must hear it at once, not once per task), 1 when the backend cannot
 * work here (with its reason); 0 on success.
 */
int cli_act_open(const char *cmd, const char *name, const char *journal, bool given,
                 const struct corun_act_ops **ops, void **state);

/* The policy named @name, or the default ("corun" when registered, else
 * "spread"); prints the known names and returns NULL when unknown. */
const struct corun_policy *cli_policy_get(const char *cmd, const char *name);

/* The kernel CPU set of dense CPU @dense of @topo. 0 or -errno. */
int cli_dense_to_set(const struct corun_topo *topo, int dense, struct corun_cpuset *set);

/*
 * Opens the --json FILE @path ("-": stdout) of command @cmd into *@out, to
 * be called before anything is started: a path that cannot be written
 * stops the command at once rather than after the work is done, as GNU
 * parallel checks its --joblog. The file is close-on-exec, so the commands
 * started do not inherit it. 0, or (with one line naming @path and the
 * reason) CLI_EXIT_USAGE.
 */
int cli_json_file_open(const char *cmd, const char *path, FILE **out);
/* Closes what cli_json_file_open() opened (not stdout); NULL is fine. */
void cli_json_file_close(FILE *f);

/* Installs fault injection into corun__sys from $CORUN_TEST_FAULT (tests). */
void cli_test_faults(void);

#endif
