/* The independent verifier, one slice at a time (headfuse/verify.h, hf_verify_slicer_*;
 * docs/exact-test.md §7b): a large witness is checked where its keys' first coordinates
 * take one value e, against the same slice of the target's own products, so that no
 * process ever holds the whole of either.
 *
 * Like verify.c it shares no code with the algebra and exact modules: from the target's
 * heads it forms D' (the product of its distinct denominators, each once up to a constant
 * factor: two heads over one denominator share it) and N' (sum over the denominators of
 * their heads' numerators times the other denominators), so T = N' / D'. A head C, U with
 * C = lambda D' equals T iff U = lambda N' (D' != 0), which holds slice by slice: the slices
 * of a product, with every exponent nonnegative, come from the factors' terms whose
 * first coordinates do not pass e, and a term of a partial product whose first coordinates
 * pass e, or fall below e by more than the factors still to come can add, never reaches
 * the slice (the window). A witness that is not such a multiple is left to the whole check
 * (hf_verify_head). */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mpoly.h>
#include <flint/fmpz_vec.h>

#include "headfuse/core.h"
#include "headfuse/verify.h"
#include "verify/verify_impl.h"

/* One distinct denominator and the sum of its heads' numerators over it (integers). */
typedef struct {
    fmpz_mpoly_t D;
    fmpz_mpoly_struct *N;   /* dv */
    int64_t lead[HF_D_MAX]; /* its degree in each of the first p coordinates */
    int touches;            /* it has a positive degree in one of them */
} vden_t;

struct hf_verify_slicer_s {
    int d, dv, p;
    fmpz_mpoly_ctx_t ctx;
    vden_t *den;
    long nden;
    int64_t ext[HF_D_MAX]; /* D''s degree in each of the first p coordinates */
};

void hf_verify_slicer_destroy(hf_verify_slicer_t **vp)
{
    hf_verify_slicer_t *v = vp ? *vp : NULL;
    if (!v)
        return;
    for (long i = 0; i < v->nden; i++) {
        fmpz_mpoly_clear(v->den[i].D, v->ctx);
        for (int j = 0; j < v->dv; j++)
            fmpz_mpoly_clear(v->den[i].N + j, v->ctx);
        free(v->den[i].N);
    }
    free(v->den);
    fmpz_mpoly_ctx_clear(v->ctx);
    free(v);
    *vp = NULL;
}

/* Whether A = (a/b) B for integers a, b (then *a, *b are set, b > 0); both nonzero. */
static int proportional(const fmpz_mpoly_t A, const fmpz_mpoly_t B, fmpz_t a, fmpz_t b,
                        const fmpz_mpoly_ctx_t ctx)
{
    if (A->length != B->length || A->length == 0)
        return 0;
    fmpz_t g, x, y;
    fmpz_init(g);
    fmpz_init(x);
    fmpz_init(y);
    fmpz_gcd(g, A->coeffs, B->coeffs);
    fmpz_divexact(a, A->coeffs, g);
    fmpz_divexact(b, B->coeffs, g);
    if (fmpz_sgn(b) < 0) {
        fmpz_neg(a, a);
        fmpz_neg(b, b);
    }
    int ok = 1;
    for (slong i = 0; i < A->length && ok; i++) {
        fmpz_mul(x, A->coeffs + i, b);
        fmpz_mul(y, B->coeffs + i, a);
        ok = fmpz_equal(x, y) && fmpz_mpoly_term_exp_fits_ui(A, i, ctx);
    }
    if (ok) {
        ulong ea[HF_D_MAX], eb[HF_D_MAX];
        int d = (int)fmpz_mpoly_ctx_nvars(ctx);
        for (slong i = 0; i < A->length && ok; i++) {
            fmpz_mpoly_get_term_exp_ui(ea, A, i, ctx);
            fmpz_mpoly_get_term_exp_ui(eb, B, i, ctx);
            ok = !memcmp(ea, eb, (size_t)d * sizeof *ea);
        }
    }
    fmpz_clear(y);
    fmpz_clear(x);
    fmpz_clear(g);
    return ok;
}

