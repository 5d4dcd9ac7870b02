/* APPROX.h5: the table of best m-atom approximations written by `headfuse approx`
 * (layout in docs/approx.md): the root attributes (format "headfuse-approx-1", the
 * provenance of RESULT.h5 and the run's settings), /table (one row per atom budget),
 * /heads/m<M> (the best head of each budget in float64) and /restarts (every solve).
 *
 * Written to PATH.tmp and renamed, so a crash never leaves a half-written file. The
 * reader validates the structure and names the path and the object on any problem. */
#ifndef HEADFUSE_APPROX_STORE_H
#define HEADFUSE_APPROX_STORE_H

#include "headfuse/approx.h"

#define HF_APPROX_FORMAT "headfuse-approx-1"

/* Provenance and context stored beside the table; strings may be NULL when writing
 * (stored as ""). */
typedef struct {
    char *version, *git_commit, *command_line, *host, *start_time, *end_time;
    int32_t ranks;
    char *target_json; /* the target, as docs/targets.md JSON */
    char *lower_bound; /* face-rule lower bound on m* in decimal, "" if not computed */
} hf_approx_prov_t;

void hf_approx_prov_init(hf_approx_prov_t *p);
void hf_approx_prov_clear(hf_approx_prov_t *p);

/* Write r and p to path atomically. Errors (HF_ERR_IO) name the path and the step. */
hf_err_t hf_approx_file_write(const char *path, const hf_approx_result_t *r,
                              const hf_approx_prov_t *p);

/* Read a file written by hf_approx_file_write into r and p (initialised), replacing their
 * values; on failure they keep them. Missing -> HF_ERR_IO; not an approximation file, truncated
 * or inconsistent -> HF_ERR_CORRUPT, naming the path and what is wrong. */
hf_err_t hf_approx_file_read(const char *path, hf_approx_result_t *r, hf_approx_prov_t *p);

/* 1 if path is an HDF5 file whose root attribute "format" is HF_APPROX_FORMAT, else 0,
 * recording no error: for dispatching `headfuse table` between file kinds. -1 with an
 * HF_ERR_CORRUPT error naming the file if HDF5 crashed or hung opening it (the read
 * guard of src/store/read_guard.c). */
int hf_approx_file_detect(const char *path);

#endif
