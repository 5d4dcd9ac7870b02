/* RESULT.h5: the merged minimal-atom table with every minimal support's exact
 * witness, the per-unit cost log and provenance. In memory: hf_result_t. Written
 * atomically (PATH.tmp, then rename) and validated field by field when read.
 * Format: docs/hdf5-format.md. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/stop.h"
#include "headfuse/target.h"
#include "store/store_impl.h"

/* Format 2 added the rows' max_atoms, engine and lb_rule, the "infeasible" status and
 * the job_text root attribute; format 3 the rows' m_star_dec (m* in decimal, exact beyond
 * 64 bits). Files of formats 1 and 2 are still read (docs/hdf5-format.md). */
#define RESULT_FORMAT "headfuse-result-3"
#define RESULT_FORMAT_2 "headfuse-result-2"
#define RESULT_FORMAT_1 "headfuse-result-1"
#define RESULT_FORMAT_PREFIX "headfuse-result-"
/* Largest weight or value string, NUL included: a larger fixed-length size in a file
 * is damage (no witness of a real search comes near it). */
#define RESULT_STR_MAX ((size_t)1 << 24)

/* ---- supports ---- */

void hf_supports_init(hf_supports_t *s, long m, int d, int dv)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->d = d;
    s->dv = dv;
}

void hf_supports_clear(hf_supports_t *s)
{
    long mm = s->m > 0 ? s->m : 0;
    if (s->weights)
        for (long i = 0; i < s->n * mm; i++)
            free(s->weights[i]);
    if (s->values)
        for (long i = 0; i < s->n * mm * s->dv; i++)
            free(s->values[i]);
    free(s->values);
    free(s->weights);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

/* Copy n strings; on failure free the copies made and return HF_ERR_NOMEM. */
static hf_err_t copy_strings(char **dst, char *const *src, long n)
{
    for (long i = 0; i < n; i++) {
        if (!src[i] || !(dst[i] = hf_strdup(src[i]))) {
            for (long j = 0; j < i; j++)
                free(dst[j]);
            return src[i] ? HF_ERR_NOMEM
                          : hf_error(HF_ERR_INTERNAL, "supports: NULL weight or value string");
        }
    }
    return HF_OK;
}

hf_err_t hf_supports_push(hf_supports_t *s, const int64_t *keys, char *const *weights,
                          char *const *values)
{
    if (s->m < 0 || s->d < 1 || s->dv < 1)
        return hf_error(HF_ERR_INTERNAL, "supports: cannot push with m=%ld, d=%d, dv=%d", s->m,
                        s->d, s->dv);
    size_t m = (size_t)s->m, d = (size_t)s->d, dv = (size_t)s->dv, n = (size_t)s->n + 1;
    /* grow all three arrays first (a support is m*d keys, m weights and m*dv values); s->n
     * only changes once everything is copied */
    HF_TRY(hf_grow_arrays(
        &s->cap, (long)n, 3,
        (void **const[]){(void **)&s->keys, (void **)&s->weights, (void **)&s->values},
        (const size_t[]){m * d * sizeof *s->keys, m * sizeof *s->weights,
                         m * dv * sizeof *s->values}));
    int64_t *nk = s->keys;
    char **nw = s->weights, **nv = s->values;
    size_t b = n - 1;
    HF_TRY(copy_strings(nw + b * m, weights, (long)m));
    hf_err_t err = copy_strings(nv + b * m * dv, values, (long)(m * dv));
    if (err != HF_OK) {
        for (size_t i = 0; i < m; i++)
            free(nw[b * m + i]);
        return err;
    }
    if (m * d > 0)
        memcpy(nk + b * m * d, keys, m * d * sizeof *nk);
    s->n++;
    return HF_OK;
}

hf_err_t hf_supports_push_head(hf_supports_t *s, const hf_head_t *h)
{
    long m = h->natoms;
    if (m != s->m || h->d != s->d || h->dv != s->dv)
        return hf_error(HF_ERR_INTERNAL,
                        "supports: a head of %ld atoms (d=%d, dv=%d) in rows of %ld", m, h->d,
                        h->dv, s->m);
    char **ws = hf_calloc((size_t)(m ? m : 1), sizeof *ws);
    char **vs = hf_calloc((size_t)(m ? m : 1) * (size_t)h->dv, sizeof *vs);
    hf_err_t e = ws && vs ? HF_OK : HF_ERR_NOMEM;
    for (long i = 0; e == HF_OK && i < m; i++) {
        if (!(ws[i] = hf_rational_str(h->weights + i)))
            e = hf_error(HF_ERR_NOMEM, "out of memory");
        for (int j = 0; e == HF_OK && j < h->dv; j++)
            if (!(vs[i * h->dv + j] = hf_rational_str(h->values + i * h->dv + j)))
                e = hf_error(HF_ERR_NOMEM, "out of memory");
    }
    if (e == HF_OK)
        e = hf_supports_push(s, h->keys, ws, vs);
    for (long i = 0; ws && i < m; i++)
        free(ws[i]);
    for (long i = 0; vs && i < m * h->dv; i++)
        free(vs[i]);
    free(ws);
    free(vs);
    return e;
}

hf_err_t hf_supports_head(const hf_supports_t *s, long j, hf_head_t *h, const char **why)
{
    *why = NULL;
    HF_TRY(hf_head_resize(h, s->m));
    for (long a = 0; a < s->m; a++) {
        long i = j * s->m + a;
        memcpy(h->keys + a * s->d, s->keys + i * s->d, (size_t)s->d * sizeof *h->keys);
        hf_err_t e = hf_rational_parse(h->weights + a, s->weights[i]);
        if (e == HF_ERR_NOMEM) /* out of memory is an error, not a bad file */
            return e;
        if (e != HF_OK) {
            *why = "a weight is not a valid rational";
            return HF_OK;
        }
        for (int c = 0; c < s->dv; c++) {
            e = hf_rational_parse(h->values + a * s->dv + c, s->values[i * s->dv + c]);
            if (e == HF_ERR_NOMEM)
                return e;
            if (e != HF_OK) {
                *why = "a value is not a valid rational";
                return HF_OK;
            }
        }
    }
    return HF_OK;
}

static hf_err_t supports_copy(hf_supports_t *dst, const hf_supports_t *src)
{
    hf_supports_init(dst, src->m, src->d, src->dv);
    size_t m = src->m > 0 ? (size_t)src->m : 0, d = (size_t)src->d, dv = (size_t)src->dv;
    for (long i = 0; i < src->n; i++) {
        hf_err_t err = hf_supports_push(dst, src->keys + i * m * d, src->weights + i * m,
                                        src->values + i * m * dv);
        if (err != HF_OK) {
            hf_supports_clear(dst);
            return err;
        }
    }
    return HF_OK;
}

/* ---- result in memory ---- */

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
        err = supports_copy(&sups[n - 1], sup);
    } else {
        /* no supports given: an empty set shaped like the row */
        hf_supports_init(&sups[n - 1], row->m_star, row->d, 1);
        err = HF_OK;
    }
    if (err != HF_OK) {
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

/* ---- validation shared by writer and reader ---- */

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
static const char *row_bad_field(const hf_row_t *w)
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
static const char *supports_bad(const hf_supports_t *s, const hf_row_t *w)
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

static const char *unit_bad(const hf_unit_record_t *u, long nrows)
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

/* ---- writing ---- */

/* State of one write: the current step names the object in messages. */
typedef struct {
    const char *path;
    char what[96];
} wctx_t;

static hid_t simple_space(int rank, const hsize_t *dims)
{
    return H5Screate_simple(rank, dims, NULL);
}

/* Create dataset `name` under loc and write buf (skipped when empty). */
/* Datasets of at least this many bytes are chunked (about CHUNK_BYTES a chunk, whole
 * rows of their last dimension) and compressed (shuffle + deflate 1): a witness of 10^7
 * keys is mostly small integers, ten times smaller compressed (docs/hdf5-format.md,
 * "Conventions"). Smaller ones stay contiguous, as before. */
#define COMPRESS_MIN_BYTES ((hsize_t)64 << 10)
#define CHUNK_BYTES ((hsize_t)1 << 20)

static hid_t dataset_dcpl(hid_t ftype, int rank, const hsize_t *dims, hsize_t count)
{
    size_t el = H5Tget_size(ftype);
    if (rank < 1 || rank > 3 || count * el < COMPRESS_MIN_BYTES)
        return H5P_DEFAULT;
    /* from the last dimension on, as much of each as keeps a chunk near CHUNK_BYTES */
    hsize_t chunk[3], inner = el;
    for (int i = rank - 1; i >= 0; i--) {
        hsize_t k = CHUNK_BYTES / inner;
        chunk[i] = k < 1 ? 1 : k < dims[i] ? k : dims[i];
        inner *= chunk[i];
    }
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
        H5Pset_deflate(dcpl, 1) < 0) {
        if (dcpl >= 0)
            H5Pclose(dcpl);
        return H5I_INVALID_HID;
    }
    return dcpl;
}

