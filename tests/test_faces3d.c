/* Tests of the three-dimensional face accounting (src/bounds/faces3d.c, faces3d_eval.c):
 * the face values of chain:d=3 against hand counts; the count L(Z + P) against hand
 * counts; the combined bound against L on every P tried (the theorem, held against an
 * independent computation), with the place where the accounting breaks for chain:d=3
 * (P = [0, e2]); Descartes' rule on edges; and planted wrong values (one more inner key
 * claimed on a hexagon, one more key on an edge, gains charged without sharing), each
 * caught by a comparison. The comparison with the search is in tests/test_search.c. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq.h>

#include "bounds/faces3d_impl.h"
#include "families.h"
#include "headfuse/algebra.h"
#include "headfuse/faces3d.h"
#include "unit.h"

/* The accounting of t, which must apply. */
static void account(const hf_target_t *t, hf_faces3d_t *A)
{
    hf_faces3d_init(A);
    CU_ASSERT_EQUAL_FATAL(hf_faces3d_from_target(t, A), HF_OK);
    CU_ASSERT_FATAL(A->ok);
}

/* L(Z + conv(p[0..n))). */
static long count_p(const hf_faces3d_t *A, const int64_t *p, long n, int *translate)
{
    hf_faces3d_count_t c;
    CU_ASSERT_EQUAL_FATAL(hf_faces3d_count_sum(A, p, n, &c), HF_OK);
    CU_ASSERT_EQUAL(c.total, c.vertices + c.on_edges + c.on_facets);
    if (translate)
        *translate = c.translate;
    return c.total;
}

static long count_segment(const hf_faces3d_t *A, int64_t a, int64_t b, int64_t c)
{
    int64_t p[6] = {0, 0, 0, a, b, c};
    return count_p(A, p, 2, NULL);
}

/* supp(Q) of t, as keys (n x 3, allocated). */
static int64_t *supp_q(const hf_target_t *t, long *n)
{
    hf_fraction_t f;
    hf_fraction_init(&f);
    CU_ASSERT_EQUAL_FATAL(hf_fraction_from_target(&f, t), HF_OK);
    *n = f.Q->length;
    int64_t *k = malloc((size_t)*n * 3 * sizeof *k);
    for (long i = 0; i < *n; i++) {
        slong e[HF_D_MAX];
        fmpz_mpoly_get_term_exp_si(e, f.Q, i, f.ctx);
        for (int j = 0; j < 3; j++)
            k[3 * i + j] = e[j];
    }
    hf_fraction_clear(&f);
    return k;
}

/* chain:d=3: Z is the zonotope of e1, e2, e3, e1+e2, e2+e3: 18 vertices, 28 unit edges
 * (each limit target sigma of one generator plus a constant), 4 hexagons (limit targets
 * chain:d=2 plus constants: 7 terms, 1 inside) and 8 parallelograms (W_2: 4 terms). */
