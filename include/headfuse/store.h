/* HDF5 storage: per-rank shards written as work units finish, and the merged
 * RESULT.h5 with the minimal-atom table (format: docs/hdf5-format.md).
 *
 * Shards make a killed run lose at most the units in flight: the found supports of a
 * unit (or of a range of its cells) and its completion record are written together and
 * flushed; a reader trusts only ranges that have a completion record. Result files are
 * written to PATH.tmp and renamed, so a crash never leaves a half-written RESULT.h5. */
#ifndef HEADFUSE_STORE_H
#define HEADFUSE_STORE_H

#include <mpi.h>
#include <stdint.h>

#include "headfuse/error.h"
#include "headfuse/search.h"
#include "headfuse/target.h"
#include "headfuse/stop.h"

/* The store module's phases for hf_stop_check (headfuse/stop.h). */
#define HF_STORE_STOP_PHASES(X) X(MERGE, "merging the shards")
HF_STORE_STOP_PHASES(HF_STOP_DECLARE)

#define HF_NAME_LEN 128
#define HF_BIGINT_LEN 128 /* decimal digits + NUL: 2^384 (multi:d=64,k=64's UB) has 116 */
#define HF_STATUS_LEN 16
#define HF_ENGINE_LEN 16
#define HF_RULE_LEN 24
#define HF_NOTE_LEN 96

/* One row of the minimal-atom table: one (target, span). -1 means null/unknown.
 *
 * status: "certified" (LB = UB: m* known for any keys), "exhaustive" (m* found: every
 * smaller support in the span space was decided), "infeasible" (every support size up
 * to UB was decided and none in the span space represents the target: m_star = -1),
 * "open" (stopped at max_atoms before a support was found). Files written before the
 * "infeasible" status existed say "exhaustive" with m_star = -1; hf_result_read reports
 * those rows as "infeasible". */
typedef struct {
    char name[HF_NAME_LEN];
    int32_t d, span;
    int64_t m_star;         /* -1: no feasible support found in the span space */
    char lb[HF_BIGINT_LEN]; /* decimal: may exceed 64 bits */
    char ub[HF_BIGINT_LEN];
    char status[HF_STATUS_LEN]; /* "certified" | "exhaustive" | "infeasible" | "open" */
    int64_t n_min_raw;          /* distinct minimal supports in canonical position; -1 unknown */
    int64_t n_min_sym;          /* orbits under the symmetry group; -1 unknown */
    int64_t group_order;
    int64_t nodes; /* candidate supports examined */
    int64_t units; /* work units run */
    double seconds;
    /* The settings that give the row its meaning (an "open" row stopped at max_atoms;
     * a "plain" row was searched without pruning). Read from a file written before they
     * were recorded: max_atoms -1 and engine "unknown". */
    int64_t max_atoms;          /* largest support size searched; 0: no limit (up to UB) */
    char engine[HF_ENGINE_LEN]; /* "cone", "layered" (pruned searches), "plain" (--no-prune) */
    /* Which rule gives lb: "newton_vertices", "face_rule", "trivial" (bounds.h), or
     * "newton_2d" / "newton_3d" when lb is m* proven over all integer keys (search.h);
     * "unknown" in files written before rows recorded it. */
    char lb_rule[HF_RULE_LEN];
    /* Why group_order is -1 although the search ran ("P/Q has more than 2^18 terms",
     * hf_group_unknown_reason); "" when it is known or nothing says. Not a /table field:
     * the attribute group_note of /rows/<i>, written only when not empty. */
    char group_note[HF_NOTE_LEN];
    /* m* in decimal, exact at any size ("-1": none, as m_star). m_star holds the same
     * number when it fits 63 bits and -1 when it does not (wd:d=63 and wd:d=64 are
     * certified with m* = 2^63 and 2^64). Set both with hf_row_set_m_star and read with
     * hf_row_m_star; "" (a row filled in field by field) means "m_star says it", and the
     * writer stores m_star's decimal then. Files written before format 3 did not record
     * it: read from them, it is m_star's decimal (docs/hdf5-format.md). */
    char m_star_dec[HF_BIGINT_LEN];
} hf_row_t;

