/* Tests of the bounds: face-rule lower bound, product-construction upper bound and the
 * product head itself, on W_d, chain, wdw, multi and hand-made targets. Product heads
 * are checked by the independent verifier. */
#include <time.h>

#include "families.h"
#include "headfuse/bounds.h"
#include "headfuse/verify.h"
#include "unit.h"

static void bounds_of(const hf_target_t *t, fmpz_t lb, fmpz_t ub, int *exact)
{
    CU_ASSERT_EQUAL_FATAL(hf_bounds_lower(t, lb), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_upper(t, ub, exact), HF_OK);
}

/* The product head must verify exactly, numerically, and have UB atoms. */
static void check_product(const hf_target_t *t, const fmpz_t ub)
{
    hf_head_t h;
    int ok = 0;
    hf_head_init(&h, t->d, t->dv);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_product_head(t, 1L << 20, &h), HF_OK);
    CU_ASSERT(fmpz_cmp_si(ub, h.natoms) == 0);
    CU_ASSERT_EQUAL(hf_verify_head(t, &h, &ok, NULL), HF_OK);
    CU_ASSERT_EQUAL(ok, 1);
    CU_ASSERT(hf_verify_numeric(t, &h, 100, 1.5, 3) < 1e-12);
    /* canonical position, lexicographic order, distinct keys */
    for (int j = 0; j < t->d; j++) {
        int64_t lo = h.keys[j];
        for (long i = 1; i < h.natoms; i++)
            if (h.keys[i * t->d + j] < lo)
                lo = h.keys[i * t->d + j];
        CU_ASSERT_EQUAL(lo, 0);
    }
    for (long i = 1; i < h.natoms; i++)
        CU_ASSERT(memcmp(h.keys + (i - 1) * t->d, h.keys + i * t->d, 0) == 0);
    for (long i = 1; i < h.natoms; i++) {
        int c = 0;
        for (int j = 0; j < t->d && !c; j++)
            c = (h.keys[(i - 1) * t->d + j] > h.keys[i * t->d + j]) -
                (h.keys[(i - 1) * t->d + j] < h.keys[i * t->d + j]);
        CU_ASSERT(c < 0);
    }
    hf_head_clear(&h);
}

static void test_wd_lb_ub(void)
{
    fmpz_t lb, ub, two;
    int exact;
    fmpz_init(lb);
    fmpz_init(ub);
    fmpz_init(two);
    clock_t c0 = clock();
    for (int d = 1; d <= 64; d++) {
        hf_target_t t;
        fam_wd(&t, d);
        bounds_of(&t, lb, ub, &exact);
        fmpz_set_ui(two, 1);
        fmpz_mul_2exp(two, two, (ulong)d);
        CU_ASSERT(fmpz_equal(lb, two));
        CU_ASSERT(fmpz_equal(ub, two));
        CU_ASSERT_EQUAL(exact, 1);
        hf_target_clear(&t);
    }
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    printf("\n  LB = UB = 2^d for W_d, d = 1..64: %.2f s\n", secs);
    if (!getenv("HF_NO_TIMING"))
        CU_ASSERT(secs < 2.0);
    fmpz_clear(two);
    fmpz_clear(ub);
    fmpz_clear(lb);
}

