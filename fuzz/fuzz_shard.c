/* Fuzz the shard reader hf_shard_read (src/store/shard.c; format in
 * docs/hdf5-format.md, "Shard files"). The first input byte chooses a mode:
 *
 *   0  RAW         the rest of the input is the file;
 *   1  CLOSED      a real shard (hf_shard_create, add_found, finish_unit, destroy) with
 *                  the input's byte patches (fuzz_h5.h: fuzz_write_patched);
 *   2  KILLED      the same shard copied while still open for writing, as a killed
 *                  writer leaves it, patched;
 *   3  PLAIN       4 units and 3 found records as shard format 1 (whole units) in the
 *                  oldest HDF5 format, contiguous, without checksums, so that patches
 *                  reach dims and values directly;
 *   4  BUILT       a file built with HDF5 calls whose attributes, datatypes, layouts,
 *                  shapes and records all come from the input (build_shard).
 *
 * For modes 1-3, byte 0 / 5 odd means the first patch truncates the file instead.
 * The reader must succeed with sane data or fail with a message naming the file;
 * never crash, leak memory or leave an HDF5 object open. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/store.h"
#include "store/store_impl.h"
#include "fuzz_h5.h"

#define FP "fuzz-fp"
#define TEXT_WIDTH 256

/* The records of shard format 1 (whole units) ... */
static const field_t unit_fields[] = {{"row", F_I32},    {"rank", F_I32},  {"m", F_I64},
                                      {"unit", F_I64},   {"nodes", F_I64}, {"found", F_I64},
                                      {"seconds", F_F64}};
static const field_t found_fields[] = {{"row", F_I32},    {"m", F_I64},      {"unit", F_I64},
                                       {"offset", F_I64}, {"length", F_I64}, {"checksum", F_U32}};
/* ... and of format 2 (ranges of cells: lo, hi) */
static const field_t unit_fields2[] = {{"row", F_I32},   {"rank", F_I32},  {"m", F_I64},
                                       {"unit", F_I64},  {"lo", F_I64},    {"hi", F_I64},
                                       {"nodes", F_I64}, {"found", F_I64}, {"seconds", F_F64}};
static const field_t found_fields2[] = {{"row", F_I32},     {"m", F_I64},      {"unit", F_I64},
                                        {"lo", F_I64},      {"offset", F_I64}, {"length", F_I64},
                                        {"checksum", F_U32}};
#define NF(a) (int)(sizeof(a) / sizeof *(a))

/* ---- the BUILT mode ---- */

#define ROWS_MAX 8

/* Build a shard at path from the input; 0 on success, -1 if HDF5 refused something
 * (nothing to read then). Input layout, each a byte unless said otherwise:
 *   a: attribute flags  bit0 no format, bit1 wrong format, bit2 other fingerprint,
 *      bit3 no fingerprint, bit4 fixed-length strings, bit5 integer fingerprint,
 *      bits 6-7 dataset layout
 *   b: dataset flags    bits 0-2 no units/found/text, bit3 units datatype variant,
 *      bit4 found datatype variant, bit5 text width from the input, bit6 text of
 *      int16, bit7 one dataset declared longer than written
 *   c: file flags       bit0 latest format, bit1 copy taken while open for SWMR writing,
 *      bit2 format attribute "headfuse-shard-2" (when bit1 of a is clear), bit3 the
 *      datasets of the other shard format than the attribute says
 *   counts: units, found, text rows (modulo 9, 9, 4); text letter seed
 *   [variants, extents as the flags ask]
 *   units: 7 small values each (format-2 datasets: 9, with lo and hi after unit); found:
 *   row, m, unit, [lo,] offset (16 bits), length (16 bits), checksum (< 128: the right
 *   one when offset and length are in range) */
