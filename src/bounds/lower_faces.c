/* The lower bound's rules over the faces of Newt(Q) (docs/math.md §5.3, §12.8; the rules at
 * the top of lower.c): (c) disjoint faces, the best total of the limit targets' bounds over
 * disjoint faces, and (e) end slices, the two extreme levels of a support along a
 * coordinate with the levels between. */
#include <limits.h>
#include <stdlib.h>

#include "bounds/lower_impl.h"
#include "headfuse/bounds.h"
#include "headfuse/faces3d.h"
#include "headfuse/newton.h"

hf_err_t hf_lb_ends(lb_ctx_t *cx, const hf_target_t *t, int top, fmpz_t out)
{
    hf_err_t err = HF_OK;
    lb_tgt_t raw, C;
    hf_bounds_buf_t ser = {0};
    hf_target_t tc, lim;
    hf_bounds_mlb_t *mc = NULL;
    hf_faces3d_t A;
    int known = 0;
    fmpz_t v, a, w2;
    hf_lb_tgt_zero(&raw);
    hf_lb_tgt_zero(&C);
    hf_target_init_empty(&tc);
    hf_target_init_empty(&lim);
    hf_faces3d_init(&A);
    fmpz_init(v);
    fmpz_init(a);
    fmpz_init(w2);
    fmpz_one(out);
    HF_CHECK(err, hf_lb_from_target(t, &raw), cleanup);
    HF_CHECK(err, hf_lb_canon(cx, &raw, NULL, &C, &ser), cleanup);
    HF_CHECK(err, hf_bounds_buf_i64(&ser, top), cleanup);
    const hf_bounds_bytemap_entry_t *e = hf_bounds_bytemap_get(&cx->ends, ser.p, ser.n);
    if (e) {
        fmpz_set(out, &e->val);
        goto cleanup;
    }
    if (C.nheads == 0) /* a constant target: one atom */
        goto store;
    HF_CHECK(err, hf_lb_to_target(&C, &tc), cleanup);
    HF_CHECK(err, hf_bounds_newton_count(&tc, &cx->arr, &hf_lb_cdd_limits, v, &known), cleanup);
    if (known && fmpz_cmp(v, out) > 0)
        fmpz_set(out, v);
    HF_CHECK(err, hf_bounds_slices(&tc, &cx->arr, v, known, a), cleanup);
    if (fmpz_cmp(a, out) > 0)
        fmpz_set(out, a);
    if (!top && tc.d == 3) {
        HF_CHECK(err, hf_faces3d_from_target(&tc, &A), cleanup);
        if (A.ok && fmpz_cmp_si(out, A.supp_q < A.bound ? A.supp_q : A.bound) < 0)
            fmpz_set_si(out, A.supp_q < A.bound ? A.supp_q : A.bound);
    }
    if (tc.d > LB_ENDS_D_MAX)
        goto store;
    int heads[HF_D_MAX > 64 ? HF_D_MAX : 64], nh = 0;
    int *hs = tc.nheads <= 64 ? heads : NULL;
    if (!hs)
        goto store;
    for (int h = 0; h < tc.nheads; h++)
        hs[nh++] = h;
    HF_CHECK(err, hf_bounds_mlb_create(&tc, hs, nh, &cx->arr, &mc), cleanup);
    if (!mc)
        goto store;
    uint64_t all = hf_bounds_mlb_coords(mc);
    for (int y = 0; y < tc.d; y++) {
        if (!(all >> y & 1))
            continue; /* Q does not use y: T is invariant along e_y */
        long n = 1;
        int64_t w[HF_D_MAX] = {0};
        HF_CHECK(err, hf_bounds_mlb_slice(mc, y, &n), cleanup);
        HF_CHECK(err, hf_bounds_mlb(mc, all & ~(UINT64_C(1) << y), a), cleanup);
        fmpz_mul_si(a, a, n > 2 ? n - 2 : 0);
        for (int side = 0; side < 2; side++) {
            w[y] = side ? 1 : -1;
            HF_CHECK(err, hf_bounds_limit_target(&tc, w, &lim), cleanup);
            HF_CHECK(err, hf_lb_ends(cx, &lim, 0, w2), cleanup);
            fmpz_add(a, a, w2);
        }
        if (fmpz_cmp(a, out) > 0)
            fmpz_set(out, a);
    }
store:
    HF_CHECK(err, hf_bounds_bytemap_put(&cx->ends, ser.p, ser.n, out), cleanup);
cleanup:
    hf_bounds_mlb_destroy(&mc);
    fmpz_clear(w2);
    fmpz_clear(a);
    fmpz_clear(v);
    hf_faces3d_clear(&A);
    hf_target_clear(&lim);
    hf_target_clear(&tc);
    hf_bounds_buf_clear(&ser);
    hf_lb_tgt_clear(&C);
    hf_lb_tgt_clear(&raw);
    return err;
}

hf_err_t hf_lb_disjoint_faces(lb_ctx_t *cx, const hf_target_t *t, fmpz_t out, int *done)
{
    hf_err_t err = HF_OK;
    hf_fraction_t f;
    hf_newton_t N;
    long *value = NULL, bound = 1;
    double terms = 1;
    fmpz_t v;
    fmpz_init(v);
    hf_fraction_init(&f);
    hf_newton_init(&N);
    *done = 0;
    for (int h = 0; h < t->nheads; h++)
        terms *= (double)t->heads[h].natoms;
    if (terms > (double)LB_PACK_TERMS || t->d > LB_PACK_DIM)
        goto cleanup;
    HF_CHECK(err, hf_fraction_from_target(&f, t), cleanup);
    HF_CHECK(err, hf_newton_from_fraction(&f, LB_PACK_FACES, &N), cleanup);
    if (!N.faces_complete)
        goto cleanup;
    value = hf_malloc((size_t)(N.nfaces ? N.nfaces : 1) * sizeof *value);
    if (!value) {
        err = HF_ERR_NOMEM;
        goto cleanup;
    }
    for (long i = 0; i < N.nfaces; i++) {
        hf_target_t lim;
        hf_target_init_empty(&lim);
        HF_CHECK(err, hf_bounds_limit_target(t, N.faces[i].w, &lim), cleanup);
        err = hf_lb_of_target(cx, &lim, 1, v);
        hf_target_clear(&lim);
        if (err != HF_OK)
            goto cleanup;
        value[i] = fmpz_fits_si(v) ? fmpz_get_si(v) : LONG_MAX;
    }
    HF_CHECK(err, hf_newton_packing_bound(&N, value, &bound), cleanup);
    fmpz_set_si(out, bound);
    *done = 1;
cleanup:
    free(value);
    hf_newton_clear(&N);
    hf_fraction_clear(&f);
    fmpz_clear(v);
    return err;
}
