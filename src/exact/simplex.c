/* Exact rational phase-1 simplex for the positivity question of the exact test.
 *
 * Given the c-rows Nc (m x r) of a null-space basis, is there lambda with Nc lambda > 0?
 * By Gordan's alternative exactly one of these holds:
 *   (a) some lambda has Nc lambda > 0;
 *   (b) some y >= 0, y != 0 has y^T Nc = 0.
 * We run phase 1 on (b) normalised by sum y = 1. If it is feasible the basic solution is
 * the certificate y; if not, LP duality hands us lambda from the optimal duals. Sizes are
 * tiny (r + 1 rows, m + r + 1 columns) so a dense fmpq tableau is the simple choice, and
 * Bland's rule guarantees termination under degeneracy. */
#include <flint/fmpq_vec.h>

#include "exact/exact_impl.h"

int hf_exact_lp_positive(const fmpz *Nc, long m, long r, fmpq *lambda, fmpq *y)
{
    long rows = r + 1, cols = m + r + 1; /* y_0..y_{m-1}, then artificials a_0..a_r */
    fmpq *T = _fmpq_vec_init(rows * cols);
    fmpq *rhs = _fmpq_vec_init(rows);
    fmpq *dc = _fmpq_vec_init(cols); /* reduced costs c_j - w^T A_j */
    long *basis = flint_malloc(rows * sizeof *basis);
    fmpq_t z, ratio, best, f;
    int result = -1;
    fmpq_init(z);
    fmpq_init(ratio);
    fmpq_init(best);
    fmpq_init(f);

#define TAB(i, j) (T + (i)*cols + (j))
    for (long i = 0; i < r; i++)
        for (long k = 0; k < m; k++)
            fmpz_set(fmpq_numref(TAB(i, k)), Nc + k * r + i); /* denominators are 1 */
    for (long k = 0; k < m; k++)
        fmpq_one(TAB(r, k));
    for (long i = 0; i < rows; i++) {
        fmpq_one(TAB(i, m + i));
        basis[i] = m + i;
    }
    fmpq_one(rhs + r);
    /* initial basis: all artificials, cost 1 each */
    for (long j = 0; j < m; j++) {
        for (long i = 0; i < rows; i++)
            fmpq_sub(dc + j, dc + j, TAB(i, j));
    }
    fmpq_one(z);

    for (;;) {
        long e = -1, l = -1;
        for (long j = 0; j < cols; j++)
            if (fmpq_sgn(dc + j) < 0) {
                e = j; /* Bland: smallest improving index */
                break;
            }
        if (e < 0)
            break;
        for (long i = 0; i < rows; i++) {
            if (fmpq_sgn(TAB(i, e)) <= 0)
                continue;
            fmpq_div(ratio, rhs + i, TAB(i, e));
            int c = l < 0 ? -1 : fmpq_cmp(ratio, best);
            if (c < 0 || (c == 0 && basis[i] < basis[l])) {
                l = i;
                fmpq_set(best, ratio);
            }
        }
        if (l < 0)
            goto cleanup; /* unbounded phase 1 cannot happen: objective >= 0 */
        /* pivot on (l, e) */
        fmpq_inv(f, TAB(l, e));
        for (long j = 0; j < cols; j++)
            fmpq_mul(TAB(l, j), TAB(l, j), f);
        fmpq_mul(rhs + l, rhs + l, f);
        for (long i = 0; i < rows; i++) {
            if (i == l || fmpq_is_zero(TAB(i, e)))
                continue;
            fmpq_set(f, TAB(i, e));
            for (long j = 0; j < cols; j++)
                fmpq_submul(TAB(i, j), f, TAB(l, j));
            fmpq_submul(rhs + i, f, rhs + l);
        }
        fmpq_set(f, dc + e);
        for (long j = 0; j < cols; j++)
            fmpq_submul(dc + j, f, TAB(l, j));
        fmpq_addmul(z, f, rhs + l);
        basis[l] = e;
    }

    for (long i = 0; i < r; i++)
        fmpq_zero(lambda + i);
    for (long k = 0; k < m; k++)
        fmpq_zero(y + k);
    if (fmpq_is_zero(z)) {
        for (long i = 0; i < rows; i++)
            if (basis[i] < m)
                fmpq_set(y + basis[i], rhs + i);
        result = 0;
    } else if (fmpq_sgn(z) > 0) {
        /* duals w_i = 1 - dc(a_i); lambda = -w_{0..r-1} */
        for (long i = 0; i < r; i++) {
            fmpq_one(f);
            fmpq_sub(f, dc + m + i, f);
            fmpq_set(lambda + i, f);
        }
        result = 1;
    }
#undef TAB

cleanup:
    fmpq_clear(f);
    fmpq_clear(best);
    fmpq_clear(ratio);
    fmpq_clear(z);
    flint_free(basis);
    _fmpq_vec_clear(dc, cols);
    _fmpq_vec_clear(rhs, rows);
    _fmpq_vec_clear(T, rows * cols);
    return result;
}
