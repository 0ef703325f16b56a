/*
 * fuzz_proc_stat.c — the proc sensor's parser of /proc/PID/stat
 * (corun__proc_stat_parse). Any text parses or fails cleanly without reading
 * past its NUL (the input is copied into a buffer of exactly size + 1
 * bytes). Then a stat line as the kernel writes it, whose command name is the
 * input's first bytes (spaces, parentheses, newlines and all) and whose eight
 * counted fields are drawn from the input, must parse back to those values:
 * the command name never shifts the fields.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sense/sense-internal.h"

/* FNV-1a of @data, salted by @k: a value per field that follows the input. */
static uint64_t draw(const uint8_t *data, size_t size, uint64_t k)
{
    uint64_t h = 1469598103934665603ull ^ (k * 0x9e3779b97f4a7c15ull);

    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    /* Small counts as often as huge ones. */
    return h & 1 ? h >> (h >> 1 & 63) : h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun__proc_stat f, g;
    uint64_t v[8];
    char *s = malloc(size + 1), comm[65], line[1024];
    size_t nc = size < 64 ? size : 64;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    (void)corun__proc_stat_parse(s, &f);
    free(s);

    for (size_t i = 0; i < nc; i++)
        comm[i] = data[i] ? (char)data[i] : '@';
    comm[nc] = '\0';
    for (int k = 0; k < 8; k++)
        v[k] = draw(data, size, (uint64_t)k);
    snprintf(line, sizeof(line),
             "4242 (%s) S 1 4242 4242 34816 -1 4194560 %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
             " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
             " 20 0 1 0 8412 8220672 576 18446744073709551615 94 95 140 0 0 0 0 0 0 0 0 0 17 "
             "1 0 0 0 0 0 94 95 96 140 141 141 142 0\n",
             comm, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    if (corun__proc_stat_parse(line, &g))
        abort();
    if (g.minflt != v[0] || g.cminflt != v[1] || g.majflt != v[2] || g.cmajflt != v[3] ||
        g.utime != v[4] || g.stime != v[5] || g.cutime != v[6] || g.cstime != v[7])
        abort();
    return 0;
}
