/* The search object (search.h): the engine table, creation (box, fraction, exact tester,
 * bounds and sizes, the engine chosen and made, the within-span bound, the symmetry
 * group), and the dispatch of preparation, sizes, units and cells to the engine through
 * its table of operations (search_impl.h). Candidates go through the sink (sink.c);
 * subsets are enumerated in subsets.c; the engines are plain.c, layered*.c and cone*.c,
 * and auto.c chooses one. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz.h>

#include "headfuse/bounds.h"
#include "search/search_impl.h"

HF_SEARCH_STOP_PHASES(HF_STOP_DEFINE)

/* ---------------------------------------------------------------- creation */

long hf_search_box_points(int d, int span)
{
    int64_t w[HF_D_MAX];
    if (d < 0 || d > HF_D_MAX)
        return -1;
    for (int a = 0; a < d; a++)
        w[a] = span + 1L;
    return hf_box_points(d, w, LONG_MAX);
}

/* The box against its limit (search.h; docs/targets.md, "Limits"): a large row never lists
 * its points (they are 64-bit box offsets), every other search indexes them in 32 bits. */
static hf_err_t search_box_fits(int span, int d, int large)
{
    long n = hf_search_box_points(d, span);
    if (n >= 0 && n <= (large ? HF_SEARCH_LARGE_BOX_MAX : HF_SEARCH_BOX_MAX))
        return HF_OK;
    if (large)
        return hf_error(HF_ERR_INPUT,
                        "span: box {0..%d}^%d has more than %ld points (a large row numbers "
                        "its points in a signed 64-bit integer: HF_SEARCH_LARGE_BOX_MAX, "
                        "docs/targets.md, \"Limits\")",
                        span, d, HF_SEARCH_LARGE_BOX_MAX);
    return hf_error(HF_ERR_INPUT,
                    "span: box {0..%d}^%d has more than %ld points (point indices are 32 bits "
                    "except in a large row, a cone search of more than %ld estimated terms of Q: "
                    "HF_SEARCH_BOX_MAX, docs/targets.md, \"Limits\")",
                    span, d, HF_SEARCH_BOX_MAX, hf_search_large_min_terms());
}

static hf_err_t search_fmpz_str(const fmpz_t x, char **out)
{
    char *tmp = fmpz_get_str(NULL, 10, x);
    *out = hf_strdup(tmp);
    flint_free(tmp);
    return *out ? HF_OK : HF_ERR_NOMEM;
}

/* The product head's keys span, per coordinate, the sum of the heads' extents; it
 * fits the box {0..S}^d when every such sum is at most S. */
int hf_search_product_fits(const hf_target_t *t, int span)
{
    for (int j = 0; j < t->d; j++) {
        int64_t total = 0;
        for (int h = 0; h < t->nheads; h++) {
            const hf_head_t *hd = t->heads + h;
            int64_t lo = hd->keys[j], hi = hd->keys[j];
            for (long i = 1; i < hd->natoms; i++) {
                int64_t k = hd->keys[i * t->d + j];
                lo = k < lo ? k : lo;
                hi = k > hi ? k : hi;
            }
            total += hi - lo;
        }
        if (total > span)
            return 0;
    }
    return 1;
}

hf_err_t hf_search_span_holds_none(const hf_target_t *t, int span, int *none)
{
    hf_slice_plan_t plan;
    *none = 0;
    HF_TRY(hf_fraction_slice_plan(t, NULL, 1, &plan));
    for (int a = 0; a < t->d; a++)
        if (plan.qdeg[a] > span)
            *none = 1;
    return HF_OK;
}

/* The box {0..S}^d (s->large decided): index weights, and per point its digits and zero
 * mask when they fit (never for a box above HF_SEARCH_TABLE_MAX: no O(points) table). */
static hf_err_t search_box(hf_search_t *s)
{
    HF_TRY(search_box_fits(s->span, s->d, s->large));
    s->base = s->span + 1;
    s->npts = hf_search_box_points(s->d, s->span);
    s->nlayer = s->npts / s->base;
    s->pw = hf_malloc((size_t)s->d * sizeof *s->pw);
    if (!s->pw)
        return HF_ERR_NOMEM;
    long w = 1;
    for (int j = s->d - 1; j >= 0; j--) {
        s->pw[j] = w;
        w *= s->base;
    }
    if (s->npts > HF_SEARCH_TABLE_MAX / s->d) /* not npts * d: it may pass 64 bits */
        return HF_OK;
    s->digits = hf_malloc((size_t)s->npts * s->d);
    s->zmask = hf_malloc((size_t)s->npts * sizeof *s->zmask);
    if (!s->digits || !s->zmask)
        return HF_ERR_NOMEM;
    for (long p = 0; p < s->npts; p++) {
        long v = p;
        s->zmask[p] = 0;
        for (int j = s->d - 1; j >= 0; j--) {
            s->digits[(size_t)p * s->d + j] = (uint8_t)(v % s->base);
            if (v % s->base == 0)
                s->zmask[p] |= (uint64_t)1 << j;
            v /= s->base;
        }
    }
    return HF_OK;
}

