/*
 * policy.c — the registry of placement policies, in the order `corun sim
 * --policy all` lists them, and the names of task classes.
 */
#include <string.h>

#include "policy/policy-internal.h"

static const struct corun_policy *const registry[] = {
    &corun__policy_linux, &corun__policy_spread,    &corun__policy_pack,
    &corun__policy_di,    &corun__policy_symbiotic, &corun__policy_corun,
};

const struct corun_policy *corun_policy_find(const char *name)
{
    if (!name)
        return NULL;
    for (unsigned i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
        if (!strcmp(registry[i]->name, name))
            return registry[i];
    return NULL;
}

const struct corun_policy *corun_policy_at(unsigned i)
{
    return i < sizeof(registry) / sizeof(registry[0]) ? registry[i] : NULL;
}

const char *corun_class_name(enum corun_class c)
{
    static const char *const names[CORUN_NCLASSES] = {
        [CORUN_CLASS_COMPUTE] = "compute", [CORUN_CLASS_SHEEP] = "sheep",
        [CORUN_CLASS_RABBIT] = "rabbit",   [CORUN_CLASS_CHASING] = "chasing",
        [CORUN_CLASS_STREAMING] = "streaming",
    };

    return (unsigned)c < CORUN_NCLASSES ? names[c] : "unknown";
}
