/*
 * fuzz_thp_smaps.c — the smaps parser of the thp box (/proc/PID/smaps and
 * smaps_rollup of any process, any kernel): any input parses or fails
 * cleanly, and the totals of a parse with regions equal those without, and
 * the sums of its regions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corun/thp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun_thp_coverage with = {0}, without = {0};
    uint64_t anon = 0, huge = 0;
    char *s = malloc(size + 1);
    int a, b;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    a = corun_thp_parse_smaps(s, true, &with);
    b = corun_thp_parse_smaps(s, false, &without);
    if ((a == 0) != (b == 0))
        abort();
    if (a == 0) {
        for (unsigned i = 0; i < with.nregions; i++) {
            anon += with.regions[i].anon_kb;
            huge += with.regions[i].anon_huge_kb;
        }
        if (with.nregions == 0 || anon != with.anon_kb || huge != with.anon_huge_kb ||
            with.anon_kb != without.anon_kb || with.anon_huge_kb != without.anon_huge_kb ||
            without.regions)
            abort();
    }
    free(with.regions);
    free(s);
    return 0;
}