static herr_t write_dataset(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank,
                            const hsize_t *dims, const void *buf)
{
    herr_t rc = -1;
    hid_t space = simple_space(rank, dims), ds = H5I_INVALID_HID;
    hsize_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    if (space < 0)
        return -1;
    hid_t dcpl = dataset_dcpl(ftype, rank, dims, count);
    if (dcpl == H5I_INVALID_HID)
        goto done;
    ds = HF_H5W(H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    if (dcpl != H5P_DEFAULT)
        H5Pclose(dcpl);
    if (ds < 0)
        goto done;
    rc = count ? HF_H5W(H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) : 0;
done:
    if (ds >= 0 && HF_H5W_CLOSE(H5Dclose(ds)) < 0)
        rc = -1;
    H5Sclose(space);
    return rc;
}

/* The count strings of strs as one block of fixed-length strings of *size bytes each,
 * the longest string plus its NUL (1 when there are none). NULL with HF_ERR_NOMEM
 * recorded when out of memory. */
static char *pack_strings(char *const *strs, size_t count, size_t *size)
{
    size_t w = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(strs[i]);
        if (len > w)
            w = len;
    }
    *size = w + 1;
    char *buf = hf_calloc(count, *size);
    if (buf)
        for (size_t i = 0; i < count; i++)
            memcpy(buf + i * *size, strs[i], strlen(strs[i]));
    return buf;
}

/* A dataset of rational strings, fixed-length (sized by its longest string) so that
 * the file has no global heap: HDF5 1.10.8 crashes on a damaged one (148 of the 177
 * libhdf5-internal findings of the second RESULT.h5 fuzz run, docs/reliability.md).
 * HF_ERR_NOMEM, HF_ERR_IO (c->what says where) or HF_OK. */
static hf_err_t write_str_dataset(hid_t loc, const char *name, int rank, const hsize_t *dims,
                                  char *const *strs)
{
    size_t count = 1, size;
    for (int i = 0; i < rank; i++)
        count *= (size_t)dims[i];
    char *buf = pack_strings(strs, count, &size);
    if (!buf)
        return HF_ERR_NOMEM;
    hid_t t = hf_h5_fixed_str_type(size);
    herr_t rc = t < 0 ? -1 : write_dataset(loc, name, t, t, rank, dims, buf);
    if (t >= 0)
        H5Tclose(t);
    free(buf);
    return rc < 0 ? HF_ERR_IO : HF_OK;
}

