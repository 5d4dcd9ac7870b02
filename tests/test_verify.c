/* Tests of the independent verifier: product heads of W_d verify exactly, planted wrong
 * heads are rejected, translation and cancellation are handled, numeric cross-check. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "families.h"
#include "headfuse/bounds.h"
#include "headfuse/store.h"
#include "headfuse/verify.h"
#include "unit.h"

/* The product head of W_d built directly: keys {0,1}^d (bit j of i is coordinate
 * d-1-j, so keys come out in lexicographic order), weights 1, value popcount. */
static void product_wd(hf_head_t *h, int d)
{
    hf_head_init(h, d, 1);
    fam_die(hf_head_resize(h, 1L << d));
    for (long i = 0; i < (1L << d); i++) {
        int ones = 0;
        for (int j = 0; j < d; j++) {
            h->keys[i * d + j] = (i >> (d - 1 - j)) & 1;
            ones += (int)h->keys[i * d + j];
        }
        fmpq_one(h->weights + i);
        fmpq_set_si(h->values + i, ones, 1);
    }
}

static int verify_ok(const hf_target_t *t, const hf_head_t *h, const char **why)
{
    int ok = -1;
    const char *w = NULL;
    CU_ASSERT_EQUAL_FATAL(hf_verify_head(t, h, &ok, &w), HF_OK);
    if (why)
        *why = w;
    return ok;
}

static void test_wd_product_exact(void)
{
    for (int d = 1; d <= 10; d++) {
        hf_target_t t;
        hf_head_t h;
        fam_wd(&t, d);
        product_wd(&h, d);
        CU_ASSERT_EQUAL(verify_ok(&t, &h, NULL), 1);
        double err = hf_verify_numeric(&t, &h, 200, 2.0, 42 + d);
        CU_ASSERT(err < 1e-12);
        hf_head_clear(&h);
        hf_target_clear(&t);
    }
}

