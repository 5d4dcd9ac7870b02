/* The zone count: a second lower bound on L(Z + P') over every P' that is not a point
 * (docs/math.md §11.9 to docs/math.md §11.14; faces3d.h).
 *
 * Lemma 11.10 (the Euler count): with D the points where the walls W of P''s normal fan
 * meet the 1-skeleton of Z's fan (every facet normal of Z on W, and the points of an edge
 * arc where W crosses it or leaves it),
 *   L(Z + P') - base >= sum_{p in D} (1 - c(p) - nu(p)/2) + f0(P') - 2,
 * c(p) the inner keys of the exact facet with normal p (0 for other points), nu(p) the
 * pieces of W at p running along edge arcs of edges that gain nothing, f0 the vertices
 * of P'. Lemma 11.11: on every zone circle (an edge direction u whose great circle u^perp
 * lies in the 1-skeleton) D has at least 3 points when P' is three-dimensional, at least
 * k when P' is a k-gon whose normal is off the circle, 2 when it is a segment. So the sum
 * is at least a small covering problem over the facet normals (relax()). Segments along
 * an edge direction, where the count depends on the length, are counted exactly on
 * Z + [0, u] and Z + [0, 2u] (longer ones count as the latter), and a unit segment with
 * a one-signed Q has exactly |supp Q u (supp Q + u)| keys (Lemma 11.12). All integers;
 * the covering problem is solved exactly by a depth-first search (a node cap falls back
 * to a weaker, still valid value). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/faces3d.h"
#include "bounds/faces3d_impl.h"

/* ceil(v / 2): the counts are integers. */
static long half_up(long v)
{
    return v >= 0 ? v / 2 + v % 2 : -((-v) / 2);
}

/* Nodes of one covering search before it settles for its root bound. */
#define RELAX_NODES (1L << 22)

typedef struct {
    long nf;           /* facets of Z */
    const int64_t **v; /* their outer normals (primitive) */
    long *anti;        /* the facet with the opposite normal, or -1 */
    long *a2;          /* twice the least cost of the normal as a point of D when W may run
                        * along edge arcs: 2 - 2c - (edges of the facet that gain nothing) */
    long *s2;          /* twice its cost on a segment's wall (no arc is run along): 2 - 2c */
    long nz;           /* zone circles */
    int64_t (*u)[3];   /* their directions */
    char *gaining;     /* every edge along the zone gains */
    char *on;          /* nf x nz: the facet normal lies on the circle */
    long ndirs;        /* edge directions (zones first) */
    int64_t (*dir)[3];
} zones_t;

static void zones_clear(zones_t *S)
{
    free(S->v);
    free(S->anti);
    free(S->a2);
    free(S->s2);
    free(S->u);
    free(S->gaining);
    free(S->on);
    free(S->dir);
    memset(S, 0, sizeof *S);
}

/* u divided by its content, first nonzero coordinate positive (a line's direction). */
static void primitive_line(int64_t *u)
{
    int64_t g = hf_gcd64(hf_gcd64(u[0], u[1]), u[2]);
    if (g == 0)
        return;
    int neg = u[0] < 0 || (u[0] == 0 && (u[1] < 0 || (u[1] == 0 && u[2] < 0)));
    for (int j = 0; j < 3; j++)
        u[j] = (neg ? -u[j] : u[j]) / g;
}

static int parallel(const int64_t *a, const int64_t *b)
{
    return (hf_faces3d_i128)a[1] * b[2] == (hf_faces3d_i128)a[2] * b[1] &&
           (hf_faces3d_i128)a[2] * b[0] == (hf_faces3d_i128)a[0] * b[2] &&
           (hf_faces3d_i128)a[0] * b[1] == (hf_faces3d_i128)a[1] * b[0];
}

static int vertex_in(const hf_newton_face_t *F, long v)
{
    for (long i = 0; i < F->nverts; i++)
        if (F->verts[i] == v)
            return 1;
    return 0;
}