static hf_err_t write_row_group(hid_t rows, long i, const hf_supports_t *s, const char *json,
                                const char *group_note, wctx_t *c)
{
    char name[32];
    snprintf(name, sizeof name, "%ld", i);
    hsize_t m = s->m > 0 ? (hsize_t)s->m : 0, n = (hsize_t)s->n;
    hsize_t kd[3] = {n, m, (hsize_t)s->d}, vd[3] = {n, m, (hsize_t)s->dv};
    snprintf(c->what, sizeof c->what, "writing /rows/%ld", i);
    hid_t g = HF_H5W(H5Gcreate2(rows, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (g < 0)
        return HF_ERR_IO;
    herr_t rc = 0;
    hf_err_t err = HF_OK;
    if (hf_h5_attr_write_text(g, "target_json", json) < 0 ||
        hf_h5_attr_write_i64(g, "m", s->m) < 0 || hf_h5_attr_write_i32(g, "d", s->d) < 0 ||
        hf_h5_attr_write_i32(g, "dv", s->dv) < 0 || hf_h5_attr_write_i64(g, "n", s->n) < 0 ||
        (group_note[0] && hf_h5_attr_write_text(g, "group_note", group_note) < 0))
        rc = -1;
    if (rc >= 0) {
        snprintf(c->what, sizeof c->what, "writing /rows/%ld/keys", i);
        rc = write_dataset(g, "keys", H5T_STD_I64LE, H5T_NATIVE_INT64, 3, kd, s->keys);
    }
    if (rc >= 0) {
        snprintf(c->what, sizeof c->what, "writing /rows/%ld/weights", i);
        err = write_str_dataset(g, "weights", 2, kd, s->weights);
    }
    if (rc >= 0 && err == HF_OK) {
        snprintf(c->what, sizeof c->what, "writing /rows/%ld/values", i);
        err = write_str_dataset(g, "values", 3, vd, s->values);
    }
    if (rc >= 0 && err == HF_OK)
        snprintf(c->what, sizeof c->what, "closing /rows/%ld", i);
    if (HF_H5W_CLOSE(H5Gclose(g)) < 0)
        rc = -1;
    if (err != HF_OK)
        return err;
    return rc < 0 ? HF_ERR_IO : HF_OK;
}

/* Everything after the file is created; returns HF_ERR_IO with c->what set, or
 * HF_ERR_NOMEM (recorded). Every string is fixed-length, so that the file has no
 * global heap (docs/hdf5-format.md). */
static hf_err_t write_contents(hid_t file, const hf_result_t *r, wctx_t *c)
{
    hf_err_t err = HF_ERR_IO;
    hid_t rowf = hf_h5_row_type(1), rowm = hf_h5_row_type(0);
    hid_t unitf = hf_h5_unit_type(1), unitm = hf_h5_unit_type(0);
    hid_t rows = H5I_INVALID_HID, table = H5I_INVALID_HID;
    snprintf(c->what, sizeof c->what, "building datatypes");
    if (rowf < 0 || rowm < 0 || unitf < 0 || unitm < 0)
        goto done;

    snprintf(c->what, sizeof c->what, "writing root attributes");
    if (hf_h5_attr_write_text(file, "format", RESULT_FORMAT) < 0 ||
        hf_h5_attr_write_text(file, "version", r->version) < 0 ||
        hf_h5_attr_write_text(file, "git_commit", r->git_commit) < 0 ||
        hf_h5_attr_write_text(file, "command_line", r->command_line) < 0 ||
        hf_h5_attr_write_text(file, "host", r->host) < 0 ||
        hf_h5_attr_write_text(file, "start_time", r->start_time) < 0 ||
        hf_h5_attr_write_text(file, "end_time", r->end_time) < 0 ||
        hf_h5_attr_write_text(file, "job_text", r->job_text) < 0 ||
        hf_h5_attr_write_i32(file, "ranks", r->ranks) < 0)
        goto done;

    snprintf(c->what, sizeof c->what, "writing /table");
    hsize_t nr = (hsize_t)r->nrows;
    if (write_dataset(file, "table", rowf, rowm, 1, &nr, r->rows) < 0 ||
        (table = H5Dopen2(file, "table", H5P_DEFAULT)) < 0 ||
        hf_h5_attr_write_i64(table, "null_value", -1) < 0)
        goto done;
    herr_t rc = HF_H5W_CLOSE(H5Dclose(table));
    table = H5I_INVALID_HID;
    if (rc < 0)
        goto done;

    snprintf(c->what, sizeof c->what, "writing /rows");
    if ((rows = HF_H5W(H5Gcreate2(file, "rows", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT))) < 0)
        goto done;
    for (long i = 0; i < r->nrows; i++)
        if ((err = hf_stop_check(HF_STOP_WRITE)) != HF_OK ||
            (err = write_row_group(rows, i, &r->supports[i], r->target_json[i],
                                   r->rows[i].group_note, c)) != HF_OK)
            goto done;
    err = HF_ERR_IO;
    snprintf(c->what, sizeof c->what, "closing /rows");
    rc = HF_H5W_CLOSE(H5Gclose(rows));
    rows = H5I_INVALID_HID;
    if (rc < 0)
        goto done;

    snprintf(c->what, sizeof c->what, "writing /units");
    hsize_t nu = (hsize_t)r->nunits;
    if (write_dataset(file, "units", unitf, unitm, 1, &nu, r->units) < 0)
        goto done;
    err = HF_OK;
done:
    /* only after an earlier failure: err is HF_ERR_IO already */
    if (rows >= 0)
        H5Gclose(rows);
    if (table >= 0)
        H5Dclose(table);
    if (unitm >= 0)
        H5Tclose(unitm);
    if (unitf >= 0)
        H5Tclose(unitf);
    if (rowm >= 0)
        H5Tclose(rowm);
    if (rowf >= 0)
        H5Tclose(rowf);
    return err;
}

/* Refuse to write what the reader would reject. */
static hf_err_t check_result(const char *path, const hf_result_t *r)
{
    for (long i = 0; i < r->nrows; i++) {
        const char *bad = row_bad_field(&r->rows[i]);
        if (bad)
            return hf_error(HF_ERR_INTERNAL, "%s: row %ld: invalid %s", path, i, bad);
        const hf_supports_t *s = &r->supports[i];
        if ((bad = supports_bad(s, &r->rows[i])))
            return hf_error(HF_ERR_INTERNAL, "%s: row %ld: supports: %s", path, i, bad);
        long mm = s->m > 0 ? s->m : 0;
        for (long j = 0; j < s->n * mm; j++)
            if (strlen(s->weights[j]) >= RESULT_STR_MAX)
                return hf_error(HF_ERR_INTERNAL, "%s: row %ld: a weight of %zu bytes", path, i,
                                strlen(s->weights[j]));
            else if (!hf_rational_syntax_ok(s->weights[j]))
                return hf_error(HF_ERR_INTERNAL, "%s: row %ld: weight '%s' is not a rational", path,
                                i, s->weights[j]);
        for (long j = 0; j < s->n * mm * s->dv; j++)
            if (strlen(s->values[j]) >= RESULT_STR_MAX)
                return hf_error(HF_ERR_INTERNAL, "%s: row %ld: a value of %zu bytes", path, i,
                                strlen(s->values[j]));
            else if (!hf_rational_syntax_ok(s->values[j]))
                return hf_error(HF_ERR_INTERNAL, "%s: row %ld: value '%s' is not a rational", path,
                                i, s->values[j]);
    }
    for (long i = 0; i < r->nunits; i++) {
        const char *bad = unit_bad(&r->units[i], r->nrows);
        if (bad)
            return hf_error(HF_ERR_INTERNAL, "%s: unit record %ld: %s", path, i, bad);
    }
    return HF_OK;
}

/* Build the whole file in memory (HDF5's core driver, no backing store) and
 * return its image. HDF5 1.10 cannot close a file whose final flush fails (a full
 * disk) and then crashes at exit; in memory nothing can fail that way, and the
 * disk writes below are plain write(2)s with errno for the message. */
static hf_err_t build_image(const char *path, const hf_result_t *r, void **image, size_t *size)
{
    hf_err_t err = HF_OK;
    wctx_t c = {path, ""};
    hid_t fapl = hf_h5_fapl(0), file = H5I_INVALID_HID;
    *image = NULL;
    if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 20, 0) < 0 ||
        (file = HF_H5W(H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl))) < 0) {
        err = hf_h5_fail(HF_ERR_IO, path, "creating the HDF5 file in memory");
        goto done;
    }
    if ((err = write_contents(file, r, &c)) != HF_OK) {
        if (err != HF_ERR_NOMEM && err != HF_ERR_INTERRUPTED)
            err = hf_h5_fail(HF_ERR_IO, path, c.what);
        goto done;
    }
    ssize_t n;
    if (HF_H5W(H5Fflush(file, H5F_SCOPE_GLOBAL)) < 0 ||
        (n = HF_H5W(H5Fget_file_image(file, NULL, 0))) < 0) {
        err = hf_h5_fail(HF_ERR_IO, path, "building the file image");
        goto done;
    }
    if (!(*image = hf_malloc((size_t)n))) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    if (HF_H5W(H5Fget_file_image(file, *image, (size_t)n)) != n) {
        err = hf_h5_fail(HF_ERR_IO, path, "building the file image");
        goto done;
    }
    *size = (size_t)n;
