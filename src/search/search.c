/* The search object: creation, bounds, levels and units, and the test of one candidate
 * support (canonical position, coordinate faces, exact test). The two generators
 * (plain.c, layered.c) produce candidates; everything they produce passes through
 * hf_search_candidate, so both modes decide supports the same way. */
#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz.h>

#include "headfuse/bounds.h"
#include "search/search_impl.h"

long hf_search_test_skip_unit = -1;
long hf_search_unit_target = HF_SEARCH_UNIT_TARGET;
long hf_search_layered_unit_target = HF_SEARCH_LAYERED_UNIT_TARGET;

const char *hf_engine_name(hf_engine_t e)
{
    switch (e) {
#define HF_ENGINE_NAME(code, name, text)                                                           \
    case code:                                                                                     \
        return name;
        HF_ENGINE_TABLE(HF_ENGINE_NAME)
#undef HF_ENGINE_NAME
    }
    return "unknown";
}

hf_err_t hf_engine_parse(const char *name, const char *origin, hf_engine_t *out)
{
#define HF_ENGINE_MATCH(code, ename, text)                                                         \
    if (name && !strcmp(name, ename)) {                                                            \
        *out = code;                                                                               \
        return HF_OK;                                                                              \
    }
    HF_ENGINE_TABLE(HF_ENGINE_MATCH)
#undef HF_ENGINE_MATCH
    return hf_error(HF_ERR_INPUT, "%s: '%s': must be auto, cone, layered or plain", origin,
                    name ? name : "");
}

