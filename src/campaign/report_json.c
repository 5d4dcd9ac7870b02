/* JSON with integers of any size, and the JSON forms of a table row, its supports and a
 * row's plan (headfuse/report.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/core.h"
#include "headfuse/report.h"

json_t *hf_json_bigint(const fmpz_t x)
{
    fmpz_t lim;
    fmpz_init(lim);
    fmpz_one(lim);
    fmpz_mul_2exp(lim, lim, 53);
    json_t *j;
    if (fmpz_cmpabs(x, lim) < 0) {
        j = json_integer((json_int_t)fmpz_get_si(x));
    } else {
        char *s = fmpz_get_str(NULL, 10, x);
        j = json_string(s);
        flint_free(s);
    }
    fmpz_clear(lim);
    return j;
}

/* The mark of a big integer held as a string: a control character no other string of
 * ours begins with, which jansson writes escaped. */
#define BIGINT_MARK "\001hf-int:"
#define BIGINT_MARK_DUMPED "\"\\u0001hf-int:"

json_t *hf_json_decimal(const char *decimal)
{
    if (!decimal || !strcmp(decimal, "-1"))
        return json_null();
    errno = 0;
    char *end;
    long long v = strtoll(decimal, &end, 10);
    if (errno == 0 && *decimal && !*end)
        return json_integer((json_int_t)v);
    size_t n = strlen(decimal);
    for (size_t i = 0; i < n; i++)
        if (decimal[i] < '0' || decimal[i] > '9')
            return json_string(decimal); /* not a number: kept as text, never rewritten */
    char *t = hf_malloc(n + sizeof BIGINT_MARK);
    if (!t)
        return NULL;
    snprintf(t, n + sizeof BIGINT_MARK, "%s%s", BIGINT_MARK, decimal);
    json_t *j = json_string(t);
    free(t);
    return j;
}

char *hf_json_dumps(const json_t *j)
{
    char *s = json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT);
    if (!s)
        return NULL;
    /* a whole string "\u0001hf-int:DIGITS" -> DIGITS, in place (the text only gets
     * shorter); strings are followed from their opening quote, so a quote or a mark
     * inside another string is never taken for one */
    size_t ml = strlen(BIGINT_MARK_DUMPED);
    char *r = s, *w = s;
    int in_string = 0;
    while (*r) {
        if (in_string) {
            if (*r == '\\' && r[1]) {
                *w++ = *r++;
            } else if (*r == '"') {
                in_string = 0;
            }
            *w++ = *r++;
            continue;
        }
        if (*r == '"') {
            const char *d = r + ml, *e = d;
            if (!strncmp(r, BIGINT_MARK_DUMPED, ml)) {
                while (*e >= '0' && *e <= '9')
                    e++;
                if (e > d && *e == '"') {
                    memmove(w, d, (size_t)(e - d));
                    w += e - d;
                    r = (char *)e + 1;
                    continue;
                }
            }
            in_string = 1;
        }
        *w++ = *r++;
    }
    *w = '\0';
    return s;
}

const char *const hf_report_row_fields[HF_FIELD_COUNT] = {
    "name",   "d",         "span",      "m_star",    "lb",          "lb_rule", "ub",    "status",
    "engine", "max_atoms", "n_min_raw", "n_min_sym", "group_order", "nodes",   "units", "seconds"};

const char *hf_report_row_field(const hf_row_t *r, int i, char *buf, size_t n)
{
    const char *text[HF_FIELD_COUNT] = {[HF_FIELD_NAME] = r->name,
                                        [HF_FIELD_LB_RULE] = r->lb_rule,
                                        [HF_FIELD_STATUS] = r->status,
                                        [HF_FIELD_ENGINE] = r->engine};
    /* decimals of any size, "-1" for none (m_star exactly, at any size) */
    const char *dec[HF_FIELD_COUNT] = {[HF_FIELD_LB] = r->lb, [HF_FIELD_UB] = r->ub};
    const int64_t ints[HF_FIELD_COUNT] = {[HF_FIELD_D] = r->d,
                                          [HF_FIELD_SPAN] = r->span,
                                          [HF_FIELD_MAX_ATOMS] = r->max_atoms,
                                          [HF_FIELD_N_MIN_RAW] = r->n_min_raw,
                                          [HF_FIELD_N_MIN_SYM] = r->n_min_sym,
                                          [HF_FIELD_GROUP_ORDER] = r->group_order,
                                          [HF_FIELD_NODES] = r->nodes,
                                          [HF_FIELD_UNITS] = r->units};
    if (i == HF_FIELD_M_STAR)
        dec[i] = hf_row_m_star(r, buf);
    if (text[i])
        return text[i];
    if (dec[i])
        return strcmp(dec[i], "-1") ? dec[i] : "";
    if (i == HF_FIELD_SECONDS ? r->seconds < 0 : ints[i] < 0)
        return "";
    if (i == HF_FIELD_SECONDS)
        snprintf(buf, n, "%.3f", r->seconds);
    else
        snprintf(buf, n, "%" PRId64, ints[i]);
    return buf;
}

