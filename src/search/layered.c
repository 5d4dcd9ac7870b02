/* Layered generation along the last coordinate (prune = 1; docs/search.md, rule 2).
 *
 * A support K with top level t along x_{d-1} is L_0 u middle u L_t with L_0, L_t the
 * faces F_{-e}(K), F_{+e}(K) (e = e_{d-1}). By the face rule they represent the limit
 * targets T_{-e}, T_{+e}; those do not depend on q_{d-1}, so with that coordinate
 * dropped they are (d-1)-dimensional targets whose feasible supports (every size,
 * every placement in the box) are found by a recursive search and memoised in FS
 * tables, one per limit target up to T -> alpha T + beta. Candidates of size m are
 * (L_0 in FS_lo, t, L_t in FS_hi at level t, any middle of the right size). */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/bounds.h"
#include "search/search_impl.h"

/* ---------------------------------------------------------------- FS tables */

static void fs_destroy(hf_fs_t *fs)
{
    if (!fs)
        return;
    hf_search_destroy(&fs->sub);
    free(fs->by_size);
    free(fs->idx);
    free(fs->size);
    free(fs->start);
    if (fs->dim >= 1) {
        hf_fraction_clear(&fs->frac);
        hf_target_clear(&fs->target);
    }
    free(fs);
}

void hf_fs_registry_destroy(hf_fs_registry_t **regp)
{
    if (!regp || !*regp)
        return;
    hf_fs_registry_t *reg = *regp;
    /* later entries may hold sub-searches that use earlier ones: free in reverse */
    for (long i = reg->n - 1; i >= 0; i--)
        fs_destroy(reg->fs[i]);
    free(reg->fs);
    free(reg);
    *regp = NULL;
}

static hf_err_t fs_registry_add(hf_fs_registry_t *reg, hf_fs_t *fs)
{
    HF_TRY(HF_GROW(&reg->fs, &reg->cap, reg->n + 1));
    reg->fs[reg->n++] = fs;
    return HF_OK;
}

/* A new, empty table (no sizes done yet). */
static hf_fs_t *fs_new(int dim)
{
    hf_fs_t *fs = hf_calloc(1, sizeof *fs);
    if (!fs)
        return NULL;
    fs->dim = dim;
    fs->lb = 1;
    fs->by_size = hf_calloc(2, sizeof *fs->by_size);
    if (!fs->by_size) {
        free(fs);
        return NULL;
    }
    return fs;
}

/* The limit target along +-e_{d-1} with that coordinate dropped: each head of a limit
 * target lies in one layer (its face), so subtracting its constant x_{d-1} leaves the
 * head's function unchanged. */
static hf_err_t fs_drop_last(const hf_target_t *lim, hf_target_t *out)
{
    int keep[HF_D_MAX];
    for (int j = 0; j < lim->d - 1; j++)
        keep[j] = j;
    return hf_search_target_drop(lim, keep, lim->d - 1, out);
}

