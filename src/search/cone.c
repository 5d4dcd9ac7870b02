/* The cone engine (engine cone; MATH.md 7.7; docs/search.md, "The cone engine").
 *
 * A support K in canonical position inside the span box is supp(Q R) for an R on the
 * small box B_R = prod_j [0, S - e_j] (e = Newt(Q)'s extents, Q shifted to minimum 0),
 * with Q R >= 0 coefficientwise. So the candidates are the supports of points of the
 * polyhedral cone C = {R : (Q R)_k >= 0 for every box point k}. On the relative interior
 * of a face F of C the support is constant: K_F, the box points whose row is not zero
 * on F. Because every point of C has a nonnegative Q R, the support of a sum of rays is
 * the union of their supports, and the face spanned by a set of extreme rays has the
 * union of their supports as K_F. Hence:
 *   the candidate supports are exactly the distinct unions of supports of extreme rays,
 * one per face, and a face with |K_F| <= M has only rays of support <= M.
 *
 * Rays: a double description (incremental, exact integers) that drops every ray whose
 * support on the rows processed so far exceeds M = the largest size searched. This is
 * complete for the rays of support <= M: such a ray is a positive combination of rays
 * of each intermediate cone whose partial supports are contained in its own, and every
 * step that creates it combines two rays that were kept (docs/search.md has the proof).
 * Adjacency is the usual combinatorial test (no other ray's zero set contains the pair's
 * common zero set); it stays exact with dropped rays, because a ray that could block a
 * pair has its support inside the pair's union, which is within the bound.
 *
 * Faces: closed sets of rays (closure = every ray whose support lies in the union) are
 * enumerated by Close-by-One (each closed set once, in a tree where children are larger)
 * with the size bound m; a unit is the subtree of one root ray. Every candidate of size m
 * in canonical position goes to the exact test, as in the other engines. */
#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>
#include <flint/nmod_mat.h>
#include <flint/ulong_extras.h>

#include "search/cone_impl.h"

/* Dense row storage limit (entries of the n x rows matrix). */
#define CONE_CELLS_MAX (INT64_C(1) << 26)

/* The engine's state (s->data). */
typedef struct {
    hf_cone_t *cone; /* rays and hyperplanes, made by the preparation */
    int per_size;    /* the rays are computed for each size's own bound (no look-ahead) */
} cone_state_t;

static cone_state_t *cone_state(const hf_search_t *s)
{
    return s->data;
}

/* ------------------------------------------------------------------ rows */

static uint64_t row_hash(const fmpz *a, long n)
{
    uint64_t h = HF_HASH_INIT;
    for (long i = 0; i < n; i++)
        h = hf_hash_word(h, fmpz_fdiv_ui(a + i, UINT64_C(0xFFFFFFFFFFFFFFC5)));
    return hf_hash_mix(h);
}

/* A row looked up among the hyperplanes found so far (rep[h]: hyperplane h's first row).
 * The rows are FLINT integers of any size, compared in full, so the hyperplanes are core's
 * hash index over them rather than its integer-vector set (64-bit entries). */
typedef struct {
    const fmpz *rows;
    const long *rep;
    long n;
    const fmpz *row;
} row_key_t;

static int row_eq(const void *ctx, long h)
{
    const row_key_t *k = ctx;
    return _fmpz_vec_equal(k->rows + k->rep[h] * k->n, k->row, k->n);
}

/* Merge the primitive rows (numbered in box-point order, rowpt[i] the box point of row i)
 * into hyperplanes: equal rows are one hyperplane whose points are theirs. Fills c->A,
 * c->weight, c->pstart, c->pts. */
