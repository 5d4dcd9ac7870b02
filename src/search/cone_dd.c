/* The cone engine's double description (docs/search.md, "Engine cone", claim 3): the
 * extreme rays of {R : A R >= 0} whose support has at most a bound of box points, by the
 * incremental double description in exact integers (FLINT), dropping every ray whose
 * support on the rows processed so far already exceeds the bound. This file holds the
 * plan (the order of the rows and the simplicial start), a run from start to end and the
 * rays stored canonically; the steps are cone_steps.c, their pairs cone_pairs.c, the
 * exchange across ranks cone_exchange.c and the ray pool cone_pool.c. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>
#include <flint/nmod_mat.h>
#include <flint/ulong_extras.h>

#include "search/cone_dd_impl.h"

/* ------------------------------------------------------------------ the plan */

static void dd_plan_clear(dd_plan_t *pl)
{
    if (pl->start)
        _fmpz_vec_clear(pl->start, pl->n * pl->n);
    free(pl->order);
    memset(pl, 0, sizeof *pl);
}

typedef struct {
    const long *key;
} dd_key_ctx_t;

static int dd_cmp_key(const void *ctx, long a, long b)
{
    const long *key = ((const dd_key_ctx_t *)ctx)->key;
    return key[a] < key[b] ? -1 : key[a] > key[b];
}

/* The hyperplanes by increasing number of nonzero entries (rows of few unknowns, near the
 * box's corners, cut early and keep the intermediate cones small), ties by number. */
static hf_err_t dd_by_sparsity(const hf_cone_t *c, long *byn)
{
    long n = c->n, nh = c->nh;
    long *nnz = hf_malloc((size_t)(nh ? nh : 1) * sizeof *nnz);
    if (!nnz)
        return HF_ERR_NOMEM;
    for (long h = 0; h < nh; h++) {
        nnz[h] = 0;
        for (long j = 0; j < n; j++)
            nnz[h] += !fmpz_is_zero(c->A + h * n + j);
        byn[h] = h;
    }
    dd_key_ctx_t kc = {nnz};
    hf_err_t err = hf_sort(byn, nh, dd_cmp_key, &kc); /* stable: ties by number */
    free(nnz);
    return err;
}

/* The processing order: the first n hyperplanes are linearly independent (chosen greedily
 * in sparsity order, modulo a prime: independence modulo p implies it over Q), the others
 * follow in sparsity order. HF_ERR_INTERNAL when the rows have rank < n: C is pointed
 * (Q R = 0 forces R = 0), so they never do. */
static hf_err_t dd_order(const hf_cone_t *c, const long *byn, long *order)
{
    long n = c->n, nh = c->nh, k = 0, nr = 0;
    hf_err_t err = HF_OK;
    nmod_t mod;
    nmod_init(&mod, n_nextprime(UWORD(1) << 62, 1));
    char *used = hf_calloc((size_t)(nh ? nh : 1), 1);
    mp_limb_t *row = hf_malloc((size_t)(n ? n : 1) * sizeof *row);
    long *pivcol = hf_malloc((size_t)(n ? n : 1) * sizeof *pivcol);
    nmod_mat_t E;
    nmod_mat_init(E, n ? n : 1, n ? n : 1, mod.n);
    if (!used || !row || !pivcol) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < nh && nr < n; i++) {
        long h = byn[i];
        for (long j = 0; j < n; j++)
            row[j] = fmpz_fdiv_ui(c->A + h * n + j, mod.n);
        for (long q = 0; q < nr; q++) {
            mp_limb_t f = row[pivcol[q]];
            if (f)
                for (long j = 0; j < n; j++)
                    row[j] = nmod_sub(row[j], nmod_mul(f, nmod_mat_entry(E, q, j), mod), mod);
        }
        long pc = -1;
        for (long j = 0; j < n && pc < 0; j++)
            if (row[j])
                pc = j;
        if (pc < 0)
            continue;
        mp_limb_t inv = n_invmod(row[pc], mod.n);
        for (long j = 0; j < n; j++)
            nmod_mat_entry(E, nr, j) = nmod_mul(row[j], inv, mod);
        pivcol[nr++] = pc;
        order[k++] = h;
        used[h] = 1;
    }
    if (nr < n) {
        err = hf_error(HF_ERR_INTERNAL,
                       "cone engine: the rows have rank %ld < %ld modulo p (the cone of Q R >= 0 "
                       "is pointed)",
                       nr, n);
        goto done;
    }
    for (long i = 0; i < nh; i++)
        if (!used[byn[i]])
            order[k++] = byn[i];
