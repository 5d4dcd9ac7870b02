/* The layered engine (engine layered; docs/search.md, "Rule 2"): generation along the last
 * coordinate.
 *
 * A support K with top level t along x_{d-1} is L_0 u middle u L_t with L_0, L_t the
 * faces F_{-e}(K), F_{+e}(K) (e = e_{d-1}). By the face rule they represent the limit
 * targets T_{-e}, T_{+e}; those do not depend on q_{d-1}, so with that coordinate
 * dropped they are (d-1)-dimensional targets whose feasible supports (every size,
 * every placement in the box) are found by a recursive search and memoised in FS
 * tables (layered_tables.c). Candidates of size m are (L_0 in FS_lo, t, L_t in FS_hi at
 * level t, any middle of the right size), cut into blocks, units and cells; the other
 * faces of each candidate are the engine's filter (layered_faces.c). */
#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/layered_impl.h"

/* ---------------------------------------------------------------- state */

/* Room for candidates of m points in the engine's scratch. */
static hf_err_t layered_scratch(hf_layered_t *L, int d, long m)
{
    void **const arrays[] = {(void **)&L->tmp, (void **)&L->fkeys, (void **)&L->cellpart,
                             (void **)&L->dots};
    const size_t elem[] = {6 * sizeof *L->tmp, (size_t)d * sizeof *L->fkeys, sizeof *L->cellpart,
                           sizeof *L->dots};
    return hf_grow_arrays(&L->scratch_cap, m, 4, arrays, elem);
}

static void layered_destroy(hf_search_t *s)
{
    hf_layered_t *L = hf_layered(s);
    if (!L)
        return;
    free(L->blocks);
    hf_facememo_clear(&L->memo);
    hf_layered_faces_clear(L);
    if (L->own_reg)
        hf_fs_registry_destroy(&L->reg);
    hf_binom_tab_clear(&L->ctab);
    free(L->dots);
    free(L->cellpart);
    free(L->fkeys);
    free(L->tmp);
    free(L);
    s->data = NULL;
}

static hf_err_t layered_create(hf_search_t *s, const hf_search_make_t *mk)
{
    int d = s->d;
    hf_layered_t *L = hf_calloc(1, sizeof *L);
    if (!L)
        return HF_ERR_NOMEM;
    s->data = L;
    hf_facememo_init(&L->memo);
    hf_binom_tab_init(&L->ctab);
    /* a sub-search the engine makes for its tables shares them with its maker */
    if (mk->parent && mk->parent->ops == &hf_engine_layered) {
        L->reg = hf_layered(mk->parent)->reg;
    } else {
        if (!(L->reg = hf_calloc(1, sizeof *L->reg)))
            return HF_ERR_NOMEM;
        L->own_reg = 1;
    }
    /* T does not depend on q_{d-1} iff its (unique, reduced) fraction has no x_{d-1} */
    L->invariant_last = fmpz_mpoly_degree_si(s->frac.Q, d - 1, s->frac.ctx) <= 0;
    for (int j = 0; j < s->dv; j++)
        if (fmpz_mpoly_degree_si(s->frac.P + j, d - 1, s->frac.ctx) > 0)
            L->invariant_last = 0;
    HF_TRY(hf_fs_for(s, -1, &L->fs_lo));
    HF_TRY(hf_fs_for(s, +1, &L->fs_hi));
    return hf_layered_faces_init(s);
}

/* ---------------------------------------------------------------- levels */

