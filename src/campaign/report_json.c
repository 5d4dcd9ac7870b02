/* JSON with integers of any size, and a table row's JSON form (headfuse/report.h). */
#include <errno.h>
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