/* The FS table of T_{sign e_{d-1}} (found in the registry or added to it). */
static hf_err_t fs_for(hf_search_t *s, int sign, hf_fs_t **out)
{
    hf_err_t err = HF_OK;
    int d = s->d;
    int64_t w[HF_D_MAX] = {0};
    hf_target_t lim;
    hf_target_init_empty(&lim);
    fmpz_t lb;
    hf_fs_t *fs = NULL;
    *out = NULL;
    fmpz_init(lb);
    if (d == 1) {
        /* a 0-dimensional target is a constant: its only support is the single point */
        for (long i = 0; i < s->reg->n; i++)
            if (s->reg->fs[i]->dim == 0) {
                *out = s->reg->fs[i];
                goto done;
            }
        fs = fs_new(0);
        if (!fs) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        HF_CHECK(err, fs_registry_add(s->reg, fs), fail);
        *out = fs;
        goto done;
    }
    w[d - 1] = sign;
    HF_CHECK(err, hf_bounds_limit_target(&s->t, w, &lim), fail);
    fs = fs_new(d - 1);
    if (!fs) {
        err = HF_ERR_NOMEM;
        goto fail;
    }
    fs->dim = 0; /* nothing to clear until target and fraction exist */
    HF_CHECK(err, fs_drop_last(&lim, &fs->target), fail);
    err = hf_fraction_from_target(&fs->frac, &fs->target);
    fs->dim = d - 1;
    if (err != HF_OK)
        goto fail;
    for (long i = 0; i < s->reg->n; i++) {
        hf_fs_t *e = s->reg->fs[i];
        if (e->dim == d - 1 && hf_symmetry_affine_equal(&e->frac, &fs->frac)) {
            fs_destroy(fs);
            *out = e;
            goto done;
        }
    }
    HF_CHECK(err, hf_bounds_lower(&fs->target, lb), fail);
    fs->lb = fmpz_fits_si(lb) ? fmpz_get_si(lb) : LONG_MAX;
    HF_CHECK(err, fs_registry_add(s->reg, fs), fail);
    *out = fs;
    goto done;
fail:
    fs_destroy(fs);
done:
    hf_target_clear(&lim);
    fmpz_clear(lb);
    return err;
}

static hf_err_t fs_push(hf_fs_t *fs, long size, const uint32_t *idx)
{
    if (fs->n + 1 >= fs->cap) {
        long cap = fs->cap ? 2 * fs->cap : 64;
        long *st = hf_realloc(fs->start, (size_t)cap * sizeof *st);
        if (!st)
            return HF_ERR_NOMEM;
        fs->start = st;
        long *sz = hf_realloc(fs->size, (size_t)cap * sizeof *sz);
        if (!sz)
            return HF_ERR_NOMEM;
        fs->size = sz;
        fs->cap = cap;
    }
    HF_TRY(HF_GROW(&fs->idx, &fs->capidx, fs->nidx + size));
    memcpy(fs->idx + fs->nidx, idx, (size_t)size * sizeof *idx);
    fs->start[fs->n] = fs->nidx;
    fs->size[fs->n] = size;
    fs->nidx += size;
    fs->n++;
    return HF_OK;
}

/* Collects the canonical supports of the sub-search, with every translation that fits
 * the box, into the table. */
typedef struct {
    hf_fs_t *fs;
    long base;
    uint32_t *buf;
    long cap;
} fs_collect_t;

static hf_err_t fs_collect(void *vctx, long m, const int64_t *keys, const hf_head_t *witness)
{
    (void)witness;
    fs_collect_t *c = vctx;
    int dim = c->fs->dim;
    int64_t mx[HF_D_MAX], v[HF_D_MAX];
    long pw[HF_D_MAX];
    if (m > c->cap) {
        uint32_t *p = hf_realloc(c->buf, (size_t)m * sizeof *p);
        if (!p)
            return HF_ERR_NOMEM;
        c->buf = p;
        c->cap = m;
    }
    long w = 1;
    for (int j = dim - 1; j >= 0; j--) {
        pw[j] = w;
        w *= c->base;
    }
    for (int j = 0; j < dim; j++) {
        mx[j] = 0;
        v[j] = 0;
        for (long i = 0; i < m; i++)
            if (keys[i * dim + j] > mx[j])
                mx[j] = keys[i * dim + j];
    }
    for (;;) {
        long shift = 0;
        for (int j = 0; j < dim; j++)
            shift += (long)v[j] * pw[j];
        for (long i = 0; i < m; i++) {
            long idx = shift;
            for (int j = 0; j < dim; j++)
                idx += (long)keys[i * dim + j] * pw[j];
            c->buf[i] = (uint32_t)idx;
        }
        HF_TRY(fs_push(c->fs, m, c->buf));
        /* next translation vector, lexicographically */
        int j = dim - 1;
        while (j >= 0 && v[j] == c->base - 1 - mx[j]) {
            v[j] = 0;
            j--;
        }
        if (j < 0)
            break;
        v[j]++;
    }
    return HF_OK;
}

