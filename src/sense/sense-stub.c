/*
 * sense-stub.c — STUB: remove when sense lands.
 *
 * The daemon finds its sensor by name through corun_sense_backend(); until the
 * sense box (branch `sense`) is merged there is none, so the lookup answers
 * NULL and the daemon knows only the CPU use it measures itself from
 * /proc/PID/stat.
 */
#include <stddef.h>

#include "daemon/daemon-internal.h"

const struct corun_sense_ops *corun_sense_backend(const char *name)
{
    (void)name;
    return NULL;
}
