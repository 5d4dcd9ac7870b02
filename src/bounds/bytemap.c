/* Byte strings as keys: a growable buffer to serialise canonical forms into, and a
 * map from such strings to integers (fmpz) over core's hash index. Used by the lower
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

void hf_bounds_bytemap_init(hf_bounds_bytemap_t *m, long max)
{
    memset(m, 0, sizeof *m);
    hf_index_init(&m->index);
    m->max = max;
}

void hf_bounds_bytemap_clear(hf_bounds_bytemap_t *m)
{
    for (long i = 0; i < m->n; i++) {
        free(m->entry[i].key);
        fmpz_clear(&m->entry[i].val);
    }
    free(m->entry);
    hf_index_clear(&m->index);
    hf_bounds_bytemap_init(m, 0);
}

typedef struct {
    const hf_bounds_bytemap_t *m;
    const unsigned char *key;
    size_t len;
} bytemap_key_t;

static int bytemap_eq(const void *ctx, long item)
{
    const bytemap_key_t *k = ctx;
    const hf_bounds_bytemap_entry_t *e = &k->m->entry[item];
    return e->len == k->len && (k->len == 0 || memcmp(e->key, k->key, k->len) == 0);
}

static long bytemap_lookup(const hf_bounds_bytemap_t *m, const unsigned char *key, size_t len,
                           uint64_t h)
{
    bytemap_key_t k = {m, key, len};
    return hf_index_find(&m->index, h, bytemap_eq, &k);
}

hf_bounds_bytemap_entry_t *hf_bounds_bytemap_get(const hf_bounds_bytemap_t *m,
                                                 const unsigned char *key, size_t len)
{
    long i = bytemap_lookup(m, key, len, bytemap_hash(key, len));
    return i < 0 ? NULL : &m->entry[i];
}

hf_err_t hf_bounds_bytemap_find(hf_bounds_bytemap_t *m, const unsigned char *key, size_t len,
                                hf_bounds_bytemap_entry_t **out)
{
    *out = NULL;
    uint64_t h = bytemap_hash(key, len);
    long i = bytemap_lookup(m, key, len, h);
    if (i >= 0) {
        *out = &m->entry[i];
        return HF_OK;
    }
    if (m->n >= m->max)
        return HF_OK; /* full: the caller goes on without remembering */
    HF_TRY(HF_GROW(&m->entry, &m->cap, m->n + 1));
    unsigned char *copy = hf_malloc(len ? len : 1);
    if (!copy)
        return HF_ERR_NOMEM;
    if (len)
        memcpy(copy, key, len);
    if (hf_index_add(&m->index, h, m->n) != HF_OK) {
        free(copy);
        return HF_ERR_NOMEM;
    }
    hf_bounds_bytemap_entry_t *e = &m->entry[m->n++];
    e->key = copy;
    e->len = len;
    fmpz_init(&e->val);
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
