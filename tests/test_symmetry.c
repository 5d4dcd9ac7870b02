/* Tests of the symmetry module: group orders of the families (known values), nauty's
 * group against the brute force (the test oracle) on families, JSON targets and random
 * small targets, the exact checks against each other, orbit representatives (invariant on
 * an orbit, the same over the closure and over the listed group, the oracle's over the
 * whole group), the canonical form of large key sets against libc's qsort, affine
 * equivalence of fractions, and allocation failures. Run from the source directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/control.h"
#include "headfuse/symmetry.h"
#include "symmetry/symmetry_impl.h"
#include "unit.h"

static int load(const char *spec, hf_target_t *t)
{
    hf_target_init_empty(t);
    hf_err_t err =
        strstr(spec, ".json") ? hf_target_load_json(t, spec) : hf_target_from_family(t, spec);
    if (err != HF_OK)
        fprintf(stderr, "\n%s: %s\n", spec, hf_error_msg());
    return err == HF_OK;
}

/* splitmix64, as hf_rng_next: the tests' seeds give the same targets as before */
static uint64_t rng_next(uint64_t *st)
{
    return hf_hash_mix(*st += 0x9e3779b97f4a7c15ULL);
}

/* A target with its fraction and group (the search makes them the same way). */
typedef struct {
    hf_target_t t;
    hf_fraction_t f;
    hf_group_t *g;
} tg_t;

static int tg_make(tg_t *x, const hf_target_t *t)
{
    hf_target_init_empty(&x->t);
    hf_fraction_init(&x->f);
    x->g = NULL;
    if (hf_target_copy(&x->t, t) != HF_OK)
        return 0;
    hf_err_t e = hf_fraction_from_target(&x->f, &x->t);
    if (e == HF_OK)
        e = hf_group_create(&x->t, &x->f, &x->g);
    if (e != HF_OK)
        fprintf(stderr, "\n%s: %s\n", t->name, hf_error_msg());
    return e == HF_OK;
}

static void tg_clear(tg_t *x)
{
    hf_group_destroy(&x->g);
    hf_fraction_clear(&x->f);
    hf_target_clear(&x->t);
}

static long order_of(const char *spec)
{
    hf_target_t t;
    tg_t x;
    long order = -2;
    if (!load(spec, &t))
        return order;
    if (tg_make(&x, &t))
        order = hf_group_order(x.g);
    tg_clear(&x);
    hf_target_clear(&t);
    return order;
}

/* Group orders: W_d has the d! coordinate permutations, each also composed with negating
 * every coordinate (W_d(-q) = d - W_d(q)), so 2 d!; negating some coordinates only is not
 * affine in W_d. From nauty for every d where P/Q fits the graph (the brute force stops
 * at d = 7). */
static void test_group_orders(void)
{
    long want = 1;
    for (int d = 1; d <= 12; d++) {
        char spec[32];
        want *= d;
        snprintf(spec, sizeof spec, "wd:d=%d", d);
        long got = order_of(spec);
        if (got != 2 * want)
            fprintf(stderr, "\n%s: group order %ld\n", spec, got);
        CU_ASSERT_EQUAL(got, 2 * want);
    }
    /* chain d = 2: swap and negate-all, 4; wdw d = 2: weights 1, 2 break the swap */
    static const struct {
        const char *spec;
        long order;
    } more[] = {{"chain:d=2", 4},     {"chain:d=3", 4}, {"wdw:d=2", 2},
                {"multi:d=2,k=3", 4}, {"chain:d=9", 4}, {"multi:d=9,k=2", 2 * 362880L}};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) {
        long got = order_of(more[i].spec);
        if (got != more[i].order)
            fprintf(stderr, "\n%s: group order %ld\n", more[i].spec, got);
        CU_ASSERT_EQUAL(got, more[i].order);
    }
}

/* W_8, above the brute force's d = 7: orbits by closure under the generators, and the same
 * over the 80 640 listed elements when the orbit may not be held. */
static void test_orbit_w8(void)
{
    hf_target_t t;
    tg_t x;
    CU_ASSERT_FATAL(load("wd:d=8", &t));
    CU_ASSERT_FATAL(tg_make(&x, &t));
    int64_t k[8] = {1, 0, 0, 0, 0, 0, 0, 0}, rep[8];
    CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, 1, k, rep), HF_OK);
    CU_ASSERT(rep[0] == 0 && rep[7] == 0);
    int64_t two[16] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, r2[16];
    static const int64_t want2[16] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0};
    CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, 2, two, r2), HF_OK);
    CU_ASSERT(!memcmp(r2, want2, sizeof r2));
    hf_knob_set(HF_KNOB_ORBIT_BYTES_MAX, 1);
    memset(r2, 0x7f, sizeof r2);
    CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, 2, two, r2), HF_OK);
    hf_knob_unset(HF_KNOB_ORBIT_BYTES_MAX);
    CU_ASSERT(!memcmp(r2, want2, sizeof r2));
    tg_clear(&x);
    hf_target_clear(&t);
}

