/*
 * policy-stub.c — STUB: remove when policy lands.
 *
 * The registry of include/corun/policy.h with no policy in it, so that the
 * simulator links and `corun sim --policy all` runs the references alone
 * until the policy box is merged.
 */
#include <stddef.h>
#include <string.h>

#include "corun/policy.h"

const char *corun_class_name(enum corun_class c)
{
    static const char *const names[CORUN_NCLASSES] = {"compute", "sheep", "rabbit", "chasing",
                                                      "streaming"};

    return (unsigned)c < CORUN_NCLASSES ? names[c] : "unknown";
}

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
