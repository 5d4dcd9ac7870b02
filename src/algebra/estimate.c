/* How much memory building P/Q will take, estimated from the heads before building it
 * (hf_fraction_estimate, algebra.h; the figures against measured peaks are in
 * docs/performance.md §13).
 *
 * Q divides the product of the heads' distinct denominators. When these are pairwise
 * coprime Q is that product, whose terms (positive coefficients: nothing cancels) are
 * the Minkowski sum of the heads' key sets, and each term N_h Q / D_h of P_j has its
 * terms in that sum too (N_h's keys are D_h's, Q / D_h is the product of the others):
 * a bound B on the size of the sum bounds them all. When denominators share factors Q
 * is a proper divisor and B an estimate. B is the smaller of two cheap bounds: the
 * lattice box the product's exponents lie in, and the product of the sizes of partial
 * Minkowski sums (|A + B| <= |A| |B|), each enumerated up to 2^14 points, with the heads
 * taken in the order of the coordinates they use so that heads sharing coordinates fall
 * into one group, where the count is exact. */
#include <math.h>
#include <stdlib.h>

#include <flint/fmpz_vec.h>

#include "algebra/algebra_impl.h"

/* Largest Minkowski sum enumerated in one group. */
#define ESTIMATE_GROUP_POINTS (1L << 14)

/* Polynomials held at the peak of the construction besides the dv numerators
 * (fraction_factor.c, sum_over_lcm): the partial lcm, the buffer W each product and sum
 * goes to before it is swapped in, a numerator times the cofactor, and the cofactor
 * L / G when a denominator shares a factor. Measured: about 4 of Q's size are live at
 * the peak (docs/performance.md §13). */
#define ESTIMATE_WORK_POLYS 4

/* One distinct primitive denominator. */
typedef struct {
    fmpz_mpoly_t D;
    slong deg[HF_D_MAX];
    int lo, hi; /* first and last coordinate it uses (d, -1: none) */
} den_t;

typedef struct {
    const fmpz_mpoly_ctx_struct *ctx;
    int d;
    den_t *den;
    long nden, cap;
    double coeff_bits; /* log2 of a bound on the coefficients */
} estimate_t;

static void estimate_clear(estimate_t *e)
{
    for (long i = 0; i < e->nden; i++)
        fmpz_mpoly_clear(e->den[i].D, e->ctx);
    free(e->den);
}

/* log2 of the sum of the absolute values of A's coefficients. */
static double log2_l1(const fmpz_mpoly_t A)
{
    fmpz_t s, a;
    fmpz_init(s);
    fmpz_init(a);
    for (slong i = 0; i < A->length; i++) {
        fmpz_abs(a, A->coeffs + i);
        fmpz_add(s, s, a);
    }
    /* the logarithm itself, not the bit count (which rounds up: 2 bits for l1 = 2, so
     * chain:d=16's 31 factors of l1 2 looked like 62 bits instead of 31) */
    double l = fmpz_is_zero(s) ? 0 : fmpz_dlog(s) / log(2.0);
    fmpz_clear(a);
    fmpz_clear(s);
    return l;
}

/* Add head h's denominator, made primitive, unless an equal one is there already. The
 * coefficient bound grows by the l1 norm of each distinct denominator (a bound on the
 * product's coefficients; Q's factors could have larger ones, which is not counted). */
static hf_err_t estimate_add_head(estimate_t *e, const hf_head_t *h, fmpz_mpoly_struct *N,
                                  fmpz_mpoly_t D)
{
    fmpz_t c;
    fmpz_init(c);
    hf_fraction_head_nd(N, D, h, e->ctx);
    _fmpz_vec_content(c, D->coeffs, D->length);
    fmpz_mpoly_scalar_divexact_fmpz(D, D, c, e->ctx);
    fmpz_clear(c);
    for (int j = 0; j < h->dv; j++)
        if (log2_l1(N + j) > e->coeff_bits)
            e->coeff_bits = log2_l1(N + j); /* the numerators' share, roughly */
    for (long i = 0; i < e->nden; i++)
        if (fmpz_mpoly_equal(e->den[i].D, D, e->ctx))
            return HF_OK;
    HF_TRY(HF_GROW(&e->den, &e->cap, e->nden + 1));
    den_t *x = e->den + e->nden++;
    fmpz_mpoly_init(x->D, e->ctx);
    fmpz_mpoly_set(x->D, D, e->ctx);
    fmpz_mpoly_degrees_si(x->deg, D, e->ctx);
    x->lo = e->d;
    x->hi = -1;
    for (int a = 0; a < e->d; a++)
        if (x->deg[a] > 0) {
            x->lo = a < x->lo ? a : x->lo;
            x->hi = a;
        }
    e->coeff_bits += log2_l1(D);
    return HF_OK;
}

