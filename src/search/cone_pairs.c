/* A step's pair tests in the double description (docs/search.md, "Engine cone", claim 3):
 * the index of the rays by the ends of their supports, where the adjacency test looks for
 * a blocking ray, and the (positive, negative) pairs of a range of the step's cells: the
 * folds' filter, the exact support and adjacency tests and the new rays, in the order of
 * the serial loop. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpz_vec.h>

#include "search/cone_dd_impl.h"

void hf_dd_ends_index_clear(ends_index_t *ix)
{
    free(ix->start);
    free(ix->ray);
    free(ix->key);
    memset(ix, 0, sizeof *ix);
}

hf_err_t hf_dd_ends_index(const rayset_t *cur, long p, ends_index_t *ix)
{
    long R = cur->count, nk = p * p;
    ix->p = 0; /* no index: ends_blocked scans every ray */
    /* p^2 buckets pay only when there are rays to sort into them (chain:d=11 at span 3 has
     * 4 rays and 10 241 positions: clearing the buckets at every step was most of its time) */
    if (p > ENDS_INDEX_POSITIONS_MAX || (double)p * (double)p > 64.0 * (double)R + 4096.0)
        return HF_OK;
    HF_TRY(HF_GROW(&ix->start, &ix->start_cap, nk + 1));
    HF_TRY(HF_GROW(&ix->ray, &ix->ray_cap, R ? R : 1));
    HF_TRY(HF_GROW(&ix->key, &ix->key_cap, R ? R : 1));
    ix->p = p;
    memset(ix->start, 0, (size_t)(nk + 1) * sizeof *ix->start);
    for (long k = 0; k < R; k++) {
        long a = cur->ends[k].first, b = cur->ends[k].last;
        assert(a >= 0 && b >= a && b < p);
        ix->key[k] = a * p + b;
        ix->start[ix->key[k] + 1]++;
    }
    for (long t = 0; t < nk; t++)
        ix->start[t + 1] += ix->start[t];
    /* counting sort; start[] is shifted back afterwards */
    for (long k = 0; k < R; k++)
        ix->ray[ix->start[ix->key[k]]++] = k;
    for (long t = nk; t > 0; t--)
        ix->start[t] = ix->start[t - 1];
    ix->start[0] = 0;
    return HF_OK;
}

/* Is there a ray other than i and j whose zero set contains Z (support inside U)? The
 * buckets when there are fewer pairs in U than rays, else every ray. *looked grows by the
 * buckets and rays it may look at (the work between two polls; counted before the scan,
 * so that the scan itself stays as it was). */
static int ends_blocked(const ends_index_t *ix, const rayset_t *cur, const uint64_t *Z,
                        const long *ulist, long nu, long i, long j, long *looked)
{
    long words = cur->words, p = ix->p;
    if (!ix->p || nu * (nu + 1) / 2 >= cur->count) {
        *looked += cur->count;
        for (long k = 0; k < cur->count; k++)
            if (k != i && k != j && bits_subset(Z, cur->zero + k * words, words))
                return 1;
        return 0;
    }
    *looked += nu * (nu + 1) / 2;
    for (long x = 0; x < nu; x++)
        for (long y = x; y < nu; y++) {
            long key = ulist[x] * p + ulist[y];
            *looked += ix->start[key + 1] - ix->start[key];
            for (long t = ix->start[key]; t < ix->start[key + 1]; t++) {
                long k = ix->ray[t];
                if (k != i && k != j && bits_subset(Z, cur->zero + k * words, words))
                    return 1;
            }
        }
    return 0;
}

/* A record: its cell and the size, the zero set, the vector's byte count, then its
 * integers (hf_bytes_put_fmpz): the count lets the merge index the records without decoding
 * them. */
