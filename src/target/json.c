/* Target files: strict reading of the JSON schema in docs/targets.md (every problem named
 * "origin: field: problem") and exact writing of the same schema. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <flint/fmpz.h>

#include "headfuse/target.h"

/* Longest field path: "heads[<20 digits>].atoms[<20 digits>].value[<11 digits>]". */
#define FIELD_MAX 96

/* ------------------------------------------------------------------ reading */

/* Reject members of obj not in the NULL-terminated list `known`. */
static hf_err_t check_fields(const json_t *obj, const char *const *known, const char *origin,
                             const char *path, const char *known_text)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val)
    {
        int ok = 0;
        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(key, *k);
        if (!ok)
            return hf_error(HF_ERR_INPUT, "%s: %s%s%s: unknown field (known: %s)", origin, path,
                            *path ? "." : "", key, known_text);
    }
    return HF_OK;
}

/* Name of a JSON value's type, for messages. */
static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "unknown";
}

/* A JSON real is never exact: suggest the rational the user most likely meant, from the
 * shortest decimal that reads back as the same double (0.5 -> "1/2", 0.1 -> "1/10"). */
static void real_hint(double x, char *shown, size_t nshown, char *hint, size_t n)
{
    snprintf(hint, n, "\"p/q\"");
    snprintf(shown, nshown, "%.17g", x);
    if (!isfinite(x))
        return;
    char dec[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(dec, sizeof dec, "%.*e", prec - 1, x);
        if (strtod(dec, NULL) == x) {
            snprintf(shown, nshown, "%.*g", prec, x);
            break;
        }
    }
    /* dec is [-]D.DDDDe[+-]XX: mantissa digits m, exponent e -> m * 10^(e - (#digits-1)) */
    char digits[24];
    int nd = 0, neg = dec[0] == '-';
    const char *p = dec + neg;
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            digits[nd++] = *p;
    digits[nd] = '\0';
    if (*p != 'e')
        return;
    long e;
    /* %e writes the exponent as [+-]digits; the parser takes no '+' */
    if (hf_parse_long(p + 1 + (p[1] == '+'), -1, -400, 400, &e) != HF_PARSE_OK)
        return;
    e -= nd - 1;
    if (e > 30 || e < -30)
        return;
    fmpq_t r;
    fmpz_t ten;
    fmpq_init(r);
    fmpz_init(ten);
    fmpz_set_str(fmpq_numref(r), digits, 10);
    fmpz_set_ui(ten, 10);
    fmpz_pow_ui(ten, ten, (ulong)(e < 0 ? -e : e));
    if (e >= 0)
        fmpz_mul(fmpq_numref(r), fmpq_numref(r), ten);
    else
        fmpz_set(fmpq_denref(r), ten);
    fmpq_canonicalise(r);
    if (neg)
        fmpq_neg(r, r);
    char *s = hf_rational_str(r);
    if (s && strlen(s) + 3 <= n)
        snprintf(hint, n, "\"%s\"", s);
    free(s);
    fmpz_clear(ten);
    fmpq_clear(r);
}

/* A rational field: a string "[-]digits[/digits]" or a JSON integer. */
static hf_err_t read_rational(fmpq_t out, const json_t *v, const char *origin, const char *path)
{
    if (json_is_integer(v)) {
        fmpq_set_si(out, (slong)json_integer_value(v), 1);
        return HF_OK;
    }
    if (json_is_real(v)) {
        char shown[40], hint[64];
        real_hint(json_real_value(v), shown, sizeof shown, hint, sizeof hint);
        return hf_error(HF_ERR_INPUT,
                        "%s: %s: JSON real %s is not exact; write the rational as a string, "
                        "e.g. %s",
                        origin, path, shown, hint);
    }
    if (!json_is_string(v))
        return hf_error(HF_ERR_INPUT, "%s: %s: must be a rational (a string like \"3/2\"), not %s",
                        origin, path, json_kind(v));
    hf_err_t err = hf_rational_parse(out, json_string_value(v));
    if (err != HF_OK)
        hf_error_prefix("%s: %s", origin, path);
    return err;
}

/* An integer field in lo..hi. */
static hf_err_t read_int(long long *out, const json_t *v, long long lo, long long hi,
                         const char *origin, const char *path)
{
    if (!json_is_integer(v))
        return hf_error(HF_ERR_INPUT, "%s: %s: must be an integer %lld..%lld, not %s", origin, path,
                        lo, hi, json_kind(v));
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return hf_error(HF_ERR_INPUT, "%s: %s: %lld is outside %lld..%lld", origin, path, x, lo,
                        hi);
    *out = x;
    return HF_OK;
}

