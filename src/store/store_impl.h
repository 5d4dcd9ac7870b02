/* Shared inside the store module: HDF5 datatypes of the records, quiet error
 * handling, attribute helpers and the shard test hook. */
#ifndef HF_STORE_IMPL_H
#define HF_STORE_IMPL_H

#include <errno.h>
#include <hdf5.h>
#include <stdint.h>

#include "headfuse/core.h"
#include "headfuse/store.h"

/* Write fault injection (hf_io_fail_after, headfuse/core.h: one countdown for the whole tree,
 * which decides). Every call that creates, changes or flushes a file of the store goes
 * through one of these:
 *
 *   HF_H5W(call)         HDF5 create/write/flush: when the countdown hits this call it
 *                        is NOT made and -1 is returned, as HDF5 returns on failure;
 *   HF_H5W_CLOSE(call)   closing an object that was written (H5Dclose, H5Gclose,
 *                        H5Aclose, H5Fclose may flush): the call IS made, so nothing is
 *                        left open, and then reported as failed (-1);
 *   HF_SYSW(e, call)     a system call that makes or reserves a shard (open with O_CREAT,
 *                        fallocate): not made, errno = e, -1.
 * The atomic writes of whole files (RESULT.h5, APPROX.h5: create, write, fsync, close,
 * rename) count their system calls in core (hf_io_write_file, hf_io_commit).
 *
 * An injected HDF5 failure leaves "CALL: injected failure" as the description that
 * hf_h5_fail appends, so the message names the file, the step and the call. Calls on
 * cleanup paths after an earlier failure and best-effort calls whose failure is not
 * an error (the reservation descriptor of a shard) are left out, so that in a run
 * without faults every counted call is one whose failure the caller reports. */
int hf_h5_fault(const char *call);
int hf_h5_fault_after(const char *call, int errnum, int rc);
#define HF_H5W(call) (hf_h5_fault(#call) ? -1 : (call))
#define HF_H5W_CLOSE(call) hf_h5_fault_after(#call, 0, (call))
#define HF_SYSW(errnum, call) (hf_h5_fault(#call) ? (errno = (errnum), -1) : (call))

/* HDF5 prints its error stack to stderr by default. Every public store function
 * replaces that on entry by a handler that only records the failure (for
 * hf_h5_fail) and restores the caller's handler on exit. */
typedef struct {
    H5E_auto2_t func;
    void *data;
} hf_h5_quiet_t;

void hf_h5_quiet_begin(hf_h5_quiet_t *q);
void hf_h5_quiet_end(const hf_h5_quiet_t *q);

/* Record "PATH: what: <innermost error of the last failed HDF5 call>" as an error
 * with the given code and return the code. */
hf_err_t hf_h5_fail(hf_err_t code, const char *path, const char *what);

/* File access properties for writing with the default sec2 driver. latest = 0:
 * the most widely readable format (results; its version-0 superblock also has no
 * checksum for H5Fget_file_image to get wrong, which 1.10.8 does for version 2).
 * latest = 1: the 1.10 format SWMR needs, with checksummed metadata (shards).
 * Returns a property list or H5I_INVALID_HID. */
hid_t hf_h5_fapl(int latest);

/* Open an existing file read-only (swmr: as a SWMR reader, which also opens files
 * whose SWMR writer died without closing them). Missing/unreadable -> HF_ERR_IO
 * with errno's reason; locked by a writer -> HF_ERR_IO; not HDF5, truncated ->
 * HF_ERR_CORRUPT "PATH: not a readable HDF5 file (truncated or corrupt?)".
 * kind names the file in messages ("shard", "result"). */
hf_err_t hf_h5_open_read(const char *path, const char *kind, int swmr, hid_t *file);

/* Whether path starts like an HDF5 file: the 8-byte signature at offset 0 or at 512,
 * 1024, 2048, ... (where HDF5 looks for a superblock). 1 yes, 0 no (a JSON file, a PNG,
 * an empty file: "not an HDF5 file", a user's mistake rather than damage), -1 when it
 * cannot be opened (errno says why). */
