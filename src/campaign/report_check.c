/* What `headfuse check` and `headfuse verify` decide (headfuse/report.h): one key set
 * decided exactly with its witness checked again independently, and the stored witnesses
 * of a result's row checked against the row's target. */
#include <stdio.h>
#include <string.h>

#include "headfuse/agree.h"
#include "headfuse/algebra.h"
#include "headfuse/exact.h"
#include "headfuse/report.h"
#include "headfuse/verify.h"

/* The numeric cross-check's queries for a witness held in memory. */
#define NUMERIC_QUERIES 64

void hf_report_check_init(hf_report_check_t *r)
{
    memset(r, 0, sizeof *r);
    r->reason = HF_REASON_MODP_RANK;
    hf_head_init(&r->witness, 0, 0); /* empty until a target gives its dimensions */
}

void hf_report_check_clear(hf_report_check_t *r)
{
    hf_head_clear(&r->witness);
    hf_report_check_init(r);
}

hf_err_t hf_report_check(const hf_target_t *t, long m, const int64_t *keys, hf_report_check_t *out)
{
    hf_report_check_t r;
    hf_report_check_init(&r);
    r.m = m;
    hf_head_init(&r.witness, t->d, t->dv);
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_exact_t *ex = NULL;
    int ok = 1;
    const char *why = NULL;
    hf_err_t e;
    HF_CHECK(e, hf_fraction_from_target(&f, t), done);
    HF_CHECK(e, hf_exact_create(&f, &ex), done);
    hf_reason_t reason = HF_REASON_MODP_RANK;
    HF_CHECK(e, hf_exact_check(ex, m, keys, &r.feasible, &reason, &r.witness), done);
    r.reason = (int)reason;
    if (r.feasible)
        HF_CHECK(e, hf_verify_head(t, &r.witness, &ok, &why), done);
    if (!ok) {
        e = hf_error(HF_ERR_INTERNAL,
                     "the exact test's witness failed independent verification (%s)",
                     why ? why : "?");
        goto done;
    }
    if (r.feasible)
        r.err = hf_verify_numeric(t, &r.witness, NUMERIC_QUERIES, 1.0, 1);
    hf_report_check_clear(out);
    *out = r; /* the new value, swapped in */
    hf_head_init(&r.witness, 0, 0);
done:
    hf_exact_destroy(&ex);
    hf_fraction_clear(&f);
    hf_head_clear(&r.witness);
    return e;
}

json_t *hf_report_check_json(const hf_target_t *t, const hf_report_check_t *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "target", json_string(t->name));
    json_object_set_new(o, "m", json_integer(r->m));
    json_object_set_new(o, "feasible", json_boolean(r->feasible));
    json_object_set_new(o, "reason", json_string(hf_reason_name((hf_reason_t)r->reason)));
    json_object_set_new(o, "reason_text", json_string(hf_reason_text((hf_reason_t)r->reason)));
    if (r->feasible) {
        json_object_set_new(o, "witness", hf_head_to_json(&r->witness, NULL, 1));
        json_object_set_new(o, "verified", json_true());
        json_object_set_new(o, "max_abs_error", json_real(r->err));
    }
    return o;
}

/* ------------------------------------------------------------------ verify */

/* One witness held in memory: the whole identity and the numeric check (rank 0 only). */
static hf_err_t verify_small(const hf_target_t *t, const hf_supports_t *s, long j, int *ok,
                             const char **why, double *err_num)
{
    hf_head_t h;
    hf_head_init(&h, s->d, s->dv);
    hf_err_t e = hf_supports_head(s, j, &h, why); /* a bad weight fails the witness */
    *ok = !*why;
    if (e == HF_OK && *ok)
        e = hf_verify_head(t, &h, ok, why);
    *err_num = e == HF_OK && *ok ? hf_verify_numeric(t, &h, NUMERIC_QUERIES, 1.0, 1) : 0;
    hf_head_clear(&h);
    return e;
}

/* The target stored with row i into t (initialised): the file is bad, not the user, when
 * it cannot be read or does not match the row's supports. */
static hf_err_t row_target(const char *path, const hf_result_t *r, long i, hf_target_t *t)
{
    const hf_supports_t *s = &r->supports[i];
    char origin[512];
    snprintf(origin, sizeof origin, "%s: /rows/%ld/target_json", path, i);
    hf_err_t e = hf_target_from_json_text(t, r->target_json[i], origin);
    if (e == HF_ERR_INPUT)
        e = HF_ERR_CORRUPT;
    if (e == HF_OK && (t->d != s->d || t->dv != s->dv))
        e = hf_error(HF_ERR_CORRUPT,
                     "%s: /rows/%ld: supports have d=%d, dv=%d but the target d=%d, dv=%d", path, i,
                     s->d, s->dv, t->d, t->dv);
    return e;
}

/* Verify the witnesses of row i (collective), reporting on rank 0; *bad: its failures. */
static hf_err_t verify_row(MPI_Comm comm, const char *path, const hf_result_t *r, long i,
                           const hf_report_verify_fns_t *fns, long *bad)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    const hf_supports_t *s = &r->supports[i];
    hf_target_t t;
    hf_target_init_empty(&t);
    double maxerr = 0;
    *bad = 0;
    hf_err_t e = hf_agree_all(comm, row_target(path, r, i, &t));
    for (long j = 0; j < s->n && e == HF_OK; j++) {
        int ok = 0;
        const char *why = NULL;
        double err = 0;
        if (s->file)
            e = hf_campaign_verify_large(comm, &t, s, j, &ok, &why, &err);
        else if (rank == 0)
            e = verify_small(&t, s, j, &ok, &why, &err);
        if (!s->file)
            e = hf_agree_root(comm, e);
        if (e == HF_OK && rank == 0 && ok && !(err <= maxerr))
            maxerr = err; /* NaN wins: it must show */
        if (e == HF_OK && rank == 0 && !ok) {
            ++*bad;
            if (fns && fns->failed)
                fns->failed(fns->ctx, r, i, j, why ? why : "not equal to the target");
        }
    }
    hf_target_clear(&t);
    if (e == HF_OK && rank == 0 && fns && fns->row)
        fns->row(fns->ctx, r, i, *bad, maxerr);
    return e;
}

hf_err_t hf_report_verify(MPI_Comm comm, const char *path, const hf_report_verify_fns_t *fns,
                          long *failed)
{
    hf_result_t r;
    hf_result_init(&r);
    /* every rank reads the table; a large witness stays in the file, read in pieces */
    hf_err_t e = hf_agree_all(comm, hf_campaign_result_read(path, &r));
    *failed = 0;
    for (long i = 0; i < r.nrows && e == HF_OK; i++) {
        long bad = 0;
        e = verify_row(comm, path, &r, i, fns, &bad);
        *failed += bad;
    }
    hf_result_clear(&r);
    if (e == HF_OK)
        MPI_Bcast(failed, 1, MPI_LONG, 0, comm);
    return e;
}
