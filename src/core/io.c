/* The I/O seam (headfuse/core.h): the one atomic write of a file and the one write fault
 * injection. The tree's only rename(2) and link(2) are here. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/core.h"

/* ---------------------------------------------------------------- write fault injection */

static long fault_countdown; /* the call at which it reaches 0 fails; <= 0: off */
static long fault_calls;     /* write calls counted so far */
static int fault_fired;      /* the last counted call was failed on purpose */

void hf_io_fail_after(long n)
{
    fault_countdown = n > 0 ? n : 0;
}

long hf_io_write_calls(void)
{
    return fault_calls;
}

int hf_io_fault_injected(void)
{
    return fault_fired;
}

int hf_io_fault(void)
{
    fault_calls++;
    fault_fired = 0;
    if (fault_countdown <= 0 || --fault_countdown > 0)
        return 0;
    fault_fired = 1;
    return 1;
}

/* A system call that puts a file on disk: not made when the fault injection fails it
 * (errno = errnum, -1). */
#define IO_CALL(errnum, call) (hf_io_fault() ? (errno = (errnum), -1) : (call))

/* close(2) of a file written: made, then -1 with errno = EIO when the fault injection fails
 * it (nothing stays open). */
static int io_close(int fd)
{
    int rc = close(fd);
    if (hf_io_fault()) {
        errno = EIO;
        return -1;
    }
    return rc;
}

/* Write all n bytes to fd; -1 with errno on failure. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = IO_CALL(ENOSPC, write(fd, p, n));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---------------------------------------------------------------- atomic writes */

void hf_io_sync_dir(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* The end of every atomic write: fsync fd and close it, then give tmp its name (rename over
 * path, or with `exclusive` a link that keeps another writer's path), then fsync the
 * directory. tmp is gone afterwards, whatever happened. */
static hf_err_t finish(int fd, const char *tmp, const char *path, int exclusive)
{
    int rc = IO_CALL(EIO, fsync(fd));
    int e = errno;
    if (io_close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc < 0) {
        unlink(tmp);
        return hf_error(HF_ERR_IO, "%s: writing %s: %s", path, tmp, strerror(e));
    }
    if (exclusive) {
        rc = IO_CALL(EIO, link(tmp, path)); /* EEXIST: another process was first */
        e = errno;
        unlink(tmp);
        if (rc < 0 && e != EEXIST)
            return hf_error(HF_ERR_IO, "%s: cannot create: %s", path, strerror(e));
    } else if (IO_CALL(EIO, rename(tmp, path)) < 0) {
        e = errno;
        unlink(tmp);
        return hf_error(HF_ERR_IO, "%s: renaming %s: %s", path, tmp, strerror(e));
    }
    hf_io_sync_dir(path);
    return HF_OK;
}

hf_err_t hf_io_write_file(const char *path, const void *data, size_t n, int exclusive)
{
    size_t len = strlen(path) + 32;
    char *tmp = hf_malloc(len);
    if (!tmp)
        return HF_ERR_NOMEM;
    if (exclusive)
        snprintf(tmp, len, "%s.%ld.tmp", path, (long)getpid());
    else
        snprintf(tmp, len, "%s.tmp", path);
    hf_err_t err;
    /* 0666: the umask decides, as for the files HDF5 creates */
    int fd = IO_CALL(EIO, open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666));
    if (fd < 0) {
        err = hf_error(HF_ERR_IO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    } else if (write_all(fd, data, n) < 0) {
        err = hf_error(HF_ERR_IO, "%s: writing %s: %s", path, tmp, strerror(errno));
        close(fd); /* a clean-up after the failure: not a write call */
        unlink(tmp);
    } else {
        err = finish(fd, tmp, path, exclusive);
    }
    free(tmp);
    return err;
}

hf_err_t hf_io_commit(const char *tmp, const char *path)
{
    int fd = open(tmp, O_RDONLY);
    if (fd < 0) {
        hf_err_t err = hf_error(HF_ERR_IO, "%s: cannot reopen %s: %s", path, tmp, strerror(errno));
        unlink(tmp);
        return err;
    }
    return finish(fd, tmp, path, 0);
}

hf_err_t hf_io_move(const char *from, const char *to, int fail)
{
    if (fail ? (errno = EIO, 1) : IO_CALL(EIO, rename(from, to)) != 0)
        return hf_error(HF_ERR_IO, "%s: cannot move to %s: %s", from, to, strerror(errno));
    hf_io_sync_dir(to);
    return HF_OK;
}