int hf_h5_signature(const char *path);

/* Run probe(path, arg) - a whole read of the file, discarding what it got - first in
 * a forked child limited in time and memory (src/store/read_guard.c). HF_OK when the
 * child finished, whether its read succeeded or failed cleanly: the caller then reads
 * in this process. HF_ERR_CORRUPT "PATH: corrupt KIND: the HDF5 library crashed
 * reading it (signal N: ...)" or "... did not finish reading it in N s" when it died.
 * When the child's read failed cleanly, its error (code and message) is returned as
 * it is, and the caller must not read the file again. read_ok (may be NULL) is set
 * to 1 only when a child ran and its probe returned HF_OK; HF_OK with read_ok 0
 * means no child could be started, or the guard is off. HEADFUSE_READ_GUARD=0 in
 * the environment turns it off; HEADFUSE_READ_TIMEOUT sets the time limit in
 * seconds. */
typedef hf_err_t (*hf_h5_probe_fn)(const char *path, const void *arg);
hf_err_t hf_h5_read_guard(const char *path, const char *kind, hf_h5_probe_fn probe, const void *arg,
                          int *read_ok);
/* hf_h5_read_guard for n files at once, with one child (a fork per file costs far more
 * than reading a small shard: 1024 shards): the child probes them in order up to the
 * first failure, within the sum of their limits plus a second a file. *read_ok = 1 when
 * it read them all: the caller reads each in this process. A clean failure comes back
 * as hf_h5_read_guard's (the caller reads no file again). HF_OK with *read_ok = 0 when
 * the guard is off, no child could be started, or the child died (then the caller
 * guards each file on its own, which names the one that kills the reader). */
hf_err_t hf_h5_read_guard_all(const char *const *paths, long n, const char *kind,
                              hf_h5_probe_fn probe, const void *arg, int *read_ok);
/* The shards of a merge read first in one guarded child (hf_h5_read_guard_all with the
 * shard reader); when *read_ok, each is then read with hf_shard_read_after_guard, which
 * skips hf_shard_read's own child (shards.c). */
hf_err_t hf_shards_guard(char *const *paths, long n, const char *fingerprint, int *read_ok);
hf_err_t hf_shard_read_after_guard(const char *path, const char *fingerprint, hf_shard_data_t *out);
/* Turn the guard on or off for this process (the fuzz harnesses fuzz the readers
 * themselves, in process); overrides HEADFUSE_READ_GUARD. */
void hf_h5_read_guard_enable(int on);

/* After a failed flush HDF5 1.10 can neither flush nor close the file ("slist
 * already enabled?"), and its own cleanup - at MPI_Finalize through an attribute of
 * MPI_COMM_SELF, or at exit - then crashes on that file (SEGV in H5F__close_cb).
 * This marks the library as never initialised, so that its cleanup does nothing; the
 * operating system closes the file. Called by a shard whose file HDF5 could not
 * close (a real I/O error: its file ID is still valid after H5Fclose), whose finished
 * units are all on disk already; the process is then ending with the write error. */
void hf_h5_abandon(void);

/* One member of a compound type being built: its name, offset in the memory struct,
 * and memory and file types (predefined), or a string (strlen or vstr). */
typedef struct {
    const char *name;
    size_t offset;
    hid_t mem, file;
    size_t strlen; /* > 0: fixed-length string of this size */
    int vstr;      /* variable-length string */
} hf_h5_member_t;

/* Compound of `size` bytes (the memory struct) from nmem members; file != 0: the packed
 * file type instead. Caller closes; H5I_INVALID_HID on failure. */
hid_t hf_h5_compound(const hf_h5_member_t *mem, size_t nmem, size_t size, int file);

/* Compound datatypes of hf_row_t, hf_unit_record_t and shard found records.
 * file != 0: packed little-endian file type; 0: native memory type. The caller
 * closes the returned type. H5I_INVALID_HID on failure. */
