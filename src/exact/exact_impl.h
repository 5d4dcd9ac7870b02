/* Declarations shared inside the exact module (and by its unit tests). */
#ifndef HF_EXACT_IMPL_H
#define HF_EXACT_IMPL_H

#include <flint/fmpq.h>
#include <flint/fmpz.h>

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
