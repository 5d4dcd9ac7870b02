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

#include "headfuse/control.h"
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
    CU_ASSERT_EQUAL(A.delta, 0); /* the shares alone: 22 */
    /* the zone count (Corollary 11.14 of docs/math.md): five zones, all gaining; the weakest kind
     * is a polygon, 22 + 3; the segments along the generators count 26 at least ([0, e2]: 22, but
     * 33 keys by Lemma 11.12; [0, 2 e2]: 26) */
    CU_ASSERT_EQUAL(A.nzones, 5);
    CU_ASSERT_EQUAL(A.nzones_gaining, 5);
    CU_ASSERT_EQUAL(A.zone_delta, 3);
    CU_ASSERT_EQUAL(A.zone_segment, 4);
    CU_ASSERT_EQUAL(A.zone_polygon, 3);
    CU_ASSERT_EQUAL(A.zone_polytope, 4);
    CU_ASSERT_EQUAL(A.seg_bound, 26);
    CU_ASSERT(A.q_one_sign);
    CU_ASSERT_EQUAL(A.weak_kind, HF_FACES3D_WEAK_POLYGON);
    CU_ASSERT_EQUAL(A.bound, 25);
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

/* 1 when conv(p[0..n)) is a segment (not a point): *u its primitive direction (first
 * nonzero coordinate positive), *len its lattice length. */
