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
long hf_search_large_min_terms = 1L << 18;

/* This process's slices. */
struct hf_large_s {
    long nparts;
    hf_fraction_t *part;
    int dealt;  /* the slices were dealt to the processes (prepare) */
    long terms; /* of P and Q together, over every slice (LONG_MAX: not known yet) */
};

int hf_search_large_wanted(const hf_target_t *t, int span, hf_engine_t engine)
{
    (void)span;
    if (engine != HF_ENGINE_AUTO && engine != HF_ENGINE_CONE)
        return 0;
    double terms = 0;
    if (hf_fraction_estimate_terms(t, &terms) != HF_OK) {
        hf_error_clear(); /* the fraction's construction reports it */
        return 0;
    }
    return terms > (double)hf_search_large_min_terms;
}

hf_err_t hf_search_large_create(hf_search_t *s)
{
    struct hf_large_s *lg = hf_calloc(1, sizeof *lg);
    if (!lg)
        return HF_ERR_NOMEM;
    s->lg = lg;
    lg->part = hf_malloc(sizeof *lg->part);
    if (!lg->part)
        return HF_ERR_NOMEM;
    hf_fraction_init(lg->part);
    lg->nparts = 1;
    /* the whole P/Q as the one slice, on every process until they are dealt */
    HF_TRY(hf_fraction_from_target(lg->part, &s->t));
    hf_search_extents(lg->part, s->qext);
    lg->terms = lg->part->Q->length;
    for (int j = 0; j < lg->part->dv; j++)
        lg->terms += lg->part->P[j].length;
    return HF_OK;
}

void hf_search_large_destroy(hf_search_t *s)
{
    struct hf_large_s *lg = s->lg;
    if (!lg)
        return;
    for (long i = 0; i < lg->nparts; i++)
        hf_fraction_clear(lg->part + i);
    free(lg->part);
    free(lg);
    s->lg = NULL;
}

hf_err_t hf_search_large_deal(hf_search_t *s, const hf_search_split_t *sp)
{
    struct hf_large_s *lg = s->lg;
    if (lg->dealt)
        return HF_OK;
    lg->dealt = 1;
    if (sp && sp->rank != 0) {
        for (long i = 0; i < lg->nparts; i++)
            hf_fraction_clear(lg->part + i);
        lg->nparts = 0;
    }
    return HF_OK;
}

hf_err_t hf_search_large_group(hf_search_t *s)
{
    if (!hf_group_needs_fraction(s->d, s->lg->terms))
        return hf_group_create_unknown(s->d, &s->group);
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_err_t err = hf_fraction_from_target(&f, &s->t);
    if (err == HF_OK)
        err = hf_group_create(&s->t, &f, &s->group);
    hf_fraction_clear(&f);
    return err;
}

long hf_search_large_slices(const hf_search_t *s, const hf_fraction_t **part)
{
    *part = s->lg ? s->lg->part : NULL;
    return s->lg ? s->lg->nparts : 0;
}

int hf_search_is_large(const hf_search_t *s)
{
    return s->large;
}

uint64_t hf_search_large_run_divisor(const hf_search_t *s)
{
    return (uint64_t)s->npts; /* one slice: one run */
}

/* ------------------------------------------------------------------ the support of R */

/* One polynomial's terms shifted by the unknowns r where R_r != 0, merged in box order. */
typedef struct {
    long nl;         /* lists: (polynomial, nonzero r) */
    long *poly, *rr; /* per list */
    long *pos;
    uint64_t *rbase;
    const fmpz_mpoly_struct **pp;
    uint64_t **off;
    long *heap, nheap;
} emit_merge_t;

static inline uint64_t em_head(const emit_merge_t *w, long L)
{
    return w->rbase[L] + w->off[w->poly[L]][w->pos[L]];
}

