/* The vertex count of Newt(Q) of a target (newton.h: hf_newton_vertex_count).
 *
 * Blocks of heads on disjoint coordinates: T = sum_B T_B with T_B in the variables of
 * block B only, and the reduced denominator is prod_B Q_B (an irreducible factor of
 * Q_B involves only B's variables, divides no Q_B' and so cannot divide the numerator
 * P = sum_B P_B prod_{B' != B} Q_B' unless it divides P_B). Newt(Q) is the product of
 * the blocks' polytopes, so vertex counts multiply. Blocks whose heads lie on lines are
 * counted together as one zonotope (zonotope.c); each other block through cddlib
 * (newton.c) when its fraction is small enough. */
#include <stdlib.h>
#include <string.h>

#include "bounds/bounds_impl.h"
#include "headfuse/newton.h"

/* hf_newton_vertex_count's limits for a block through cddlib: product of head sizes and
 * coordinates used (the double description slows down quickly with both: chain_6's 956
 * points in 6 dimensions take 1.7 s, W_9's 512 points in 9 dimensions 0.3 s). */
#define NEWTON_COUNT_CDD_TERMS 4096L
#define NEWTON_COUNT_CDD_DIM 8

/* Vertices of Newt(Q) for the heads heads[nh] alone (using ncoords coordinates), through
 * P/Q and cddlib, within the limits. A built-in limit met on the way (HF_ERR_LIMIT) makes
 * the count unknown, not an error. */
static hf_err_t count_by_cdd(const hf_target_t *t, const int *heads, int nh, int ncoords,
                             const hf_bounds_cdd_limits_t *lim, fmpz_t count, int *known)
{
    hf_err_t err = HF_OK;
    hf_target_t sub;
    hf_fraction_t f;
    hf_newton_t N;
    double terms = 1;
    hf_target_init_empty(&sub);
    hf_fraction_init(&f);
    hf_newton_init(&N);
    for (int k = 0; k < nh; k++)
        terms *= (double)t->heads[heads[k]].natoms;
    if (terms > (double)lim->terms_max || ncoords > lim->dim_max) {
        *known = 0;
        return HF_OK;
    }
    HF_CHECK(err, hf_target_init(&sub, t->name, t->d, t->dv), cleanup);
    for (int k = 0; k < nh; k++)
        HF_CHECK(err, hf_target_add_head(&sub, t->heads + heads[k]), cleanup);
    HF_CHECK(err, hf_fraction_from_target(&f, &sub), cleanup);
    HF_CHECK(err, hf_newton_from_fraction(&f, 0, &N), cleanup);
    fmpz_set_si(count, N.nverts);
cleanup:
    if (err == HF_ERR_LIMIT) { /* a limit of the algebra or of cddlib: count unknown */
        hf_error_clear();
        err = HF_OK;
        *known = 0;
    }
    hf_newton_clear(&N);
    hf_fraction_clear(&f);
    hf_target_clear(&sub);
    return err;
}

hf_err_t hf_bounds_newton_count(const hf_target_t *t, hf_bounds_arr_t *A,
                                const hf_bounds_cdd_limits_t *lim, fmpz_t count, int *known)
{
    hf_err_t err = HF_OK;
    int H = t->nheads, d = t->d, nb = 0;
    uint64_t *used = hf_malloc((size_t)(H ? H : 1) * sizeof *used);
    int *block = hf_malloc((size_t)(H ? H : 1) * sizeof *block);
    int *members = hf_malloc((size_t)(H ? H : 1) * sizeof *members);
    int64_t *gens = NULL, *all = NULL;
    long *lens = NULL, m = 0, nall = 0, cap_all = 0;
    fmpz_t c;
    fmpz_init(c);
    fmpz_one(count);
    *known = 1;
    if (!used || !block || !members) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    hf_bounds_blocks(t, used, block, &nb);
    for (int b = 0; b < nb && *known; b++) {
        int nm = 0, all_lines;
        uint64_t mask = 0;
        for (int h = 0; h < H; h++)
            if (block[h] == b) {
                members[nm++] = h;
                mask |= used[h];
            }
        HF_CHECK(err, hf_bounds_line_groups(t, members, nm, &all_lines, &gens, &lens, &m), cleanup);
        if (all_lines) { /* the zonotope's generators, counted together below */
            if (m) {
                HF_CHECK(err, HF_GROW(&all, &cap_all, (nall + m) * d), cleanup);
                memcpy(all + nall * d, gens, (size_t)m * d * sizeof *gens);
                nall += m;
            }
        } else {
            HF_CHECK(err, count_by_cdd(t, members, nm, __builtin_popcountll(mask), lim, c, known),
                     cleanup);
            if (*known)
                fmpz_mul(count, count, c);
        }
        free(gens);
        free(lens);
        gens = NULL;
        lens = NULL;
    }
    if (*known && nall) {
        HF_CHECK(err, hf_bounds_arr_regions(A, all, nall, d, c, known), cleanup);
        if (*known)
            fmpz_mul(count, count, c);
    }
cleanup:
    if (!*known || err != HF_OK)
        fmpz_zero(count);
    fmpz_clear(c);
    free(all);
    free(lens);
    free(gens);
    free(members);
    free(block);
    free(used);
    return err;
}

hf_err_t hf_newton_vertex_count(const hf_target_t *t, fmpz_t count, int *known)
{
    hf_bounds_arr_t A;
    fmpz_zero(count);
    *known = 0;
    HF_TRY(hf_bounds_check_target(t, "Newton vertex count"));
    HF_TRY(hf_bounds_arr_init(&A));
    hf_bounds_cdd_limits_t lim = {NEWTON_COUNT_CDD_TERMS, NEWTON_COUNT_CDD_DIM};
    hf_err_t err = hf_bounds_newton_count(t, &A, &lim, count, known);
    hf_bounds_arr_clear(&A);
    return err;
}