static int segment_of(const int64_t *p, long n, int64_t *u, long *len)
{
    long far = -1;
    for (long i = 1; i < n && far < 0; i++)
        if (p[3 * i] != p[0] || p[3 * i + 1] != p[1] || p[3 * i + 2] != p[2])
            far = i;
    if (far < 0)
        return 0;
    int64_t d[3] = {p[3 * far] - p[0], p[3 * far + 1] - p[1], p[3 * far + 2] - p[2]};
    int64_t o[3] = {0, 0, 0};
    long g = hf_faces3d_lattice_length(o, d);
    for (int j = 0; j < 3; j++)
        u[j] = d[j] / g;
    if (u[0] < 0 || (!u[0] && (u[1] < 0 || (!u[1] && u[2] < 0))))
        for (int j = 0; j < 3; j++)
            u[j] = -u[j];
    int64_t lo = 0, hi = 0;
    for (long i = 0; i < n; i++) {
        int64_t x[3] = {p[3 * i] - p[0], p[3 * i + 1] - p[1], p[3 * i + 2] - p[2]};
        int j = u[0] ? 0 : u[1] ? 1 : 2;
        int64_t t = x[j] / u[j];
        for (int l = 0; l < 3; l++)
            if (x[l] != t * u[l])
                return 0;
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    *len = (long)(hi - lo);
    return 1;
}

/* 1 when some edge of Z is parallel to u. */
static int edge_direction(const hf_faces3d_t *A, const int64_t *u)
{
    for (long e = 0; e < A->nedges; e++) {
        const int64_t *a = A->Z.verts + 3 * A->edges[e].v0, *b = A->Z.verts + 3 * A->edges[e].v1;
        int64_t d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        if (d[1] * u[2] == d[2] * u[1] && d[2] * u[0] == d[0] * u[2] && d[0] * u[1] == d[1] * u[0])
            return 1;
    }
    return 0;
}

/* |supp Q u (supp Q + u)|, counted pair by pair (independent of faces3d_zones.c). */
static long union_count(const hf_faces3d_t *A, const int64_t *u)
{
    long n = A->supp_q;
    for (long i = 0; i < A->supp_q; i++) {
        int found = 0;
        for (long j = 0; j < A->supp_q && !found; j++)
            found = A->q_exps[3 * j] == A->q_exps[3 * i] + u[0] &&
                    A->q_exps[3 * j + 1] == A->q_exps[3 * i + 1] + u[1] &&
                    A->q_exps[3 * j + 2] == A->q_exps[3 * i + 2] + u[2];
        n += !found;
    }
    return n;
}

/* Each rule's claim on P' = conv(p) (not a point) against the direct count L(Z + P'):
 *  - the shares (Theorem 11.6): L >= base + delta;
 *  - the zone count (Lemmas 11.10, 11.11): L >= base + zone_delta, unless P' is a segment
 *    along an edge direction of Z (then the exact count, below, is the claim; with the
 *    planted HF_KNOB_FACES3D_SKIP_EDGE_SEGMENTS the zone count claims those too);
 *  - on a segment along an edge direction: seg_bound <= L, or on a unit segment with a
 *    one-signed Q, seg_bound <= |supp Q u (supp Q + u)| (Lemma 11.12);
 *  - so every support with that hull has at least bound keys: bound <= keys.
 * Returns the number of claims that fail (0 by the theorems); *L = L(Z + P'), *keys the
 * keys proven for that hull (L, or the union on a unit edge segment). */
static long claims_fail(const hf_faces3d_t *A, const int64_t *p, long n, long *L, long *keys)
{
    int64_t u[3];
    long len = 0, fail = 0;
    int translate = 0;
    *L = count_p(A, p, n, &translate);
    *keys = *L;
    if (translate)
        return *L != A->base;
    int seg = segment_of(p, n, u, &len), along = seg && edge_direction(A, u);
    if (along && len == 1 && A->q_one_sign) {
        long k = union_count(A, u);
        *keys = k > *L ? k : *L;
    }
    fail += *L < A->base + A->delta;
    if (!along || hf_knob(HF_KNOB_FACES3D_SKIP_EDGE_SEGMENTS, 0))
        fail += *L < A->base + A->zone_delta;
    else
        fail += *keys < A->seg_bound;
    hf_newton_t P;
    hf_newton_init(&P);
    CU_ASSERT_EQUAL_FATAL(hf_newton_from_points(p, n, 3, 0, &P), HF_OK);
    if (P.dim == 1 && !along)
        fail += *L < A->base + A->zone_segment;
    else if (P.dim == 2)
        fail += *L < A->base + A->zone_polygon;
    else if (P.dim == 3)
        fail += *L < A->base + A->zone_polytope;
    hf_newton_clear(&P);
    fail += *keys < A->bound;
    return fail;
}

/* Every lattice polytope with vertices in {0,1}^3 and every segment [0, u], u in
 * [-2,2]^3: no rule's claim fails (each against the direct count), and for chain:d=3 the
 * P with L < 25 are exactly the unit segments along e2, with L = 22 and 33 keys; every
 * other P tried has L >= 26. (Random hulls of up to six points in [-2,2]^3 give the same
 * picture: docs/math.md.) Returns the claims that fail. */
static long check_small_p(const hf_faces3d_t *A, long *min_other, long *n_defeat)
{
    int64_t p[24];
    long fails = 0;
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
        long L, keys;
        fails += claims_fail(A, p, n, &L, &keys);
        if (e2) {
            CU_ASSERT_EQUAL(L, 22);
            CU_ASSERT_EQUAL(keys, 33);
            (*n_defeat)++;
        } else if (L < *min_other) {
            *min_other = L;
        }
    }
    return fails;
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
        long L = count_p(A, p, n, &translate), L2, keys;
        if (translate)
            continue;
        CU_ASSERT(unit_e2_segment(p, n) ? L == 22 : L >= 26);
        CU_ASSERT_EQUAL(claims_fail(A, p, n, &L2, &keys), 0);
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

/* Structured P' built from Z's own edge vectors d (each the primitive direction of an
 * edge): the segments [0, k d] (k = 1, 2, 3), and for the two edge directions d, d' of
 * each pair of edges of a facet, the triangle {0, d, d'} and the parallelogram
 * {0, d, d', d + d'} (both with the facet's normal), and {0, d, d', d''} with the direction
 * d'' of an edge off the facet (a tetrahedron). Returns the claims that fail. */
static long check_structured(const hf_faces3d_t *A)
{
    long fails = 0, L, keys;
    int64_t(*d)[3] = malloc((size_t)(A->nedges + 1) * sizeof *d);
    for (long e = 0; e < A->nedges; e++) {
        const int64_t *a = A->Z.verts + 3 * A->edges[e].v0, *b = A->Z.verts + 3 * A->edges[e].v1;
        for (int j = 0; j < 3; j++)
            d[e][j] = (b[j] - a[j]) / A->edges[e].len;
        for (int k = 1; k <= 3; k++) {
            int64_t p[6] = {0, 0, 0, k * d[e][0], k * d[e][1], k * d[e][2]};
            fails += claims_fail(A, p, 2, &L, &keys);
        }
    }
    for (long f = 0; f < A->nfacets; f++) {
        const hf_newton_face_t *F = A->Z.faces + A->facets[f].face;
        long in[64], n = 0;
        for (long e = 0; e < A->nedges && n < 64; e++) {
            int a = 0, b = 0;
            for (long i = 0; i < F->nverts; i++) {
                a |= F->verts[i] == A->edges[e].v0;
                b |= F->verts[i] == A->edges[e].v1;
            }
            if (a && b)
                in[n++] = e;
        }
        for (long i = 0; i < n; i++)
            for (long j = i + 1; j < n; j++) {
                const int64_t *x = d[in[i]], *y = d[in[j]];
                int64_t tri[9] = {0, 0, 0, x[0], x[1], x[2], y[0], y[1], y[2]};
                int64_t par[12] = {0,    0,    0,    x[0],        x[1],        x[2],
                                   y[0], y[1], y[2], x[0] + y[0], x[1] + y[1], x[2] + y[2]};
                if (x[1] * y[2] == x[2] * y[1] && x[2] * y[0] == x[0] * y[2] &&
                    x[0] * y[1] == x[1] * y[0])
                    continue; /* parallel edges */
                fails += claims_fail(A, tri, 3, &L, &keys);
                fails += claims_fail(A, par, 4, &L, &keys);
                const int64_t *z = d[(in[i] + in[j]) % A->nedges];
                if (hf_faces3d_dot(F->w, z) != 0) {
                    int64_t tet[12] = {0,    0,    0,    x[0], x[1], x[2],
                                       y[0], y[1], y[2], z[0], z[1], z[2]};
                    fails += claims_fail(A, tet, 4, &L, &keys);
                }
            }
    }
    free(d);
    return fails;
}

/* A random target in three variables that is not a sum of two-atom heads: one head on
 * the triangle {0, a, b} (a, b two of the 13 directions), weights and values in 1..3,
 * then two or three two-atom heads; Newt(Q) is then rarely a zonotope. */
static void random3_triangle(hf_target_t *t)
{
    static const int64_t dirs[][3] = {{1, 0, 0},  {0, 1, 0},  {0, 0, 1}, {1, 1, 0},  {1, -1, 0},
                                      {0, 1, 1},  {0, 1, -1}, {1, 0, 1}, {1, 0, -1}, {1, 1, 1},
                                      {1, 1, -1}, {1, -1, 1}, {-1, 1, 1}};
    const int64_t *a = dirs[fam_rnd(0, 12)], *b = dirs[fam_rnd(0, 12)];
    int64_t k[3][3] = {{0, 0, 0}, {a[0], a[1], a[2]}, {b[0], b[1], b[2]}};
    for (int j = 0; j < 3; j++) { /* shift to nonnegative keys */
        int64_t lo = k[0][j] < k[1][j] ? k[0][j] : k[1][j];
        lo = lo < k[2][j] ? lo : k[2][j];
        for (int i = 0; i < 3; i++)
            k[i][j] -= lo;
    }
    fam_die(hf_target_init(t, "random_3d_triangle", 3, 1));
    hf_head_t h;
    hf_head_init(&h, 3, 1);
    for (int i = 0; i < 3; i++)
        fam_atom(&h, k[i], fam_rnd(1, 3), i ? fam_rnd(1, 3) : 0);
    fam_die(hf_target_add_head(t, &h));
    hf_head_clear(&h);
    for (long n = fam_rnd(2, 3); n > 0; n--)
        fam_pair3(t, dirs[fam_rnd(0, 12)], fam_rnd(1, 3), fam_rnd(1, 3), fam_rnd(1, 3));
}

/* The theorems against the direct count on random targets (sums of two-atom heads, then
 * targets with a three-atom head): for random P (hulls of two to four points in
 * [-1,1]^3) and the structured P of check_structured, no rule's claim fails
 * (claims_fail), and L(Z + P) = base when Z + P is a translate of Z. */
static void test_random_bound_vs_count(void)
{
    fam_rng_state = 11;
    long applied = 0;
    for (int trial = 0; trial < 24; trial++) {
        hf_target_t t;
        hf_faces3d_t A;
        if (trial < 12)
            fam_random3(&t, (int)fam_rnd(3, 5));
        else
            random3_triangle(&t);
        hf_faces3d_init(&A);
        CU_ASSERT_EQUAL_FATAL(hf_faces3d_from_target(&t, &A), HF_OK);
        if (A.ok) {
            applied++;
            for (int k = 0; k < 25; k++) {
                int64_t p[12];
                long n = fam_rnd(2, 4);
                for (long i = 0; i < 3 * n; i++)
                    p[i] = fam_rnd(-1, 1);
                long L, keys, f = claims_fail(&A, p, n, &L, &keys);
                CU_ASSERT_EQUAL(f, 0);
                if (f)
                    fprintf(stderr, "\ntrial %d: L = %ld, keys %ld, bound %ld\n", trial, L, keys,
                            A.bound);
            }
            CU_ASSERT_EQUAL(check_structured(&A), 0);
            if (getenv("HF_TEST_VERBOSE"))
                fprintf(stderr,
                        "\n  trial %d: %ld vertices, zones %ld (%ld gaining), base %ld, delta %ld, "
                        "zone %ld/%ld/%ld, seg %ld, bound %ld, supp Q %ld",
                        trial, A.Z.nverts, A.nzones, A.nzones_gaining, A.base, A.delta,
                        A.zone_segment, A.zone_polygon, A.zone_polytope, A.seg_bound, A.bound,
                        A.supp_q);
        }
        hf_faces3d_clear(&A);
        hf_target_clear(&t);
    }
    CU_ASSERT(applied >= 12);
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
 * sharing) lift the shares' count for chain:d=3 to 24; the direct count on P = [0, e2]
 * (22) catches it. */
static void test_planted_unshared(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    fam_chain(&t, 3);
    hf_knob_set(HF_KNOB_FACES3D_UNSHARED, 1);
    account(&t, &A);
    hf_knob_unset(HF_KNOB_FACES3D_UNSHARED);
    CU_ASSERT_EQUAL(A.base + A.delta, 24);
    long min_other, n_defeat;
    CU_ASSERT(check_small_p(&A, &min_other, &n_defeat) > 0); /* [0, e2] and its translates */
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* Planted errors in the zone count, each caught by a direct count: five points claimed on
 * every zone circle instead of three (Lemma 11.11) lift chain:d=3's count for polygons to
 * 22 + 7 and for three-dimensional P' to 22 + 9, refuted by the triangle
 * {(-1,-1,0), (-1,0,0), (0,1,0)} (L = 27) and the tetrahedron {(1,1,0), (1,0,1), (0,-1,0),
 * (0,1,1)} (L = 28), the smallest counts of their kinds among 20,000 random hulls; and
 * trusting the zone count on the segments along the edge directions (no exact count there)
 * is refuted by P = [0, e2] (L = 22 < 25). The true values pass on the same P. */
static void test_planted_zone_count(void)
{
    hf_target_t t;
    hf_faces3d_t A;
    long L, keys;
    int64_t tri[9] = {-1, -1, 0, -1, 0, 0, 0, 1, 0},
            tet[12] = {1, 1, 0, 1, 0, 1, 0, -1, 0, 0, 1, 1}, e2[6] = {0, 0, 0, 0, 1, 0};
    fam_chain(&t, 3);
    account(&t, &A);
    CU_ASSERT_EQUAL(claims_fail(&A, tri, 3, &L, &keys), 0);
    CU_ASSERT_EQUAL(L, 27);
    CU_ASSERT_EQUAL(claims_fail(&A, tet, 4, &L, &keys), 0);
    CU_ASSERT_EQUAL(L, 28);
    CU_ASSERT_EQUAL(claims_fail(&A, e2, 2, &L, &keys), 0);
    hf_knob_set(HF_KNOB_FACES3D_ZONE_THRESHOLD, 5);
    CU_ASSERT_EQUAL(hf_faces3d_combine(&A), HF_OK);
    hf_knob_unset(HF_KNOB_FACES3D_ZONE_THRESHOLD);
    CU_ASSERT_EQUAL(A.zone_polygon, 7);
    CU_ASSERT_EQUAL(A.zone_polytope, 9);
    CU_ASSERT(claims_fail(&A, tri, 3, &L, &keys) > 0);
    CU_ASSERT(claims_fail(&A, tet, 4, &L, &keys) > 0);
    hf_knob_set(HF_KNOB_FACES3D_SKIP_EDGE_SEGMENTS, 1);
    CU_ASSERT_EQUAL(hf_faces3d_combine(&A), HF_OK);
    CU_ASSERT_EQUAL(A.bound, 25);
    CU_ASSERT(claims_fail(&A, e2, 2, &L, &keys) > 0);
    hf_knob_unset(HF_KNOB_FACES3D_SKIP_EDGE_SEGMENTS);
    CU_ASSERT_EQUAL(hf_faces3d_combine(&A), HF_OK);
    CU_ASSERT_EQUAL(A.bound, 25);
    hf_faces3d_clear(&A);
    hf_target_clear(&t);
}

/* The covering problem of the zone count (hf_faces3d_cover_min, a depth-first search with
 * pruning) against every subset, on 400 random instances of up to 12 normals and 5 zones
 * with costs in -2..2, thresholds in 0..4, some normals forced; plus chain:d=3's by hand:
 * the hexagon normals (cost 0) put two points on each of the zones e1, e3, e1+e2, e2+e3 and
 * four on e2, and two parallelogram normals (e2 on the zones e1 and e3, (1,-1,1) on e1+e2
 * and e2+e3) give the third point: 2 (doubled 4). */
static void test_cover_min(void)
{
    fam_rng_state = 17;
    for (int trial = 0; trial < 400; trial++) {
        long nf = fam_rnd(1, 12), nz = fam_rnd(1, 5), cost[12], t[5], y0[5], got;
        char on[60], use[5], forced[12];
        int exact;
        for (long k = 0; k < nf; k++) {
            cost[k] = fam_rnd(-2, 2);
            forced[k] = fam_rnd(0, 5) == 0;
            for (long z = 0; z < nz; z++)
                on[k * nz + z] = fam_rnd(0, 2) == 0;
        }
        for (long z = 0; z < nz; z++) {
            use[z] = fam_rnd(0, 4) > 0;
            t[z] = fam_rnd(0, 4);
            y0[z] = fam_rnd(0, 3) == 0 ? fam_rnd(1, 2) : 0;
        }
        CU_ASSERT_EQUAL(hf_faces3d_cover_min(nf, nz, on, use, cost, forced, t, y0, &got, &exact),
                        HF_OK);
        CU_ASSERT(exact);
        long best = LONG_MAX;
        for (long X = 0; X < 1L << nf; X++) {
            long v = 0, ok = 1;
            for (long k = 0; k < nf; k++) {
                if (forced[k] && !(X >> k & 1))
                    ok = 0;
                v += X >> k & 1 ? cost[k] : 0;
            }
            for (long z = 0; z < nz && ok; z++) {
                long c = 0;
                for (long k = 0; k < nf; k++)
                    c += (X >> k & 1) && on[k * nz + z];
                if (use[z])
                    v += 2 * (t[z] - c > y0[z] ? t[z] - c : y0[z]);
            }
            if (ok && v < best)
                best = v;
        }
        CU_ASSERT_EQUAL(got, best);
    }
    /* chain:d=3: normals +-e1, +-e3 (hexagons), +-e2, +-(0,1,-1), +-(1,-1,0), +-(1,-1,1);
     * zones e1, e2, e3, e1+e2, e2+e3 */
    static const int64_t nrm[12][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 0, 1},  {0, 0, -1},
                                       {0, 1, 0},  {0, -1, 0}, {0, 1, -1}, {0, -1, 1},
                                       {1, -1, 0}, {-1, 1, 0}, {1, -1, 1}, {-1, 1, -1}};
    static const int64_t zone[5][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {0, 1, 1}};
    char on[60], use[5] = {1, 1, 1, 1, 1};
    long cost[12], t[5] = {3, 3, 3, 3, 3}, y0[5] = {0}, got;
    int exact;
    for (int k = 0; k < 12; k++) {
        cost[k] = k < 4 ? 0 : 2;
        for (int z = 0; z < 5; z++)
            on[k * 5 + z] = hf_faces3d_dot(nrm[k], zone[z]) == 0;
    }
    CU_ASSERT_EQUAL(hf_faces3d_cover_min(12, 5, on, use, cost, NULL, t, y0, &got, &exact), HF_OK);
    CU_ASSERT_EQUAL(got, 4);
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
        {"chain:d=3 small P: every claim holds; only P = [0, e2] has L below 25",
         test_chain_where_it_breaks},
        {"random targets: bound <= L(Z + P) for random P", test_random_bound_vs_count},
        {"Descartes' rule on edges", test_descartes_edges},
        {"planted face values are caught by the support check", test_planted_face_values},
        {"planted unshared gains are caught by the count", test_planted_unshared},
        {"planted zone counts are caught by the count", test_planted_zone_count},
        {"the zone count's covering problem against every subset", test_cover_min},
        {"not applicable: d != 3, flat Newt(Q)", test_not_applicable},
        {NULL, NULL},
    };
    return hf_unit_suite("faces3d", cases);
}
