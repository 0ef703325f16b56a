/*
 * thp-launch.h — huge pages for a command corun launches (`corun run --thp`).
 * Owned by the huge-pages work; this copy is a stand-in until it lands.
 */
#ifndef CORUN_CLI_THP_LAUNCH_H
#define CORUN_CLI_THP_LAUNCH_H

#include <stddef.h>

/*
 * cli_thp_child_setup() - called in the child between fork and exec: makes
 * the program about to be executed use transparent huge pages. 0, or
 * -errno (-ENOTSUP when not possible here) with the reason in @err.
 */
int cli_thp_child_setup(char *err, size_t errlen);

#endif
