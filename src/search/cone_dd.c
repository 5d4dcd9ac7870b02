/* The cone engine's double description (docs/search.md, "Engine cone", claim 3): the
 * extreme rays of {R : A R >= 0} whose support has at most a bound of box points, by the
 * incremental double description in exact integers (FLINT), dropping every ray whose
 * support on the rows processed so far already exceeds the bound. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <flint/fmpz_mat.h>
#include <flint/fmpz_vec.h>
#include <flint/nmod_mat.h>
#include <flint/ulong_extras.h>

#include "search/cone_impl.h"

/* The rays' vectors, n integers each, in slots that never move: a kept ray keeps its slot
 * from one stage to the next (moving every kept vector at every step was a tenth of a
 * whole run on every rank), a dropped ray's slot is reused by a new ray, and the pool
 * grows by blocks (block k holds 64 * 2^k slots), never by moving what it holds: in this
 * process malloc takes everything from the heap and never returns it (libsuperlu_dist,
 * loaded with PETSc, turns off mmap and trimming when it loads), so a pool grown by
 * realloc could leave its old copy resident (docs/performance.md §16). A ray of a dealt
 * step made by another process may have no slot yet: its vector stays encoded in the
 * step's exchanged records (a chunk, freed when none of its rays is left encoded) until
 * this process needs it (rayset_vector; docs/search.md, "The double description across
 * ranks"). */
typedef struct {
    unsigned char *buf; /* a dealt step's exchanged records */
    long live;          /* rays still encoded in it */
    long words;         /* of each record's zero set (the stage's it was merged into) */
} vchunk_t;

enum { VPOOL_FIRST_LOG = 6, VPOOL_BLOCKS = 56 };

typedef struct {
    long n, cap;             /* integers per vector; slots allocated */
    fmpz *blk[VPOOL_BLOCKS]; /* block k: 64 * 2^k slots of n integers */
    int nblk;
    int big;    /* an integer may have been an mpz: clear them one by one at the end */
    long *free; /* released slots */
    long nfree, capfree;
    vchunk_t *chunk;
    long nchunk, capchunk;
} vpool_t;

static void vpool_clear(vpool_t *P)
{
    /* with no mpz ever stored every integer is a word: one free per block instead of a
     * pass over every slot's integers (tens of millions on one process for chain:d=3
     * span 6) */
    for (int k = 0; k < P->nblk; k++) {
        if (P->big)
            for (long j = 0; j < (P->n << (VPOOL_FIRST_LOG + k)); j++)
                fmpz_clear(P->blk[k] + j);
        free(P->blk[k]);
    }
    free(P->free);
    for (long k = 0; k < P->nchunk; k++)
        free(P->chunk[k].buf);
    free(P->chunk);
    memset(P, 0, sizeof *P);
}

/* One ray fewer encoded in chunk k: the chunk goes when none is left. */
static void vpool_chunk_unref(vpool_t *P, long k)
{
    if (--P->chunk[k].live == 0) {
        free(P->chunk[k].buf);
        P->chunk[k].buf = NULL;
    }
}

/* Slot `slot`'s integers: slots 0..63 are block 0, 64..191 block 1, and so on. */
static inline fmpz *vpool_at(const vpool_t *P, long slot)
{
    uint64_t t = (uint64_t)slot + ((uint64_t)1 << VPOOL_FIRST_LOG);
    int k = 63 - __builtin_clzll(t) - VPOOL_FIRST_LOG;
    return P->blk[k] + (long)(t - ((uint64_t)1 << (k + VPOOL_FIRST_LOG))) * P->n;
}

/* A slot for a new vector: a released one, else a new one (a new block when the last is
 * full; the new integers are 0, as FLINT's vectors start). */
static hf_err_t vpool_take(vpool_t *P, long *slot, long *used)
{
    if (P->nfree > 0) {
        *slot = P->free[--P->nfree];
        return HF_OK;
    }
    if (*used == P->cap) {
        int k = P->nblk;
        if (k == VPOOL_BLOCKS)
            return hf_error(HF_ERR_LIMIT, "cone engine: more rays than the pool can hold");
        long slots = 1L << (VPOOL_FIRST_LOG + k);
        if (!(P->blk[k] = hf_calloc((size_t)(P->n ? slots * P->n : 1), sizeof *P->blk[k])))
            return HF_ERR_NOMEM;
        P->nblk++;
        P->cap += slots;
    }
    *slot = (*used)++;
    return HF_OK;
}

static hf_err_t vpool_release(vpool_t *P, long slot)
{
    HF_TRY(HF_GROW(&P->free, &P->capfree, P->nfree + 1));
    P->free[P->nfree++] = slot;
    return HF_OK;
}

/* Positions < p as a mask of word w. */
static inline uint64_t below_mask(long w, long p)
{
    long lo = w * 64;
    if (p <= lo)
        return 0;
    return p - lo >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (p - lo)) - 1;
}

/* A ray's support on the positions processed so far, as the pair loop and the index use
 * it: folded onto 64 bits (position u sets bit u mod 64), and its first and last
 * positions. Kept from step to step (a ray that stays positive gains the step's position),
 * not rescanned from the zero set at every step. */
typedef struct {
    uint64_t fold;
    int32_t first, last;
} rayends_t;

/* The ends of the support whose zero set is Z, over positions < p. */
static rayends_t ray_ends_of(const uint64_t *Z, long words, long p)
{
    rayends_t e = {0, -1, -1};
    for (long w = 0; w < words; w++) {
        uint64_t x = ~Z[w] & below_mask(w, p);
        if (!x)
            continue;
        e.fold |= x;
        if (e.first < 0)
            e.first = (int32_t)(w * 64 + __builtin_ctzll(x));
        e.last = (int32_t)(w * 64 + 63 - __builtin_clzll(x));
    }
    return e;
}

