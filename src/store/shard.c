/* Per-rank shard files: the search appends each finished work unit (its found
 * supports, then its completion record) and flushes, so a killed run loses at most
 * the units in flight. Format: docs/hdf5-format.md ("Shard files"). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_impl.h"

#define SHARD_FORMAT "headfuse-shard-1"
#define SHARD_CHUNK 64

struct hf_shard_s {
    char *path;
    hid_t file, units, found;      /* file and its two datasets */
    hid_t unit_mtype, found_mtype; /* memory types for writing */
    hsize_t nunits, nfound;        /* current dataset lengths */
    hf_found_mem_t *buf;           /* found records of the unit in progress */
    long nbuf, capbuf;
    int broken; /* a write failed: the file no longer takes appends */
};

static void buf_clear(hf_shard_t *sh)
{
    for (long i = 0; i < sh->nbuf; i++)
        free(sh->buf[i].record);
    sh->nbuf = 0;
}

/* Extendible, chunked, Fletcher32-checked 1-D dataset of the given file type. */
static hid_t create_log(hid_t file, const char *name, hid_t ftype)
{
    hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = SHARD_CHUNK;
    hid_t space = H5Screate_simple(1, &dims, &maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t ds = H5I_INVALID_HID;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0 &&
        H5Pset_fletcher32(dcpl) >= 0)
        ds = H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return ds;
}

hf_err_t hf_shard_create(const char *path, const char *fingerprint, hf_shard_t **out)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hid_t fapl = H5I_INVALID_HID, uf = H5I_INVALID_HID, ff = H5I_INVALID_HID;
    int created = 0;
    *out = NULL;
    hf_shard_t *sh = hf_calloc(1, sizeof *sh);
    if (!sh)
        return HF_ERR_NOMEM;
    sh->file = sh->units = sh->found = sh->unit_mtype = sh->found_mtype = H5I_INVALID_HID;
    hf_h5_quiet_begin(&q);
    if (!(sh->path = hf_strdup(path))) {
        err = HF_ERR_NOMEM;
        goto fail;
    }
    /* O_EXCL gives a clear "exists" message and never clobbers another rank's shard */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        err = hf_error(HF_ERR_IO, "%s: cannot create shard: %s", path, strerror(errno));
        goto fail;
    }
    close(fd);
    created = 1;
    if ((fapl = hf_h5_fapl()) < 0 ||
        (sh->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
        err = hf_h5_fail(HF_ERR_IO, path, "cannot create shard");
        goto fail;
    }
    if (hf_h5_attr_write_str(sh->file, "format", SHARD_FORMAT) < 0 ||
        hf_h5_attr_write_str(sh->file, "fingerprint", fingerprint) < 0) {
        err = hf_h5_fail(HF_ERR_IO, path, "writing attributes");
        goto fail;
    }
    if ((uf = hf_h5_unit_type(1)) < 0 || (ff = hf_h5_found_type(1)) < 0 ||
        (sh->unit_mtype = hf_h5_unit_type(0)) < 0 || (sh->found_mtype = hf_h5_found_type(0)) < 0 ||
        (sh->units = create_log(sh->file, "units", uf)) < 0 ||
        (sh->found = create_log(sh->file, "found", ff)) < 0 ||
        H5Fflush(sh->file, H5F_SCOPE_GLOBAL) < 0) {
        err = hf_h5_fail(HF_ERR_IO, path, "creating datasets");
        goto fail;
    }
    H5Tclose(ff);
    H5Tclose(uf);
    H5Pclose(fapl);
    hf_h5_quiet_end(&q);
    *out = sh;
    return HF_OK;
fail:
    if (ff >= 0)
        H5Tclose(ff);
    if (uf >= 0)
        H5Tclose(uf);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (sh->found >= 0)
        H5Dclose(sh->found);
    if (sh->units >= 0)
        H5Dclose(sh->units);
    if (sh->found_mtype >= 0)
        H5Tclose(sh->found_mtype);
    if (sh->unit_mtype >= 0)
        H5Tclose(sh->unit_mtype);
    if (sh->file >= 0)
        H5Fclose(sh->file);
    if (created)
        unlink(path);
    free(sh->path);
    free(sh);
    hf_h5_quiet_end(&q);
    return err;
}

