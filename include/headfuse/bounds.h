/* Bounds on m*(T), the fewest atoms of one head equal to T (MATH.md sections 4-5).
 *
 * Lower bound: the face rule. Along a direction w a head tends to the head made of its
 * atoms maximising k.w; so any representation K has faces F_w(K), F_-w(K) representing
 * the limit targets T_w, T_-w, disjoint when T is not invariant along w. Hence
 * LB(T) = max_w LB(T_w) + LB(T_-w) over proven-non-invariant w, and 1 at the bottom.
 * Non-invariance is proven by exhibiting two points where T differs (exact arithmetic
 * modulo a prime at integer points); memoised on a canonical form of the limit
 * targets, so W_d costs polynomial time even for d = 64.
 *
 * Upper bound: the product construction: one head with keys the Minkowski sum of the
 * heads' key sets, weights multiplied, values added, coincident keys merged. */
#ifndef HEADFUSE_BOUNDS_H
#define HEADFUSE_BOUNDS_H

#include <flint/fmpz.h>

#include "headfuse/target.h"

/* Limit target T_w along direction w[d]: each head restricted to its face maximising
 * k.w (a target with the same d, dv). out is initialised by the call. */
hf_err_t hf_bounds_limit_target(const hf_target_t *t, const int64_t *w, hf_target_t *out);

/* Face-rule lower bound (valid for all keys, any span). */
hf_err_t hf_bounds_lower(const hf_target_t *t, fmpz_t lb);

/* The same bound; *complete = 0 when a work or depth cap cut the recursion short (lb is
 * still a valid lower bound, possibly weaker than the uncapped rule would give). */
hf_err_t hf_bounds_lower_ex(const hf_target_t *t, fmpz_t lb, int *complete);

/* Size of the product construction's head: |A_1 + ... + A_H| with coincident keys
 * merged (exact; blocks of heads on disjoint coordinates multiply). *exact = 0 when
 * a block was too large to enumerate and ub is the product of head sizes instead. */
hf_err_t hf_bounds_upper(const hf_target_t *t, fmpz_t ub, int *exact);

/* The product head itself, keys in canonical position (per-coordinate minimum 0),
 * sorted lexicographically. HF_ERR_LIMIT if it would exceed max_atoms. out must be
 * initialised with hf_head_init(out, t->d, t->dv). */
hf_err_t hf_bounds_product_head(const hf_target_t *t, long max_atoms, hf_head_t *out);

#endif
