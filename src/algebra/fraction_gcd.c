/* P/Q by gcds: the heads added one at a time, P/Q + N/D = (P D' + N Q') / (Q D') with
 * D' = D/g, Q' = Q/g, g = gcd(Q, D), and after each step the multivariate gcd of all
 * numerators and the denominator divided out, so intermediate sizes stay those of the
 * reduced form. This was the only construction before issue 22; its gcds of the whole
 * P with the whole Q grow with the target, so the program now builds P/Q from the
 * denominators' factors (fraction_factor.c) and uses this one only for denominators of
 * too high a degree to factor cheaply. The tests and bench/bench_fraction.c keep it as
 * the reference the factor construction must agree with. */
#include <stdlib.h>

#include "algebra/algebra_impl.h"

/* Divide P_1..P_dv and Q by their common gcd. */
static hf_err_t fraction_reduce_gcd(hf_fraction_t *f, const char *name)
{
    hf_err_t err = HF_OK;
    fmpz_mpoly_t G, T;
    fmpz_mpoly_init(G, f->ctx);
    fmpz_mpoly_init(T, f->ctx);
    fmpz_mpoly_set(G, f->Q, f->ctx);
    for (int j = 0; j < f->dv && !fmpz_mpoly_is_one(G, f->ctx); j++) {
        if (!fmpz_mpoly_gcd(G, G, f->P + j, f->ctx)) {
            err = hf_error(HF_ERR_LIMIT, "%s: multivariate gcd failed (exponents too large)", name);
            goto cleanup;
        }
    }
    if (fmpz_mpoly_is_one(G, f->ctx))
        goto cleanup;
    for (int j = 0; j <= f->dv; j++) {
        fmpz_mpoly_struct *A = j < f->dv ? f->P + j : f->Q;
        if (!fmpz_mpoly_divides(T, A, G, f->ctx)) {
            err = hf_error(HF_ERR_INTERNAL, "%s: gcd does not divide the fraction", name);
            goto cleanup;
        }
        fmpz_mpoly_swap(A, T, f->ctx);
    }
cleanup:
    fmpz_mpoly_clear(T, f->ctx);
    fmpz_mpoly_clear(G, f->ctx);
    return err;
}

/* P/Q += N/D, then cancel the common gcd. */
static hf_err_t fraction_add(hf_fraction_t *f, const fmpz_mpoly_struct *N, const fmpz_mpoly_t D,
                             const char *name)
{
    hf_err_t err = HF_OK;
    fmpz_mpoly_t g, Qg, Dg, T;
    fmpz_mpoly_init(g, f->ctx);
    fmpz_mpoly_init(Qg, f->ctx);
    fmpz_mpoly_init(Dg, f->ctx);
    fmpz_mpoly_init(T, f->ctx);
    if (!fmpz_mpoly_gcd(g, f->Q, D, f->ctx)) {
        err = hf_error(HF_ERR_LIMIT, "%s: multivariate gcd failed (exponents too large)", name);
        goto cleanup;
    }
    if (!fmpz_mpoly_divides(Qg, f->Q, g, f->ctx) || !fmpz_mpoly_divides(Dg, D, g, f->ctx)) {
        err = hf_error(HF_ERR_INTERNAL, "%s: gcd does not divide the denominators", name);
        goto cleanup;
    }
    for (int j = 0; j < f->dv; j++) {
        fmpz_mpoly_mul(f->P + j, f->P + j, Dg, f->ctx);
        fmpz_mpoly_mul(T, N + j, Qg, f->ctx);
        fmpz_mpoly_add(f->P + j, f->P + j, T, f->ctx);
    }
    fmpz_mpoly_mul(f->Q, f->Q, Dg, f->ctx);
    err = fraction_reduce_gcd(f, name);
cleanup:
    fmpz_mpoly_clear(T, f->ctx);
    fmpz_mpoly_clear(Dg, f->ctx);
    fmpz_mpoly_clear(Qg, f->ctx);
    fmpz_mpoly_clear(g, f->ctx);
    return err;
}

hf_err_t hf_fraction_from_gcds(hf_fraction_t *f, const hf_target_t *t)
{
    hf_err_t err = HF_OK;
    const char *name;
    fmpz_mpoly_struct *N = NULL;
    fmpz_mpoly_t D;

    HF_TRY(hf_fraction_begin(f, t, &name));
    N = hf_fraction_polys_new(f->dv, f->ctx);
    if (!N)
        return HF_ERR_NOMEM;
    fmpz_mpoly_init(D, f->ctx);

    for (int h = 0; h < t->nheads; h++) {
        hf_fraction_head_nd(N, D, t->heads + h, f->ctx);
        HF_CHECK(err, fraction_add(f, N, D, name), cleanup);
    }
    HF_CHECK(err, hf_fraction_normalise(f, name), cleanup);

cleanup:
    fmpz_mpoly_clear(D, f->ctx);
    hf_fraction_polys_free(N, f->dv, f->ctx);
    return err;
}