hid_t hf_h5_row_type(int file);
/* The /table row of older files: the first nfields members of hf_h5_row_type (a memory
 * type of hf_row_t, or a packed file type), for reading those files. Format 1 had the
 * first HF_H5_ROW_V1_FIELDS (up to seconds), format 2 added max_atoms, engine and lb_rule
 * (HF_H5_ROW_V2_FIELDS), format 3 m_star_dec. */
#define HF_H5_ROW_V1_FIELDS 13
#define HF_H5_ROW_V2_FIELDS 16
hid_t hf_h5_row_type_older(int file, unsigned nfields);
hid_t hf_h5_unit_type(int file);
/* The unit record of shard format 1 and of result files written before cell ranges: the
 * members of hf_h5_unit_type without lo and hi (a memory type of hf_unit_record_t that
 * leaves them alone, or a packed file type), for reading those files. */
hid_t hf_h5_unit_type_v1(int file);

/* In-memory layout of one entry of a shard's /found index: the record's text is
 * bytes [offset, offset + length) of the shard's /text dataset; lo is the first cell of
 * the range of unit (row, m, unit) it was found in. */
typedef struct {
    int32_t row;
    int64_t m;
    int64_t unit;
    int64_t lo;
    int64_t offset;
    int64_t length;
    uint32_t checksum; /* hf_store_checksum of the text */
} hf_found_mem_t;

hid_t hf_h5_found_type(int file);
/* The /found entry of shard format 1: hf_h5_found_type without lo. */
hid_t hf_h5_found_type_v1(int file);

/* Fixed-length null-terminated string type of n bytes, NUL included (caller closes). */
hid_t hf_h5_fixed_str_type(size_t n);

/* Variable-length UTF-8 string type (caller closes). */
hid_t hf_h5_vstr_type(void);

/* Memory type to read strings of file type file_type: variable-length, or fixed-length
 * with room for a NUL, in the file type's character set (HDF5 1.10 converts strings
 * only between equal character sets: an ASCII attribute read as UTF-8 fails, or not,
 * depending on what the process converted before). Caller closes; H5I_INVALID_HID on
 * failure. */
hid_t hf_h5_str_mem_type(hid_t file_type);

/* Attributes on an object. Writers return < 0 on failure. Readers return HF_OK or
 * HF_ERR_CORRUPT naming "path: where@name". */
herr_t hf_h5_attr_write_str(hid_t obj, const char *name, const char *value);
/* A fixed-length string attribute (NUL-terminated, strlen + 1 bytes; ASCII, or UTF-8
 * when a byte is not ASCII): it lives in the object header (checksummed in the
 * version-2 headers of shards; RESULT.h5's oldest-format version-1 headers are not).
 * A variable-length one lives in a global heap collection, which no format version
 * checksums, and HDF5 1.10.8 crashes or hangs reading a damaged collection
 * (docs/reliability.md, "Fuzzing"). */
herr_t hf_h5_attr_write_fixed_str(hid_t obj, const char *name, const char *value);
/* Largest fixed-length string attribute written, NUL included. An object header
 * message of the oldest format holds at most 64 kB, and such a file has no dense
 * (out-of-header) attribute storage: HDF5 refuses a larger attribute. */
#define HF_H5_FIXED_ATTR_MAX 64000
/* hf_h5_attr_write_fixed_str, or for a value longer than HF_H5_FIXED_ATTR_MAX - 1
 * bytes (a huge target's JSON) hf_h5_attr_write_str. */
herr_t hf_h5_attr_write_text(hid_t obj, const char *name, const char *value);
herr_t hf_h5_attr_write_i64(hid_t obj, const char *name, int64_t value);
herr_t hf_h5_attr_write_i32(hid_t obj, const char *name, int32_t value);
herr_t hf_h5_attr_write_u64(hid_t obj, const char *name, uint64_t value);
herr_t hf_h5_attr_write_f64(hid_t obj, const char *name, double value);
/* A scalar attribute of file type ftype from buf of memory type mtype (replaced if it
 * exists). */