/* nauty against the brute force (the test oracle): the same group order, and the same
 * orbit representative for random supports, on one target. */
static void oracle_compare(const hf_target_t *t, uint64_t *st)
{
    tg_t x;
    long order = 0, ng = 0;
    int8_t *gp = NULL, *gs = NULL, *el = NULL;
    int d = t->d;
    CU_ASSERT_FATAL(tg_make(&x, t));
    CU_ASSERT_EQUAL_FATAL(hf_group_brute(&x.t, &x.f, &order, &ng, &gp, &gs, &el), HF_OK);
    if (hf_group_order(x.g) != order)
        fprintf(stderr, "\n%s: nauty %ld, brute force %ld\n", t->name, hf_group_order(x.g), order);
    CU_ASSERT_EQUAL(hf_group_order(x.g), order);
    /* the normal-form check agrees with the brute force's test: on the symmetries and on
     * random signed permutations */
    for (int trial = 0; trial < 16; trial++) {
        int8_t p[HF_D_MAX], sg[HF_D_MAX];
        int a = -1, b = -1;
        if (trial < 4 && trial < order) {
            memcpy(p, el + trial * 2 * d, (size_t)d);
            memcpy(sg, el + trial * 2 * d + d, (size_t)d);
        } else {
            for (int j = 0; j < d; j++)
                p[j] = (int8_t)j;
            for (int j = d - 1; j > 0; j--) {
                int r = (int)(rng_next(st) % (uint64_t)(j + 1));
                int8_t y = p[j];
                p[j] = p[r];
                p[r] = y;
            }
            for (int j = 0; j < d; j++)
                sg[j] = rng_next(st) % 2 ? -1 : 1;
        }
        CU_ASSERT_EQUAL(hf_group_check(&x.f, p, sg, &a), HF_OK);
        CU_ASSERT_EQUAL(hf_group_exact_test(&x.t, &x.f, p, sg, &b), HF_OK);
        CU_ASSERT_EQUAL(a, b);
        if (trial < 4 && trial < order)
            CU_ASSERT_EQUAL(a, 1);
    }
    for (int trial = 0; trial < 8; trial++) {
        long m = 1 + (long)(rng_next(st) % 5);
        int64_t k[5 * HF_D_MAX], a[5 * HF_D_MAX], b[5 * HF_D_MAX];
        for (long i = 0; i < m * d; i++)
            k[i] = (int64_t)(rng_next(st) % 3);
        CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, m, k, a), HF_OK);
        CU_ASSERT_EQUAL(hf_group_orbit_rep_list(d, order, el, m, k, b), HF_OK);
        CU_ASSERT(!memcmp(a, b, (size_t)(m * d) * sizeof *a));
        /* an orbit too large to hold: the same over the group's listed elements */
        hf_knob_set(HF_KNOB_ORBIT_BYTES_MAX, 1);
        CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, m, k, a), HF_OK);
        hf_knob_unset(HF_KNOB_ORBIT_BYTES_MAX);
        CU_ASSERT(!memcmp(a, b, (size_t)(m * d) * sizeof *a));
    }
    free(el);
    free(gs);
    free(gp);
    tg_clear(&x);
}

static void test_group_oracle_families(void)
{
    static const char *const fams[] = {"wd", "chain", "wdw", "multi:k=2", "multi:k=3"};
    uint64_t st = 611;
    for (size_t i = 0; i < sizeof fams / sizeof *fams; i++)
        for (int d = 1; d <= 6; d++) {
            char spec[48];
            hf_target_t t;
            const char *colon = strchr(fams[i], ':');
            if (colon)
                snprintf(spec, sizeof spec, "%.*s:d=%d,%s", (int)(colon - fams[i]), fams[i], d,
                         colon + 1);
            else
                snprintf(spec, sizeof spec, "%s:d=%d", fams[i], d);
            if (!load(spec, &t)) {
                CU_FAIL("target did not load");
                continue;
            }
            oracle_compare(&t, &st);
            hf_target_clear(&t);
        }
    static const char *const files[] = {"data/cubic_factor.json",
                                        "data/two_heads_shared.json",
                                        "tests/fixtures/good/duplicate_keys.json",
                                        "tests/fixtures/good/dv2.json",
                                        "tests/fixtures/good/rational_weights.json",
                                        "tests/fixtures/good/value_array_dv1.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        hf_target_t t;
        if (!load(files[i], &t)) {
            CU_FAIL("target did not load");
            continue;
        }
        oracle_compare(&t, &st);
        hf_target_clear(&t);
    }
}