static int build_shard(const char *path, fuzz_in_t *in)
{
    int rc = -1;
    uint8_t a = in_byte(in), b = in_byte(in), c = in_byte(in);
    int layout = (a >> 6) % LAYOUT_N, latest = (c & 3) != 0, swmr = c & 2;
    int attr2 = (c & 4) != 0, cells = attr2 ^ ((c & 8) != 0); /* cells: format-2 datasets */
    const field_t *uf = cells ? unit_fields2 : unit_fields,
                  *ff = cells ? found_fields2 : found_fields;
    int nuf = cells ? NF(unit_fields2) : NF(unit_fields),
        nff = cells ? NF(found_fields2) : NF(found_fields);
    if (swmr && layout != LAYOUT_CHUNK1_FLETCHER && layout != LAYOUT_CHUNK4)
        layout = LAYOUT_CHUNK1_FLETCHER; /* SWMR appends need chunked datasets */
    hsize_t nu = in_byte(in) % 9, nf = in_byte(in) % 9, nt = in_byte(in) % 4;
    uint8_t letter = in_byte(in);
    hsize_t width = TEXT_WIDTH;
    int uvar = V_RIGHT, uwhich = 0, fvar = V_RIGHT, fwhich = 0;
    if (b & 8) {
        uvar = in_byte(in) % V_N;
        uwhich = in_byte(in) % nuf;
    }
    if (b & 16) {
        fvar = in_byte(in) % V_N;
        fwhich = in_byte(in) % nff;
    }
    if (b & 32)
        width = in_byte(in);
    hsize_t extra[3] = {0, 0, 0};
    if (b & 128) {
        int which = in_byte(in) % 3, e = in_byte(in) % 42;
        extra[which] = ((hsize_t)1 << e) - 1;
    }

    hf_unit_record_t units[ROWS_MAX];
    hf_found_mem_t found[ROWS_MAX];
    static uint8_t text[4 * 256];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (uint8_t)('a' + (i * 7 + letter) % 26);
    size_t ntext = (size_t)(nt * width); /* bytes */
    for (hsize_t i = 0; i < nu; i++) {
        hf_unit_record_t *u = &units[i];
        u->row = in_small32(in);
        u->rank = in_small32(in);
        u->m = in_small64(in);
        u->unit = in_small64(in);
        u->lo = cells ? in_small64(in) : 0;
        u->hi = cells ? in_small64(in) : 0;
        u->nodes = in_small64(in);
        u->found = in_small64(in);
        u->seconds = in_double(in);
    }
    for (hsize_t i = 0; i < nf; i++) {
        hf_found_mem_t *f = &found[i];
        f->row = in_small32(in);
        f->m = in_small64(in);
        f->unit = in_small64(in);
        f->lo = cells ? in_small64(in) : 0;
        f->offset = (int16_t)in_u16(in);
        f->length = (int16_t)in_u16(in);
        uint8_t sum = in_byte(in);
        if (sum < 128 && f->offset >= 0 && f->length >= 0 &&
            (size_t)(f->offset + f->length) <= ntext)
            f->checksum = hf_store_checksum((const char *)text + f->offset, (size_t)f->length);
        else
            f->checksum = sum;
    }

    hid_t file = fuzz_h5_create(path, latest), ut = H5I_INVALID_HID, ft = H5I_INVALID_HID;
    hid_t umt = hf_h5_unit_type(0), fmt = hf_h5_found_type(0);
    if (file < 0 || umt < 0 || fmt < 0)
        goto done;
    int fixed = a & 16;
    const char *format = a & 2   ? "headfuse-shard-0"
                         : attr2 ? "headfuse-shard-2"
                                 : "headfuse-shard-1";
    if (!(a & 1) && fuzz_h5_attr_str(file, "format", format, fixed) < 0)
        goto done;
    if (a & 32) {
        int64_t v = 7;
        if (fuzz_h5_attr(file, "fingerprint", H5T_STD_I64LE, H5T_NATIVE_INT64, &v) < 0)
            goto done;
    } else if (!(a & 8) &&
               fuzz_h5_attr_str(file, "fingerprint", a & 4 ? "another-job" : FP, fixed) < 0) {
        goto done;
    }
    ut = fuzz_h5_compound(uf, nuf, uvar, uwhich);
    ft = fuzz_h5_compound(ff, nff, fvar, fwhich);
    if (ut < 0 || ft < 0)
        goto done;
    /* a scalar variant gets plain int64 values: the rows' first field */
    int64_t uscalar[ROWS_MAX], fscalar[ROWS_MAX];
    for (hsize_t i = 0; i < nu; i++)
        uscalar[i] = units[i].row;
    for (hsize_t i = 0; i < nf; i++)
        fscalar[i] = found[i].row;
    if (!(b & 1) && fuzz_h5_dataset(file, "units", ut, uvar == V_SCALAR ? H5T_NATIVE_INT64 : umt,
                                    layout, nu + extra[0], nu, 0,
                                    uvar == V_SCALAR ? (void *)uscalar : (void *)units) < 0)
        goto done;
    if (!(b & 2) && fuzz_h5_dataset(file, "found", ft, fvar == V_SCALAR ? H5T_NATIVE_INT64 : fmt,
                                    layout, nf + extra[1], nf, 0,
                                    fvar == V_SCALAR ? (void *)fscalar : (void *)found) < 0)
        goto done;
    if (!(b & 4)) {
        hid_t tt = b & 64 ? H5T_STD_I16LE : H5T_STD_U8LE;
        /* width 0: a 1-D dataset of nt bytes (the wrong rank) */
        if (fuzz_h5_dataset(file, "text", tt, H5T_NATIVE_UINT8, layout, nt + extra[2], nt, width,
                            text) < 0)
            goto done;
    }
    if (swmr) {
        /* the file as a live or killed SWMR writer leaves it: marked open for writing */
        size_t n;
        if (H5Fstart_swmr_write(file) < 0 || H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
            goto done;
        uint8_t *copy = fuzz_read_file(path, &n);
        H5Fclose(file);
        file = H5I_INVALID_HID;
        fuzz_write_file(path, copy, n);
        free(copy);
    }
    rc = 0;
done:
    if (ft >= 0)
        H5Tclose(ft);
    if (ut >= 0)
        H5Tclose(ut);
    if (fmt >= 0)
        H5Tclose(fmt);
    if (umt >= 0)
        H5Tclose(umt);
    if (file >= 0 && H5Fclose(file) < 0)
        rc = -1;
    return rc;
}

/* ---- seeds ---- */

static uint8_t *seed_closed, *seed_killed, *seed_plain;
static size_t seed_closed_n, seed_killed_n, seed_plain_n;

/* Found records of unit u: u % 3 of them, the second one longer than a text block. Unit 2
 * is finished as the range of cells [2, 7), the others whole. */
static void seed_record(char *buf, size_t n, long u, long j)
{
    int pad = j == 1 ? 300 : 0;
    snprintf(buf, n, "{\"unit\": %ld, \"j\": %ld, \"keys\": [[0,1],[1,0]], \"pad\": \"%*s\"}", u, j,
             pad, "");
}

/* The real shard (closed, and copied while open; format 2) and the PLAIN shard. */
static void make_seeds(void)
{
    char path[128], rec[512];
    fuzz_path(path, sizeof path, "seed.h5");
    unlink(path);
    hf_shard_t *sh;
    if (hf_shard_create(path, FP, NULL, &sh) != HF_OK)
        FUZZ_BUG("seed: %s", hf_error_msg());
    for (long u = 0; u < 4; u++) {
        int64_t lo = u == 2 ? 2 : 0, hi = u == 2 ? 7 : HF_CELLS_ALL;
        for (long j = 0; j < u % 3; j++) {
            seed_record(rec, sizeof rec, u, j);
            if (hf_shard_add_found(sh, (int32_t)(u / 2), 4, u, lo, rec) != HF_OK)
                FUZZ_BUG("seed: %s", hf_error_msg());
        }
        hf_unit_record_t ur = {.row = (int32_t)(u / 2),
                               .rank = 1,
                               .m = 4,
                               .unit = u,
                               .lo = lo,
                               .hi = hi,
                               .nodes = 10 * u + 1,
                               .found = u % 3,
                               .seconds = 0.25 * (double)u};
        if (hf_shard_finish_unit(sh, &ur) != HF_OK)
            FUZZ_BUG("seed: %s", hf_error_msg());
    }
    /* a unit in flight: its records are in the file, its completion record is not */
    if (hf_shard_add_found(sh, 1, 4, 4, 0, "{\"in flight\": 1}") != HF_OK ||
        hf_shard_debug_write_found(sh) != HF_OK)
        FUZZ_BUG("seed: %s", hf_error_msg());
    seed_killed = fuzz_read_file(path, &seed_killed_n);
    if (hf_shard_destroy(&sh) != HF_OK)
        FUZZ_BUG("seed: %s", hf_error_msg());
    seed_closed = fuzz_read_file(path, &seed_closed_n);
    unlink(path);

    /* PLAIN: 4 units, found records with right checksums (a BUILT input that asks for
     * the oldest format, contiguous datasets, no checksums, and fixed-length attributes
     * as headfuse writes them: variable-length ones would put a global heap in the file,
     * whose damage crashes HDF5 - tests/fuzz/shard/upstream/) */
    uint8_t spec[] = {16 /* fixed-length attributes, contiguous */, 0, 0, 4, 3, 3, 0,
                      /* units */ 0, 1, 4, 0, 1, 0, 0, 0, 1, 4, 1, 11, 1, 1, 1, 1, 4, 2, 21, 2, 2,
                      1, 1, 4, 3, 31, 0, 3,
                      /* found: row, m, unit, offset, length, checksum */
                      0, 4, 1, 0, 0, 20, 0, 0, 1, 4, 2, 0, 1, 44, 1, 0, 1, 4, 2, 88, 2, 9, 0, 0};
    fuzz_in_t in = {spec, sizeof spec};
    if (build_shard(path, &in) != 0)
        FUZZ_BUG("seed: cannot build the PLAIN shard");
    seed_plain = fuzz_read_file(path, &seed_plain_n);
    unlink(path);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    if (hf_shard_read(path, FP, &d) == HF_OK || !seed_plain_n)
        FUZZ_BUG("seed: a removed file was read");
    /* all three seeds are valid shards */
    const uint8_t *seeds[3] = {seed_closed, seed_killed, seed_plain};
    size_t sizes[3] = {seed_closed_n, seed_killed_n, seed_plain_n};
    long want[3][2] = {{4, 3}, {4, 3}, {4, 3}};
    for (int i = 0; i < 3; i++) {
        fuzz_write_file(path, seeds[i], sizes[i]);
        if (hf_shard_read(path, FP, &d) != HF_OK)
            FUZZ_BUG("seed %d does not read: %s", i, hf_error_msg());
        if (d.nunits != want[i][0] || d.nfound != want[i][1])
            FUZZ_BUG("seed %d: %ld units, %ld found", i, d.nunits, d.nfound);
        hf_shard_data_clear(&d);
    }
    unlink(path);
    fuzz_h5_check_closed("making the seeds");
}

/* ---- checks of what the reader returns ---- */

static int range_known(const hf_shard_data_t *d, int32_t row, int64_t m, int64_t unit, int64_t lo)
{
    for (long i = 0; i < d->nunits; i++)
        if (d->units[i].row == row && d->units[i].m == m && d->units[i].unit == unit &&
            d->units[i].lo == lo)
            return 1;
    return 0;
}

static void check_data(const hf_shard_data_t *d)
{
    if (d->nunits < 0 || d->nfound < 0 || (d->nunits && !d->units))
        FUZZ_BUG("read %ld units, %ld found", d->nunits, d->nfound);
    for (long i = 0; i < d->nunits; i++) {
        const hf_unit_record_t *u = &d->units[i];
        if (u->row < 0 || u->rank < 0 || u->m < 0 || u->unit < 0 || u->lo < 0 || u->hi <= u->lo ||
            u->nodes < 0 || u->found < 0 || !(u->seconds >= 0))
            FUZZ_BUG("an invalid unit record was accepted (units[%ld])", i);
    }
    for (long i = 0; i < d->nfound; i++) {
        if (!d->found_record[i])
            FUZZ_BUG("found record %ld is NULL", i);
        (void)strlen(d->found_record[i]); /* terminated (ASan checks the read) */
        if (!range_known(d, d->found_row[i], d->found_m[i], d->found_unit[i], d->found_lo[i]))
            FUZZ_BUG("found record %ld belongs to no completed range", i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[128];
    if (!path[0]) {
        fuzz_h5_init();
        fuzz_path(path, sizeof path, "shard.h5");
        make_seeds();
    }
    if (size < 1)
        return 0;
    fuzz_in_t in = {data + 1, size - 1};
    int mode = data[0] % 5, truncate = (data[0] / 5) & 1;
    switch (mode) {
    case 0:
        fuzz_write_file(path, data + 1, size - 1);
        break;
    case 1:
        fuzz_write_patched(path, seed_closed, seed_closed_n, &in, truncate);
        break;
    case 2:
        fuzz_write_patched(path, seed_killed, seed_killed_n, &in, truncate);
        break;
    case 3:
        fuzz_write_patched(path, seed_plain, seed_plain_n, &in, truncate);
        break;
    default:
        unlink(path);
        if (build_shard(path, &in) != 0) {
            fuzz_h5_check_closed("building a shard");
            return 0;
        }
        break;
    }
    fuzz_h5_check_closed("building a shard");
    fuzz_h5_save(path);
    hf_shard_data_t d;
    hf_shard_data_init(&d);
    hf_err_t err = hf_shard_read(path, FP, &d);
    if (err == HF_OK) {
        check_data(&d);
        hf_shard_data_clear(&d);
    } else {
        if (d.nunits || d.units || d.nfound || d.found_record)
            FUZZ_BUG("failed read returned data");
        if (err != HF_ERR_CORRUPT && err != HF_ERR_INPUT)
            FUZZ_BUG("unexpected error %s: %s", hf_err_str(err), hf_error_msg());
        if (!strstr(hf_error_msg(), path))
            FUZZ_BUG("message does not name the file: %s", hf_error_msg());
    }
    fuzz_h5_check_closed("hf_shard_read");
    hf_error_clear();
    return 0;
}
