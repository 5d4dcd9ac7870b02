/* What `headfuse target` reports (headfuse/report.h): the bounds with their rules, the
 * certificate over all keys, the product head built and verified, the memory of P/Q, and a
 * search's memory and plan at a span. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "headfuse/algebra.h"
#include "headfuse/report.h"
#include "headfuse/verify.h"

/* The numeric cross-check evaluates the product head at up to 64 queries, fewer for large
 * heads so that it stays near 2^22 atom-coordinate products (W_16: 4 queries, 0.04 s
 * instead of 0.6 s); the exact verification decides, this only confirms. */
#define NUMERIC_WORK (1L << 22)

void hf_report_target_init(hf_report_target_t *r)
{
    memset(r, 0, sizeof *r);
    hf_lower_init(&r->low);
    fmpz_init(r->lb);
    fmpz_init(r->ub);
    hf_head_init(&r->product_head, 0, 0); /* empty until a target gives its dimensions */
}

void hf_report_target_clear(hf_report_target_t *r)
{
    hf_lower_clear(&r->low);
    fmpz_clear(r->lb);
    fmpz_clear(r->ub);
    hf_head_clear(&r->product_head);
    hf_report_target_init(r);
}

/* Build the product head of t into r and check it exactly and numerically. */
static hf_err_t product_head(const hf_target_t *t, hf_report_target_t *r)
{
    int ok = 0;
    hf_head_clear(&r->product_head);
    hf_head_init(&r->product_head, t->d, t->dv);
    hf_err_t e = hf_bounds_product_head(t, HF_REPORT_PRODUCT_MAX, &r->product_head);
    if (e == HF_OK)
        e = hf_verify_head(t, &r->product_head, &ok, NULL);
    if (e == HF_OK) {
        long n = NUMERIC_WORK / (r->product_head.natoms * t->d + 1);
        r->product_err = hf_verify_numeric(t, &r->product_head,
                                           n > 64  ? 64
                                           : n < 4 ? 4
                                                   : (int)n,
                                           1.0, 1);
    }
    if (e == HF_OK && !ok)
        e = hf_error(HF_ERR_INTERNAL, "%s: the product head failed exact verification", t->name);
    return e;
}

hf_err_t hf_report_target(const hf_target_t *t, hf_report_target_t *out)
{
    hf_report_target_t r;
    hf_report_target_init(&r);
    hf_err_t e;
    HF_CHECK(e, hf_fraction_estimate(t, &r.fraction_bytes), done);
    HF_CHECK(e, hf_bounds_lower_info(t, &r.low), done);
    HF_CHECK(e, hf_bounds_upper(t, r.ub, &r.ub_exact), done);
    HF_CHECK(e, hf_search_certify(t, &r.cert), done);
    hf_search_best_lower(&r.low, &r.cert, r.lb, &r.lb_rule);
    r.lb_ub = r.ub_exact && fmpz_equal(r.low.lb, r.ub);
    r.certified = r.lb_ub || r.cert.certified;
    r.product = r.ub_exact && fmpz_cmp_si(r.ub, HF_REPORT_PRODUCT_MAX) <= 0;
    if (r.product)
        HF_CHECK(e, product_head(t, &r), done);
    hf_report_target_clear(out);
    *out = r; /* the new value, swapped in */
    return HF_OK;
done:
    hf_report_target_clear(&r);
    return e;
}

json_t *hf_report_certificate_json(const hf_certificate_t *c)
{
    if (!c->dim)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "dim", json_integer(c->dim));
    json_object_set_new(o, "lb", json_integer(c->lb));
    json_object_set_new(
        o, "rule", json_string(hf_rule_name(c->dim == 3 ? HF_RULE_NEWTON_3D : HF_RULE_NEWTON_2D)));
    json_object_set_new(o, "supp_q", json_integer(c->supp_q));
    json_object_set_new(o, "supp_q_feasible", json_boolean(c->supp_q_feasible));
    json_object_set_new(o, "boundary", json_integer(c->boundary));
    json_object_set_new(o, "other_supports_at_least", json_integer(c->nonpoint));
    if (c->dim == 3) {
        json_object_set_new(o, "faces", json_string(c->faces));
        json_object_set_new(o, "weakest", json_string(c->weakest));
        json_object_set_new(o, "shares_at_least", json_integer(c->shares));
        json_object_set_new(o, "zones_at_least", json_integer(c->zones));
    }
    return o;
}

/* Why span_free is null: the arguments are for two and three variables. */
static json_t *span_free_note(const hf_target_t *t, const hf_certificate_t *c)
{
    if (c->dim)
        return json_null();
    if (t->d == 2 || t->d == 3)
        return json_string("the 2-D/3-D argument's conditions do not hold "
                           "(docs/search.md, \"Certified over all keys\")");
    return json_string("the span-free arguments are for d = 2 and d = 3 "
                       "(docs/search.md, \"Certified over all keys\")");
}

/* The product head's JSON: atoms, verified, max_abs_error, keys, weights, values. */
static json_t *product_json(const hf_report_target_t *r)
{
    if (!r->product)
        return json_null();
    json_t *p = json_object(), *head = hf_head_to_json(&r->product_head, NULL, 1);
    json_object_set_new(p, "atoms", json_integer(r->product_head.natoms));
    json_object_set_new(p, "verified", json_true());
    json_object_set_new(p, "max_abs_error", json_real(r->product_err));
    json_object_update(p, head); /* keys, weights, values */
    json_decref(head);
    return p;
}

