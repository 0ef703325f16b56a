/*
 * fuzz_proc_schedstat.c — the parser of
 * /proc/PID/task/TID/schedstat (corun__proc_schedstat_parse). Any text
 * parses or fails cleanly without reading past its NUL (the input is copied
 * into a buffer of exactly size + 1 bytes), and leaves its outputs untouched
 * when it fails; the kernel's own format ("RUN DELAY SLICES\n") with values
 * drawn from the input parses back to those values.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"

static uint64_t draw(const uint8_t *data, size_t size, uint64_t k)
{
    uint64_t h = 1469598103934665603ull ^ (k * 0x9e3779b97f4a7c15ull);

    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    return h & 1 ? h >> (h >> 1 & 63) : h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t run = 7, delay = 7, a = draw(data, size, 0), b = draw(data, size, 1);
    char *s = malloc(size + 1), line[96];

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (corun__proc_schedstat_parse(s, &run, &delay) && (run != 7 || delay != 7))
        abort();
    free(s);

    snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", a, b, a ^ b);
    if (corun__proc_schedstat_parse(line, &run, &delay) || run != a || delay != b)
        abort();
    return 0;
}