done:
    if (file >= 0 && HF_H5W_CLOSE(H5Fclose(file)) < 0 && err == HF_OK)
        err = hf_h5_fail(HF_ERR_IO, path, "closing the in-memory file");
    if (fapl >= 0)
        H5Pclose(fapl);
    if (err != HF_OK) {
        free(*image);
        *image = NULL;
    }
    return err;
}

/* Write all n bytes to fd. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = HF_SYSW(ENOSPC, write(fd, p, n));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

hf_err_t hf_result_write(const char *path, const hf_result_t *r)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    void *image = NULL;
    size_t size = 0;
    int created = 0, fd = -1;
    /* the rows as written: m_star_dec from m_star where the caller left it empty */
    hf_result_t w = *r;
    hf_row_t *rows = hf_malloc((size_t)(r->nrows ? r->nrows : 1) * sizeof *rows);
    if (!rows)
        return HF_ERR_NOMEM;
    for (long i = 0; i < r->nrows; i++) {
        char buf[HF_BIGINT_LEN];
        rows[i] = r->rows[i];
        if (!rows[i].m_star_dec[0])
            snprintf(rows[i].m_star_dec, sizeof rows[i].m_star_dec, "%s",
                     hf_row_m_star(&r->rows[i], buf));
    }
    w.rows = rows;
    r = &w;
    if ((err = check_result(path, r)) != HF_OK) {
        free(rows);
        return err;
    }
    size_t n = strlen(path);
    char *tmp = hf_malloc(n + 5);
    if (!tmp) {
        free(rows);
        return HF_ERR_NOMEM;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    hf_h5_quiet_begin(&q);
    HF_CHECK(err, build_image(path, r, &image, &size), done);
    fd = HF_SYSW(EIO, open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    if (fd < 0) {
        err = hf_error(HF_ERR_IO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        goto done;
    }
    created = 1;
    /* durable before it becomes visible under its final name */
    if (write_all(fd, image, size) < 0 || HF_SYSW(EIO, fsync(fd)) < 0) {
        err = hf_error(HF_ERR_IO, "%s: writing %s: %s", path, tmp, strerror(errno));
        goto done;
    }
    int rc = HF_SYSW_CLOSE(close(fd));
    fd = -1;
    if (rc < 0) {
        err = hf_error(HF_ERR_IO, "%s: writing %s: %s", path, tmp, strerror(errno));
        goto done;
    }
    if (HF_SYSW(EIO, rename(tmp, path)) < 0) {
        err = hf_error(HF_ERR_IO, "%s: renaming %s: %s", path, tmp, strerror(errno));
        goto done;
    }
    created = 0;
done:
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
    free(image);
    free(tmp);
    free(rows);
    hf_h5_quiet_end(&q);
    return err;
}

/* ---- reading ---- */

/* Product of dims with an overflow guard; 0 if implausibly large. */
static int dims_count(const hsize_t *dims, int rank, size_t *count)
{
    size_t c = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] && c > ((size_t)1 << 40) / dims[i])
            return 0;
        c *= dims[i];
    }
    *count = c;
    return 1;
}