/* Product head of W_d: keys {0,1}^d, weights equal, value = popcount; verified. */
static void test_wd_product_head(void)
{
    fmpz_t ub;
    fmpz_init(ub);
    for (int d = 1; d <= 10; d++) {
        hf_target_t t;
        hf_head_t h;
        int exact, ok = 0;
        fam_wd(&t, d);
        hf_head_init(&h, d, 1);
        CU_ASSERT_EQUAL_FATAL(hf_bounds_product_head(&t, 1L << 20, &h), HF_OK);
        CU_ASSERT_EQUAL(h.natoms, 1L << d);
        for (long i = 0; i < h.natoms; i++) {
            long ones = 0;
            for (int j = 0; j < d; j++) {
                /* lexicographic order of {0,1}^d is binary counting */
                CU_ASSERT_EQUAL(h.keys[i * d + j], (i >> (d - 1 - j)) & 1);
                ones += h.keys[i * d + j];
            }
            CU_ASSERT(fmpq_equal(h.weights + i, h.weights));
            CU_ASSERT(fmpz_equal_si(fmpq_numref(h.values + i), ones));
            CU_ASSERT(fmpz_is_one(fmpq_denref(h.values + i)));
        }
        CU_ASSERT_EQUAL(hf_verify_head(&t, &h, &ok, NULL), HF_OK);
        CU_ASSERT_EQUAL(ok, 1);
        CU_ASSERT(hf_verify_numeric(&t, &h, 200, 2.0, 17) < 1e-12);
        CU_ASSERT_EQUAL(hf_bounds_upper(&t, ub, &exact), HF_OK);
        CU_ASSERT(fmpz_cmp_si(ub, h.natoms) == 0);
        hf_head_clear(&h);
        hf_target_clear(&t);
    }
    fmpz_clear(ub);
}

static void test_product_head_limit(void)
{
    hf_target_t t;
    hf_head_t h;
    fam_wd(&t, 20);
    hf_head_init(&h, 20, 1);
    hf_error_clear();
    CU_ASSERT_EQUAL(hf_bounds_product_head(&t, 1000, &h), HF_ERR_LIMIT);
    CU_ASSERT(strstr(hf_error_msg(), "1048576") != NULL);
    CU_ASSERT_EQUAL(h.natoms, 0);
    hf_head_clear(&h);
    hf_target_clear(&t);
}

static void test_chain(void)
{
    static const long ub_expect[5] = {0, 0, 7, 24, 82};
    fmpz_t lb, ub;
    fmpz_init(lb);
    fmpz_init(ub);
    printf("\n");
    for (int d = 2; d <= 4; d++) {
        hf_target_t t;
        int exact;
        fam_chain(&t, d);
        bounds_of(&t, lb, ub, &exact);
        printf("  chain_%d: LB = %ld, UB = %ld\n", d, fmpz_get_si(lb), fmpz_get_si(ub));
        CU_ASSERT(fmpz_equal_si(ub, ub_expect[d]));
        CU_ASSERT_EQUAL(exact, 1);
        CU_ASSERT(fmpz_cmp_si(lb, 2) >= 0);
        CU_ASSERT(fmpz_cmp(lb, ub) <= 0);
        if (d == 2) /* faces along e_1 - e_2: sigma(q1+q2) twice, 2 + 2 */
            CU_ASSERT(fmpz_cmp_si(lb, 4) >= 0);
        check_product(&t, ub);
        hf_target_clear(&t);
    }
    fmpz_clear(ub);
    fmpz_clear(lb);
}

static void test_wdw(void)
{
    fmpz_t lb, ub;
    fmpz_init(lb);
    fmpz_init(ub);
    for (int d = 1; d <= 10; d++) {
        hf_target_t t;
        int exact;
        fam_wdw(&t, d);
        bounds_of(&t, lb, ub, &exact);
        CU_ASSERT(fmpz_equal_si(lb, 1L << d));
        CU_ASSERT(fmpz_equal_si(ub, 1L << d));
        if (d <= 4)
            check_product(&t, ub);
        hf_target_clear(&t);
    }
    printf("\n  wdw_d: LB = UB = 2^d for d = 1..10\n");
    fmpz_clear(ub);
    fmpz_clear(lb);
}

static void test_multi(void)
{
    fmpz_t lb, ub;
    fmpz_init(lb);
    fmpz_init(ub);
    printf("\n");
    for (int d = 1; d <= 3; d++)
        for (int k = 2; k <= 4; k++) {
            hf_target_t t;
            int exact;
            long kd = 1;
            for (int j = 0; j < d; j++)
                kd *= k;
            fam_multi(&t, d, k);
            bounds_of(&t, lb, ub, &exact);
            printf("  multi_{%d,%d}: LB = %ld, UB = %ld\n", d, k, fmpz_get_si(lb),
                   fmpz_get_si(ub));
            CU_ASSERT(fmpz_equal_si(ub, kd));
            CU_ASSERT(fmpz_cmp_si(lb, 1L << d) >= 0);
            CU_ASSERT(fmpz_cmp(lb, ub) <= 0);
            if (kd <= 64)
                check_product(&t, ub);
            hf_target_clear(&t);
        }
    fmpz_clear(ub);
    fmpz_clear(lb);
}

