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
 * 64 bits); format 4 the witnesses as integers (weights and weighted_values, keys of the
 * narrowest type, supports.c). Files of formats 1 to 3 are still read
 * (docs/hdf5-format.md). */
#define RESULT_FORMAT "headfuse-result-4"
#define RESULT_FORMAT_3 "headfuse-result-3"
#define RESULT_FORMAT_2 "headfuse-result-2"
#define RESULT_FORMAT_1 "headfuse-result-1"
#define RESULT_FORMAT_PREFIX "headfuse-result-"

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
    char what[200]; /* room for "/rows/N: " and a step */
} wctx_t;

static hf_err_t write_row_group(hid_t rows, long i, const hf_supports_t *s, const char *json,
                                const char *group_note, wctx_t *c)
{
    char name[32], step[160];
    snprintf(name, sizeof name, "%ld", i);
    snprintf(c->what, sizeof c->what, "writing /rows/%ld", i);
    hid_t g = HF_H5W(H5Gcreate2(rows, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (g < 0)
        return HF_ERR_IO;
    hf_err_t err = HF_OK;
    if (hf_h5_attr_write_text(g, "target_json", json) < 0 ||
        hf_h5_attr_write_i64(g, "m", s->m) < 0 || hf_h5_attr_write_i32(g, "d", s->d) < 0 ||
        hf_h5_attr_write_i32(g, "dv", s->dv) < 0 || hf_h5_attr_write_i64(g, "n", s->n) < 0 ||
        (group_note[0] && hf_h5_attr_write_text(g, "group_note", group_note) < 0))
        err = HF_ERR_IO;
    if (err == HF_OK) {
        step[0] = '\0';
        err = hf_supports_write_group(g, s, step, sizeof step);
        if (err != HF_OK)
            snprintf(c->what, sizeof c->what, "/rows/%ld: %s", i, step);
    }
    if (err == HF_OK)
        snprintf(c->what, sizeof c->what, "closing /rows/%ld", i);
    if (HF_H5W_CLOSE(H5Gclose(g)) < 0 && err == HF_OK)
        err = HF_ERR_IO;
    return err;
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
    if (hf_h5_dataset_write(file, "table", rowf, rowm, 1, &nr, r->rows, 1) < 0 ||
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
    if (hf_h5_dataset_write(file, "units", unitf, unitm, 1, &nu, r->units, 1) < 0)
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
        for (long j = 0; !s->file && j < s->n * mm; j++)
            if (fmpz_sgn(s->weights + j) <= 0)
                return hf_error(HF_ERR_INTERNAL, "%s: row %ld: a weight is not positive", path, i);
    }
    for (long i = 0; i < r->nunits; i++) {
        const char *bad = unit_bad(&r->units[i], r->nrows);
        if (bad)
            return hf_error(HF_ERR_INTERNAL, "%s: unit record %ld: %s", path, i, bad);
    }
    return HF_OK;
}

/* A file whose witnesses are all held in memory is built in memory (HDF5's core driver) and
 * its image written by core's atomic write: HDF5 1.10 cannot close a file whose final flush
 * failed (a full disk) and then crashes at exit, which in memory cannot happen. The image
 * (hf_malloc'ed, *n bytes) goes to *image. */
static hf_err_t take_image(const char *path, hid_t file, void **image, size_t *n)
{
    ssize_t len;
    if (HF_H5W(H5Fflush(file, H5F_SCOPE_GLOBAL)) < 0 ||
        (len = HF_H5W(H5Fget_file_image(file, NULL, 0))) < 0)
        return hf_h5_fail(HF_ERR_IO, path, "building the file image");
    if (!(*image = hf_malloc((size_t)len)))
        return HF_ERR_NOMEM;
    if (HF_H5W(H5Fget_file_image(file, *image, (size_t)len)) != len)
        return hf_h5_fail(HF_ERR_IO, path, "building the file image");
    *n = (size_t)len;
    return HF_OK;
}

/* Write the file as path (through tmp): in memory, then its image written atomically, or, for a
 * file with a large row's witness held in another file (supports.c), by HDF5 itself into tmp,
 * the witness copied in chunk by chunk (no image of it is ever in memory), then committed. The
 * latter's failed final flush (a full disk) leaves the library unable to close it: it is then
 * abandoned (hf_h5_abandon), and the process ends with the error. */
static hf_err_t write_file(const char *path, const char *tmp, const hf_result_t *r)
{
    hf_err_t err = HF_OK;
    wctx_t c = {path, ""};
    int in_memory = 1;
    void *image = NULL;
    size_t nimage = 0;
    for (long i = 0; i < r->nrows; i++)
        in_memory &= !r->supports[i].file;
    hid_t fapl = hf_h5_fapl(0), file = H5I_INVALID_HID;
    if (fapl < 0 || (in_memory && H5Pset_fapl_core(fapl, 1 << 20, 0) < 0) ||
        (file = HF_H5W(H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl))) < 0) {
        err = hf_h5_fail(HF_ERR_IO, path, "creating the temporary file");
        goto done;
    }
    if ((err = write_contents(file, r, &c)) != HF_OK) {
        if (err != HF_ERR_NOMEM && err != HF_ERR_INTERRUPTED && err != HF_ERR_CORRUPT)
            err = hf_h5_fail(HF_ERR_IO, path, c.what);
        goto done;
    }
    if (in_memory)
        err = take_image(path, file, &image, &nimage);
    else if (HF_H5W(H5Fflush(file, H5F_SCOPE_GLOBAL)) < 0)
        err = hf_h5_fail(HF_ERR_IO, path, "flushing the file");
done:
    if (file >= 0 && HF_H5W_CLOSE(H5Fclose(file)) < 0) {
        if (err == HF_OK)
            err = hf_h5_fail(HF_ERR_IO, path, "closing the file");
        if (H5Iis_valid(file) > 0)
            hf_h5_abandon(); /* the last HDF5 call of a failing process */
    }
    if (fapl >= 0)
        H5Pclose(fapl);
    /* durable before it becomes visible under its final name, and the name durable too */
    if (err == HF_OK)
        err = in_memory ? hf_io_write_file(path, image, nimage, 0) : hf_io_commit(tmp, path);
    free(image);
    return err;
}

hf_err_t hf_result_write(const char *path, const hf_result_t *r)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
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
    err = write_file(path, tmp, r);
    if (err != HF_OK)
        unlink(tmp);
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

/* Read /rows/<i> into r->supports[i] and r->target_json[i]. Its witnesses are integers
 * (weights, weighted_values: format 4), or rational strings (weights, values: a file of
 * formats 1 to 3). */
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
    if (d < 1 || d > HF_D_MAX || dv < 1 || dv > HF_DV_MAX || m < -1 || m > (1L << 40) || n < 0 ||
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
    s->n = (long)n;
    err = hf_supports_read_group(g, path, where, H5Lexists(g, "weighted_values", H5P_DEFAULT) <= 0,
                                 s);
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

/* The format of an open result file: *format 4 (this one), 3 (the same table, witnesses as
 * rational strings), 2 or 1 (older tables too); any other is HF_ERR_CORRUPT, saying so when
 * a newer headfuse wrote it. */
static hf_err_t read_format(hid_t file, const char *path, int *format)
{
    char *name = NULL;
    hf_err_t err = HF_OK;
    if (H5Aexists(file, "format") <= 0)
        return hf_error(HF_ERR_CORRUPT, "%s: not a headfuse result file (no format attribute)",
                        path);
    HF_TRY(hf_h5_attr_read_str(file, "format", path, "/", &name));
    *format = !strcmp(name, RESULT_FORMAT)     ? 4
              : !strcmp(name, RESULT_FORMAT_3) ? 3
              : !strcmp(name, RESULT_FORMAT_2) ? 2
              : !strcmp(name, RESULT_FORMAT_1) ? 1
                                               : 0;
    if (!*format) {
        /* "headfuse-result-N" of a later N: a newer headfuse wrote it */
        const char *tail = name + strlen(RESULT_FORMAT_PREFIX);
        char *end = NULL;
        long v = strncmp(name, RESULT_FORMAT_PREFIX, strlen(RESULT_FORMAT_PREFIX))
                     ? 0
                     : strtol(tail, &end, 10);
        if (v > 4 && end && !*end && isdigit((unsigned char)*tail))
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: written by a newer headfuse (format '%s'); this headfuse reads "
                           "'%s', '%s', '%s' and '%s': read it with the headfuse that wrote it",
                           path, name, RESULT_FORMAT, RESULT_FORMAT_3, RESULT_FORMAT_2,
                           RESULT_FORMAT_1);
        else
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: not a headfuse result file (format '%s', expected '%s', '%s', "
                           "'%s' or '%s')",
                           path, name, RESULT_FORMAT, RESULT_FORMAT_3, RESULT_FORMAT_2,
                           RESULT_FORMAT_1);
    }
    free(name);
    return err;
}

/* Row i of /table as read (older: 0, or 1 and 2 for the rows of formats 2 and 1) made a row
 * of this format; the name of an invalid field, or NULL. */
static const char *row_upgrade(hf_row_t *w, int older)
{
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
    /* before "infeasible" existed, a row without a support in its span said "exhaustive"
     * with m_star -1 */
    if (!strcmp(w->status, "exhaustive") && !strcmp(w->m_star_dec, "-1"))
        snprintf(w->status, sizeof w->status, "infeasible");
    return row_bad_field(w);
}

/* /table into r->rows (rows of format 3 and later, or of formats 2 and 1 in a file of those:
 * `current` 0), each checked, and room for their supports and targets: r->nrows set. */
static hf_err_t read_table(hid_t file, const char *path, int current, hf_result_t *r)
{
    hf_err_t err = HF_OK;
    hid_t rowm = H5I_INVALID_HID;
    hid_t rowm_old[2] = {H5I_INVALID_HID, H5I_INVALID_HID}; /* formats 2 and 1 */
    void *buf = NULL;
    long n = 0;
    int older = 0;
    if ((rowm = hf_h5_row_type(0)) < 0 ||
        (rowm_old[0] = hf_h5_row_type_older(0, HF_H5_ROW_V2_FIELDS)) < 0 ||
        (rowm_old[1] = hf_h5_row_type_older(0, HF_H5_ROW_V1_FIELDS)) < 0) {
        err = hf_h5_fail(HF_ERR_INTERNAL, path, "building datatypes");
        goto done;
    }
    HF_CHECK(err,
             read_compound(file, "table", rowm, rowm_old, current ? 0 : 2, sizeof(hf_row_t), path,
                           &buf, &n, &older),
             done);
    r->rows = buf;
    for (long i = 0; i < n; i++) {
        const char *bad = row_upgrade(&r->rows[i], older);
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
done:
    for (int i = 0; i < 2; i++)
        if (rowm_old[i] >= 0)
            H5Tclose(rowm_old[i]);
    if (rowm >= 0)
        H5Tclose(rowm);
    return err;
}

/* The groups /rows/<i>, one a row of /table: the supports and target of each. */
static hf_err_t read_rows(hid_t file, const char *path, hf_result_t *r)
{
    hf_err_t err = HF_OK;
    hid_t rows = H5Gopen2(file, "rows", H5P_DEFAULT);
    if (rows < 0)
        return hf_error(HF_ERR_CORRUPT, "%s: /rows: missing or unreadable", path);
    H5G_info_t info;
    if (H5Gget_info(rows, &info) < 0)
        err = hf_h5_fail(HF_ERR_CORRUPT, path, "/rows");
    else if ((long)info.nlinks != r->nrows)
        err = hf_error(HF_ERR_CORRUPT, "%s: /rows: has %llu entries but /table has %ld rows", path,
                       (unsigned long long)info.nlinks, r->nrows);
    for (long i = 0; err == HF_OK && i < r->nrows; i++)
        err = read_row_group(rows, i, path, r);
    H5Gclose(rows);
    return err;
}

/* /units into r->units, each checked; /units without lo and hi: a file written before cell
 * ranges, of whole units. */
static hf_err_t read_units(hid_t file, const char *path, hf_result_t *r)
{
    hid_t mt[2] = {hf_h5_unit_type(0), hf_h5_unit_type_v1(0)}; /* this format's, the first */
    void *buf = NULL;
    int v1_units = 0;
    hf_err_t err = mt[0] < 0 || mt[1] < 0
                       ? hf_h5_fail(HF_ERR_INTERNAL, path, "building datatypes")
                       : read_compound(file, "units", mt[0], &mt[1], 1, sizeof(hf_unit_record_t),
                                       path, &buf, &r->nunits, &v1_units);
    for (int i = 0; i < 2; i++)
        if (mt[i] >= 0)
            H5Tclose(mt[i]);
    HF_TRY(err);
    r->units = buf;
    for (long i = 0; i < r->nunits; i++) {
        if (v1_units) {
            r->units[i].lo = 0;
            r->units[i].hi = HF_CELLS_ALL;
        }
        const char *bad = unit_bad(&r->units[i], r->nrows);
        if (bad)
            return hf_error(HF_ERR_CORRUPT, "%s: /units[%ld]: %s", path, i, bad);
    }
    return HF_OK;
}

/* The file into r, uninitialised: initialised here (clear it even on error). */
static hf_err_t result_read(const char *path, hf_result_t *r)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hid_t file = H5I_INVALID_HID;
    int format = 0;
    hf_result_init(r);
    hf_h5_quiet_begin(&q);
    HF_CHECK(err, hf_h5_open_read(path, "result", 0, &file), done);
    HF_CHECK(err, read_format(file, path, &format), done);
    HF_CHECK(err, read_provenance(file, path, r), done);
    /* a file of format 3 or 4 has the rows of format 3; formats 1 and 2 one of the older */
    HF_CHECK(err, read_table(file, path, format >= 3, r), done);
    HF_CHECK(err, read_rows(file, path, r), done);
    err = read_units(file, path, r);
done:
    if (file >= 0)
        H5Fclose(file);
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
