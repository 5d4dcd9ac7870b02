/* Newt(Q) of a reduced fraction (newton.h): affine hull, facets, vertices and faces.
 *
 * Steps, all exact:
 *   1. the exponent points of Q and the direction space L of their affine hull
 *      (fraction-free elimination over Z); its pivot coordinates project the hull
 *      injectively onto R^r (r = dim), where Newt(Q) is full-dimensional;
 *   2. cddlib (GMP rationals) turns the projected points into facet inequalities;
 *   3. incidences point/facet by integer dot products; a point is a vertex iff the
 *      facets through it meet in that point alone;
 *   4. facet normals lifted back to L (so that F_w selects the same facet in R^d);
 *   5. faces bottom-up: the faces covering a face G are the inclusion-minimal closures
 *      of G + {v} (v a vertex outside G; closure = intersection of the facets
 *      containing the set), recognised by counting: C covers G iff exactly |C \ G|
 *      vertices v give closure C. A face's direction is the sum of the normals of the
 *      facets containing it: a point of the relative interior of its normal cone. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GMPRATIONAL
#include <cddlib/setoper.h>
#include <cddlib/cdd.h>

#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>

#include "bounds/bounds_impl.h"
#include "headfuse/newton.h"

__extension__ typedef __int128 newton_i128;

/* Largest |coordinate| of an input point (keys are far below it: HF_KEY_MAX times a few
 * heads). */
#define NEWTON_COORD_MAX (INT64_C(1) << 40)

static pthread_once_t newton_cdd_once = PTHREAD_ONCE_INIT;

static void newton_cdd_init(void)
{
    dd_set_global_constants();
}

void hf_newton_init(hf_newton_t *N)
{
    memset(N, 0, sizeof *N);
}

void hf_newton_clear(hf_newton_t *N)
{
    for (long i = 0; i < N->nfaces; i++) {
        free(N->faces[i].w);
        free(N->faces[i].verts);
    }
    free(N->faces);
    free(N->facet_b);
    free(N->facet_w);
    free(N->verts);
    hf_newton_init(N);
}

/* ------------------------------------------------------------------ bitsets */

static long bits_words(long n)
{
    return (n + 63) / 64;
}

static int bits_get(const uint64_t *s, long i)
{
    return (int)(s[i >> 6] >> (i & 63) & 1);
}

static void bits_set(uint64_t *s, long i)
{
    s[i >> 6] |= UINT64_C(1) << (i & 63);
}

static long bits_count(const uint64_t *s, long nw)
{
    long c = 0;
    for (long i = 0; i < nw; i++)
        c += __builtin_popcountll(s[i]);
    return c;
}

/* ------------------------------------------------------------------ affine hull */

/* Echelon basis R[0..r) of the span of p_i - p_0 with distinct pivot columns piv[k]
 * (R[k][piv[j]] = 0 for j < k, R[k][piv[k]] != 0), so the r x r minor on the pivot
 * columns is triangular with a nonzero diagonal. R holds d*d fmpz, initialised. */
static void newton_hull(const int64_t *pts, long n, int d, fmpz *R, int *piv, int *r)
{
    fmpz *v = _fmpz_vec_init(d);
    fmpz_t a, b, g;
    fmpz_init(a);
    fmpz_init(b);
    fmpz_init(g);
    *r = 0;
    for (long i = 1; i < n && *r < d; i++) {
        for (int j = 0; j < d; j++)
            fmpz_set_si(v + j, pts[i * d + j] - pts[j]);
        for (int k = 0; k < *r; k++) {
            if (fmpz_is_zero(v + piv[k]))
                continue;
            /* v <- R[k][p] v - v[p] R[k] clears column p */
            fmpz_set(a, R + (long)k * d + piv[k]);
            fmpz_set(b, v + piv[k]);
            _fmpz_vec_scalar_mul_fmpz(v, v, d, a);
            _fmpz_vec_scalar_submul_fmpz(v, R + (long)k * d, d, b);
        }
        _fmpz_vec_content(g, v, d);
        if (fmpz_is_zero(g))
            continue;
        _fmpz_vec_scalar_divexact_fmpz(v, v, d, g);
        int p = 0;
        while (fmpz_is_zero(v + p))
            p++;
        piv[*r] = p;
        _fmpz_vec_set(R + (long)*r * d, v, d);
        (*r)++;
    }
    fmpz_clear(g);
    fmpz_clear(b);
    fmpz_clear(a);
    _fmpz_vec_clear(v, d);
}

