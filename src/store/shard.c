/* Per-rank shard files: the search appends each finished work unit (its found
 * supports, then its completion record) so a killed run loses at most the units
 * in flight. Format: docs/hdf5-format.md, "Shard files".
 *
 * Crash safety comes from HDF5's single-writer/multiple-reader (SWMR) mode: its
 * ordered metadata flushes keep the file readable at every moment, even when the
 * writer is killed in the middle of a flush (plain HDF5 can then leave a dataset's
 * new length on disk without its data). SWMR cannot order variable-length data,
 * so record texts go into byte datasets that /found indexes: /text in rows of 256 bytes,
 * and /bigtext, compressed, in rows of 1 MiB for records of 64 KiB and more.
 *
 * Every chunk holds one record (one row), so an append only ever writes new chunks: a
 * kill can tear a write (the kernel stops between pages), and a torn rewrite of a shared
 * chunk would destroy records already committed. */
#define _GNU_SOURCE /* fallocate */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "headfuse/control.h"
#include "store/store_impl.h"

/* Format 3 keeps large records in /bigtext (rows of BIG_BLOCK bytes, compressed); format 2
 * records ranges of cells of a unit (/units lo, hi; /found lo); formats 2 and 1 (whole
 * units) are still read (docs/hdf5-format.md). */
#define SHARD_FORMAT "headfuse-shard-3"
#define SHARD_FORMAT_2 "headfuse-shard-2"
#define SHARD_FORMAT_1 "headfuse-shard-1"
#define TEXT_BLOCK 256 /* bytes per row of /text */
/* A record of at least BIG_MIN bytes (a witness of 10^3 keys or more) goes to /bigtext,
 * from a fresh row of BIG_BLOCK bytes: a witness of 10^7 keys is then a few hundred
 * chunks, not millions, and compressed. Its /found offset is -1 - (its byte offset in
 * /bigtext). */
#define BIG_MIN ((int64_t)64 << 10)
#define BIG_BLOCK ((hsize_t)1 << 20)
#define RESERVE_STEP ((hsize_t)4 << 20)
#define RESERVE_SLACK ((hsize_t)256 << 10) /* metadata a unit may add */

struct hf_shard_s {
    char *path;
    hid_t file, units, found, text, big; /* file and its four datasets */
    hid_t unit_mtype, found_mtype;       /* memory types for writing */
    hsize_t nunits, nfound, ntext, nbig; /* current dataset lengths */
    hf_found_mem_t *buf;                 /* found records of the unit in progress ... */
    char **buftext;                      /* ... and their texts */
    long nbuf, capbuf;
    int broken;       /* a write failed: the file no longer takes appends */
    int fd;           /* for reserving disk blocks; -1 when not possible */
    hsize_t reserved; /* blocks are reserved up to this offset */
};

static void buf_clear(hf_shard_t *sh)
{
    for (long i = 0; i < sh->nbuf; i++)
        free(sh->buftext[i]);
    sh->nbuf = 0;
}

/* Extendible, Fletcher32-checked dataset of one record per chunk: 1-D, or 2-D
 * with rows of `width` elements (width > 0). fill (may be NULL) marks elements
 * never written, so a reader can tell them from real records. */
