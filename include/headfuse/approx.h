/* Below the exact minimum: the best single head with m atoms, found numerically.
 *
 * An approximate head has real keys K (m x d), biases b (m, log-weights) and values
 * V (m x dv) and computes f(q) = sum_i softmax_i(K q + b) v_i. For an atom budget m we
 * minimise the mean squared error to the target over N training queries
 * q ~ N(0, sigma^2 I) drawn from a seeded generator (the same numbers on every machine),
 * and report it with the error on an independent held-out sample.
 *
 * The optimisation is PETSc/TAO (default TAOBRGN: Gauss-Newton on the residual with the
 * analytic Jacobian; every TAO type works since the objective, gradient and a
 * Gauss-Newton Hessian are supplied too), configured from the PETSc options database.
 * Restarts are random starts seeded by (seed, m, restart index) only, plus warm starts:
 * the product-construction head and a given exact head (truncated greedily or padded
 * by splitting atoms to m atoms), and the best (m+1)-atom head with its least useful
 * atom deleted. Restarts of one budget are spread over the ranks (restart r on rank
 * r % size); the best per m does not depend on the number of ranks, bit for bit.
 *
 * Floating point only: nothing here decides an exact question. An error at rounding
 * level for m atoms is numerical evidence that an m-atom head exists, nothing more. */
#ifndef HEADFUSE_APPROX_H
#define HEADFUSE_APPROX_H

#include <mpi.h>
#include <stdint.h>

#include "headfuse/core.h"
#include "headfuse/target.h"

#define HF_APPROX_ATOMS_MAX 1024        /* largest atom budget */
#define HF_APPROX_SAMPLES_MAX 10000000L /* largest sample size */
#define HF_APPROX_RESTARTS_MAX 100000L  /* largest number of random restarts per budget */
#define HF_APPROX_REASON_LEN 32         /* converged-reason strings, with the NUL */
#define HF_APPROX_WORD_LEN 16           /* start-kind and status strings, with the NUL */

/* An error is "at rounding level" when its RMS is at most this times max(1, RMS of the
 * target on the same sample): double precision evaluation of an exact head lands near
 * 1e-16 relative, and a fit that has found an exact head gets within a few orders. */
#define HF_APPROX_ROUNDING_RMS 1e-10

/* ---------------------------------------------------------------- heads */

/* A head with real parameters. keys m*d and values m*dv are row-major. */
typedef struct {
    int m, d, dv;
    double *keys;
    double *biases;
    double *values;
} hf_approx_head_t;

/* Ownership as everywhere (docs/architecture.md, "Conventions"): init_empty makes the
 * empty head (m = 0, nothing allocated; cannot fail); init makes a zero head with m >= 1
 * atoms (biases 0: equal weights) from uninitialised memory, and on failure leaves the
 * empty head. Either way the caller clears it after. */
void hf_approx_head_init_empty(hf_approx_head_t *h);
hf_err_t hf_approx_head_init(hf_approx_head_t *h, int m, int d, int dv);
void hf_approx_head_clear(hf_approx_head_t *h); /* leaves the empty head */
/* dst (initialised) becomes a copy of src; on failure dst keeps its value. */
hf_err_t hf_approx_head_copy(hf_approx_head_t *dst, const hf_approx_head_t *src);
/* The exact head h in floating point: bias = log(weight), computed from the rational
 * without overflow. out initialised; replaced on success, kept on failure. */
hf_err_t hf_approx_head_from_exact(hf_approx_head_t *out, const hf_head_t *h);
/* out[dv] = f(q[d]), with the softmax shifted by its largest logit. HF_ERR_NOMEM (m
 * doubles of scratch). */
hf_err_t hf_approx_head_eval(const hf_approx_head_t *h, const double *q, double *out);

