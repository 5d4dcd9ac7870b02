/* The least positive multiple of a reduced denominator (docs/math.md §12): M(F) is the fewest
 * terms of a nonzero multiple of F whose coefficients are all positive. Every support of
 * T = P/Q is the support of such a multiple, C = Q R (Lemma 12.1), so m*(T) >= M(Q).
 *
 * One variable (Theorem 12.4). Shift q to q(0) != 0, degree m >= 1. M(q) = 2 iff some
 * a + b t^n (a, b > 0, n >= 1) is a multiple of q, i.e. iff t^n mod q is a negative
 * constant for some n. The n >= 1 with t^n mod q constant are the multiples of one n0, with
 * t^(k n0) = c0^k mod q, and exist only when q is squarefree and every ratio of two of its
 * roots is a root of unity; then n0 divides L = prod over primes p of the largest p^e with
 * phi(p^e) <= m(m-1). So:
 *   - q not squarefree: no binomial multiple, M >= 3;
 *   - t^L mod q not constant modulo a prime p (p prime to the leading and constant
 *     coefficients and the denominators): none either, M >= 3;
 *   - otherwise the order of t modulo q and the constants, found modulo primes, gives a
 *     divisor n of n0; if t^n mod q is a constant c over Q (checked exactly) then n = n0 and
 *     M = 2 iff c < 0, else M >= 3.
 * What is not decided (degree above M1_DEG_MAX, n too large for the exact check, or an
 * unlucky prime) is reported as M >= 2, which is still proven. Descartes' rule of signs
 * adds M >= r + 1 for r negative real roots with multiplicity ((1 + t)^3: 4). An upper
 * bound comes from q itself when its coefficients have one sign.
 *
 * Blocks (Corollary 12.3): the product of the blocks' bounds on M. A block whose heads lie
 * on lines has the reduced denominator prod_i q_i(x^{u_i}) (Theorem 5.7), and the bound of
 * a product of such factors (hf_bounds_mlb) is the product over its connected components;
 * on one coordinate the one-variable M above; on more, the best of the vertex count
 * (Lemma 12.1: it bounds M too), the slices along each coordinate (Theorem 12.2) and, on two
 * coordinates, 7 by Lemma 12.7. Any other block counts its vertices. */
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq.h>
#include <flint/fmpz_poly.h>
#include <flint/fmpz_vec.h>
#include <flint/nmod_poly.h>
#include <flint/ulong_extras.h>

#include "bounds/bounds_impl.h"

/* Degrees decided: L's primes go up to m(m - 1) + 1 (for m = 24, 101 primes, L of about
 * 800 bits: a few thousand products modulo q per prime). Above it, M >= 2 only. */
#define M1_DEG_MAX 24
/* Primes used for the modular steps (each is chosen prime to what must stay invertible). */
#define M1_PRIMES 3
/* The exact check of t^n mod q over Q: n at most this, coefficients at most this many bits. */
#define M1_EXACT_N_MAX (1L << 16)
#define M1_EXACT_BITS (1L << 22)

/* The prime powers p^e of L = lcm{k : phi(k) <= B}: for every prime p with p - 1 <= B the
 * largest e with p^(e-1) (p - 1) <= B. pp[n] = p^e, pr[n] = p. */
static hf_err_t m1_prime_powers(long B, ulong **pp, ulong **pr, long *n)
{
    long cap = B + 2;
    *n = 0;
    *pp = hf_malloc((size_t)cap * sizeof **pp);
    *pr = hf_malloc((size_t)cap * sizeof **pr);
    if (!*pp || !*pr) {
        free(*pp);
        free(*pr);
        *pp = *pr = NULL;
        return HF_ERR_NOMEM;
    }
    for (ulong p = 2; p <= (ulong)B + 1; p = n_nextprime(p, 1)) {
        ulong q = p, phi = p - 1;
        while (phi * p <= (ulong)B) {
            phi *= p;
            q *= p;
        }
        (*pp)[*n] = q;
        (*pr)[*n] = p;
        (*n)++;
    }
    return HF_OK;
}

/* g = g^e mod f (e >= 0; g reduced modulo f). */
static void m1_pow_ui(nmod_poly_t g, ulong e, const nmod_poly_t f)
{
    nmod_poly_t r;
    nmod_poly_init_mod(r, f->mod);
    nmod_poly_powmod_ui_binexp(r, g, e, f);
    nmod_poly_swap(g, r);
    nmod_poly_clear(r);
}

