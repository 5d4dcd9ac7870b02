/* The face accounting evaluated on one hull X = Z + P' (faces3d.h): the count L(X) of keys
 * it forces on the boundary of X, and the face-by-face check of a key set against it.
 *
 * Each face G of X, with w in the relative interior of its normal cone, is Z_w + P'_w: Z_w
 * is read off Z's vertices (those maximising w), and P'_w is a point exactly when G is a
 * translate of Z_w. This is the independent side of the tests: the combination in
 * faces3d.c bounds L(Z + P') for every P' at once, this computes it for one P', so
 * every P' tried must satisfy L >= bound; and real supports found by the search must
 * hold, on every face, the keys counted here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/faces3d.h"
#include "bounds/faces3d_impl.h"

/* 1 if the face with sorted vertex list gv (in X) is a translate of the face with sorted
 * vertex list zv (in Z): vertices sorted lexicographically on both sides, so a translation
 * keeps the order. */
static int is_translate(const int64_t *xv, const long *gv, long gn, const int64_t *zv,
                        const long *zi, long zn)
{
    if (gn != zn)
        return 0;
    for (long i = 0; i < gn; i++)
        for (int j = 0; j < 3; j++)
            if (xv[3 * gv[i] + j] - xv[3 * gv[0] + j] != zv[3 * zi[i] + j] - zv[3 * zi[0] + j])
                return 0;
    return 1;
}

/* Keys the accounting forces into the relative interior of face G of X. */
static hf_err_t face_forced(const hf_faces3d_t *A, const hf_newton_t *X, const hf_newton_face_t *G,
                            long *forced)
{
    const hf_newton_t *Z = &A->Z;
    long *zs = hf_malloc((size_t)Z->nverts * sizeof *zs), k = 0;
    if (!zs)
        return HF_ERR_NOMEM;
    hf_faces3d_i128 best = 0;
    for (long v = 0; v < Z->nverts; v++) {
        hf_faces3d_i128 s = hf_faces3d_dot(G->w, Z->verts + 3 * v);
        if (v == 0 || s > best) {
            best = s;
            k = 0;
        }
        if (s == best)
            zs[k++] = v;
    }
    hf_err_t err = HF_OK;
    *forced = 0;
    if (G->dim == 0) {
        *forced = 1;
    } else if (k > G->nverts || (G->dim == 1 && k > 2)) {
        err = hf_error(HF_ERR_INPUT, "faces3d: a face of the hull is not a face of Newt(Q) plus "
                                     "a face of a polytope (the hull is not Newt(Q) + P)");
    } else if (G->dim == 1 && k == 2) {
        for (long e = 0; e < A->nedges; e++) {
            const hf_faces3d_edge_t *ed = A->edges + e;
            if (ed->v0 != zs[0] || ed->v1 != zs[1])
                continue;
            long len =
                hf_faces3d_lattice_length(X->verts + 3 * G->verts[0], X->verts + 3 * G->verts[1]);
            *forced = hf_faces3d_edge_forced(ed, len);
        }
    } else if (G->dim == 2 && k >= 3) {
        for (long f = 0; f < A->nfacets; f++) {
            const hf_faces3d_facet_t *g = A->facets + f;
            const hf_newton_face_t *F = Z->faces + g->face;
            if (F->nverts != k || memcmp(F->verts, zs, (size_t)k * sizeof *zs) != 0)
                continue;
            if (g->exact && is_translate(X->verts, G->verts, G->nverts, Z->verts, F->verts, k))
                *forced = g->inner;
        }
    }
    free(zs);
    return err;
}

static hf_err_t hull_of(const int64_t *pts, long n, hf_newton_t *X)
{
    HF_TRY(hf_newton_from_points(pts, n, 3, HF_FACES3D_MAX_FACES, X));
    if (X->dim != 3 || !X->faces_complete)
        return hf_error(HF_ERR_INPUT, "faces3d: the hull is not a full-dimensional polytope "
                                      "with all its faces listed");
    return HF_OK;
}

hf_err_t hf_faces3d_count_hull(const hf_faces3d_t *A, const int64_t *pts, long n,
                               hf_faces3d_count_t *out)
{
    hf_newton_t X;
    hf_err_t err;
    memset(out, 0, sizeof *out);
    if (!A->ok)
        return hf_error(HF_ERR_INTERNAL, "faces3d: count without face values");
    hf_newton_init(&X);
    HF_CHECK(err, hull_of(pts, n, &X), done);
    for (long i = 0; i < X.nfaces; i++) {
        const hf_newton_face_t *G = X.faces + i;
        long c;
        HF_CHECK(err, face_forced(A, &X, G, &c), done);
        if (G->dim == 0)
            out->vertices += c;
        else if (G->dim == 1)
            out->on_edges += c;
        else
            out->on_facets += c;
    }
    out->total = out->vertices + out->on_edges + out->on_facets;
    if (X.nverts == A->Z.nverts) {
        long *all = hf_malloc((size_t)X.nverts * sizeof *all);
        if (!all) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        for (long v = 0; v < X.nverts; v++)
            all[v] = v;
        out->translate = is_translate(X.verts, all, X.nverts, A->Z.verts, all, X.nverts);
        free(all);
    }
done:
    hf_newton_clear(&X);
    return err;
}