/* A result file is written in full, so the data of every dataset is in the file: `count`
 * elements of at least `elsize` bytes each cannot take more than the file's size. Checked
 * before allocating, so that memory stays in proportion to the file (a 10 kB file whose
 * row claimed n = 2^30 supports made the reader ask for 512 GB; found with the fuzz
 * harness). */
static hf_err_t check_fits(hid_t ds, size_t count, size_t elsize, const char *path,
                           const char *where)
{
    hsize_t fsize = 0;
    hid_t f = H5Iget_file_id(ds);
    herr_t rc = f >= 0 ? H5Fget_filesize(f, &fsize) : -1;
    if (f >= 0)
        H5Fclose(f); /* only the reference H5Iget_file_id added */
    if (rc < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    if (elsize == 0)
        elsize = 1;
    /* a compressed dataset (docs/hdf5-format.md, "Conventions") can hold up to about 1032
     * times the file's bytes (deflate's best); a damaged extent still cannot claim more */
    hid_t dcpl = H5Dget_create_plist(ds);
    int filtered = dcpl >= 0 && H5Pget_nfilters(dcpl) > 0;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (filtered)
        fsize = fsize > ((hsize_t)1 << 50) ? ((hsize_t)1 << 60) : fsize * 1100;
    if (count > fsize / elsize)
        return hf_error(HF_ERR_CORRUPT,
                        "%s: %s: %zu elements of %zu bytes cannot be in a file of %llu bytes", path,
                        where, count, elsize, (unsigned long long)fsize);
    return HF_OK;
}

/* Element i of a string dataset as read: a pointer and its length. Fixed-length
 * strings (size bytes each) end at their first NUL or fill their size, whatever the
 * padding says (NULLTERM, NULLPAD); space-padded ones lose their trailing spaces. */
static const char *str_element(char *const *raw, const char *fixed, size_t size, H5T_str_t pad,
                               size_t i, size_t *len)
{
    if (!fixed) {
        *len = raw[i] ? strlen(raw[i]) : 0;
        return raw[i];
    }
    const char *p = fixed + i * size, *nul = memchr(p, '\0', size);
    size_t n = nul ? (size_t)(nul - p) : size;
    if (pad == H5T_STR_SPACEPAD)
        while (n > 0 && p[n - 1] == ' ')
            n--;
    *len = n;
    return p;
}

/* Read a dataset of rational strings with the given expected dims into copies. Written
 * as fixed-length strings; files written before have variable-length ones. */
static hf_err_t read_str_dataset(hid_t g, const char *name, int rank, const hsize_t *expect,
                                 const char *path, const char *where, char ***out)
{
    hf_err_t err = HF_OK;
    hid_t ds = H5I_INVALID_HID, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    hsize_t dims[3];
    char **raw = NULL, **copy = NULL, *fixed = NULL;
    size_t count = 0, size = 0;
    H5T_str_t pad = H5T_STR_NULLTERM;
    htri_t var = -1;
    int reclaim = 0;
    *out = NULL;
    if ((ds = H5Dopen2(g, name, H5P_DEFAULT)) < 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: missing or unreadable", path, where);
        goto done;
    }
    if ((ft = H5Dget_type(ds)) < 0 || H5Tget_class(ft) != H5T_STRING ||
        (var = H5Tis_variable_str(ft)) < 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: not strings", path, where);
        goto done;
    }
    if (!var) {
        /* never trust the size: it decides the allocation below */
        size = H5Tget_size(ft);
        pad = H5Tget_strpad(ft);
        H5T_cset_t cset = H5Tget_cset(ft);
        if (size == 0 || size > RESULT_STR_MAX) {
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: %s: fixed-length strings of %zu bytes (1 to %zu accepted)", path,
                           where, size, RESULT_STR_MAX);
            goto done;
        }
        if ((pad != H5T_STR_NULLTERM && pad != H5T_STR_NULLPAD && pad != H5T_STR_SPACEPAD) ||
            (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8)) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: strings of an unknown padding or character set",
                           path, where);
            goto done;
        }
    }
    HF_CHECK(err, hf_h5_dataset_dims(ds, rank, path, where, dims), done);
    for (int i = 0; i < rank; i++)
        if (dims[i] != expect[i]) {
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: %s: dimension %d is %llu, expected %llu from the group's "
                           "attributes",
                           path, where, i, (unsigned long long)dims[i],
                           (unsigned long long)expect[i]);
            goto done;
        }
    if (!dims_count(dims, rank, &count)) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: implausible size", path, where);
        goto done;
    }
    /* a variable-length element is a global heap ID in the file (16 bytes; 8 is a safe
     * bound); a fixed-length one is its size: count * size bytes stay below the file's */
    HF_CHECK(err, check_fits(ds, count, var ? 8 : size, path, where), done);
    copy = hf_calloc(count, sizeof *copy);
    if (!copy) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    if (var) {
        raw = hf_calloc(count, sizeof *raw);
        mt = raw ? hf_h5_str_mem_type(ft) : H5I_INVALID_HID;
    } else {
        fixed = hf_malloc(count * size);
        mt = fixed ? H5Tcopy(ft) : H5I_INVALID_HID; /* the bytes as stored, no conversion */
    }
    if (mt < 0) {
        err = raw || fixed ? hf_h5_fail(HF_ERR_INTERNAL, path, where) : HF_ERR_NOMEM;
        goto done;
    }
    if (count) {
        reclaim = var > 0;
        if (H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, var ? (void *)raw : (void *)fixed) < 0) {
            err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
            goto done;
        }
    }
    for (size_t i = 0; i < count; i++) {
        size_t len;
        const char *e = str_element(raw, fixed, size, pad, i, &len);
        if (e && !(copy[i] = hf_malloc(len + 1))) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        if (e) {
            memcpy(copy[i], e, len);
            copy[i][len] = '\0';
        }
        if (!e || !hf_rational_syntax_ok(copy[i])) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: element %zu is not a rational '[-]p[/q]'", path,
                           where, i);
            goto done;
        }
    }
    *out = copy;
    copy = NULL;