/* Set m* from its decimal text (NULL or "-1": none): m_star_dec exactly, m_star the
 * number when it fits in int64, else -1. HF_ERR_INTERNAL when the text is not a
 * non-negative decimal of fewer than HF_BIGINT_LEN digits. */
hf_err_t hf_row_set_m_star(hf_row_t *row, const char *decimal);
/* m* as exact decimal text: m_star_dec, or m_star's decimal (into buf) when m_star_dec
 * is empty; "-1" when the row has none. */
const char *hf_row_m_star(const hf_row_t *row, char buf[HF_BIGINT_LEN]);

/* The minimal supports of one row with their exact witnesses. A head is the same function
 * when every weight is multiplied by one positive number, so a witness is kept as integers:
 * each atom's weight c > 0 and its value times its weight, u = c v (dv of them), the pair
 * (c, u) of each support a primitive integer vector; the value is u / c (docs/hdf5-format.md,
 * "/rows/<i>"). The supports of a large row are never held whole: they live in an HDF5 file
 * (file, group: the group holds the datasets keys, weights and weighted_values of a row
 * group) and are read in pieces (hf_supports_open); keys, weights and wvalues are then NULL. */
typedef struct {
    long n; /* number of supports */
    long m; /* atoms per support */
    int d, dv;
    int64_t *keys; /* n*m*d */
    fmpz *weights; /* n*m: c */
    fmpz *wvalues; /* n*m*dv: u = c v */
    long cap;      /* room for supports in keys, weights and wvalues */
    char *file;    /* or NULL: the supports are held in memory */
    char *group;   /* the group of `file` that holds them */
} hf_supports_t;

/* Supports held in memory read from a file have at most this many atoms in all (n m); more
 * stay in the file (hf_supports_in_file). Tests lower it (the knob HF_KNOB_SUPPORTS_HOLD_MAX,
 * control.h; HEADFUSE_SUPPORTS_HOLD_MAX) to read small supports in pieces. */
#define HF_SUPPORTS_HOLD_MAX (1L << 20)

void hf_supports_init(hf_supports_t *s, long m, int d, int dv);
void hf_supports_clear(hf_supports_t *s);
/* Append one support held in memory: keys[m*d], c[m] > 0 and u[m*dv] (copied as given: the
 * caller makes (c, u) primitive, hf_supports_scale). */
hf_err_t hf_supports_push_ints(hf_supports_t *s, const int64_t *keys, const fmpz *c, const fmpz *u);
/* Divide c[m] and u[mu] by the gcd of all their entries. */
void hf_supports_scale(fmpz *c, long m, fmpz *u, long mu);
/* dst (initialised) gets a copy of src in place of its value (a file's supports: the same
 * reference). */
hf_err_t hf_supports_copy(hf_supports_t *dst, const hf_supports_t *src);
/* Make s (its m, d, dv kept) the n supports held by `group` of `file`, replacing its own. */
hf_err_t hf_supports_in_file(hf_supports_t *s, long n, const char *file, const char *group);

/* The one conversion between a witness head (exact rationals) and a row of supports.
 * push_head appends head h as one support (h->natoms must be s->m), its weights and
 * values turned into the primitive integers (c, u). hf_supports_head puts support j into h
 * (initialised by the caller for s->d, s->dv; resized to s->m atoms): weight c, value
 * u / c (read from the file when it is held there); a weight that is not positive is not an
 * error but a bad witness: *why says so (else NULL), and h is then incomplete. */
hf_err_t hf_supports_push_head(hf_supports_t *s, const hf_head_t *h);
hf_err_t hf_supports_head(const hf_supports_t *s, long j, hf_head_t *h, const char **why);

