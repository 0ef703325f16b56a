/*
 * fuzz_journal.c — libFuzzer target for the journal reader: `corun restore`
 * and the daemon read files left in a directory that a crash, a full disk or
 * another program may have damaged. Every input must parse into a consistent
 * entry or fail cleanly with a line number. ctest replays
 * fuzz/corpus/journal; standalone, with libFuzzer:
 *
 *   make && clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Isrc \
 *         fuzz/fuzz_journal.c build/libcorun.a -lhwloc -lpfm -lm -o build/fuzz_journal
 *   build/fuzz_journal -max_total_time=60
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "corun/act.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    struct corun_journal_entry e;
    unsigned bad = 0;
    FILE *f;
    int err;

    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/corun-fuzz-journal-%d", (int)getpid());
    f = fopen(path, "w");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    err = corun_journal_read(path, &e, &bad);
    unlink(path);
    if (err == 0) {
        if (e.pid <= 0 || !e.backend[0] || !e.cpus.words)
            abort();
        for (unsigned i = 0; i < e.nthreads; i++)
            if (e.threads[i].tid <= 0 || !e.threads[i].cpus.words)
                abort();
        corun_journal_entry_release(&e);
    } else if (err == -EINVAL && bad == 0) {
        abort();
    }
    return 0;
}
