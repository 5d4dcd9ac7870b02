/* Declarations shared inside the exact module (and by its unit tests). */
#ifndef HF_EXACT_IMPL_H
#define HF_EXACT_IMPL_H

#include <stdint.h>

#include <flint/fmpq.h>
#include <flint/fmpz.h>

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

#endif
