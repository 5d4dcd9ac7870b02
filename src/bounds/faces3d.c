/* Span-free face accounting in three dimensions: the face values of Z = Newt(Q) and their
 * combination into a bound on every support whose hull is not a translate of Z
 * (faces3d.h; the proof is docs/math.md §11).
 *
 * Face values: each edge of Z is sigmoid-type or not (its reduced limit target), with its
 * lattice length; each facet F is exact or not (the reduced limit denominator q_F has
 * Newton polygon F) with its inner terms c_F. Combination, for P' not a point:
 *   gains >= gain_min: 3 when every edge of Z has gain 1 (when P' has dimension 2 or 3 a
 *     generic plane through the origin meets the walls of its normal fan at least three
 *     times, and a segment's wall, a great circle, crosses at least three cells of Z's
 *     fan; each crossing is a gain);
 *   gains >= sum over lost facets F of s_F: F lost (P'_F not a point) has at least two
 *     events at distinct faces of F (an edge of F grows, charged gain/m_e, or a vertex of
 *     F splits, charged 1/h_z), where m_e and h_z bound the lost facets sharing a gain;
 *   so delta >= min over sets S of lost facets of max(sum_S (s_F - c_F), gain_min - sum_S c_F),
 *     computed exactly by a knapsack over sum_S c_F with rational values. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq.h>
#include <flint/fmpz_poly.h>
#include <flint/fmpz_poly_factor.h>

#include "headfuse/algebra.h"
#include "headfuse/bounds.h"
#include "headfuse/faces3d.h"
#include "bounds/faces3d_impl.h"

void hf_faces3d_init(hf_faces3d_t *A)
{
    memset(A, 0, sizeof *A);
    hf_newton_init(&A->Z);
}

void hf_faces3d_clear(hf_faces3d_t *A)
{
    free(A->q_exps);
    free(A->vertex_shared);
    free(A->facets);
    free(A->edges);
    hf_newton_clear(&A->Z);
    hf_faces3d_init(A);
}

long hf_faces3d_edge_forced(const hf_faces3d_edge_t *e, long len)
{
    long lemma = e->sigmoid ? (len < 3 ? len : 3) - 1 : 0; /* min(len + 1, 4) - 2 */
    long descartes = e->roots - 1;                         /* (roots + 1) - 2 */
    return lemma > descartes ? lemma : descartes > 0 ? descartes : 0;
}

long hf_faces3d_lattice_length(const int64_t *a, const int64_t *b)
{
    return (long)hf_gcd64(hf_gcd64(a[0] - b[0], a[1] - b[1]), a[2] - b[2]);
}

hf_err_t hf_faces3d_limit_is_sigmoid(const hf_target_t *t, const int64_t *w, int *yes)
{
    hf_target_t lim;
    hf_fraction_t f;
    slong e0[HF_D_MAX], e1[HF_D_MAX];
    *yes = 0;
    hf_target_init_empty(&lim);
    hf_fraction_init(&f);
    hf_err_t err = hf_bounds_limit_target(t, w, &lim);
    if (err == HF_OK)
        err = hf_fraction_from_target(&f, &lim);
    if (err == HF_OK) {
        if (f.Q->length == 2 && !hf_fraction_is_constant(&f)) {
            fmpz_mpoly_get_term_exp_si(e0, f.Q, 0, f.ctx);
            fmpz_mpoly_get_term_exp_si(e1, f.Q, 1, f.ctx);
            int64_t g = 0;
            for (int j = 0; j < f.d; j++)
                g = hf_gcd64(g, (int64_t)(e0[j] - e1[j]));
            *yes = g == 1;
        }
    }
    hf_fraction_clear(&f);
    hf_target_clear(&lim);
    return err;
}

long hf_bounds_negative_roots(const fmpz_poly_t q)
{
    fmpz_poly_factor_t fac;
    long roots = 0;
    fmpz_poly_factor_init(fac);
    fmpz_poly_factor_squarefree(fac, q);
    for (slong i = 0; i < fac->num; i++) {
        slong neg = 0, pos = 0;
        const fmpz_poly_struct *g = fac->p + i;
        if (g->length > 1) /* nonzero at 0: q's lowest term is its constant */
            _fmpz_poly_num_real_roots_sturm(&neg, &pos, g->coeffs, g->length);
        roots += (long)neg * (long)fac->exp[i];
    }
    fmpz_poly_factor_clear(fac);
    return roots;
}