/* One atom object into atom i of h (storage already sized). */
static hf_err_t read_atom(hf_head_t *h, size_t hi, long i, const json_t *atom, const char *origin)
{
    static const char *const known[] = {"key", "weight", "value", NULL};
    char path[FIELD_MAX], field[FIELD_MAX];
    snprintf(path, sizeof path, "heads[%zu].atoms[%ld]", hi, i);
    int d = h->d, dv = h->dv;
    if (!json_is_object(atom))
        return hf_error(HF_ERR_INPUT, "%s: %s: an atom must be an object, not %s", origin, path,
                        json_kind(atom));
    HF_TRY(check_fields(atom, known, origin, path, "key, weight, value"));

    const json_t *key = json_object_get(atom, "key");
    snprintf(field, sizeof field, "heads[%zu].atoms[%ld].key", hi, i);
    if (!key)
        return hf_error(HF_ERR_INPUT, "%s: %s: missing (an array of d = %d integers)", origin,
                        field, d);
    if (!json_is_array(key))
        return hf_error(HF_ERR_INPUT, "%s: %s: must be an array of d = %d integers, not %s", origin,
                        field, d, json_kind(key));
    if (json_array_size(key) != (size_t)d)
        return hf_error(HF_ERR_INPUT, "%s: %s: has %zu entr%s, expected d = %d integers", origin,
                        field, json_array_size(key), json_array_size(key) == 1 ? "y" : "ies", d);
    for (int c = 0; c < d; c++) {
        long long k;
        snprintf(field, sizeof field, "heads[%zu].atoms[%ld].key[%d]", hi, i, c);
        HF_TRY(read_int(&k, json_array_get(key, c), -HF_KEY_MAX, HF_KEY_MAX, origin, field));
        h->keys[i * d + c] = k;
    }

    const json_t *w = json_object_get(atom, "weight");
    snprintf(field, sizeof field, "heads[%zu].atoms[%ld].weight", hi, i);
    if (!w)
        return hf_error(HF_ERR_INPUT, "%s: %s: missing (a positive rational)", origin, field);
    HF_TRY(read_rational(h->weights + i, w, origin, field));
    if (fmpq_sgn(h->weights + i) <= 0) {
        char *s = hf_rational_str(h->weights + i);
        hf_err_t err =
            hf_error(HF_ERR_INPUT, "%s: %s: must be positive, got %s", origin, field, s ? s : "?");
        free(s);
        return err;
    }

    const json_t *v = json_object_get(atom, "value");
    snprintf(field, sizeof field, "heads[%zu].atoms[%ld].value", hi, i);
    if (!v)
        return hf_error(HF_ERR_INPUT, "%s: %s: missing (%s)", origin, field,
                        dv == 1 ? "a rational" : "an array of dv rationals");
    if (!json_is_array(v)) {
        if (dv != 1)
            return hf_error(HF_ERR_INPUT, "%s: %s: must be an array of dv = %d rationals, not %s",
                            origin, field, dv, json_kind(v));
        return read_rational(h->values + i, v, origin, field);
    }
    if (json_array_size(v) != (size_t)dv)
        return hf_error(HF_ERR_INPUT, "%s: %s: has %zu entries, expected dv = %d", origin, field,
                        json_array_size(v), dv);
    for (int j = 0; j < dv; j++) {
        snprintf(field, sizeof field, "heads[%zu].atoms[%ld].value[%d]", hi, i, j);
        HF_TRY(read_rational(h->values + i * dv + j, json_array_get(v, j), origin, field));
    }
    return HF_OK;
}

/* One head object (heads[hi]) appended to t. */
static hf_err_t read_head(hf_target_t *t, size_t hi, const json_t *head, const char *origin)
{
    static const char *const known[] = {"atoms", NULL};
    char path[FIELD_MAX], apath[FIELD_MAX];
    hf_err_t err = HF_OK;
    hf_head_t h;
    hf_head_init(&h, t->d, t->dv);
    snprintf(path, sizeof path, "heads[%zu]", hi);
    if (!json_is_object(head)) {
        err = hf_error(HF_ERR_INPUT, "%s: %s: a head must be an object {\"atoms\": [...]}, not %s",
                       origin, path, json_kind(head));
        goto cleanup;
    }
    HF_CHECK(err, check_fields(head, known, origin, path, "atoms"), cleanup);
    const json_t *atoms = json_object_get(head, "atoms");
    snprintf(apath, sizeof apath, "heads[%zu].atoms", hi);
    if (!atoms || !json_is_array(atoms) || json_array_size(atoms) == 0) {
        err = hf_error(HF_ERR_INPUT, "%s: %s: %s (a head needs a non-empty array of atoms)", origin,
                       apath,
                       !atoms                 ? "missing"
                       : json_is_array(atoms) ? "empty"
                                              : "not an array");
        goto cleanup;
    }
    /* no ceiling on a head's atoms: the file holds them already, and what a search of
     * them takes is estimated before it runs (docs/targets.md, "Limits") */
    size_t n = json_array_size(atoms);
    HF_CHECK(err, hf_head_resize(&h, (long)n), cleanup);
    for (size_t i = 0; i < n; i++)
        HF_CHECK(err, read_atom(&h, hi, (long)i, json_array_get(atoms, i), origin), cleanup);
    HF_CHECK(err, hf_target_add_head(t, &h), cleanup);
cleanup:
    hf_head_clear(&h);
    return err;
}

