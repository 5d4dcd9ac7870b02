/* Rank modulo the prime p = 2^31 - 1 of a small dense matrix: the fast rejection of the
 * exact test.
 *
 * The matrices of the exact test are small (tens of rows, about 16 columns) and sparse,
 * and this runs millions of times, so a plain Gaussian elimination that skips zero
 * entries beats a general LU here. p is a Mersenne prime, so a product of two residues
 * (< 2^62) is reduced with two shifts and adds. Only the speed depends on p: the caller
 * uses "full column rank mod p", which implies full column rank over Q whatever p is. */
#include <flint/ulong_extras.h>

#include "exact/exact_impl.h"

static inline uint32_t mulmod(uint32_t a, uint32_t b)
{
    uint64_t x = (uint64_t)a * b;           /* < 2^62 */
    uint64_t r = (x & HF_MODP) + (x >> 31); /* 2^31 == 1 mod p; r < 2^32 */
    r = (r & HF_MODP) + (r >> 31);          /* r <= p + 1 */
    return (uint32_t)(r >= HF_MODP ? r - HF_MODP : r);
}

long hf_exact_rank_modp(uint32_t **rows, long R, long n, long *nzbuf)
{
    long rank = 0;
    for (long c = 0; c < n && rank < R; c++) {
        long piv = -1;
        for (long r = rank; r < R; r++)
            if (rows[r][c]) {
                piv = r;
                break;
            }
        if (piv < 0)
            continue;
        uint32_t *prow = rows[piv];
        rows[piv] = rows[rank];
        rows[rank] = prow;
        uint32_t inv = (uint32_t)n_invmod(prow[c], HF_MODP);
        /* the pivot row's nonzero columns right of c: the only ones an update touches */
        long nnz = 0;
        for (long j = c + 1; j < n; j++)
            if (prow[j])
                nzbuf[nnz++] = j;
        for (long r = rank + 1; r < R; r++) {
            uint32_t *row = rows[r];
            if (!row[c])
                continue;
            uint32_t f = mulmod(row[c], inv);
            row[c] = 0;
            for (long x = 0; x < nnz; x++) {
                long j = nzbuf[x];
                uint32_t t = mulmod(f, prow[j]), a = row[j];
                row[j] = a >= t ? a - t : a + (HF_MODP - t);
            }
        }
        rank++;
    }
    return rank;
}