hf_err_t hf_shard_add_found(hf_shard_t *sh, int32_t row, int64_t m, int64_t unit,
                            const char *record)
{
    if (!record)
        return hf_error(HF_ERR_INTERNAL, "%s: found record is NULL", sh->path);
    if (sh->nbuf == sh->capbuf) {
        long cap = sh->capbuf ? 2 * sh->capbuf : 8;
        hf_found_mem_t *nb = hf_realloc(sh->buf, (size_t)cap * sizeof *nb);
        if (!nb)
            return HF_ERR_NOMEM;
        sh->buf = nb;
        sh->capbuf = cap;
    }
    char *copy = hf_strdup(record);
    if (!copy)
        return HF_ERR_NOMEM;
    hf_found_mem_t *f = &sh->buf[sh->nbuf++];
    f->row = row;
    f->m = m;
    f->unit = unit;
    f->record = copy;
    f->checksum = hf_store_checksum(copy);
    return HF_OK;
}

/* Append n records from buf to a 1-D extendible dataset of length *len. */
static herr_t append(hid_t ds, hid_t mtype, hsize_t *len, hsize_t n, const void *buf)
{
    herr_t rc = -1;
    hsize_t newlen = *len + n;
    hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    if (n == 0)
        return 0;
    if (H5Dset_extent(ds, &newlen) < 0 || (fspace = H5Dget_space(ds)) < 0 ||
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, len, NULL, &n, NULL) < 0 ||
        (mspace = H5Screate_simple(1, &n, NULL)) < 0)
        goto done;
    rc = H5Dwrite(ds, mtype, mspace, fspace, H5P_DEFAULT, buf);
    if (rc >= 0)
        *len = newlen;
done:
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    return rc;
}

/* Write the buffered found records, optionally the unit record, then flush. */
static hf_err_t write_unit(hf_shard_t *sh, const hf_unit_record_t *u)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    if (sh->broken)
        return hf_error(HF_ERR_IO, "%s: an earlier write to this shard failed", sh->path);
    hf_h5_quiet_begin(&q);
    /* found records first: a reader that sees the completion record sees them too */
    if (append(sh->found, sh->found_mtype, &sh->nfound, (hsize_t)sh->nbuf, sh->buf) < 0 ||
        (u && append(sh->units, sh->unit_mtype, &sh->nunits, 1, u) < 0) ||
        H5Fflush(sh->file, H5F_SCOPE_GLOBAL) < 0) {
        sh->broken = 1;
        err = hf_h5_fail(HF_ERR_IO, sh->path, "writing a finished unit");
    }
    buf_clear(sh);
    hf_h5_quiet_end(&q);
    return err;
}

hf_err_t hf_shard_finish_unit(hf_shard_t *sh, const hf_unit_record_t *u)
{
    for (long i = 0; i < sh->nbuf; i++) {
        const hf_found_mem_t *f = &sh->buf[i];
        if (f->row != u->row || f->m != u->m || f->unit != u->unit) {
            hf_err_t err = hf_error(HF_ERR_INTERNAL,
                                    "%s: found record of unit (row %d, m %lld, unit %lld) "
                                    "buffered while finishing unit (row %d, m %lld, unit %lld)",
                                    sh->path, (int)f->row, (long long)f->m, (long long)f->unit,
                                    (int)u->row, (long long)u->m, (long long)u->unit);
            buf_clear(sh);
            return err;
        }
    }
    return write_unit(sh, u);
}

hf_err_t hf_shard_debug_write_found(hf_shard_t *sh)
{
    return write_unit(sh, NULL);
}