done:
    nmod_mat_clear(E);
    free(pivcol);
    free(row);
    free(used);
    return err;
}

/* The order, and the start: the rays of the cone of the first n rows are the columns of
 * B^-1 (B those rows), each positive on its own row only. */
static hf_err_t dd_plan_init(const hf_cone_t *c, dd_plan_t *pl)
{
    long n = c->n, nh = c->nh;
    hf_err_t err = HF_OK;
    memset(pl, 0, sizeof *pl);
    pl->c = c;
    pl->n = n;
    pl->rows = nh;
    pl->words = stage_words(nh);
    pl->order = hf_malloc((size_t)(nh ? nh : 1) * sizeof *pl->order);
    long *byn = hf_malloc((size_t)(nh ? nh : 1) * sizeof *byn);
    if (!pl->order || !byn) {
        free(byn);
        dd_plan_clear(pl);
        return HF_ERR_NOMEM;
    }
    HF_CHECK(err, dd_by_sparsity(c, byn), done);
    HF_CHECK(err, dd_order(c, byn, pl->order), done);
    fmpz_mat_t B, Binv;
    fmpz_t den, g;
    fmpz_mat_init(B, n, n);
    fmpz_mat_init(Binv, n, n);
    fmpz_init(den);
    fmpz_init(g);
    for (long i = 0; i < n; i++)
        _fmpz_vec_set(B->rows[i], c->A + pl->order[i] * n, n);
    int ok = fmpz_mat_inv(Binv, den, B);
    pl->start = _fmpz_vec_init(n * n);
    for (long j = 0; j < n && ok; j++) {
        fmpz *v = pl->start + j * n;
        for (long i = 0; i < n; i++)
            fmpz_mul_si(v + i, fmpz_mat_entry(Binv, i, j), fmpz_sgn(den));
        vec_primitive(v, n, g);
    }
    fmpz_clear(g);
    fmpz_clear(den);
    fmpz_mat_clear(Binv);
    fmpz_mat_clear(B);
    if (!ok)
        err = hf_error(HF_ERR_INTERNAL, "cone engine: starting rows are singular");
done:
    free(byn);
    if (err != HF_OK)
        dd_plan_clear(pl);
    return err;
}

/* ------------------------------------------------------------------ one run */

/* Rays found: support bitsets over the cone's hyperplanes (words each), and sizes. */
typedef struct {
    long words, count, cap, cap_size;
    uint64_t *supp;
    long *size;
} dd_found_t;

static void dd_found_clear(dd_found_t *F)
{
    free(F->supp);
    free(F->size);
    F->supp = NULL;
    F->size = NULL;
    F->count = F->cap = F->cap_size = 0;
}

static hf_err_t dd_found_push(dd_found_t *F, const uint64_t *b, long size)
{
    HF_TRY(HF_GROW(&F->supp, &F->cap, (F->count + 1) * F->words));
    HF_TRY(HF_GROW(&F->size, &F->cap_size, F->count + 1));
    memcpy(F->supp + F->count * F->words, b, (size_t)F->words * sizeof *b);
    F->size[F->count++] = size;
    return HF_OK;
}

/* The rays of a finished run: supports over hyperplane numbers, pushed to out. */
static hf_err_t dd_finish(const dd_plan_t *pl, const rayset_t *cur, dd_found_t *out)
{
    long words = pl->words;
    uint64_t *hb = hf_calloc((size_t)words, sizeof *hb);
    if (!hb)
        return HF_ERR_NOMEM;
    hf_err_t err = HF_OK;
    assert(cur->words == stage_words(pl->rows));
    for (long i = 0; i < cur->count && err == HF_OK; i++) {
        const uint64_t *z = cur->zero + i * cur->words;
        memset(hb, 0, (size_t)words * sizeof *hb);
        for (long p = 0; p < pl->rows; p++)
            if (!bit_get(z, p))
                bit_set(hb, pl->order[p]);
        err = dd_found_push(out, hb, cur->size[i]);
    }
    free(hb);
    return err;
}

