/* P/Q from the irreducible factors of the heads' denominators (docs/exact-test.md
 * section 1).
 *
 * Each head is N_h/D_h with D_h = c_h M_h, c_h > 0 an integer and M_h primitive. Heads
 * with the same M_h are added first (one group). Each distinct M_h is factored into
 * irreducibles (fmpz_mpoly_factor; small: a head's own terms); the lcm L of the M_h is
 * the product of the distinct factors, each to the largest power any M_h holds, and with
 * C = lcm(c_h)
 *     Q = C L,    P_j = sum_h (C / c_h) N_h,j (L / M_h).
 * The sum is built group by group over the lcm L_k of the groups so far, and the
 * factors say how each step changes it without a gcd: with A the part of M_k not yet
 * in L_{k-1} and G = M_k / A the part already there, L_k = L_{k-1} A and
 *     P_k = P_{k-1} A + (C / c_k) N_k (L_{k-1} / G),
 * where G = 1 (no division at all) unless M_k shares a factor with an earlier group.
 * Then gcd(P_1..P_dv, Q) divides Q, so it is a product of L's own factors: testing each
 * of them (divide it out of every P_j and Q while it divides them all) leaves the
 * fraction in lowest terms without a gcd of large polynomials. */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mpoly_factor.h>
#include <flint/fmpz_vec.h>

#include "algebra/algebra_impl.h"
#include "headfuse/stop.h"

HF_ALGEBRA_STOP_PHASES(HF_STOP_DEFINE)

void hf_fraction_groups_init(hf_fraction_groups_t *b, const fmpz_mpoly_ctx_t ctx, int dv)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->dv = dv;
}

void hf_fraction_groups_drop(hf_fraction_groups_t *b)
{
    for (long g = 0; g < b->ngroups; g++) {
        hf_fraction_group_t *gr = b->groups + g;
        hf_fraction_polys_free(gr->N, b->dv, b->ctx);
        fmpz_mpoly_clear(gr->M, b->ctx);
        fmpz_clear(gr->c);
        free(gr->fidx);
        free(gr->fexp);
    }
    free(b->groups);
    b->groups = NULL;
    b->ngroups = b->groups_cap = 0;
}

void hf_fraction_groups_clear(hf_fraction_groups_t *b)
{
    hf_fraction_groups_drop(b);
    for (long i = 0; i < b->nfactors; i++)
        fmpz_mpoly_clear(b->factors[i].poly, b->ctx);
    free(b->factors);
    b->factors = NULL;
    b->nfactors = b->factors_cap = 0;
}

/* The group of denominator M (a new one with N = 0, c = 1 if none has it yet, for head
 * number `head`). */
static hf_err_t group_of(hf_fraction_groups_t *b, const fmpz_mpoly_t M, long head,
                         hf_fraction_group_t **out)
{
    for (long g = 0; g < b->ngroups; g++)
        if (fmpz_mpoly_equal(b->groups[g].M, M, b->ctx)) {
            *out = b->groups + g;
            return HF_OK;
        }
    HF_TRY(HF_GROW(&b->groups, &b->groups_cap, b->ngroups + 1));
    hf_fraction_group_t *gr = b->groups + b->ngroups;
    gr->N = hf_fraction_polys_new(b->dv, b->ctx);
    if (!gr->N)
        return HF_ERR_NOMEM;
    fmpz_mpoly_init(gr->M, b->ctx);
    fmpz_mpoly_set(gr->M, M, b->ctx);
    fmpz_init_set_ui(gr->c, 1);
    gr->fidx = NULL;
    gr->fexp = NULL;
    gr->nf = gr->fcap = 0;
    gr->first = head;
    slong deg[HF_D_MAX];
    int d = (int)fmpz_mpoly_ctx_nvars(b->ctx);
    fmpz_mpoly_degrees_si(deg, M, b->ctx);
    gr->lo = d;
    gr->hi = -1;
    for (int a = 0; a < d; a++)
        if (deg[a] > 0) {
            gr->lo = a < gr->lo ? a : gr->lo;
            gr->hi = a;
        }
    b->ngroups++;
    *out = gr;
    return HF_OK;
}