/* Bits of the largest numerator coefficient plus those of the denominator. */
static long m1_bits(const fmpq_poly_t a)
{
    long len = fmpq_poly_length(a);
    return len ? labs(_fmpz_vec_max_bits(fmpq_poly_numref(a), len)) +
                     (long)fmpz_bits(fmpq_poly_denref(a))
               : 0;
}

/* The order n_p of t modulo the constants in F_p[t]/(f), given that t^L is a constant
 * there: the product over L's prime powers p^e of the least p^k with
 * (t^(L/p^e))^(p^k) constant (the group is abelian: its p-parts multiply). */
static void m1_order_mod_p(const nmod_poly_t f, const fmpz_t L, const ulong *pp, const ulong *pr,
                           long npp, fmpz_t out)
{
    nmod_poly_t t, g;
    fmpz_t e;
    nmod_poly_init_mod(t, f->mod);
    nmod_poly_init_mod(g, f->mod);
    fmpz_init(e);
    nmod_poly_set_coeff_ui(t, 1, 1);
    nmod_poly_rem(t, t, f);
    fmpz_one(out);
    for (long i = 0; i < npp; i++) {
        fmpz_divexact_ui(e, L, pp[i]);
        nmod_poly_powmod_fmpz_binexp(g, t, e, f);
        while (nmod_poly_degree(g) > 0) {
            m1_pow_ui(g, pr[i], f);
            fmpz_mul_ui(out, out, pr[i]);
        }
    }
    fmpz_clear(e);
    nmod_poly_clear(g);
    nmod_poly_clear(t);
}

/* r = t^n mod q over Q by squaring; 0 when the coefficients grew past M1_EXACT_BITS. */
static int m1_exact_pow(fmpq_poly_t r, ulong n, const fmpq_poly_t q)
{
    fmpq_poly_t b;
    int ok = 1;
    fmpq_poly_init(b);
    fmpq_poly_one(r);
    fmpq_poly_set_coeff_si(b, 1, 1);
    fmpq_poly_rem(b, b, q);
    for (; n && ok; n >>= 1) {
        if (n & 1) {
            fmpq_poly_mul(r, r, b);
            fmpq_poly_rem(r, r, q);
        }
        if (n > 1) {
            fmpq_poly_mul(b, b, b);
            fmpq_poly_rem(b, b, q);
        }
        ok = m1_bits(b) <= M1_EXACT_BITS && m1_bits(r) <= M1_EXACT_BITS;
    }
    fmpq_poly_clear(b);
    return ok;
}

/* The binomial step for a squarefree q of degree 1..M1_DEG_MAX with q(0) != 0: *lb = 2 and
 * *binomial = 1 when a positive binomial multiple is proven, *lb = 3 when none exists,
 * *lb = 2 (undecided) otherwise. */