hf_err_t hf_verify_slicer_create(const hf_target_t *t, int p, hf_verify_slicer_t **out)
{
    *out = NULL;
    if (p < 0 || p > t->d)
        return hf_error(HF_ERR_INTERNAL, "verify: slices by %d coordinates of %d", p, t->d);
    hf_verify_slicer_t *v = hf_calloc(1, sizeof *v);
    if (!v)
        return HF_ERR_NOMEM;
    v->d = t->d;
    v->dv = t->dv;
    v->p = p;
    fmpz_mpoly_ctx_init(v->ctx, t->d, ORD_LEX);
    hf_err_t e = HF_OK;
    v->den = hf_calloc((size_t)(t->nheads ? t->nheads : 1), sizeof *v->den);
    fmpz_mpoly_t D;
    fmpz_mpoly_struct *N = hf_malloc((size_t)t->dv * sizeof *N);
    fmpz_t a, b;
    fmpz_init(a);
    fmpz_init(b);
    fmpz_mpoly_init(D, v->ctx);
    for (int j = 0; N && j < t->dv; j++)
        fmpz_mpoly_init(N + j, v->ctx);
    if (!v->den || !N)
        e = HF_ERR_NOMEM;
    for (int h = 0; e == HF_OK && h < t->nheads; h++) {
        char where[64];
        snprintf(where, sizeof where, "target heads[%d]", h);
        if ((e = hf_head_validate(t->heads + h, where)) != HF_OK)
            break;
        if ((e = hf_verify_head_polys(t->heads + h, D, N, v->ctx)) != HF_OK)
            break;
        /* a denominator seen before, up to a constant a/b: the heads add over it */
        long k = 0;
        while (k < v->nden && !proportional(D, v->den[k].D, a, b, v->ctx))
            k++;
        if (k < v->nden) {
            /* N_k / D_k + N / D with D = (a/b) D_k: (a N_k + b N) / (a D_k) */
            for (int j = 0; j < t->dv; j++) {
                fmpz_mpoly_scalar_mul_fmpz(v->den[k].N + j, v->den[k].N + j, a, v->ctx);
                fmpz_mpoly_scalar_mul_fmpz(N + j, N + j, b, v->ctx);
                fmpz_mpoly_add(v->den[k].N + j, v->den[k].N + j, N + j, v->ctx);
            }
            fmpz_mpoly_scalar_mul_fmpz(v->den[k].D, v->den[k].D, a, v->ctx);
            continue;
        }
        vden_t *g = v->den + v->nden++;
        fmpz_mpoly_init(g->D, v->ctx);
        fmpz_mpoly_swap(g->D, D, v->ctx);
        g->N = hf_malloc((size_t)t->dv * sizeof *g->N);
        if (!g->N) {
            fmpz_mpoly_clear(g->D, v->ctx);
            v->nden--;
            e = HF_ERR_NOMEM;
            break;
        }
        for (int j = 0; j < t->dv; j++) {
            fmpz_mpoly_init(g->N + j, v->ctx);
            fmpz_mpoly_swap(g->N + j, N + j, v->ctx);
        }
        slong deg[HF_D_MAX];
        fmpz_mpoly_degrees_si(deg, g->D, v->ctx);
        for (int i = 0; i < p; i++) {
            g->lead[i] = deg[i] > 0 ? deg[i] : 0;
            g->touches |= deg[i] > 0;
            v->ext[i] += g->lead[i];
        }
    }
    fmpz_clear(b);
    fmpz_clear(a);
    fmpz_mpoly_clear(D, v->ctx);
    for (int j = 0; N && j < t->dv; j++)
        fmpz_mpoly_clear(N + j, v->ctx);
    free(N);
    if (e != HF_OK) {
        hf_verify_slicer_destroy(&v);
        return e;
    }
    *out = v;
    return HF_OK;
}

void hf_verify_slicer_extent(const hf_verify_slicer_t *v, int64_t *ext)
{
    memcpy(ext, v->ext, (size_t)v->p * sizeof *ext);
}

