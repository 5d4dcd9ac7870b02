/* Helpers shared by the fuzz harnesses (fuzz/fuzz_<name>.c): a private scratch
 * directory per process, removed at exit, and writing bytes to a file in it.
 *
 * Each harness defines LLVMFuzzerTestOneInput. With -DHF_FUZZ=ON (clang) it is linked
 * with libFuzzer; in the normal build with fuzz/replay_main.c, which feeds it files
 * (the regression test fuzz.regress). */
#ifndef HF_FUZZ_UTIL_H
#define HF_FUZZ_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir_path[64];

/* Remove the scratch directory and the files in it (it has no subdirectories). */
static inline void fuzz_dir_remove(void)
{
    DIR *d = opendir(fuzz_dir_path);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", fuzz_dir_path, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(fuzz_dir_path);
}

/* The scratch directory of this process (created on first use; libFuzzer's -fork and
 * -jobs run each worker as its own process, so workers never share files). */
static inline const char *fuzz_dir(void)
{
    if (!fuzz_dir_path[0]) {
        strcpy(fuzz_dir_path, "/tmp/hf-fuzz-XXXXXX");
        if (!mkdtemp(fuzz_dir_path)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}

/* PATH of NAME in the scratch directory, in a static buffer per name slot. */
static inline const char *fuzz_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", fuzz_dir(), name);
    return buf;
}

/* Replace the file at path by the n bytes at data (abort on failure: the harness
 * cannot go on without its file). */
static inline void fuzz_write_file(const char *path, const void *data, size_t n)
{
    unlink(path); /* a fresh inode: HDF5 never sees a half-rewritten old file */
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* Read a whole file (malloc'd, *n bytes); abort on failure. */
static inline uint8_t *fuzz_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        abort();
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf || len < 0 || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        perror(path);
        abort();
    }
    fclose(f);
    *n = (size_t)len;
    return buf;
}

/* A found bug: say what and stop, so that libFuzzer saves the input. */
#define FUZZ_BUG(...)                                                                              \
    do {                                                                                           \
        fprintf(stderr, "fuzz: BUG: " __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

#endif
