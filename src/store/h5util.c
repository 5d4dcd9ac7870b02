/* HDF5 helpers of the store module: quiet error handling turned into hf_error
 * messages, the record datatypes, attributes and structural checks. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_impl.h"

/* The innermost description of the last failed HDF5 call, and whether it was a
 * file-lock failure. Captured when the call fails: later successful calls (the
 * cleanup) clear HDF5's error stack. One process, one thread: static is fine. */
static char last_desc[512];
static int last_locked;

/* Keep the description of the innermost frame: it says what actually went wrong
 * ("data error detected by Fletcher32 checksum"), the outer ones only where. */
static herr_t innermost_cb(unsigned n, const H5E_error2_t *e, void *client)
{
    (void)n;
    (void)client;
    if (e->desc && e->desc[0]) {
        strncpy(last_desc, e->desc, sizeof last_desc - 1);
        last_desc[sizeof last_desc - 1] = '\0';
    }
    if (e->min_num == H5E_CANTLOCKFILE)
        last_locked = 1;
    return 0;
}

/* Automatic error handler: record instead of printing. */
static herr_t capture(hid_t stack, void *client)
{
    (void)client;
    last_desc[0] = '\0';
    last_locked = 0;
    H5Ewalk2(stack, H5E_WALK_DOWNWARD, innermost_cb, NULL);
    return 0;
}

/* ---- write fault injection: core's countdown decides (headfuse/core.h) ---- */

int hf_h5_fault(const char *call)
{
    if (!hf_io_fault())
        return 0;
    /* the name of the call, without its arguments, for hf_h5_fail's message */
    snprintf(last_desc, sizeof last_desc, "%.*s: injected failure (write call %ld)",
             (int)strcspn(call, "("), call, hf_io_write_calls());
    last_locked = 0;
    return 1;
}

int hf_h5_fault_after(const char *call, int errnum, int rc)
{
    if (!hf_h5_fault(call))
        return rc;
    if (errnum)
        errno = errnum;
    return -1;
}

void hf_h5_quiet_begin(hf_h5_quiet_t *q)
{
    q->func = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, capture, NULL);
    last_desc[0] = '\0';
    last_locked = 0;
}

