/* The shape of every support, from Newt(Q) (docs/math.md §8.1, §8.3; docs/search.md, "Shape
 * rules"), for the search object and its engines:
 *  - extents: every support is at least as wide as Newt(Q) along each coordinate (widths
 *    add under Minkowski sums), so a span below an extent holds no support; the box B_R of
 *    the cone engine's unknowns;
 *  - Newt(Q) itself, computed once while a search is made (the layered engine's filter
 *    takes its facet directions, layered_faces.c), and the exact tester of a limit target;
 *  - the within-span bound: faces of K in the directions of pairwise disjoint faces of
 *    Newt(Q) are pairwise disjoint (7.3) and lie in the same box as K, so
 *    |K| >= sum_i m*(T_{w_i}, S). Where m*(T_w, S) is cheap to know (a small cone search
 *    of the limit target in the same span) it is used; elsewhere LB(T_w);
 *  - targets with flat coordinates dropped (the limit targets of the rules above and of
 *    the layered engine's tables).
 * These only reject or skip what cannot be a support; answers never change. */
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

hf_err_t hf_search_limit_tester(const hf_target_t *t, const int64_t *w, hf_facetest_t *ft)
{
    hf_target_t lim;
    hf_target_init_empty(&lim);
    hf_fraction_t f;
    hf_fraction_init(&f);
    fmpz_t lb;
    fmpz_init(lb);
    hf_err_t err = hf_bounds_limit_target(t, w, &lim);
    if (err == HF_OK)
        err = hf_fraction_from_target(&f, &lim);
    if (err == HF_OK)
        err = hf_exact_create(&f, &ft->exact);
    hf_fraction_clear(&f);
    if (err == HF_OK)
        err = hf_bounds_lower(&lim, lb);
    if (err == HF_OK)
        ft->lb = fmpz_fits_si(lb) ? fmpz_get_si(lb) : LONG_MAX;
    hf_target_clear(&lim);
    fmpz_clear(lb);
    return err;
}