done:
    if (reclaim) {
        hid_t space = H5Dget_space(ds);
        if (space >= 0) {
            H5Dvlen_reclaim(mt, space, H5P_DEFAULT, raw);
            H5Sclose(space);
        }
    }
    if (copy)
        for (size_t i = 0; i < count; i++)
            free(copy[i]);
    free(copy);
    free(raw);
    free(fixed);
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    if (ds >= 0)
        H5Dclose(ds);
    return err;
}

static hf_err_t read_keys(hid_t g, const hsize_t *expect, const char *path, const char *where,
                          int64_t **out)
{
    hf_err_t err = HF_OK;
    hid_t ds = H5I_INVALID_HID, ft = H5I_INVALID_HID;
    hsize_t dims[3];
    size_t count = 0;
    *out = NULL;
    if ((ds = H5Dopen2(g, "keys", H5P_DEFAULT)) < 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: missing or unreadable", path, where);
        goto done;
    }
    if ((ft = H5Dget_type(ds)) < 0 || H5Tget_class(ft) != H5T_INTEGER ||
        H5Tget_sign(ft) != H5T_SGN_2 || H5Tget_size(ft) > 8) {
        err =
            hf_error(HF_ERR_CORRUPT, "%s: %s: not signed integers of at most 64 bits", path, where);
        goto done;
    }
    HF_CHECK(err, hf_h5_dataset_dims(ds, 3, path, where, dims), done);
    if (dims[0] != expect[0] || dims[1] != expect[1] || dims[2] != expect[2]) {
        err = hf_error(HF_ERR_CORRUPT,
                       "%s: %s: dims (%llu, %llu, %llu) do not match n=%llu, m=%llu, d=%llu", path,
                       where, (unsigned long long)dims[0], (unsigned long long)dims[1],
                       (unsigned long long)dims[2], (unsigned long long)expect[0],
                       (unsigned long long)expect[1], (unsigned long long)expect[2]);
        goto done;
    }
    if (!dims_count(dims, 3, &count)) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: implausible size", path, where);
        goto done;
    }
    HF_CHECK(err, check_fits(ds, count, H5Tget_size(ft), path, where), done);
    int64_t *keys = hf_malloc(count * sizeof *keys);
    if (!keys) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    if (count && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, keys) < 0) {
        free(keys);
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    *out = keys;
done:
    if (ft >= 0)
        H5Tclose(ft);
    if (ds >= 0)
        H5Dclose(ds);
    return err;
}

/* The optional attribute group_note of /rows/<i> into row->group_note (files written
 * before it existed have none: ""); printable text that fits, else corrupt. */
static hf_err_t read_group_note(hid_t g, const char *path, const char *where, hf_row_t *row)
{
    row->group_note[0] = '\0';
    if (H5Aexists(g, "group_note") <= 0)
        return HF_OK;
    char *note = NULL;
    HF_TRY(hf_h5_attr_read_str(g, "group_note", path, where, &note));
    int ok = strlen(note) < sizeof row->group_note;
    for (const char *p = note; ok && *p; p++)
        ok = *p >= ' ' && *p <= '~';
    if (ok)
        snprintf(row->group_note, sizeof row->group_note, "%s", note);
    free(note);
    return ok ? HF_OK : hf_error(HF_ERR_CORRUPT, "%s: %s: invalid group_note", path, where);
}

/* Read /rows/<i> into r->supports[i] and r->target_json[i]. */
static hf_err_t read_row_group(hid_t rows, long i, const char *path, hf_result_t *r)
{
    hf_err_t err = HF_OK;
    char name[32], where[64];
    snprintf(name, sizeof name, "%ld", i);
    snprintf(where, sizeof where, "/rows/%ld", i);
    htri_t ex = H5Lexists(rows, name, H5P_DEFAULT);
    if (ex <= 0)
        return hf_error(HF_ERR_CORRUPT, "%s: %s: missing", path, where);
    hid_t g = H5Gopen2(rows, name, H5P_DEFAULT);
    if (g < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    hf_supports_t *s = &r->supports[i];
    int64_t m, d, dv, n;
    HF_CHECK(err, hf_h5_attr_read_str(g, "target_json", path, where, &r->target_json[i]), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "m", path, where, &m), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "d", path, where, &d), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "dv", path, where, &dv), done);
    HF_CHECK(err, hf_h5_attr_read_i64(g, "n", path, where, &n), done);
    HF_CHECK(err, read_group_note(g, path, where, &r->rows[i]), done);
    if (d < 1 || d > HF_D_MAX || dv < 1 || dv > HF_DV_MAX || m < -1 || m > (1L << 30) || n < 0 ||
        n > (1L << 40)) {
        err = hf_error(HF_ERR_CORRUPT,
                       "%s: %s: attributes out of range (m=%" PRId64 ", d=%" PRId64 ", dv=%" PRId64
                       ", n=%" PRId64 ")",
                       path, where, m, d, dv, n);
        goto done;
    }
    hf_supports_init(s, (long)m, (int)d, (int)dv);
    const char *bad;
    {
        hf_supports_t shape = *s;
        shape.n = (long)n;
        bad = supports_bad(&shape, &r->rows[i]);
    }
    if (bad) {
        err = hf_error(HF_ERR_CORRUPT,
                       "%s: %s: %s (m=%" PRId64 ", d=%" PRId64 ", n=%" PRId64
                       "; /table row: m_star=%" PRId64 ", d=%d)",
                       path, where, bad, m, d, n, r->rows[i].m_star, (int)r->rows[i].d);
        goto done;
    }
    hsize_t mm = m > 0 ? (hsize_t)m : 0;
    hsize_t kd[3] = {(hsize_t)n, mm, (hsize_t)d}, vd[3] = {(hsize_t)n, mm, (hsize_t)dv};
    char w2[96];
    snprintf(w2, sizeof w2, "%s/keys", where);
    HF_CHECK(err, read_keys(g, kd, path, w2, &s->keys), done);
    snprintf(w2, sizeof w2, "%s/weights", where);
    HF_CHECK(err, read_str_dataset(g, "weights", 2, kd, path, w2, &s->weights), done);
    /* weights are owned by s from here: n must say how many to free */
    s->n = s->cap = (long)n;
    snprintf(w2, sizeof w2, "%s/values", where);
    HF_CHECK(err, read_str_dataset(g, "values", 3, vd, path, w2, &s->values), done);
    for (size_t j = 0; j < (size_t)n * mm * (size_t)d; j++)
        if (s->keys[j] < -HF_KEY_MAX || s->keys[j] > HF_KEY_MAX) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s/keys: element %zu out of range", path, where, j);
            goto done;
        }
