/* The terms of one slice of P/Q shifted by the unknowns of R, merged in box order
 * (search_impl.h, hf_shifted_*): what a large row's classes (cone_classes.c) and its witness
 * (large.c) both walk. A point k of the span box is reached by term t of polynomial p
 * (Q, P_1..P_dv) shifted by unknown r when k = t + r; the lists {t + r} of each (p, r) are
 * sorted (FLINT keeps a polynomial's terms in decreasing lex order, which is box order
 * reversed), so a heap of their heads gives every point once, in increasing order, with
 * every (p, r, t) that reaches it. */
#include <stdlib.h>
#include <string.h>

#include "search/search_impl.h"

void hf_shifted_clear(hf_shifted_t *w)
{
    for (int p = 0; w->off && p < w->npoly; p++) {
        free(w->off[p]);
        free(w->zb[p]);
    }
    free(w->off);
    free(w->zb);
    free(w->len);
    free(w->coef);
    free(w->rbase);
    free(w->zr);
    free(w->rr);
    free(w->lp);
    free(w->pos);
    free(w->heap);
    free(w->hits);
    memset(w, 0, sizeof *w);
}

/* The heap holds (head point, list) pairs: comparing cached points, not re-reading them. */
static void sift(hf_shifted_t *w, long i)
{
    for (;;) {
        long l = 2 * i + 1, m = i;
        if (l < w->nheap && w->heap[l].key < w->heap[m].key)
            m = l;
        if (l + 1 < w->nheap && w->heap[l + 1].key < w->heap[m].key)
            m = l + 1;
        if (m == i)
            return;
        hf_shifted_head_t t = w->heap[i];
        w->heap[i] = w->heap[m];
        w->heap[m] = t;
        i = m;
    }
}

hf_err_t hf_shifted_init(hf_shifted_t *w, const hf_search_t *s, const hf_fraction_t *f,
                         const uint8_t *use, long n, const int64_t *brad)
{
    int d = s->d, np = 1 + s->dv;
    slong exp[HF_D_MAX];
    memset(w, 0, sizeof *w);
    w->npoly = np;
    w->off = hf_calloc((size_t)np, sizeof *w->off);
    w->zb = hf_calloc((size_t)np, sizeof *w->zb);
    w->len = hf_calloc((size_t)np, sizeof *w->len);
    w->coef = hf_calloc((size_t)np, sizeof *w->coef);
    if (!w->off || !w->zb || !w->len || !w->coef)
        return HF_ERR_NOMEM;
    for (int p = 0; p < np; p++) {
        const fmpz_mpoly_struct *poly = p == 0 ? f->Q : f->P + p - 1;
        long len = poly->length;
        w->len[p] = len;
        w->coef[p] = poly->coeffs;
        w->off[p] = hf_malloc((size_t)(len ? len : 1) * sizeof **w->off);
        w->zb[p] = hf_malloc((size_t)(len ? len : 1) * sizeof **w->zb);
        if (!w->off[p] || !w->zb[p])
            return HF_ERR_NOMEM;
        for (long t = 0; t < len; t++) {
            fmpz_mpoly_get_term_exp_si(exp, poly, t, f->ctx);
            uint64_t off = 0, zb = 0;
            for (int a = 0; a < d; a++) {
                /* Newt(P) lies in Newt(Q)'s box (docs/search.md, "Large rows"): shifted by
                 * any r of B_R a term stays in the span's box */
                if (exp[a] < 0 || exp[a] > s->qext[a])
                    return hf_error(HF_ERR_INTERNAL,
                                    "large row: a term of %s has exponent %ld in x_%d, outside "
                                    "Newt(Q)'s extent %ld",
                                    p ? "P" : "Q", (long)exp[a], a, (long)s->qext[a]);
                off += (uint64_t)exp[a] * (uint64_t)s->pw[a];
                zb |= exp[a] == 0 ? (uint64_t)1 << a : 0;
            }
            w->off[p][t] = off;
            w->zb[p][t] = zb;
        }
    }
    long nr = 0;
    for (long r = 0; r < n; r++)
        nr += !use || use[r];
    long nl = nr * np;
    w->rbase = hf_malloc((size_t)(nr ? nr : 1) * sizeof *w->rbase);
    w->zr = hf_malloc((size_t)(nr ? nr : 1) * sizeof *w->zr);
    w->rr = hf_malloc((size_t)(nr ? nr : 1) * sizeof *w->rr);
    w->lp = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w->lp);
    w->pos = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w->pos);
    w->heap = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w->heap);
    w->hits = hf_malloc((size_t)(nl ? nl : 1) * sizeof *w->hits);
    if (!w->rbase || !w->zr || !w->rr || !w->lp || !w->pos || !w->heap || !w->hits)
        return HF_ERR_NOMEM;
    long k = 0;
    for (long r = 0; r < n; r++) {
        if (use && !use[r])
            continue;
        long rest = r;
        uint64_t base = 0, zr = 0;
        for (int a = d - 1; a >= 0; a--) {
            long ra = rest % brad[a];
            rest /= brad[a];
            base += (uint64_t)ra * (uint64_t)s->pw[a];
            zr |= ra == 0 ? (uint64_t)1 << a : 0;
        }
        w->rbase[k] = base;
        w->zr[k] = zr;
        w->rr[k] = r;
        k++;
    }
    /* list L = p * nr + k: polynomial p shifted by the k-th unknown used */
    w->nr = nr;
    for (long L = 0; L < nl; L++) {
        int p = (int)(L / nr);
        w->lp[L] = p;
        w->pos[L] = w->len[p] - 1;
        if (w->pos[L] >= 0)
            w->heap[w->nheap++] = (hf_shifted_head_t){w->rbase[L % nr] + w->off[p][w->pos[L]], L};
    }
    for (long i = w->nheap / 2 - 1; i >= 0; i--)
        sift(w, i);
    return HF_OK;
}

long hf_shifted_next(hf_shifted_t *w, uint64_t *point, uint64_t *zero)
{
    if (w->nheap == 0)
        return 0;
    uint64_t k = w->heap[0].key;
    long nh = 0;
    while (w->nheap > 0 && w->heap[0].key == k) {
        long L = w->heap[0].list, t = w->pos[L], ki = L % w->nr;
        int p = w->lp[L];
        w->hits[nh++] = (hf_shifted_hit_t){p, w->rr[ki], t};
        /* the same point whichever list says it: its zero coordinates */
        *zero = w->zb[p][t] & w->zr[ki];
        if (--w->pos[L] >= 0)
            w->heap[0].key = w->rbase[ki] + w->off[p][w->pos[L]];
        else
            w->heap[0] = w->heap[--w->nheap];
        sift(w, 0);
    }
    *point = k;
    return nh;
}
