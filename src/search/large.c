/* Large rows (docs/search.md, "Large rows"): a cone search whose P/Q is held in slices over
 * the processes instead of whole on each, whose candidates are decided by classes of points
 * (cone_classes.c) and whose supports are reported by their multipliers R and streamed from
 * the slices when they are written. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "search/cone_impl.h"

/* Estimated terms of Q above which a cone search is a large row (the symmetry group needs
 * P/Q whole and stops at 2^18 terms of P and Q together: a large row never had one). */

/* Slices wanted per process: enough that dealing them by size evens the processes out
 * (docs/search.md, "Large rows"). */
#define LARGE_SLICES_PER_RANK 16

/* This process's slices. */
struct hf_large_s {
    hf_slice_plan_t plan; /* the plan of the slices (made when they are dealt) */
    long nparts;
    long *idx;           /* the indices of this process's slices, increasing */
    hf_fraction_t *part; /* and the slices themselves */
    int dealt;           /* the slices were dealt to the processes (prepare) */
    long terms;          /* of P and Q together, over every slice (LONG_MAX: not known yet) */
    uint64_t div;        /* hf_search_large_run_divisor */
};

hf_err_t hf_search_large_estimated(const hf_target_t *t, int span, hf_engine_t engine, int *large)
{
    HF_TRY(hf_search_large_wanted(t, span, engine, large));
    if (!*large || !hf_engine_ops(engine)->resolve)
        return HF_OK;
    /* auto takes the cone when its unknowns are few (auto.c): from Newt(Q)'s extents */
    hf_slice_plan_t plan;
    HF_TRY(hf_fraction_slice_plan(t, NULL, 1, &plan));
    long n = hf_search_rbox_size(plan.qdeg, t->d, span);
    *large = n > 0 && n <= HF_SEARCH_CONE_AUTO_MAX;
    return HF_OK;
}

hf_err_t hf_search_large_wanted(const hf_target_t *t, int span, hf_engine_t engine, int *large)
{
    (void)span;
    *large = 0;
    if (!hf_engine_ops(engine) || !hf_engine_ops(engine)->large_rows)
        return HF_OK;
    double terms = 0;
    HF_TRY(hf_fraction_estimate_terms(t, &terms));
    *large = terms > (double)hf_search_large_min_terms();
    return HF_OK;
}

hf_err_t hf_search_large_create(hf_search_t *s)
{
    struct hf_large_s *lg = hf_calloc(1, sizeof *lg);
    if (!lg)
        return HF_ERR_NOMEM;
    s->lg = lg;
    lg->terms = LONG_MAX;
    /* Newt(Q)'s extents from the heads' factors, without P/Q (docs/exact-test.md §1b) */
    HF_TRY(hf_fraction_slice_plan(&s->t, NULL, 1, &lg->plan));
    for (int a = 0; a < s->d; a++)
        s->qext[a] = lg->plan.qdeg[a];
    return HF_OK;
}

static void large_drop_parts(struct hf_large_s *lg)
{
    for (long i = 0; i < lg->nparts; i++)
        hf_fraction_clear(lg->part + i);
    free(lg->part);
    free(lg->idx);
    lg->part = NULL;
    lg->idx = NULL;
    lg->nparts = 0;
}

void hf_search_large_destroy(hf_search_t *s)
{
    struct hf_large_s *lg = s->lg;
    if (!lg)
        return;
    large_drop_parts(lg);
    free(lg);
    s->lg = NULL;
}

typedef struct {
    const double *w;
} by_weight_t;

/* Heavier slices first; equal ones by index (the deal is the same on every process). */
static int cmp_weight(const void *ctx, long a, long b)
{
    const double *w = ((const by_weight_t *)ctx)->w;
    if (w[a] != w[b])
        return w[a] > w[b] ? -1 : 1;
    return (a > b) - (a < b);
}

/* The slices of process `rank` of nranks: each slice, heaviest first, to the process that
 * holds the least weight so far (the lowest among equals). */