static hid_t create_log(hid_t file, const char *name, hid_t ftype, hid_t mtype, hsize_t width,
                        const void *fill, int deflate)
{
    int rank = width ? 2 : 1;
    hsize_t dims[2] = {0, width}, maxdims[2] = {H5S_UNLIMITED, width}, chunk[2] = {1, width};
    hid_t space = H5Screate_simple(rank, dims, maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t ds = H5I_INVALID_HID;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
        (!deflate || H5Pset_deflate(dcpl, 1) >= 0) && H5Pset_fletcher32(dcpl) >= 0 &&
        (!fill || H5Pset_fill_value(dcpl, mtype, fill) >= 0))
        ds = HF_H5W(H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return ds;
}

hf_err_t hf_shard_create(const char *path, const char *fingerprint, const char *about,
                         hf_shard_t **out)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hid_t fapl = H5I_INVALID_HID, uf = H5I_INVALID_HID, ff = H5I_INVALID_HID;
    int created = 0, create_failed = 0;
    const hf_unit_record_t unit_fill = {
        .row = -1, .rank = -1, .m = -1, .unit = -1, .lo = -1, .hi = -1};
    const hf_found_mem_t found_fill = {.row = -1, .m = -1, .unit = -1, .lo = -1, .offset = -1};
    *out = NULL;
    hf_shard_t *sh = hf_calloc(1, sizeof *sh);
    if (!sh)
        return HF_ERR_NOMEM;
    sh->file = sh->units = sh->found = sh->text = sh->big = H5I_INVALID_HID;
    sh->unit_mtype = sh->found_mtype = H5I_INVALID_HID;
    sh->fd = -1;
    hf_h5_quiet_begin(&q);
    if (!(sh->path = hf_strdup(path))) {
        err = HF_ERR_NOMEM;
        goto fail;
    }
    /* O_EXCL gives a clear "exists" message and never clobbers another rank's shard */
    int fd = HF_SYSW(EIO, open(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
    if (fd < 0) {
        err = hf_error(HF_ERR_IO, "%s: cannot create shard: %s", path, strerror(errno));
        goto fail;
    }
    close(fd);
    created = 1;
    if ((fapl = hf_h5_fapl(1)) < 0 ||
        (sh->file = HF_H5W(H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl))) < 0) {
        /* H5Fcreate that met a write error keeps the half-made file, without an ID,
         * and cannot close it (at exit either) */
        create_failed = fapl >= 0 && !hf_io_fault_injected();
        err = hf_h5_fail(HF_ERR_IO, path, "cannot create shard");
        goto fail;
    }
    /* fixed-length strings: a shard then has no global heap, whose damage crashes HDF5 */
    if (hf_h5_attr_write_fixed_str(sh->file, "format", SHARD_FORMAT) < 0 ||
        hf_h5_attr_write_fixed_str(sh->file, "fingerprint", fingerprint) < 0 ||
        (about && hf_h5_attr_write_fixed_str(sh->file, "about", about) < 0)) {
        err = hf_h5_fail(HF_ERR_IO, path, "writing attributes");
        goto fail;
    }
    /* everything must exist before SWMR writing starts: no objects are created after */
    if ((uf = hf_h5_unit_type(1)) < 0 || (ff = hf_h5_found_type(1)) < 0 ||
        (sh->unit_mtype = hf_h5_unit_type(0)) < 0 || (sh->found_mtype = hf_h5_found_type(0)) < 0 ||
        (sh->units = create_log(sh->file, "units", uf, sh->unit_mtype, 0, &unit_fill, 0)) < 0 ||
        (sh->found = create_log(sh->file, "found", ff, sh->found_mtype, 0, &found_fill, 0)) < 0 ||
        (sh->text = create_log(sh->file, "text", H5T_STD_U8LE, H5T_NATIVE_UINT8, TEXT_BLOCK, NULL,
                               0)) < 0 ||
        (sh->big = create_log(sh->file, "bigtext", H5T_STD_U8LE, H5T_NATIVE_UINT8, BIG_BLOCK, NULL,
                              1)) < 0 ||
        HF_H5W(H5Fstart_swmr_write(sh->file)) < 0) {
        err = hf_h5_fail(HF_ERR_IO, path, "creating datasets");
        goto fail;
    }
    H5Tclose(ff);
    H5Tclose(uf);
    H5Pclose(fapl);
    sh->fd = open(path, O_WRONLY);
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
    if (sh->big >= 0)
        H5Dclose(sh->big);
    if (sh->text >= 0)
        H5Dclose(sh->text);
    if (sh->found >= 0)
        H5Dclose(sh->found);
    if (sh->units >= 0)
        H5Dclose(sh->units);
    if (sh->found_mtype >= 0)
        H5Tclose(sh->found_mtype);
    if (sh->unit_mtype >= 0)
        H5Tclose(sh->unit_mtype);
    int stuck = create_failed;
    if (sh->file >= 0) {
        H5Fclose(sh->file);
        stuck = H5Iis_valid(sh->file) > 0; /* a real I/O error: HDF5 could not close it */
    }
    if (created)
        unlink(path);
    free(sh->path);
    free(sh);
    hf_h5_quiet_end(&q);
    if (stuck)
        hf_h5_abandon(); /* the last HDF5 call of a failing process */
    return err;
}

hf_err_t hf_shard_add_found(hf_shard_t *sh, int32_t row, int64_t m, int64_t unit, int64_t lo,
                            const char *record)
{
    if (!record)
        return hf_error(HF_ERR_INTERNAL, "%s: found record is NULL", sh->path);
    char *copy = hf_strdup(record);
    return copy ? hf_shard_take_found(sh, row, m, unit, lo, copy) : HF_ERR_NOMEM;
}

hf_err_t hf_shard_take_found(hf_shard_t *sh, int32_t row, int64_t m, int64_t unit, int64_t lo,
                             char *copy)
{
    if (!copy)
        return hf_error(HF_ERR_INTERNAL, "%s: found record is NULL", sh->path);
    if (HF_GROW2(&sh->buf, &sh->buftext, &sh->capbuf, sh->nbuf + 1) != HF_OK) {
        free(copy);
        return HF_ERR_NOMEM;
    }
    size_t len = strlen(copy);
    sh->buf[sh->nbuf] = (hf_found_mem_t){.row = row,
                                         .m = m,
                                         .unit = unit,
                                         .lo = lo,
                                         .offset = 0, /* known when written */
                                         .length = (int64_t)len,
                                         .checksum = hf_store_checksum(copy, len)};
    sh->buftext[sh->nbuf++] = copy;
    return HF_OK;
}

/* Rows moved by one H5Dwrite/H5Dread: each row is a chunk, and HDF5 keeps a selection
 * per chunk it touches, so one call over the 10^6 rows of a large witness took gigabytes
 * (docs/hdf5-format.md, "Shard files"). */
#define SLICE_ROWS 4096

/* Read or write rows [at, at + n) of ds (1-D, or 2-D with rows of width elements) from or
 * into buf, slice by slice. */
static herr_t rows_io(hid_t ds, hid_t mtype, hsize_t at, hsize_t n, hsize_t width, void *buf,
                      int write)
{
    int rank = width ? 2 : 1;
    size_t row = H5Tget_size(mtype) * (size_t)(width ? width : 1);
    hid_t fspace = row ? H5Dget_space(ds) : H5I_INVALID_HID;
    herr_t rc = fspace < 0 ? -1 : 0;
    for (hsize_t done = 0; rc >= 0 && done < n; done += SLICE_ROWS) {
        hsize_t k = n - done < SLICE_ROWS ? n - done : SLICE_ROWS;
        hsize_t start[2] = {at + done, 0}, count[2] = {k, width};
        hid_t mspace = H5I_INVALID_HID;
        char *p = (char *)buf + (size_t)done * row;
        if (H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            (mspace = H5Screate_simple(rank, count, NULL)) < 0)
            rc = -1;
        else if (write)
            rc = HF_H5W(H5Dwrite(ds, mtype, mspace, fspace, H5P_DEFAULT, p));
        else
            rc = H5Dread(ds, mtype, mspace, fspace, H5P_DEFAULT, p);
        if (mspace >= 0)
            H5Sclose(mspace);
    }
    if (fspace >= 0)
        H5Sclose(fspace);
    return rc;
}

/* Append n rows from buf to an extendible dataset of *len rows (1-D, or 2-D with
 * rows of width elements). */
static herr_t append(hid_t ds, hid_t mtype, hsize_t *len, hsize_t n, hsize_t width, const void *buf)
{
    hsize_t newdims[2] = {*len + n, width};
    if (n == 0)
        return 0;
    if (HF_H5W(H5Dset_extent(ds, newdims)) < 0 ||
        rows_io(ds, mtype, *len, n, width, (void *)buf, 1) < 0)
        return -1;
    *len = newdims[0];
    return 0;
}

/* Append one large record to /bigtext from a fresh row: its whole rows straight from the
 * text, the last one through `last` (BIG_BLOCK bytes) padded with zeros. */
static herr_t write_big(hf_shard_t *sh, hf_found_mem_t *f, const char *text, char *last)
{
    hsize_t full = (hsize_t)f->length / BIG_BLOCK, rest = (hsize_t)f->length % BIG_BLOCK;
    hsize_t rows = full + (rest > 0), dims[2] = {sh->nbig + rows, BIG_BLOCK};
    if (HF_H5W(H5Dset_extent(sh->big, dims)) < 0 ||
        (full > 0 &&
         rows_io(sh->big, H5T_NATIVE_UINT8, sh->nbig, full, BIG_BLOCK, (void *)text, 1) < 0))
        return -1;
    if (rest > 0) {
        memset(last, 0, BIG_BLOCK);
        memcpy(last, text + full * BIG_BLOCK, rest);
        if (rows_io(sh->big, H5T_NATIVE_UINT8, sh->nbig + full, 1, BIG_BLOCK, last, 1) < 0)
            return -1;
    }
    f->offset = -1 - (int64_t)(sh->nbig * BIG_BLOCK);
    sh->nbig += rows;
    return 0;
}

/* Append the buffered texts to /text (each from a fresh block; the large ones to /bigtext)
 * and their index entries to /found. HF_ERR_NOMEM before anything is written, HF_ERR_IO
 * (the HDF5 error on the stack) when a write failed. */
static hf_err_t write_found(hf_shard_t *sh)
{
    hsize_t blocks = 0;
    int big = 0;
    for (long i = 0; i < sh->nbuf; i++) {
        if (sh->buf[i].length >= BIG_MIN)
            big = 1;
        else
            blocks += ((hsize_t)sh->buf[i].length + TEXT_BLOCK - 1) / TEXT_BLOCK;
    }
    char *bytes = hf_calloc(blocks ? blocks : 1, TEXT_BLOCK);
    char *last = big ? hf_malloc(BIG_BLOCK) : NULL;
    if (!bytes || (big && !last)) {
        free(bytes);
        free(last);
        return HF_ERR_NOMEM;
    }
    hsize_t at = 0;
    herr_t rc = 0;
    for (long i = 0; i < sh->nbuf && rc >= 0; i++) {
        if (sh->buf[i].length >= BIG_MIN) {
            rc = write_big(sh, &sh->buf[i], sh->buftext[i], last);
            continue;
        }
        sh->buf[i].offset = (int64_t)((sh->ntext + at) * TEXT_BLOCK);
        memcpy(bytes + at * TEXT_BLOCK, sh->buftext[i], (size_t)sh->buf[i].length);
        at += ((hsize_t)sh->buf[i].length + TEXT_BLOCK - 1) / TEXT_BLOCK;
    }
    assert(rc < 0 || at == blocks); /* every text in blocks of its own, as the reader expects */
    if (rc >= 0)
        rc = append(sh->text, H5T_NATIVE_UINT8, &sh->ntext, blocks, TEXT_BLOCK, bytes);
    free(bytes);
    free(last);
    if (rc >= 0)
        rc = append(sh->found, sh->found_mtype, &sh->nfound, (hsize_t)sh->nbuf, 0, sh->buf);
    return rc < 0 ? HF_ERR_IO : HF_OK;
}

/* fallocate(fd, KEEP_SIZE) of [from, to), retried when a signal interrupts it. */
static int reserve_range(int fd, hsize_t from, hsize_t to)
{
    int rc;
    do
        rc = HF_SYSW(EIO, fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)));
    while (rc < 0 && errno == EINTR);
    return rc;
}

