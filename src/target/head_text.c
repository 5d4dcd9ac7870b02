/* A head as compact JSON text, written and read without building a JSON tree (headfuse/
 * target.h): the witness of a support of 10^7 keys is one record of a shard, and jansson's
 * tree of it took gigabytes and most of a row's time. The text is byte for byte what
 * json_dumps(hf_head_to_json(h, keys, 0), JSON_COMPACT | JSON_PRESERVE_ORDER) gives, so
 * records written before read the same; the reader takes that compact form and hands
 * anything else (spaces, another order, a malformed record) to the jansson reader, whose
 * messages say what is wrong. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/fmpq.h>

#include "headfuse/core.h"
#include "headfuse/target.h"

typedef struct {
    char *buf;
    long len, cap;
    int bad;
} text_t;

static void put(text_t *t, const char *s, size_t n)
{
    if (t->bad)
        return;
    if (HF_GROW(&t->buf, &t->cap, t->len + (long)n + 1) != HF_OK) {
        t->bad = 1;
        return;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += (long)n;
    t->buf[t->len] = '\0';
}

static void put_int(text_t *t, int64_t x)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%" PRId64, x);
    put(t, b, (size_t)n);
}

/* "p" or "p/q" in quotes: digits, '-' and '/' need no escaping. */
static void put_rational(text_t *t, const fmpq_t x)
{
    if (t->bad)
        return;
    if (fmpz_fits_si(fmpq_numref(x)) && fmpz_is_one(fmpq_denref(x))) {
        char b[26];
        int n = snprintf(b, sizeof b, "\"%ld\"", (long)fmpz_get_si(fmpq_numref(x)));
        put(t, b, (size_t)n);
        return;
    }
    char *s = hf_rational_str(x);
    if (!s) {
        t->bad = 1;
        return;
    }
    put(t, "\"", 1);
    put(t, s, strlen(s));
    put(t, "\"", 1);
    free(s);
}

hf_err_t hf_head_to_json_text(const hf_head_t *h, const int64_t *keys, long m, char **out)
{
    text_t t = {NULL, 0, 0, 0};
    int d = h->d, dv = h->dv;
    if (!keys)
        keys = h->keys;
    *out = NULL;
    /* about what chain's witnesses take a key: fewer reallocations */
    if (HF_GROW(&t.buf, &t.cap, 32 + m * (long)(3 * d + 8 * dv + 8)) != HF_OK)
        return hf_error(HF_ERR_NOMEM, "out of memory formatting a head of %ld atoms", m);
    put(&t, "{\"keys\":[", 9);
    for (long i = 0; i < m; i++) {
        put(&t, i ? ",[" : "[", i ? 2 : 1);
        for (int j = 0; j < d; j++) {
            if (j)
                put(&t, ",", 1);
            put_int(&t, keys[i * d + j]);
        }
        put(&t, "]", 1);
    }
    put(&t, "],\"weights\":[", 13);
    for (long i = 0; i < m; i++) {
        if (i)
            put(&t, ",", 1);
        put_rational(&t, h->weights + i);
    }
    put(&t, "],\"values\":[", 12);
    for (long i = 0; i < m; i++) {
        put(&t, i ? ",[" : "[", i ? 2 : 1);
        for (int j = 0; j < dv; j++) {
            if (j)
                put(&t, ",", 1);
            put_rational(&t, h->values + i * dv + j);
        }
        put(&t, "]", 1);
    }
    put(&t, "]}", 2);
    if (t.bad) {
        free(t.buf);
        return hf_error(HF_ERR_NOMEM, "out of memory formatting a head of %ld atoms", m);
    }
    *out = t.buf;
    return HF_OK;
}

/* ------------------------------------------------------------------ reading */

typedef struct {
    const char *at;
    int fail; /* the text is not in the compact form: hand it to jansson */
} scan_t;

static void expect(scan_t *s, const char *lit)
{
    size_t n = strlen(lit);
    if (s->fail || strncmp(s->at, lit, n) != 0)
        s->fail = 1;
    else
        s->at += n;
}

/* An integer as JSON writes it: -?(0|[1-9][0-9]*), fitting 64 bits. */
static int64_t scan_int(scan_t *s)
{
    const char *p = s->at;
    int neg = *p == '-';
    p += neg;
    if (s->fail || *p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9')) {
        s->fail = 1;
        return 0;
    }
    uint64_t v = 0;
    int n = 0;
    for (; *p >= '0' && *p <= '9'; p++, n++) {
        if (n >= 18) { /* beyond what is surely exact in 63 bits: let jansson judge */
            s->fail = 1;
            return 0;
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    s->at = p;
    return neg ? -(int64_t)v : (int64_t)v;
}

/* A quoted rational "[-]d+[/d+]" with at most 18 digits on each side (else, and for a zero
 * denominator, the slow path judges), canonicalised as hf_rational_parse does. */
static void scan_rational(scan_t *s, fmpq_t x)
{
    const char *p = s->at;
    if (s->fail || *p != '"') {
        s->fail = 1;
        return;
    }
    p++;
    int neg = *p == '-';
    p += neg;
    int64_t part[2] = {0, 1};
    for (int k = 0; k < 2; k++) {
        int n = 0;
        int64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++, n++) {
            if (n >= 18) {
                s->fail = 1;
                return;
            }
            v = v * 10 + (*p - '0');
        }
        if (n == 0) {
            s->fail = 1;
            return;
        }
        part[k] = v;
        if (k == 0 && *p != '/')
            break;
        if (k == 0)
            p++;
    }
    if (*p != '"' || part[1] == 0) {
        s->fail = 1;
        return;
    }
    s->at = p + 1;
    fmpz_set_si(fmpq_numref(x), neg ? -part[0] : part[0]);
    fmpz_set_si(fmpq_denref(x), part[1]);
    fmpq_canonicalise(x);
}

/* The compact form, or s.fail. h holds m atoms (resized by the caller). */
static void scan_head(scan_t *s, hf_head_t *h, long m)
{
    int d = h->d, dv = h->dv;
    expect(s, "{\"keys\":[");
    for (long i = 0; i < m && !s->fail; i++) {
        expect(s, i ? ",[" : "[");
        for (int j = 0; j < d && !s->fail; j++) {
            if (j)
                expect(s, ",");
            h->keys[i * d + j] = scan_int(s);
        }
        expect(s, "]");
    }
    expect(s, "],\"weights\":[");
    for (long i = 0; i < m && !s->fail; i++) {
        if (i)
            expect(s, ",");
        scan_rational(s, h->weights + i);
    }
    expect(s, "],\"values\":[");
    for (long i = 0; i < m && !s->fail; i++) {
        expect(s, i ? ",[" : "[");
        for (int j = 0; j < dv && !s->fail; j++) {
            if (j)
                expect(s, ",");
            scan_rational(s, h->values + i * dv + j);
        }
        expect(s, "]");
    }
    expect(s, "]}");
    if (!s->fail && *s->at != '\0')
        s->fail = 1;
}

hf_err_t hf_head_from_json_text(hf_head_t *h, const char *text, long m)
{
    if (m >= 0) {
        HF_TRY(hf_head_resize(h, m));
        scan_t s = {text, 0};
        scan_head(&s, h, m);
        if (!s.fail)
            return HF_OK;
    }
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o)
        return hf_error(HF_ERR_INPUT, "not JSON: %s", je.text);
    hf_err_t e = hf_head_from_json(h, o, m);
    json_decref(o);
    return e;
}
