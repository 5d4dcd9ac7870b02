/* The shape of every support, from Newt(Q) (MATH.md 7.3, 7.4; docs/search.md, "Shape
 * rules"):
 *  - facet directions: for every facet normal w of Newt(Q), conv(K) = Newt(Q) + P gives
 *    width_w(K) >= width_w(Newt Q), and F_w(K) represents the limit target T_w (face
 *    rule), so |F_w(K)| >= LB(T_w) and F_w(K) must pass the exact test for T_w. The
 *    layered engine checks the coordinate directions on its own; this file adds the
 *    other facet normals;
 *  - the within-span bound: faces of K in the directions of pairwise disjoint faces of
 *    Newt(Q) are pairwise disjoint (7.3) and lie in the same box as K, so
 *    |K| >= sum_i m*(T_{w_i}, S). Where m*(T_w, S) is cheap to know (a small cone search
 *    of the limit target in the same span) it is used; elsewhere LB(T_w).
 * Both only reject or skip what cannot be a support; answers never change. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/bounds.h"
#include "headfuse/newton.h"
#include "search/search_impl.h"

/* Newt(Q) is computed (cddlib) only for denominators up to these sizes: larger ones cost
 * seconds per search, and the rules below are refinements. */
#define SHAPE_Q_TERMS_MAX 1024
#define SHAPE_D_MAX 6
#define SHAPE_FACES_MAX 4096
/* Faces valued by a search of their limit target: dimensions 1..this, at most this many
 * atoms above their vertex count, and only when the cone engine takes them. */
#define SHAPE_VALUE_DIM_MAX 3
#define SHAPE_VALUE_SLACK 16

static int is_coordinate(const int64_t *w, int d)
{
    int nz = 0;
    for (int j = 0; j < d; j++)
        nz += w[j] != 0;
    return nz <= 1;
}

/* An exact tester and LB for the limit target along w. */
static hf_err_t limit_tester(const hf_target_t *t, const int64_t *w, hf_facetest_t *ft)
{
    hf_target_t lim;
    hf_target_init_empty(&lim);
    hf_fraction_t f;
    fmpz_t lb;
    fmpz_init(lb);
    hf_err_t err = hf_bounds_limit_target(t, w, &lim);
    if (err == HF_OK) {
        err = hf_fraction_from_target(&f, &lim);
        if (err == HF_OK)
            err = hf_exact_create(&f, &ft->exact);
        hf_fraction_clear(&f);
    }
    if (err == HF_OK)
        err = hf_bounds_lower(&lim, lb);
    if (err == HF_OK)
        ft->lb = fmpz_fits_si(lb) ? fmpz_get_si(lb) : LONG_MAX;
    hf_target_clear(&lim);
    fmpz_clear(lb);
    return err;
}

static hf_err_t count_found(void *ctx, long m, const int64_t *keys, const hf_head_t *w)
{
    (void)m;
    (void)keys;
    (void)w;
    ++*(long *)ctx;
    return HF_OK;
}

/* The limit target along w without the coordinates in which every head is flat: the
 * same function of the others, and the same m* in the same span (a support of the
 * smaller target embeds with those coordinates 0; conversely the face of a support along
 * such a coordinate represents the target and is flat in it). out (initialised) becomes
 * the empty target (d = 0) when nothing is left: a constant. */
static hf_err_t limit_flat_dropped(const hf_target_t *t, const int64_t *w, hf_target_t *out)
{
    hf_target_t lim;
    hf_target_init_empty(&lim);
    int keep[HF_D_MAX], dk = 0;
    HF_TRY(hf_bounds_limit_target(t, w, &lim));
    for (int j = 0; j < lim.d; j++) {
        int flat = 1;
        for (int k = 0; k < lim.nheads && flat; k++)
            for (long a = 1; a < lim.heads[k].natoms && flat; a++)
                flat = lim.heads[k].keys[a * lim.d + j] == lim.heads[k].keys[j];
        if (!flat)
            keep[dk++] = j;
    }
    hf_err_t err = HF_OK;
    hf_target_clear(out); /* d = 0: a constant, nothing allocated */
    if (dk > 0)
        err = hf_search_target_drop(&lim, keep, dk, out);
    hf_target_clear(&lim);
    return err;
}

/* Values already known, by limit target up to T -> alpha T + beta (same supports). */
typedef struct {
    long n, cap;
    hf_fraction_t *f;
    long *value;
} value_memo_t;