static hf_err_t m1_binomial(const fmpq_poly_t q, long *lb, int *binomial, const char **why)
{
    hf_err_t err = HF_OK;
    long m = fmpq_poly_degree(q), npp = 0;
    ulong *pp = NULL, *pr = NULL, p = UWORD(1) << 62;
    const fmpz *num = fmpq_poly_numref(q);
    fmpz_t L, n, np;
    fmpq_poly_t r;
    fmpq_t c;
    nmod_poly_t f, t, x;
    fmpz_init(L);
    fmpz_init(n);
    fmpz_init(np);
    fmpq_poly_init(r);
    fmpq_init(c);
    *lb = 2;
    *binomial = 0;
    *why = "undecided: a binomial multiple is neither found nor excluded";
    HF_CHECK(err, m1_prime_powers(m * (m - 1), &pp, &pr, &npp), done);
    fmpz_one(L);
    for (long i = 0; i < npp; i++)
        fmpz_mul_ui(L, L, pp[i]);
    fmpz_one(n);
    for (int k = 0; k < M1_PRIMES; k++) {
        /* a prime keeping the degree, the constant term and the denominator (num is the
         * numerator of q over its positive denominator: q's value at p is num/den) */
        do
            p = n_nextprime(p, 1);
        while (fmpz_fdiv_ui(num + m, p) == 0 || fmpz_fdiv_ui(num, p) == 0 ||
               fmpz_fdiv_ui(fmpq_poly_denref(q), p) == 0);
        nmod_poly_init(f, p);
        nmod_poly_init(t, p);
        nmod_poly_init(x, p);
        for (long i = 0; i <= m; i++)
            nmod_poly_set_coeff_ui(f, i, fmpz_fdiv_ui(num + i, p));
        nmod_poly_set_coeff_ui(t, 1, 1);
        nmod_poly_rem(t, t, f);
        nmod_poly_powmod_fmpz_binexp(x, t, L, f);
        int constant = nmod_poly_degree(x) <= 0;
        if (constant)
            m1_order_mod_p(f, L, pp, pr, npp, np);
        nmod_poly_clear(x);
        nmod_poly_clear(t);
        nmod_poly_clear(f);
        if (!constant) { /* t^L is not constant even modulo p, so not over Q: no n works */
            *lb = 3;
            *why = "no power of t is a constant modulo q (shown modulo a prime)";
            goto done;
        }
        fmpz_lcm(n, n, np); /* each n_p divides n0 when n0 exists */
    }
    /* n divides n0 if n0 exists; t^n mod q constant over Q makes n itself a member, so
     * n = n0 and the constant is c0 */
    if (fmpz_cmp_si(n, M1_EXACT_N_MAX) > 0 || !m1_exact_pow(r, fmpz_get_ui(n), q))
        goto done;
    if (fmpq_poly_degree(r) > 0)
        goto done;
    fmpq_poly_get_coeff_fmpq(c, r, 0);
    if (fmpq_sgn(c) < 0) {
        *binomial = 1;
        *why = "t^n0 is a negative constant modulo q: a binomial multiple with positive "
               "coefficients";
    } else {
        *lb = 3;
        *why = "t^n0 is a positive constant modulo q: no binomial multiple has positive "
               "coefficients";
    }
done:
    free(pr);
    free(pp);
    fmpq_clear(c);
    fmpq_poly_clear(r);
    fmpz_clear(np);
    fmpz_clear(n);
    fmpz_clear(L);
    return err;
}

hf_err_t hf_bounds_m1(const fmpq_poly_t q_in, long *lb, long *ub, const char **why)
{
    hf_err_t err = HF_OK;
    fmpq_poly_t q;
    long v = 0, terms = 0, roots = 0;
    int pos = 0, neg = 0, binomial = 0;
    fmpz_poly_t z;
    *lb = 1;
    *ub = 0;
    *why = "";
    if (fmpq_poly_is_zero(q_in))
        return hf_error(HF_ERR_INTERNAL, "M of the zero polynomial");
    fmpq_poly_init(q);
    while (fmpz_is_zero(fmpq_poly_numref(q_in) + v))
        v++;
    fmpq_poly_shift_right(q, q_in, v); /* q(0) != 0; a power of t is a unit */
    for (long i = 0; i < fmpq_poly_length(q); i++) {
        int s = fmpz_sgn(fmpq_poly_numref(q) + i);
        terms += s != 0;
        pos |= s > 0;
        neg |= s < 0;
    }
    if (!(pos && neg))
        *ub = terms; /* q or -q is itself a positive multiple */
    if (fmpq_poly_degree(q) == 0) {
        *lb = *ub = 1;
        *why = "a monomial";
        goto done;
    }
    *lb = 2; /* a multiple of a non-unit has at least two terms */
    fmpz_poly_init(z);
    fmpq_poly_get_numerator(z, q);
    roots = hf_bounds_negative_roots(z);
    fmpz_poly_clear(z);
    if (!fmpq_poly_is_squarefree(q)) {
        *lb = 3;
        *why = "a repeated root: a binomial a + b t^n (a b != 0) has simple roots";
    } else if (fmpq_poly_degree(q) > M1_DEG_MAX) {
        *why = "undecided: degree above the decided range";
    } else {
        HF_CHECK(err, m1_binomial(q, lb, &binomial, why), done);
        if (binomial)
            *ub = 2;
    }
    if (roots + 1 > *lb) { /* Descartes: C(-t) has those roots, hence as many sign changes */
        *lb = roots + 1;
        *why = "Descartes' rule of signs: a positive multiple has at least the negative real "
               "roots plus one terms";
    }
done:
    fmpq_poly_clear(q);
    return err;
}