/* Reserve disk blocks ahead of HDF5 (fallocate, file size unchanged) so that a
 * full disk is met here, with the shard intact, and not inside H5Fflush: HDF5
 * 1.10 cannot close a file after a failed flush ("slist already enabled?") and
 * then crashes at exit or at MPI_Finalize. `need`: bytes this unit may add. */
static hf_err_t reserve(hf_shard_t *sh, hsize_t need)
{
    haddr_t eoa;
    if (H5Fget_eoa(sh->file, &eoa) < 0)
        return HF_OK; /* best effort */
    hsize_t want = eoa + 2 * need + RESERVE_SLACK;
    /* fallocate(KEEP_SIZE) does not check the file size limit (ulimit -f): HDF5's
     * writes past it would fail with EFBIG inside a flush */
    struct rlimit lim = {RLIM_INFINITY, RLIM_INFINITY}; /* also if getrlimit fails */
    getrlimit(RLIMIT_FSIZE, &lim);
    if (lim.rlim_cur != RLIM_INFINITY && want > (hsize_t)lim.rlim_cur)
        return hf_error(HF_ERR_IO, "%s: no room for more units: %s (file size limit %llu bytes)",
                        sh->path, strerror(EFBIG), (unsigned long long)lim.rlim_cur);
    int fail = hf_knob(HF_KNOB_SHARD_FAIL_RESERVE, 0) != 0; /* a test's full disk */
    if (sh->fd < 0 || (want <= sh->reserved && !fail))
        return HF_OK;
    hsize_t to = want + (eoa / 8 > RESERVE_STEP ? eoa / 8 : RESERVE_STEP);
    if (lim.rlim_cur != RLIM_INFINITY && to > (hsize_t)lim.rlim_cur)
        to = (hsize_t)lim.rlim_cur;
    int rc = fail ? (errno = ENOSPC, -1) : reserve_range(sh->fd, eoa, to);
    if (rc < 0 && errno == ENOSPC && !fail) {
        to = want; /* nearly full: just what this unit needs */
        rc = reserve_range(sh->fd, eoa, to);
    }
    if (rc == 0) {
        sh->reserved = to;
        return HF_OK;
    }
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL || errno == ENODEV) {
        /* file systems without fallocate: go on without a reservation */
        close(sh->fd);
        sh->fd = -1;
        return HF_OK;
    }
    if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
        return hf_error(HF_ERR_IO, "%s: no room for more units: %s", sh->path, strerror(errno));
    /* anything else (EIO, a sealed or immutable file) is an error of the disk */
    return hf_error(HF_ERR_IO, "%s: reserving disk space for a unit: %s", sh->path,
                    strerror(errno));
}

