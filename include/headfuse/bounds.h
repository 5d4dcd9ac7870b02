/* Bounds on m*(T), the fewest atoms of one head equal to T (docs/math.md §4, §5, §6).
 *
 * Lower bound, the best of five proven rules (docs/bounds.md):
 *   face rule: along a direction w a head tends to the head made of its atoms
 *     maximising k.w; so any representation K has faces F_w(K), F_-w(K) representing
 *     the limit targets T_w, T_-w, disjoint when T is not invariant along w. Hence
 *     LB(T) >= LB(T_w) + LB(T_-w) over proven-non-invariant w (proof: two points where
 *     T differs, exact arithmetic modulo a prime), memoised on a canonical form;
 *   Newton vertices: |K| >= |vert Newt(Q)| for the reduced denominator Q (Theorem 5.2), counted
 *     without P/Q when the heads' keys lie on lines (a zonotope: regions of a
 *     hyperplane arrangement), else through cddlib on small targets (newton.h);
 *   disjoint faces: |K| >= sum of LB(T_w) over disjoint faces of Newt(Q)
 *     (Theorem 5.3);
 *   slices: every support is the support of a positive multiple C = Q R, so |K| >= M(Q),
 *     the fewest terms of such a multiple; M(Q) >= the product over blocks of heads on
 *     disjoint coordinates of a bound on each block's M: its vertex count, for a block on
 *     one coordinate M itself, decided exactly, for a block of line heads its slices
 *     (docs/math.md §12);
 *   end slices (hf_bounds_lower_info only): the two extreme levels of a support along a
 *     coordinate are supports of the limit targets, the levels between positive multiples
 *     (docs/math.md §12.8).
 * The face rule and the disjoint faces never exceed the vertex count (docs/math.md
 * §5.5), so they matter where the vertex count is out of reach; there the
 * face rule runs with the vertex counts of the limit targets below it.
 *
 * Upper bound: the product construction: one head with keys the Minkowski sum of the
 * heads' key sets, weights multiplied, values added, coincident keys merged. Its size
 * is counted exactly without enumeration when the heads are banded along the
 * coordinates (a transfer DP), else by enumeration up to a cap. */
#ifndef HEADFUSE_BOUNDS_H
#define HEADFUSE_BOUNDS_H

#include <flint/fmpz.h>

#include "headfuse/target.h"

/* Limit target T_w along direction w[d]: each head restricted to its face maximising
 * k.w (a target with the same d, dv). out initialised (hf_target_init_empty); replaced
 * on success, kept on failure. */
hf_err_t hf_bounds_limit_target(const hf_target_t *t, const int64_t *w, hf_target_t *out);

/* The lower bound LB(T) (valid for all keys, any span): the best of the face rule, the
 * Newton vertex count and the slices (the disjoint-faces rule cannot add to these; see
 * hf_bounds_lower_info). Not collective. */
hf_err_t hf_bounds_lower(const hf_target_t *t, fmpz_t lb);

/* The same bound; *complete = 0 when a work or depth cap cut the face-rule recursion
 * short (lb is still a valid lower bound, possibly weaker than the uncapped rules would
 * give). A bound from the vertex count is complete. */
hf_err_t hf_bounds_lower_ex(const hf_target_t *t, fmpz_t lb, int *complete);

/* The rules that give a lower bound, one name each: bounds' own (hf_lower_t.rule) and the
 * minima certified over all integer keys (search.h, hf_certificate_t.rule), as a row's
 * lb_rule records them; a short form for plots and the words the command line prints.
 * tools/hf_bounds.py keeps a copy of the names and short forms (tests/python checks it). */
#define HF_RULE_TABLE(X)                                                                           \
    X(HF_RULE_TRIVIAL, "trivial", "trivial", "trivial: at least one atom")                         \
    X(HF_RULE_FACE, "face_rule", "face rule", "face rule")                                         \
    X(HF_RULE_NEWTON_VERTICES, "newton_vertices", "Newton vertices",                               \
      "vertices of the Newton polytope of the reduced denominator")                                \
    X(HF_RULE_DISJOINT_FACES, "disjoint_faces", "disjoint faces",                                  \
      "disjoint faces of the Newton polytope of the reduced denominator")                          \
    X(HF_RULE_SLICES, "slices", "slices",                                                          \
      "slices: least positive multiples of the blocks' reduced denominators, multiplied")          \
    X(HF_RULE_END_SLICES, "end_slices", "end slices",                                              \
      "end slices: the limit targets at both ends and least positive multiples between")           \
    X(HF_RULE_NEWTON_2D, "newton_2d", "2-D Newton argument", "two-dimensional Newton argument")    \
    X(HF_RULE_NEWTON_3D, "newton_3d", "3-D Newton argument", "three-dimensional Newton argument")