/* Add the head N/(c M) to its group: N_g = (c'/c_g) N_g + (c'/c) N, c' = lcm(c_g, c). */
static hf_err_t group_add_head(hf_fraction_groups_t *b, long head, fmpz_mpoly_struct *N,
                               fmpz_mpoly_t D, fmpz_t c, fmpz_mpoly_t T)
{
    hf_fraction_group_t *gr;
    fmpz_t l, s;
    _fmpz_vec_content(c, D->coeffs, D->length); /* D's coefficients are positive */
    fmpz_mpoly_scalar_divexact_fmpz(D, D, c, b->ctx);
    HF_TRY(group_of(b, D, head, &gr));
    fmpz_init(l);
    fmpz_init(s);
    fmpz_lcm(l, gr->c, c);
    for (int j = 0; j < b->dv; j++) {
        fmpz_divexact(s, l, gr->c);
        fmpz_mpoly_scalar_mul_fmpz(gr->N + j, gr->N + j, s, b->ctx);
        fmpz_divexact(s, l, c);
        fmpz_mpoly_scalar_mul_fmpz(T, N + j, s, b->ctx);
        fmpz_mpoly_add(gr->N + j, gr->N + j, T, b->ctx);
    }
    fmpz_set(gr->c, l);
    fmpz_clear(s);
    fmpz_clear(l);
    return HF_OK;
}

/* The order the groups are summed in: by the first, then the last coordinate their
 * denominator uses, so that the partial lcms grow along the coordinates (chain:d=12:
 * 0.8 s against 1.3 s in the family's order, singles first) and stay small longer. */