static hf_err_t layered_add_block(hf_layered_t *L, const hf_block_t *b)
{
    HF_TRY(HF_GROW(&L->blocks, &L->capblocks, L->nblocks + 1));
    L->blocks[L->nblocks++] = *b;
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

/* A prefix class of the middles of one triple becomes a unit (hf_search_split_prefix). */
typedef struct {
    hf_search_t *s;
    long block, triple;
} prefix_ctx_t;

static hf_err_t layered_add_prefix(void *ctx, int npre, const long *pre)
{
    const prefix_ctx_t *c = ctx;
    hf_unit_t u = {
        .block = c->block, .first = c->triple, .count = 1, .npre = npre, .pre = {pre[0], pre[1]}};
    return hf_search_add_unit(c->s, &u);
}

/* The units of block i for the aim `target`: counted into *count, and appended if add. */
static hf_err_t layered_block_units(hf_search_t *s, long i, long target, int add, long *count)
{
    const hf_block_t *b = &hf_layered(s)->blocks[i];
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
        *count = sat_add(*count, sat_mul(hf_search_prefix_count(b->nmid, b->r, target), ntri));
        for (long tr = 0; add && tr < ntri; tr++) {
            prefix_ctx_t c = {s, i, tr};
            HF_TRY(hf_search_split_prefix(b->nmid, b->r, b->nmid, target, layered_add_prefix, &c));
        }
    }
    return HF_OK;
}

static hf_err_t layered_level(hf_search_t *s, long m)
{
    hf_layered_t *L = hf_layered(s);
    hf_fs_t *lo = L->fs_lo, *hi = L->fs_hi;
    long S = s->span;
    L->nblocks = 0;
    /* sizes of the bottom and top layers: the other layer needs at least its LB */
    long need_lo = hi->lb > m ? 0 : m - hi->lb;
    long need_hi = lo->lb > m ? 0 : m - lo->lb;
    if (L->invariant_last)
        need_lo = m;
    if (need_lo >= lo->lb)
        HF_TRY(hf_fs_grow(lo, s, need_lo));
    if (need_hi >= hi->lb)
        HF_TRY(hf_fs_grow(hi, s, need_hi));

    if (L->invariant_last && hf_fs_count(lo, m) > 0) {
        hf_block_t b = {.s0 = m,
                        .t = 0,
                        .st = 0,
                        .r = 0,
                        .lo0 = lo->by_size[m],
                        .n0 = hf_fs_count(lo, m),
                        .lot = 0,
                        .nt = 1,
                        .nmid = 0};
        HF_TRY(layered_add_block(L, &b));
    }
    for (long s0 = lo->lb; s0 <= need_lo && s0 <= lo->done && s0 < m; s0++) {
        long n0 = hf_fs_count(lo, s0);
        if (n0 == 0)
            continue;
        /* the top level is K's width along x_{d-1}, at least Newt(Q)'s (docs/math.md §8.1) */
        for (long t = s->qext[s->d - 1] > 1 ? s->qext[s->d - 1] : 1; t <= S; t++) {
            long nmid = (t - 1) * s->nlayer;
            for (long st = hi->lb; st <= m - s0 && st <= hi->done; st++) {
                long r = m - s0 - st, nt = hf_fs_count(hi, st);
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
                HF_TRY(layered_add_block(L, &b));
            }
        }
    }

    /* the aim doubles until a level has at most HF_SEARCH_LAYERED_UNITS_MAX units */
    long target = hf_knob(HF_KNOB_LAYERED_UNIT_TARGET, HF_SEARCH_LAYERED_UNIT_TARGET), count = 0;
    for (;;) {
        count = 0;
        for (long i = 0; i < L->nblocks; i++)
            HF_TRY(layered_block_units(s, i, target, 0, &count));
        if (count <= HF_SEARCH_LAYERED_UNITS_MAX || target > HF_SEARCH_SAT / 2)
            break;
        target *= 2;
    }
    for (long i = 0; i < L->nblocks; i++)
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
    hf_layered_t *L = hf_layered(s);
    uint32_t *last = L->tmp + 5 * c->m, *pts = L->tmp + 4 * c->m;
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
    uint32_t *midq = L->tmp + 2 * c->m;
    for (long i = 0; i < q; i++)
        midq[i] = layered_mid(s, c->t, combo[i]);
    merge2(c->low, c->nlow0, midq, q, pts);
    long n = c->nlow0 + q;
    int feasible = 0;
    if (n == 0) {
        s->stats.canonical_rejections++;
    } else if (n >= L->faces[0].lb) {
        /* pts is overwritten by the memo's scratch only in row 3, so it stays valid */
        HF_TRY(hf_layered_face_test(s, 0, n, pts, c->m, &feasible));
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
    hf_layered_t *L = hf_layered(s);
    long r = c->m - c->nlow;
    assert(r >= 1 && c->t >= 2); /* middles exist only between two layers */
    uint32_t *mid = L->tmp + 2 * c->m;
    hf_run_t *run = c->run;
    if (++run->visits % HF_SEARCH_VISIT_POLL_EVERY == 0 &&
        hf_search_stop_asked(run->poll, run->poll_ctx, NULL))
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
    L->face0_done = c->check0;
    hf_err_t err = hf_search_candidate(s, c->m, s->cand, c->run);
    L->face0_done = 0;
    return err;
}

/* Middle points a cell of u fixes beyond u's prefix (0: a cell is a whole triple), and the
 * cells of one triple: all of them, unless the unit would have too many cells. */
static int layered_cell_depth(const hf_search_t *s, const hf_unit_t *u, int64_t *per_triple)
{
    const hf_block_t *b = &hf_layered(s)->blocks[u->block];
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

static int64_t layered_cells(const hf_search_t *s, const hf_unit_t *u)
{
    int64_t e;
    layered_cell_depth(s, u, &e);
    return e * u->count;
}

static hf_err_t layered_run(hf_search_t *s, long m, const hf_unit_t *u, int64_t lo,
                            hf_search_range_t *range, hf_run_t *run)
{
    hf_layered_t *L = hf_layered(s);
    HF_TRY(layered_scratch(L, s->d, m));
    const hf_block_t *b = &L->blocks[u->block];
    const hf_fs_t *lo_fs = L->fs_lo, *hi_fs = L->fs_hi;
    uint32_t *l0 = L->tmp, *lt = L->tmp + m;
    int64_t per;
    int depth = layered_cell_depth(s, u, &per);
    HF_TRY(hf_binom_tab_need(&L->ctab, b->nmid, depth));
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
        uint32_t *low = L->tmp + 2 * m;
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
                                      &L->ctab, s->combo, L->cellpart, layered_visit, &c));
    }
    return HF_OK;
}