void hf_h5_quiet_end(const hf_h5_quiet_t *q)
{
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* HDF5's system-call messages are long ("file write failed: time = ..., filename =
 * ..., errno = 27, error message = 'File too large', buf = ..."): keep the first
 * clause and the errno text. */
static void shorten(const char *desc, char *out, size_t n)
{
    const char *em = strstr(desc, "error message = '");
    size_t head = strcspn(desc, ",:\n");
    if (em) {
        em += strlen("error message = '");
        size_t len = strcspn(em, "'");
        snprintf(out, n, "%.*s: %.*s", (int)head, desc, (int)len, em);
    } else {
        snprintf(out, n, "%s", desc);
    }
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

hf_err_t hf_h5_fail(hf_err_t code, const char *path, const char *what)
{
    hf_err_t err;
    char desc[sizeof last_desc];
    shorten(last_desc, desc, sizeof desc);
    if (desc[0])
        err = hf_error(code, "%s: %s: %s", path, what, desc);
    else
        err = hf_error(code, "%s: %s", path, what);
    last_desc[0] = '\0';
    return err;
}

hid_t hf_h5_fapl(int latest)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return H5I_INVALID_HID;
    /* lock files where the file system supports it; cluster file systems that do not
     * (some NFS and Lustre mounts) would otherwise refuse every open */
    H5F_libver_t low = latest ? H5F_LIBVER_LATEST : H5F_LIBVER_EARLIEST;
    H5F_libver_t high = latest ? H5F_LIBVER_LATEST : H5F_LIBVER_V18;
    if (H5Pset_libver_bounds(fapl, low, high) < 0 || H5Pset_file_locking(fapl, 1, 1) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/* libhdf5's "library initialised" flag: exported (H5private.h), not in its public
 * headers. */
extern hbool_t H5_libinit_g;

void hf_h5_abandon(void)
{
    H5_libinit_g = 0;
}

int hf_h5_signature(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    struct stat st;
    int found = 0;
    if (fstat(fd, &st) == 0)
        for (off_t at = 0; !found && at + 8 <= st.st_size; at = at ? 2 * at : 512) {
            unsigned char buf[8];
            found = pread(fd, buf, 8, at) == 8 && !memcmp(buf, sig, 8);
        }
    close(fd);
    return found;
}

hf_err_t hf_h5_open_read(const char *path, const char *kind, int swmr, hid_t *file)
{
    *file = H5I_INVALID_HID;
    /* open(2) first: a missing or unreadable file gets errno's reason */
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return hf_error(HF_ERR_IO, "%s: cannot open %s: %s", path, kind, strerror(errno));
    close(fd);
    struct stat st;
    if (stat(path, &st) < 0)
        return hf_error(HF_ERR_IO, "%s: cannot open %s: %s", path, kind, strerror(errno));
    /* no format bounds when reading: a bound below the file's own format refuses it */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* a SWMR reader retries metadata whose checksum fails (the writer may be
     * mid-write), 100 times by default with growing pauses: a few suffice */
    if (fapl < 0 || H5Pset_file_locking(fapl, 1, 1) < 0 ||
        H5Pset_metadata_read_attempts(fapl, 3) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        return hf_h5_fail(HF_ERR_INTERNAL, path, "file access properties");
    }
    last_locked = 0;
    *file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    int locked = last_locked;
    /* a file marked as being written (a live or killed SWMR writer) opens only
     * as a SWMR reader */
    if (*file < 0 && swmr && strstr(last_desc, "already open for write")) {
        *file = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
        locked = last_locked;
    }
    H5Pclose(fapl);
    if (*file >= 0) {
        /* a SWMR reader skips HDF5's check that the file is not shorter than its
         * end-of-allocation: do it here */
        haddr_t eoa;
        if (H5Fget_eoa(*file, &eoa) < 0 || (haddr_t)st.st_size < eoa) {
            H5Fclose(*file);
            *file = H5I_INVALID_HID;
            return hf_error(HF_ERR_CORRUPT,
                            "%s: not a readable HDF5 file (truncated or corrupt?): %lld bytes, "
                            "the file's allocation ends at %llu",
                            path, (long long)st.st_size, (unsigned long long)eoa);
        }
        return HF_OK;
    }
    if (locked)
        return hf_error(HF_ERR_IO, "%s: locked by another process (still being written?)", path);
    return hf_error(HF_ERR_CORRUPT, "%s: not a readable HDF5 file (truncated or corrupt?)", path);
}

hid_t hf_h5_vstr_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return H5I_INVALID_HID;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* Fixed-length null-terminated ASCII string of n bytes (including the NUL). */
hid_t hf_h5_fixed_str_type(size_t n)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return H5I_INVALID_HID;
    if (H5Tset_size(t, n) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

hid_t hf_h5_str_mem_type(hid_t file_type)
{
    H5T_cset_t cset = H5Tget_cset(file_type);
    htri_t var = H5Tis_variable_str(file_type);
    if (cset < 0 || var < 0)
        return H5I_INVALID_HID;
    hid_t t = var ? hf_h5_vstr_type() : hf_h5_fixed_str_type(H5Tget_size(file_type) + 1);
    if (t >= 0 && H5Tset_cset(t, cset) < 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

hid_t hf_h5_compound(const hf_h5_member_t *mem, size_t nmem, size_t size, int file)
{
    size_t total = 0;
    hid_t types[24];
    hid_t ct = H5I_INVALID_HID;
    size_t made = 0;
    if (nmem > sizeof types / sizeof *types)
        return H5I_INVALID_HID;
    for (size_t i = 0; i < nmem; i++, made++) {
        if (mem[i].strlen)
            types[i] = hf_h5_fixed_str_type(mem[i].strlen);
        else if (mem[i].vstr)
            types[i] = hf_h5_vstr_type();
        else
            types[i] = H5Tcopy(file ? mem[i].file : mem[i].mem);
        if (types[i] < 0)
            goto done;
        total += H5Tget_size(types[i]);
    }
    ct = H5Tcreate(H5T_COMPOUND, file ? total : size);
    if (ct < 0)
        goto done;
    size_t off = 0;
    for (size_t i = 0; i < nmem; i++) {
        size_t at = file ? off : mem[i].offset;
        if (H5Tinsert(ct, mem[i].name, at, types[i]) < 0) {
            H5Tclose(ct);
            ct = H5I_INVALID_HID;
            goto done;
        }
        off += H5Tget_size(types[i]);
    }
done:
    for (size_t i = 0; i < made; i++)
        H5Tclose(types[i]);
    return ct;
}

#define NMEM(a) (sizeof(a) / sizeof *(a))

hid_t hf_h5_row_type(int file)
{
    const hf_h5_member_t m[] = {
        {"name", offsetof(hf_row_t, name), 0, 0, HF_NAME_LEN, 0},
        {"d", offsetof(hf_row_t, d), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"span", offsetof(hf_row_t, span), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"m_star", offsetof(hf_row_t, m_star), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"lb", offsetof(hf_row_t, lb), 0, 0, HF_BIGINT_LEN, 0},
        {"ub", offsetof(hf_row_t, ub), 0, 0, HF_BIGINT_LEN, 0},
        {"status", offsetof(hf_row_t, status), 0, 0, HF_STATUS_LEN, 0},
        {"n_min_raw", offsetof(hf_row_t, n_min_raw), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"n_min_sym", offsetof(hf_row_t, n_min_sym), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"group_order", offsetof(hf_row_t, group_order), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"nodes", offsetof(hf_row_t, nodes), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"units", offsetof(hf_row_t, units), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"seconds", offsetof(hf_row_t, seconds), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0, 0},
        {"max_atoms", offsetof(hf_row_t, max_atoms), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"engine", offsetof(hf_row_t, engine), 0, 0, HF_ENGINE_LEN, 0},
        {"lb_rule", offsetof(hf_row_t, lb_rule), 0, 0, HF_RULE_LEN, 0},
        {"m_star_dec", offsetof(hf_row_t, m_star_dec), 0, 0, HF_BIGINT_LEN, 0},
    };
    return hf_h5_compound(m, NMEM(m), sizeof(hf_row_t), file);
}

hid_t hf_h5_row_type_older(int file, unsigned nfields)
{
    hid_t all = hf_h5_row_type(file), t = H5I_INVALID_HID;
    if (all < 0)
        return H5I_INVALID_HID;
    /* the first nfields members: a file type packed to their size */
    size_t size = file ? 0 : sizeof(hf_row_t);
    for (unsigned i = 0; file && i < nfields; i++) {
        hid_t mt = H5Tget_member_type(all, i);
        size += mt >= 0 ? H5Tget_size(mt) : 0;
        if (mt >= 0)
            H5Tclose(mt);
    }
    t = H5Tcreate(H5T_COMPOUND, size);
    for (unsigned i = 0; t >= 0 && i < nfields; i++) {
        char *name = H5Tget_member_name(all, i);
        hid_t mt = H5Tget_member_type(all, i);
        if (!name || mt < 0 || H5Tinsert(t, name, H5Tget_member_offset(all, i), mt) < 0) {
            H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        if (mt >= 0)
            H5Tclose(mt);
        if (name)
            H5free_memory(name);
    }
    H5Tclose(all);
    return t;
}

/* The unit record with its cell range (cells != 0) or without (format 1). */
static hid_t unit_type(int file, int cells)
{
    const hf_h5_member_t m[] = {
        {"row", offsetof(hf_unit_record_t, row), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"rank", offsetof(hf_unit_record_t, rank), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"m", offsetof(hf_unit_record_t, m), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"unit", offsetof(hf_unit_record_t, unit), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"lo", offsetof(hf_unit_record_t, lo), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"hi", offsetof(hf_unit_record_t, hi), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"nodes", offsetof(hf_unit_record_t, nodes), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"found", offsetof(hf_unit_record_t, found), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"seconds", offsetof(hf_unit_record_t, seconds), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0, 0},
    };
    hf_h5_member_t v1[NMEM(m)];
    size_t n = 0;
    for (size_t i = 0; i < NMEM(m); i++)
        if (cells || (strcmp(m[i].name, "lo") && strcmp(m[i].name, "hi")))
            v1[n++] = m[i];
    return hf_h5_compound(v1, n, sizeof(hf_unit_record_t), file);
}

hid_t hf_h5_unit_type(int file)
{
    return unit_type(file, 1);
}

hid_t hf_h5_unit_type_v1(int file)
{
    return unit_type(file, 0);
}

/* A /found entry with the lo of its range (cells != 0) or without (format 1). */
static hid_t found_type(int file, int cells)
{
    const hf_h5_member_t m[] = {
        {"row", offsetof(hf_found_mem_t, row), H5T_NATIVE_INT32, H5T_STD_I32LE, 0, 0},
        {"m", offsetof(hf_found_mem_t, m), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"unit", offsetof(hf_found_mem_t, unit), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"lo", offsetof(hf_found_mem_t, lo), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"offset", offsetof(hf_found_mem_t, offset), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"length", offsetof(hf_found_mem_t, length), H5T_NATIVE_INT64, H5T_STD_I64LE, 0, 0},
        {"checksum", offsetof(hf_found_mem_t, checksum), H5T_NATIVE_UINT32, H5T_STD_U32LE, 0, 0},
    };
    hf_h5_member_t v1[NMEM(m)];
    size_t n = 0;
    for (size_t i = 0; i < NMEM(m); i++)
        if (cells || strcmp(m[i].name, "lo"))
            v1[n++] = m[i];
    return hf_h5_compound(v1, n, sizeof(hf_found_mem_t), file);
}

hid_t hf_h5_found_type(int file)
{
    return found_type(file, 1);
}

hid_t hf_h5_found_type_v1(int file)
{
    return found_type(file, 0);
}

/* ---- attributes ---- */

herr_t hf_h5_attr_write(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *buf)
{
    herr_t rc = -1;
    hid_t space = H5Screate(H5S_SCALAR), attr = H5I_INVALID_HID;
    if (space < 0)
        goto done;
    if (H5Aexists(obj, name) > 0 && HF_H5W(H5Adelete(obj, name)) < 0)
        goto done;
    attr = HF_H5W(H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT));
    if (attr < 0)
        goto done;
    rc = HF_H5W(H5Awrite(attr, mtype, buf));
done:
    if (attr >= 0 && HF_H5W_CLOSE(H5Aclose(attr)) < 0)
        rc = -1;
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

herr_t hf_h5_attr_write_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = hf_h5_vstr_type();
    if (t < 0)
        return -1;
    const char *v = value ? value : "";
    herr_t rc = hf_h5_attr_write(obj, name, t, t, &v);
    H5Tclose(t);
    return rc;
}

herr_t hf_h5_attr_write_fixed_str(hid_t obj, const char *name, const char *value)
{
    const char *v = value ? value : "";
    H5T_cset_t cset = H5T_CSET_ASCII;
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p >= 0x80)
            cset = H5T_CSET_UTF8;
    hid_t t = hf_h5_fixed_str_type(strlen(v) + 1);
    if (t < 0)
        return -1;
    herr_t rc = H5Tset_cset(t, cset) < 0 ? -1 : hf_h5_attr_write(obj, name, t, t, v);
    H5Tclose(t);
    return rc;
}

herr_t hf_h5_attr_write_text(hid_t obj, const char *name, const char *value)
{
    if (value && strlen(value) >= HF_H5_FIXED_ATTR_MAX)
        return hf_h5_attr_write_str(obj, name, value);
    return hf_h5_attr_write_fixed_str(obj, name, value);
}

herr_t hf_h5_attr_write_i64(hid_t obj, const char *name, int64_t value)
{
    return hf_h5_attr_write(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

herr_t hf_h5_attr_write_i32(hid_t obj, const char *name, int32_t value)
{
    return hf_h5_attr_write(obj, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &value);
}

herr_t hf_h5_attr_write_u64(hid_t obj, const char *name, uint64_t value)
{
    return hf_h5_attr_write(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

herr_t hf_h5_attr_write_f64(hid_t obj, const char *name, double value)
{
    return hf_h5_attr_write(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

/* ---- datasets ---- */

/* Datasets at least this large are chunked (about CHUNK_BYTES each) and compressed
 * (shuffle, deflate 1) when the writer asks: a witness is mostly small integers
 * (docs/hdf5-format.md, "Conventions"). Smaller ones stay contiguous. */
#define COMPRESS_MIN_BYTES ((hsize_t)64 << 10)
#define CHUNK_BYTES ((hsize_t)1 << 20)

hid_t hf_h5_dcpl(size_t el, int rank, const hsize_t *dims)
{
    hsize_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
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

herr_t hf_h5_dataset_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank,
                           const hsize_t *dims, const void *buf, int compress)
{
    herr_t rc = -1;
    hid_t space = H5Screate_simple(rank, dims, NULL), ds = H5I_INVALID_HID;
    hsize_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    if (space < 0)
        return -1;
    hid_t dcpl = compress ? hf_h5_dcpl(H5Tget_size(ftype), rank, dims) : H5P_DEFAULT;
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

/* Open attribute `name` of obj, checking it exists and is a scalar (or a single
 * element) of the given class. */
static hf_err_t attr_open(hid_t obj, const char *name, H5T_class_t cls, const char *path,
                          const char *where, hid_t *attr_out, hid_t *type_out)
{
    hf_err_t err = HF_OK;
    hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID;
    htri_t ex = H5Aexists(obj, name);
    if (ex < 0) {
        err = hf_h5_fail(HF_ERR_CORRUPT, path, "unreadable attributes");
        goto fail;
    }
    if (ex == 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' missing", path, where, name);
        goto fail;
    }
    attr = H5Aopen(obj, name, H5P_DEFAULT);
    if (attr < 0 || (type = H5Aget_type(attr)) < 0 || (space = H5Aget_space(attr)) < 0) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' unreadable", path, where, name);
        goto fail;
    }
    if (H5Tget_class(type) != cls || H5Sget_simple_extent_npoints(space) != 1) {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' has the wrong type or shape", path,
                       where, name);
        goto fail;
    }
    H5Sclose(space);
    *attr_out = attr;
    *type_out = type;
    return HF_OK;
fail:
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (attr >= 0)
        H5Aclose(attr);
    return err;
}

hf_err_t hf_h5_attr_read_str(hid_t obj, const char *name, const char *path, const char *where,
                             char **out)
{
    hid_t attr, type, mtype = H5I_INVALID_HID;
    *out = NULL;
    HF_TRY(attr_open(obj, name, H5T_STRING, path, where, &attr, &type));
    hf_err_t err = HF_OK;
    htri_t var = H5Tis_variable_str(type);
    if (var > 0) {
        char *v = NULL;
        mtype = hf_h5_str_mem_type(type);
        if (mtype < 0 || H5Aread(attr, mtype, &v) < 0 || !v) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' unreadable", path, where, name);
        } else {
            *out = hf_strdup(v);
            if (!*out)
                err = HF_ERR_NOMEM;
        }
        if (v)
            H5free_memory(v);
    } else if (var == 0) {
        /* fixed-length (written so since the global heap was dropped, or by h5py):
         * read with room for a NUL, which the conversion to the NUL-terminated memory
         * type always writes, whatever the padding in the file. The attribute's data
         * is in the file: a larger size is damage, not a reason to allocate. */
        size_t n = H5Tget_size(type);
        hsize_t fsize = 0;
        hid_t f = H5Iget_file_id(obj);
        if (f < 0 || H5Fget_filesize(f, &fsize) < 0 || n == 0 || n > fsize) {
            if (f >= 0)
                H5Fclose(f);
            err = hf_error(HF_ERR_CORRUPT,
                           "%s: %s: attribute '%s' claims a %zu-byte string in a file of %llu "
                           "bytes",
                           path, where, name, n, (unsigned long long)fsize);
            goto done;
        }
        H5Fclose(f); /* only the reference H5Iget_file_id added */
        char *buf = hf_calloc(n + 1, 1);
        mtype = buf ? hf_h5_str_mem_type(type) : H5I_INVALID_HID;
        if (!buf)
            err = HF_ERR_NOMEM;
        else if (mtype < 0 || H5Aread(attr, mtype, buf) < 0)
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' unreadable", path, where, name);
        if (err == HF_OK)
            *out = buf;
        else
            free(buf);
    } else {
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' unreadable", path, where, name);
    }
done:
    if (mtype >= 0)
        H5Tclose(mtype);
    H5Tclose(type);
    H5Aclose(attr);
    return err;
}

hf_err_t hf_h5_attr_read_num(hid_t obj, const char *name, const char *path, const char *where,
                             H5T_class_t cls, hid_t mtype, void *out)
{
    hid_t attr, type;
    HF_TRY(attr_open(obj, name, cls, path, where, &attr, &type));
    hf_err_t err = HF_OK;
    if (H5Aread(attr, mtype, out) < 0)
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' unreadable", path, where, name);
    H5Tclose(type);
    H5Aclose(attr);
    return err;
}

hf_err_t hf_h5_attr_read_i64(hid_t obj, const char *name, const char *path, const char *where,
                             int64_t *out)
{
    hid_t attr, type;
    HF_TRY(attr_open(obj, name, H5T_INTEGER, path, where, &attr, &type));
    hf_err_t err = HF_OK;
    /* an unsigned 64-bit value could overflow the conversion: accept signed only,
     * or unsigned of fewer than 8 bytes */
    if (H5Tget_sign(type) != H5T_SGN_2 && H5Tget_size(type) >= 8)
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' has the wrong type", path, where,
                       name);
    else if (H5Aread(attr, H5T_NATIVE_INT64, out) < 0)
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: attribute '%s' unreadable", path, where, name);
    H5Tclose(type);
    H5Aclose(attr);
    return err;
}

hf_err_t hf_h5_dataset_dims(hid_t ds, int rank, const char *path, const char *where, hsize_t *dims)
{
    hid_t space = H5Dget_space(ds);
    if (space < 0)
        return hf_h5_fail(HF_ERR_CORRUPT, path, where);
    hf_err_t err = HF_OK;
    int r = H5Sget_simple_extent_ndims(space);
    if (r != rank)
        err = hf_error(HF_ERR_CORRUPT, "%s: %s: has rank %d, expected %d", path, where, r, rank);
    else if (H5Sget_simple_extent_dims(space, dims, NULL) < 0)
        err = hf_h5_fail(HF_ERR_CORRUPT, path, where);
    H5Sclose(space);
    return err;
}

hf_err_t hf_h5_check_compound(hid_t file_type, hid_t expected, const char *path, const char *where)
{
    if (H5Tget_class(file_type) != H5T_COMPOUND)
        return hf_error(HF_ERR_CORRUPT, "%s: %s: not a compound datatype", path, where);
    int n = H5Tget_nmembers(expected), nf = H5Tget_nmembers(file_type);
    if (n != nf)
        return hf_error(HF_ERR_CORRUPT, "%s: %s: has %d fields, expected %d", path, where, nf, n);
    /* Every field must lie inside the record. HDF5 1.10 decodes member offsets without
     * checking them, and converting a record whose field lies past its end reads and
     * writes out of bounds (a damaged shard crashed hf_shard_read in
     * H5T__conv_struct_opt; found by fuzzing). */
    size_t total = H5Tget_size(file_type);
    for (int i = 0; i < nf; i++) {
        hid_t mt = H5Tget_member_type(file_type, (unsigned)i);
        size_t off = H5Tget_member_offset(file_type, (unsigned)i),
               size = mt >= 0 ? H5Tget_size(mt) : 0;
        if (mt >= 0)
            H5Tclose(mt);
        if (mt < 0 || size == 0 || off > total || size > total - off)
            return hf_error(HF_ERR_CORRUPT,
                            "%s: %s: field %d lies outside the %zu-byte record (offset %zu, size "
                            "%zu)",
                            path, where, i, total, off, size);
    }
    for (int i = 0; i < n; i++) {
        char *name = H5Tget_member_name(expected, (unsigned)i);
        if (!name)
            return hf_error(HF_ERR_INTERNAL, "%s: %s: datatype query failed", path, where);
        hf_err_t err = HF_OK;
        hid_t et = H5Tget_member_type(expected, (unsigned)i), ft = H5I_INVALID_HID;
        int fi = H5Tget_member_index(file_type, name);
        if (fi < 0) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: field '%s' missing", path, where, name);
        } else if ((ft = H5Tget_member_type(file_type, (unsigned)fi)) < 0 || et < 0) {
            err = hf_error(HF_ERR_CORRUPT, "%s: %s: field '%s' unreadable", path, where, name);
        } else {
            H5T_class_t ec = H5Tget_class(et), fc = H5Tget_class(ft);
            int ok = ec == fc;
            if (ok && ec == H5T_STRING)
                ok = H5Tis_variable_str(et) == H5Tis_variable_str(ft) &&
                     H5Tget_size(ft) <= H5Tget_size(et);
            else if (ok && ec == H5T_INTEGER)
                ok = H5Tget_size(ft) <= H5Tget_size(et) && H5Tget_sign(ft) == H5Tget_sign(et);
            else if (ok)
                ok = H5Tget_size(ft) <= H5Tget_size(et);
            if (!ok)
                err = hf_error(HF_ERR_CORRUPT, "%s: %s: field '%s' has the wrong type or size",
                               path, where, name);
        }
        if (ft >= 0)
            H5Tclose(ft);
        if (et >= 0)
            H5Tclose(et);
        H5free_memory(name);
        if (err != HF_OK)
            return err;
    }
    return HF_OK;
}

uint32_t hf_store_checksum(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}