/* The edge's root count: negative real roots, with multiplicity, of the reduced limit
 * denominator along it, written as a polynomial in y = x^u (u the edge's primitive
 * direction). A support of the limit target is supp(C) for C = q r with positive
 * coefficients, and C(-y) has the roots of q(-y) but at most |supp C| - 1 sign changes:
 * Descartes' rule of signs needs at least roots + 1 keys. 0 when the limit target is out
 * of reach. */
static hf_err_t edge_roots(const hf_target_t *t, const int64_t *w, const int64_t *u, long *roots)
{
    hf_target_t lim;
    hf_fraction_t f;
    fmpz_poly_t q;
    hf_err_t err;
    *roots = 0;
    hf_target_init_empty(&lim);
    hf_fraction_init(&f);
    fmpz_poly_init(q);
    HF_CHECK(err, hf_bounds_limit_target(t, w, &lim), done);
    err = hf_fraction_from_target(&f, &lim);
    if (err == HF_ERR_LIMIT) {
        hf_error_clear();
        err = HF_OK;
        goto done;
    }
    if (err != HF_OK || f.Q->length < 2)
        goto done;
    int j = u[0] ? 0 : u[1] ? 1 : 2;
    slong e0[HF_D_MAX], e[HF_D_MAX];
    fmpz_mpoly_get_term_exp_si(e0, f.Q, 0, f.ctx);
    int64_t lo = 0;
    for (slong i = 0; i < f.Q->length; i++) { /* steps along u from the first term */
        fmpz_mpoly_get_term_exp_si(e, f.Q, i, f.ctx);
        int64_t s = (int64_t)(e[j] - e0[j]) / u[j];
        for (int l = 0; l < 3; l++)
            if (e[l] - e0[l] != s * u[l])
                goto done; /* not on a line along u: cannot happen for an edge's limit */
        lo = s < lo ? s : lo;
    }
    for (slong i = 0; i < f.Q->length; i++) {
        fmpz_t c;
        fmpz_init(c);
        fmpz_mpoly_get_term_exp_si(e, f.Q, i, f.ctx);
        fmpz_mpoly_get_term_coeff_fmpz(c, f.Q, i, f.ctx);
        fmpz_poly_set_coeff_fmpz(q, (slong)((int64_t)(e[j] - e0[j]) / u[j] - lo), c);
        fmpz_clear(c);
    }
    *roots = hf_bounds_negative_roots(q);
done:
    hf_fraction_clear(&f);
    fmpz_poly_clear(q);
    hf_target_clear(&lim);
    return err;
}

/* The facet's value: exact when the reduced limit denominator q_F has Newton polygon F up
 * to translation (then a face of X that is a translate of F meets every support in
 * supp(q_F) translated); inner = terms of q_F off the boundary of that polygon. A limit
 * target too large to reduce leaves the facet not exact (a weaker, still valid count). */
static hf_err_t facet_value(const hf_target_t *t, const hf_newton_t *Z, const hf_newton_face_t *F,
                            hf_faces3d_facet_t *out)
{
    hf_target_t lim;
    hf_fraction_t f;
    hf_newton_t N;
    hf_err_t err;
    out->exact = 0;
    out->terms = out->inner = 0;
    hf_target_init_empty(&lim);
    hf_fraction_init(&f);
    hf_newton_init(&N);
    HF_CHECK(err, hf_bounds_limit_target(t, F->w, &lim), done);
    err = hf_fraction_from_target(&f, &lim);
    if (err == HF_OK)
        err = hf_newton_from_fraction(&f, 0, &N);
    if (err == HF_ERR_LIMIT) {
        hf_error_clear();
        err = HF_OK;
        goto done;
    }
    if (err != HF_OK || N.dim != 2 || N.nverts != F->nverts)
        goto done;
    const int64_t *z0 = Z->verts + 3 * F->verts[0];
    for (long i = 0; i < N.nverts; i++) {
        const int64_t *z = Z->verts + 3 * F->verts[i];
        for (int j = 0; j < 3; j++)
            if (N.verts[3 * i + j] - N.verts[j] != z[j] - z0[j])
                goto done;
    }
    out->exact = 1;
    out->terms = f.Q->length;
    for (long i = 0; i < f.Q->length; i++) {
        slong e[HF_D_MAX];
        fmpz_mpoly_get_term_exp_si(e, f.Q, i, f.ctx);
        int inside = 1;
        for (long k = 0; k < N.nfacets && inside; k++) {
            int64_t x[3] = {e[0], e[1], e[2]};
            inside = hf_faces3d_dot(N.facet_w + 3 * k, x) < N.facet_b[k];
        }
        out->inner += inside;
    }
done:
    hf_fraction_clear(&f);
    hf_newton_clear(&N);
    hf_target_clear(&lim);
    return err;
}