/* The pruned double description, start to end. */
static hf_err_t dd_solve(const dd_plan_t *pl, long bound, dd_ctl_t *ctl, dd_found_t *out)
{
    long rows = pl->rows, used = 0;
    vpool_t pool = {.n = pl->n};
    rayset_t cur = {.pool = &pool, .used = &used, .words = stage_words(pl->n), .wmax = pl->words};
    long *wpos = hf_malloc((size_t)(rows ? rows : 1) * sizeof *wpos); /* weight by position */
    hf_err_t err = wpos ? HF_OK : HF_ERR_NOMEM;
    for (long p = 0; wpos && p < rows; p++)
        wpos[p] = pl->c->weight[pl->order[p]];
    if (err == HF_OK)
        err = hf_dd_begin(pl, wpos, bound, ctl, &cur);
    if (err == HF_OK)
        err = hf_dd_steps(pl, wpos, bound, ctl, &cur);
    else
        err = hf_dd_carry(ctl, err);
    if (err == HF_OK)
        err = dd_finish(pl, &cur, out);
    hf_dd_rayset_clear(&cur);
    hf_dd_vpool_clear(&pool);
    free(wpos);
    return err;
}

/* ------------------------------------------------------------------ the whole enumeration */

typedef struct {
    const uint64_t *supp;
    const long *size;
    long words;
} dd_sort_ctx_t;

/* Canonical order of rays: support size, then the support bitset's bytes. */
static int dd_cmp_ray(const void *vctx, long a, long b)
{
    const dd_sort_ctx_t *c = vctx;
    if (c->size[a] != c->size[b])
        return c->size[a] < c->size[b] ? -1 : 1;
    return memcmp(c->supp + a * c->words, c->supp + b * c->words,
                  (size_t)c->words * sizeof *c->supp);
}

/* Sort the rays found canonically into c->supp, c->ssize (the table and the units never
 * depend on which task or rank found a ray). A ray found twice is an internal error: the
 * tasks partition the rays. */
static hf_err_t dd_store(hf_cone_t *c, const dd_found_t *F, long bound)
{
    long R = F->count, words = c->words;
    long *perm = hf_malloc((size_t)(R ? R : 1) * sizeof *perm);
    uint64_t *supp = hf_malloc((size_t)(R ? R : 1) * words * sizeof *supp);
    long *ssize = hf_malloc((size_t)(R ? R : 1) * sizeof *ssize);
    hf_err_t err = perm && supp && ssize ? HF_OK : HF_ERR_NOMEM;
    dd_sort_ctx_t sc = {F->supp, F->size, words};
    for (long i = 0; perm && i < R; i++)
        perm[i] = i;
    if (err == HF_OK)
        err = hf_sort(perm, R, dd_cmp_ray, &sc);
    for (long i = 0; err == HF_OK && i < R; i++) {
        if (i > 0 && dd_cmp_ray(&sc, perm[i - 1], perm[i]) == 0)
            err = hf_error(HF_ERR_INTERNAL, "cone engine: a ray was found by two tasks");
        memcpy(supp + i * words, F->supp + perm[i] * words, (size_t)words * sizeof *supp);
        ssize[i] = F->size[perm[i]];
    }
    free(perm);
    if (err != HF_OK) {
        free(supp);
        free(ssize);
        return err;
    }
    free(c->supp);
    free(c->ssize);
    c->supp = supp;
    c->ssize = ssize;
    c->nrays = R;
    c->bound = bound;
    c->info.rays = R;
    c->info.bound = bound;
    return HF_OK;
}

hf_err_t hf_cone_rays(hf_cone_t *c, long bound, const hf_search_split_t *split,
                      hf_search_poll_fn poll, void *poll_ctx)
{
    hf_err_t err = HF_OK;
    dd_plan_t pl;
    dd_found_t F = {.words = c->words};
    dd_ctl_t ctl = {.poll = poll, .poll_ctx = poll_ctx, .info = &c->info, .split = split};
    /* with a split this is collective: every process returns the agreed status of the
     * steps (a failure of its own before them is carried to their first agreement); only
     * a failure in storing the rays, after the last agreement, is this process's alone */
    c->info.started = hf_cone_clock();
    c->info.done_pairs = c->info.step_pairs = 0;
    err = dd_plan_init(c, &pl);
    if (err != HF_OK)
        return hf_dd_carry(&ctl, err);
    err = dd_solve(&pl, bound, &ctl, &F);
    c->info.rays_max = ctl.rays_max;
    c->info.adjacencies = ctl.adjacencies;
    c->info.pairs = ctl.pairs;
    if (err == HF_OK)
        err = dd_store(c, &F, bound);
    dd_plan_clear(&pl);
    dd_found_clear(&F);
    return err;
}