/* Order of the denominators for grouping: by first, then last coordinate used. */
static int cmp_den(const void *ctx, long a, long b)
{
    const estimate_t *e = ctx;
    const den_t *x = e->den + a, *y = e->den + b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

/* Exponent vectors packed into W words of fields of `bits` bits, wide enough for the
 * largest sum of degrees in a coordinate, so that adding two packed vectors of a
 * Minkowski sum adds the fields without carries (FLINT packs its exponents so too). A
 * set of such words costs 2 words per key for chain:d=64 instead of 64. */
typedef struct {
    int bits, per_word, words;
} packing_t;

static packing_t packing_for(const estimate_t *e)
{
    slong maxdeg = 1;
    for (int a = 0; a < e->d; a++) {
        slong s = 0;
        for (long i = 0; i < e->nden; i++)
            s += e->den[i].deg[a];
        maxdeg = s > maxdeg ? s : maxdeg;
    }
    packing_t p;
    p.bits = (int)FLINT_BIT_COUNT((ulong)maxdeg);
    p.per_word = 64 / p.bits;
    p.words = (e->d + p.per_word - 1) / p.per_word;
    return p;
}

/* D's exponent vectors, packed: D->length rows of p->words. */
static int64_t *pack_terms(const fmpz_mpoly_t D, const fmpz_mpoly_ctx_t ctx, int d,
                           const packing_t *p)
{
    slong ex[HF_D_MAX];
    int64_t *out = hf_calloc((size_t)(D->length ? D->length : 1) * (size_t)p->words, sizeof *out);
    for (slong i = 0; out && i < D->length; i++) {
        fmpz_mpoly_get_term_exp_si(ex, D, i, ctx);
        uint64_t *w = (uint64_t *)out + i * p->words;
        for (int a = 0; a < d; a++)
            w[a / p->per_word] += (uint64_t)ex[a] << (p->bits * (a % p->per_word));
    }
    return out;
}

/* S = S + the n packed vectors of v (the Minkowski sum). */
static hf_err_t minkowski_add(hf_ivset_t *S, const int64_t *v, long n)
{
    hf_err_t err = HF_OK;
    hf_ivset_t next;
    int64_t sum[HF_D_MAX];
    int w = S->b, added;
    HF_CHECK(err, hf_ivset_init(&next, w), cleanup);
    for (long s = 0; s < S->n; s++)
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < w; k++)
                sum[k] = (int64_t)((uint64_t)S->keys[s * w + k] + (uint64_t)v[i * w + k]);
            if (hf_ivset_insert(&next, sum, &added) < 0) {
                err = HF_ERR_NOMEM;
                goto cleanup;
            }
        }
    hf_ivset_clear(S);
    *S = next;
    return HF_OK;
cleanup:
    hf_ivset_clear(&next);
    return err;
}

/* S = {0}, vectors of w words. */
static hf_err_t set_of_zero(hf_ivset_t *S, int w)
{
    int64_t zero[HF_D_MAX] = {0};
    int added;
    HF_TRY(hf_ivset_init(S, w));
    return hf_ivset_insert(S, zero, &added) < 0 ? HF_ERR_NOMEM : HF_OK;
}

/* The product over groups of their Minkowski sums' sizes, the denominators taken in
 * the order idx. */