/* sigma(q) + (1 - sigma(q)) == 1: never proven non-invariant, so LB = 1. */
static void test_cancelling(void)
{
    hf_target_t t;
    int64_t one[1] = {1};
    fmpz_t lb;
    fmpz_init(lb);
    fam_die(hf_target_init(&t, "cancel", 1, 1));
    fam_pair(&t, one, 0, 1);
    fam_pair(&t, one, 1, 0);
    CU_ASSERT_EQUAL(hf_bounds_lower(&t, lb), HF_OK);
    CU_ASSERT(fmpz_is_one(lb));
    /* the same pair embedded in W_3 (on coordinate 2): the W_2 part still counts 4 */
    hf_target_clear(&t);
    fam_wd(&t, 3);
    hf_head_clear(t.heads + 2);
    t.nheads = 2;
    int64_t e3[3] = {0, 0, 1};
    fam_pair(&t, e3, 0, 1);
    fam_pair(&t, e3, 1, 0);
    CU_ASSERT_EQUAL(hf_bounds_lower(&t, lb), HF_OK);
    CU_ASSERT(fmpz_equal_si(lb, 4));
    hf_target_clear(&t);
    fmpz_clear(lb);
}

static void test_limit_target(void)
{
    hf_target_t t, l;
    int64_t w[2] = {1, 0}, wn[2] = {-1, 0};
    fam_wd(&t, 2);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_limit_target(&t, w, &l), HF_OK);
    CU_ASSERT_EQUAL_FATAL(l.nheads, 2);
    /* sigma(q1) keeps its atom (1,0) of value 1; sigma(q2) is flat along w: whole head */
    CU_ASSERT_EQUAL(l.heads[0].natoms, 1);
    CU_ASSERT_EQUAL(l.heads[0].keys[0], 1);
    CU_ASSERT_EQUAL(l.heads[0].keys[1], 0);
    CU_ASSERT(fmpq_is_one(l.heads[0].values));
    CU_ASSERT(fmpq_is_one(l.heads[0].weights));
    CU_ASSERT_EQUAL(l.heads[1].natoms, 2);
    CU_ASSERT_EQUAL(l.heads[1].keys[0], 0);
    CU_ASSERT_EQUAL(l.heads[1].keys[1], 0);
    CU_ASSERT_EQUAL(l.heads[1].keys[2], 0);
    CU_ASSERT_EQUAL(l.heads[1].keys[3], 1);
    hf_target_clear(&l);
    CU_ASSERT_EQUAL_FATAL(hf_bounds_limit_target(&t, wn, &l), HF_OK);
    CU_ASSERT_EQUAL(l.heads[0].natoms, 1);
    CU_ASSERT_EQUAL(l.heads[0].keys[0], 0);
    CU_ASSERT(fmpq_is_zero(l.heads[0].values));
    CU_ASSERT_EQUAL(l.heads[1].natoms, 2);
    hf_target_clear(&l);
    hf_target_clear(&t);
}

/* LB does not change under what the canonical form removes: translations of a head,
 * head order, weight scale of a head, a constant added, a global scale, an unused
 * coordinate. Identical heads are NOT merged: 2 sigma(q) still needs 2 atoms. */