static hf_err_t cone_merge(hf_cone_t *c, const fmpz *rows, long nrows, const long *rowpt)
{
    long n = c->n, nh = 0;
    hf_err_t err = HF_OK;
    long *hyp = hf_malloc((size_t)(nrows ? nrows : 1) * sizeof *hyp); /* row -> hyperplane */
    long *rep = hf_malloc((size_t)(nrows ? nrows : 1) * sizeof *rep); /* hyperplane -> row */
    long *fill = NULL;
    hf_index_t index; /* hash of a row -> its hyperplane (core's hash index) */
    hf_index_init(&index);
    if (!hyp || !rep) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < nrows; i++) {
        row_key_t key = {rows, rep, n, rows + i * n};
        uint64_t h = row_hash(rows + i * n, n);
        long j = hf_index_find(&index, h, row_eq, &key);
        if (j >= 0) {
            hyp[i] = j;
            continue;
        }
        HF_CHECK(err, hf_index_add(&index, h, nh), done);
        hyp[i] = nh;
        rep[nh++] = i;
    }
    c->nh = nh;
    c->words = (nh + 63) / 64;
    c->A = _fmpz_vec_init(nh * n);
    c->weight = hf_calloc((size_t)(nh ? nh : 1), sizeof *c->weight);
    c->pstart = hf_calloc((size_t)nh + 1, sizeof *c->pstart);
    c->pts = hf_malloc((size_t)(nrows ? nrows : 1) * sizeof *c->pts);
    fill = hf_calloc((size_t)(nh ? nh : 1), sizeof *fill);
    if (!c->weight || !c->pstart || !c->pts || !fill) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long h = 0; h < nh; h++)
        _fmpz_vec_set(c->A + h * n, rows + rep[h] * n, n);
    for (long i = 0; i < nrows; i++)
        c->weight[hyp[i]]++;
    for (long h = 0; h < nh; h++)
        c->pstart[h + 1] = c->pstart[h] + c->weight[h];
    for (long i = 0; i < nrows; i++) /* box-point order: each list increasing */
        c->pts[c->pstart[hyp[i]] + fill[hyp[i]]++] = (uint32_t)rowpt[i];
done:
    free(fill);
    hf_index_clear(&index);
    free(rep);
    free(hyp);
    return err;
}

/* The box point of unknown r (R's exponent rv, in B_R = prod_a [0, brad[a])) as an index
 * of the span box; Q's term t then lands on index base + off[t]. */
static long box_base(const hf_search_t *s, const int64_t *brad, long r, int64_t *rv)
{
    long rest = r, base = 0;
    for (int a = s->d - 1; a >= 0; a--) {
        rv[a] = rest % brad[a];
        rest /= brad[a];
    }
    for (int a = 0; a < s->d; a++)
        base += (long)rv[a] * s->pw[a];
    return base;
}

/* Rows of C: (Q R)_k for every box point k reached by Q + B_R, made primitive, and merged
 * into hyperplanes when equal. Returns *empty = 1 when some extent exceeds the span. */
static hf_err_t cone_rows(hf_search_t *s, hf_cone_t *c, int *empty)
{
    int d = s->d;
    const hf_fraction_t *f = &s->frac;
    slong exp[HF_D_MAX];
    int64_t qmin[HF_D_MAX], brad[HF_D_MAX], rv[HF_D_MAX];
    hf_err_t err = HF_OK;
    long nq = f->Q->length, nrows = 0;
    fmpz *rows = NULL;
    long *rowof = NULL, *rowpt = NULL, *off = NULL;
    *empty = 0;
    hf_search_extents(f, c->info.extent);
    long n = 1;
    for (int a = 0; a < d; a++) {
        if (c->info.extent[a] > s->span) {
            *empty = 1;
            return HF_OK;
        }
        brad[a] = s->span - c->info.extent[a] + 1;
        n *= brad[a];
    }
    c->n = n;
    c->info.unknowns = n;
    if ((int64_t)n * s->npts > CONE_CELLS_MAX)
        return hf_error(HF_ERR_LIMIT,
                        "cone engine: %ld unknowns x %ld box points is too large; use "
                        "--engine layered",
                        n, s->npts);
    /* off[t]: box-index offset of Q's term t shifted to minimum 0 */
    off = hf_malloc((size_t)(nq ? nq : 1) * sizeof *off);
    rowof = hf_malloc((size_t)s->npts * sizeof *rowof);
    if (!off || !rowof) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (int a = 0; a < d; a++)
        qmin[a] = INT64_MAX;
    for (long t = 0; t < nq; t++) {
        fmpz_mpoly_get_term_exp_si(exp, f->Q, t, f->ctx);
        for (int a = 0; a < d; a++)
            qmin[a] = exp[a] < qmin[a] ? exp[a] : qmin[a];
    }
    for (long t = 0; t < nq; t++) {
        fmpz_mpoly_get_term_exp_si(exp, f->Q, t, f->ctx);
        off[t] = 0;
        for (int a = 0; a < d; a++)
            off[t] += (long)(exp[a] - qmin[a]) * s->pw[a];
    }
    /* every box point reached gets a row; rows are numbered in box-point order */
    for (long p = 0; p < s->npts; p++)
        rowof[p] = -1;
    for (long r = 0; r < n; r++) {
        long base = box_base(s, brad, r, rv);
        for (long t = 0; t < nq; t++)
            rowof[base + off[t]] = 0;
    }
    for (long p = 0; p < s->npts; p++)
        if (rowof[p] == 0)
            rowof[p] = nrows++;
        else
            rowof[p] = -1;
    rows = _fmpz_vec_init(nrows * n);
    rowpt = hf_malloc((size_t)(nrows ? nrows : 1) * sizeof *rowpt);
    if (!rowpt) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long p = 0; p < s->npts; p++)
        if (rowof[p] >= 0)
            rowpt[rowof[p]] = p;
    for (long r = 0; r < n; r++) {
        long base = box_base(s, brad, r, rv);
        for (long t = 0; t < nq; t++) {
            fmpz *x = rows + rowof[base + off[t]] * n + r;
            fmpz_add(x, x, f->Q->coeffs + t);
        }
    }
    fmpz_t g;
    fmpz_init(g);
    for (long i = 0; i < nrows; i++) {
        _fmpz_vec_content(g, rows + i * n, n);
        if (!fmpz_is_one(g))
            _fmpz_vec_scalar_divexact_fmpz(rows + i * n, rows + i * n, n, g);
    }
    fmpz_clear(g);
    err = cone_merge(c, rows, nrows, rowpt);
    c->info.rows = nrows;
    c->info.hyperplanes = c->nh;
