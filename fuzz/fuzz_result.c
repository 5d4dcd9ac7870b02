/* Fuzz the RESULT.h5 reader hf_result_read (src/store/result.c; format in
 * docs/hdf5-format.md). The first input byte chooses a mode:
 *
 *   0  RAW      the rest of the input is the file;
 *   1  PATCHED  a real result (hf_result_write: oldest format, no metadata checksums)
 *               with the input's byte patches (byte 0 / 3 odd: the first one cuts it);
 *   2  BUILT    a file built with HDF5 calls whose attributes, datatypes, shapes,
 *               layouts and values all come from the input (build_result): strings
 *               fixed-length (as written now) or variable-length (files written
 *               before 2026-11, which the reader still accepts), as the input says.
 *
 * The reader must succeed with a result that passes its own documented checks, or
 * fail with a message naming the file; never crash, leak memory or leave an HDF5
 * object open. What a successful read returns is then used as `headfuse verify` and
 * `table` use it: target JSON parsed, rationals parsed. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "headfuse/store.h"
#include "headfuse/target.h"
#include "store/store_impl.h"
#include "fuzz_h5.h"

#define NROWS_MAX 3
#define DIM_MAX 4 /* written extent of each dimension of a row's datasets */

static const char *const decimals[] = {
    "0", "7", "-1", "", "12", "x", "-2", "1 ", "99999999999999999999999999999999999999999999999"};
static const char *const statuses[] = {"certified", "exhaustive", "open", "", "bogus", "Open"};
static const char *const names[] = {"t", "", "wd:d=3", "chain:d=2"};
static const char *const rationals[] = {"1",
                                        "1/2",
                                        "-3",
                                        "0",
                                        "",
                                        "1/0",
                                        "x",
                                        "2/4",
                                        "-1/3",
                                        " 1",
                                        "123456789012345678901234567890/7",
                                        "--1",
                                        "1/",
                                        "0/5"};
static const char *const jsons[] = {
    ("{\"name\": \"t\", \"d\": 1, \"heads\": [{\"atoms\": [{\"key\": [0], \"weight\": \"1\", "
     "\"value\": \"1\"}]}]}"),
    "", "{", "[]", "{\"d\": 65}"};
#define PICK(list, in) list[in_byte(in) % (sizeof list / sizeof *list)]

/* Field lists of /table and /units in their right file types. */
static const field_t row_fields[] = {{"name", F_STR + HF_NAME_LEN},
                                     {"d", F_I32},
                                     {"span", F_I32},
                                     {"m_star", F_I64},
                                     {"lb", F_STR + HF_BIGINT_LEN},
                                     {"ub", F_STR + HF_BIGINT_LEN},
                                     {"status", F_STR + HF_STATUS_LEN},
                                     {"n_min_raw", F_I64},
                                     {"n_min_sym", F_I64},
                                     {"group_order", F_I64},
                                     {"nodes", F_I64},
                                     {"units", F_I64},
                                     {"seconds", F_F64}};
static const field_t unit_fields[] = {{"row", F_I32},    {"rank", F_I32},  {"m", F_I64},
                                      {"unit", F_I64},   {"nodes", F_I64}, {"found", F_I64},
                                      {"seconds", F_F64}};
#define NF(a) (int)(sizeof(a) / sizeof *(a))

/* One attribute of a row group as the input asks: right (int64), missing, a string,
 * or an unsigned 64-bit integer. */
