/* Testing hooks read from the environment once at start (docs/reliability.md, "Fault
 * injection"): make the Nth store write call or the Nth allocation fail, and report
 * at exit how many of each the run made, to size a sweep over N. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"

/* At exit: the counts, one line on stderr (each rank prints its own). */
static void print_counts(void)
{
    fprintf(stderr, "headfuse: fault points: h5_write=%ld alloc=%ld (pid %ld)\n",
            hf_h5_write_calls(), hf_alloc_calls(), (long)getpid());
}

/* Parse a non-negative integer variable; 0 if unset or empty, -1 if malformed. */
static long env_count(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*end || errno || n < 0) {
        fprintf(stderr, "headfuse: %s=%s: must be a non-negative integer\n", name, v);
        return -1;
    }
    return n;
}

int cli_faults_from_env(void)
{
    long h5 = env_count("HEADFUSE_FAIL_H5_WRITE"), alloc = env_count("HEADFUSE_FAIL_ALLOC");
    long count = env_count("HEADFUSE_FAULT_COUNT");
    if (h5 < 0 || alloc < 0 || count < 0)
        return 2;
    hf_h5_fail_after(h5);
    hf_fail_after(alloc);
    if (count > 0)
        atexit(print_counts);
    return 0;
}