static hf_err_t dd_sink_put(dd_sink_t *k, dd_ctl_t *ctl, long p, long cell, const fmpz *v, long n,
                            const uint64_t *Z, long words, long size)
{
    if (k->next) {
        assert(k->next->words == words);
        return hf_dd_rayset_push(k->next, v, dd_owner(ctl), Z, size, p);
    }
    int64_t head[DD_HEAD] = {cell, size, 0};
    long at = k->b.len;
    HF_TRY(hf_bytes_put(&k->b, head, sizeof head));
    HF_TRY(hf_bytes_put(&k->b, Z, (size_t)words * sizeof *Z));
    long vat = k->b.len;
    for (long i = 0; i < n; i++)
        HF_TRY(hf_bytes_put_fmpz(&k->b, v + i));
    head[2] = k->b.len - vat;
    memcpy(k->b.buf + at, head, sizeof head);
    return HF_OK;
}

/* What one run of pairs works with: the step, its scratch (the new ray, the common zero
 * set, the union's positions) and where new rays go. */
typedef struct {
    dd_job_t job;
    dd_sink_t *sink;
    fmpz *v;
    fmpz_t g;
    uint64_t *Z;
    long *ulist;
    long work; /* pair tests and rays looked at since the last poll */
    hf_search_poll_fn poll;
    void *poll_ctx;
} dd_pairs_t;

/* The pair (i, j) of cell `cell` that passed the folds' filter: the exact support and
 * adjacency tests, and its new ray if they pass. Kept out of hf_dd_pairs' loop, which then
 * runs over the negative rays in registers (most pairs stop at the folds). */
__attribute__((noinline)) static hf_err_t dd_pair(dd_pairs_t *X, long cell, long i, long j)
{
    const dd_plan_t *pl = X->job.pl;
    rayset_t *cur = X->job.cur;
    const dd_step_t *st = X->job.st;
    long n = pl->n, words = cur->words, p = st->p, bound = X->job.bound;
    const uint64_t *zi = cur->zero + i * words, *zj = cur->zero + j * words;
    uint64_t *Z = X->Z;
    long common = 0;
    for (long w = 0; w < words; w++) {
        Z[w] = zi[w] & zj[w];
        common += __builtin_popcountll(Z[w]);
    }
    /* every position weighs >= 1, so p - common positions already bound the size from
     * below: most pairs stop here without touching the weights */
    if (common < n - 2 || p - common > bound)
        return HF_OK;
    long nu = 0, size = 0;
    for (long w = 0; w < words; w++) {
        uint64_t x = ~Z[w] & below_mask(w, p);
        while (x) {
            long u = w * 64 + __builtin_ctzll(x);
            X->ulist[nu++] = u;
            size += X->job.wpos[u];
            x &= x - 1;
        }
    }
    if (size > bound)
        return HF_OK;
    /* Adjacency, combinatorially: i and j span a 2-face iff no other ray's zero set
     * contains Z, i.e. no other ray's support lies in U = supp i u supp j. A ray with that
     * property has its support inside the union of theirs, so at most `size` <= bound
     * points: such rays are never dropped, and the test over the kept rays is exact. Such
     * a ray's first and last support positions are both in U: only those buckets are
     * looked at. */
    int blocked = ends_blocked(&st->ix, cur, Z, X->ulist, nu, i, j, &X->work);
    if (dd_pairs_poll(&X->work, X->poll, X->poll_ctx))
        return hf_dd_stopped();
    if (blocked)
        return HF_OK;
    X->job.ctl->adjacencies++;
    /* both vectors (decoded now if they came encoded from another process), then
     * v = s_i r_j - s_j r_i: zero on Z and on position p, positive elsewhere */
    HF_TRY(hf_dd_rayset_vector(cur, i));
    HF_TRY(hf_dd_rayset_vector(cur, j));
    _fmpz_vec_scalar_mul_fmpz(X->v, RAY(cur, j), n, dd_s(st, cur, i));
    _fmpz_vec_scalar_submul_fmpz(X->v, RAY(cur, i), n, dd_s(st, cur, j));
    vec_primitive(X->v, n, X->g);
    long wn = stage_words(p + 1); /* the next stage's: position p may open a word */
    for (long w = words; w < wn; w++)
        Z[w] = 0;
    bit_set(Z, p);
    return dd_sink_put(X->sink, X->job.ctl, p, cell, X->v, n, Z, wn, size);
}

