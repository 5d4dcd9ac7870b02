/* The symmetry group of a target (docs/search.md, "Symmetry").
 *
 * A symmetry is a signed coordinate permutation g of the key lattice, k -> g k with
 * (g k)_j = sign_j k_{perm_j}, such that the target with every key mapped by g is
 * alpha T + beta (alpha != 0 a scalar, beta a constant vector). Such a g maps feasible
 * supports to feasible supports, so minimal supports are counted up to the group. The
 * group (|G| <= 2^d d!) is made from the target and its fraction P/Q: nauty's
 * automorphisms of a coloured graph of P/Q are the candidates, each generator checked
 * exactly (the brute force over all signed permutations is the test oracle). The search
 * reports its order for a row; the campaign's reduction of the minimal supports counts
 * their orbits. Not collective, no MPI: every rank that makes the group gets the same one. */
#ifndef HEADFUSE_SYMMETRY_H
#define HEADFUSE_SYMMETRY_H

#include <stdint.h>

#include "headfuse/algebra.h"
#include "headfuse/target.h"
#include "headfuse/stop.h"

/* The symmetry module's phases for hf_stop_check (headfuse/stop.h). */
#define HF_SYMMETRY_STOP_PHASES(X) X(ORBITS, "counting supports up to symmetry")
HF_SYMMETRY_STOP_PHASES(HF_STOP_DECLARE)

/* Opaque: the order and the checked generators. */
typedef struct hf_group_s hf_group_t;

/* The group of the target t whose fraction is f (hf_fraction_from_target of t); t and f
 * are read during the call only. When the group cannot be established (P and Q over 2^18
 * terms with d > 7, or an order too large to test element by element) the order is
 * unknown and the generators that were checked (a subgroup) are kept for orbit
 * representatives. Errors: HF_ERR_NOMEM, HF_ERR_INTERNAL (nauty). */
hf_err_t hf_group_create(const hf_target_t *t, const hf_fraction_t *f, hf_group_t **out);
void hf_group_destroy(hf_group_t **g); /* accepts NULL */

/* Whether hf_group_create can establish the group of a target in d variables whose P and Q
 * have `terms` terms together: 0 when it would give the unknown group of
 * hf_group_create_unknown without looking further (P/Q over 2^18 terms and d > 7). A large
 * row, whose P/Q is never whole (search.h), builds it whole for the group only then. */
int hf_group_needs_fraction(int d, long terms);
/* The group hf_group_create gives when P/Q has too many terms: order unknown ("P/Q has more
 * than 2^18 terms"), no generators. */
hf_err_t hf_group_create_unknown(int d, hf_group_t **out);

/* The group as machine words, to send it to ranks that did not make it (*words: the
 * caller frees), and back: unpack(pack(g)) acts as g. A malformed array is HF_ERR_INTERNAL. */
hf_err_t hf_group_pack(const hf_group_t *g, int64_t **words, long *n);
hf_err_t hf_group_unpack(const int64_t *words, long n, hf_group_t **out);

/* |G|, or -1 when it is not known. */
long hf_group_order(const hf_group_t *g);

/* Why |G| is not known, as a phrase for "group not computed: ..." ("P/Q has more than
 * 2^18 terms"); NULL when it is known. Static text. */
const char *hf_group_unknown_reason(const hf_group_t *g);

/* The orbit representative of the support keys[m*d] (any position, any order): the
 * lexicographically smallest image in canonical form (hf_symmetry_canonical) over the
 * orbit's closure under the generators, or over the group's elements for an orbit too
 * large to hold (HF_ERR_LIMIT when the group is too large to list as well). out[m*d].
 * Two supports are in one orbit iff their representatives are equal. */
hf_err_t hf_group_orbit_rep(const hf_group_t *g, long m, const int64_t *keys, int64_t *out);

/* The canonical form of a key set keys[m*d]: translated to canonical position (every
 * coordinate's minimum 0), keys sorted lexicographically (O(m log m)). out[m*d] may not
 * overlap keys. HF_ERR_NOMEM (sort scratch). */
hf_err_t hf_symmetry_canonical(int d, long m, const int64_t *keys, int64_t *out);

/* 1 iff b = alpha a + beta as functions (alpha != 0 scalar, beta constant vector): the
 * equivalence under which the group is defined; the search's tables of limit targets use
 * it too (the same supports). */
int hf_symmetry_affine_equal(const hf_fraction_t *a, const hf_fraction_t *b);

#endif