/* The rays of one stage: where their vectors are (loc: a slot of the pool, or still
 * encoded in a chunk, loc_encoded), the process that computes their signs when the signs
 * are split (owner), zero sets over processed positions, partial support sizes. A zero
 * set has only the words that the processed positions need (stage_words): the bits above
 * are 0, so the tests read fewer words and a step moves fewer bytes (docs/performance.md
 * §16). */
typedef struct {
    vpool_t *pool;
    long *used; /* slots of the pool ever taken (shared by the stages) */
    long words; /* of a zero set at this stage */
    long wmax;  /* words allocated per zero set: those of all positions */
    long count, cap;
    int64_t *loc;
    int *owner;
    uint64_t *zero;
    long *size;
    rayends_t *ends;
} rayset_t;

/* Ray i's vector (its slot must be there: rayset_vector). */
#define RAY(R, i) vpool_at((R)->pool, (R)->loc[i])

/* A ray still encoded, at byte `off` of chunk `chk`, as one negative number: a ray moves 8
 * bytes of where it is instead of 20 at each step (slot, record pointer, chunk). */
enum { LOC_OFF_BITS = 40 };
#define LOC_CHUNKS_MAX (1L << (62 - LOC_OFF_BITS))
#define LOC_OFF_MAX ((int64_t)1 << LOC_OFF_BITS)

static inline int64_t loc_encoded(long chk, size_t off)
{
    return -1 - (int64_t)(((uint64_t)chk << LOC_OFF_BITS) | off);
}

static inline long loc_chunk(int64_t loc)
{
    return (long)((uint64_t)(-1 - loc) >> LOC_OFF_BITS);
}

static inline size_t loc_offset(int64_t loc)
{
    return (size_t)((uint64_t)(-1 - loc) & ((uint64_t)LOC_OFF_MAX - 1));
}

/* The words of a zero set once the positions below p are processed. */
static inline long stage_words(long p)
{
    return p > 64 ? (p + 63) / 64 : 1;
}

static void rayset_clear(rayset_t *R)
{
    free(R->loc);
    free(R->owner);
    free(R->zero);
    free(R->size);
    free(R->ends);
    R->ends = NULL;
    R->loc = NULL;
    R->owner = NULL;
    R->zero = NULL;
    R->size = NULL;
    R->count = R->cap = 0;
}

static hf_err_t rayset_reserve(rayset_t *R, long need)
{
    if (need <= R->cap)
        return HF_OK;
    long cap = R->cap ? R->cap : 64;
    while (cap < need)
        cap *= 2;
    int64_t *lc = hf_realloc(R->loc, (size_t)cap * sizeof *lc);
    if (lc)
        R->loc = lc;
    uint64_t *z = hf_realloc(R->zero, (size_t)cap * R->wmax * sizeof *z);
    if (z)
        R->zero = z;
    long *sz = hf_realloc(R->size, (size_t)cap * sizeof *sz);
    if (sz)
        R->size = sz;
    int *ow = hf_realloc(R->owner, (size_t)cap * sizeof *ow);
    if (ow)
        R->owner = ow;
    rayends_t *es = hf_realloc(R->ends, (size_t)cap * sizeof *es);
    if (es)
        R->ends = es;
    if (!lc || !z || !sz || !ow || !es)
        return HF_ERR_NOMEM;
    R->cap = cap;
    return HF_OK;
}

/* Append a ray whose vector is in slot `slot` of the pool. */
static hf_err_t rayset_keep(rayset_t *R, long slot, int owner, const uint64_t *zero, long size,
                            rayends_t ends)
{
    HF_TRY(rayset_reserve(R, R->count + 1));
    R->ends[R->count] = ends;
    R->loc[R->count] = slot;
    R->owner[R->count] = owner;
    memcpy(R->zero + R->count * R->words, zero, (size_t)R->words * sizeof *zero);
    R->size[R->count] = size;
    R->count++;
    return HF_OK;
}

/* dst = src for n integers: a word copy where both are small (FLINT keeps |x| < 2^62 in the
 * fmpz itself, and the rays' integers nearly always are), fmpz_set where either is an mpz
 * (one in dst is cleared, one in src copied). _fmpz_vec_set's call per integer was a tenth
 * of what every rank repeats at each step. Returns whether an mpz was copied. */
static inline int vec_copy(fmpz *dst, const fmpz *src, long n)
{
    int big = 0;
    for (long i = 0; i < n; i++) {
        if (!COEFF_IS_MPZ(src[i]) && !COEFF_IS_MPZ(dst[i])) {
            dst[i] = src[i];
        } else {
            fmpz_set(dst + i, src + i);
            big |= COEFF_IS_MPZ(dst[i]);
        }
    }
    return big;
}

/* Is x small enough that the products of two such and the sums of up to 2^40 of them stay
 * inside 127 bits (|x| < 2^40, an fmpz that is not an mpz)? */
static inline int small40(fmpz x)
{
    return !COEFF_IS_MPZ(x) && (uint64_t)(x + ((fmpz)1 << 40)) < ((uint64_t)1 << 41);
}

/* s = a . x over the nonzero positions nzi[0..nz): in 128-bit integers when every factor is
 * below 2^40 and the sum fits a word (exact: no product or partial sum can overflow), else
 * with FLINT. */
static inline void dot_row(fmpz_t s, const fmpz *a, const fmpz *x, const long *nzi, long nz)
{
    __int128 acc = 0;
    long t = 0;
    for (; t < nz; t++) {
        fmpz av = a[nzi[t]], xv = x[nzi[t]];
        if (!small40(av) || !small40(xv))
            break;
        acc += (__int128)av * xv;
    }
    if (t == nz && acc >= -((__int128)1 << 61) && acc < ((__int128)1 << 61)) {
        fmpz_set_si(s, (slong)acc);
        return;
    }
    fmpz_zero(s);
    for (t = 0; t < nz; t++)
        fmpz_addmul(s, a + nzi[t], x + nzi[t]);
}

