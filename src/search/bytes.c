/* Bytes that processes exchange (search_impl.h): a growable buffer, unsigned varints and
 * integers of any size, and the reader that takes them back. The cone engine's double
 * description exchanges its new rays in them, and its large rows their class tables. */
#include <stdlib.h>
#include <string.h>

#include "search/search_impl.h"

hf_err_t hf_bytes_put(hf_bytes_t *k, const void *x, size_t n)
{
    HF_TRY(HF_GROW(&k->buf, &k->cap, k->len + (long)n));
    memcpy(k->buf + k->len, x, n);
    k->len += (long)n;
    return HF_OK;
}

hf_err_t hf_bytes_put_varint(hf_bytes_t *k, uint64_t u)
{
    unsigned char b[10];
    size_t n = 0;
    do {
        b[n] = (unsigned char)(u & 0x7f);
        u >>= 7;
        b[n++] |= u ? 0x80 : 0;
    } while (u);
    return hf_bytes_put(k, b, n);
}

hf_err_t hf_bytes_put_fmpz(hf_bytes_t *k, const fmpz_t x)
{
    if (fmpz_bits(x) < 62) {
        int64_t w = fmpz_get_si(x);
        uint64_t z = w < 0 ? ((uint64_t)(-(w + 1)) << 1) | 1 : (uint64_t)w << 1;
        return hf_bytes_put_varint(k, z << 1);
    }
    mpz_t m;
    mpz_init(m);
    fmpz_get_mpz(m, x);
    size_t nl = 0;
    uint64_t *limbs = mpz_export(NULL, &nl, -1, sizeof(uint64_t), 0, 0, m);
    hf_err_t err = hf_bytes_put_varint(k, ((uint64_t)nl << 2) | (mpz_sgn(m) < 0 ? 2 : 0) | 1);
    if (err == HF_OK)
        err = hf_bytes_put(k, limbs, nl * sizeof *limbs);
    free(limbs); /* GMP's default allocator */
    mpz_clear(m);
    return err;
}

int hf_bytes_get(hf_bytes_reader_t *r, void *x, size_t n)
{
    if ((size_t)(r->end - r->at) < n)
        return 0;
    memcpy(x, r->at, n);
    r->at += n;
    return 1;
}

int hf_bytes_get_varint(hf_bytes_reader_t *r, uint64_t *u)
{
    *u = 0;
    for (int shift = 0; shift < 64 && r->at < r->end; shift += 7) {
        unsigned char b = *r->at++;
        *u |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 1;
    }
    return 0;
}

int hf_bytes_get_fmpz(hf_bytes_reader_t *r, fmpz_t x)
{
    uint64_t u;
    if (!hf_bytes_get_varint(r, &u))
        return 0;
    if (!(u & 1)) {
        uint64_t z = u >> 1;
        int64_t w = z & 1 ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1);
        fmpz_set_si(x, w);
        return 1;
    }
    size_t cnt = (size_t)(u >> 2);
    if ((size_t)(r->end - r->at) / sizeof(uint64_t) < cnt)
        return 0;
    mpz_t m;
    mpz_init(m);
    mpz_import(m, cnt, -1, sizeof(uint64_t), 0, 0, r->at);
    r->at += cnt * sizeof(uint64_t);
    if (u & 2)
        mpz_neg(m, m);
    fmpz_set_mpz(x, m);
    mpz_clear(m);
    return 1;
}
