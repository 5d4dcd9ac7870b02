/* Declarations shared inside the bounds module: target checks, byte-string maps, the
 * hyperplane-arrangement counter behind the Newton vertex count, the banded
 * Minkowski-sum count and the face-rule-only lower bound (kept for tests). The set of
 * integer vectors and the sort with a context are core's (core.h). */
#ifndef HF_BOUNDS_IMPL_H
#define HF_BOUNDS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <flint/fmpq_poly.h>
#include <flint/fmpz.h>
#include <flint/fmpz_poly.h>

#include "headfuse/core.h"
#include "headfuse/target.h"

/* Check a target passed to a bounds function: dimensions and every head valid. */
hf_err_t hf_bounds_check_target(const hf_target_t *t, const char *who);

/* 1 if the head is a constant function: all keys equal or all value vectors equal. */
int hf_bounds_head_is_constant(const hf_head_t *h);

/* Growable byte string (serialisations of canonical forms). Zero-initialise. */
typedef struct {
    unsigned char *p;
    size_t n, cap;
} hf_bounds_buf_t;

hf_err_t hf_bounds_buf_put(hf_bounds_buf_t *b, const void *x, size_t len);
hf_err_t hf_bounds_buf_i64(hf_bounds_buf_t *b, int64_t x);
hf_err_t hf_bounds_buf_fmpz(hf_bounds_buf_t *b, const fmpz_t x);
void hf_bounds_buf_clear(hf_bounds_buf_t *b);

/* Map from byte strings to integers: entries in insertion order, found through core's
 * hash index. An entry pointer is valid until the next insertion. */
typedef struct {
    unsigned char *key;
    size_t len;
    fmpz val;
} hf_bounds_bytemap_entry_t;

typedef struct {
    hf_bounds_bytemap_entry_t *entry; /* n entries */
    long n, cap;
    hf_index_t index; /* hash of a key -> its entry */
    long max;         /* entries beyond this are not stored (find gives NULL) */
} hf_bounds_bytemap_t;

/* An empty map (allocates nothing, cannot fail; a zeroed map is empty too). */
void hf_bounds_bytemap_init(hf_bounds_bytemap_t *m, long max);
void hf_bounds_bytemap_clear(hf_bounds_bytemap_t *m);
/* The entry of key, or NULL. */
hf_bounds_bytemap_entry_t *hf_bounds_bytemap_get(const hf_bounds_bytemap_t *m,
                                                 const unsigned char *key, size_t len);
/* The entry of key, inserted with value 0 if new; *out = NULL when the map is full. */
hf_err_t hf_bounds_bytemap_find(hf_bounds_bytemap_t *m, const unsigned char *key, size_t len,
                                hf_bounds_bytemap_entry_t **out);
/* Remember key -> val (nothing when the map is full). */
hf_err_t hf_bounds_bytemap_put(hf_bounds_bytemap_t *m, const unsigned char *key, size_t len,
                               const fmpz_t val);

/* Regions of central hyperplane arrangements {x : u.x = 0} (zonotope.c), by
 * deletion-contraction with a memo on a canonical form of the vector configuration. */
typedef struct {
    hf_bounds_bytemap_t memo;
    long work;     /* configurations counted (memo misses) */
    long work_max; /* beyond this the count gives up (unknown) */
} hf_bounds_arr_t;

hf_err_t hf_bounds_arr_init(hf_bounds_arr_t *A);
void hf_bounds_arr_clear(hf_bounds_arr_t *A);

/* Regions of the arrangement with normals vecs[m][n] (row-major; zero and parallel
 * vectors allowed: a zero vector is no hyperplane, parallel ones are one). *known = 0
 * when the work cap or an int64 overflow stopped the count (count is then 0). */
hf_err_t hf_bounds_arr_regions(hf_bounds_arr_t *A, const int64_t *vecs, long m, int n, fmpz_t count,
                               int *known);

/* The line decomposition of docs/math.md §5.7 (zonotope.c). When every non-constant head of t
 * has its keys on a line, *all_lines = 1 and the reduced denominator of t is
 * prod_u q_u(x^u) over primitive directions u (first nonzero coordinate positive):
 * gens[m][d] are the u with deg q_u >= 1 and lens[m] those degrees, so Newt(Q) is a
 * translate of the zonotope sum_u [0, lens_u * u]. gens and lens are malloc'd (NULL
 * when m = 0); the caller frees them. */
hf_err_t hf_bounds_line_generators(const hf_target_t *t, int *all_lines, int64_t **gens,
                                   long **lens, long *m);

/* The same for the heads heads[nh] of t only. */
hf_err_t hf_bounds_line_groups(const hf_target_t *t, const int *heads, int nh, int *all_lines,
                               int64_t **gens, long **lens, long *m);

/* The line decomposition of docs/math.md §5.7 with its factors: when every non-constant
 * head lies on a line, the reduced denominator is prod_i q_i(x^{u_i}) up to a unit, one
 * factor per direction u_i (primitive, first nonzero coordinate positive) with
 * deg q_i >= 1, q_i(0) != 0. */
typedef struct {
    int d;
    long m;              /* factors */
    int64_t *u;          /* m x d directions */
    fmpq_poly_struct *q; /* q_i(y), y = x^{u_i} */
    uint64_t *mask;      /* coordinates where u_i is not 0 */
} hf_bounds_lines_t;

void hf_bounds_lines_init(hf_bounds_lines_t *L, int d); /* empty; cannot fail */
void hf_bounds_lines_clear(hf_bounds_lines_t *L);
/* The factors of the heads heads[nh] of t into L (initialised; replaced). *all_lines = 0
 * (L empty) when some non-constant head is not on a line. */
