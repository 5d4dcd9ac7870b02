/* LD_PRELOAD library for tests: a disk that fails. Every write(2)/pwrite(2) to a file
 * whose path contains $HF_EIO_MATCH fails with EIO once $HF_EIO_AFTER such writes have
 * been made (default 0: from the first). HDF5 then meets a real I/O error inside its
 * own flush, which the store's fault injection (HF_H5W, before the HDF5 call) cannot
 * produce. Used by tests/cli/disk_eio.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static long matched;

static int fails(int fd)
{
    const char *match = getenv("HF_EIO_MATCH");
    if (!match || !*match)
        return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return 0;
    target[n] = '\0';
    if (!strstr(target, match))
        return 0;
    const char *after = getenv("HF_EIO_AFTER");
    return ++matched > (after ? atol(after) : 0);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    if (fails(fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite(fd, buf, n, off);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (fails(fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd, buf, n);
}