/* A one-head target (d, dv = 1) from keys and integer weights/values. */
static void one_head(hf_target_t *t, int d, long n, const int64_t *keys, const long *w,
                     const long *v)
{
    hf_head_t h;
    fmpq_t fw, fv;
    fmpq_init(fw);
    fmpq_init(fv);
    hf_head_init(&h, d, 1);
    for (long i = 0; i < n; i++) {
        fmpq_set_si(fw, w[i], 1);
        fmpq_set_si(fv, v[i], 1);
        CU_ASSERT_EQUAL_FATAL(hf_head_push(&h, keys + i * d, fw, &fv[0]), HF_OK);
    }
    CU_ASSERT_EQUAL_FATAL(hf_target_add_head(t, &h), HF_OK);
    hf_head_clear(&h);
    fmpq_clear(fv);
    fmpq_clear(fw);
}

/* Random small targets, d = 1..4: sums of heads whose keys are drawn from a few
 * symmetric patterns (so that groups larger than 1 occur) or at random. */
static void test_group_oracle_random(void)
{
    uint64_t st = 20261202;
    for (int trial = 0; trial < 60; trial++) {
        int d = 1 + (int)(rng_next(&st) % 4), nh = 1 + (int)(rng_next(&st) % 3);
        hf_target_t t;
        char name[32];
        snprintf(name, sizeof name, "grandom%d", trial);
        CU_ASSERT_EQUAL_FATAL(hf_target_init(&t, name, d, 1), HF_OK);
        for (int k = 0; k < nh; k++) {
            int na = 2 + (int)(rng_next(&st) % 2);
            int64_t keys[3 * HF_D_MAX];
            long w[3], v[3];
            int sym = (int)(rng_next(&st) % 2); /* 0/1 keys, weight 1, values 0..1 */
            for (int a = 0; a < na; a++) {
                for (int j = 0; j < d; j++)
                    keys[a * d + j] = (int64_t)(rng_next(&st) % (sym ? 2 : 3));
                w[a] = sym ? 1 : 1 + (long)(rng_next(&st) % 3);
                v[a] = sym ? (long)(rng_next(&st) % 2) : (long)(rng_next(&st) % 5) - 2;
            }
            int dup = 0;
            for (int a = 0; a < na; a++)
                for (int b = 0; b < a; b++)
                    dup |= !memcmp(keys + a * d, keys + b * d, (size_t)d * sizeof *keys);
            if (!dup)
                one_head(&t, d, na, keys, w, v);
        }
        if (t.nheads > 0)
            oracle_compare(&t, &st);
        hf_target_clear(&t);
    }
}

/* Orbit representatives: invariant on the orbit, never larger than the support, and the
 * identity's image is the canonical sorted support. */
static void test_orbit_rep(void)
{
    hf_target_t t;
    tg_t x;
    CU_ASSERT_FATAL(load("wd:d=3", &t));
    CU_ASSERT_FATAL(tg_make(&x, &t));
    /* an asymmetric support, not in canonical position, unsorted */
    static const int64_t k[] = {3, 1, 1, 1, 1, 1, 1, 2, 1, 4, 1, 3};
    long m = 4;
    int64_t rep[12], rep2[12], img[12], can[12];
    long order = 0, ng = 0;
    int8_t *gp = NULL, *gs = NULL, *el = NULL;
    CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, m, k, rep), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_group_brute(&x.t, &x.f, &order, &ng, &gp, &gs, &el), HF_OK);
    CU_ASSERT_EQUAL(order, 12);
    for (long g = 0; g < order; g++) {
        const int8_t *p = el + g * 6, *sg = p + 3;
        for (long i = 0; i < m; i++)
            for (int j = 0; j < 3; j++)
                img[i * 3 + j] = sg[j] * k[i * 3 + p[j]] + 5; /* a translate of g K */
        CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, m, img, rep2), HF_OK);
        CU_ASSERT(!memcmp(rep, rep2, sizeof rep));
    }
    /* the identity's image (K translated to canonical position, sorted) bounds it */
    static const int64_t canon[] = {0, 0, 0, 0, 1, 0, 2, 0, 0, 3, 0, 2};
    CU_ASSERT_EQUAL(hf_symmetry_canonical(3, m, k, can), HF_OK);
    CU_ASSERT(!memcmp(can, canon, sizeof can));
    int le = 1;
    for (int i = 0; i < 12; i++)
        if (rep[i] != canon[i]) {
            le = rep[i] < canon[i];
            break;
        }
    CU_ASSERT(le);
    CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, 0, k, rep), HF_ERR_INPUT);
    free(el);
    free(gs);
    free(gp);
    tg_clear(&x);
    hf_target_clear(&t);
}