static hf_err_t count_found(void *ctx, const hf_found_t *f)
{
    (void)f;
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
 * search proves there is none up to cap; -1 when it is not cheap (no engine decides small
 * targets exactly: ops->small_exact). */
static hf_err_t face_value(const hf_search_t *s, const int64_t *w, long cap, value_memo_t *vm,
                           long *value)
{
    hf_target_t lim;
    hf_search_t *sub = NULL;
    hf_fraction_t f;
    int remember = 0; /* f is a limit target's fraction the memo does not hold yet */
    *value = -1;
    hf_target_init_empty(&lim);
    hf_fraction_init(&f);
    hf_err_t err = limit_flat_dropped(&s->t, w, &lim);
    if (err != HF_OK)
        goto done;
    if (lim.d == 0) {
        *value = 1; /* a constant: one atom */
        goto done;
    }
    err = hf_fraction_from_target(&f, &lim);
    if (err != HF_OK)
        goto done;
    for (long i = 0; i < vm->n; i++)
        if (hf_symmetry_affine_equal(vm->f + i, &f)) {
            *value = vm->value[i];
            goto done;
        }
    remember = 1;
    long n = hf_search_rbox_points(&f, s->span);
    if (n == 0) {
        *value = cap + 1; /* wider than the span: no support of T_w, hence none of T */
        goto done;
    }
    hf_engine_t small;
    if (n > HF_SEARCH_CONE_AUTO_MAX || !hf_engine_small_exact(&small))
        goto done;
    /* a short run of sizes from the first, which usually stops early */
    hf_search_make_t mk = {.last = cap, .no_lookahead = 1};
    err = hf_search_create_internal(&lim, s->span, small, &mk, &sub);
    if (err != HF_OK)
        goto done;
    *value = cap + 1;
    for (long m = hf_search_first_size(sub); m <= hf_search_last_size(sub) && err == HF_OK; m++) {
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
    if (err == HF_OK && remember && *value >= 0 && vm->n < 4096) {
        /* remember it (the memo owns the fraction from here); out of memory here is an
         * error like anywhere else (the fault sweep checks that every failed allocation
         * ends the run), though the memo is optional */
        err = HF_GROW2(&vm->f, &vm->value, &vm->cap, vm->n + 1);
        if (err == HF_OK) {
            vm->f[vm->n] = f;
            vm->value[vm->n++] = *value;
            hf_fraction_init(&f); /* moved into the memo */
        }
    }
    hf_fraction_clear(&f);
    hf_search_destroy(&sub);
    hf_target_clear(&lim);
    return err;
}

/* Newt(Q) of a search while it is made (hf_search_newton). */
struct hf_newton_cache_s {
    int done; /* computed, or found out of reach */
    int have; /* N holds Newt(Q) */
    hf_newton_t N;
};

hf_err_t hf_search_newton(hf_search_t *s, const hf_newton_t **out)
{
    *out = NULL;
    if (!s->newton) {
        if (!(s->newton = hf_calloc(1, sizeof *s->newton)))
            return HF_ERR_NOMEM;
        hf_newton_init(&s->newton->N);
    }
    struct hf_newton_cache_s *nc = s->newton;
    if (!nc->done) {
        nc->done = 1;
        if (s->d > SHAPE_D_MAX || s->frac.Q->length > SHAPE_Q_TERMS_MAX || s->frac.Q->length < 2)
            return HF_OK;
        /* the faces only for the within-span bound of a top-level search */
        hf_err_t err = hf_newton_from_fraction(&s->frac, s->top ? SHAPE_FACES_MAX : 0, &nc->N);
        if (err == HF_ERR_LIMIT) {
            hf_error_clear();
            return HF_OK;
        }
        HF_TRY(err);
        nc->have = 1;
    }
    if (nc->have)
        *out = &nc->N;
    return HF_OK;
}

void hf_search_newton_drop(hf_search_t *s)
{
    if (!s->newton)
        return;
    hf_newton_clear(&s->newton->N);
    free(s->newton);
    s->newton = NULL;
}

hf_err_t hf_search_span_bound(hf_search_t *s)
{
    hf_err_t err = HF_OK;
    const hf_newton_t *N = NULL;
    long *value = NULL;
    value_memo_t vm = {0, 0, NULL, NULL};
    HF_TRY(hf_search_newton(s, &N));
    if (!N || N->nfaces == 0)
        return HF_OK;
    value = hf_malloc((size_t)N->nfaces * sizeof *value);
    if (!value)
        return HF_ERR_NOMEM;
    for (long i = 0; i < N->nfaces && err == HF_OK; i++) {
        const hf_newton_face_t *G = N->faces + i;
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
        err = hf_newton_packing_bound(N, value, &bound);
    if (err == HF_OK) {
        s->span_lb = bound;
        if (bound > s->first)
            s->first = bound;
    }
    value_memo_clear(&vm);
    free(value);
    return err;
}

void hf_search_extents(const hf_fraction_t *f, int64_t *ext)
{
    slong exp[HF_D_MAX];
    int64_t lo[HF_D_MAX], hi[HF_D_MAX];
    int d = f->d;
    for (int a = 0; a < d; a++) {
        lo[a] = INT64_MAX;
        hi[a] = 0;
    }
    for (slong t = 0; t < f->Q->length; t++) {
        fmpz_mpoly_get_term_exp_si(exp, f->Q, t, f->ctx);
        for (int a = 0; a < d; a++) {
            lo[a] = exp[a] < lo[a] ? exp[a] : lo[a];
            hi[a] = exp[a] > hi[a] ? exp[a] : hi[a];
        }
    }
    for (int a = 0; a < d; a++)
        ext[a] = f->Q->length ? hi[a] - lo[a] : 0;
}

long hf_search_rbox_points(const hf_fraction_t *f, int span)
{
    int64_t e[HF_D_MAX];
    hf_search_extents(f, e);
    return hf_search_rbox_size(e, f->d, span);
}

long hf_search_rbox_size(const int64_t *e, int d, int span)
{
    int64_t w[HF_D_MAX];
    for (int a = 0; a < d; a++)
        w[a] = span - e[a] + 1;
    long n = hf_box_points(d, w, LONG_MAX);
    return n < 0 ? LONG_MAX : n;
}

hf_err_t hf_search_target_drop(const hf_target_t *t, const int *keep, int dkeep, hf_target_t *out)
{
    hf_err_t err = HF_OK;
    int d = t->d, dv = t->dv;
    char kept[HF_D_MAX] = {0};
    hf_head_t h;
    hf_target_t tmp; /* built aside: out keeps its value on failure */
    for (int j = 0; j < dkeep; j++)
        kept[keep[j]] = 1;
    hf_head_init(&h, dkeep, dv);
    HF_CHECK(err, hf_target_init(&tmp, t->name, dkeep, dv), fail);
    for (int k = 0; k < t->nheads; k++) {
        const hf_head_t *src = &t->heads[k];
        HF_CHECK(err, hf_head_resize(&h, src->natoms), fail);
        for (long a = 0; a < src->natoms; a++) {
            for (int j = 0; j < d; j++)
                if (!kept[j] && src->keys[a * d + j] != src->keys[j]) {
                    err = hf_error(HF_ERR_INTERNAL, "search: head %d is not flat in coordinate %d",
                                   k, j);
                    goto fail;
                }
            for (int j = 0; j < dkeep; j++)
                h.keys[a * dkeep + j] = src->keys[a * d + keep[j]];
            fmpq_set(h.weights + a, src->weights + a);
            for (int j = 0; j < dv; j++)
                fmpq_set(h.values + a * dv + j, src->values + a * dv + j);
        }
        HF_CHECK(err, hf_target_add_head(&tmp, &h), fail);
    }
    hf_target_swap(out, &tmp);
fail:
    hf_head_clear(&h);
    hf_target_clear(&tmp);
    return err;
}
