/* Subset enumeration (subsets.h): r-subsets of {0..n-1} in lexicographic order with a
 * fixed prefix and skips, their cells and the ranks of cells by binomial sums, and the
 * split of a subset class into prefix units. */
#include <assert.h>
#include <stdlib.h>

#include "headfuse/core.h"
#include "search/subsets.h"

long hf_search_binom(long n, long k)
{
    if (k < 0 || n < 0 || k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    long r = 1;
    for (long i = 1; i <= k; i++) {
        /* r * (n - k + i) / i stays an integer: it is C(n - k + i, i) */
        if (r > HF_SEARCH_SAT / (n - k + i))
            return HF_SEARCH_SAT;
        r = r * (n - k + i) / i;
    }
    return r;
}

/* Copy the prefix into c and return the least element after it, or -1 when no r-subset of
 * 0..n-1 extends it (a prefix longer than r, not increasing, out of range, or leaving too
 * few elements after it). */
static long combo_start(long n, long r, int npre, const long *pre, long *c)
{
    if (r < npre)
        return -1;
    for (int i = 0; i < npre; i++) {
        if (pre[i] >= n || (i > 0 && pre[i] <= pre[i - 1]))
            return -1;
        c[i] = pre[i];
    }
    long lo = npre ? pre[npre - 1] + 1 : 0;
    return lo + (r - npre) <= n ? lo : -1;
}

/* Step c to the next r-subset extending the prefix, after fn asked to skip every subset that
 * shares c[0..skip]: the position that moved, or -1 when none is left. */
static inline long combo_next(long n, long r, int npre, long *c, long skip)
{
    if (skip < npre)
        return -1; /* every remaining subset shares the rejected prefix */
    long i = skip;
    while (i >= npre && c[i] == n - r + i)
        i--;
    if (i < npre)
        return -1;
    c[i]++;
    for (long k = i + 1; k < r; k++)
        c[k] = c[k - 1] + 1;
    return i;
}

hf_err_t hf_search_combos(long n, long r, int npre, const long *pre, long *c, hf_combo_fn fn,
                          void *ctx)
{
    long lo = combo_start(n, r, npre, pre, c);
    if (lo < 0)
        return HF_OK;
    for (long i = npre; i < r; i++)
        c[i] = lo + (i - npre);
    for (;;) {
        /* c is an increasing r-subset of 0..n-1 that extends the prefix */
        assert(r == 0 || (c[0] >= 0 && c[r - 1] < n));
        assert(npre == 0 || c[npre - 1] == pre[npre - 1]);
        long skip = r - 1;
        HF_TRY(fn(ctx, c, &skip));
        if (combo_next(n, r, npre, c, skip) < 0)
            break;
    }
    return HF_OK;
}

/* Cells of the r-subsets extending a prefix: the `depth` elements after it form a
 * depth-subset of the N values that leave room for the rest (subsets.h). */
static long cells_values(long n, long r, int npre, const long *pre, int depth)
{
    long lo = npre ? pre[npre - 1] + 1 : 0;
    return n - lo - (r - npre) + depth;
}

int64_t hf_search_combo_cells(long n, long r, int npre, const long *pre, int depth)
{
    long nv = cells_values(n, r, npre, pre, depth);
    return nv < depth ? 0 : (int64_t)hf_search_binom(nv, depth);
}

hf_err_t hf_binom_tab_need(hf_binom_tab_t *tab, long n, long kmax)
{
    if (n <= tab->n && kmax <= tab->kmax)
        return HF_OK;
    n = n > tab->n ? n : tab->n;
    kmax = kmax > tab->kmax ? kmax : tab->kmax;
    if (n < 0 || kmax < 0 || (n + 1) * (kmax + 1) > (1L << 20))
        return HF_OK;
    int64_t *v = hf_malloc((size_t)(n + 1) * (size_t)(kmax + 1) * sizeof *v);
    if (!v)
        return HF_ERR_NOMEM;
    long w = kmax + 1;
    for (long x = 0; x <= n; x++)
        for (long k = 0; k <= kmax; k++) {
            int64_t c = k == 0 ? 1 : x == 0 ? 0 : v[(x - 1) * w + k - 1] + v[(x - 1) * w + k];
            v[x * w + k] = c > HF_SEARCH_SAT ? HF_SEARCH_SAT : c;
        }
    free(tab->v);
    tab->v = v;
    tab->n = n;
    tab->kmax = kmax;
    return HF_OK;
}

void hf_binom_tab_init(hf_binom_tab_t *tab)
{
    tab->v = NULL;
    tab->n = tab->kmax = -1;
}

void hf_binom_tab_clear(hf_binom_tab_t *tab)
{
    free(tab->v);
    hf_binom_tab_init(tab);
}

static inline int64_t binom_of(const hf_binom_tab_t *t, long n, long k)
{
    if (k < 0 || n < 0 || k > n)
        return 0;
    if (t && t->v && n <= t->n && k <= t->kmax)
        return t->v[n * (t->kmax + 1) + k];
    return hf_search_binom(n, k);
}

/* Contribution of position i to the lexicographic rank of a depth-subset y[] of nv values:
 * the subsets that agree with y before i and have a smaller value at i (the sum over v of
 * C(nv - 1 - v, depth - 1 - i), in closed form). The rank is the sum over i; a position
 * whose value follows the one before it contributes 0. */
static inline int64_t cells_part(const hf_binom_tab_t *t, const long *y, int i, int depth, long nv)
{
    long prev = i > 0 ? y[i - 1] : -1;
    return binom_of(t, nv - 1 - prev, depth - i) - binom_of(t, nv - y[i], depth - i);
}

static void cells_unrank(const hf_binom_tab_t *t, int64_t rank, int depth, long nv, long *y)
{
    long v = 0;
    for (int i = 0; i < depth; i++, v++) {
        for (;; v++) {
            int64_t with_v = binom_of(t, nv - 1 - v, depth - 1 - i);
            if (rank < with_v)
                break;
            rank -= with_v;
        }
        y[i] = v;
    }
}

hf_err_t hf_search_combos_cells(long n, long r, int npre, const long *pre, int depth, int64_t base,
                                int64_t first_cell, hf_search_range_t *range,
                                const hf_binom_tab_t *tab, long *c, int64_t *part, hf_combo_fn fn,
                                void *ctx)
{
    assert(depth >= 0 && depth <= r - npre);
    long lo = combo_start(n, r, npre, pre, c);
    if (lo < 0 || first_cell >= hf_search_combo_cells(n, r, npre, pre, depth))
        return HF_OK;
    long nv = cells_values(n, r, npre, pre, depth);
    /* y: the cell's elements less lo, in the scratch after c's r; part[i]: rank of y[0..i) */
    long *y = c + r;
    cells_unrank(tab, first_cell, depth, nv, y);
    for (int i = 0; i < depth; i++)
        c[npre + i] = lo + y[i];
    for (long i = npre + depth; i < r; i++)
        c[i] = (i > 0 ? c[i - 1] : -1) + 1;
    part[0] = 0;
    for (int i = 0; i + 1 < depth; i++)
        part[i + 1] = part[i] + cells_part(tab, y, i, depth, nv);
    int64_t cell = first_cell;
    for (;;) {
        if (base + cell >= range->hi)
            break;
        range->pos = base + cell;
        assert(r == 0 || (c[0] >= 0 && c[r - 1] < n));
        long skip = r - 1;
        HF_TRY(fn(ctx, c, &skip));
        long i = combo_next(n, r, npre, c, skip);
        if (i < 0)
            break;
        if (i == npre + depth - 1) {
            /* the next cell with the same first points (the common step): C(x, 1) = x */
            cell = part[depth - 1] + (depth > 1 ? c[i] - c[i - 1] - 1 : c[i] - lo);
        } else if (i < npre + depth) { /* a new cell: positions after j follow on, adding 0 */
            int j = (int)(i - npre);
            for (int k = j; k < depth; k++)
                y[k] = c[npre + k] - lo;
            cell = part[j] + cells_part(tab, y, j, depth, nv);
            for (int k = j + 1; k < depth; k++)
                part[k] = cell;
        }
    }
    return HF_OK;
}

/* Whether the prefix class of first element a holds more than target subsets (then it is
 * split by its second element). */
static int prefix_splits(long n, long r, long a, long target)
{
    return r >= 2 && hf_search_binom(n - a - 1, r - 1) > target;
}

hf_err_t hf_search_split_prefix(long n, long r, long a_hi, long target, hf_prefix_fn add, void *ctx)
{
    if (r < 1)
        return HF_OK;
    if (a_hi > n - r + 1)
        a_hi = n - r + 1;
    for (long a = 0; a < a_hi; a++) {
        long pre[2] = {a, 0};
        if (!prefix_splits(n, r, a, target)) {
            HF_TRY(add(ctx, 1, pre));
            continue;
        }
        for (long b = a + 1; b <= n - r + 1; b++) {
            pre[1] = b;
            HF_TRY(add(ctx, 2, pre));
        }
    }
    return HF_OK;
}

long hf_search_prefix_count(long n, long r, long target)
{
    long c = 0;
    if (r < 1)
        return 0;
    for (long a = 0; a < n - r + 1; a++) {
        long k = prefix_splits(n, r, a, target) ? n - r + 1 - a : 1;
        c = c > HF_SEARCH_SAT - k ? HF_SEARCH_SAT : c + k;
    }
    return c;
}