/* Parse len bytes of JSON text into t (uninitialised: set up here; zeroed again on
 * error). default_name is used when the document has no "name". */
static hf_err_t parse_target(hf_target_t *t, const char *text, size_t len, const char *origin,
                             const char *default_name)
{
    static const char *const known[] = {"name", "d", "dv", "heads", NULL};
    hf_err_t err = HF_OK;
    json_error_t jerr;
    memset(t, 0, sizeof *t);
    /* Duplicate members ("d" twice) are rejected: one of them would be silently lost. */
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return hf_error(HF_ERR_INPUT, "%s: line %d, column %d: invalid JSON: %s", origin, jerr.line,
                        jerr.column, jerr.text);
    if (!json_is_object(root)) {
        err = hf_error(HF_ERR_INPUT,
                       "%s: top level: must be an object {\"d\": ..., \"heads\": "
                       "[...]}, not %s",
                       origin, json_kind(root));
        goto cleanup;
    }
    HF_CHECK(err, check_fields(root, known, origin, "", "name, d, dv, heads"), cleanup);

    const char *name = default_name;
    const json_t *jname = json_object_get(root, "name");
    if (jname) {
        if (!json_is_string(jname)) {
            err = hf_error(HF_ERR_INPUT, "%s: name: must be a string, not %s", origin,
                           json_kind(jname));
            goto cleanup;
        }
        if (json_string_length(jname) == 0) {
            err = hf_error(HF_ERR_INPUT, "%s: name: must not be empty", origin);
            goto cleanup;
        }
        name = json_string_value(jname);
    }

    long long d, dv = 1;
    const json_t *jd = json_object_get(root, "d");
    if (!jd) {
        err = hf_error(HF_ERR_INPUT, "%s: d: missing (the query dimension, an integer 1..%d)",
                       origin, HF_D_MAX);
        goto cleanup;
    }
    HF_CHECK(err, read_int(&d, jd, 1, HF_D_MAX, origin, "d"), cleanup);
    const json_t *jdv = json_object_get(root, "dv");
    if (jdv)
        HF_CHECK(err, read_int(&dv, jdv, 1, HF_DV_MAX, origin, "dv"), cleanup);

    const json_t *heads = json_object_get(root, "heads");
    if (!heads || !json_is_array(heads) || json_array_size(heads) == 0) {
        err = hf_error(HF_ERR_INPUT, "%s: heads: %s (a target needs a non-empty array of heads)",
                       origin,
                       !heads                 ? "missing"
                       : json_is_array(heads) ? "empty"
                                              : "not an array");
        goto cleanup;
    }
    if (json_array_size(heads) > (size_t)HF_HEADS_MAX) {
        err = hf_error(HF_ERR_INPUT, "%s: heads: more than %d heads (a count of heads is an int)",
                       origin, HF_HEADS_MAX);
        goto cleanup;
    }

    HF_CHECK(err, hf_target_init(t, name, (int)d, (int)dv), cleanup);
    for (size_t i = 0; i < json_array_size(heads); i++)
        HF_CHECK(err, read_head(t, i, json_array_get(heads, i), origin), cleanup);
cleanup:
    if (err != HF_OK)
        hf_target_clear(t);
    json_decref(root);
    return err;
}

hf_err_t hf_target_from_json_text(hf_target_t *t, const char *text, const char *origin)
{
    if (!origin)
        origin = "(json text)";
    if (!text)
        return hf_error(HF_ERR_INPUT, "%s: no JSON text", origin);
    hf_target_t tmp;
    hf_err_t err = parse_target(&tmp, text, strlen(text), origin, "target");
    if (err == HF_OK)
        hf_target_swap(t, &tmp);
    hf_target_clear(&tmp);
    return err;
}

/* A whole file into a malloc'd buffer (NUL-terminated; *len excludes the NUL). */
static hf_err_t read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) /* a target path that does not open is the user's input, like bad JSON */
        return hf_error(HF_ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
    hf_err_t err = hf_read_stream(f, path, 0, out, len);
    fclose(f);
    return err;
}

