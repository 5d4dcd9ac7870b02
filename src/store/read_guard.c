/* Reading a damaged HDF5 file first in a child process.
 *
 * libhdf5 1.10.8 trusts much of a file's metadata: fuzzing found byte-damaged files
 * on which it dereferences wild pointers, copies gigabytes or loops forever before
 * headfuse sees any data (docs/reliability.md, "Fuzzing"). A reader cannot validate
 * a file without parsing it, so it is parsed first in a forked child under a time and
 * memory limit, where a crash costs nothing. A child that dies becomes a "corrupt
 * file" error naming the file; a child whose read failed cleanly sends its error back
 * through a pipe (the parent does not read that file again: a read that ran out of
 * memory under the child's limit must not be retried without it); only a file the
 * child read successfully is read again, in this process. The child writes nothing
 * but the pipe and leaves with _exit, so the parent's open files, MPI state and
 * buffers are untouched. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "headfuse/control.h"
#include "headfuse/core.h"
#include "store_impl.h"

#if defined(__SANITIZE_ADDRESS__)
#define HF_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HF_UNDER_ASAN 1
#endif
#endif

#ifdef HF_UNDER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* The child's exit status for "the reader returned an error" (0: it succeeded).
 * Anything else (a signal, a sanitizer's exit status) means it did not finish. */
#define CLEAN_FAILURE 97

static int guard_state = -1; /* -1: not yet decided from the environment */

void hf_h5_read_guard_enable(int on)
{
    guard_state = on != 0;
}

static int guard_on(void)
{
#ifdef HF_SMPI
    /* SimGrid SMPI runs every rank in one process: a fork would copy all of them */
    return 0;
#endif
    if (guard_state < 0) {
        const char *e = hf_env(HF_ENV_READ_GUARD);
        guard_state = !(e && strcmp(e, "0") == 0);
    }
    return guard_state;
}

/* Seconds the child may take: generous for a healthy file (reading runs at tens of
 * MB/s even on a loaded file system), short for a loop. HEADFUSE_READ_TIMEOUT
 * overrides it (0: no limit). */
static unsigned time_limit(off_t bytes, long files)
{
    const char *e = hf_env(HF_ENV_READ_TIMEOUT);
    if (e && *e) {
        long v;
        if (hf_parse_long(e, -1, 0, 999999, &v) == HF_PARSE_OK)
            return (unsigned)v;
    }
    return 60u + (unsigned)(bytes >> 20) + (unsigned)(files - 1);
}

/* Address space the child may use on top of what it inherits: a reader needs memory
 * in proportion to the file, so anything far beyond that is damage (HDF5 then gets
 * NULL from malloc and fails cleanly). Not under AddressSanitizer, whose shadow
 * memory needs terabytes of address space. */
static void limit_memory(off_t bytes)
{
#ifndef HF_UNDER_ASAN
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    if (pages <= 0)
        return;
    rlim_t now = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
    rlim_t budget = ((rlim_t)1 << 30) + 64 * (rlim_t)bytes;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 &&
        (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > now + budget)) {
        rl.rlim_cur = now + budget;
        setrlimit(RLIMIT_AS, &rl);
    }
#else
    (void)bytes;
#endif
}

static void run_child(int out, const char *path, off_t bytes, unsigned seconds,
                      hf_h5_probe_fn probe, const void *arg)
{
    /* quiet: HDF5 is already quiet, but a crash report or a sanitizer's would go to
     * the user's terminal for an error the parent reports itself */
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        if (null > STDERR_FILENO)
            close(null);
    }
#ifdef HF_UNDER_ASAN
    /* a sanitizer report of the child (a crash inside libhdf5) would go to the
     * sanitizer's own log file: the parent reports it, as a corrupt file */
    __sanitizer_set_report_fd((void *)(intptr_t)STDERR_FILENO);