static void test_canonical_invariance(void)
{
    hf_target_t t;
    fmpz_t lb;
    fmpz_init(lb);
    fam_die(hf_target_init(&t, "mixed", 4, 1));
    int64_t k[3][4] = {{5, 0, -2, 0}, {0, 0, 0, 0}, {0, 0, -1, 0}};
    /* sigma(q1) as keys (5,0,-2,0),(6,0,-2,0) weights 3, values 7 -> 10 (=3 sigma + 7) */
    hf_head_t h;
    hf_head_init(&h, 4, 1);
    fam_atom(&h, k[0], 3, 7);
    k[0][0] = 6;
    fam_atom(&h, k[0], 3, 10);
    fam_die(hf_target_add_head(&t, &h));
    hf_head_clear(&h);
    /* 3 sigma(-q3): keys 0 (value 0) and -e3 (value 3) */
    hf_head_init(&h, 4, 1);
    fam_atom(&h, k[1], 1, 0);
    fam_atom(&h, k[2], 1, 3);
    fam_die(hf_target_add_head(&t, &h));
    hf_head_clear(&h);
    /* a constant head with several keys */
    int64_t e2[4] = {0, 1, 0, 0};
    fam_pair(&t, e2, 4, 4);
    CU_ASSERT_EQUAL(hf_bounds_lower(&t, lb), HF_OK);
    CU_ASSERT(fmpz_equal_si(lb, 4)); /* 3 (sigma(q1) + sigma(-q3)) + const: W_2 */
    fmpz_t ub;
    int exact;
    fmpz_init(ub);
    CU_ASSERT_EQUAL(hf_bounds_upper(&t, ub, &exact), HF_OK);
    CU_ASSERT(fmpz_equal_si(ub, 4)); /* the constant head takes no part */
    check_product(&t, ub);
    fmpz_clear(ub);
    hf_target_clear(&t);

    /* 2 sigma(q) as two identical heads: LB 2 (not 1: the heads are not merged) */
    int64_t one[1] = {1};
    fam_die(hf_target_init(&t, "twice", 1, 1));
    fam_pair(&t, one, 0, 1);
    fam_pair(&t, one, 0, 1);
    CU_ASSERT_EQUAL(hf_bounds_lower(&t, lb), HF_OK);
    CU_ASSERT(fmpz_equal_si(lb, 2));
    hf_target_clear(&t);

    /* no heads: a constant, one atom */
    fam_die(hf_target_init(&t, "zero", 3, 1));
    CU_ASSERT_EQUAL(hf_bounds_lower(&t, lb), HF_OK);
    CU_ASSERT(fmpz_is_one(lb));
    fmpz_init(ub);
    CU_ASSERT_EQUAL(hf_bounds_upper(&t, ub, &exact), HF_OK);
    CU_ASSERT(fmpz_is_one(ub));
    check_product(&t, ub);
    fmpz_clear(ub);
    hf_target_clear(&t);
    fmpz_clear(lb);
}

/* Repeated keys inside a head are merged (weights add, values average). */
static void test_repeated_keys(void)
{
    hf_target_t t;
    hf_head_t h;
    int64_t z[1] = {0}, o[1] = {1};
    fmpz_t lb, ub;
    int exact;
    fmpz_init(lb);
    fmpz_init(ub);
    fam_die(hf_target_init(&t, "repeat", 1, 1));
    hf_head_init(&h, 1, 1);
    fam_atom(&h, z, 1, 0);
    fam_atom(&h, o, 1, 1);
    fam_atom(&h, o, 2, 4); /* with the atom above: key 1, weight 3, value 3 */
    fam_die(hf_target_add_head(&t, &h));
    hf_head_clear(&h);
    bounds_of(&t, lb, ub, &exact);
    CU_ASSERT(fmpz_equal_si(lb, 2));
    CU_ASSERT(fmpz_equal_si(ub, 2));
    check_product(&t, ub);
    hf_target_clear(&t);
    fmpz_clear(ub);
    fmpz_clear(lb);
}

/* Blocks on disjoint coordinates multiply: chain_3 on coordinates 0..2 and W_2 on
 * 3..4 give 24 * 4; a head bridging them would join the blocks. */