hf_err_t hf_shard_close(hf_shard_t **shp)
{
    hf_shard_t *sh = *shp;
    if (!sh)
        return HF_OK;
    *shp = NULL;
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hf_h5_quiet_begin(&q);
    buf_clear(sh); /* records of a unit that never finished are dropped by design */
    int bad = H5Dclose(sh->found) < 0;
    bad |= H5Dclose(sh->units) < 0;
    H5Tclose(sh->found_mtype);
    H5Tclose(sh->unit_mtype);
    bad |= H5Fclose(sh->file) < 0;
    if (bad)
        err = hf_h5_fail(HF_ERR_IO, sh->path, "closing shard");
    hf_h5_quiet_end(&q);
    free(sh->buf);
    free(sh->path);
    free(sh);
    return err;
}

/* ---- reading ---- */

void hf_shard_data_clear(hf_shard_data_t *d)
{
    for (long i = 0; i < d->nfound; i++)
        free(d->found_record[i]);
    free(d->found_record);
    free(d->found_unit);
    free(d->found_m);
    free(d->found_row);
    free(d->units);
    memset(d, 0, sizeof *d);
}

typedef struct {
    int32_t row;
    int64_t m, unit;
} unit_key_t;

static int key_cmp(const void *a, const void *b)
{
    const unit_key_t *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    return 0;
}

