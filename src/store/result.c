/* RESULT.h5 in memory (hf_result_t): the merged minimal-atom table with every minimal
 * support's exact witness, the per-unit cost log and provenance; its rows' m* at any size,
 * and the field-by-field validation that the writer (result_write.c) and the reader
 * (result_read.c) share. Format: docs/hdf5-format.md. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"

void hf_result_init(hf_result_t *r)
{
    memset(r, 0, sizeof *r);
}

void hf_result_clear(hf_result_t *r)
{
    for (long i = 0; i < r->nrows; i++) {
        if (r->supports)
            hf_supports_clear(&r->supports[i]);
        if (r->target_json)
            free(r->target_json[i]);
    }
    free(r->target_json);
    free(r->supports);
    free(r->rows);
    free(r->units);
    free(r->version);
    free(r->git_commit);
    free(r->command_line);
    free(r->host);
    free(r->start_time);
    free(r->end_time);
    free(r->job_text);
    memset(r, 0, sizeof *r);
}

hf_err_t hf_result_add_row(hf_result_t *r, const hf_row_t *row, const hf_supports_t *sup,
                           const char *target_json)
{
    size_t n = (size_t)r->nrows + 1;
    HF_TRY(hf_grow_arrays(
        &r->caprows, (long)n, 3,
        (void **const[]){(void **)&r->rows, (void **)&r->supports, (void **)&r->target_json},
        (const size_t[]){sizeof *r->rows, sizeof *r->supports, sizeof *r->target_json}));
    hf_row_t *rows = r->rows;
    hf_supports_t *sups = r->supports;
    char **tj = r->target_json;
    char *json = hf_strdup(target_json ? target_json : "");
    if (!json)
        return HF_ERR_NOMEM;
    hf_err_t err;
    if (sup) {
        hf_supports_init(&sups[n - 1], sup->m, sup->d, sup->dv);
        err = hf_supports_copy(&sups[n - 1], sup);
    } else {
        /* no supports given: an empty set shaped like the row */
        hf_supports_init(&sups[n - 1], row->m_star, row->d, 1);
        err = HF_OK;
    }
    if (err != HF_OK) {
        hf_supports_clear(&sups[n - 1]);
        free(json);
        return err;
    }
    rows[n - 1] = *row;
    tj[n - 1] = json;
    r->nrows++;
    return HF_OK;
}

/* ---- m* at any size ---- */

/* A non-negative decimal without leading zeros (but "0"), of fewer than HF_BIGINT_LEN
 * digits. */
static int plain_decimal(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= HF_BIGINT_LEN || (s[0] == '0' && n > 1))
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* The value of a plain decimal when it fits in int64, else -1. */
static int64_t decimal_i64(const char *s)
{
    const char *max = "9223372036854775807"; /* INT64_MAX */
    size_t n = strlen(s), nm = strlen(max);
    if (n > nm || (n == nm && strcmp(s, max) > 0))
        return -1;
    return (int64_t)strtoll(s, NULL, 10);
}

hf_err_t hf_row_set_m_star(hf_row_t *row, const char *decimal)
{
    if (!decimal || !strcmp(decimal, "-1")) {
        row->m_star = -1;
        snprintf(row->m_star_dec, sizeof row->m_star_dec, "-1");
        return HF_OK;
    }
    if (!plain_decimal(decimal))
        return hf_error(HF_ERR_INTERNAL, "row %s: m* '%.60s' is not a decimal of at most %d digits",
                        row->name, decimal, HF_BIGINT_LEN - 1);
    snprintf(row->m_star_dec, sizeof row->m_star_dec, "%s", decimal);
    row->m_star = decimal_i64(decimal);
    return HF_OK;
}

const char *hf_row_m_star(const hf_row_t *row, char buf[HF_BIGINT_LEN])
{
    if (row->m_star_dec[0] && memchr(row->m_star_dec, '\0', sizeof row->m_star_dec))
        return row->m_star_dec;
    snprintf(buf, HF_BIGINT_LEN, "%" PRId64, row->m_star < 0 ? (int64_t)-1 : row->m_star);
    return buf;
}