static int fs_cmp(const uint32_t *x, const uint32_t *y, long n)
{
    for (long i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* Merge sort of starts[0..n) (entries of one size) by their key lists. */
static void fs_sort(const uint32_t *idx, long size, long *starts, long *tmp, long n)
{
    if (n < 2)
        return;
    long h = n / 2;
    fs_sort(idx, size, starts, tmp, h);
    fs_sort(idx, size, starts + h, tmp, n - h);
    long i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = fs_cmp(idx + starts[j], idx + starts[i], size) < 0 ? starts[j++] : starts[i++];
    while (i < h)
        tmp[k++] = starts[i++];
    while (j < n)
        tmp[k++] = starts[j++];
    memcpy(starts, tmp, (size_t)n * sizeof *starts);
}

/* Drop the entries from `first` on (a partial size). */
static void fs_truncate(hf_fs_t *fs, long first)
{
    if (fs->n > first)
        fs->nidx = fs->start[first];
    fs->n = first;
}

/* The exchange of a split preparation (hf_search_split_t): this process's entries of size
 * sz from `first` on (those of the sub-units it ran; entries are appended contiguously)
 * are replaced by every process's, in process order. Collective: every process calls it
 * once per size, with its status. */
static hf_err_t fs_exchange(hf_fs_t *fs, const hf_search_split_t *sp, long first, long sz,
                            hf_err_t err)
{
    size_t len = 0, total = 0;
    if (err == HF_OK && fs->n > first)
        len = (size_t)(fs->nidx - fs->start[first]) * sizeof *fs->idx;
    void *all = NULL;
    err = sp->allgather(sp->ctx, err, len ? fs->idx + fs->start[first] : NULL, len, &all, &total);
    fs_truncate(fs, first);
    const uint32_t *p = all;
    size_t entries = total / ((size_t)sz * sizeof *p);
    for (size_t i = 0; err == HF_OK && i < entries; i++)
        err = fs_push(fs, sz, p + i * (size_t)sz);
    free(all);
    return err;
}

/* One range of a sub-unit's cells while a face table grows (hf_search_deal_fn). */
typedef struct {
    hf_fs_t *fs;
    hf_search_t *owner;
    long sz;
    fs_collect_t *col;
    hf_search_poll_fn deal_poll; /* the deal's own poll, then the owner's */
    void *deal_poll_ctx;
} fs_round_t;

static int fs_poll(void *vctx)
{
    fs_round_t *g = vctx;
    hf_search_t *owner = g->owner;
    if (g->deal_poll && g->deal_poll(g->deal_poll_ctx))
        return 1;
    return owner->level_poll && owner->level_poll(owner->level_poll_ctx);
}

static hf_err_t fs_run_cells(void *vctx, long unit, int64_t lo, hf_search_range_t *range,
                             hf_search_poll_fn poll, void *poll_ctx)
{
    fs_round_t *g = vctx;
    g->deal_poll = poll;
    g->deal_poll_ctx = poll_ctx;
    /* between sub-units too: most hold fewer candidates than one poll period; the
     * owner's stop hook reaches the sub-search, so a stop request is seen within one
     * unit's few hundred candidates (the partial size is then dropped) */
    if (fs_poll(g))
        return hf_error(HF_ERR_INTERRUPTED, "search: size %ld: preparation stopped on request",
                        g->owner->prep_m);
    return hf_search_run_cells(g->fs->sub, g->sz, unit, lo, range, fs_collect, g->col, fs_poll, g,
                               NULL);
}

/* Add the entries of size sz (>= lb, dim >= 1): the sub-search's supports of that size,
 * collected with every translation, then sorted by their key lists. The sort makes the
 * size's entry sequence a function of the set of entries alone, so neither the order in
 * which the sub-units ran nor how they were split across processes shows.
 * With a split, the sub-units' cells are dealt out to the processes and the exchange
 * completes the size. Every process then reaches the same exchanges in the same order
 * with its status, whatever failed or stopped before (err: a failure before this size):
 * a process never goes its own way while the others wait. */
static hf_err_t fs_grow_size(hf_fs_t *fs, hf_search_t *owner, long sz, fs_collect_t *col,
                             hf_err_t err)
{
    const hf_search_split_t *sp = owner->reg->split;
    long first = fs->n, nu = 0;
    if (err == HF_OK && !fs->sub)
        err = hf_search_create_internal(&fs->target, owner->span, HF_ENGINE_LAYERED, 0, owner->reg,
                                        &fs->sub);
    /* preparing the sub-search's size may exchange too (its own tables): all or none */
    if (sp)
        err = sp->allgather(sp->ctx, err, NULL, 0, NULL, NULL);
    if (err == HF_OK)
        err = hf_search_level_polled(fs->sub, sz, owner->level_poll, owner->level_poll_ctx, &nu);
    int64_t *cells = err == HF_OK ? hf_malloc((size_t)(nu ? nu : 1) * sizeof *cells) : NULL;
    if (err == HF_OK && !cells)
        err = HF_ERR_NOMEM;
    for (long u = 0; err == HF_OK && u < nu; u++)
        err = hf_search_unit_cells(fs->sub, sz, u, &cells[u]);
    fs_round_t round = {fs, owner, sz, col, NULL, NULL};
    if (sp) {
        err = sp->deal(sp->ctx, err, err == HF_OK ? nu : 0, cells, fs_run_cells, &round);
    } else {
        for (long u = 0; err == HF_OK && u < nu; u++) {
            hf_search_range_t range = {0, cells[u]};
            err = fs_run_cells(&round, u, 0, &range, NULL, NULL);
        }
    }
    free(cells);
    if (sp)
        err = fs_exchange(fs, sp, first, sz, err);
    long n = fs->n - first;
    long *tmp = err == HF_OK ? hf_malloc((size_t)(n ? n : 1) * sizeof *tmp) : NULL;
    if (err == HF_OK && !tmp)
        err = HF_ERR_NOMEM;
    if (sp) /* every process keeps the size, or none does */
        err = sp->allgather(sp->ctx, err, NULL, 0, NULL, NULL);
    if (err != HF_OK) {
        free(tmp);
        fs_truncate(fs, first);
        return err;
    }
    fs_sort(fs->idx, sz, fs->start + first, tmp, n);
    free(tmp);
    return HF_OK;
}

/* Make the table complete for every size <= M (clamped to the box). */
static hf_err_t fs_grow(hf_fs_t *fs, hf_search_t *owner, long M)
{
    hf_err_t err = HF_OK;
    fs_collect_t col = {fs, owner->base, NULL, 0};
    if (M > owner->nlayer)
        M = owner->nlayer;
    if (M <= fs->done)
        return HF_OK;
    long *by = hf_realloc(fs->by_size, (size_t)(M + 2) * sizeof *by);
    if (!by) {
        /* with a split the other processes are about to exchange: fail at their first one */
        long sz = fs->done + 1 > fs->lb ? fs->done + 1 : fs->lb;
        if (owner->reg->split && fs->dim > 0 && sz <= M)
            return fs_grow_size(fs, owner, sz, &col, HF_ERR_NOMEM);
        return HF_ERR_NOMEM;
    }
    fs->by_size = by;
    for (long sz = fs->done + 1; sz <= M; sz++) {
        long first = fs->n;
        if (fs->dim == 0) {
            uint32_t zero = 0;
            if (sz == 1)
                HF_CHECK(err, fs_push(fs, 1, &zero), done);
        } else if (sz >= fs->lb) {
            owner->prep_sz = sz;
            owner->prep_of = M;
            HF_CHECK(err, fs_grow_size(fs, owner, sz, &col, HF_OK), done);
        }
        fs->by_size[sz] = first;
        fs->by_size[sz + 1] = fs->n;
        fs->done = sz;
    }
done:
    free(col.buf);
    return err;
}

static long fs_count(const hf_fs_t *fs, long size)
{
    if (size < 1 || size > fs->done)
        return 0;
    return fs->by_size[size + 1] - fs->by_size[size];
}

/* ---------------------------------------------------------------- set-up */

hf_err_t hf_search_layered_init(hf_search_t *s)
{
    hf_err_t err = HF_OK;
    int d = s->d;
    fmpz_t lb;
    fmpz_init(lb);
    /* T does not depend on q_{d-1} iff its (unique, reduced) fraction has no x_{d-1} */
    s->invariant_last = fmpz_mpoly_degree_si(s->frac.Q, d - 1, s->frac.ctx) <= 0;
    for (int j = 0; j < s->dv; j++)
        if (fmpz_mpoly_degree_si(s->frac.P + j, d - 1, s->frac.ctx) > 0)
            s->invariant_last = 0;
    HF_CHECK(err, fs_for(s, -1, &s->fs_lo), done);
    HF_CHECK(err, fs_for(s, +1, &s->fs_hi), done);
    if (d > 1) {
        s->faces = hf_calloc((size_t)2 * (d - 1), sizeof *s->faces);
        if (!s->faces) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        for (int j = 0; j < d - 1; j++) {
            for (int side = 0; side < 2; side++) {
                int64_t w[HF_D_MAX] = {0};
                hf_target_t lim;
                hf_target_init_empty(&lim);
                hf_fraction_t f;
                w[j] = side ? 1 : -1;
                err = hf_bounds_limit_target(&s->t, w, &lim);
                if (err == HF_OK) {
                    err = hf_fraction_from_target(&f, &lim);
                    if (err == HF_OK)
                        err = hf_exact_create(&f, &s->faces[2 * j + side].exact);
                    hf_fraction_clear(&f);
                }
                if (err == HF_OK)
                    err = hf_bounds_lower(&lim, lb);
                hf_target_clear(&lim);
                if (err != HF_OK)
                    goto done;
                s->faces[2 * j + side].lb = fmpz_fits_si(lb) ? fmpz_get_si(lb) : LONG_MAX;
            }
        }
    }
done:
    fmpz_clear(lb);
    return err;
}

/* ---------------------------------------------------------------- levels */

static hf_err_t layered_add_block(hf_search_t *s, const hf_block_t *b)
{
    HF_TRY(HF_GROW(&s->blocks, &s->capblocks, s->nblocks + 1));
    s->blocks[s->nblocks++] = *b;
    return HF_OK;
}

static long sat_add(long a, long b)
{
    return a > HF_SEARCH_SAT - b ? HF_SEARCH_SAT : a + b;
}

static long sat_mul(long a, long b)
{
    if (a == 0 || b == 0)
        return 0;
    return a > HF_SEARCH_SAT / b ? HF_SEARCH_SAT : a * b;
}

/* Prefix units of one pair (L_0, L_t) whose middles are split (hf_search_split_prefix). */
static long layered_prefix_units(long n, long r, long target)
{
    long c = 0, a_hi = n - r + 1;
    if (r < 1)
        return 0;
    for (long a = 0; a < a_hi; a++)
        c = sat_add(c, r < 2 || hf_search_binom(n - a - 1, r - 1) <= target ? 1 : n - r + 1 - a);
    return c;
}

/* The units of block i for the aim `target`: counted into *count, and appended if add. */
static hf_err_t layered_block_units(hf_search_t *s, long i, long target, int add, long *count)
{
    const hf_block_t *b = &s->blocks[i];
    long cost = hf_search_binom(b->nmid, b->r), ntri = b->n0 * b->nt;
    if (cost <= target) {
        long per = target / cost;
        *count = sat_add(*count, (ntri + per - 1) / per);
        for (long first = 0; add && first < ntri; first += per) {
            hf_unit_t u = {.block = i, .first = first, .count = ntri - first, .npre = 0};
            if (u.count > per)
                u.count = per;
            HF_TRY(hf_search_add_unit(s, &u));
        }
    } else {
        *count = sat_add(*count, sat_mul(layered_prefix_units(b->nmid, b->r, target), ntri));
        for (long tr = 0; add && tr < ntri; tr++)
            HF_TRY(hf_search_split_prefix(s, i, tr, b->nmid, b->r, b->nmid, target));
    }
    return HF_OK;
}

hf_err_t hf_search_layered_level(hf_search_t *s, long m)
{
    hf_fs_t *lo = s->fs_lo, *hi = s->fs_hi;
    long S = s->span;
    /* sizes of the bottom and top layers: the other layer needs at least its LB */
    long need_lo = hi->lb > m ? 0 : m - hi->lb;
    long need_hi = lo->lb > m ? 0 : m - lo->lb;
    if (s->invariant_last)
        need_lo = m;
    if (need_lo >= lo->lb)
        HF_TRY(fs_grow(lo, s, need_lo));
    if (need_hi >= hi->lb)
        HF_TRY(fs_grow(hi, s, need_hi));

    if (s->invariant_last && fs_count(lo, m) > 0) {
        hf_block_t b = {.s0 = m,
                        .t = 0,
                        .st = 0,
                        .r = 0,
                        .lo0 = lo->by_size[m],
                        .n0 = fs_count(lo, m),
                        .lot = 0,
                        .nt = 1,
                        .nmid = 0};
        HF_TRY(layered_add_block(s, &b));
    }
    for (long s0 = lo->lb; s0 <= need_lo && s0 <= lo->done && s0 < m; s0++) {
        long n0 = fs_count(lo, s0);
        if (n0 == 0)
            continue;
        /* the top level is K's width along x_{d-1}, at least Newt(Q)'s (MATH 7.4) */
        for (long t = s->qext[s->d - 1] > 1 ? s->qext[s->d - 1] : 1; t <= S; t++) {
            long nmid = (t - 1) * s->nlayer;
            for (long st = hi->lb; st <= m - s0 && st <= hi->done; st++) {
                long r = m - s0 - st, nt = fs_count(hi, st);
                if (r > nmid || nt == 0)
                    continue;
                hf_block_t b = {.s0 = s0,
                                .t = t,
                                .st = st,
                                .r = r,
                                .lo0 = lo->by_size[s0],
                                .n0 = n0,
                                .lot = hi->by_size[st],
                                .nt = nt,
                                .nmid = nmid};
                HF_TRY(layered_add_block(s, &b));
            }
        }
    }

    /* the aim doubles until a level has at most HF_SEARCH_LAYERED_UNITS_MAX units */
    long target = hf_search_layered_unit_target, count = 0;
    for (;;) {
        count = 0;
        for (long i = 0; i < s->nblocks; i++)
            HF_TRY(layered_block_units(s, i, target, 0, &count));
        if (count <= HF_SEARCH_LAYERED_UNITS_MAX || target > HF_SEARCH_SAT / 2)
            break;
        target *= 2;
    }
    for (long i = 0; i < s->nblocks; i++)
        HF_TRY(layered_block_units(s, i, target, 1, &count));
    return HF_OK;
}

/* ---------------------------------------------------------------- units */

typedef struct {
    hf_search_t *s;
    long m;
    hf_run_t *run;
    const uint32_t *low; /* bottom and top layers merged, in the d-box */
    long nlow;
    long t;
    /* Early face rule on F_{-e_0}: the keys with x_0 = 0 are the first nlow0 of low and
     * the middle points below b0; they are fixed by a prefix of the middle. */
    int check0;
    long nlow0, b0;
    int have_last; /* the prefix last[0..last_q) passed */
    long last_q;
} layered_ctx_t;

static void merge2(const uint32_t *a, long na, const uint32_t *b, long nb, uint32_t *out)
{
    long i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = a[i] < b[j] ? a[i++] : b[j++];
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* Middle point j: level 1 + j % (t - 1) above the (d-1)-point j / (t - 1); increasing. */
static uint32_t layered_mid(const hf_search_t *s, long t, long j)
{
    return (uint32_t)((j / (t - 1)) * s->base + 1 + j % (t - 1));
}

/* Rule 3 for F_{-e_0}(K) before K is built: if K is in canonical position this face is
 * its keys with x_0 = 0, which the bottom and top layers and the middle points below b0
 * fix. Every later middle sharing those first q points has the same face, so a face that
 * is empty (K not canonical) or infeasible skips them all. */
static hf_err_t layered_prefix(layered_ctx_t *c, const long *combo, long r, long *skip, int *ok)
{
    hf_search_t *s = c->s;
    uint32_t *last = s->tmp + 5 * c->m, *pts = s->tmp + 4 * c->m;
    long q = 0;
    *ok = 1;
    while (q < r && combo[q] < c->b0)
        q++;
    if (c->have_last && q == c->last_q) {
        long i = 0;
        while (i < q && last[i] == (uint32_t)combo[i])
            i++;
        if (i == q)
            return HF_OK;
    }
    c->have_last = 0;
    /* the face's points, sorted: low points below the x_0 = 1 boundary, then merged */
    uint32_t *midq = s->tmp + 2 * c->m;
    for (long i = 0; i < q; i++)
        midq[i] = layered_mid(s, c->t, combo[i]);
    merge2(c->low, c->nlow0, midq, q, pts);
    long n = c->nlow0 + q;
    int feasible = 0;
    if (n == 0) {
        s->stats.canonical_rejections++;
    } else if (n >= s->faces[0].lb) {
        /* pts is overwritten by the memo's scratch only in row 3, so it stays valid */
        HF_TRY(hf_search_face_test(s, 0, n, pts, c->m, &feasible));
        if (!feasible)
            s->stats.face_rejections++;
    } else {
        s->stats.face_rejections++;
    }
    if (!feasible) {
        *ok = 0;
        *skip = q - 1;
        return HF_OK;
    }
    for (long i = 0; i < q; i++)
        last[i] = (uint32_t)combo[i];
    c->last_q = q;
    c->have_last = 1;
    return HF_OK;
}

static hf_err_t layered_visit(void *vctx, const long *combo, long *skip)
{
    layered_ctx_t *c = vctx;
    hf_search_t *s = c->s;
    long r = c->m - c->nlow;
    assert(r >= 1 && c->t >= 2); /* middles exist only between two layers */
    uint32_t *mid = s->tmp + 2 * c->m;
    hf_run_t *run = c->run;
    if (run->poll && ++run->visits % HF_SEARCH_VISIT_POLL_EVERY == 0 && run->poll(run->poll_ctx))
        return hf_error(HF_ERR_INTERRUPTED, "search: size %ld: unit abandoned on request", c->m);
    if (c->check0) {
        int ok = 1;
        HF_TRY(layered_prefix(c, combo, r, skip, &ok));
        if (!ok)
            return HF_OK;
    }
    for (long i = 0; i < r; i++)
        mid[i] = layered_mid(s, c->t, combo[i]);
    merge2(c->low, c->nlow, mid, r, s->cand);
    s->face0_done = c->check0;
    hf_err_t err = hf_search_candidate(s, c->m, s->cand, c->run);
    s->face0_done = 0;
    return err;
}

/* Middle points a cell of u fixes beyond u's prefix (0: a cell is a whole triple), and the
 * cells of one triple: all of them, unless the unit would have too many cells. */
static int layered_cell_depth(const hf_search_t *s, const hf_unit_t *u, int64_t *per_triple)
{
    const hf_block_t *b = &s->blocks[u->block];
    for (int depth = (int)(b->r - u->npre); depth > 0; depth--) {
        int64_t e = hf_search_combo_cells(b->nmid, b->r, u->npre, u->pre, depth);
        if (e >= 1 && e < HF_SEARCH_SAT && e <= HF_SEARCH_CELLS_MAX / u->count) {
            *per_triple = e;
            return depth;
        }
    }
    *per_triple = 1;
    return 0;
}

int64_t hf_search_layered_cells(const hf_search_t *s, const hf_unit_t *u)
{
    int64_t e;
    layered_cell_depth(s, u, &e);
    return e * u->count;
}

hf_err_t hf_search_layered_run(hf_search_t *s, long m, const hf_unit_t *u, int64_t lo,
                               hf_search_range_t *range, hf_run_t *run)
{
    const hf_block_t *b = &s->blocks[u->block];
    const hf_fs_t *lo_fs = s->fs_lo, *hi_fs = s->fs_hi;
    uint32_t *l0 = s->tmp, *lt = s->tmp + m;
    int64_t per;
    int depth = layered_cell_depth(s, u, &per);
    HF_TRY(hf_binom_tab_need(&s->ctab, b->nmid, depth));
    /* cell k is triple first + k / per, its (k % per)-th choice of the next depth middles */
    for (long k = (long)(lo / per); k < u->count && (int64_t)k * per < range->hi; k++) {
        long tr = u->first + k;
        int64_t base = (int64_t)k * per, first = lo > base ? lo - base : 0;
        long i0 = b->lo0 + tr / b->nt, it = b->lot + tr % b->nt;
        const uint32_t *e0 = lo_fs->idx + lo_fs->start[i0];
        for (long i = 0; i < b->s0; i++)
            l0[i] = (uint32_t)(e0[i] * s->base);
        if (b->t > 0) {
            const uint32_t *et = hi_fs->idx + hi_fs->start[it];
            for (long i = 0; i < b->st; i++)
                lt[i] = (uint32_t)(et[i] * s->base + b->t);
        }
        /* bottom and top merged once per triple; the third scratch row is reused by
         * the middles, so the merged list is copied back into the first */
        uint32_t *low = s->tmp + 2 * m;
        merge2(l0, b->s0, lt, b->t > 0 ? b->st : 0, low);
        long nlow = b->s0 + (b->t > 0 ? b->st : 0);
        assert(nlow + b->r == m); /* bottom, top and middles make the m points */
        memcpy(l0, low, (size_t)nlow * sizeof *low);
        layered_ctx_t c = {s, m, run, l0, nlow, b->t, 0, 0, 0, 0, 0};
        if (s->d >= 2 && b->t >= 2) {
            /* points with x_0 = 0: d-box indices below pw[0]; middle indices below b0 */
            c.check0 = 1;
            c.b0 = (b->t - 1) * (s->nlayer / s->base);
            while (c.nlow0 < nlow && l0[c.nlow0] < (uint32_t)s->pw[0])
                c.nlow0++;
        }
        if (b->r == 0) {
            range->pos = base;
            memcpy(s->cand, l0, (size_t)m * sizeof *l0);
            HF_TRY(hf_search_candidate(s, m, s->cand, run));
            continue;
        }
        HF_TRY(hf_search_combos_cells(b->nmid, b->r, u->npre, u->pre, depth, base, first, range,
                                      &s->ctab, s->combo, s->cellpart, layered_visit, &c));
    }
    return HF_OK;
}

void hf_search_total_stats(const hf_search_t *s, hf_search_stats_t *st, long *face_tests)
{
    *st = s->stats;
    *face_tests = s->face_exact_tests;
    if (!s->own_reg)
        return;
    for (long i = 0; i < s->reg->n; i++) {
        const hf_search_t *sub = s->reg->fs[i]->sub;
        if (!sub)
            continue;
        st->exact_tests += sub->stats.exact_tests;
        st->face_rejections += sub->stats.face_rejections;
        st->canonical_rejections += sub->stats.canonical_rejections;
        *face_tests += sub->face_exact_tests;
    }
}
