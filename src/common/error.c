/*
 * error.c — the library's version and the words for its error codes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"

const char *corun_version(void)
{
    return CORUN_VERSION;
}

const char *corun_strerror(int err)
{
    if (err < 0)
        err = -err;
    switch (err) {
    case 0:
        return "success";
    case ENOTSUP:
        return "not supported on this machine or kernel";
    default:
        /* strerror() is not thread-safe in general, but glibc returns static
         * strings for known codes; strerrordesc_np avoids the locale copy. */
        {
            const char *s = strerrordesc_np(err);
            return s ? s : "unknown error";
        }
    }
}