/* ------------------------------------------------------------------ facets */

/* Facets of the full-dimensional polytope conv(y_i) in R^r through cddlib: nf rows
 * a (r fmpz, primitive) with a.y <= b on the polytope. A and b are allocated. */
static hf_err_t newton_cdd_facets(const int64_t *y, long n, int r, fmpz **A, long *nf)
{
    hf_err_t err = HF_OK;
    dd_ErrorType derr = dd_NoError;
    dd_MatrixPtr M = NULL, H = NULL;
    dd_PolyhedraPtr P = NULL;
    fmpz *rows = NULL;
    fmpz_t L, t;
    fmpz_init(L);
    fmpz_init(t);
    *A = NULL;
    *nf = 0;
    pthread_once(&newton_cdd_once, newton_cdd_init);

    M = dd_CreateMatrix(n, r + 1);
    if (!M) {
        err = hf_error(HF_ERR_NOMEM, "newton: cddlib could not allocate %ld x %d", n, r + 1);
        goto cleanup;
    }
    M->representation = dd_Generator;
    M->numbtype = dd_Rational;
    for (long i = 0; i < n; i++) {
        mpq_set_si(M->matrix[i][0], 1, 1);
        for (int l = 0; l < r; l++)
            mpq_set_si(M->matrix[i][l + 1], (long)y[i * r + l], 1);
    }
    P = dd_DDMatrix2Poly(M, &derr);
    if (!P || derr != dd_NoError) {
        err = hf_error(HF_ERR_LIMIT, "newton: cddlib failed to convert %ld points (error %d)", n,
                       (int)derr);
        goto cleanup;
    }
    H = dd_CopyInequalities(P);
    if (!H) {
        err = hf_error(HF_ERR_LIMIT, "newton: cddlib returned no inequalities");
        goto cleanup;
    }
    if (set_card(H->linset) != 0) {
        err = hf_error(HF_ERR_INTERNAL, "newton: the projected polytope is not full-dimensional");
        goto cleanup;
    }
    rows = _fmpz_vec_init((long)H->rowsize * r);
    for (long i = 0; i < H->rowsize; i++) {
        /* b + A y >= 0, i.e. (-A) y <= b: clear denominators, keep the normal -A */
        fmpz_one(L);
        for (int l = 1; l <= r; l++) {
            fmpz_set_mpz(t, mpq_denref(H->matrix[i][l]));
            fmpz_lcm(L, L, t);
        }
        fmpz *a = rows + *nf * r;
        for (int l = 0; l < r; l++) {
            fmpz_set_mpz(a + l, mpq_numref(H->matrix[i][l + 1]));
            fmpz_set_mpz(t, mpq_denref(H->matrix[i][l + 1]));
            fmpz_divexact(t, L, t);
            fmpz_mul(a + l, a + l, t);
            fmpz_neg(a + l, a + l);
        }
        _fmpz_vec_content(t, a, r);
        if (fmpz_is_zero(t))
            continue; /* the row 1 >= 0 of the homogenisation */
        _fmpz_vec_scalar_divexact_fmpz(a, a, r, t);
        int dup = 0;
        for (long k = 0; k < *nf && !dup; k++)
            dup = _fmpz_vec_equal(rows + k * r, a, r);
        if (!dup)
            (*nf)++;
    }
    /* rows past nf may hold skipped values: zero them so that clearing nf rows frees all */
    _fmpz_vec_zero(rows + *nf * r, ((long)H->rowsize - *nf) * r);
    *A = rows;
    rows = NULL;
cleanup:
    if (rows)
        _fmpz_vec_clear(rows, (long)H->rowsize * r);
    if (H)
        dd_FreeMatrix(H);
    if (P)
        dd_FreePolyhedra(P);
    if (M)
        dd_FreeMatrix(M);
    fmpz_clear(t);
    fmpz_clear(L);
    return err;
}

