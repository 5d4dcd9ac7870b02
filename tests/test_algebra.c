/* Tests of the algebra module: P/Q of hand-built targets, the unique normal form,
 * cancellation, constants, vector values, input errors, a seeded random property test
 * that checks P/Q against the heads by exact cross-multiplication and by evaluation, the
 * factor construction against the gcd construction it replaced (identical fractions on
 * every family, data file and random target, a planted unreduced answer caught) and the
 * memory estimate against the fractions built. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq_mpoly.h>
#include <flint/fmpz_vec.h>
#include <stdio.h>

#include "headfuse/algebra.h"
#include "headfuse/stop.h"
#include "algebra/algebra_impl.h"
#include "families.h"
#include "unit.h"

/* ------------------------------------------------------------ builders */

/* sigma(q_j) in dimension d: key 0 value 0, key e_j value 1, weights 1. */
static void add_sigmoid(hf_target_t *t, int j)
{
    hf_head_t h;
    int64_t k[HF_D_MAX] = {0};
    long zero = 0, one = 1;
    hf_head_init(&h, t->d, 1);
    fam_atom_q(&h, k, 1, 1, &zero, 1);
    k[j] = 1;
    fam_atom_q(&h, k, 1, 1, &one, 1);
    CU_ASSERT_FATAL(hf_target_add_head(t, &h) == HF_OK);
    hf_head_clear(&h);
}

static void make_wd(hf_target_t *t, int d)
{
    CU_ASSERT_FATAL(hf_target_init(t, "wd", d, 1) == HF_OK);
    for (int j = 0; j < d; j++)
        add_sigmoid(t, j);
}

/* 1 iff A equals the polynomial written in str (variables x, y, z, w). */
static int poly_is(const fmpz_mpoly_t A, const char *str, const fmpz_mpoly_ctx_t ctx)
{
    const char *vars[] = {"x", "y", "z", "w"};
    fmpz_mpoly_t B;
    fmpz_mpoly_init(B, ctx);
    int ok = fmpz_mpoly_set_str_pretty(B, str, vars, ctx) == 0 && fmpz_mpoly_equal(A, B, ctx);
    if (!ok) {
        char *s = fmpz_mpoly_get_str_pretty(A, vars, ctx);
        fprintf(stderr, "\n  got %s, expected %s\n", s, str);
        flint_free(s);
    }
    fmpz_mpoly_clear(B, ctx);
    return ok;
}

static hf_err_t fraction_of(hf_fraction_t *f, const hf_target_t *t)
{
    hf_err_t err = hf_fraction_from_target(f, t);
    if (err != HF_OK)
        fprintf(stderr, "\n  hf_fraction_from_target: %s\n", hf_error_msg());
    return err;
}

/* ------------------------------------------------------------ fixed cases */

