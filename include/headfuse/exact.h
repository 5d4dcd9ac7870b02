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
#include "headfuse/stop.h"

/* The exact module's phases for hf_stop_check (headfuse/stop.h). */
#define HF_EXACT_STOP_PHASES(X) X(EXACT, "testing a support exactly")
HF_EXACT_STOP_PHASES(HF_STOP_DECLARE)

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

/* ---- the test with its rows given directly (docs/exact-test.md §6c) ----
 * A large support of the cone engine is a union of classes of box points whose rows in
 * R-space are known (src/exact/rows.c): it is decided from a basis of the equalities' span
 * and one row per class on the support, never from its keys. */

/* The span over Q of integer vectors of length n, as a basis in echelon form (pivots
 * increasing, each row zero before its pivot). A plain value: init cannot fail and
 * allocates nothing; clear frees and leaves the empty span of length n. */
typedef struct {
    long n, rank, cap;
    fmpz *rows;  /* rank x n (room for cap rows) */
    long *pivot; /* each row's first nonzero column */
} hf_rowspan_t;

void hf_rowspan_init(hf_rowspan_t *s, long n);
void hf_rowspan_clear(hf_rowspan_t *s);
/* Add v (n entries): *grew = 1 when v was not in the span (then the rank rose by one).
 * Nothing is done once the rank is n. Errors: HF_ERR_NOMEM. */
hf_err_t hf_rowspan_add(hf_rowspan_t *s, const fmpz *v, int *grew);
/* Replace the basis by the span's unique one: its reduced row echelon form over Q, each
 * row scaled to a primitive integer vector with a positive pivot. */
void hf_rowspan_canonical(hf_rowspan_t *s);
/* 1 when a and b hold the same basis (the same span, once both are canonical). */
int hf_rowspan_equal(const hf_rowspan_t *a, const hf_rowspan_t *b);
/* dst (initialised) gets src's basis in place of its own; on failure it keeps its own. */
hf_err_t hf_rowspan_copy(hf_rowspan_t *dst, const hf_rowspan_t *src);

/* Is there R in Q^n with e.R = 0 for every e in the span eq and p.R > 0 for each of the npos
 * rows of pos (npos x n)? *feasible 1 or 0 and *reason as hf_exact_check's; when feasible, R
 * (n entries, initialised) gets a primitive integer solution, checked against every row in
 * integers. The decision depends only on the span and the rows (the span is put in its
 * canonical form first), so the same system gives the same R however its rows were
 * gathered. */
hf_err_t hf_exact_span_decide(const hf_rowspan_t *eq, const fmpz *pos, long npos, int *feasible,
                              hf_reason_t *reason, fmpz *R);

#endif
