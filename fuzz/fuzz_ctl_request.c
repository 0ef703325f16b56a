/*
 * fuzz_ctl_request.c — the control socket's request parser (any local user
 * writes these lines): any input parses or fails with a reason, never
 * overruns, and a parsed request holds NUL-terminated fields.
 */
#include <stdlib.h>
#include <string.h>

#include "corun/ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun_ctl_request r;
    char *s = malloc(size + 1), why[128];

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    why[0] = '\0';
    if (corun_ctl_parse(s, &r, why, sizeof(why)) == 0) {
        if (strlen(r.key) >= sizeof(r.key) || strlen(r.value) >= sizeof(r.value))
            abort();
        if (r.verb == CORUN_CTL_RELEASE && r.pid <= 0)
            abort();
    } else if (!why[0]) {
        abort(); /* every refusal says why */
    }
    free(s);
    return 0;
}