/* ---- validation shared by the writer (result_write.c) and the reader (result_read.c) ---- */

static int str_terminated(const char *s, size_t n)
{
    return memchr(s, '\0', n) != NULL;
}

static int decimal_or_null(const char *s)
{
    if (!strcmp(s, "-1"))
        return 1;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* An engine name: lower-case letters, digits, '-' and '_' (names added by later
 * versions are accepted, so that their files stay readable). */
static int engine_ok(const char *s, size_t n)
{
    if (!str_terminated(s, n) || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            return 0;
    return 1;
}

/* NULL if the row is valid, else the name of the first bad field. */
const char *hf_result_row_bad(const hf_row_t *w)
{
    if (!str_terminated(w->name, sizeof w->name) || !w->name[0])
        return "name";
    if (w->d < 1 || w->d > HF_D_MAX)
        return "d";
    if (w->span < -1)
        return "span";
    if (w->m_star < -1)
        return "m_star";
    if (!str_terminated(w->lb, sizeof w->lb) || !decimal_or_null(w->lb))
        return "lb";
    if (!str_terminated(w->ub, sizeof w->ub) || !decimal_or_null(w->ub))
        return "ub";
    if (!str_terminated(w->status, sizeof w->status) ||
        (strcmp(w->status, "certified") && strcmp(w->status, "exhaustive") &&
         strcmp(w->status, "infeasible") && strcmp(w->status, "open")))
        return "status";
    if (w->n_min_raw < -1)
        return "n_min_raw";
    if (w->n_min_sym < -1)
        return "n_min_sym";
    if (w->group_order < -1)
        return "group_order";
    if (w->nodes < -1)
        return "nodes";
    if (w->units < -1)
        return "units";
    if (!isfinite(w->seconds) || (w->seconds < 0 && w->seconds != -1))
        return "seconds";
    if (w->max_atoms < -1)
        return "max_atoms";
    if (!engine_ok(w->engine, sizeof w->engine))
        return "engine";
    if (!str_terminated(w->lb_rule, sizeof w->lb_rule) ||
        (w->lb_rule[0] && !engine_ok(w->lb_rule, sizeof w->lb_rule)))
        return "lb_rule"; /* empty: not recorded */
    /* the decimal and the int64 say the same m*: equal when it fits, -1 when not */
    if (!str_terminated(w->m_star_dec, sizeof w->m_star_dec) ||
        (strcmp(w->m_star_dec, "-1") && !plain_decimal(w->m_star_dec)))
        return "m_star_dec";
    if (strcmp(w->m_star_dec, "-1") ? decimal_i64(w->m_star_dec) != w->m_star : w->m_star != -1)
        return "m_star_dec (differs from m_star)";
    return NULL;
}

/* Supports must match their row: same d, and size m_star when there are any. */
const char *hf_result_supports_bad(const hf_supports_t *s, const hf_row_t *w)
{
    if (s->d != w->d)
        return "d differs from the row's d";
    if (s->dv < 1 || s->dv > HF_DV_MAX)
        return "dv out of range 1..16";
    if (s->n < 0)
        return "negative n";
    if (s->m < -1)
        return "m < -1";
    if (s->n > 0 && (s->m < 1 || s->m != w->m_star))
        return "m differs from the row's m_star";
    return NULL;
}

const char *hf_result_unit_bad(const hf_unit_record_t *u, long nrows)
{
    if (u->row < 0 || u->row >= nrows)
        return "row out of range";
    if (u->rank < 0)
        return "negative rank";
    if (u->m < 0 || u->unit < 0 || u->nodes < 0 || u->found < 0)
        return "negative count";
    if (u->lo < 0 || u->hi <= u->lo)
        return "invalid cell range";
    if (!isfinite(u->seconds) || u->seconds < 0)
        return "bad seconds";
    return NULL;
}
