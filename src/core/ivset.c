/* A set of integer vectors, numbered in insertion order (core's hash index over the
 * vectors): Minkowski sums, coincident keys of the product head, merged key lists. */
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

/* The key of a lookup, for the index's comparison. */
typedef struct {
    const hf_ivset_t *s;
    const int64_t *key;
} ivset_key_t;

static int ivset_eq(const void *ctx, long item)
{
    const ivset_key_t *k = ctx;
    int b = k->s->b;
    return memcmp(k->s->keys + item * b, k->key, (size_t)b * sizeof *k->key) == 0;
}

hf_err_t hf_ivset_init(hf_ivset_t *s, int b)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    hf_index_init(&s->index);
    return HF_OK; /* nothing allocated before the first vector */
}

void hf_ivset_clear(hf_ivset_t *s)
{
    hf_index_clear(&s->index);
    free(s->keys);
    s->keys = NULL;
    s->n = s->cap = 0;
}

long hf_ivset_find(const hf_ivset_t *s, const int64_t *key)
{
    ivset_key_t k = {s, key};
    return hf_index_find(&s->index, ivset_hash(key, s->b), ivset_eq, &k);
}

long hf_ivset_insert(hf_ivset_t *s, const int64_t *key, int *added)
{
    int b = s->b;
    ivset_key_t k = {s, key};
    uint64_t h = ivset_hash(key, b);
    *added = 0;
    long found = hf_index_find(&s->index, h, ivset_eq, &k);
    if (found >= 0)
        return found;
    if (hf_grow((void **)&s->keys, &s->cap, s->n + 1, (size_t)b * sizeof *s->keys) != HF_OK)
        return -1;
    memcpy(s->keys + s->n * b, key, (size_t)b * sizeof *key);
    if (hf_index_add(&s->index, h, s->n) != HF_OK)
        return -1;
    *added = 1;
    return s->n++;
}
