/* Testing hooks read from the environment once at start (docs/reliability.md, "Fault
 * injection"): make the Nth store write call or the Nth allocation fail, and report
 * at exit how many of each the run made, to size a sweep over N. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"

/* At exit: the counts, one line on stderr (each rank prints its own). HEADFUSE_FAULT_RANK=R
 * arms the faults on rank R only (a disk full on one node, memory short on one rank). */
static void print_counts(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    fprintf(stderr, "headfuse: fault points: h5_write=%ld alloc=%ld (pid %ld, rank %s)\n",
            hf_h5_write_calls(), hf_alloc_calls(), (long)getpid(), r ? r : "0");
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
    const char *fr = getenv("HEADFUSE_FAULT_RANK"); /* unset: every rank */
    long only = fr && *fr ? env_count("HEADFUSE_FAULT_RANK") : -2;
    if (h5 < 0 || alloc < 0 || count < 0 || only == -1)
        return 2;
    /* MPI is not initialised yet: the launcher's variable tells the rank */
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (only >= 0 && (r ? atol(r) : 0) != only)
        h5 = alloc = 0;
    hf_h5_fail_after(h5);
    hf_fail_after(alloc);
    if (count > 0)
        atexit(print_counts);
    return 0;
}