/* n integers from encoded bytes (hf_bytes_put_fmpz's) into v: 0 when the encoding is damaged. */
static int vec_decode(fmpz *v, long n, hf_bytes_reader_t *q, int *big)
{
    for (long i = 0; i < n; i++) {
        const unsigned char *p = q->at;
        /* one-byte varint: a small even code, |x| < 32 (most entries) */
        if (p < q->end && !(*p & 0x81) && !COEFF_IS_MPZ(v[i])) {
            uint64_t z = (uint64_t)*p >> 1;
            v[i] = z & 1 ? -(fmpz)(z >> 1) - 1 : (fmpz)(z >> 1);
            q->at = p + 1;
        } else if (!hf_bytes_get_fmpz(q, v + i)) {
            return 0;
        } else {
            *big |= COEFF_IS_MPZ(v[i]);
        }
    }
    return q->at == q->end;
}

/* A dealt step's record: its cell, the new ray's size and the byte count of its vector
 * (then its zero set and the vector's integers, dd_sink_put). */
#define DD_HEAD 3

/* Ray i's vector into a slot of the pool, decoded from its record if it is still encoded
 * (a ray of a dealt step that this process meets for the first time: its signs, or a pair
 * of its cells). Pointers into the pool stay valid: blocks never move. */
static hf_err_t rayset_vector(rayset_t *R, long i)
{
    if (R->loc[i] >= 0)
        return HF_OK;
    vpool_t *P = R->pool;
    long slot, n = P->n, chk = loc_chunk(R->loc[i]);
    HF_TRY(vpool_take(P, &slot, R->used));
    const unsigned char *rec = P->chunk[chk].buf + loc_offset(R->loc[i]);
    int64_t head[DD_HEAD];
    memcpy(head, rec, sizeof head);
    const unsigned char *at = rec + sizeof head + (size_t)P->chunk[chk].words * sizeof(uint64_t);
    hf_bytes_reader_t q = {at, at + head[2]};
    if (!vec_decode(vpool_at(P, slot), n, &q, &P->big)) {
        vpool_release(P, slot);
        return hf_error(HF_ERR_INTERNAL, "cone engine: a dealt step's record is damaged");
    }
    vpool_chunk_unref(P, chk);
    R->loc[i] = slot;
    return HF_OK;
}

/* Append a new ray (copies v into a slot of the pool) with zero set `zero` over the
 * positions below p and support size `size`. */
static hf_err_t rayset_push(rayset_t *R, const fmpz *v, int owner, const uint64_t *zero, long size,
                            long p)
{
    long slot;
    HF_TRY(rayset_reserve(R, R->count + 1));
    HF_TRY(vpool_take(R->pool, &slot, R->used));
    R->pool->big |= vec_copy(vpool_at(R->pool, slot), v, R->pool->n);
    return rayset_keep(R, slot, owner, zero, size, ray_ends_of(zero, R->words, p));
}

/* A ray leaves the stages: its slot is released, or its chunk has one encoded ray fewer. */
static hf_err_t rayset_drop(const rayset_t *R, long i)
{
    if (R->loc[i] >= 0)
        return vpool_release(R->pool, R->loc[i]);
    vpool_chunk_unref(R->pool, loc_chunk(R->loc[i]));
    return HF_OK;
}

static void vec_primitive(fmpz *v, long n, fmpz_t g)
{
    _fmpz_vec_content(g, v, n);
    if (!fmpz_is_zero(g) && !fmpz_is_one(g))
        _fmpz_vec_scalar_divexact_fmpz(v, v, n, g);
}

/* The rays of a stage bucketed by the first and last position of their support (every
 * support is nonempty once the start rows are processed): a ray whose support lies in a
 * set U sits in a bucket (a, b) with a <= b both in U. */
#define ENDS_INDEX_POSITIONS_MAX 2048 /* the table has positions^2 buckets */
typedef struct {
    long p;      /* positions processed (0: no index) */
    long *start; /* p * p + 1 bucket offsets (key a * p + b) */
    long *ray;   /* ray numbers, bucket by bucket */
    long *key;   /* per ray */
    long start_cap, ray_cap, key_cap;
} ends_index_t;

static void ends_index_clear(ends_index_t *ix)
{
    free(ix->start);
    free(ix->ray);
    free(ix->key);
    memset(ix, 0, sizeof *ix);
}

static hf_err_t ends_index(const rayset_t *cur, long p, ends_index_t *ix)
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

/* ------------------------------------------------------------------ the plan */

/* What every run over the cone shares: the order in which the hyperplanes are processed
 * and the rays of the simplicial start. */
typedef struct {
    const hf_cone_t *c;
    long n, rows, words; /* unknowns, hyperplanes, words of a bitset over positions */
    long *order;         /* position -> hyperplane */
    fmpz *start;         /* n x n: start ray j, positive on position j only, primitive */
} dd_plan_t;

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

/* How a run is watched: its poll hook, called every DD_POLL_WORK pair tests and at every
 * row (so that a stop and the other ranks' requests are answered within milliseconds even
 * in a step of minutes; 2^14 is about 40 us: a steal waits for its victim's poll, at the
 * end of a dealt step, docs/search.md), its progress and its figures. */
#define DD_POLL_WORK (1L << 14)
typedef struct {
    hf_search_poll_fn poll;
    void *poll_ctx;
    long work;            /* pair tests since the last poll */
    hf_cone_info_t *info; /* step, step_rays: progress for reports (may be NULL) */
    long rays_max, adjacencies;
    double pairs; /* (positive, negative) pairs examined: the cost, machine-independent */
    const hf_search_split_t *split; /* steps dealt across processes, or NULL */
    long serial;        /* rays made so far: the next one's owner is serial mod the processes */
    long since_steps;   /* with a split: steps since the processes last agreed, */
    double since_pairs; /* and their pair tests (dd_steps) */
} dd_ctl_t;

