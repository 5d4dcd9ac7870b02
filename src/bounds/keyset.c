/* A hash set of integer key vectors (open addressing, linear probing), used to
 * enumerate Minkowski sums and to merge coincident keys of the product head; a merge
 * sort with a context argument (qsort has none in C11) and its lexicographic order of
 * integer rows. */
#include <stdlib.h>
#include <string.h>

#include "bounds/bounds_impl.h"

static uint64_t keyset_hash(const int64_t *key, int b)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int j = 0; j < b; j++) {
        h ^= (uint64_t)key[j];
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 29;
    }
    return h ^ (h >> 32);
}

hf_err_t hf_bounds_keyset_init(hf_bounds_keyset_t *s, int b)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    s->cap = 16;
    s->mask = 31;
    s->keys = hf_malloc((size_t)s->cap * b * sizeof *s->keys);
    s->slots = hf_malloc((size_t)(s->mask + 1) * sizeof *s->slots);
    if (!s->keys || !s->slots) {
        hf_bounds_keyset_clear(s);
        return HF_ERR_NOMEM;
    }
    for (uint64_t i = 0; i <= s->mask; i++)
        s->slots[i] = -1;
    return HF_OK;
}

void hf_bounds_keyset_clear(hf_bounds_keyset_t *s)
{
    free(s->slots);
    free(s->keys);
    s->slots = NULL;
    s->keys = NULL;
    s->n = s->cap = 0;
}

/* Double the table (kept at most half full so probes stay short). */
static int keyset_grow_table(hf_bounds_keyset_t *s)
{
    uint64_t mask = 2 * s->mask + 1;
    long *slots = hf_malloc((size_t)(mask + 1) * sizeof *slots);
    if (!slots)
        return 0;
    for (uint64_t i = 0; i <= mask; i++)
        slots[i] = -1;
    for (long i = 0; i < s->n; i++) {
        uint64_t p = keyset_hash(s->keys + i * s->b, s->b) & mask;
        while (slots[p] >= 0)
            p = (p + 1) & mask;
        slots[p] = i;
    }
    free(s->slots);
    s->slots = slots;
    s->mask = mask;
    return 1;
}

long hf_bounds_keyset_insert(hf_bounds_keyset_t *s, const int64_t *key, int *added)
{
    int b = s->b;
    uint64_t p = keyset_hash(key, b) & s->mask;
    *added = 0;
    for (; s->slots[p] >= 0; p = (p + 1) & s->mask)
        if (memcmp(s->keys + s->slots[p] * b, key, (size_t)b * sizeof *key) == 0)
            return s->slots[p];
    if (s->n == s->cap) {
        int64_t *keys = hf_realloc(s->keys, (size_t)2 * s->cap * b * sizeof *keys);
        if (!keys)
            return -1;
        s->keys = keys;
        s->cap *= 2;
    }
    memcpy(s->keys + s->n * b, key, (size_t)b * sizeof *key);
    long idx = s->n++;
    if ((uint64_t)s->n * 2 > s->mask + 1) {
        if (!keyset_grow_table(s))
            return -1;
    } else {
        s->slots[p] = idx;
    }
    *added = 1;
    return idx;
}

int hf_bounds_cmp_rows(const void *ctx, long a, long b)
{
    const hf_bounds_rows_t *o = ctx;
    const int64_t *x = o->rows + a * o->w, *y = o->rows + b * o->w;
    for (int j = 0; j < o->w; j++)
        if (x[j] != y[j])
            return x[j] < y[j] ? -1 : 1;
    return 0;
}

int hf_bounds_sort(long *idx, long n, int (*cmp)(const void *ctx, long a, long b), const void *ctx)
{
    if (n < 2)
        return 1;
    long *tmp = hf_malloc((size_t)n * sizeof *tmp);
    if (!tmp)
        return 0;
    /* bottom-up: runs of width 1, 2, 4, ... merged from idx into tmp and back */
    long *src = idx, *dst = tmp;
    for (long width = 1; width < n; width *= 2) {
        for (long lo = 0; lo < n; lo += 2 * width) {
            long mid = lo + width < n ? lo + width : n;
            long hi = lo + 2 * width < n ? lo + 2 * width : n;
            long i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = cmp(ctx, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        long *sw = src;
        src = dst;
        dst = sw;
    }
    if (src != idx)
        memcpy(idx, src, (size_t)n * sizeof *idx);
    free(tmp);
    return 1;
}
