/* Subset enumeration for the engines that walk r-subsets of n values (plain.c, layered.c):
 * subsets in lexicographic order with a prefix fixed and skips, their cells (the pieces of a
 * unit that run apart, search.h), saturating binomials and a table of them, and the split
 * of a subset class into prefix units. */
#ifndef HF_SEARCH_SUBSETS_H
#define HF_SEARCH_SUBSETS_H

#include <limits.h>
#include <stdint.h>

#include "headfuse/search.h"

#define HF_SEARCH_SAT (LONG_MAX / 4) /* saturation value of cost estimates */

long hf_search_binom(long n, long k); /* C(n, k), saturating at HF_SEARCH_SAT */

/* Binomials C(x, k) for x <= n, k <= k_max, by Pascal's rule (saturating at HF_SEARCH_SAT):
 * the ranks of cells are sums of them, computed at every subset visited. */
typedef struct {
    int64_t *v; /* v[x * (kmax + 1) + k] */
    long n, kmax;
} hf_binom_tab_t;
void hf_binom_tab_init(hf_binom_tab_t *tab); /* empty: hf_search_binom is used */
/* Make tab hold C(x, k) for x <= n, k <= kmax (kept when it already does; left as it is,
 * and hf_search_binom used instead, when that would take over 2^20 entries). */
hf_err_t hf_binom_tab_need(hf_binom_tab_t *tab, long n, long kmax);
void hf_binom_tab_clear(hf_binom_tab_t *tab);

/* Visit the r-subsets of {0..n-1} whose first npre elements are pre[] (increasing),
 * in lexicographic order; combo[r] is scratch; fn returns an error to stop. fn may set
 * *skip (preset to r - 1) to i < r - 1: then every later subset sharing combo[0..i] is
 * skipped (i < npre: all remaining ones). */
typedef hf_err_t (*hf_combo_fn)(void *ctx, const long *combo, long *skip);
hf_err_t hf_search_combos(long n, long r, int npre, const long *pre, long *combo, hf_combo_fn fn,
                          void *ctx);

/* The cells of those subsets: one per choice of the `depth` elements after the prefix
 * (depth <= r - npre), numbered in lexicographic order. The number of cells (saturating at
 * HF_SEARCH_SAT). */
int64_t hf_search_combo_cells(long n, long r, int npre, const long *pre, int depth);

/* hf_search_combos restricted to cells: visits the subsets of cells first_cell, first_cell +
 * 1, ... in order, while base + cell < range->hi (read at every new cell, so a poll inside fn
 * may lower it), setting range->pos = base + cell before the first subset of each cell.
 * Scratch: combo[r + depth], part[depth]. */
hf_err_t hf_search_combos_cells(long n, long r, int npre, const long *pre, int depth, int64_t base,
                                int64_t first_cell, hf_search_range_t *range,
                                const hf_binom_tab_t *tab, long *combo, int64_t *part,
                                hf_combo_fn fn, void *ctx);

/* Split the r-subsets of {0..n-1} with first element < a_hi into prefix units of at most
 * `target` candidates each: add(ctx, npre, pre) for each prefix of one or two elements,
 * in order. */
typedef hf_err_t (*hf_prefix_fn)(void *ctx, int npre, const long *pre);
hf_err_t hf_search_split_prefix(long n, long r, long a_hi, long target, hf_prefix_fn add,
                                void *ctx);
/* The number of prefixes hf_search_split_prefix makes with a_hi = n (saturating). */
long hf_search_prefix_count(long n, long r, long target);

#endif