hf_err_t hf_bounds_line_factors(const hf_target_t *t, const int *heads, int nh, int *all_lines,
                                hf_bounds_lines_t *L);

/* Negative real roots, with multiplicity, of q (q(0) != 0): a squarefree factorisation,
 * then Sturm sequences on each factor (exact, FLINT; faces3d.c). */
long hf_bounds_negative_roots(const fmpz_poly_t q);

/* M(q) of one variable (docs/math.md §12.4): the fewest terms of a nonzero multiple of q
 * with positive coefficients, decided exactly or bounded. *lb: M(q) >= lb (1; 2; 3 when
 * no binomial multiple has positive coefficients; r + 1 when q has r negative real roots);
 * *ub: M(q) <= ub when ub > 0 (a positive multiple with ub terms is known: q itself when its
 * coefficients have one sign, or the binomial found), 0 when none is known; M(q) = lb
 * exactly when lb == ub. *why: static words saying what decided it. q nonzero. Not
 * collective. */
hf_err_t hf_bounds_m1(const fmpq_poly_t q, long *lb, long *ub, const char **why);

/* Lower bounds on M of products of line factors (docs/math.md §12): a state is a set K of
 * coordinates (bit mask) standing for F_K, the product of the factors whose coordinates
 * lie in K. The bound is the product over connected components; on one coordinate the
 * one-variable M (Theorem 12.4); on a larger component the best of its vertex count, the
 * slices over each coordinate y (Theorem 12.2: M(F_{K - y}) times M of the factors through
 * y with the other variables at 1) and, on two coordinates, Lemma 12.7. Memoised. */
typedef struct hf_bounds_mlb_s hf_bounds_mlb_t;

/* For the heads heads[nh] of t: *out (NULL when some non-constant head is not on a line).
 * arr must outlive it. */
hf_err_t hf_bounds_mlb_create(const hf_target_t *t, const int *heads, int nh, hf_bounds_arr_t *arr,
                              hf_bounds_mlb_t **out);
void hf_bounds_mlb_destroy(hf_bounds_mlb_t **c); /* accepts NULL, leaves NULL */
/* The bound for F_K. */
hf_err_t hf_bounds_mlb(hf_bounds_mlb_t *c, uint64_t K, fmpz_t out);
/* The coordinates any factor uses. */
uint64_t hf_bounds_mlb_coords(const hf_bounds_mlb_t *c);
/* *n: a lower bound on M_y of the product of the factors through coordinate y with every
 * other variable set to 1 (B(1, y) of Theorem 12.2); 1 when no factor uses y. */
hf_err_t hf_bounds_mlb_slice(hf_bounds_mlb_t *c, int y, long *n);

/* The slices bound of t (docs/math.md, Corollary 12.3): the product over the blocks of t
 * (heads on disjoint coordinates) of a proven lower bound on M of each block's reduced
 * denominator: hf_bounds_mlb for a block whose heads lie on lines, its vertex count for any
 * other. count/known: t's vertex count as hf_bounds_newton_count gives it; when unknown,
 * the blocks not on lines count 1. */
hf_err_t hf_bounds_slices(const hf_target_t *t, hf_bounds_arr_t *arr, const fmpz_t count, int known,
                          fmpz_t slices);

/* Blocks of the non-constant heads of t: used[h] has bit j set when head h is not
 * constant and its keys differ in coordinate j; heads sharing a used coordinate are in
 * one block. block[h] is the block number (0, 1, ... in order of first head) or -1 for
 * a constant head; *nblocks their number (limit.c). */
void hf_bounds_blocks(const hf_target_t *t, uint64_t *used, int *block, int *nblocks);

/* When a block of heads not on lines goes through P/Q and cddlib: the product of its
 * head sizes at most terms_max and at most dim_max coordinates used. */
typedef struct {
    long terms_max;
    int dim_max;
} hf_bounds_cdd_limits_t;

/* Vertices of Newt(Q) of t's reduced denominator (newton_count.c): blocks of heads on
 * disjoint coordinates multiply; a block whose heads lie on lines counts by the
 * arrangement; any other block through cddlib within lim. *known = 0 when some block
 * could not be counted. */
hf_err_t hf_bounds_newton_count(const hf_target_t *t, hf_bounds_arr_t *A,
                                const hf_bounds_cdd_limits_t *lim, fmpz_t count, int *known);

/* |A_1 + ... + A_H| restricted to coords[nc] for the given heads, by the transfer DP
 * over the coordinates in the order given (upper_dp.c). *ok = 0 when a state or work
 * cap stopped it (n is then unchanged). */
hf_err_t hf_bounds_upper_dp(const hf_target_t *t, const int *heads, int nh, const int *coords,
                            int nc, fmpz_t n, int *ok);

/* The same count by enumerating the sum (upper.c); *ok = 0 over the enumeration cap. */
hf_err_t hf_bounds_upper_enum(const hf_target_t *t, const int *heads, int nh, const int *coords,
                              int nc, fmpz_t n, int *ok);

/* The face rule alone (docs/math.md §4.3), without Newton polytopes anywhere in the recursion: the
 * bound hf_bounds_lower gave before the Newton rules (tests compare the two). */
hf_err_t hf_bounds_lower_face_rule(const hf_target_t *t, fmpz_t lb, int *complete);

/* Rule (c) alone: the best total of LB(T_w) over disjoint faces of Newt(Q), on targets
 * small enough for hf_bounds_lower_info to evaluate it (*done = 0 otherwise). Tests
 * check that it equals the vertex count. */
hf_err_t hf_bounds_lower_disjoint(const hf_target_t *t, fmpz_t out, int *done);

#endif