/* A group sent as words acts as the original: same order, same orbit representatives;
 * a damaged array is refused. */
static void test_group_pack(void)
{
    hf_target_t t;
    tg_t x;
    CU_ASSERT_FATAL(load("wd:d=3", &t));
    CU_ASSERT_FATAL(tg_make(&x, &t));
    int64_t *w = NULL;
    long n = 0;
    hf_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(hf_group_pack(x.g, &w, &n), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_group_unpack(w, n, &g), HF_OK);
    CU_ASSERT_EQUAL(hf_group_order(g), 12);
    CU_ASSERT_EQUAL(hf_group_order(g), hf_group_order(x.g));
    CU_ASSERT_PTR_NULL(hf_group_unknown_reason(g));
    static const int64_t k[] = {3, 1, 1, 1, 1, 1, 1, 2, 1, 4, 1, 3};
    int64_t a[12], b[12];
    CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, 4, k, a), HF_OK);
    CU_ASSERT_EQUAL(hf_group_orbit_rep(g, 4, k, b), HF_OK);
    CU_ASSERT(!memcmp(a, b, sizeof a));
    hf_group_destroy(&g);
    hf_group_t *bad = NULL;
    CU_ASSERT_EQUAL(hf_group_unpack(w, n - 1, &bad), HF_ERR_INTERNAL);
    if (n > 4) {
        w[4] = 7; /* a permutation entry beyond d */
        CU_ASSERT_EQUAL(hf_group_unpack(w, n, &bad), HF_ERR_INTERNAL);
    }
    CU_ASSERT_PTR_NULL(bad);
    free(w);
    tg_clear(&x);
    hf_target_clear(&t);
}

static int d3_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    for (int j = 0; j < 3; j++)
        if (x[j] != y[j])
            return x[j] < y[j] ? -1 : 1;
    return 0;
}

/* Large key sets: the canonical form is the translate sorted (checked against libc's
 * qsort), and the orbit of a support of 2^17 keys under chain:d=3's group (order 4) is
 * found at once (an insertion sort of the rows was quadratic: 95 s for 129 904 keys). */
static void test_canonical_large(void)
{
    long m = 1L << 17;
    int64_t *k = malloc((size_t)m * 3 * sizeof *k), *a = malloc((size_t)m * 3 * sizeof *a);
    int64_t *b = malloc((size_t)m * 3 * sizeof *b), *r = malloc((size_t)m * 3 * sizeof *r);
    CU_ASSERT_FATAL(k && a && b && r);
    /* every point of {0..63} x {0..31} x {0..63}, shuffled and shifted by (7, -3, 2) */
    for (long i = 0; i < m; i++) {
        k[3 * i] = i / (32 * 64) + 7;
        k[3 * i + 1] = i / 64 % 32 - 3;
        k[3 * i + 2] = i % 64 + 2;
    }
    uint64_t st = 5;
    for (long i = m - 1; i > 0; i--) {
        long j = (long)(rng_next(&st) % (uint64_t)(i + 1));
        int64_t t[3];
        memcpy(t, k + 3 * i, sizeof t);
        memcpy(k + 3 * i, k + 3 * j, sizeof t);
        memcpy(k + 3 * j, t, sizeof t);
    }
    CU_ASSERT_EQUAL(hf_symmetry_canonical(3, m, k, a), HF_OK);
    for (long i = 0; i < m; i++) {
        b[3 * i] = k[3 * i] - 7;
        b[3 * i + 1] = k[3 * i + 1] + 3;
        b[3 * i + 2] = k[3 * i + 2] - 2;
    }
    qsort(b, (size_t)m, 3 * sizeof *b, d3_cmp);
    CU_ASSERT(!memcmp(a, b, (size_t)m * 3 * sizeof *a));
    hf_target_t t;
    tg_t x;
    CU_ASSERT_FATAL(load("chain:d=3", &t));
    CU_ASSERT_FATAL(tg_make(&x, &t));
    CU_ASSERT_EQUAL(hf_group_order(x.g), 4);
    /* the box is invariant under the group: its representative is itself, sorted */
    CU_ASSERT_EQUAL(hf_group_orbit_rep(x.g, m, k, r), HF_OK);
    CU_ASSERT(!memcmp(r, b, (size_t)m * 3 * sizeof *r));
    tg_clear(&x);
    hf_target_clear(&t);
    free(r);
    free(b);
    free(a);
    free(k);
}

