/*
 * fuzz_platform_text.c — the platform box's text parsers, fed what /proc and
 * /sys could hold: cpuinfo fields, flags and processor counts, kernel
 * command-line parameters (quotes, "--", name=value) and sysfs choice files
 * ("always [madvise] never"). Any input parses or fails cleanly, outputs stay
 * NUL-terminated within their buffers.
 */
#include <stdlib.h>
#include <string.h>

#include "platform/platform-internal.h"
#include "thp/thp-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {
        "model", "flags", "nopcid", "mitigations", "transparent_hugepage", "x"};
    char *s = malloc(size + 1), out[16], *flags;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (corun__pf_cpuinfo_field(s, names[i], out, sizeof(out)) && strlen(out) >= sizeof(out))
            abort();
        if (corun__pf_param(s, names[i], out, sizeof(out)) && strlen(out) >= sizeof(out))
            abort();
    }
    flags = corun__pf_cpuinfo_flags(s);
    if (flags && (flags[0] != ' ' || flags[strlen(flags) - 1] != ' '))
        abort();
    free(flags);
    (void)corun__pf_cpuinfo_count(s);
    /* Sysfs choice files are parsed by the THP box for everyone. */
    if (corun__thp_selected(s, out, sizeof(out)) == 0 && strlen(out) >= sizeof(out))
        abort();
    free(s);
    return 0;
}
