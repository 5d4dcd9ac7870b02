/* Memo of exact face tests (layered_impl.h): entries in insertion order, their key sets in
 * one pool, found through core's hash index on a 64-bit hash of (face, key set); the key
 * set is compared in full, so a hit is never a guess. At its size limit the memo is
 * emptied: it saves time, it never changes an answer or a node count. */
#include <stdlib.h>
#include <string.h>

#include "search/layered_impl.h"

#define MEMO_ENTRIES_MAX (1L << 21) /* entries before the memo is emptied */
#define MEMO_POOL_MAX (1L << 25)    /* keys in the pool before it is emptied */

void hf_facememo_init(hf_facememo_t *mm)
{
    memset(mm, 0, sizeof *mm);
    hf_index_init(&mm->index);
}

void hf_facememo_clear(hf_facememo_t *mm)
{
    hf_index_clear(&mm->index);
    free(mm->pool);
    free(mm->feasible);
    free(mm->face);
    free(mm->len);
    free(mm->off);
    hf_facememo_init(mm);
}

static uint64_t memo_hash(int face, long len, const uint32_t *idx)
{
    uint64_t h = hf_hash_word(HF_HASH_INIT, ((uint64_t)face << 32) ^ (uint64_t)len);
    for (long i = 0; i < len; i++)
        h = hf_hash_word(h, idx[i]);
    return hf_hash_mix(h);
}

/* A face and key set looked up. */
typedef struct {
    const hf_facememo_t *mm;
    int face;
    long len;
    const uint32_t *idx;
} memo_key_t;

static int memo_eq(const void *ctx, long i)
{
    const memo_key_t *k = ctx;
    const hf_facememo_t *mm = k->mm;
    return mm->len[i] == k->len && mm->face[i] == k->face &&
           memcmp(mm->pool + mm->off[i], k->idx, (size_t)k->len * sizeof *k->idx) == 0;
}

void hf_facememo_get(const hf_facememo_t *mm, int face, long len, const uint32_t *idx, int *found,
                     int *feasible)
{
    memo_key_t k = {mm, face, len, idx};
    long i = hf_index_find(&mm->index, memo_hash(face, len, idx), memo_eq, &k);
    *found = i >= 0;
    if (i >= 0)
        *feasible = mm->feasible[i];
}

hf_err_t hf_facememo_put(hf_facememo_t *mm, int face, long len, const uint32_t *idx, int feasible)
{
    if (mm->npool + len > MEMO_POOL_MAX || mm->n >= MEMO_ENTRIES_MAX) {
        hf_index_reset(&mm->index);
        mm->n = 0;
        mm->npool = 0;
    }
    uint64_t h = memo_hash(face, len, idx);
    memo_key_t k = {mm, face, len, idx};
    if (hf_index_find(&mm->index, h, memo_eq, &k) >= 0)
        return HF_OK;
    void **const arrays[] = {(void **)&mm->off, (void **)&mm->len, (void **)&mm->face,
                             (void **)&mm->feasible};
    const size_t elem[] = {sizeof *mm->off, sizeof *mm->len, sizeof *mm->face,
                           sizeof *mm->feasible};
    HF_TRY(hf_grow_arrays(&mm->cap, mm->n + 1, 4, arrays, elem));
    HF_TRY(HF_GROW(&mm->pool, &mm->cappool, mm->npool + len));
    HF_TRY(hf_index_add(&mm->index, h, mm->n));
    memcpy(mm->pool + mm->npool, idx, (size_t)len * sizeof *idx);
    mm->off[mm->n] = mm->npool;
    mm->len[mm->n] = (int32_t)len;
    mm->face[mm->n] = (int16_t)face;
    mm->feasible[mm->n] = (int8_t)feasible;
    mm->npool += len;
    mm->n++;
    return HF_OK;
}