static void test_chain_face_values(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    fam_chain(&t, 3);
    account(&t, &A);
    CU_ASSERT_EQUAL(A.supp_q, 24);
    CU_ASSERT_EQUAL(A.Z.nverts, 18);
    CU_ASSERT_EQUAL(A.nedges, 28);
    CU_ASSERT_EQUAL(A.nfacets, 12);
    long hexagons = 0;
    for (long e = 0; e < A.nedges; e++) {
        CU_ASSERT(A.edges[e].sigmoid);
        CU_ASSERT_EQUAL(A.edges[e].len, 1);
        CU_ASSERT_EQUAL(A.edges[e].roots, 1);
        CU_ASSERT_EQUAL(A.edges[e].forced, 0);
        CU_ASSERT_EQUAL(A.edges[e].gain, 1);
    }
    for (long k = 0; k < A.nfacets; k++) {
        const hf_faces3d_facet_t *g = A.facets + k;
        long nv = A.Z.faces[g->face].nverts;
        CU_ASSERT(g->exact);
        CU_ASSERT(nv == 6 || nv == 4);
        CU_ASSERT_EQUAL(g->terms, nv == 6 ? 7 : 4);
        CU_ASSERT_EQUAL(g->inner, nv == 6 ? 1 : 0);
        if (nv == 6) { /* a lost hexagon is charged 1/2 + 1/2: its two e2-edges or corners */
            CU_ASSERT_EQUAL(g->share_num, 1);
            CU_ASSERT_EQUAL(g->share_den, 1);
            hexagons++;
        }
    }
    CU_ASSERT_EQUAL(hexagons, 4);
    CU_ASSERT_EQUAL(A.base, 22); /* 18 vertices + 4 hexagon centres */
    CU_ASSERT_EQUAL(A.gain_min, 3);
    CU_ASSERT_EQUAL(A.delta, 0);
    CU_ASSERT_EQUAL(A.bound, 22);
    char buf[320];
    hf_faces3d_describe(&A, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "18 vertices; 28 edges (28 sigmoid-type of length 1); 12 "
                                "facets (4 hexagons with 1 inner key, 8 quadrilaterals)");
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* L(Z + P) for chain:d=3 on P counted by hand:
 *  - a point: 18 vertices + 4 hexagon centres = 22, a translate of Z;
 *  - [0, e2]: same 18 vertices; the 4 e2-edges grow to length 2 (+1 each); all 4 hexagons
 *    contain e2, so none keeps its centre: 22 (the accounting's weak spot);
 *  - [0, 2 e2]: the e2-edges reach length 3 (+2 each): 26;
 *  - [0, e1]: the 6 e1-edges grow (+6); the hexagons x3 = const contain e1, the hexagons
 *    x1 = const keep their centres (+2): 26;
 *  - [0, e1 - e2], no generator: the plane (e1 - e2)^perp cuts the vertex cones of Z in
 *    three great-circle pairs, 6 new vertices; the hexagons x1 = const keep their
 *    centres: 24 + 2 = 26. */
static void test_chain_counts_by_hand(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    fam_chain(&t, 3);
    account(&t, &A);
    int64_t pt[3] = {5, -3, 2};
    int translate = 0;
    CU_ASSERT_EQUAL(count_p(&A, pt, 1, &translate), 22);
    CU_ASSERT(translate);
    CU_ASSERT_EQUAL(count_segment(&A, 0, 1, 0), 22);
    CU_ASSERT_EQUAL(count_segment(&A, 0, -1, 0), 22);
    CU_ASSERT_EQUAL(count_segment(&A, 0, 2, 0), 26);
    CU_ASSERT_EQUAL(count_segment(&A, 1, 0, 0), 26);
    CU_ASSERT_EQUAL(count_segment(&A, 1, -1, 0), 26);
    hf_faces3d_count_t c;
    int64_t seg[6] = {0, 0, 0, 0, 1, 0};
    CU_ASSERT_EQUAL(hf_faces3d_count_sum(&A, seg, 2, &c), HF_OK);
    CU_ASSERT_EQUAL(c.vertices, 18);
    CU_ASSERT_EQUAL(c.on_edges, 4);
    CU_ASSERT_EQUAL(c.on_facets, 0);
    CU_ASSERT(!c.translate);
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* Every lattice polytope with vertices in {0,1}^3 and every segment [0, u], u in
 * [-2,2]^3: the bound never exceeds L(Z + P) (the theorem against the direct count), and
 * for chain:d=3 the P with L < 25 are exactly the unit segments along e2, with L = 22;
 * every other P tried has L >= 26. (Random hulls of up to six points in [-2,2]^3 give the
 * same picture: docs/math.md.) */
static long check_small_p(const hf_faces3d_t *A, long *min_other, long *n_defeat)
{
    int64_t p[24];
    long below = 0; /* P with L < bound: none, by the theorem */
    *min_other = LONG_MAX;
    *n_defeat = 0;
    for (int S = 1; S < 256 + 125; S++) {
        long n = 0;
        int e2 = 0;
        if (S < 256) {
            for (int b = 0; b < 8; b++)
                if (S >> b & 1) {
                    p[3 * n] = b & 1;
                    p[3 * n + 1] = b >> 1 & 1;
                    p[3 * n + 2] = b >> 2 & 1;
                    n++;
                }
            e2 = n == 2 && p[0] == p[3] && p[2] == p[5];
        } else {
            int u = S - 256;
            int64_t a = u % 5 - 2, b = u / 5 % 5 - 2, c = u / 25 - 2;
            if (!a && !b && !c)
                continue;
            int64_t q[6] = {0, 0, 0, a, b, c};
            memcpy(p, q, sizeof q);
            n = 2;
            e2 = !a && !c && (b == 1 || b == -1);
        }
        if (n < 2)
            continue;
        long L = count_p(A, p, n, NULL);
        below += L < A->bound;
        if (e2) {
            CU_ASSERT_EQUAL(L, 22);
            (*n_defeat)++;
        } else if (L < *min_other) {
            *min_other = L;
        }
    }
    return below;
}

/* 1 if conv(p) is a unit segment along e2. */
static int unit_e2_segment(const int64_t *p, long n)
{
    int64_t lo = p[1], hi = p[1];
    for (long i = 1; i < n; i++) {
        if (p[3 * i] != p[0] || p[3 * i + 2] != p[2])
            return 0;
        lo = p[3 * i + 1] < lo ? p[3 * i + 1] : lo;
        hi = p[3 * i + 1] > hi ? p[3 * i + 1] : hi;
    }
    return hi - lo == 1;
}

/* HF_TEST_FACES3D_HULLS=N (by hand; docs/math.md quotes N = 20000 at R = 1 and R = 2):
 * also N random hulls of 2 to 6 points in [-R,R]^3, R = HF_TEST_FACES3D_RADIUS (default
 * 1), with the same conclusion: L = 22 exactly on unit e2-segments, L >= 26 otherwise. */
static void check_random_hulls(const hf_faces3d_t *A)
{
    const char *e = getenv("HF_TEST_FACES3D_HULLS"), *r = getenv("HF_TEST_FACES3D_RADIUS");
    long n_hulls = e ? atol(e) : 0, radius = r ? atol(r) : 1, hist[64] = {0};
    fam_rng_state = 5;
    for (long k = 0; k < n_hulls; k++) {
        int64_t p[18];
        long n = fam_rnd(2, 6);
        for (long i = 0; i < 3 * n; i++)
            p[i] = fam_rnd(-radius, radius);
        int translate = 0;
        long L = count_p(A, p, n, &translate);
        if (translate)
            continue;
        CU_ASSERT(unit_e2_segment(p, n) ? L == 22 : L >= 26);
        hist[L < 63 ? L : 63]++;
    }
    if (n_hulls)
        for (int L = 0; L < 64; L++)
            if (hist[L])
                fprintf(stderr, "\n  L = %d%s: %ld hulls", L, L == 63 ? " or more" : "", hist[L]);
}

static void test_chain_where_it_breaks(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    fam_chain(&t, 3);
    account(&t, &A);
    long min_other, n_defeat;
    CU_ASSERT_EQUAL(check_small_p(&A, &min_other, &n_defeat), 0);
    CU_ASSERT_EQUAL(n_defeat, 4 + 2); /* four unit e2-edges of the cube, and [0, +-e2] */
    CU_ASSERT_EQUAL(min_other, 26);
    check_random_hulls(&A);
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* The theorem against the direct count on random targets: for random P (hulls of two to
 * four points in [-1,1]^3), L(Z + P) >= bound unless Z + P is a translate of Z, where
 * L = base. */
static void test_random_bound_vs_count(void)
{
    fam_rng_state = 11;
    long applied = 0;
    for (int trial = 0; trial < 12; trial++) {
        hf_target_t t;
        hf_faces3d_t A;
        fam_random3(&t, (int)fam_rnd(3, 5));
        hf_faces3d_init(&A);
        CU_ASSERT_EQUAL_FATAL(hf_faces3d_from_target(&t, &A), HF_OK);
        if (A.ok) {
            applied++;
            for (int k = 0; k < 25; k++) {
                int64_t p[12];
                long n = fam_rnd(2, 4);
                for (long i = 0; i < 3 * n; i++)
                    p[i] = fam_rnd(-1, 1);
                int translate = 0;
                long L = count_p(&A, p, n, &translate);
                CU_ASSERT(translate ? L == A.base : L >= A.bound);
                if (!translate && L < A.bound)
                    fprintf(stderr, "\ntrial %d: L = %ld < bound %ld\n", trial, L, A.bound);
            }
        }
        hf_faces3d_clear(&A);
        hf_target_clear(&t);
    }
    CU_ASSERT(applied >= 6);
}

/* Descartes' rule on an edge: two heads along e1 with different weights give the edge
 * denominator (1 + y)(1 + 2y) up to units, two negative roots, so every edge along e1
 * holds three keys (one inside); 1 + y + y^2 (multi:d=3,k=3) has none. */
static void test_descartes_edges(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    int64_t e1[3] = {1, 0, 0}, e2[3] = {0, 1, 0}, e3[3] = {0, 0, 1};
    fam_die(hf_target_init(&t, "double_e1", 3, 1));
    fam_pair3(&t, e1, 1, 1, 1);
    fam_pair3(&t, e1, 1, 2, 1);
    fam_pair3(&t, e2, 1, 1, 1);
    fam_pair3(&t, e3, 1, 1, 1);
    account(&t, &A);
    CU_ASSERT_EQUAL(A.supp_q, 12);
    long along = 0;
    for (long e = 0; e < A.nedges; e++) {
        const hf_faces3d_edge_t *ed = A.edges + e;
        if (ed->len == 2) {
            along++;
            CU_ASSERT(!ed->sigmoid);
            CU_ASSERT_EQUAL(ed->roots, 2);
            CU_ASSERT_EQUAL(ed->forced, 1);
        } else {
            CU_ASSERT_EQUAL(ed->roots, 1);
        }
    }
    CU_ASSERT_EQUAL(along, 4);
    CU_ASSERT_EQUAL(A.base, 12); /* every key of supp(Q) is forced: certified at 12 */
    CU_ASSERT_EQUAL(A.bound, 12);
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
    fam_multi(&t, 3, 3);
    account(&t, &A);
    for (long e = 0; e < A.nedges; e++)
        CU_ASSERT_EQUAL(A.edges[e].roots, 0);
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
    /* a double root: one head on 0, e1, 2 e1 with weights 1, 2, 1 and values 0, 1, 3 is
     * (2y + 3y^2) / (1 + y)^2, reduced: every e1-edge holds three keys */
    hf_head_t h;
    int64_t k[3][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    fam_die(hf_target_init(&t, "double_root", 3, 1));
    hf_head_init(&h, 3, 1);
    fam_atom(&h, k[0], 1, 0);
    fam_atom(&h, k[1], 2, 1);
    fam_atom(&h, k[2], 1, 3);
    fam_die(hf_target_add_head(&t, &h));
    hf_head_clear(&h);
    fam_pair3(&t, e2, 1, 1, 1);
    fam_pair3(&t, e3, 1, 1, 1);
    account(&t, &A);
    for (long e = 0; e < A.nedges; e++)
        CU_ASSERT_EQUAL(A.edges[e].roots, A.edges[e].len == 2 ? 2 : 1);
    CU_ASSERT_EQUAL(A.base, 12);
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* Planted wrong face values, caught by the face-by-face check of supp(Q), a support the
 * search finds (tests/test_search.c runs the same check on everything it finds): one more
 * inner key claimed on one hexagon of chain:d=3, and one more key claimed inside one
 * edge. The true values pass. */
static void test_planted_face_values(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    long n;
    int ok = 0;
    char bad[HF_FACES3D_BAD_LEN];
    fam_chain(&t, 3);
    account(&t, &A);
    int64_t *K = supp_q(&t, &n);
    CU_ASSERT_EQUAL(hf_faces3d_check_support(&A, K, n, &ok, bad), HF_OK);
    CU_ASSERT(ok);
    long hex = -1;
    for (long k = 0; k < A.nfacets && hex < 0; k++)
        if (A.facets[k].inner == 1)
            hex = k;
    A.facets[hex].inner = 2;
    CU_ASSERT_EQUAL(hf_faces3d_combine(&A), HF_OK);
    CU_ASSERT_EQUAL(A.base, 23);
    CU_ASSERT_EQUAL(hf_faces3d_check_support(&A, K, n, &ok, bad), HF_OK);
    CU_ASSERT(!ok);
    CU_ASSERT_PTR_NOT_NULL(strstr(bad, "(dim 2, 6 vertices"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bad, "1 keys inside, 2 forced"));
    A.facets[hex].inner = 1;
    A.edges[3].roots = 3; /* claims four keys on a unit edge */
    CU_ASSERT_EQUAL(hf_faces3d_combine(&A), HF_OK);
    A.edges[3].forced = hf_faces3d_edge_forced(A.edges + 3, A.edges[3].len);
    CU_ASSERT_EQUAL(hf_faces3d_check_support(&A, K, n, &ok, bad), HF_OK);
    CU_ASSERT(!ok);
    CU_ASSERT_PTR_NOT_NULL(strstr(bad, "(dim 1, 2 vertices"));
    free(K);
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* A planted error in the combination: gains charged in full to every lost facet (no
 * sharing) lift chain:d=3's bound to 24, as if the minimum were certified; the direct
 * count on P = [0, e2] (22) catches it. */
static void test_planted_unshared(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    fam_chain(&t, 3);
    hf_faces3d_test_unshared = 1;
    account(&t, &A);
    hf_faces3d_test_unshared = 0;
    CU_ASSERT_EQUAL(A.bound, 24);
    long min_other, n_defeat;
    CU_ASSERT(check_small_p(&A, &min_other, &n_defeat) > 0); /* [0, e2] and its translates */
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* Where the accounting does not apply: d != 3, a flat Newton polytope. */
static void test_not_applicable(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    fam_chain(&t, 2);
    hf_faces3d_init(&A);
    CU_ASSERT_EQUAL(hf_faces3d_from_target(&t, &A), HF_OK);
    CU_ASSERT(!A.ok);
    CU_ASSERT_STRING_EQUAL(A.why, "d is not 3");
    hf_target_clear(&t);
    int64_t e1[3] = {1, 0, 0}, e2[3] = {0, 1, 0};
    fam_die(hf_target_init(&t, "flat", 3, 1));
    fam_pair3(&t, e1, 1, 1, 1);
    fam_pair3(&t, e2, 1, 1, 1);
    CU_ASSERT_EQUAL(hf_faces3d_from_target(&t, &A), HF_OK);
    CU_ASSERT(!A.ok);
    CU_ASSERT_STRING_EQUAL(A.why, "Newt(Q) is not full-dimensional");
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

int hf_register_tests(void)
{
    static const hf_unit_case_t cases[] = {
        {"chain:d=3 face values and bound", test_chain_face_values},
        {"chain:d=3 counts L(Z + P) against hand counts", test_chain_counts_by_hand},
        {"chain:d=3 small P: bound <= L; only P = [0, e2] below 25", test_chain_where_it_breaks},
        {"random targets: bound <= L(Z + P) for random P", test_random_bound_vs_count},
        {"Descartes' rule on edges", test_descartes_edges},
        {"planted face values are caught by the support check", test_planted_face_values},
        {"planted unshared gains are caught by the count", test_planted_unshared},
        {"not applicable: d != 3, flat Newt(Q)", test_not_applicable},
        {NULL, NULL},
    };
    return hf_unit_suite("faces3d", cases);
}