/* With a split, the processes agree at least every DD_AGREE_STEPS steps or DD_AGREE_PAIRS
 * pair tests (about a tenth of a second), so that a stop seen by one reaches the others
 * soon; small steps otherwise need no collective call (docs/search.md, "The double
 * description across ranks"). */
#define DD_AGREE_STEPS 1024
#define DD_AGREE_PAIRS (double)(1L << 22)

/* The process that will compute a new ray's signs when they are split: the rays in the
 * order every process makes or merges them, dealt round the processes in turn. */
static int dd_owner(dd_ctl_t *ctl)
{
    long k = ctl->serial++;
    return ctl->split && ctl->split->nranks > 1 ? (int)(k % ctl->split->nranks) : 0;
}

/* Once DD_POLL_WORK pair tests and rays looked at have added up: the poll hook and the
 * stop flag. */
static int dd_pairs_poll(long *work, hf_search_poll_fn poll, void *poll_ctx)
{
    if (*work < DD_POLL_WORK)
        return 0;
    *work = 0;
    return (poll && poll(poll_ctx)) || hf_stop_check(HF_STOP_RAYS) != HF_OK;
}

static hf_err_t dd_stopped(void)
{
    return hf_error(HF_ERR_INTERRUPTED, "cone engine: ray enumeration stopped on request");
}

static int dd_poll(dd_ctl_t *ctl, long work)
{
    ctl->work += work;
    return dd_pairs_poll(&ctl->work, ctl->poll, ctl->poll_ctx);
}

/* The start: the rays of the simplicial cone of the first n rows of the order within the
 * bound (start ray j is positive on position j only). */
static hf_err_t dd_begin(const dd_plan_t *pl, const long *wpos, long bound, dd_ctl_t *ctl,
                         rayset_t *cur)
{
    long n = pl->n, words = pl->words;
    uint64_t *Z = hf_calloc((size_t)words, sizeof *Z);
    if (!Z)
        return HF_ERR_NOMEM;
    hf_err_t err = HF_OK;
    cur->count = 0;
    for (long j = 0; j < n && err == HF_OK; j++) {
        if (wpos[j] > bound)
            continue;
        memset(Z, 0, (size_t)words * sizeof *Z);
        for (long i = 0; i < n; i++)
            if (i != j)
                bit_set(Z, i);
        err = rayset_push(cur, pl->start + j * n, dd_owner(ctl), Z, wpos[j], n);
    }
    free(Z);
    return err;
}

/* One step's shared data: the row at position p, the signs of the rays on it, the lists of
 * positive and negative rays, their folded supports and the index of the rays' ends, and
 * its cells: cell c is the pairs of positive ray posl[c / nblk] with the negative rays of
 * block c % nblk (blk of them each; the last block may be shorter), so cells in increasing
 * order are the serial loop's pairs in order. Every rank builds it alike from the same
 * rays. */
typedef struct {
    long p, R, npos, nneg;
    long blk, nblk, ncells;
    /* the row's nonzero positions, and the row values s of the rays: computed for every
     * ray by one process, for a share of them when the signs are split (the others as the
     * pairs need them, dd_s); sg their signs, have which s are computed */
    const fmpz *a;
    const long *nzi;
    long nz;
    fmpz *s;
    signed char *sg;
    unsigned char *have;
    long slen, sg_cap, have_cap;
    long *posl, *negl;
    uint64_t *sig; /* the negative rays' support folds, in the order of negl */
    long posl_cap, negl_cap, sig_cap;
    long *kept; /* the rays that stay, in order (keeping them) */
    long kept_cap;
    ends_index_t ix;
} dd_step_t;

static void dd_step_clear(dd_step_t *st)
{
    if (st->s)
        _fmpz_vec_clear(st->s, st->slen);
    free(st->posl);
    free(st->negl);
    free(st->sig);
    free(st->kept);
    free(st->sg);
    free(st->have);
    ends_index_clear(&st->ix);
    memset(st, 0, sizeof *st);
}

/* This thread's CPU seconds: the cost of the repeated parts of a step (hf_cone_info_t). */
static double dd_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The row at position p, and its values and signs on the rays that `mine` owns (all of
 * them when mine < 0), their vectors decoded first if they are still encoded; the other
 * rays' values are computed later, as the pairs need them (dd_s), and their signs
 * gathered from their owners (dd_steps). */
static hf_err_t dd_step_signs(const dd_plan_t *pl, long p, rayset_t *cur, long *nzi, dd_step_t *st,
                              int mine, hf_cone_info_t *info)
{
    double t0 = dd_cpu();
    const hf_cone_t *c = pl->c;
    long n = pl->n, R = cur->count;
    st->p = p;
    st->R = R;
    if (R + 1 > st->slen) {
        if (st->s)
            _fmpz_vec_clear(st->s, st->slen);
        st->slen = 2 * (R + 1);
        st->s = _fmpz_vec_init(st->slen);
    }
    HF_TRY(HF_GROW(&st->sg, &st->sg_cap, R + 1));
    HF_TRY(HF_GROW(&st->have, &st->have_cap, R + 1));
    memset(st->have, 0, (size_t)R);
    const fmpz *a = c->A + pl->order[p] * n;
    /* rows have few nonzero entries (Q's terms): the dot products run over those */
    long nz = 0;
    for (long j = 0; j < n; j++)
        if (!fmpz_is_zero(a + j))
            nzi[nz++] = j;
    st->a = a;
    st->nzi = nzi;
    st->nz = nz;
    for (long i = 0; i < R; i++) {
        if (mine >= 0 && cur->owner[i] != mine)
            continue;
        HF_TRY(rayset_vector(cur, i));
        dot_row(st->s + i, a, RAY(cur, i), nzi, nz);
        st->sg[i] = (signed char)fmpz_sgn(st->s + i);
        st->have[i] = 1;
    }
    if (info)
        info->cpu_signs += dd_cpu() - t0;
    return HF_OK;
}