/* ------------------------------------------------------------------ products of line factors */

/* A lower bound on M of F_K = the product of the line factors whose coordinates lie in K
 * (a bit mask), by the rules of docs/math.md §12 (hf_bounds_mlb_t). */
struct hf_bounds_mlb_s {
    hf_bounds_lines_t L;
    hf_bounds_arr_t *arr;     /* the caller's arrangement memo (vertex counts) */
    hf_bounds_bytemap_t memo; /* component mask -> bound */
    long states;              /* components evaluated (memo misses) */
};

/* Components larger than this, or met after MLB_STATES_MAX others, count their vertices
 * only (the slices over each coordinate are skipped: only weaker, still proven). */
#define MLB_SLICE_COORDS_MAX 64
#define MLB_STATES_MAX 20000L
/* Sliced components count their vertices too up to this many coordinates. */
#define MLB_VERTEX_COORDS_MAX 12
/* Entries remembered (masks K met). */
#define MLB_MEMO_MAX 400000L

/* p = the product over the factors i with mask_i inside K and u_i[y] != 0 of q_i(t^{u_i[y]}):
 * B(1, y) of Theorem 12.2 with every other variable set to 1 (a negative exponent is turned
 * into a positive one by a power of t, a unit). */
static void mlb_slice_poly(const hf_bounds_lines_t *L, uint64_t K, int y, fmpq_poly_t p)
{
    fmpq_poly_t f;
    fmpq_t c;
    fmpq_poly_init(f);
    fmpq_init(c);
    fmpq_poly_one(p);
    for (long i = 0; i < L->m; i++) {
        int64_t k = L->u[i * L->d + y];
        if ((L->mask[i] & ~K) || !k)
            continue;
        long deg = fmpq_poly_degree(L->q + i), step = (long)(k > 0 ? k : -k);
        fmpq_poly_zero(f);
        for (long j = 0; j <= deg; j++) {
            fmpq_poly_get_coeff_fmpq(c, L->q + i, j);
            fmpq_poly_set_coeff_fmpq(f, (k > 0 ? j : deg - j) * step, c);
        }
        fmpq_poly_mul(p, p, f);
    }
    fmpq_clear(c);
    fmpq_poly_clear(f);
}

/* The connected component of the factors inside K that holds coordinate j (a mask). */
static uint64_t mlb_component_of(const hf_bounds_lines_t *L, uint64_t K, int j)
{
    uint64_t comp = UINT64_C(1) << j, before = 0;
    while (comp != before) {
        before = comp;
        for (long i = 0; i < L->m; i++)
            if (!(L->mask[i] & ~K) && (L->mask[i] & comp))
                comp |= L->mask[i];
    }
    return comp;
}

static hf_err_t mlb_rec(hf_bounds_mlb_t *c, uint64_t K, fmpz_t out);

/* One connected component K (at least two coordinates): the best of its vertex count, the
 * slices over each coordinate (Theorem 12.2) and, on two coordinates, Lemma 12.7. */
