/* The one conversion between a head (exact rationals) and JSON: used for witnesses in
 * shard records and in the command line's JSON output (headfuse/target.h). */
#include <stdlib.h>

#include "headfuse/target.h"

/* Append x as a string; nonzero when out of memory. */
static int append_rational(json_t *a, const fmpq_t x)
{
    char *s = hf_rational_str(x);
    int bad = !s || json_array_append_new(a, json_string(s)) < 0;
    free(s);
    return bad;
}

json_t *hf_head_to_json(const hf_head_t *h, const int64_t *keys, int flat)
{
    if (!keys)
        keys = h->keys;
    json_t *o = json_object(), *jk = json_array(), *jw = json_array(), *jv = json_array();
    int bad = !o || !jk || !jw || !jv;
    for (long i = 0; !bad && i < h->natoms; i++) {
        json_t *k = json_array();
        bad |= json_array_append_new(jk, k) < 0;
        for (int j = 0; !bad && j < h->d; j++)
            bad |= json_array_append_new(k, json_integer(keys[i * h->d + j])) < 0;
        bad |= append_rational(jw, h->weights + i);
        if (flat && h->dv == 1) {
            bad |= append_rational(jv, h->values + i);
            continue;
        }
        json_t *v = json_array();
        bad |= json_array_append_new(jv, v) < 0;
        for (int j = 0; !bad && j < h->dv; j++)
            bad |= append_rational(v, h->values + i * h->dv + j);
    }
    bad |= json_object_set_new(o, "keys", jk) < 0;
    bad |= json_object_set_new(o, "weights", jw) < 0;
    bad |= json_object_set_new(o, "values", jv) < 0;
    if (bad) {
        json_decref(o);
        hf_error(HF_ERR_NOMEM, "out of memory formatting a head as JSON");
        return NULL;
    }
    return o;
}

hf_err_t hf_head_from_json(hf_head_t *h, const json_t *o, long m)
{
    int d = h->d, dv = h->dv;
    json_t *jk = json_object_get(o, "keys"), *jw = json_object_get(o, "weights"),
           *jv = json_object_get(o, "values");
    if (!json_is_array(jk) || !json_is_array(jw) || !json_is_array(jv) ||
        (long)json_array_size(jk) != m || (long)json_array_size(jw) != m ||
        (long)json_array_size(jv) != m)
        return hf_error(HF_ERR_INPUT, "not a head of %ld atoms (keys, weights, values)", m);
    HF_TRY(hf_head_resize(h, m));
    for (long i = 0; i < m; i++) {
        json_t *k = json_array_get(jk, i), *v = json_array_get(jv, i);
        if (!json_is_array(k) || (int)json_array_size(k) != d)
            return hf_error(HF_ERR_INPUT, "keys[%ld]: not %d integers", i, d);
        for (int j = 0; j < d; j++) {
            json_t *x = json_array_get(k, j);
            if (!json_is_integer(x))
                return hf_error(HF_ERR_INPUT, "keys[%ld]: not %d integers", i, d);
            h->keys[i * d + j] = json_integer_value(x);
        }
        const char *ws = json_string_value(json_array_get(jw, i));
        hf_err_t e = ws ? hf_rational_parse(h->weights + i, ws) : HF_ERR_INPUT;
        if (e == HF_ERR_NOMEM) /* the parser's own message: not a fault of the record */
            return e;
        if (e != HF_OK)
            return hf_error(HF_ERR_INPUT, "weights[%ld]: not a rational string", i);
        int flat = dv == 1 && json_is_string(v);
        if (!flat && (!json_is_array(v) || (int)json_array_size(v) != dv))
            return hf_error(HF_ERR_INPUT, "values[%ld]: not %d rational strings", i, dv);
        for (int j = 0; j < dv; j++) {
            const char *vs = json_string_value(flat ? v : json_array_get(v, j));
            e = vs ? hf_rational_parse(h->values + i * dv + j, vs) : HF_ERR_INPUT;
            if (e == HF_ERR_NOMEM)
                return e;
            if (e != HF_OK)
                return hf_error(HF_ERR_INPUT, "values[%ld]: not %d rational strings", i, dv);
        }
    }
    return HF_OK;
}