/* ---------------------------------------------------------------- reports */

static void layered_describe(const hf_search_t *s, char *buf, size_t n)
{
    const hf_layered_t *L = hf_layered(s);
    if (s->prep_m > 0 && L->prep_sz > 0) /* growing its tables */
        snprintf(buf, n, "engine layered: size %ld: face tables at size %ld of %ld", s->prep_m,
                 L->prep_sz, L->prep_of);
    else
        snprintf(buf, n, "engine layered");
}

static void layered_stats(const hf_search_t *s, hf_search_stats_t *st, long *face_tests)
{
    const hf_layered_t *L = hf_layered(s);
    *face_tests += L->face_exact_tests;
    if (!L->own_reg)
        return;
    for (long i = 0; i < L->reg->n; i++) {
        const hf_search_t *sub = L->reg->fs[i]->sub;
        if (!sub)
            continue;
        st->exact_tests += sub->stats.exact_tests;
        st->face_rejections += sub->stats.face_rejections;
        st->canonical_rejections += sub->stats.canonical_rejections;
        *face_tests += hf_layered(sub)->face_exact_tests;
    }
}

const hf_engine_ops_t hf_engine_layered = {.create = layered_create,
                                           .destroy = layered_destroy,
                                           .level = layered_level,
                                           .unit_cells = layered_cells,
                                           .run = layered_run,
                                           .filter = hf_layered_filter,
                                           .describe = layered_describe,
                                           .stats = layered_stats};