/* ------------------------------------------------------------------ lifting */

/* Lift projected normals a_f (nf x r) to w_f in L (nf x d, primitive int64): w = sum_i
 * c_i R_i with (R R^T) c = (a . pi(R_k))_k, so w.v = a.pi(v) on L. */
static hf_err_t newton_lift(const fmpz *A, long nf, const fmpz *R, const int *piv, int r, int d,
                            int64_t *W)
{
    hf_err_t err = HF_OK;
    fmpz_mat_t G, B, X;
    fmpz_t den, g;
    fmpz *w = _fmpz_vec_init(d);
    fmpz_mat_init(G, r, r);
    fmpz_mat_init(B, r, nf);
    fmpz_mat_init(X, r, nf);
    fmpz_init(den);
    fmpz_init(g);
    for (int i = 0; i < r; i++)
        for (int k = 0; k < r; k++)
            _fmpz_vec_dot(fmpz_mat_entry(G, i, k), R + (long)i * d, R + (long)k * d, d);
    for (int k = 0; k < r; k++)
        for (long f = 0; f < nf; f++)
            for (int l = 0; l < r; l++)
                fmpz_addmul(fmpz_mat_entry(B, k, f), A + f * r + l, R + (long)k * d + piv[l]);
    if (!fmpz_mat_solve(X, den, G, B)) {
        err = hf_error(HF_ERR_INTERNAL, "newton: the affine hull's Gram matrix is singular");
        goto cleanup;
    }
    if (fmpz_sgn(den) < 0) {
        fmpz_mat_neg(X, X);
        fmpz_neg(den, den);
    }
    for (long f = 0; f < nf; f++) {
        _fmpz_vec_zero(w, d);
        for (int i = 0; i < r; i++)
            _fmpz_vec_scalar_addmul_fmpz(w, R + (long)i * d, d, fmpz_mat_entry(X, i, f));
        _fmpz_vec_content(g, w, d);
        if (fmpz_is_zero(g)) {
            err = hf_error(HF_ERR_INTERNAL, "newton: a facet normal lifts to zero");
            goto cleanup;
        }
        _fmpz_vec_scalar_divexact_fmpz(w, w, d, g);
        for (int j = 0; j < d; j++) {
            if (!fmpz_fits_si(w + j)) {
                err = hf_error(HF_ERR_LIMIT, "newton: a facet normal does not fit 64 bits");
                goto cleanup;
            }
            W[f * d + j] = fmpz_get_si(w + j);
        }
    }
cleanup:
    fmpz_clear(g);
    fmpz_clear(den);
    fmpz_mat_clear(X);
    fmpz_mat_clear(B);
    fmpz_mat_clear(G);
    _fmpz_vec_clear(w, d);
    return err;
}

/* ------------------------------------------------------------------ faces */

typedef struct {
    long nv, nf, nwv, nwf;
    const uint64_t *fv; /* facet -> vertex bitsets, nf x nwv */
    const uint64_t *vf; /* vertex -> facet bitsets, nv x nwf */
    /* faces found so far: vertex and facet bitsets, dimension */
    uint64_t *V, *F;
    int *dim;
    long n, cap;
} newton_lattice_t;

static hf_err_t lattice_push(newton_lattice_t *L, const uint64_t *v, const uint64_t *f, int dim)
{
    /* a face is a row of nwv words in V, of nwf words in F and one int in dim */
    HF_TRY(hf_grow_arrays(&L->cap, L->n + 1, 3,
                          (void **const[]){(void **)&L->V, (void **)&L->F, (void **)&L->dim},
                          (const size_t[]){(size_t)L->nwv * sizeof *L->V,
                                           (size_t)L->nwf * sizeof *L->F, sizeof *L->dim}));
    memcpy(L->V + L->n * L->nwv, v, (size_t)L->nwv * sizeof *v);
    memcpy(L->F + L->n * L->nwf, f, (size_t)L->nwf * sizeof *f);
    L->dim[L->n++] = dim;
    return HF_OK;
}