const char *hf_report_row_upper(const hf_row_t *r, char *buf)
{
    const char *exact = hf_row_m_star(r, buf);
    if (!strcmp(exact, "-1"))
        return r->ub;
    fmpz_t x, y;
    fmpz_init(x);
    fmpz_init(y);
    int bad = fmpz_set_str(x, exact, 10) || fmpz_set_str(y, r->ub, 10);
    const char *m = bad || fmpz_cmp(x, y) <= 0 ? exact : r->ub;
    fmpz_clear(x);
    fmpz_clear(y);
    return m;
}

json_t *hf_report_row_json(const hf_row_t *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "d", json_integer(r->d));
    json_object_set_new(o, "span", json_integer(r->span));
    char m[HF_BIGINT_LEN];
    /* an integer at any size (wd:d=64: 18446744073709551616), null when none */
    json_object_set_new(o, "m_star", hf_json_decimal(hf_row_m_star(r, m)));
    fmpz_t x;
    fmpz_init(x);
    fmpz_set_str(x, r->lb, 10);
    json_object_set_new(o, "lb", hf_json_bigint(x));
    fmpz_set_str(x, r->ub, 10);
    json_object_set_new(o, "ub", hf_json_bigint(x));
    fmpz_clear(x);
    json_object_set_new(o, "status", json_string(r->status));
    json_object_set_new(o, "lb_rule", json_string(r->lb_rule));
    json_object_set_new(o, "engine", json_string(r->engine));
    json_object_set_new(o, "max_atoms",
                        r->max_atoms < 0 ? json_null() : json_integer(r->max_atoms));
    json_object_set_new(o, "n_min_raw",
                        r->n_min_raw < 0 ? json_null() : json_integer(r->n_min_raw));
    json_object_set_new(o, "n_min_sym",
                        r->n_min_sym < 0 ? json_null() : json_integer(r->n_min_sym));
    json_object_set_new(o, "group_order",
                        r->group_order < 0 ? json_null() : json_integer(r->group_order));
    /* why group_order is null although the search ran (null when known or not said) */
    json_object_set_new(o, "group_note",
                        r->group_note[0] ? json_string(r->group_note) : json_null());
    json_object_set_new(o, "nodes", json_integer(r->nodes));
    json_object_set_new(o, "units", json_integer(r->units));
    json_object_set_new(o, "seconds", json_real(r->seconds));
    return o;
}

/* Support j as a head into h (initialised with s's dimensions; read from its file when it
 * is held in one): HF_ERR_CORRUPT when it is a bad witness. */
static hf_err_t support_head(const hf_supports_t *s, long j, hf_head_t *h)
{
    const char *why = NULL;
    hf_err_t e = hf_supports_head(s, j, h, &why);
    if (e == HF_OK && why)
        e = hf_error(HF_ERR_CORRUPT, "support %ld: %s", j, why);
    return e;
}

void hf_report_supports_json(json_t *o, const hf_supports_t *s)
{
    json_t *all = json_array(), *wit = json_array();
    hf_head_t h;
    hf_head_init(&h, s->d, s->dv);
    for (long j = 0; j < s->n; j++) {
        json_t *jh = support_head(s, j, &h) == HF_OK ? hf_head_to_json(&h, NULL, 1) : NULL;
        if (jh) {
            json_array_append(all, json_object_get(jh, "keys"));
            json_t *w = json_object();
            json_object_set(w, "weights", json_object_get(jh, "weights"));
            json_object_set(w, "values", json_object_get(jh, "values"));
            json_array_append_new(wit, w);
            json_decref(jh);
        }
    }
    hf_head_clear(&h);
    json_object_set_new(o, "supports", all);
    json_object_set_new(o, "witnesses", wit);
}

/* Append text to *out (length *len, capacity *cap). */
static hf_err_t text_append(const char *text, char **out, long *len, long *cap)
{
    long k = (long)strlen(text);
    if (HF_GROW(out, cap, *len + k + 1) != HF_OK)
        return HF_ERR_NOMEM;
    memcpy(*out + *len, text, (size_t)k + 1);
    *len += k;
    return HF_OK;
}

/* Append the keys of h in the --keys syntax "0,0;1,0;0,1". */
static hf_err_t keys_append(const hf_head_t *h, char **out, long *len, long *cap)
{
    hf_err_t e = HF_OK;
    for (long a = 0; a < h->natoms; a++)
        for (int c = 0; c < h->d && e == HF_OK; c++) {
            char num[32];
            snprintf(num, sizeof num, "%s%" PRId64, c ? "," : a ? ";" : "", h->keys[a * h->d + c]);
            e = text_append(num, out, len, cap);
        }
    return e;
}

char *hf_report_supports_text(const hf_supports_t *s)
{
    long cap = 64, len = 0;
    char *out = hf_malloc((size_t)cap);
    hf_head_t h;
    hf_head_init(&h, s->d, s->dv);
    hf_err_t e = out ? HF_OK : HF_ERR_NOMEM;
    if (out)
        out[0] = '\0';
    for (long j = 0; e == HF_OK && j < s->n; j++) {
        e = support_head(s, j, &h);
        if (e == HF_OK)
            e = text_append(j ? " | " : "", &out, &len, &cap);
        if (e == HF_OK)
            e = keys_append(&h, &out, &len, &cap);
    }
    hf_head_clear(&h);
    if (e != HF_OK) {
        free(out);
        return NULL;
    }
    return out;
}
