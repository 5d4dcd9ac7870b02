/* Regression runner for the fuzz harnesses in builds without libFuzzer (gcc): feeds
 * every file given on the command line, or found in a directory given there (sorted,
 * not recursive), to LLVMFuzzerTestOneInput, once each. A crash, an abort from the
 * harness or a sanitizer report fails the run, as it would under libFuzzer.
 *     fuzz_keys tests/fuzz/keys/        (what the CTest fuzz.regress does) */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run one input file; 0 on success, 1 if it cannot be read. */
static int replay(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return 1;
    }
    /* an exact-size copy, so that ASan sees reads past the end of the input */
    uint8_t *input = malloc(n ? n : 1);
    if (!input) {
        free(buf);
        return 1;
    }
    memcpy(input, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(input, n);
    free(input);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    long ran = 0;
    int status = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            status = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            status |= replay(argv[i]);
            ran++;
            continue;
        }
        struct dirent **list;
        int n = scandir(argv[i], &list, NULL, by_name);
        if (n < 0) {
            perror(argv[i]);
            status = 1;
            continue;
        }
        for (int j = 0; j < n; j++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], list[j]->d_name);
            if (list[j]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                status |= replay(path);
                ran++;
            }
            free(list[j]);
        }
        free(list);
    }
    printf("%s: %ld input%s replayed%s\n", argv[0], ran, ran == 1 ? "" : "s",
           status ? ", some unreadable" : "");
    return status;
}
