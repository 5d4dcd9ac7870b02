/* Declarations shared inside the algebra module: the pieces both constructions of P/Q
 * use (a fraction's allocation, the target checks, a head as N/D, the normal form) and
 * the two constructions themselves (docs/exact-test.md §1). */
#ifndef HF_ALGEBRA_IMPL_H
#define HF_ALGEBRA_IMPL_H

#include "headfuse/algebra.h"

/* n polynomials, each 0, in ctx; NULL when out of memory. Free with
 * hf_fraction_polys_free (which accepts NULL). */
fmpz_mpoly_struct *hf_fraction_polys_new(int n, const fmpz_mpoly_ctx_t ctx);
void hf_fraction_polys_free(fmpz_mpoly_struct *p, int n, const fmpz_mpoly_ctx_t ctx);

/* f (uninitialised) initialised as the zero fraction in d variables (lex) with dv
 * numerators: P = 0, Q = 1. HF_ERR_NOMEM leaves it clearable (with dv = 0). */
hf_err_t hf_fraction_alloc(hf_fraction_t *f, int d, int dv);

/* Check the target's dimensions and every head (HF_ERR_INPUT naming the target and the
 * head). *name is the name to put in messages. */
hf_err_t hf_fraction_check_target(const hf_target_t *t, const char **name);

/* The common start of both constructions: f initialised as the zero fraction (P = 0,
 * Q = 1) in t's d variables with t's dv (1 and 1 when those are out of range, so that f
 * can always be cleared), then hf_fraction_check_target. */
hf_err_t hf_fraction_begin(hf_fraction_t *f, const hf_target_t *t, const char **name);

/* The head as N_1..N_dv over D with integer coefficients: each coordinate shifted to
 * minimum 0 over the head's keys, everything multiplied by the least common denominator
 * of the weights c_i and the c_i v_ij, atoms on the same key merged. N (dv polynomials)
 * and D must be initialised in ctx. */
void hf_fraction_head_nd(fmpz_mpoly_struct *N, fmpz_mpoly_t D, const hf_head_t *h,
                         const fmpz_mpoly_ctx_t ctx);

/* Put a fraction already in lowest terms into the unique form: no common monomial
 * factor, jointly primitive, Q(1,...,1) > 0. */
hf_err_t hf_fraction_normalise(hf_fraction_t *f, const char *name);

/* The construction by factors (fraction_factor.c): Q the lcm of the heads' denominators
 * from their irreducible factors, P_j = sum_h N_h,j Q/D_h, then only Q's known factors
 * tested against the P_j. reduce = 0 skips that last step (the tests' planted wrong
 * answer: the result is then P/Q over the lcm, not in lowest terms). *factored = 0 when
 * a denominator was not factored (a coordinate's degree over
 * HF_FRACTION_FACTOR_DEGREE_MAX, or FLINT gave up): f is then left as initialised and
 * the caller builds P/Q by gcds. f is uninitialised and initialised by the call (clear it
 * even on error), as hf_fraction_from_gcds: hf_fraction_from_target builds aside with
 * them. */
hf_err_t hf_fraction_from_factors(hf_fraction_t *f, const hf_target_t *t, int reduce,
                                  int *factored);

/* The heads grouped by primitive denominator, with the denominators' irreducible factors:
 * what the construction by factors (fraction_factor.c, docs/exact-test.md §1, steps 1 and
 * 2) and the slices (fraction_slice.c, docs/exact-test.md §1b) start from. */

/* A distinct irreducible factor of L, primitive with a positive leading coefficient so
 * that equal factors are identical polynomials, and its power in L. */
typedef struct {
    fmpz_mpoly_t poly;
    slong mult;     /* its power in L: the largest in any M */
    slong cur;      /* its power in the lcm of the groups summed so far */
    int may_cancel; /* 0 when it provably divides no P_j (fraction_factor.c, mark_cancellable) */
} hf_fraction_factor_t;

/* The heads sharing one primitive denominator M: N_j = sum (c / c_h) N_h,j over them,
 * c = lcm of their c_h, so that their sum is N / (c M). */
typedef struct {
    fmpz_mpoly_t M;
    fmpz_mpoly_struct *N;
    fmpz_t c;
    long *fidx;  /* M = prod factors[fidx[i]]^fexp[i] */
    slong *fexp; /* (the factor lists once factored) */
    long nf, fcap;
    int lo, hi; /* the first and last coordinate M uses (d and -1 when constant) */
    long first; /* the first head in the group, for a deterministic order */
} hf_fraction_group_t;

typedef struct {
    const fmpz_mpoly_ctx_struct *ctx;
    int dv;
    hf_fraction_group_t *groups;
    long ngroups, groups_cap;
    hf_fraction_factor_t *factors;
    long nfactors, factors_cap;
} hf_fraction_groups_t;

/* No groups and no factors, in ctx with dv value components (cannot fail). */
void hf_fraction_groups_init(hf_fraction_groups_t *b, const fmpz_mpoly_ctx_t ctx, int dv);

/* The heads of t (checked: hf_fraction_check_target, with b's d and dv) into groups,
 * sorted by the first, then the last coordinate their M uses (the order of the sum),
 * each M factored and the factors that may cancel marked. *factored = 0 when a
 * denominator was not factored (a coordinate's degree over
 * HF_FRACTION_FACTOR_DEGREE_MAX, or FLINT gave up): the groups are then formed but the
 * factor lists incomplete. */
hf_err_t hf_fraction_groups_make(hf_fraction_groups_t *b, const hf_target_t *t, int *factored);

/* Free the groups (their numerators are the bulk), keep the factors. */
void hf_fraction_groups_drop(hf_fraction_groups_t *b);

/* Free everything; b is as after init. */
void hf_fraction_groups_clear(hf_fraction_groups_t *b);

/* hf_fraction_slices_build with every window's lower end raised by `narrow` (0: the
 * real one): the tests' planted wrong answer, windows one too narrow that drop terms
 * (fraction_slice.c, docs/exact-test.md §1b). */
hf_err_t hf_fraction_slices_build_narrow(const hf_target_t *t, const hf_slice_plan_t *plan,
                                         const long *idx, long n, int narrow, hf_fraction_t *out,
                                         fmpz *contents);

/* Degrees above this in one coordinate of one head's denominator are not factored:
 * FLINT's factoring of 1 + x^n costs 0.03 s at n = 256, 0.6 s at 1024 and 30 s at
 * 4096 (docs/exact-test.md), while the gcd construction handles such heads quickly. */
#define HF_FRACTION_FACTOR_DEGREE_MAX 256

/* The construction by gcds (fraction_gcd.c), the program's only one before issue 22:
 * the heads added one at a time, the multivariate gcd of all numerators and the
 * denominator divided out after each. Kept as the fallback for denominators not
 * factored and as the reference the tests and bench/bench_fraction.c compare the
 * factor construction with. f initialised by the call. */
hf_err_t hf_fraction_from_gcds(hf_fraction_t *f, const hf_target_t *t);

#endif
