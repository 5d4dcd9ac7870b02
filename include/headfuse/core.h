/* The small tools every module shares, each written once: a hash, a seeded generator,
 * growable arrays, a sort with a context, a hash index, a set of integer vectors, the count
 * of a box's points, a reader of whole files, a strict integer parser and the I/O seam
 * (atomic writes, write faults). */
#ifndef HEADFUSE_CORE_H
#define HEADFUSE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "headfuse/error.h"

/* ---------------------------------------------------------------- hash */

/* 64-bit FNV-1a. Start from HF_HASH_INIT and fold bytes, strings or whole words in. The
 * values never change: the campaign's fingerprints of searches and job entries, kept in
 * shard and state files, are FNV-1a (from a start of their own, campaign_impl.h). */
#define HF_HASH_INIT UINT64_C(0xcbf29ce484222325)

uint64_t hf_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t hf_hash_str(uint64_t h, const char *s); /* the bytes before the NUL */

/* One FNV-1a step with a whole word as the symbol: (h ^ v) * prime. Cheap, but its low
 * bits depend on the inputs' low bits only: finish with hf_hash_mix before masking. */
static inline uint64_t hf_hash_word(uint64_t h, uint64_t v)
{
    return (h ^ v) * UINT64_C(0x100000001b3);
}

/* The gcd of |a| and |b| (gcd(0, 0) = 0); for lattice vectors, whose entries are far
 * below INT64_MAX in absolute value. */
