/* |A_1 + ... + A_H| without enumerating the sum: a transfer DP over the coordinates
 * (docs/bounds.md, "Counting the product head at large d").
 *
 * Read a sum s = sum_h a_h coordinate by coordinate, in a fixed order. After the first
 * p coordinates (a prefix), a head whose used coordinates straddle the cut has been
 * partly chosen; what it and the other straddling heads still add to the later
 * coordinates is a carry vector. For a prefix x let C(x) be the set of carries of all
 * choices consistent with x. The completions of x are exactly the union over c in C(x)
 * of c + (the sum of the heads that start later), so they depend only on C(x), and
 * C(x, sigma) is determined by C(x) and the next symbol sigma:
 *   C(x, sigma) = { (c + m)[rest] : c in C(x), m in M_p, (c + m)[first] = sigma }
 * with M_p the Minkowski sum of the heads starting at coordinate p over their window.
 * This is the subset construction of an automaton reading s; it is deterministic, so
 * distinct sums are distinct paths and count[p][S] = number of distinct prefixes with
 * C(x) = S is carried forward by adding counts; the answer is the total at the end.
 * With heads of bounded bandwidth (chain: two consecutive coordinates) the states stay
 * few: chain_d has at most 3 per cut, so chain_64 costs microseconds. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bounds/bounds_impl.h"

#define DP_STATES_MAX (1L << 18) /* DFA states in one layer */
#define DP_PAIRS_MAX (1L << 20)  /* carries x window sums in one state's step */
#define DP_MSUM_MAX (1L << 16)   /* window sums of the heads starting at one coordinate */
#define DP_WORK_MAX (1L << 26)   /* pairs over the whole count */

/* M = sum of the heads hs[nhs] over window positions p..p+w-1 (pos[c] is the position
 * of coordinate coords[c]; each head shifted to minimum 0). *ok = 0 over the cap. */
static hf_err_t dp_window_sum(const hf_target_t *t, const int *hs, int nhs, const int *coords,
                              int nc, int p, int w, hf_ivset_t *M, int *ok)
{
    hf_err_t err = HF_OK;
    int d = t->d, added;
    hf_ivset_t next;
    int64_t v[HF_D_MAX + 1], lo[HF_D_MAX];
    memset(&next, 0, sizeof next);
    HF_TRY(hf_ivset_init(M, w > 0 ? w : 1));
    memset(v, 0, sizeof v);
    if (hf_ivset_insert(M, v, &added) < 0)
        return HF_ERR_NOMEM;
    for (int k = 0; k < nhs; k++) {
        const hf_head_t *h = t->heads + hs[k];
        for (int c = 0; c < nc; c++) {
            lo[c] = h->keys[coords[c]];
            for (long a = 1; a < h->natoms; a++)
                if (h->keys[a * d + coords[c]] < lo[c])
                    lo[c] = h->keys[a * d + coords[c]];
        }
        HF_CHECK(err, hf_ivset_init(&next, w > 0 ? w : 1), cleanup);
        for (long s = 0; s < M->n; s++)
            for (long a = 0; a < h->natoms; a++) {
                for (int j = 0; j < w; j++)
                    v[j] = M->keys[s * M->b + j] + h->keys[a * d + coords[p + j]] - lo[p + j];
                if (hf_ivset_insert(&next, v, &added) < 0) {
                    err = HF_ERR_NOMEM;
                    goto cleanup;
                }
                if (next.n > DP_MSUM_MAX) {
                    *ok = 0;
                    goto cleanup;
                }
            }
        hf_ivset_clear(M);
        *M = next;
        memset(&next, 0, sizeof next);
    }
cleanup:
    hf_ivset_clear(&next);
    return err;
}