static void test_blocks(void)
{
    hf_target_t t;
    fmpz_t lb, ub;
    int exact;
    fmpz_init(lb);
    fmpz_init(ub);
    fam_die(hf_target_init(&t, "blocks", 5, 1));
    for (int i = 0; i < 3; i++) {
        int64_t k[5] = {0};
        k[i] = 1;
        fam_pair(&t, k, 0, 1);
        if (i < 2) {
            k[i + 1] = 1;
            fam_pair(&t, k, 0, 1);
        }
    }
    for (int i = 3; i < 5; i++) {
        int64_t k[5] = {0};
        k[i] = 1;
        fam_pair(&t, k, 0, 1);
    }
    bounds_of(&t, lb, ub, &exact);
    CU_ASSERT(fmpz_equal_si(ub, 24 * 4));
    CU_ASSERT_EQUAL(exact, 1);
    printf("\n  chain_3 (+) W_2: LB = %ld, UB = %ld\n", fmpz_get_si(lb), fmpz_get_si(ub));
    CU_ASSERT(fmpz_cmp(lb, ub) <= 0);
    check_product(&t, ub);
    hf_target_clear(&t);
    fmpz_clear(ub);
    fmpz_clear(lb);
}

/* A block too large to enumerate: UB falls back to the product of head sizes. */
static void test_upper_fallback(void)
{
    hf_target_t t;
    fmpz_t ub, expect;
    int exact = 1;
    fmpz_init(ub);
    fmpz_init(expect);
    /* 12 heads of 6 atoms, all on coordinates 0 and 1 with generic keys: huge sums */
    fam_die(hf_target_init(&t, "big", 2, 1));
    uint64_t s = 12345;
    for (int h = 0; h < 12; h++) {
        hf_head_t hd;
        hf_head_init(&hd, 2, 1);
        for (int a = 0; a < 6; a++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t key[2] = {(int64_t)(s >> 40) % 100000 + a * 150000,
                              (int64_t)(s >> 20) % 100000};
            fam_atom(&hd, key, 1, a);
        }
        fam_die(hf_target_add_head(&t, &hd));
        hf_head_clear(&hd);
    }
    CU_ASSERT_EQUAL(hf_bounds_upper(&t, ub, &exact), HF_OK);
    fmpz_set_ui(expect, 6);
    fmpz_pow_ui(expect, expect, 12);
    CU_ASSERT_EQUAL(exact, 0);
    CU_ASSERT(fmpz_equal(ub, expect));
    hf_target_clear(&t);
    fmpz_clear(expect);
    fmpz_clear(ub);
}

static void test_bad_input(void)
{
    hf_target_t t;
    fmpz_t lb;
    fmpz_init(lb);
    fam_wd(&t, 2);
    fmpq_set_si(t.heads[1].weights + 1, -1, 2);
    hf_error_clear();
    CU_ASSERT_EQUAL(hf_bounds_lower(&t, lb), HF_ERR_INPUT);
    printf("\n  message: %s\n", hf_error_msg());
    CU_ASSERT(strstr(hf_error_msg(), "heads[1]: atoms[1].weight") != NULL);
    hf_target_clear(&t);
    fmpz_clear(lb);
}

int hf_register_tests(void)
{
    /* FLINT keeps freed integers in a cache: release it at exit so valgrind sees no leak */
    atexit(flint_cleanup_master);
    static const hf_unit_case_t cases[] = {
        {"W_d: LB = UB = 2^d, d = 1..64", test_wd_lb_ub},
        {"W_d product head: {0,1}^d, popcount, verified", test_wd_product_head},
        {"product head over max_atoms is refused", test_product_head_limit},
        {"chain_d bounds (d = 2..4)", test_chain},
        {"wdw_d: LB = UB = 2^d (d <= 10)", test_wdw},
        {"multi_{d,k} bounds", test_multi},
        {"cancelling heads give LB 1", test_cancelling},
        {"limit target of W_2", test_limit_target},
        {"canonical form invariances", test_canonical_invariance},
        {"repeated keys in a head", test_repeated_keys},
        {"independent blocks multiply", test_blocks},
        {"upper bound fallback over the cap", test_upper_fallback},
        {"bad input", test_bad_input},
        {NULL, NULL},
    };
    return hf_unit_suite("bounds", cases);
}
