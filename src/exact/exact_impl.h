/* Declarations shared inside the exact module (and by its unit tests). */
#ifndef HF_EXACT_IMPL_H
#define HF_EXACT_IMPL_H

#include <stdint.h>

#include <flint/fmpq.h>
#include <flint/fmpz.h>
#include <flint/fmpz_mat.h>

#include "headfuse/exact.h"

/* Supports with fewer unknowns than this in the direct form are never decided in R-space. */
#define HF_EXACT_RSPACE_MIN_COLS 96
/* The direct form builds a dense null space over its m (dv + 1) columns: beyond this many
 * (a few GB of integers) a support must be decided in R-space or not at all. */
#define HF_EXACT_DIRECT_MAX_COLS (1L << 15)

/* The prime of the modular rank test: 2^31 - 1. */
#define HF_MODP UINT32_C(2147483647)

/* Rank modulo HF_MODP of the R x n matrix whose rows are rows[0..R) (entries in
 * [0, HF_MODP)). Destroys the entries and permutes the row pointers; nzbuf holds n longs. */
long hf_exact_rank_modp(uint32_t **rows, long R, long n, long *nzbuf);

/* Exact phase-1 simplex (Bland's rule, dense fmpq tableau) deciding whether the columns of
 * Nc (m x r, row-major) have a combination lambda with Nc lambda > 0 componentwise.
 *
 * It solves  min sum(a)  s.t.  Nc^T y + a_{0..r-1} = 0,  1^T y + a_r = 1,  y, a >= 0.
 * - optimum 0: y (m entries) is a Gordan certificate, y >= 0, sum y = 1, y^T Nc = 0, so
 *   no lambda exists; returns 0.
 * - optimum z > 0: the optimal duals w give lambda = -w_{0..r-1} (r entries) with
 *   Nc lambda >= z > 0; returns 1.
 * lambda[r] and y[m] must be initialised; the unused one is zeroed. Returns -1 only if the
 * simplex contradicts itself (an internal error; callers verify results anyway). */
int hf_exact_lp_positive(const fmpz *Nc, long m, long r, fmpq *lambda, fmpq *y);

/* The tester's state (exact.c): P/Q term lists and reusable workspace. */
struct hf_exact_s {
    int d, dv;
    long nterms;
    long toff[HF_DV_MAX + 2]; /* terms of Q: [toff[0], toff[1]); P_j: [toff[j+1], toff[j+2]) */
    void *texp;               /* nterms * d exponents, tw bytes each (hf_exact_texp) */
    int tw;                   /* 1, 2 or 4: the narrowest that holds every exponent */
    fmpz *tcoef;              /* entry of M: Q's coefficient, or minus P_j's */
    uint32_t *tmod;           /* tcoef mod HF_MODP */
    int64_t emax[HF_D_MAX];   /* largest exponent of any term, per coordinate */
    int64_t qmin[HF_D_MAX];   /* smallest exponent of Q, per coordinate */
    int64_t qext[HF_D_MAX];   /* extent of Newt(Q) per coordinate: max - min exponent of Q */
    hf_exact_stats_t stats;

    /* packing layout of the current call: coordinate a sits in word wi[a] at bit sh[a] */
    int W;
    int wi[HF_D_MAX], sh[HF_D_MAX];

    /* workspace, grown on demand and reused by every call */
    long mcap;
    int64_t *skeys; /* mcap * d shifted keys */
    ulong *kpack;   /* mcap * d words (W used per key) */
    ulong *tpack;   /* nterms * d words */
    /* the monomials' rows: a table of its own, not core's hf_index_t, because every call
     * empties it (a new generation, O(1)) and probes it once per term of every key, with
     * the packed keys in the slots (no call back to compare them) */
    long hcap;        /* hash slots, a power of two */
    ulong *hkey;      /* hcap * d words */
    long *hrow;       /* row index stored in a slot */
    uint32_t *hstamp; /* slot is occupied iff hstamp == gen */
    uint32_t gen;
    long ecap;
    long *erow, *ecol, *eterm; /* nonzero entries of M */
    long mcells;               /* capacity of the modular matrix, in entries */
    uint32_t *ment;
    long rcap;
    uint32_t **mrows;
    long ncap;
    long *mnz;  /* column buffer of the elimination */
    long *rmap; /* rcap entries: row of M -> row of the pivot-row submatrix, or -1 */
};

/* Exponent a of term t: the terms' exponents are kept in the narrowest width that holds them
 * (a target of 3.5 * 10^7 terms in 14 variables took 3.9 GB as int64). */
static inline int64_t hf_exact_texp(const struct hf_exact_s *e, long t, int a)
{
    size_t k = (size_t)t * (size_t)e->d + (size_t)a;
    switch (e->tw) {
    case 1:
        return ((const uint8_t *)e->texp)[k];
    case 2:
        return ((const uint16_t *)e->texp)[k];
    default:
        return ((const uint32_t *)e->texp)[k];
    }
}

/* The decision in R-space (rspace.c, docs/math.md §7.1): K represents
 * T iff some R with Newt(R) + Newt(Q) = conv(K) makes Q.R positive on K and zero off K
 * and P.R zero off K. Unknowns: R's coefficients on the box of widths (K's widths minus
 * Q's extents), far fewer than the (dv + 1) m of M when K is large. Same answers as
 * exact_decide; the witness is (c, u) = (Q R, P R) on K. *applicable = 0 (nothing
 * decided) when the box would not fit the packing used here. */
hf_err_t hf_exact_rspace_decide(hf_exact_t *e, long m, const int64_t *keys, int use_mod,
                                int *feasible, hf_reason_t *reason, hf_head_t *witness,
                                int *applicable);

/* Size of the R-space unknown box for keys (0 when some width is below Q's extent, -1
 * when it exceeds `cap`, the axes taken in order: core's hf_box_points). */
long hf_exact_rspace_size(const hf_exact_t *e, long m, const int64_t *keys, long cap);

/* Shared by both decisions (exact.c). */
int hf_exact_certificate_ok(const fmpq *y, const fmpz *Nc, long m, long r);
/* Strict positivity on the null-space coordinates: rows Nc (m x r) of the positive part.
 * Nullity 1: sign inspection (reason SIGN when mixed); else the exact simplex, whose
 * Gordan certificate is checked (reason FARKAS). *found = 1 with lambda (r entries,
 * initialised by the caller) such that Nc lambda > 0. */
hf_err_t hf_exact_positivity(const fmpz *Nc, long m, long r, fmpq *lambda, int *found,
                             hf_reason_t *reason);
/* w = X[:, 0..r) lambda as a primitive integer vector of n entries (w initialised). */
void hf_exact_combine(const fmpz_mat_t X, long r, const fmpq *lambda, long n, fmpz *w);

#endif