static hf_err_t mlb_component(hf_bounds_mlb_t *c, uint64_t K, fmpz_t out)
{
    hf_err_t err = HF_OK;
    const hf_bounds_lines_t *L = &c->L;
    int d = L->d, known = 0, nk = __builtin_popcountll(K);
    long n = 0, N[HF_D_MAX] = {0};
    int64_t *gens = hf_malloc((size_t)(L->m ? L->m : 1) * d * sizeof *gens);
    fmpq_poly_t p;
    fmpz_t a;
    fmpq_poly_init(p);
    fmpz_init(a);
    fmpz_one(out);
    if (!gens) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    /* the vertex count: Newt(F_K) is the zonotope of the factors' directions (Theorem 5.7);
     * skipped on large components when they are sliced (it costs most of the time there,
     * and leaving out a candidate of a maximum only weakens it) */
    int slice = nk <= MLB_SLICE_COORDS_MAX && ++c->states <= MLB_STATES_MAX;
    if (!slice || nk <= MLB_VERTEX_COORDS_MAX) {
        for (long i = 0; i < L->m; i++)
            if (!(L->mask[i] & ~K))
                memcpy(gens + d * n++, L->u + i * d, (size_t)d * sizeof *gens);
        HF_CHECK(err, hf_bounds_arr_regions(c->arr, gens, n, d, a, &known), done);
        if (known)
            fmpz_set(out, a);
    }
    if (!slice)
        goto done;
    /* slices along y: F_K = A(x) B(x, y), A the factors without y (Theorem 12.2) */
    for (uint64_t rest = K; rest; rest &= rest - 1) {
        int y = __builtin_ctzll(rest);
        const char *why;
        long ub;
        mlb_slice_poly(L, K, y, p);
        HF_CHECK(err, hf_bounds_m1(p, N + y, &ub, &why), done);
        HF_CHECK(err, mlb_rec(c, K & ~(UINT64_C(1) << y), a), done);
        fmpz_mul_si(a, a, N[y]);
        if (fmpz_cmp(a, out) > 0)
            fmpz_set(out, a);
    }
    /* two coordinates: a factor on each alone and at least three slices both ways give 7
     * (Lemma 12.7) */
    if (nk == 2 && fmpz_cmp_si(out, 7) < 0) {
        int ya = __builtin_ctzll(K), yb = 63 - __builtin_clzll(K), alone_a = 0, alone_b = 0;
        for (long i = 0; i < L->m; i++) {
            alone_a |= L->mask[i] == UINT64_C(1) << ya;
            alone_b |= L->mask[i] == UINT64_C(1) << yb;
        }
        if (alone_a && alone_b && N[ya] >= 3 && N[yb] >= 3)
            fmpz_set_si(out, 7);
    }
done:
    fmpz_clear(a);
    fmpq_poly_clear(p);
    free(gens);
    return err;
}

/* The bound for the product F_K of the factors inside K: 1 when there is none; the product
 * over connected components (Theorem 12.2 with disjoint variables); on one coordinate the
 * one-variable M of the factor there (Theorem 12.4); else mlb_component. Remembered by K. */
static hf_err_t mlb_rec(hf_bounds_mlb_t *c, uint64_t K, fmpz_t out)
{
    hf_err_t err = HF_OK;
    const hf_bounds_lines_t *L = &c->L;
    uint64_t U = 0;
    fmpz_t v;
    fmpz_one(out);
    const hf_bounds_bytemap_entry_t *e =
        hf_bounds_bytemap_get(&c->memo, (const void *)&K, sizeof K);
    if (e) {
        fmpz_set(out, &e->val);
        return HF_OK;
    }
    for (long i = 0; i < L->m; i++)
        if (!(L->mask[i] & ~K))
            U |= L->mask[i];
    if (!U)
        return HF_OK;
    fmpz_init(v);
    uint64_t first = mlb_component_of(L, K, __builtin_ctzll(U));
    if (first != U) { /* several components: their product */
        for (uint64_t rest = U; rest && err == HF_OK;) {
            uint64_t comp = mlb_component_of(L, K, __builtin_ctzll(rest));
            rest &= ~comp;
            err = mlb_rec(c, comp, v);
            fmpz_mul(out, out, v);
        }
    } else if (__builtin_popcountll(U) == 1) { /* one coordinate: one direction, one factor */
        fmpq_poly_t p;
        long lb, ub;
        const char *why;
        fmpq_poly_init(p);
        mlb_slice_poly(L, U, __builtin_ctzll(U), p);
        err = hf_bounds_m1(p, &lb, &ub, &why);
        fmpq_poly_clear(p);
        fmpz_set_si(out, lb);
    } else {
        err = mlb_component(c, U, out);
    }
    if (err == HF_OK)
        err = hf_bounds_bytemap_put(&c->memo, (const void *)&K, sizeof K, out);
    fmpz_clear(v);
    return err;
}

hf_err_t hf_bounds_mlb_create(const hf_target_t *t, const int *heads, int nh, hf_bounds_arr_t *arr,
                              hf_bounds_mlb_t **out)
{
    int all = 0;
    hf_bounds_mlb_t *c = hf_malloc(sizeof *c);
    *out = NULL;
    if (!c)
        return HF_ERR_NOMEM;
    hf_bounds_lines_init(&c->L, t->d);
    hf_bounds_bytemap_init(&c->memo, MLB_MEMO_MAX);
    c->arr = arr;
    c->states = 0;
    hf_err_t err = hf_bounds_line_factors(t, heads, nh, &all, &c->L);
    if (err == HF_OK && all)
        *out = c;
    else
        hf_bounds_mlb_destroy(&c);
    return err;
}

