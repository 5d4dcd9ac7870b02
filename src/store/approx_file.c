/* APPROX.h5 writing and reading (layout: docs/approx.md). Self-contained: the file
 * kind has its own datatypes and checks, sharing only conventions with RESULT.h5
 * (variable-length UTF-8 string attributes for provenance, little-endian numbers,
 * fixed-size NUL-terminated strings inside compound tables, PATH.tmp then rename). */
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headfuse/approx_store.h"
#include "store/store_impl.h"

#define NAME_LEN 128 /* table name column */

/* The row of /table as laid out in memory for HDF5. */
typedef struct {
    char name[NAME_LEN];
    int32_t d, m;
    double train_mse, test_mse;
    int64_t restarts, best_restart, iterations;
    char converged_reason[HF_APPROX_REASON_LEN];
    double seconds;
    char start[HF_APPROX_WORD_LEN];
    char status[HF_APPROX_WORD_LEN];
} table_row_t;

void hf_approx_prov_init(hf_approx_prov_t *p)
{
    memset(p, 0, sizeof *p);
}

void hf_approx_prov_clear(hf_approx_prov_t *p)
{
    if (!p)
        return;
    free(p->version);
    free(p->git_commit);
    free(p->command_line);
    free(p->host);
    free(p->start_time);
    free(p->end_time);
    free(p->target_json);
    free(p->lower_bound);
    hf_approx_prov_init(p);
}

/* ---------------------------------------------------------------- datatypes */

static hid_t table_type(int file)
{
    const hf_h5_member_t mb[] = {
        {"name", offsetof(table_row_t, name), 0, 0, NAME_LEN, 0},
        {"d", offsetof(table_row_t, d), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"m", offsetof(table_row_t, m), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"train_mse", offsetof(table_row_t, train_mse), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0, 0},
        {"test_mse", offsetof(table_row_t, test_mse), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0, 0},
        {"restarts", offsetof(table_row_t, restarts), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"best_restart", offsetof(table_row_t, best_restart), H5T_NATIVE_INT64, H5T_STD_I64LE, 0,
         0},
        {"iterations", offsetof(table_row_t, iterations), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"converged_reason", offsetof(table_row_t, converged_reason), 0, 0, HF_APPROX_REASON_LEN,
         0},
        {"seconds", offsetof(table_row_t, seconds), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0, 0},
        {"start", offsetof(table_row_t, start), 0, 0, HF_APPROX_WORD_LEN, 0},
        {"status", offsetof(table_row_t, status), 0, 0, HF_APPROX_WORD_LEN, 0},
    };
    return hf_h5_compound(mb, sizeof mb / sizeof *mb, sizeof(table_row_t), file);
}

static hid_t restart_type(int file)
{
    const hf_h5_member_t mb[] = {
        {"m", offsetof(hf_approx_restart_t, m), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"restart", offsetof(hf_approx_restart_t, restart), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"rank", offsetof(hf_approx_restart_t, rank), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"start", offsetof(hf_approx_restart_t, start), 0, 0, HF_APPROX_WORD_LEN, 0},
        {"train_mse", offsetof(hf_approx_restart_t, train_mse), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE,
         0, 0},
        {"test_mse", offsetof(hf_approx_restart_t, test_mse), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0,
         0},
        {"iterations", offsetof(hf_approx_restart_t, iterations), H5T_NATIVE_INT64, H5T_STD_I64LE,
         0, 0},
        {"converged_reason", offsetof(hf_approx_restart_t, converged_reason), 0, 0,
         HF_APPROX_REASON_LEN, 0},
        {"seconds", offsetof(hf_approx_restart_t, seconds), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0,
         0},
    };
    return hf_h5_compound(mb, sizeof mb / sizeof *mb, sizeof(hf_approx_restart_t), file);
}

/* ---------------------------------------------------------------- writing */