done:
    H5Gclose(g);
    return err;
}

static hf_err_t read_provenance(hid_t file, const char *path, hf_result_t *r)
{
    struct {
        const char *name;
        char **dst;
    } s[] = {{"version", &r->version},           {"git_commit", &r->git_commit},
             {"command_line", &r->command_line}, {"host", &r->host},
             {"start_time", &r->start_time},     {"end_time", &r->end_time}};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        HF_TRY(hf_h5_attr_read_str(file, s[i].name, path, "/", s[i].dst));
    /* job_text came with format 2: optional */
    htri_t has_job = H5Aexists(file, "job_text");
    if (has_job < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, "/: unreadable attributes");
    if (has_job > 0)
        HF_TRY(hf_h5_attr_read_str(file, "job_text", path, "/", &r->job_text));
    int64_t ranks;
    HF_TRY(hf_h5_attr_read_i64(file, "ranks", path, "/", &ranks));
    if (ranks < 0 || ranks > INT32_MAX)
        return hf_error(HF_ERR_CORRUPT, "%s: /: attribute 'ranks' out of range", path);
    r->ranks = (int32_t)ranks;
    return HF_OK;
}

/* Open a 1-D compound dataset, check its fields and read it whole. older[0..nolder): the
 * memory types of older layouts of the same records, with fewer fields, each used when the
 * file has exactly its number of fields; *was_older says which was read: 0 the current
 * layout, i + 1 older[i]. */
static hf_err_t read_compound(hid_t file, const char *name, hid_t mtype, const hid_t *older,
                              int nolder, size_t elsize, const char *path, void **out, long *n,
                              int *was_older)
{
    hf_err_t err = HF_OK;
    char where[32];
    hsize_t dims[1];
    size_t count;
    snprintf(where, sizeof where, "/%s", name);
    *out = NULL;
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT), ft = H5I_INVALID_HID;
    if (ds < 0)
        return hf_error(HF_ERR_CORRUPT, "%s: %s: missing or unreadable", path, where);
    if ((ft = H5Dget_type(ds)) < 0) {
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    *was_older = 0;
    for (int i = 0; i < nolder && !*was_older; i++)
        if (H5Tget_class(ft) == H5T_COMPOUND && H5Tget_nmembers(ft) == H5Tget_nmembers(older[i])) {
            mtype = older[i];
            *was_older = i + 1;
        }
    HF_CHECK(err, hf_h5_check_compound(ft, mtype, path, where), done);
    HF_CHECK(err, hf_h5_dataset_dims(ds, 1, path, where, dims), done);
    if (!dims_count(dims, 1, &count) || count > (1u << 30)) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: implausible size", path, where);
        goto done;
    }
    HF_CHECK(err, check_fits(ds, count, H5Tget_size(ft), path, where), done);
    void *buf = hf_calloc(count, elsize);
    if (!buf) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    if (count && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    *out = buf;
    *n = (long)count;
done:
    if (ft >= 0)
        H5Tclose(ft);
    H5Dclose(ds);
    return err;
}