static void test_wd16_product_fast(void)
{
    hf_target_t t;
    hf_head_t h;
    fam_wd(&t, 16);
    product_wd(&h, 16);
    clock_t c0 = clock();
    CU_ASSERT_EQUAL(verify_ok(&t, &h, NULL), 1);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    printf("\n  verify W_16 product head (65536 atoms): %.2f s\n", secs);
    /* one value off by 1/1000 in the middle: still caught exactly */
    fmpq_set_si(h.values + 30000, 1, 1000);
    const char *why = NULL;
    CU_ASSERT_EQUAL(verify_ok(&t, &h, &why), 0);
    CU_ASSERT_PTR_NOT_NULL(why);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

static void test_planted_wrong(void)
{
    hf_target_t t;
    hf_head_t good, bad;
    const char *why = NULL;
    fam_wd(&t, 3);
    product_wd(&good, 3);
    hf_head_init(&bad, 3, 1);

    /* one value changed (key (1,0,1) should have value 2) */
    fam_die(hf_head_copy(&bad, &good));
    fmpq_set_si(bad.values + 5, 3, 1);
    CU_ASSERT_EQUAL(verify_ok(&t, &bad, &why), 0);
    CU_ASSERT_PTR_NOT_NULL(why);
    CU_ASSERT(hf_verify_numeric(&t, &bad, 100, 1.0, 7) > 1e-3);

    /* a weight made 0, then negative */
    fam_die(hf_head_copy(&bad, &good));
    fmpq_zero(bad.weights + 2);
    CU_ASSERT_EQUAL(verify_ok(&t, &bad, &why), 0);
    CU_ASSERT_STRING_EQUAL(why, "a weight is not positive");
    fmpq_set_si(bad.weights + 2, -1, 1);
    CU_ASSERT_EQUAL(verify_ok(&t, &bad, NULL), 0);

    /* one atom removed (the last one, key (1,1,1)) */
    fam_die(hf_head_copy(&bad, &good));
    fam_die(hf_head_resize(&bad, 7));
    CU_ASSERT_EQUAL(verify_ok(&t, &bad, &why), 0);
    CU_ASSERT(hf_verify_numeric(&t, &bad, 100, 1.0, 7) > 1e-3);

    /* a weight changed: C is no longer a multiple of D, the full identity decides */
    fam_die(hf_head_copy(&bad, &good));
    fmpq_set_si(bad.weights + 3, 2, 1);
    CU_ASSERT_EQUAL(verify_ok(&t, &bad, NULL), 0);

    /* the good head still passes */
    CU_ASSERT_EQUAL(verify_ok(&t, &good, NULL), 1);
    hf_head_clear(&bad);
    hf_head_clear(&good);
    hf_target_clear(&t);
}

/* sigma(q) + (1 - sigma(q)) == 1: one atom with value 1 represents it. */
static void test_cancelling(void)
{
    hf_target_t t;
    hf_head_t h;
    int64_t one[1] = {1}, zero[1] = {0};
    fam_die(hf_target_init(&t, "cancel", 1, 1));
    fam_pair(&t, one, 0, 1);
    fam_pair(&t, one, 1, 0);
    hf_head_init(&h, 1, 1);
    fam_atom(&h, zero, 1, 1);
    CU_ASSERT_EQUAL(verify_ok(&t, &h, NULL), 1);
    CU_ASSERT(hf_verify_numeric(&t, &h, 100, 3.0, 1) < 1e-12);
    fmpq_set_si(h.values, 2, 1);
    CU_ASSERT_EQUAL(verify_ok(&t, &h, NULL), 0);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* sigma(q) also equals the 3-atom head with C = (1+x)^2, U = x(1+x): keys 0,1,2,
 * weights 1,2,1, values 0,1/2,1. C is not a multiple of D: the full product path. */
static void test_non_product_witness(void)
{
    hf_target_t t;
    hf_head_t h;
    int64_t k[3][1] = {{0}, {1}, {2}};
    fam_die(hf_target_init(&t, "sigma", 1, 1));
    fam_pair(&t, k[1], 0, 1);
    hf_head_init(&h, 1, 1);
    fam_atom(&h, k[0], 1, 0);
    fam_atom(&h, k[1], 2, 0);
    fmpq_set_si(h.values + 1, 1, 2);
    fam_atom(&h, k[2], 1, 1);
    CU_ASSERT_EQUAL(verify_ok(&t, &h, NULL), 1);
    CU_ASSERT(hf_verify_numeric(&t, &h, 100, 3.0, 5) < 1e-12);
    fmpq_set_si(h.values + 1, 1, 3); /* wrong middle value */
    CU_ASSERT_EQUAL(verify_ok(&t, &h, NULL), 0);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* Keys may be negative and heads translated: W_2 with its heads shifted by (-3, 5)
 * and (2, -7), against the product head shifted by (-100, 40). Rational weights and
 * values too: the second head is scaled by weight 2/3. */
static void test_translation_and_rationals(void)
{
    hf_target_t t;
    hf_head_t a, b, p;
    int64_t ka[2][2] = {{-3, 5}, {-2, 5}}, kb[2][2] = {{2, -7}, {2, -6}};
    fam_die(hf_target_init(&t, "shifted", 2, 1));
    hf_head_init(&a, 2, 1);
    hf_head_init(&b, 2, 1);
    fam_atom(&a, ka[0], 1, 0);
    fam_atom(&a, ka[1], 1, 1);
    fam_atom(&b, kb[0], 1, 0);
    fam_atom(&b, kb[1], 1, 1);
    fmpq_set_si(b.weights + 0, 2, 3);
    fmpq_set_si(b.weights + 1, 2, 3);
    fam_die(hf_target_add_head(&t, &a));
    fam_die(hf_target_add_head(&t, &b));
    product_wd(&p, 2);
    for (long i = 0; i < p.natoms; i++) {
        p.keys[2 * i] -= 100;
        p.keys[2 * i + 1] += 40;
        fmpq_set_si(p.weights + i, 5, 7); /* a common scale changes nothing */
    }
    CU_ASSERT_EQUAL(verify_ok(&t, &p, NULL), 1);
    CU_ASSERT(hf_verify_numeric(&t, &p, 100, 1.0, 9) < 1e-12);
    hf_head_clear(&p);
    hf_head_clear(&b);
    hf_head_clear(&a);
    hf_target_clear(&t);
}

/* dv = 2: values are vectors; each component is checked. */
static void test_vector_values(void)
{
    hf_target_t t;
    hf_head_t h, p;
    int64_t k0[1] = {0}, k1[1] = {1};
    fam_die(hf_target_init(&t, "vec", 1, 2));
    hf_head_init(&h, 1, 2);
    fam_atom(&h, k0, 1, 0);
    fam_atom(&h, k1, 1, 1);
    fmpq_set_si(h.values + 1, 5, 1);  /* atom 0 value (0, 5) */
    fmpq_set_si(h.values + 3, -2, 1); /* atom 1 value (1, -2) */
    fam_die(hf_target_add_head(&t, &h));
    hf_head_init(&p, 1, 2);
    fam_die(hf_head_copy(&p, &h));
    CU_ASSERT_EQUAL(verify_ok(&t, &p, NULL), 1);
    fmpq_set_si(p.values + 3, -1, 1); /* second component wrong */
    CU_ASSERT_EQUAL(verify_ok(&t, &p, NULL), 0);
    CU_ASSERT(hf_verify_numeric(&t, &p, 50, 1.0, 3) > 1e-3);
    hf_head_clear(&p);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

static void test_bad_input(void)
{
    hf_target_t t;
    hf_head_t h;
    int ok = 7;
    fam_wd(&t, 2);
    product_wd(&h, 3);
    CU_ASSERT_EQUAL(hf_verify_head(&t, &h, &ok, NULL), HF_ERR_INPUT);
    CU_ASSERT_EQUAL(ok, 0);
    CU_ASSERT(strlen(hf_error_msg()) > 0);
    CU_ASSERT(isnan(hf_verify_numeric(&t, &h, 10, 1.0, 1)));
    hf_head_clear(&h);
    /* an empty head is not a representation */
    hf_head_init(&h, 2, 1);
    CU_ASSERT_EQUAL(hf_verify_head(&t, &h, &ok, NULL), HF_OK);
    CU_ASSERT_EQUAL(ok, 0);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* The numeric generator is seeded: the same seed gives the same answer. */
static void test_numeric_deterministic(void)
{
    hf_target_t t;
    hf_head_t h;
    fam_wd(&t, 3);
    product_wd(&h, 3);
    fmpq_set_si(h.values + 1, 5, 1);
    double a = hf_verify_numeric(&t, &h, 50, 1.0, 11);
    double b = hf_verify_numeric(&t, &h, 50, 1.0, 11);
    double c = hf_verify_numeric(&t, &h, 50, 1.0, 12);
    CU_ASSERT(a == b);
    CU_ASSERT(a != c);
    CU_ASSERT(a > 0.1);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

/* The witness h checked slice by slice with p leading coordinates: the number of slices of
 * each result, and whether one lambda served every slice. h's keys must be sorted; with
 * `reverse` each slice's atoms are handed over in reverse order (keys out of order: the
 * check sorts them instead of reversing them once). */
static void slices_of(const hf_target_t *t, const hf_head_t *h, int p, long counts[4],
                      int *one_lambda, int reverse)
{
    hf_verify_slicer_t *v = NULL;
    CU_ASSERT_EQUAL_FATAL(hf_verify_slicer_create(t, p, &v), HF_OK);
    int64_t ext[HF_D_MAX], e[HF_D_MAX];
    hf_verify_slicer_extent(v, ext);
    long ns = 1;
    for (int a = 0; a < p; a++)
        ns *= ext[a] + 1;
    long m = h->natoms;
    int d = t->d, dv = t->dv;
    hf_supports_t s;
    hf_supports_init(&s, m, d, dv);
    CU_ASSERT_EQUAL_FATAL(hf_supports_push_head(&s, h), HF_OK);
    fmpq_t lam, first;
    fmpq_init(lam);
    fmpq_init(first);
    int have = 0;
    *one_lambda = 1;
    memset(counts, 0, 4 * sizeof *counts);
    long at = 0;
    for (long k = 0; k < ns; k++) {
        long rest = k;
        for (int a = p - 1; a >= 0; a--) {
            e[a] = rest % (ext[a] + 1);
            rest /= ext[a] + 1;
        }
        long n = 0;
        while (at + n < m) {
            int same = 1;
            for (int a = 0; a < p && same; a++)
                same = h->keys[(at + n) * d + a] == e[a];
            if (!same)
                break;
            n++;
        }
        int has = 0, res = -1;
        if (reverse)
            for (long i = 0, j = n - 1; i < j; i++, j--) {
                for (int a = 0; a < d; a++) {
                    int64_t x = s.keys[(at + i) * d + a];
                    s.keys[(at + i) * d + a] = s.keys[(at + j) * d + a];
                    s.keys[(at + j) * d + a] = x;
                }
                fmpz_swap(s.weights + at + i, s.weights + at + j);
                for (int a = 0; a < dv; a++)
                    fmpz_swap(s.wvalues + (at + i) * dv + a, s.wvalues + (at + j) * dv + a);
            }
        CU_ASSERT_EQUAL_FATAL(hf_verify_slice_check(v, e, n, s.keys + at * d, s.weights + at,
                                                    s.wvalues + at * dv, lam, &has, &res),
                              HF_OK);
        counts[res]++;
        if (has && !have) {
            fmpq_set(first, lam);
            have = 1;
        } else if (has && !fmpq_equal(first, lam)) {
            *one_lambda = 0;
        }
        at += n;
    }
    CU_ASSERT_EQUAL(at, m); /* every key fell in a slice of the box */
    fmpq_clear(first);
    fmpq_clear(lam);
    hf_supports_clear(&s);
    hf_verify_slicer_destroy(&v);
}

/* The product heads of the families pass slice by slice with every number of leading
 * coordinates, with one lambda; a planted wrong value fails a slice; a witness that is not a
 * multiple of D' is said so (then the whole check decides). */
static void test_slices(void)
{
    const char *specs[] = {
        "wd:d=1",        "wd:d=3",  "chain:d=2",     "chain:d=4",
        "multi:d=2,k=3", "wdw:d=3", "multi:d=3,k=2", "data/two_heads_shared.json"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        hf_target_t t;
        hf_head_t h;
        hf_target_init_empty(&t);
        hf_err_t e = strstr(specs[i], ".json") ? hf_target_load_json(&t, specs[i])
                                               : hf_target_from_family(&t, specs[i]);
        CU_ASSERT_EQUAL_FATAL(e, HF_OK);
        hf_head_init(&h, t.d, t.dv);
        CU_ASSERT_EQUAL_FATAL(hf_bounds_product_head(&t, 1L << 16, &h), HF_OK);
        for (int p = 0; p <= t.d && p <= 3; p++) {
            long c[4];
            int one = 0;
            slices_of(&t, &h, p, c, &one, 0);
            CU_ASSERT_EQUAL(c[HF_VERIFY_SLICE_NOT_MULTIPLE] + c[HF_VERIFY_SLICE_FAILED] +
                                c[HF_VERIFY_SLICE_BAD_WEIGHT],
                            0);
            CU_ASSERT(one);
            long r[4];
            int rone = 0;
            slices_of(&t, &h, p, r, &rone, 1); /* the same verdicts, keys out of order */
            CU_ASSERT(!memcmp(r, c, sizeof r) && rone == one);
            if (c[HF_VERIFY_SLICE_OK] == 0 || c[1] || c[2] || c[3] || !one)
                fprintf(stderr, "\n%s p=%d: ok %ld not-multiple %ld failed %ld weight %ld%s\n",
                        specs[i], p, c[0], c[1], c[2], c[3], one ? "" : " (lambdas differ)");
            /* a wrong value in the last atom: its slice fails */
            fmpq_add_si(h.values + (h.natoms - 1) * t.dv, h.values + (h.natoms - 1) * t.dv, 1);
            slices_of(&t, &h, p, c, &one, 0);
            CU_ASSERT_EQUAL(c[HF_VERIFY_SLICE_FAILED], 1);
            slices_of(&t, &h, p, c, &one, 1);
            CU_ASSERT_EQUAL(c[HF_VERIFY_SLICE_FAILED], 1);
            fmpq_sub_si(h.values + (h.natoms - 1) * t.dv, h.values + (h.natoms - 1) * t.dv, 1);
        }
        hf_head_clear(&h);
        hf_target_clear(&t);
    }
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"W_d product heads verify exactly (d <= 10)", test_wd_product_exact},
        {"W_16 product head verifies quickly", test_wd16_product_fast},
        {"planted wrong heads are rejected", test_planted_wrong},
        {"cancelling heads: one atom", test_cancelling},
        {"non-product witness (full identity)", test_non_product_witness},
        {"translated keys and rational weights", test_translation_and_rationals},
        {"vector values", test_vector_values},
        {"bad input", test_bad_input},
        {"numeric check is deterministic", test_numeric_deterministic},
        {"slice by slice: product heads, a planted value", test_slices},
        {NULL, NULL},
    };
    return hf_unit_suite("verify", cases);
}