static hf_err_t deal_slices(const hf_slice_plan_t *plan, const double *w, int rank, int nranks,
                            long **idx, long *n)
{
    long ns = plan->nslices;
    long *ord = hf_malloc((size_t)ns * sizeof *ord);
    double *load = hf_calloc((size_t)nranks, sizeof *load);
    *idx = hf_malloc((size_t)ns * sizeof **idx);
    *n = 0;
    hf_err_t e = ord && load && *idx ? HF_OK : HF_ERR_NOMEM;
    for (long i = 0; e == HF_OK && i < ns; i++)
        ord[i] = i;
    by_weight_t bw = {w};
    if (e == HF_OK)
        e = hf_sort(ord, ns, cmp_weight, &bw);
    for (long i = 0; e == HF_OK && i < ns; i++) {
        int best = 0;
        for (int r = 1; r < nranks; r++)
            if (load[r] < load[best])
                best = r;
        load[best] += w[ord[i]] > 0 ? w[ord[i]] : 1e-300; /* an empty slice still counts */
        if (best == rank)
            (*idx)[(*n)++] = ord[i];
    }
    /* in increasing index: box order for the classes, and the runs of the witness */
    for (long i = 1; e == HF_OK && i < *n; i++)
        for (long k = i; k > 0 && (*idx)[k - 1] > (*idx)[k]; k--) {
            long t = (*idx)[k];
            (*idx)[k] = (*idx)[k - 1];
            (*idx)[k - 1] = t;
        }
    free(load);
    free(ord);
    return e;
}

/* The gcd of every process's contents and the terms they hold, through the split's
 * exchange (its agreement first: a process that failed makes every one fail here). */
static hf_err_t agree_content(const hf_search_split_t *sp, hf_err_t err, fmpz_t g, long *terms)
{
    char buf[4096];
    char *t = err == HF_OK ? fmpz_get_str(NULL, 10, g) : NULL;
    int len = err == HF_OK ? snprintf(buf, sizeof buf, "%ld %s", *terms, t) + 1 : 0;
    flint_free(t);
    if (err == HF_OK && len > (int)sizeof buf)
        err = hf_error(HF_ERR_LIMIT, "large row: a content of %d digits", len);
    if (!sp || sp->nranks == 1)
        return err;
    void *all = NULL;
    size_t alllen = 0;
    err = sp->allgather(sp->ctx, err, buf, err == HF_OK ? (size_t)len : 0, &all, &alllen);
    *terms = 0;
    fmpz_zero(g);
    fmpz_t x;
    fmpz_init(x);
    for (const char *p = all; err == HF_OK && p < (const char *)all + alllen; p += strlen(p) + 1) {
        long n = 0;
        const char *sp2 = strchr(p, ' ');
        if (!sp2 || sscanf(p, "%ld", &n) != 1 || fmpz_set_str(x, sp2 + 1, 10) != 0) {
            err = hf_error(HF_ERR_INTERNAL, "large row: a damaged content from another process");
            break;
        }
        *terms = *terms > LONG_MAX - n ? LONG_MAX : *terms + n;
        fmpz_gcd(g, g, x);
    }
    fmpz_clear(x);
    free(all);
    return err;
}

/* The plan of the slices for nranks processes: along the coordinates where R does not move
 * (B_R one wide: Newt(Q) fills the span), so that a process needs no other's terms for its
 * points' rows; qdeg: Newt(Q)'s extents. */
static hf_err_t large_plan(const hf_target_t *t, int span, const int64_t *qdeg, int nranks,
                           hf_slice_plan_t *plan)
{
    int allowed[HF_D_MAX];
    for (int a = 0; a < t->d; a++)
        allowed[a] = qdeg[a] == span;
    return hf_fraction_slice_plan(t, allowed, (long)LARGE_SLICES_PER_RANK * nranks, plan);
}

