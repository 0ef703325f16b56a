/*
 * act-stub.c — STUB: remove when act lands.
 *
 * The daemon finds its actuator by name through corun_act_backend(); until the
 * act box (branch `run`) is merged there is none, so the lookup answers NULL
 * and the daemon runs observe-only, saying "affinity actuator not built".
 */
#include <stddef.h>

#include "daemon/daemon-internal.h"

const struct corun_act_ops *corun_act_backend(const char *name)
{
    (void)name;
    return NULL;
}