static void value_memo_clear(value_memo_t *vm)
{
    for (long i = 0; i < vm->n; i++)
        hf_fraction_clear(vm->f + i);
    free(vm->f);
    free(vm->value);
}

/* m*(T_w, S) when a small cone search finds it within `cap` atoms; cap + 1 when that
 * search proves there is none up to cap; -1 when it is not cheap (no cone engine). */
static hf_err_t face_value(const hf_search_t *s, const int64_t *w, long cap, value_memo_t *vm,
                           long *value)
{
    hf_target_t lim;
    hf_search_t *sub = NULL;
    hf_fraction_t f;
    int have_f = 0;
    *value = -1;
    hf_target_init_empty(&lim);
    hf_err_t err = limit_flat_dropped(&s->t, w, &lim);
    if (err != HF_OK)
        goto done;
    if (lim.d == 0) {
        *value = 1; /* a constant: one atom */
        return HF_OK;
    }
    err = hf_fraction_from_target(&f, &lim);
    have_f = 1;
    if (err != HF_OK)
        goto done;
    for (long i = 0; i < vm->n; i++)
        if (hf_symmetry_affine_equal(vm->f + i, &f)) {
            *value = vm->value[i];
            goto done;
        }
    long n = hf_search_cone_unknowns(&f, s->span);
    if (n == 0) {
        *value = cap + 1; /* wider than the span: no support of T_w, hence none of T */
        goto done;
    }
    if (n > HF_SEARCH_CONE_AUTO_MAX)
        goto done;
    err = hf_search_create_internal(&lim, s->span, HF_ENGINE_CONE, 0, NULL, &sub);
    if (err != HF_OK)
        goto done;
    if (sub->last > cap)
        sub->last = cap;
    sub->cone_per_size = 1;
    *value = cap + 1;
    for (long m = sub->first; m <= sub->last && err == HF_OK; m++) {
        long nu = 0, found = 0;
        err = hf_search_level(sub, m, &nu);
        for (long u = 0; u < nu && err == HF_OK; u++)
            err = hf_search_run_unit(sub, m, u, count_found, &found, NULL, NULL, NULL);
        if (found) {
            *value = m;
            break;
        }
    }
done:
    if (err == HF_OK && have_f && *value >= 0 && vm->n < 4096) {
        /* remember it (the memo owns the fraction from here) */
        if (vm->n == vm->cap) {
            long c = vm->cap ? 2 * vm->cap : 16;
            /* out of memory here is an error like anywhere else (the fault sweep checks
             * that every failed allocation ends the run), though the memo is optional */
            hf_fraction_t *nf = hf_realloc(vm->f, (size_t)c * sizeof *nf);
            if (nf)
                vm->f = nf;
            long *nv = nf ? hf_realloc(vm->value, (size_t)c * sizeof *nv) : NULL;
            if (nv)
                vm->value = nv;
            if (nf && nv)
                vm->cap = c;
            else
                err = HF_ERR_NOMEM;
        }
        if (err == HF_OK && vm->n < vm->cap) {
            vm->f[vm->n] = f;
            vm->value[vm->n++] = *value;
            have_f = 0;
        }
    }
    if (have_f)
        hf_fraction_clear(&f);
    hf_search_destroy(&sub);
    hf_target_clear(&lim);
    return err;
}