/* Supports held in a file, read in pieces: open (HF_ERR_IO, HF_ERR_CORRUPT naming the file),
 * then atoms [a0, a0 + cnt) of support j into keys[cnt*d] (may be NULL), c[cnt] and
 * u[cnt*dv] (initialised), as hf_supports_head's integers; close accepts NULL. */
typedef struct hf_supports_reader_s hf_supports_reader_t;
hf_err_t hf_supports_open(const hf_supports_t *s, hf_supports_reader_t **out);
hf_err_t hf_supports_read(hf_supports_reader_t *r, long j, long a0, long cnt, int64_t *keys,
                          fmpz *c, fmpz *u);
void hf_supports_close(hf_supports_reader_t **r);

/* A work unit is divided into cells 0..C-1 (C known to the search), and a rank may run
 * only a range [lo, hi) of them. hi = HF_CELLS_ALL: to the end of the unit, so
 * [0, HF_CELLS_ALL) is the whole unit, which every record of the older formats (shard
 * format 1, RESULT.h5 without lo/hi) means. */
#define HF_CELLS_ALL INT64_MAX

/* Cost of one finished range of cells of a work unit (the per-unit log). Initialise it
 * by field names (.row = ...): positional initialisers would shift with the fields. */
typedef struct {
    int32_t row;    /* table row (job entry) the unit belongs to */
    int32_t rank;   /* rank that ran it */
    int64_t m;      /* support size */
    int64_t unit;   /* unit index within the size */
    int64_t lo, hi; /* the cells [lo, hi) of the unit this record completes: 0 <= lo < hi */
    int64_t nodes;
    int64_t found; /* feasible supports found */
    double seconds;
} hf_unit_record_t;

/* A whole result file in memory. */
typedef struct {
    long nrows;
    hf_row_t *rows;
    hf_supports_t *supports; /* nrows entries */
    char **target_json;      /* nrows entries: the target as JSON text */
    long caprows;            /* room for rows in rows, supports and target_json */
    long nunits;
    hf_unit_record_t *units;
    /* provenance (root attributes); strings may be NULL when writing */
    char *version, *git_commit, *command_line, *host, *start_time, *end_time;
    int32_t ranks;
    /* the text of the job file the rows come from (`headfuse run`); "" or NULL when
     * written: not from a job file (`headfuse search`). NULL when read from a file
     * written before it was recorded. */
    char *job_text;
} hf_result_t;

void hf_result_init(hf_result_t *r);
void hf_result_clear(hf_result_t *r);
/* Append a row (copies row, supports and target_json). */
hf_err_t hf_result_add_row(hf_result_t *r, const hf_row_t *row, const hf_supports_t *sup,
                           const char *target_json);

/* Write atomically (PATH.tmp, fsync, rename, fsync of the directory: headfuse/core.h). Errors
 * name the path. */
hf_err_t hf_result_write(const char *path, const hf_result_t *r);
/* Read a result file into r (initialised), replacing its value; on failure r keeps its
 * value. A missing, truncated or malformed file -> HF_ERR_CORRUPT or
 * HF_ERR_IO with a message naming the path and what is wrong; a file that is not HDF5
 * at all (no HDF5 signature: a JSON file given by mistake) -> HF_ERR_INPUT
 * "PATH: not an HDF5 file ...". */
hf_err_t hf_result_read(const char *path, hf_result_t *r);

/* ---- shards ---- */
typedef struct hf_shard_s hf_shard_t;

/* Create a new shard file (fails if it exists). fingerprint identifies the job: a
 * reader refuses shards with another fingerprint. about (may be NULL) describes the job
 * for people ("wd:d=3 span 2, engine layered, max_atoms none"); a reader that refuses
 * the shard quotes it, so the message can say which search the shard belongs to. */
hf_err_t hf_shard_create(const char *path, const char *fingerprint, const char *about,
                         hf_shard_t **out);