/* Keep the terms of A whose first p exponents x satisfy lo <= x <= e. */
static void window(fmpz_mpoly_t A, int p, const int64_t *lo, const int64_t *e,
                   const fmpz_mpoly_ctx_t ctx)
{
    slong keep = 0;
    ulong exp[HF_D_MAX];
    for (slong i = 0; i < A->length; i++) {
        fmpz_mpoly_get_term_exp_ui(exp, A, i, ctx);
        int in = 1;
        for (int a = 0; a < p && in; a++)
            in = (int64_t)exp[a] >= lo[a] && (int64_t)exp[a] <= e[a];
        if (in)
            keep++;
    }
    if (keep == A->length)
        return;
    fmpz_mpoly_t B;
    fmpz_mpoly_init2(B, keep, ctx);
    for (slong i = 0; i < A->length; i++) {
        fmpz_mpoly_get_term_exp_ui(exp, A, i, ctx);
        int in = 1;
        for (int a = 0; a < p && in; a++)
            in = (int64_t)exp[a] >= lo[a] && (int64_t)exp[a] <= e[a];
        if (in)
            fmpz_mpoly_push_term_fmpz_ui(B, A->coeffs + i, exp, ctx);
    }
    fmpz_mpoly_swap(A, B, ctx); /* pushed in A's order: still sorted */
    fmpz_mpoly_clear(B, ctx);
}

/* D'_e and N'_e: the denominators that touch the first coordinates first, then the rest;
 * L_k = L_{k-1} D_k, S_k = S_{k-1} D_k + N_k L_{k-1} (S = N'), each cut to its window. */
static hf_err_t slice_products(const hf_verify_slicer_t *v, const int64_t *e, fmpz_mpoly_t L,
                               fmpz_mpoly_struct *S)
{
    int p = v->p, dv = v->dv;
    int64_t rest[HF_D_MAX], lo[HF_D_MAX];
    fmpz_mpoly_t T, W;
    fmpz_mpoly_init(T, v->ctx);
    fmpz_mpoly_init(W, v->ctx);
    for (int a = 0; a < p; a++)
        rest[a] = v->ext[a];
    fmpz_mpoly_one(L, v->ctx);
    for (int j = 0; j < dv; j++)
        fmpz_mpoly_zero(S + j, v->ctx);
    hf_err_t err = HF_OK;
    for (int pass = 0; pass < 2 && err == HF_OK; pass++)
        for (long k = 0; k < v->nden && err == HF_OK; k++) {
            const vden_t *g = v->den + k;
            if (g->touches != !pass)
                continue;
            for (int a = 0; a < p; a++) {
                rest[a] -= g->lead[a];
                lo[a] = e[a] - rest[a];
            }
            for (int j = 0; j < dv; j++) {
                fmpz_mpoly_mul(W, S + j, g->D, v->ctx);
                fmpz_mpoly_mul(T, g->N + j, L, v->ctx);
                fmpz_mpoly_add(S + j, W, T, v->ctx);
                window(S + j, p, lo, e, v->ctx);
            }
            fmpz_mpoly_mul(W, L, g->D, v->ctx);
            fmpz_mpoly_swap(L, W, v->ctx);
            window(L, p, lo, e, v->ctx);
        }
    fmpz_mpoly_clear(W, v->ctx);
    fmpz_mpoly_clear(T, v->ctx);
    return err;
}

/* Compare two keys lexicographically. */
static int memcmp_keys(const int64_t *x, const int64_t *y, int d)
{
    for (int a = 0; a < d; a++)
        if (x[a] != y[a])
            return x[a] < y[a] ? -1 : 1;
    return 0;
}