long hf_search_size_cap(const hf_target_t *t, int span, long npts, const fmpz_t ub)
{
    /* UB caps the sizes only when the product head lies inside the span box: otherwise a
     * feasible support in the box may need more atoms than UB */
    return fmpz_cmp_si(ub, npts) < 0 && hf_search_product_fits(t, span) ? fmpz_get_si(ub) : npts;
}

/* LB and UB (UB of a top-level search only) and the sizes they allow: from the bounds
 * record when the caller has one, else computed. */
static hf_err_t search_bounds(hf_search_t *s, const hf_bounds_t *given)
{
    hf_err_t err = HF_OK;
    fmpz_t lb, ub;
    fmpz_init(lb);
    fmpz_init(ub);
    if (given)
        fmpz_set(lb, given->low.lb);
    else
        HF_CHECK(err, hf_bounds_lower(&s->t, lb), done);
    s->lb = fmpz_fits_si(lb) ? fmpz_get_si(lb) : LONG_MAX;
    HF_CHECK(err, search_fmpz_str(lb, &s->lb_str), done);
    s->last = s->npts;
    if (s->top) {
        int exact = 0;
        if (given)
            fmpz_set(ub, given->ub);
        else
            HF_CHECK(err, hf_bounds_upper(&s->t, ub, &exact), done);
        HF_CHECK(err, search_fmpz_str(ub, &s->ub_str), done);
        s->last = hf_search_size_cap(&s->t, s->span, s->npts, ub);
    } else if (!(s->ub_str = hf_strdup("?"))) {
        err = HF_ERR_NOMEM;
    }
done:
    fmpz_clear(ub);
    fmpz_clear(lb);
    return err;
}

hf_err_t hf_search_create_internal(const hf_target_t *t, int span, hf_engine_t engine,
                                   const hf_search_make_t *mk, hf_search_t **out)
{
    hf_err_t err = HF_OK;
    *out = NULL;
    hf_search_t *s = hf_calloc(1, sizeof *s);
    if (!s)
        return HF_ERR_NOMEM;
    hf_target_init_empty(&s->t);
    hf_fraction_init(&s->frac);
    s->level_m = -1;
    s->top = mk->top;
    s->shared = mk->parent ? mk->parent->shared : &s->own_shared;
    s->ops = hf_engine_ops(engine);
    HF_CHECK(err, hf_target_copy(&s->t, t), fail);
    s->d = t->d;
    s->dv = t->dv;
    s->span = span;
    /* a large row holds P/Q in slices and needs no tester (large.c); its box may pass 32 bits */
    if (mk->top)
        HF_CHECK(err, hf_search_large_wanted(t, span, engine, &s->large), fail);
    HF_CHECK(err, search_box(s), fail);
    if (s->large) {
        HF_CHECK(err, hf_search_large_create(s), fail);
    } else {
        HF_CHECK(err, hf_fraction_from_target(&s->frac, &s->t), fail);
        HF_CHECK(err, hf_exact_create(&s->frac, &s->exact), fail);
    }
    HF_CHECK(err, search_bounds(s, mk->bounds), fail);
    int prunes = hf_engine_prunes(engine);
    s->first = prunes ? s->lb : 1;
    if (mk->last > 0 && s->last > mk->last)
        s->last = mk->last;
    if (!s->large)
        hf_search_extents(&s->frac, s->qext);
    /* widths add under Minkowski sums (docs/math.md §5.6): a span below an extent of Newt(Q) holds
     * no support, whatever the engine */
    if (prunes && hf_search_rbox_size(s->qext, s->d, span) == 0)
        s->last = s->first - 1;
    if (s->ops->resolve) {
        HF_CHECK(err, s->ops->resolve(s, &engine), fail);
        s->ops = hf_engine_ops(engine);
    }
    if (s->large && !s->ops->large_rows) {
        /* auto chose another engine: an ordinary row after all, its box indexed in 32 bits */
        hf_search_large_destroy(s);
        s->large = 0;
        HF_CHECK(err, search_box_fits(span, s->d, 0), fail);
        HF_CHECK(err, hf_fraction_from_target(&s->frac, &s->t), fail);
        HF_CHECK(err, hf_exact_create(&s->frac, &s->exact), fail);
    }
    s->engine = engine;
    if (s->ops->create)
        HF_CHECK(err, s->ops->create(s, mk), fail);
    if (prunes && s->top && !s->large && !(s->ops->span_bound_moot && s->ops->span_bound_moot(s)))
        HF_CHECK(err, hf_search_span_bound(s), fail);
    hf_search_newton_drop(s);
    *out = s;
    return HF_OK;
fail:
    hf_search_destroy(&s);
    return err;
}