static int row_attr(hid_t g, const char *name, int64_t v, int how)
{
    if (how == 1)
        return 0;
    if (how == 2)
        return fuzz_h5_attr_str(g, name, "3", 0);
    if (how == 3) {
        uint64_t u = (uint64_t)v;
        return fuzz_h5_attr(g, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &u);
    }
    return fuzz_h5_attr(g, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

/* Pack count strings as fixed-length strings of `size` bytes each, padded as `pad`
 * says: a string of size bytes or more fills its slot without a NUL (or space). */
static void pack_fixed(char *dst, size_t size, const char *const *src, size_t count, H5T_str_t pad)
{
    for (size_t i = 0; i < count; i++) {
        char *p = dst + i * size;
        size_t len = strlen(src[i]) < size ? strlen(src[i]) : size;
        memset(p, pad == H5T_STR_SPACEPAD ? ' ' : '\0', size);
        memcpy(p, src[i], len);
    }
}

/* The fixed-length string type of a row's weights or values: variant 0 as the writer
 * makes it (longest + 1, NUL-terminated), 1 NUL-padded with the longest filling its
 * size, 2 space-padded, 3 8 bytes (cuts longer strings). With `huge` (datasets declared
 * far beyond their data) sizes of 1 MiB to 1 GiB, around the reader's 16 MiB limit. */
static hid_t fixed_type(const char *const *strs, size_t count, int variant, int huge, size_t *size)
{
    static const H5T_str_t pads[4] = {H5T_STR_NULLTERM, H5T_STR_NULLPAD, H5T_STR_SPACEPAD,
                                      H5T_STR_NULLTERM};
    static const size_t huge_sizes[4] = {(size_t)1 << 20, (size_t)1 << 24, ((size_t)1 << 24) + 1,
                                         (size_t)1 << 30};
    size_t longest = 0;
    for (size_t i = 0; i < count; i++)
        if (strlen(strs[i]) > longest)
            longest = strlen(strs[i]);
    size_t sizes[4] = {longest + 1, longest ? longest : 1, longest + 3, 8};
    *size = huge ? huge_sizes[variant] : sizes[variant];
    hid_t t = hf_h5_fixed_str_type(*size);
    if (t >= 0 && H5Tset_strpad(t, pads[variant]) < 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

/* A small count, or with `huge` a power of two up to 2^40 (to meet the size limits). */
static int64_t in_count(fuzz_in_t *in, int huge)
{
    uint8_t b = in_byte(in);
    return huge ? (int64_t)1 << (b % 41) : (int64_t)(int8_t)b;
}

/* /rows/<i> from the input. Flags byte g: bits 0-1 target_json (variable-length,
 * missing, integer, fixed-length), bits 2-3 how m, d, dv, n are stored (row_attr), bit4
 * keys of another integer type, bit5 weights as fixed-length strings, bit6 dataset
 * dims from the input instead of from the attributes, bit7 huge n and m (chunked
 * datasets declared that large, nothing written). Byte `which`: bits 0-1 the attribute
 * `how` applies to, bit4 the other key type, bit5 values as fixed-length strings,
 * bits 6-7 the fixed-length variant (fixed_type). */
static int build_row(hid_t rows, long i, int layout, fuzz_in_t *in)
{
    char name[24];
    snprintf(name, sizeof name, "%ld", i);
    uint8_t g = in_byte(in);
    int huge = g & 128, how = (g >> 2) & 3, rc = -1;
    int64_t m = in_count(in, huge), d = in_small64(in), dv = in_small64(in), n = in_count(in, huge);
    uint8_t which = in_byte(in);
    hid_t grp = H5Gcreate2(rows, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t vstr = hf_h5_vstr_type(), kt = H5I_INVALID_HID, wt = H5I_INVALID_HID;
    hid_t vt = H5I_INVALID_HID;
    if (grp < 0 || vstr < 0)
        goto done;
    const char *json = PICK(jsons, in);
    int64_t jint = 5;
    if ((g & 3) == 0 && fuzz_h5_attr_str(grp, "target_json", json, 0) < 0)
        goto done;
    if ((g & 3) == 2 &&
        fuzz_h5_attr(grp, "target_json", H5T_STD_I64LE, H5T_NATIVE_INT64, &jint) < 0)
        goto done;
    if ((g & 3) == 3 && fuzz_h5_attr_str(grp, "target_json", json, 1) < 0)
        goto done;
    /* `how` applies to one attribute of the four, the others are right */
    const char *attr_names[4] = {"m", "d", "dv", "n"};
    int64_t attr_vals[4] = {m, d, dv, n};
    for (int a = 0; a < 4; a++)
        if (row_attr(grp, attr_names[a], attr_vals[a], a == which % 4 ? how : 0) < 0)
            goto done;

    /* the dims the reader expects, or dims from the input */
    hsize_t mm = m > 0 ? (hsize_t)m : 0;
    hsize_t kd[3] = {(hsize_t)n, mm, (hsize_t)d}, vd[3] = {(hsize_t)n, mm, (hsize_t)dv};
    if (g & 64)
        for (int k = 0; k < 3; k++) {
            kd[k] = in_byte(in) % 5;
            vd[k] = in_byte(in) % 5;
        }
    for (int k = 0; k < 3; k++)
        if ((int64_t)kd[k] < 0 || (int64_t)vd[k] < 0 || kd[k] > ((hsize_t)1 << 41) ||
            vd[k] > ((hsize_t)1 << 41))
            goto done; /* HDF5 takes no such dims: nothing to read */
    hsize_t kw[3], vw[3];
    for (int k = 0; k < 3; k++) {
        kw[k] = huge ? 0 : kd[k] < DIM_MAX ? kd[k] : DIM_MAX;
        vw[k] = huge ? 0 : vd[k] < DIM_MAX ? vd[k] : DIM_MAX;
    }
    int lay = huge ? LAYOUT_CHUNK4 : layout;
    int64_t keys[DIM_MAX * DIM_MAX * DIM_MAX];
    const char *w[DIM_MAX * DIM_MAX], *v[DIM_MAX * DIM_MAX * DIM_MAX];
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        keys[k] = k < 8 ? in_small64(in) : (int64_t)(k % 3);
    for (size_t k = 0; k < sizeof w / sizeof *w; k++)
        w[k] = k < 4 ? PICK(rationals, in) : "1";
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        v[k] = k < 4 ? PICK(rationals, in) : "-1/2";
    kt = H5Tcopy(g & 16 ? (which & 16 ? H5T_STD_U64LE : H5T_STD_I8LE) : H5T_STD_I64LE);
    /* fixed-length strings: packed blocks of `size`-byte strings (the longest picked
     * here is 32 bytes, so 40 bytes a slot suffice unless huge: then nothing is
     * written) */
    int wfix = (g & 32) != 0, vfix = (which & 32) != 0, variant = which >> 6;
    size_t wsize = 0, vsize = 0;
    static char wfixed[DIM_MAX * DIM_MAX * 40], vfixed[DIM_MAX * DIM_MAX * DIM_MAX * 40];
    wt = wfix ? fixed_type(w, sizeof w / sizeof *w, variant, huge, &wsize) : H5Tcopy(vstr);
    vt = vfix ? fixed_type(v, sizeof v / sizeof *v, variant, huge, &vsize) : H5Tcopy(vstr);
    if (kt < 0 || wt < 0 || vt < 0 || (!huge && (wsize > 40 || vsize > 40)))
        goto done;
    if (wfix && !huge)
        pack_fixed(wfixed, wsize, w, sizeof w / sizeof *w, H5Tget_strpad(wt));
    if (vfix && !huge)
        pack_fixed(vfixed, vsize, v, sizeof v / sizeof *v, H5Tget_strpad(vt));
    if (fuzz_h5_dataset_nd(grp, "keys", kt, H5T_NATIVE_INT64, lay, 3, kd, kw, keys) < 0 ||
        fuzz_h5_dataset_nd(grp, "weights", wt, wt, lay, 2, kd, kw,
                           wfix ? (const void *)wfixed : (const void *)w) < 0 ||
        fuzz_h5_dataset_nd(grp, "values", vt, vt, lay, 3, vd, vw,
                           vfix ? (const void *)vfixed : (const void *)v) < 0)
        goto done;
    rc = 0;
done:
    if (vt >= 0)
        H5Tclose(vt);
    if (wt >= 0)
        H5Tclose(wt);
    if (kt >= 0)
        H5Tclose(kt);
    if (vstr >= 0)
        H5Tclose(vstr);
    if (grp >= 0)
        H5Gclose(grp);
    return rc;
}

/* Build a result file at path from the input; 0, or -1 if HDF5 refused something.
 *   a: root flags  bit0 no format, bit1 wrong format, bit2 one provenance attribute
 *      missing, bit3 ranks from the input, bit4 fixed-length strings, bit5 no /table,
 *      bit6 no /rows, bit7 no /units
 *   b: flags       bit0 /table datatype variant, bit1 /units datatype variant, bit2 an
 *      extra group in /rows, bit3 a group missing, bits 4-5 layout, bit7 latest format
 *   counts: table rows (modulo 4), units (modulo 4); [variants as the flags ask]
 *   table rows: name, d, span, m_star, lb, ub, status, n_min_raw, n_min_sym,
 *   group_order, nodes, units, seconds; units: 7 small values each; then per row
 *   its group (build_row). */
static int build_result(const char *path, fuzz_in_t *in)
{
    int rc = -1;
    uint8_t a = in_byte(in), b = in_byte(in);
    int layout = (b >> 4) & 3, fixed = a & 16;
    long nrows = in_byte(in) % (NROWS_MAX + 1), nunits = in_byte(in) % 4;
    int tvar = V_RIGHT, twhich = 0, uvar = V_RIGHT, uwhich = 0;
    uint8_t missing_attr = in_byte(in);
    int64_t ranks = a & 8 ? in_small64(in) : 2;
    if (b & 1) {
        tvar = in_byte(in) % V_N;
        twhich = in_byte(in) % NF(row_fields);
    }
    if (b & 2) {
        uvar = in_byte(in) % V_N;
        uwhich = in_byte(in) % NF(unit_fields);
    }
    hf_row_t rows[NROWS_MAX];
    hf_unit_record_t units[4];
    memset(rows, 0, sizeof rows);
    for (long i = 0; i < nrows; i++) {
        hf_row_t *w = &rows[i];
        snprintf(w->name, sizeof w->name, "%s", PICK(names, in));
        w->d = in_small32(in);
        w->span = in_small32(in);
        w->m_star = in_small64(in);
        snprintf(w->lb, sizeof w->lb, "%s", PICK(decimals, in));
        snprintf(w->ub, sizeof w->ub, "%s", PICK(decimals, in));
        snprintf(w->status, sizeof w->status, "%s", PICK(statuses, in));
        w->n_min_raw = in_small64(in);
        w->n_min_sym = in_small64(in);
        w->group_order = in_small64(in);
        w->nodes = in_small64(in);
        w->units = in_small64(in);
        w->seconds = in_double(in);
    }
    for (long i = 0; i < nunits; i++)
        units[i] = (hf_unit_record_t){.row = in_small32(in),
                                      .rank = in_small32(in),
                                      .m = in_small64(in),
                                      .unit = in_small64(in),
                                      .nodes = in_small64(in),
                                      .found = in_small64(in),
                                      .seconds = in_double(in)};

    hid_t file = fuzz_h5_create(path, b & 128), tt = H5I_INVALID_HID, ut = H5I_INVALID_HID;
    hid_t rowm = hf_h5_row_type(0), unitm = hf_h5_unit_type(0), grp = H5I_INVALID_HID;
    if (file < 0 || rowm < 0 || unitm < 0)
        goto done;
    if (!(a & 1) && fuzz_h5_attr_str(file, "format",
                                     a & 2 ? "headfuse-shard-1" : "headfuse-result-1", fixed) < 0)
        goto done;
    static const char *const prov[] = {"version", "git_commit", "command_line",
                                       "host",    "start_time", "end_time"};
    for (int k = 0; k < 6; k++)
        if (!((a & 4) && missing_attr % 6 == k) && fuzz_h5_attr_str(file, prov[k], "x", fixed) < 0)
            goto done;
    if (fuzz_h5_attr(file, "ranks", H5T_STD_I64LE, H5T_NATIVE_INT64, &ranks) < 0)
        goto done;
    tt = fuzz_h5_compound(row_fields, NF(row_fields), tvar, twhich);
    ut = fuzz_h5_compound(unit_fields, NF(unit_fields), uvar, uwhich);
    if (tt < 0 || ut < 0)
        goto done;
    int64_t scalars[NROWS_MAX + 4];
    for (long i = 0; i < NROWS_MAX + 4; i++)
        scalars[i] = i;
    if (!(a & 32) &&
        fuzz_h5_dataset(file, "table", tt, tvar == V_SCALAR ? H5T_NATIVE_INT64 : rowm, layout,
                        (hsize_t)nrows, (hsize_t)nrows, 0,
                        tvar == V_SCALAR ? (const void *)scalars : (const void *)rows) < 0)
        goto done;
    if (!(a & 128) &&
        fuzz_h5_dataset(file, "units", ut, uvar == V_SCALAR ? H5T_NATIVE_INT64 : unitm, layout,
                        (hsize_t)nunits, (hsize_t)nunits, 0,
                        uvar == V_SCALAR ? (const void *)scalars : (const void *)units) < 0)
        goto done;
    if (!(a & 64)) {
        if ((grp = H5Gcreate2(file, "rows", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            goto done;
        long skip = b & 8 ? in_byte(in) % (nrows + 1) : -1;
        for (long i = 0; i < nrows + ((b & 4) != 0); i++)
            if (i != skip && build_row(grp, i, layout, in) < 0)
                goto done;
    }
    rc = 0;
done:
    if (grp >= 0)
        H5Gclose(grp);
    if (ut >= 0)
        H5Tclose(ut);
    if (tt >= 0)
        H5Tclose(tt);
    if (unitm >= 0)
        H5Tclose(unitm);
    if (rowm >= 0)
        H5Tclose(rowm);
    if (file >= 0 && H5Fclose(file) < 0)
        rc = -1;
    return rc;
}

/* ---- the seed: a real result ---- */

static uint8_t *seed;
static size_t seed_n;

static void make_seed(void)
{
    char path[128];
    hf_result_t r;
    hf_result_init(&r);
    hf_row_t w0 = {.name = "wd:d=2",
                   .d = 2,
                   .span = 1,
                   .m_star = 2,
                   .lb = "2",
                   .ub = "4",
                   .status = "exhaustive",
                   .n_min_raw = 2,
                   .n_min_sym = 1,
                   .group_order = 2,
                   .nodes = 10,
                   .units = 2,
                   .seconds = 0.5,
                   .max_atoms = 0,
                   .engine = "layered"};
    hf_supports_t s;
    hf_supports_init(&s, 2, 2, 1);
    int64_t k0[4] = {0, 0, 1, 0}, k1[4] = {0, 0, 0, 1};
    fmpz wt[2] = {2, 1}, v[2] = {0, -3}; /* weights 2, 1 and values 0, -3/4: (c, u) */
    if (hf_supports_push_ints(&s, k0, wt, v) != HF_OK ||
        hf_supports_push_ints(&s, k1, wt, v) != HF_OK ||
        hf_result_add_row(&r, &w0, &s, jsons[0]) != HF_OK)
        FUZZ_BUG("seed: %s", hf_error_msg());
    hf_supports_clear(&s);
    hf_row_t w1 = {.name = "chain:d=3",
                   .d = 3,
                   .span = 2,
                   .m_star = -1,
                   .lb = "5",
                   .ub = "-1",
                   .status = "open",
                   .n_min_raw = -1,
                   .n_min_sym = -1,
                   .group_order = 6,
                   .nodes = 3,
                   .units = 1,
                   .seconds = -1,
                   .max_atoms = 3,
                   .engine = "plain"};
    hf_supports_init(&s, -1, 3, 1);
    if (hf_result_add_row(&r, &w1, &s, "{}") != HF_OK)
        FUZZ_BUG("seed: %s", hf_error_msg());
    hf_supports_clear(&s);
    r.nunits = 2;
    r.units = calloc(2, sizeof *r.units);
    if (!r.units)
        abort();
    r.units[0] = (hf_unit_record_t){.row = 0,
                                    .rank = 0,
                                    .m = 2,
                                    .unit = 0,
                                    .lo = 0,
                                    .hi = HF_CELLS_ALL,
                                    .nodes = 10,
                                    .found = 2,
                                    .seconds = 0.5};
    r.units[1] = (hf_unit_record_t){.row = 1,
                                    .rank = 1,
                                    .m = 3,
                                    .unit = 0,
                                    .lo = 4,
                                    .hi = 9,
                                    .nodes = 3,
                                    .found = 0,
                                    .seconds = 0.25};
    r.ranks = 2;
    fuzz_path(path, sizeof path, "seed.h5");
    if (hf_result_write(path, &r) != HF_OK)
        FUZZ_BUG("seed: %s", hf_error_msg());
    hf_result_clear(&r);
    seed = fuzz_read_file(path, &seed_n);
    if (hf_result_read(path, &r) != HF_OK || r.nrows != 2 || r.supports[0].n != 2)
        FUZZ_BUG("seed does not read back: %s", hf_error_msg());
    hf_result_clear(&r);
    unlink(path);
    fuzz_h5_check_closed("making the seed");
}

/* ---- what a successful read must satisfy, and its use ---- */

static void use_result(const hf_result_t *r)
{
    if (r->nrows < 0 || r->nunits < 0 || (r->nrows && (!r->rows || !r->supports)))
        FUZZ_BUG("read %ld rows, %ld units", r->nrows, r->nunits);
    for (long i = 0; i < r->nrows; i++) {
        const hf_row_t *w = &r->rows[i];
        const hf_supports_t *s = &r->supports[i];
        if (!memchr(w->name, 0, sizeof w->name) || !memchr(w->status, 0, sizeof w->status) ||
            w->d < 1 || w->d > HF_D_MAX)
            FUZZ_BUG("row %ld accepted with a bad field", i);
        if (s->d != w->d || s->dv < 1 || s->dv > HF_DV_MAX || s->n < 0 ||
            (s->n > 0 && s->m != w->m_star))
            FUZZ_BUG("supports of row %ld accepted with a bad shape", i);
        if (!r->target_json[i])
            FUZZ_BUG("row %ld has no target_json", i);
        hf_target_t t;
        hf_target_init_empty(&t);
        if (hf_target_from_json_text(&t, r->target_json[i], "target_json") == HF_OK)
            hf_target_clear(&t);
        long m = s->m > 0 ? s->m : 0;
        for (long k = 0; !s->file && k < s->n * m * s->d; k++)
            if (s->keys[k] < -HF_KEY_MAX || s->keys[k] > HF_KEY_MAX)
                FUZZ_BUG("row %ld: key out of range accepted", i);
        /* every witness reads into a head (its values divide by its weights) */
        for (long j = 0; j < s->n && j < 4; j++) {
            hf_head_t h;
            const char *why;
            hf_head_init(&h, s->d, s->dv);
            (void)hf_supports_head(s, j, &h, &why);
            hf_head_clear(&h);
        }
    }
    for (long i = 0; i < r->nunits; i++)
        if (r->units[i].row < 0 || r->units[i].row >= r->nrows)
            FUZZ_BUG("unit %ld accepted with row %d", i, (int)r->units[i].row);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[128];
    if (!path[0]) {
        fuzz_h5_init();
        fuzz_path(path, sizeof path, "RESULT.h5");
        make_seed();
    }
    if (size < 1)
        return 0;
    fuzz_in_t in = {data + 1, size - 1};
    switch (data[0] % 3) {
    case 0:
        fuzz_write_file(path, data + 1, size - 1);
        break;
    case 1:
        fuzz_write_patched(path, seed, seed_n, &in, (data[0] / 3) & 1);
        break;
    default:
        unlink(path);
        if (build_result(path, &in) != 0) {
            fuzz_h5_check_closed("building a result");
            return 0;
        }
        break;
    }
    fuzz_h5_check_closed("building a result");
    fuzz_h5_save(path);
    hf_result_t r;
    hf_result_init(&r);
    hf_err_t err = hf_result_read(path, &r);
    if (err == HF_OK) {
        use_result(&r);
    } else {
        if (r.nrows || r.rows || r.nunits || r.units)
            FUZZ_BUG("failed read returned data");
        if (err != HF_ERR_CORRUPT && err != HF_ERR_INPUT)
            FUZZ_BUG("unexpected error %s: %s", hf_err_str(err), hf_error_msg());
        if (!strstr(hf_error_msg(), path))
            FUZZ_BUG("message does not name the file: %s", hf_error_msg());
    }
    hf_result_clear(&r);
    fuzz_h5_check_closed("hf_result_read");
    hf_error_clear();
    return 0;
}