/* Write the buffered found records and flush; then, if u, the unit record and
 * flush again. Two flushes: the completion record reaches the file only after its
 * found records are there, whatever order HDF5 writes one flush in. */
static hf_err_t write_unit(hf_shard_t *sh, const hf_unit_record_t *u)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    if (sh->broken) {
        buf_clear(sh);
        return hf_error(HF_ERR_IO, "%s: an earlier write to this shard failed", sh->path);
    }
    hsize_t need = sizeof *u + (hsize_t)sh->nbuf * (sizeof *sh->buf + TEXT_BLOCK);
    for (long i = 0; i < sh->nbuf; i++)
        need += (hsize_t)sh->buf[i].length;
    hf_h5_quiet_begin(&q);
    if ((err = reserve(sh, need)) != HF_OK) {
        buf_clear(sh); /* the unit is not recorded; the shard stays usable */
        hf_h5_quiet_end(&q);
        return err;
    }
    hf_err_t fe = sh->nbuf > 0 ? write_found(sh) : HF_OK;
    if (fe == HF_ERR_NOMEM) {
        err = fe; /* nothing written: the unit is not recorded, the shard stays usable */
    } else if (fe != HF_OK || (sh->nbuf > 0 && HF_H5W(H5Fflush(sh->file, H5F_SCOPE_GLOBAL)) < 0) ||
               (u && (append(sh->units, sh->unit_mtype, &sh->nunits, 1, 0, u) < 0 ||
                      HF_H5W(H5Fflush(sh->file, H5F_SCOPE_GLOBAL)) < 0))) {
        sh->broken = 1;
        err = hf_h5_fail(HF_ERR_IO, sh->path, "writing a finished unit");
    }
    buf_clear(sh);
    hf_h5_quiet_end(&q);
    return err;
}

hf_err_t hf_shard_finish_unit(hf_shard_t *sh, const hf_unit_record_t *u)
{
    hf_err_t err = HF_OK;
    /* a range the reader would refuse would make the whole shard unreadable */
    if (u->lo < 0 || u->hi <= u->lo)
        err = hf_error(HF_ERR_INTERNAL,
                       "%s: unit (row %d, m %lld, unit %lld) finished with the invalid cell "
                       "range [%lld, %lld)",
                       sh->path, (int)u->row, (long long)u->m, (long long)u->unit, (long long)u->lo,
                       (long long)u->hi);
    for (long i = 0; i < sh->nbuf && err == HF_OK; i++) {
        const hf_found_mem_t *f = &sh->buf[i];
        if (f->row != u->row || f->m != u->m || f->unit != u->unit || f->lo != u->lo)
            err = hf_error(HF_ERR_INTERNAL,
                           "%s: found record of unit (row %d, m %lld, unit %lld, cells from "
                           "%lld) buffered while finishing unit (row %d, m %lld, unit %lld, "
                           "cells from %lld)",
                           sh->path, (int)f->row, (long long)f->m, (long long)f->unit,
                           (long long)f->lo, (int)u->row, (long long)u->m, (long long)u->unit,
                           (long long)u->lo);
    }
    if (err != HF_OK) {
        buf_clear(sh);
        return err;
    }
    return write_unit(sh, u);
}