/* Faces of dimension 0 .. r-1, at most max_faces, layer by layer. *complete = 0 when
 * the cap stopped the enumeration. */
static hf_err_t lattice_build(newton_lattice_t *L, int r, long max_faces, int *complete)
{
    hf_err_t err = HF_OK;
    long nwv = L->nwv, nwf = L->nwf;
    hf_ivset_t seen, cand;
    uint64_t *vb = hf_calloc((size_t)nwv, sizeof *vb);
    uint64_t *fb = hf_calloc((size_t)nwf, sizeof *fb);
    long *count = NULL, ccap = 0, cfcap = 0; /* cf: cfcap rows of nwf words */
    uint64_t *cf = NULL;                     /* facet sets of the candidates */
    int added;
    memset(&seen, 0, sizeof seen);
    memset(&cand, 0, sizeof cand);
    *complete = 1;
    if (!vb || !fb) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    HF_CHECK(err, hf_ivset_init(&seen, (int)nwv), cleanup);
    for (long v = 0; v < L->nv; v++) {
        if (L->n >= max_faces) {
            *complete = 0;
            goto cleanup;
        }
        memset(vb, 0, (size_t)nwv * sizeof *vb);
        bits_set(vb, v);
        if (hf_ivset_insert(&seen, (const int64_t *)vb, &added) < 0) {
            err = HF_ERR_NOMEM;
            goto cleanup;
        }
        HF_CHECK(err, lattice_push(L, vb, L->vf + v * nwf, 0), cleanup);
    }
    long lo = 0, hi = L->n; /* the current layer: faces lo .. hi-1 */
    for (int k = 0; k + 1 < r && lo < hi; k++) {
        for (long g = lo; g < hi; g++) {
            HF_CHECK(err, hf_ivset_init(&cand, (int)nwv), cleanup);
            long ng = bits_count(L->V + g * nwv, nwv);
            for (long v = 0; v < L->nv; v++) {
                if (bits_get(L->V + g * nwv, v))
                    continue;
                int any = 0;
                for (long i = 0; i < nwf; i++) {
                    fb[i] = L->F[g * nwf + i] & L->vf[v * nwf + i];
                    any |= fb[i] != 0;
                }
                if (!any)
                    continue; /* no facet holds G and v: the closure is the polytope */
                for (long i = 0; i < nwv; i++)
                    vb[i] = ~UINT64_C(0);
                for (long f = 0; f < L->nf; f++)
                    if (bits_get(fb, f))
                        for (long i = 0; i < nwv; i++)
                            vb[i] &= L->fv[f * nwv + i];
                long c = hf_ivset_insert(&cand, (const int64_t *)vb, &added);
                if (c < 0) {
                    err = HF_ERR_NOMEM;
                    goto cleanup;
                }
                if (added) {
                    HF_CHECK(err, HF_GROW(&count, &ccap, c + 1), cleanup);
                    HF_CHECK(err, hf_grow((void **)&cf, &cfcap, c + 1, (size_t)nwf * sizeof *cf),
                             cleanup);
                    count[c] = 0;
                    memcpy(cf + c * nwf, fb, (size_t)nwf * sizeof *fb);
                }
                count[c]++;
            }
            for (long c = 0; c < cand.n; c++) {
                const uint64_t *cv = (const uint64_t *)(cand.keys + c * nwv);
                if (count[c] != bits_count(cv, nwv) - ng)
                    continue; /* not minimal: a face strictly between G and it */
                if (hf_ivset_insert(&seen, (const int64_t *)cv, &added) < 0) {
                    err = HF_ERR_NOMEM;
                    goto cleanup;
                }
                if (!added)
                    continue;
                if (L->n >= max_faces) {
                    *complete = 0;
                    goto cleanup;
                }
                HF_CHECK(err, lattice_push(L, cv, cf + c * nwf, k + 1), cleanup);
            }
            hf_ivset_clear(&cand);
        }
        lo = hi;
        hi = L->n;
    }
cleanup:
    hf_ivset_clear(&cand);
    hf_ivset_clear(&seen);
    free(cf);
    free(count);
    free(fb);
    free(vb);
    return err;
}

