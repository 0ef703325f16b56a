/*
 * platform-out.h — the two outputs of `corun platform` (cli-platform.c):
 * the human report and the JSON document (platform-json.c).
 */
#ifndef CORUN_CLI_PLATFORM_OUT_H
#define CORUN_CLI_PLATFORM_OUT_H

#include <limits.h>

#include "corun/platform.h"

#define INT_MIN_PARANOID    INT_MIN
#define CLI_PLATFORM_MAX_WS 4

/* What --measure found: one result per working-set size. */
struct cli_platform_measure {
    unsigned cpu;
    unsigned n;
    size_t ws_bytes[CLI_PLATFORM_MAX_WS];
    int err[CLI_PLATFORM_MAX_WS]; /* 0, or why that size has no figure */
    struct corun_platform_ctxsw_result res[CLI_PLATFORM_MAX_WS];
};

/* Writes the JSON document; @m may be NULL (no --measure). */
void cli_platform_json(const struct corun_platform *p, const struct cli_platform_measure *m);

#endif
