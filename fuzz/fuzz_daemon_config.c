/*
 * fuzz_daemon_config.c — the daemon's INI configuration (libinih plus our
 * setter): any file loads or fails with a line and a reason, without leaks or
 * overruns. The input is handed over as a memfd's /proc/self/fd path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "corun/daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corun_daemon_config c;
    struct corun_config_error e;
    char path[64];
    int fd = memfd_create("corund.conf", MFD_CLOEXEC), err;

    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size || corun_daemon_config_init(&c)) {
        close(fd);
        return 0;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    err = corun_daemon_config_load(&c, path, &e);
    if (err == -22 && (!e.line || !e.reason[0]))
        abort(); /* a malformed file names its line and the reason */
    corun_daemon_config_release(&c);
    close(fd);
    return 0;
}
