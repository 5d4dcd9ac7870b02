/* The layered engine's filter (docs/search.md, rules 3 and 4): faces of a candidate K that
 * must be feasible supports of their limit targets. The bottom and top layers (the faces
 * along the last coordinate) are feasible by construction; the other coordinate faces
 * F_{-e_j}(K), F_{+e_j}(K), j < d - 1, and, for every other facet normal w of Newt(Q), the
 * face F_w(K) (conv(K) = Newt(Q) + P gives width_w(K) >= width_w(Newt Q), and F_w(K)
 * represents T_w) are checked: widths and sizes first (cheap), then memoised exact tests.
 * Both only reject what cannot be a support; answers never change. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/newton.h"
#include "search/layered_impl.h"

static int is_coordinate(const int64_t *w, int d)
{
    int nz = 0;
    for (int j = 0; j < d; j++)
        nz += w[j] != 0;
    return nz <= 1;
}

/* The facet directions of Newt(Q) other than the coordinate ones, after the coordinate
 * faces' testers. */
static hf_err_t faces_facets(hf_search_t *s, hf_layered_t *L, const hf_newton_t *N)
{
    int d = s->d;
    long nx = 0, base = L->nfaces;
    for (long f = 0; f < N->nfacets; f++)
        nx += !is_coordinate(N->facet_w + f * d, d);
    if (nx == 0)
        return HF_OK;
    hf_facetest_t *faces = hf_realloc(L->faces, (size_t)(base + nx) * sizeof *faces);
    if (!faces)
        return HF_ERR_NOMEM;
    L->faces = faces;
    memset(L->faces + base, 0, (size_t)nx * sizeof *L->faces);
    L->nfaces = base + nx;
    L->xw = hf_malloc((size_t)nx * d * sizeof *L->xw);
    L->xwidth = hf_malloc((size_t)nx * sizeof *L->xwidth);
    if (!L->xw || !L->xwidth)
        return HF_ERR_NOMEM;
    for (long f = 0; f < N->nfacets; f++) {
        const int64_t *w = N->facet_w + f * d;
        if (is_coordinate(w, d))
            continue;
        long i = L->nx;
        memcpy(L->xw + i * d, w, (size_t)d * sizeof *w);
        /* width of Newt(Q) along w: max minus min over its vertices */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (long v = 0; v < N->nverts; v++) {
            int64_t x = 0;
            for (int j = 0; j < d; j++)
                x += w[j] * N->verts[v * d + j];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        L->xwidth[i] = hi - lo;
        L->nx++;
        HF_TRY(hf_search_limit_tester(&s->t, w, &L->faces[base + i]));
    }
    return HF_OK;
}

hf_err_t hf_layered_faces_init(hf_search_t *s)
{
    hf_layered_t *L = hf_layered(s);
    int d = s->d;
    if (d < 2)
        return HF_OK;
    L->faces = hf_calloc((size_t)2 * (d - 1), sizeof *L->faces);
    if (!L->faces)
        return HF_ERR_NOMEM;
    L->nfaces = 2 * (d - 1);
    for (int j = 0; j < d - 1; j++)
        for (int side = 0; side < 2; side++) {
            int64_t w[HF_D_MAX] = {0};
            w[j] = side ? 1 : -1;
            HF_TRY(hf_search_limit_tester(&s->t, w, &L->faces[2 * j + side]));
        }
    const hf_newton_t *N = NULL;
    HF_TRY(hf_search_newton(s, &N));
    return N ? faces_facets(s, L, N) : HF_OK;
}

void hf_layered_faces_clear(hf_layered_t *L)
{
    for (long i = 0; L->faces && i < L->nfaces; i++)
        hf_exact_destroy(&L->faces[i].exact);
    free(L->faces);
    free(L->xw);
    free(L->xwidth);
    L->faces = NULL;
    L->xw = L->xwidth = NULL;
    L->nfaces = L->nx = 0;
}

hf_err_t hf_layered_face_test(hf_search_t *s, int face, long n, const uint32_t *pts, long m,
                              int *feasible)
{
    hf_layered_t *L = hf_layered(s);
    int d = s->d;
    int64_t mn[HF_D_MAX];
    uint32_t *fidx = L->tmp + 3 * m;
    for (int l = 0; l < d; l++)
        mn[l] = INT64_MAX;
    for (long i = 0; i < n; i++) {
        int64_t *k = L->fkeys + i * d;
        if (s->digits) {
            for (int l = 0; l < d; l++)
                k[l] = s->digits[(size_t)pts[i] * d + l];
        } else {
            long v = pts[i];
            for (int l = d - 1; l >= 0; l--, v /= s->base)
                k[l] = v % s->base;
        }
        for (int l = 0; l < d; l++)
            if (k[l] < mn[l])
                mn[l] = k[l];
    }
    /* translate to canonical position: every digit is >= its minimum, so the index
     * just drops by the minima's index (and lexicographic order is kept) */
    long off = 0;
    for (int l = 0; l < d; l++)
        off += (long)mn[l] * s->pw[l];
    for (long i = 0; i < n; i++) {
        fidx[i] = (uint32_t)(pts[i] - off);
        for (int l = 0; l < d; l++)
            L->fkeys[i * d + l] -= mn[l];
    }
    int found = 0;
    hf_facememo_get(&L->memo, face, n, fidx, &found, feasible);
    if (!found) {
        hf_reason_t reason;
        HF_TRY(hf_exact_check(L->faces[face].exact, n, L->fkeys, feasible, &reason, NULL));
        L->face_exact_tests++;
        HF_TRY(hf_facememo_put(&L->memo, face, n, fidx, *feasible));
    }
    return HF_OK;
}

/* Face rule on the coordinate faces F_{-e_j}(K), F_{+e_j}(K), j < d - 1 (the last
 * coordinate's faces are the bottom and top layers, feasible by construction). Sizes
 * first (cheap), then memoised exact tests. s->keys holds K (indices idx) in canonical
 * position. */
static hf_err_t coordinate_faces(hf_search_t *s, long m, const uint32_t *idx, int *ok)
{
    hf_layered_t *L = hf_layered(s);
    int d = s->d;
    const int64_t *keys = s->keys;
    int64_t top[HF_D_MAX];
    uint32_t *pts = L->tmp + 4 * m;
    *ok = 0;
    for (int j = 0; j < d - 1; j++) {
        long nlo = 0, nhi = 0;
        top[j] = 0;
        for (long i = 0; i < m; i++)
            if (keys[i * d + j] > top[j])
                top[j] = keys[i * d + j];
        for (long i = 0; i < m; i++) {
            nlo += keys[i * d + j] == 0;
            nhi += keys[i * d + j] == top[j];
        }
        /* widths (docs/math.md §8.1), then the faces' sizes against their lower bounds */
        if (top[j] < s->qext[j] || nlo < L->faces[2 * j].lb || nhi < L->faces[2 * j + 1].lb)
            return HF_OK;
    }
    for (int j = 0; j < d - 1; j++) {
        for (int side = 0; side < 2; side++) {
            if (j == 0 && side == 0 && L->face0_done)
                continue;
            int64_t level = side ? top[j] : 0;
            long n = 0;
            for (long i = 0; i < m; i++)
                if (keys[i * d + j] == level)
                    pts[n++] = idx[i];
            int feasible = 0;
            HF_TRY(hf_layered_face_test(s, 2 * j + side, n, pts, m, &feasible));
            if (!feasible)
                return HF_OK;
        }
    }
    *ok = 1;
    return HF_OK;
}

/* The facet directions of Newt(Q) on one candidate (keys in s->keys, canonical, indices
 * idx): width, size against LB, then the memoised exact test of F_w(K). */
static hf_err_t facet_faces(hf_search_t *s, long m, const uint32_t *idx, int *ok)
{
    hf_layered_t *L = hf_layered(s);
    int d = s->d;
    uint32_t *pts = L->tmp + 4 * m;
    long base = 2 * (d - 1);
    *ok = 0;
    for (long f = 0; f < L->nx; f++) {
        const int64_t *w = L->xw + f * d;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (long i = 0; i < m; i++) {
            int64_t x = 0;
            for (int j = 0; j < d; j++)
                x += w[j] * s->keys[i * d + j];
            L->dots[i] = x;
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        if (hi - lo < L->xwidth[f])
            return HF_OK;
        long n = 0;
        for (long i = 0; i < m; i++)
            if (L->dots[i] == hi)
                pts[n++] = idx[i];
        if (n < L->faces[base + f].lb)
            return HF_OK;
    }
    for (long f = 0; f < L->nx; f++) {
        const int64_t *w = L->xw + f * d;
        int64_t hi = INT64_MIN;
        for (long i = 0; i < m; i++) {
            int64_t x = 0;
            for (int j = 0; j < d; j++)
                x += w[j] * s->keys[i * d + j];
            L->dots[i] = x;
            hi = x > hi ? x : hi;
        }
        long n = 0;
        for (long i = 0; i < m; i++)
            if (L->dots[i] == hi)
                pts[n++] = idx[i];
        int feasible = 0;
        HF_TRY(hf_layered_face_test(s, (int)(base + f), n, pts, m, &feasible));
        if (!feasible)
            return HF_OK;
    }
    *ok = 1;
    return HF_OK;
}

hf_err_t hf_layered_filter(hf_search_t *s, long m, const uint32_t *idx, int *ok)
{
    *ok = 1;
    if (s->d < 2) /* one coordinate: its faces are the layers */
        return HF_OK;
    HF_TRY(coordinate_faces(s, m, idx, ok));
    if (*ok && hf_layered(s)->nx > 0)
        HF_TRY(facet_faces(s, m, idx, ok));
    return HF_OK;
}
