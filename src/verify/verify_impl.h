/* What the verifier's files share (src/verify; not a public header). */
#ifndef HF_VERIFY_IMPL_H
#define HF_VERIFY_IMPL_H

#include <flint/fmpz_mpoly.h>

#include "headfuse/core.h"
#include "headfuse/target.h"

/* Polynomials of one head with integer coefficients: D = L sum c_i x^(k_i - s) and
 * N_j = L sum c_i v_ij x^(k_i - s), where s is the per-coordinate minimum of the keys
 * (so exponents are >= 0) and L the lcm of all coefficient denominators. Multiplying
 * N and D by the same L and x^-s leaves N/D, the head's function, unchanged. N holds
 * h->dv polynomials; ctx has h->d variables. Errors: HF_ERR_NOMEM. */
hf_err_t hf_verify_head_polys(const hf_head_t *h, fmpz_mpoly_t D, fmpz_mpoly_struct *N,
                              const fmpz_mpoly_ctx_t ctx);

#endif