static herr_t write_root(hid_t f, const hf_approx_result_t *r, const hf_approx_prov_t *p)
{
    if (hf_h5_attr_write_text(f, "format", HF_APPROX_FORMAT) < 0 ||
        hf_h5_attr_write_text(f, "version", p->version) < 0 ||
        hf_h5_attr_write_text(f, "git_commit", p->git_commit) < 0 ||
        hf_h5_attr_write_text(f, "command_line", p->command_line) < 0 ||
        hf_h5_attr_write_text(f, "host", p->host) < 0 ||
        hf_h5_attr_write_text(f, "start_time", p->start_time) < 0 ||
        hf_h5_attr_write_text(f, "end_time", p->end_time) < 0 ||
        hf_h5_attr_write_i32(f, "ranks", p->ranks) < 0 ||
        hf_h5_attr_write_text(f, "target_json", p->target_json) < 0 ||
        hf_h5_attr_write_text(f, "lower_bound", p->lower_bound) < 0 ||
        hf_h5_attr_write_text(f, "name", r->name) < 0 || hf_h5_attr_write_i32(f, "d", r->d) < 0 ||
        hf_h5_attr_write_i32(f, "dv", r->dv) < 0 ||
        hf_h5_attr_write_i64(f, "samples", r->samples) < 0 ||
        hf_h5_attr_write_i64(f, "test_samples", r->test_samples) < 0 ||
        hf_h5_attr_write_i64(f, "restarts", r->restarts) < 0 ||
        hf_h5_attr_write_f64(f, "sigma", r->sigma) < 0 ||
        hf_h5_attr_write_u64(f, "seed", r->seed) < 0 ||
        hf_h5_attr_write_f64(f, "target_rms", r->target_rms) < 0 ||
        hf_h5_attr_write_f64(f, "rounding_rms", HF_APPROX_ROUNDING_RMS) < 0 ||
        hf_h5_attr_write_i64(f, "exact_atoms", r->exact_atoms) < 0 ||
        hf_h5_attr_write_text(f, "exact_source", r->exact_source) < 0 ||
        hf_h5_attr_write_text(f, "tao_type", r->tao_type) < 0)
        return -1;
    return 0;
}

