/* A set of integer vectors (open addressing, linear probing), numbered in insertion
 * order: Minkowski sums, coincident keys of the product head, merged key lists. */
#include <stdlib.h>
#include <string.h>

#include "headfuse/core.h"

static uint64_t ivset_hash(const int64_t *key, int b)
{
    uint64_t h = HF_HASH_INIT;
    for (int j = 0; j < b; j++)
        h = hf_hash_word(h, (uint64_t)key[j]);
    return hf_hash_mix(h);
}

hf_err_t hf_ivset_init(hf_ivset_t *s, int b)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    s->cap = 16;
    s->mask = 31;
    s->keys = hf_malloc((size_t)s->cap * b * sizeof *s->keys);
    s->slots = hf_malloc((size_t)(s->mask + 1) * sizeof *s->slots);
    if (!s->keys || !s->slots) {
        hf_ivset_clear(s);
        return HF_ERR_NOMEM;
    }
    for (uint64_t i = 0; i <= s->mask; i++)
        s->slots[i] = -1;
    return HF_OK;
}

void hf_ivset_clear(hf_ivset_t *s)
{
    free(s->slots);
    free(s->keys);
    s->slots = NULL;
    s->keys = NULL;
    s->n = s->cap = 0;
}

/* Double the table (kept at most half full so probes stay short). */
static int ivset_grow_table(hf_ivset_t *s)
{
    uint64_t mask = 2 * s->mask + 1;
    long *slots = hf_malloc((size_t)(mask + 1) * sizeof *slots);
    if (!slots)
        return 0;
    for (uint64_t i = 0; i <= mask; i++)
        slots[i] = -1;
    for (long i = 0; i < s->n; i++) {
        uint64_t p = ivset_hash(s->keys + i * s->b, s->b) & mask;
        while (slots[p] >= 0)
            p = (p + 1) & mask;
        slots[p] = i;
    }
    free(s->slots);
    s->slots = slots;
    s->mask = mask;
    return 1;
}

/* The slot holding key, or the empty slot where it belongs. */
static uint64_t ivset_slot(const hf_ivset_t *s, const int64_t *key)
{
    int b = s->b;
    uint64_t p = ivset_hash(key, b) & s->mask;
    for (; s->slots[p] >= 0; p = (p + 1) & s->mask)
        if (memcmp(s->keys + s->slots[p] * b, key, (size_t)b * sizeof *key) == 0)
            break;
    return p;
}

long hf_ivset_find(const hf_ivset_t *s, const int64_t *key)
{
    return s->slots[ivset_slot(s, key)];
}

long hf_ivset_insert(hf_ivset_t *s, const int64_t *key, int *added)
{
    int b = s->b;
    uint64_t p = ivset_slot(s, key);
    *added = 0;
    if (s->slots[p] >= 0)
        return s->slots[p];
    if (hf_grow((void **)&s->keys, &s->cap, s->n + 1, (size_t)b * sizeof *s->keys) != HF_OK)
        return -1;
    memcpy(s->keys + s->n * b, key, (size_t)b * sizeof *key);
    long idx = s->n++;
    if ((uint64_t)s->n * 2 > s->mask + 1) {
        if (!ivset_grow_table(s))
            return -1;
    } else {
        s->slots[p] = idx;
    }
    *added = 1;
    return idx;
}
