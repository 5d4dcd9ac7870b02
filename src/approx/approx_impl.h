/* Declarations shared inside the approximation module. */
#ifndef HF_APPROX_IMPL_H
#define HF_APPROX_IMPL_H

#include <petscsys.h>

#include "headfuse/approx.h"

/* PETSc log events (valid after hf_approx_log_register). */
extern PetscLogEvent hf_approx_ev_sample, hf_approx_ev_warm, hf_approx_ev_solve, hf_approx_ev_resid,
    hf_approx_ev_jac, hf_approx_ev_objgrad, hf_approx_ev_hess, hf_approx_ev_reduce;

/* Warm starts of one run: the exact heads in floating point and their greedy deletion
 * orders, so "truncated to m atoms" costs nothing per budget. */
typedef struct {
    hf_approx_head_t head; /* full head (m = natoms) */
    int *order;            /* order[k]: index (in the full head) of the k-th atom deleted */
    int have;
} hf_approx_warm_t;

/* Build a warm start from an exact head: convert and record the greedy deletion order
 * on the training sample (deterministic) down to min_m atoms. w is initialised by the
 * call. */
hf_err_t hf_approx_warm_make(hf_approx_warm_t *w, const hf_head_t *exact, int min_m,
                             const hf_approx_data_t *train);
void hf_approx_warm_clear(hf_approx_warm_t *w);
/* The warm start at m atoms: truncated along the deletion order, or split. out
 * initialised; replaced on success. */
hf_err_t hf_approx_warm_at(const hf_approx_warm_t *w, int m, hf_approx_head_t *out);

/* Name of a TaoConvergedReason ("CONVERGED_GATOL"). */
const char *hf_approx_reason_name(int reason);

/* The TAO type the options database selects (default TAOBRGN) into buf[n]. */
hf_err_t hf_approx_tao_type(char *buf, size_t n);

#endif
