/* Testing hooks read from the environment once at start (docs/reliability.md, "Fault
 * injection"): make the Nth store write call or the Nth allocation fail, and report
 * at exit how many of each the run made, to size a sweep over N; and
 * HEADFUSE_STOP_AT=PHASE:N, a stop requested at the Nth check of a phase (headfuse/stop.h),
 * as if SIGUSR1 had come then ("Stopping in every phase"). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "headfuse/algebra.h"
#include "headfuse/campaign.h"
#include "headfuse/control.h"
#include "headfuse/core.h"
#include "headfuse/exact.h"
#include "headfuse/sched.h"
#include "headfuse/search.h"
#include "headfuse/stop.h"
#include "headfuse/store.h"
#include "headfuse/symmetry.h"

/* Every phase of hf_stop_check, from the modules that declare them (stop.h), in the order
 * of a row's work. */
#define CAMPAIGN_STOP_PHASES(X)                                                                    \
    HF_ALGEBRA_STOP_PHASES(X)                                                                      \
    HF_SEARCH_STOP_PHASES(X)                                                                       \
    HF_SCHED_STOP_PHASES(X)                                                                        \
    HF_EXACT_STOP_PHASES(X)                                                                        \
    HF_STORE_STOP_PHASES(X)                                                                        \
    HF_SYMMETRY_STOP_PHASES(X)                                                                     \
    HF_CORE_STOP_PHASES(X)

/* At exit: the counts, one line on stderr (each rank prints its own). HEADFUSE_FAULT_RANK=R
 * arms the faults on rank R only (a disk full on one node, memory short on one rank). */
static void print_counts(void)
{
    const char *r = hf_env(HF_ENV_MPI_RANK);
    fprintf(stderr, "headfuse: fault points: h5_write=%ld alloc=%ld (pid %ld, rank %s)\n",
            hf_io_write_calls(), hf_alloc_calls(), (long)getpid(), r ? r : "0");
    char line[512];
    int n = snprintf(line, sizeof line, "headfuse: stop checks:");
#define X(id, text)                                                                                \
    if (n > 0 && (size_t)n < sizeof line)                                                          \
        n += snprintf(line + n, sizeof line - (size_t)n, " %s=%ld", #id,                           \
                      hf_stop_checks(HF_STOP_##id));
    CAMPAIGN_STOP_PHASES(X)
#undef X
    fprintf(stderr, "%s (rank %s)\n", line, r ? r : "0");
}

/* Parse a non-negative integer variable into *n; 0 if unset or empty. */
static hf_err_t env_count(hf_env_t var, long *n)
{
    const char *name = hf_env_name(var), *v = hf_env(var);
    *n = 0;
    if (!v || !*v)
        return HF_OK;
    if (hf_parse_long(v, -1, 0, LONG_MAX, n) != HF_PARSE_OK)
        return hf_error(HF_ERR_INPUT, "%s=%s: must be a non-negative integer", name, v);
    return HF_OK;
}

/* HEADFUSE_STOP_AT=PHASE:N, PHASE one of the lower-case names of CAMPAIGN_STOP_PHASES. */
static hf_err_t stop_at_from_env(int here)
{
    static const struct {
        const char *name, *phase;
    } phases[] = {
#define X(id, text) {#id, HF_STOP_##id},
        CAMPAIGN_STOP_PHASES(X)
#undef X
    };
    const char *v = hf_env(HF_ENV_STOP_AT);
    if (!v || !*v)
        return HF_OK;
    const char *colon = strchr(v, ':');
    long n = 0;
    for (size_t i = 0; colon && i < sizeof phases / sizeof *phases; i++) {
        size_t len = strlen(phases[i].name);
        if ((size_t)(colon - v) != len || strncasecmp(v, phases[i].name, len) != 0)
            continue;
        if (hf_parse_long(colon + 1, -1, 1, LONG_MAX, &n) != HF_PARSE_OK)
            break;
        if (here)
            hf_stop_at(phases[i].phase, n);
        return HF_OK;
    }
    return hf_error(HF_ERR_INPUT,
                    "HEADFUSE_STOP_AT=%s: must be PHASE:N with N >= 1 and PHASE one of fraction, "
                    "rows, rays, sizes, tables, units, exact, merge, orbits, write",
                    v);
}

hf_err_t hf_campaign_faults_from_env(void)
{
    long h5, alloc, count, only = -2;
    /* the knobs that variables set (control.h), e.g. HEADFUSE_LARGE_MIN_TERMS=N: rows of
     * more than N estimated terms of Q are large rows (docs/search.md, "Large rows"), so
     * that small ones test the large rows' path; HEADFUSE_SUPPORTS_HOLD_MAX=N: supports of
     * more than N atoms are read in pieces from their file (verify's slices, on small rows);
     * HEADFUSE_FAIL_STATE_MOVE=N: the Nth move of a job state's migration fails */
    HF_TRY(hf_control_from_env());
    const char *fr = hf_env(HF_ENV_FAULT_RANK); /* unset: every rank */
    HF_TRY(env_count(HF_ENV_FAIL_H5_WRITE, &h5));
    HF_TRY(env_count(HF_ENV_FAIL_ALLOC, &alloc));
    HF_TRY(env_count(HF_ENV_FAULT_COUNT, &count));
    if (fr && *fr)
        HF_TRY(env_count(HF_ENV_FAULT_RANK, &only));
    /* MPI is not initialised yet: the launcher's variable tells the rank */
    const char *r = hf_env(HF_ENV_MPI_RANK);
    long me = 0;
    if (r && hf_parse_long(r, -1, 0, LONG_MAX, &me) != HF_PARSE_OK)
        me = 0;
    /* HEADFUSE_FAULT_RANK=R: the faults and the stop on rank R alone */
    HF_TRY(stop_at_from_env(only < 0 || me == only));
    if (only >= 0 && me != only)
        h5 = alloc = 0;
    hf_io_fail_after(h5);
    hf_fail_after(alloc);
    if (count > 0)
        atexit(print_counts);
    return HF_OK;
}