static void em_sift(emit_merge_t *w, long i)
{
    for (;;) {
        long l = 2 * i + 1, m = i;
        if (l < w->nheap && em_head(w, w->heap[l]) < em_head(w, w->heap[m]))
            m = l;
        if (l + 1 < w->nheap && em_head(w, w->heap[l + 1]) < em_head(w, w->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        long t = w->heap[i];
        w->heap[i] = w->heap[m];
        w->heap[m] = t;
        i = m;
    }
}

/* The keys of supp(Q R) in one slice, with c = (Q R)_k and u_j = (P_j R)_k, in box order. */
static hf_err_t emit_slice(const hf_search_t *s, const hf_fraction_t *f, const fmpz *R, long n,
                           const int64_t *brad, hf_search_emit_fn emit, void *ctx)
{
    int d = s->d, dv = s->dv;
    hf_err_t err = HF_OK;
    long nz = 0;
    for (long r = 0; r < n; r++)
        nz += !fmpz_is_zero(R + r);
    emit_merge_t w = {0};
    long nl = nz * (dv + 1);
    w.poly = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w.poly);
    w.rr = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w.rr);
    w.pos = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w.pos);
    w.rbase = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w.rbase);
    w.heap = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w.heap);
    w.pp = hf_calloc((size_t)dv + 1, sizeof *w.pp);
    w.off = hf_calloc((size_t)dv + 1, sizeof *w.off);
    fmpz *acc = _fmpz_vec_init(dv + 1);
    int64_t x[HF_D_MAX];
    slong exp[HF_D_MAX];
    if (!w.poly || !w.rr || !w.pos || !w.rbase || !w.heap || !w.pp || !w.off) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (int p = 0; p <= dv; p++) {
        const fmpz_mpoly_struct *poly = p == 0 ? f->Q : f->P + p - 1;
        w.pp[p] = poly;
        if (!(w.off[p] = hf_malloc((size_t)(poly->length ? poly->length : 1) * sizeof **w.off))) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        for (slong t = 0; t < poly->length; t++) {
            fmpz_mpoly_get_term_exp_si(exp, poly, t, f->ctx);
            uint64_t off = 0;
            for (int a = 0; a < d; a++)
                off += (uint64_t)exp[a] * (uint64_t)s->pw[a];
            w.off[p][t] = off;
        }
    }
    for (long r = 0; r < n; r++) {
        if (fmpz_is_zero(R + r))
            continue;
        long rest = r;
        uint64_t base = 0;
        for (int a = d - 1; a >= 0; a--) {
            base += (uint64_t)(rest % brad[a]) * (uint64_t)s->pw[a];
            rest /= brad[a];
        }
        for (int p = 0; p <= dv; p++) {
            long L = w.nl++;
            w.poly[L] = p;
            w.rr[L] = r;
            w.rbase[L] = base;
            w.pos[L] = w.pp[p]->length - 1;
            if (w.pos[L] >= 0)
                w.heap[w.nheap++] = L;
        }
    }
    for (long i = w.nheap / 2 - 1; i >= 0; i--)
        em_sift(&w, i);
    unsigned long polls = 0;
    while (w.nheap > 0 && err == HF_OK) {
        HF_CHECK(err, HF_STOP_EVERY(polls, 14, HF_STOP_WRITE), done);
        uint64_t k = em_head(&w, w.heap[0]);
        _fmpz_vec_zero(acc, dv + 1);
        while (w.nheap > 0 && em_head(&w, w.heap[0]) == k) {
            long L = w.heap[0], p = w.poly[L];
            fmpz_addmul(acc + p, w.pp[p]->coeffs + w.pos[L], R + w.rr[L]);
            if (w.pos[L]-- == 0)
                w.heap[0] = w.heap[--w.nheap];
            em_sift(&w, 0);
        }
        int sg = fmpz_sgn(acc);
        if (sg < 0 || (sg == 0 && !_fmpz_vec_is_zero(acc + 1, dv))) {
            err = hf_error(HF_ERR_INTERNAL,
                           "large row: the multiplier gives a %s at box point %llu",
                           sg < 0 ? "negative weight" : "value off the support",
                           (unsigned long long)k);
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
    for (int p = 0; w.off && p <= dv; p++)
        free(w.off[p]);
    free(w.off);
    free(w.pp);
    _fmpz_vec_clear(acc, dv + 1);
    free(w.heap);
    free(w.rbase);
    free(w.pos);
    free(w.rr);
    free(w.poly);
    return err;
}

hf_err_t hf_search_large_emit(const hf_search_t *s, const fmpz *R, hf_search_emit_fn emit,
                              void *ctx)
{
    int64_t brad[HF_D_MAX];
    long n = 1;
    for (int a = 0; a < s->d; a++) {
        brad[a] = s->span - s->qext[a] + 1;
        n *= brad[a];
    }
    const hf_fraction_t *part;
    long np = hf_search_large_slices(s, &part);
    for (long i = 0; i < np; i++)
        HF_TRY(emit_slice(s, part + i, R, n, brad, emit, ctx));
    return HF_OK;
}

long hf_search_large_unknowns(const hf_search_t *s)
{
    long n = 1;
    for (int a = 0; a < s->d; a++)
        n *= s->span - s->qext[a] + 1;
    return n;
}