hf_err_t hf_faces3d_count_sum(const hf_faces3d_t *A, const int64_t *p, long n,
                              hf_faces3d_count_t *out)
{
    if (!A->ok)
        return hf_error(HF_ERR_INTERNAL, "faces3d: count without face values");
    if (n <= 0)
        return hf_error(HF_ERR_INPUT, "faces3d: P has no points");
    long nz = A->Z.nverts;
    int64_t *x = hf_malloc((size_t)(nz * n * 3) * sizeof *x);
    if (!x)
        return HF_ERR_NOMEM;
    for (long v = 0; v < nz; v++)
        for (long i = 0; i < n; i++)
            for (int j = 0; j < 3; j++)
                x[3 * (v * n + i) + j] = A->Z.verts[3 * v + j] + p[3 * i + j];
    hf_err_t err = hf_faces3d_count_hull(A, x, nz * n, out);
    free(x);
    return err;
}

/* Index of the face of X whose vertex list is vs[0..k) (sorted), or -1. */
static long face_index(const hf_newton_t *X, const long *vs, long k)
{
    if (k == 1)
        return vs[0]; /* faces[v] is vertex v (newton.h) */
    for (long i = X->nverts; i < X->nfaces; i++)
        if (X->faces[i].nverts == k && !memcmp(X->faces[i].verts, vs, (size_t)k * sizeof *vs))
            return i;
    return -1;
}

/* inner[i] = keys in the relative interior of face i of X: the smallest face holding a
 * key is the intersection of the facets through it. */
static hf_err_t relint_counts(const hf_newton_t *X, const int64_t *keys, long m, long *inner)
{
    char *on = hf_malloc((size_t)X->nfacets);
    long *vs = hf_malloc((size_t)X->nverts * sizeof *vs);
    hf_err_t err = HF_OK;
    if (!on || !vs) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < m; i++) {
        const int64_t *k = keys + 3 * i;
        int any = 0;
        for (long q = 0; q < X->nfacets; q++) {
            on[q] = hf_faces3d_dot(X->facet_w + 3 * q, k) == X->facet_b[q];
            any |= on[q];
        }
        if (!any)
            continue; /* an interior key */
        long nv = 0;
        for (long v = 0; v < X->nverts; v++) {
            int all = 1;
            for (long q = 0; q < X->nfacets && all; q++) {
                all =
                    !on[q] || hf_faces3d_dot(X->facet_w + 3 * q, X->verts + 3 * v) == X->facet_b[q];
            }
            if (all)
                vs[nv++] = v;
        }
        long f = face_index(X, vs, nv);
        if (f < 0) {
            err = hf_error(HF_ERR_INTERNAL, "faces3d: no face of the hull holds key %ld", i);
            goto done;
        }
        inner[f]++;
    }
done:
    free(vs);
    free(on);
    return err;
}

hf_err_t hf_faces3d_check_support(const hf_faces3d_t *A, const int64_t *keys, long m, int *ok,
                                  char *bad)
{
    hf_newton_t X;
    long *inner = NULL;
    hf_err_t err;
    *ok = 1;
    if (!A->ok)
        return hf_error(HF_ERR_INTERNAL, "faces3d: check without face values");
    hf_newton_init(&X);
    HF_CHECK(err, hull_of(keys, m, &X), done);
    inner = hf_calloc((size_t)X.nfaces, sizeof *inner);
    if (!inner) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    HF_CHECK(err, relint_counts(&X, keys, m, inner), done);
    for (long i = 0; i < X.nfaces && *ok; i++) {
        long c;
        HF_CHECK(err, face_forced(A, &X, X.faces + i, &c), done);
        if (inner[i] >= c)
            continue;
        *ok = 0;
        if (bad) {
            const int64_t *v = X.verts + 3 * X.faces[i].verts[0];
            snprintf(bad, HF_FACES3D_BAD_LEN,
                     "hull face %ld (dim %d, %ld vertices, first (%lld,%lld,%lld)): %ld keys "
                     "inside, %ld forced",
                     i, X.faces[i].dim, X.faces[i].nverts, (long long)v[0], (long long)v[1],
                     (long long)v[2], inner[i], c);
        }
    }
done:
    free(inner);
    hf_newton_clear(&X);
    return err;
}
