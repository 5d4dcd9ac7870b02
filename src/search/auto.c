/* The engine auto: not an engine of its own but the choice of one for the search at hand,
 * made when the search is created (docs/search.md, "Which engine auto takes").
 *
 * The cone engine's cost is its double description, which grows with its unknowns n (the
 * points of the box B_R); the layered engine's cost is its face tables: every support of
 * the two limit targets along the last coordinate with at most M - LB(other) points, where
 * M is the largest size to try. When M = LB(bottom) + LB(top) (the slack is 0) the tables
 * hold only minimal supports of the limit targets and the layered engine is cheap whatever
 * n is (W_d at span 2: n = 2^d, slack 0); with slack they grow with it and with the span
 * (chain:d=3: slack 12; at span 5 the layered engine takes 47 CPU minutes, at span 6 it does
 * not finish, while the double description of its 100 unknowns takes 3.5 minutes). */
#include <limits.h>

#include "headfuse/bounds.h"
#include "search/search_impl.h"

/* Above this many unknowns the double description's simplicial start alone (an n x n
 * exact inverse) is too costly: the layered engine, whatever the slack. */
#define AUTO_CONE_UNKNOWNS_MAX 1024

/* M - LB(T_-) - LB(T_+) for the limit targets of t along -e_{d-1} and +e_{d-1} (the layered
 * engine's bottom and top layers) into *slack, last the largest size to try, or -1 when a
 * limit of the bounds leaves it unknown (then the choice falls back on the unknowns alone).
 * Any other error (out of memory) is returned: a rank must not choose apart from the others
 * because an allocation failed there. */
static hf_err_t layered_slack(const hf_target_t *t, long last, long *slack)
{
    int64_t w[HF_D_MAX] = {0};
    long lb[2] = {LONG_MAX, LONG_MAX};
    hf_target_t lim;
    fmpz_t x;
    hf_err_t e = HF_OK;
    hf_target_init_empty(&lim);
    fmpz_init(x);
    for (int side = 0; side < 2 && e == HF_OK; side++) {
        w[t->d - 1] = side ? 1 : -1;
        e = hf_bounds_limit_target(t, w, &lim);
        if (e == HF_OK)
            e = hf_bounds_lower(&lim, x);
        if (e == HF_OK)
            lb[side] = fmpz_fits_si(x) ? fmpz_get_si(x) : LONG_MAX;
    }
    fmpz_clear(x);
    hf_target_clear(&lim);
    if (e == HF_ERR_LIMIT) {
        hf_error_clear();
        e = HF_OK;
    }
    *slack = -1;
    if (e == HF_OK && lb[0] != LONG_MAX && lb[1] != LONG_MAX) {
        long sl = last - lb[0] - lb[1];
        *slack = sl > 0 ? sl : 0;
    }
    return e;
}

/* auto's choice from the unknowns n of the cone and, between the two thresholds, the
 * layered engine's slack (last: the largest size to try). */
static hf_err_t auto_choice(const hf_target_t *t, long n, long last, hf_engine_t *engine)
{
    long slack = 0;
    if (n <= HF_SEARCH_CONE_AUTO_MAX)
        *engine = HF_ENGINE_CONE;
    else if (n > AUTO_CONE_UNKNOWNS_MAX || t->d < 2)
        *engine = HF_ENGINE_LAYERED;
    else {
        HF_TRY(layered_slack(t, last, &slack));
        *engine = slack > 0 ? HF_ENGINE_CONE : HF_ENGINE_LAYERED;
    }
    return HF_OK;
}

static hf_err_t auto_resolve(const hf_search_t *s, hf_engine_t *engine)
{
    return auto_choice(&s->t, hf_search_rbox_size(s->qext, s->d, s->span), s->last, engine);
}

/* large_rows: when it resolves to the cone (large.c asks the cone's rule of auto's choice) */
const hf_engine_ops_t hf_engine_auto = {.resolve = auto_resolve, .large_rows = 1};

hf_err_t hf_search_engine_planned(const hf_target_t *t, const hf_search_opts_t *opts,
                                  const hf_bounds_t *bounds, hf_engine_t *engine, long *unknowns)
{
    hf_slice_plan_t plan;
    /* Newt(Q)'s extents from the heads' factors, exact without P/Q (algebra.h) */
    HF_TRY(hf_fraction_slice_plan(t, NULL, 1, &plan));
    long n = hf_search_rbox_size(plan.qdeg, t->d, opts->span);
    *unknowns = n;
    *engine = opts->engine;
    if (!hf_engine_ops(opts->engine)->resolve)
        return HF_OK;
    /* the largest size as hf_search_create has it when auto resolves (max_atoms comes
     * later); the box's points capped at LONG_MAX */
    long last = hf_search_box_points(t->d, opts->span);
    last = last < 0 ? LONG_MAX : last;
    if (n > HF_SEARCH_CONE_AUTO_MAX && n <= AUTO_CONE_UNKNOWNS_MAX) {
        fmpz_t ub;
        int exact = 0;
        fmpz_init(ub);
        hf_err_t e = HF_OK;
        if (bounds)
            fmpz_set(ub, bounds->ub);
        else
            e = hf_bounds_upper(t, ub, &exact);
        if (e == HF_OK)
            last = hf_search_size_cap(t, opts->span, last, ub);
        fmpz_clear(ub);
        HF_TRY(e);
    }
    return auto_choice(t, n, last, engine);
}