done:
    if (rows)
        _fmpz_vec_clear(rows, nrows * n);
    free(rowpt);
    free(rowof);
    free(off);
    return err;
}

/* ------------------------------------------------------------------ faces (Close-by-One) */

/* One unit's walk: closed sets of rays as sorted index lists, their support unions. */
typedef struct {
    hf_search_t *s;
    hf_cone_t *c;
    long m;
    hf_run_t *run;
    char *in;      /* nrays: membership of the current closed set */
    long closures; /* closures computed (for polling) */
} cbo_t;

/* Hand the support U (a hyperplane bitset of exactly m box points) to the candidate test:
 * its box points, sorted. */
static hf_err_t cbo_emit(cbo_t *w, const uint64_t *U)
{
    hf_cone_t *c = w->c;
    uint32_t *cand = w->s->cand;
    long k = 0;
    for (long x = 0; x < c->words; x++) {
        uint64_t b = U[x];
        while (b) {
            long h = x * 64 + __builtin_ctzll(b);
            for (long i = c->pstart[h]; i < c->pstart[h + 1]; i++)
                cand[k++] = c->pts[i];
            b &= b - 1;
        }
    }
    assert(k == w->m); /* the support has exactly m box points */
    /* insertion sort: lists are sorted runs, m is modest */
    for (long i = 1; i < k; i++) {
        uint32_t x = cand[i];
        long j = i - 1;
        while (j >= 0 && cand[j] > x) {
            cand[j + 1] = cand[j];
            j--;
        }
        cand[j + 1] = x;
    }
    return hf_search_candidate(w->s, w->m, cand, w->run);
}

/* Visit the closed set B (nb rays, marked in w->in) with union U of size usize, whose
 * last generator is y; recurse into the children of Close-by-One. */
