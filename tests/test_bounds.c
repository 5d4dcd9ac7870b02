/* Tests of the bounds: face-rule lower bound, product-construction upper bound and the
 * product head itself, on W_d, chain, wdw, multi and hand-made targets. Product heads
 * are checked by the independent verifier. */
#include <math.h>
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
            printf("  multi_{%d,%d}: LB = %ld, UB = %ld\n", d, k, fmpz_get_si(lb), fmpz_get_si(ub));
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

/* sigma(q1) + sigma(q2) + (1 - sigma(q2)) == sigma(q1) + 1 needs 2 atoms. Along e_2 the
 * limits look like sigma(q1) twice (2 + 2), but T is invariant along e_2: the proof
 * must fail there, or the bound would be an unsound 4. */
static void test_partial_cancelling(void)
{
    hf_target_t t;
    int64_t e1[2] = {1, 0}, e2[2] = {0, 1};
    fmpz_t lb;
    fmpz_init(lb);
    fam_die(hf_target_init(&t, "partial", 2, 1));
    fam_pair(&t, e1, 0, 1);
    fam_pair(&t, e2, 0, 1);
    fam_pair(&t, e2, 1, 0);
    CU_ASSERT_EQUAL(hf_bounds_lower(&t, lb), HF_OK);
    CU_ASSERT(fmpz_equal_si(lb, 2));
    hf_target_clear(&t);
    fmpz_clear(lb);
}

/* Seeded random small targets: a transformed copy (coordinates permuted, heads in
 * reverse order, each head translated and its weights scaled, values tripled and 1/2
 * added to one head) has the same LB; LB agrees with the naive oracle below; LB <= UB;
 * the product head has UB atoms and verifies exactly. */
static uint64_t rnd_state = 2024;
static long rnd(long n)
{
    rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (long)((rnd_state >> 33) % (uint64_t)n);
}

/* An independent, deliberately naive face-rule bound for small targets: no canonical
 * form, no memo, invariance judged numerically (a test oracle only). */
static double naive_eval(const hf_target_t *t, const double *q)
{
    double s = 0, v;
    for (int h = 0; h < t->nheads; h++) {
        hf_head_eval(t->heads + h, q, &v);
        s += v;
    }
    return s;
}

static int naive_varies(const hf_target_t *t, const int64_t *w)
{
    for (int r = 0; r < 8; r++) {
        double q[3], q2[3], step = 0.5 + (double)rnd(100) / 50;
        for (int j = 0; j < t->d; j++) {
            q[j] = (double)(rnd(200) - 100) / 50;
            q2[j] = q[j] + step * (double)w[j];
        }
        if (fabs(naive_eval(t, q) - naive_eval(t, q2)) > 1e-9)
            return 1;
    }
    return 0;
}

static long naive_lb(const hf_target_t *t)
{
    int d = t->d;
    long best = 1, total = hf_target_head_atoms(t);
    for (int i = 0; i < d; i++)
        for (int j = i; j < d; j++)
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                int64_t w[3] = {0, 0, 0}, wn[3] = {0, 0, 0};
                if (j == i && sgn < 0)
                    continue;
                w[i] = 1;
                if (j != i)
                    w[j] = sgn;
                for (int k = 0; k < d; k++)
                    wn[k] = -w[k];
                hf_target_t a, b;
                fam_die(hf_bounds_limit_target(t, w, &a));
                fam_die(hf_bounds_limit_target(t, wn, &b));
                /* skip directions along which every head is flat (the limit is T) */
                if (hf_target_head_atoms(&a) < total && naive_varies(t, w)) {
                    long s = naive_lb(&a) + naive_lb(&b);
                    if (s > best)
                        best = s;
                }
                hf_target_clear(&b);
                hf_target_clear(&a);
            }
    return best;
}

