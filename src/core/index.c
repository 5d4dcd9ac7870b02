/* The hash index of core.h: open addressing with linear probing, at most half full, over
 * items the caller stores. Each slot keeps its item's hash, so the index grows (and a probe
 * skips other items) without calling back into the caller. */
#include <stdlib.h>
#include <string.h>

#include "headfuse/core.h"

#define INDEX_SLOTS_MIN 64

void hf_index_init(hf_index_t *x)
{
    memset(x, 0, sizeof *x);
}

void hf_index_clear(hf_index_t *x)
{
    free(x->item);
    free(x->hash);
    hf_index_init(x);
}

void hf_index_reset(hf_index_t *x)
{
    if (x->item)
        for (uint64_t i = 0; i <= x->mask; i++)
            x->item[i] = -1;
    x->n = 0;
}

long hf_index_find(const hf_index_t *x, uint64_t h, hf_index_eq_fn eq, const void *ctx)
{
    if (!x->item)
        return -1;
    for (uint64_t p = h & x->mask;; p = (p + 1) & x->mask) {
        long it = x->item[p];
        if (it < 0)
            return -1;
        if (x->hash[p] == h && eq(ctx, it))
            return it;
    }
}

/* Put (h, item) into the first free slot of its probe sequence. */
static void index_place(uint64_t *hash, long *item, uint64_t mask, uint64_t h, long it)
{
    uint64_t p = h & mask;
    while (item[p] >= 0)
        p = (p + 1) & mask;
    hash[p] = h;
    item[p] = it;
}

hf_err_t hf_index_add(hf_index_t *x, uint64_t h, long item)
{
    uint64_t slots = x->item ? x->mask + 1 : 0;
    if ((uint64_t)(x->n + 1) * 2 > slots) {
        /* double the slots (kept at most half full so that probes stay short) */
        uint64_t ns = slots ? 2 * slots : INDEX_SLOTS_MIN;
        uint64_t *nh = hf_malloc((size_t)ns * sizeof *nh);
        long *ni = hf_malloc((size_t)ns * sizeof *ni);
        if (!nh || !ni) {
            free(nh);
            free(ni);
            return HF_ERR_NOMEM;
        }
        for (uint64_t i = 0; i < ns; i++)
            ni[i] = -1;
        for (uint64_t i = 0; i < slots; i++)
            if (x->item[i] >= 0)
                index_place(nh, ni, ns - 1, x->hash[i], x->item[i]);
        free(x->hash);
        free(x->item);
        x->hash = nh;
        x->item = ni;
        x->mask = ns - 1;
    }
    index_place(x->hash, x->item, x->mask, h, item);
    x->n++;
    return HF_OK;
}