/* Order of faces: dimension, then vertex lists lexicographically. */
static int newton_cmp_faces(const void *ctx, long a, long b)
{
    const hf_newton_face_t *F = ctx;
    if (F[a].dim != F[b].dim)
        return F[a].dim < F[b].dim ? -1 : 1;
    for (long i = 0; i < F[a].nverts && i < F[b].nverts; i++)
        if (F[a].verts[i] != F[b].verts[i])
            return F[a].verts[i] < F[b].verts[i] ? -1 : 1;
    return (F[a].nverts > F[b].nverts) - (F[a].nverts < F[b].nverts);
}

/* Primitive form of an int128 vector that must fit 64 bits. 0 if it does not. */
static int newton_primitive(const newton_i128 *acc, int d, int64_t *out)
{
    int64_t g = 0;
    for (int j = 0; j < d; j++) {
        newton_i128 a = acc[j] < 0 ? -acc[j] : acc[j];
        if (a > INT64_MAX)
            return 0;
        int64_t x = (int64_t)a;
        while (x) {
            int64_t t = g % x;
            g = x;
            x = t;
        }
    }
    for (int j = 0; j < d; j++)
        out[j] = g ? (int64_t)(acc[j] / g) : 0;
    return 1;
}

/* The lattice's faces as hf_newton_face_t records, sorted; w = primitive sum of the
 * facet normals of the facets containing the face. */
static hf_err_t newton_faces_out(const newton_lattice_t *L, hf_newton_t *N)
{
    int d = N->d;
    long n = L->n;
    hf_newton_face_t *F = hf_calloc((size_t)(n ? n : 1), sizeof *F);
    long *order = hf_malloc((size_t)(n ? n : 1) * sizeof *order);
    newton_i128 *acc = hf_malloc((size_t)d * sizeof *acc);
    hf_err_t err = HF_OK;
    if (!F || !order || !acc) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < n; i++) {
        const uint64_t *vs = L->V + i * L->nwv, *fs = L->F + i * L->nwf;
        F[i].dim = L->dim[i];
        F[i].nverts = bits_count(vs, L->nwv);
        F[i].verts = hf_malloc((size_t)F[i].nverts * sizeof *F[i].verts);
        F[i].w = hf_malloc((size_t)d * sizeof *F[i].w);
        if (!F[i].verts || !F[i].w) {
            err = HF_ERR_NOMEM;
            goto cleanup;
        }
        long m = 0;
        for (long v = 0; v < L->nv; v++)
            if (bits_get(vs, v))
                F[i].verts[m++] = v;
        for (int j = 0; j < d; j++)
            acc[j] = 0;
        for (long f = 0; f < L->nf; f++)
            if (bits_get(fs, f))
                for (int j = 0; j < d; j++)
                    acc[j] += N->facet_w[f * d + j];
        if (!newton_primitive(acc, d, F[i].w)) {
            err = hf_error(HF_ERR_LIMIT, "newton: a face direction does not fit 64 bits");
            goto cleanup;
        }
        order[i] = i;
    }
    if (hf_sort(order, n, newton_cmp_faces, F) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    N->faces = hf_calloc((size_t)(n ? n : 1), sizeof *N->faces);
    if (!N->faces) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < n; i++)
        N->faces[i] = F[order[i]];
    N->nfaces = n;
cleanup:
    if (err != HF_OK && F)
        for (long i = 0; i < n; i++) {
            free(F[i].w);
            free(F[i].verts);
        }
    free(acc);
    free(order);
    free(F);
    return err;
}