long hf_search_binom(long n, long k)
{
    if (k < 0 || n < 0 || k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    long r = 1;
    for (long i = 1; i <= k; i++) {
        /* r * (n - k + i) / i stays an integer: it is C(n - k + i, i) */
        if (r > HF_SEARCH_SAT / (n - k + i))
            return HF_SEARCH_SAT;
        r = r * (n - k + i) / i;
    }
    return r;
}

/* Copy the prefix into c and return the least element after it, or -1 when no r-subset of
 * 0..n-1 extends it (a prefix longer than r, not increasing, out of range, or leaving too
 * few elements after it). */
static long combo_start(long n, long r, int npre, const long *pre, long *c)
{
    if (r < npre)
        return -1;
    for (int i = 0; i < npre; i++) {
        if (pre[i] >= n || (i > 0 && pre[i] <= pre[i - 1]))
            return -1;
        c[i] = pre[i];
    }
    long lo = npre ? pre[npre - 1] + 1 : 0;
    return lo + (r - npre) <= n ? lo : -1;
}

/* Step c to the next r-subset extending the prefix, after fn asked to skip every subset that
 * shares c[0..skip]: the position that moved, or -1 when none is left. */
static inline long combo_next(long n, long r, int npre, long *c, long skip)
{
    if (skip < npre)
        return -1; /* every remaining subset shares the rejected prefix */
    long i = skip;
    while (i >= npre && c[i] == n - r + i)
        i--;
    if (i < npre)
        return -1;
    c[i]++;
    for (long k = i + 1; k < r; k++)
        c[k] = c[k - 1] + 1;
    return i;
}

hf_err_t hf_search_combos(long n, long r, int npre, const long *pre, long *c, hf_combo_fn fn,
                          void *ctx)
{
    long lo = combo_start(n, r, npre, pre, c);
    if (lo < 0)
        return HF_OK;
    for (long i = npre; i < r; i++)
        c[i] = lo + (i - npre);
    for (;;) {
        /* c is an increasing r-subset of 0..n-1 that extends the prefix */
        assert(r == 0 || (c[0] >= 0 && c[r - 1] < n));
        assert(npre == 0 || c[npre - 1] == pre[npre - 1]);
        long skip = r - 1;
        HF_TRY(fn(ctx, c, &skip));
        if (combo_next(n, r, npre, c, skip) < 0)
            break;
    }
    return HF_OK;
}

/* Cells of the r-subsets extending a prefix: the `depth` elements after it form a
 * depth-subset of the N values that leave room for the rest (search_impl.h). */
static long cells_values(long n, long r, int npre, const long *pre, int depth)
{
    long lo = npre ? pre[npre - 1] + 1 : 0;
    return n - lo - (r - npre) + depth;
}

int64_t hf_search_combo_cells(long n, long r, int npre, const long *pre, int depth)
{
    long nv = cells_values(n, r, npre, pre, depth);
    return nv < depth ? 0 : (int64_t)hf_search_binom(nv, depth);
}

hf_err_t hf_binom_tab_need(hf_binom_tab_t *tab, long n, long kmax)
{
    if (n <= tab->n && kmax <= tab->kmax)
        return HF_OK;
    n = n > tab->n ? n : tab->n;
    kmax = kmax > tab->kmax ? kmax : tab->kmax;
    if (n < 0 || kmax < 0 || (n + 1) * (kmax + 1) > (1L << 20))
        return HF_OK;
    int64_t *v = hf_malloc((size_t)(n + 1) * (size_t)(kmax + 1) * sizeof *v);
    if (!v)
        return HF_ERR_NOMEM;
    long w = kmax + 1;
    for (long x = 0; x <= n; x++)
        for (long k = 0; k <= kmax; k++) {
            int64_t c = k == 0 ? 1 : x == 0 ? 0 : v[(x - 1) * w + k - 1] + v[(x - 1) * w + k];
            v[x * w + k] = c > HF_SEARCH_SAT ? HF_SEARCH_SAT : c;
        }
    free(tab->v);
    tab->v = v;
    tab->n = n;
    tab->kmax = kmax;
    return HF_OK;
}

void hf_binom_tab_clear(hf_binom_tab_t *tab)
{
    free(tab->v);
    tab->v = NULL;
    tab->n = tab->kmax = -1;
}

static inline int64_t binom_of(const hf_binom_tab_t *t, long n, long k)
{
    if (k < 0 || n < 0 || k > n)
        return 0;
    if (t && t->v && n <= t->n && k <= t->kmax)
        return t->v[n * (t->kmax + 1) + k];
    return hf_search_binom(n, k);
}

/* Contribution of position i to the lexicographic rank of a depth-subset y[] of nv values:
 * the subsets that agree with y before i and have a smaller value at i (the sum over v of
 * C(nv - 1 - v, depth - 1 - i), in closed form). The rank is the sum over i; a position
 * whose value follows the one before it contributes 0. */
static inline int64_t cells_part(const hf_binom_tab_t *t, const long *y, int i, int depth, long nv)
{
    long prev = i > 0 ? y[i - 1] : -1;
    return binom_of(t, nv - 1 - prev, depth - i) - binom_of(t, nv - y[i], depth - i);
}

static void cells_unrank(const hf_binom_tab_t *t, int64_t rank, int depth, long nv, long *y)
{
    long v = 0;
    for (int i = 0; i < depth; i++, v++) {
        for (;; v++) {
            int64_t with_v = binom_of(t, nv - 1 - v, depth - 1 - i);
            if (rank < with_v)
                break;
            rank -= with_v;
        }
        y[i] = v;
    }
}

hf_err_t hf_search_combos_cells(long n, long r, int npre, const long *pre, int depth, int64_t base,
                                int64_t first_cell, hf_search_range_t *range,
                                const hf_binom_tab_t *tab, long *c, int64_t *part, hf_combo_fn fn,
                                void *ctx)
{
    assert(depth >= 0 && depth <= r - npre);
    long lo = combo_start(n, r, npre, pre, c);
    if (lo < 0 || first_cell >= hf_search_combo_cells(n, r, npre, pre, depth))
        return HF_OK;
    long nv = cells_values(n, r, npre, pre, depth);
    /* y: the cell's elements less lo, in the scratch after c's r; part[i]: rank of y[0..i) */
    long *y = c + r;
    cells_unrank(tab, first_cell, depth, nv, y);
    for (int i = 0; i < depth; i++)
        c[npre + i] = lo + y[i];
    for (long i = npre + depth; i < r; i++)
        c[i] = (i > 0 ? c[i - 1] : -1) + 1;
    part[0] = 0;
    for (int i = 0; i + 1 < depth; i++)
        part[i + 1] = part[i] + cells_part(tab, y, i, depth, nv);
    int64_t cell = first_cell;
    for (;;) {
        if (base + cell >= range->hi)
            break;
        range->pos = base + cell;
        assert(r == 0 || (c[0] >= 0 && c[r - 1] < n));
        long skip = r - 1;
        HF_TRY(fn(ctx, c, &skip));
        long i = combo_next(n, r, npre, c, skip);
        if (i < 0)
            break;
        if (i == npre + depth - 1) {
            /* the next cell with the same first points (the common step): C(x, 1) = x */
            cell = part[depth - 1] + (depth > 1 ? c[i] - c[i - 1] - 1 : c[i] - lo);
        } else if (i < npre + depth) { /* a new cell: positions after j follow on, adding 0 */
            int j = (int)(i - npre);
            for (int k = j; k < depth; k++)
                y[k] = c[npre + k] - lo;
            cell = part[j] + cells_part(tab, y, j, depth, nv);
            for (int k = j + 1; k < depth; k++)
                part[k] = cell;
        }
    }
    return HF_OK;
}

hf_err_t hf_search_add_unit(hf_search_t *s, const hf_unit_t *u)
{
    HF_TRY(HF_GROW(&s->units, &s->capunits, s->nunits + 1));
    s->units[s->nunits++] = *u;
    return HF_OK;
}

hf_err_t hf_search_split_prefix(hf_search_t *s, long block, long triple, long n, long r, long a_hi,
                                long target)
{
    if (r < 1)
        return HF_OK;
    if (a_hi > n - r + 1)
        a_hi = n - r + 1;
    for (long a = 0; a < a_hi; a++) {
        hf_unit_t u = {.block = block, .first = triple, .count = 1, .npre = 1, .pre = {a, 0}};
        if (r < 2 || hf_search_binom(n - a - 1, r - 1) <= target) {
            HF_TRY(hf_search_add_unit(s, &u));
            continue;
        }
        u.npre = 2;
        for (long b = a + 1; b <= n - r + 1; b++) {
            u.pre[1] = b;
            HF_TRY(hf_search_add_unit(s, &u));
        }
    }
    return HF_OK;
}

hf_err_t hf_search_scratch(hf_search_t *s, long m)
{
    if (m <= s->scratch_m)
        return HF_OK;
    size_t d = (size_t)s->d;
    uint32_t *cand = hf_realloc(s->cand, (size_t)m * sizeof *cand);
    if (!cand)
        return HF_ERR_NOMEM;
    s->cand = cand;
    uint32_t *tmp = hf_realloc(s->tmp, (size_t)6 * m * sizeof *tmp);
    if (!tmp)
        return HF_ERR_NOMEM;
    s->tmp = tmp;
    int64_t *keys = hf_realloc(s->keys, (size_t)m * d * sizeof *keys);
    if (!keys)
        return HF_ERR_NOMEM;
    s->keys = keys;
    int64_t *fkeys = hf_realloc(s->fkeys, (size_t)m * d * sizeof *fkeys);
    if (!fkeys)
        return HF_ERR_NOMEM;
    s->fkeys = fkeys;
    long *combo = hf_realloc(s->combo, (size_t)2 * m * sizeof *combo);
    if (!combo)
        return HF_ERR_NOMEM;
    s->combo = combo;
    int64_t *cellpart = hf_realloc(s->cellpart, (size_t)m * sizeof *cellpart);
    if (!cellpart)
        return HF_ERR_NOMEM;
    s->cellpart = cellpart;
    int64_t *dots = hf_realloc(s->dots, (size_t)m * sizeof *dots);
    if (!dots)
        return HF_ERR_NOMEM;
    s->dots = dots;
    s->scratch_m = m;
    return HF_OK;
}

hf_err_t hf_search_face_test(hf_search_t *s, int face, long n, const uint32_t *pts, long m,
                             int *feasible)
{
    int d = s->d;
    int64_t mn[HF_D_MAX];
    uint32_t *fidx = s->tmp + 3 * m;
    for (int l = 0; l < d; l++)
        mn[l] = INT64_MAX;
    for (long i = 0; i < n; i++) {
        int64_t *k = s->fkeys + i * d;
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
            s->fkeys[i * d + l] -= mn[l];
    }
    int found = 0;
    hf_facememo_get(&s->memo, face, n, fidx, &found, feasible);
    if (!found) {
        hf_reason_t reason;
        HF_TRY(hf_exact_check(s->faces[face].exact, n, s->fkeys, feasible, &reason, NULL));
        s->face_exact_tests++;
        HF_TRY(hf_facememo_put(&s->memo, face, n, fidx, *feasible));
    }
    return HF_OK;
}

/* Face rule on the coordinate faces F_{-e_j}(K), F_{+e_j}(K), j < d - 1 (the last
 * coordinate's faces are the bottom and top layers, feasible by construction). Sizes
 * first (cheap), then memoised exact tests. keys holds K (indices idx) in canonical
 * position. */
static hf_err_t search_faces(hf_search_t *s, long m, const uint32_t *idx, int *ok)
{
    int d = s->d;
    const int64_t *keys = s->keys;
    int64_t top[HF_D_MAX];
    uint32_t *pts = s->tmp + 4 * m;
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
        /* widths (MATH 7.4), then the faces' sizes against their lower bounds */
        if (top[j] < s->qext[j] || nlo < s->faces[2 * j].lb || nhi < s->faces[2 * j + 1].lb)
            return HF_OK;
    }
    for (int j = 0; j < d - 1; j++) {
        for (int side = 0; side < 2; side++) {
            if (j == 0 && side == 0 && s->face0_done)
                continue;
            int64_t level = side ? top[j] : 0;
            long n = 0;
            for (long i = 0; i < m; i++)
                if (keys[i * d + j] == level)
                    pts[n++] = idx[i];
            int feasible = 0;
            HF_TRY(hf_search_face_test(s, 2 * j + side, n, pts, m, &feasible));
            if (!feasible)
                return HF_OK;
        }
    }
    *ok = 1;
    return HF_OK;
}

