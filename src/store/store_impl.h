/* Shared inside the store module: HDF5 datatypes of the records, quiet error
 * handling, attribute helpers and the shard test hook. */
#ifndef HF_STORE_IMPL_H
#define HF_STORE_IMPL_H

#include <hdf5.h>
#include <stdint.h>

#include "headfuse/store.h"

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

/* File access properties shared by results and shards: the 1.8 file format
 * (checksummed superblock and object headers; readable by any HDF5 >= 1.8 and h5py)
 * with the default sec2 driver. Returns a property list or H5I_INVALID_HID. */
hid_t hf_h5_fapl(void);

/* Open an existing file read-only. Missing/unreadable -> HF_ERR_IO with errno's
 * reason; locked by a writer -> HF_ERR_IO; not HDF5, truncated -> HF_ERR_CORRUPT
 * "PATH: not a readable HDF5 file (truncated or corrupt?)". kind: "shard", ... */
hf_err_t hf_h5_open_read(const char *path, const char *kind, hid_t *file);

/* Compound datatypes of hf_row_t, hf_unit_record_t and shard found records.
 * file != 0: packed little-endian file type; 0: native memory type. The caller
 * closes the returned type. H5I_INVALID_HID on failure. */
hid_t hf_h5_row_type(int file);
hid_t hf_h5_unit_type(int file);

/* In-memory layout of one found record of a shard. */
typedef struct {
    int32_t row;
    int64_t m;
    int64_t unit;
    char *record;      /* variable-length string */
    uint32_t checksum; /* hf_store_checksum(record) */
} hf_found_mem_t;

hid_t hf_h5_found_type(int file);

/* Variable-length UTF-8 string type (caller closes). */
hid_t hf_h5_vstr_type(void);

/* Attributes on an object. Writers return < 0 on failure. Readers return HF_OK or
 * HF_ERR_CORRUPT naming "path: where@name". */
herr_t hf_h5_attr_write_str(hid_t obj, const char *name, const char *value);
herr_t hf_h5_attr_write_i64(hid_t obj, const char *name, int64_t value);
herr_t hf_h5_attr_write_i32(hid_t obj, const char *name, int32_t value);
hf_err_t hf_h5_attr_read_str(hid_t obj, const char *name, const char *path, const char *where,
                             char **out);
hf_err_t hf_h5_attr_read_i64(hid_t obj, const char *name, const char *path, const char *where,
                             int64_t *out);

/* Check that a dataset has the given rank and return its dims (at most 3). */
hf_err_t hf_h5_dataset_dims(hid_t ds, int rank, const char *path, const char *where, hsize_t *dims);

/* Check that a file datatype is a compound with exactly the members of `expected`
 * (by name), each of the same class and a size no larger (no truncation). */
hf_err_t hf_h5_check_compound(hid_t file_type, hid_t expected, const char *path, const char *where);

/* 32-bit FNV-1a of a string: guards variable-length strings, which live in the
 * global heap outside the Fletcher32-checked chunks. */
uint32_t hf_store_checksum(const char *s);

/* Strict "[-]digits[/digits]" syntax check of a rational written as text. */
int hf_store_rational_syntax_ok(const char *s);

/* Test hook: write the buffered found records WITHOUT a completion record and
 * flush, as if the process was killed between the two writes. */
hf_err_t hf_shard_debug_write_found(hf_shard_t *sh);

#endif