/* 1 if the sorted vertex list of face F holds vertex v. */
static int face_has(const hf_newton_face_t *F, long v)
{
    long lo = 0, hi = F->nverts;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (F->verts[mid] == v)
            return 1;
        if (F->verts[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* supp Q (sorted) and whether Q's coefficients share one sign, for Lemma 11.12. */
static hf_err_t supp_q_of(const hf_fraction_t *f, hf_faces3d_t *A)
{
    long n = f->Q->length;
    int pos = 0, neg = 0;
    A->q_exps = hf_malloc((size_t)(3 * n + 3) * sizeof *A->q_exps);
    if (!A->q_exps)
        return HF_ERR_NOMEM;
    fmpz_t c;
    fmpz_init(c);
    for (long i = 0; i < n; i++) {
        slong e[HF_D_MAX];
        fmpz_mpoly_get_term_exp_si(e, f->Q, i, f->ctx);
        fmpz_mpoly_get_term_coeff_fmpz(c, f->Q, i, f->ctx);
        pos |= fmpz_sgn(c) > 0;
        neg |= fmpz_sgn(c) < 0;
        for (int j = 0; j < 3; j++)
            A->q_exps[3 * i + j] = e[j];
    }
    fmpz_clear(c);
    qsort(A->q_exps, (size_t)n, 3 * sizeof *A->q_exps, hf_faces3d_exp_cmp);
    A->q_one_sign = !(pos && neg);
    return HF_OK;
}

static void not_applicable(hf_faces3d_t *A, const char *why)
{
    A->ok = 0;
    A->why = why;
}

hf_err_t hf_faces3d_from_target(const hf_target_t *t, hf_faces3d_t *A)
{
    hf_fraction_t f;
    hf_err_t err;
    hf_faces3d_clear(A);
    if (t->d != 3) {
        not_applicable(A, "d is not 3");
        return HF_OK;
    }
    hf_fraction_init(&f);
    err = hf_fraction_from_target(&f, t);
    if (err == HF_OK) {
        A->supp_q = f.Q->length;
        err = supp_q_of(&f, A);
    }
    if (err == HF_OK)
        err = hf_newton_from_fraction(&f, HF_FACES3D_MAX_FACES, &A->Z);
    hf_fraction_clear(&f);
    if (err == HF_ERR_LIMIT) {
        hf_error_clear();
        not_applicable(A, "out of reach");
        return HF_OK;
    }
    HF_TRY(err);
    if (A->Z.dim != 3) {
        not_applicable(A, "Newt(Q) is not full-dimensional");
        return HF_OK;
    }
    if (!A->Z.faces_complete) {
        not_applicable(A, "too many faces");
        return HF_OK;
    }
    const hf_newton_t *Z = &A->Z;
    for (long i = 0; i < Z->nfaces; i++) {
        A->nedges += Z->faces[i].dim == 1;
        A->nfacets += Z->faces[i].dim == 2;
    }
    A->edges = hf_calloc((size_t)A->nedges, sizeof *A->edges);
    A->facets = hf_calloc((size_t)A->nfacets, sizeof *A->facets);
    A->vertex_shared = hf_calloc((size_t)Z->nverts, sizeof *A->vertex_shared);
    if (!A->edges || !A->facets || !A->vertex_shared)
        return HF_ERR_NOMEM;
    long ne = 0, nf = 0;
    for (long i = 0; i < Z->nfaces; i++) {
        const hf_newton_face_t *F = Z->faces + i;
        if (F->dim == 1) {
            hf_faces3d_edge_t *e = A->edges + ne++;
            e->face = i;
            e->v0 = F->verts[0];
            e->v1 = F->verts[1];
            e->len = hf_faces3d_lattice_length(Z->verts + 3 * e->v0, Z->verts + 3 * e->v1);
            HF_TRY(hf_faces3d_limit_is_sigmoid(t, F->w, &e->sigmoid));
            int64_t u[3];
            for (int j = 0; j < 3; j++)
                u[j] = (Z->verts[3 * e->v1 + j] - Z->verts[3 * e->v0 + j]) / e->len;
            HF_TRY(edge_roots(t, F->w, u, &e->roots));
            e->forced = hf_faces3d_edge_forced(e, e->len);
            e->gain = e->sigmoid && e->len <= 2;
        } else if (F->dim == 2) {
            hf_faces3d_facet_t *g = A->facets + nf++;
            g->face = i;
            HF_TRY(facet_value(t, Z, F, g));
        }
    }
    A->ok = 1;
    return hf_faces3d_combine(A);
}

/* ---------------------------------------------------------------- combination */

/* Count, for every vertex and edge, the exact facets with inner keys that contain it. */
static void count_sharing(hf_faces3d_t *A)
{
    const hf_newton_t *Z = &A->Z;
    memset(A->vertex_shared, 0, (size_t)Z->nverts * sizeof *A->vertex_shared);
    for (long e = 0; e < A->nedges; e++)
        A->edges[e].shared = 0;
    for (long k = 0; k < A->nfacets; k++) {
        const hf_faces3d_facet_t *g = A->facets + k;
        if (!g->exact || g->inner <= 0)
            continue;
        const hf_newton_face_t *F = Z->faces + g->face;
        for (long i = 0; i < F->nverts; i++)
            A->vertex_shared[F->verts[i]]++;
        for (long e = 0; e < A->nedges; e++)
            if (face_has(F, A->edges[e].v0) && face_has(F, A->edges[e].v1))
                A->edges[e].shared++;
    }
}

/* s_F: the two cheapest distinct faces of F (its vertices at 1/h_z, its edges at
 * gain/m_e). A lost facet has events at two distinct faces at least. */
static void facet_share(const hf_faces3d_t *A, const hf_faces3d_facet_t *g, fmpq_t s)
{
    const hf_newton_face_t *F = A->Z.faces + g->face;
    fmpq_t c, lo1, lo2;
    int n = 0;
    fmpq_init(c);
    fmpq_init(lo1);
    fmpq_init(lo2);
    for (long i = 0; i < F->nverts + A->nedges; i++) {
        if (i < F->nverts) {
            long h = hf_knob(HF_KNOB_FACES3D_UNSHARED, 0) ? 1 : A->vertex_shared[F->verts[i]];
            fmpq_set_si(c, 1, (ulong)h);
        } else {
            const hf_faces3d_edge_t *e = A->edges + (i - F->nverts);
            if (!face_has(F, e->v0) || !face_has(F, e->v1))
                continue;
            fmpq_set_si(c, e->gain, (ulong)(hf_knob(HF_KNOB_FACES3D_UNSHARED, 0) ? 1 : e->shared));
        }
        if (n == 0 || fmpq_cmp(c, lo1) < 0) {
            fmpq_set(lo2, lo1);
            fmpq_set(lo1, c);
        } else if (n == 1 || fmpq_cmp(c, lo2) < 0) {
            fmpq_set(lo2, c);
        }
        n++;
    }
    fmpq_add(s, lo1, lo2);
    fmpq_clear(lo2);
    fmpq_clear(lo1);
    fmpq_clear(c);
}

/* min over sets S of lost facets of max(sum_S (s_F - c_F), gain_min - sum_S c_F), the empty
 * set giving gain_min: a 0/1 knapsack over the total c of S, keeping the least sum of
 * (s_F - c_F) for each total. *out = its ceiling (delta is an integer). */
static hf_err_t knapsack_delta(const hf_faces3d_t *A, const fmpq *share, long *out)
{
    long total = 0;
    for (long k = 0; k < A->nfacets; k++)
        total += A->facets[k].exact ? A->facets[k].inner : 0;
    fmpq *best = _fmpq_vec_init(total + 1);
    char *reach = hf_calloc((size_t)total + 1, 1);
    if (!reach) {
        _fmpq_vec_clear(best, total + 1);
        return HF_ERR_NOMEM;
    }
    fmpq_t a, v, low;
    fmpq_init(a);
    fmpq_init(v);
    fmpq_init(low);
    reach[0] = 1;
    for (long k = 0; k < A->nfacets; k++) {
        const hf_faces3d_facet_t *g = A->facets + k;
        if (!g->exact || g->inner <= 0)
            continue;
        fmpq_sub_si(a, share + k, g->inner);
        for (long c = total; c >= g->inner; c--) {
            if (!reach[c - g->inner])
                continue;
            fmpq_add(v, best + c - g->inner, a);
            if (!reach[c] || fmpq_cmp(v, best + c) < 0)
                fmpq_set(best + c, v);
            reach[c] = 1;
        }
    }
    fmpq_set_si(low, A->gain_min, 1);
    for (long c = 1; c <= total; c++) {
        if (!reach[c])
            continue;
        fmpq_set_si(v, A->gain_min - c, 1);
        if (fmpq_cmp(best + c, v) > 0)
            fmpq_set(v, best + c);
        if (fmpq_cmp(v, low) < 0)
            fmpq_set(low, v);
    }
    fmpz_t q;
    fmpz_init(q);
    fmpz_cdiv_q(q, fmpq_numref(low), fmpq_denref(low));
    *out = fmpz_get_si(q);
    fmpz_clear(q);
    fmpq_clear(low);
    fmpq_clear(v);
    fmpq_clear(a);
    free(reach);
    _fmpq_vec_clear(best, total + 1);
    return HF_OK;
}

hf_err_t hf_faces3d_combine(hf_faces3d_t *A)
{
    if (!A->ok)
        return hf_error(HF_ERR_INTERNAL, "faces3d: combine without face values");
    count_sharing(A);
    A->base = A->Z.nverts;
    int all_gain = 1;
    for (long e = 0; e < A->nedges; e++) {
        A->base += A->edges[e].forced;
        all_gain &= A->edges[e].gain == 1;
    }
    A->gain_min = all_gain ? 3 : 0;
    fmpq *share = _fmpq_vec_init(A->nfacets ? A->nfacets : 1);
    for (long k = 0; k < A->nfacets; k++) {
        hf_faces3d_facet_t *g = A->facets + k;
        g->share_num = 0;
        g->share_den = 1;
        if (!g->exact)
            continue;
        A->base += g->inner;
        if (g->inner <= 0)
            continue;
        facet_share(A, g, share + k);
        g->share_num = fmpz_get_si(fmpq_numref(share + k));
        g->share_den = fmpz_get_si(fmpq_denref(share + k));
    }
    hf_err_t err = knapsack_delta(A, share, &A->delta);
    _fmpq_vec_clear(share, A->nfacets ? A->nfacets : 1);
    HF_TRY(err);
    HF_TRY(hf_faces3d_zone_count(A));
    long zone = A->base + A->zone_delta;
    if (A->seg_bound < zone)
        zone = A->seg_bound;
    A->bound = A->base + A->delta;
    if (zone >= A->bound)
        A->bound = zone;
    else
        A->weak_kind = HF_FACES3D_WEAK_SHARES;
    return HF_OK;
}

/* ---------------------------------------------------------------- description */

static const char *polygon_name(long n)
{
    static const char *names[] = {"",         "",        "",         "triangle", "quadrilateral",
                                  "pentagon", "hexagon", "heptagon", "octagon"};
    return n < (long)(sizeof names / sizeof *names) ? names[n] : "polygon";
}

/* Append printf-style text at buf + *pos without passing n bytes. */
static void put(char *buf, size_t n, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t n, size_t *pos, const char *fmt, ...)
{
    if (*pos >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *pos, n - *pos, fmt, ap);
    va_end(ap);
    if (k > 0)
        *pos += (size_t)k;
}

void hf_faces3d_weakest(const hf_faces3d_t *A, char *buf, size_t n)
{
    const int64_t *u = A->weak_u;
    int has_u = u[0] || u[1] || u[2];
    if (n == 0)
        return;
    switch (A->weak_kind) {
    case HF_FACES3D_WEAK_SHARES:
        snprintf(buf, n, "the gains shared around lost facets");
        break;
    case HF_FACES3D_WEAK_EDGE_SEGMENT:
        snprintf(buf, n, "a segment along (%lld,%lld,%lld)", (long long)u[0], (long long)u[1],
                 (long long)u[2]);
        break;
    case HF_FACES3D_WEAK_SEGMENT:
        snprintf(buf, n, "a segment across the edge directions");
        break;
    case HF_FACES3D_WEAK_POLYGON:
        if (has_u)
            snprintf(buf, n, "a polygon with normal (%lld,%lld,%lld)", (long long)u[0],
                     (long long)u[1], (long long)u[2]);
        else
            snprintf(buf, n, "a polygon");
        break;
    default:
        snprintf(buf, n, "a three-dimensional polytope");
    }
}

void hf_faces3d_describe(const hf_faces3d_t *A, char *buf, size_t n)
{
    size_t pos = 0;
    if (n == 0)
        return;
    buf[0] = 0;
    if (!A->ok) {
        snprintf(buf, n, "not applicable: %s", A->why ? A->why : "no face values");
        return;
    }
    put(buf, n, &pos, "%ld vertices; %ld edges (", A->Z.nverts, A->nedges);
    /* edges by (sigmoid, length capped at 3, roots), facets by (vertices, exact, inner) */
    const char *sep = "";
    char *seen = hf_calloc((size_t)A->nedges + 1, 1);
    if (!seen)
        return;
    for (long e = 0; e < A->nedges; e++) {
        const hf_faces3d_edge_t *a = A->edges + e;
        long len = a->len < 3 ? a->len : 3, c = 0;
        if (seen[e])
            continue;
        for (long l = e; l < A->nedges; l++) {
            const hf_faces3d_edge_t *b = A->edges + l;
            if (!seen[l] && b->sigmoid == a->sigmoid && (b->len < 3 ? b->len : 3) == len &&
                b->roots == a->roots) {
                seen[l] = 1;
                c++;
            }
        }
        put(buf, n, &pos, "%s%ld %s of length %ld%s", sep, c, a->sigmoid ? "sigmoid-type" : "other",
            len, len == 3 ? " or more" : "");
        if (!a->sigmoid && a->roots)
            put(buf, n, &pos, " with %ld negative root%s", a->roots, a->roots > 1 ? "s" : "");
        sep = ", ";
    }
    free(seen);
    put(buf, n, &pos, "); %ld facets (", A->nfacets);
    char *done = hf_calloc((size_t)A->nfacets + 1, 1);
    if (!done)
        return;
    sep = "";
    for (long k = 0; k < A->nfacets; k++) {
        if (done[k])
            continue;
        const hf_faces3d_facet_t *g = A->facets + k;
        long nv = A->Z.faces[g->face].nverts, c = 0;
        for (long l = k; l < A->nfacets; l++) {
            const hf_faces3d_facet_t *h = A->facets + l;
            if (!done[l] && A->Z.faces[h->face].nverts == nv && h->exact == g->exact &&
                h->inner == g->inner) {
                done[l] = 1;
                c++;
            }
        }
        put(buf, n, &pos, "%s%ld %s%s", sep, c, polygon_name(nv), c > 1 ? "s" : "");
        if (!g->exact)
            put(buf, n, &pos, " (not exact)");
        else if (g->inner)
            put(buf, n, &pos, " with %ld inner key%s", g->inner, g->inner > 1 ? "s" : "");
        sep = ", ";
    }
    put(buf, n, &pos, ")");
    free(done);
}
