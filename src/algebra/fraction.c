/* A target as one rational function P/Q in lowest terms (algebra.h): the pieces both
 * constructions share (a head as N/D, the unique normal form), the choice between them,
 * and comparisons of fractions.
 *
 * With x_j = exp(q_j) a head is N/D (D = sum c_i x^k_i, N = sum c_i v_i x^k_i). P/Q is
 * built from the irreducible factors of the heads' denominators (fraction_factor.c); a
 * target with a denominator too large to factor cheaply is built by gcds instead
 * (fraction_gcd.c). Both give the same unique form (docs/exact-test.md §1). */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "algebra/algebra_impl.h"

fmpz_mpoly_struct *hf_fraction_polys_new(int n, const fmpz_mpoly_ctx_t ctx)
{
    fmpz_mpoly_struct *p = hf_malloc((size_t)n * sizeof *p);
    for (int j = 0; p && j < n; j++)
        fmpz_mpoly_init(p + j, ctx);
    return p;
}

void hf_fraction_polys_free(fmpz_mpoly_struct *p, int n, const fmpz_mpoly_ctx_t ctx)
{
    for (int j = 0; p && j < n; j++)
        fmpz_mpoly_clear(p + j, ctx);
    free(p);
}

hf_err_t hf_fraction_alloc(hf_fraction_t *f, int d, int dv)
{
    f->d = d;
    f->dv = dv;
    fmpz_mpoly_ctx_init(f->ctx, d, ORD_LEX);
    fmpz_mpoly_init(f->Q, f->ctx);
    fmpz_mpoly_one(f->Q, f->ctx);
    f->P = hf_fraction_polys_new(dv, f->ctx);
    if (!f->P) {
        f->dv = 0;
        return HF_ERR_NOMEM;
    }
    return HF_OK;
}

void hf_fraction_init(hf_fraction_t *f)
{
    /* neither the context nor a zero polynomial allocates */
    f->d = 1;
    f->dv = 0;
    fmpz_mpoly_ctx_init(f->ctx, 1, ORD_LEX);
    fmpz_mpoly_init(f->Q, f->ctx);
    f->P = NULL;
}

void hf_fraction_clear(hf_fraction_t *f)
{
    if (!f)
        return;
    hf_fraction_polys_free(f->P, f->dv, f->ctx);
    fmpz_mpoly_clear(f->Q, f->ctx);
    fmpz_mpoly_ctx_clear(f->ctx);
    hf_fraction_init(f); /* empty again: it may be filled, or cleared, once more */
}

/* N_j = sum c_i v_ij x^(k_i - min), D = sum c_i x^(k_i - min), both multiplied by the
 * least common denominator of all c_i and c_i v_ij so that they have integer
 * coefficients. */
void hf_fraction_head_nd(fmpz_mpoly_struct *N, fmpz_mpoly_t D, const hf_head_t *h,
                         const fmpz_mpoly_ctx_t ctx)
{
    int d = h->d, dv = h->dv;
    int64_t kmin[HF_D_MAX];
    ulong exp[HF_D_MAX];
    fmpz_t L, c;
    fmpq_t cv;
    fmpz_init(L);
    fmpz_init(c);
    fmpq_init(cv);

    for (int a = 0; a < d; a++) {
        kmin[a] = h->keys[a];
        for (long i = 1; i < h->natoms; i++)
            if (h->keys[i * d + a] < kmin[a])
                kmin[a] = h->keys[i * d + a];
    }
    fmpz_one(L);
    for (long i = 0; i < h->natoms; i++) {
        fmpz_lcm(L, L, fmpq_denref(h->weights + i));
        for (int j = 0; j < dv; j++) {
            fmpq_mul(cv, h->weights + i, h->values + i * dv + j);
            fmpz_lcm(L, L, fmpq_denref(cv));
        }
    }
    fmpz_mpoly_zero(D, ctx);
    for (int j = 0; j < dv; j++)
        fmpz_mpoly_zero(N + j, ctx);
    for (long i = 0; i < h->natoms; i++) {
        for (int a = 0; a < d; a++)
            exp[a] = (ulong)(h->keys[i * d + a] - kmin[a]);
        /* L * c_i is an integer because L is a multiple of c_i's denominator */
        fmpz_divexact(c, L, fmpq_denref(h->weights + i));
        fmpz_mul(c, c, fmpq_numref(h->weights + i));
        fmpz_mpoly_push_term_fmpz_ui(D, c, exp, ctx);
        for (int j = 0; j < dv; j++) {
            fmpq_mul(cv, h->weights + i, h->values + i * dv + j);
            if (fmpq_is_zero(cv))
                continue;
            fmpz_divexact(c, L, fmpq_denref(cv));
            fmpz_mul(c, c, fmpq_numref(cv));
            fmpz_mpoly_push_term_fmpz_ui(N + j, c, exp, ctx);
        }
    }
    /* a head may list the same key twice: merge such atoms */
    fmpz_mpoly_sort_terms(D, ctx);
    fmpz_mpoly_combine_like_terms(D, ctx);
    for (int j = 0; j < dv; j++) {
        fmpz_mpoly_sort_terms(N + j, ctx);
        fmpz_mpoly_combine_like_terms(N + j, ctx);
    }
    fmpq_clear(cv);
    fmpz_clear(c);
    fmpz_clear(L);
}

