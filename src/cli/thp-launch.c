/*
 * thp-launch.c — the environment of a program launched with --thp (see
 * thp-launch.h). This is CLI code, not library code, because it reads and
 * writes the environment: the library only reports the THP mode.
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/thp-launch.h"
#include "corun/thp.h"

#define PRELOAD_NAME "libcorun-thp.so"
#define TUNABLE      "glibc.malloc.hugetlb"

static int usable(const char *path)
{
    return access(path, R_OK) == 0;
}

int cli_thp_preload_path(char *buf, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n > 0) {
        char *slash;

        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if ((size_t)snprintf(buf, len, "%s/%s", exe, PRELOAD_NAME) < len && usable(buf))
                return 0;
            /* An installed bin/corun beside lib/ when the prefix moved. */
            if ((size_t)snprintf(buf, len, "%s/../lib/%s", exe, PRELOAD_NAME) < len && usable(buf))
                return 0;
        }
    }
#ifdef CORUN_LIBDIR
    if ((size_t)snprintf(buf, len, "%s/%s", CORUN_LIBDIR, PRELOAD_NAME) < len && usable(buf))
        return 0;
#endif
    buf[0] = '\0';
    return -ENOENT;
}

/* glibc 2.35 introduced glibc.malloc.hugetlb. */
static int glibc_has_tunable(void)
{
    unsigned major = 0, minor = 0;

    if (sscanf(gnu_get_libc_version(), "%u.%u", &major, &minor) != 2)
        return 0;
    return major > 2 || (major == 2 && minor >= 35);
}

/*
 * Adds glibc.malloc.hugetlb=1 to GLIBC_TUNABLES, keeping what is there. A
 * hugetlb setting the user already made is kept: it is the more specific
 * choice (2 asks for hugetlbfs pages). Returns 1 when added, 0 when kept,
 * -ENOMEM.
 */
static int set_tunable(void)
{
    const char *old = getenv("GLIBC_TUNABLES");
    char *val;
    int rc;

    if (old && *old) {
        if (strstr(old, TUNABLE "="))
            return 0;
        if (asprintf(&val, "%s:" TUNABLE "=1", old) < 0)
            return -ENOMEM;
    } else if (!(val = strdup(TUNABLE "=1"))) {
        return -ENOMEM;
    }
    rc = setenv("GLIBC_TUNABLES", val, 1);
    free(val);
    return rc ? -ENOMEM : 1;
}

/* Appends @path to LD_PRELOAD unless it is there already. 0 or -ENOMEM. */
static int set_preload(const char *path)
{
    const char *old = getenv("LD_PRELOAD");
    char *val;
    int rc;

    if (old && strstr(old, path))
        return 0;
    if (old && *old) {
        if (asprintf(&val, "%s %s", old, path) < 0)
            return -ENOMEM;
    } else if (!(val = strdup(path))) {
        return -ENOMEM;
    }
    rc = setenv("LD_PRELOAD", val, 1);
    free(val);
    return rc ? -ENOMEM : 0;
}

int cli_thp_child_setup(char *err, size_t errlen)
{
    int rc = cli_thp_child_prepare(NULL, err, errlen);

    if (rc > 0) {
        fprintf(stderr, "corun: --thp: %s\n", err);
        return 0;
    }
    return rc;
}

int cli_thp_child_prepare(const char *root, char *err, size_t errlen)
{
    struct corun_thp_system sys;
    char preload[PATH_MAX];
    const char *cleared = "";
    int tun, rc;

    corun_thp_system_read(root, &sys);
    if (sys.mode == CORUN_THP_NEVER || sys.mode == CORUN_THP_ABSENT) {
        snprintf(err, errlen, "transparent huge pages are %s on this system: running unchanged",
                 sys.mode == CORUN_THP_NEVER
                     ? "'never' (/sys/kernel/mm/transparent_hugepage/enabled)"
                     : "not built into the kernel");
        return -ENOTSUP;
    }
    /* Inherited across fork and exec; the user asked for huge pages here. */
    if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) > 0 && prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0) == 0)
        cleared = "; cleared an inherited prctl(PR_SET_THP_DISABLE)";
    if (sys.mode == CORUN_THP_ALWAYS) {
        snprintf(err, errlen,
                 "THP is 'always': the kernel already backs large anonymous "
                 "memory with huge pages; nothing to set%s",
                 cleared);
        return 0;
    }
    /* "madvise", or unknown: advising is harmless where it is not needed. */
    tun = glibc_has_tunable() ? set_tunable() : -ENOTSUP;
    if (tun == -ENOMEM)
        goto out_nomem;
    if (cli_thp_preload_path(preload, sizeof(preload))) {
        snprintf(err, errlen,
                 "%s not found beside the corun binary or in the install libdir: programs "
                 "that mmap memory themselves run without huge pages%s",
                 PRELOAD_NAME, tun > 0 ? " (malloc tunable set)" : "");
        return 1;
    }
    rc = set_preload(preload);
    if (rc)
        goto out_nomem;
    snprintf(err, errlen, "THP '%s': %s; LD_PRELOAD %s%s", corun_thp_mode_name(sys.mode),
             tun > 0    ? "GLIBC_TUNABLES " TUNABLE "=1"
             : tun == 0 ? "kept the " TUNABLE " already in GLIBC_TUNABLES"
                        : "glibc older than 2.35 has no " TUNABLE,
             preload, cleared);
    return 0;

out_nomem:
    snprintf(err, errlen, "cannot extend the environment: %s", strerror(ENOMEM));
    return -ENOMEM;
}