/* Affine equivalence of fractions: T, 2 T + 1 and T / 3 agree; T and T + sigma(q_2) do not. */
static void test_affine_equal(void)
{
    hf_target_t a, b;
    hf_target_init_empty(&a);
    hf_target_init_empty(&b);
    hf_fraction_t fa, fb;
    hf_fraction_init(&fa);
    hf_fraction_init(&fb);
    CU_ASSERT_FATAL(load("wd:d=2", &a));
    CU_ASSERT_FATAL(load("wdw:d=2", &b));
    CU_ASSERT_EQUAL_FATAL(hf_fraction_from_target(&fa, &a), HF_OK);
    CU_ASSERT_EQUAL_FATAL(hf_fraction_from_target(&fb, &b), HF_OK);
    CU_ASSERT(hf_symmetry_affine_equal(&fa, &fa));
    CU_ASSERT(!hf_symmetry_affine_equal(&fa, &fb));
    hf_fraction_clear(&fb);
    /* scale every value by -2/3 and add 5: same function class */
    fmpq_t c;
    fmpq_init(c);
    for (int h = 0; h < a.nheads; h++)
        for (long i = 0; i < a.heads[h].natoms; i++) {
            fmpq *v = a.heads[h].values + i;
            fmpq_set_si(c, -2, 3);
            fmpq_mul(v, v, c);
            if (h == 0)
                fmpq_add_si(v, v, 5);
        }
    CU_ASSERT_EQUAL_FATAL(hf_fraction_from_target(&fb, &a), HF_OK);
    CU_ASSERT(hf_symmetry_affine_equal(&fa, &fb));
    CU_ASSERT(hf_symmetry_affine_equal(&fb, &fa));
    fmpq_clear(c);
    hf_fraction_clear(&fb);
    hf_fraction_clear(&fa);
    hf_target_clear(&b);
    hf_target_clear(&a);
}

/* Every allocation of making a group and of an orbit made to fail in turn: each failure
 * is HF_ERR_NOMEM, nothing else, and the run after them all gives the right answers. */
static void test_allocation_failures(void)
{
    hf_target_t t;
    hf_fraction_t f;
    hf_fraction_init(&f);
    CU_ASSERT_FATAL(load("wd:d=3", &t));
    CU_ASSERT_EQUAL_FATAL(hf_fraction_from_target(&f, &t), HF_OK);
    static const int64_t k[] = {3, 1, 1, 1, 1, 1, 1, 2, 1, 4, 1, 3};
    long ok_in_a_row = 0, nomem = 0, bad = 0;
    for (long n = 1; ok_in_a_row < 20 && n < 100000; n++) {
        hf_group_t *g = NULL;
        int64_t rep[12];
        hf_fail_after(n);
        hf_err_t err = hf_group_create(&t, &f, &g);
        if (err == HF_OK)
            err = hf_group_orbit_rep(g, 4, k, rep);
        hf_fail_after(0);
        if (err == HF_OK) {
            ok_in_a_row++;
            bad += hf_group_order(g) != 12;
        } else {
            ok_in_a_row = 0;
            nomem += err == HF_ERR_NOMEM;
            bad += err != HF_ERR_NOMEM;
        }
        hf_group_destroy(&g);
    }
    CU_ASSERT(nomem > 10);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(ok_in_a_row, 20);
    hf_fraction_clear(&f);
    hf_target_clear(&t);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"symmetry group orders", test_group_orders},
        {"orbits above the brute force's d: closure and listed group", test_orbit_w8},
        {"symmetry group: nauty against the brute force, families", test_group_oracle_families},
        {"symmetry group: nauty against the brute force, random", test_group_oracle_random},
        {"orbit representatives", test_orbit_rep},
        {"the group as words and back", test_group_pack},
        {"canonical form and orbits of large key sets", test_canonical_large},
        {"affine equivalence of fractions", test_affine_equal},
        {"allocation failures", test_allocation_failures},
        {NULL, NULL}};
    return hf_unit_suite("symmetry", cases);
}
