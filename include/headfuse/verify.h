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

#endif