/* The edge directions of Z, the facet normals with their costs, and the zone circles. */
static hf_err_t zones_build(const hf_faces3d_t *A, zones_t *S)
{
    const hf_newton_t *Z = &A->Z;
    long nf = A->nfacets, ne = A->nedges;
    S->nf = nf;
    S->v = hf_calloc((size_t)nf + 1, sizeof *S->v);
    S->anti = hf_calloc((size_t)nf + 1, sizeof *S->anti);
    S->a2 = hf_calloc((size_t)nf + 1, sizeof *S->a2);
    S->s2 = hf_calloc((size_t)nf + 1, sizeof *S->s2);
    S->dir = hf_calloc((size_t)ne + 1, sizeof *S->dir);
    int64_t(*raw)[3] = hf_calloc((size_t)ne + 1, sizeof *raw);
    signed char *sg = hf_calloc((size_t)Z->nverts + 1, 2);
    if (!S->v || !S->anti || !S->a2 || !S->s2 || !S->dir || !raw || !sg) {
        free(raw);
        free(sg);
        return HF_ERR_NOMEM;
    }
    for (long e = 0; e < ne; e++) {
        const hf_faces3d_edge_t *ed = A->edges + e;
        for (int j = 0; j < 3; j++)
            raw[e][j] = Z->verts[3 * ed->v1 + j] - Z->verts[3 * ed->v0 + j];
        primitive_line(raw[e]);
    }
    for (long k = 0; k < nf; k++) {
        const hf_faces3d_facet_t *g = A->facets + k;
        const hf_newton_face_t *F = Z->faces + g->face;
        long c = g->exact && g->inner > 0 ? g->inner : 0, ng = 0;
        S->v[k] = F->w;
        for (long e = 0; e < ne; e++)
            ng += A->edges[e].gain == 0 && vertex_in(F, A->edges[e].v0) &&
                  vertex_in(F, A->edges[e].v1);
        S->a2[k] = 2 - 2 * c - ng;
        S->s2[k] = 2 - 2 * c;
        S->anti[k] = -1;
    }
    for (long k = 0; k < nf; k++)
        for (long l = 0; l < nf; l++)
            if (S->v[l][0] == -S->v[k][0] && S->v[l][1] == -S->v[k][1] && S->v[l][2] == -S->v[k][2])
                S->anti[k] = l;
    /* distinct edge directions; a zone when no vertex has facet normals strictly on both
     * sides of u^perp (then no open vertex cone meets u^perp: docs/math.md §11.11) */
    long nd = 0;
    char *zone = hf_calloc((size_t)ne + 1, 1);
    if (!zone) {
        free(raw);
        free(sg);
        return HF_ERR_NOMEM;
    }
    for (long e = 0; e < ne; e++) {
        long i = 0;
        while (i < nd && memcmp(S->dir[i], raw[e], sizeof raw[e]) != 0)
            i++;
        if (i < nd)
            continue;
        memcpy(S->dir[nd], raw[e], sizeof raw[e]);
        memset(sg, 0, (size_t)Z->nverts * 2);
        int ok = 1;
        for (long k = 0; k < nf && ok; k++) {
            const hf_newton_face_t *F = Z->faces + A->facets[k].face;
            hf_faces3d_i128 s = hf_faces3d_dot(S->v[k], raw[e]);
            if (s == 0)
                continue;
            for (long m = 0; m < F->nverts && ok; m++) {
                sg[2 * F->verts[m] + (s > 0)] = 1;
                ok = !(sg[2 * F->verts[m]] && sg[2 * F->verts[m] + 1]);
            }
        }
        zone[nd++] = (char)ok;
    }
    free(sg);
    S->ndirs = nd;
    for (long i = 0; i < nd; i++)
        S->nz += zone[i];
    S->u = hf_calloc((size_t)S->nz + 1, sizeof *S->u);
    S->gaining = hf_calloc((size_t)S->nz + 1, 1);
    S->on = hf_calloc((size_t)(nf * S->nz) + 1, 1);
    if (!S->u || !S->gaining || !S->on) {
        free(raw);
        free(zone);
        return HF_ERR_NOMEM;
    }
    long z = 0;
    for (long i = 0; i < nd; i++) {
        if (!zone[i])
            continue;
        memcpy(S->u[z], S->dir[i], sizeof S->u[z]);
        S->gaining[z] = 1;
        for (long e = 0; e < ne; e++)
            if (memcmp(raw[e], S->u[z], sizeof raw[e]) == 0 && A->edges[e].gain != 1)
                S->gaining[z] = 0;
        for (long k = 0; k < nf; k++)
            S->on[k * S->nz + z] = hf_faces3d_dot(S->v[k], S->u[z]) == 0;
        z++;
    }
    free(raw);
    free(zone);
    return HF_OK;
}

/* ---------------------------------------------------------------- the covering problem */

typedef struct {
    long nf, nz;
    const char *on, *use; /* nf x nz incidence; the zones that constrain */
    const long *cost;     /* per facet normal (doubled) */
    const long *t, *y0;
    char *in;  /* current X */
    long *cnt; /* |X n C| per zone */
    long *cand, ncand;
    long best, nodes;
} cover_t;