/* Affine dimension of the vertices in the set sel (-1 when it is empty). */
static int newton_affine_dim(const int64_t *verts, const uint64_t *sel, long nv, int d)
{
    long first = -1, k = 0;
    for (long v = 0; v < nv; v++)
        if (bits_get(sel, v)) {
            if (first < 0)
                first = v;
            else
                k++;
        }
    if (first < 0)
        return -1;
    if (k == 0)
        return 0;
    fmpz_mat_t D;
    fmpz_mat_init(D, k, d);
    long row = 0;
    for (long v = first + 1; v < nv; v++)
        if (bits_get(sel, v)) {
            for (int j = 0; j < d; j++)
                fmpz_set_si(fmpz_mat_entry(D, row, j), verts[v * d + j] - verts[first * d + j]);
            row++;
        }
    int rank = (int)fmpz_mat_rank(D);
    fmpz_mat_clear(D);
    return rank;
}

/* ------------------------------------------------------------------ main */

/* The work of both entry points, on n distinct points. */
static hf_err_t newton_from_distinct(const int64_t *pts, long n, int d, long max_faces,
                                     hf_newton_t *N);

hf_err_t hf_newton_from_fraction(const hf_fraction_t *f, long max_faces, hf_newton_t *N)
{
    int d = f->d;
    long n = f->Q->length;
    slong exps[HF_D_MAX];
    if (n == 0) {
        hf_newton_clear(N);
        return hf_error(HF_ERR_INPUT, "newton: the denominator is zero");
    }
    int64_t *pts = hf_malloc((size_t)n * d * sizeof *pts);
    if (!pts)
        return HF_ERR_NOMEM;
    for (long i = 0; i < n; i++) {
        fmpz_mpoly_get_term_exp_si(exps, f->Q, i, f->ctx);
        for (int j = 0; j < d; j++)
            pts[i * d + j] = exps[j];
    }
    hf_err_t err = newton_from_distinct(pts, n, d, max_faces, N);
    free(pts);
    return err;
}

hf_err_t hf_newton_from_points(const int64_t *pts, long n, int d, long max_faces, hf_newton_t *N)
{
    if (n <= 0 || d < 1 || d > HF_D_MAX) {
        hf_newton_clear(N);
        return hf_error(HF_ERR_INPUT, "newton: %ld points in dimension %d", n, d);
    }
    /* cddlib's output is minimal only for distinct generators: drop repeated points */
    long *idx = hf_malloc((size_t)n * sizeof *idx);
    int64_t *u = hf_malloc((size_t)n * d * sizeof *u);
    hf_err_t err = HF_ERR_NOMEM;
    if (idx && u) {
        for (long i = 0; i < n; i++)
            idx[i] = i;
        hf_rows_t ord = {pts, d};
        err = hf_sort(idx, n, hf_cmp_rows, &ord);
    }
    if (err == HF_OK) {
        long m = 0;
        for (long i = 0; i < n; i++) {
            const int64_t *p = pts + idx[i] * d;
            if (m > 0 && !memcmp(u + (m - 1) * d, p, (size_t)d * sizeof *p))
                continue;
            memcpy(u + m * d, p, (size_t)d * sizeof *p);
            m++;
        }
        err = newton_from_distinct(u, m, d, max_faces, N);
    }
    free(u);
    free(idx);
    return err;
}

/* Step 3: the incidences and the vertices. inc (nwp words a facet) marks the points where
 * the facet's projected normal a has its largest a.y; a point is a vertex iff it is the
 * only point on all the facets through it. *vidx: the vertices' indices in pts, sorted by
 * their coordinates (N->nverts, N->verts). *inc and *vidx are the caller's to free, on
 * error too. a.y is exact in 128 bits: |a| < 2^63 (checked), |y| <= 2^41 (keys are
 * bounded), r <= 64 terms. */