hf_err_t hf_search_shape_init(hf_search_t *s, int span_bound)
{
    int d = s->d;
    hf_err_t err = HF_OK;
    hf_newton_t N;
    long *value = NULL;
    value_memo_t vm = {0, 0, NULL, NULL};
    hf_newton_init(&N);
    if (d > SHAPE_D_MAX || s->frac.Q->length > SHAPE_Q_TERMS_MAX || s->frac.Q->length < 2)
        return HF_OK;
    if (!span_bound && s->engine != HF_ENGINE_LAYERED)
        return HF_OK;
    err = hf_newton_from_fraction(&s->frac, span_bound ? SHAPE_FACES_MAX : 0, &N);
    if (err == HF_ERR_LIMIT) {
        hf_error_clear();
        err = HF_OK;
        goto done;
    }
    if (err != HF_OK)
        goto done;

    /* facet directions other than the coordinate ones, for the layered engine */
    if (s->engine == HF_ENGINE_LAYERED && d > 1) {
        long nx = 0;
        for (long f = 0; f < N.nfacets; f++)
            nx += !is_coordinate(N.facet_w + f * d, d);
        if (nx > 0) {
            long base = 2 * (d - 1);
            hf_facetest_t *faces = hf_realloc(s->faces, (size_t)(base + nx) * sizeof *faces);
            s->xw = hf_malloc((size_t)nx * d * sizeof *s->xw);
            s->xwidth = hf_malloc((size_t)nx * sizeof *s->xwidth);
            if (!faces || !s->xw || !s->xwidth) {
                if (faces)
                    s->faces = faces;
                err = HF_ERR_NOMEM;
                goto done;
            }
            s->faces = faces;
            memset(s->faces + base, 0, (size_t)nx * sizeof *s->faces);
            for (long f = 0; f < N.nfacets && err == HF_OK; f++) {
                const int64_t *w = N.facet_w + f * d;
                if (is_coordinate(w, d))
                    continue;
                long i = s->nx;
                memcpy(s->xw + i * d, w, (size_t)d * sizeof *w);
                /* width of Newt(Q) along w: max minus min over its vertices */
                int64_t lo = INT64_MAX, hi = INT64_MIN;
                for (long v = 0; v < N.nverts; v++) {
                    int64_t x = 0;
                    for (int j = 0; j < d; j++)
                        x += w[j] * N.verts[v * d + j];
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
                s->xwidth[i] = hi - lo;
                err = limit_tester(&s->t, w, &s->faces[base + i]);
                s->nx++;
            }
            if (err != HF_OK)
                goto done;
        }
    }

    /* the within-span bound */
    if (span_bound && N.nfaces > 0) {
        value = hf_malloc((size_t)N.nfaces * sizeof *value);
        if (!value) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        for (long i = 0; i < N.nfaces && err == HF_OK; i++) {
            const hf_newton_face_t *G = N.faces + i;
            value[i] = G->nverts; /* its vertices: always a valid value */
            if (G->dim < 1 || G->dim > SHAPE_VALUE_DIM_MAX)
                continue;
            long v = -1;
            err = face_value(s, G->w, G->nverts + SHAPE_VALUE_SLACK, &vm, &v);
            if (v > value[i])
                value[i] = v;
        }
        long bound = 0;
        if (err == HF_OK)
            err = hf_newton_packing_bound(&N, value, &bound);
        if (err == HF_OK) {
            s->span_lb = bound;
            if (bound > s->first)
                s->first = bound;
        }
    }
done:
    value_memo_clear(&vm);
    free(value);
    hf_newton_clear(&N);
    return err;
}

/* Facet directions of Newt(Q) on one candidate (keys in s->keys, canonical, indices idx):
 * width, size against LB, then the memoised exact test of F_w(K). */
hf_err_t hf_search_shape_check(hf_search_t *s, long m, const uint32_t *idx, int *ok)
{
    int d = s->d;
    uint32_t *pts = s->tmp + 4 * m;
    long base = 2 * (d - 1);
    *ok = 0;
    for (long f = 0; f < s->nx; f++) {
        const int64_t *w = s->xw + f * d;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (long i = 0; i < m; i++) {
            int64_t x = 0;
            for (int j = 0; j < d; j++)
                x += w[j] * s->keys[i * d + j];
            s->dots[i] = x;
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        if (hi - lo < s->xwidth[f])
            return HF_OK;
        long n = 0;
        for (long i = 0; i < m; i++)
            if (s->dots[i] == hi)
                pts[n++] = idx[i];
        if (n < s->faces[base + f].lb)
            return HF_OK;
    }
    for (long f = 0; f < s->nx; f++) {
        const int64_t *w = s->xw + f * d;
        int64_t hi = INT64_MIN;
        for (long i = 0; i < m; i++) {
            int64_t x = 0;
            for (int j = 0; j < d; j++)
                x += w[j] * s->keys[i * d + j];
            s->dots[i] = x;
            hi = x > hi ? x : hi;
        }
        long n = 0;
        for (long i = 0; i < m; i++)
            if (s->dots[i] == hi)
                pts[n++] = idx[i];
        int feasible = 0;
        HF_TRY(hf_search_face_test(s, (int)(base + f), n, pts, m, &feasible));
        if (!feasible)
            return HF_OK;
    }
    *ok = 1;
    return HF_OK;
}