static int cmp_group_coordinates(const void *pa, const void *pb)
{
    const hf_fraction_group_t *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

/* Record the irreducible factor p (any sign and content) with power e in group gr's
 * denominator: L needs the largest such power. */
static hf_err_t factor_note(hf_fraction_groups_t *b, hf_fraction_group_t *gr, fmpz_mpoly_t p,
                            slong e)
{
    fmpz_t content;
    fmpz_init(content);
    _fmpz_vec_content(content, p->coeffs, p->length);
    if (fmpz_sgn(p->coeffs + 0) < 0)
        fmpz_neg(content, content);
    fmpz_mpoly_scalar_divexact_fmpz(p, p, content, b->ctx);
    fmpz_clear(content);
    long i = 0;
    while (i < b->nfactors && !fmpz_mpoly_equal(b->factors[i].poly, p, b->ctx))
        i++;
    if (i == b->nfactors) {
        HF_TRY(HF_GROW(&b->factors, &b->factors_cap, b->nfactors + 1));
        hf_fraction_factor_t *fa = b->factors + b->nfactors++;
        fmpz_mpoly_init(fa->poly, b->ctx);
        fmpz_mpoly_swap(fa->poly, p, b->ctx);
        fa->mult = fa->cur = 0;
        fa->may_cancel = 1;
    }
    if (e > b->factors[i].mult)
        b->factors[i].mult = e;
    long cap = gr->fcap;
    HF_TRY(HF_GROW(&gr->fidx, &gr->fcap, gr->nf + 1));
    HF_TRY(HF_GROW(&gr->fexp, &cap, gr->nf + 1));
    gr->fidx[gr->nf] = i;
    gr->fexp[gr->nf++] = e;
    return HF_OK;
}

/* Factor every group's M into the factor list. *factored = 0 (and nothing more done)
 * when a degree is over HF_FRACTION_FACTOR_DEGREE_MAX or FLINT's factoring fails. */
static hf_err_t factor_groups(hf_fraction_groups_t *b, int d, int *factored)
{
    hf_err_t err = HF_OK;
    slong deg[HF_D_MAX];
    fmpz_mpoly_factor_t fac;
    fmpz_mpoly_factor_init(fac, b->ctx);
    *factored = 0;
    for (long g = 0; g < b->ngroups; g++) {
        hf_fraction_group_t *gr = b->groups + g;
        const fmpz_mpoly_struct *M = gr->M;
        fmpz_mpoly_degrees_si(deg, M, b->ctx);
        for (int a = 0; a < d; a++)
            if (deg[a] > HF_FRACTION_FACTOR_DEGREE_MAX)
                goto cleanup;
        if (!fmpz_mpoly_factor(fac, M, b->ctx))
            goto cleanup;
        for (slong i = 0; i < fac->num; i++) {
            if (!fmpz_fits_si(fac->exp + i)) /* cannot happen: the degree is small */
                goto cleanup;
            HF_CHECK(err, factor_note(b, gr, fac->poly + i, fmpz_get_si(fac->exp + i)), cleanup);
        }
    }
    *factored = 1;
cleanup:
    fmpz_mpoly_factor_clear(fac, b->ctx);
    return err;
}

/* Which factors can cancel. For a factor f of L with power m, every group whose M holds
 * f to a power below m contributes a multiple of f to P_j (its cofactor L / M still
 * holds f). If exactly one group g holds f^m, then P_j = s_g N_g,j (L / M_g) mod f with
 * L / M_g prime to f and s_g a nonzero integer, so f divides P_j iff it divides
 * N_g,j: a test on the head's own small numerators instead of the large P_j. Only when
 * f divides all of them (the head's own N/D was not in lowest terms), or when several
 * groups hold f^m, must the large P_j be tested. */
static void mark_cancellable(hf_fraction_groups_t *b)
{
    fmpz_mpoly_t T;
    fmpz_mpoly_init(T, b->ctx);
    for (long i = 0; i < b->nfactors; i++) {
        hf_fraction_factor_t *fa = b->factors + i;
        const hf_fraction_group_t *only = NULL;
        int holders = 0;
        for (long g = 0; g < b->ngroups; g++)
            for (long k = 0; k < b->groups[g].nf; k++)
                if (b->groups[g].fidx[k] == i && b->groups[g].fexp[k] == fa->mult) {
                    holders++;
                    only = b->groups + g;
                }
        if (holders != 1)
            continue;
        for (int j = 0; j < b->dv && fa->may_cancel; j++)
            fa->may_cancel = fmpz_mpoly_divides(T, only->N + j, fa->poly, b->ctx);
    }
    fmpz_mpoly_clear(T, b->ctx);
}

hf_err_t hf_fraction_groups_make(hf_fraction_groups_t *b, const hf_target_t *t, int *factored)
{
    hf_err_t err = HF_OK;
    fmpz_mpoly_struct *N = hf_fraction_polys_new(b->dv, b->ctx);
    fmpz_mpoly_t D, T;
    fmpz_t c;
    *factored = 0;
    if (!N)
        return HF_ERR_NOMEM;
    fmpz_mpoly_init(D, b->ctx);
    fmpz_mpoly_init(T, b->ctx);
    fmpz_init(c);
    for (int h = 0; h < t->nheads; h++) {
        hf_fraction_head_nd(N, D, t->heads + h, b->ctx);
        HF_CHECK(err, group_add_head(b, h, N, D, c, T), cleanup);
    }
    if (b->ngroups > 1) /* qsort's base must not be NULL, even for no heads */
        qsort(b->groups, (size_t)b->ngroups, sizeof *b->groups, cmp_group_coordinates);
    HF_CHECK(err, factor_groups(b, t->d, factored), cleanup);
    if (*factored)
        mark_cancellable(b);
cleanup:
    fmpz_clear(c);
    fmpz_mpoly_clear(T, b->ctx);
    fmpz_mpoly_clear(D, b->ctx);
    hf_fraction_polys_free(N, b->dv, b->ctx);
    return err;
}

/* A *= f^e (e >= 1), with a temporary T. */
static void mul_power(fmpz_mpoly_t A, const fmpz_mpoly_t f, slong e, fmpz_mpoly_t T,
                      const fmpz_mpoly_ctx_t ctx)
{
    fmpz_mpoly_pow_ui(T, f, (ulong)e, ctx);
    fmpz_mpoly_mul(A, A, T, ctx);
}

/* Split group gr's M against the lcm so far: A = the powers of its factors beyond the
 * lcm's, G = the rest (M = A G), and raise the lcm's powers (hf_fraction_factor_t.cur). */
static void split_against_lcm(hf_fraction_groups_t *b, const hf_fraction_group_t *gr,
                              fmpz_mpoly_t A, fmpz_mpoly_t G, fmpz_mpoly_t T)
{
    fmpz_mpoly_one(A, b->ctx);
    fmpz_mpoly_one(G, b->ctx);
    for (long i = 0; i < gr->nf; i++) {
        hf_fraction_factor_t *fa = b->factors + gr->fidx[i];
        slong e = gr->fexp[i], in_lcm = e < fa->cur ? e : fa->cur;
        if (e > in_lcm)
            mul_power(A, fa->poly, e - in_lcm, T, b->ctx);
        if (in_lcm > 0)
            mul_power(G, fa->poly, in_lcm, T, b->ctx);
        if (e > fa->cur)
            fa->cur = e;
    }
}

/* Q = C L and P_j = sum_g (C / c_g) N_g,j (L / M_g): the sum over the lcm, not reduced,
 * built group by group (the file's comment). */
static hf_err_t sum_over_lcm(hf_fraction_t *f, hf_fraction_groups_t *b, const char *name)
{
    hf_err_t err = HF_OK;
    fmpz_mpoly_t L, A, G, cof, T, S, W;
    fmpz_t C, s;
    fmpz_mpoly_init(W, f->ctx);
    fmpz_mpoly_init(L, f->ctx);
    fmpz_mpoly_init(A, f->ctx);
    fmpz_mpoly_init(G, f->ctx);
    fmpz_mpoly_init(cof, f->ctx);
    fmpz_mpoly_init(T, f->ctx);
    fmpz_mpoly_init(S, f->ctx);
    fmpz_init_set_ui(C, 1);
    fmpz_init(s);

    for (long g = 0; g < b->ngroups; g++)
        fmpz_lcm(C, C, b->groups[g].c);
    fmpz_mpoly_one(L, f->ctx);
    for (long g = 0; g < b->ngroups; g++) {
        const hf_fraction_group_t *gr = b->groups + g;
        /* one step multiplies P by a factor: seconds at the largest targets */
        HF_CHECK(err, hf_stop_check(HF_STOP_FRACTION), cleanup);
        split_against_lcm(b, gr, A, G, T);
        const fmpz_mpoly_struct *Lg = L; /* L_{k-1} / G */
        if (!fmpz_mpoly_is_one(G, f->ctx)) {
            if (!fmpz_mpoly_divides(cof, L, G, f->ctx)) {
                err = hf_error(HF_ERR_INTERNAL, "%s: a factor does not divide the lcm", name);
                goto cleanup;
            }
            Lg = cof;
        }
        fmpz_divexact(s, C, gr->c);
        /* every product and sum goes to W and is swapped in, so that the large
         * buffers are reused from step to step instead of FLINT allocating (and
         * growing by reallocation) a fresh output each time */
        for (int j = 0; j < f->dv; j++) {
            if (!fmpz_mpoly_is_one(A, f->ctx)) {
                fmpz_mpoly_mul(W, f->P + j, A, f->ctx);
                fmpz_mpoly_swap(f->P + j, W, f->ctx);
            }
            fmpz_mpoly_scalar_mul_fmpz(S, gr->N + j, s, f->ctx);
            fmpz_mpoly_mul(T, S, Lg, f->ctx);
            fmpz_mpoly_add(W, f->P + j, T, f->ctx);
            fmpz_mpoly_swap(f->P + j, W, f->ctx);
        }
        if (!fmpz_mpoly_is_one(A, f->ctx)) {
            fmpz_mpoly_mul(W, L, A, f->ctx);
            fmpz_mpoly_swap(L, W, f->ctx);
        }
    }
    fmpz_mpoly_swap(f->Q, L, f->ctx); /* Q = C L in place: no second copy of L */
    fmpz_mpoly_scalar_mul_fmpz(f->Q, f->Q, C, f->ctx);
cleanup:
    fmpz_clear(s);
    fmpz_clear(C);
    fmpz_mpoly_clear(S, f->ctx);
    fmpz_mpoly_clear(T, f->ctx);
    fmpz_mpoly_clear(cof, f->ctx);
    fmpz_mpoly_clear(G, f->ctx);
    fmpz_mpoly_clear(A, f->ctx);
    fmpz_mpoly_clear(L, f->ctx);
    fmpz_mpoly_clear(W, f->ctx);
    return err;
}

/* If p divides every P_j, divide them and Q by it (*divided = 1); else leave the fraction
 * as it was (*divided = 0). The P_j are divided in place one after the other and the
 * ones already divided are multiplied back on a failure, so that only one temporary of
 * P's size is held; the first P_j nearly always decides. */
static hf_err_t divide_out(hf_fraction_t *f, const fmpz_mpoly_t p, fmpz_mpoly_t T, int *divided,
                           const char *name)
{
    *divided = 0;
    for (int j = 0; j < f->dv; j++) {
        if (!fmpz_mpoly_divides(T, f->P + j, p, f->ctx)) {
            for (int i = 0; i < j; i++)
                fmpz_mpoly_mul(f->P + i, f->P + i, p, f->ctx);
            return HF_OK;
        }
        fmpz_mpoly_swap(f->P + j, T, f->ctx);
    }
    if (!fmpz_mpoly_divides(T, f->Q, p, f->ctx))
        return hf_error(HF_ERR_INTERNAL, "%s: a factor of the lcm does not divide Q", name);
    fmpz_mpoly_swap(f->Q, T, f->ctx);
    *divided = 1;
    return HF_OK;
}

/* Divide out every factor of Q that divides all the P_j, as often as it does. */
static hf_err_t reduce_by_factors(hf_fraction_t *f, const hf_fraction_groups_t *b, const char *name)
{
    hf_err_t err = HF_OK;
    fmpz_mpoly_t T;
    fmpz_mpoly_init(T, f->ctx);
    for (long i = 0; i < b->nfactors; i++) {
        int divided = b->factors[i].may_cancel;
        HF_CHECK(err, hf_stop_check(HF_STOP_FRACTION), cleanup);
        for (slong r = 0; r < b->factors[i].mult && divided; r++)
            HF_CHECK(err, divide_out(f, b->factors[i].poly, T, &divided, name), cleanup);
    }
cleanup:
    fmpz_mpoly_clear(T, f->ctx);
    return err;
}

hf_err_t hf_fraction_from_factors(hf_fraction_t *f, const hf_target_t *t, int reduce, int *factored)
{
    hf_err_t err = HF_OK;
    const char *name;
    hf_fraction_groups_t b;
    *factored = 0;

    HF_TRY(hf_fraction_begin(f, t, &name));
    hf_fraction_groups_init(&b, f->ctx, f->dv);
    HF_CHECK(err, hf_fraction_groups_make(&b, t, factored), cleanup);
    if (!*factored)
        goto cleanup;
    HF_CHECK(err, sum_over_lcm(f, &b, name), cleanup);
    hf_fraction_groups_drop(&b); /* the groups' numerators are no longer needed */
    if (reduce)
        HF_CHECK(err, reduce_by_factors(f, &b, name), cleanup);
    HF_CHECK(err, hf_fraction_normalise(f, name), cleanup);

cleanup:
    hf_fraction_groups_clear(&b);
    return err;
}
