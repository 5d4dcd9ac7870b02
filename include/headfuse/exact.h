/* The exact support test (docs/math.md §2; how it is computed: docs/exact-test.md).
 *
 * A key set K represents T = P/Q iff there are c in Q^K, every c_k > 0, and u_k in
 * Q^dv with (sum u_k x^k) Q == P (sum c_k x^k). For fixed K this is a homogeneous
 * linear system M [u; c] = 0 plus strict positivity of c. The test decides it exactly:
 * a rank computation modulo a word-size prime rejects most supports; otherwise the
 * null space is computed over Z and strict positivity is decided by an exact rational
 * simplex, which returns either a positive point (the witness) or a Gordan/Farkas
 * certificate y >= 0, y != 0 with y.c = 0 on the whole null space, checked exactly. */
#ifndef HEADFUSE_EXACT_H
#define HEADFUSE_EXACT_H

#include "headfuse/algebra.h"
#include "headfuse/target.h"

/* Why a support was decided the way it was. */
#define HF_REASON_TABLE(X)                                                                         \
    X(HF_REASON_WITNESS, "witness", "feasible: exact rational witness checked")                    \
    X(HF_REASON_MODP_RANK, "modp_rank", "infeasible: null space trivial modulo a prime")           \
    X(HF_REASON_NULLSPACE_Q, "nullspace_q", "infeasible: null space trivial over Q")               \
    X(HF_REASON_SIGN, "sign", "infeasible: one-dimensional null space without a positive c")       \
    X(HF_REASON_FARKAS, "farkas", "infeasible: exact LP certificate y >= 0 with y.c = 0")          \
    X(HF_REASON_BAD_SUPPORT, "bad_support", "infeasible: support has repeated keys")

typedef enum {
#define HF_REASON_ENUM(code, name, text) code,
    HF_REASON_TABLE(HF_REASON_ENUM)
#undef HF_REASON_ENUM
} hf_reason_t;

const char *hf_reason_name(hf_reason_t r); /* "modp_rank" */
const char *hf_reason_text(hf_reason_t r); /* sentence for humans */

/* Counters kept by a tester, for throughput figures. */
typedef struct {
    long decided;
    long feasible;
    long by_reason[8];
} hf_exact_stats_t;

/* Opaque tester: P/Q term lists, prime images and reusable workspace. Not shared
 * between threads; each MPI rank makes its own. */
typedef struct hf_exact_s hf_exact_t;

/* Make a tester for a fraction (copied: the fraction may be cleared afterwards). */
hf_err_t hf_exact_create(const hf_fraction_t *f, hf_exact_t **out);
void hf_exact_destroy(hf_exact_t **e); /* accepts NULL and *e == NULL */

/* Decide the support of m keys (keys[m*d], any translation, distinct keys expected).
 * *feasible is 1 or 0, *reason says why. When feasible and witness != NULL, *witness
 * (initialised by the caller with hf_head_init) receives the head: the keys as given,
 * positive weights and values, already checked against P/Q exactly. Errors only for
 * failures (memory, limits), never for an infeasible support. */
hf_err_t hf_exact_check(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                        hf_reason_t *reason, hf_head_t *witness);

/* The same decision by one formulation only (references for tests and benchmarks):
 * direct = the linear system M in (u, c) of docs/math.md §2.2; rspace = the unknowns of R
 * with C = Q R (docs/math.md §7.1); *applicable = 0 when R-space cannot be used for these keys
 * (then nothing is decided). hf_exact_check picks one of them by the size of the keys. */
hf_err_t hf_exact_check_direct(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                               hf_reason_t *reason, hf_head_t *witness);
hf_err_t hf_exact_check_rspace(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                               hf_reason_t *reason, hf_head_t *witness, int *applicable);

/* Same decision with the modular shortcut switched off (reference for tests). */
hf_err_t hf_exact_check_nomod(hf_exact_t *e, long m, const int64_t *keys, int *feasible,
                              hf_reason_t *reason, hf_head_t *witness);

/* Counters since creation. */
const hf_exact_stats_t *hf_exact_stats(const hf_exact_t *e);

#endif