static inline int64_t hf_gcd64(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* splitmix64's output function: a bijection of 64-bit words with full avalanche. */
static inline uint64_t hf_hash_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- random numbers */

/* splitmix64 with Box-Muller normals: the same sequence on every machine with IEEE
 * doubles and a faithful libm (log, sqrt, cos, sin). Plain value: seed it, no clear. */
typedef struct {
    uint64_t state;
    int has_spare;
    double spare;
} hf_rng_t;

void hf_rng_seed(hf_rng_t *r, uint64_t seed);
uint64_t hf_rng_next(hf_rng_t *r);
double hf_rng_uniform(hf_rng_t *r); /* in (0, 1), 53 random bits */
double hf_rng_normal(hf_rng_t *r);  /* standard normal */

/* Stream seeds: one value mixed from a base seed and up to three integers. */
uint64_t hf_rng_mix(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/* ---------------------------------------------------------------- arrays */

/* Make the array *p (of *cap elements of elem bytes) hold at least need elements: the
 * capacity at least doubles, so n pushes cost O(n) copies. *p and *cap are unchanged on
 * HF_ERR_NOMEM. */
hf_err_t hf_grow(void **p, long *cap, long need, size_t elem);

/* hf_grow for a typed array pointer: HF_GROW(&a, &cap, n). */
#define HF_GROW(pp, capp, need) hf_grow((void **)(pp), (capp), (need), sizeof **(pp))

/* hf_grow for n parallel arrays that share one capacity (element i of each belongs to
 * item i): *arrays[k] is array k, of elements of elem[k] bytes; each is made to hold at
 * least need elements, with one new capacity for all. On HF_ERR_NOMEM *cap is unchanged
 * and every array is still valid (some may already have been enlarged). */
hf_err_t hf_grow_arrays(long *cap, long need, int n, void **const *arrays, const size_t *elem);

/* hf_grow_arrays for two typed arrays: HF_GROW2(&a, &b, &cap, n). */
#define HF_GROW2(pa, pb, capp, need)                                                               \
    hf_grow_arrays((capp), (need), 2, (void **const[]){(void **)(pa), (void **)(pb)},              \
                   (const size_t[]){sizeof **(pa), sizeof **(pb)})

/* Stable merge sort of idx[0..n) by cmp(ctx, a, b) (<0, 0, >0): the qsort_r that C11
 * lacks, the same on every libc. HF_ERR_NOMEM (idx unchanged) without scratch memory. */
typedef int (*hf_cmp_fn)(const void *ctx, long a, long b);
hf_err_t hf_sort(long *idx, long n, hf_cmp_fn cmp, const void *ctx);

/* idx = 0 .. n-1 ordered by key[] (every key >= 0), stably: a radix sort, one pass over
 * the n indices per 11 bits of the largest key, whatever their order before (what the
 * merge of records repeated on every rank needs, docs/search.md). HF_ERR_NOMEM without
 * scratch memory (idx then holds 0 .. n-1). */
hf_err_t hf_sort_keys(const int64_t *key, long n, long *idx);

/* Rows of w integers (row-major); hf_cmp_rows orders rows a and b lexicographically
 * (ctx: an hf_rows_t), for hf_sort. */
typedef struct {
    const int64_t *rows;
    int w;
} hf_rows_t;

int hf_cmp_rows(const void *ctx, long a, long b);

/* ---------------------------------------------------------------- hash index */

/* The one hash table of the toolbox: an index from 64-bit hashes to items that the caller
 * stores and numbers 0, 1, ... (open addressing, linear probing, at most half full). The
 * caller says which stored item equals its key (eq); the index keeps each item's hash, so
 * it grows without looking at the items, and eq runs only on an equal hash. Users: the
 * integer-vector set below, the search's face memo, the cone engine's hyperplanes, the
 * symmetry group's elements and orbits, the shard merge's unit map, the bounds' maps of
 * byte strings. */
typedef int (*hf_index_eq_fn)(const void *ctx, long item); /* 1: item is the key in ctx */

typedef struct {
    uint64_t *hash; /* per slot: the item's hash */
    long *item;     /* per slot: the item, -1 when empty */
    uint64_t mask;  /* slots - 1 (a power of two); no slots before the first add */
    long n;         /* items indexed */
} hf_index_t;

void hf_index_init(hf_index_t *x); /* empty; allocates nothing, cannot fail */
void hf_index_clear(hf_index_t *x);
void hf_index_reset(hf_index_t *x); /* forget every item, keep the slots */

/* The item with hash h that eq(ctx, item) accepts, or -1. */
long hf_index_find(const hf_index_t *x, uint64_t h, hf_index_eq_fn eq, const void *ctx);

/* Index item (not indexed yet: find it first) under hash h. HF_ERR_NOMEM leaves x as it
 * was. */
hf_err_t hf_index_add(hf_index_t *x, uint64_t h, long item);

/* ---------------------------------------------------------------- integer-vector set */

/* Distinct integer vectors of length b, numbered 0, 1, ... in insertion order (an
 * hf_index_t over the vectors). */
typedef struct {
    int b;
    long n;           /* vectors stored */
    long cap;         /* room in keys (vectors) */
    int64_t *keys;    /* n*b, row-major: vector i at keys + i*b */
    hf_index_t index; /* hash of a vector -> its number */
} hf_ivset_t;

/* Empty set of vectors of length b (b >= 1); allocates nothing (returns HF_OK). */
hf_err_t hf_ivset_init(hf_ivset_t *s, int b);
void hf_ivset_clear(hf_ivset_t *s);

/* Index of key[b] in the set, inserting it if new (*added = 1 then). -1 on NOMEM. */
long hf_ivset_insert(hf_ivset_t *s, const int64_t *key, int *added);

/* Index of key[b], or -1 when absent. */
long hf_ivset_find(const hf_ivset_t *s, const int64_t *key);

/* ---------------------------------------------------------------- boxes */

/* The points of a box of d widths w[0..d-1] (the integers along each axis), the axes taken
 * in order: 0 at the first width of 0 or less (an empty box), -1 as soon as the product of
 * the widths so far exceeds cap, else the product (at most cap). The one count of a box's
 * points: the search's box {0..S}^d (hf_search_box_points) and multiplier box B_R
 * (hf_search_rbox_size), the exact test's R-space and K's box. Its one cap is the caller's
 * limit, 1 <= cap <= LONG_MAX, because the limits differ on purpose: what a long holds (the
 * box {0..S}^d; B_R, saturated there), 2^62 (mixed-radix indices of K's box in a word), a
 * fraction of the direct form's unknowns (whether R-space pays); a product is never
 * formed past it. */
long hf_box_points(int d, const int64_t *w, long cap);

/* ---------------------------------------------------------------- whole files */

/* The rest of the stream f as one NUL-terminated buffer: *out (malloc'd) and *len, its
 * bytes before the NUL (len may be NULL); set only on HF_OK. max > 0 refuses more than max
 * bytes. Errors name path: HF_ERR_IO "PATH: cannot read: REASON", HF_ERR_LIMIT "PATH:
 * larger than MAX bytes", HF_ERR_NOMEM. The one reader of whole files (target JSON, job
 * files, a job's state files); the caller opens f and words a failure to open it. */
hf_err_t hf_read_stream(FILE *f, const char *path, size_t max, char **out, size_t *len);

/* ---------------------------------------------------------------- integers in text */

typedef enum {
    HF_PARSE_OK = 0,
    HF_PARSE_SYNTAX, /* not "[-]digits" (empty, '+', blanks, other characters) */
    HF_PARSE_RANGE   /* an integer, but outside [lo, hi] (or beyond long) */
} hf_parse_t;

/* The strict decimal integer "[-]digits" that is the whole of s[0..len) (len < 0: up to
 * the NUL), in [lo, hi]. *out is set only on HF_PARSE_OK; callers word the message. */
hf_parse_t hf_parse_long(const char *s, long len, long lo, long hi, long *out);

/* ---------------------------------------------------------------- sizes in bytes */

/* A size in bytes, the whole of s: a number (digits, optionally one '.' and more digits)
 * and an optional unit K, M, G, T or P (powers of 1024, either case, optionally followed
 * by "B" or "iB": 4G = 4GB = 4GiB = 4294967296), or "B"/none for bytes; positive and
 * below 2^63. *out is set only on HF_PARSE_OK; callers word the message. */
hf_parse_t hf_parse_bytes(const char *s, double *out);
/* bytes for people: "812 B", "23.4 MiB", "1.50 GiB" (three significant digits). */
void hf_bytes_text(double bytes, char *buf, size_t n);

/* ---------------------------------------------------------------- the I/O seam */

/* SQLite's VFS in small (src/core/io.c): every file the project writes whole takes its name
 * here, by one atomic write (a temporary file next to it, fsync of the file, rename, fsync of
 * the directory), and every call that puts something on disk, the store's HDF5 calls
 * included (src/store/store_impl.h), is counted by the one write fault injection below
 * (docs/reliability.md, "Fault injection"). */

/* Write n bytes of data as the file path, atomically: into a temporary file next to it, then
 * fsync, rename (or link), fsync of the directory, so that a crash leaves the old file or the
 * whole new one, never an empty or partial one.
 *   exclusive = 0: path is replaced; the temporary file is PATH.tmp.
 *   exclusive = 1: path is created only if it does not exist (link(2)); when another process
 *                  made it first, HF_OK and path is left as that process wrote it. The
 *                  temporary file is PATH.PID.tmp, so that processes racing to make it
 *                  never share one.
 * The temporary file is removed on failure. Errors (HF_ERR_IO, or HF_ERR_NOMEM) name path:
 * "PATH: cannot create TMP: REASON", "PATH: writing TMP: REASON" (write, fsync, close),
 * "PATH: renaming TMP: REASON", "PATH: cannot create: REASON" (the link). */
hf_err_t hf_io_write_file(const char *path, const void *data, size_t n, int exclusive);

/* Commit tmp, a file written and closed by its writer (HDF5, MPI-IO), as path: fsync it, rename
 * it over path, fsync the directory. On failure tmp is removed and path is left as it was.
 * Errors name path: "PATH: cannot reopen TMP: REASON", "PATH: writing TMP: REASON" (fsync,
 * close), "PATH: renaming TMP: REASON". */
hf_err_t hf_io_commit(const char *tmp, const char *path);

/* Rename from to to (a file or a directory in the same file system), then fsync the
 * directory of to, so that the move survives a crash once this returns. fail != 0 makes it
 * fail with EIO without moving anything (a test's fault point, as a kill there would leave
 * it). Errors: "FROM: cannot move to TO: REASON". */
hf_err_t hf_io_move(const char *from, const char *to, int fail);

/* fsync of the directory holding path, so that a name just created or renamed there
 * survives a crash. Best effort: it comes after the file is complete under its name, so a
 * failure is not reported as the file's (the old file is gone by then). */
void hf_io_sync_dir(const char *path);

/* Write fault injection, for tests. */
/* Make the Nth write call from now fail, once (0 disables). Write calls are the calls of
 * this file's functions that create, write, fsync, close, rename or link a file (not the
 * directory's fsync, which is best effort), and the store's HDF5 and system calls that
 * create, write, flush or close a shard, RESULT.h5 or APPROX.h5 (store_impl.h). A failing
 * system call is not made (a close is made, then reported as failed) and sets errno: ENOSPC
 * for a write, EIO otherwise. The list is in docs/reliability.md, "Fault injection". */
void hf_io_fail_after(long n);
/* Write calls made by this process so far (to size a sweep over N). */
long hf_io_write_calls(void);
/* Count one write call: nonzero when it is the one that must fail. For the store's wrappers
 * of its calls (HF_H5W and the others, store_impl.h). */
int hf_io_fault(void);
/* Nonzero if the last write call counted was failed on purpose. */
int hf_io_fault_injected(void);

#endif