/* Parameter vector of a head: atom after atom, each as key (d), bias, value (dv). */
long hf_approx_nparams(int m, int d, int dv);
void hf_approx_head_pack(const hf_approx_head_t *h, double *x);
void hf_approx_head_unpack(hf_approx_head_t *h, const double *x);

/* Remove atom i (0 <= i < m, m >= 2) in place. */
void hf_approx_head_delete(hf_approx_head_t *h, int i);
/* Grow to m atoms by splitting the heaviest atom (largest bias, first on ties) into two
 * equal halves, repeatedly: the function does not change. */
hf_err_t hf_approx_head_split_to(hf_approx_head_t *h, int m);

/* Random numbers: hf_rng_t of core.h. */

/* ---------------------------------------------------------------- samples and error */

/* Queries q (n*d) ~ N(0, sigma^2 I) and the target's values t (n*dv) at them. */
typedef struct {
    long n;
    int d, dv;
    double *q;
    double *t;
    double target_rms; /* sqrt(mean t^2): the scale of "rounding level" */
} hf_approx_data_t;

/* The empty sample (n = 0; allocates nothing, cannot fail). */
void hf_approx_data_init(hf_approx_data_t *s);
/* Draw n >= 1 queries with the seed (sigma > 0) and evaluate the target into s
 * (initialised), replacing its value; on failure s keeps its value. */
hf_err_t hf_approx_data_make(hf_approx_data_t *s, const hf_target_t *t, long n, double sigma,
                             uint64_t seed);
void hf_approx_data_clear(hf_approx_data_t *s);

/* Mean squared error (1/(n dv)) sum_{n,j} (f_j(q_n) - t_nj)^2 of a head on a sample, into
 * *mse. HF_ERR_NOMEM (m + dv doubles of scratch). */
hf_err_t hf_approx_mse(const hf_approx_head_t *h, const hf_approx_data_t *s, double *mse);

/* Residual r[n*dv] (row n*dv + j) = (f_j(q_n) - t_nj) / sqrt(n dv), so |r|^2 is the mse,
 * and optionally (jac != NULL) its Jacobian with respect to the packed parameters,
 * column-major with leading dimension ld >= n*dv: jac[row + col*ld]. work must hold
 * m + 2*dv doubles. */
void hf_approx_residual(const hf_approx_head_t *h, const hf_approx_data_t *s, double *r,
                        double *jac, long ld, double *work);

/* 0.5 |r|^2 and its gradient J^T r (grad[nparams]) without forming J. work as above. */
double hf_approx_objective(const hf_approx_head_t *h, const hf_approx_data_t *s, double *grad,
                           double *work);

/* Index of the atom whose deletion leaves the smallest mse on s (m >= 2), and that mse. */
hf_err_t hf_approx_least_useful(const hf_approx_head_t *h, const hf_approx_data_t *s, int *atom,
                                double *mse);

/* ---------------------------------------------------------------- one TAO solve */

/* How one solve ended. */
typedef struct {
    double train_mse;                       /* recomputed from the final head */
    long iterations;                        /* TAO iterations */
    int reason;                             /* TaoConvergedReason */
    char reason_name[HF_APPROX_REASON_LEN]; /* "CONVERGED_GATOL" ... */
    double seconds;
} hf_approx_solve_info_t;

/* Register the PETSc log events (idempotent). PETSc must be initialised. */
hf_err_t hf_approx_log_register(void);

/* Minimise the training mse from the head h (m atoms; the result replaces it). Runs on
 * PETSC_COMM_SELF; not collective. Defaults: TAOBRGN (proximal weight 1e-10), gatol 1e-15, grtol 0,
 * f_min 1e-32, 500 iterations; the options database overrides them (TaoSetFromOptions). A PETSc
 * failure is HF_ERR_INTERNAL (HF_ERR_INPUT for an unknown type in the options). */
hf_err_t hf_approx_solve(const hf_approx_data_t *train, hf_approx_head_t *h,
                         hf_approx_solve_info_t *info);

/* ---------------------------------------------------------------- the whole table */