hf_err_t hf_search_candidate(hf_search_t *s, long m, const uint32_t *idx, hf_run_t *run)
{
    run->nodes++;
    if (run->poll && run->nodes % HF_SEARCH_POLL_EVERY == 0 && run->poll(run->poll_ctx))
        return hf_error(HF_ERR_INTERRUPTED, "search: size %ld: unit abandoned on request", m);
    int d = s->d;
#ifndef NDEBUG
    /* every engine hands over m distinct box points in increasing order */
    for (long i = 0; i < m; i++)
        assert((long)idx[i] < s->npts && (i == 0 || idx[i - 1] < idx[i]));
#endif
    uint64_t zero = 0, full = d == 64 ? ~(uint64_t)0 : (((uint64_t)1 << d) - 1);
    if (s->zmask) {
        /* tables: most candidates are decided on the masks alone */
        for (long i = 0; i < m; i++)
            zero |= s->zmask[idx[i]];
        if (zero != full) {
            s->stats.canonical_rejections++;
            return HF_OK;
        }
        for (long i = 0; i < m; i++) {
            const uint8_t *dg = s->digits + (size_t)idx[i] * d;
            for (int j = 0; j < d; j++)
                s->keys[i * d + j] = dg[j];
        }
    } else {
        for (long i = 0; i < m; i++) {
            long v = idx[i];
            for (int j = d - 1; j >= 0; j--) {
                int64_t x = v % s->base;
                v /= s->base;
                s->keys[i * d + j] = x;
                if (x == 0)
                    zero |= (uint64_t)1 << j;
            }
        }
        if (zero != full) {
            s->stats.canonical_rejections++;
            return HF_OK;
        }
    }
    if (s->engine == HF_ENGINE_LAYERED && d > 1) {
        int ok;
        HF_TRY(search_faces(s, m, idx, &ok));
        if (ok && s->nx > 0)
            HF_TRY(hf_search_shape_check(s, m, idx, &ok));
        if (!ok) {
            s->stats.face_rejections++;
            return HF_OK;
        }
    }
    int feasible = 0;
    hf_reason_t reason;
    s->stats.exact_tests++;
    HF_TRY(hf_exact_check(s->exact, m, s->keys, &feasible, &reason, run->witness));
    if (feasible && run->found)
        HF_TRY(run->found(run->found_ctx, m, s->keys, run->witness));
    return HF_OK;
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

/* (S + 1)^d, or -1 above HF_SEARCH_BOX_MAX. */
static long search_box_points(long base, int d)
{
    long n = 1;
    for (int j = 0; j < d; j++) {
        if (n > HF_SEARCH_BOX_MAX / base)
            return -1;
        n *= base;
    }
    return n;
}

static hf_err_t search_fmpz_str(const fmpz_t x, char **out)
{
    char *tmp = fmpz_get_str(NULL, 10, x);
    *out = hf_strdup(tmp);
    flint_free(tmp);
    return *out ? HF_OK : HF_ERR_NOMEM;
}

/* The product head's keys span, per coordinate, the sum of the heads' extents; it
 * fits the box {0..S}^d when every such sum is at most S. */
static int product_fits_span(const hf_target_t *t, int span)
{
    for (int j = 0; j < t->d; j++) {
        int64_t total = 0;
        for (int h = 0; h < t->nheads; h++) {
            const hf_head_t *hd = t->heads + h;
            int64_t lo = hd->keys[j], hi = hd->keys[j];
            for (long i = 1; i < hd->natoms; i++) {
                int64_t k = hd->keys[i * t->d + j];
                lo = k < lo ? k : lo;
                hi = k > hi ? k : hi;
            }
            total += hi - lo;
        }
        if (total > span)
            return 0;
    }
    return 1;
}

hf_err_t hf_search_create_internal(const hf_target_t *t, int span, hf_engine_t engine, int top,
                                   hf_fs_registry_t *reg, hf_search_t **out)
{
    int prune = engine != HF_ENGINE_PLAIN;
    hf_err_t err = HF_OK;
    fmpz_t lb, ub;
    fmpz_init(lb);
    fmpz_init(ub);
    *out = NULL;
    hf_search_t *s = hf_calloc(1, sizeof *s);
    if (!s) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    s->level_m = -1;
    hf_facememo_init(&s->memo);
    hf_binom_tab_clear(&s->ctab);
    HF_CHECK(err, hf_target_copy(&s->t, t), fail);
    s->has_t = 1;
    s->d = t->d;
    s->dv = t->dv;
    s->span = span;
    s->prune = prune;
    s->top = top;
    s->base = span + 1;
    s->npts = search_box_points(s->base, s->d);
    if (s->npts < 0) {
        err = hf_error(HF_ERR_INPUT, "span: box {0..%d}^%d has more than %ld points", span, s->d,
                       HF_SEARCH_BOX_MAX);
        goto fail;
    }
    s->nlayer = s->npts / s->base;
    s->pw = hf_malloc((size_t)s->d * sizeof *s->pw);
    if (!s->pw) {
        err = HF_ERR_NOMEM;
        goto fail;
    }
    long w = 1;
    for (int j = s->d - 1; j >= 0; j--) {
        s->pw[j] = w;
        w *= s->base;
    }

    if ((size_t)s->npts * s->d <= HF_SEARCH_TABLE_MAX) {
        s->digits = hf_malloc((size_t)s->npts * s->d);
        s->zmask = hf_malloc((size_t)s->npts * sizeof *s->zmask);
        if (!s->digits || !s->zmask) {
            err = HF_ERR_NOMEM;
            goto fail;
        }
        for (long p = 0; p < s->npts; p++) {
            long v = p;
            s->zmask[p] = 0;
            for (int j = s->d - 1; j >= 0; j--) {
                s->digits[(size_t)p * s->d + j] = (uint8_t)(v % s->base);
                if (v % s->base == 0)
                    s->zmask[p] |= (uint64_t)1 << j;
                v /= s->base;
            }
        }
    }

    s->has_frac = 1;
    HF_CHECK(err, hf_fraction_from_target(&s->frac, &s->t), fail);
    HF_CHECK(err, hf_exact_create(&s->frac, &s->exact), fail);
    HF_CHECK(err, hf_bounds_lower(&s->t, lb), fail);
    s->lb = fmpz_fits_si(lb) ? fmpz_get_si(lb) : LONG_MAX;
    HF_CHECK(err, search_fmpz_str(lb, &s->lb_str), fail);
    long ubl = s->npts;
    if (top) {
        int exact = 0;
        HF_CHECK(err, hf_bounds_upper(&s->t, ub, &exact), fail);
        HF_CHECK(err, search_fmpz_str(ub, &s->ub_str), fail);
        /* UB caps the sizes only when the product head lies inside the span box:
         * otherwise a feasible support in the box may need more atoms than UB. */
        if (fmpz_cmp_si(ub, s->npts) < 0 && product_fits_span(&s->t, span))
            ubl = fmpz_get_si(ub);
    } else {
        s->ub_str = hf_strdup("?");
        if (!s->ub_str) {
            err = HF_ERR_NOMEM;
            goto fail;
        }
    }
    s->first = prune ? s->lb : 1;
    s->last = ubl;
    hf_search_extents(&s->frac, s->qext);
    if (prune) {
        /* widths add under Minkowski sums (MATH 7.4): a span below an extent of Newt(Q)
         * holds no support, whatever the engine */
        long n = hf_search_cone_unknowns(&s->frac, span);
        if (n == 0)
            s->last = s->first - 1;
        if (engine == HF_ENGINE_AUTO)
            engine = n <= HF_SEARCH_CONE_AUTO_MAX ? HF_ENGINE_CONE : HF_ENGINE_LAYERED;
    }
    s->engine = engine;

    if (reg) {
        s->reg = reg;
    } else {
        s->reg = hf_calloc(1, sizeof *s->reg);
        if (!s->reg) {
            err = HF_ERR_NOMEM;
            goto fail;
        }
        s->own_reg = 1;
    }
    if (s->engine == HF_ENGINE_LAYERED)
        HF_CHECK(err, hf_search_layered_init(s), fail);
    if (prune)
        HF_CHECK(err, hf_search_shape_init(s, top), fail);
    if (top)
        HF_CHECK(err, hf_group_create(&s->t, &s->frac, &s->group), fail);
    *out = s;
    goto done;
fail:
    hf_search_destroy(&s);
done:
    fmpz_clear(ub);
    fmpz_clear(lb);
    return err;
}

hf_err_t hf_search_create(const hf_target_t *t, const hf_search_opts_t *opts, hf_search_t **out)
{
    *out = NULL;
    if (!t || !opts)
        return hf_error(HF_ERR_INPUT, "search: missing target or options");
    if (opts->span < 1 || opts->span > HF_SPAN_MAX)
        return hf_error(HF_ERR_INPUT, "span: %d: must be 1..%d", opts->span, HF_SPAN_MAX);
    if (opts->prune != 0 && opts->prune != 1)
        return hf_error(HF_ERR_INPUT, "prune: %d: must be 0 or 1", opts->prune);
    if (opts->engine < HF_ENGINE_AUTO || opts->engine > HF_ENGINE_PLAIN)
        return hf_error(HF_ERR_INPUT, "engine: %d: unknown", (int)opts->engine);
    if (!opts->prune && opts->engine != HF_ENGINE_AUTO && opts->engine != HF_ENGINE_PLAIN)
        return hf_error(HF_ERR_INPUT, "engine: %s: pruning is off, so the engine is plain",
                        hf_engine_name(opts->engine));
    if (opts->max_atoms < 0)
        return hf_error(HF_ERR_INPUT, "max_atoms: %ld: must be >= 0", opts->max_atoms);
    if (t->d < 1 || t->d > HF_D_MAX || t->nheads < 1)
        return hf_error(HF_ERR_INPUT, "search: target %s: needs d in 1..%d and a head", t->name,
                        HF_D_MAX);
    hf_engine_t engine = opts->prune ? opts->engine : HF_ENGINE_PLAIN;
    HF_TRY(hf_search_create_internal(t, opts->span, engine, 1, NULL, out));
    hf_search_t *s = *out;
    s->max_atoms = opts->max_atoms;
    if (opts->max_atoms)
        s->last = opts->max_atoms;
    return HF_OK;
}

void hf_search_destroy(hf_search_t **sp)
{
    if (!sp || !*sp)
        return;
    hf_search_t *s = *sp;
    hf_cone_destroy(&s->cone);
    free(s->combo);
    free(s->cellpart);
    hf_binom_tab_clear(&s->ctab);
    free(s->fkeys);
    free(s->keys);
    free(s->tmp);
    free(s->cand);
    free(s->blocks);
    free(s->units);
    hf_group_destroy(&s->group);
    hf_facememo_clear(&s->memo);
    if (s->faces) {
        for (long i = 0; i < 2 * (s->d - 1) + s->nx; i++)
            hf_exact_destroy(&s->faces[i].exact);
        free(s->faces);
    }
    free(s->xw);
    free(s->xwidth);
    free(s->dots);
    if (s->own_reg)
        hf_fs_registry_destroy(&s->reg);
    free(s->ub_str);
    free(s->lb_str);
    hf_exact_destroy(&s->exact);
    if (s->has_frac)
        hf_fraction_clear(&s->frac);
    free(s->zmask);
    free(s->digits);
    free(s->pw);
    if (s->has_t)
        hf_target_clear(&s->t);
    free(s);
    *sp = NULL;
}

hf_engine_t hf_search_engine(const hf_search_t *s)
{
    return s->engine;
}

void hf_search_describe(const hf_search_t *s, char *buf, size_t n)
{
    if (s->engine == HF_ENGINE_CONE)
        hf_search_cone_describe(s, buf, n);
    else if (s->prep_m > 0 && s->prep_sz > 0) /* the layered engine growing its tables */
        snprintf(buf, n, "engine %s: size %ld: face tables at size %ld of %ld",
                 hf_engine_name(s->engine), s->prep_m, s->prep_sz, s->prep_of);
    else
        snprintf(buf, n, "engine %s", hf_engine_name(s->engine));
}

hf_err_t hf_search_prepare(hf_search_t *s, hf_search_poll_fn poll, void *poll_ctx)
{
    if (s->engine == HF_ENGINE_CONE)
        return hf_search_cone_prepare(s, poll, poll_ctx);
    return HF_OK;
}

const char *hf_search_lb(const hf_search_t *s)
{
    return s->lb_str;
}

const char *hf_search_ub(const hf_search_t *s)
{
    return s->ub_str;
}

long hf_search_first_size(const hf_search_t *s)
{
    return s->first;
}

long hf_search_last_size(const hf_search_t *s)
{
    return s->last;
}

const hf_group_t *hf_search_group(const hf_search_t *s)
{
    return s->group;
}

const hf_search_stats_t *hf_search_stats(const hf_search_t *s)
{
    return &s->stats;
}

void hf_search_set_split(hf_search_t *s, const hf_search_split_t *split)
{
    s->reg->split = split; /* the registry is shared by every sub-search */
}

hf_err_t hf_search_level(hf_search_t *s, long m, long *nunits)
{
    return hf_search_level_polled(s, m, NULL, NULL, nunits);
}

hf_err_t hf_search_level_polled(hf_search_t *s, long m, hf_search_poll_fn poll, void *poll_ctx,
                                long *nunits)
{
    *nunits = 0;
    if (m < 1)
        return hf_error(HF_ERR_INPUT, "search: size %ld: must be >= 1", m);
    s->level_m = -1;
    s->nunits = 0;
    s->nblocks = 0;
    if (m <= s->npts) {
        s->level_poll = poll;
        s->level_poll_ctx = poll_ctx;
        s->prep_m = m;
        s->prep_sz = s->prep_of = 0;
        hf_err_t err = s->engine == HF_ENGINE_CONE      ? hf_search_cone_level(s, m)
                       : s->engine == HF_ENGINE_LAYERED ? hf_search_layered_level(s, m)
                                                        : hf_search_plain_level(s, m);
        s->level_poll = NULL;
        s->level_poll_ctx = NULL;
        s->prep_m = 0;
        if (err != HF_OK) {
            s->nunits = 0;
            s->nblocks = 0;
            return err;
        }
    }
    s->level_m = m;
    *nunits = s->nunits;
    return HF_OK;
}

/* The unit, or an error naming the size and unit when it is not one of the prepared size. */
static hf_err_t unit_of(const hf_search_t *s, long m, long unit, const hf_unit_t **u)
{
    if (m != s->level_m)
        return hf_error(HF_ERR_INPUT, "search: size %ld was not prepared (hf_search_level)", m);
    if (unit < 0 || unit >= s->nunits)
        return hf_error(HF_ERR_INPUT, "search: size %ld: unit %ld: must be 0..%ld", m, unit,
                        s->nunits - 1);
    *u = &s->units[unit];
    return HF_OK;
}

hf_err_t hf_search_unit_cells(const hf_search_t *s, long m, long unit, int64_t *cells)
{
    const hf_unit_t *u = NULL;
    *cells = 1;
    HF_TRY(unit_of(s, m, unit, &u));
    if (s->engine == HF_ENGINE_LAYERED)
        *cells = hf_search_layered_cells(s, u);
    return HF_OK;
}

hf_err_t hf_search_run_cells(hf_search_t *s, long m, long unit, int64_t lo,
                             hf_search_range_t *range, hf_search_found_fn found, void *found_ctx,
                             hf_search_poll_fn poll, void *poll_ctx, long *nodes)
{
    hf_err_t err = HF_OK;
    hf_head_t witness;
    hf_run_t run = {found, found_ctx, poll, poll_ctx, 0, NULL, 0};
    const hf_unit_t *u = NULL;
    if (nodes)
        *nodes = 0;
    HF_TRY(unit_of(s, m, unit, &u));
    if (lo < 0 || range->hi <= lo)
        return hf_error(HF_ERR_INPUT, "search: size %ld: unit %ld: cells %lld..%lld: empty range",
                        m, unit, (long long)lo, (long long)range->hi - 1);
    range->pos = lo;
    if (s->top && unit == hf_search_test_skip_unit)
        return HF_OK;
    HF_TRY(hf_search_scratch(s, m));
    hf_head_init(&witness, s->d, s->dv);
    if (s->top && found)
        run.witness = &witness;
    /* cone and plain units are one cell: cell 0 is the whole unit */
    if (s->engine == HF_ENGINE_LAYERED)
        err = hf_search_layered_run(s, m, u, lo, range, &run);
    else if (lo == 0)
        err = s->engine == HF_ENGINE_CONE ? hf_search_cone_run(s, m, u, &run)
                                          : hf_search_plain_run(s, m, u, &run);
    hf_head_clear(&witness);
    if (nodes)
        *nodes = run.nodes;
    return err;
}

hf_err_t hf_search_run_unit(hf_search_t *s, long m, long unit, hf_search_found_fn found,
                            void *found_ctx, hf_search_poll_fn poll, void *poll_ctx, long *nodes)
{
    int64_t cells;
    if (nodes)
        *nodes = 0;
    HF_TRY(hf_search_unit_cells(s, m, unit, &cells));
    hf_search_range_t range = {0, cells};
    return hf_search_run_cells(s, m, unit, 0, &range, found, found_ctx, poll, poll_ctx, nodes);
}