hf_err_t hf_target_load_json(hf_target_t *t, const char *path)
{
    char *text = NULL, *name = NULL;
    size_t len = 0;
    hf_target_t tmp;
    hf_target_init_empty(&tmp);
    hf_err_t err = read_file(path, &text, &len);
    if (err != HF_OK)
        return err;
    /* Default name: the basename without ".json". */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    name = hf_strdup(base);
    if (!name) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    size_t nl = strlen(name);
    if (nl > 5 && !strcmp(name + nl - 5, ".json"))
        name[nl - 5] = '\0';
    err = parse_target(&tmp, text, len, path, *name ? name : "target");
    if (err == HF_OK)
        hf_target_swap(t, &tmp);
cleanup:
    hf_target_clear(&tmp);
    free(name);
    free(text);
    return err;
}

/* ------------------------------------------------------------------ writing */

/* A growing string; once err is set (an allocation failed) every later append is a no-op. */
typedef struct {
    char *s;
    size_t len, cap;
    hf_err_t err;
} strbuf_t;

static void sb_add(strbuf_t *b, const char *s, size_t n)
{
    if (b->err != HF_OK)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = hf_realloc(b->s, cap);
        if (!ns) {
            b->err = HF_ERR_NOMEM;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_puts(strbuf_t *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_printf(strbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(strbuf_t *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->err = hf_error(HF_ERR_INTERNAL, "json writer: formatted field too long");
        return;
    }
    sb_add(b, tmp, (size_t)n);
}

/* A rational as a JSON string "p" or "p/q". */
static void sb_rational(strbuf_t *b, const fmpq_t x)
{
    char *s = hf_rational_str(x);
    if (!s) {
        if (b->err == HF_OK)
            b->err = HF_ERR_NOMEM;
        return;
    }
    sb_puts(b, "\"");
    sb_puts(b, s);
    sb_puts(b, "\"");
    free(s);
}

/* Serialise t into *out (malloc'd). */
static hf_err_t write_json(const hf_target_t *t, char **out)
{
    strbuf_t b = {0};
    *out = NULL;
    /* Let jansson escape the name (quotes, control characters, UTF-8 checks). */
    json_t *jname = json_string(t->name ? t->name : "target");
    char *name = jname ? json_dumps(jname, JSON_ENCODE_ANY) : NULL;
    json_decref(jname);
    if (!name)
        return hf_error(HF_ERR_INPUT, "%s: name: cannot be written as a JSON string (not UTF-8?)",
                        t->name ? t->name : "target");
    sb_puts(&b, "{\n  \"name\": ");
    sb_puts(&b, name);
    free(name);
    sb_printf(&b, ",\n  \"d\": %d,\n  \"dv\": %d,\n  \"heads\": [\n", t->d, t->dv);
    for (int hi = 0; hi < t->nheads; hi++) {
        const hf_head_t *h = t->heads + hi;
        sb_puts(&b, "    {\"atoms\": [\n");
        for (long i = 0; i < h->natoms; i++) {
            sb_puts(&b, "      {\"key\": [");
            for (int c = 0; c < t->d; c++)
                sb_printf(&b, "%s%lld", c ? ", " : "", (long long)h->keys[i * t->d + c]);
            sb_puts(&b, "], \"weight\": ");
            sb_rational(&b, h->weights + i);
            sb_puts(&b, ", \"value\": ");
            if (t->dv == 1) {
                sb_rational(&b, h->values + i);
            } else {
                sb_puts(&b, "[");
                for (int j = 0; j < t->dv; j++) {
                    if (j)
                        sb_puts(&b, ", ");
                    sb_rational(&b, h->values + i * t->dv + j);
                }
                sb_puts(&b, "]");
            }
            sb_puts(&b, i + 1 < h->natoms ? "},\n" : "}\n");
        }
        sb_puts(&b, hi + 1 < t->nheads ? "    ]},\n" : "    ]}\n");
    }
    sb_puts(&b, "  ]\n}\n");
    if (b.err != HF_OK) {
        free(b.s);
        return b.err;
    }
    *out = b.s;
    return HF_OK;
}

char *hf_target_to_json(const hf_target_t *t)
{
    char *s;
    return write_json(t, &s) == HF_OK ? s : NULL;
}

hf_err_t hf_target_save_json(const hf_target_t *t, const char *path)
{
    char *text = NULL;
    HF_TRY(write_json(t, &text));
    /* core's atomic write: a crash leaves the old file or the whole new one */
    hf_err_t err = hf_io_write_file(path, text, strlen(text), 0);
    free(text);
    return err;
}
