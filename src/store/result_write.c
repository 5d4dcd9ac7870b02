/* RESULT.h5 written: validated first (result.c), built in memory or, with a large row's
 * witness held in its own file, by HDF5 into PATH.tmp, then made durable and visible
 * atomically through core's I/O seam. Format: docs/hdf5-format.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/stop.h"
#include "store/store_impl.h"

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
        const char *bad = hf_result_row_bad(&r->rows[i]);
        if (bad)
            return hf_error(HF_ERR_INTERNAL, "%s: row %ld: invalid %s", path, i, bad);
        const hf_supports_t *s = &r->supports[i];
        if ((bad = hf_result_supports_bad(s, &r->rows[i])))
            return hf_error(HF_ERR_INTERNAL, "%s: row %ld: supports: %s", path, i, bad);
        long mm = s->m > 0 ? s->m : 0;
        for (long j = 0; !s->file && j < s->n * mm; j++)
            if (fmpz_sgn(s->weights + j) <= 0)
                return hf_error(HF_ERR_INTERNAL, "%s: row %ld: a weight is not positive", path, i);
    }
    for (long i = 0; i < r->nunits; i++) {
        const char *bad = hf_result_unit_bad(&r->units[i], r->nrows);
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
