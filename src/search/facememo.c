/* Memo of exact face tests: open addressing on a 64-bit hash of (face, key set), with
 * the key set stored and compared in full, so a hit is never a guess. When the table
 * reaches its size limit it is emptied: the memo saves time, it never changes an
 * answer or a node count. */
#include <stdlib.h>
#include <string.h>

#include "search/search_impl.h"

#define MEMO_SLOTS_MAX (1L << 22)
#define MEMO_POOL_MAX (1L << 25)

void hf_facememo_init(hf_facememo_t *mm)
{
    memset(mm, 0, sizeof *mm);
}

void hf_facememo_clear(hf_facememo_t *mm)
{
    free(mm->pool);
    free(mm->feasible);
    free(mm->face);
    free(mm->len);
    free(mm->off);
    free(mm->hash);
    hf_facememo_init(mm);
}

static uint64_t memo_hash(int face, long len, const uint32_t *idx)
{
    uint64_t h = hf_hash_word(HF_HASH_INIT, ((uint64_t)face << 32) ^ (uint64_t)len);
    for (long i = 0; i < len; i++)
        h = hf_hash_word(h, idx[i]);
    return hf_hash_mix(h) | 1; /* 0 marks an empty slot */
}

static long memo_find(const hf_facememo_t *mm, uint64_t h, int face, long len, const uint32_t *idx)
{
    long mask = mm->nslots - 1;
    for (long i = (long)(h & (uint64_t)mask);; i = (i + 1) & mask) {
        if (mm->hash[i] == 0)
            return -1 - i;
        if (mm->hash[i] == h && mm->len[i] == len && mm->face[i] == face &&
            memcmp(mm->pool + mm->off[i], idx, (size_t)len * sizeof *idx) == 0)
            return i;
    }
}

void hf_facememo_get(const hf_facememo_t *mm, int face, long len, const uint32_t *idx, int *found,
                     int *feasible)
{
    *found = 0;
    if (mm->nslots == 0)
        return;
    long i = memo_find(mm, memo_hash(face, len, idx), face, len, idx);
    if (i >= 0) {
        *found = 1;
        *feasible = mm->feasible[i];
    }
}

/* Make room for one more entry of len keys: grow the table, or empty it at the limit. */
static hf_err_t memo_room(hf_facememo_t *mm, long len)
{
    if (mm->npool + len > MEMO_POOL_MAX ||
        (2 * (mm->nused + 1) > mm->nslots && mm->nslots >= MEMO_SLOTS_MAX)) {
        memset(mm->hash, 0, (size_t)mm->nslots * sizeof *mm->hash);
        mm->nused = 0;
        mm->npool = 0;
    }
    HF_TRY(HF_GROW(&mm->pool, &mm->cappool, mm->npool + len));
    if (2 * (mm->nused + 1) <= mm->nslots)
        return HF_OK;
    long n = mm->nslots ? 2 * mm->nslots : 1024;
    hf_facememo_t nw;
    hf_facememo_init(&nw);
    nw.nslots = n;
    nw.hash = hf_calloc((size_t)n, sizeof *nw.hash);
    nw.off = hf_malloc((size_t)n * sizeof *nw.off);
    nw.len = hf_malloc((size_t)n * sizeof *nw.len);
    nw.face = hf_malloc((size_t)n * sizeof *nw.face);
    nw.feasible = hf_malloc((size_t)n * sizeof *nw.feasible);
    if (!nw.hash || !nw.off || !nw.len || !nw.face || !nw.feasible) {
        hf_facememo_clear(&nw);
        return HF_ERR_NOMEM;
    }
    for (long i = 0; i < mm->nslots; i++) {
        if (mm->hash[i] == 0)
            continue;
        long j = (long)(mm->hash[i] & (uint64_t)(n - 1));
        while (nw.hash[j] != 0)
            j = (j + 1) & (n - 1);
        nw.hash[j] = mm->hash[i];
        nw.off[j] = mm->off[i];
        nw.len[j] = mm->len[i];
        nw.face[j] = mm->face[i];
        nw.feasible[j] = mm->feasible[i];
    }
    nw.nused = mm->nused;
    nw.pool = mm->pool;
    nw.npool = mm->npool;
    nw.cappool = mm->cappool;
    mm->pool = NULL;
    hf_facememo_clear(mm);
    *mm = nw;
    return HF_OK;
}

hf_err_t hf_facememo_put(hf_facememo_t *mm, int face, long len, const uint32_t *idx, int feasible)
{
    HF_TRY(memo_room(mm, len));
    uint64_t h = memo_hash(face, len, idx);
    long i = memo_find(mm, h, face, len, idx);
    if (i >= 0)
        return HF_OK;
    i = -1 - i;
    memcpy(mm->pool + mm->npool, idx, (size_t)len * sizeof *idx);
    mm->hash[i] = h;
    mm->off[i] = mm->npool;
    mm->len[i] = (int32_t)len;
    mm->face[i] = (int16_t)face;
    mm->feasible[i] = (int8_t)feasible;
    mm->npool += len;
    mm->nused++;
    return HF_OK;
}