hf_err_t hf_search_check(const hf_target_t *t, const hf_search_opts_t *opts)
{
    if (!t || !opts)
        return hf_error(HF_ERR_INPUT, "search: missing target or options");
    if (opts->span < 1 || opts->span > HF_SPAN_MAX)
        return hf_error(HF_ERR_INPUT, "span: %d: must be 1..%d", opts->span, HF_SPAN_MAX);
    if (!hf_engine_ops(opts->engine))
        return hf_error(HF_ERR_INPUT, "engine: %d: unknown", (int)opts->engine);
    if (opts->max_atoms < 0)
        return hf_error(HF_ERR_INPUT, "max_atoms: %ld: must be >= 0", opts->max_atoms);
    if (t->d < 1 || t->d > HF_D_MAX || t->nheads < 1)
        return hf_error(HF_ERR_INPUT, "search: target %s: needs d in 1..%d and a head", t->name,
                        HF_D_MAX);
    /* a box past 32 bits only for a large row: hf_search_large_estimated says large only where
     * hf_search_create makes one (cone, or auto taking the cone) */
    int large = 0;
    long npts = hf_search_box_points(t->d, opts->span);
    if (npts < 0 || npts > HF_SEARCH_BOX_MAX)
        HF_TRY(hf_search_large_estimated(t, opts->span, opts->engine, &large));
    return search_box_fits(opts->span, t->d, large);
}

hf_err_t hf_search_create(const hf_target_t *t, const hf_search_opts_t *opts,
                          const hf_bounds_t *bounds, hf_search_t **out)
{
    *out = NULL;
    hf_search_make_t mk = {.top = 1, .bounds = bounds};
    HF_TRY(hf_search_create_internal(t, opts->span, opts->engine, &mk, out));
    hf_search_t *s = *out;
    s->max_atoms = opts->max_atoms;
    if (opts->max_atoms)
        s->last = opts->max_atoms;
    return HF_OK;
}

void hf_search_destroy(hf_search_t **sp)
{
    if (!sp || !*sp)
        return;
    hf_search_t *s = *sp;
    if (s->ops->destroy)
        s->ops->destroy(s);
    hf_search_newton_drop(s);
    free(s->combo);
    free(s->keys);
    free(s->cand);
    free(s->units);
    free(s->ub_str);
    free(s->lb_str);
    hf_exact_destroy(&s->exact);
    hf_fraction_clear(&s->frac);
    hf_search_large_destroy(s);
    free(s->zmask);
    free(s->digits);
    free(s->pw);
    hf_target_clear(&s->t);
    free(s);
    *sp = NULL;
}

/* ---------------------------------------------------------------- accessors */

hf_engine_t hf_search_engine(const hf_search_t *s)
{
    return s->engine;
}

void hf_search_describe(const hf_search_t *s, char *buf, size_t n)
{
    if (s->ops->describe)
        s->ops->describe(s, buf, n);
    else
        snprintf(buf, n, "engine %s", hf_engine_name(s->engine));
}

const char *hf_search_lb(const hf_search_t *s)
{
    return s->lb_str;
}

const char *hf_search_ub(const hf_search_t *s)
{
    return s->ub_str;
}

long hf_search_first_size(const hf_search_t *s)
{
    return s->first;
}

long hf_search_next_size(const hf_search_t *s, long m)
{
    return s->ops->next_size ? s->ops->next_size(s, m) : m;
}

long hf_search_last_size(const hf_search_t *s)
{
    return s->last;
}

const hf_fraction_t *hf_search_fraction(const hf_search_t *s)
{
    return s->large ? NULL : &s->frac;
}

const hf_search_stats_t *hf_search_stats(const hf_search_t *s)
{
    return &s->stats;
}

void hf_search_total_stats(const hf_search_t *s, hf_search_stats_t *st, long *face_tests)
{
    *st = s->stats;
    *face_tests = 0;
    if (s->ops->stats)
        s->ops->stats(s, st, face_tests);
}

void hf_search_set_split(hf_search_t *s, const hf_search_split_t *split)
{
    s->shared->split = split; /* shared with every sub-search */
}