static hf_err_t newton_vertices(const int64_t *pts, long n, int d, const int64_t *y, int r,
                                const fmpz *A, long nf, long nwp, uint64_t **incp, long **vidxp,
                                hf_newton_t *N)
{
    hf_err_t err = HF_OK;
    long nv = 0;
    uint64_t *inc = *incp = hf_calloc((size_t)nf * nwp, sizeof *inc);
    uint64_t *acc = hf_malloc((size_t)nwp * sizeof *acc);
    long *fa = hf_malloc((size_t)nf * r * sizeof *fa), *vidx = NULL;
    if (!inc || !acc || !fa) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long k = 0; k < nf * r; k++) {
        if (!fmpz_fits_si(A + k)) {
            err = hf_error(HF_ERR_LIMIT, "newton: a facet normal does not fit 64 bits");
            goto cleanup;
        }
        fa[k] = fmpz_get_si(A + k);
    }
    for (long q = 0; q < nf; q++) {
        newton_i128 best = 0;
        for (long i = 0; i < n; i++) {
            newton_i128 s = 0;
            for (int l = 0; l < r; l++)
                s += (newton_i128)fa[q * r + l] * y[i * r + l];
            if (i == 0 || s > best) {
                best = s;
                memset(inc + q * nwp, 0, (size_t)nwp * sizeof *inc);
            }
            if (s == best)
                bits_set(inc + q * nwp, i);
        }
    }
    vidx = *vidxp = hf_malloc((size_t)n * sizeof *vidx);
    if (!vidx) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < n; i++) {
        int any = 0;
        for (long k = 0; k < nwp; k++)
            acc[k] = ~UINT64_C(0);
        for (long q = 0; q < nf; q++)
            if (bits_get(inc + q * nwp, i)) {
                any = 1;
                for (long k = 0; k < nwp; k++)
                    acc[k] &= inc[q * nwp + k];
            }
        if (any && bits_count(acc, nwp) == 1)
            vidx[nv++] = i;
    }
    hf_rows_t ord = {pts, d};
    if (hf_sort(vidx, nv, hf_cmp_rows, &ord) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    N->nverts = nv;
    N->verts = hf_malloc((size_t)nv * d * sizeof *N->verts);
    if (!N->verts) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long v = 0; v < nv; v++)
        memcpy(N->verts + v * d, pts + vidx[v] * d, (size_t)d * sizeof *pts);
cleanup:
    free(fa);
    free(acc);
    return err;
}

/* Step 4: the nf facets' normals lifted to L (N->facet_w) and their right-hand sides over
 * the vertices (N->facet_b), which must fit 64 bits. */
static hf_err_t newton_facets(const fmpz *A, long nf, const fmpz *R, const int *piv, int r,
                              hf_newton_t *N)
{
    int d = N->d;
    long nv = N->nverts;
    N->nfacets = nf;
    N->facet_w = hf_malloc((size_t)nf * d * sizeof *N->facet_w);
    N->facet_b = hf_malloc((size_t)nf * sizeof *N->facet_b);
    if (!N->facet_w || !N->facet_b)
        return HF_ERR_NOMEM;
    HF_TRY(newton_lift(A, nf, R, piv, r, d, N->facet_w));
    for (long q = 0; q < nf; q++) {
        newton_i128 best = 0;
        for (long v = 0; v < nv; v++) {
            newton_i128 s = 0;
            for (int j = 0; j < d; j++)
                s += (newton_i128)N->facet_w[q * d + j] * N->verts[v * d + j];
            if (v == 0 || s > best)
                best = s;
        }
        if (best > INT64_MAX || best < INT64_MIN)
            return hf_error(HF_ERR_LIMIT, "newton: a facet's right-hand side exceeds 64 bits");
        N->facet_b[q] = (int64_t)best;
    }
    return HF_OK;
}

/* Step 5: the faces of N (its vertices and facets made), from the points' incidences inc
 * (nwp words a facet) restricted to the vertices vidx; r is the dimension, max_faces the
 * cap of the lattice (N->faces_complete). */
