/* What `headfuse check` decides (headfuse/report.h): one key set decided exactly, with its
 * witness checked again independently. */
#include <stdio.h>
#include <string.h>

#include "headfuse/algebra.h"
#include "headfuse/exact.h"
#include "headfuse/report.h"
#include "headfuse/verify.h"

/* The numeric cross-check's queries. */
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
