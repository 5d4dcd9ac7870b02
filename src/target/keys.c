/* The key-set option ("0,0;1,0;0,1"): keys separated by ';', coordinates by ','. Keys
 * are numbered from 1 in messages, as a user counts them on the command line. */
#include <stdlib.h>
#include <string.h>

#include "headfuse/target.h"

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Parse the coordinate text [s, e) (blanks around it allowed) into *out. */
static hf_err_t parse_coord(const char *s, const char *e, const char *origin, long key, int c,
                            int64_t *out)
{
    while (s < e && is_blank(*s))
        s++;
    while (e > s && is_blank(e[-1]))
        e--;
    long v;
    switch (hf_parse_long(s, e - s, -HF_KEY_MAX, HF_KEY_MAX, &v)) {
    case HF_PARSE_OK:
        *out = v;
        return HF_OK;
    case HF_PARSE_RANGE:
        return hf_error(HF_ERR_INPUT, "%s: key %ld, coordinate %d: '%.*s' is outside -%d..%d",
                        origin, key, c, (int)(e - s), s, HF_KEY_MAX, HF_KEY_MAX);
    default:
        return hf_error(HF_ERR_INPUT, "%s: key %ld, coordinate %d: '%.*s' is not an integer",
                        origin, key, c, (int)(e - s), s);
    }
}

hf_err_t hf_keys_parse(const char *text, int d, const char *origin, int64_t **keys, long *m)
{
    hf_err_t err = HF_OK;
    int64_t *out = NULL;
    long *order = NULL;
    *keys = NULL;
    *m = 0;
    if (!origin)
        origin = "--keys";
    if (d < 1 || d > HF_D_MAX)
        return hf_error(HF_ERR_INPUT, "%s: d = %d is outside 1..%d", origin, d, HF_D_MAX);
    if (!text)
        text = "";

    const char *s = text;
    while (is_blank(*s))
        s++;
    if (!*s)
        return hf_error(HF_ERR_INPUT, "%s: empty key list", origin);

    long n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ';';
    out = hf_malloc((size_t)n * d * sizeof *out);
    if (!out) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }

    const char *ks = text;
    for (long i = 0; i < n; i++) {
        const char *ke = strchr(ks, ';');
        if (!ke)
            ke = ks + strlen(ks);
        const char *b = ks;
        while (b < ke && is_blank(*b))
            b++;
        if (b == ke) {
            err = hf_error(HF_ERR_INPUT, "%s: key %ld is empty", origin, i + 1);
            goto cleanup;
        }
        int ncoord = 1;
        for (const char *p = ks; p < ke; p++)
            ncoord += *p == ',';
        if (ncoord != d) {
            err = hf_error(HF_ERR_INPUT, "%s: key %ld has %d coordinate%s, expected %d", origin,
                           i + 1, ncoord, ncoord == 1 ? "" : "s", d);
            goto cleanup;
        }
        const char *cs = ks;
        for (int c = 0; c < d; c++) {
            const char *ce = memchr(cs, ',', (size_t)(ke - cs));
            if (!ce)
                ce = ke;
            HF_CHECK(err, parse_coord(cs, ce, origin, i + 1, c + 1, out + i * d + c), cleanup);
            cs = ce + 1;
        }
        ks = ke + 1;
    }

    /* Repeats: sort indices by key, then report the earliest key that repeats another. */
    order = hf_malloc((size_t)n * sizeof *order);
    if (!order) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < n; i++)
        order[i] = i;
    /* by key; the sort is stable, so equal keys stay in index order */
    hf_rows_t rows = {out, d};
    HF_CHECK(err, hf_sort(order, n, hf_cmp_rows, &rows), cleanup);
    long rep = -1, first = -1, group = 0;
    for (long r = 1; r < n; r++) {
        if (memcmp(out + order[r] * d, out + order[r - 1] * d, (size_t)d * sizeof *out)) {
            group = r;
            continue;
        }
        if (r == group + 1 && (rep < 0 || order[r] < rep)) {
            rep = order[r];
            first = order[group];
        }
    }
    if (rep >= 0) {
        err = hf_error(HF_ERR_INPUT, "%s: key %ld repeats key %ld", origin, rep + 1, first + 1);
        goto cleanup;
    }
    *keys = out;
    *m = n;
    out = NULL;
cleanup:
    free(order);
    free(out);
    return err;
}
