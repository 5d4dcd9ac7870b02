/* The double description's ray pool (docs/search.md, "Engine cone", claim 3): the rays'
 * vectors in slots that never move, decoded from a dealt step's records when first needed,
 * and the rays of each stage (where each vector is, its owner, zero set, size and ends;
 * cone_dd_impl.h). */
#include <stdlib.h>
#include <string.h>

#include "search/cone_dd_impl.h"

void hf_dd_vpool_clear(vpool_t *P)
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

void hf_dd_vpool_chunk_unref(vpool_t *P, long k)
{
    if (--P->chunk[k].live == 0) {
        free(P->chunk[k].buf);
        P->chunk[k].buf = NULL;
    }
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

rayends_t hf_dd_ray_ends_of(const uint64_t *Z, long words, long p)
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

void hf_dd_rayset_clear(rayset_t *R)
{
    free(R->loc);
    free(R->owner);
    free(R->zero);
    free(R->size);
    free(R->ends);
    /* empty, no rays: the stage's pool and widths stay */
    *R = (rayset_t){.pool = R->pool, .used = R->used, .words = R->words, .wmax = R->wmax};
}

hf_err_t hf_dd_rayset_reserve(rayset_t *R, long need)
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
    HF_TRY(hf_dd_rayset_reserve(R, R->count + 1));
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

hf_err_t hf_dd_rayset_vector(rayset_t *R, long i)
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
    hf_dd_vpool_chunk_unref(P, chk);
    R->loc[i] = slot;
    return HF_OK;
}

hf_err_t hf_dd_rayset_push(rayset_t *R, const fmpz *v, int owner, const uint64_t *zero, long size,
                           long p)
{
    long slot;
    HF_TRY(hf_dd_rayset_reserve(R, R->count + 1));
    HF_TRY(vpool_take(R->pool, &slot, R->used));
    R->pool->big |= vec_copy(vpool_at(R->pool, slot), v, R->pool->n);
    return rayset_keep(R, slot, owner, zero, size, hf_dd_ray_ends_of(zero, R->words, p));
}

hf_err_t hf_dd_rayset_drop(const rayset_t *R, long i)
{
    if (R->loc[i] >= 0)
        return vpool_release(R->pool, R->loc[i]);
    hf_dd_vpool_chunk_unref(R->pool, loc_chunk(R->loc[i]));
    return HF_OK;
}