hf_err_t hf_verify_slice_check(hf_verify_slicer_t *v, const int64_t *e, long n, const int64_t *keys,
                               const fmpz *c, const fmpz *u, fmpq_t lambda, int *has_lambda,
                               int *result)
{
    int d = v->d, dv = v->dv;
    ulong exp[HF_D_MAX];
    hf_err_t err = HF_OK;
    fmpz_mpoly_t L, C;
    fmpz_mpoly_struct *S = hf_malloc((size_t)dv * sizeof *S),
                      *U = hf_malloc((size_t)dv * sizeof *U);
    if (!S || !U) {
        free(S);
        free(U);
        return HF_ERR_NOMEM;
    }
    fmpz_mpoly_init(L, v->ctx);
    fmpz_mpoly_init(C, v->ctx);
    for (int j = 0; j < dv; j++) {
        fmpz_mpoly_init(S + j, v->ctx);
        fmpz_mpoly_init(U + j, v->ctx);
    }
    fmpz_t a, b;
    fmpz_init(a);
    fmpz_init(b);
    *result = HF_VERIFY_SLICE_OK;
    *has_lambda = 0;
    /* keys in increasing lexicographic order (as a file holds them) pushed in that order are
     * FLINT's lex order reversed: one reversal instead of a sort */
    int increasing = 1;
    for (long i = 1; i < n && increasing; i++)
        increasing = memcmp_keys(keys + (i - 1) * d, keys + i * d, d) < 0;
    for (long i = 0; i < n && *result == HF_VERIFY_SLICE_OK; i++) {
        for (int x = 0; x < d && *result == HF_VERIFY_SLICE_OK; x++) {
            if (keys[i * d + x] < 0)
                *result = HF_VERIFY_SLICE_NOT_MULTIPLE; /* not in canonical position */
            exp[x] = (ulong)keys[i * d + x];
        }
        if (*result == HF_VERIFY_SLICE_OK && fmpz_sgn(c + i) <= 0)
            *result = HF_VERIFY_SLICE_BAD_WEIGHT;
        if (*result != HF_VERIFY_SLICE_OK)
            break;
        fmpz_mpoly_push_term_fmpz_ui(C, c + i, exp, v->ctx);
        for (int j = 0; j < dv; j++)
            if (!fmpz_is_zero(u + i * dv + j))
                fmpz_mpoly_push_term_fmpz_ui(U + j, u + i * dv + j, exp, v->ctx);
    }
    if (*result == HF_VERIFY_SLICE_OK && increasing) {
        fmpz_mpoly_reverse(C, C, v->ctx);
        for (int j = 0; j < dv; j++)
            fmpz_mpoly_reverse(U + j, U + j, v->ctx);
    } else if (*result == HF_VERIFY_SLICE_OK) {
        fmpz_mpoly_sort_terms(C, v->ctx);
        fmpz_mpoly_combine_like_terms(C, v->ctx);
        for (int j = 0; j < dv; j++) {
            fmpz_mpoly_sort_terms(U + j, v->ctx);
            fmpz_mpoly_combine_like_terms(U + j, v->ctx);
        }
    }
    if (*result == HF_VERIFY_SLICE_OK) {
        err = slice_products(v, e, L, S);
    }
    if (err == HF_OK && *result == HF_VERIFY_SLICE_OK) {
        if (C->length == 0 && L->length == 0) {
            /* no key and no term of D' here: U = lambda N' needs N'_e = 0 (U_e is 0) */
            for (int j = 0; j < dv; j++)
                if (S[j].length)
                    *result = HF_VERIFY_SLICE_FAILED;
        } else if (!proportional(C, L, a, b, v->ctx)) {
            *result = HF_VERIFY_SLICE_NOT_MULTIPLE;
        } else {
            /* C_e = (a/b) D'_e: then U_e = (a/b) N'_e, that is b U_e = a N'_e */
            fmpq_set_fmpz_frac(lambda, a, b);
            *has_lambda = 1;
            for (int j = 0; j < dv && *result == HF_VERIFY_SLICE_OK; j++) {
                fmpz_mpoly_scalar_mul_fmpz(U + j, U + j, b, v->ctx);
                fmpz_mpoly_scalar_mul_fmpz(S + j, S + j, a, v->ctx);
                if (!fmpz_mpoly_equal(U + j, S + j, v->ctx))
                    *result = HF_VERIFY_SLICE_FAILED;
            }
        }
    }
    fmpz_clear(b);
    fmpz_clear(a);
    for (int j = 0; j < dv; j++) {
        fmpz_mpoly_clear(U + j, v->ctx);
        fmpz_mpoly_clear(S + j, v->ctx);
    }
    free(U);
    free(S);
    fmpz_mpoly_clear(C, v->ctx);
    fmpz_mpoly_clear(L, v->ctx);
    return err;
}