static hf_err_t grouped_terms(const estimate_t *e, const long *idx, double *terms)
{
    hf_err_t err = HF_OK;
    hf_ivset_t S = {0};
    packing_t p = packing_for(e);
    int64_t *v = NULL;
    *terms = 1;
    HF_CHECK(err, set_of_zero(&S, p.words), cleanup);
    for (long k = 0; k < e->nden; k++) {
        const fmpz_mpoly_struct *D = e->den[idx[k]].D;
        if (S.n > 1 && (double)S.n * (double)D->length > (double)ESTIMATE_GROUP_POINTS) {
            *terms *= (double)S.n; /* close the group, start the next from {0} */
            hf_ivset_clear(&S);
            HF_CHECK(err, set_of_zero(&S, p.words), cleanup);
        }
        v = pack_terms(D, e->ctx, e->d, &p);
        if (!v) {
            err = HF_ERR_NOMEM;
            goto cleanup;
        }
        HF_CHECK(err, minkowski_add(&S, v, D->length), cleanup);
        free(v);
        v = NULL;
    }
    *terms *= (double)S.n;
cleanup:
    free(v);
    hf_ivset_clear(&S);
    return err;
}

/* Bytes of one term: the coefficient and the exponent vector packed as FLINT packs it
 * (fields of at least 8 bits with room for an overflow bit, not straddling words). */
static double term_bytes(const estimate_t *e)
{
    slong maxdeg = 0;
    for (int a = 0; a < e->d; a++) {
        slong s = 0;
        for (long i = 0; i < e->nden; i++)
            s += e->den[i].deg[a];
        maxdeg = s > maxdeg ? s : maxdeg;
    }
    int bits = (int)FLINT_BIT_COUNT((ulong)maxdeg) + 1;
    bits = bits < 8 ? 8 : bits;
    double words =
        bits > 64 ? (double)e->d * ceil(bits / 64.0) : (double)((e->d - 1) / (64 / bits) + 1);
    double coeff = 8; /* a small fmpz; a large one is an mpz: struct, limbs, malloc */
    if (e->coeff_bits > 62)
        coeff += 16 + 16 + 8 * ceil(e->coeff_bits / 64);
    return coeff + 8 * words;
}

static hf_err_t estimate_ex(const hf_target_t *t, double *bytes, double *terms);

hf_err_t hf_fraction_estimate(const hf_target_t *t, double *bytes)
{
    double terms;
    return estimate_ex(t, bytes, &terms);
}

hf_err_t hf_fraction_estimate_terms(const hf_target_t *t, double *terms)
{
    double bytes;
    return estimate_ex(t, &bytes, terms);
}

static hf_err_t estimate_ex(const hf_target_t *t, double *bytes, double *terms)
{
    hf_err_t err = HF_OK;
    const char *name;
    estimate_t e = {0};
    fmpz_mpoly_ctx_t ctx;
    fmpz_mpoly_struct *N = NULL;
    fmpz_mpoly_t D;
    long *idx = NULL;
    double box = 1, grouped = 1;
    *bytes = *terms = 0;
    HF_TRY(hf_fraction_check_target(t, &name));

    fmpz_mpoly_ctx_init(ctx, t->d, ORD_LEX);
    fmpz_mpoly_init(D, ctx);
    e.ctx = ctx;
    e.d = t->d;
    N = hf_fraction_polys_new(t->dv, ctx);
    if (!N) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (int h = 0; h < t->nheads; h++)
        HF_CHECK(err, estimate_add_head(&e, t->heads + h, N, D), cleanup);

    for (int a = 0; a < t->d; a++) {
        slong s = 0;
        for (long i = 0; i < e.nden; i++)
            s += e.den[i].deg[a];
        box *= (double)(s + 1);
    }
    idx = hf_malloc((size_t)(e.nden ? e.nden : 1) * sizeof *idx);
    if (!idx) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < e.nden; i++)
        idx[i] = i;
    HF_CHECK(err, hf_sort(idx, e.nden, cmp_den, &e), cleanup);
    HF_CHECK(err, grouped_terms(&e, idx, &grouped), cleanup);
    *terms = box < grouped ? box : grouped;
    *bytes = *terms * (t->dv + ESTIMATE_WORK_POLYS) * term_bytes(&e);

cleanup:
    free(idx);
    hf_fraction_polys_free(N, t->dv, ctx);
    estimate_clear(&e);
    fmpz_mpoly_clear(D, ctx);
    fmpz_mpoly_ctx_clear(ctx);
    return err;
}