hf_err_t hf_search_large_share(const hf_target_t *t, int span, int nranks, hf_slice_plan_t *plan,
                               double *share)
{
    hf_slice_plan_t p0;
    HF_TRY(hf_fraction_slice_plan(t, NULL, 1, &p0));
    HF_TRY(large_plan(t, span, p0.qdeg, nranks, plan));
    double *w = hf_malloc((size_t)plan->nslices * sizeof *w), total = 0, most = 0;
    hf_err_t err = w ? hf_fraction_slice_weights(t, plan, w) : HF_ERR_NOMEM;
    for (int r = 0; err == HF_OK && r < nranks; r++) {
        long *idx = NULL, n = 0;
        double load = 0;
        err = deal_slices(plan, w, r, nranks, &idx, &n);
        for (long i = 0; err == HF_OK && i < n; i++)
            load += w[idx[i]];
        free(idx);
        most = load > most ? load : most;
    }
    for (long i = 0; err == HF_OK && i < plan->nslices; i++)
        total += w[i];
    *share = err == HF_OK && total > 0 ? most / total : 1;
    free(w);
    return err;
}

hf_err_t hf_search_large_deal(hf_search_t *s, const hf_search_split_t *sp)
{
    struct hf_large_s *lg = s->lg;
    if (lg->dealt)
        return HF_OK;
    int rank = sp ? sp->rank : 0, nranks = sp ? sp->nranks : 1;
    hf_err_t err = large_plan(&s->t, s->span, s->qext, nranks, &lg->plan);
    double *w = NULL;
    fmpz *contents = NULL;
    fmpz_t g;
    fmpz_init(g);
    long terms = 0;
    if (err == HF_OK) {
        w = hf_malloc((size_t)lg->plan.nslices * sizeof *w);
        err = w ? hf_fraction_slice_weights(&s->t, &lg->plan, w) : HF_ERR_NOMEM;
    }
    if (err == HF_OK)
        err = deal_slices(&lg->plan, w, rank, nranks, &lg->idx, &lg->nparts);
    if (err == HF_OK) {
        lg->part = hf_malloc((size_t)(lg->nparts ? lg->nparts : 1) * sizeof *lg->part);
        contents = _fmpz_vec_init(lg->nparts ? lg->nparts : 1);
        err = lg->part ? HF_OK : HF_ERR_NOMEM;
        for (long i = 0; err == HF_OK && i < lg->nparts; i++)
            hf_fraction_init(lg->part + i);
    }
    if (err == HF_OK && lg->nparts)
        err = hf_fraction_slices_build(&s->t, &lg->plan, lg->idx, lg->nparts, lg->part, contents);
    for (long i = 0; err == HF_OK && i < lg->nparts; i++) {
        fmpz_gcd(g, g, contents + i);
        terms += lg->part[i].Q->length;
        for (int j = 0; j < s->dv; j++)
            terms += lg->part[i].P[j].length;
    }
    err = agree_content(sp, err, g, &terms);
    if (err == HF_OK && fmpz_is_zero(g))
        err = hf_error(HF_ERR_INTERNAL, "large row: every slice of P/Q is empty");
    for (long i = 0; err == HF_OK && i < lg->nparts; i++) {
        hf_fraction_slice_divide(lg->part + i, g);
        /* held for the whole row: no room beyond their terms (a product leaves up to twice) */
        hf_fraction_t *f = lg->part + i;
        fmpz_mpoly_realloc(f->Q, f->Q->length ? f->Q->length : 1, f->ctx);
        for (int j = 0; j < f->dv; j++)
            fmpz_mpoly_realloc(f->P + j, f->P[j].length ? f->P[j].length : 1, f->ctx);
    }
    if (err == HF_OK) {
        lg->terms = terms;
        lg->dealt = 1;
        int last = lg->plan.ns ? lg->plan.coord[lg->plan.ns - 1] : -1;
        lg->div = last >= 0 ? (uint64_t)s->pw[last] : (uint64_t)s->npts;
    } else if (lg->part) {
        large_drop_parts(lg);
    }
    if (contents)
        _fmpz_vec_clear(contents, lg->nparts ? lg->nparts : 1);
    fmpz_clear(g);
    free(w);
    return err;
}

