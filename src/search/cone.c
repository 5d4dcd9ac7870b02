/* The cone engine (engine cone; docs/math.md §7.3, §7.4, §7.6; docs/search.md, "Engine cone").
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

/* The engine's state (s->data). */
typedef struct {
    hf_cone_t *cone; /* rays and hyperplanes, made by the preparation */
    int per_size;    /* the rays are computed for each size's own bound (no look-ahead) */
    long *sizes;     /* the sizes of the faces with at most sizes_bound points, increasing */
    long nsizes, sizes_bound; /* sizes_bound < 0: not known */
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

/* A row looked up among the hyperplanes found so far (hyperplane h's row at A[h * n]). The
 * rows are FLINT integers of any size, compared in full, so the hyperplanes are core's
 * hash index over them rather than its integer-vector set (64-bit entries). */
typedef struct {
    const fmpz *A;
    long n;
    const fmpz *row;
} row_key_t;

static int row_eq(const void *ctx, long h)
{
    const row_key_t *k = ctx;
    return _fmpz_vec_equal(k->A + h * k->n, k->row, k->n);
}

/* The box point of unknown r (R's exponent, in B_R = prod_a [0, brad[a])) as an index of
 * the span box. Q's term t (shifted to minimum 0) at index off[t] then lands on index
 * rbase + off[t]: the coordinates of a point of Q + B_R stay inside the box, so indices add. */
static long box_base(const hf_search_t *s, const int64_t *brad, long r)
{
    long rest = r, base = 0;
    for (int a = s->d - 1; a >= 0; a--) {
        base += (long)(rest % brad[a]) * s->pw[a];
        rest /= brad[a];
    }
    return base;
}

/* The points reached by Q + B_R, visited in increasing box order without a table of the box:
 * the n lists {rbase[r] + off[t]} (each sorted: Q's terms come in decreasing index order)
 * merged with a heap of their heads. Every point is handed to `visit` once, with the
 * unknowns r and terms t that reach it. */
typedef struct {
    long n, nq;
    const long *rbase, *off;
    long *pos;  /* per list: its next term (counting down from nq - 1) */
    long *heap; /* lists by their head's index */
    long nheap;
} reach_t;

static long reach_head(const reach_t *w, long r)
{
    return w->rbase[r] + w->off[w->pos[r]];
}

static void reach_sift(reach_t *w, long i)
{
    for (;;) {
        long l = 2 * i + 1, m = i;
        if (l < w->nheap && reach_head(w, w->heap[l]) < reach_head(w, w->heap[m]))
            m = l;
        if (l + 1 < w->nheap && reach_head(w, w->heap[l + 1]) < reach_head(w, w->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        long t = w->heap[i];
        w->heap[i] = w->heap[m];
        w->heap[m] = t;
        i = m;
    }
}

/* Rows of C: (Q R)_k for every box point k reached by Q + B_R, made primitive and merged
 * into hyperplanes when equal; built point by point, so only the distinct rows are held
 * (docs/search.md, "Engine cone": no table of the span box, whose points may be 4^14).
 * Returns *empty = 1 when some extent exceeds the span. */
static hf_err_t cone_rows(hf_search_t *s, hf_cone_t *c, int *empty)
{
    int d = s->d;
    const hf_fraction_t *f = &s->frac;
    slong exp[HF_D_MAX];
    int64_t qmin[HF_D_MAX], brad[HF_D_MAX];
    hf_err_t err = HF_OK;
    long nq = f->Q->length, npt = 0, ptcap = 0, hypcap = 0, nh = 0, acap = 0;
    long *off = NULL, *rbase = NULL, *pos = NULL, *heap = NULL, *hyp = NULL, *fill = NULL;
    uint32_t *pt = NULL;
    fmpz *row = NULL;
    fmpz_t g;
    hf_index_t index; /* hash of a row -> its hyperplane (core's hash index) */
    hf_index_init(&index);
    fmpz_init(g);
    *empty = 0;
    hf_search_extents(f, c->info.extent);
    long n = hf_search_rbox_size(c->info.extent, d, s->span);
    if (n == 0) {
        *empty = 1;
        goto done;
    }
    for (int a = 0; a < d; a++)
        brad[a] = s->span - c->info.extent[a] + 1;
    c->n = n;
    c->info.unknowns = n;
    off = hf_malloc((size_t)(nq ? nq : 1) * sizeof *off);
    rbase = hf_malloc((size_t)n * sizeof *rbase);
    pos = hf_malloc((size_t)n * sizeof *pos);
    heap = hf_malloc((size_t)n * sizeof *heap);
    row = _fmpz_vec_init(n);
    if (!off || !rbase || !pos || !heap) {
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
        assert(t == 0 || off[t] < off[t - 1]); /* lex order, x_0 most significant */
    }
    reach_t w = {n, nq, rbase, off, pos, heap, 0};
    for (long r = 0; r < n && nq > 0; r++) {
        rbase[r] = box_base(s, brad, r);
        pos[r] = nq - 1;
        heap[w.nheap++] = r;
    }
    for (long i = w.nheap / 2 - 1; i >= 0; i--)
        reach_sift(&w, i);
    unsigned long polls = 0;
    while (w.nheap > 0) {
        HF_CHECK(err, hf_search_stop_every(&polls, 14, HF_STOP_ROWS), done);
        long k = reach_head(&w, heap[0]);
        _fmpz_vec_zero(row, n);
        /* every list whose head is k: unknown r meets Q's term pos[r] there */
        while (w.nheap > 0 && reach_head(&w, heap[0]) == k) {
            long r = heap[0];
            fmpz_add(row + r, row + r, f->Q->coeffs + pos[r]);
            if (pos[r]-- == 0)
                heap[0] = heap[--w.nheap];
            reach_sift(&w, 0);
        }
        _fmpz_vec_content(g, row, n);
        if (!fmpz_is_zero(g) && !fmpz_is_one(g))
            _fmpz_vec_scalar_divexact_fmpz(row, row, n, g);
        row_key_t key = {c->A, n, row};
        uint64_t hsh = row_hash(row, n);
        long h = hf_index_find(&index, hsh, row_eq, &key);
        if (h < 0) {
            h = nh;
            if (nh + 1 > acap) {
                long cap = acap ? 2 * acap : 64;
                fmpz *A = _fmpz_vec_init(cap * n);
                for (long i = 0; i < nh * n; i++)
                    fmpz_swap(A + i, c->A + i);
                if (c->A)
                    _fmpz_vec_clear(c->A, acap * n);
                c->A = A;
                acap = cap;
            }
            _fmpz_vec_set(c->A + nh * n, row, n);
            HF_CHECK(err, hf_index_add(&index, hsh, nh), done);
            nh++;
        }
        HF_CHECK(err, HF_GROW(&pt, &ptcap, npt + 1), done);
        HF_CHECK(err, HF_GROW(&hyp, &hypcap, npt + 1), done);
        pt[npt] = (uint32_t)k;
        hyp[npt++] = h;
    }
    /* the hyperplanes' points, each list in box order (a stable counting sort) */
    c->nh = nh;
    c->words = (nh + 63) / 64;
    c->weight = hf_calloc((size_t)(nh ? nh : 1), sizeof *c->weight);
    c->pstart = hf_calloc((size_t)nh + 1, sizeof *c->pstart);
    c->pts = hf_malloc((size_t)(npt ? npt : 1) * sizeof *c->pts);
    fill = hf_calloc((size_t)(nh ? nh : 1), sizeof *fill);
    if (!c->weight || !c->pstart || !c->pts || !fill) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < npt; i++)
        c->weight[hyp[i]]++;
    for (long h = 0; h < nh; h++)
        c->pstart[h + 1] = c->pstart[h] + c->weight[h];
    for (long i = 0; i < npt; i++)
        c->pts[c->pstart[hyp[i]] + fill[hyp[i]]++] = pt[i];
    c->info.rows = npt;
    c->info.hyperplanes = nh;
done:
    if (c->A && acap > nh) { /* keep exactly nh rows: cone_free clears nh * n */
        fmpz *A = _fmpz_vec_init((nh ? nh : 1) * n);
        for (long i = 0; i < nh * n; i++)
            fmpz_swap(A + i, c->A + i);
        _fmpz_vec_clear(c->A, acap * n);
        c->A = A;
    }
    c->nh = nh;
    if (row)
        _fmpz_vec_clear(row, n);
    fmpz_clear(g);
    hf_index_clear(&index);
    free(fill);
    free(hyp);
    free(pt);
    free(heap);
    free(pos);
    free(rbase);
    free(off);
    return err;
}

/* A large row's rows: its slices dealt to the processes, then the hyperplanes and their
 * classes from every process's slices (cone_classes.c). Collective with a split of several
 * processes, whatever happens on one: every process reaches the classes' exchange. */
static hf_err_t cone_large_rows(hf_search_t *s, hf_cone_t *c, const hf_search_split_t *sp,
                                int *empty)
{
    *empty = 0;
    for (int a = 0; a < s->d; a++) {
        c->info.extent[a] = s->qext[a];
        if (s->qext[a] > s->span)
            *empty = 1;
    }
    if (*empty)
        return HF_OK; /* the same on every process: no collective step follows */
    hf_err_t err = hf_search_large_deal(s, sp);
    if (err != HF_OK && (!sp || sp->nranks == 1))
        return err;
    return hf_cone_classes(s, c, sp, err);
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
    int sizes;     /* instead of emitting, list the size of every closed set with at most m
                    * points (the engine's sizes with candidates) in seen */
    long *seen, nseen, capseen; /* (a list, not a table of m + 1: m reaches 10^8) */
    long budget; /* with sizes: closures allowed; over it, the walk gives up (over = 1) */
    int over;
} cbo_t;

/* Sort box indices increasingly: insertion sort for a few, else two passes of a radix sort
 * on 16-bit digits (a support of chain:d=11 has 443 520 points; insertion sort took 30 s
 * a candidate). tmp: scratch of n. */
static void sort_points(uint32_t *a, long n, uint32_t *tmp)
{
    if (n < 64) {
        for (long i = 1; i < n; i++) {
            uint32_t x = a[i];
            long j = i - 1;
            while (j >= 0 && a[j] > x) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = x;
        }
        return;
    }
    uint32_t count[1L << 16]; /* n < 2^32 */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t *src = pass ? tmp : a, *dst = pass ? a : tmp;
        int shift = 16 * pass;
        memset(count, 0, sizeof count);
        for (long i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xffff]++;
        uint32_t at = 0;
        for (long v = 0; v < (1L << 16); v++) {
            uint32_t c = count[v];
            count[v] = at;
            at += c;
        }
        for (long i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
    }
}

/* Hand the support U (a hyperplane bitset of exactly m box points) to the candidate test:
 * its box points, sorted. */
static hf_err_t cbo_emit(cbo_t *w, const uint64_t *U)
{
    hf_cone_t *c = w->c;
    if (c->pspan) /* a large row: decided by its classes, never listed */
        return hf_cone_classes_test(w->s, c, w->m, U, w->run);
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
    sort_points(cand, k, (uint32_t *)w->s->combo);
    return hf_search_candidate(w->s, w->m, cand, w->run);
}

/* Visit the closed set B (nb rays, marked in w->in) with union U of size usize, whose
 * last generator is y; recurse into the children of Close-by-One. */
static hf_err_t cbo_rec(cbo_t *w, const long *B, long nb, const uint64_t *U, long usize, long y)
{
    hf_cone_t *c = w->c;
    long words = c->words, R = c->nrays;
    hf_err_t err = HF_OK;
    if (w->sizes) {
        /* consecutive closed sets often share a size: skip the repeat */
        if (!w->nseen || w->seen[w->nseen - 1] != usize) {
            HF_TRY(HF_GROW(&w->seen, &w->capseen, w->nseen + 1));
            w->seen[w->nseen++] = usize;
        }
        if (usize == w->m)
            return HF_OK;
    } else if (usize == w->m) {
        return cbo_emit(w, U);
    }
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
        /* the sizes' walk has no unit to abandon: its own phase, checked here */
        if (++w->closures % 256 == 0 &&
            hf_search_stop_asked(w->run->poll, w->run->poll_ctx, w->sizes ? HF_STOP_SIZES : NULL)) {
            err = hf_error(HF_ERR_INTERRUPTED, "search: size %ld: %s stopped on request", w->m,
                           w->sizes ? "the walk over the faces' sizes" : "unit");
            break;
        }
        if (w->sizes && w->closures > w->budget) {
            w->over = 1;
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
    hf_cone_classes_free(c);
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

hf_err_t hf_search_large_cmp(const hf_search_t *s, const fmpz *ra, const fmpz *rb, int *cmp)
{
    const hf_cone_t *c = s->large && s->ops == &hf_engine_cone ? cone_state(s)->cone : NULL;
    if (!c || !c->pspan)
        return hf_error(HF_ERR_INTERNAL, "search: supports compared before a large row's classes");
    return hf_cone_classes_cmp(c, ra, rb, cmp);
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
    st->sizes_bound = -1;
    s->data = st;
    return HF_OK;
}

static void cone_destroy(hf_search_t *s)
{
    cone_state_t *st = cone_state(s);
    if (!st)
        return;
    cone_free(&st->cone);
    free(st->sizes);
    free(st);
    s->data = NULL;
}

static hf_err_t cone_sizes(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx);

/* Rays with support <= bound (rows computed once). Level m only uses rays of support
 * <= m, and they come first in the sorted list whatever the bound, so unit numbers and
 * node counts of a size do not depend on the bound the rays were computed for. */
static hf_err_t cone_prepare_bound(hf_search_t *s, long bound, hf_search_poll_fn poll,
                                   void *poll_ctx)
{
    cone_state_t *st = cone_state(s);
    const hf_search_split_t *sp = hf_search_split(s);
    hf_cone_t *c = st->cone;
    /* the same on every process: the rows and bounds do not depend on the rank */
    if (c && (c->info.empty || c->bound >= bound))
        return HF_OK;
    hf_err_t err = HF_OK;
    if (!c) {
        c = hf_calloc(1, sizeof *c);
        int empty = 0;
        if (!c)
            err = HF_ERR_NOMEM;
        else if (s->large)
            err = cone_large_rows(s, c, sp, &empty);
        else
            err = cone_rows(s, c, &empty);
        if (err == HF_OK) {
            c->info.empty = empty;
            c->bound = -1;
            st->cone = c;
        } else {
            cone_free(&c);
        }
        /* with a split every process reaches the rays' collective steps, or none does: a
         * failure of one process's own work so far stops them all here */
        if (sp)
            err = sp->allgather(sp->ctx, err, NULL, 0, NULL, NULL);
        if (err != HF_OK || empty)
            return err;
    }
    free(c->supp);
    free(c->ssize);
    c->supp = NULL;
    c->ssize = NULL;
    c->nrays = 0;
    c->bound = -1;
    err = hf_cone_rays(c, bound, sp, poll, poll_ctx);
    if (err == HF_OK && !st->per_size)
        err = cone_sizes(s, poll, poll_ctx);
    /* storing the rays and counting sizes are local: agree before the caller goes on */
    if (sp)
        err = sp->allgather(sp->ctx, err, NULL, 0, NULL, NULL);
    return err;
}

/* The first bound: the largest size when it is near the first one (the usual case: UB
 * inside the span), else twice the first size; levels beyond it double it. */
static long cone_first_bound(const hf_search_t *s)
{
    long first = s->first > 1 ? s->first : 1;
    if (cone_state(s)->per_size)
        return first;
    /* a large row's rays are computed once, for every size (docs/search.md, "Large rows"):
     * it has few unknowns, so the bound hardly prunes, and every run of the double
     * description goes over all of its hyperplanes again */
    if (s->large || s->last <= 4 * first || s->last <= first + 64)
        return s->last > first ? s->last : first;
    return 2 * first;
}

/* The within-span bound only raises s->first. With the sizes known (no per-size rays) and
 * the first bound already the last size, a higher first changes neither the rays nor the
 * candidates of any size: sizes without faces are skipped by cone_next_size, and a face
 * below the bound is a candidate the exact test rejects, the same answer (docs/search.md,
 * "Shape rules"; docs/performance.md §19). */
static int cone_span_bound_moot(const hf_search_t *s)
{
    long first = s->first > 1 ? s->first : 1;
    return !cone_state(s)->per_size && cone_first_bound(s) == (s->last > first ? s->last : first);
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

/* The subtree of Close-by-One under root ray j (a unit): j's closure (j and every ray whose
 * support lies in j's, all after j), then its children. w->in: zeros of nrays. */
static hf_err_t cbo_root(cbo_t *w, long j)
{
    hf_cone_t *c = w->c;
    long words = c->words, R = c->nrays, nd = 0;
    long *D = hf_malloc((size_t)(R ? R : 1) * sizeof *D);
    if (!D)
        return HF_ERR_NOMEM;
    const uint64_t *sj = c->supp + j * words;
    for (long r = 0; r < R; r++)
        if (bits_subset(c->supp + r * words, sj, words)) {
            D[nd++] = r;
            w->in[r] = 1;
        }
    hf_err_t err = cbo_rec(w, D, nd, sj, c->ssize[j], j);
    for (long i = 0; i < nd; i++)
        w->in[D[i]] = 0;
    free(D);
    return err;
}

static hf_err_t cone_run(hf_search_t *s, long m, const hf_unit_t *u, int64_t lo,
                         hf_search_range_t *range, hf_run_t *run)
{
    (void)lo; /* one cell */
    (void)range;
    hf_cone_t *c = cone_state(s)->cone;
    cbo_t w = {.s = s, .c = c, .m = m, .run = run};
    w.in = hf_calloc((size_t)(c->nrays ? c->nrays : 1), 1);
    if (!w.in)
        return HF_ERR_NOMEM;
    hf_err_t err = cbo_root(&w, u->block);
    free(w.in);
    return err;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The sizes of the closed sets of rays with at most `bound` points (every face of the
 * cone of that size), sorted: the only sizes that hold candidates (docs/search.md, "Sizes
 * without candidates"). One walk of Close-by-One over every root; given up (sizes unknown,
 * every size is run) past CONE_SIZES_BUDGET closures. */
#define CONE_SIZES_BUDGET (1L << 20)
static hf_err_t cone_sizes(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx)
{
    cone_state_t *st = cone_state(s);
    hf_cone_t *c = st->cone;
    long bound = c->bound;
    hf_run_t run = {.poll = poll, .poll_ctx = poll_ctx};
    cbo_t w = {.s = s, .c = c, .m = bound, .run = &run, .budget = CONE_SIZES_BUDGET};
    free(st->sizes);
    st->sizes = NULL;
    st->nsizes = 0;
    st->sizes_bound = -1;
    w.in = hf_calloc((size_t)(c->nrays ? c->nrays : 1), 1);
    w.sizes = 1;
    hf_err_t err = w.in ? hf_search_stop_flag(HF_STOP_SIZES) : HF_ERR_NOMEM;
    for (long j = 0; err == HF_OK && !w.over && j < c->nrays && c->ssize[j] <= bound; j++) {
        const uint64_t *sj = c->supp + j * c->words;
        int root = 1; /* a ray whose support contains a smaller ray's is inside that tree */
        for (long r = 0; r < j && root; r++)
            if (bits_subset(c->supp + r * c->words, sj, c->words))
                root = 0;
        if (root)
            err = cbo_root(&w, j);
    }
    if (err == HF_OK && !w.over) { /* sorted, each size once */
        long n = 0;
        qsort(w.seen, (size_t)w.nseen, sizeof *w.seen, cmp_long);
        for (long i = 0; i < w.nseen; i++)
            if (!n || w.seen[n - 1] != w.seen[i])
                w.seen[n++] = w.seen[i];
        st->sizes = w.seen;
        st->nsizes = n;
        st->sizes_bound = bound;
        w.seen = NULL;
    }
    free(w.seen);
    free(w.in);
    return err;
}

/* The smallest size >= m that holds a candidate: from the sizes of the faces when they are
 * known up to m, else m. */
static long cone_next_size(const hf_search_t *s, long m)
{
    const cone_state_t *st = cone_state(s);
    if (!st->cone || st->cone->info.empty || st->sizes_bound < 0 || m > st->sizes_bound)
        return m;
    long lo = 0, hi = st->nsizes;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (st->sizes[mid] < m)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->nsizes ? st->sizes[lo] : st->sizes_bound + 1;
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
    if (c->bound < 0) {
        /* rows are not a measure of the work left (a step's pairs are the product of its
         * positive and negative rays): the pairs tested and their rate are */
        double secs = c->info.started > 0 ? hf_cone_clock() - c->info.started : 0;
        snprintf(buf, n,
                 "engine cone: %ld unknowns, %ld hyperplanes; rays: row %ld/%ld, %ld kept; "
                 "pairs: %.3g in this row, %.3g done (%.3g a second)",
                 c->n, c->nh, c->info.step, c->nh, c->info.step_rays, c->info.step_pairs,
                 c->info.done_pairs, secs > 0 ? c->info.done_pairs / secs : 0.0);
    } else {
        snprintf(buf, n, "engine cone: %ld unknowns, %ld hyperplanes, %ld rays of support <= %ld",
                 c->n, c->nh, c->nrays, c->bound);
    }
}

const hf_engine_ops_t hf_engine_cone = {.create = cone_create,
                                        .destroy = cone_destroy,
                                        .prepare = cone_prepare,
                                        .level = cone_level,
                                        .run = cone_run,
                                        .next_size = cone_next_size,
                                        .span_bound_moot = cone_span_bound_moot,
                                        .describe = cone_describe,
                                        .large_rows = 1,
                                        .small_exact = 1};