/* Open a 1-D log dataset, check its datatype against `expected`, return length. */
static hf_err_t open_log(hid_t file, const char *name, hid_t expected, const char *path, hid_t *ds,
                         hsize_t *len)
{
    char where[32];
    snprintf(where, sizeof where, "/%s", name);
    *ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (*ds < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    hid_t ft = H5Dget_type(*ds);
    if (ft < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    hf_err_t err = hf_h5_check_compound(ft, expected, path, where);
    H5Tclose(ft);
    if (err == HF_OK)
        err = hf_h5_dataset_dims(*ds, 1, path, where, len);
    return err;
}

hf_err_t hf_shard_read(const char *path, const char *fingerprint, hf_shard_data_t *out)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hid_t file = H5I_INVALID_HID, uds = H5I_INVALID_HID, fds = H5I_INVALID_HID;
    hid_t umt = H5I_INVALID_HID, fmt = H5I_INVALID_HID, fspace = H5I_INVALID_HID;
    char *format = NULL, *fp = NULL;
    hf_unit_record_t *units = NULL;
    hf_found_mem_t *found = NULL;
    unit_key_t *keys = NULL;
    hsize_t nu = 0, nf = 0;
    int reclaim = 0;

    memset(out, 0, sizeof *out);
    hf_h5_quiet_begin(&q);
    HF_CHECK(err, hf_h5_open_read(path, "shard", &file), done);
    HF_CHECK(err, hf_h5_attr_read_str(file, "format", path, "/", &format), done);
    if (strcmp(format, SHARD_FORMAT) != 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: not a headfuse shard (format '%s', expected '%s')",
                       path, format, SHARD_FORMAT);
        goto done;
    }
    HF_CHECK(err, hf_h5_attr_read_str(file, "fingerprint", path, "/", &fp), done);
    if (strcmp(fp, fingerprint) != 0) {
        err = hf_error(HF_ERR_INPUT, "%s: shard of another job (fingerprint '%s', expected '%s')",
                       path, fp, fingerprint);
        goto done;
    }
    if ((umt = hf_h5_unit_type(0)) < 0 || (fmt = hf_h5_found_type(0)) < 0) {
        err = hf_h5_fail(HF_ERR_INTERNAL, path, "building datatypes");
        goto done;
    }
    HF_CHECK(err, open_log(file, "units", umt, path, &uds, &nu), done);
    HF_CHECK(err, open_log(file, "found", fmt, path, &fds, &nf), done);

    units = hf_malloc((size_t)nu * sizeof *units);
    keys = hf_malloc((size_t)nu * sizeof *keys);
    found = hf_calloc((size_t)nf, sizeof *found);
    if (!units || !keys || !found) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    if (nu > 0 && H5Dread(uds, umt, H5S_ALL, H5S_ALL, H5P_DEFAULT, units) < 0) {
        err = hf_h5_fail(HF_ERR_CORRUPT, path, "/units");
        goto done;
    }
    if (nf > 0) {
        if ((fspace = H5Dget_space(fds)) < 0) {
            err = hf_h5_fail(HF_ERR_CORRUPT, path, "/found");
            goto done;
        }
        reclaim = 1; /* safe on the zeroed buffer even if the read fails midway */
        if (H5Dread(fds, fmt, H5S_ALL, H5S_ALL, H5P_DEFAULT, found) < 0) {
            err = hf_h5_fail(HF_ERR_CORRUPT, path, "/found");
            goto done;
        }
    }
    for (hsize_t i = 0; i < nu; i++) {
        const hf_unit_record_t *u = &units[i];
        if (u->row < 0 || u->m < 0 || u->unit < 0 || u->rank < 0 || u->nodes < 0 || u->found < 0 ||
            !(u->seconds >= 0)) {
            err = hf_error(HF_ERR_CORRUPT, "%s: /units[%llu]: invalid values", path,
                           (unsigned long long)i);
            goto done;
        }
        keys[i] = (unit_key_t){u->row, u->m, u->unit};
    }
    qsort(keys, (size_t)nu, sizeof *keys, key_cmp);

    long keep = 0;
    for (hsize_t i = 0; i < nf; i++) {
        const hf_found_mem_t *f = &found[i];
        if (!f->record || hf_store_checksum(f->record) != f->checksum) {
            err = hf_error(HF_ERR_CORRUPT, "%s: /found[%llu]: record checksum mismatch", path,
                           (unsigned long long)i);
            goto done;
        }
        unit_key_t k = {f->row, f->m, f->unit};
        if (bsearch(&k, keys, (size_t)nu, sizeof *keys, key_cmp))
            keep++;
    }
    out->units = units;
    units = NULL;
    out->nunits = (long)nu;
    out->found_row = hf_malloc((size_t)keep * sizeof *out->found_row);
    out->found_m = hf_malloc((size_t)keep * sizeof *out->found_m);
    out->found_unit = hf_malloc((size_t)keep * sizeof *out->found_unit);
    out->found_record = hf_calloc((size_t)keep, sizeof *out->found_record);
    if (!out->found_row || !out->found_m || !out->found_unit || !out->found_record) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    for (hsize_t i = 0; i < nf; i++) {
        const hf_found_mem_t *f = &found[i];
        unit_key_t k = {f->row, f->m, f->unit};
        if (!bsearch(&k, keys, (size_t)nu, sizeof *keys, key_cmp))
            continue; /* unit in flight when the shard was last flushed */
        long j = out->nfound;
        if (!(out->found_record[j] = hf_strdup(f->record))) {
            err = HF_ERR_NOMEM;
            goto done;
        }
        out->found_row[j] = f->row;
        out->found_m[j] = f->m;
        out->found_unit[j] = f->unit;
        out->nfound++;
    }
done:
    if (reclaim)
        H5Dvlen_reclaim(fmt, fspace, H5P_DEFAULT, found);
    if (fspace >= 0)
        H5Sclose(fspace);
    if (fds >= 0)
        H5Dclose(fds);
    if (uds >= 0)
        H5Dclose(uds);
    if (fmt >= 0)
        H5Tclose(fmt);
    if (umt >= 0)
        H5Tclose(umt);
    if (file >= 0)
        H5Fclose(file);
    free(found);
    free(keys);
    free(units);
    free(fp);
    free(format);
    if (err != HF_OK)
        hf_shard_data_clear(out);
    hf_h5_quiet_end(&q);
    return err;
}