/* A run: the cells [cell, stop) of one positive ray (posl[pa]), whose first cell is
 * `first`, and its negative rays [.., nend) in list order. */
typedef struct {
    long first, stop, nend;
} dd_run_t;

/* The end of the run's negative rays: before cell `stop`'s. */
static inline long run_nend(const dd_run_t *run, const dd_step_t *st)
{
    long nend = (run->stop - run->first) * st->blk;
    return nend < st->nneg ? nend : st->nneg;
}

/* A steal lowered range->hi below the run's end: the run ends there. */
static inline void run_clamp(const hf_search_range_t *range, const dd_step_t *st, dd_run_t *run)
{
    if (range->hi < run->stop) {
        run->stop = range->hi;
        run->nend = run_nend(run, st);
    }
}

/* The poll of a run, with range->pos at the cell being run (a steal takes only cells
 * after it, and only here or in dd_pair's poll): the stop error, or HF_OK and the run
 * clamped to what the steal left. */
static hf_err_t dd_run_poll(dd_pairs_t *X, hf_search_range_t *range, long pos, dd_run_t *run)
{
    range->pos = pos;
    if (dd_pairs_poll(&X->work, X->poll, X->poll_ctx))
        return hf_dd_stopped();
    run_clamp(range, X->job.st, run);
    return HF_OK;
}

hf_err_t hf_dd_pairs(const dd_job_t *job, long lo, hf_search_range_t *range, hf_search_poll_fn poll,
                     void *poll_ctx, dd_sink_t *sink)
{
    const dd_step_t *st = job->st;
    long n = job->pl->n, rows = job->pl->rows, words = job->pl->words, bound = job->bound;
    dd_pairs_t X = {.job = *job, .sink = sink};
    X.poll = poll;
    X.poll_ctx = poll_ctx;
    X.v = _fmpz_vec_init(n);
    fmpz_init(X.g);
    X.Z = hf_calloc((size_t)words, sizeof *X.Z);
    X.ulist = hf_malloc((size_t)(rows ? rows : 1) * sizeof *X.ulist);
    hf_err_t err = X.Z && X.ulist ? HF_OK : HF_ERR_NOMEM;
    const long *negl = st->negl, *posl = st->posl;
    const uint64_t *sig = st->sig;
    const long nblk = st->nblk, blk = st->blk;
    long cell = lo, drop = hf_knob(HF_KNOB_CONE_DROP_CELL, -1);
    while (err == HF_OK && cell < range->hi) {
        long pa = cell / nblk;
        dd_run_t run = {pa * nblk, pa * nblk + nblk, 0};
        run.stop = range->hi < run.stop ? range->hi : run.stop;
        if (!sink->next && drop >= cell && drop < run.stop) {
            if (cell == drop) { /* the planted bug of the tests */
                cell++;
                continue;
            }
            run.stop = drop;
        }
        run.nend = run_nend(&run, st);
        long i = posl[pa], nb = (cell - run.first) * blk;
        uint64_t fi = job->cur->ends[i].fold;
        do { /* chunks of DD_POLL_WORK pairs, each ended by a poll (the last by the run's) */
            long chunk = DD_POLL_WORK - X.work, e = nb + (chunk > 1 ? chunk : 1), at = nb;
            for (e = e < run.nend ? e : run.nend; nb < e; nb++) {
                if (__builtin_popcountll(fi | sig[nb]) > bound)
                    continue;
                range->pos = run.first + nb / blk;
                if ((err = dd_pair(&X, range->pos, i, negl[nb])) != HF_OK)
                    break;
                run_clamp(range, st, &run); /* stolen in dd_pair's poll */
                e = e < run.nend ? e : run.nend;
            }
            X.work += nb - at;
            if (err == HF_OK)
                err = dd_run_poll(&X, range, nb < run.nend ? run.first + nb / blk : run.stop - 1,
                                  &run);
        } while (err == HF_OK && nb < run.nend);
        cell = run.stop;
    }
    _fmpz_vec_clear(X.v, n);
    fmpz_clear(X.g);
    free(X.ulist);
    free(X.Z);
    return err;
}
