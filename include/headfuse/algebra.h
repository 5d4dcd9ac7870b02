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
#include "headfuse/stop.h"

/* The algebra module's phases for hf_stop_check (headfuse/stop.h). */
#define HF_ALGEBRA_STOP_PHASES(X) X(FRACTION, "building P/Q")
HF_ALGEBRA_STOP_PHASES(HF_STOP_DECLARE)

typedef struct hf_fraction_s {
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

/* ------------------------------------------------------------ slices (docs/exact-test.md §1b)
 *
 * P/Q held in slices, each built on its own: fix the exponents of a few coordinates
 * coord[0] < ... < coord[ns-1] (Sigma) to values e; slice e of a polynomial is the set of
 * its terms whose exponents in Sigma are e. When the heads' primitive denominators are
 * pairwise coprime and no factor of one divides its own group's numerators ("windowed"),
 * each slice of P/Q (up to one constant common to all slices) is built alone by the
 * construction of docs/exact-test.md §1 with every partial product cut to the exponents that can
 * still reach slice e, so that building a slice takes memory proportional to the slice, not to P/Q;
 * otherwise the slices are cut from the whole P/Q. */

/* How P/Q is cut into slices. A plain value (no allocation). */
typedef struct {
    int d;                  /* the target's dimension */
    int ns;                 /* coordinates sliced; 0: one slice, the whole fraction */
    int coord[HF_D_MAX];    /* the sliced coordinates, increasing */
    int64_t ext[HF_D_MAX];  /* Q's degree in coord[i]: slice values 0..ext[i] */
    int64_t qdeg[HF_D_MAX]; /* Q's degree in every coordinate 0..d-1 (Newt(Q)'s extents) */
    long nslices;           /* prod (ext[i] + 1) */
    int windowed;           /* 1: each slice is built alone; 0: cut from the whole P/Q */
    char why[160];          /* when not windowed: why, in words ("" when windowed) */
} hf_slice_plan_t;

/* The plan for t into *plan (replaced; unchanged on failure). Sigma = the first
 * coordinates a (increasing) with allowed[a] != 0 and deg_a(Q) > 0, as few as give at
 * least `want` slices (all of them when they give fewer; none when want <= 1). allowed
 * may be NULL (every coordinate). Not collective. Cheap: from the heads' factored
 * denominators, without building P/Q (qdeg is exact: the factors that cancel and how
 * often are found from the heads sharing each factor, docs/exact-test.md §1b) -- except for a
 * target with a denominator that is not factored (degree over 256 in a coordinate), whose P/Q the
 * plan builds once to read qdeg. Errors: as hf_fraction_from_target; HF_ERR_LIMIT when the slices
 * would not fit a long. */
hf_err_t hf_fraction_slice_plan(const hf_target_t *t, const int *allowed, long want,
                                hf_slice_plan_t *plan);

/* The values e[0..ns) of slice `index` (0 <= index < nslices; mixed radix, coord[0] most
 * significant: index = sum e[i] prod_{i' > i} (ext[i'] + 1)). */
void hf_fraction_slice_values(const hf_slice_plan_t *plan, long index, int64_t *e);

/* A rough relative size of each slice, w[0..nslices) (for dealing slices to ranks
 * evenly): the number of products of one term from each group's denominator M_g whose
 * Sigma-exponents sum to the slice's values (Q's terms before terms merge; an upper
 * bound on the slice's terms of Q when windowed). Cheap: no P/Q. Errors: HF_ERR_INPUT (t
 * invalid, or a plan that is not valid or not made for t: another dimension or verdict,
 * or, when windowed, other degrees of Q), HF_ERR_NOMEM. */
hf_err_t hf_fraction_slice_weights(const hf_target_t *t, const hf_slice_plan_t *plan, double *w);

/* An estimate, in bytes, of the peak memory of building the largest slice alone
 * (hf_fraction_slices_build with n = 1), besides what the process already holds:
 * hf_fraction_estimate's figure times the largest share of hf_fraction_slice_weights
 * (the build holds the same polynomials as the whole construction, each cut to the
 * slice). Measured peaks are 0.48 to 0.68 of it on chain:d=12..14 with 16 and 64
 * slices (docs/exact-test.md §1b); an estimate, not a bound, like hf_fraction_estimate's.
 * When the plan is not windowed the whole P/Q is built and cut: then hf_fraction_estimate's
 * figure times (1 + the largest share). A call building n slices also holds the n
 * slices it returns. Errors: as hf_fraction_slice_weights. */
hf_err_t hf_fraction_slices_estimate(const hf_target_t *t, const hf_slice_plan_t *plan,
                                     double *bytes);

/* Build slices idx[0..n) (any order; an index given twice is built twice) of the plan
 * (made by hf_fraction_slice_plan for t). out[i] (initialised with hf_fraction_init) gets
 * slice idx[i] of P'/Q' = g (P/Q), for ONE integer g > 0 common to every slice of the
 * target (the content of the construction of docs/exact-test.md §1b, unknown until all slices are
 * seen), in t's d variables (the Sigma exponents stay in the exponent vectors); contents[i]
 * (initialised fmpz) gets the gcd of out[i]'s coefficients (0 for an empty slice). The
 * caller takes the gcd of the contents of ALL nslices slices (across ranks: this module
 * has no MPI), which is g, and divides each slice by it (hf_fraction_slice_divide): the
 * slices are then exactly those of hf_fraction_from_target's P/Q. When plan->windowed = 0
 * the whole P/Q is built once for the call and cut (then g = 1, and a caller should ask
 * for all its slices in one call). Outputs are replaced only when the call succeeds. Not
 * collective. Polls hf_stop_check(HF_STOP_FRACTION) between steps. Errors: as
 * hf_fraction_from_target; HF_ERR_INPUT for a plan not made for t (as
 * hf_fraction_slice_weights; when not windowed, the whole Q's degrees are compared with
 * the plan's) or an index out of range; HF_ERR_INTERRUPTED. */
hf_err_t hf_fraction_slices_build(const hf_target_t *t, const hf_slice_plan_t *plan,
                                  const long *idx, long n, hf_fraction_t *out, fmpz *contents);

/* Divide every coefficient of the slice by g (> 0, dividing all of them: the gcd of all
 * slices' contents). */
void hf_fraction_slice_divide(hf_fraction_t *slice, const fmpz_t g);

#endif
