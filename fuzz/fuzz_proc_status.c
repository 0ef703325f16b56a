/*
 * fuzz_proc_status.c — the readers of /proc/PID/status lines: the context
 * switch counts of the proc sensor (corun__proc_status_field) and the CapEff
 * capability line of corun__perf_env_parse(). Any text parses without
 * reading past its NUL (the input is copied into a buffer of exactly
 * size + 1 bytes). Then the input, taken as the other lines of a status file
 * (those that start with the keys read are dropped, as the kernel writes
 * each once), followed by the three lines with values drawn from the input,
 * must give back those values: no other line, whatever it holds (the Name:
 * line is the process's command name, which its user chooses), is mistaken
 * for one of them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sense/sense-internal.h"

#define CAP_PERFMON_BIT   38
#define CAP_SYS_ADMIN_BIT 21

static const char *const keys[] = {
    "voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:", "CapEff:"};

static uint64_t draw(const uint8_t *data, size_t size, uint64_t k)
{
    uint64_t h = 1469598103934665603ull ^ (k * 0x9e3779b97f4a7c15ull);

    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    return h & 1 ? h >> (h >> 1 & 63) : h;
}

static bool is_key_line(const char *line)
{
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        if (!strncmp(line, keys[k], strlen(keys[k])))
            return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun__perf_env env;
    uint64_t vol = draw(data, size, 0), invol = draw(data, size, 1), eff = draw(data, size, 2);
    char *s = malloc(size + 1), *doc, *d;
    size_t len;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        (void)corun__proc_status_field(s, keys[k]);
    memset(&env, 0, sizeof(env));
    corun__perf_env_parse(&env, NULL, s);
    if (env.paranoid != -100 || env.exclude_kernel)
        abort();

    /* The input's lines without the keys', then the keys' own lines. */
    len = strlen(s);
    doc = malloc(len + 200);
    if (!doc) {
        free(s);
        return 0;
    }
    d = doc;
    for (char *line = s, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (is_key_line(line))
            continue;
        d += sprintf(d, "%s\n", line);
    }
    sprintf(d,
            "CapEff:\t%016" PRIx64 "\nvoluntary_ctxt_switches:\t%" PRIu64
            "\nnonvoluntary_ctxt_switches:\t%" PRIu64 "\n",
            eff, vol, invol);
    if (corun__proc_status_field(doc, keys[0]) != vol ||
        corun__proc_status_field(doc, keys[1]) != invol)
        abort();
    corun__perf_env_parse(&env, "2\n", doc);
    if (env.cap_perfmon != !!(eff & (1ull << CAP_PERFMON_BIT)) ||
        env.cap_sys_admin != !!(eff & (1ull << CAP_SYS_ADMIN_BIT)))
        abort();
    free(doc);
    free(s);
    return 0;
}
