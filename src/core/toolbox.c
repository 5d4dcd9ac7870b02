/* The hash, array growth (one array or parallel ones), the whole-file reader, sort with a
 * context, the count of a box's points, integer parser and sizes in bytes of core.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/core.h"

uint64_t hf_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}

uint64_t hf_hash_str(uint64_t h, const char *s)
{
    return hf_hash_bytes(h, s, strlen(s));
}

hf_err_t hf_grow(void **p, long *cap, long need, size_t elem)
{
    if (need <= *cap)
        return HF_OK;
    long c = 2 * *cap > need ? 2 * *cap : need;
    void *q = hf_realloc(*p, (size_t)c * elem);
    if (!q)
        return HF_ERR_NOMEM;
    *p = q;
    *cap = c;
    return HF_OK;
}

hf_err_t hf_grow_arrays(long *cap, long need, int n, void **const *arrays, const size_t *elem)
{
    if (need <= *cap)
        return HF_OK;
    long c = 2 * *cap > need ? 2 * *cap : need;
    for (int k = 0; k < n; k++) {
        /* an array enlarged before a later one fails stays valid: *cap only says less */
        void *q = hf_realloc(*arrays[k], (size_t)c * elem[k]);
        if (!q)
            return HF_ERR_NOMEM;
        *arrays[k] = q;
    }
    *cap = c;
    return HF_OK;
}

hf_err_t hf_read_stream(FILE *f, const char *path, size_t max, char **out, size_t *len)
{
    enum { CHUNK = 65536 };
    char *s = NULL;
    long cap = 0, n = 0;
    hf_err_t e = HF_OK;
    for (;;) {
        if ((e = HF_GROW(&s, &cap, n + CHUNK + 1)) != HF_OK) /* a chunk and the NUL */
            break;
        size_t got = fread(s + n, 1, (size_t)(cap - n - 1), f);
        n += (long)got;
        if (max > 0 && (size_t)n > max) {
            e = hf_error(HF_ERR_LIMIT, "%s: larger than %zu bytes", path, max);
            break;
        }
        if (got == 0)
            break;
    }
    if (e == HF_OK && ferror(f))
        e = hf_error(HF_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    if (e != HF_OK) {
        free(s);
        return e;
    }
    s[n] = '\0';
    *out = s;
    if (len)
        *len = (size_t)n;
    return HF_OK;
}

int hf_cmp_rows(const void *ctx, long a, long b)
{
    const hf_rows_t *o = ctx;
    const int64_t *x = o->rows + a * o->w, *y = o->rows + b * o->w;
    for (int j = 0; j < o->w; j++)
        if (x[j] != y[j])
            return x[j] < y[j] ? -1 : 1;
    return 0;
}

hf_err_t hf_sort(long *idx, long n, hf_cmp_fn cmp, const void *ctx)
{
    if (n < 2)
        return HF_OK;
    long *tmp = hf_malloc((size_t)n * sizeof *tmp);
    if (!tmp)
        return HF_ERR_NOMEM;
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
    return HF_OK;
}

hf_err_t hf_sort_keys(const int64_t *key, long n, long *idx)
{
    enum { BITS = 11, NB = 1 << BITS };
    uint64_t all = 0;
    int passes = 0;
    for (long i = 0; i < n; i++)
        all |= (uint64_t)key[i];
    for (uint64_t a = all; a; a >>= BITS)
        passes++;
    long *tmp = passes && n > 1 ? hf_malloc((size_t)n * sizeof *tmp) : NULL;
    long *cnt = tmp ? hf_malloc(NB * sizeof *cnt) : NULL;
    /* the passes alternate between idx and tmp: start in whichever makes the last one
     * land in idx (idx when there is nothing to sort, or no memory to sort with) */
    long *src = passes % 2 && cnt ? tmp : idx, *dst = src == idx ? tmp : idx;
    for (long i = 0; i < n; i++)
        src[i] = i;
    if (!cnt) {
        free(tmp);
        return passes && n > 1 ? HF_ERR_NOMEM : HF_OK;
    }
    for (int pass = 0; pass < passes; pass++) {
        int shift = pass * BITS;
        memset(cnt, 0, NB * sizeof *cnt);
        for (long i = 0; i < n; i++)
            cnt[((uint64_t)key[src[i]] >> shift) & (NB - 1)]++;
        for (long b = 0, at = 0; b < NB; b++) {
            long c = cnt[b];
            cnt[b] = at;
            at += c;
        }
        for (long i = 0; i < n; i++)
            dst[cnt[((uint64_t)key[src[i]] >> shift) & (NB - 1)]++] = src[i];
        long *t = src;
        src = dst;
        dst = t;
    }
    free(cnt);
    free(tmp);
    return HF_OK;
}

long hf_box_points(int d, const int64_t *w, long cap)
{
    long n = 1;
    for (int a = 0; a < d; a++) {
        if (w[a] <= 0)
            return 0;
        if (n > cap / w[a])
            return -1;
        n *= (long)w[a];
    }
    return n;
}

hf_parse_t hf_parse_long(const char *s, long len, long lo, long hi, long *out)
{
    size_t n = len < 0 ? strlen(s) : (size_t)len, i = n > 0 && s[0] == '-';
    if (i == n)
        return HF_PARSE_SYNTAX;
    for (size_t j = i; j < n; j++)
        if (s[j] < '0' || s[j] > '9')
            return HF_PARSE_SYNTAX;
    /* digits only: accumulate with a saturating bound instead of strtol, which needs a
     * NUL and would take blanks and '+' */
    long v = 0;
    int over = 0;
    for (size_t j = i; j < n; j++) {
        int dgt = s[j] - '0';
        if (v > (LONG_MAX - dgt) / 10)
            over = 1;
        else
            v = v * 10 + dgt;
    }
    if (i)
        v = -v;
    if (over || v < lo || v > hi)
        return HF_PARSE_RANGE;
    *out = v;
    return HF_PARSE_OK;
}

hf_parse_t hf_parse_bytes(const char *s, double *out)
{
    const char *p = s;
    double v = 0, scale = 1;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        v = v * 10 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            v += (*p - '0') * (scale /= 10);
    if (!digits)
        return HF_PARSE_SYNTAX;
    static const char units[] = "KMGTP";
    const char *u = *p ? strchr(units, toupper((unsigned char)*p)) : NULL;
    if (u) {
        for (const char *k = units; k <= u; k++)
            v *= 1024;
        p++;
        if (tolower((unsigned char)p[0]) == 'i' && tolower((unsigned char)p[1]) == 'b')
            p++;
    }
    if (tolower((unsigned char)*p) == 'b')
        p++;
    if (*p)
        return HF_PARSE_SYNTAX;
    if (!(v >= 1) || v >= 9223372036854775808.0)
        return HF_PARSE_RANGE;
    *out = v;
    return HF_PARSE_OK;
}

void hf_bytes_text(double bytes, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int k = 0;
    while (bytes >= 1024 && k < 6) {
        bytes /= 1024;
        k++;
    }
    if (k == 0)
        snprintf(buf, n, "%.0f B", bytes);
    else
        snprintf(buf, n, "%.*f %s", bytes < 10 ? 2 : bytes < 100 ? 1 : 0, bytes, unit[k]);
}