static void test_w1(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    make_wd(&t, 1);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(f.d == 1 && f.dv == 1);
    CU_ASSERT(poly_is(f.P, "x", f.ctx));
    CU_ASSERT(poly_is(f.Q, "1+x", f.ctx));
    CU_ASSERT(!hf_fraction_is_constant(&f));
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

static void test_w2(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    make_wd(&t, 2);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(poly_is(f.P, "x+y+2*x*y", f.ctx));
    CU_ASSERT(poly_is(f.Q, "(1+x)*(1+y)", f.ctx));
    CU_ASSERT(!hf_fraction_is_constant(&f));
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

/* sigma(q) + 1/(1+x) == 1: everything cancels. */
static void test_cancel_to_constant(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_head_t h;
    int64_t k0 = 0, k1 = 1;
    long one = 1, zero = 0;
    CU_ASSERT_FATAL(hf_target_init(&t, "cancel", 1, 1) == HF_OK);
    add_sigmoid(&t, 0);
    hf_head_init(&h, 1, 1);
    fam_atom_q(&h, &k0, 1, 1, &one, 1);
    fam_atom_q(&h, &k1, 1, 1, &zero, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(poly_is(f.P, "1", f.ctx));
    CU_ASSERT(poly_is(f.Q, "1", f.ctx));
    CU_ASSERT(hf_fraction_is_constant(&f));
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* x/(1+x) + (2+3x)/(1+x) = (2+4x)/(1+x), not over (1+x)^2. */
static void test_same_denominator(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_head_t h;
    int64_t k0 = 0, k1 = 1;
    long two = 2, three = 3;
    CU_ASSERT_FATAL(hf_target_init(&t, "samedenom", 1, 1) == HF_OK);
    add_sigmoid(&t, 0);
    hf_head_init(&h, 1, 1);
    fam_atom_q(&h, &k0, 1, 1, &two, 1);
    fam_atom_q(&h, &k1, 1, 1, &three, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(poly_is(f.P, "2+4*x", f.ctx));
    CU_ASSERT(poly_is(f.Q, "1+x", f.ctx));
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* Weights 1, 3/2 and values 0, -1/2: (-3/4 x) / (1 + 3/2 x) = -3x / (4 + 6x). */
static void test_rational_weights(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_head_t h;
    int64_t k0 = 0, k1 = 1;
    long zero = 0, mhalf = -1;
    CU_ASSERT_FATAL(hf_target_init(&t, "rational", 1, 1) == HF_OK);
    hf_head_init(&h, 1, 1);
    fam_atom_q(&h, &k0, 1, 1, &zero, 1);
    fam_atom_q(&h, &k1, 3, 2, &mhalf, 2);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(poly_is(f.P, "-3*x", f.ctx));
    CU_ASSERT(poly_is(f.Q, "4+6*x", f.ctx));
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* dv = 2: heads x/(1+x) -> (0,1),(1,0) and (0,0),(1,1). Sum: (2x, 1+x)/(1+x); the joint
 * gcd is 1 although P_2 == Q. */
static void test_dv2(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_head_t h;
    int64_t k0 = 0, k1 = 1;
    long v01[2] = {0, 1}, v10[2] = {1, 0}, v00[2] = {0, 0}, v11[2] = {1, 1};
    CU_ASSERT_FATAL(hf_target_init(&t, "dv2", 1, 2) == HF_OK);
    hf_head_init(&h, 1, 2);
    fam_atom_q(&h, &k0, 1, 1, v01, 1);
    fam_atom_q(&h, &k1, 1, 1, v10, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    hf_head_init(&h, 1, 2);
    fam_atom_q(&h, &k0, 1, 1, v00, 1);
    fam_atom_q(&h, &k1, 1, 1, v11, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(f.dv == 2);
    CU_ASSERT(poly_is(f.P + 0, "2*x", f.ctx));
    CU_ASSERT(poly_is(f.P + 1, "1+x", f.ctx));
    CU_ASSERT(poly_is(f.Q, "1+x", f.ctx));
    CU_ASSERT(!hf_fraction_is_constant(&f));
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* Constant vector target (2, -1): P = (2, -1), Q = 1, constant. */
static void test_constant_vector(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_head_t h;
    int64_t k0 = 3, k1 = 7;
    long v[2] = {2, -1};
    CU_ASSERT_FATAL(hf_target_init(&t, "const", 1, 2) == HF_OK);
    hf_head_init(&h, 1, 2);
    fam_atom_q(&h, &k0, 1, 3, v, 1);
    fam_atom_q(&h, &k1, 5, 1, v, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(poly_is(f.P + 0, "2", f.ctx));
    CU_ASSERT(poly_is(f.P + 1, "-1", f.ctx));
    CU_ASSERT(poly_is(f.Q, "1", f.ctx));
    CU_ASSERT(hf_fraction_is_constant(&f));
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* The same function written differently gives the identical fraction: heads translated,
 * reordered, all weights of a head scaled, an atom split in two with the same key. */
static void test_normal_form_unique(void)
{
    hf_target_t a, b;
    hf_fraction_t fa, fb;
    hf_fraction_init(&fa);
    hf_fraction_init(&fb);
    hf_head_t h;
    long zero = 0, one = 1;
    make_wd(&a, 2);
    CU_ASSERT_FATAL(hf_target_init(&b, "wd2-other", 2, 1) == HF_OK);
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, (int64_t[]){-4, 9}, 5, 1, &zero, 1); /* sigma(q2), translated, weights x5 */
    fam_atom_q(&h, (int64_t[]){-4, 10}, 2, 1, &one, 1);
    fam_atom_q(&h, (int64_t[]){-4, 10}, 3, 1, &one, 1); /* same key twice: merged */
    CU_ASSERT_FATAL(hf_target_add_head(&b, &h) == HF_OK);
    hf_head_clear(&h);
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, (int64_t[]){8, -3}, 1, 7, &one, 1); /* sigma(q1), translated, weights /7 */
    fam_atom_q(&h, (int64_t[]){7, -3}, 1, 7, &zero, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&b, &h) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&fa, &a) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&fb, &b) == HF_OK);
    CU_ASSERT(hf_fraction_equal(&fa, &fb));
    hf_fraction_clear(&fb);
    hf_fraction_clear(&fa);
    hf_head_clear(&h);
    hf_target_clear(&b);
    hf_target_clear(&a);

    /* and different functions differ */
    make_wd(&a, 2);
    make_wd(&b, 2);
    add_sigmoid(&b, 0);
    CU_ASSERT_FATAL(fraction_of(&fa, &a) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&fb, &b) == HF_OK);
    CU_ASSERT(!hf_fraction_equal(&fa, &fb));
    hf_fraction_clear(&fb);
    hf_fraction_clear(&fa);
    hf_target_clear(&b);
    hf_target_clear(&a);
}

/* "bad.json": one head whose second atom has weight 0. */
static void make_bad_weight(hf_target_t *t)
{
    hf_head_t h;
    int64_t k0 = 0, k1 = 1;
    long zero = 0;
    CU_ASSERT_FATAL(hf_target_init(t, "bad.json", 1, 1) == HF_OK);
    hf_head_init(&h, 1, 1);
    fam_atom_q(&h, &k0, 1, 1, &zero, 1);
    fam_atom_q(&h, &k1, 1, 1, &zero, 1);
    fmpq_zero(h.weights + 1);
    CU_ASSERT_FATAL(hf_target_add_head(t, &h) == HF_OK);
    hf_head_clear(&h);
}

static void test_limits_and_errors(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    hf_head_t h;
    int64_t k0 = 0;
    long zero = 0;

    /* No ceiling on the product of head sizes any more: two heads of 1024 atoms (all on
     * one key, so P/Q is tiny) and one of 2 atoms, 2^21, once refused, now build. */
    CU_ASSERT_FATAL(hf_target_init(&t, "pastlimit", 1, 1) == HF_OK);
    hf_head_init(&h, 1, 1);
    for (int i = 0; i < 1024; i++)
        fam_atom_q(&h, &k0, 1, 1, &zero, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(hf_head_resize(&h, 2) == HF_OK);
    h.keys[1] = 1;
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(poly_is(f.P, "0", f.ctx) && poly_is(f.Q, "1", f.ctx));
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);

    make_bad_weight(&t);
    CU_ASSERT(hf_fraction_from_target(&f, &t) == HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "bad.json: heads[0]") != NULL);
    CU_ASSERT(strstr(hf_error_msg(), "weight") != NULL);
    hf_fraction_clear(&f);
    hf_target_clear(&t);

    /* no heads: the zero function */
    CU_ASSERT_FATAL(hf_target_init(&t, "empty", 2, 1) == HF_OK);
    CU_ASSERT(hf_fraction_from_target(&f, &t) == HF_OK);
    CU_ASSERT(f.P->length == 0);
    CU_ASSERT(poly_is(f.Q, "1", f.ctx));
    CU_ASSERT(hf_fraction_is_constant(&f));
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

/* ------------------------------------------------------------ random property test */

/* x^e for the head's keys shifted to minimum 0, as an fmpq_mpoly term list. Builds
 * D_h and N_h,j with rational coefficients directly (no denominator clearing). */
static void head_nd_q(fmpq_mpoly_struct *N, fmpq_mpoly_t D, const hf_head_t *h,
                      const fmpq_mpoly_ctx_t ctx)
{
    int d = h->d;
    ulong e[HF_D_MAX];
    fmpq_t cv;
    fmpq_init(cv);
    fmpq_mpoly_zero(D, ctx);
    for (int j = 0; j < h->dv; j++)
        fmpq_mpoly_zero(N + j, ctx);
    for (long i = 0; i < h->natoms; i++) {
        for (int a = 0; a < d; a++) {
            int64_t mn = h->keys[a];
            for (long l = 0; l < h->natoms; l++)
                if (h->keys[l * d + a] < mn)
                    mn = h->keys[l * d + a];
            e[a] = (ulong)(h->keys[i * d + a] - mn);
        }
        fmpq_mpoly_push_term_fmpq_ui(D, h->weights + i, e, ctx);
        for (int j = 0; j < h->dv; j++) {
            fmpq_mul(cv, h->weights + i, h->values + i * h->dv + j);
            fmpq_mpoly_push_term_fmpq_ui(N + j, cv, e, ctx);
        }
    }
    fmpq_mpoly_sort_terms(D, ctx);
    fmpq_mpoly_combine_like_terms(D, ctx);
    for (int j = 0; j < h->dv; j++) {
        fmpq_mpoly_sort_terms(N + j, ctx);
        fmpq_mpoly_combine_like_terms(N + j, ctx);
    }
    fmpq_clear(cv);
}

static void to_q(fmpq_mpoly_t B, const fmpz_mpoly_t A, const fmpz_mpoly_ctx_t actx,
                 const fmpq_mpoly_ctx_t ctx, int d)
{
    ulong e[HF_D_MAX];
    (void)d;
    fmpq_mpoly_zero(B, ctx);
    for (slong i = 0; i < A->length; i++) {
        fmpz_mpoly_get_term_exp_ui(e, A, i, actx);
        fmpq_mpoly_push_term_fmpz_ui(B, A->coeffs + i, e, ctx);
    }
    fmpq_mpoly_sort_terms(B, ctx);
    fmpq_mpoly_combine_like_terms(B, ctx);
}

/* Exact: P_j * prod D_h == Q * sum_h N_h,j prod_{g != h} D_g as polynomials. Shifting a
 * head's keys multiplies its N_h and D_h by the same monomial, and the normal form divides
 * P and Q by the same factor, so both sides are the same rational function times
 * polynomials: equal functions, hence identical polynomials. */
static int fraction_matches_heads(const hf_fraction_t *f, const hf_target_t *t)
{
    int d = t->d, dv = t->dv, ok = 1;
    fmpq_mpoly_ctx_t ctx;
    fmpq_mpoly_t Dall, D, T, L, R, Pq, Qq;
    fmpq_mpoly_struct Nall[HF_DV_MAX], N[HF_DV_MAX];
    fmpq_mpoly_ctx_init(ctx, d, ORD_LEX);
    fmpq_mpoly_init(Dall, ctx);
    fmpq_mpoly_init(D, ctx);
    fmpq_mpoly_init(T, ctx);
    fmpq_mpoly_init(L, ctx);
    fmpq_mpoly_init(R, ctx);
    fmpq_mpoly_init(Pq, ctx);
    fmpq_mpoly_init(Qq, ctx);
    for (int j = 0; j < dv; j++) {
        fmpq_mpoly_init(Nall + j, ctx);
        fmpq_mpoly_init(N + j, ctx);
    }
    fmpq_mpoly_one(Dall, ctx);
    for (int h = 0; h < t->nheads; h++) {
        head_nd_q(N, D, t->heads + h, ctx);
        for (int j = 0; j < dv; j++) {
            fmpq_mpoly_mul(Nall + j, Nall + j, D, ctx);
            fmpq_mpoly_mul(T, N + j, Dall, ctx);
            fmpq_mpoly_add(Nall + j, Nall + j, T, ctx);
        }
        fmpq_mpoly_mul(Dall, Dall, D, ctx);
    }
    to_q(Qq, f->Q, f->ctx, ctx, d);
    for (int j = 0; j < dv && ok; j++) {
        to_q(Pq, f->P + j, f->ctx, ctx, d);
        fmpq_mpoly_mul(L, Pq, Dall, ctx);
        fmpq_mpoly_mul(R, Qq, Nall + j, ctx);
        ok = fmpq_mpoly_equal(L, R, ctx);
    }
    for (int j = 0; j < dv; j++) {
        fmpq_mpoly_clear(N + j, ctx);
        fmpq_mpoly_clear(Nall + j, ctx);
    }
    fmpq_mpoly_clear(Qq, ctx);
    fmpq_mpoly_clear(Pq, ctx);
    fmpq_mpoly_clear(R, ctx);
    fmpq_mpoly_clear(L, ctx);
    fmpq_mpoly_clear(T, ctx);
    fmpq_mpoly_clear(D, ctx);
    fmpq_mpoly_clear(Dall, ctx);
    fmpq_mpoly_ctx_clear(ctx);
    return ok;
}

/* P/Q at x = exp(q) in double precision. */
static double eval_poly(const fmpz_mpoly_t A, const fmpz_mpoly_ctx_t ctx, const double *q, int d)
{
    ulong e[HF_D_MAX];
    double s = 0;
    for (slong i = 0; i < A->length; i++) {
        fmpz_mpoly_get_term_exp_ui(e, A, i, ctx);
        double l = 0;
        for (int a = 0; a < d; a++)
            l += (double)e[a] * q[a];
        s += fmpz_get_d(A->coeffs + i) * exp(l);
    }
    return s;
}

/* Structural properties of the normal form. */
static int normal_form_ok(const hf_fraction_t *f)
{
    int ok = 1;
    fmpz_mpoly_t G;
    fmpz_t c, s;
    fmpz_mpoly_init(G, f->ctx);
    fmpz_init(c);
    fmpz_init(s);
    fmpz_mpoly_set(G, f->Q, f->ctx);
    for (int j = 0; j < f->dv; j++)
        fmpz_mpoly_gcd(G, G, f->P + j, f->ctx);
    ok = ok && fmpz_mpoly_is_one(G, f->ctx); /* coprime, so no common monomial either */
    for (int j = 0; j <= f->dv; j++) {
        const fmpz_mpoly_struct *A = j < f->dv ? f->P + j : f->Q;
        for (slong i = 0; i < A->length; i++)
            fmpz_gcd(c, c, A->coeffs + i);
    }
    ok = ok && fmpz_is_one(c);
    _fmpz_vec_sum(s, f->Q->coeffs, f->Q->length);
    ok = ok && fmpz_sgn(s) > 0;
    fmpz_clear(s);
    fmpz_clear(c);
    fmpz_mpoly_clear(G, f->ctx);
    return ok;
}

static void test_random_targets(void)
{
    fam_rng_state = 12345;
    for (int trial = 0; trial < 150; trial++) {
        int d = (int)fam_rnd(1, 3), dv = (int)fam_rnd(1, 2), nh = (int)fam_rnd(1, 3);
        hf_target_t t;
        hf_fraction_t f;
        hf_fraction_init(&f);
        CU_ASSERT_FATAL(hf_target_init(&t, "random", d, dv) == HF_OK);
        for (int hh = 0; hh < nh; hh++) {
            hf_head_t h;
            hf_head_init(&h, d, dv);
            long na = fam_rnd(1, 3);
            for (long i = 0; i < na; i++) {
                int64_t k[3];
                long v[2];
                for (int a = 0; a < d; a++)
                    k[a] = fam_rnd(-1, 2);
                for (int j = 0; j < dv; j++)
                    v[j] = fam_rnd(-3, 3);
                fam_atom_q(&h, k, fam_rnd(1, 4), fam_rnd(1, 3), v, fam_rnd(1, 2));
            }
            CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
            hf_head_clear(&h);
        }
        CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
        CU_ASSERT(normal_form_ok(&f));
        CU_ASSERT(fraction_matches_heads(&f, &t));
        for (int s = 0; s < 3; s++) {
            double q[3], want[2] = {0, 0}, out[2];
            for (int a = 0; a < d; a++)
                q[a] = (double)fam_rnd(-200, 200) / 100.0;
            for (int hh = 0; hh < t.nheads; hh++) {
                hf_head_eval(t.heads + hh, q, out);
                for (int j = 0; j < dv; j++)
                    want[j] += out[j];
            }
            double qv = eval_poly(f.Q, f.ctx, q, d);
            for (int j = 0; j < dv; j++) {
                double got = eval_poly(f.P + j, f.ctx, q, d) / qv;
                CU_ASSERT(fabs(got - want[j]) <= 1e-9 * (1 + fabs(want[j])));
            }
        }
        hf_fraction_clear(&f);
        hf_target_clear(&t);
    }
}

/* The property checker must be able to fail: a wrong fraction is caught. */
static void test_planted_wrong_fraction(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    make_wd(&t, 2);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(fraction_matches_heads(&f, &t));
    fmpz_add_ui(f.P->coeffs + 0, f.P->coeffs + 0, 1);
    CU_ASSERT(!fraction_matches_heads(&f, &t));
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

/* ------------------------------------------------------------ factors against gcds */

/* How the factor construction (with or without its reduction) compared with the gcd
 * construction it replaced, on one target. */
typedef struct {
    int factored; /* the factor path was taken (not the gcd fallback) */
    int same;     /* identical to the gcd construction's fraction */
    int matches;  /* equal to the heads' sum by exact cross-multiplication */
} cmp_t;

static cmp_t compare_constructions(const hf_target_t *t, int reduce)
{
    cmp_t c = {0, 0, 0};
    hf_fraction_t a, b;
    hf_fraction_init(&a);
    hf_fraction_init(&b);
    CU_ASSERT_FATAL(hf_fraction_from_factors(&a, t, reduce, &c.factored) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_from_gcds(&b, t) == HF_OK);
    if (c.factored) {
        c.same = hf_fraction_equal(&a, &b);
        c.matches = fraction_matches_heads(&a, t);
    }
    hf_fraction_clear(&b);
    hf_fraction_clear(&a);
    return c;
}

/* Bytes the fraction's polynomials need at the least (a coefficient word and an
 * exponent word a term); the estimate must not be below it. */
static double fraction_min_bytes(const hf_fraction_t *f)
{
    double terms = (double)f->Q->length;
    for (int j = 0; j < f->dv; j++)
        terms += (double)f->P[j].length;
    return 16 * terms;
}

/* What every target of the suites gets: hf_fraction_from_target takes the factor path
 * and gives the gcd construction's fraction exactly, equal to the heads' sum, and the
 * estimate is at least the memory the fraction holds. */
static void check_same(const hf_target_t *t, const char *what)
{
    cmp_t c = compare_constructions(t, 1);
    hf_fraction_t f, g;
    hf_fraction_init(&f);
    hf_fraction_init(&g);
    double est = 0;
    CU_ASSERT_FATAL(hf_fraction_from_target(&f, t) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_from_gcds(&g, t) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_estimate(t, &est) == HF_OK);
    int ok = c.factored && c.same && c.matches && hf_fraction_equal(&f, &g);
    CU_ASSERT(ok);
    CU_ASSERT(est >= fraction_min_bytes(&f));
    if (!ok || est < fraction_min_bytes(&f))
        fprintf(stderr, "\n  %s: factored %d, identical %d, equal to the heads %d, estimate %g\n",
                what, c.factored, c.same, c.matches, est);
    hf_fraction_clear(&g);
    hf_fraction_clear(&f);
}

/* The built-in families at small d. */
static const char *const family_specs[] = {"wd:d=1",        "wd:d=2",        "wd:d=5",
                                           "wd:d=8",        "chain:d=1",     "chain:d=2",
                                           "chain:d=4",     "chain:d=7",     "wdw:d=1",
                                           "wdw:d=3",       "wdw:d=7",       "multi:d=1,k=2",
                                           "multi:d=2,k=3", "multi:d=3,k=4", "multi:d=4,k=3",
                                           "multi:d=6,k=3", "multi:d=2,k=7", NULL};

/* The JSON targets the suites use: every file in data/ and tests/fixtures/good/. */
static const char *const json_dirs[] = {"data", "tests/fixtures/good", NULL};

/* Call fn on every JSON target of json_dirs; returns how many. */
static int for_each_json(void (*fn)(const hf_target_t *, const char *))
{
    int n = 0;
    for (int k = 0; json_dirs[k]; k++) {
        DIR *dir = opendir(json_dirs[k]);
        CU_ASSERT_FATAL(dir != NULL);
        struct dirent *e;
        while ((e = readdir(dir))) {
            size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 5, ".json"))
                continue;
            char path[512];
            hf_target_t t;
            snprintf(path, sizeof path, "%s/%s", json_dirs[k], e->d_name);
            hf_target_init_empty(&t);
            CU_ASSERT_FATAL(hf_target_load_json(&t, path) == HF_OK);
            fn(&t, path);
            hf_target_clear(&t);
            n++;
        }
        closedir(dir);
    }
    return n;
}

/* A small head whose denominator is one of the factors below, in coordinates a and c
 * (maybe equal): 1 + w x_a, 1 + x + x^2, 1 + x_a x_c, (1 + x)^2, 1 + x^3 (which is
 * (1 + x)(1 - x + x^2): a factor with a negative coefficient), 1 + x_a + x_c, a single
 * atom (D constant). keys[n][d], weights wn/wd. */
typedef struct {
    int n;
    int64_t key[4][3];
    long wn[4], wd[4];
} base_head_t;

static void random_base(base_head_t *b, int d)
{
    int a = (int)fam_rnd(0, d - 1), c = (int)fam_rnd(0, d - 1);
    memset(b, 0, sizeof *b);
    for (int i = 0; i < 4; i++)
        b->wn[i] = b->wd[i] = 1;
    switch (fam_rnd(0, 6)) {
    case 0: /* 1 + w x_a */
        b->n = 2;
        b->key[1][a] = 1;
        b->wn[1] = fam_rnd(1, 3);
        b->wd[1] = fam_rnd(1, 2);
        break;
    case 1: /* 1 + x + x^2 */
    case 3: /* (1 + x)^2 */
        b->n = 3;
        b->key[1][a] = 1;
        b->key[2][a] = 2;
        break;
    case 2: /* 1 + x_a x_c */
        b->n = 2;
        b->key[1][a] += 1;
        b->key[1][c] += 1;
        break;
    case 4: /* 1 + x^3 */
        b->n = 2;
        b->key[1][a] = 3;
        break;
    case 5: /* 1 + x_a + x_c */
        b->n = 3;
        b->key[1][a] = 1;
        b->key[2][c] += 1;
        break;
    default: /* one atom */
        b->n = 1;
        b->wn[0] = fam_rnd(1, 5);
        break;
    }
    if (b->n == 3 && b->key[1][a] == 1 && b->key[2][a] == 2 && fam_rng() % 2)
        b->wn[1] = 2; /* (1 + x)^2 */
}

/* A random head: one or two base heads multiplied (keys summed, weights multiplied: the
 * product head of the two), translated by -2..2 per coordinate, with random rational
 * values, or one value vector for all atoms (then N = v D: a head not in lowest terms). */
static void random_head(hf_head_t *h, int d, int dv)
{
    base_head_t b1, b2 = {1, {{0}}, {1}, {1}};
    int64_t shift[3], k[3];
    long v[3], vd = fam_rnd(1, 3), same[3];
    int one_value = fam_rnd(0, 4) == 0;
    random_base(&b1, d);
    if (fam_rng() % 2)
        random_base(&b2, d);
    for (int a = 0; a < d; a++)
        shift[a] = fam_rnd(-2, 2);
    for (int j = 0; j < dv; j++)
        same[j] = fam_rnd(-3, 3);
    hf_head_init(h, d, dv);
    for (int i = 0; i < b1.n; i++)
        for (int l = 0; l < b2.n; l++) {
            for (int a = 0; a < d; a++)
                k[a] = b1.key[i][a] + b2.key[l][a] + shift[a];
            for (int j = 0; j < dv; j++)
                v[j] = one_value ? same[j] : fam_rnd(-3, 3);
            fam_atom_q(h, k, b1.wn[i] * b2.wn[l], b1.wd[i] * b2.wd[l], v, one_value ? 1 : vd);
        }
}

/* h's complement: the same atoms with values c - v (so that h + complement = c). */
static void complement_head(hf_head_t *out, const hf_head_t *h, const long *c)
{
    fmpq_t cj;
    fmpq_init(cj);
    CU_ASSERT_FATAL(hf_head_copy(out, h) == HF_OK);
    for (long i = 0; i < h->natoms; i++)
        for (int j = 0; j < h->dv; j++) {
            fmpq *x = out->values + i * h->dv + j;
            fmpq_set_si(cj, c[j], 1);
            fmpq_sub(x, cj, x);
        }
    fmpq_clear(cj);
}

/* A random target: 1..4 heads from random_head in d = 1..3, dv = 1..3, where a head is
 * sometimes a repeat of an earlier one (same keys and weights, same or new values) or
 * the complement of the one before (so that the two sum to a constant). */
static void random_target(hf_target_t *t)
{
    int d = (int)fam_rnd(1, 3), dv = (int)fam_rnd(1, 3), nh = (int)fam_rnd(1, 4);
    CU_ASSERT_FATAL(hf_target_init(t, "random", d, dv) == HF_OK);
    for (int hh = 0; hh < nh; hh++) {
        hf_head_t h;
        long kind = t->nheads ? fam_rnd(0, 5) : 0, c[3];
        if (kind == 4) { /* a repeat, with the same values half the time */
            hf_head_init(&h, d, dv);
            CU_ASSERT_FATAL(hf_head_copy(&h, t->heads + fam_rnd(0, t->nheads - 1)) == HF_OK);
            if (fam_rng() % 2)
                for (long i = 0; i < h.natoms * dv; i++)
                    fmpq_set_si(h.values + i, fam_rnd(-3, 3), 1);
        } else if (kind == 5) { /* the complement of the last head */
            for (int j = 0; j < dv; j++)
                c[j] = fam_rnd(-2, 2);
            hf_head_init(&h, d, dv);
            complement_head(&h, t->heads + t->nheads - 1, c);
        } else {
            random_head(&h, d, dv);
        }
        CU_ASSERT_FATAL(hf_target_add_head(t, &h) == HF_OK);
        hf_head_clear(&h);
    }
}

#define RANDOM_TARGETS 300

static void test_factor_equals_gcd_families(void)
{
    for (int i = 0; family_specs[i]; i++) {
        hf_target_t t;
        hf_target_init_empty(&t);
        CU_ASSERT_FATAL(hf_target_from_family(&t, family_specs[i]) == HF_OK);
        check_same(&t, family_specs[i]);
        hf_target_clear(&t);
    }
    CU_ASSERT(for_each_json(check_same) >= 6);
}

static void test_factor_equals_gcd_random(void)
{
    int cancelled = 0, constant = 0;
    fam_rng_state = 2207;
    for (int i = 0; i < RANDOM_TARGETS; i++) {
        hf_target_t t;
        hf_fraction_t f;
        hf_fraction_init(&f);
        char what[64];
        random_target(&t);
        snprintf(what, sizeof what, "random target %d", i);
        check_same(&t, what);
        /* how often the reduction had something to do, so that the test below means
         * something: Q below the lcm's degree shows a cancelled factor */
        cmp_t c = compare_constructions(&t, 0);
        cancelled += c.factored && !c.same;
        CU_ASSERT_FATAL(hf_fraction_from_target(&f, &t) == HF_OK);
        constant += hf_fraction_is_constant(&f);
        hf_fraction_clear(&f);
        hf_target_clear(&t);
    }
    /* the generator reaches the cases it is meant to */
    CU_ASSERT(cancelled >= RANDOM_TARGETS / 10);
    CU_ASSERT(constant >= 5);
}

/* The planted wrong answer: the factor construction without its reduction (P/Q over the
 * lcm, the same function, not in lowest terms). The cross-check must catch it wherever
 * something cancels: on the hand-made cancelling targets, and on a good share of the
 * random ones. The exact identity with the heads cannot catch it (same function), which
 * is why the comparison is with the reference fraction. */
static void test_planted_unreduced_is_caught(void)
{
    hf_target_t t;
    hf_head_t h;
    int64_t k0 = 0, k1 = 1;
    long one = 1, zero = 0, caught = 0;
    CU_ASSERT_FATAL(hf_target_init(&t, "cancel", 1, 1) == HF_OK); /* sigma(q) + (1 - sigma(q)) */
    add_sigmoid(&t, 0);
    hf_head_init(&h, 1, 1);
    fam_atom_q(&h, &k0, 1, 1, &one, 1);
    fam_atom_q(&h, &k1, 1, 1, &zero, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    cmp_t c = compare_constructions(&t, 0);
    CU_ASSERT(c.factored && c.matches && !c.same);
    CU_ASSERT(compare_constructions(&t, 1).same);
    hf_head_clear(&h);
    hf_target_clear(&t);

    fam_rng_state = 2207; /* the same targets as the random cross-check */
    for (int i = 0; i < RANDOM_TARGETS; i++) {
        random_target(&t);
        c = compare_constructions(&t, 0);
        CU_ASSERT(c.factored && c.matches);
        caught += !c.same;
        hf_target_clear(&t);
    }
    CU_ASSERT(caught >= RANDOM_TARGETS / 10);
}

/* dv = 2 where a factor held by two heads' denominators divides the first sum but not
 * the second: A = (1, 0) at key 0 and (0, 0) at x over 1 + x; B over (1 + x)(1 + y) with
 * values (0, 0), (1, 0), (0, 1), (1, 0) at 1, x, y, xy. Then P_1 = (1 + y) + x (1 + y) is
 * divisible by 1 + x and P_2 = y is not: the factor stays (the division of P_1 is
 * undone), and T = (1, y / ((1 + x)(1 + y))). */
static void test_dv2_factor_divides_one_component(void)
{
    hf_target_t t;
    hf_head_t h;
    hf_fraction_t f;
    hf_fraction_init(&f);
    CU_ASSERT_FATAL(hf_target_init(&t, "dv2split", 2, 2) == HF_OK);
    hf_head_init(&h, 2, 2);
    fam_atom_q(&h, (int64_t[]){0, 0}, 1, 1, (long[]){1, 0}, 1);
    fam_atom_q(&h, (int64_t[]){1, 0}, 1, 1, (long[]){0, 0}, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    hf_head_init(&h, 2, 2);
    fam_atom_q(&h, (int64_t[]){0, 0}, 1, 1, (long[]){0, 0}, 1);
    fam_atom_q(&h, (int64_t[]){1, 0}, 1, 1, (long[]){1, 0}, 1);
    fam_atom_q(&h, (int64_t[]){0, 1}, 1, 1, (long[]){0, 1}, 1);
    fam_atom_q(&h, (int64_t[]){1, 1}, 1, 1, (long[]){1, 0}, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(poly_is(f.P + 0, "(1+x)*(1+y)", f.ctx));
    CU_ASSERT(poly_is(f.P + 1, "y", f.ctx));
    CU_ASSERT(poly_is(f.Q, "(1+x)*(1+y)", f.ctx));
    check_same(&t, "dv2split");
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* Denominators of too high a degree are not factored (FLINT's factoring of 1 + x^n grows
 * fast with n): such targets take the gcd construction, with the same result. */
static void test_high_degree_falls_back(void)
{
    hf_target_t t;
    hf_head_t h;
    hf_fraction_t f;
    hf_fraction_init(&f);
    int64_t k;
    long v;
    int factored = 1;
    CU_ASSERT_FATAL(hf_target_init(&t, "highdeg", 1, 1) == HF_OK);
    add_sigmoid(&t, 0);
    hf_head_init(&h, 1, 1);
    for (k = 0; k <= HF_FRACTION_FACTOR_DEGREE_MAX + 1; k += HF_FRACTION_FACTOR_DEGREE_MAX + 1) {
        v = k == 0;
        fam_atom_q(&h, &k, 1, 1, &v, 1); /* 1 + x^257: (1 + x) times a factor of degree 256 */
    }
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_from_factors(&f, &t, 1, &factored) == HF_OK);
    CU_ASSERT(!factored);
    hf_fraction_clear(&f);
    CU_ASSERT_FATAL(fraction_of(&f, &t) == HF_OK);
    CU_ASSERT(fraction_matches_heads(&f, &t));
    CU_ASSERT(poly_is(f.Q, "1+x^257", f.ctx)); /* 1 + x divides 1 + x^257 */
    hf_fraction_clear(&f);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* The estimate: exact term counts where the bound is exact, a clear error on bad input,
 * and no need to build anything (wd:d=64 would have 2^64 terms). */
/* The estimate of a family equals terms * (dv + 4) * bytes_per_term where the bound on
 * the terms is exact, and Q has those terms. t is left holding the family. */
static void check_exact_estimate(hf_target_t *t, const char *spec, long terms, int bytes_per_term,
                                 double *est)
{
    hf_fraction_t f;
    hf_fraction_init(&f);
    CU_ASSERT_FATAL(hf_target_from_family(t, spec) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_estimate(t, est) == HF_OK);
    CU_ASSERT_FATAL(fraction_of(&f, t) == HF_OK);
    CU_ASSERT(f.Q->length == terms);
    CU_ASSERT(*est == (double)terms * (t->dv + 4) * bytes_per_term);
    hf_fraction_clear(&f);
}

static void test_estimate(void)
{
    hf_target_t t;
    double est;
    hf_target_init_empty(&t);
    /* wd:d=10: Q has 2^10 terms, 10 variables of degree 1 pack into 2 words: 24 bytes */
    check_exact_estimate(&t, "wd:d=10", 1024, 24, &est);
    /* chain:d=8: one group of 11144 keys, Q has exactly those terms; 1 word a term */
    check_exact_estimate(&t, "chain:d=8", 11144, 16, &est);
    /* the same heads twice: the denominators count once */
    double once = est;
    for (int h = 0, n = t.nheads; h < n; h++) {
        hf_head_t copy;
        hf_head_init(&copy, t.d, t.dv);
        CU_ASSERT_FATAL(hf_head_copy(&copy, t.heads + h) == HF_OK);
        CU_ASSERT_FATAL(hf_target_add_head(&t, &copy) == HF_OK);
        hf_head_clear(&copy);
    }
    CU_ASSERT_FATAL(hf_fraction_estimate(&t, &est) == HF_OK);
    CU_ASSERT(est == once);
    /* wd:d=64 is estimated without being built: far beyond any memory */
    CU_ASSERT_FATAL(hf_target_from_family(&t, "wd:d=64") == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_estimate(&t, &est) == HF_OK);
    CU_ASSERT(est > 1e20 && isfinite(est));
    hf_target_clear(&t);

    /* bad input: the same message as the construction */
    make_bad_weight(&t);
    CU_ASSERT(hf_fraction_estimate(&t, &est) == HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "bad.json: heads[0]: atoms[1].weight") != NULL);
    hf_target_clear(&t);
}

/* ------------------------------------------------------------ slices (docs/exact-test.md §1b) */

/* The windowed verdict, found independently of fraction_slice.c: every denominator
 * factored, the distinct primitive denominators pairwise coprime (by gcds), and nothing
 * cancels: the primitive part of the whole Q is their product. */
static int expect_windowed(const hf_target_t *t, const hf_fraction_t *F)
{
    int factored = 0, ok = 1;
    hf_fraction_t f;
    CU_ASSERT_FATAL(hf_fraction_from_factors(&f, t, 1, &factored) == HF_OK);
    hf_fraction_clear(&f);
    if (!factored)
        return 0;
    fmpz_mpoly_struct M[16], *N = hf_fraction_polys_new(t->dv, F->ctx);
    fmpz_mpoly_t D, G, prod;
    fmpz_t c;
    long nm = 0;
    fmpz_mpoly_init(D, F->ctx);
    fmpz_mpoly_init(G, F->ctx);
    fmpz_mpoly_init(prod, F->ctx);
    fmpz_init(c);
    fmpz_mpoly_one(prod, F->ctx);
    for (int h = 0; h < t->nheads; h++) {
        hf_fraction_head_nd(N, D, t->heads + h, F->ctx);
        _fmpz_vec_content(c, D->coeffs, D->length);
        fmpz_mpoly_scalar_divexact_fmpz(D, D, c, F->ctx);
        long i = 0;
        while (i < nm && !fmpz_mpoly_equal(M + i, D, F->ctx))
            i++;
        if (i < nm)
            continue;
        CU_ASSERT_FATAL(nm < 16);
        for (long k = 0; k < nm; k++) {
            fmpz_mpoly_gcd(G, M + k, D, F->ctx);
            ok = ok && fmpz_mpoly_is_one(G, F->ctx);
        }
        fmpz_mpoly_init(M + nm, F->ctx);
        fmpz_mpoly_set(M + nm++, D, F->ctx);
        fmpz_mpoly_mul(prod, prod, D, F->ctx);
    }
    _fmpz_vec_content(c, F->Q->coeffs, F->Q->length);
    fmpz_mpoly_scalar_divexact_fmpz(G, F->Q, c, F->ctx);
    ok = ok && fmpz_mpoly_equal(G, prod, F->ctx);
    for (long k = 0; k < nm; k++)
        fmpz_mpoly_clear(M + k, F->ctx);
    fmpz_clear(c);
    fmpz_mpoly_clear(prod, F->ctx);
    fmpz_mpoly_clear(G, F->ctx);
    fmpz_mpoly_clear(D, F->ctx);
    hf_fraction_polys_free(N, t->dv, F->ctx);
    return ok;
}

/* The plan's coordinates as the contract states them, from the built Q's degrees. */
static int plan_as_stated(const hf_slice_plan_t *pl, const hf_fraction_t *F, const int *allowed,
                          long want)
{
    slong deg[HF_D_MAX];
    int ns = 0, ok = pl->d == F->d;
    long n = 1;
    fmpz_mpoly_degrees_si(deg, F->Q, F->ctx);
    for (int a = 0; a < F->d; a++) {
        ok = ok && pl->qdeg[a] == (deg[a] > 0 ? deg[a] : 0);
        if (n >= want || (allowed && !allowed[a]) || deg[a] <= 0)
            continue;
        ok = ok && ns < pl->ns && pl->coord[ns] == a && pl->ext[ns] == deg[a];
        ns++;
        n *= deg[a] + 1;
    }
    return ok && ns == pl->ns && n == pl->nslices;
}

/* n slices, initialised, and their contents. */
typedef struct {
    long n;
    hf_fraction_t *f;
    fmpz *c;
} slices_t;

static void slices_init(slices_t *s, long n)
{
    s->n = n;
    s->f = malloc((size_t)(n ? n : 1) * sizeof *s->f);
    s->c = _fmpz_vec_init(n ? n : 1);
    for (long i = 0; i < n; i++)
        hf_fraction_init(s->f + i);
}

static void slices_clear(slices_t *s)
{
    for (long i = 0; i < s->n; i++)
        hf_fraction_clear(s->f + i);
    free(s->f);
    _fmpz_vec_clear(s->c, s->n ? s->n : 1);
}

/* The slices (all of the plan's, in index order), divided by the gcd g of their
 * contents, are F's: each holds only its own Sigma-exponents and they add up to F. */
static int slices_are(const hf_slice_plan_t *pl, slices_t *s, const hf_fraction_t *F, fmpz_t g)
{
    int ok = 1;
    int64_t e[HF_D_MAX];
    hf_fraction_t sum;
    CU_ASSERT_FATAL(hf_fraction_alloc(&sum, F->d, F->dv) == HF_OK);
    fmpz_mpoly_zero(sum.Q, sum.ctx);
    fmpz_zero(g);
    for (long i = 0; i < s->n; i++)
        fmpz_gcd(g, g, s->c + i);
    ok = fmpz_sgn(g) > 0;
    for (long i = 0; i < s->n && ok; i++) {
        hf_fraction_slice_divide(s->f + i, g);
        hf_fraction_slice_values(pl, i, e);
        ok = s->f[i].d == F->d && s->f[i].dv == F->dv;
        for (int j = 0; j <= F->dv && ok; j++) {
            const fmpz_mpoly_struct *A = j < F->dv ? s->f[i].P + j : s->f[i].Q;
            for (slong k = 0; k < A->length; k++)
                for (int c = 0; c < pl->ns; c++)
                    ok = ok && (int64_t)fmpz_mpoly_get_term_var_exp_ui(A, k, pl->coord[c],
                                                                       s->f[i].ctx) == e[c];
            fmpz_mpoly_struct *B = j < F->dv ? sum.P + j : sum.Q;
            fmpz_mpoly_add(B, B, A, sum.ctx);
        }
    }
    ok = ok && hf_fraction_equal(&sum, F);
    hf_fraction_clear(&sum);
    return ok;
}

/* What every target of the slice tests gets, for one allowed set and want: the plan as
 * stated, windowed exactly when the conditions hold, all slices built in one call equal
 * to F's after the common content is divided, and the same slices again when built in
 * reverse order, in a subset and one at a time. Returns the plan's windowed. */
static int check_slices(const hf_target_t *t, const int *allowed, long want, const char *what)
{
    hf_fraction_t F;
    hf_slice_plan_t pl;
    slices_t all, rev;
    fmpz_t g;
    hf_fraction_init(&F);
    fmpz_init(g);
    CU_ASSERT_FATAL(hf_fraction_from_target(&F, t) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_slice_plan(t, allowed, want, &pl) == HF_OK);
    int ok_plan = plan_as_stated(&pl, &F, allowed, want);
    int ok_verdict = pl.windowed == expect_windowed(t, &F) && !pl.windowed == !!pl.why[0];
    CU_ASSERT_FATAL(pl.nslices <= 4096);

    long n = pl.nslices, *idx = malloc((size_t)n * sizeof *idx);
    slices_init(&all, n);
    slices_init(&rev, n);
    for (long i = 0; i < n; i++)
        idx[i] = n - 1 - i;
    CU_ASSERT_FATAL(hf_fraction_slices_build(t, &pl, idx, n, rev.f, rev.c) == HF_OK);
    /* all: the odd indices in one call, then the even ones one call each */
    long nodd = 0;
    for (long i = 1; i < n; i += 2)
        idx[nodd++] = i;
    slices_t odd;
    slices_init(&odd, nodd);
    CU_ASSERT_FATAL(hf_fraction_slices_build(t, &pl, idx, nodd, odd.f, odd.c) == HF_OK);
    for (long k = 0; k < nodd; k++) {
        hf_fraction_t tmp = all.f[idx[k]];
        all.f[idx[k]] = odd.f[k];
        odd.f[k] = tmp;
        fmpz_swap(all.c + idx[k], odd.c + k);
    }
    slices_clear(&odd);
    for (long i = 0; i < n; i += 2)
        CU_ASSERT_FATAL(hf_fraction_slices_build(t, &pl, &i, 1, all.f + i, all.c + i) == HF_OK);
    int ok_order = 1;
    for (long i = 0; i < n; i++)
        ok_order = ok_order && hf_fraction_equal(all.f + i, rev.f + n - 1 - i) &&
                   fmpz_equal(all.c + i, rev.c + n - 1 - i);
    int ok_slices = slices_are(&pl, &all, &F, g);
    int ok_g = pl.windowed || fmpz_is_one(g);
    CU_ASSERT(ok_plan && ok_verdict && ok_order && ok_slices && ok_g);
    if (!(ok_plan && ok_verdict && ok_order && ok_slices && ok_g))
        fprintf(stderr,
                "\n  %s (want %ld): plan %d, verdict %d (windowed %d: %s), order %d, slices %d, "
                "g %d\n",
                what, want, ok_plan, ok_verdict, pl.windowed, pl.why, ok_order, ok_slices, ok_g);
    slices_clear(&rev);
    slices_clear(&all);
    free(idx);
    fmpz_clear(g);
    hf_fraction_clear(&F);
    return pl.windowed;
}

/* The allowed sets and wants every target is sliced with: all coordinates, every other
 * one, only the last, none; one slice up to more than there are. Returns how many of
 * the plans were windowed. */
static int check_slices_all_ways(const hf_target_t *t, const char *what)
{
    static const long wants[] = {1, 2, 5, 16, 100000};
    int every_other[HF_D_MAX] = {0}, last[HF_D_MAX] = {0}, none[HF_D_MAX] = {0}, windowed = 0;
    for (int a = 0; a < t->d; a += 2)
        every_other[a] = 1;
    last[t->d - 1] = 1;
    const int *sets[] = {NULL, every_other, last, none};
    for (int s = 0; s < 4; s++)
        for (int w = 0; w < 5; w++) {
            if (s == 3 && w > 1)
                break; /* no coordinate: always one slice */
            if (w == 4 && t->d > 5)
                continue; /* every coordinate sliced: too many slices */
            windowed += check_slices(t, sets[s], wants[w], what);
        }
    return windowed;
}

static void check_slices_json(const hf_target_t *t, const char *path)
{
    check_slices_all_ways(t, path);
}

static void test_slices_families(void)
{
    hf_target_t t;
    char what[64];
    for (int d = 1; d <= 7; d++) {
        snprintf(what, sizeof what, "chain:d=%d", d);
        fam_chain(&t, d);
        CU_ASSERT(check_slices_all_ways(&t, what) > 0);
        hf_target_clear(&t);
        if (d > 6)
            continue;
        snprintf(what, sizeof what, "wd:d=%d", d);
        fam_wd(&t, d);
        CU_ASSERT(check_slices_all_ways(&t, what) > 0);
        hf_target_clear(&t);
        snprintf(what, sizeof what, "wdw:d=%d", d);
        fam_wdw(&t, d);
        CU_ASSERT(check_slices_all_ways(&t, what) > 0);
        hf_target_clear(&t);
    }
    for (int d = 1; d <= 4; d++)
        for (int k = 2; k <= 4; k++) {
            snprintf(what, sizeof what, "multi:d=%d,k=%d", d, k);
            fam_multi(&t, d, k);
            CU_ASSERT(check_slices_all_ways(&t, what) > 0);
            hf_target_clear(&t);
        }
    CU_ASSERT(for_each_json(check_slices_json) >= 6);
}

/* 1 if the plan's degrees of Q are below the unreduced lcm's in some coordinate: a
 * factor cancelled and the plan found it without building P/Q. */
static int qdeg_below_lcm(const hf_target_t *t)
{
    hf_fraction_t f;
    hf_slice_plan_t pl;
    slong deg[HF_D_MAX];
    int factored = 0, below = 0;
    CU_ASSERT_FATAL(hf_fraction_from_factors(&f, t, 0, &factored) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_slice_plan(t, NULL, 1, &pl) == HF_OK);
    fmpz_mpoly_degrees_si(deg, f.Q, f.ctx);
    for (int a = 0; factored && a < t->d; a++)
        below |= pl.qdeg[a] < (deg[a] > 0 ? deg[a] : 0);
    hf_fraction_clear(&f);
    return below;
}

/* Random targets (random_target: shared denominators and factors, heads whose N/D
 * cancels, complements, dv up to 3, rational weights and values): both verdicts occur
 * often, and every slice is right either way. */
static void test_slices_random(void)
{
    int windowed = 0, plans = 0, lowered = 0; /* targets */
    fam_rng_state = 4409;
    for (int i = 0; i < 150; i++) {
        hf_target_t t;
        char what[64];
        random_target(&t);
        snprintf(what, sizeof what, "random target %d", i);
        windowed += check_slices_all_ways(&t, what) > 0; /* one verdict per target */
        plans++;
        lowered += qdeg_below_lcm(&t);
        hf_target_clear(&t);
    }
    CU_ASSERT(windowed >= plans / 5);
    CU_ASSERT(plans - windowed >= plans / 5);
    CU_ASSERT(lowered >= plans / 10);
}

/* Hand-made cases: a head with the irreducible 1 + x + x^2 beside sigmoids (windowed);
 * two heads on one denominator (one group: windowed); two denominators sharing 1 + x, a
 * head whose N/D cancels, a denominator of degree 257 (each not windowed, with why). */
static void test_slices_cases(void)
{
    hf_target_t t;
    hf_head_t h;
    hf_slice_plan_t pl;
    long v0 = 0, v1 = 1, v2 = 2, v3 = 3;
    int64_t k00[2] = {0, 0}, k10[2] = {1, 0}, k20[2] = {2, 0}, k01[2] = {0, 1}, k11[2] = {1, 1};

    CU_ASSERT_FATAL(hf_target_init(&t, "cyclotomic", 2, 1) == HF_OK);
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, k00, 1, 1, &v0, 1);
    fam_atom_q(&h, k10, 1, 1, &v1, 1);
    fam_atom_q(&h, k20, 1, 1, &v2, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    add_sigmoid(&t, 1);
    fam_pair(&t, k11, 0, 1);
    CU_ASSERT(check_slices_all_ways(&t, "1 + x + x^2"));
    /* the same denominator again with other values and weights: one group */
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, k00, 2, 3, &v3, 1);
    fam_atom_q(&h, k10, 2, 3, &v1, 2);
    fam_atom_q(&h, k20, 2, 3, &v0, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    CU_ASSERT(check_slices_all_ways(&t, "one denominator twice"));
    /* sigma(q0) over 1 + x, then a head over (1 + x)(1 + y): shares both factors */
    add_sigmoid(&t, 0);
    CU_ASSERT(check_slices_all_ways(&t, "1 + x beside 1 + x + x^2"));
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, k00, 1, 1, &v0, 1);
    fam_atom_q(&h, k10, 1, 1, &v1, 1);
    fam_atom_q(&h, k01, 1, 1, &v2, 1);
    fam_atom_q(&h, k11, 1, 1, &v3, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    CU_ASSERT(!check_slices_all_ways(&t, "shared factors 1 + x, 1 + y"));
    CU_ASSERT_FATAL(hf_fraction_slice_plan(&t, NULL, 4, &pl) == HF_OK);
    CU_ASSERT(strstr(pl.why, "share a factor") != NULL);
    hf_target_clear(&t);

    /* a head whose N/D is not in lowest terms: values 1 + x over (1 + x)(1 + y) */
    CU_ASSERT_FATAL(hf_target_init(&t, "cancels", 2, 1) == HF_OK);
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, k00, 1, 1, &v1, 1);
    fam_atom_q(&h, k10, 1, 1, &v1, 1);
    fam_atom_q(&h, k01, 1, 1, &v0, 1);
    fam_atom_q(&h, k11, 1, 1, &v0, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    add_sigmoid(&t, 0);
    (void)k20;
    CU_ASSERT(!check_slices_all_ways(&t, "N/D cancels"));
    CU_ASSERT_FATAL(hf_fraction_slice_plan(&t, NULL, 4, &pl) == HF_OK);
    CU_ASSERT(!pl.windowed && pl.why[0]);
    hf_target_clear(&t);

    /* a degree-257 denominator: not factored; the plan builds P/Q for Q's degrees */
    CU_ASSERT_FATAL(hf_target_init(&t, "highdeg", 1, 1) == HF_OK);
    add_sigmoid(&t, 0);
    hf_head_init(&h, 1, 1);
    int64_t k = 0, kh = HF_FRACTION_FACTOR_DEGREE_MAX + 1;
    fam_atom_q(&h, &k, 1, 1, &v1, 1);
    fam_atom_q(&h, &kh, 1, 1, &v0, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    CU_ASSERT(!check_slices(&t, NULL, 16, "highdeg"));
    CU_ASSERT_FATAL(hf_fraction_slice_plan(&t, NULL, 16, &pl) == HF_OK);
    CU_ASSERT(strstr(pl.why, "not factored") != NULL);
    CU_ASSERT(pl.nslices == 258 && pl.qdeg[0] == 257); /* Q = 1 + x^257, the lcm */
    hf_target_clear(&t);

    /* no heads: one slice, P = 0, Q = 1 */
    CU_ASSERT_FATAL(hf_target_init(&t, "empty", 2, 2) == HF_OK);
    CU_ASSERT(check_slices_all_ways(&t, "no heads"));
    hf_target_clear(&t);
}

/* The planted wrong answer: every window one too narrow at its lower end. The
 * comparison with the whole P/Q must catch it on every family target that is sliced. */
static void test_slices_planted_narrow(void)
{
    int caught = 0, tried = 0;
    for (int d = 1; d <= 6; d++)
        for (int fam = 0; fam < 3; fam++) {
            hf_target_t t;
            hf_fraction_t F;
            hf_slice_plan_t pl;
            slices_t s;
            fmpz_t g;
            if (fam == 0)
                fam_chain(&t, d);
            else if (fam == 1)
                fam_wd(&t, d);
            else
                fam_multi(&t, d, 3);
            hf_fraction_init(&F);
            fmpz_init(g);
            CU_ASSERT_FATAL(hf_fraction_from_target(&F, &t) == HF_OK);
            CU_ASSERT_FATAL(hf_fraction_slice_plan(&t, NULL, 16, &pl) == HF_OK);
            CU_ASSERT_FATAL(pl.windowed && pl.ns > 0);
            long *idx = malloc((size_t)pl.nslices * sizeof *idx);
            for (long i = 0; i < pl.nslices; i++)
                idx[i] = i;
            for (int narrow = 0; narrow <= 1; narrow++) {
                slices_init(&s, pl.nslices);
                CU_ASSERT_FATAL(hf_fraction_slices_build_narrow(&t, &pl, idx, pl.nslices, narrow,
                                                                s.f, s.c) == HF_OK);
                int same = slices_are(&pl, &s, &F, g);
                CU_ASSERT(same == !narrow);
                caught += narrow && !same;
                slices_clear(&s);
            }
            tried++;
            free(idx);
            fmpz_clear(g);
            hf_fraction_clear(&F);
            hf_target_clear(&t);
        }
    CU_ASSERT(caught == tried);
}

/* The weights count the products of the groups' terms landing in each slice: they add
 * up to the product of the denominators' term counts and, when windowed, bound each
 * slice's terms of Q from above (terms merge, never split). The estimate of the largest
 * slice is below the whole's when sliced and windowed, and the whole's when not. */
static void test_slices_weights_estimate(void)
{
    hf_target_t t;
    hf_fraction_t F;
    hf_slice_plan_t pl;
    slices_t s;
    double whole, slice, *w;
    hf_fraction_init(&F);
    fam_chain(&t, 7);
    CU_ASSERT_FATAL(hf_fraction_from_target(&F, &t) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_slice_plan(&t, NULL, 12, &pl) == HF_OK);
    CU_ASSERT(pl.ns == 2 && pl.coord[0] == 0 && pl.coord[1] == 1 && pl.nslices == 3 * 4);
    w = malloc((size_t)pl.nslices * sizeof *w);
    CU_ASSERT_FATAL(hf_fraction_slice_weights(&t, &pl, w) == HF_OK);
    slices_init(&s, pl.nslices);
    long *idx = malloc((size_t)pl.nslices * sizeof *idx);
    for (long i = 0; i < pl.nslices; i++)
        idx[i] = i;
    CU_ASSERT_FATAL(hf_fraction_slices_build(&t, &pl, idx, pl.nslices, s.f, s.c) == HF_OK);
    double sum = 0;
    for (long i = 0; i < pl.nslices; i++) {
        sum += w[i];
        CU_ASSERT(w[i] >= (double)s.f[i].Q->length);
        CU_ASSERT((w[i] > 0) == (s.f[i].Q->length > 0));
    }
    CU_ASSERT(sum == 8192.0); /* 13 heads of 2 terms */
    CU_ASSERT_FATAL(hf_fraction_estimate(&t, &whole) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_slices_estimate(&t, &pl, &slice) == HF_OK);
    CU_ASSERT(slice > 0 && slice < whole / 2);
    slices_clear(&s);
    free(idx);
    free(w);
    hf_fraction_clear(&F);
    hf_target_clear(&t);

    /* not windowed (a head whose N/D = (1 + x)/(1 + x) cancels, beside sigma(q1)): the
     * whole is built; x is gone from Q, so y is sliced */
    CU_ASSERT_FATAL(hf_target_init(&t, "cancels", 2, 1) == HF_OK);
    hf_head_t h;
    long one = 1;
    hf_head_init(&h, 2, 1);
    fam_atom_q(&h, (int64_t[]){0, 0}, 1, 1, &one, 1);
    fam_atom_q(&h, (int64_t[]){1, 0}, 1, 1, &one, 1);
    CU_ASSERT_FATAL(hf_target_add_head(&t, &h) == HF_OK);
    hf_head_clear(&h);
    add_sigmoid(&t, 1);
    CU_ASSERT_FATAL(hf_fraction_slice_plan(&t, NULL, 2, &pl) == HF_OK);
    CU_ASSERT(!pl.windowed && pl.nslices == 2 && pl.ns == 1 && pl.coord[0] == 1);
    CU_ASSERT(pl.qdeg[0] == 0 && pl.qdeg[1] == 1);
    CU_ASSERT_FATAL(hf_fraction_estimate(&t, &whole) == HF_OK);
    CU_ASSERT_FATAL(hf_fraction_slices_estimate(&t, &pl, &slice) == HF_OK);
    CU_ASSERT(slice >= whole);
    hf_target_clear(&t);
}

/* Errors: a plan for another target, an index out of range, a stop request; the outputs
 * keep their values on every failure. */
static void test_slices_errors(void)
{
    hf_target_t t, u;
    hf_slice_plan_t pl;
    hf_fraction_t f;
    fmpz_t c;
    long bad = 12, zero = 0;
    hf_fraction_init(&f);
    fmpz_init_set_ui(c, 7);
    fam_chain(&t, 4);
    fam_wd(&u, 4);
    CU_ASSERT_FATAL(hf_fraction_slice_plan(&t, NULL, 12, &pl) == HF_OK);
    CU_ASSERT(pl.nslices == 12);
    CU_ASSERT(hf_fraction_slices_build(&t, &pl, &bad, 1, &f, c) == HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "index 12 out of 0..11") != NULL);
    CU_ASSERT(hf_fraction_slices_build(&u, &pl, &zero, 1, &f, c) == HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "another target") != NULL);
    double w[12];
    CU_ASSERT(hf_fraction_slice_weights(&u, &pl, w) == HF_ERR_INPUT);
    hf_stop_at(HF_STOP_FRACTION, 3);
    CU_ASSERT(hf_fraction_slices_build(&t, &pl, &zero, 1, &f, c) == HF_ERR_INTERRUPTED);
    hf_stop_reset();
    CU_ASSERT(f.dv == 0 && fmpz_equal_ui(c, 7)); /* untouched */
    CU_ASSERT(hf_fraction_slices_build(&t, &pl, &zero, 1, &f, c) == HF_OK);
    CU_ASSERT(f.dv == 1 && f.Q->length > 0);
    hf_target_clear(&u);
    make_bad_weight(&u);
    CU_ASSERT(hf_fraction_slice_plan(&u, NULL, 4, &pl) == HF_ERR_INPUT);
    CU_ASSERT(strstr(hf_error_msg(), "bad.json: heads[0]") != NULL);
    fmpz_clear(c);
    hf_fraction_clear(&f);
    hf_target_clear(&u);
    hf_target_clear(&t);
}

/* Release FLINT's internal caches so that valgrind reports no "possibly lost" blocks. */
static int suite_cleanup(void)
{
    flint_cleanup();
    return 0;
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"W_1: P = x, Q = 1 + x", test_w1},
        {"W_2: P = x + y + 2xy, Q = (1+x)(1+y)", test_w2},
        {"heads cancelling to a constant", test_cancel_to_constant},
        {"gcd cancellation: same denominator", test_same_denominator},
        {"rational weights and values", test_rational_weights},
        {"dv = 2 with a joint gcd", test_dv2},
        {"constant vector target", test_constant_vector},
        {"normal form is unique", test_normal_form_unique},
        {"limits and input errors", test_limits_and_errors},
        {"random targets: exact identity and evaluation", test_random_targets},
        {"planted wrong fraction is caught", test_planted_wrong_fraction},
        {"factors = gcds: families and data files", test_factor_equals_gcd_families},
        {"factors = gcds: random targets", test_factor_equals_gcd_random},
        {"planted unreduced fraction is caught", test_planted_unreduced_is_caught},
        {"dv = 2: a factor divides one sum only", test_dv2_factor_divides_one_component},
        {"high degree: the gcd construction", test_high_degree_falls_back},
        {"memory estimate", test_estimate},
        {"slices: families and data files", test_slices_families},
        {"slices: random targets", test_slices_random},
        {"slices: hand-made cases", test_slices_cases},
        {"slices: planted narrow window is caught", test_slices_planted_narrow},
        {"slices: weights and estimate", test_slices_weights_estimate},
        {"slices: errors and stop", test_slices_errors},
        {NULL, NULL},
    };
    return hf_unit_suite_with("algebra", suite_cleanup, cases);
}