/* emin = the coordinatewise minimum of its old value (unless *any is 0) and A's
 * exponents; A scanned from its last term. 1 as soon as emin is all zero (nothing more
 * can change it). */
static int exponent_min_update(ulong *emin, int *any, const fmpz_mpoly_t A,
                               const fmpz_mpoly_ctx_t ctx, int d)
{
    ulong e[HF_D_MAX];
    for (slong i = A->length - 1; i >= 0; i--) {
        fmpz_mpoly_get_term_exp_ui(e, A, i, ctx);
        int zeros = 0;
        for (int a = 0; a < d; a++) {
            if (!*any || e[a] < emin[a])
                emin[a] = e[a];
            zeros += emin[a] == 0;
        }
        *any = 1;
        if (zeros == d)
            return 1;
    }
    return 0;
}

/* The unique form: no common monomial factor, jointly primitive, Q(1,...,1) > 0. Both
 * constructions leave Q without a monomial factor (it divides the product of the heads'
 * shifted denominators), and the gcd one leaves the content 1 too; all three are
 * enforced here so that the form depends on neither construction. */
hf_err_t hf_fraction_normalise(hf_fraction_t *f, const char *name)
{
    hf_err_t err = HF_OK;
    int d = f->d;
    ulong emin[HF_D_MAX];
    fmpz_mpoly_t mono, T;
    fmpz_t content, s;
    fmpz_mpoly_init(mono, f->ctx);
    fmpz_mpoly_init(T, f->ctx);
    fmpz_init(content);
    fmpz_init(s);

    /* Q first, from its last term: Q has no monomial factor in practice (it divides the
     * product of the shifted denominators) and its lex-last terms show it at once, so
     * the scan usually stops before it reaches the numerators */
    int any = 0;
    for (int j = f->dv; j >= 0; j--) {
        const fmpz_mpoly_struct *A = j < f->dv ? f->P + j : f->Q;
        if (exponent_min_update(emin, &any, A, f->ctx, d))
            break;
    }
    int shift = 0;
    for (int a = 0; a < d; a++)
        shift |= emin[a] != 0;
    if (shift) {
        fmpz_one(s);
        fmpz_mpoly_push_term_fmpz_ui(mono, s, emin, f->ctx);
        for (int j = 0; j <= f->dv; j++) {
            fmpz_mpoly_struct *A = j < f->dv ? f->P + j : f->Q;
            if (!fmpz_mpoly_divides(T, A, mono, f->ctx)) {
                err = hf_error(HF_ERR_INTERNAL, "%s: common monomial does not divide", name);
                goto cleanup;
            }
            fmpz_mpoly_swap(A, T, f->ctx);
        }
    }

    for (int j = 0; j <= f->dv; j++) {
        const fmpz_mpoly_struct *A = j < f->dv ? f->P + j : f->Q;
        for (slong i = 0; i < A->length; i++)
            fmpz_gcd(content, content, A->coeffs + i);
    }
    _fmpz_vec_sum(s, f->Q->coeffs, f->Q->length);
    if (fmpz_is_zero(s)) {
        /* impossible: Q divides a product of positive polynomials, so Q(1..1) != 0 */
        err = hf_error(HF_ERR_INTERNAL, "%s: denominator vanishes at (1,...,1)", name);
        goto cleanup;
    }
    if (fmpz_sgn(s) < 0)
        fmpz_neg(content, content);
    if (!fmpz_is_one(content)) {
        for (int j = 0; j <= f->dv; j++) {
            fmpz_mpoly_struct *A = j < f->dv ? f->P + j : f->Q;
            fmpz_mpoly_scalar_divexact_fmpz(A, A, content, f->ctx);
        }
    }
cleanup:
    fmpz_clear(s);
    fmpz_clear(content);
    fmpz_mpoly_clear(T, f->ctx);
    fmpz_mpoly_clear(mono, f->ctx);
    return err;
}