static void test_random_targets(void)
{
    fmpz_t lb, lb2, ub;
    fmpz_init(lb);
    fmpz_init(lb2);
    fmpz_init(ub);
    for (int it = 0; it < 150; it++) {
        int d = 1 + (int)rnd(3), H = 1 + (int)rnd(4), perm[3] = {0, 1, 2};
        for (int j = d - 1; j > 0; j--) {
            int r = (int)rnd(j + 1), x = perm[j];
            perm[j] = perm[r];
            perm[r] = x;
        }
        hf_target_t t, u;
        fam_die(hf_target_init(&t, "random", d, 1));
        fam_die(hf_target_init(&u, "random'", d, 1));
        hf_head_t *heads = calloc((size_t)H, sizeof *heads);
        for (int h = 0; h < H; h++) {
            hf_head_init(heads + h, d, 1);
            int n = 2 + (int)rnd(2);
            for (int a = 0; a < n; a++) {
                int64_t key[3] = {0, 0, 0};
                for (int j = 0; j < d; j++)
                    key[j] = rnd(5) - 2;
                fam_atom(heads + h, key, 1 + rnd(3), rnd(5) - 2);
            }
            fam_die(hf_target_add_head(&t, heads + h));
        }
        for (int h = H - 1; h >= 0; h--) {
            hf_head_t g;
            hf_head_init(&g, d, 1);
            fam_die(hf_head_copy(&g, heads + h));
            int64_t shift[3] = {rnd(7) - 3, rnd(7) - 3, rnd(7) - 3};
            for (long a = 0; a < g.natoms; a++) {
                for (int j = 0; j < d; j++)
                    g.keys[a * d + perm[j]] = heads[h].keys[a * d + j] + shift[j];
                fmpq_mul_si(g.weights + a, g.weights + a, 5);
                fmpq_mul_si(g.values + a, g.values + a, 3);
                if (h == 0) { /* the constant 1/2 added once */
                    fmpq_t half;
                    fmpq_init(half);
                    fmpq_set_si(half, 1, 2);
                    fmpq_add(g.values + a, g.values + a, half);
                    fmpq_clear(half);
                }
            }
            fam_die(hf_target_add_head(&u, &g));
            hf_head_clear(&g);
        }
        int exact;
        bounds_of(&t, lb, ub, &exact);
        CU_ASSERT_EQUAL_FATAL(hf_bounds_lower(&u, lb2), HF_OK);
        CU_ASSERT(fmpz_equal(lb, lb2));
        CU_ASSERT(fmpz_equal_si(lb, naive_lb(&t)));
        CU_ASSERT(fmpz_cmp(lb, ub) <= 0);
        CU_ASSERT(fmpz_sgn(lb) > 0);
        check_product(&t, ub);
        for (int h = 0; h < H; h++)
            hf_head_clear(heads + h);
        free(heads);
        hf_target_clear(&u);
        hf_target_clear(&t);
    }
    fmpz_clear(ub);
    fmpz_clear(lb2);
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

/* chain_64 is too big for the recursion: the work cap stops it, the bound stays valid
 * and the call says it is incomplete (about 3 s natively; skipped under valgrind). */
static void test_lower_capped(void)
{
    hf_target_t t;
    fmpz_t lb, ub;
    int complete = -1, exact;
    fmpz_init(lb);
    fmpz_init(ub);
    fam_chain(&t, 4);
    CU_ASSERT_EQUAL(hf_bounds_lower_ex(&t, lb, &complete), HF_OK);
    CU_ASSERT_EQUAL(complete, 1);
    CU_ASSERT(fmpz_equal_si(lb, 16));
    hf_target_clear(&t);
    if (!getenv("HF_QUICK")) {
        fam_chain(&t, 64);
        clock_t c0 = clock();
        CU_ASSERT_EQUAL(hf_bounds_lower_ex(&t, lb, &complete), HF_OK);
        double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
        CU_ASSERT_EQUAL(hf_bounds_upper(&t, ub, &exact), HF_OK);
        printf("\n  chain_64: LB >= 2^%ld (complete = %d, %.1f s), UB <= 2^%ld\n",
               (long)fmpz_bits(lb) - 1, complete, secs, (long)fmpz_bits(ub) - 1);
        CU_ASSERT_EQUAL(complete, 0);
        CU_ASSERT(fmpz_cmp_si(lb, 2) >= 0);
        CU_ASSERT(fmpz_cmp(lb, ub) <= 0);
        hf_target_clear(&t);
    }
    fmpz_clear(ub);
    fmpz_clear(lb);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"W_d: LB = UB = 2^d, d = 1..64", test_wd_lb_ub},
        {"W_d product head: {0,1}^d, popcount, verified", test_wd_product_head},
        {"product head over max_atoms is refused", test_product_head_limit},
        {"chain_d bounds (d = 2..4)", test_chain},
        {"wdw_d: LB = UB = 2^d (d <= 10)", test_wdw},
        {"multi_{d,k} bounds", test_multi},
        {"cancelling heads give LB 1", test_cancelling},
        {"partial cancelling is not counted", test_partial_cancelling},
        {"random targets: invariance, LB <= UB, product head", test_random_targets},
        {"limit target of W_2", test_limit_target},
        {"canonical form invariances", test_canonical_invariance},
        {"repeated keys in a head", test_repeated_keys},
        {"independent blocks multiply", test_blocks},
        {"upper bound fallback over the cap", test_upper_fallback},
        {"capped lower bound is valid and flagged", test_lower_capped},
        {"bad input", test_bad_input},
        {NULL, NULL},
    };
    return hf_unit_suite("bounds", cases);
}
