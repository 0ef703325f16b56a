/*
 * log.c — the logging callback. The library never prints: it formats a line
 * and hands it to whatever the program set, or drops it.
 */
#include <stdio.h>

#include "common/internal.h"

static corun_log_fn log_fn;
static void *log_user;
static enum corun_log_level log_max = CORUN_LOG_WARN;

void corun_log_set(corun_log_fn fn, void *user, enum corun_log_level max_level)
{
    log_fn = fn;
    log_user = user;
    log_max = max_level;
}

void corun__log(enum corun_log_level level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (!log_fn || level > log_max)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_fn(log_user, level, msg);
}
