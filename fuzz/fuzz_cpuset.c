/*
 * fuzz_cpuset.c — the CPU-list parser (user --cpus options, /sys files):
 * any input parses or fails cleanly, and what parses formats back to a list
 * that parses to the same set.
 */
#include <stdlib.h>
#include <string.h>

#include "corun/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun_cpuset a = {0}, b = {0};
    char *s = malloc(size + 1), out[8192];

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (corun_cpuset_parse(&a, s, NULL) == 0 &&
        corun_cpuset_format(&a, out, sizeof(out)) < sizeof(out)) {
        if (corun_cpuset_parse(&b, out, NULL) != 0 || !corun_cpuset_equal(&a, &b))
            abort();
    }
    corun_cpuset_release(&a);
    corun_cpuset_release(&b);
    free(s);
    return 0;
}