#endif
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);
    limit_memory(bytes);
    signal(SIGALRM, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    alarm(seconds);
    hf_err_t err = probe(path, arg);
    if (err == HF_OK)
        _exit(0);
    /* the code as one byte, then the message */
    char msg[1100];
    int n = snprintf(msg, sizeof msg, "%c%s", (char)err, hf_error_msg());
    if (n > (int)sizeof msg - 1)
        n = (int)sizeof msg - 1;
    for (int done = 0; done < n;) {
        ssize_t w = write(out, msg + done, (size_t)(n - done));
        if (w <= 0 && errno != EINTR)
            break;
        done += w > 0 ? (int)w : 0;
    }
    _exit(CLEAN_FAILURE);
}

/* Everything the child wrote into the pipe, NUL-terminated (at most n - 1 bytes). */
static size_t read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got + 1 < n) {
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    return got;
}

/* One child running probe(path, arg) on `bytes` of files within `seconds`; *died = 1
 * when it did not finish (crashed, timed out, or left otherwise). */
static hf_err_t guard(const char *path, off_t bytes, unsigned seconds, const char *kind,
                      hf_h5_probe_fn probe, const void *arg, int *read_ok, int *died)
{
    int fds[2];
    *died = 0;
    if (pipe(fds) != 0)
        return HF_OK; /* no descriptors to spare: read unguarded */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return HF_OK; /* no child to spare (process limit, memory): read unguarded */
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(fds[1], path, bytes, seconds, probe, arg);
    }
    close(fds[1]);
    char msg[1100];
    size_t got = read_all(fds[0], msg, sizeof msg);
    close(fds[0]);
    int status;
    pid_t w;
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        return hf_error(HF_ERR_INTERNAL, "%s: waiting for the %s reader: %s", path, kind,
                        strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (read_ok)
            *read_ok = 1;
        return HF_OK;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == CLEAN_FAILURE && got > 1 && msg[0] > HF_OK &&
        msg[0] < 100)
        return hf_error((hf_err_t)msg[0], "%s", msg + 1);
    *died = 1;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return hf_error(HF_ERR_CORRUPT,
                        "%s: corrupt %s: the HDF5 library did not finish reading it in %u s "
                        "(HEADFUSE_READ_TIMEOUT sets the limit)",
                        path, kind, seconds);
    if (WIFSIGNALED(status))
        return hf_error(HF_ERR_CORRUPT,
                        "%s: corrupt %s: the HDF5 library crashed reading it (signal %d: %s)", path,
                        kind, WTERMSIG(status), strsignal(WTERMSIG(status)));
    return hf_error(HF_ERR_CORRUPT, "%s: corrupt %s: reading it failed (exit status %d)", path,
                    kind, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

hf_err_t hf_h5_read_guard(const char *path, const char *kind, hf_h5_probe_fn probe, const void *arg,
                          int *read_ok)
{
    struct stat st;
    if (read_ok)
        *read_ok = 0;
    /* a missing or unreadable file is the in-process reader's to report */
    if (!guard_on() || stat(path, &st) != 0)
        return HF_OK;
    int died;
    return guard(path, st.st_size, time_limit(st.st_size, 1), kind, probe, arg, read_ok, &died);
}

/* The probe of hf_h5_read_guard_all: every file in order, up to the first failure. */
typedef struct {
    const char *const *paths;
    long n;
    hf_h5_probe_fn probe;
    const void *arg;
} probe_all_t;

static hf_err_t probe_all(const char *path, const void *ctx)
{
    (void)path;
    const probe_all_t *p = ctx;
    for (long i = 0; i < p->n; i++)
        HF_TRY(p->probe(p->paths[i], p->arg));
    return HF_OK;
}

hf_err_t hf_h5_read_guard_all(const char *const *paths, long n, const char *kind,
                              hf_h5_probe_fn probe, const void *arg, int *read_ok)
{
    *read_ok = 0;
    if (!guard_on() || n < 1)
        return HF_OK;
    off_t bytes = 0;
    struct stat st;
    for (long i = 0; i < n; i++)
        if (stat(paths[i], &st) == 0)
            bytes += st.st_size;
    probe_all_t p = {paths, n, probe, arg};
    int died;
    hf_err_t err =
        guard(paths[0], bytes, time_limit(bytes, n), kind, probe_all, &p, read_ok, &died);
    /* a child that died does not say which file killed it: each is guarded on its own */
    return died ? HF_OK : err;
}