static hf_err_t cbo_rec(cbo_t *w, const long *B, long nb, const uint64_t *U, long usize, long y)
{
    hf_cone_t *c = w->c;
    long words = c->words, R = c->nrays;
    hf_err_t err = HF_OK;
    if (usize == w->m)
        return cbo_emit(w, U);
    assert(usize < w->m && nb >= 1);
    /* a child adds a ray outside U, so its support is strictly larger */
    uint64_t *U2 = hf_malloc((size_t)words * sizeof *U2);
    long *D = hf_malloc((size_t)(R ? R : 1) * sizeof *D);
    if (!U2 || !D) {
        free(U2);
        free(D);
        return HF_ERR_NOMEM;
    }
    for (long j = y + 1; j < R && err == HF_OK; j++) {
        if (w->in[j] || c->ssize[j] > w->m)
            continue;
        const uint64_t *sj = c->supp + j * words;
        for (long x = 0; x < words; x++)
            U2[x] = U[x] | sj[x];
        long size2 = bits_weight(U2, words, c->weight);
        assert(size2 > usize); /* ray j lies outside U: its support adds points */
        if (size2 > w->m)
            continue;
        if (++w->closures % 4096 == 0 && w->run->poll && w->run->poll(w->run->poll_ctx)) {
            err = hf_error(HF_ERR_INTERRUPTED, "search: size %ld: unit abandoned on request", w->m);
            break;
        }
        /* closure: every ray whose support lies in U2; canonical iff it adds no ray below j
         * (then this child is generated here and nowhere else) */
        long nd = 0;
        int canonical = 1;
        for (long r = 0; r < R; r++) {
            if (c->ssize[r] > size2)
                break; /* rays are sorted by size */
            if (!bits_subset(c->supp + r * words, U2, words))
                continue;
            if (r < j && !w->in[r]) {
                canonical = 0;
                break;
            }
            D[nd++] = r;
        }
        if (!canonical)
            continue;
        assert(nd > nb); /* the closure holds B and j */
        for (long i = 0; i < nd; i++)
            w->in[D[i]] = 1;
        err = cbo_rec(w, D, nd, U2, size2, j);
        for (long i = 0; i < nd; i++)
            w->in[D[i]] = 0;
        for (long i = 0; i < nb; i++) /* D contains B: restore its marks */
            w->in[B[i]] = 1;
    }
    free(D);
    free(U2);
    return err;
}

/* ------------------------------------------------------------------ engine entry points */

static void cone_free(hf_cone_t **cp)
{
    if (!cp || !*cp)
        return;
    hf_cone_t *c = *cp;
    if (c->A)
        _fmpz_vec_clear(c->A, c->nh * c->n);
    free(c->weight);
    free(c->pstart);
    free(c->pts);
    free(c->supp);
    free(c->ssize);
    free(c);
    *cp = NULL;
}

void hf_search_cone_rays(const hf_search_t *s, long *nrays, long *words, const uint64_t **supp,
                         const long **ssize)
{
    const hf_cone_t *c = s->ops == &hf_engine_cone ? cone_state(s)->cone : NULL;
    int ready = c && !c->info.empty && c->bound >= 0;
    *nrays = ready ? c->nrays : 0;
    *words = ready ? c->words : 0;
    *supp = ready ? c->supp : NULL;
    *ssize = ready ? c->ssize : NULL;
}

const hf_cone_info_t *hf_search_cone_info(const hf_search_t *s)
{
    if (s->ops != &hf_engine_cone || !cone_state(s)->cone)
        return NULL;
    return &cone_state(s)->cone->info;
}

static hf_err_t cone_create(hf_search_t *s, const hf_search_make_t *mk)
{
    cone_state_t *st = hf_calloc(1, sizeof *st);
    if (!st)
        return HF_ERR_NOMEM;
    st->per_size = mk->no_lookahead;
    s->data = st;
    return HF_OK;
}

static void cone_destroy(hf_search_t *s)
{
    cone_state_t *st = cone_state(s);
    if (!st)
        return;
    cone_free(&st->cone);
    free(st);
    s->data = NULL;
}

/* Rays with support <= bound (rows computed once). Level m only uses rays of support
 * <= m, and they come first in the sorted list whatever the bound, so unit numbers and
 * node counts of a size do not depend on the bound the rays were computed for. */
static hf_err_t cone_prepare_bound(hf_search_t *s, long bound, hf_search_poll_fn poll,
                                   void *poll_ctx)
{
    cone_state_t *st = cone_state(s);
    hf_cone_t *c = st->cone;
    if (c && (c->info.empty || c->bound >= bound))
        return HF_OK;
    if (!c) {
        c = hf_calloc(1, sizeof *c);
        if (!c)
            return HF_ERR_NOMEM;
        int empty = 0;
        hf_err_t err = cone_rows(s, c, &empty);
        if (err != HF_OK) {
            cone_free(&c);
            return err;
        }
        c->info.empty = empty;
        c->bound = -1;
        st->cone = c;
        if (empty)
            return HF_OK;
    }
    free(c->supp);
    free(c->ssize);
    c->supp = NULL;
    c->ssize = NULL;
    c->nrays = 0;
    c->bound = -1;
    return hf_cone_rays(c, bound, hf_search_split(s), poll, poll_ctx);
}

