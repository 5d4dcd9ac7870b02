/* Exact algebra: a target as one rational function T = P/Q in lowest terms.
 *
 * With x_j = exp(q_j) every head is N/D with D = sum c_i x^k_i. Adding the heads'
 * fractions and cancelling the multivariate gcd gives numerators P_1..P_dv over one
 * denominator Q with integer coefficients, gcd(P_1..P_dv, Q) = 1, no common monomial
 * factor, coefficients jointly primitive and Q(1,...,1) > 0. This form is unique, so
 * two targets are equal functions iff their fractions are identical. */
#ifndef HEADFUSE_ALGEBRA_H
#define HEADFUSE_ALGEBRA_H

#include <flint/fmpz_mpoly.h>

#include "headfuse/target.h"

/* Products of head sizes above this are refused with HF_ERR_LIMIT: P/Q would not fit. */
#define HF_FRACTION_TERMS_MAX (1L << 20)

typedef struct {
    int d, dv;
    fmpz_mpoly_ctx_t ctx; /* d variables, lex order */
    fmpz_mpoly_struct *P; /* dv numerators */
    fmpz_mpoly_t Q;
} hf_fraction_t;

/* Build P/Q of a target. f is initialised by the call (clear it even on error). */
hf_err_t hf_fraction_from_target(hf_fraction_t *f, const hf_target_t *t);
void hf_fraction_clear(hf_fraction_t *f);

/* 1 if the two fractions are identical (same d, dv and polynomials). */
int hf_fraction_equal(const hf_fraction_t *a, const hf_fraction_t *b);

/* 1 if T is constant (every P_j is a rational multiple of Q). */
int hf_fraction_is_constant(const hf_fraction_t *f);

#endif