static hf_err_t newton_faces(const uint64_t *inc, long nwp, const long *vidx, int r, long max_faces,
                             hf_newton_t *N)
{
    hf_err_t err = HF_OK;
    long nv = N->nverts, nf = N->nfacets;
    uint64_t *fv = NULL, *vf = NULL;
    newton_lattice_t lat;
    memset(&lat, 0, sizeof lat);
    lat.nv = nv;
    lat.nf = nf;
    lat.nwv = bits_words(nv);
    lat.nwf = bits_words(nf);
    fv = hf_calloc((size_t)nf * lat.nwv, sizeof *fv);
    vf = hf_calloc((size_t)nv * lat.nwf, sizeof *vf);
    if (!fv || !vf) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long q = 0; q < nf; q++)
        for (long v = 0; v < nv; v++)
            if (bits_get(inc + q * nwp, vidx[v])) {
                bits_set(fv + q * lat.nwv, v);
                bits_set(vf + v * lat.nwf, q);
            }
    /* every inequality must be a facet: its vertices span dimension r - 1 (cddlib's
     * output is minimal; this guards the face lattice built on it) */
    for (long q = 0; q < nf; q++)
        if (newton_affine_dim(N->verts, fv + q * lat.nwv, nv, N->d) != r - 1) {
            err = hf_error(HF_ERR_INTERNAL, "newton: inequality %ld is not a facet", q);
            goto cleanup;
        }
    lat.fv = fv;
    lat.vf = vf;
    HF_CHECK(err, lattice_build(&lat, r, max_faces, &N->faces_complete), cleanup);
    HF_CHECK(err, newton_faces_out(&lat, N), cleanup);
cleanup:
    free(lat.dim);
    free(lat.F);
    free(lat.V);
    free(vf);
    free(fv);
    return err;
}

static hf_err_t newton_from_distinct(const int64_t *pts, long n, int d, long max_faces,
                                     hf_newton_t *N)
{
    hf_err_t err = HF_OK;
    int r = 0, piv[HF_D_MAX];
    long nf = 0;
    int64_t *y = NULL;
    fmpz *R = NULL, *A = NULL;
    long *vidx = NULL;
    uint64_t *inc = NULL;
    hf_newton_clear(N);
    if (max_faces < 0)
        return hf_error(HF_ERR_INPUT, "newton: max_faces %ld is negative", max_faces);
    for (long i = 0; i < n * d; i++) /* keeps the 128-bit dot products below exact */
        if (pts[i] > NEWTON_COORD_MAX || pts[i] < -NEWTON_COORD_MAX)
            return hf_error(HF_ERR_LIMIT, "newton: a coordinate exceeds 2^40 in absolute value");
    N->d = d;
    R = _fmpz_vec_init((long)d * d);
    newton_hull(pts, n, d, R, piv, &r);
    N->dim = r;
    if (r == 0) { /* a monomial: one vertex, no proper face */
        N->nverts = 1;
        N->verts = hf_malloc((size_t)d * sizeof *N->verts);
        if (!N->verts) {
            err = HF_ERR_NOMEM;
            goto cleanup;
        }
        memcpy(N->verts, pts, (size_t)d * sizeof *pts);
        N->faces_complete = 1;
        goto cleanup;
    }

    /* 2. facets of the projection (pivot coordinates relative to the first point) */
    y = hf_malloc((size_t)n * r * sizeof *y);
    if (!y) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < n; i++)
        for (int l = 0; l < r; l++)
            y[i * r + l] = pts[i * d + piv[l]] - pts[piv[l]];
    HF_CHECK(err, newton_cdd_facets(y, n, r, &A, &nf), cleanup);
    /* 3.-5. (the steps at the top of this file) */
    long nwp = bits_words(n);
    HF_CHECK(err, newton_vertices(pts, n, d, y, r, A, nf, nwp, &inc, &vidx, N), cleanup);
    HF_CHECK(err, newton_facets(A, nf, R, piv, r, N), cleanup);
    HF_CHECK(err, newton_faces(inc, nwp, vidx, r, max_faces, N), cleanup);

cleanup:
    if (err != HF_OK)
        hf_newton_clear(N);
    free(vidx);
    free(inc);
    if (A)
        _fmpz_vec_clear(A, nf * r > 0 ? nf * r : 1);
    free(y);
    _fmpz_vec_clear(R, (long)d * d);
    return err;
}
