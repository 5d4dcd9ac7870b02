/* Byte strings as keys: a growable buffer to serialise canonical forms into, and an
 * open-addressing hash map from such strings to integers (fmpz). Used by the lower
 * bound's memo, the hyperplane-arrangement memo and the upper bound's transfer DP. */
#include <stdlib.h>
#include <string.h>

#include "bounds/bounds_impl.h"

hf_err_t hf_bounds_buf_put(hf_bounds_buf_t *b, const void *x, size_t len)
{
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        while (cap < b->n + len)
            cap *= 2;
        unsigned char *p = hf_realloc(b->p, cap);
        if (!p)
            return HF_ERR_NOMEM;
        b->p = p;
        b->cap = cap;
    }
    if (len)
        memcpy(b->p + b->n, x, len);
    b->n += len;
    return HF_OK;
}

hf_err_t hf_bounds_buf_i64(hf_bounds_buf_t *b, int64_t x)
{
    return hf_bounds_buf_put(b, &x, sizeof x);
}

/* Tag 0 and 8 bytes when the integer fits a word, else tag 1, length and hex digits. */
hf_err_t hf_bounds_buf_fmpz(hf_bounds_buf_t *b, const fmpz_t x)
{
    unsigned char tag = !fmpz_fits_si(x);
    HF_TRY(hf_bounds_buf_put(b, &tag, 1));
    if (!tag)
        return hf_bounds_buf_i64(b, fmpz_get_si(x));
    char *s = fmpz_get_str(NULL, 16, x);
    size_t len = strlen(s);
    hf_err_t err = hf_bounds_buf_i64(b, (int64_t)len);
    if (err == HF_OK)
        err = hf_bounds_buf_put(b, s, len);
    flint_free(s);
    return err;
}

void hf_bounds_buf_clear(hf_bounds_buf_t *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static uint64_t bytemap_hash(const unsigned char *p, size_t n)
{
    return hf_hash_mix(hf_hash_bytes(HF_HASH_INIT, p, n));
}

static hf_err_t bytemap_alloc(hf_bounds_bytemap_t *m, uint64_t size)
{
    m->table = hf_calloc(size, sizeof *m->table);
    if (!m->table)
        return HF_ERR_NOMEM;
    m->mask = size - 1;
    for (uint64_t i = 0; i < size; i++)
        fmpz_init(&m->table[i].val);
    return HF_OK;
}

hf_err_t hf_bounds_bytemap_init(hf_bounds_bytemap_t *m, long max)
{
    memset(m, 0, sizeof *m);
    m->max = max;
    return bytemap_alloc(m, 64);
}

void hf_bounds_bytemap_clear(hf_bounds_bytemap_t *m)
{
    if (m->table) {
        for (uint64_t i = 0; i <= m->mask; i++) {
            free(m->table[i].key);
            fmpz_clear(&m->table[i].val);
        }
        free(m->table);
    }
    memset(m, 0, sizeof *m);
}

static hf_bounds_bytemap_entry_t *bytemap_slot(const hf_bounds_bytemap_t *m,
                                               const unsigned char *key, size_t len, uint64_t h)
{
    for (uint64_t i = h & m->mask;; i = (i + 1) & m->mask) {
        hf_bounds_bytemap_entry_t *e = m->table + i;
        if (!e->key)
            return e;
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
            return e;
    }
}

hf_bounds_bytemap_entry_t *hf_bounds_bytemap_get(const hf_bounds_bytemap_t *m,
                                                 const unsigned char *key, size_t len)
{
    hf_bounds_bytemap_entry_t *e = bytemap_slot(m, key, len, bytemap_hash(key, len));
    return e->key ? e : NULL;
}

/* Double the table (kept at most half full). */
static hf_err_t bytemap_grow(hf_bounds_bytemap_t *m)
{
    hf_bounds_bytemap_t bigger = *m;
    HF_TRY(bytemap_alloc(&bigger, 2 * (m->mask + 1)));
    for (uint64_t i = 0; i <= m->mask; i++) {
        hf_bounds_bytemap_entry_t *e = m->table + i;
        if (!e->key)
            continue;
        uint64_t j = e->hash & bigger.mask;
        while (bigger.table[j].key)
            j = (j + 1) & bigger.mask;
        bigger.table[j].key = e->key;
        bigger.table[j].len = e->len;
        bigger.table[j].hash = e->hash;
        fmpz_swap(&bigger.table[j].val, &e->val);
        e->key = NULL;
    }
    for (uint64_t i = 0; i <= m->mask; i++)
        fmpz_clear(&m->table[i].val);
    free(m->table);
    m->table = bigger.table;
    m->mask = bigger.mask;
    return HF_OK;
}

hf_err_t hf_bounds_bytemap_find(hf_bounds_bytemap_t *m, const unsigned char *key, size_t len,
                                hf_bounds_bytemap_entry_t **out)
{
    *out = NULL;
    uint64_t h = bytemap_hash(key, len);
    hf_bounds_bytemap_entry_t *e = bytemap_slot(m, key, len, h);
    if (e->key) {
        *out = e;
        return HF_OK;
    }
    if (m->n >= m->max)
        return HF_OK; /* full: the caller goes on without remembering */
    if ((uint64_t)(m->n + 1) * 2 > m->mask + 1) {
        HF_TRY(bytemap_grow(m));
        e = bytemap_slot(m, key, len, h);
    }
    e->key = hf_malloc(len ? len : 1);
    if (!e->key)
        return HF_ERR_NOMEM;
    if (len)
        memcpy(e->key, key, len);
    e->len = len;
    e->hash = h;
    fmpz_zero(&e->val);
    m->n++;
    *out = e;
    return HF_OK;
}

hf_err_t hf_bounds_bytemap_put(hf_bounds_bytemap_t *m, const unsigned char *key, size_t len,
                               const fmpz_t val)
{
    hf_bounds_bytemap_entry_t *e;
    HF_TRY(hf_bounds_bytemap_find(m, key, len, &e));
    if (e)
        fmpz_set(&e->val, val);
    return HF_OK;
}