herr_t hf_h5_attr_write(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *buf);
/* The store's one dataset writer: dataset `name` under loc, of rank 1 to 3 and shape dims (an
 * empty one when a dimension is 0), file type ftype, written in one go from buf of memory type
 * mtype. compress = 1: chunked (about 1 MiB a chunk) with the shuffle and deflate filters when
 * it has 64 KiB or more (RESULT.h5's convention, docs/hdf5-format.md); 0: contiguous (APPROX.h5,
 * whose format says nothing of compression). */
herr_t hf_h5_dataset_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank,
                           const hsize_t *dims, const void *buf, int compress);
/* The creation properties of a compressed dataset of elements of el bytes: chunks of about
 * 1 MiB and shuffle + deflate from 64 KiB on; H5P_DEFAULT when smaller; H5I_INVALID_HID on
 * failure (also for a large row's witness, written by MPI-IO: witness.c). */
hid_t hf_h5_dcpl(size_t el, int rank, const hsize_t *dims);
hf_err_t hf_h5_attr_read_str(hid_t obj, const char *name, const char *path, const char *where,
                             char **out);
hf_err_t hf_h5_attr_read_i64(hid_t obj, const char *name, const char *path, const char *where,
                             int64_t *out);
/* A scalar attribute of class cls (H5T_INTEGER, H5T_FLOAT) read as memory type mtype. */
hf_err_t hf_h5_attr_read_num(hid_t obj, const char *name, const char *path, const char *where,
                             H5T_class_t cls, hid_t mtype, void *out);

/* Check that a dataset has the given rank and return its dims (at most 3). */
hf_err_t hf_h5_dataset_dims(hid_t ds, int rank, const char *path, const char *where, hsize_t *dims);

/* Check that a file datatype is a compound with exactly the members of `expected`
 * (by name), each of the same class and a size no larger (no truncation). */
hf_err_t hf_h5_check_compound(hid_t file_type, hid_t expected, const char *path, const char *where);

/* ---- RESULT.h5: the value and its validation (result.c), writer (result_write.c),
 * reader (result_read.c) ---- */

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

/* NULL when valid, else what is wrong: the name of a row's first bad field; supports that
 * do not match their row (same d, and size m_star when there are any); a unit record of a
 * table of nrows rows. The writer refuses what the reader would reject. */
const char *hf_result_row_bad(const hf_row_t *w);
const char *hf_result_supports_bad(const hf_supports_t *s, const hf_row_t *w);
const char *hf_result_unit_bad(const hf_unit_record_t *u, long nrows);

/* ---- supports' datasets (supports.c) ---- */

/* The datasets keys, weights and weighted_values of s in row group g (copied from the file
 * that holds them when s is held in one); `what` gets the step for messages. HF_ERR_IO (what
 * says where), HF_ERR_NOMEM. */
hf_err_t hf_supports_write_group(hid_t g, const hf_supports_t *s, char *what, size_t nwhat);
/* Read the supports of row group g into s, initialised with their m, d, dv and n (from the
 * group's attributes): held in memory, or left in the file (path, where) when they are more
 * than HF_SUPPORTS_HOLD_MAX atoms (their datasets' shapes checked). old: formats 1 to 3
 * (rational strings: weights and values). */
hf_err_t hf_supports_read_group(hid_t g, const char *path, const char *where, int old,
                                hf_supports_t *s);
/* Whether n integers all fit int64; the fixed-length size (NUL included) of their decimal
 * strings; the strings themselves into out (n * size bytes). */
int hf_supports_fits_i64(const fmpz *x, long n);
size_t hf_supports_decimal_size(const fmpz *x, long n);
hf_err_t hf_supports_decimals(const fmpz *x, long n, size_t size, char *out);

/* 32-bit FNV-1a of n bytes: a found record's text is checked as a whole, beyond
 * the per-chunk Fletcher32 of the datasets holding it. */
uint32_t hf_store_checksum(const char *s, size_t n);

/* Test hook: write the buffered found records WITHOUT a completion record and
 * flush, as if the process was killed between the two flushes. */
hf_err_t hf_shard_debug_write_found(hf_shard_t *sh);

#endif