static herr_t write_heads(hid_t f, const hf_approx_result_t *r)
{
    hid_t g = HF_H5W(H5Gcreate2(f, "heads", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (g < 0)
        return -1;
    herr_t rc = 0;
    for (int i = 0; i < r->nrows && rc == 0; i++) {
        const hf_approx_head_t *h = &r->rows[i].head;
        char name[32];
        snprintf(name, sizeof name, "m%d", r->rows[i].m);
        hid_t hg = HF_H5W(H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        if (hg < 0) {
            rc = -1;
            break;
        }
        hsize_t kd[2] = {(hsize_t)h->m, (hsize_t)h->d}, bd[1] = {(hsize_t)h->m},
                vd[2] = {(hsize_t)h->m, (hsize_t)h->dv};
        if (hf_h5_attr_write_i32(hg, "m", h->m) < 0 ||
            hf_h5_dataset_write(hg, "keys", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, kd, h->keys, 0) <
                0 ||
            hf_h5_dataset_write(hg, "biases", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, bd, h->biases,
                                0) < 0 ||
            hf_h5_dataset_write(hg, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, vd, h->values,
                                0) < 0)
            rc = -1;
        if (HF_H5W_CLOSE(H5Gclose(hg)) < 0)
            rc = -1;
    }
    if (HF_H5W_CLOSE(H5Gclose(g)) < 0)
        rc = -1;
    return rc;
}

static void row_to_disk(const hf_approx_result_t *r, const hf_approx_row_t *row, table_row_t *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", r->name ? r->name : "");
    o->d = r->d;
    o->m = row->m;
    o->train_mse = row->train_mse;
    o->test_mse = row->test_mse;
    o->restarts = row->restarts;
    o->best_restart = row->best_restart;
    o->iterations = row->iterations;
    memcpy(o->converged_reason, row->converged_reason, sizeof o->converged_reason);
    o->seconds = row->seconds;
    memcpy(o->start, row->start, sizeof o->start);
    memcpy(o->status, row->status, sizeof o->status);
}

hf_err_t hf_approx_file_write(const char *path, const hf_approx_result_t *r,
                              const hf_approx_prov_t *p)
{
    hf_err_t err = HF_OK;
    const char *step = "creating the file";
    size_t plen = strlen(path);
    char *tmp = hf_malloc(plen + 5);
    table_row_t *rows = hf_calloc((size_t)(r->nrows ? r->nrows : 1), sizeof *rows);
    hid_t f = H5I_INVALID_HID, tf = H5I_INVALID_HID, tm = H5I_INVALID_HID;
    hid_t rf = H5I_INVALID_HID, rm = H5I_INVALID_HID;
    hf_h5_quiet_t q;
    hf_h5_quiet_begin(&q);
    if (!tmp || !rows) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    snprintf(tmp, plen + 5, "%s.tmp", path);
    f = HF_H5W(H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (f < 0)
        goto fail;
    step = "writing the root attributes";
    if (write_root(f, r, p) < 0)
        goto fail;
    step = "writing /table";
    tf = table_type(1);
    tm = table_type(0);
    if (tf < 0 || tm < 0)
        goto fail;
    for (int i = 0; i < r->nrows; i++)
        row_to_disk(r, r->rows + i, rows + i);
    hsize_t nr = (hsize_t)r->nrows;
    if (hf_h5_dataset_write(f, "table", tf, tm, 1, &nr, rows, 0) < 0)
        goto fail;
    step = "writing /heads";
    if (write_heads(f, r) < 0)
        goto fail;
    step = "writing /restarts";
    rf = restart_type(1);
    rm = restart_type(0);
    hsize_t nl = (hsize_t)r->nlog;
    if (rf < 0 || rm < 0 || hf_h5_dataset_write(f, "restarts", rf, rm, 1, &nl, r->log, 0) < 0)
        goto fail;
    step = "closing the file";
    herr_t rc = HF_H5W_CLOSE(H5Fclose(f));
    f = H5I_INVALID_HID;
    if (rc < 0)
        goto fail;
    /* the one commit of a finished file: fsync, rename, fsync of the directory */
    err = hf_io_commit(tmp, path);
    goto done;
fail:
    err = hf_h5_fail(HF_ERR_IO, path, step);
    if (f >= 0)
        H5Fclose(f);
    f = H5I_INVALID_HID;
    if (tmp)
        unlink(tmp);
done:
    if (rm >= 0)
        H5Tclose(rm);
    if (rf >= 0)
        H5Tclose(rf);
    if (tm >= 0)
        H5Tclose(tm);
    if (tf >= 0)
        H5Tclose(tf);
    free(rows);
    free(tmp);
    hf_h5_quiet_end(&q);
    return err;
}

/* ---------------------------------------------------------------- reading */

/* Open dataset `name` of loc with the given rank; dims receives its shape. */
static hf_err_t dset_open(hid_t loc, const char *name, const char *path, const char *where,
                          int rank, hsize_t *dims, hid_t *out)
{
    *out = H5I_INVALID_HID;
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
        return hf_error(HF_ERR_CORRUPT, "%s: %s/%s missing", path, where, name);
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT), s = ds < 0 ? -1 : H5Dget_space(ds);
    int ok = s >= 0 && H5Sget_simple_extent_ndims(s) == rank &&
             H5Sget_simple_extent_dims(s, dims, NULL) == rank;
    if (s >= 0)
        H5Sclose(s);
    if (!ok) {
        if (ds >= 0)
            H5Dclose(ds);
        return hf_error(HF_ERR_CORRUPT, "%s: %s/%s unreadable or not of rank %d", path, where, name,
                        rank);
    }
    *out = ds;
    return HF_OK;
}

/* A float64 dataset of the expected shape into buf. */
static hf_err_t read_f64(hid_t loc, const char *name, const char *path, const char *where, int rank,
                         const hsize_t *want, double *buf)
{
    hsize_t dims[2];
    hid_t ds;
    HF_TRY(dset_open(loc, name, path, where, rank, dims, &ds));
    hf_err_t err = HF_OK;
    for (int i = 0; i < rank; i++)
        if (dims[i] != want[i])
            err = hf_error(HF_ERR_CORRUPT, "%s: %s/%s has the wrong shape", path, where, name);
    if (err == HF_OK && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        err = hf_error(HF_ERR_CORRUPT, "%s: %s/%s unreadable", path, where, name);
    H5Dclose(ds);
    return err;
}

/* Copy a fixed string field and require a terminating NUL within it. */
static int str_ok(const char *s, size_t n)
{
    return memchr(s, '\0', n) != NULL;
}

static hf_err_t read_root(hid_t f, const char *path, hf_approx_result_t *r, hf_approx_prov_t *p)
{
    char *format = NULL, *exact_source = NULL, *tao_type = NULL;
    int32_t i32;
    hf_err_t err;
    HF_CHECK(err, hf_h5_attr_read_str(f, "format", path, "/", &format), done);
    if (strcmp(format, HF_APPROX_FORMAT) != 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: format '%s' is not %s", path, format, HF_APPROX_FORMAT);
        goto done;
    }
    struct {
        const char *name;
        char **dst;
    } s[] = {{"version", &p->version},
             {"git_commit", &p->git_commit},
             {"command_line", &p->command_line},
             {"host", &p->host},
             {"start_time", &p->start_time},
             {"end_time", &p->end_time},
             {"target_json", &p->target_json},
             {"lower_bound", &p->lower_bound},
             {"name", &r->name},
             {"exact_source", &exact_source},
             {"tao_type", &tao_type}};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        HF_CHECK(err, hf_h5_attr_read_str(f, s[i].name, path, "/", s[i].dst), done);
    snprintf(r->exact_source, sizeof r->exact_source, "%s", exact_source);
    snprintf(r->tao_type, sizeof r->tao_type, "%s", tao_type);
    int64_t samples, test_samples, restarts, exact_atoms;
    HF_CHECK(err,
             hf_h5_attr_read_num(f, "ranks", path, "/", H5T_INTEGER, H5T_NATIVE_INT32, &p->ranks),
             done);
    HF_CHECK(err, hf_h5_attr_read_num(f, "d", path, "/", H5T_INTEGER, H5T_NATIVE_INT32, &i32),
             done);
    r->d = i32;
    HF_CHECK(err, hf_h5_attr_read_num(f, "dv", path, "/", H5T_INTEGER, H5T_NATIVE_INT32, &i32),
             done);
    r->dv = i32;
    HF_CHECK(err,
             hf_h5_attr_read_num(f, "samples", path, "/", H5T_INTEGER, H5T_NATIVE_INT64, &samples),
             done);
    HF_CHECK(err,
             hf_h5_attr_read_num(f, "test_samples", path, "/", H5T_INTEGER, H5T_NATIVE_INT64,
                                 &test_samples),
             done);
    HF_CHECK(
        err,
        hf_h5_attr_read_num(f, "restarts", path, "/", H5T_INTEGER, H5T_NATIVE_INT64, &restarts),
        done);
    HF_CHECK(err,
             hf_h5_attr_read_num(f, "exact_atoms", path, "/", H5T_INTEGER, H5T_NATIVE_INT64,
                                 &exact_atoms),
             done);
    HF_CHECK(err,
             hf_h5_attr_read_num(f, "seed", path, "/", H5T_INTEGER, H5T_NATIVE_UINT64, &r->seed),
             done);
    HF_CHECK(err,
             hf_h5_attr_read_num(f, "sigma", path, "/", H5T_FLOAT, H5T_NATIVE_DOUBLE, &r->sigma),
             done);
    HF_CHECK(err,
             hf_h5_attr_read_num(f, "target_rms", path, "/", H5T_FLOAT, H5T_NATIVE_DOUBLE,
                                 &r->target_rms),
             done);
    r->samples = samples;
    r->test_samples = test_samples;
    r->restarts = restarts;
    r->exact_atoms = exact_atoms;
    if (r->d < 1 || r->d > HF_D_MAX || r->dv < 1 || r->dv > HF_DV_MAX)
        err = hf_error(HF_ERR_CORRUPT, "%s: attributes d, dv out of range", path);
done:
    free(tao_type);
    free(exact_source);
    free(format);
    return err;
}

static hf_err_t read_table(hid_t f, const char *path, hf_approx_result_t *r)
{
    hsize_t n;
    hid_t ds, tm = H5I_INVALID_HID;
    table_row_t *rows = NULL;
    hf_err_t err;
    HF_TRY(dset_open(f, "table", path, "", 1, &n, &ds));
    if (n > HF_APPROX_ATOMS_MAX) {
        err = hf_error(HF_ERR_CORRUPT, "%s: /table has too many rows", path);
        goto done;
    }
    rows = hf_calloc(n ? n : 1, sizeof *rows);
    r->rows = hf_calloc(n ? n : 1, sizeof *r->rows);
    if (!rows || !r->rows) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    tm = table_type(0);
    if (tm < 0 || (n && H5Dread(ds, tm, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)) {
        err = hf_error(HF_ERR_CORRUPT, "%s: /table unreadable or missing columns", path);
        goto done;
    }
    r->nrows = (int)n;
    err = HF_OK;
    for (hsize_t i = 0; i < n && err == HF_OK; i++) {
        const table_row_t *o = rows + i;
        hf_approx_row_t *row = r->rows + i;
        if (!str_ok(o->name, sizeof o->name) || o->d != r->d || o->m < 1 ||
            o->m > HF_APPROX_ATOMS_MAX || o->restarts < 1 || o->best_restart < 0 ||
            o->best_restart >= o->restarts || (i > 0 && o->m <= rows[i - 1].m)) {
            err = hf_error(HF_ERR_CORRUPT, "%s: /table row %llu is inconsistent", path,
                           (unsigned long long)i);
            break;
        }
        row->m = o->m;
        row->train_mse = o->train_mse;
        row->test_mse = o->test_mse;
        row->restarts = o->restarts;
        row->best_restart = o->best_restart;
        row->iterations = o->iterations;
        memcpy(row->converged_reason, o->converged_reason, sizeof row->converged_reason);
        row->converged_reason[sizeof row->converged_reason - 1] = '\0';
        row->seconds = o->seconds;
        memcpy(row->start, o->start, sizeof row->start);
        row->start[sizeof row->start - 1] = '\0';
        memcpy(row->status, o->status, sizeof row->status);
        row->status[sizeof row->status - 1] = '\0';
    }
done:
    if (tm >= 0)
        H5Tclose(tm);
    free(rows);
    H5Dclose(ds);
    return err;
}

static hf_err_t read_heads(hid_t f, const char *path, hf_approx_result_t *r)
{
    if (H5Lexists(f, "heads", H5P_DEFAULT) <= 0)
        return hf_error(HF_ERR_CORRUPT, "%s: /heads missing", path);
    hid_t g = H5Gopen2(f, "heads", H5P_DEFAULT);
    if (g < 0)
        return hf_error(HF_ERR_CORRUPT, "%s: /heads unreadable", path);
    hf_err_t err = HF_OK;
    for (int i = 0; i < r->nrows && err == HF_OK; i++) {
        hf_approx_row_t *row = r->rows + i;
        char name[32], where[48];
        snprintf(name, sizeof name, "m%d", row->m);
        snprintf(where, sizeof where, "/heads/%s", name);
        if (H5Lexists(g, name, H5P_DEFAULT) <= 0) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s missing", path, where);
            break;
        }
        hid_t hg = H5Gopen2(g, name, H5P_DEFAULT);
        if (hg < 0) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s unreadable", path, where);
            break;
        }
        err = hf_approx_head_init(&row->head, row->m, r->d, r->dv);
        hsize_t kd[2] = {(hsize_t)row->m, (hsize_t)r->d}, bd[1] = {(hsize_t)row->m},
                vd[2] = {(hsize_t)row->m, (hsize_t)r->dv};
        if (err == HF_OK)
            err = read_f64(hg, "keys", path, where, 2, kd, row->head.keys);
        if (err == HF_OK)
            err = read_f64(hg, "biases", path, where, 1, bd, row->head.biases);
        if (err == HF_OK)
            err = read_f64(hg, "values", path, where, 2, vd, row->head.values);
        H5Gclose(hg);
    }
    H5Gclose(g);
    return err;
}

static hf_err_t read_restarts(hid_t f, const char *path, hf_approx_result_t *r)
{
    hsize_t n;
    hid_t ds, tm = H5I_INVALID_HID;
    hf_err_t err = HF_OK;
    HF_TRY(dset_open(f, "restarts", path, "", 1, &n, &ds));
    r->log = hf_calloc(n ? n : 1, sizeof *r->log);
    if (!r->log) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    tm = restart_type(0);
    if (tm < 0 || (n && H5Dread(ds, tm, H5S_ALL, H5S_ALL, H5P_DEFAULT, r->log) < 0)) {
        err = hf_error(HF_ERR_CORRUPT, "%s: /restarts unreadable or missing columns", path);
        goto done;
    }
    r->nlog = (long)n;
    for (long i = 0; i < r->nlog; i++) {
        hf_approx_restart_t *e = r->log + i;
        if (!str_ok(e->start, sizeof e->start) ||
            !str_ok(e->converged_reason, sizeof e->converged_reason) || e->m < 1 ||
            e->restart < 0) {
            err = hf_error(HF_ERR_CORRUPT, "%s: /restarts row %ld is inconsistent", path, i);
            break;
        }
    }
done:
    if (tm >= 0)
        H5Tclose(tm);
    H5Dclose(ds);
    return err;
}

/* The file into r and p, uninitialised: initialised here (clear them even on error). */
static hf_err_t approx_read(const char *path, hf_approx_result_t *r, hf_approx_prov_t *p)
{
    hf_err_t err;
    hid_t f = H5I_INVALID_HID;
    H5E_auto2_t old_func;
    void *old_data;
    hf_approx_result_init(r);
    hf_approx_prov_init(p);
    if (access(path, R_OK) != 0)
        return hf_error(HF_ERR_IO, "%s: cannot open (missing or unreadable)", path);
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (H5Fis_hdf5(path) <= 0 || (f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: not an HDF5 file (or truncated)", path);
        goto done;
    }
    HF_CHECK(err, read_root(f, path, r, p), done);
    HF_CHECK(err, read_table(f, path, r), done);
    HF_CHECK(err, read_heads(f, path, r), done);
    HF_CHECK(err, read_restarts(f, path, r), done);
done:
    if (f >= 0)
        H5Fclose(f);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    return err;
}

static hf_err_t probe_approx(const char *path, const void *arg)
{
    (void)arg;
    hf_approx_result_t r;
    hf_approx_prov_t p;
    hf_err_t err = approx_read(path, &r, &p);
    hf_approx_result_clear(&r);
    hf_approx_prov_clear(&p);
    return err;
}

hf_err_t hf_approx_file_read(const char *path, hf_approx_result_t *r, hf_approx_prov_t *p)
{
    hf_err_t err = hf_h5_read_guard(path, "approx file", probe_approx, NULL, NULL);
    if (err != HF_OK)
        return err;
    hf_approx_result_t nr; /* read aside: r and p keep their values on failure */
    hf_approx_prov_t np;
    err = approx_read(path, &nr, &np);
    if (err == HF_OK) {
        hf_approx_result_clear(r);
        hf_approx_prov_clear(p);
        *r = nr;
        *p = np;
    } else {
        hf_approx_result_clear(&nr);
        hf_approx_prov_clear(&np);
    }
    return err;
}

static int detect(const char *path);

static hf_err_t probe_detect(const char *path, const void *arg)
{
    (void)arg;
    return detect(path) ? HF_OK : hf_error(HF_ERR_INPUT, "%s: not an APPROX file", path);
}

/* Detection opens the file and reads an attribute, so it is guarded too, and done in
 * the child only: a damaged file is not opened in this process at all. */
int hf_approx_file_detect(const char *path)
{
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", hf_error_msg());
    int yes = 0;
    hf_err_t err = hf_h5_read_guard(path, "file", probe_detect, NULL, &yes);
    if (err == HF_OK && !yes)
        return detect(path); /* the guard is off, or no child could be started */
    if (err != HF_OK && err != HF_ERR_INPUT)
        return -1; /* the child died: the error names the file */
    hf_error(HF_OK, "%s", saved);
    return yes;
}

static int detect(const char *path)
{
    int yes = 0;
    hid_t f = H5I_INVALID_HID;
    H5E_auto2_t old_func;
    void *old_data;
    if (access(path, R_OK) != 0)
        return 0;
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (H5Fis_hdf5(path) > 0 && (f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0) {
        /* keep the caller's last error message: detection is not a failure */
        char saved[1024], *format = NULL;
        snprintf(saved, sizeof saved, "%s", hf_error_msg());
        if (H5Aexists(f, "format") > 0 &&
            hf_h5_attr_read_str(f, "format", path, "/", &format) == HF_OK)
            yes = strcmp(format, HF_APPROX_FORMAT) == 0;
        free(format);
        hf_error(HF_OK, "%s", saved);
        H5Fclose(f);
    }
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    return yes;
}