/* sum_{F in X} cost(F) + 2 sum_{C used} max(y0_C, t_C - |X n C|). */
static long cover_value(const cover_t *R)
{
    long v = 0;
    for (long k = 0; k < R->nf; k++)
        v += R->in[k] ? R->cost[k] : 0;
    for (long z = 0; z < R->nz; z++) {
        if (!R->use[z])
            continue;
        long need = R->t[z] - R->cnt[z];
        v += 2 * (need > R->y0[z] ? need : R->y0[z]);
    }
    return v;
}

/* The largest decrease the candidates from i on can still bring: each lowers the zone
 * terms by at most 2 per used zone through it that still needs points, and all of them
 * together by at most the zones' excess. */
static long cover_slack(const cover_t *R, long i)
{
    long s = 0, excess = 0;
    for (long z = 0; z < R->nz; z++) {
        long need = R->t[z] - R->cnt[z];
        if (R->use[z] && need > R->y0[z])
            excess += 2 * (need - R->y0[z]);
    }
    for (long j = i; j < R->ncand; j++) {
        long k = R->cand[j], m = 0;
        for (long z = 0; z < R->nz; z++)
            m += R->use[z] && R->on[k * R->nz + z] && R->t[z] - R->cnt[z] > R->y0[z];
        s += 2 * m > R->cost[k] ? 2 * m - R->cost[k] : 0;
    }
    return s < excess ? s : excess;
}

static void cover_dfs(cover_t *R, long i)
{
    long v = cover_value(R);
    if (v < R->best)
        R->best = v;
    if (i >= R->ncand || ++R->nodes > RELAX_NODES || v - cover_slack(R, i) >= R->best)
        return;
    long k = R->cand[i];
    R->in[k] = 1;
    for (long z = 0; z < R->nz; z++)
        R->cnt[z] += R->on[k * R->nz + z];
    cover_dfs(R, i + 1);
    R->in[k] = 0;
    for (long z = 0; z < R->nz; z++)
        R->cnt[z] -= R->on[k * R->nz + z];
    cover_dfs(R, i + 1);
}

hf_err_t hf_faces3d_cover_min(long nf, long nz, const char *on, const char *use, const long *cost,
                              const char *forced, const long *t, const long *y0, long *out,
                              int *exact)
{
    cover_t R = {nf, nz, on, use, cost, t, y0, NULL, NULL, NULL, 0, LONG_MAX, 0};
    R.in = hf_calloc((size_t)nf + 1, 1);
    R.cnt = hf_calloc((size_t)nz + 1, sizeof *R.cnt);
    R.cand = hf_calloc((size_t)nf + 1, sizeof *R.cand);
    if (!R.in || !R.cnt || !R.cand) {
        free(R.in);
        free(R.cnt);
        free(R.cand);
        return HF_ERR_NOMEM;
    }
    for (long k = 0; k < nf; k++) {
        int on_used = 0;
        for (long z = 0; z < nz; z++)
            on_used |= use[z] && on[k * nz + z];
        if ((forced && forced[k]) || cost[k] <= 0) { /* never worse to take */
            R.in[k] = 1;
            for (long z = 0; z < nz; z++)
                R.cnt[z] += on[k * nz + z];
        } else if (on_used) { /* off every used zone it only costs */
            R.cand[R.ncand++] = k;
        }
    }
    long root = cover_value(&R), slack = cover_slack(&R, 0);
    cover_dfs(&R, 0);
    *exact = R.nodes <= RELAX_NODES;
    *out = *exact ? R.best : root - slack;
    free(R.in);
    free(R.cnt);
    free(R.cand);
    return HF_OK;
}

/* The covering problem over Z's facet normals with the gaining zones as constraints. */
static hf_err_t relax(const zones_t *S, const long *cost, const char *forced, const long *t,
                      const long *y0, long *out)
{
    int exact;
    return hf_faces3d_cover_min(S->nf, S->nz, S->on, S->gaining, cost, forced, t, y0, out, &exact);
}

/* ---------------------------------------------------------------- the kinds of P' */

typedef struct {
    long value; /* doubled lower bound on L - base */
    int kind;
    int64_t u[3];
    long by_kind[5]; /* doubled, per kind (HF_FACES3D_WEAK_SEGMENT .. _POLYTOPE) */
} weakest_t;

static void consider(weakest_t *w, long value, int kind, const int64_t *u)
{
    if (value < w->by_kind[kind])
        w->by_kind[kind] = value;
    if (value >= w->value)
        return;
    w->value = value;
    w->kind = kind;
    if (u)
        memcpy(w->u, u, sizeof w->u);
    else
        memset(w->u, 0, sizeof w->u);
}