/* The file into r, uninitialised: initialised here (clear it even on error). */
static hf_err_t result_read(const char *path, hf_result_t *r)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hid_t file = H5I_INVALID_HID, rowm = H5I_INVALID_HID, unitm = H5I_INVALID_HID;
    hid_t rows = H5I_INVALID_HID, unitm1 = H5I_INVALID_HID;
    hid_t rowm_old[2] = {H5I_INVALID_HID, H5I_INVALID_HID}; /* formats 2 and 1 */
    char *format = NULL;
    void *buf = NULL;
    long n = 0;

    hf_result_init(r);
    hf_h5_quiet_begin(&q);
    HF_CHECK(err, hf_h5_open_read(path, "result", 0, &file), done);
    if (H5Aexists(file, "format") <= 0) {
        err =
            hf_error(HF_ERR_CORRUPT, "%s: not a headfuse result file (no format attribute)", path);
        goto done;
    }
    HF_CHECK(err, hf_h5_attr_read_str(file, "format", path, "/", &format), done);
    int current = !strcmp(format, RESULT_FORMAT);
    if (!current && strcmp(format, RESULT_FORMAT_2) != 0 && strcmp(format, RESULT_FORMAT_1) != 0) {
        /* "headfuse-result-N" of a later N: a newer headfuse wrote it */
        const char *tail = format + strlen(RESULT_FORMAT_PREFIX);
        char *end = NULL;
        long v = strncmp(format, RESULT_FORMAT_PREFIX, strlen(RESULT_FORMAT_PREFIX))
                     ? 0
                     : strtol(tail, &end, 10);
        if (v > 3 && end && !*end && isdigit((unsigned char)*tail))
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: written by a newer headfuse (format '%s'); this headfuse reads "
                           "'%s', '%s' and '%s': read it with the headfuse that wrote it",
                           path, format, RESULT_FORMAT, RESULT_FORMAT_2, RESULT_FORMAT_1);
        else
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: not a headfuse result file (format '%s', expected '%s', '%s' "
                           "or '%s')",
                           path, format, RESULT_FORMAT, RESULT_FORMAT_2, RESULT_FORMAT_1);
        goto done;
    }
    HF_CHECK(err, read_provenance(file, path, r), done);
    if ((rowm = hf_h5_row_type(0)) < 0 ||
        (rowm_old[0] = hf_h5_row_type_older(0, HF_H5_ROW_V2_FIELDS)) < 0 ||
        (rowm_old[1] = hf_h5_row_type_older(0, HF_H5_ROW_V1_FIELDS)) < 0 ||
        (unitm = hf_h5_unit_type(0)) < 0 || (unitm1 = hf_h5_unit_type_v1(0)) < 0) {
        err = hf_h5_fail(HF_ERR_INTERNAL, path, "building datatypes");
        goto done;
    }

    /* a file of format 3 has the rows of format 3; formats 1 and 2 one of the older */
    int older = 0, v1_units = 0;
    HF_CHECK(err,
             read_compound(file, "table", rowm, rowm_old, current ? 0 : 2, sizeof(hf_row_t), path,
                           &buf, &n, &older),
             done);
    r->rows = buf;
    buf = NULL;
    for (long i = 0; i < n; i++) {
        hf_row_t *w = &r->rows[i];
        if (older == 2) {
            /* the rows of a format-1 file do not say how they were searched */
            w->max_atoms = -1;
            snprintf(w->engine, sizeof w->engine, "unknown");
            snprintf(w->lb_rule, sizeof w->lb_rule, "unknown");
        }
        /* before format 3, m* was the int64 alone */
        if (older)
            snprintf(w->m_star_dec, sizeof w->m_star_dec, "%" PRId64,
                     w->m_star < 0 ? (int64_t)-1 : w->m_star);
        /* never trust a terminator from the file */
        w->name[HF_NAME_LEN - 1] = w->lb[HF_BIGINT_LEN - 1] = w->ub[HF_BIGINT_LEN - 1] = '\0';
        w->status[HF_STATUS_LEN - 1] = w->engine[HF_ENGINE_LEN - 1] = '\0';
        w->lb_rule[HF_RULE_LEN - 1] = w->m_star_dec[HF_BIGINT_LEN - 1] = '\0';
        /* before "infeasible" existed, a row without a support in its span said
         * "exhaustive" with m_star -1 */
        if (!strcmp(w->status, "exhaustive") && !strcmp(w->m_star_dec, "-1"))
            snprintf(w->status, sizeof w->status, "infeasible");
        const char *bad = row_bad_field(w);
        if (bad) {
            err = hf_error(HF_ERR_CORRUPT, "%s: /table[%ld]: invalid %s", path, i, bad);
            goto done;
        }
    }
    r->supports = hf_calloc((size_t)n, sizeof *r->supports);
    r->target_json = hf_calloc((size_t)n, sizeof *r->target_json);
    if (!r->supports || !r->target_json) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    r->nrows = r->caprows = n; /* from here hf_result_clear frees what was read */

    if ((rows = H5Gopen2(file, "rows", H5P_DEFAULT)) < 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: /rows: missing or unreadable", path);
        goto done;
    }
    H5G_info_t info;
    if (H5Gget_info(rows, &info) < 0) {
        err = hf_h5_fail(HF_ERR_CORRUPT, path, "/rows");
        goto done;
    }
    if ((long)info.nlinks != n) {
        err = hf_error(HF_ERR_CORRUPT, "%s: /rows: has %llu entries but /table has %ld rows", path,
                       (unsigned long long)info.nlinks, n);
        goto done;
    }
    for (long i = 0; i < n; i++)
        HF_CHECK(err, read_row_group(rows, i, path, r), done);

    /* /units without lo and hi: a file written before cell ranges, of whole units */
    HF_CHECK(err,
             read_compound(file, "units", unitm, &unitm1, 1, sizeof(hf_unit_record_t), path, &buf,
                           &r->nunits, &v1_units),
             done);
    r->units = buf;
    buf = NULL;
    for (long i = 0; i < r->nunits; i++) {
        if (v1_units) {
            r->units[i].lo = 0;
            r->units[i].hi = HF_CELLS_ALL;
        }
        const char *bad = unit_bad(&r->units[i], r->nrows);
        if (bad) {
            err = hf_error(HF_ERR_CORRUPT, "%s: /units[%ld]: %s", path, i, bad);
            goto done;
        }
    }
done:
    if (rows >= 0)
        H5Gclose(rows);
    if (unitm1 >= 0)
        H5Tclose(unitm1);
    if (unitm >= 0)
        H5Tclose(unitm);
    for (int i = 0; i < 2; i++)
        if (rowm_old[i] >= 0)
            H5Tclose(rowm_old[i]);
    if (rowm >= 0)
        H5Tclose(rowm);
    if (file >= 0)
        H5Fclose(file);
    free(format);
    if (err != HF_OK)
        hf_result_clear(r);
    hf_h5_quiet_end(&q);
    return err;
}

static hf_err_t probe_result(const char *path, const void *arg)
{
    (void)arg;
    hf_result_t r;
    hf_err_t err = result_read(path, &r);
    hf_result_clear(&r);
    return err;
}

hf_err_t hf_result_read(const char *path, hf_result_t *r)
{
    /* a file given by mistake (a JSON target, a plot) is bad input, not a damaged result */
    if (hf_h5_signature(path) == 0)
        return hf_error(HF_ERR_INPUT,
                        "%s: not an HDF5 file (a result file is the RESULT.h5 that headfuse "
                        "search or run writes)",
                        path);
    hf_err_t err = hf_h5_read_guard(path, "result file", probe_result, NULL, NULL);
    if (err != HF_OK)
        return err;
    hf_result_t nr; /* read aside: r keeps its value on failure */
    err = result_read(path, &nr);
    if (err == HF_OK) {
        hf_result_clear(r);
        *r = nr;
    } else {
        hf_result_clear(&nr);
    }
    return err;
}