typedef struct {
    int m_lo, m_hi;              /* atom budgets m_lo..m_hi, 1 <= m_lo <= m_hi */
    long samples;                /* training queries */
    long test_samples;           /* held-out queries */
    long restarts;               /* random restarts per budget (>= 1) */
    double sigma;                /* query scale (> 0) */
    uint64_t seed;               /* base seed of samples and restarts */
    long product_max;            /* product-construction warm start when it has at most this many
                                  * atoms (0: none) */
    const hf_head_t *exact_head; /* an exact head of the target (e.g. a minimal witness), or
                                  * NULL; it becomes the "exact" warm start */
    int verbose;                 /* rank 0 prints one progress line per budget to stderr */
} hf_approx_opts_t;

/* samples 1000, test_samples 1000, restarts 8, sigma 1, seed 1, product_max 4096. */
void hf_approx_opts_default(hf_approx_opts_t *o);

/* The best head of one budget. */
typedef struct {
    int m;
    double train_mse, test_mse;
    long restarts;     /* solves run for this budget (random and warm) */
    long best_restart; /* index of the best (see docs/approx.md for the numbering) */
    long iterations;   /* TAO iterations of the best */
    char converged_reason[HF_APPROX_REASON_LEN];
    char start[HF_APPROX_WORD_LEN];  /* "random", "product", "exact", "delete", "split" */
    char status[HF_APPROX_WORD_LEN]; /* "rounding", "approx" or "missed" (see below) */
    double seconds;                  /* wall time of the budget, largest over ranks */
    hf_approx_head_t head;
} hf_approx_row_t;

/* One solve: the restart log. */
typedef struct {
    int32_t m;
    int32_t rank; /* rank that ran it */
    int64_t restart;
    char start[HF_APPROX_WORD_LEN];
    double train_mse, test_mse;
    int64_t iterations;
    char converged_reason[HF_APPROX_REASON_LEN];
    double seconds;
} hf_approx_restart_t;

/* A table of best heads against atoms. status of a row: "rounding" when the test error
 * is at rounding level (HF_APPROX_ROUNDING_RMS), "missed" when an exact head with at
 * most m atoms is known (exact_atoms) but the error is not at rounding level (a failure
 * of the numeric or the exact machinery), "approx" otherwise. */
typedef struct {
    char *name;
    int d, dv;
    long samples, test_samples, restarts;
    double sigma;
    uint64_t seed;
    double target_rms; /* RMS of the target on the test sample */
    long exact_atoms;  /* atoms of the smallest exact head known to the run, -1 none */
    char exact_source[HF_APPROX_WORD_LEN]; /* "product", "given" or "" */
    char tao_type[HF_APPROX_REASON_LEN];   /* TAO type used */
    int nrows;
    hf_approx_row_t *rows; /* ascending m */
    long nlog;
    hf_approx_restart_t *log; /* every solve, in order of (pass, m, restart) */
} hf_approx_result_t;

void hf_approx_result_init(hf_approx_result_t *r);
void hf_approx_result_clear(hf_approx_result_t *r);

/* 1 if an mse is at rounding level for a target of the given RMS (finite, and
 * sqrt(mse) <= HF_APPROX_ROUNDING_RMS * max(1, target_rms)). */
int hf_approx_is_rounding(double mse, double target_rms);

/* Collective over comm (PETSc initialised on every rank): fit every budget and fill res
 * (initialised by the caller) identically on every rank. Budgets run from m_hi down to
 * m_lo (so the deletion warm start has its (m+1)-solution), then a pass upwards makes
 * the error non-increasing in m by re-solving from the split (m-1)-solution where
 * needed. Errors are agreed on by all ranks (the failing rank's message everywhere). */
hf_err_t hf_approx_run(MPI_Comm comm, const hf_target_t *t, const hf_approx_opts_t *o,
                       hf_approx_result_t *res);

#endif