/* Buffer one found support of the range of cells in progress, the one of unit (row, m,
 * unit) that starts at cell lo (record: opaque text, JSON). */
hf_err_t hf_shard_add_found(hf_shard_t *sh, int32_t row, int64_t m, int64_t unit, int64_t lo,
                            const char *record);
/* The same, taking record (hf_malloc'd) over: the shard frees it, on failure too (a witness
 * of 10^7 keys is not copied). */
hf_err_t hf_shard_take_found(hf_shard_t *sh, int32_t row, int64_t m, int64_t unit, int64_t lo,
                             char *record);
/* Write the buffered found records (all of u's range: same row, m, unit and lo, else
 * HF_ERR_INTERNAL) and then the range's completion record u, flushing after each. */
hf_err_t hf_shard_finish_unit(hf_shard_t *sh, const hf_unit_record_t *u);
/* Close the file and free the shard (accepts NULL; *sh becomes NULL). Returns an error if
 * the final flush failed: a shard is a file, and like PETSc's destroy functions this one
 * reports what closing it found. */
hf_err_t hf_shard_destroy(hf_shard_t **sh);

/* What a shard holds: completed ranges of cells, in the order written, and the found
 * records of completed ranges only (found_lo: the lo of the record's range). A shard of
 * format 1 (whole units) reads as ranges [0, HF_CELLS_ALL), its found records with lo 0. */
typedef struct {
    long nunits;
    hf_unit_record_t *units;
    long nfound;
    int32_t *found_row;
    int64_t *found_m, *found_unit, *found_lo;
    char **found_record;
} hf_shard_data_t;

/* Read a shard. A found record is returned only when the shard holds a completion record
 * of the same (row, m, unit, lo). Unreadable/truncated/inconsistent (a record with lo < 0
 * or hi <= lo among them) -> HF_ERR_CORRUPT naming the path;
 * another job's fingerprint -> HF_ERR_INPUT "PATH: shard of another search: it holds
 * 'ABOUT' (fingerprint F, expected G)" ("... written by an older headfuse ..." when it
 * has no description). out (initialised) gets the shard's contents in place of its old
 * value; on failure it keeps its value. init: the empty value (a zeroed one is empty too). */
hf_err_t hf_shard_read(const char *path, const char *fingerprint, hf_shard_data_t *out);
void hf_shard_data_init(hf_shard_data_t *d);
void hf_shard_data_clear(hf_shard_data_t *d);

/* ---- a search's shard directory (shards.c) ----
 * Shards of one search live in one directory as run-<stamp>-<pid>-r<rank>.h5. */

/* The shard paths in dir, sorted (none when dir does not exist). Free with
 * hf_shards_list_free. */
hf_err_t hf_shards_list(const char *dir, char ***paths, long *n);
void hf_shards_list_free(char **paths, long n);
/* Remove the shards, a large row's witness.h5 (and its .tmp) and then the directory (best
 * effort: the result holds everything). */
void hf_shards_remove(const char *dir);

/* Everything the shards of a directory hold, merged: completed ranges of cells and their
 * found records. Ranges are taken shard by shard (sorted paths) and in each shard in
 * record order; a range is accepted iff it is disjoint from every range already accepted
 * for its (m, unit), so no cell is ever counted twice: an exact duplicate or any overlap
 * (a whole-unit record overlaps every range of its unit) is dropped, with its found
 * records. A found record is kept iff the range (m, unit, lo) it belongs to was accepted
 * from its own shard. */
typedef struct {
    long nunits;
    hf_unit_record_t *units; /* the accepted ranges */
    long nfound;
    int64_t *found_m, *found_unit, *found_lo;
    char **found_record;
    /* the wall seconds of the runs that wrote the shards, each from its start (the stamp in
     * its shards' names) to the last write of its shards: what a resumed row adds to its
     * own run's seconds (docs/hdf5-format.md, "Shard files") */
    double runs_seconds;
} hf_shards_merged_t;