/* The first bound: the largest size when it is near the first one (the usual case: UB
 * inside the span), else twice the first size; levels beyond it double it. */
static long cone_first_bound(const hf_search_t *s)
{
    long first = s->first > 1 ? s->first : 1;
    if (cone_state(s)->per_size)
        return first;
    if (s->last <= 4 * first || s->last <= first + 64)
        return s->last > first ? s->last : first;
    return 2 * first;
}

static hf_err_t cone_prepare(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx)
{
    return cone_prepare_bound(s, cone_first_bound(s), poll, poll_ctx);
}

static hf_err_t cone_level(hf_search_t *s, long m)
{
    cone_state_t *st = cone_state(s);
    long bound = st->cone && st->cone->bound > 0 ? st->cone->bound : cone_first_bound(s);
    while (bound < m)
        bound = bound > LONG_MAX / 2 || st->per_size ? m : 2 * bound;
    HF_TRY(cone_prepare_bound(s, bound, NULL, NULL));
    hf_cone_t *c = st->cone;
    long words = c->words;
    if (c->info.empty)
        return HF_OK;
    /* units: the roots of Close-by-One, the rays whose own closure adds no smaller ray */
    for (long j = 0; j < c->nrays && c->ssize[j] <= m; j++) {
        const uint64_t *sj = c->supp + j * words;
        int root = 1;
        for (long r = 0; r < j && root; r++)
            if (bits_subset(c->supp + r * words, sj, words))
                root = 0;
        if (!root)
            continue;
        hf_unit_t u = {.block = j, .first = 0, .count = 1, .npre = 0, .pre = {0, 0}};
        HF_TRY(hf_search_add_unit(s, &u));
    }
    return HF_OK;
}

static hf_err_t cone_run(hf_search_t *s, long m, const hf_unit_t *u, int64_t lo,
                         hf_search_range_t *range, hf_run_t *run)
{
    (void)lo; /* one cell */
    (void)range;
    hf_cone_t *c = cone_state(s)->cone;
    long j = u->block, words = c->words, R = c->nrays;
    hf_err_t err = HF_OK;
    cbo_t w = {.s = s, .c = c, .m = m, .run = run};
    w.in = hf_calloc((size_t)(R ? R : 1), 1);
    long *D = hf_malloc((size_t)(R ? R : 1) * sizeof *D);
    if (!w.in || !D) {
        free(w.in);
        free(D);
        return HF_ERR_NOMEM;
    }
    /* the root's closure: j and every ray whose support lies in j's (all after j) */
    const uint64_t *sj = c->supp + j * words;
    long nd = 0;
    for (long r = 0; r < R; r++)
        if (bits_subset(c->supp + r * words, sj, words)) {
            D[nd++] = r;
            w.in[r] = 1;
        }
    err = cbo_rec(&w, D, nd, sj, c->ssize[j], j);
    free(D);
    free(w.in);
    return err;
}

static void cone_describe(const hf_search_t *s, char *buf, size_t n)
{
    const hf_cone_t *c = cone_state(s)->cone;
    if (!c) {
        snprintf(buf, n, "engine cone: not prepared");
        return;
    }
    if (c->info.empty) {
        snprintf(buf, n, "engine cone: an extent of Newt(Q) exceeds the span; no support");
        return;
    }
    if (c->bound < 0)
        snprintf(buf, n, "engine cone: %ld unknowns, %ld hyperplanes; rays: row %ld/%ld, %ld kept",
                 c->n, c->nh, c->info.step, c->nh, c->info.step_rays);
    else
        snprintf(buf, n, "engine cone: %ld unknowns, %ld hyperplanes, %ld rays of support <= %ld",
                 c->n, c->nh, c->nrays, c->bound);
}

const hf_engine_ops_t hf_engine_cone = {.create = cone_create,
                                        .destroy = cone_destroy,
                                        .prepare = cone_prepare,
                                        .level = cone_level,
                                        .run = cone_run,
                                        .describe = cone_describe};