hf_err_t hf_bounds_upper_dp(const hf_target_t *t, const int *heads, int nh, const int *coords,
                            int nc, fmpz_t n, int *ok)
{
    hf_err_t err = HF_OK;
    int d = t->d;
    int *lo = hf_malloc((size_t)(nh ? nh : 1) * sizeof *lo);
    int *hi = hf_malloc((size_t)(nh ? nh : 1) * sizeof *hi);
    int *hs = hf_malloc((size_t)(nh ? nh : 1) * sizeof *hs);
    hf_bounds_bytemap_t cur, nxt;
    hf_ivset_t M;
    int64_t *pairs = NULL;
    long *order = NULL, cap_pairs = 0, cap_order = 0, work = 0;
    hf_bounds_buf_t key = {0};
    fmpz_t total;
    fmpz_init(total);
    memset(&cur, 0, sizeof cur);
    memset(&nxt, 0, sizeof nxt);
    memset(&M, 0, sizeof M);
    *ok = 1;
    if (!lo || !hi || !hs) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    /* each head's first and last position where its keys vary */
    for (int k = 0; k < nh; k++) {
        const hf_head_t *h = t->heads + heads[k];
        lo[k] = nc;
        hi[k] = -1;
        for (int c = 0; c < nc; c++)
            for (long a = 1; a < h->natoms; a++)
                if (h->keys[a * d + coords[c]] != h->keys[coords[c]]) {
                    if (c < lo[k])
                        lo[k] = c;
                    hi[k] = c;
                    break;
                }
    }
    hf_bounds_bytemap_init(&cur, LONG_MAX);
    hf_bounds_bytemap_entry_t *e;
    HF_CHECK(err, hf_bounds_bytemap_find(&cur, (const unsigned char *)"", 0, &e), cleanup);
    fmpz_one(&e->val); /* before position 0: one empty prefix, carry of width 0 */
    int rold = -1;     /* carries cover positions p .. rold */
    for (int p = 0; p < nc; p++) {
        int nhs = 0, rnew = rold > p ? rold : p;
        for (int k = 0; k < nh; k++)
            if (lo[k] == p) {
                hs[nhs++] = heads[k];
                if (hi[k] > rnew)
                    rnew = hi[k];
            }
        int wold = rold - p + 1 > 0 ? rold - p + 1 : 0, win = rnew - p + 1, wn = win - 1;
        HF_CHECK(err, dp_window_sum(t, hs, nhs, coords, nc, p, win, &M, ok), cleanup);
        if (!*ok)
            goto cleanup;
        hf_bounds_bytemap_init(&nxt, LONG_MAX);
        for (long i = 0; i < cur.n; i++) {
            const hf_bounds_bytemap_entry_t *st = cur.entry + i;
            long nx = wold ? (long)(st->len / (sizeof(int64_t) * wold)) : 1;
            long np = nx * M.n;
            work += np;
            if (np > DP_PAIRS_MAX || work > DP_WORK_MAX) {
                *ok = 0;
                goto cleanup;
            }
            /* room for np rows of width win */
            HF_CHECK(err, HF_GROW(&pairs, &cap_pairs, np * win), cleanup);
            HF_CHECK(err, HF_GROW(&order, &cap_order, np), cleanup);
            const int64_t *X = (const int64_t *)st->key;
            for (long x = 0; x < nx; x++)
                for (long m = 0; m < M.n; m++) {
                    int64_t *y = pairs + (x * M.n + m) * win;
                    for (int j = 0; j < win; j++)
                        y[j] = (j < wold ? X[x * wold + j] : 0) + M.keys[m * M.b + j];
                    order[x * M.n + m] = x * M.n + m;
                }
            hf_rows_t o = {pairs, win};
            if (hf_sort(order, np, hf_cmp_rows, &o) != HF_OK) {
                err = HF_ERR_NOMEM;
                goto cleanup;
            }
            /* runs of equal first symbol: one successor state each (rests sorted,
             * duplicates dropped) */
            for (long r = 0; r < np;) {
                int64_t sigma = pairs[order[r] * win];
                key.n = 0;
                long r1 = r;
                for (; r1 < np && pairs[order[r1] * win] == sigma; r1++) {
                    if (r1 > r && hf_cmp_rows(&o, order[r1 - 1], order[r1]) == 0)
                        continue;
                    HF_CHECK(err,
                             hf_bounds_buf_put(&key, pairs + order[r1] * win + 1,
                                               (size_t)wn * sizeof *pairs),
                             cleanup);
                }
                hf_bounds_bytemap_entry_t *ne;
                HF_CHECK(
                    err,
                    hf_bounds_bytemap_find(&nxt, key.p ? key.p : (unsigned char *)"", key.n, &ne),
                    cleanup);
                fmpz_add(&ne->val, &ne->val, &st->val);
                r = r1;
            }
        }
        hf_ivset_clear(&M);
        hf_bounds_bytemap_clear(&cur);
        cur = nxt;
        memset(&nxt, 0, sizeof nxt);
        if (cur.n > DP_STATES_MAX) {
            *ok = 0;
            goto cleanup;
        }
        rold = rnew;
    }
    for (long i = 0; i < cur.n; i++)
        fmpz_add(total, total, &cur.entry[i].val);
    fmpz_set(n, total);
cleanup:
    hf_bounds_buf_clear(&key);
    free(order);
    free(pairs);
    hf_ivset_clear(&M);
    hf_bounds_bytemap_clear(&nxt);
    hf_bounds_bytemap_clear(&cur);
    free(hs);
    free(hi);
    free(lo);
    fmpz_clear(total);
    return err;
}
