/* The independent verifier: does a head equal a target, exactly?
 *
 * It shares no code with the exact test. It works from the target's heads (not from
 * P/Q): with D_all = prod_h D_h and N_all = sum_h N_h prod_{g != h} D_g it checks
 * U * D_all == C * N_all in exact integer arithmetic (U = sum c_k v_k x^k,
 * C = sum c_k x^k), plus every weight > 0. A numeric cross-check evaluates both at
 * random queries with a stable log-sum-exp. */
#ifndef HEADFUSE_VERIFY_H
#define HEADFUSE_VERIFY_H

#include <stdint.h>

#include "headfuse/target.h"

/* *ok = 1 iff head h represents target t exactly (all weights > 0 and the identity
 * holds). On *ok = 0, if why != NULL a static string says what failed. */
hf_err_t hf_verify_head(const hf_target_t *t, const hf_head_t *h, int *ok, const char **why);

/* Largest |f_head(q) - T(q)| over n queries q ~ N(0, sigma^2 I) from a seeded
 * generator (same seed, same queries on every machine). */
double hf_verify_numeric(const hf_target_t *t, const hf_head_t *h, int n, double sigma,
                         uint64_t seed);

/* ---- one slice at a time (src/verify/slices.c; docs/exact-test.md §7b) ----
 * A large witness is checked where the keys' first p coordinates take the values e, against
 * the same slice of D' (the product of the target's distinct denominators) and N' (so that
 * T = N' / D'), built from the heads by products cut to windows: memory in proportion to the
 * slice. A witness (C, U) with C = lambda D' equals T iff U = lambda N'; one that is not such a
 * multiple is left to hf_verify_head. */
typedef struct hf_verify_slicer_s hf_verify_slicer_t;

/* The slicer of t by its first p coordinates (0 <= p <= d): the heads' distinct
 * denominators and their numerators. Errors: HF_ERR_INPUT (a head), HF_ERR_NOMEM. */
hf_err_t hf_verify_slicer_create(const hf_target_t *t, int p, hf_verify_slicer_t **out);
void hf_verify_slicer_destroy(hf_verify_slicer_t **v); /* accepts NULL */
/* D''s degree in each of the first p coordinates (ext[p]): its slices' values are 0..ext. */
void hf_verify_slicer_extent(const hf_verify_slicer_t *v, int64_t *ext);

/* What one slice says. */
enum {
    HF_VERIFY_SLICE_OK,           /* C_e = lambda_e D'_e and U_e = lambda_e N'_e (or all zero) */
    HF_VERIFY_SLICE_NOT_MULTIPLE, /* C is not a multiple of D' here: check the whole */
    HF_VERIFY_SLICE_FAILED,       /* C_e = lambda_e D'_e but U_e != lambda_e N'_e: not T */
    HF_VERIFY_SLICE_BAD_WEIGHT    /* a weight is not positive */
};

/* The slice e[p] of a witness: its n atoms, keys[n*d] (every key with first coordinates e,
 * each once), weights c[n] and weighted values u[n*dv] (hf_supports_t's integers). *result
 * says what it found; when C_e is a nonzero multiple of D'_e, *has_lambda = 1 and lambda
 * (initialised) gets the factor. The witness equals T when every slice of the prefix box
 * (hf_verify_slicer_extent) is OK with one lambda for all, and no key lies outside it. Not
 * collective. Errors: HF_ERR_NOMEM only. */
hf_err_t hf_verify_slice_check(hf_verify_slicer_t *v, const int64_t *e, long n,
                               const int64_t *keys, const fmpz *c, const fmpz *u, fmpq_t lambda,
                               int *has_lambda, int *result);

#endif
