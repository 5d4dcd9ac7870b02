/* The preflight of a job run: before any work, every selected entry's search is checked
 * without being built (its options, box and memory estimate, hf_campaign_check_row) and
 * its bounds are computed
 * once (LB for max_atoms, LB = UB for the certified shortcut); the entries are spread over
 * the ranks, and the bounds are then shared, so that each entry's row uses the record
 * computed here. The same checks of every entry without MPI: hf_campaign_job_check
 * (`run --list`). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz.h>

#include "headfuse/agree.h"
#include "campaign/campaign_impl.h"

hf_err_t hf_campaign_check_entry(const hf_job_t *job, long i, hf_bounds_t *b,
                                 const hf_campaign_memory_t *lim, hf_campaign_plan_t *plan)
{
    hf_target_t t;
    hf_target_init_empty(&t);
    HF_TRY(hf_job_entry_target(job, i, &t));
    const hf_job_entry_t *je = job->entries + i;
    hf_search_opts_t so;
    hf_campaign_entry_opts(job, i, &so);
    int shortcut = 0;
    hf_err_t e = hf_bounds_compute(&t, b);
    if (e == HF_OK)
        e = hf_campaign_certified(&t, &so, b, "max_atoms", &shortcut);
    if (e == HF_OK)
        e = plan ? hf_campaign_plan_row(&t, &so, b, shortcut, lim, plan)
                 : hf_campaign_check_row(&t, &so, b, shortcut, lim, NULL);
    hf_target_clear(&t);
    if (e != HF_OK) {
        char *d = hf_job_entry_describe(job, i);
        hf_error_prefix("%s:%d: entries[%d] (%s)", job->path, je->line, je->index,
                        d ? d : je->label);
        free(d);
    }
    return e;
}

hf_err_t hf_campaign_job_check(const hf_job_t *job, const hf_campaign_memory_t *lim,
                               hf_campaign_plan_t *plan)
{
    for (long i = 0; i < job->nentries; i++) {
        hf_bounds_t b;
        hf_bounds_init(&b);
        hf_err_t e = hf_campaign_check_entry(job, i, &b, lim, plan ? plan + i : NULL);
        hf_bounds_clear(&b);
        if (e != HF_OK)
            return e;
    }
    return HF_OK;
}

/* One bounds record as a line of text: "LB UB RULE UB_EXACT NEWTON_KNOWN NEWTON COMPLETE". */
static hf_err_t record_text(const hf_bounds_t *b, char **line)
{
    char *lb = fmpz_get_str(NULL, 10, b->low.lb), *ub = fmpz_get_str(NULL, 10, b->ub);
    char *nv = fmpz_get_str(NULL, 10, b->low.newton_vertices);
    size_t n = strlen(lb) + strlen(ub) + strlen(nv) + strlen(b->low.rule) + 32;
    *line = hf_malloc(n);
    if (*line)
        snprintf(*line, n, "%s %s %s %d %d %s %d\n", lb, ub, b->low.rule, b->ub_exact,
                 b->low.newton_known, nv, b->low.complete);
    flint_free(nv);
    flint_free(ub);
    flint_free(lb);
    return *line ? HF_OK : HF_ERR_NOMEM;
}

/* The record of a line (p: the line, moved past it). */
static hf_err_t record_parse(char **p, hf_bounds_t *b)
{
    char *end = strchr(*p, '\n'), *tok[7], *save = NULL;
    hf_rule_t rule;
    int n = 0;
    if (!end)
        return hf_error(HF_ERR_INTERNAL, "preflight: a bounds record without its end");
    *end = '\0';
    for (char *t = strtok_r(*p, " ", &save); t && n < 7; t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    *p = end + 1;
    if (n != 7 || fmpz_set_str(b->low.lb, tok[0], 10) || fmpz_set_str(b->ub, tok[1], 10) ||
        !hf_rule_parse(tok[2], &rule) || fmpz_set_str(b->low.newton_vertices, tok[5], 10))
        return hf_error(HF_ERR_INTERNAL, "preflight: a damaged bounds record");
    b->low.rule = hf_rule_name(rule);
    b->ub_exact = atoi(tok[3]);
    b->low.newton_known = atoi(tok[4]);
    b->low.complete = atoi(tok[6]);
    return HF_OK;
}

/* Collective: every rank gets the records of entries first..last, each computed by the rank
 * that checked it (entry i by rank (i - first) mod size). Allocations are agreed on before
 * the collective calls that need them. */
static hf_err_t share_records(MPI_Comm comm, long first, long last, hf_bounds_t *bounds)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char *mine = NULL, *all = NULL;
    long len = 0, cap = 0;
    int *counts = NULL, *displs = NULL;
    hf_err_t e = HF_OK;
    for (long i = first + rank; e == HF_OK && i <= last; i += size) {
        char *line = NULL;
        e = record_text(bounds + i, &line);
        long n = line ? (long)strlen(line) : 0;
        if (e == HF_OK && (e = HF_GROW(&mine, &cap, len + n + 1)) == HF_OK) {
            memcpy(mine + len, line, (size_t)n + 1);
            len += n;
        }
        free(line);
    }
    counts = hf_malloc((size_t)size * sizeof *counts);
    displs = hf_malloc((size_t)size * sizeof *displs);
    if (e == HF_OK && (!counts || !displs))
        e = HF_ERR_NOMEM;
    if (e == HF_OK && len > INT_MAX)
        e = hf_error(HF_ERR_LIMIT, "preflight: over %d bytes of bounds on one rank", INT_MAX);
    if ((e = hf_agree_all(comm, e)) != HF_OK)
        goto done;
    int mylen = (int)len;
    MPI_Allgather(&mylen, 1, MPI_INT, counts, 1, MPI_INT, comm);
    long total = 0;
    for (int r = 0; r < size; r++) {
        displs[r] = (int)total;
        total += counts[r];
    }
    if (total > INT_MAX) /* the same on every rank */
        e = hf_error(HF_ERR_LIMIT, "preflight: over %d bytes of bounds to share", INT_MAX);
    else if (!(all = hf_malloc((size_t)total + 1)))
        e = HF_ERR_NOMEM;
    if ((e = hf_agree_all(comm, e)) != HF_OK)
        goto done;
    MPI_Allgatherv(mine, mylen, MPI_CHAR, all, counts, displs, MPI_CHAR, comm);
    all[total] = '\0';
    /* every rank parses the same text: an error here is the same on all of them */
    for (int r = 0; e == HF_OK && r < size; r++) {
        char *p = all + displs[r];
        for (long i = first + r; e == HF_OK && i <= last; i += size)
            if (r != rank)
                e = record_parse(&p, bounds + i);
            else
                p = strchr(p, '\n') + 1; /* this rank's own: kept as computed */
    }
done:
    free(all);
    free(displs);
    free(counts);
    free(mine);
    return e;
}

hf_err_t hf_campaign_preflight(MPI_Comm comm, const hf_job_t *job, long first, long last,
                               const hf_campaign_memory_t *lim, hf_bounds_t *bounds)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long bad = LONG_MAX;
    hf_err_t e = HF_OK;
    for (long i = first + rank; i <= last; i += size)
        if ((e = hf_campaign_check_entry(job, i, bounds + i, lim, NULL)) != HF_OK) {
            bad = i;
            break;
        }
    /* the first failing entry, not the lowest rank */
    HF_TRY(hf_agree_first(comm, e, bad));
    return size > 1 ? share_records(comm, first, last, bounds) : HF_OK;
}