hf_err_t hf_shard_debug_write_found(hf_shard_t *sh)
{
    return write_unit(sh, NULL);
}

hf_err_t hf_shard_destroy(hf_shard_t **shp)
{
    hf_shard_t *sh = shp ? *shp : NULL;
    if (!sh)
        return HF_OK;
    *shp = NULL;
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hf_h5_quiet_begin(&q);
    buf_clear(sh); /* records of a unit that never finished are dropped by design */
    int bad = HF_H5W_CLOSE(H5Dclose(sh->big)) < 0;
    bad |= HF_H5W_CLOSE(H5Dclose(sh->text)) < 0;
    bad |= HF_H5W_CLOSE(H5Dclose(sh->found)) < 0;
    bad |= HF_H5W_CLOSE(H5Dclose(sh->units)) < 0;
    H5Tclose(sh->found_mtype);
    H5Tclose(sh->unit_mtype);
    bad |= HF_H5W_CLOSE(H5Fclose(sh->file)) < 0;
    int stuck = H5Iis_valid(sh->file) > 0; /* a real I/O error: HDF5 could not close it */
    /* a broken shard's write error was reported when it happened: keep its message */
    if (bad)
        err = sh->broken ? HF_ERR_IO : hf_h5_fail(HF_ERR_IO, sh->path, "closing shard");
    if (sh->fd >= 0)
        close(sh->fd);
    hf_h5_quiet_end(&q);
    if (stuck)
        hf_h5_abandon(); /* the last HDF5 call of a failing process */
    free(sh->buftext);
    free(sh->buf);
    free(sh->path);
    free(sh);
    return err;
}

/* ---- reading ---- */

void hf_shard_data_init(hf_shard_data_t *d)
{
    memset(d, 0, sizeof *d);
}

void hf_shard_data_clear(hf_shard_data_t *d)
{
    for (long i = 0; i < d->nfound; i++)
        free(d->found_record[i]);
    free(d->found_record);
    free(d->found_lo);
    free(d->found_unit);
    free(d->found_m);
    free(d->found_row);
    free(d->units);
    hf_shard_data_init(d);
}

/* A completed range, as found records name it. */
typedef struct {
    int32_t row;
    int64_t m, unit, lo;
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
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return 0;
}

/* Open a dataset, check its datatype (a compound against `expected`, else rows of
 * TEXT_BLOCK bytes) and read it whole into a new buffer of rowsize-byte rows. */
static hf_err_t read_log(hid_t file, const char *name, hid_t expected, size_t rowsize,
                         const char *path, void **out, hsize_t *len)
{
    char where[32];
    hf_err_t err = HF_OK;
    hid_t ds, ft = H5I_INVALID_HID;
    hsize_t dims[2], fsize;
    snprintf(where, sizeof where, "/%s", name);
    *out = NULL;
    if ((ds = H5Dopen2(file, name, H5P_DEFAULT)) < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    if ((ft = H5Dget_type(ds)) < 0) {
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    int rank = H5Tget_class(expected) == H5T_COMPOUND ? 1 : 2;
    if (rank == 1) {
        HF_CHECK(err, hf_h5_check_compound(ft, expected, path, where), done);
        HF_CHECK(err, hf_h5_dataset_dims(ds, 1, path, where, dims), done);
    } else {
        if (H5Tget_class(ft) != H5T_INTEGER || H5Tget_size(ft) != 1) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: not bytes", path, where);
            goto done;
        }
        HF_CHECK(err, hf_h5_dataset_dims(ds, 2, path, where, dims), done);
        if (dims[1] != TEXT_BLOCK) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: rows of %llu bytes, expected %d", path, where,
                           (unsigned long long)dims[1], TEXT_BLOCK);
            goto done;
        }
    }
    /* A row that holds data takes at least its size in the file, so no more rows than
     * the file has room for can hold data: rows past those were never written (a
     * killed writer can leave a dataset's extent ahead of its data, and a damaged
     * file can claim any extent) and would read as the fill value. Reading only the
     * rows the file can hold keeps memory in proportion to the file (a 10 kB shard
     * claiming 2^30 units made this reader allocate 48 GB; found by fuzzing). */
    size_t frow = H5Tget_size(ft) * (rank == 2 ? TEXT_BLOCK : 1);
    if (frow == 0 || H5Fget_filesize(file, &fsize) < 0) {
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    *len = dims[0];
    if (*len > fsize / frow + 1)
        *len = fsize / frow + 1;
    if (*len > ((hsize_t)1 << 40) / rowsize) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: implausible size", path, where);
        goto done;
    }
    void *buf = hf_malloc((size_t)*len * rowsize);
    if (!buf) {
        err = HF_ERR_NOMEM;
        goto done;
    }
    if (*len > 0 && rows_io(ds, expected, 0, *len, rank == 2 ? TEXT_BLOCK : 0, buf, 0) < 0) {
        free(buf);
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
        goto done;
    }
    *out = buf;
