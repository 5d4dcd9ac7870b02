/* The layered engine's tables (layered_impl.h): for the limit targets T_{-e}, T_{+e} along
 * the last coordinate (e = e_{d-1}), with that coordinate dropped, every feasible support of
 * every size and every placement in the box, found by a recursive search and memoised in
 * FS tables, one per limit target up to T -> alpha T + beta, shared by a search and all its
 * sub-searches. A table grows size by size as the engine's sizes need it; with a split its
 * sub-units are dealt across the processes and each size completed by an exchange. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/bounds.h"
#include "headfuse/stop.h"
#include "search/layered_impl.h"

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
    hf_fraction_clear(&fs->frac);
    hf_target_clear(&fs->target);
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
    hf_target_init_empty(&fs->target);
    hf_fraction_init(&fs->frac);
    fs->by_size = hf_calloc(2, sizeof *fs->by_size);
    if (!fs->by_size) {
        free(fs);
        return NULL;
    }
    fs->capby = 2;
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
hf_err_t hf_fs_for(hf_search_t *s, int sign, hf_fs_t **out)
{
    hf_err_t err = HF_OK;
    hf_fs_registry_t *reg = hf_layered(s)->reg;
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
        for (long i = 0; i < reg->n; i++)
            if (reg->fs[i]->dim == 0) {
                *out = reg->fs[i];
                goto done;
            }
        fs = fs_new(0);
        if (!fs) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        HF_CHECK(err, fs_registry_add(reg, fs), fail);
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
    HF_CHECK(err, fs_drop_last(&lim, &fs->target), fail);
    HF_CHECK(err, hf_fraction_from_target(&fs->frac, &fs->target), fail);
    for (long i = 0; i < reg->n; i++) {
        hf_fs_t *e = reg->fs[i];
        if (e->dim == d - 1 && hf_symmetry_affine_equal(&e->frac, &fs->frac)) {
            fs_destroy(fs);
            *out = e;
            goto done;
        }
    }
    HF_CHECK(err, hf_bounds_lower(&fs->target, lb), fail);
    fs->lb = fmpz_fits_si(lb) ? fmpz_get_si(lb) : LONG_MAX;
    HF_CHECK(err, fs_registry_add(reg, fs), fail);
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
    HF_TRY(HF_GROW2(&fs->start, &fs->size, &fs->cap, fs->n + 1));
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

static hf_err_t fs_collect(void *vctx, const hf_found_t *f)
{
    fs_collect_t *c = vctx;
    long m = f->m;
    const int64_t *keys = f->keys;
    int dim = c->fs->dim;
    int64_t mx[HF_D_MAX], v[HF_D_MAX];
    long pw[HF_D_MAX];
    HF_TRY(HF_GROW(&c->buf, &c->cap, m));
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
    return hf_search_stop_asked(g->deal_poll, g->deal_poll_ctx, NULL) ||
           hf_search_stop_asked(owner->level_poll, owner->level_poll_ctx, HF_STOP_TABLES);
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
    const hf_search_split_t *sp = hf_search_split(owner);
    long first = fs->n, nu = 0;
    hf_search_make_t mk = {.parent = owner};
    if (err == HF_OK && !fs->sub)
        err = hf_search_create_internal(&fs->target, owner->span, HF_ENGINE_LAYERED, &mk, &fs->sub);
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

hf_err_t hf_fs_grow(hf_fs_t *fs, hf_search_t *owner, long M)
{
    hf_err_t err = HF_OK;
    hf_layered_t *L = hf_layered(owner);
    fs_collect_t col = {fs, owner->base, NULL, 0};
    if (M > owner->nlayer)
        M = owner->nlayer;
    if (M <= fs->done)
        return HF_OK;
    if (HF_GROW(&fs->by_size, &fs->capby, M + 2) != HF_OK) {
        /* with a split the other processes are about to exchange: fail at their first one */
        long sz = fs->done + 1 > fs->lb ? fs->done + 1 : fs->lb;
        if (hf_search_split(owner) && fs->dim > 0 && sz <= M)
            return fs_grow_size(fs, owner, sz, &col, HF_ERR_NOMEM);
        return HF_ERR_NOMEM;
    }
    for (long sz = fs->done + 1; sz <= M; sz++) {
        long first = fs->n;
        if (fs->dim == 0) {
            uint32_t zero = 0;
            if (sz == 1)
                HF_CHECK(err, fs_push(fs, 1, &zero), done);
        } else if (sz >= fs->lb) {
            L->prep_sz = sz;
            L->prep_of = M;
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

long hf_fs_count(const hf_fs_t *fs, long size)
{
    if (size < 1 || size > fs->done)
        return 0;
    return fs->by_size[size + 1] - fs->by_size[size];
}
