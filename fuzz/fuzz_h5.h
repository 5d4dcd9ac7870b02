/* HDF5 helpers of the file-reader harnesses (fuzz_shard.c, fuzz_result.c): reading
 * the fuzzer's bytes as a stream of small choices, building datasets and attributes
 * of chosen types, shapes and layouts, and patching a seed file.
 *
 * libhdf5 is not instrumented for coverage, so raw bytes almost never get past its
 * signature check. The harnesses therefore also write well-formed HDF5 files whose
 * CONTENTS come from the input (our readers' checks are what gets fuzzed), and patch
 * bytes of valid seed files (HDF5's own parsing of damaged files gets exercised). */
#ifndef HF_FUZZ_H5_H
#define HF_FUZZ_H5_H

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "store/store_impl.h"

/* ---- the input as a stream of choices (zeros once it runs out) ---- */

typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_in_t;

static inline uint8_t in_byte(fuzz_in_t *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static inline unsigned in_u16(fuzz_in_t *in)
{
    unsigned lo = in_byte(in);
    return lo | (unsigned)in_byte(in) << 8;
}

/* A small signed value; the extremes stand for the type's limits, so that range
 * checks meet both small and huge values. */
static inline int64_t in_small64(fuzz_in_t *in)
{
    int8_t b = (int8_t)in_byte(in);
    return b == 127 ? INT64_MAX : b == -128 ? INT64_MIN : b;
}

static inline int32_t in_small32(fuzz_in_t *in)
{
    int8_t b = (int8_t)in_byte(in);
    return b == 127 ? INT32_MAX : b == -128 ? INT32_MIN : b;
}

/* A double: quarters in -31.75..31.75, and NaN, -inf, +inf. */
static inline double in_double(fuzz_in_t *in)
{
    int8_t b = (int8_t)in_byte(in);
    if (b == 127)
        return NAN;
    if (b == -128)
        return -INFINITY;
    if (b == 126)
        return INFINITY;
    return b / 4.0;
}

/* ---- building files ---- */

/* Dataset layouts the builders choose from. */
enum { LAYOUT_CONTIGUOUS, LAYOUT_CHUNK1_FLETCHER, LAYOUT_CHUNK4, LAYOUT_COMPACT, LAYOUT_N };

/* Create dataset `name` in loc of file type ftype and rank 1..3 with `declared` dims,
 * of which the block [0, written) is written from buf (memory type mtype, packed
 * block). Elements beyond `written` exist only in chunked layouts (unallocated
 * chunks, as a killed writer leaves them, or a damaged extent); other layouts write
 * everything (declared = written). Returns 0, or -1 if HDF5 refused (the harness
 * then skips the input). */
static inline int fuzz_h5_dataset_nd(hid_t loc, const char *name, hid_t ftype, hid_t mtype,
                                     int layout, int rank, const hsize_t *declared,
                                     const hsize_t *written, const void *buf)
{
    int rc = -1, any = 1;
    hsize_t dims[3], wdims[3], maxdims[3], chunk[3], start[3] = {0, 0, 0};
    int chunked = layout == LAYOUT_CHUNK1_FLETCHER || layout == LAYOUT_CHUNK4;
    size_t elems = 1;
    for (int i = 0; i < rank; i++) {
        wdims[i] = written[i] < declared[i] ? written[i] : declared[i];
        dims[i] = chunked ? declared[i] : wdims[i];
        maxdims[i] = H5S_UNLIMITED;
        chunk[i] = i == 0 && layout == LAYOUT_CHUNK4 ? 4 : 1;
        any &= wdims[i] > 0;
        elems *= wdims[i];
    }
    if (rank > 1 && chunked)
        chunk[rank - 1] = dims[rank - 1] ? (dims[rank - 1] < 4096 ? dims[rank - 1] : 4096) : 1;
    hid_t space = H5Screate_simple(rank, dims, chunked ? maxdims : NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), ds = H5I_INVALID_HID;
    hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    if (space < 0 || dcpl < 0)
        goto done;
    if (chunked && H5Pset_chunk(dcpl, rank, chunk) < 0)
        goto done;
    if (layout == LAYOUT_CHUNK1_FLETCHER && H5Pset_fletcher32(dcpl) < 0)
        goto done;
    if (layout == LAYOUT_COMPACT && elems * H5Tget_size(ftype) < 32000 &&
        H5Pset_layout(dcpl, H5D_COMPACT) < 0)
        goto done;
    if ((ds = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        goto done;
    rc = 0;
    if (any) {
        if ((fspace = H5Dget_space(ds)) < 0 ||
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, wdims, NULL) < 0 ||
            (mspace = H5Screate_simple(rank, wdims, NULL)) < 0 ||
            H5Dwrite(ds, mtype, mspace, fspace, H5P_DEFAULT, buf) < 0)
            rc = -1;
    }
done:
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    if (ds >= 0)
        H5Dclose(ds);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* The same for rank 1 (width 0) or rows of width elements (rank 2): `declared` rows
 * of which the first `written` are written. */
static inline int fuzz_h5_dataset(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int layout,
                                  hsize_t declared, hsize_t written, hsize_t width, const void *buf)
{
    hsize_t d[2] = {declared, width}, w[2] = {written, width};
    return fuzz_h5_dataset_nd(loc, name, ftype, mtype, layout, width ? 2 : 1, d, w, buf);
}

/* A scalar attribute; value is written with memory type mtype. Returns 0 or -1. */
static inline int fuzz_h5_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                               const void *value)
{
    int rc = -1;
    hid_t space = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
    if (space >= 0 && (a = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
        H5Awrite(a, mtype, value) >= 0)
        rc = 0;
    if (a >= 0)
        H5Aclose(a);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* A string attribute, variable-length or (fixed != 0) fixed-length. */
static inline int fuzz_h5_attr_str(hid_t obj, const char *name, const char *value, int fixed)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    int rc = -1;
    if (t < 0)
        return -1;
    if (fixed) {
        if (H5Tset_size(t, strlen(value) + 1) >= 0)
            rc = fuzz_h5_attr(obj, name, t, t, value);
    } else if (H5Tset_size(t, H5T_VARIABLE) >= 0) {
        rc = fuzz_h5_attr(obj, name, t, t, &value);
    }
    H5Tclose(t);
    return rc;
}

/* Create a file for building: the oldest format (no metadata checksums, so that a
 * patch to the seed reaches what it changes) or the latest (as shards are written). */
static inline hid_t fuzz_h5_create(const char *path, int latest)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = H5I_INVALID_HID;
    if (fapl < 0)
        return H5I_INVALID_HID;
    if (H5Pset_libver_bounds(fapl, latest ? H5F_LIBVER_LATEST : H5F_LIBVER_EARLIEST,
                             latest ? H5F_LIBVER_LATEST : H5F_LIBVER_V18) >= 0)
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    return f;
}

/* Silence HDF5's error printing while the harness builds files (the readers install
 * their own handler and restore this one). */
static inline void fuzz_h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* Set up HDF5 for the harness: quiet; with HF_FUZZ_NO_FREELISTS=1 also without free
 * lists. HDF5 recycles freed blocks of a type itself, so a leak report shows where a
 * block was first allocated, not where the leaking call took it from the list; the
 * leak audit of scripts/fuzz turns them off (it is 3 times slower).
 *
 * The readers' guard (src/store/read_guard.c: a first read in a forked child) is off:
 * the harness fuzzes the reading code itself, in this process, where libFuzzer sees
 * its coverage and its crashes. HF_FUZZ_GUARD=1 turns it on, as in headfuse: then
 * no input may crash the harness, not even one that crashes libhdf5 (fuzz/regress.sh
 * replays upstream/ so). */
static inline void fuzz_h5_init(void)
{
    const char *guard = getenv("HF_FUZZ_GUARD");
    hf_h5_read_guard_enable(guard && !strcmp(guard, "1"));
    fuzz_h5_quiet();
    const char *nofl = getenv("HF_FUZZ_NO_FREELISTS");
    if (nofl && !strcmp(nofl, "1"))
        H5set_free_list_limits(0, 0, 0, 0, 0, 0);
}

/* Triage: HF_FUZZ_SAVE=FILE keeps a copy of the file the reader is given (to look at
 * it with h5dump or h5py). */
static inline void fuzz_h5_save(const char *path)
{
    const char *to = getenv("HF_FUZZ_SAVE");
    if (!to || !*to)
        return;
    size_t n;
    uint8_t *bytes = fuzz_read_file(path, &n);
    fuzz_write_file(to, bytes, n);
    free(bytes);
}

/* After each input: every HDF5 object the reader (or the harness) opened is closed. */
static inline void fuzz_h5_check_closed(const char *what)
{
    ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (n != 0)
        FUZZ_BUG("%s left %zd HDF5 objects open", what, n);
}

/* ---- compound datatypes, right and wrong ---- */

/* A field of a record: its name and file type, F_I32 .. F_F64, or a fixed-length
 * string of n bytes as F_STR + n. */
enum { F_I16 = 1, F_I32, F_I64, F_U32, F_F64, F_STR = 100 };

typedef struct {
    const char *name;
    int type;
} field_t;

/* A new HDF5 type for a field type (caller closes). */
static inline hid_t field_type(int type)
{
    if (type >= F_STR) {
        hid_t t = H5Tcopy(H5T_C_S1);
        if (t >= 0 && (H5Tset_size(t, (size_t)(type - F_STR)) < 0 ||
                       H5Tset_strpad(t, H5T_STR_NULLTERM) < 0)) {
            H5Tclose(t);
            return H5I_INVALID_HID;
        }
        return t;
    }
    return H5Tcopy(type == F_I16   ? H5T_STD_I16LE
                   : type == F_I32 ? H5T_STD_I32LE
                   : type == F_I64 ? H5T_STD_I64LE
                   : type == F_U32 ? H5T_STD_U32LE
                                   : H5T_IEEE_F64LE);
}

/* Ways to get a record datatype wrong; the reader must refuse all but SMALLER. */
enum {
    V_RIGHT,
    V_DROP,     /* field `which` missing */
    V_EXTRA,    /* one more field */
    V_FLOAT,    /* field `which` a float64 */
    V_WIDER,    /* field `which` an int64 (wider than int32 fields, else fine) */
    V_SMALLER,  /* field `which` an int16 (converts; accepted) */
    V_UNSIGNED, /* field `which` a uint32 */
    V_RENAME,   /* field `which` named differently */
    V_SCALAR,   /* not a compound at all */
    V_N
};

/* Packed file compound of the fields, changed as variant says (which: a field index).
 * Caller closes; H5I_INVALID_HID on failure. */
static inline hid_t fuzz_h5_compound(const field_t *f, int nf, int variant, int which)
{
    if (variant == V_SCALAR)
        return H5Tcopy(H5T_STD_I64LE);
    hid_t types[17];
    const char *names[17];
    int n = 0, ok = 1;
    size_t size = 0;
    for (int i = 0; i < nf && i < 16; i++) {
        int type = f[i].type;
        const char *name = f[i].name;
        if (i == which) {
            if (variant == V_DROP)
                continue;
            type = variant == V_FLOAT      ? F_F64
                   : variant == V_WIDER    ? F_I64
                   : variant == V_SMALLER  ? F_I16
                   : variant == V_UNSIGNED ? F_U32
                                           : type;
            if (variant == V_RENAME)
                name = "Row";
        }
        names[n] = name;
        types[n] = field_type(type);
        ok &= types[n] >= 0;
        size += types[n] >= 0 ? H5Tget_size(types[n]) : 0;
        n++;
    }
    if (variant == V_EXTRA) {
        names[n] = "extra";
        types[n] = field_type(F_I32);
        ok &= types[n] >= 0;
        size += 4;
        n++;
    }
    hid_t ct = ok ? H5Tcreate(H5T_COMPOUND, size) : H5I_INVALID_HID;
    size_t off = 0;
    for (int i = 0; ct >= 0 && i < n; i++) {
        if (H5Tinsert(ct, names[i], off, types[i]) < 0) {
            H5Tclose(ct);
            ct = H5I_INVALID_HID;
            break;
        }
        off += H5Tget_size(types[i]);
    }
    for (int i = 0; i < n; i++)
        if (types[i] >= 0)
            H5Tclose(types[i]);
    return ct;
}

/* ---- patching a seed ---- */

/* Write seed (n bytes) to path with the input's patches applied: groups of 4 bytes,
 * a 24-bit offset (modulo the size) and the byte to put there. truncate != 0: the
 * first group is not a patch but cuts the file at its offset (a kill mid-write, a
 * full disk). */
static inline void fuzz_write_patched(const char *path, const uint8_t *seed, size_t n,
                                      fuzz_in_t *in, int truncate)
{
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        abort();
    memcpy(buf, seed, n);
    size_t len = n;
    if (truncate && in->n >= 4) {
        size_t off = in_byte(in);
        off |= (size_t)in_byte(in) << 8;
        off |= (size_t)in_byte(in) << 16;
        in_byte(in);
        len = off % (n + 1);
    }
    while (in->n >= 4 && len > 0) {
        size_t off = in_byte(in);
        off |= (size_t)in_byte(in) << 8;
        off |= (size_t)in_byte(in) << 16;
        buf[off % len] = in_byte(in);
    }
    fuzz_write_file(path, buf, len);
    free(buf);
}

#endif
