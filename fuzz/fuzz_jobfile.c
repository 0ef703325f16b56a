/*
 * fuzz_jobfile.c — the `corun batch` job-file parser (outside input: any
 * file a user points corun at; src/cli/jobfile.c is compiled in, the CLI
 * being no part of libcorun). Every input either parses into jobs whose
 * fields hold the parser's promises or fails with -EINVAL and a line number
 * within the input; ASan/UBSan catch the rest. ctest replays
 * fuzz/corpus/jobfile; standalone, with libFuzzer:
 *
 *   make && clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Isrc \
 *         fuzz/fuzz_jobfile.c build/libcorun.a -lhwloc -lpfm -lm -o build/fuzz_jobfile
 *   build/fuzz_jobfile -max_total_time=60 bench/kernels
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jobfile.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct job_list l = {0};
    unsigned bad = 0, lines = 1;
    char why[256] = "";
    FILE *f;
    int err;

    if (size == 0)
        return 0;
    f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    err = jobfile_parse(f, &l, &bad, why, sizeof(why));
    fclose(f);
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (err == -EINVAL && (bad == 0 || bad > lines || !why[0]))
        abort();
    for (unsigned i = 0; i < l.n; i++) {
        const struct job_spec *j = &l.jobs[i];

        if (!j->name || !j->name[0] || !j->command || !j->command[0] || !(j->weight > 0) ||
            j->line == 0 || j->line > lines || j->cls < CORUN_CLASS_UNKNOWN ||
            j->cls >= CORUN_NCLASSES)
            abort();
    }
    job_list_release(&l);
    return 0;
}
