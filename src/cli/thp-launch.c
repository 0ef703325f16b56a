/*
 * thp-launch.c — STUB: remove when thp lands. The huge-pages engineer's
 * version replaces this file; until then --thp says it is not built.
 */
#include <errno.h>
#include <stdio.h>

#include "cli/thp-launch.h"

int cli_thp_child_setup(char *err, size_t errlen)
{
    snprintf(err, errlen, "huge-page support not built yet");
    return -ENOTSUP;
}