/* Merge every shard of dir with this fingerprint (hf_shard_read's errors; a corrupt
 * shard's message says to move it away). A directory holds the shards of one search
 * (one entry of a job), so every record is merged whatever row it names (the row is the
 * entry's index when the unit ran; a resumed job may have moved the directory). g
 * (initialised) gets the merge in place of its old value; on failure it keeps its value.
 * init: the empty value (a zeroed one is empty too). */
hf_err_t hf_shards_merge(const char *dir, const char *fingerprint, hf_shards_merged_t *g);
void hf_shards_merged_init(hf_shards_merged_t *g);
void hf_shards_merged_clear(hf_shards_merged_t *g);

/* The one encoding of a found support in a shard record:
 * {"keys": [[..]..], "weights": ["p/q"..], "values": [["p/q"..]..]} with m atoms, keys
 * m*d and the witness w's weights and values. Every part must be there: a record with
 * a missing witness would be saved as part of a finished unit and fail every later
 * merge. decode: w (initialised for d, dv) gets the record's m atoms; a record of
 * another shape or with a bad rational -> HF_ERR_CORRUPT. */
hf_err_t hf_found_encode(const hf_found_t *f, char **out);
hf_err_t hf_found_decode(const char *text, long m, hf_head_t *w);
/* An implicit support (f->keys NULL: a large row's, search.h) is recorded as its multiplier,
 * {"r": ["r_0", ...]} in decimal; is_implicit tells the two kinds apart, decode_r reads the
 * nr integers into r (initialised) or fails with HF_ERR_CORRUPT. */
int hf_found_is_implicit(const char *text);
hf_err_t hf_found_decode_r(const char *text, long nr, fmpz *r);

/* ---- a large row's supports, written by every process (witness.c) ----
 * The supports of a large row (search.h) are never held whole: every process writes the
 * atoms of its slices into one file through MPI-IO (parallel HDF5), as a group "supports"
 * with the attributes n, m, d, dv and the datasets of a row group (docs/hdf5-format.md);
 * hf_supports_in_file then refers to it and RESULT.h5 copies it in. */
typedef struct hf_witness_s hf_witness_t;

/* How the integers are stored, the same on every process: keys as unsigned bytes (every key
 * in 0..255) or int64; weights and weighted values as int64 (size 0) or as fixed-length
 * decimal strings of that size (NUL included; some integer passes 64 bits). */
typedef struct {
    int keys_u8;
    size_t wsize, usize;
} hf_witness_types_t;

/* Collective over comm: PATH.tmp created with n supports of m atoms. Errors (agreed: every
 * process returns the same) name PATH. */
hf_err_t hf_witness_create(MPI_Comm comm, const char *path, long n, long m, int d, int dv,
                           const hf_witness_types_t *ty, hf_witness_t **out);
/* Collective: one round of writes. Every process calls it the same number of times, with its
 * own status (an error of its own, or HF_OK) and its block, possibly empty: nruns runs, run i
 * atoms [run_a[i], run_a[i] + run_cnt[i]) of support run_j[i], their keys (d each), c and u
 * (dv each) one after the other. Returns the agreed status: a failure anywhere stops every
 * process, here. Polls the stop request (HF_ERR_INTERRUPTED). */
hf_err_t hf_witness_write(hf_witness_t *w, hf_err_t status, long nruns, const long *run_j,
                          const long *run_a, const long *run_cnt, const int64_t *keys,
                          const fmpz *c, const fmpz *u);
/* Collective: close, and with status HF_OK on every process commit the file as PATH (fsync,
 * rename, fsync of the directory: hf_io_commit, headfuse/core.h); otherwise remove it.
 * Returns the agreed status. */
hf_err_t hf_witness_close(hf_witness_t **w, hf_err_t status);

#endif