const hf_search_split_t *hf_search_split(const hf_search_t *s)
{
    return s->shared->split;
}

/* ---------------------------------------------------------------- preparation and sizes */

hf_err_t hf_search_prepare(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx)
{
    return s->ops->prepare ? s->ops->prepare(s, poll, poll_ctx) : HF_OK;
}

hf_err_t hf_search_add_unit(hf_search_t *s, const hf_unit_t *u)
{
    HF_TRY(HF_GROW(&s->units, &s->capunits, s->nunits + 1));
    s->units[s->nunits++] = *u;
    return HF_OK;
}

hf_err_t hf_search_level(hf_search_t *s, long m, long *nunits)
{
    return hf_search_level_polled(s, m, NULL, NULL, nunits);
}

hf_err_t hf_search_level_polled(hf_search_t *s, long m, hf_search_poll_fn poll, void *poll_ctx,
                                long *nunits)
{
    *nunits = 0;
    if (m < 1)
        return hf_error(HF_ERR_INPUT, "search: size %ld: must be >= 1", m);
    s->level_m = -1;
    s->nunits = 0;
    if (m <= s->npts) {
        s->level_poll = poll;
        s->level_poll_ctx = poll_ctx;
        s->prep_m = m;
        hf_err_t err = s->ops->level(s, m);
        s->level_poll = NULL;
        s->level_poll_ctx = NULL;
        s->prep_m = 0;
        if (err != HF_OK) {
            s->nunits = 0;
            return err;
        }
    }
    s->level_m = m;
    *nunits = s->nunits;
    return HF_OK;
}

/* ---------------------------------------------------------------- units and cells */

/* The unit, or an error naming the size and unit when it is not one of the prepared size. */
static hf_err_t unit_of(const hf_search_t *s, long m, long unit, const hf_unit_t **u)
{
    if (m != s->level_m)
        return hf_error(HF_ERR_INPUT, "search: size %ld was not prepared (hf_search_level)", m);
    if (unit < 0 || unit >= s->nunits)
        return hf_error(HF_ERR_INPUT, "search: size %ld: unit %ld: must be 0..%ld", m, unit,
                        s->nunits - 1);
    *u = &s->units[unit];
    return HF_OK;
}

hf_err_t hf_search_unit_cells(const hf_search_t *s, long m, long unit, int64_t *cells)
{
    const hf_unit_t *u = NULL;
    *cells = 1;
    HF_TRY(unit_of(s, m, unit, &u));
    if (s->ops->unit_cells)
        *cells = s->ops->unit_cells(s, u);
    return HF_OK;
}

hf_err_t hf_search_run_cells(hf_search_t *s, long m, long unit, int64_t lo,
                             hf_search_range_t *range, hf_search_found_fn found, void *found_ctx,
                             hf_search_poll_fn poll, void *poll_ctx, long *nodes)
{
    hf_err_t err = HF_OK;
    hf_head_t witness;
    hf_run_t run = {found, found_ctx, poll, poll_ctx, 0, NULL, 0};
    const hf_unit_t *u = NULL;
    if (nodes)
        *nodes = 0;
    HF_TRY(unit_of(s, m, unit, &u));
    if (lo < 0 || range->hi <= lo)
        return hf_error(HF_ERR_INPUT, "search: size %ld: unit %ld: cells %lld..%lld: empty range",
                        m, unit, (long long)lo, (long long)range->hi - 1);
    range->pos = lo;
    if (s->top && unit == hf_knob(HF_KNOB_SEARCH_SKIP_UNIT, -1))
        return HF_OK;
    /* a large row lists no candidate's points: no scratch of m points (m may pass 2^32) */
    if (!s->large)
        HF_TRY(hf_search_scratch(s, m));
    hf_head_init(&witness, s->d, s->dv);
    if (s->top && found)
        run.witness = &witness;
    /* a unit of an engine without cells is one cell: cell 0 is the whole unit */
    if (s->ops->unit_cells || lo == 0)
        err = s->ops->run(s, m, u, lo, range, &run);
    hf_head_clear(&witness);
    if (nodes)
        *nodes = run.nodes;
    return err;
}

hf_err_t hf_search_run_unit(hf_search_t *s, long m, long unit, hf_search_found_fn found,
                            void *found_ctx, hf_search_poll_fn poll, void *poll_ctx, long *nodes)
{
    int64_t cells;
    if (nodes)
        *nodes = 0;
    HF_TRY(hf_search_unit_cells(s, m, unit, &cells));
    hf_search_range_t range = {0, cells};
    return hf_search_run_cells(s, m, unit, 0, &range, found, found_ctx, poll, poll_ctx, nodes);
}