/* Ray i's value on the step's row (computed now if it is not yet: the signs were split;
 * its vector must be decoded, rayset_vector). */
static const fmpz *dd_s(const dd_step_t *st, const rayset_t *cur, long i)
{
    if (!st->have[i]) {
        dot_row(st->s + i, st->a, RAY(cur, i), st->nzi, st->nz);
        st->have[i] = 1;
    }
    return st->s + i;
}

/* The lists of positive and negative rays, their folds, the index and the cells, from
 * the signs of every ray. */
static hf_err_t dd_step_lists(const rayset_t *cur, dd_step_t *st, hf_cone_info_t *info)
{
    double t0 = dd_cpu();
    long R = st->R, p = st->p;
    HF_TRY(ends_index(cur, p, &st->ix));
    /* each ray's support folded onto 64 bits: the popcount of two folds' union never
     * exceeds the positions in the union of the supports, which is at most the union's
     * weight (every position weighs >= 1): a pair whose folds already exceed the bound is
     * out at once */
    st->npos = st->nneg = 0;
    HF_TRY(HF_GROW(&st->sig, &st->sig_cap, R));
    HF_TRY(HF_GROW(&st->posl, &st->posl_cap, R));
    HF_TRY(HF_GROW(&st->negl, &st->negl_cap, R));
    for (long i = 0; i < R; i++) {
        int sg = st->sg[i];
        if (sg > 0) {
            st->posl[st->npos++] = i;
        } else if (sg < 0) { /* in list order: the pair loop reads them in a stream */
            st->sig[st->nneg] = cur->ends[i].fold;
            st->negl[st->nneg++] = i;
        }
    }
    st->blk = hf_cone_cell_negatives > 0 ? hf_cone_cell_negatives : 1;
    st->nblk = st->nneg > 0 ? (st->nneg + st->blk - 1) / st->blk : 1;
    st->ncells = st->npos * st->nblk;
    if (info)
        info->cpu_lists += dd_cpu() - t0;
    return HF_OK;
}

/* Where a step's new rays go: pushed to the next stage (a whole step on this process), or
 * encoded as records for the exchange (a range of a step dealt across ranks). */
typedef struct {
    rayset_t *next; /* or NULL */
    hf_bytes_t b;   /* records: cell, size, zero bitset, vector */
} dd_sink_t;

/* A record: its cell and the size, the zero set, the vector's byte count, then its
 * integers (hf_bytes_put_fmpz): the count lets the merge index the records without decoding
 * them. */