long hf_search_large_terms(const hf_search_t *s)
{
    return s->lg ? s->lg->terms : 0;
}

long hf_search_large_slices(const hf_search_t *s, const hf_fraction_t **part)
{
    *part = s->lg ? s->lg->part : NULL;
    return s->lg ? s->lg->nparts : 0;
}

long hf_search_large_min_terms(void)
{
    return hf_knob(HF_KNOB_LARGE_MIN_TERMS, HF_SEARCH_LARGE_MIN_TERMS);
}

int hf_search_is_large(const hf_search_t *s)
{
    return s->large;
}

uint64_t hf_search_large_run_divisor(const hf_search_t *s)
{
    return s->lg ? s->lg->div : (uint64_t)s->npts;
}

/* ------------------------------------------------------------------ the support of R */

/* The keys of supp(Q R) in one slice, with c = (Q R)_k and u_j = (P_j R)_k, in box order:
 * the slice's terms shifted by the unknowns where R is not zero. */
static hf_err_t emit_slice(const hf_search_t *s, const hf_fraction_t *f, const fmpz *R, long n,
                           const int64_t *brad, hf_search_emit_fn emit, void *ctx)
{
    int d = s->d, dv = s->dv;
    uint8_t *use = hf_malloc((size_t)(n ? n : 1));
    fmpz *acc = _fmpz_vec_init(dv + 1);
    int64_t x[HF_D_MAX];
    hf_shifted_t w;
    memset(&w, 0, sizeof w);
    hf_err_t err = use ? HF_OK : HF_ERR_NOMEM;
    for (long r = 0; use && r < n; r++)
        use[r] = !fmpz_is_zero(R + r);
    if (err == HF_OK)
        err = hf_shifted_init(&w, s, f, use, n, brad);
    unsigned long polls = 0;
    uint64_t k, zb;
    long nh;
    while (err == HF_OK && (nh = hf_shifted_next(&w, &k, &zb)) > 0) {
        HF_CHECK(err, hf_search_stop_every(&polls, 14, HF_STOP_WRITE), done);
        _fmpz_vec_zero(acc, dv + 1);
        for (long i = 0; i < nh; i++) {
            const hf_shifted_hit_t *h = w.hits + i;
            fmpz_addmul(acc + h->p, w.coef[h->p] + h->t, R + h->r);
        }
        int sg = fmpz_sgn(acc);
        if (sg < 0 || (sg == 0 && !_fmpz_vec_is_zero(acc + 1, dv))) {
            err = hf_error(
                HF_ERR_INTERNAL, "large row: the multiplier gives a %s at box point %llu",
                sg < 0 ? "negative weight" : "value off the support", (unsigned long long)k);
            break;
        }
        if (sg == 0)
            continue;
        uint64_t rest = k;
        for (int a = d - 1; a >= 0; a--) {
            x[a] = (int64_t)(rest % (uint64_t)s->base);
            rest /= (uint64_t)s->base;
        }
        err = emit(ctx, k, x, acc, acc + 1);
    }
done:
    hf_shifted_clear(&w);
    _fmpz_vec_clear(acc, dv + 1);
    free(use);
    return err;
}

hf_err_t hf_search_large_emit(const hf_search_t *s, const fmpz *R, hf_search_emit_fn emit,
                              void *ctx)
{
    int64_t brad[HF_D_MAX];
    long n = hf_search_rbox_size(s->qext, s->d, s->span);
    for (int a = 0; a < s->d; a++)
        brad[a] = s->span - s->qext[a] + 1;
    const hf_fraction_t *part;
    long np = hf_search_large_slices(s, &part);
    for (long i = 0; i < np; i++)
        HF_TRY(emit_slice(s, part + i, R, n, brad, emit, ctx));
    return HF_OK;
}

long hf_search_large_unknowns(const hf_search_t *s)
{
    return hf_search_rbox_size(s->qext, s->d, s->span);
}
