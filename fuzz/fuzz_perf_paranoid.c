/*
 * fuzz_perf_paranoid.c — the perf_event_paranoid half of
 * corun__perf_env_parse(): any text parses without reading past its NUL (the
 * input is copied into a buffer of exactly size + 1 bytes), exclude_kernel
 * follows the documented rule (paranoid >= 2 without CAP_PERFMON or
 * CAP_SYS_ADMIN), and what the kernel writes ("%d\n") parses back to its
 * value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sense/sense-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun__perf_env env;
    char *s = malloc(size + 1), line[32];
    int want = 0;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    memset(&env, 0, sizeof(env));
    corun__perf_env_parse(&env, s, NULL);
    if (env.cap_perfmon || env.cap_sys_admin || env.exclude_kernel != (env.paranoid >= 2))
        abort();
    free(s);

    /* Without a status file no capability is assumed; with CapEff all set, none is excluded. */
    for (size_t i = 0; i < size && i < sizeof(want); i++)
        want = (int)((unsigned)want << 8 | data[i]);
    snprintf(line, sizeof(line), "%d\n", want);
    corun__perf_env_parse(&env, line, "CapEff:\t000001ffffffffff\n");
    if (env.paranoid != want || !env.cap_perfmon || !env.cap_sys_admin || env.exclude_kernel)
        abort();
    return 0;
}
