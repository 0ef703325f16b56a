/*
 * fuzz_cpuid_dump.c — the CPUID dump parser (--cpuid FILE): any input parses
 * or fails with -EINVAL and a line number inside the input; what parses
 * answers the lookups of every leaf the platform box asks for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "corun/platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun_platform_cpuid_dump *d = NULL;
    char *s = malloc(size + 1);
    unsigned line = 0, lines = 1;
    int err;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    for (size_t i = 0; i < size; i++)
        lines += s[i] == '\n';
    err = corun_platform_cpuid_parse(s, &d, &line);
    if (err == -EINVAL && (line == 0 || line > lines || d))
        abort();
    if (!err) {
        uint32_t r[4];

        for (const uint64_t *l = corun_platform_cpuid_leaves(); *l != ~(uint64_t)0; l++)
            (void)corun_platform_cpuid_lookup(d, (uint32_t)(*l >> 32), (uint32_t)*l, r);
    }
    corun_platform_cpuid_free(d);
    free(s);
    return 0;
}