typedef enum {
#define HF_RULE_ENUM(code, name, brief, words) code,
    HF_RULE_TABLE(HF_RULE_ENUM)
#undef HF_RULE_ENUM
} hf_rule_t;

const char *hf_rule_name(hf_rule_t r); /* "face_rule": static */
/* The rule of a name: 1 and *out when it is one of the table's, else 0. */
int hf_rule_parse(const char *name, hf_rule_t *out);
/* The words of a rule name ("face rule"), or NULL when it is not one of the table's. */
const char *hf_rule_words(const char *name);

/* LB(T) with the rule that gave it. */
typedef struct {
    fmpz_t lb;
    const char *rule;       /* a name of HF_RULE_TABLE (static): trivial (LB = 1),
                             * face_rule, newton_vertices, disjoint_faces, slices or
                             * end_slices */
    fmpz_t newton_vertices; /* |vert Newt(Q)| when newton_known, else 0 */
    int newton_known;       /* 0 when the vertex count was out of reach */
    int complete;           /* as hf_bounds_lower_ex */
    fmpz_t slices;          /* the slices' bound on M(Q) (docs/math.md §12.3): the product
                             * over the blocks of T of a bound on each block's M (the
                             * one-variable M, the slices inside a block of line heads, the
                             * vertex count); a lower bound on m*(T) in its own right (1
                             * when nothing is known); rule (d) */
} hf_lower_t;

void hf_lower_init(hf_lower_t *L);
void hf_lower_clear(hf_lower_t *L);

/* LB(T) as hf_bounds_lower, with its rule, and the end slices (docs/math.md §12.8) on
 * targets of at most 6 coordinates whose heads lie on lines (chain:d=4: 69 where
 * hf_bounds_lower gives 63): so this LB may exceed hf_bounds_lower's. On small targets
 * (product of head sizes at most 512, d <= 5, at most 4096 faces) it also evaluates the
 * disjoint-faces rule with the recursive LB of every face's limit target; it is reported
 * only if it is larger (which the proof in docs/bounds.md rules out: it equals the vertex
 * count). out must be initialised (hf_lower_init) and is filled in. */
hf_err_t hf_bounds_lower_info(const hf_target_t *t, hf_lower_t *out);

/* The bounds of one target, computed once for its search and its table row: LB with its
 * rule (hf_bounds_lower_info) and UB (hf_bounds_upper). */
typedef struct hf_bounds_s {
    hf_lower_t low;
    fmpz_t ub;
    int ub_exact; /* as hf_bounds_upper's *exact */
} hf_bounds_t;

void hf_bounds_init(hf_bounds_t *b); /* LB 1 (trivial), UB 0; cannot fail */
void hf_bounds_clear(hf_bounds_t *b);
/* Fill b (initialised; replaced) with t's bounds. Not collective. */
hf_err_t hf_bounds_compute(const hf_target_t *t, hf_bounds_t *b);

/* Size of the product construction's head: |A_1 + ... + A_H| with coincident keys
 * merged (exact; blocks of heads on disjoint coordinates multiply; each block counted
 * by the transfer DP over its coordinates when its heads are banded, else by
 * enumeration). *exact = 0 when a block was out of reach of both and ub is the product
 * of head sizes instead. */
hf_err_t hf_bounds_upper(const hf_target_t *t, fmpz_t ub, int *exact);

/* The product head itself, keys in canonical position (per-coordinate minimum 0),
 * sorted lexicographically. HF_ERR_LIMIT if it would exceed max_atoms. out must be
 * initialised with hf_head_init(out, t->d, t->dv). */
hf_err_t hf_bounds_product_head(const hf_target_t *t, long max_atoms, hf_head_t *out);

#endif