void hf_bounds_mlb_destroy(hf_bounds_mlb_t **c)
{
    if (!*c)
        return;
    hf_bounds_bytemap_clear(&(*c)->memo);
    hf_bounds_lines_clear(&(*c)->L);
    free(*c);
    *c = NULL;
}

hf_err_t hf_bounds_mlb(hf_bounds_mlb_t *c, uint64_t K, fmpz_t out)
{
    return mlb_rec(c, K, out);
}

hf_err_t hf_bounds_mlb_slice(hf_bounds_mlb_t *c, int y, long *n)
{
    fmpq_poly_t p;
    long ub;
    const char *why;
    uint64_t all = 0;
    for (long i = 0; i < c->L.m; i++)
        all |= c->L.mask[i];
    *n = 1;
    if (!(all >> y & 1))
        return HF_OK;
    fmpq_poly_init(p);
    mlb_slice_poly(&c->L, all, y, p);
    hf_err_t err = hf_bounds_m1(p, n, &ub, &why);
    fmpq_poly_clear(p);
    return err;
}

uint64_t hf_bounds_mlb_coords(const hf_bounds_mlb_t *c)
{
    uint64_t all = 0;
    for (long i = 0; i < c->L.m; i++)
        all |= c->L.mask[i];
    return all;
}

/* ------------------------------------------------------------------ blocks */

hf_err_t hf_bounds_slices(const hf_target_t *t, hf_bounds_arr_t *arr, const fmpz_t count, int known,
                          fmpz_t slices)
{
    hf_err_t err = HF_OK;
    int H = t->nheads, nb = 0;
    uint64_t *used = hf_malloc((size_t)(H ? H : 1) * sizeof *used);
    int *block = hf_malloc((size_t)(H ? H : 1) * sizeof *block);
    int *members = hf_malloc((size_t)(H ? H : 1) * sizeof *members);
    hf_bounds_mlb_t *c = NULL;
    fmpz_t mprod, vprod, v, w;
    fmpz_init(mprod);
    fmpz_init(vprod);
    fmpz_init(v);
    fmpz_init(w);
    fmpz_one(mprod);
    fmpz_one(vprod);
    fmpz_one(slices);
    if (!used || !block || !members) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    hf_bounds_blocks(t, used, block, &nb);
    for (int b = 0; b < nb; b++) {
        int nm = 0, vknown = 0;
        for (int h = 0; h < H; h++)
            if (block[h] == b)
                members[nm++] = h;
        HF_CHECK(err, hf_bounds_mlb_create(t, members, nm, arr, &c), cleanup);
        if (!c) /* not on lines: its vertex count stays in count */
            continue;
        /* the block's bound on M (at least its vertex count, Lemma 12.1 (ii)), and its
         * factor of the vertex count (to divide out) */
        HF_CHECK(err, hf_bounds_mlb(c, hf_bounds_mlb_coords(c), w), cleanup);
        HF_CHECK(err, hf_bounds_arr_regions(arr, c->L.u, c->L.m, t->d, v, &vknown), cleanup);
        if (!vknown) {
            known = 0;
        } else {
            fmpz_mul(vprod, vprod, v);
            if (fmpz_cmp(v, w) > 0)
                fmpz_set(w, v);
        }
        fmpz_mul(mprod, mprod, w);
        hf_bounds_mlb_destroy(&c);
    }
    /* the other blocks' vertex counts: the whole count without the line blocks' factors
     * (Lemma 5.8: counts multiply over blocks) */
    if (known && !fmpz_is_zero(vprod) && fmpz_divisible(count, vprod)) {
        fmpz_divexact(slices, count, vprod);
        fmpz_mul(slices, slices, mprod);
    } else {
        fmpz_set(slices, mprod);
    }
cleanup:
    hf_bounds_mlb_destroy(&c);
    fmpz_clear(w);
    fmpz_clear(v);
    fmpz_clear(vprod);
    fmpz_clear(mprod);
    free(members);
    free(block);
    free(used);
    return err;
}