/* Polygons and three-dimensional P' (Lemmas 11.10, 11.11): t_C = 3 on the gaining zones
 * off the polygon's normal n (a k-gon gives k >= 3 points there, and k - 2 grows with k as
 * fast as the count), 2 on those through n, where n and -n are points of D. */
static hf_err_t polygons_and_polytopes(const zones_t *S, weakest_t *w)
{
    long nz = S->nz, v;
    long *t = hf_calloc((size_t)nz + 1, sizeof *t), *y0 = hf_calloc((size_t)nz + 1, sizeof *y0);
    char *forced = hf_calloc((size_t)S->nf + 1, 1);
    hf_err_t err = HF_OK;
    if (!t || !y0 || !forced) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long z = 0; z < nz; z++)
        t[z] = hf_knob(HF_KNOB_FACES3D_ZONE_THRESHOLD, FACES3D_ZONE_THRESHOLD);
    HF_CHECK(err, relax(S, S->a2, NULL, t, y0, &v), done);
    consider(w, v + 4, HF_FACES3D_WEAK_POLYTOPE, NULL); /* f0 - 2 >= 2 */
    consider(w, v + 2, HF_FACES3D_WEAK_POLYGON, NULL);  /* normal off every zone */
    int symmetric = 1; /* every facet normal's opposite is one: then so is -n's only if n's */
    for (long k = 0; k < S->nf; k++)
        symmetric &= S->anti[k] >= 0;
    for (long z = 0; z < nz; z++) { /* normal inside a gaining edge arc of zone z */
        if (!S->gaining[z])
            continue;
        t[z] = 2;
        y0[z] = symmetric ? 2 : 1; /* n, and -n unless it is a facet normal */
        HF_CHECK(err, relax(S, S->a2, NULL, t, y0, &v), done);
        consider(w, v + 2, HF_FACES3D_WEAK_POLYGON, NULL);
        t[z] = hf_knob(HF_KNOB_FACES3D_ZONE_THRESHOLD, FACES3D_ZONE_THRESHOLD);
        y0[z] = 0;
    }
    for (long k = 0; k < S->nf; k++) { /* normal a facet normal of Z */
        long one = -1, ons = 0;
        memset(forced, 0, (size_t)S->nf);
        forced[k] = 1;
        if (S->anti[k] >= 0)
            forced[S->anti[k]] = 1;
        for (long z = 0; z < nz; z++) {
            int on = S->on[k * nz + z];
            t[z] = on ? 2 : hf_knob(HF_KNOB_FACES3D_ZONE_THRESHOLD, FACES3D_ZONE_THRESHOLD);
            y0[z] = 0;
            if (on && S->gaining[z]) {
                one = z;
                ons++;
            }
        }
        if (S->anti[k] < 0 && ons == 1)
            y0[one] = 1; /* -n: inside a gaining edge arc of that zone */
        HF_CHECK(err, relax(S, S->a2, forced, t, y0, &v), done);
        consider(w, v + 2, HF_FACES3D_WEAK_POLYGON, S->v[k]);
    }
done:
    free(t);
    free(y0);
    free(forced);
    return err;
}

/* Segments not along an edge direction (Lemma 11.10 with f0 = 2, no arc run along): the
 * wall is a great circle n^perp meeting every zone in two antipodal points. */
static void other_segments(const zones_t *S, weakest_t *w)
{
    long nf = S->nf, nz = S->nz;
    consider(w, 4 * nz, HF_FACES3D_WEAK_SEGMENT, NULL); /* through no facet normal */
    for (long k = 0; k < nf; k++) {                     /* through one antipodal pair only */
        long v = S->s2[k] + (S->anti[k] >= 0 ? S->s2[S->anti[k]] : 0);
        for (long z = 0; z < nz; z++)
            v += S->on[k * nz + z] ? 0 : 4;
        consider(w, v, HF_FACES3D_WEAK_SEGMENT, NULL);
    }
    for (long k = 0; k < nf; k++) /* through two facet normals that are not antipodal */
        for (long l = k + 1; l < nf; l++) {
            const int64_t *a = S->v[k], *b = S->v[l];
            int64_t n[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                            a[0] * b[1] - a[1] * b[0]};
            if (!n[0] && !n[1] && !n[2])
                continue;
            primitive_line(n);
            int along = 0;
            for (long i = 0; i < S->ndirs && !along; i++)
                along = parallel(n, S->dir[i]);
            if (along)
                continue; /* the wall holds an edge arc: counted exactly */
            long v = 0;
            for (long h = 0; h < nf; h++)
                v += hf_faces3d_dot(S->v[h], n) == 0 ? S->s2[h] : 0;
            for (long z = 0; z < nz; z++) {
                int meets = 0; /* the crossing with zone z is a facet normal */
                for (long h = 0; h < nf && !meets; h++)
                    meets = S->on[h * nz + z] && hf_faces3d_dot(S->v[h], n) == 0;
                v += meets ? 0 : 4;
            }
            consider(w, v, HF_FACES3D_WEAK_SEGMENT, n);
        }
}