json_t *hf_report_target_json(const hf_target_t *t, const hf_report_target_t *r)
{
    const hf_certificate_t *c = &r->cert;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "d", json_integer(t->d));
    json_object_set_new(o, "dv", json_integer(t->dv));
    json_object_set_new(o, "heads", json_integer(t->nheads));
    json_object_set_new(o, "head_atoms", json_integer(hf_target_head_atoms(t)));
    json_object_set_new(o, "lb", hf_json_bigint(r->lb));
    json_object_set_new(o, "lb_rule", json_string(r->lb_rule));
    json_object_set_new(o, "newton_vertices",
                        r->low.newton_known ? hf_json_bigint(r->low.newton_vertices) : json_null());
    json_object_set_new(o, "ub", hf_json_bigint(r->ub));
    json_object_set_new(o, "ub_exact", json_boolean(r->ub_exact));
    json_object_set_new(o, "certified", json_boolean(r->certified));
    /* m* whenever it is proven: by the 2-D or 3-D certificate, or by LB = UB (then the
     * rule is LB's; docs/math.md §1.4) */
    json_object_set_new(o, "m_star_certified",
                        c->certified ? json_integer(c->m_star)
                        : r->lb_ub   ? hf_json_bigint(r->ub)
                                     : json_null());
    json_object_set_new(o, "certified_rule",
                        c->certified ? json_string(c->rule)
                        : r->lb_ub   ? json_string(r->low.rule)
                                     : json_null());
    json_object_set_new(o, "span_free", hf_report_certificate_json(c));
    json_object_set_new(o, "span_free_note", span_free_note(t, c));
    json_object_set_new(o, "fraction_bytes_estimate", json_real(r->fraction_bytes));
    json_object_set_new(o, "product_head", product_json(r));
    return o;
}

/* ------------------------------------------------------------------ at a span */

hf_err_t hf_report_span(const hf_target_t *t, const hf_report_span_opts_t *o, hf_report_span_t *out)
{
    hf_report_span_t r;
    memset(&r, 0, sizeof r);
    r.span = o->span;
    hf_bounds_t b;
    hf_bounds_init(&b);
    hf_search_opts_t so = {.span = o->span};
    hf_err_t e =
        hf_campaign_memory_plan(o->max_memory, o->node_memory, NULL, o->ranks, o->nodes, &r.lim);
    /* the plan for these ranks, not refused here: reported against the limits */
    hf_campaign_memory_t all = {.bytes = HUGE_VAL, .ranks = r.lim.ranks};
    all.node_ranks = r.lim.node_ranks;
    if (e == HF_OK)
        e = hf_bounds_compute(t, &b);
    if (e == HF_OK)
        e = hf_campaign_certified(t, &so, &b, "max_atoms", &r.shortcut);
    if (e == HF_OK)
        r.refused = hf_campaign_plan_row(t, &so, &b, r.shortcut, &all, &r.plan);
    hf_bounds_clear(&b);
    if (e != HF_OK || r.refused == HF_ERR_NOMEM)
        return e != HF_OK ? e : r.refused;
    if (r.refused != HF_OK)
        snprintf(r.why, sizeof r.why, "%s", hf_error_msg());
    r.fits = r.plan.mem.total <= r.lim.bytes;
    r.node_fits =
        !r.lim.node_check || r.lim.node_bytes <= 0 || r.plan.node_total <= r.lim.node_bytes;
    *out = r;
    return HF_OK;
}

/* The plan with the nodes it is checked against. */
static json_t *span_plan_json(const hf_report_span_t *r)
{
    const hf_campaign_memory_t *lim = &r->lim;
    json_t *pj = hf_report_plan_json(&r->plan);
    json_object_set_new(pj, "nodes", json_integer(lim->nodes));
    json_object_set_new(pj, "node_memory_bytes",
                        lim->node_bytes > 0 ? json_integer((json_int_t)lim->node_bytes)
                                            : json_null());
    json_object_set_new(pj, "node_memory_source", json_string(lim->node_source));
    json_object_set_new(pj, "node_fits", json_boolean(r->node_fits));
    json_object_set_new(pj, "node_checked", json_boolean(lim->node_check));
    return pj;
}

json_t *hf_report_span_json(const hf_report_span_t *r)
{
    hf_search_memory_t m = r->plan.mem;
    int search = !r->shortcut && r->refused == HF_OK;
    json_t *o = json_object();
    json_object_set_new(o, "span", json_integer(r->span));
    json_object_set_new(o, "search", json_boolean(search));
    if (r->refused != HF_OK)
        json_object_set_new(o, "refused", json_string(r->why));
    if (search) {
        json_object_set_new(o, "bytes", json_real(m.total));
        json_object_set_new(o, "ranks", json_integer(m.ranks));
        json_object_set_new(o, "large_row", json_boolean(m.large));
        json_object_set_new(o, "process", json_real(m.base));
        json_object_set_new(o, "fraction", json_real(m.fraction));
        json_object_set_new(o, "box", json_real(m.box));
        json_object_set_new(o, "keys", json_real(m.keys));
        json_object_set_new(o, "bytes_per_key", json_real(m.search_per_key + m.witness_per_key));
        json_object_set_new(o, "fits", json_boolean(r->fits));
    }
    json_object_set_new(o, "limit", json_real(r->lim.bytes));
    json_object_set_new(o, "limit_source", json_string(r->lim.source));
    if (r->refused == HF_OK)
        json_object_set_new(o, "plan", span_plan_json(r));
    return o;
}