done:
    if (ft >= 0)
        H5Tclose(ft);
    H5Dclose(ds);
    return err;
}

/* Open /bigtext (format 3): *ds and its size in bytes *bytes, never more than a compressed
 * file of this size could hold (deflate gains at most about 1032 to 1), so that a damaged
 * extent cannot make the reader allocate without bound. */
static hf_err_t big_open(hid_t file, const char *path, hid_t *ds, hsize_t *bytes)
{
    hsize_t dims[2], fsize;
    hid_t ft = H5I_INVALID_HID;
    hf_err_t err = HF_OK;
    if ((*ds = H5Dopen2(file, "bigtext", H5P_DEFAULT)) < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, "/bigtext");
    if ((ft = H5Dget_type(*ds)) < 0 || H5Tget_class(ft) != H5T_INTEGER || H5Tget_size(ft) != 1)
        err = hf_error(HF_ERR_CORRUPT, "%s: /bigtext: not bytes", path);
    if (err == HF_OK)
        err = hf_h5_dataset_dims(*ds, 2, path, "/bigtext", dims);
    if (err == HF_OK && dims[1] != BIG_BLOCK)
        err = hf_error(HF_ERR_CORRUPT, "%s: /bigtext: rows of %llu bytes, expected %llu", path,
                       (unsigned long long)dims[1], (unsigned long long)BIG_BLOCK);
    if (err == HF_OK && H5Fget_filesize(file, &fsize) < 0)
        err = hf_h5_fail(HF_ERR_CORRUPT, path, "/bigtext");
    if (err == HF_OK) {
        *bytes = dims[0] * BIG_BLOCK;
        if (dims[0] > ((hsize_t)1 << 40) / BIG_BLOCK || *bytes > 1100 * fsize + BIG_BLOCK)
            err = hf_error(HF_ERR_CORRUPT, "%s: /bigtext: implausible size", path);
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (err != HF_OK) {
        H5Dclose(*ds);
        *ds = H5I_INVALID_HID;
    }
    return err;
}

/* Record f of /bigtext (bounds checked) into *rec (hf_malloc'd, NUL-terminated), checked
 * against its checksum. */
static hf_err_t big_read(hid_t ds, const hf_found_mem_t *f, const char *path, unsigned long long i,
                         char **rec)
{
    hsize_t at = (hsize_t)(-1 - f->offset) / BIG_BLOCK;
    hsize_t rows = ((hsize_t)f->length + BIG_BLOCK - 1) / BIG_BLOCK;
    char *b = hf_malloc((size_t)(rows ? rows * BIG_BLOCK : 1) + 1);
    if (!b)
        return HF_ERR_NOMEM;
    if (rows > 0 && rows_io(ds, H5T_NATIVE_UINT8, at, rows, BIG_BLOCK, b, 0) < 0) {
        free(b);
        return hf_h5_fail(HF_ERR_CORRUPT, path, "/bigtext");
    }
    b[f->length] = '\0';
    if (hf_store_checksum(b, (size_t)f->length) != f->checksum) {
        free(b);
        return hf_error(HF_ERR_CORRUPT, "%s: /found[%llu]: record text checksum mismatch", path, i);
    }
    *rec = b;
    return HF_OK;
}

/* The format (1, 2 or 3: *version) and the fingerprint of an open shard: another format is
 * HF_ERR_CORRUPT, a shard of another search HF_ERR_INPUT naming what it holds. */
static hf_err_t check_header(hid_t file, const char *path, const char *fingerprint, int *version)
{
    hf_err_t err = HF_OK;
    char *format = NULL, *fp = NULL;
    if (H5Aexists(file, "format") <= 0)
        return hf_error(HF_ERR_CORRUPT, "%s: not a headfuse shard (no format attribute)", path);
    HF_CHECK(err, hf_h5_attr_read_str(file, "format", path, "/", &format), done);
    *version = !strcmp(format, SHARD_FORMAT)     ? 3
               : !strcmp(format, SHARD_FORMAT_2) ? 2
               : !strcmp(format, SHARD_FORMAT_1) ? 1
                                                 : 0;
    if (!*version) {
        err = hf_error(HF_ERR_CORRUPT,
                       "%s: not a headfuse shard (format '%s', expected '%s', '%s' or '%s')", path,
                       format, SHARD_FORMAT, SHARD_FORMAT_2, SHARD_FORMAT_1);
        goto done;
    }
    HF_CHECK(err, hf_h5_attr_read_str(file, "fingerprint", path, "/", &fp), done);
    if (strcmp(fp, fingerprint) != 0) {
        /* what the shard holds, in words, when its writer recorded it */
        char *about = NULL;
        if (H5Aexists(file, "about") > 0 &&
            hf_h5_attr_read_str(file, "about", path, "/", &about) != HF_OK) {
            free(about);
            about = NULL;
        }
        if (about)
            err = hf_error(HF_ERR_INPUT,
                           "%s: shard of another search: it holds '%s' (fingerprint '%s', "
                           "expected '%s')",
                           path, about, fp, fingerprint);
        else
            err = hf_error(HF_ERR_INPUT,
                           "%s: shard of another search (written by an older headfuse, which does "
                           "not say which; fingerprint '%s', expected '%s')",
                           path, fp, fingerprint);
        free(about);
    }
done:
    free(fp);
    free(format);
    return err;
}

/* A shard's logs as shard_read reads them, phase by phase. */
typedef struct {
    hf_unit_record_t *units; /* nu records */
    hf_found_mem_t *found;   /* nf records */
    char *text;              /* /text: nt bytes */
    unit_key_t *keys;        /* the completed ranges of units, sorted */
    hsize_t nu, nf, nt, nbig;
    hid_t big; /* /bigtext (format 3, nbig bytes), or H5I_INVALID_HID */
} shard_logs_t;

static void logs_clear(shard_logs_t *L)
{
    if (L->big >= 0)
        H5Dclose(L->big);
    free(L->keys);
    free(L->text);
    free(L->found);
    free(L->units);
}

/* The /units, /found and /text logs (and /bigtext in format 3) whole; format 1's records
 * made ranges: a unit record completes its whole unit, a found record has lo 0. */
static hf_err_t read_logs(hid_t file, const char *path, int version, shard_logs_t *L)
{
    hf_err_t err = HF_OK;
    int v1 = version == 1;
    hid_t mt[2] = {H5I_INVALID_HID, H5I_INVALID_HID}; /* of /units and of /found */
    void *buf;
    /* format 1's memory types leave lo and hi alone: they are set below */
    if ((mt[0] = v1 ? hf_h5_unit_type_v1(0) : hf_h5_unit_type(0)) < 0 ||
        (mt[1] = v1 ? hf_h5_found_type_v1(0) : hf_h5_found_type(0)) < 0) {
        err = hf_h5_fail(HF_ERR_INTERNAL, path, "building datatypes");
        goto done;
    }
    HF_CHECK(err, read_log(file, "units", mt[0], sizeof *L->units, path, &buf, &L->nu), done);
    L->units = buf;
    HF_CHECK(err, read_log(file, "found", mt[1], sizeof *L->found, path, &buf, &L->nf), done);
    L->found = buf;
    HF_CHECK(err, read_log(file, "text", H5T_NATIVE_UINT8, TEXT_BLOCK, path, &buf, &L->nt), done);
    L->text = buf;
    L->nt *= TEXT_BLOCK; /* bytes from here */
    if (version == 3)
        HF_CHECK(err, big_open(file, path, &L->big, &L->nbig), done);
    for (hsize_t i = 0; v1 && i < L->nu; i++) {
        L->units[i].lo = 0;
        L->units[i].hi = HF_CELLS_ALL;
    }
    for (hsize_t i = 0; v1 && i < L->nf; i++)
        L->found[i].lo = 0;
done:
    for (int i = 0; i < 2; i++)
        if (mt[i] >= 0)
            H5Tclose(mt[i]);
    return err;
}

/* The unit records checked, and their completed ranges sorted into L->keys. A kill can leave
 * a dataset's new length on disk before its data: such never-written records read as the
 * fill value (row -1) and can only be at the end of /units, where they are dropped. Anything
 * else out of range is damage. */
static hf_err_t index_units(const char *path, shard_logs_t *L)
{
    while (L->nu > 0 && L->units[L->nu - 1].row == -1 && L->units[L->nu - 1].m == -1)
        L->nu--;
    if (!(L->keys = hf_malloc((size_t)L->nu * sizeof *L->keys)))
        return HF_ERR_NOMEM;
    for (hsize_t i = 0; i < L->nu; i++) {
        const hf_unit_record_t *u = &L->units[i];
        if (u->row < 0 || u->m < 0 || u->unit < 0 || u->lo < 0 || u->hi <= u->lo || u->rank < 0 ||
            u->nodes < 0 || u->found < 0 || !(u->seconds >= 0))
            return hf_error(HF_ERR_CORRUPT, "%s: /units[%llu]: invalid record", path,
                            (unsigned long long)i);
        L->keys[i] = (unit_key_t){u->row, u->m, u->unit, u->lo};
    }
    qsort(L->keys, (size_t)L->nu, sizeof *L->keys, key_cmp);
    return HF_OK;
}

/* Whether found record f belongs to a completed range. */
static int found_kept(const shard_logs_t *L, const hf_found_mem_t *f)
{
    unit_key_t k = {f->row, f->m, f->unit, f->lo};
    return bsearch(&k, L->keys, (size_t)L->nu, sizeof *L->keys, key_cmp) != NULL;
}

/* Found records of completed ranges were flushed before the completion record was written,
 * so they must be intact: each within its text's bounds, and those in /text with their
 * checksum (those in /bigtext are checked when read). Those of ranges in flight may be only
 * partly written and are dropped unchecked. *keep: the records kept. */
static hf_err_t check_found(const char *path, const shard_logs_t *L, long *keep)
{
    *keep = 0;
    for (hsize_t i = 0; i < L->nf; i++) {
        const hf_found_mem_t *f = &L->found[i];
        if (!found_kept(L, f))
            continue;
        int bad;
        if (f->offset < 0 && f->length >= 0) { /* in /bigtext */
            hsize_t at = (hsize_t)(-1 - f->offset);
            bad = L->big < 0 || at % BIG_BLOCK != 0 || at > L->nbig ||
                  (hsize_t)f->length > L->nbig - at;
        } else {
            bad = f->offset < 0 || f->length < 0 || (hsize_t)f->offset > L->nt ||
                  (hsize_t)f->length > L->nt - (hsize_t)f->offset;
        }
        if (bad)
            return hf_error(HF_ERR_CORRUPT, "%s: /found[%llu]: invalid record", path,
                            (unsigned long long)i);
        if (f->offset >= 0 &&
            hf_store_checksum(L->text + f->offset, (size_t)f->length) != f->checksum)
            return hf_error(HF_ERR_CORRUPT, "%s: /found[%llu]: record text checksum mismatch", path,
                            (unsigned long long)i);
        (*keep)++;
    }
    return HF_OK;
}

/* The units and the keep found records of completed ranges (their texts read) into out. */
static hf_err_t take_found(const char *path, shard_logs_t *L, long keep, hf_shard_data_t *out)
{
    out->units = L->units;
    L->units = NULL;
    out->nunits = (long)L->nu;
    out->found_row = hf_malloc((size_t)keep * sizeof *out->found_row);
    out->found_m = hf_malloc((size_t)keep * sizeof *out->found_m);
    out->found_unit = hf_malloc((size_t)keep * sizeof *out->found_unit);
    out->found_lo = hf_malloc((size_t)keep * sizeof *out->found_lo);
    out->found_record = hf_calloc((size_t)keep, sizeof *out->found_record);
    if (!out->found_row || !out->found_m || !out->found_unit || !out->found_lo ||
        !out->found_record)
        return HF_ERR_NOMEM;
    for (hsize_t i = 0; i < L->nf; i++) {
        const hf_found_mem_t *f = &L->found[i];
        if (!found_kept(L, f))
            continue; /* its range was in flight when the shard was last written */
        long j = out->nfound;
        char *rec = NULL;
        if (f->offset < 0) {
            HF_TRY(big_read(L->big, f, path, (unsigned long long)i, &rec));
        } else {
            if (!(rec = hf_malloc((size_t)f->length + 1)))
                return HF_ERR_NOMEM;
            memcpy(rec, L->text + f->offset, (size_t)f->length);
            rec[f->length] = '\0';
        }
        out->found_record[j] = rec;
        out->found_row[j] = f->row;
        out->found_m[j] = f->m;
        out->found_unit[j] = f->unit;
        out->found_lo[j] = f->lo;
        out->nfound++;
    }
    return HF_OK;
}

/* Read one shard whole into out (cleared on error): check the format (3, 2, or 1: whole
 * units, read as ranges [0, HF_CELLS_ALL) and found records with lo 0) and the job
 * fingerprint (a shard of another search is HF_ERR_INPUT, naming what it holds), read
 * the /units, /found and /text logs, drop never-written records a kill left at the end
 * of /units, refuse any other invalid unit record, and keep the found records of
 * completed ranges only, each checked against the text's bounds and its checksum
 * (records of ranges in flight may be partial and are dropped unread). Runs inside the
 * read guard (hf_shard_read). out is uninitialised: initialised here, empty on error. */
static hf_err_t shard_read(const char *path, const char *fingerprint, hf_shard_data_t *out)
{
    hf_h5_quiet_t q;
    hf_err_t err = HF_OK;
    hid_t file = H5I_INVALID_HID;
    shard_logs_t L = {NULL, NULL, NULL, NULL, 0, 0, 0, 0, H5I_INVALID_HID};
    int version = 0;
    long keep = 0;
    hf_shard_data_init(out);
    hf_h5_quiet_begin(&q);
    HF_CHECK(err, hf_h5_open_read(path, "shard", 1, &file), done);
    HF_CHECK(err, check_header(file, path, fingerprint, &version), done);
    HF_CHECK(err, read_logs(file, path, version, &L), done);
    HF_CHECK(err, index_units(path, &L), done);
    HF_CHECK(err, check_found(path, &L, &keep), done);
    err = take_found(path, &L, keep, out);
done:
    logs_clear(&L);
    if (file >= 0)
        H5Fclose(file);
    if (err != HF_OK)
        hf_shard_data_clear(out);
    hf_h5_quiet_end(&q);
    return err;
}

static hf_err_t probe_shard(const char *path, const void *fingerprint)
{
    hf_shard_data_t d;
    hf_err_t err = shard_read(path, fingerprint, &d);
    hf_shard_data_clear(&d);
    return err;
}

hf_err_t hf_shards_guard(char *const *paths, long n, const char *fingerprint, int *read_ok)
{
    return hf_h5_read_guard_all((const char *const *)paths, n, "shard", probe_shard, fingerprint,
                                read_ok);
}

hf_err_t hf_shard_read_after_guard(const char *path, const char *fingerprint, hf_shard_data_t *out)
{
    hf_shard_data_t d; /* read aside: out keeps its value on failure */
    hf_err_t err = shard_read(path, fingerprint, &d);
    if (err == HF_OK) {
        hf_shard_data_clear(out);
        *out = d;
    }
    return err;
}

hf_err_t hf_shard_read(const char *path, const char *fingerprint, hf_shard_data_t *out)
{
    hf_err_t err = hf_h5_read_guard(path, "shard", probe_shard, fingerprint, NULL);
    return err != HF_OK ? err : hf_shard_read_after_guard(path, fingerprint, out);
}
