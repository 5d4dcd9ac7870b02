/* What an approximation table says about the exact minimum, and the table as JSON
 * (headfuse/report.h, docs/approx.md). */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "headfuse/core.h"
#include "headfuse/report.h"

double hf_report_rms(double mse)
{
    return isfinite(mse) ? sqrt(mse) : INFINITY;
}

hf_approx_verdict_t hf_report_approx_verdict(const hf_approx_result_t *r, const hf_approx_prov_t *p,
                                             int *m)
{
    const hf_approx_row_t *first = NULL;
    for (int i = 0; i < r->nrows && !first; i++)
        if (!strcmp(r->rows[i].status, "rounding"))
            first = r->rows + i;
    *m = first ? first->m : 0;
    if (!first)
        return HF_VERDICT_NONE;
    long lb = -1; /* stays -1 when absent or beyond long */
    if (p->lower_bound)
        hf_parse_long(p->lower_bound, -1, 0, LONG_MAX, &lb);
    /* rounding level at the first budget of a range that starts above 1 says nothing of
     * the sizes below it */
    int from_bottom = first == r->rows && first->m > 1;
    if (r->exact_atoms > 0 && first->m == r->exact_atoms && !from_bottom)
        return lb == r->exact_atoms ? HF_VERDICT_CONFIRMED : HF_VERDICT_AT_EXACT;
    if (r->exact_atoms > 0 && first->m < r->exact_atoms)
        return HF_VERDICT_BELOW;
    if (lb == first->m && !from_bottom)
        return HF_VERDICT_AT_LB;
    return HF_VERDICT_IN_RANGE;
}

/* A number, or null when it is not finite. */
static json_t *json_num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *hf_report_approx_row_json(const hf_approx_result_t *r, const hf_approx_row_t *row,
                                  const char *file)
{
    json_t *o = json_object();
    if (file)
        json_object_set_new(o, "file", json_string(file));
    json_object_set_new(o, "name", json_string(r->name ? r->name : ""));
    json_object_set_new(o, "d", json_integer(r->d));
    json_object_set_new(o, "m", json_integer(row->m));
    json_object_set_new(o, "train_mse", json_num(row->train_mse));
    json_object_set_new(o, "test_mse", json_num(row->test_mse));
    json_object_set_new(o, "train_rms", json_num(hf_report_rms(row->train_mse)));
    json_object_set_new(o, "test_rms", json_num(hf_report_rms(row->test_mse)));
    json_object_set_new(o, "restarts", json_integer(row->restarts));
    json_object_set_new(o, "best_restart", json_integer(row->best_restart));
    json_object_set_new(o, "start", json_string(row->start));
    json_object_set_new(o, "iterations", json_integer(row->iterations));
    json_object_set_new(o, "converged_reason", json_string(row->converged_reason));
    json_object_set_new(o, "status", json_string(row->status));
    json_object_set_new(o, "seconds", json_num(row->seconds));
    return o;
}

/* The settings of the fits (hf_approx_opts_t) into o: samples, test_samples, restarts,
 * sigma, seed and TAO's type. */
static void settings_json(json_t *o, const hf_approx_result_t *r)
{
    json_object_set_new(o, "samples", json_integer(r->samples));
    json_object_set_new(o, "test_samples", json_integer(r->test_samples));
    json_object_set_new(o, "restarts", json_integer(r->restarts));
    json_object_set_new(o, "sigma", json_num(r->sigma));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(o, "tao_type", json_string(r->tao_type));
}

json_t *hf_report_approx_json(const hf_approx_result_t *r, const hf_approx_prov_t *p,
                              const char *file)
{
    json_t *o = json_object(), *rows = json_array();
    json_object_set_new(o, "name", json_string(r->name ? r->name : ""));
    json_object_set_new(o, "d", json_integer(r->d));
    json_object_set_new(o, "dv", json_integer(r->dv));
    settings_json(o, r);
    json_object_set_new(o, "target_rms", json_num(r->target_rms));
    json_object_set_new(o, "exact_atoms",
                        r->exact_atoms > 0 ? json_integer(r->exact_atoms) : json_null());
    json_object_set_new(o, "exact_source", json_string(r->exact_source));
    json_object_set_new(o, "lower_bound",
                        p->lower_bound && p->lower_bound[0] ? json_string(p->lower_bound)
                                                            : json_null());
    json_object_set_new(o, "ranks", json_integer(p->ranks));
    if (file)
        json_object_set_new(o, "file", json_string(file));
    for (int i = 0; i < r->nrows; i++)
        json_array_append_new(rows, hf_report_approx_row_json(r, r->rows + i, NULL));
    json_object_set_new(o, "rows", rows);
    return o;
}