static hf_err_t dd_sink_put(dd_sink_t *k, dd_ctl_t *ctl, long p, long cell, const fmpz *v, long n,
                            const uint64_t *Z, long words, long size)
{
    if (k->next) {
        assert(k->next->words == words);
        return rayset_push(k->next, v, dd_owner(ctl), Z, size, p);
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

/* One step's pairs: the plan, the positions' weights, the bound, the rays and the step. */
typedef struct {
    const dd_plan_t *pl;
    const long *wpos;
    long bound;
    rayset_t *cur; /* its vectors are decoded as the pairs need them */
    const dd_step_t *st;
    dd_ctl_t *ctl;
} dd_job_t;

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
 * adjacency tests, and its new ray if they pass. Kept out of dd_pairs' loop, which then
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
        return dd_stopped();
    if (blocked)
        return HF_OK;
    X->job.ctl->adjacencies++;
    /* both vectors (decoded now if they came encoded from another process), then
     * v = s_i r_j - s_j r_i: zero on Z and on position p, positive elsewhere */
    HF_TRY(rayset_vector(cur, i));
    HF_TRY(rayset_vector(cur, j));
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
        return dd_stopped();
    run_clamp(range, X->job.st, run);
    return HF_OK;
}

/* The pairs of cells lo, lo + 1, ... (while below range->hi, which a steal may lower): the
 * adjacent ones give new rays, in the order of the serial loop. poll is called every
 * DD_POLL_WORK pair tests and rays looked at by the adjacency test, inside a cell too (a
 * cell's adjacency tests can look at every ray many times over). A positive ray's cells
 * run as one loop over its negative rays, with no test per cell, so cells can be small (a
 * short tail at the end of a dealt step) at no cost per cell. */
static hf_err_t dd_pairs(const dd_job_t *job, long lo, hf_search_range_t *range,
                         hf_search_poll_fn poll, void *poll_ctx, dd_sink_t *sink)
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
    long cell = lo;
    while (err == HF_OK && cell < range->hi) {
        long pa = cell / nblk;
        dd_run_t run = {pa * nblk, pa * nblk + nblk, 0};
        run.stop = range->hi < run.stop ? range->hi : run.stop;
        if (!sink->next && hf_cone_test_drop_cell >= cell && hf_cone_test_drop_cell < run.stop) {
            if (cell == hf_cone_test_drop_cell) { /* the planted bug of the tests */
                cell++;
                continue;
            }
            run.stop = hf_cone_test_drop_cell;
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

/* Steps with fewer pair tests than this run whole on every process (no exchange): the
 * deal and the exchange cost tens of microseconds. Tests lower it to deal every step. */
long hf_cone_split_pairs_min = 1L << 16;
long hf_cone_test_drop_cell = -1;
long hf_cone_cell_negatives = 32;

double hf_cone_split_threshold(int nranks)
{
    (void)nranks;
    return (double)hf_cone_split_pairs_min;
}

int hf_cone_split_signs(long rays, int nranks)
{
    return nranks > 1 && (double)rays * (double)rays >= 4.0 * hf_cone_split_threshold(nranks);
}

/* A step dealt across the processes: its cells (dd_step_t) are the cells of one unit. */
typedef struct {
    dd_job_t job;
    dd_sink_t sink;
    hf_search_poll_fn deal_poll; /* the deal's own poll (answers the other processes) */
    void *deal_poll_ctx;
} dd_round_t;

/* The deal's poll, then the run's own (a stop request; progress). */
static int dd_round_poll(void *vctx)
{
    dd_round_t *rd = vctx;
    if (rd->deal_poll && rd->deal_poll(rd->deal_poll_ctx))
        return 1;
    return rd->job.ctl->poll && rd->job.ctl->poll(rd->job.ctl->poll_ctx);
}

static hf_err_t dd_round_run(void *vctx, long unit, int64_t lo, hf_search_range_t *range,
                             hf_search_poll_fn poll, void *poll_ctx)
{
    dd_round_t *rd = vctx;
    (void)unit;
    rd->deal_poll = poll;
    rd->deal_poll_ctx = poll_ctx;
    return dd_pairs(&rd->job, (long)lo, range, dd_round_poll, rd, &rd->sink);
}

/* Every process's new rays of a dealt step into next, in the serial loop's order: each
 * cell was run by one process, whose records of it are in order, and cells in increasing
 * order are the serial loop's pairs in order, so a stable sort by cell restores the order
 * of the whole step. The vectors stay encoded in the records, which become a chunk of the
 * pool (merge takes `all`): a process decodes only those it needs (rayset_vector). */
static hf_err_t dd_merge(dd_ctl_t *ctl, long p, unsigned char *all, size_t len, rayset_t *next)
{
    long words = next->words, nrec = 0, cap = 0, kcap = 0;
    size_t zbytes = (size_t)words * sizeof(uint64_t);
    hf_err_t err = HF_OK;
    const unsigned char **at = NULL;
    int64_t *key = NULL;
    long *perm = NULL;
    hf_bytes_reader_t r = {all, all + len};
    while (r.at < r.end) { /* index the records by their heads */
        int64_t head[DD_HEAD];
        HF_CHECK(err, HF_GROW(&at, &cap, nrec + 1), done);
        HF_CHECK(err, HF_GROW(&key, &kcap, nrec + 1), done);
        at[nrec] = r.at;
        if (!hf_bytes_get(&r, head, sizeof head) || head[2] < 0 ||
            (size_t)(r.end - r.at) < zbytes + (size_t)head[2])
            break;
        r.at += zbytes + (size_t)head[2];
        key[nrec++] = head[0];
    }
    if (r.at != r.end) {
        err = hf_error(HF_ERR_INTERNAL, "cone engine: a dealt step's records are truncated");
        goto done;
    }
    vpool_t *P = next->pool;
    if (P->nchunk >= LOC_CHUNKS_MAX || (int64_t)len >= LOC_OFF_MAX) {
        err = hf_error(HF_ERR_LIMIT,
                       "cone engine: a dealt step's records (%zu bytes, chunk %ld) exceed what a "
                       "ray's location can address",
                       len, P->nchunk);
        goto done;
    }
    perm = hf_malloc((size_t)(nrec ? nrec : 1) * sizeof *perm);
    if (!perm || HF_GROW(&P->chunk, &P->capchunk, P->nchunk + 1) != HF_OK) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    long chk = P->nchunk;
    if (nrec > 0) { /* the chunk holds the records from here on */
        P->chunk[P->nchunk++] = (vchunk_t){all, nrec, words};
        all = NULL;
    }
    /* a radix sort: its cost does not depend on how the ranks' records interleave, so one
     * process's recording measures what a rank of many pays (a comparison sort of the
     * records was two fifths of the merge, docs/performance.md §16) */
    err = hf_sort_keys(key, nrec, perm);
    if (err == HF_OK)
        err = rayset_reserve(next, next->count + nrec);
    if (err != HF_OK) { /* no record became a ray: the chunk goes */
        if (nrec > 0) {
            P->chunk[chk].live = 1;
            vpool_chunk_unref(P, chk);
        }
        goto done;
    }
    for (long k = 0; k < nrec; k++) { /* each ray's fields straight from its record */
        const unsigned char *rec = at[perm[k]];
        int64_t head[DD_HEAD];
        memcpy(head, rec, sizeof head);
        long d = next->count++;
        uint64_t *z = next->zero + d * words;
        memcpy(z, rec + sizeof head, zbytes);
        next->ends[d] = ray_ends_of(z, words, p);
        next->size[d] = head[1];
        next->loc[d] = loc_encoded(chk, (size_t)(rec - P->chunk[chk].buf));
        next->owner[d] = dd_owner(ctl);
    }
done:
    free(all);
    free(perm);
    free(key);
    free(at);
    return err;
}

/* The pairs of one step: on this process alone, or dealt across the processes and
 * exchanged. With a split every process reaches the same collective calls with its status
 * (err: a failure or stop of its own so far), so none waits forever for another. */
static hf_err_t dd_step_pairs(const dd_plan_t *pl, const long *wpos, long bound, rayset_t *cur,
                              const dd_step_t *st, dd_ctl_t *ctl, hf_err_t err, rayset_t *next,
                              int *agreed)
{
    const hf_search_split_t *sp = ctl->split;
    const dd_job_t job = {pl, wpos, bound, cur, st, ctl};
    *agreed = 1;
    if (!sp || err != HF_OK) {
        /* with a split, this process's failure goes to the next step's agreement: its
         * rays may differ from the others', so it cannot tell whether they deal this one */
        *agreed = !sp;
        if (err != HF_OK)
            return err;
        dd_sink_t sink = {.next = next};
        hf_search_range_t range = {0, st->ncells};
        return dd_pairs(&job, 0, &range, ctl->poll, ctl->poll_ctx, &sink);
    }
    /* every process that has not failed holds the same rays, so all take the same path
     * (the step's size decides, and it is the same everywhere); a small step runs here
     * alone, with no collective call (dd_steps) */
    if ((double)st->npos * st->nneg < hf_cone_split_threshold(sp->nranks)) {
        dd_sink_t sink = {.next = next};
        hf_search_range_t range = {0, st->ncells};
        /* a failure here is this process's own: it reaches the others at the next
         * agreement (the caller carries it there) */
        *agreed = 0;
        return dd_pairs(&job, 0, &range, NULL, NULL, &sink);
    }
    /* a dealt step: they agree on going on first */
    HF_TRY(sp->allgather(sp->ctx, err, NULL, 0, NULL, NULL));
    ctl->since_steps = ctl->since_pairs = 0;
    dd_round_t rd = {job, {0}, NULL, NULL};
    int64_t cells = st->ncells;
    err = sp->deal(sp->ctx, HF_OK, 1, &cells, dd_round_run, &rd);
    void *all = NULL;
    size_t alllen = 0;
    err = sp->allgather(sp->ctx, err, rd.sink.b.buf, (size_t)rd.sink.b.len, &all, &alllen);
    free(rd.sink.b.buf);
    double t0 = dd_cpu();
    if (err == HF_OK)
        err = dd_merge(ctl, st->p, all, alllen, next);
    else
        free(all);
    if (ctl->info)
        ctl->info->cpu_merge += dd_cpu() - t0;
    return err;
}

/* Every ray's sign on the step's row, from the processes that own them: each sends the
 * signs of its own rays in the rays' order, one byte each, and the others' are read from
 * the gathered bytes (which come process by process) in the same order. Collective: the
 * result is agreed by every process. */
static hf_err_t dd_gather_signs(const hf_search_split_t *sp, const rayset_t *cur, dd_step_t *st,
                                hf_err_t err)
{
    long R = cur->count, nmine = 0;
    int N = sp->nranks;
    signed char *mine = NULL;
    long *at = NULL;
    void *all = NULL;
    size_t alllen = 0;
    if (err == HF_OK) {
        mine = hf_malloc((size_t)(R ? R : 1));
        at = hf_calloc((size_t)N + 1, sizeof *at);
        if (!mine || !at)
            err = HF_ERR_NOMEM;
    }
    for (long i = 0; err == HF_OK && i < R; i++) {
        at[cur->owner[i] + 1]++;
        if (cur->owner[i] == sp->rank)
            mine[nmine++] = st->sg[i];
    }
    int ok = err == HF_OK;
    err = sp->allgather(sp->ctx, err, ok ? mine : NULL, ok ? (size_t)nmine : 0, &all, &alllen);
    if (err == HF_OK && alllen != (size_t)R)
        err = hf_error(HF_ERR_INTERNAL, "cone engine: %zu signs gathered for %ld rays", alllen, R);
    if (err == HF_OK) {
        const signed char *g = all;
        for (int r = 0; r < N; r++)
            at[r + 1] += at[r];
        for (long i = 0; i < R; i++)
            st->sg[i] = g[at[cur->owner[i]]++];
    }
    free(all);
    free(at);
    free(mine);
    return err;
}

/* Ray i's size after the step: a positive ray's support gains the step's position, whose
 * weight is wp. */
static inline long kept_size(const rayset_t *cur, const signed char *sg, long wp, long i)
{
    return cur->size[i] + (sg[i] > 0 ? wp : 0);
}

/* The rays of cur that stay after the step at position p go to the end of next, in order:
 * a zero ray's zero set gains position p, a positive ray's support grows by it (and may
 * then exceed the bound); the others are dropped, their slots released (the pairs are
 * done with them). Field by field over the list of the kept rays, each pass a stream
 * (docs/performance.md §16). */
static hf_err_t dd_keep(rayset_t *cur, dd_step_t *st, const long *wpos, long p, long bound,
                        rayset_t *next)
{
    long R = st->R, words = cur->words, wn = next->words, nk = 0;
    const signed char *sg = st->sg;
    HF_TRY(HF_GROW(&st->kept, &st->kept_cap, R ? R : 1));
    long *kept = st->kept;
    for (long i = 0; i < R; i++) {
        if (sg[i] < 0 || kept_size(cur, sg, wpos[p], i) > bound)
            HF_TRY(rayset_drop(cur, i));
        else
            kept[nk++] = i;
    }
    HF_TRY(rayset_reserve(next, next->count + nk));
    long b = next->count;
    for (long t = 0; t < nk; t++)
        next->loc[b + t] = cur->loc[kept[t]];
    for (long t = 0; t < nk; t++)
        next->owner[b + t] = cur->owner[kept[t]];
    for (long t = 0; t < nk; t++) {
        long i = kept[t];
        next->size[b + t] = kept_size(cur, sg, wpos[p], i);
    }
    for (long t = 0; t < nk; t++) {
        long i = kept[t];
        rayends_t e = cur->ends[i];
        if (sg[i] > 0) { /* the support gains position p, the last one so far */
            e.fold |= (uint64_t)1 << (p & 63);
            e.last = (int32_t)p;
        }
        next->ends[b + t] = e;
    }
    for (long t = 0; t < nk; t++) {
        long i = kept[t];
        uint64_t *z = next->zero + (b + t) * wn;
        memcpy(z, cur->zero + i * words, (size_t)words * sizeof *z);
        for (long w = words; w < wn; w++) /* position p opens a word */
            z[w] = 0;
        if (sg[i] == 0) /* a zero ray's zero set gains position p */
            bit_set(z, p);
    }
    next->count += nk;
    return HF_OK;
}

/* The rows after the start, one step each (docs/search.md, "Engine cone", claim 3): cur
 * holds the extreme rays of the cone of the rows processed so far with at most `bound` box
 * points in their support, and at the end those of the whole cone. */
static hf_err_t dd_steps(const dd_plan_t *pl, const long *wpos, long bound, dd_ctl_t *ctl,
                         rayset_t *cur)
{
    long n = pl->n;
    hf_err_t err = HF_OK;
    rayset_t next = {.pool = cur->pool, .used = cur->used, .wmax = pl->words};
    dd_step_t st = {0};
    long *nzi = hf_malloc((size_t)(n ? n : 1) * sizeof *nzi);
    if (!nzi) {
        err = HF_ERR_NOMEM;
        if (!ctl->split)
            goto done;
        /* with a split the failure goes to the first step's agreement (or the last one) */
    }
    if (cur->count > ctl->rays_max)
        ctl->rays_max = cur->count;
    for (long p = n; p < pl->rows; p++) {
        if (err == HF_OK && dd_poll(ctl, DD_POLL_WORK))
            err = dd_stopped();
        if (!ctl->split && err != HF_OK)
            goto done;
        /* With a split, the processes agree only at a dealt step, at a gather of signs and
         * after DD_AGREE_STEPS steps or DD_AGREE_PAIRS pair tests (the same on every
         * process: their rays are the same). Every collective call starts with the same
         * agreement on the status (hf_search_split_t), so a process that failed or was
         * stopped goes straight to an agreement: it meets whichever collective call the
         * others make next, and every process returns its status there. */
        if (ctl->split && (err != HF_OK || ctl->since_steps >= DD_AGREE_STEPS ||
                           ctl->since_pairs >= DD_AGREE_PAIRS)) {
            err = ctl->split->allgather(ctl->split->ctx, err, NULL, 0, NULL, NULL);
            ctl->since_steps = ctl->since_pairs = 0;
            if (err != HF_OK)
                goto done;
        }
        ctl->since_steps++;
        next.count = 0;
        next.words = stage_words(p + 1);
        if (ctl->info) { /* the rays this step starts from (the recorder reads it) */
            ctl->info->step = p;
            ctl->info->step_rays = cur->count;
        }
        /* the signs: every ray's on one process; with a split of large steps, each
         * process computes those of the rays it owns and gathers the others' (the
         * gather agrees first, so a process that failed before, whose rays may differ,
         * only agrees: every process makes the same collective calls) */
        const hf_search_split_t *sp = ctl->split;
        int split_signs = sp && sp->nranks > 1 && hf_cone_split_signs(cur->count, sp->nranks);
        if (err == HF_OK)
            err = dd_step_signs(pl, p, cur, nzi, &st, split_signs ? sp->rank : -1, ctl->info);
        if (split_signs) {
            ctl->since_steps = ctl->since_pairs = 0;
            if ((err = dd_gather_signs(sp, cur, &st, err)) != HF_OK)
                goto done; /* agreed by every process */
        }
        if (err == HF_OK)
            err = dd_step_lists(cur, &st, ctl->info);
        if (err == HF_OK) {
            ctl->pairs += (double)st.npos * st.nneg;
            ctl->since_pairs += (double)st.npos * st.nneg;
        }
        if (ctl->info) {
            ctl->info->pairs = ctl->pairs; /* so far: reports, and the recorder's rounds */
            ctl->info->step_pairs = (double)st.npos * st.nneg;
        }
        int agreed = 1;
        err = dd_step_pairs(pl, wpos, bound, cur, &st, ctl, err, &next, &agreed);
        if (err != HF_OK && agreed)
            goto done;
        if (err != HF_OK)
            continue; /* carried to the next step's agreement (or the last one, below) */
        assert(nzi);
        double tk = dd_cpu();
        err = dd_keep(cur, &st, wpos, p, bound, &next); /* their vectors stay where they are */
        if (ctl->info)
            ctl->info->cpu_keep += dd_cpu() - tk;
        if (err != HF_OK) {
            if (!ctl->split)
                goto done;
            continue; /* carried to the next agreement */
        }
        rayset_t tmp = *cur;
        *cur = next;
        next = tmp;
        if (cur->count > ctl->rays_max)
            ctl->rays_max = cur->count;
        if (ctl->info) {
            ctl->info->step = p + 1;
            ctl->info->step_rays = cur->count;
            ctl->info->done_pairs = ctl->pairs;
        }
    }
    /* a failure of this process's own in the last steps reaches every process here */
    if (ctl->split)
        err = ctl->split->allgather(ctl->split->ctx, err, NULL, 0, NULL, NULL);
done:
    dd_step_clear(&st);
    rayset_clear(&next);
    free(nzi);
    return err;
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

/* With a split, a process that failed before the steps' first agreement joins it with
 * its error (every process's first collective call in dd_steps is an agreement), so the
 * others learn of it there instead of waiting for it in a later exchange. */
static hf_err_t dd_carry(const dd_ctl_t *ctl, hf_err_t err)
{
    if (ctl->split)
        err = ctl->split->allgather(ctl->split->ctx, err, NULL, 0, NULL, NULL);
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
        err = dd_begin(pl, wpos, bound, ctl, &cur);
    if (err == HF_OK)
        err = dd_steps(pl, wpos, bound, ctl, &cur);
    else
        err = dd_carry(ctl, err);
    if (err == HF_OK)
        err = dd_finish(pl, &cur, out);
    rayset_clear(&cur);
    vpool_clear(&pool);
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
    /* the tests' knob (docs/search.md): deal smaller steps too, on several ranks */
    const char *env = getenv("HF_CONE_SPLIT_PAIRS_MIN");
    long knob;
    if (env && hf_parse_long(env, -1, 0, LONG_MAX, &knob) == HF_PARSE_OK)
        hf_cone_split_pairs_min = knob;
    env = getenv("HF_CONE_CELL_NEGATIVES");
    if (env && hf_parse_long(env, -1, 1, LONG_MAX, &knob) == HF_PARSE_OK)
        hf_cone_cell_negatives = knob;
    /* with a split this is collective: every process returns the agreed status of the
     * steps (a failure of its own before them is carried to their first agreement); only
     * a failure in storing the rays, after the last agreement, is this process's alone */
    c->info.started = hf_cone_clock();
    c->info.done_pairs = c->info.step_pairs = 0;
    err = dd_plan_init(c, &pl);
    if (err != HF_OK)
        return dd_carry(&ctl, err);
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
