/*
 * policy-stub.c — STUB: remove when policy lands.
 *
 * The registry of corun/policy.h is empty until the policy box (branch
 * `policy`) is merged: the daemon then says "no placement policy built" and
 * runs observe-only.
 */
#include <stddef.h>

#include "common/internal.h"
#include "corun/policy.h"

const struct corun_policy *corun_policy_find(const char *name)
{
    (void)name;
    return NULL;
}

const struct corun_policy *corun_policy_at(unsigned i)
{
    (void)i;
    return NULL;
}

const char *corun_class_name(enum corun_class c)
{
    static const char *const names[] = {"compute", "sheep", "rabbit", "chasing", "streaming"};

    return c >= 0 && c < CORUN_NCLASSES ? names[c] : "unknown";
}