/* |S u (S + u)| for S = supp Q (Lemma 11.12). */
static long union_with_shift(const hf_faces3d_t *A, const int64_t *u)
{
    long n = A->supp_q;
    for (long i = 0; i < A->supp_q; i++) {
        int64_t x[3] = {A->q_exps[3 * i] + u[0], A->q_exps[3 * i + 1] + u[1],
                        A->q_exps[3 * i + 2] + u[2]};
        n += bsearch(x, A->q_exps, (size_t)A->supp_q, 3 * sizeof *x, hf_faces3d_exp_cmp) == NULL;
    }
    return n;
}

/* Segments along an edge direction u: L on Z + [0, u] and Z + [0, 2u], the latter for
 * every length >= 2 (the edges along u are then at least 3 long, where the count stops
 * growing); a unit segment with a one-signed Q has exactly |supp Q u (supp Q + u)| keys.
 * When Lemma 11.10 on the wall u^perp alone (base plus the costs of the facet normals on
 * it) already reaches `enough`, that value stands for the direction and no hull is built. */
static hf_err_t edge_segments(const hf_faces3d_t *A, const zones_t *S, long enough, long *bound,
                              int64_t *at)
{
    *bound = LONG_MAX;
    for (long i = 0; i < S->ndirs; i++) {
        const int64_t *u = S->dir[i];
        long cheap = 0;
        for (long k = 0; k < S->nf; k++)
            cheap += hf_faces3d_dot(S->v[k], u) == 0 ? S->a2[k] : 0;
        cheap = A->base + half_up(cheap);
        if (cheap >= enough) {
            if (cheap < *bound) {
                *bound = cheap;
                memcpy(at, u, 3 * sizeof *u);
            }
            continue;
        }
        int64_t p[9] = {0, 0, 0, u[0], u[1], u[2], 2 * u[0], 2 * u[1], 2 * u[2]};
        hf_faces3d_count_t one, two;
        HF_TRY(hf_faces3d_count_sum(A, p, 2, &one));
        HF_TRY(hf_faces3d_count_sum(A, p, 3, &two));
        long unit = one.total;
        if (A->q_one_sign && A->q_exps) {
            long k = union_with_shift(A, u);
            unit = k > unit ? k : unit;
        }
        long v = unit < two.total ? unit : two.total;
        if (v < *bound) {
            *bound = v;
            memcpy(at, u, 3 * sizeof *u);
        }
    }
    return HF_OK;
}

hf_err_t hf_faces3d_zone_count(hf_faces3d_t *A)
{
    zones_t S;
    memset(&S, 0, sizeof S);
    hf_err_t err;
    weakest_t w = {LONG_MAX, HF_FACES3D_WEAK_POLYTOPE, {0, 0, 0}, {0, 0, 0, 0, 0}};
    for (int k = 0; k < 5; k++)
        w.by_kind[k] = LONG_MAX;
    int64_t at[3] = {0, 0, 0};
    HF_CHECK(err, zones_build(A, &S), done);
    A->nzones = S.nz;
    A->nzones_gaining = 0;
    for (long z = 0; z < S.nz; z++)
        A->nzones_gaining += S.gaining[z];
    HF_CHECK(err, polygons_and_polytopes(&S, &w), done);
    other_segments(&S, &w);
    A->zone_delta = half_up(w.value);
    A->zone_segment = half_up(w.by_kind[HF_FACES3D_WEAK_SEGMENT]);
    A->zone_polygon = half_up(w.by_kind[HF_FACES3D_WEAK_POLYGON]);
    A->zone_polytope = half_up(w.by_kind[HF_FACES3D_WEAK_POLYTOPE]);
    A->seg_bound = LONG_MAX;
    if (!hf_knob(HF_KNOB_FACES3D_SKIP_EDGE_SEGMENTS, 0))
        HF_CHECK(err, edge_segments(A, &S, A->base + A->zone_delta, &A->seg_bound, at), done);
    if (A->seg_bound < A->base + A->zone_delta) {
        A->weak_kind = HF_FACES3D_WEAK_EDGE_SEGMENT;
        memcpy(A->weak_u, at, sizeof at);
    } else {
        A->weak_kind = w.kind;
        memcpy(A->weak_u, w.u, sizeof w.u);
    }
done:
    zones_clear(&S);
    return err;
}
