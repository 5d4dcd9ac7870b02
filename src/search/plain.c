/* The plain reference enumerator (prune = 0): every m-subset of the box points, each
 * decided by the exact test after the canonical-position check. Only the first point's
 * first coordinate is restricted to 0 (the smallest key of a canonical support has
 * x_0 = 0), which changes no answer. Units: the subsets with a given smallest point
 * index, split further by the second index when that class is large. */
#include <limits.h>

#include "search/search_impl.h"

hf_err_t hf_search_plain_level(hf_search_t *s, long m)
{
    long target = hf_search_unit_target;
    long total = hf_search_binom(s->npts, m);
    if (total / target > HF_SEARCH_UNITS_MAX)
        target = total / HF_SEARCH_UNITS_MAX + 1;
    /* points with x_0 = 0 are the indices below base^(d-1) */
    return hf_search_split_prefix(s, 0, 0, s->npts, m, s->pw[0], target);
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

hf_err_t hf_search_plain_run(hf_search_t *s, long m, const hf_unit_t *u, hf_run_t *run)
{
    plain_ctx_t c = {s, m, run};
    return hf_search_combos(s->npts, m, u->npre, u->pre, s->combo, plain_visit, &c);
}
