/* Exact algebra: a target as one rational function T = P/Q in lowest terms.
 *
 * With x_j = exp(q_j) every head is N/D with D = sum c_i x^k_i (each head's keys shifted
 * to minimum 0 per coordinate). Adding the heads' fractions over the lcm of their
 * denominators and cancelling what P and Q share gives numerators P_1..P_dv over one
 * denominator Q with integer coefficients, gcd(P_1..P_dv, Q) = 1, no common monomial
 * factor, coefficients jointly primitive and Q(1,...,1) > 0. This form is unique, so
 * two targets are equal functions iff their fractions are identical. The lcm is built
 * from the irreducible factors of the heads' denominators and only those factors are
 * tested for cancellation (docs/exact-test.md §1); no size limit is applied:
 * hf_fraction_estimate says beforehand how much memory the construction will take. */
#ifndef HEADFUSE_ALGEBRA_H
#define HEADFUSE_ALGEBRA_H

#include <flint/fmpz_mpoly.h>

#include "headfuse/target.h"

typedef struct {
    int d, dv;
    fmpz_mpoly_ctx_t ctx; /* d variables, lex order */
    fmpz_mpoly_struct *P; /* dv numerators */
    fmpz_mpoly_t Q;
} hf_fraction_t;

/* Fractions follow the ownership rule (docs/architecture.md, "Conventions"): init makes
 * the empty fraction (d = 1, dv = 0; allocates nothing, cannot fail), the value an output
 * is initialised to; clear frees it and leaves the empty fraction, and the caller clears
 * every fraction it initialised, on success and on error alike. */
void hf_fraction_init(hf_fraction_t *f);

/* Build P/Q of a target into f (initialised), replacing its value; on failure f keeps its
 * value. Not collective. Errors: HF_ERR_INPUT (d, dv or a head invalid, naming the target and the
 * head), HF_ERR_NOMEM, HF_ERR_LIMIT (FLINT could not take a gcd of denominators of
 * huge degree). Takes about the memory hf_fraction_estimate gives, and time roughly
 * linear in the number of terms of P and Q. */
hf_err_t hf_fraction_from_target(hf_fraction_t *f, const hf_target_t *t);

/* An estimate, in bytes, of the peak memory hf_fraction_from_target(f, t) takes,
 * computed from the heads' keys without building P/Q (milliseconds: it enumerates at
 * most 2^14 exponent vectors per group of heads). Not collective.
 *
 * It is B * (dv + 4) * (bytes per term): the construction holds Q, the dv numerators,
 * a cofactor, a product and one sum's temporary, each of at most B terms, where B
 * bounds the terms of Q and of each P_j: the smaller of
 *   - the box count prod_a (1 + sum of the distinct denominators' degrees in x_a), and
 *   - the product, over groups of heads taken in the order of the coordinates they use,
 *     of the number of distinct keys of the group's product head (its Minkowski sum of
 *     key sets), each group grown up to 2^14 keys.
 * Heads with the same denominator up to a constant count once (Q holds it once). A term
 * is a coefficient (8 bytes, more when the coefficients may pass 62 bits) and the packed
 * exponent vector (8 bytes per word, as FLINT packs it).
 *
 * How loose: when the distinct denominators are pairwise coprime (every built-in
 * family), Q is their product, B bounds it from above and is exact when the groups use
 * disjoint coordinates (wd, wdw, multi); chain:d=14 has 17,651,648 terms against
 * B = 21,307,328 (1.21x). When denominators share factors Q is a proper divisor of that
 * product and usually much smaller (B is then an estimate, not a bound: a divisor can
 * have more terms than the product, which takes cyclotomic factors to arrange). The
 * process's measured peak is 0.6 to 0.85 of the estimate on the families (chain:d=14:
 * 1.54 GiB against 2.38 GiB; docs/performance.md §13). Targets built by gcds
 * (a denominator of degree over 256) hold polynomials of the same sizes.
 * Errors: as hf_fraction_from_target for invalid targets, HF_ERR_NOMEM. */
hf_err_t hf_fraction_estimate(const hf_target_t *t, double *bytes);
/* B above: the bound (an estimate when denominators share factors) on the terms of Q and of
 * each P_j. Not collective; as cheap as hf_fraction_estimate. */
hf_err_t hf_fraction_estimate_terms(const hf_target_t *t, double *terms);
void hf_fraction_clear(hf_fraction_t *f);

/* 1 if the two fractions are identical (same d, dv and polynomials). */
int hf_fraction_equal(const hf_fraction_t *a, const hf_fraction_t *b);

/* 1 if T is constant (every P_j is a rational multiple of Q). */
int hf_fraction_is_constant(const hf_fraction_t *f);

#endif
