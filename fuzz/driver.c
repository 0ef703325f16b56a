/*
 * driver.c — replays fuzz inputs without libFuzzer: each argument is a file
 * or a folder of files fed to LLVMFuzzerTestOneInput. ctest runs every
 * target over its corpus this way (with the sanitizers in `make asan`);
 * `cmake -DCORUN_FUZZ=ON` with clang builds real libFuzzer binaries instead.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;

    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        DIR *d;
        struct dirent *e;

        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "%s: cannot stat\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            files += run_file(argv[i]) == 0;
            continue;
        }
        d = opendir(argv[i]);
        while (d && (e = readdir(d))) {
            char p[4096];

            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
            files += run_file(p) == 0;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs\n", files);
    return files > 0 ? 0 : 1;
}