hf_err_t hf_fraction_check_target(const hf_target_t *t, const char **name)
{
    int d = t->d, dv = t->dv;
    *name = t->name ? t->name : "target";
    if (d < 1 || d > HF_D_MAX || dv < 1 || dv > HF_DV_MAX)
        return hf_error(HF_ERR_INPUT, "%s: d=%d, dv=%d: need 1 <= d <= %d and 1 <= dv <= %d", *name,
                        d, dv, HF_D_MAX, HF_DV_MAX);
    for (int h = 0; h < t->nheads; h++) {
        char where[320];
        snprintf(where, sizeof where, "%s: heads[%d]", *name, h);
        if (t->heads[h].d != d || t->heads[h].dv != dv)
            return hf_error(HF_ERR_INPUT, "%s: d=%d, dv=%d differ from the target's %d, %d", where,
                            t->heads[h].d, t->heads[h].dv, d, dv);
        HF_TRY(hf_head_validate(t->heads + h, where));
    }
    return HF_OK;
}

hf_err_t hf_fraction_begin(hf_fraction_t *f, const hf_target_t *t, const char **name)
{
    int ok_dims = t->d >= 1 && t->d <= HF_D_MAX && t->dv >= 1 && t->dv <= HF_DV_MAX;
    /* always leave f initialised so that the caller can clear it */
    hf_err_t err = hf_fraction_alloc(f, ok_dims ? t->d : 1, ok_dims ? t->dv : 1);
    if (err != HF_OK) {
        *name = t->name ? t->name : "target";
        return err;
    }
    return hf_fraction_check_target(t, name);
}

hf_err_t hf_fraction_from_target(hf_fraction_t *f, const hf_target_t *t)
{
    /* built aside and swapped in (a context and polynomials move as plain structs): f
     * keeps its value on failure */
    hf_fraction_t tmp;
    int factored = 0;
    hf_err_t err = hf_fraction_from_factors(&tmp, t, 1, &factored);
    if (err == HF_OK && !factored) {
        hf_fraction_clear(&tmp);
        err = hf_fraction_from_gcds(&tmp, t);
    }
    if (err == HF_OK) {
        hf_fraction_t old = *f;
        *f = tmp;
        tmp = old;
    }
    hf_fraction_clear(&tmp);
    return err;
}

/* Term-by-term comparison; works across the two fractions' own contexts. */
static int mpoly_same(const fmpz_mpoly_t A, const fmpz_mpoly_ctx_t actx, const fmpz_mpoly_t B,
                      const fmpz_mpoly_ctx_t bctx, int d)
{
    ulong ea[HF_D_MAX], eb[HF_D_MAX];
    if (A->length != B->length)
        return 0;
    for (slong i = 0; i < A->length; i++) {
        if (!fmpz_equal(A->coeffs + i, B->coeffs + i))
            return 0;
        fmpz_mpoly_get_term_exp_ui(ea, A, i, actx);
        fmpz_mpoly_get_term_exp_ui(eb, B, i, bctx);
        if (memcmp(ea, eb, (size_t)d * sizeof *ea))
            return 0;
    }
    return 1;
}

int hf_fraction_equal(const hf_fraction_t *a, const hf_fraction_t *b)
{
    if (a->d != b->d || a->dv != b->dv)
        return 0;
    if (!mpoly_same(a->Q, a->ctx, b->Q, b->ctx, a->d))
        return 0;
    for (int j = 0; j < a->dv; j++)
        if (!mpoly_same(a->P + j, a->ctx, b->P + j, b->ctx, a->d))
            return 0;
    return 1;
}

int hf_fraction_is_constant(const hf_fraction_t *f)
{
    /* P_j = (a/b) Q  iff  lc(Q) P_j == lc(P_j) Q */
    int constant = 1;
    fmpz_mpoly_t L, R;
    if (f->Q->length == 0)
        return 0;
    fmpz_mpoly_init(L, f->ctx);
    fmpz_mpoly_init(R, f->ctx);
    for (int j = 0; j < f->dv && constant; j++) {
        const fmpz_mpoly_struct *Pj = f->P + j;
        if (Pj->length == 0)
            continue;
        fmpz_mpoly_scalar_mul_fmpz(L, Pj, f->Q->coeffs + 0, f->ctx);
        fmpz_mpoly_scalar_mul_fmpz(R, f->Q, Pj->coeffs + 0, f->ctx);
        constant = fmpz_mpoly_equal(L, R, f->ctx);
    }
    fmpz_mpoly_clear(R, f->ctx);
    fmpz_mpoly_clear(L, f->ctx);
    return constant;
}
