/* The plain engine (engine plain, no pruning): the reference enumerator. Every m-subset of
 * the box points goes to the candidate sink, which checks canonical position and runs the
 * exact test. Only the first point's first coordinate is restricted to 0 (the smallest key
 * of a canonical support has x_0 = 0), which changes no answer. Units: the subsets with a
 * given smallest point index, split further by the second index when that class is large;
 * a unit is one cell. */
#include <limits.h>

#include "search/search_impl.h"

/* A prefix class becomes a unit (hf_search_split_prefix). */
static hf_err_t plain_add(void *ctx, int npre, const long *pre)
{
    hf_unit_t u = {.block = 0, .first = 0, .count = 1, .npre = npre, .pre = {pre[0], pre[1]}};
    return hf_search_add_unit(ctx, &u);
}

static hf_err_t plain_level(hf_search_t *s, long m)
{
    long target = hf_knob(HF_KNOB_PLAIN_UNIT_TARGET, HF_SEARCH_UNIT_TARGET);
    long total = hf_search_binom(s->npts, m);
    if (total / target > HF_SEARCH_UNITS_MAX)
        target = total / HF_SEARCH_UNITS_MAX + 1;
    /* points with x_0 = 0 are the indices below base^(d-1) */
    return hf_search_split_prefix(s->npts, m, s->pw[0], target, plain_add, s);
}

typedef struct {
    hf_search_t *s;
    long m;
    hf_run_t *run;
} plain_ctx_t;

static hf_err_t plain_visit(void *vctx, const long *combo, long *skip)
{
    (void)skip; /* the reference enumerator never skips */
    plain_ctx_t *c = vctx;
    for (long i = 0; i < c->m; i++)
        c->s->cand[i] = (uint32_t)combo[i];
    return hf_search_candidate(c->s, c->m, c->s->cand, c->run);
}

static hf_err_t plain_run(hf_search_t *s, long m, const hf_unit_t *u, int64_t lo,
                          hf_search_range_t *range, hf_run_t *run)
{
    (void)lo; /* one cell */
    (void)range;
    plain_ctx_t c = {s, m, run};
    return hf_search_combos(s->npts, m, u->npre, u->pre, s->combo, plain_visit, &c);
}

const hf_engine_ops_t hf_engine_plain = {.level = plain_level, .run = plain_run};
